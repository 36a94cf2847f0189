"""tests/python/test_external_source.py: fn.external_source with every kind of source
(callables in batch and per-sample mode, iterables, generator functions, feed_input), every
kind of data (NumPy, lists, torch CPU tensors, DLPack objects), epochs (StopIteration, reset,
cycle), errors in callbacks, and clear errors for what is not supported."""
import traceback

import numpy as np
import pytest
import torch

import sluice
from sluice import fn, pipeline_def, types

BS = 3


def make(source=None, depth=2, **kwargs):
    @pipeline_def(batch_size=BS, num_threads=2, prefetch_queue_depth=depth)
    def p():
        return fn.external_source(source=source, name="src", **kwargs)

    return p()


def batch(k, shape=(2, 2), dtype=np.int32):
    return [np.full(shape, 10 * k + i, dtype=dtype) for i in range(BS)]


def first_values(pipe, n=None):
    """First element of sample 0 of each run until StopIteration (or n runs)."""
    got = []
    try:
        while n is None or len(got) < n:
            (out,) = pipe.run()
            got.append(int(out.at(0).ravel()[0]))
    except StopIteration:
        pass
    return got


def test_callable_without_argument():
    it = iter(range(100))
    pipe = make(lambda: batch(next(it)))
    assert first_values(pipe, 4) == [0, 10, 20, 30]


def test_callable_with_iteration_index_and_batch_info():
    seen = []

    def by_index(i):
        seen.append(i)
        return batch(i)

    assert first_values(make(by_index), 3) == [0, 10, 20]
    assert seen[:3] == [0, 1, 2]
    infos = []

    def by_info(info):
        infos.append((info.iteration, info.epoch_idx))
        if info.iteration == 2:
            raise StopIteration
        return batch(info.iteration + 5 * info.epoch_idx)

    pipe = make(by_info, batch_info=True)
    assert first_values(pipe) == [0, 10]
    pipe.reset()
    assert first_values(pipe) == [50, 60]
    assert infos == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]


def test_per_sample_callable_gets_sample_info():
    def sample(si):
        if si.iteration == 2:
            raise StopIteration
        return np.array([si.idx_in_epoch, si.idx_in_batch, si.iteration, si.epoch_idx])

    pipe = make(sample, batch=False, depth=3)  # depth 3 > 2 batches: the epoch ends mid-prefetch
    for epoch in range(2):
        rows = []
        with pytest.raises(StopIteration):
            while True:
                rows += pipe.run()[0].as_array().tolist()
        assert rows == [[k, k % BS, k // BS, epoch] for k in range(2 * BS)]
        pipe.reset()


def test_iterable_ends_the_epoch_and_reset_restarts_it():
    data = [batch(k) for k in range(4)]
    pipe = make(data)
    assert first_values(pipe) == [0, 10, 20, 30]
    with pytest.raises(StopIteration):  # stays at the end until reset
        pipe.run()
    pipe.reset()
    assert first_values(pipe) == [0, 10, 20, 30]


def test_generator_function_and_generator_object():
    def gen():
        for k in range(3):
            yield batch(k)

    pipe = make(gen)
    assert first_values(pipe) == [0, 10, 20]
    pipe.reset()
    assert first_values(pipe) == [0, 10, 20]  # called again for the new epoch
    once = make(gen())
    assert first_values(once) == [0, 10, 20]
    once.reset()
    assert first_values(once) == []  # an exhausted generator object stays exhausted


def test_cycle_quiet_and_raise():
    data = [batch(k) for k in range(3)]
    assert first_values(make(data, cycle="quiet"), 7) == [0, 10, 20, 0, 10, 20, 0]
    assert first_values(make(data, cycle=True), 4) == [0, 10, 20, 0]
    pipe = make(data, cycle="raise")
    assert first_values(pipe) == [0, 10, 20]
    pipe.reset()
    assert first_values(pipe) == [0, 10, 20]
    with pytest.raises(ValueError, match="cycle"):
        make(data, cycle="sometimes")


@pytest.mark.parametrize("parallel", [False, True])
def test_what_is_not_a_source_and_cycle_with_a_callable(parallel):
    def build(source, **kwargs):
        @pipeline_def(batch_size=BS, num_threads=1, py_num_workers=1)
        def p():
            return fn.external_source(source=source, name="src", parallel=parallel, **kwargs)

        return p()

    with pytest.raises(TypeError, match="source must be a callable, an iterable or a "
                                        "generator function, got int"):
        build(42)
    with pytest.raises(ValueError, match="The argument `cycle` can only be specified if "
                                         "`source` is iterable"):  # DALI's words
        build(lambda: batch(0), cycle="quiet")
    build(lambda: batch(0), cycle="no")  # "no" is no cycling: fine with a callable


def test_data_kinds_numpy_batch_array_torch_and_dlpack():
    class DLPackOnly:  # an object that only speaks DLPack
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__()

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    kinds = [
        np.arange(BS * 4, dtype=np.float32).reshape(BS, 4),                 # one array
        [np.arange(4, dtype=np.float32) + 4 * i for i in range(BS)],        # list of arrays
        torch.arange(BS * 4, dtype=torch.float32).reshape(BS, 4),          # torch batch
        [torch.arange(4, dtype=torch.float32) + 4 * i for i in range(BS)],  # torch samples
        DLPackOnly(torch.arange(BS * 4, dtype=torch.float32).reshape(BS, 4)),
    ]
    pipe = make(kinds, dtype=types.FLOAT, ndim=1)
    expected = np.arange(BS * 4, dtype=np.float32).reshape(BS, 4)
    for _ in kinds:
        (out,) = pipe.run()
        assert out.dtype == types.FLOAT
        np.testing.assert_array_equal(out.as_array(), expected)


def test_an_array_source_per_sample_gives_0d_samples():
    # iterating a 1-D array yields NumPy scalars: with batch=False each is one 0-D sample,
    # shape () as DALI gives (a 2-D array yields its rows: 1-D samples)
    data = np.arange(2 * BS, dtype=np.float32)
    pipe = make(data, batch=False)
    for k in range(2):
        (out,) = pipe.run()
        assert out.shape() == [()] * BS and out.dtype == types.FLOAT
        np.testing.assert_array_equal(out.as_array(), data[BS * k:BS * (k + 1)])
        assert out.at(0).shape == ()
    with pytest.raises(StopIteration):
        pipe.run()
    rows = np.arange(2 * BS * 2, dtype=np.int16).reshape(2 * BS, 2)
    (out,) = make(rows, batch=False).run()
    assert out.shape() == [(2,)] * BS


@pytest.mark.parametrize("sample", [
    lambda k: np.float32(k),                      # a NumPy scalar
    lambda k: np.array(k, np.float32),            # a 0-D array
    lambda k: torch.tensor(k, dtype=torch.float32),  # a 0-D tensor
])
def test_scalar_samples_stay_0d(sample):
    per_sample = make(lambda si: sample(si.idx_in_epoch), batch=False)
    in_a_list = make(lambda i: [sample(BS * i + k) for k in range(BS)])  # DALI's test_scalar
    for pipe in (per_sample, in_a_list):
        for k in range(2):
            (out,) = pipe.run()
            assert out.shape() == [()] * BS, out.shape()
            assert out.as_array().tolist() == [float(BS * k + i) for i in range(BS)]


def test_a_1d_batch_array_is_a_batch_of_scalars():
    (out,) = make(lambda: np.arange(BS, dtype=np.int64)).run()
    assert out.shape() == [()] * BS and out.as_array().tolist() == list(range(BS))


def test_ragged_samples_and_layout():
    data = [[np.ones((h, 2, 3), np.uint8) * h for h in (1, 2, 3)]]
    (out,) = make(data, layout="HWC").run()
    assert out.layout() == "HWC" and out.shape() == [(1, 2, 3), (2, 2, 3), (3, 2, 3)]
    assert not out.is_dense_tensor() and (out.at(2) == 3).all()


def test_num_outputs():
    def two(i):
        return batch(i), [np.array([i, k], dtype=np.int64) for k in range(BS)]

    @pipeline_def(batch_size=BS, num_threads=1)
    def p():
        a, b = fn.external_source(source=two, num_outputs=2, layout=["HW", None])
        return a, b

    pipe = p()
    a, b = pipe.run()
    assert a.layout() == "HW" and a.at(1)[0, 0] == 1
    assert b.as_array().tolist() == [[0, 0], [0, 1], [0, 2]]


def one_batch_in_a_list(i):
    return [batch(i)]  # num_outputs=1: a sequence of one batch (DALI's test_fw_iterators)


def one_sample_in_a_tuple(info):
    return (np.array([info.idx_in_epoch, info.idx_in_batch], np.int32),)


@pytest.mark.parametrize("source, batch_mode", [
    (one_batch_in_a_list, True),
    (lambda i: (batch(i),), True),                    # a 1-tuple
    ([(batch(i),) for i in range(3)], True),          # an iterable of 1-tuples
    (one_sample_in_a_tuple, False),                   # per sample: each sample in a 1-tuple
])
def test_num_outputs_1_takes_a_sequence_of_one_and_returns_a_list(source, batch_mode):
    nodes = []

    @pipeline_def(batch_size=BS, num_threads=1)
    def p():
        outs = fn.external_source(source=source, num_outputs=1, batch=batch_mode)
        nodes.append(outs)
        return outs  # a list of one DataNode, as DALI returns

    pipe = p()
    assert isinstance(nodes[0], list) and len(nodes[0]) == 1
    assert isinstance(nodes[0][0], sluice.DataNode)
    for k in range(2):
        (out,) = pipe.run()
        arr = out.as_array()
        if batch_mode:
            assert arr.shape == (BS, 2, 2)
            np.testing.assert_array_equal(arr, np.stack(batch(k)))
        else:
            assert arr.tolist() == [[BS * k + i, i] for i in range(BS)]


def test_num_outputs_given_needs_that_many_items():
    @pipeline_def(batch_size=BS, num_threads=1)
    def p():
        return fn.external_source(source=lambda: batch(0), num_outputs=1)

    with pytest.raises(ValueError, match=r"tuple \(or list\) of 1 items .*got 3 items"):
        p().run()

    @pipeline_def(batch_size=BS, num_threads=1)
    def q():
        a, b = fn.external_source(source=lambda: np.zeros((BS, 2)), num_outputs=2)
        return a, b

    with pytest.raises(ValueError, match="num_outputs=2.*got ndarray"):
        q().run()


def test_feed_input_without_source():
    pipe = make(None, depth=2)
    pipe.build()
    pipe.feed_input("src", np.zeros((BS, 2), np.int32))
    pipe.feed_input("src", [np.ones(2, np.int32)] * BS, layout="W")
    assert pipe.run()[0].at(0).tolist() == [0, 0]
    pipe.feed_input("src", torch.full((BS, 2), 2, dtype=torch.int32))
    assert pipe.run()[0].at(0).tolist() == [1, 1]
    assert pipe.run(src=np.full((BS, 2), 3, np.int32))[0].at(0).tolist() == [2, 2]
    assert pipe.run()[0].at(0).tolist() == [3, 3]  # (this run schedules iteration 4, unfed)
    with pytest.raises(sluice.SluiceError, match="no data was fed") as e:
        pipe.run()
    assert e.value.iteration == 4 and e.value.node == "src"
    with pytest.raises(LookupError, match='no node named "nope"'):
        pipe.feed_input("nope", np.zeros((BS, 2), np.int32))


class FedByIterSetup(sluice.Pipeline):
    """DALI's legacy style: a Pipeline subclass whose iter_setup feeds `n_batches` batches,
    then raises StopIteration."""

    def __init__(self, n_batches, depth):
        super().__init__(batch_size=BS, num_threads=1, device_id=None,
                         prefetch_queue_depth=depth)
        self.n_batches, self.fed = n_batches, 0

    def define_graph(self):
        self.data = fn.external_source(name="data")
        return self.data

    def iter_setup(self):
        if self.fed == self.n_batches:
            self.fed = 0  # the next epoch starts over, after reset()
            raise StopIteration
        self.feed_input(self.data, batch(self.fed))
        self.fed += 1


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_iter_setup_stop_iteration_delivers_every_fed_batch(depth):
    pipe = FedByIterSetup(5, depth)
    pipe.build()
    for _ in range(2):  # epochs
        got = []
        while True:
            try:  # (nothing of a batch is kept: depth 1 has one buffer set)
                got.append(pipe.run()[0].as_array()[:, 0, 0].tolist())
            except StopIteration:
                break
        assert got == [[10 * k + i for i in range(BS)] for k in range(5)]
        with pytest.raises(StopIteration):  # until reset()
            pipe.run()
        pipe.reset()


def test_iter_setup_stop_iteration_with_the_scheduled_api():
    pipe = FedByIterSetup(3, 2)
    pipe.build()
    got = []
    pipe.schedule_run()  # the first call prefetches two iterations
    while True:
        try:
            (out,) = pipe.share_outputs()
        except StopIteration:
            break
        got.append(int(out.at(0)[0, 0]))
        pipe.release_outputs()
        pipe.schedule_run()
    assert got == [0, 10, 20]


def test_feed_input_on_a_source_with_a_callback_is_refused():
    pipe = make(lambda: batch(0))
    with pytest.raises(RuntimeError, match="has a 'source'"):
        pipe.feed_input("src", batch(0))


def test_exception_in_callback_propagates_with_its_traceback():
    def bad_source(i):
        if i == 3:
            raise KeyError("record 3 is missing")
        return batch(i)

    pipe = make(bad_source, depth=2)
    assert first_values(pipe, 2) == [0, 10]  # iterations 0..2 were fed (prefetch 2, then 1)
    with pytest.raises(KeyError, match="record 3 is missing") as e:
        pipe.run()
    frames = [f.name for f in traceback.extract_tb(e.value.__traceback__)]
    assert frames[-1] == "bad_source"
    assert first_values(pipe, 2) == [20, 40]  # the pipeline goes on with what it has


def test_wrong_batch_size_and_dtype_are_clear_errors():
    pipe = make([[np.zeros(2, np.int32)] * (BS + 1)])
    with pytest.raises(sluice.InvalidArgumentError,
                       match=f"got {BS + 1} samples; expected 1 to {BS} .the pipeline's batch"):
        pipe.run()
    pipe = make([batch(0, dtype=np.int64)], dtype=types.INT32)
    with pytest.raises(ValueError, match="element type int64, expected int32"):
        pipe.run()
    pipe = make([[np.zeros(2, np.int32), np.zeros((2, 2), np.int32), np.zeros(2, np.int32)]])
    with pytest.raises(ValueError, match="share type and number of dimensions"):
        pipe.run()


def test_smaller_batches_set_the_iteration_batch_size():
    # batch mode: a batch of 1..batch_size samples; per sample: StopIteration after some
    # samples ends the epoch with a smaller last batch
    pipe = make([batch(0), batch(1)[:2], batch(2)[:1]])
    assert [len(pipe.run()[0]) for _ in range(3)] == [3, 2, 1]

    def sample(si):
        if si.idx_in_epoch >= 7:
            raise StopIteration
        return np.array([si.idx_in_epoch], np.int32)

    pipe = make(sample, batch=False)
    for _ in range(2):
        got = []
        with pytest.raises(StopIteration):
            while True:
                got.append([int(x) for x in pipe.run()[0].as_array().ravel()])
        assert got == [[0, 1, 2], [3, 4, 5], [6]]
        pipe.reset()


def test_sources_must_agree_on_the_batch_size():
    @pipeline_def(batch_size=BS, num_threads=2)
    def p():
        return (fn.external_source(source=[batch(0)], name="a"),
                fn.external_source(source=[batch(0)[:2]], name="b"))

    with pytest.raises(sluice.InvalidArgumentError, match='must give batches of one size: '
                                                          '"a" 3, "b" 2'):
        p().run()


def test_unsupported_modes_raise():
    @pipeline_def(batch_size=BS, num_threads=2, py_num_workers=0)
    def p():
        return fn.external_source(source=lambda si: np.zeros(2), batch=False, parallel=True)

    with pytest.raises(RuntimeError, match="without Python workers pool"):
        p()
    with pytest.raises(sluice.UnsupportedError, match="CPU data only"):
        from sluice.external_source import to_numpy

        class FakeCuda:
            __module__ = "torch"
            device = type("D", (), {"type": "cuda"})()

        to_numpy(FakeCuda())
