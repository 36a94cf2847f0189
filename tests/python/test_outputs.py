"""tests/python/test_outputs.py: TensorListCPU — its API, zero-copy export (NumPy, buffer
protocol, DLPack into torch and NumPy, proven by pointer identity), memory safety (views stay
valid after release_outputs/run, held iterations are set aside, and past max_held_bytes a
clear error, not corruption),
and no memory growth over 1,000 batches."""
import gc
import threading
import time

import numpy as np
import pytest
import torch

import sluice
from sluice import fn, pipeline_def, types


def feed_pipe(batches, depth=2, threads=2, dtype=None, max_held_bytes=0):
    """A pipeline passing `batches` (lists of arrays) through external_source."""
    it = iter(batches)

    @pipeline_def(batch_size=len(batches[0]), num_threads=threads,
                  prefetch_queue_depth=depth, max_held_bytes=max_held_bytes)
    def p():
        return fn.external_source(source=lambda: next(it), dtype=dtype)

    return p()


def test_api_dense(tree):
    pipe = sluice.Pipeline(batch_size=4, num_threads=2)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=str(tree))
        pipe.set_outputs(labels, fn.decoders.image(jpegs))
    labels, images = pipe.run()
    assert isinstance(labels, sluice.TensorListCPU) and len(labels) == 4
    assert labels.is_dense_tensor() and labels.shape() == [(1,)] * 4
    assert labels.dtype == types.INT32 and labels.layout() == ""
    arr = labels.as_array()
    assert arr.shape == (4, 1) and arr.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(labels), arr)
    np.testing.assert_array_equal(labels.as_tensor(), arr)
    np.testing.assert_array_equal(labels[-1], arr[3])
    # DALI: tl[i] and iteration give TensorCPU, at(i) a NumPy array
    assert type(labels[0]) is sluice.TensorCPU and type(labels.at(0)) is np.ndarray
    assert [np.asarray(x).tolist() for x in labels] == arr.tolist()
    assert len(labels[1:3]) == 2
    with pytest.raises(IndexError):
        labels.at(4)
    assert "TensorListCPU(iteration=0, dtype=int32" in repr(labels)
    # ragged: per-sample views work, dense exports refuse clearly
    assert not images.is_dense_tensor()
    assert images.at(0).shape == images.shape()[0]
    with pytest.raises(sluice.InvalidArgumentError, match="not one dense tensor"):
        images.as_array()
    with pytest.raises(BufferError):
        memoryview(images)
    with pytest.raises(BufferError):
        images.__dlpack__()


def test_zero_copy_pointer_identity():
    src = [np.arange(24, dtype=np.float32).reshape(2, 3, 4) + i for i in range(5)]
    pipe = feed_pipe([src], depth=1)
    (tl,) = pipe.run()
    ptr = tl.data_ptr()
    arr = tl.as_array()
    assert arr.__array_interface__["data"][0] == ptr
    t = torch.from_dlpack(tl)
    assert t.data_ptr() == ptr and t.shape == (5, 2, 3, 4) and t.dtype == torch.float32
    n = np.from_dlpack(tl)
    assert n.__array_interface__["data"][0] == ptr
    assert np.frombuffer(memoryview(tl), dtype=np.float32).__array_interface__["data"][0] == ptr
    for i in range(5):  # sample i starts at ptr + i * sample bytes, no copies
        assert tl.at(i).__array_interface__["data"][0] == ptr + i * 24 * 4
        np.testing.assert_array_equal(tl.at(i), src[i])
    assert tl.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(t.numpy(), np.stack(src))


def test_dlpack_dtypes():
    for dt in (np.uint8, np.int16, np.int32, np.int64, np.float16, np.float64, np.bool_):
        src = [np.ones((2, 2), dtype=dt)] * 2
        (tl,) = feed_pipe([src], depth=1).run()
        assert np.asarray(tl).dtype == np.dtype(dt)
        if dt is np.bool_ and int(torch.__version__.split(".")[0]) < 2:
            continue  # bool is kDLBool (DLPack 0.8); torch reads it from 2.0 on
        t = torch.from_dlpack(tl)
        assert t.numpy().dtype == np.dtype(dt)
        np.testing.assert_array_equal(t.numpy(), np.stack(src))
        assert tl.dtype.to_numpy() == np.dtype(dt)


def test_views_stay_valid_after_release_and_run():
    batches = [[np.full((64, 64), 10 * k + i, dtype=np.int32) for i in range(4)]
               for k in range(8)]
    pipe = feed_pipe(batches, depth=3)
    (tl,) = pipe.run()
    view = tl.at(2)
    tensor = torch.from_dlpack(tl)
    del tl  # the views alone keep iteration 0 alive
    pipe.release_outputs()
    for k in range(1, 3):  # two more iterations run while iteration 0 is held
        (other,) = pipe.run()
        assert other.at(0)[0, 0] == 10 * k
        del other
    assert (view == 2).all() and (tensor.numpy() == np.arange(4).reshape(4, 1, 1)).all()
    del view, tensor
    for k in range(3, 8):
        assert pipe.run()[0].at(3)[0, 0] == 10 * k + 3


def test_holding_more_iterations_than_the_depth():
    batches = [[np.full((8,), k, dtype=np.int64)] * 2 for k in range(8)]
    pipe = feed_pipe(batches, depth=2)
    held = [pipe.run()[0] for _ in range(6)]  # set aside as they are released
    assert [tl.at(1).tolist() for tl in held] == [[k] * 8 for k in range(6)]
    del held
    assert pipe.run()[0].at(0)[0] == 6


def test_holding_past_max_held_bytes_is_a_clear_error():
    batches = [[np.full((8,), k, dtype=np.int64)] * 2 for k in range(6)]
    pipe = feed_pipe(batches, depth=2, max_held_bytes=1)  # nothing may be set aside
    held = [pipe.run()[0], pipe.run()[0]]
    t0 = time.monotonic()
    with pytest.raises(sluice.MisuseError, match="still referenced.*max_held_bytes"):
        pipe.run()
    assert time.monotonic() - t0 < 10
    assert held[0].at(0).tolist() == [0] * 8  # never overwritten
    del held
    assert pipe.run()[0].at(0)[0] == 2  # usable again once the views are gone
    with pytest.raises(sluice.InvalidArgumentError, match="max_held_bytes"):
        feed_pipe(batches, max_held_bytes=-5).build()


def test_gil_is_released_while_waiting():
    def slow(info):
        return [np.zeros((1000, 1000), dtype=np.float64)] * 4

    @pipeline_def(batch_size=4, num_threads=1, prefetch_queue_depth=1)
    def p():
        x = fn.external_source(source=slow, batch_info=True)
        for _ in range(12):
            x = fn.math.sqrt(x + 1.0)
        return x

    pipe = p()
    pipe.build()
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    th = threading.Thread(target=ticker)
    th.start()
    t0 = time.monotonic()
    for _ in range(3):
        pipe.run()
    elapsed = time.monotonic() - t0
    stop.set()
    th.join()
    assert len(ticks) > 0.2 * elapsed / 0.001 or elapsed < 0.05


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_no_memory_growth_over_1000_batches(tree):
    @pipeline_def(batch_size=8, num_threads=2, seed=5)
    def p():
        jpegs, labels = fn.readers.file(file_root=str(tree), random_shuffle=True)
        images = fn.decoders.image(jpegs)
        images = fn.crop_mirror_normalize(images, crop=(8, 8), out_of_bounds_policy="pad")
        return images, labels, fn.external_source(source=lambda i: np.full((8, 3), i))

    pipe = p()

    def step():
        images, labels, fed = pipe.run()
        t = torch.from_dlpack(images)
        a = labels.as_array()
        s = images.at(3)
        capsule = fed.__dlpack__()  # never consumed: its destructor must free it
        assert t.shape == (8, 3, 8, 8) and a.shape == (8, 1) and s.shape == (3, 8, 8)
        del capsule

    for _ in range(100):
        step()
    gc.collect()
    before = rss_bytes()
    for _ in range(1000):
        step()
    gc.collect()
    growth = rss_bytes() - before
    assert growth < 8 << 20, f"RSS grew by {growth / 2**20:.1f} MiB over 1,000 batches"
