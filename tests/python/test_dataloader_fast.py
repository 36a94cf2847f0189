"""tests/python/test_dataloader_fast.py: the DataLoader's per-batch fast paths (issue 18,
"ready arrays" goal) keep PyTorch's semantics: the batches PyTorch's BatchSampler makes (taken
with islice), the profiler's record of each next(), tasks whose indices are not plain ints,
tensors built over their chunk (dtypes, shapes, empty, NumPy leaves), the C row copy
(_sluice._dl_gather) against NumPy, and a worker's chunks keeping their pages on a loaded
machine."""
import itertools
import time

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import dataloader_cases as dc
from sluice import _sluice
from sluice.plugin import _dataloader
from sluice.plugin.pytorch import DataLoader

LIMIT_S = 90


@pytest.fixture(autouse=True)
def bounded():
    with dc.time_limit(LIMIT_S):
        yield


# ---- the index batches ---------------------------------------------------------------------

class _CountingSampler(tud.Sampler):
    """Yields 0..n-1 and counts the next() calls its iterator gets (StopIteration included)."""

    def __init__(self, n):
        self.n, self.calls = n, 0

    def __len__(self):
        return self.n

    def __iter__(self):
        sampler = self

        class It:
            def __init__(self):
                self.i = 0

            def __iter__(self):
                return self

            def __next__(self):
                sampler.calls += 1
                if self.i >= sampler.n:
                    raise StopIteration
                self.i += 1
                return self.i - 1

        return It()


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 31, 32, 33])
@pytest.mark.parametrize("size", [1, 3, 8])
@pytest.mark.parametrize("drop_last", [False, True])
def test_index_batches_are_pytorch_batch_samplers(n, size, drop_last):
    ours_s, theirs_s = _CountingSampler(n), _CountingSampler(n)
    ours = list(_dataloader._index_iter(tud.BatchSampler(ours_s, size, drop_last)))
    theirs = list(iter(tud.BatchSampler(theirs_s, size, drop_last)))
    assert ours == theirs
    assert ours_s.calls == theirs_s.calls  # the sampler is asked exactly as often


def test_index_batches_of_a_random_sampler_follow_its_generator():
    ours = list(_dataloader._index_iter(tud.BatchSampler(
        tud.RandomSampler(range(50), generator=torch.Generator().manual_seed(3)), 8, False)))
    theirs = list(tud.BatchSampler(
        tud.RandomSampler(range(50), generator=torch.Generator().manual_seed(3)), 8, False))
    assert ours == theirs and len(ours) == 7 and sorted(itertools.chain(*ours)) == list(range(50))


def test_a_batch_sampler_subclass_is_iterated_as_it_is():
    class Reversed(tud.BatchSampler):
        def __iter__(self):
            return (b[::-1] for b in super().__iter__())

    bs = Reversed(tud.SequentialSampler(range(6)), 3, False)
    assert list(_dataloader._index_iter(bs)) == [[2, 1, 0], [5, 4, 3]]
    loader = DataLoader(tud.TensorDataset(torch.arange(6)), batch_sampler=bs, num_workers=1)
    assert [b[0].tolist() for b in loader] == [[2, 1, 0], [5, 4, 3]]


@pytest.mark.parametrize("workers", [0, 2])
@pytest.mark.parametrize("drop_last", [False, True])
def test_loader_batches_match_torch_with_a_seeded_shuffle(workers, drop_last):
    ds = tud.TensorDataset(torch.arange(37))
    kw = dict(batch_size=5, shuffle=True, drop_last=drop_last, num_workers=workers)
    ours = [b[0].tolist() for b in DataLoader(ds, generator=torch.Generator().manual_seed(7),
                                              **kw)]
    theirs = [b[0].tolist() for b in tud.DataLoader(
        ds, generator=torch.Generator().manual_seed(7), **kw)]
    assert ours == theirs


@pytest.mark.parametrize("workers", [0, 1])
def test_indices_that_are_not_ints_reach_the_dataset(workers):
    class Echo(tud.Dataset):
        def __getitem__(self, i):
            return torch.as_tensor(i, dtype=torch.int64)

        def __len__(self):
            return 4

    # a batch sampler of tensors and NumPy integers (the task is pickled without
    # ForkingPickler: the values arrive all the same)
    batches = [[torch.tensor(3), np.int64(1)], [np.int32(2), torch.tensor(0)]]
    loader = DataLoader(Echo(), batch_sampler=batches, num_workers=workers)
    assert [b.tolist() for b in loader] == [[3, 1], [2, 0]]


# ---- the profiler --------------------------------------------------------------------------

@pytest.mark.parametrize("workers", [0, 1])
def test_each_next_is_recorded_under_the_profiler(workers):
    loader = DataLoader(tud.TensorDataset(torch.arange(6)), batch_size=2, num_workers=workers)
    with torch.autograd.profiler.profile() as prof:
        got = [b[0].tolist() for b in loader]
    assert got == [[0, 1], [2, 3], [4, 5]]
    names = [e.name for e in prof.function_events if e.name.startswith("enumerate(DataLoader)")]
    assert len(names) == 4, names  # three batches and the StopIteration, as PyTorch records
    assert not torch._C._autograd._profiler_enabled()
    assert [b[0].tolist() for b in loader] == got  # and without it


# ---- the batch's tensors over its chunk ----------------------------------------------------

class _Mixed(tud.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return {"f32": torch.full((2, 3), float(i)), "i16": np.full((4,), i, np.int16),
                "b": torch.tensor(i % 2 == 0), "scalar": i, "f": i / 2,
                "empty": torch.zeros((0, 5)), "c64": torch.tensor([complex(i, -i)]),
                "bf16": torch.full((3,), i, dtype=torch.bfloat16)}


@pytest.mark.parametrize("workers", [1, 2])
def test_batch_tensors_match_torch_dtypes_shapes_and_values(workers):
    ours = list(DataLoader(_Mixed(), batch_size=4, num_workers=workers))
    theirs = list(tud.DataLoader(_Mixed(), batch_size=4, num_workers=0))
    assert len(ours) == len(theirs) == 2
    for a, b in zip(ours, theirs):
        assert a.keys() == b.keys()
        for k in a:
            assert type(a[k]) is type(b[k]), k
            assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
            assert torch.equal(a[k], b[k]), k
            assert a[k].is_contiguous()
    a = ours[0]["f32"]
    a += 1  # writable; the other tensors of the batch are unaffected
    assert torch.equal(ours[0]["i16"], theirs[0]["i16"])


def test_numpy_leaves_without_collation_stay_arrays():
    class Arr(tud.Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return {"a": np.arange(6, dtype=np.float32).reshape(2, 3) + i, "s": "x"}

    def keep(batch):  # a collate_fn returning NumPy arrays: they travel in the chunk
        return {"a": np.stack([b["a"] for b in batch]), "s": [b["s"] for b in batch]}

    (got,) = list(DataLoader(Arr(), batch_size=3, num_workers=1, collate_fn=keep))
    assert type(got["a"]) is np.ndarray and got["a"].dtype == np.float32
    assert np.array_equal(got["a"], np.stack([np.arange(6, dtype=np.float32).reshape(2, 3) + i
                                              for i in range(3)]))
    assert got["s"] == ["x"] * 3


# ---- the C row copy ------------------------------------------------------------------------

def _addr(a):
    return a.__array_interface__["data"][0]


def test_gather_copies_arrays_tensors_and_addresses_row_by_row():
    rng = np.random.default_rng(0)
    rows = [rng.integers(0, 255, (5, 7, 3), np.uint8) for _ in range(4)]
    out = np.zeros((4, 5, 7, 3), np.uint8)
    assert _sluice._dl_gather(_addr(out), rows, rows[0].nbytes) is True
    assert np.array_equal(out, np.stack(rows))
    out[:] = 0
    assert _sluice._dl_gather(_addr(out), tuple(rows), rows[0].nbytes) is True  # a tuple
    assert np.array_equal(out, np.stack(rows))
    ts = [torch.randn(3, 2) for _ in range(5)]
    dst = torch.empty(5, 3, 2)
    assert _sluice._dl_gather(dst.data_ptr(), [t.data_ptr() for t in ts], 24) is True
    assert torch.equal(dst, torch.stack(ts))
    assert _sluice._dl_gather(_addr(out), [], 10) is True  # nothing to copy


def test_gather_refuses_and_writes_nothing_when_a_row_does_not_fit():
    rows = [np.arange(12, dtype=np.uint8).reshape(3, 4) for _ in range(3)]
    out = np.full((3, 3, 4), 9, np.uint8)
    strided = np.arange(24, dtype=np.uint8).reshape(3, 8)[:, ::2]  # not contiguous
    for bad in (strided, np.zeros(11, np.uint8), "not a buffer", None, 0):
        assert _sluice._dl_gather(_addr(out), rows[:2] + [bad], 12) is False, bad
        assert (out == 9).all()  # the caller's fallback sees the destination untouched
    with pytest.raises(ValueError):
        _sluice._dl_gather(0, rows, 12)
    with pytest.raises(TypeError):
        _sluice._dl_gather(_addr(out), 5, 12)
    with pytest.raises(OverflowError):
        _sluice._dl_gather(_addr(out), [1 << 80], 12)


# ---- chunks keep their pages ---------------------------------------------------------------

def _chunks_made(loader):
    return [len(m) for m in loader._iterator._book.maps]


@pytest.mark.parametrize("workers,per_worker,total", [(1, [2], 2), (2, [3, 3], 5),
                                                      (3, [3, 3, 3], 9)])
def test_a_loop_that_drops_its_batches_keeps_only_the_chunks_in_flight(monkeypatch, workers,
                                                                         per_worker, total):
    # the batch the loop holds (or the one queued for it) and the one written meanwhile: two
    # chunks per worker. Before: a worker wrote ahead into a new chunk whenever none was free
    # yet (3-4 chunks with one worker, 3 per worker with two), each kept with its pages. With
    # three workers and 16 batches an epoch, worker 0 writes the last batch of an epoch,
    # which the loop holds while it waits for the first of the next one, worker 0's too: the
    # main process tells the worker it waits for that batch, and the worker makes one chunk
    # more at once (it would otherwise wait for a chunk to come back: WAIT_S, 5 s here)
    from sluice.plugin import _dl_worker

    monkeypatch.setattr(_dl_worker, "WAIT_S", 5.0)  # inherited by the forked workers
    loader = DataLoader(dc.BigArrayDataset(), batch_size=4, num_workers=workers,
                        prefetch_factor=2, persistent_workers=True)
    seen = []
    t = time.monotonic()
    for _ in range(3):
        for b in loader:
            seen.append(int(b[1].sum()))
    took = time.monotonic() - t
    assert seen == [sum(range(i, i + 4)) for i in range(0, 64, 4)] * 3
    made = _chunks_made(loader)
    # (several workers on this 2-core machine: now and then a batch is waited for while its
    # worker's chunks are still held — a free notice late — and it takes one chunk more,
    # which is used only when that happens again and gives its pages back after COOL_AFTER
    # batches otherwise)
    assert all(m <= p for m, p in zip(made, per_worker)) and sum(made) <= total
    assert took < 4.0  # no wait ran out
    del b, loader


def test_a_program_that_keeps_its_batches_gets_them_without_waiting(monkeypatch):
    # list(loader) frees no chunk: a worker at its cap waits for a free one once (none came
    # yet), then makes the chunks it needs at once; it never waits per batch
    from sluice.plugin import _dl_worker

    monkeypatch.setattr(_dl_worker, "WAIT_S", 1.0)  # inherited by the forked worker
    loader = DataLoader(dc.BigArrayDataset(), batch_size=4, num_workers=1, prefetch_factor=2,
                        persistent_workers=True)
    t = time.monotonic()
    batches = list(loader)
    took = time.monotonic() - t
    assert len(batches) == 16 and _chunks_made(loader) == [16]
    for k, (x, i) in enumerate(batches):
        assert i.tolist() == list(range(4 * k, 4 * k + 4))
        assert np.array_equal(x.numpy(), np.stack([dc.BigArrayDataset.row(j) for j in i.tolist()]))
    assert took < 8.0  # one wait of 1 s; waiting per batch would take 14 s
    again = list(loader)  # the next epoch: no notice came since the wait: no wait at all
    assert len(again) == 16 and _chunks_made(loader) == [32]
    del batches, again
    # dropped and iterated as a loop does: the chunks come back and are reused
    for b in loader:
        pass
    assert _chunks_made(loader) == [32]
    del b, loader


def test_a_program_that_holds_two_batches_makes_a_third_chunk(monkeypatch):
    # at every step the program holds two batches and waits for a third: the worker, told so,
    # does not wait for a chunk to come back, and after two such steps writes ahead again
    # with one chunk more
    from sluice.plugin import _dl_worker

    monkeypatch.setattr(_dl_worker, "WAIT_S", 5.0)
    loader = DataLoader(dc.BigArrayDataset(), batch_size=4, num_workers=1, prefetch_factor=2,
                        persistent_workers=True)
    t = time.monotonic()
    for _ in range(3):
        held = []
        for k, b in enumerate(loader):
            held = held[-1:] + [b]
            assert b[1].tolist() == list(range(4 * k, 4 * k + 4))
    assert time.monotonic() - t < 4.0  # no wait ran out
    # (three; on this loaded 2-core machine now and then more, when a free notice comes after
    # the main process said it waits: never more than the batches held, the two tasks ahead
    # and one)
    assert 3 <= _chunks_made(loader)[0] <= 5
    del held, b, loader


def test_late_notices_do_not_make_a_worker_fault_its_chunks_in_again(monkeypatch):
    # A loaded machine delivers free notices late: the worker then needs one chunk more than
    # usual now and then, and that spare sits free between such moments. It keeps its pages
    # (COOL_AFTER batches): a late notice must not cost a whole chunk of page faults. Forced
    # here by a main process that holds two batches at a time, every 5th batch.
    from sluice.plugin import _dl_worker

    monkeypatch.setattr(_dl_worker, "IDLE_S", 60.0)
    loader = DataLoader(dc.BigArrayDataset(), batch_size=4, num_workers=1, prefetch_factor=2,
                        persistent_workers=True)
    for _ in range(2):  # warm-up: every chunk the pattern needs exists
        held = []
        for i, b in enumerate(loader):
            held = held[-1:] + [b] if i % 5 == 0 else [b]
    pid = loader._iterator._workers[0].pid
    before = dc.minor_faults(pid)
    for _ in range(6):
        held = []
        for i, b in enumerate(loader):
            held = held[-1:] + [b] if i % 5 == 0 else [b]
    batches = 6 * len(loader)
    pages = 4 * dc.BigArrayDataset.row(0).nbytes // 4096  # one chunk
    # (a chunk given back after one batch, as before: ~110 faults per epoch here, 660 in all;
    # kept: ~70 in all, the worker's own allocations)
    assert dc.minor_faults(pid) - before < batches * pages // 16
    del held, b, loader
