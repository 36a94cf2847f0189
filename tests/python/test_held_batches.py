"""tests/python/test_held_batches.py: loops that keep batches, written as DALI users write them.

DALI accepts all of these; sluice sets the outputs of a released iteration aside while anything
still references them (src/exec/outputs.c), so they run, and memory a live tensor can see is
never written:
- DALI's run loop at prefetch_queue_depth=1: `out = pipe.run()` while the previous `out` is still
  bound (the assignment releases it only after run() returns);
- DALIClassificationIterator(last_batch_policy=DROP) in a plain `for` loop whose variables hold
  the previous batch while next() runs;
- list(iterator), and code that keeps a few batches (metrics, debugging);
- an epoch of exactly one batch, with the loop variable alive across epochs.
Every test mutates nothing and compares what it kept, after the loop, with a reference run of
the same pipeline that copies each batch at once and keeps no view. The GPU stage (device
"mixed", GPU outputs, CUDA tensors) is checked the same way, emulated here and on a device when
there is one (test_gpu.run_child).
"""
import numpy as np
import pytest
import torch

from sluice import _sluice, fn, pipeline_def, types
from sluice.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy
from test_gpu import MODES, run_child  # the GPU checks' child processes, emulated or not

BATCH = 4


def train_pipe(tree, depth, files=None, seed=11):
    """ImageNet-like: shuffled reader -> decoder -> random resized crop 32x32 -> normalize +
    random mirror -> CHW float; labels. Deterministic for a given seed."""
    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, seed=seed,
                  prefetch_queue_depth=depth)
    def pipe():
        if files is None:
            jpegs, labels = fn.readers.file(file_root=str(tree), random_shuffle=True,
                                            name="Reader")
        else:
            jpegs, labels = fn.readers.file(files=files, labels=list(range(len(files))),
                                            name="Reader")
        images = fn.decoders.image(jpegs, output_type=types.RGB)
        images = fn.random_resized_crop(images, size=[32, 32])
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                          mean=[120.0, 115.0, 100.0], std=[60.0, 60.0, 60.0],
                                          mirror=fn.random.coin_flip(probability=0.5))
        return images, labels

    return pipe()


def reference_run(make, n):
    """The first n batches of a fresh pipeline, copied at once, no view kept."""
    pipe = make()
    out = []
    for _ in range(n):
        images, labels = pipe.run()
        out.append((images.as_array().copy(), labels.as_array().copy()))
        del images, labels
        pipe.release_outputs()
    return out


def reference_steps(make, steps, **kwargs):
    """What an iterator over a fresh pipeline gives, step by step, cloned at once."""
    it = DALIClassificationIterator(make(), reader_name="Reader", **kwargs)
    out = []
    for _ in range(steps):
        try:
            b = next(it)
        except StopIteration:
            it.reset()
            out.append(None)  # the epoch's end
            continue
        out.append((b[0]["data"].clone(), b[0]["label"].clone()))
        del b
    return out


@pytest.mark.parametrize("depth", [1, 2])
def test_dali_run_loop_keeps_the_previous_out(tree, depth):
    ref = reference_run(lambda: train_pipe(tree, 2), 12)
    pipe = train_pipe(tree, depth)
    pipe.build()
    kept = []
    for i in range(12):
        out = pipe.run()  # `out` of the previous step is still bound during this call
        images, labels = out
        np.testing.assert_array_equal(images.as_array(), ref[i][0])
        np.testing.assert_array_equal(labels.as_array(), ref[i][1])
        if i % 3 == 0:
            kept.append((i, out, torch.from_dlpack(images)))
    for i, (images, labels), tensor in kept:  # unchanged after later iterations ran
        np.testing.assert_array_equal(images.as_array(), ref[i][0])
        np.testing.assert_array_equal(labels.as_array(), ref[i][1])
        np.testing.assert_array_equal(tensor.numpy(), ref[i][0])


@pytest.mark.parametrize("depth", [1, 2])
def test_drop_iterator_in_a_plain_for_loop(tree, tree_files, depth):
    files = [f for f, _ in tree_files[:10]]  # 10 files, batch 4: DROP gives 2 steps an epoch
    make = lambda: train_pipe(tree, 2, files=files)  # noqa: E731
    ref = [r for r in reference_steps(make, 9, last_batch_policy=LastBatchPolicy.DROP)
           if r is not None]
    it = DALIClassificationIterator(train_pipe(tree, depth, files=files), reader_name="Reader",
                                    last_batch_policy=LastBatchPolicy.DROP)
    seen = []
    for epoch in range(3):
        for b in it:
            data = b[0]["data"]  # the loop's variables hold this batch during the next next()
            label = b[0]["label"]
            seen.append((data, label))
        it.reset()
    assert len(seen) == len(ref) == 6
    for (data, label), (want_data, want_label) in zip(seen, ref):
        assert torch.equal(data, want_data) and torch.equal(label, want_label)


def test_list_of_an_iterator(tree):
    make = lambda: train_pipe(tree, 2)  # noqa: E731
    ref = [r for r in reference_steps(make, 26) if r is not None]
    it = DALIClassificationIterator(make(), reader_name="Reader",
                                    last_batch_policy=LastBatchPolicy.PARTIAL)
    batches = list(it)  # a whole epoch kept: 25 steps of 4 images
    assert len(batches) == len(ref) == 25
    for b, (want_data, want_label) in zip(batches, ref):
        assert torch.equal(b[0]["data"], want_data) and torch.equal(b[0]["label"], want_label)
    ptrs = {b[0]["data"].data_ptr() for b in batches}
    assert len(ptrs) == 25  # 25 distinct buffers, none reused while referenced
    del batches
    again = list(it)  # the next epoch, once the first is dropped
    assert len(again) == 25


def test_keeping_the_last_few_batches(tree):
    make = lambda: train_pipe(tree, 2)  # noqa: E731
    ref = [r for r in reference_steps(make, 26) if r is not None]
    it = DALIClassificationIterator(make(), reader_name="Reader")
    last = []
    for step, b in enumerate(it):
        last = (last + [(step, b[0]["data"])])[-5:]  # a metric window
        for s, data in last:
            assert torch.equal(data, ref[s][0])
    assert step == 24


def test_epoch_of_exactly_one_batch(tree, tree_files):
    files = [f for f, _ in tree_files[:BATCH]]
    make = lambda: train_pipe(tree, 2, files=files)  # noqa: E731
    ref = [r for r in reference_steps(make, 8) if r is not None]
    assert len(ref) == 4
    it = DALIClassificationIterator(make(), reader_name="Reader", auto_reset=True)
    seen = []
    for epoch in range(4):
        for b in it:  # `b` of the previous epoch is alive while this epoch starts
            seen.append(b[0]["data"])
    assert len(seen) == 4
    for data, (want, _) in zip(seen, ref):
        assert torch.equal(data, want)
    assert len({d.data_ptr() for d in seen}) == 4


def test_steady_loop_does_not_grow(tree):
    """Holding one batch at a time reuses the buffers set aside: the set of distinct output
    buffers stays small over many iterations."""
    pipe = train_pipe(tree, 1)
    pipe.build()
    addresses = set()
    out = None
    for _ in range(60):
        out = pipe.run()
        addresses.add(out[0].data_ptr())
    assert len(addresses) <= 3, addresses


@pytest.mark.skipif(not _sluice.HAVE_CUDA, reason="this build of sluice has no CUDA support")
@pytest.mark.parametrize("emulated", MODES)
def test_gpu_outputs_held_across_runs(emulated, tree):
    out = run_child("""
        import torch
        from sluice.plugin.pytorch import DALIClassificationIterator

        @pipeline_def(batch_size=4, num_threads=2, device_id=0, seed=5,
                      prefetch_queue_depth=1)
        def pipe(device):
            jpegs, labels = fn.readers.file(file_root=ROOT, random_shuffle=True,
                                            name="Reader")
            images = fn.decoders.image(jpegs, device=device, output_type=types.RGB)
            images = fn.resize(images, resize_x=24, resize_y=24, device="gpu"
                               if device == "mixed" else "cpu")
            return images, labels

        cpu = pipe("cpu")
        ref = [cpu.run()[0].as_array().copy() for _ in range(8)]
        gpu = pipe("mixed")
        kept = []
        for i in range(8):
            out = gpu.run()  # depth 1, the previous out still bound
            kept.append(out)
        for i, (images, labels) in enumerate(kept):
            assert np.array_equal(images.as_cpu().as_array(), ref[i]), i
        del kept, out
        it = DALIClassificationIterator(pipe("mixed"), reader_name="Reader")
        batches = list(it)
        assert len(batches) == 25  # CUDA tensors on a device (CPU ones emulated)
        for i in range(8):
            assert np.array_equal(batches[i][0]["data"].cpu().numpy(), ref[i]), i
        print("ok")
    """, emulated, tree)
    assert "ok" in out
