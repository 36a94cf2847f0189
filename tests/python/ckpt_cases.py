"""tests/python/ckpt_cases.py: the pipelines of test_checkpoint.py, and its fresh-process half.

`python ckpt_cases.py CASE PARAMS_JSON CHECKPOINT_FILE N OUT_FILE` builds pipeline CASE with
PARAMS (a dict of make()'s keywords) restored from the checkpoint in CHECKPOINT_FILE, runs N
iterations and writes their outputs (pickled, see outputs()) and its checkpoint after them to
OUT_FILE. With `iterator` as
CASE it makes the DALI-style iterator over the restored pipeline and takes N steps (None for a
StopIteration).
"""
import json
import pickle
import sys

import numpy as np

import sluice
from sluice import fn, pipeline_def, types  # noqa: F401


def _reader_pipe(files, threads, prefetch, conditional, seed=1234, uniform_seed=-1):
    @pipeline_def(batch_size=4, num_threads=threads, prefetch_queue_depth=prefetch, seed=seed,
                  on_bad_sample="replace", enable_conditionals=conditional)
    def pipe():
        data, label = fn.readers.file(files=files, labels=list(range(len(files))),
                                      random_shuffle=True, seed=7, name="Reader")
        u = fn.random.uniform(range=[-1.0, 1.0], seed=uniform_seed)
        flip = fn.random.coin_flip()
        if conditional:
            if flip:
                v = u * 10.0
            else:
                v = u - 100.0
        else:
            v = u
        return data, label, v, flip

    return pipe


def _jpeg_pipe(root, threads, prefetch):
    @pipeline_def(batch_size=3, num_threads=threads, prefetch_queue_depth=prefetch, seed=99)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs)
        images = fn.random_resized_crop(images, size=[24, 24])
        return images, labels

    return pipe


def _source_pipe(threads, prefetch, parallel):
    def sample(info):  # restorable: a function of the SampleInfo
        return np.array([info.idx_in_epoch, info.iteration, info.epoch_idx], dtype=np.int64)

    @pipeline_def(batch_size=4, num_threads=threads, prefetch_queue_depth=prefetch, seed=5,
                  py_num_workers=2 if parallel else 1, py_start_method="fork")
    def pipe():
        x = fn.external_source(sample, batch=False, parallel=parallel, name="src")
        return x, fn.random.normal()

    return pipe


def make(case, **params):
    """Pipeline CASE (without its Pipeline keywords: the caller adds enable_checkpointing /
    checkpoint)."""
    if case == "reader":
        return _reader_pipe(**params)
    if case == "jpeg":
        return _jpeg_pipe(**params)
    if case == "source":
        return _source_pipe(**params)
    raise ValueError(case)


def outputs(out):
    """One iteration's outputs as plain data: per output, per sample (shape, bytes)."""
    return [[(np.asarray(t).shape, np.asarray(t).tobytes()) for t in tl] for tl in out]


def run(pipe, n):
    return [outputs(pipe.run()) for _ in range(n)]


def iterate(it, n):
    """n steps of a DALI-style iterator: per step the batch's tensors' bytes, None for a
    StopIteration (auto_reset goes on after it)."""
    steps = []
    while len(steps) < n:
        try:
            batch = next(it)
        except StopIteration:
            steps.append(None)
            continue
        steps.append({k: v.numpy().tobytes() for k, v in batch[0].items()})
    return steps


def make_iterator(pipe):
    from sluice.plugin.pytorch import SluiceGenericIterator

    return SluiceGenericIterator([pipe], ["data", "label", "v", "flip"], reader_name="Reader",
                                 auto_reset=True)


def main(argv):
    case, params, path, n, out = argv[1], json.loads(argv[2]), argv[3], int(argv[4]), argv[5]
    with open(path) as f:
        ckpt = f.read()
    if case == "iterator":
        pipe = make("reader", **params)(checkpoint=ckpt, enable_checkpointing=True)
        result = iterate(make_iterator(pipe), n)
    else:
        pipe = make(case, **params)(checkpoint=ckpt, enable_checkpointing=True)
        result = run(pipe, n)
        result.append(pipe.checkpoint())  # where it ended: iteration, readers, bad samples
    with open(out, "wb") as f:
        pickle.dump(result, f)


if __name__ == "__main__":
    main(sys.argv)
