#!/usr/bin/python3
"""examples/external_source.py: feeding a sluice pipeline from Python with fn.external_source.

    PYTHONPATH=build/python /usr/bin/python3 examples/external_source.py DIR
        [--batch-size 8] [--size 128] [--epochs 2]

A per-sample callable (batch=False) reads the bytes of JPEG i of a list of files (every *.jpg
under DIR, sorted); the pipeline decodes them (decoders.image) and resizes them so that the
shorter side is --size. The callable gets a SampleInfo (idx_in_epoch, idx_in_batch,
iteration, epoch_idx) and raises StopIteration past the end of the list, which ends the epoch:
run() raises StopIteration once the batches already scheduled are delivered, and reset()
starts the next epoch. Only whole batches are delivered: the files after the last whole batch
are left out of the epoch (the batch size is fixed). Prints the shapes of every batch.
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
def decode_and_resize(source, size):
    jpegs = fn.external_source(source=source, batch=False, dtype=types.UINT8, ndim=1,
                               name="jpegs")
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    resized = fn.resize(images, resize_shorter=size)
    return images, resized


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", help="a directory with JPEG files (searched recursively)")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--size", type=int, default=128, help="shorter side after resize")
    ap.add_argument("--epochs", type=int, default=2)
    args = ap.parse_args(argv)

    paths = sorted(str(p) for p in pathlib.Path(args.dir).rglob("*.jpg"))
    if len(paths) < args.batch_size:
        print(f"{args.dir}: {len(paths)} JPEG files, fewer than one batch", file=sys.stderr)
        return 1
    pipe = decode_and_resize(JpegFiles(paths), args.size, batch_size=args.batch_size,
                             num_threads=2, device_id=None)
    pipe.build()
    for epoch in range(args.epochs):
        batches = 0
        while True:
            try:
                images, resized = pipe.run()
            except StopIteration:
                break
            batches += 1
            print(f"epoch {epoch} batch {batches}: decoded {images.shape()[:3]}... "
                  f"resized {resized.shape()[:3]}... ({resized.dtype}, {resized.layout()})")
            assert all(min(h, w) == args.size for h, w, _ in resized.shape())
        print(f"epoch {epoch}: {batches} batches, {batches * args.batch_size} of "
              f"{len(paths)} files")
        pipe.reset()
    return 0


if __name__ == "__main__":
    sys.exit(main())
