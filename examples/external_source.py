#!/usr/bin/python3
"""examples/external_source.py: feeding a sluice pipeline from Python with fn.external_source.

    PYTHONPATH=build/python /usr/bin/python3 examples/external_source.py DIR
        [--batch-size 8] [--size 128] [--epochs 2] [--workers N] [--start-method fork|spawn]

A per-sample callable (batch=False) reads the bytes of JPEG i of a list of files (every *.jpg
under DIR, sorted); the pipeline decodes them (decoders.image) and resizes them so that the
shorter side is --size. The callable gets a SampleInfo (idx_in_epoch, idx_in_batch,
iteration, epoch_idx) and raises StopIteration past the end of the list, which ends the epoch:
run() raises StopIteration once the batches already scheduled are delivered, and reset()
starts the next epoch. The last batch of an epoch holds the files left (a batch has 1 to
--batch-size samples). Prints the shapes of every batch. With --workers N the callable runs
in N worker processes (parallel=True; started with --start-method, "spawn" pickles it), each
batch split among them, the bytes coming back through shared memory.
"""
import argparse
import pathlib
import sys

import numpy as np

from sluice import fn, pipeline_def, types


class JpegFiles:
    """The per-sample source: sample `idx_in_epoch` is file idx_in_epoch's bytes."""

    def __init__(self, paths):
        self.paths = paths

    def __call__(self, info):
        if info.idx_in_epoch >= len(self.paths):
            raise StopIteration  # end of the epoch
        return np.fromfile(self.paths[info.idx_in_epoch], dtype=np.uint8)


@pipeline_def
def decode_and_resize(source, size, parallel=False):
    jpegs = fn.external_source(source=source, batch=False, dtype=types.UINT8, ndim=1,
                               name="jpegs", parallel=parallel)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    resized = fn.resize(images, resize_shorter=size)
    return images, resized


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", help="a directory with JPEG files (searched recursively)")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--size", type=int, default=128, help="shorter side after resize")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--workers", type=int, default=0,
                    help="worker processes for the source (0: in this process)")
    ap.add_argument("--start-method", default="fork", choices=["fork", "spawn"])
    args = ap.parse_args(argv)

    paths = sorted(str(p) for p in pathlib.Path(args.dir).rglob("*.jpg"))
    if len(paths) < args.batch_size:
        print(f"{args.dir}: {len(paths)} JPEG files, fewer than one batch", file=sys.stderr)
        return 1
    pipe = decode_and_resize(JpegFiles(paths), args.size, args.workers > 0,
                             batch_size=args.batch_size, num_threads=2, device_id=None,
                             py_num_workers=args.workers, py_start_method=args.start_method)
    pipe.build()
    for epoch in range(args.epochs):
        batches = files = 0
        while True:
            try:
                images, resized = pipe.run()
            except StopIteration:
                break
            batches += 1
            files += len(images)
            print(f"epoch {epoch} batch {batches}: decoded {images.shape()[:3]}... "
                  f"resized {resized.shape()[:3]}... ({resized.dtype}, {resized.layout()})")
            assert all(min(h, w) == args.size for h, w, _ in resized.shape())
        print(f"epoch {epoch}: {batches} batches, {files} of {len(paths)} files")
        pipe.reset()
    return 0


if __name__ == "__main__":
    sys.exit(main())
