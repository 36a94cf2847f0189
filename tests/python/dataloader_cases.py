#!/usr/bin/python3
"""tests/python/dataloader_cases.py: datasets of the DataLoader tests (module level, so that
spawn and forkserver workers can import them) and the child processes of its failure cases
(tests/python/test_dataloader.py):

    dataloader_cases.py CASE METHOD

runs one case in this process and prints its worker pids (``PIDS [...]``) as soon as they run
and its result (``RESULT {...}``); the test bounds it in time, and checks the exit status and
that no worker outlives it.
"""
import contextlib
import ctypes
import json
import os
import signal
import sys
import time

import numpy as np
import torch

from sluice.plugin.pytorch import DataLoader, Dataset, IterableDataset, get_worker_info


@contextlib.contextmanager
def time_limit(seconds):
    """The tests' time limit: TimeoutError in the test when it runs over `seconds` (SIGALRM),
    the previous handler restored after."""
    def alarm(sig, frame):
        raise TimeoutError(f"test ran over {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


class CountingDataset(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i


class CountingIterable(IterableDataset):
    """range(n), sharded over workers by get_worker_info() as PyTorch's docs show."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


class UnshardedIterable(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


class ErrorDataset(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        raise NotImplementedError(f"sample {i} is not implemented")


class GcDataset(Dataset):
    """Every sample: how many objects the worker's garbage collector holds frozen, and how
    much of the worker's memory became private after a full collection (KiB)."""

    def __len__(self):
        return 2

    def __getitem__(self, i):
        import gc

        def private_kib():
            with open("/proc/self/smaps_rollup") as f:
                return sum(int(line.split()[1]) for line in f
                           if line.startswith(("Private_Dirty", "Private_Clean")))

        before = private_kib()
        gc.collect()
        return gc.get_freeze_count(), private_kib() - before


class FailingDataset(Dataset):
    """Sample i is i, except that the samples in `bad` raise ValueError."""

    def __init__(self, n, bad):
        self.n, self.bad = n, bad

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i in self.bad:
            raise ValueError(f"sample {i} is bad")
        return i


class WorkerIdDataset(Dataset):
    """Sample i: (i, the id of the worker that computed it, its pid)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        info = torch.utils.data.get_worker_info()
        return i, -1 if info is None else info.id, os.getpid()


class SeedDataset(Dataset):
    """Every sample: this worker's seed, and torch's and Python's first draws."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import random

        info = get_worker_info()
        time.sleep(0.01)
        return info.seed, torch.initial_seed(), random.random(), float(np.random.rand())


class SlowDataset(Dataset):
    def __init__(self, n, delay, slow=(0,)):
        self.n, self.delay, self.slow = n, delay, slow

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i in self.slow:
            time.sleep(self.delay)
        return i


class SegfaultDataset(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return ctypes.string_at(0)


class InitAttrDataset(Dataset):
    """The worker_init_fn of the tests sets `value` on the worker's copy."""

    value = None

    def __len__(self):
        return 6

    def __getitem__(self, i):
        return self.value


def set_value_init(worker_id):
    info = torch.utils.data.get_worker_info()
    assert info.id == worker_id
    info.dataset.value = 100 + worker_id


def pid_collate(batch):
    return {"pid": os.getpid(), "items": list(batch), "info": get_worker_info().id}


def image_like(i):
    rng = np.random.default_rng(i)
    return rng.integers(0, 255, (3, 8, 8), dtype=np.uint8), i % 10


class ArraysDataset(Dataset):
    def __len__(self):
        return 40

    def __getitem__(self, i):
        return image_like(i)


class BigArrayDataset(Dataset):
    """64 samples of 64 KiB (a NumPy array returned as it is, and its index): sample i's bytes
    are row(i)."""

    _rows = {}

    @staticmethod
    def row(i):
        return (np.arange(65536, dtype=np.int64) * 7 + i * 13).astype(np.uint8)

    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i not in self._rows:
            self._rows[i] = self.row(i)
        return self._rows[i], i


Pair = __import__("collections").namedtuple("Pair", "a b")


class RichDataset(Dataset):
    """Samples of every kind default_collate handles: a dict of a NumPy image, a tensor, a
    0-d tensor, an int, a float, a string, a NumPy scalar and a namedtuple."""

    def __init__(self, n=23):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img, label = image_like(i)
        return {"img": img, "t": torch.arange(6, dtype=torch.float32).view(2, 3) * i,
                "z": torch.tensor(i, dtype=torch.int16), "label": label, "w": i / 4,
                "name": f"s{i}", "np": np.float32(i) / 2, "pair": Pair(i, np.int64(-i))}


class RandomSampleDataset(Dataset):
    """Every sample: torch's, Python's and NumPy's next draws (what a random transform uses)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import random

        return torch.rand(2), random.random(), float(np.random.rand())


def sample_seed(base_seed, epoch, number):
    """docs/python.md's per-sample seed (batch_assignment="sample"), written out again here:
    SplitMix64's finaliser over base_seed * golden + (epoch + 1) * c1 + (number + 1) * c2."""
    m = (1 << 64) - 1
    z = (base_seed * 0x9E3779B97F4A7C15 + (epoch + 1) * 0xBF58476D1CE4E5B9
         + (number + 1) * 0x94D049BB133111EB) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


# ---- child processes of the failure cases ------------------------------------------------------

def _pids(it):
    print("PIDS", json.dumps([w.pid for w in it._workers]), flush=True)


def case_segfault(method):
    it = iter(DataLoader(SegfaultDataset(), batch_size=2, num_workers=2,
                         multiprocessing_context=method))
    _pids(it)
    try:
        next(it)
    except RuntimeError as e:
        return {"error": str(e), "type": type(e).__name__}
    return {"error": None}


def case_kill_worker(method):
    it = iter(DataLoader(SlowDataset(64, 0.05, range(64)), batch_size=2, num_workers=2,
                         multiprocessing_context=method))
    _pids(it)
    first = next(it).tolist()
    os.kill(it._workers[1].pid, 9)
    errors = []
    for _ in range(40):
        try:
            next(it)
        except RuntimeError as e:
            errors.append(str(e))
            break
        except StopIteration:
            break
    try:
        next(it)  # the loader stays failed
    except RuntimeError as e:
        errors.append(str(e))
    return {"first": first, "errors": errors, "killed": it._workers[1].pid}


def case_timeout(method):
    it = iter(DataLoader(SlowDataset(4, 3.0), batch_size=1, num_workers=1, timeout=1,
                         multiprocessing_context=method))
    _pids(it)
    t0 = time.monotonic()
    try:
        next(it)
    except RuntimeError as e:
        return {"error": str(e), "after": time.monotonic() - t0}
    return {"error": None}


def case_partial(method):
    """Break out of an epoch and drop the iterator: the workers are gone at once."""
    loader = DataLoader(CountingDataset(100), batch_size=2, num_workers=2,
                        multiprocessing_context=method)
    it = iter(loader)
    _pids(it)
    workers = list(it._workers)
    got = [next(it).tolist() for _ in range(3)]
    del it
    for w in workers:
        w.join(10)
    return {"got": got, "alive": [w.is_alive() for w in workers],
            "exitcodes": [w.exitcode for w in workers]}


def case_main_killed(method):
    """The main process dies of SIGKILL mid-epoch (sent by the test): workers follow."""
    it = iter(DataLoader(SlowDataset(1000, 0.2, range(1000)), batch_size=1, num_workers=2,
                         multiprocessing_context=method))
    _pids(it)
    next(it)
    print("READY", flush=True)
    time.sleep(60)
    return {}


def case_exit_holding(method):
    """The interpreter exits while an iterator (persistent workers) is alive mid-epoch."""
    loader = DataLoader(CountingDataset(100), batch_size=2, num_workers=2,
                        persistent_workers=True, multiprocessing_context=method)
    it = iter(loader)
    _pids(it)
    return {"first": next(it).tolist()}


def case_raise_in_loop(method):
    """The loop raises while holding the iterator; the process must still exit."""
    it = iter(DataLoader(CountingDataset(100), batch_size=2, num_workers=2,
                         multiprocessing_context=method))
    _pids(it)
    next(it)
    raise ValueError("raised by the training loop")


def case_fd_limit(method):
    """Hold 200 batches with a limit of 100 open files: no fd per batch stays open."""
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (100, 100))
    loader = DataLoader(dc_random(200), num_workers=1, multiprocessing_context=method)
    it = iter(loader)
    _pids(it)
    keep = [t for t in it]
    return {"held": len(keep), "shapes": sorted({tuple(t.shape) for t in keep}),
            "sums_ok": all(float(t.sum()) == float(i) * 4 for i, t in enumerate(keep))}


def dc_random(n):
    return FillIterable(n)


class FillIterable(IterableDataset):
    """n samples [2, 2] filled with their index."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return (torch.full((2, 2), float(i)) for i in range(self.n))


def main(name, method):
    try:
        result = globals()["case_" + name](method)
    except ValueError as e:
        print("RESULT", json.dumps({"raised": str(e)}), flush=True)
        raise
    print("RESULT", json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])


def minor_faults(pid):
    """The minor page faults process `pid` has taken (/proc/PID/stat, field 10)."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])
