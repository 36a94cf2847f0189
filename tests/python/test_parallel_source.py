"""tests/python/test_parallel_source.py: fn.external_source(parallel=True) — Python sources in
worker processes: every kind of source (per-sample callables, batch callables, iterables,
generator functions) against the same source run serially in the main process (the
reference), several sources sharing one pool, outputs and dtypes, epochs with persistent
workers, in-order delivery of out-of-order work, the prefetch cap, reuse and growth of the
shared-memory chunks, pickling for spawn, sluice.get_worker_info(), and
sluice.plugin.pytorch.dataset_source against torch's DistributedSampler.

Failure modes (exceptions, dying workers, timeouts, exit paths) are in
test_parallel_failures.py, each in a process of its own.
"""
import gc
import threading

import numpy as np
import pytest
import torch

import parallel_cases as pc
import sluice
from sluice import fn, pipeline_def, types

METHODS = ["fork", "spawn"]


def build(source, method="fork", workers=2, bs=4, depth=2, seed=3, **es):
    parallel = es.pop("parallel", True)

    @pipeline_def(batch_size=bs, num_threads=2, prefetch_queue_depth=depth, seed=seed,
                  py_num_workers=workers, py_start_method=method)
    def p():
        return fn.external_source(source, parallel=parallel, **es)

    return p()


def drain(pipe, limit=1000):
    """Every batch of one epoch as a list of per-output lists of arrays (copies)."""
    out = []
    for _ in range(limit):
        try:
            outs = pipe.run()
        except StopIteration:
            return out
        out.append([[np.array(t.at(i)) for i in range(len(t))] for t in outs])
    raise AssertionError("the epoch did not end")


def same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert len(x) == len(y)
        for u, v in zip(x, y):
            assert [s.shape for s in u] == [s.shape for s in v]
            for s, t in zip(u, v):
                assert s.dtype == t.dtype
                np.testing.assert_array_equal(s, t)


def epochs(pipe, n=2):
    got = []
    for _ in range(n):
        got.append(drain(pipe))
        pipe.reset()
    return got


@pytest.fixture(autouse=True)
def no_leaks():
    """Every test leaves no worker and no mapping behind once its pipelines are gone."""
    yield
    gc.collect()
    assert sluice._sluice._shm_live() == (0, 0)
    import multiprocessing

    assert [p for p in multiprocessing.active_children() if p.name.startswith("sluice")] == []


# ---- every kind of source, against the serial reference ----------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_per_sample_source_matches_serial(method):
    ref = epochs(build(pc.images, parallel=False, batch=False, num_outputs=2))
    got = epochs(build(pc.images, method, batch=False, num_outputs=2))
    same(got[0], ref[0])
    same(got[1], ref[1])
    assert [len(b[0]) for b in got[0]] == [4, 4, 2]  # 10 samples: a smaller last batch


def test_per_sample_source_more_workers_than_samples():
    ref = epochs(build(pc.ident, parallel=False, batch=False, bs=3))
    same(epochs(build(pc.ident, workers=4, bs=3, batch=False))[0], ref[0])


def test_batch_callable_with_batch_info_and_variable_sizes():
    ref = epochs(build(pc.sized_batch, parallel=False, batch_info=True))
    got = epochs(build(pc.sized_batch, batch_info=True))
    same(got[0], ref[0])
    same(got[1], ref[1])
    assert [len(b[0]) for b in got[1]] == [1, 2, 3, 1, 2]
    assert int(got[1][2][0][0][0]) == 120  # epoch 1, iteration 2


@pytest.mark.parametrize("method", METHODS)
def test_iterables_run_in_order(method):
    batches = [[np.array([i, k], np.int32) for k in range(4)] for i in range(5)]
    got = epochs(build(batches, method, workers=2))
    same(got[0], [[b] for b in batches])
    same(got[1], [[b] for b in batches])  # a new iterator each epoch
    # a generator function, called again each epoch
    ref = epochs(build(pc.gen_batches, parallel=False, bs=2))
    same(epochs(build(pc.gen_batches, method, bs=2))[1], ref[1])


def test_iterable_per_sample_and_cycle():
    samples = [np.array([i], np.int16) for i in range(7)]
    got = drain(build(samples, batch=False, bs=3))
    assert [[int(s[0]) for s in b[0]] for b in got] == [[0, 1, 2], [3, 4, 5], [6]]
    pipe = build(samples, batch=False, bs=3, cycle="quiet")
    vals = [[int(s[0]) for s in pipe.run()[0].as_array()] for _ in range(4)]
    assert vals == [[0, 1, 2], [3, 4, 5], [6, 0, 1], [2, 3, 4]]


def test_sources_share_the_pool_and_mix_with_serial_ones():
    @pipeline_def(batch_size=2, num_threads=2, py_num_workers=2)
    def p():
        a, _ = fn.external_source(pc.images, num_outputs=2, batch=False, parallel=True)
        b = fn.external_source(lambda info: [np.array([info.iteration], np.int32)] * 2,
                               batch_info=True, parallel=True)
        c = fn.external_source([[np.array([7 * i], np.int32)] * 2 for i in range(30)],
                               parallel=True)
        d = fn.external_source(lambda info: [np.array([-info.iteration], np.int32)] * 2,
                               batch_info=True)  # serial, in the main process
        return a, b, c, d

    pipe = p()
    pipe.build()
    assert len(pipe.py_worker_pids) == 2
    got = drain(pipe)
    assert len(got) == 5  # `images` ends the epoch after 10 samples
    for it, (a, b, c, d) in enumerate(got):
        assert [int(x[0, 0, 0]) for x in a] == [2 * it, 2 * it + 1]
        assert [int(x[0]) for x in b] == [it] * 2
        assert [int(x[0]) for x in c] == [7 * it] * 2
        assert [int(x[0]) for x in d] == [-it] * 2


def test_outputs_dtypes_and_layouts():
    pipe = build(pc.images, batch=False, num_outputs=2, layout=["HWC", ""],
                 dtype=[types.UINT8, types.INT64])
    img, label = pipe.run()
    assert img.layout() == "HWC" and img.dtype == types.DALIDataType.UINT8
    assert label.dtype == types.DALIDataType.INT64
    assert img.shape() == [(4, 5, 3), (5, 7, 3), (6, 9, 3), (7, 11, 3)]
    assert label.as_array().ravel().tolist() == [1000, 1001, 1002, 1003]
    assert (img.at(3) == 3).all()


@pytest.mark.parametrize("batch_mode", [False, True])
def test_num_outputs_1_takes_a_sequence_of_one(batch_mode):
    if batch_mode:
        def source(info):  # one batch in a 1-tuple
            return ([np.array([info.iteration, k], np.int32) for k in range(4)],)
    else:
        def source(si):  # one sample in a list of one
            return [np.array([si.iteration, si.idx_in_batch], np.int32)]

    @pipeline_def(batch_size=4, num_threads=1, py_num_workers=2)
    def p():
        (x,) = fn.external_source(source, num_outputs=1, batch=batch_mode, parallel=True,
                                  batch_info=batch_mode or None)
        return x

    pipe = p()
    for it in range(3):
        assert pipe.run()[0].as_array().tolist() == [[it, k] for k in range(4)]


def test_scalar_samples_from_workers_stay_0d():
    data = np.arange(8, dtype=np.float32)
    for pipe in (build(lambda si: np.float64(si.idx_in_epoch) if si.idx_in_epoch < 8
                       else pc.stop(), batch=False),
                 build(data, batch=False),  # an array iterated: NumPy scalars
                 build(lambda info: np.arange(4) + 4 * info.iteration if info.iteration < 2
                       else pc.stop(), batch_info=True)):  # a 1-D batch: 4 scalars
        got = drain(pipe)
        assert [[s.shape for s in b[0]] for b in got] == [[()] * 4] * 2
        assert [float(s) for b in got for s in b[0]] == list(range(8))


def test_worker_seeds_follow_the_pipeline_seed_drawn_or_given():
    def seeds(seed):
        pipe = build(lambda si: np.array([sluice.get_worker_info().seed], np.int64),
                     batch=False, seed=seed)
        return pipe.run()[0].as_array().ravel().tolist()

    # no seed: each pipeline draws a fresh one, and so its workers are seeded afresh
    assert seeds(None) != seeds(None)
    assert seeds(7) == seeds(7)


def test_torch_tensors_from_workers():
    pipe = build(lambda si: torch.full((3,), si.idx_in_epoch, dtype=torch.float16),
                 batch=False)
    out = pipe.run()[0].as_array()
    assert out.dtype == np.float16 and out[:, 0].tolist() == [0, 1, 2, 3]


# ---- workers: persistent, informed, ordered, bounded ---------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_persistent_workers_and_worker_info(method):
    pipe = build(pc.info_sample, method, workers=2, bs=4, batch=False)
    pipe.build()
    pids = pipe.py_worker_pids
    rows = np.concatenate([pipe.run()[0].as_array().copy() for _ in range(3)])
    assert rows[:, 0].tolist() == list(range(12))
    assert rows[:, 1].tolist() == [0, 0, 1, 1] * 3  # samples 0-1 of a batch: worker 0
    assert set(rows[:, 2]) == {2} and set(rows[:, 3]) == set(pids)
    assert sluice.get_worker_info() is None
    info = sluice.WorkerInfo(0, 2, 5)
    with pytest.raises(AttributeError, match="read-only"):
        info.id = 1
    pipe2 = build(pc.ident, method, batch=False)
    epochs(pipe2, 3)
    pids2 = pipe2.py_worker_pids
    epochs(pipe2, 1)
    assert pipe2.py_worker_pids == pids2  # the same processes across epochs


def test_results_out_of_order_are_delivered_in_order():
    got = epochs(build(pc.slow_part_0, workers=2, bs=4, depth=3, batch=False,
                       prefetch_queue_depth=3), 1)[0]
    assert [[int(s[0]) for s in b[0]] for b in got] == [list(range(k, k + 4))
                                                         for k in range(0, 16, 4)]


@pytest.mark.parametrize("bs,batch,cap", [(4, False, 2 * 2), (1, False, 2 * 2), (4, True, 2 * 2)])
def test_at_most_depth_times_workers_tasks_outstanding(monkeypatch, bs, batch, cap):
    from sluice import parallel

    peak = [0]
    submit = parallel.WorkerPool.submit

    def counting(self, wid, key, payload):
        submit(self, wid, key, payload)
        peak[0] = max(peak[0], len(self.outstanding))

    monkeypatch.setattr(parallel.WorkerPool, "submit", counting)
    src = pc.sized_batch if batch else pc.endless
    pipe = build(src, workers=2, bs=bs, batch=batch, batch_info=batch or None,
                 prefetch_queue_depth=2)
    for _ in range(4):
        pipe.run()
    assert 0 < peak[0] <= cap


def test_chunks_are_reused_and_grow():
    pipe = build(pc.big_at_60, workers=2, bs=2, batch=False)
    for _ in range(2):
        pipe.run()
    stats = pipe.external_source_shm_statistics()
    assert max(stats["capacities"]) < (3 << 20)
    for _ in range(40):
        pipe.run()
    stats = pipe.external_source_shm_statistics()
    assert max(stats["capacities"]) >= (3 << 20)  # grew for sample 60, kept since
    for _ in range(200):
        pipe.run()
    # reused: however many iterations, at most what can be in use at once — per worker, its
    # tasks in flight (depth 2), the batches the pipeline holds lent (up to 3 iterations)
    # and one whose release is under way (without reuse: a chunk per task, 240 here)
    assert len(pipe.external_source_shm_statistics()["capacities"]) <= 2 * (2 + 3 + 1)
    del pipe
    gc.collect()
    assert sluice._sluice._shm_live() == (0, 0)


def test_work_past_the_end_of_an_epoch_is_dropped():
    pipe = build(pc.stops_only_at_10, workers=2, bs=4, batch=False, prefetch_queue_depth=4)
    counts = []
    for _ in range(10):
        got = drain(pipe)
        assert [[int(s[0]) for s in b[0]] for b in got] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
        pipe.reset()
        counts.append(len(pipe.external_source_shm_statistics()["capacities"]))
    # the chunks of dropped work are reused: at most the tasks in flight (depth 4 x 2
    # workers) plus what the pipeline holds lent (3 iterations of 2 chunks) and a spare per
    # worker; dropping nothing would add 6 chunks per epoch (3 batches computed ahead)
    assert max(counts) <= 4 * 2 + 3 * 2 + 2, counts


def test_lent_chunks_are_released_by_the_pipeline():
    pipe = build(pc.endless, workers=1, bs=2, depth=1, batch=False, prefetch_queue_depth=1)
    for _ in range(5):
        pipe.run()
    pool = pipe._pool
    chunks = pool.workers[0].chunks
    # external_source gives a lent batch back once it copied the samples, so nothing the
    # pipeline delivered is still lent
    assert sum(c.lent for c in chunks.values()) == 0
    assert len(chunks) == 1  # one task out at a time, its chunk free again before the next


# ---- spawn: pickling -------------------------------------------------------------------------------

def test_spawn_pickles_lambdas_and_local_functions():
    offset = 100

    def local(si):
        return np.array([si.idx_in_epoch + offset], np.int32)

    got = drain(build(lambda si: local(si) * 2 if si.idx_in_epoch < 6 else pc.stop(),
                      "spawn", bs=4, batch=False))
    assert [[int(s[0]) for s in b[0]] for b in got] == [[200, 202, 204, 206], [208, 210]]


def test_spawn_reports_what_cannot_be_pickled():
    lock = threading.Lock()
    pipe = build(lambda si: np.array([lock.locked()]), "spawn", batch=False, name="locked")
    with pytest.raises(RuntimeError, match='parallel external_source "locked": with '
                                           'py_start_method="spawn" the sources and '
                                           "py_worker_init are pickled.*lock"):
        pipe.build()


def test_bad_arguments():
    with pytest.raises(ValueError, match='py_start_method must be "fork" or "spawn"'):
        sluice.Pipeline(batch_size=2, py_start_method="forkserver")
    with pytest.raises(TypeError, match="per-sample source must take one argument"):
        build(lambda: np.zeros(1), batch=False)
    with pytest.raises(ValueError, match="timeout applies to parallel=True"):
        build(pc.ident, parallel=False, batch=False, timeout=1)
    with pytest.raises(ValueError, match="needs a source"):
        build(None)
    with pytest.warns(UserWarning, match="excessive worker creation"):
        import os

        build(pc.ident, workers=len(os.sched_getaffinity(0)) + 1, batch=False).build()


# ---- PyTorch: dataset_source and the iterator --------------------------------------------------------

class Squares(torch.utils.data.Dataset):
    def __len__(self):
        return 11

    def __getitem__(self, i):
        return torch.tensor([i, i * i], dtype=torch.int32), i % 3


@pytest.mark.parametrize("shuffle,drop_last", [(True, False), (True, True), (False, False)])
def test_dataset_source_follows_distributed_sampler(shuffle, drop_last):
    from torch.utils.data import DistributedSampler

    from sluice.plugin.pytorch import DALIGenericIterator, dataset_source

    ds = Squares()
    for shard in range(3):
        src = dataset_source(ds, shuffle=shuffle, seed=5, drop_last=drop_last, shard_id=shard,
                             num_shards=3)

        @pipeline_def(batch_size=2, num_threads=2, py_num_workers=2)
        def p():
            return fn.external_source(src, num_outputs=2, batch=False, parallel=True)

        it = DALIGenericIterator([p()], ["data", "label"], auto_reset=True)
        sampler = DistributedSampler(ds, num_replicas=3, rank=shard, shuffle=shuffle, seed=5,
                                     drop_last=drop_last)
        for epoch in range(2):  # auto_reset: the for loop runs one epoch each time
            sampler.set_epoch(epoch)
            want = list(sampler)
            batches = [(b[0]["data"].clone(), b[0]["label"].clone()) for b in it]
            got = [int(v) for d, _ in batches for v in d[:, 0]]
            assert got == want and len(src) == len(want)
            for d, lab in batches:
                assert (d[:, 1] == d[:, 0] ** 2).all() and (lab.view(-1) == d[:, 0] % 3).all()
    with pytest.raises(ValueError, match="invalid shard_id 3"):
        dataset_source(ds, shard_id=3, num_shards=3)


def test_pytorch_iterator_raises_a_worker_error_once_and_goes_on():
    from sluice.plugin.pytorch import DALIGenericIterator

    @pipeline_def(batch_size=2, num_threads=2, py_num_workers=2)
    def p():
        return fn.external_source(pc.raises_at_7, batch=False, parallel=True)

    it = DALIGenericIterator([p()], ["x"])
    got, errors = [], []
    while True:
        try:
            got.append(next(it)[0]["x"][:, 0].tolist())
        except StopIteration:
            break
        except ValueError as e:
            errors.append(str(e))
    assert got == [[0, 1], [2, 3], [4, 5], [8, 9], [10, 11]]
    assert len(errors) == 1 and "bad record 7" in errors[0]


# ---- the C side: SharedChunk and Pipeline.feed_lent ------------------------------------------------

def test_feed_lent_checks_and_releases():
    import mmap
    import os

    fd = os.memfd_create("t")
    os.ftruncate(fd, 4096)
    with mmap.mmap(fd, 4096) as m:
        np.frombuffer(m, np.int32, 4)[:] = [1, 2, 3, 4]
    chunk = sluice._sluice.SharedChunk()
    chunk.map(fd, 4096)
    os.close(fd)
    assert (chunk.size, chunk.lent) == (4096, 0) and chunk.read(4, 4) == bytes([2, 0, 0, 0])

    pipe = build(None, parallel=False, bs=2, depth=1, name="s")
    pipe.build()
    c = pipe._pipe
    code = list(sluice._sluice.DTYPE_NAMES).index("int32")
    with pytest.raises(sluice.InternalError, match="sample 1 .* is outside its chunk"):
        c.feed_lent("s", [chunk], [(0, 0, (2,)), (0, 4090, (2,))], code, 1)
    with pytest.raises(sluice.InvalidArgumentError, match="sample 0 has 2 dimensions, expected 1"):
        c.feed_lent("s", [chunk], [(0, 0, (1, 2))], code, 1)
    with pytest.raises(sluice.InvalidArgumentError, match="got 3 samples; expected 1 to 2"):
        c.feed_lent("s", [chunk], [(0, 0, (1,))] * 3, code, 1)
    assert chunk.lent == 0  # a failed feed gives the chunk back at once
    c.feed_lent("s", [chunk], [(0, 0, (2,)), (0, 8, (2,))], code, 1)
    assert chunk.lent == 1
    with pytest.raises(sluice.MisuseError, match="still lent"):
        chunk.map(0, 4096)
    (out,) = pipe.run()
    assert out.as_array().tolist() == [[1, 2], [3, 4]]  # read in place, copied once
    del out
    del pipe, c
    gc.collect()
    assert chunk.lent == 0  # the destroyed pipeline released it
    del chunk
