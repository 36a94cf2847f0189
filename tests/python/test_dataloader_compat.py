"""tests/python/test_dataloader_compat.py: what running PyTorch's own test/test_dataloader.py
against sluice.plugin.pytorch.DataLoader (scripts/torch_dataloader_suite.py: copy B, only the
DataLoader import changed) found sluice doing differently from torch.utils.data.DataLoader,
each written as sluice's own check of the expectation PyTorch's test states (the A/B table is in
docs/python.md, "PyTorch's own DataLoader tests").
"""
import gc
import math
import time
import typing

import pytest
import torch
import torch.utils.data as tud

import dataloader_cases as dc
from sluice.plugin import _dataloader
from sluice.plugin.pytorch import DataLoader

LIMIT_S = 90


@pytest.fixture(autouse=True)
def bounded():
    with dc.time_limit(LIMIT_S):
        yield


# ---- typing: DataLoader[T] (PyTorch's test_typing) ----------------------------------------------

def test_dataloader_is_generic_like_torchs():
    """torch's DataLoader is Generic[T_co] (newer torch: Generic[_T_co, _TCollated]):
    annotations such as DataLoader[List[Tensor]] must work with sluice's too, with as many
    arguments as torch's takes (a plain subclass of a generic class is not subscriptable)."""
    n = len(tud.DataLoader.__parameters__)
    args = (typing.List[torch.Tensor],) + (torch.Tensor,) * (n - 1)
    tud.DataLoader[args]  # torch's own takes them
    alias = DataLoader[args]
    assert typing.get_origin(alias) is DataLoader
    assert typing.get_args(alias) == args
    assert len(DataLoader.__parameters__) == n

    def make(train: bool) -> DataLoader[args]:
        return DataLoader([torch.tensor([i]) for i in range(3)], batch_size=2)

    assert typing.get_type_hints(make)["return"] == alias
    # still a torch DataLoader, and subscripting changes nothing at run time
    loader = make(True)
    assert isinstance(loader, tud.DataLoader)
    assert [b.tolist() for b in loader] == [[[0], [1]], [[2]]]


def test_dataloader_takes_the_type_parameters_of_a_torch_with_two():
    """Newer torch's DataLoader is Generic in its sample and batch types: sluice's base class
    is torch's subscripted with torch's own parameters, so the subclass takes exactly as many
    (two there, one on torch 1.13) and refuses fewer, as torch's does."""
    S = typing.TypeVar("S", covariant=True)
    B = typing.TypeVar("B", covariant=True)

    class TorchLike(typing.Generic[S, B]):
        pass

    class Ours(_dataloader._generic_base(TorchLike)):
        pass

    assert Ours.__parameters__ == (S, B) and issubclass(Ours, TorchLike)
    assert typing.get_args(Ours[int, str]) == (int, str)
    with pytest.raises(TypeError):
        Ours[int]
    with pytest.raises(TypeError):
        TorchLike[int]

    class Plain:  # a torch whose DataLoader were not generic: the class itself
        pass

    assert _dataloader._generic_base(Plain) is Plain
    assert _dataloader._DL_BASE.__origin__ is tud.DataLoader  # this machine's torch


def test_generic_subclass_of_the_dataset_type_parameter():
    """A Dataset[List[Tensor]] subclass goes through the loader as any dataset."""
    class Pairs(tud.Dataset[typing.List[torch.Tensor]]):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return [torch.tensor(i), torch.tensor(-i)]

    batches = list(DataLoader(Pairs(), batch_size=2))
    assert [[t.tolist() for t in b] for b in batches] == [[[0, 1], [0, -1]], [[2, 3], [-2, -3]]]


# ---- pin_memory=True as PyTorch's CUDA-only tests expect it -------------------------------------
# This machine's torch has no CUDA: torch.cuda is made to look available, cudaHostRegister is
# recorded (test_dataloader.py's FakeCudart), Tensor.pin_memory makes a recorded copy, and
# Tensor.is_pinned() answers True for exactly the tensors that lie in a page-locked chunk or
# were made by pin_memory(): what the real is_pinned() would say.

class _Cudart:
    def __init__(self):
        self.live = {}

    def cudaHostRegister(self, addr, size, flags):
        assert addr not in self.live, "a chunk registered twice"
        self.live[addr] = size
        return 0

    def cudaHostUnregister(self, addr):
        del self.live[addr]
        return 0


@pytest.fixture
def pinning(monkeypatch):
    rt = _Cudart()
    copies = {}  # storage address -> the copy pin_memory() made (kept: no address reuse)

    def pin_memory(self, device=None):
        out = self.clone()
        copies[out.storage().data_ptr()] = out
        return out

    def is_pinned(self, device=None):
        p, n = self.data_ptr(), self.numel() * self.element_size()
        return self.storage().data_ptr() in copies or \
            any(a <= p and p + n <= a + size for a, size in rt.live.items())

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "set_device", lambda d: None)
    monkeypatch.setattr(torch.Tensor, "pin_memory", pin_memory)
    monkeypatch.setattr(torch.Tensor, "is_pinned", is_pinned)
    monkeypatch.setattr(_dataloader, "_cudart", lambda: rt)
    return rt


def test_pin_memory_thread_is_exposed_and_ends_with_a_partial_epoch(pinning):
    """PyTorch's test_partial_workers (pin_memory=True): the iterator's `_workers` and
    `_pin_memory_thread`; after 11 of 50 batches the iterator is dropped, and every worker and
    the pin thread end."""
    x = torch.arange(100 * 3, dtype=torch.float32).view(100, 3)
    it = iter(DataLoader(tud.TensorDataset(x, torch.arange(100)), batch_size=2, num_workers=2,
                         pin_memory=True))
    workers, thread = list(it._workers), it._pin_memory_thread
    assert isinstance(thread, _dataloader.threading.Thread) and thread.is_alive()
    for i, (s, t) in enumerate(it):
        assert s.is_pinned() and t.is_pinned()
        assert torch.equal(s, x[2 * i:2 * i + 2]) and t.tolist() == [2 * i, 2 * i + 1]
        if i == 10:
            break
    del it, s, t
    gc.collect()
    for w in workers:
        w.join(30)
        assert not w.is_alive(), "worker not terminated"
    thread.join(30)
    assert not thread.is_alive()
    # without pin_memory there is no pin thread, as in PyTorch
    it = iter(DataLoader(range(8), batch_size=2, num_workers=1))
    assert not hasattr(it, "_pin_memory_thread")
    assert next(it).tolist() == [0, 1]
    it._shutdown_workers()


class BulkDataset(tud.Dataset):
    """__getitem__ takes a list of indices (batch_size=None with a sampler of lists)."""

    def __len__(self):
        return 35

    def __getitem__(self, indices):
        assert isinstance(indices, (list, tuple))
        return torch.as_tensor(indices)


class ListSampler(tud.Sampler):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __iter__(self):
        for part in torch.randperm(self.n).split(self.size):
            yield part.tolist()

    def __len__(self):
        return math.ceil(self.n / self.size)


@pytest.mark.parametrize("workers", [0, 2])
def test_bulk_loading_without_batching_is_pinned(pinning, workers):
    """PyTorch's test_bulk_loading_nobatch with CUDA: no auto-collation, every item pinned,
    every index once."""
    dl = DataLoader(BulkDataset(), batch_size=None, sampler=ListSampler(35, 4),
                    num_workers=workers, pin_memory=True)
    assert dl._auto_collation is False
    got = list(dl)
    assert len(got) == 9 and all(t.is_pinned() for t in got)
    assert sorted(torch.cat(got).tolist()) == list(range(35))


class CustomBatch:
    """PyTorch's SimpleCustomBatch: a batch type with its own pin_memory()/is_pinned()."""

    def __init__(self, data):
        cols = list(zip(*data))
        self.inp = torch.stack(cols[0])
        self.tgt = torch.stack(cols[1])

    def pin_memory(self):
        self.inp = self.inp.pin_memory()
        self.tgt = self.tgt.pin_memory()
        return self

    def is_pinned(self):
        return self.inp.is_pinned() and self.tgt.is_pinned()


def packed_collate(batch):
    data = torch.stack([s[0] for s in batch], 1)
    lengths = torch.tensor([data.size(0), data.size(0) - 1])
    return torch.nn.utils.rnn.pack_padded_sequence(data, lengths, enforce_sorted=False)


@pytest.mark.parametrize("workers", [0, 1])
def test_custom_batch_types_are_pinned(pinning, workers):
    """PyTorch's test_custom_batch_pin(_worker): a collate_fn's own batch type is asked to pin
    itself; a PackedSequence (a namedtuple) keeps its type with its tensors pinned."""
    x = torch.arange(10 * 5, dtype=torch.float32).view(10, 5)
    ds = tud.TensorDataset(x, x + 100)
    got = list(DataLoader(ds, batch_size=2, collate_fn=CustomBatch, pin_memory=True,
                          num_workers=workers))
    assert len(got) == 5
    for i, b in enumerate(got):
        assert isinstance(b, CustomBatch) and b.is_pinned()
        rows = x[2 * i:2 * i + 2]
        assert torch.equal(b.inp, rows) and torch.equal(b.tgt, rows + 100)
    for b in DataLoader(ds, batch_size=2, collate_fn=packed_collate, pin_memory=True,
                        num_workers=workers):
        assert isinstance(b, torch.nn.utils.rnn.PackedSequence)
        assert b.data.is_pinned() and b.batch_sizes.tolist() == [2, 2, 2, 2, 1]


Pair = __import__("collections").namedtuple("Pair", ["data", "label"])


class Mixed(tud.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return {"t": torch.full((4, 2), float(i)), "d": {"n": i},
                "p": Pair(data=torch.tensor([i, -i]), label=str(i))}


@pytest.mark.parametrize("workers", [0, 2])
def test_containers_keep_their_types_and_their_tensors_are_pinned(pinning, workers):
    """PyTorch's TestDictDataLoader.test_pin_memory, TestNamedTupleDataLoader and
    TestStringDataLoader with CUDA: nested dicts and namedtuples keep their types, every tensor
    in them is pinned, strings stay strings."""
    for i, b in enumerate(DataLoader(Mixed(), batch_size=2, pin_memory=True,
                                     num_workers=workers)):
        assert b["t"].is_pinned() and b["d"]["n"].is_pinned() and b["p"].data.is_pinned()
        assert isinstance(b["p"], Pair) and b["p"].label == [str(2 * i), str(2 * i + 1)]
        assert b["d"]["n"].tolist() == [2 * i, 2 * i + 1]
        assert b["t"].shape == (2, 4, 2) and b["t"][1].eq(2 * i + 1).all()
    # without auto-collation the namedtuple's numbers stay numbers
    b = next(iter(DataLoader(Mixed(), batch_size=None, pin_memory=True, num_workers=workers)))
    assert isinstance(b["p"], Pair) and b["p"].data.is_pinned() and b["d"]["n"] == 0
    # pin_memory_device alone pins nothing (PyTorch's test_pin_memory_with_only_device)
    b = next(iter(DataLoader(Mixed(), batch_size=2, pin_memory_device="cuda",
                             num_workers=workers)))
    assert not b["t"].is_pinned() and not b["d"]["n"].is_pinned()


class SleepFirst(tud.Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        if i < 2:
            time.sleep(3)
        return i


def test_timeout_with_pin_memory(pinning):
    """PyTorch's _test_timeout_pin_memory: the pin thread does not hide the timeout."""
    it = iter(DataLoader(SleepFirst(), batch_size=2, num_workers=2, timeout=1, pin_memory=True))
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 1 seconds"):
        next(it)
    assert time.monotonic() - t0 < 2.5
    it._shutdown_workers()


# ---- tensors on another device in the workers (PyTorch's test_multiprocessing_contexts) --------

def test_worker_collation_stacks_device_tensors_on_their_device():
    """The default collation in a worker stacks CPU tensors later, into the batch's
    shared-memory chunk (host memory); tensors on another device are stacked by torch.stack
    on that device, as PyTorch's default_collate does, and sent as torch sends them. The meta
    device stands in for CUDA here (same routing: not CPU)."""
    from sluice.plugin import _dl_worker

    cpu = _dl_worker._shm_collate([torch.ones(2), torch.zeros(2)])
    assert isinstance(cpu, _dl_worker._Stack) and len(cpu.tensors) == 2
    out = _dl_worker._shm_collate([{"a": torch.empty(3, device="meta")}] * 4)["a"]
    assert out.device.type == "meta" and out.shape == (4, 3)
    mixed = _dl_worker._shm_collate([(torch.ones(1), torch.empty(2, device="meta"))] * 2)
    assert isinstance(mixed[0], _dl_worker._Stack) and mixed[1].shape == (2, 2)


class CudaCounting(tud.Dataset):
    def __len__(self):
        return 11

    def __getitem__(self, i):
        return torch.as_tensor(i, device="cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("ctx", ["spawn", "forkserver"])
def test_cuda_tensors_from_spawned_workers(ctx):
    """PyTorch's test_multiprocessing_contexts with CUDA: a dataset returning CUDA tensors,
    3 workers, batches of 3, on the GPU."""
    got = list(DataLoader(CudaCounting(), batch_size=3, num_workers=3,
                          multiprocessing_context=ctx))
    assert [b.device.type for b in got] == ["cuda"] * 4
    assert [b.tolist() for b in got] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10]]


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__, "-q"]))
