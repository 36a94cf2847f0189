"""tests/python/test_dataloader.py: sluice.plugin.pytorch.DataLoader against the expectations
of PyTorch's own DataLoader tests (test/test_dataloader.py: sequential, shuffle, sampler,
batch_sampler, len, collate, numpy, dict, namedtuple, string, iterable dataset, worker seed,
worker init, get_worker_info, error, timeout, segfault, proper exit, multiprocessing context,
builtin collection conversion), with torch.utils.data's own DataLoader and default_collate as
the independent reference where one is needed.

Every test is bounded in time (SIGALRM) and checked for leftovers: no worker process of this
test alive after it, nothing new in /dev/shm. Failure cases (segfault, killed worker, timeout,
exits) run in a process of their own (dataloader_cases.py) under a time limit.
"""
import collections
import json
import math
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import psutil
import pytest
import torch
import torch.utils.data as tud

import dataloader_cases as dc
from sluice.plugin import pytorch as sp
from sluice.plugin.pytorch import DataLoader, TensorDataset, get_worker_info

CASES = pathlib.Path(__file__).with_name("dataloader_cases.py")
LIMIT_S = 90


def _shm():
    try:
        return set(os.listdir("/dev/shm"))
    except OSError:
        return set()


def _mp_helper(p):
    """multiprocessing's own long-lived helpers (spawn's resource tracker, the forkserver),
    started once per test process: not workers."""
    try:
        cmd = " ".join(p.cmdline())
    except psutil.Error:
        return True
    return "resource_tracker" in cmd or "forkserver" in cmd


@pytest.fixture(autouse=True)
def bounded_and_clean():
    """A time limit for the test, and no worker or /dev/shm entry left after it."""
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    shm = _shm()

    with dc.time_limit(LIMIT_S):
        yield
    import gc

    gc.collect()
    deadline = time.monotonic() + 10
    while True:
        left = [p for p in me.children(recursive=True) if p.pid not in before
                and p.status() != psutil.STATUS_ZOMBIE and not _mp_helper(p)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert left == [], f"processes left behind: {left}"
    # not ours: multiprocessing's semaphores, the fuzz targets' folders (docs/fuzzing.md)
    new = sorted(f for f in _shm() - shm if not f.startswith(("sem.", "sluice-fuzz-")))
    assert new == [], f"new /dev/shm entries: {new}"


@pytest.fixture
def data():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(100, 2, 3, 5, generator=g)
    y = torch.randperm(50, generator=g).repeat(2)
    return x, y, TensorDataset(x, y)


WORKERS = [0, 2]


# ---- sequential, shuffle, samplers, len --------------------------------------------------------

@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("batch_size", [1, 2, 3])
def test_sequential(data, workers, batch_size):
    x, y, ds = data
    loader = DataLoader(ds, batch_size=batch_size, num_workers=workers)
    n = 0
    for i, (sample, target) in enumerate(loader):
        idx = i * batch_size
        assert torch.equal(sample, x[idx:idx + batch_size])
        assert torch.equal(target, y[idx:idx + batch_size])
        n += 1
    assert n == math.ceil(100 / batch_size) == len(loader)


@pytest.mark.parametrize("workers", WORKERS)
def test_shuffle_covers_every_sample_once(data, workers):
    x, y, ds = data
    loader = DataLoader(ds, batch_size=3, shuffle=True, num_workers=workers)
    seen = collections.Counter()
    for sample, target in loader:
        for s, t in zip(sample, target):
            i = int(torch.nonzero((x == s).flatten(1).all(1))[0])
            seen[i] += 1
            assert t == y[i]
    assert sorted(seen) == list(range(100)) and set(seen.values()) == {1}


def test_shuffle_reproducible_with_generator_and_equal_to_torch(data):
    _, _, ds = data
    runs = []
    for workers in (0, 2):
        for cls in (DataLoader, tud.DataLoader):
            loader = cls(ds, batch_size=4, shuffle=True, num_workers=workers,
                         generator=torch.Generator().manual_seed(42))
            runs.append(torch.cat([t for _, t in loader]).tolist())
    assert runs[0] == runs[1] == runs[2] == runs[3]


@pytest.mark.parametrize("workers", WORKERS)
def test_sampler_and_batch_sampler(data, workers):
    x, _, ds = data
    order = [5, 3, 99, 0, 42, 7, 7]
    got = torch.cat([b[0] for b in DataLoader(ds, sampler=order, batch_size=3,
                                              num_workers=workers)])
    assert torch.equal(got, x[order])
    batches = [[1, 2], [50], [9, 8, 7]]
    out = list(DataLoader(ds, batch_sampler=batches, num_workers=workers))
    assert len(out) == 3 == len(DataLoader(ds, batch_sampler=batches))
    for b, (s, _) in zip(batches, out):
        assert torch.equal(s, x[b])
    bs = tud.BatchSampler(tud.SequentialSampler(range(10)), 4, drop_last=True)
    assert [t[0].shape[0] for t in DataLoader(ds, batch_sampler=bs, num_workers=workers)] == [4, 4]


def test_mutually_exclusive_arguments_raise_as_pytorch(data):
    _, _, ds = data
    for kwargs, text in [
            (dict(sampler=[0], shuffle=True), "sampler option is mutually exclusive"),
            (dict(batch_sampler=[[0]], batch_size=2), "batch_sampler option is mutually"),
            (dict(batch_sampler=[[0]], drop_last=True), "batch_sampler option is mutually"),
            (dict(batch_size=None, drop_last=True), "batch_size=None option disables"),
            (dict(num_workers=-1), "num_workers option should be non-negative"),
            (dict(timeout=-1), "timeout option should be non-negative"),
            (dict(prefetch_factor=3), "prefetch_factor option could only be specified"),
            (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
            (dict(multiprocessing_context="fork"), "multiprocessing_context can only be used"),
            (dict(num_workers=1, multiprocessing_context="bogus"), "should specify a valid"),
    ]:
        with pytest.raises(ValueError, match=text):
            DataLoader(ds, **kwargs)
    with pytest.raises(TypeError, match="multiprocessing_context option should be a valid"):
        DataLoader(ds, num_workers=1, multiprocessing_context=3)
    with pytest.raises(ValueError, match="shuffle"):
        DataLoader(dc.CountingIterable(4), shuffle=True)


@pytest.mark.parametrize("workers", WORKERS)
def test_len_drop_last_and_growing_dataset(workers):
    ds = dc.CountingDataset(10)
    for bs, drop, want in [(3, False, 4), (3, True, 3), (5, True, 2), (None, False, 10)]:
        loader = DataLoader(ds, batch_size=bs, drop_last=drop, num_workers=workers)
        assert len(loader) == want
        out = list(loader)
        assert len(out) == want
        if bs is None:
            assert out == list(range(10))
        else:
            assert [int(v) for b in out for v in b] == list(range(want * bs if drop else 10))
    loader = DataLoader(ds, batch_size=4)
    assert len(loader) == 3
    ds.n = 13  # the sampler reads len(dataset) at each epoch, as PyTorch's does
    assert len(loader) == 4 and len(list(loader)) == 4


def test_attributes_user_code_reads(data):
    _, _, ds = data
    loader = DataLoader(ds, batch_size=5, num_workers=2, prefetch_factor=3)
    assert isinstance(loader, tud.DataLoader)
    assert loader._auto_collation and loader.batch_size == 5 and loader.dataset is ds
    assert isinstance(loader.sampler, tud.SequentialSampler)
    assert isinstance(loader.batch_sampler, tud.BatchSampler)
    assert loader._index_sampler is loader.batch_sampler and loader.prefetch_factor == 3
    assert DataLoader(ds, batch_size=None)._index_sampler is not None
    assert not DataLoader(ds, batch_size=None)._auto_collation
    assert DataLoader(ds).prefetch_factor is None
    assert DataLoader(ds, num_workers=1).prefetch_factor == 2
    with pytest.raises(ValueError, match="batch_size attribute should not be set"):
        loader.batch_size = 3
    it = iter(loader)
    assert it._num_workers == 2 and len(it._workers) == 2
    assert all(w.is_alive() for w in it._workers)
    assert len(it) == 20
    next(it)
    it._shutdown_workers()
    assert not any(w.is_alive() for w in it._workers)


def test_reexports_are_torch_own():
    for name in ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset",
                 "Subset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
                 "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
                 "DistributedSampler", "default_collate", "default_convert", "_utils"]:
        assert getattr(sp, name) is getattr(tud, name), name


# ---- collation -----------------------------------------------------------------------------

def _same(a, b):
    """Structure, types, dtypes, shapes and values equal (b: torch's reference)."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(b, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b), (a, b)
    elif isinstance(b, np.ndarray):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    elif isinstance(b, dict):
        assert list(a) == list(b)
        for k in b:
            _same(a[k], b[k])
    elif isinstance(b, (list, tuple)):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
    else:
        assert a == b


Point = collections.namedtuple("Point", "x y")


class MixedDataset(tud.Dataset):
    def __len__(self):
        return 7

    def __getitem__(self, i):
        return {"img": np.full((2, 3), i, np.float32), "label": i, "weight": 0.5 * i,
                "name": f"s{i}", "raw": b"b%d" % i, "np_label": np.int64(i),
                "flag": np.bool_(i % 2),
                "point": Point(torch.tensor([i, -i]), np.float64(i)), "pair": (i, [i, i + 1]),
                "nested": {"t": torch.arange(3, dtype=torch.int16) * i}}


@pytest.mark.parametrize("workers", WORKERS)
def test_default_collate_matches_torch(workers):
    ds = MixedDataset()
    ours = list(DataLoader(ds, batch_size=3, num_workers=workers))
    ref = list(tud.DataLoader(ds, batch_size=3))
    assert len(ours) == 3
    for a, b in zip(ours, ref):
        _same(a, b)
    assert ours[0]["label"].shape == (3,) and ours[0]["label"].dtype == torch.int64
    assert ours[0]["weight"].dtype == torch.float64 and ours[0]["name"] == ["s0", "s1", "s2"]


class Celsius:
    """A type default_collate does not know, until a program registers it."""

    def __init__(self, deg):
        self.deg = deg


def _collate_celsius(batch, *, collate_fn_map=None):
    return torch.tensor([c.deg for c in batch], dtype=torch.float32) + 273.15


@pytest.mark.parametrize("workers,assignment", [(0, "batch"), (2, "batch"), (2, "sample")])
def test_default_collate_honours_an_extended_fn_map(monkeypatch, workers, assignment):
    """torch.utils.data's default_collate dispatches on default_collate_fn_map, which programs
    may extend in place (torch 1.13 and 2.x): a registered type is collated by its function,
    inside containers too, as torch's own DataLoader does."""
    from torch.utils.data._utils import collate as tc

    monkeypatch.setitem(tc.default_collate_fn_map, Celsius, _collate_celsius)
    ds = [{"t": Celsius(i), "i": i} for i in range(6)]
    ours = list(DataLoader(ds, batch_size=3, num_workers=workers, batch_assignment=assignment))
    ref = list(tud.DataLoader(ds, batch_size=3))
    assert len(ours) == len(ref) == 2
    for a, b in zip(ours, ref):
        assert torch.equal(a["t"], b["t"]) and torch.equal(a["i"], b["i"])
    assert torch.allclose(ours[1]["t"], torch.tensor([276.15, 277.15, 278.15]))
    # the map back as torch ships it: sluice's own collation again (no Celsius allowed)
    monkeypatch.undo()
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        list(DataLoader(ds, batch_size=3, num_workers=workers))


class Labelled(list):
    """A list subclass with an attribute: newer torch's default_collate / default_convert
    rebuild a MutableSequence as a copy (the attribute kept), torch 1.13's as type(x)(items)."""


def _labelled(*items):
    out = Labelled(items)
    out.source = "cam0"
    return out


def _clone_collate(batch):
    """default_collate of a batch of Labelled pairs with newer torch's rule (a copy of the first
    sample, its items replaced): written from that rule, not torch's code."""
    import copy

    out = copy.copy(batch[0])
    for i, items in enumerate(zip(*batch)):
        out[i] = torch.tensor(items)
    return out


def _clone_convert(data):
    import copy

    if isinstance(data, Labelled):
        out = copy.copy(data)
        for i, v in enumerate(data):
            out[i] = _clone_convert(v)
        return out
    return torch.as_tensor(data) if isinstance(data, np.ndarray) else data


@pytest.mark.parametrize("workers", WORKERS)
def test_sequences_are_rebuilt_as_the_installed_torch_rebuilds_them(monkeypatch, workers):
    from torch.utils.data._utils import collate as tc

    from sluice.plugin import _dl_worker

    ds = [_labelled(i, -i) for i in range(4)]
    nb = [_labelled(np.int64(i), "x") for i in range(2)]

    def run():
        return (next(iter(DataLoader(ds, batch_size=2, num_workers=workers))),
                next(iter(DataLoader(nb, batch_size=None, num_workers=workers))))

    # this machine's torch: the reference is its own DataLoader
    (ours, ours_nb), ref = run(), next(iter(tud.DataLoader(ds, batch_size=2)))
    ref_nb = next(iter(tud.DataLoader(nb, batch_size=None)))
    assert type(ours) is type(ref) is Labelled and type(ours_nb) is type(ref_nb)
    assert [t.tolist() for t in ours] == [t.tolist() for t in ref] == [[0, 1], [0, -1]]
    assert getattr(ours, "source", None) == getattr(ref, "source", None)
    assert getattr(ours_nb, "source", None) == getattr(ref_nb, "source", None)
    # a torch whose default_collate / default_convert copy a MutableSequence (newer torch)
    monkeypatch.setattr(tc, "default_collate", _clone_collate)
    monkeypatch.setattr(tc, "default_convert", _clone_convert)
    monkeypatch.setattr(_dl_worker, "_TORCH_RULES", _dl_worker._torch_container_rules())
    assert _dl_worker._TORCH_RULES == (True, True)
    monkeypatch.undo()  # sluice's own collation runs, with those rules
    monkeypatch.setattr(_dl_worker, "_TORCH_RULES", (True, True))
    ours, ours_nb = run()
    assert type(ours) is Labelled and ours.source == "cam0"
    assert [t.tolist() for t in ours] == [[0, 1], [0, -1]]
    assert type(ours_nb) is Labelled and ours_nb.source == "cam0"
    assert ours_nb[0].dtype == torch.int64 and ours_nb[0].item() == 0 and ours_nb[1] == "x"


@pytest.mark.parametrize("workers", WORKERS)
def test_default_convert_without_batching_matches_torch(workers):
    ds = MixedDataset()
    ours = list(DataLoader(ds, batch_size=None, num_workers=workers))
    ref = list(tud.DataLoader(ds, batch_size=None))
    for a, b in zip(ours, ref):
        _same(a, b)
    assert isinstance(ours[2]["img"], torch.Tensor) and isinstance(ours[2]["pair"], list)


@pytest.mark.parametrize("workers", WORKERS)
def test_numpy_batch_is_a_double_tensor(workers):
    class Ones(tud.Dataset):
        def __getitem__(self, i):
            return np.ones((2, 3, 4)) * i

        def __len__(self):
            return 1000

    batch = next(iter(DataLoader(Ones(), batch_size=12, num_workers=workers)))
    assert isinstance(batch, torch.DoubleTensor) and batch.shape == (12, 2, 3, 4)
    assert torch.equal(batch[:, 0, 0, 0], torch.arange(12, dtype=torch.float64))


@pytest.mark.parametrize("workers", WORKERS)
def test_collate_errors(workers):
    class Bad(tud.Dataset):
        def __init__(self, item):
            self.item = item

        def __len__(self):
            return 4

        def __getitem__(self, i):
            return self.item(i)

    cases = [(lambda i: np.array([object()]), TypeError,
              "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
              "lists; found object"),
             (lambda i: object(), TypeError, "found <class 'object'>"),
             (lambda i: [0] * (i + 1), RuntimeError,
              "each element in list of batch should be of equal size"),
             (lambda i: torch.zeros(i + 1), RuntimeError, "stack expects each tensor")]
    for item, cls, text in cases:
        if workers and item.__name__ == "<lambda>":
            pass  # fork: lambdas reach the workers as they are
        with pytest.raises(cls, match=text.replace("(", r"\(").replace(")", r"\)")
                           .replace("[", r"\[")):
            next(iter(DataLoader(Bad(item), batch_size=2, num_workers=workers)))


class _ArrayCase(tud.Dataset):
    """Sample i of case `name`: NumPy arrays and tensors of the kinds the worker stacks
    straight into the chunk (and those it hands to torch.stack instead)."""

    def __init__(self, name):
        self.name = name

    def __len__(self):
        return 6

    def __getitem__(self, i):
        base = np.arange(60, dtype=np.float32).reshape(3, 4, 5) * (i + 1)
        if self.name == "contiguous":
            return base
        if self.name == "strided":  # a transposed view: not contiguous
            return base.transpose(2, 0, 1)
        if self.name == "bool":
            return base.astype(np.int64) % 3 == i % 3
        if self.name == "float16-and-int8":
            return base.astype(np.float16), base.astype(np.int8)
        if self.name == "ragged":
            return np.zeros(i + 1)
        if self.name == "mixed-dtypes":
            return base.astype(np.uint8 if i % 2 else np.int64)
        if self.name == "conj":  # a complex tensor whose conjugation is a flag, not bytes
            return torch.complex(torch.arange(4.0) * i, torch.ones(4)).conj()
        if self.name == "offset-views":  # tensors sharing one storage at offsets
            return torch.arange(100, dtype=torch.int32)[i * 7:i * 7 + 10]
        if self.name == "requires-grad":
            return torch.ones(3, requires_grad=True)
        raise KeyError(self.name)


@pytest.mark.parametrize("case", ["contiguous", "strided", "bool", "float16-and-int8", "ragged",
                                  "mixed-dtypes", "conj", "offset-views", "requires-grad"])
def test_worker_stacking_matches_torch_workers(case):
    # the worker writes a batch's arrays and tensors into the chunk with memmove where their
    # bytes are their values; the batches, and the errors, are those of torch's own workers
    ds = _ArrayCase(case)
    # (torch 1.13's workers fail on a conjugated tensor while allocating shared memory for it,
    # "DispatchKey Conjugate doesn't correspond to a device": the reference is its main process)
    try:
        ref = list(tud.DataLoader(ds, batch_size=3, num_workers=0 if case == "conj" else 1))
    except Exception as e:  # noqa: BLE001 - the same error is expected
        with pytest.raises(type(e)) as got:
            list(DataLoader(ds, batch_size=3, num_workers=1))
        want = str(e).splitlines()[-1]
        assert str(got.value).splitlines()[-1] == want
        return
    ours = list(DataLoader(ds, batch_size=3, num_workers=1))
    assert len(ours) == len(ref) == 2
    for a, b in zip(ours, ref):
        _same(a, b)


@pytest.mark.parametrize("workers", [0, 1])
@pytest.mark.parametrize("coll", [list, tuple])
def test_builtin_collection_conversion(workers, coll):
    ds = dc.CountingDataset(20)
    assert coll(DataLoader(ds, batch_size=None, num_workers=workers)) == coll(range(20))
    got = coll(DataLoader(ds, batch_size=2, num_workers=workers))
    assert all(torch.equal(a, torch.tensor([i, i + 1])) for a, i in zip(got, range(0, 20, 2)))
    it = dc.CountingIterable(20)
    assert coll(DataLoader(it, batch_size=None, num_workers=workers)) == coll(range(20))


@pytest.mark.parametrize("workers", WORKERS)
def test_user_collate_fn_runs_in_the_worker(workers):
    loader = DataLoader(dc.CountingDataset(6), batch_size=3, num_workers=workers,
                        collate_fn=dc.pid_collate if workers else (lambda b: {"items": b}))
    out = list(loader)
    assert [o["items"] for o in out] == [[0, 1, 2], [3, 4, 5]]
    if workers:
        it = iter(loader)
        pids = {w.pid for w in it._workers}
        first = next(it)
        assert first["pid"] in pids and first["pid"] != os.getpid() and first["info"] == 0
        del it


def test_getitems_is_used_when_present():
    class Bulk(tud.Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            raise AssertionError("__getitems__ should be used")

        def __getitems__(self, idx):
            return [i * 10 for i in idx]

    for workers in WORKERS:
        assert [b.tolist() for b in DataLoader(Bulk(), batch_size=4, num_workers=workers)] == \
            [[0, 10, 20, 30], [40, 50]]


# ---- batches stay valid, shared memory is reused ------------------------------------------------

def test_list_of_loader_keeps_every_batch_valid():
    ds = dc.ArraysDataset()
    held = list(DataLoader(ds, batch_size=4, num_workers=2))
    for k, (img, label) in enumerate(held):
        want = [dc.image_like(i) for i in range(4 * k, 4 * k + 4)]
        assert img.dtype == torch.uint8 and img.shape == (4, 3, 8, 8)
        assert np.array_equal(img.numpy(), np.stack([w[0] for w in want]))
        assert label.tolist() == [w[1] for w in want]
    img = held[0][0]
    img += 1  # writable, as PyTorch's batches are; the other batches are unaffected
    assert np.array_equal(img[0].numpy(), dc.image_like(0)[0] + 1)
    assert np.array_equal(held[1][0][0].numpy(), dc.image_like(4)[0])


def _private_shmem_kib(buf):
    """Resident pages of the chunk mapping `buf`, from /proc/self/smaps (KiB)."""
    import ctypes

    start = "%x-" % ctypes.addressof(buf)
    with open("/proc/self/smaps") as f:
        lines = f.read().splitlines()
    for k, line in enumerate(lines):
        if line.startswith(start):
            for field in lines[k + 1:k + 25]:
                if field.startswith("Rss:"):
                    return int(field.split()[1])
    raise AssertionError("chunk mapping not found")


@pytest.mark.parametrize("assignment", ["batch", "sample"])
def test_released_chunks_give_their_memory_back(assignment):
    loader = DataLoader(dc.ArraysDataset(), batch_size=8, num_workers=2,
                        persistent_workers=True, batch_assignment=assignment)
    held = list(loader)
    assert sum(int(img.sum()) for img, _ in held) == sum(
        int(dc.image_like(i)[0].sum()) for i in range(40))  # read here: resident here
    it = loader._iterator
    bufs = (list(it._book.maps[0].values()) + list(it._book.maps[1].values())
            if assignment == "batch" else [c[3] for c in it._batch_chunks.chunks.values()])
    live = [b for b in bufs if _private_shmem_kib(b) > 0]
    assert len(live) >= 3  # the held batches' chunks
    del held
    import gc

    gc.collect()
    # free again: their pages left the memfd (the chunks stay mapped for reuse). batch: the
    # workers give them back when they idle (_dl_worker.IDLE_S after the notices); sample:
    # at once, but for the last one freed (a spare, reused first with its pages)
    spares = 0 if assignment == "batch" else 1
    deadline = time.monotonic() + 10
    while (time.monotonic() < deadline
           and sum(_private_shmem_kib(b) > 0 for b in bufs) > spares):
        time.sleep(0.05)
    assert sum(_private_shmem_kib(b) > 0 for b in bufs) == spares, \
        [_private_shmem_kib(b) for b in bufs]
    again = [b[0].clone() for b in loader]
    assert [a.shape for a in again] == [(8, 3, 8, 8)] * 5
    assert np.array_equal(again[4].numpy(), np.stack([dc.image_like(i)[0]
                                                      for i in range(32, 40)]))


def test_chunks_are_reused_when_batches_are_released():
    loader = DataLoader(dc.ArraysDataset(), batch_size=4, num_workers=2, prefetch_factor=2,
                        persistent_workers=True)
    for _ in range(3):
        for b in loader:
            pass
    it = loader._iterator
    # a worker picks a chunk when it collates: 2 batches of each worker computed ahead, one
    # held by the loop, one spare (a late notice): at most 4 chunks each over 3 epochs
    assert sum(len(m) for m in it._book.maps) <= 8
    del b, it, loader


def test_reused_chunks_keep_their_pages(monkeypatch):
    # a batch of 16 samples of 64 KiB: 256 pages per chunk. Chunks reused at once are written
    # and read without page faults (before: every batch's chunk was emptied when it was freed,
    # so each batch faulted its 256 pages in again in the worker and in this process). The
    # idle release is put off (the forked worker inherits it), so that a loaded machine that
    # starves this process for a second does not count
    from sluice.plugin import _dl_worker

    monkeypatch.setattr(_dl_worker, "IDLE_S", 60.0)
    loader = DataLoader(dc.BigArrayDataset(), batch_size=16, num_workers=1, prefetch_factor=2,
                        persistent_workers=True)
    for b in loader:  # warm-up: the chunks exist
        pass
    it = loader._iterator
    pid = it._workers[0].pid
    before, mine = dc.minor_faults(pid), dc.minor_faults(os.getpid())
    total = 0
    for _ in range(3):
        for b in loader:
            total += int(b[0].reshape(-1)[::4096].sum())  # this process reads every page
    batches = 3 * len(loader)
    assert total == 3 * sum(int(dc.BigArrayDataset.row(i)[::4096].sum()) for i in range(64))
    # (the worker's own faults, Python's allocations and the like, are far fewer than a chunk)
    assert dc.minor_faults(pid) - before < batches * 256 // 4
    assert dc.minor_faults(os.getpid()) - mine < batches * 256 // 4
    del b, it, loader


def test_forked_workers_start_with_the_inherited_objects_frozen():
    import gc

    assert gc.get_freeze_count() == 0
    (frozen, grown), = DataLoader(dc.GcDataset(), batch_size=2, num_workers=1)
    # the worker's collector skips what it inherited: a full collection there copies no page
    # of the main process's objects (without the freeze: ~30 MiB with torch imported)
    assert frozen.tolist() == [frozen[0]] * 2 and frozen[0] > 10000
    assert grown.max() < 8 * 1024, grown
    assert gc.get_freeze_count() == 0  # the main process collects its objects as before
    spawned, _ = next(iter(DataLoader(dc.GcDataset(), batch_size=2, num_workers=1,
                                      multiprocessing_context="spawn")))
    assert spawned.tolist() == [0, 0]  # nothing inherited, nothing frozen


# ---- workers: assignment, seeds, init, info --------------------------------------------------

@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("batch_size", [1, 5])
def test_batch_i_is_computed_by_worker_i_mod_n(workers, batch_size):
    loader = DataLoader(dc.WorkerIdDataset(24), batch_size=batch_size, num_workers=workers)
    for i, (idx, wid, pid) in enumerate(loader):
        assert idx.tolist() == list(range(i * batch_size, min(24, (i + 1) * batch_size)))
        assert set(wid.tolist()) == {i % workers}
        assert len(set(pid.tolist())) == 1


def test_worker_seeds_are_distinct_and_follow_the_generator():
    def seeds(gen_seed):
        loader = DataLoader(dc.SeedDataset(8), batch_size=1, num_workers=2,
                            generator=torch.Generator().manual_seed(gen_seed))
        return {(int(s), int(ts)) for s, ts, _, _ in loader}

    a = seeds(1)
    assert len(a) == 2 and all(s == ts for s, ts in a)  # torch seeded with the worker seed
    base = min(s for s, _ in a)
    assert {s for s, _ in a} == {base, base + 1}  # PyTorch: base_seed + worker id
    g = torch.Generator().manual_seed(1)
    assert base == torch.empty((), dtype=torch.int64).random_(generator=g).item()
    assert seeds(1) == a and seeds(2) != a


def test_numpy_seeded_as_pytorch_does():
    from torch.utils.data._utils.worker import _generate_state

    loader = DataLoader(dc.SeedDataset(2), batch_size=1, num_workers=1,
                        generator=torch.Generator().manual_seed(3))
    (seed, _, py, npv), _ = [[v.item() for v in b] for b in loader]
    rs = np.random.RandomState(_generate_state(seed, 0))
    assert npv == rs.rand()
    import random

    assert py == random.Random(seed).random()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_worker_init_fn_and_worker_info_dataset_copy(method):
    ds = dc.InitAttrDataset()
    loader = DataLoader(ds, batch_size=1, num_workers=2, worker_init_fn=dc.set_value_init,
                        multiprocessing_context=method)
    assert [int(v) for v in loader] == [100, 101, 100, 101, 100, 101]
    assert ds.value is None  # the workers changed their own copies
    assert sp.get_worker_info() is None and tud.get_worker_info() is None


def test_get_worker_info_fields():
    class Info(tud.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            info = sp.get_worker_info()
            assert info is tud.get_worker_info()
            return info.id, info.num_workers, info.seed, info.dataset is self, \
                type(info.dataset).__name__

    out = list(DataLoader(Info(), batch_size=None, num_workers=2))
    assert [o[0] for o in out] == [0, 1, 0, 1] and {o[1] for o in out} == {2}
    assert out[1][2] == out[0][2] + 1 and all(o[3] for o in out) and out[0][4] == "Info"
    assert sp.get_worker_info() is None and tud.get_worker_info() is None  # main process


def test_worker_info_of_a_torch_whose_worker_info_holds_the_generators():
    """Newer torch's WorkerInfo is a frozen dataclass that also holds the worker's generators
    (rng: random's, torch's and NumPy's) and worker_method; sluice fills them where the class
    has those fields, and leaves torch 1.13's (which takes any keyword) as it was."""
    import dataclasses
    import random
    import types as pytypes

    from torch.utils.data._utils import worker as tw

    from sluice.plugin import _dl_worker

    @dataclasses.dataclass(frozen=True)
    class RNG:
        random_generator: object
        torch_generator: object
        numpy_generator: object = None

    @dataclasses.dataclass(frozen=True)
    class Info:
        id: int
        num_workers: int
        seed: int
        dataset: object
        rng: object = None
        worker_method: str = "thread"

    gen = torch.Generator()
    new = pytypes.SimpleNamespace(WorkerInfo=Info, _RNG=RNG)
    info = _dl_worker.torch_worker_info(new, 1, 3, 17, "ds", gen)
    assert (info.id, info.num_workers, info.seed, info.dataset) == (1, 3, 17, "ds")
    assert info.worker_method == "multiprocessing"
    assert info.rng.random_generator is random._inst and info.rng.torch_generator is gen
    assert info.rng.numpy_generator is np.random.mtrand._rand
    old = _dl_worker.torch_worker_info(tw, 1, 3, 17, "ds", gen)  # this machine's torch
    assert type(old) is tw.WorkerInfo and (old.id, old.num_workers, old.seed) == (1, 3, 17)
    assert hasattr(old, "rng") == ("rng" in getattr(tw.WorkerInfo, "__dataclass_fields__", {}))


# ---- iterable datasets -----------------------------------------------------------------------

@pytest.mark.parametrize("workers", [0, 1, 3])
@pytest.mark.parametrize("batch_size", [None, 2, 3])
def test_iterable_dataset_sharded_by_worker_info(workers, batch_size):
    loader = DataLoader(dc.CountingIterable(8), batch_size=batch_size, num_workers=workers)
    items = []
    for b in loader:
        items.extend([int(b)] if batch_size is None else b.tolist())
    assert sorted(items) == list(range(8))


def test_iterable_dataset_drop_last_and_worker_order():
    loader = DataLoader(dc.CountingIterable(10), batch_size=2, num_workers=2, drop_last=True)
    # worker 0: 0 2 4 6 8, worker 1: 1 3 5 7 9; batches alternate between them
    assert [b.tolist() for b in loader] == [[0, 2], [1, 3], [4, 6], [5, 7]]


def test_iterable_dataset_len_warnings_as_pytorch():
    loader = DataLoader(dc.UnshardedIterable(4), batch_size=None, num_workers=2)
    assert len(loader) == 4
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = list(loader)
    assert sorted(int(v) for v in out) == [0, 0, 1, 1, 2, 2, 3, 3]  # copied into each worker
    msgs = [str(x.message) for x in w if "Length of IterableDataset" in str(x.message)]
    assert len(msgs) == 4
    assert "was reported to be 4 (when accessing len(dataloader)), but 5 samples have been " \
        "fetched. For multiprocessing data-loading" in msgs[0]


def test_iterable_error_in_iter_and_in_worker_init():
    class Broken(tud.IterableDataset):
        def __iter__(self):
            raise RuntimeError("Error in __iter__")

    for workers in (0, 2):
        with pytest.raises(RuntimeError, match="Error in __iter__"):
            list(DataLoader(Broken(), num_workers=workers))

    def bad_init(wid):
        raise RuntimeError("Error in worker_init_fn")

    with pytest.raises(RuntimeError, match="Error in worker_init_fn"):
        list(DataLoader(dc.CountingDataset(4), num_workers=2, worker_init_fn=bad_init))
    # each worker's first batch carries its worker_init_fn error; the other batches load
    it = iter(DataLoader(dc.CountingDataset(6), num_workers=2, worker_init_fn=bad_init))
    got, errors = [], 0
    while True:
        try:
            got.append(int(next(it)))
        except RuntimeError as e:
            assert "Caught RuntimeError in DataLoader worker process" in str(e)
            errors += 1
        except StopIteration:
            break
    assert errors == 2 and got == [2, 3, 4, 5]


# ---- persistent workers, prefetch, contexts, order ---------------------------------------------

@pytest.mark.parametrize("iterable", [False, True])
def test_persistent_workers_serve_every_epoch(iterable):
    ds = dc.CountingIterable(9) if iterable else dc.CountingDataset(9)
    loader = DataLoader(ds, batch_size=2, num_workers=2, persistent_workers=True)
    pids = None
    for epoch in range(3):
        got = sorted(v for b in loader for v in b.tolist())
        assert got == list(range(9))
        now = [w.pid for w in loader._iterator._workers]
        assert pids is None or now == pids
        assert all(w.is_alive() for w in loader._iterator._workers)
        pids = now
    # an epoch abandoned in the middle: the next one starts afresh
    it = iter(loader)
    next(it)
    assert sorted(v for b in loader for v in b.tolist()) == list(range(9))
    loader._iterator._shutdown_workers()


def test_workers_end_with_the_epoch_without_persistent_workers():
    loader = DataLoader(dc.CountingDataset(6), batch_size=2, num_workers=2)
    it = iter(loader)
    workers = list(it._workers)
    assert [b.tolist() for b in it] == [[0, 1], [2, 3], [4, 5]]
    assert all(w.exitcode == 0 for w in workers)


@pytest.mark.parametrize("prefetch", [1, 3])
def test_prefetch_factor_bounds_batches_in_flight(prefetch):
    loader = DataLoader(dc.SlowDataset(40, 0.01, range(40)), batch_size=2, num_workers=2,
                        prefetch_factor=prefetch)
    it = iter(loader)
    assert it._tasks_outstanding == 2 * prefetch
    assert [v for b in it for v in b.tolist()] == list(range(40))


# spawn by name: test_worker_init_fn_and_worker_info_dataset_copy (a spawned worker imports torch:
# seconds each on 2 cores, so each start method runs once or twice in this file)
@pytest.mark.parametrize("ctx", ["fork", "forkserver", "ctx-spawn", "ctx-fork"])
def test_multiprocessing_contexts_give_the_same_batches(ctx):
    import multiprocessing

    context = multiprocessing.get_context(ctx[4:]) if ctx.startswith("ctx-") else ctx
    ref = [b for b in DataLoader(dc.ArraysDataset(), batch_size=5)]
    got = list(DataLoader(dc.ArraysDataset(), batch_size=5, num_workers=2,
                          multiprocessing_context=context))
    for (a, la), (b, lb) in zip(got, ref):
        assert torch.equal(a, b) and torch.equal(la, lb)
    assert len(got) == len(ref) == 8


def test_in_order_false_lets_fast_batches_overtake():
    ds = dc.SlowDataset(10, 1.0, slow=(0,))
    assert [int(v) for v in DataLoader(ds, batch_size=None, num_workers=2)] == list(range(10))
    out = [int(v) for v in DataLoader(ds, batch_size=None, num_workers=2, in_order=False)]
    assert sorted(out) == list(range(10)) and out[0] != 0


def test_pin_memory_without_cuda_warns_and_does_nothing(data):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: covered by the GPU check")
    _, _, ds = data
    for workers in WORKERS:
        with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no "
                          "accelerator is found"):
            s, t = next(iter(DataLoader(ds, batch_size=2, pin_memory=True, num_workers=workers)))
        assert not s.is_pinned() and s.shape == (2, 2, 3, 5)


class StackPin:
    """A custom batch type (collate_fn) that pins its tensor itself."""

    def __init__(self, batch):
        self.x = torch.stack([s for s, _ in batch])

    def pin_memory(self):
        self.x = self.x.pin_memory()
        return self


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("assignment", ["batch", "sample"])
def test_pin_memory_with_cuda(data, assignment, monkeypatch):
    import ctypes

    from sluice.plugin import _dataloader

    x, y, ds = data
    chunks = []  # (address, bytes) of every chunk page-locked by the real cudaHostRegister
    register = _dataloader._Pinner.register

    def recording_register(self, buf):
        chunks.append((ctypes.addressof(buf), ctypes.sizeof(buf)))
        return register(self, buf)

    monkeypatch.setattr(_dataloader._Pinner, "register", recording_register)

    def in_a_chunk(t):
        p, n = t.data_ptr(), t.numel() * t.element_size()
        return any(a <= p and p + n <= a + size for a, size in chunks)

    for workers in WORKERS:
        chunks.clear()
        loader = DataLoader(ds, batch_size=2, pin_memory=True, num_workers=workers,
                            batch_assignment=assignment)
        batches = list(loader)
        for i, (s, t) in enumerate(batches):
            assert s.is_pinned() and t.is_pinned()
            assert torch.equal(s, x[2 * i:2 * i + 2]) and torch.equal(t, y[2 * i:2 * i + 2])
        if workers:  # collated into a chunk, pinned where it lies: no copy (with per-sample
            # spreading, the epoch's first batch is copied: the rows' layout is not known yet)
            assert chunks and all(in_a_chunk(s) and in_a_chunk(t) for s, t in batches[1:])
        c = next(iter(DataLoader(ds, batch_size=2, pin_memory=True, num_workers=workers,
                                 collate_fn=StackPin)))
        assert type(c) is StackPin and c.x.is_pinned() and torch.equal(c.x, x[:2])


class FakeCudart:
    """Stands in for torch.cuda.cudart() on a machine without CUDA: records which mappings
    the DataLoader page-locks and releases (what the real driver would be asked to do)."""

    def __init__(self):
        self.live, self.registered, self.unregistered = {}, [], []

    def cudaHostRegister(self, addr, size, flags):
        assert addr not in self.live, "a chunk registered twice"
        self.live[addr] = size
        self.registered.append(addr)
        return 0

    def cudaHostUnregister(self, addr):
        assert addr in self.live
        del self.live[addr]
        self.unregistered.append(addr)
        return 0

    def holds(self, t):
        p = t.data_ptr()
        return any(a <= p and p + t.numel() * t.element_size() <= a + n
                   for a, n in self.live.items())


@pytest.fixture
def fake_cuda(monkeypatch):
    """torch.cuda made to look available (this machine's torch has no CUDA). Real pinning is
    the CUDA test above; this checks sluice's own part: which tensors are pinned in place (a
    registered chunk), which are copied (Tensor.pin_memory, recorded here) and which objects
    are asked to pin themselves."""
    from sluice.plugin import _dataloader

    rt = FakeCudart()
    copies = []

    def pin_memory(self, device=None):
        copies.append(tuple(self.shape))
        return self.clone()

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "set_device", lambda d: None)
    monkeypatch.setattr(torch.Tensor, "pin_memory", pin_memory)
    monkeypatch.setattr(_dataloader, "_cudart", lambda: rt)
    rt.copies = copies
    return rt


@pytest.mark.parametrize("assignment", ["batch", "sample"])
def test_pin_memory_registers_each_chunk_once_and_copies_nothing(fake_cuda, data, assignment):
    import gc

    x, y, ds = data
    loader = DataLoader(ds, batch_size=4, num_workers=2, pin_memory=True, prefetch_factor=2,
                        persistent_workers=True, batch_assignment=assignment)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # CUDA "available": no warning
        for epoch in range(3):
            for i, (s, t) in enumerate(loader):
                assert torch.equal(s, x[4 * i:4 * i + 4]) and torch.equal(t, y[4 * i:4 * i + 4])
                if assignment == "batch" or epoch or i:
                    assert fake_cuda.holds(s) and fake_cuda.holds(t)
    if assignment == "batch":
        assert fake_cuda.copies == []
        assert loader._iterator._pin_thread.thread.is_alive()
    else:  # the epoch's first batch, before the rows' layout is known, is copied
        assert fake_cuda.copies == [(4, 2, 3, 5), (4,)]
    # 75 batches, each chunk page-locked once: 4 batches in flight, the one the loop holds,
    # the one being returned, and across an epoch's end the last one of the epoch before
    assert 1 <= len(fake_cuda.registered) <= 7
    assert len(set(fake_cuda.registered)) == len(fake_cuda.registered)
    thread = loader._iterator._pin_thread
    del loader, s, t
    gc.collect()
    # every mapping is unregistered before it is unmapped, and the pin thread ends
    assert fake_cuda.live == {} and sorted(fake_cuda.unregistered) == \
        sorted(fake_cuda.registered)
    assert thread is None or not thread.thread.is_alive()


class PinRecord:
    """A custom batch type: pin_memory() records the call and returns a new object."""

    def __init__(self, batch):
        self.items = [int(v) for v, _ in batch]
        self.pinned = False

    def pin_memory(self):
        out = PinRecord([])
        out.items, out.pinned = self.items, True
        return out


class BadPin(PinRecord):
    def pin_memory(self):
        if self.items[0] == 4:
            raise ValueError("cannot pin batch 4")
        return super().pin_memory()


def _pair_collate(batch):
    return {"custom": PinRecord(batch), "pair": dc.Pair(PinRecord(batch), "label"),
            "seq": (PinRecord(batch), b"raw")}


@pytest.mark.parametrize("workers", WORKERS)
def test_pin_memory_honours_custom_types_and_containers(fake_cuda, workers):
    ds = [(i, 0) for i in range(12)]
    got = list(DataLoader(ds, batch_size=4, num_workers=workers, pin_memory=True,
                          collate_fn=PinRecord))
    assert [(b.items, b.pinned) for b in got] == [([0, 1, 2, 3], True), ([4, 5, 6, 7], True),
                                                  ([8, 9, 10, 11], True)]
    b = next(iter(DataLoader(ds, batch_size=2, num_workers=workers, pin_memory=True,
                             collate_fn=_pair_collate)))
    # PyTorch's pin_memory: mappings and namedtuples keep their type, a tuple becomes a list
    # (torch 1.13) or stays a tuple (newer): what the installed torch's own function does
    from torch.utils.data._utils import pin_memory as tpm

    seq_type = type(tpm.pin_memory(_pair_collate([(0, 0)])["seq"]))
    assert seq_type in (list, tuple)
    assert type(b) is dict and type(b["pair"]) is dc.Pair and type(b["seq"]) is seq_type
    assert b["custom"].pinned and b["pair"].a.pinned and b["pair"].b == "label"
    assert b["seq"][0].pinned and b["seq"][1] == b"raw"
    assert fake_cuda.copies == []


@pytest.mark.parametrize("workers", WORKERS)
def test_pin_memory_error_is_raised_by_its_batch(fake_cuda, workers):
    ds = [(i, 0) for i in range(12)]
    it = iter(DataLoader(ds, batch_size=4, num_workers=workers, pin_memory=True,
                         collate_fn=BadPin))
    assert next(it).items == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="cannot pin batch 4") as e:
        next(it)
    if workers:  # PyTorch's pin thread wraps it
        assert "in pin memory thread for device 0" in str(e.value)
    assert next(it).items == [8, 9, 10, 11]


def test_pin_memory_device_as_the_installed_torch_passes_it(fake_cuda, monkeypatch):
    seen = []

    def pin_memory(self, device=None):
        seen.append(device)
        return self.clone()

    monkeypatch.setattr(torch.Tensor, "pin_memory", pin_memory)
    # what the installed torch's own pin_memory passes: "cuda" (torch 1.13), nothing (newer)
    from torch.utils.data._utils import pin_memory as tpm

    tpm.pin_memory(torch.tensor([1, 2]), "cuda")
    expected, seen[:] = list(seen), []
    assert expected in (["cuda"], [None])
    with pytest.warns(UserWarning, match="pin_memory_device is deprecated"):
        b = next(iter(DataLoader([1, 2], batch_size=2, pin_memory=True,
                                 pin_memory_device="cuda")))
    assert b.tolist() == [1, 2] and seen == expected


def _torch2_pin_memory(data, device=None):
    """The shape newer torch (2.8 on) gives torch.utils.data._utils.pin_memory.pin_memory:
    tensors are pinned without a device (pin_memory_device is ignored), an object's own
    pin_memory() is asked first and gets the device when it takes one, a tuple stays a tuple.
    Written here from its documented rules (torch 1.13 has the other shape)."""
    import collections.abc
    import inspect

    if isinstance(data, torch.Tensor):
        return data.pin_memory()
    if hasattr(data, "pin_memory"):
        if "device" in inspect.signature(data.pin_memory).parameters:
            return data.pin_memory(device=device)
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        return {k: _torch2_pin_memory(v, device) for k, v in data.items()}
    if isinstance(data, tuple):
        return type(data)(_torch2_pin_memory(v, device) for v in data)
    if isinstance(data, collections.abc.Sequence):
        return [_torch2_pin_memory(v, device) for v in data]
    return data


class DevicePin(dict):
    """A mapping that pins itself, and says which device it was given."""

    def pin_memory(self, device=None):
        return ("pinned", device)


def _pinned_by_sluice(ds, collate_fn, workers):
    return next(iter(DataLoader(ds, batch_size=2, num_workers=workers, pin_memory=True,
                                pin_memory_device="cuda", collate_fn=collate_fn)))


def _tuple_collate(batch):
    return (torch.tensor([v for v, _ in batch]), "label", DevicePin(a=1))


@pytest.mark.parametrize("workers", WORKERS)
def test_pin_memory_follows_the_installed_torchs_rules(fake_cuda, monkeypatch, workers):
    """The same batch pinned by sluice and by this torch's own pin_memory(): the devices
    Tensor.pin_memory is given and the containers that come back are the same."""
    from torch.utils.data._utils import pin_memory as tpm

    seen = []

    def pin_memory(self, device=None):
        seen.append(device)
        return self.clone()

    monkeypatch.setattr(torch.Tensor, "pin_memory", pin_memory)
    ds = [(i, 0) for i in range(4)]
    with pytest.warns(UserWarning, match="pin_memory_device is deprecated"):
        got = _pinned_by_sluice(ds, _tuple_collate, workers)
    ours = list(seen)
    seen.clear()
    want = tpm.pin_memory(_tuple_collate(ds[:2]), "cuda")
    if workers == 0:  # (with workers the tensor lies in a chunk that is pinned in place)
        assert seen == ours  # torch 1.13: ["cuda"]
    else:
        assert ours == []
    assert type(got) is type(want) and got[1] == want[1] == "label"
    assert got[0].tolist() == want[0].tolist() == [0, 1]
    assert type(got[2]) is type(want[2])
    if isinstance(want[2], tuple):
        assert got[2] == want[2]


@pytest.mark.parametrize("workers", WORKERS)
def test_pin_memory_on_a_torch_2_shape(fake_cuda, monkeypatch, workers):
    """Newer torch ignores pin_memory_device (Tensor.pin_memory() with no device), keeps tuples,
    and hands the accelerator's type to an object's pin_memory(device): sluice follows the
    torch it runs on (here torch's pin_memory given that shape)."""
    from torch.utils.data._utils import pin_memory as tpm

    seen = []

    def pin_memory(self, *args):
        seen.append(args)
        return self.clone()

    monkeypatch.setattr(torch.Tensor, "pin_memory", pin_memory)
    monkeypatch.setattr(tpm, "pin_memory", _torch2_pin_memory)
    with pytest.warns(UserWarning, match="pin_memory_device is deprecated"):
        got = _pinned_by_sluice([(i, 0) for i in range(4)], _tuple_collate, workers)
    assert seen == ([()] if workers == 0 else [])  # no device: pin_memory_device is ignored
    assert type(got) is tuple and got[0].tolist() == [0, 1] and got[1] == "label"
    assert got[2] == ("pinned", "cuda")  # asked first, with the accelerator's type


# ---- batch_assignment="sample": one batch's samples spread over the workers ---------------------

def test_batch_assignment_argument_is_checked():
    with pytest.raises(ValueError, match="batch_assignment should be 'batch'"):
        DataLoader(range(4), batch_assignment="worker")
    with pytest.raises(ValueError, match="needs a map-style dataset.*IterableDataset"):
        DataLoader(dc.CountingIterable(4), batch_assignment="sample", num_workers=2)
    with pytest.raises(ValueError, match="batch_size=None"):
        DataLoader(range(4), batch_size=None, batch_assignment="sample", num_workers=2)
    assert DataLoader(range(4)).batch_assignment == "batch"


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (5, False), (7, True)])
def test_sample_spreading_gives_pytorchs_batches(workers, batch_size, drop_last):
    ds = dc.RichDataset(23)
    kw = dict(batch_size=batch_size, shuffle=True, drop_last=drop_last)
    want = list(tud.DataLoader(ds, generator=torch.Generator().manual_seed(5), **kw))

    def epochs(assignment):
        loader = DataLoader(ds, num_workers=workers, batch_assignment=assignment,
                            persistent_workers=True, generator=torch.Generator().manual_seed(5),
                            **kw)
        return [list(loader) for _ in range(2)], len(loader)

    (first, second), n = epochs("sample")
    assert len(first) == len(want) == n
    for a, b in zip(first, want):
        _same(a, b)
    (_, default_second), _ = epochs("batch")  # the next epoch: a new order, the same batches
    assert len(second) == len(default_second) == n
    for a, b in zip(second, default_second):
        _same(a, b)
    assert not torch.equal(second[0]["z"], first[0]["z"])


class WorkerIdArrays(dc.WorkerIdDataset):
    def __getitem__(self, i):
        i, wid, pid = super().__getitem__(i)
        return torch.tensor(i), np.array([wid]), torch.tensor(pid, dtype=torch.int32)


@pytest.mark.parametrize("ctx", ["spawn", "forkserver"])
def test_sample_spreading_with_other_start_methods(ctx):
    ds = dc.RichDataset(12)
    want = list(tud.DataLoader(ds, batch_size=5))
    got = list(DataLoader(ds, batch_size=5, num_workers=2, batch_assignment="sample",
                          multiprocessing_context=ctx))
    assert len(got) == len(want) == 3
    for a, b in zip(got, want):
        _same(a, b)


def test_sample_spreading_out_of_order_delivers_every_batch():
    ds = dc.SlowDataset(24, 0.5, slow=(0,))
    got = [b.tolist() for b in DataLoader(ds, batch_size=4, num_workers=2, in_order=False,
                                          batch_assignment="sample")]
    # every batch once (each batch has a part on every worker, so a slow sample holds back
    # its worker's later parts too: there is little to overtake)
    assert sorted(got) == [list(range(k, k + 4)) for k in range(0, 24, 4)]


def test_sample_spreading_writes_one_batch_from_several_workers():
    loader = DataLoader(WorkerIdArrays(40), batch_size=8, num_workers=2,
                        batch_assignment="sample")
    for i, (idx, wid, pid) in enumerate(loader):
        wid = wid[:, 0]
        assert idx.tolist() == list(range(8 * i, 8 * i + 8))
        # two parts of 4 samples, one per worker
        assert len(set(wid[:4].tolist())) == 1 and len(set(wid[4:].tolist())) == 1
        assert set(wid.tolist()) == {0, 1}
        if i:  # the epoch's first batch shows the layout; the others are rows of one chunk
            ptr = idx.storage().data_ptr()  # views of one storage: the chunk
            assert wid.storage().data_ptr() == pid.storage().data_ptr() == ptr
            assert wid.data_ptr() != ptr or idx.data_ptr() != ptr


def test_sample_spreading_keeps_chunks_to_what_is_in_flight():
    loader = DataLoader(dc.ArraysDataset(), batch_size=4, num_workers=2, prefetch_factor=2,
                        persistent_workers=True, batch_assignment="sample")
    held = []
    for _ in range(3):
        for k, (img, label) in enumerate(loader):
            want = [dc.image_like(i) for i in range(4 * k, 4 * k + 4)]
            assert np.array_equal(img.numpy(), np.stack([w[0] for w in want]))
            assert label.tolist() == [w[1] for w in want]
            if k < 2:
                held.append(img)  # held batches keep their chunks: never overwritten
    for j, img in enumerate(held):
        k = j % 2
        assert np.array_equal(img.numpy(), np.stack([dc.image_like(i)[0]
                                                     for i in range(4 * k, 4 * k + 4)]))
    chunks = loader._iterator._batch_chunks
    # 5 held (the first batch of the first epoch was a copy), 4 in flight, the one the loop
    # holds, and across an epoch's end the last one of the epoch before
    assert len(chunks.chunks) <= 11


def test_sample_spreading_seeds_each_sample_the_same_whatever_the_worker():
    def run(workers, epochs=2):
        loader = DataLoader(dc.RandomSampleDataset(12), batch_size=4, num_workers=workers,
                            batch_assignment="sample", persistent_workers=True,
                            generator=torch.Generator().manual_seed(3))
        return [[(t.tolist(), r.tolist(), n.tolist()) for t, r, n in loader]
                for _ in range(epochs)]

    one, three = run(1), run(3)
    assert one == three  # sample n of an epoch draws the same numbers in any worker
    assert one[0] != one[1]  # a new epoch, new draws
    import random

    base = torch.empty((), dtype=torch.int64).random_(
        generator=torch.Generator().manual_seed(3)).item()
    for epoch in (0, 1):
        for n in range(12):
            seed = dc.sample_seed(base, epoch, n)
            random.seed(seed)
            torch.manual_seed(seed)
            np.random.seed([seed & 0xFFFFFFFF, seed >> 32])
            t, r, v = one[epoch][n // 4]
            assert t[n % 4] == torch.rand(2).tolist()
            assert r[n % 4] == random.random() and v[n % 4] == float(np.random.rand())


def test_sample_spreading_error_is_raised_by_its_batch_and_loading_goes_on():
    # batch 1 fails in both halves: its first failing sample (5) is reported, as PyTorch does
    ds = dc.FailingDataset(16, {5, 7, 14})
    it = iter(DataLoader(ds, batch_size=4, num_workers=2, batch_assignment="sample"))
    assert next(it).tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="sample 5 is bad") as e:
        next(it)
    assert re.search(r"Caught ValueError in DataLoader worker process [01]", str(e.value))
    assert next(it).tolist() == [8, 9, 10, 11]
    with pytest.raises(ValueError, match="sample 14 is bad"):
        next(it)
    with pytest.raises(StopIteration):
        next(it)


def _sum_collate(batch):
    return {"sum": sum(int(i) for i, _, _ in batch), "in_worker": get_worker_info() is not None,
            "items": [int(i) for i, _, _ in batch]}


def test_sample_spreading_with_a_user_collate_fn():
    got = list(DataLoader(dc.WorkerIdDataset(10), batch_size=4, num_workers=2,
                          batch_assignment="sample", collate_fn=_sum_collate))
    # the collate_fn sees the samples in order; it runs in the main process (documented)
    assert got == [{"sum": 6, "in_worker": False, "items": [0, 1, 2, 3]},
                   {"sum": 22, "in_worker": False, "items": [4, 5, 6, 7]},
                   {"sum": 17, "in_worker": False, "items": [8, 9]}]


# ---- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("workers", [0, 4])
def test_error_in_every_sample_is_raised_once_per_batch(workers):
    loader = DataLoader(dc.ErrorDataset(41), batch_size=2, shuffle=True, num_workers=workers)
    it = iter(loader)
    errors = []
    while True:
        try:
            next(it)
        except NotImplementedError as e:
            errors.append(str(e))
        except StopIteration:
            break
    assert len(errors) == math.ceil(41 / 2)
    if workers:
        assert errors[0].startswith("Caught NotImplementedError in DataLoader worker process 0.\n"
                                    "Original Traceback (most recent call last):")
        assert "is not implemented" in errors[0]


def test_error_is_raised_by_its_batch_and_loading_goes_on():
    class At5(tud.Dataset):
        def __len__(self):
            return 10

        def __getitem__(self, i):
            if i == 5:
                raise KeyError("missing 5")
            return i

    it = iter(DataLoader(At5(), batch_size=2, num_workers=2))
    assert next(it).tolist() == [0, 1] and next(it).tolist() == [2, 3]
    with pytest.raises(KeyError) as e:
        next(it)
    assert "Caught KeyError in DataLoader worker process 0" in str(e.value)
    assert [b.tolist() for b in it] == [[6, 7], [8, 9]]


def _run_case(name, method, sig=None, limit=60):
    p = subprocess.Popen([sys.executable, str(CASES), name, method], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    pids = []
    if sig:
        for line in p.stdout:
            if line.startswith("PIDS"):
                pids = json.loads(line[5:])
            if line.startswith("READY"):
                os.kill(p.pid, sig)
                break
    try:
        out, err = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail(f"{name} ({method}) ran over {limit} s: {err[-3000:]}")
    lines = out.splitlines()
    pids = pids or next((json.loads(x[5:]) for x in lines if x.startswith("PIDS")), [])
    result = next((json.loads(x[7:]) for x in lines if x.startswith("RESULT")), None)
    deadline = time.monotonic() + 5
    while any(psutil.pid_exists(q) for q in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = [q for q in pids if psutil.pid_exists(q)]
    if alive:
        os.killpg(p.pid, signal.SIGKILL)
    assert alive == [], f"{name}: workers {alive} outlived the process"
    assert len(pids) > 0, err
    return p.returncode, result, err


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_segfault_in_a_worker(method):
    rc, r, err = _run_case("segfault", method)
    assert rc == 0, err
    assert r["type"] == "RuntimeError"
    assert re.match(r"DataLoader worker \(pid \d+\) is killed by signal: Segmentation fault",
                    r["error"])


def test_killed_worker_is_reported_and_the_loader_stays_failed():
    rc, r, err = _run_case("kill_worker", "fork")
    assert rc == 0, err
    assert r["first"] == [0, 1]
    want = f"DataLoader worker (pid {r['killed']}) is killed by signal: Killed. "
    assert r["errors"] == [want, want]


def test_timeout(method="fork"):
    rc, r, err = _run_case("timeout", method)
    assert rc == 0, err
    assert r["error"] == "DataLoader timed out after 1 seconds"
    assert 0.9 < r["after"] < 2.9


def test_partial_epoch_then_iterator_dropped(method="fork"):
    rc, r, err = _run_case("partial", method)
    assert rc == 0, err
    assert r["got"] == [[0, 1], [2, 3], [4, 5]]
    assert r["alive"] == [False, False] and r["exitcodes"] == [0, 0]


def test_holding_many_batches_needs_no_open_files(method="fork"):
    # PyTorch's test_fd_limit_exceeded: 200 batches kept alive under RLIMIT_NOFILE=100
    rc, r, err = _run_case("fd_limit", method)
    assert rc == 0, err
    assert r == {"held": 200, "shapes": [[1, 2, 2]], "sums_ok": True}


def test_proper_exit_when_the_main_process_is_killed():
    rc, _, _ = _run_case("main_killed", "fork", sig=signal.SIGKILL)
    assert rc == -signal.SIGKILL


@pytest.mark.parametrize("case", ["exit_holding", "raise_in_loop"])
def test_proper_exit_holding_an_iterator(case):
    rc, r, err = _run_case(case, "fork")
    if case == "exit_holding":
        assert rc == 0 and r["first"] == [0, 1], err
    else:
        assert rc == 1 and r["raised"] == "raised by the training loop"
        assert "ValueError: raised by the training loop" in err

