"""sluice.plugin._dataloader: ``DataLoader``, PyTorch's DataLoader on sluice's worker
processes (exported by sluice.plugin.pytorch).

``DataLoader`` subclasses ``torch.utils.data.DataLoader`` for its constructor (arguments,
defaults, validation, samplers, ``len()``, the attributes user code reads): one rule, PyTorch's,
kept in one place. What sluice replaces is the iteration:

- ``num_workers=0``: ``_SingleProcessIter`` (PyTorch's semantics; collation by
  ``_dl_worker.collate``).
- ``num_workers=N``: ``_MultiProcessIter`` runs N worker processes (``_dl_worker``), each with
  one duplex socket (its index queue and its result queue). Batch ``i`` goes to worker ``i mod
  N`` (skipping workers whose IterableDataset ended), ``prefetch_factor * N`` batches are in
  flight; results are parked by batch index and returned in order (``in_order=False``: as they
  come). A batch arrives as a small pickle plus a shared-memory chunk (a memfd of its worker,
  mapped here when new or grown) holding its tensors: the tensors returned are views of that
  chunk, and the chunk goes back to its worker only when every tensor over it is gone (a
  ``weakref.finalize`` on the memoryview the tensors share), so ``list(loader)`` holds valid
  batches. The worker picks a chunk when it collates a batch (as PyTorch's worker allocates
  shared memory then), told which are free again through a pipe of notices that the
  finalizers write; chunks are sized to the batch they carry and reused at once with their
  pages (no page faults), a worker with two chunks in use waits for one to come back rather
  than make a third (unless this process says, through the same pipe, that it waits for
  that batch: ``_hurry``), and a chunk left free for 64 batches or while the worker idles
  gives its pages back (``madvise(MADV_REMOVE)``). Forked workers start with the inherited objects
  frozen for the garbage collector (no copy-on-write of them by the workers' collections).
- ``batch_assignment="sample"`` (sluice's): a batch is split into up to N parts, one per
  worker, written into one chunk the main process created (``_BatchChunks``), assembled by
  ``default_collate`` over row views (no copy); each sample seeded with its own seed.
- ``pin_memory``: a chunk is page-locked once (``cudaHostRegister``, ``_Pinner``) and batches
  are loaded and pinned by a pin thread (``_PinThread``), so the tensors are pinned where they
  lie; PyTorch's ``pin_memory()`` rules for everything else.
- Failures: a sample's exception is raised by the ``next()`` of its batch (PyTorch's
  ``ExceptionWrapper``, same type and "Caught X in DataLoader worker process N" message), and
  loading goes on; a dead worker raises ``RuntimeError("DataLoader worker (pid N) is killed by
  signal: ...")`` (or "exited unexpectedly with exit code") at once (the wait includes the
  workers' sentinels); ``timeout`` gives ``RuntimeError("DataLoader timed out after N
  seconds")``. Shutdown (end of epoch without persistent workers, garbage collection, interpreter
  exit through a finalizer): ``None`` to every worker, sockets closed, join, then SIGTERM and
  SIGKILL for any worker still alive; every worker is reaped.
"""
import collections
import functools
import inspect
import io
import itertools
import multiprocessing
import os
import pickle
import select
import signal
import struct
import threading
import time
import warnings
import weakref
from multiprocessing import reduction

import numpy as np
import torch
import torch.utils.data as tud
from torch._utils import ExceptionWrapper

try:
    from torch.utils.data.dataloader import _DatasetKind
except ImportError:  # private to torch: the values its DataLoader gives _dataset_kind
    class _DatasetKind:
        Map = 0
        Iterable = 1


def _generic_base(cls):
    """`cls` subscripted with its own type parameters (a base class that keeps them), or `cls`
    itself when it has none."""
    params = tuple(getattr(cls, "__parameters__", ()))
    return cls[params] if params else cls


# torch's DataLoader is Generic in its sample type (torch.utils.data.dataloader's T_co, gone in
# torch 2.x) and, in newer torch, also in its batch type (_T_co, _TCollated): ours takes the
# type parameters of the torch it runs on (DataLoader[int] or DataLoader[int, Tensor], as
# torch's), whatever their number
_DL_BASE = _generic_base(tud.DataLoader)

# DataPipes (seeded and sharded per epoch as PyTorch does) where this torch still has them
_ITER_DATAPIPE = getattr(tud, "IterDataPipe", ())

# What torch's own DataLoader takes for "no prefetch_factor" with num_workers=0: 2 up to torch
# 1.13 (which refuses anything else there), None from torch 2.0 (which refuses anything else)
_TORCH_PREFETCH_DEFAULT = inspect.signature(tud.DataLoader.__init__).parameters[
    "prefetch_factor"].default

from . import _dl_worker, _lower

POLL_S = 1.0        # longest wait between liveness checks of the workers
CLOSE_GRACE_S = 5.0  # PyTorch's join timeout at shutdown, before SIGTERM

_LIVE = weakref.WeakSet()  # iterators with workers: a forked worker closes their sockets


class DataLoader(_DL_BASE):
    """``torch.utils.data.DataLoader`` with sluice's workers: same signature, defaults, errors
    and semantics (see PyTorch's documentation), plus ``in_order`` (False: batches are returned
    as workers finish them) and sluice's ``batch_assignment``: "batch" (default, PyTorch's:
    each batch computed by one worker, round robin) or "sample" (a batch's samples spread over
    the workers, written into one shared-memory batch; each sample seeded with its own seed,
    see docs/python.md); ``lower_transforms`` (default True; the environment variable
    SLUICE_DATALOADER_LOWER=0 turns it off): batches of a plain torchvision ImageFolder whose
    transform sluice knows exactly are decoded, cropped, resized and flipped in C, with the
    same bytes (_lower.py)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True, batch_assignment="batch", lower_transforms=True):
        if batch_assignment not in ("batch", "sample"):
            raise ValueError("batch_assignment should be 'batch' (each batch computed by one "
                             "worker, PyTorch's round robin) or 'sample' (the samples of a "
                             f"batch spread over the workers), but got {batch_assignment!r}")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if prefetch_factor is None:
            prefetch_factor = 2 if num_workers > 0 else None
        elif prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        super().__init__(dataset, batch_size=batch_size, shuffle=shuffle, sampler=sampler,
                         batch_sampler=batch_sampler, num_workers=num_workers,
                         collate_fn=collate_fn, pin_memory=pin_memory, drop_last=drop_last,
                         timeout=timeout, worker_init_fn=worker_init_fn,
                         multiprocessing_context=multiprocessing_context, generator=generator,
                         prefetch_factor=(_TORCH_PREFETCH_DEFAULT if prefetch_factor is None
                                          else prefetch_factor),
                         persistent_workers=persistent_workers,
                         pin_memory_device=pin_memory_device)
        self.prefetch_factor = prefetch_factor
        self.in_order = in_order
        if batch_assignment == "sample" and (self._dataset_kind == _DatasetKind.Iterable
                                             or not self._auto_collation):
            raise ValueError("batch_assignment='sample' spreads the samples of a batch over the "
                             "workers: it needs a map-style dataset and automatic batching "
                             "(batch_size or batch_sampler), not "
                             + ("an IterableDataset" if self._dataset_kind ==
                                _DatasetKind.Iterable else "batch_size=None"))
        self.batch_assignment = batch_assignment
        self.lower_transforms = lower_transforms

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            it = self._iterator
        else:
            it = self._get_iterator()
        self.__dict__["_sl_last_iter"] = weakref.ref(it)
        return it

    # ---- state (torchdata's StatefulDataLoader) -------------------------------------------------
    def state_dict(self):
        """The loader's position, as torchdata's StatefulDataLoader: the batches the current
        iterator yielded, the random generator's state when it began (which draws the
        sampler's order and the workers' base seed), the dataset's own state_dict() when it has
        one. load_state_dict() makes the next iterator continue from there. A map-style
        dataset's sampler is fast-forwarded (its indices are drawn, no sample is loaded); an
        IterableDataset must have state_dict()/load_state_dict() itself."""
        ref = self.__dict__.get("_sl_last_iter")
        it = ref() if ref is not None else None
        sd = {"_num_yielded": 0, "_generator_state": None, "_iterator_finished": False}
        if self._dataset_kind == _DatasetKind.Iterable:
            if not hasattr(self.dataset, "state_dict"):
                raise TypeError(f"DataLoader.state_dict: the IterableDataset "
                                f"{type(self.dataset).__name__} has no state_dict(), so this "
                                "loader cannot be restored")
            if self.num_workers > 0:
                raise NotImplementedError("DataLoader.state_dict: an IterableDataset read by "
                                          "worker processes cannot be checkpointed by sluice")
            sd["dataset_state"] = self.dataset.state_dict()
        if it is not None and getattr(it, "_gen_state", None) is not None:
            sd["_num_yielded"] = it._num_yielded
            sd["_generator_state"] = it._gen_state.clone()
            sd["_iterator_finished"] = it._num_yielded >= len(it) if self._dataset_kind != \
                _DatasetKind.Iterable else False
        return sd

    def load_state_dict(self, state_dict):
        """The next iterator continues from state_dict() (see there)."""
        if not isinstance(state_dict, dict) or "_num_yielded" not in state_dict:
            raise ValueError("DataLoader.load_state_dict: not a state_dict() of a sluice "
                             "DataLoader")
        if "dataset_state" in state_dict:
            self.dataset.load_state_dict(state_dict["dataset_state"])
        if self.persistent_workers and self._iterator is not None:
            self._iterator._shutdown_workers()
            self._iterator = None
        self.__dict__["_sl_restore"] = None if state_dict.get("_iterator_finished") else \
            dict(state_dict)

    def _take_restore(self):
        return self.__dict__.pop("_sl_restore", None)


def _index_iter(index_sampler):
    """iter(index_sampler); for PyTorch's own BatchSampler (not a subclass) the same batches
    from the same calls to its sampler's iterator, each batch taken at C speed
    (itertools.islice) rather than an index at a time in Python."""
    if type(index_sampler) is tud.BatchSampler:
        return _batches(index_sampler.sampler, index_sampler.batch_size,
                        index_sampler.drop_last)
    return iter(index_sampler)


def _batches(sampler, size, drop_last):
    it = iter(sampler)
    while True:
        batch = list(itertools.islice(it, size))
        if len(batch) < size:  # the sampler ended (BatchSampler calls it no further)
            if batch and not drop_last:
                yield batch
            return
        yield batch


def _new_shared_seed(generator):
    from torch.utils.data import dataloader as tdl

    return tdl._share_dist_seed(generator, None)


def _cudart():
    """CUDA's runtime as torch binds it (cudaHostRegister / cudaHostUnregister)."""
    return torch.cuda.cudart()


def _error_code(err):
    return int(getattr(err, "value", err))


class _Pinner:
    """PyTorch's ``pin_memory(data, device)`` semantics, with one difference: a tensor that is a
    view of a worker's shared-memory chunk is not copied: the chunk itself is page-locked, once
    (``cudaHostRegister`` of the main process's mapping, undone just before it is unmapped), so
    the view is pinned where it lies (``is_pinned()`` is True) and later batches in the same
    chunk cost nothing. Any other tensor is copied into pinned memory (``Tensor.pin_memory``),
    objects with a ``pin_memory()`` method are asked to pin themselves, containers are rebuilt
    as PyTorch rebuilds them."""

    def __init__(self, device):
        self.rules = _torch_pin_rules()
        # torch 1.13 pins tensors on pin_memory_device (when given); newer torch ignores it
        # (deprecated) and passes the current accelerator's type to objects' pin_memory(device)
        self.device = (device or None) if self.rules.tensor_device else None
        self.object_device = _accelerator_type() if self.rules.object_device else None

    def register(self, buf):
        """Page-locks the chunk mapping `buf` (a ctypes array from _dl_worker.map_shared)
        unless it already is."""
        if getattr(buf, "_sluice_pinned", False):
            return
        import ctypes

        rt = _cudart()
        addr, size = ctypes.addressof(buf), ctypes.sizeof(buf)
        err = _error_code(rt.cudaHostRegister(addr, size, 0))
        if err != 0:
            raise RuntimeError(f"pin_memory: cudaHostRegister of a {size}-byte shared-memory "
                               f"batch chunk failed with CUDA error {err}")
        buf._unmap.before = functools.partial(rt.cudaHostUnregister, addr)
        buf._sluice_pinned = True

    def pin(self, data, in_place=()):
        """`data` pinned; tensors whose id() is in `in_place` lie in registered chunks."""
        import copy

        if isinstance(data, torch.Tensor):
            if id(data) in in_place:
                return data
            return data.pin_memory(self.device) if self.device else data.pin_memory()
        if self.rules.object_first and hasattr(data, "pin_memory"):
            return self._pin_object(data)
        if isinstance(data, (str, bytes)):
            return data
        if isinstance(data, collections.abc.Mapping):
            out = {k: self.pin(v, in_place) for k, v in data.items()}
            try:
                if isinstance(data, collections.abc.MutableMapping):
                    clone = copy.copy(data)
                    clone.update(out)
                    return clone
                return type(data)(out)
            except TypeError:  # the mapping type does not take a dict
                return out
        if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
            return type(data)(*(self.pin(v, in_place) for v in data))
        if isinstance(data, tuple):  # a list up to the torch that keeps it a tuple
            out = [self.pin(v, in_place) for v in data]
            if not self.rules.keeps_tuple:
                return out
            try:
                return type(data)(out)
            except TypeError:  # a tuple subclass that does not take a list
                return tuple(out)
        if isinstance(data, collections.abc.Sequence):  # a mutable one cloned, as PyTorch's
            return _dl_worker._rebuilt_sequence(data, [self.pin(v, in_place) for v in data], True)
        if hasattr(data, "pin_memory"):
            return self._pin_object(data)
        return data

    def _pin_object(self, data):
        """An object's own pin_memory(): called with the device where this torch passes it
        (to a `device` parameter, positionally where it is positional only, or to **kwargs),
        without arguments otherwise."""
        fn = data.pin_memory
        if self.object_device is None:
            return fn()
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):  # no signature (a builtin)
            return fn()
        p = params.get("device")
        if p is not None:
            if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL):
                return fn(self.object_device)
            return fn(device=self.object_device)
        if any(q.kind == inspect.Parameter.VAR_KEYWORD for q in params.values()):
            return fn(device=self.object_device)
        return fn()


_PinRules = collections.namedtuple("_PinRules", "tensor_device keeps_tuple object_first "
                                                "object_device")


def _torch_pin_rules():
    """How the installed torch's pin_memory(data, device) treats what it is given (see
    _pin_rules_of), found once per pin_memory function."""
    from torch.utils.data._utils import pin_memory as tpm

    return _pin_rules_of(tpm.pin_memory)


@functools.lru_cache(maxsize=None)
def _pin_rules_of(pin_memory):
    """The rules of `pin_memory` (torch's), found by calling it on objects that only record
    the call (nothing is pinned, no accelerator is needed): whether it passes `device` to
    Tensor.pin_memory (torch 1.13: yes; newer: no, pin_memory_device is deprecated), keeps a
    tuple a tuple (1.13: a list), asks an object with a pin_memory() method before it looks
    into it as a container (1.13: after), and passes `device` to that method when it takes one
    (1.13: never). torch 1.13's rules where it refuses the probes."""
    try:
        return _probe_pin_rules(pin_memory)
    except Exception:  # noqa: BLE001 - never a DataLoader that fails over how it pins
        return _PinRules(True, False, False, False)


def _probe_pin_rules(pin_memory):
    seen = []

    class Probe(torch.Tensor):
        def pin_memory(self, *args, **kwargs):
            seen.append(args + tuple(kwargs.values()))
            return self

    class Pinnable(dict):
        def pin_memory(self, device=None):
            seen.append(device)
            return "pinned"

    pin_memory(torch.empty(0).as_subclass(Probe), "sluice-probe")
    tensor_device = seen == [("sluice-probe",)]
    seen.clear()
    keeps_tuple = type(pin_memory((), "sluice-probe")) is tuple
    object_first = pin_memory(Pinnable(), "sluice-probe") == "pinned"
    object_device = object_first and seen == ["sluice-probe"]
    if not object_first:  # an object that is no container: does it get the device?
        class Plain:
            def pin_memory(self, device=None):
                seen.append(device)
                return self

        seen.clear()
        pin_memory(Plain(), "sluice-probe")
        object_device = seen == ["sluice-probe"]
    return _PinRules(tensor_device, keeps_tuple, object_first, object_device)


def _accelerator_type():
    """The current accelerator's device type, as newer torch's DataLoader passes it to pin
    memory ("cuda": sluice pins only where CUDA is available)."""
    acc = getattr(torch, "accelerator", None)
    try:
        cur = acc.current_accelerator() if acc is not None else None
    except Exception:  # noqa: BLE001 - an older torch.accelerator: CUDA's
        cur = None
    return cur.type if cur is not None else "cuda"


class _PinThread:
    """PyTorch's pin-memory thread: batches are loaded from their chunks and pinned here, in
    the order they arrive, while the main thread hands earlier ones to the program. A job's
    result (or its error, as PyTorch's ExceptionWrapper "in pin memory thread for device N")
    is a Future."""

    def __init__(self, pinner):
        import queue

        self.device_id = torch.cuda.current_device()
        self.jobs = queue.SimpleQueue()
        self.thread = threading.Thread(target=_pin_loop, args=(self.jobs, pinner,
                                                                self.device_id),
                                       name="sluice-dl-pin", daemon=True)
        self.thread.start()

    def submit(self, fn, *args):
        from concurrent.futures import Future

        f = Future()
        self.jobs.put((f, fn, args))
        return f

    def stop(self):
        self.jobs.put(None)
        if self.thread is not threading.current_thread():
            self.thread.join(CLOSE_GRACE_S)


def _pin_loop(jobs, pinner, device_id):
    from torch._utils import ExceptionWrapper

    torch.set_num_threads(1)  # as PyTorch: the copies must not take every core
    torch.cuda.set_device(device_id)
    while True:
        job = jobs.get()
        if job is None:
            return
        f, fn, args = job
        try:
            f.set_result(fn(pinner, *args))
        except Exception:  # noqa: BLE001 - raised by the next() of that batch
            f.set_result(ExceptionWrapper(where=f"in pin memory thread for device {device_id}"))
        del f, fn, args, job


_TORCH_DTYPES = _dl_worker._TORCH_DTYPES
_ITEMSIZE = {name: torch.empty((), dtype=d).element_size() for name, d in _TORCH_DTYPES.items()}


class _BatchUnpickler(pickle.Unpickler):
    """The batch a worker sent (its ShmPickler's pickle) over `buffer`, a memoryview of its
    chunk (None when the batch has no tensors): each tensor one torch.frombuffer of its own
    bytes (plus a view for its shape), each NumPy array one np.frombuffer; they keep `buffer`
    alive. The tensors are appended to `views` when it is a list (pin_memory)."""

    def __init__(self, blob, buffer, views=None):
        super().__init__(io.BytesIO(blob))
        self.buffer, self.views = buffer, views

    def persistent_load(self, pid):
        kind, off, nbytes, dtype, shape = pid
        if kind != "n":
            dt = _TORCH_DTYPES[dtype]
            if not nbytes:
                return torch.empty(shape, dtype=dt)
            t = torch.frombuffer(self.buffer, dtype=dt, count=nbytes // _ITEMSIZE[dtype],
                                 offset=off)
            if len(shape) != 1:
                t = t.view(shape)
            if self.views is not None:
                self.views.append(t)
            return t
        dt = np.dtype(dtype)
        if not nbytes:
            return np.empty(shape, dt)
        return np.frombuffer(self.buffer, dt, nbytes // dt.itemsize, off).reshape(shape)


def _load_batch(blob, buffer, views=None):
    return _BatchUnpickler(blob, buffer, views).load()


def _load_and_pin(pinner, blob, mv):
    """In the pin thread: a batch loaded over its chunk (`mv`: a memoryview of the chunk, or
    None), the chunk registered, the rest pinned."""
    if mv is None:
        return pinner.pin(_load_batch(blob, None))
    pinner.register(mv.obj)
    views = []
    data = _load_batch(blob, mv, views)
    del mv
    return pinner.pin(data, {id(v) for v in views})


class _BaseIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._shared_seed = None
        if isinstance(self._dataset, _ITER_DATAPIPE):  # PyTorch's seeding of datapipes
            self._shared_seed = _new_shared_seed(loader.generator)
            self._dataset = _dl_worker._seed_datapipe(self._dataset, self._shared_seed)
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = getattr(loader, "in_order", True)
        self._pin_memory_device = loader.pin_memory_device
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be "
                          "used as the device,ignore "
                          f"pin_memory_device='{loader.pin_memory_device}'.")
        if loader.pin_memory and not torch.cuda.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.")
        self._pin_memory = loader.pin_memory and torch.cuda.is_available()
        self._pinner = _Pinner(self._pin_memory_device) if self._pin_memory else None
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        # state_dict(): the generator's state before the sampler's order and the base seed are
        # drawn from it; a restored loader sets it back and skips the batches yielded
        restore = loader._take_restore() if hasattr(loader, "_take_restore") else None
        gen = loader.generator if loader.generator is not None else torch.default_generator
        if restore is not None and restore.get("_generator_state") is not None:
            gen.set_state(restore["_generator_state"])
        self._gen_state = gen.get_state()
        self._restore = restore
        self._sampler_iter = _index_iter(self._index_sampler)
        self._base_seed = torch.empty((), dtype=torch.int64).random_(
            generator=loader.generator).item()
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0
        if self._num_workers == 0:
            self._fast_forward()
        self._profile_name = f"enumerate(DataLoader)#{self.__class__.__name__}.__next__"

    def __iter__(self):
        return self

    def _fast_forward(self):
        """A restored loader: the sampler moves past the batches already yielded."""
        restore, self._restore = self._restore, None
        n = int(restore["_num_yielded"]) if restore else 0
        if n and self._dataset_kind == _DatasetKind.Iterable:
            self._num_yielded = n  # the dataset restored its own position
            return
        for _ in range(n):
            try:
                next(self._sampler_iter)
            except StopIteration:
                break
            self._num_yielded += 1

    def _reset(self, loader, first_iter=False):
        if not first_iter:
            gen = loader.generator if loader.generator is not None else torch.default_generator
            self._gen_state = gen.get_state()
        self._sampler_iter = _index_iter(self._index_sampler)
        self._num_yielded = 0
        if first_iter:
            self._fast_forward()
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        if isinstance(self._dataset, _ITER_DATAPIPE):
            self._shared_seed = _new_shared_seed(loader.generator)
            self._dataset = _dl_worker._seed_datapipe(self._dataset, self._shared_seed)

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        if _profiler_enabled():  # PyTorch's record of every next() under the profiler
            with torch.autograd.profiler.record_function(self._profile_name):
                return self._next()
        return self._next()

    def _next(self):
        if self._sampler_iter is None:
            self._reset()
        data = self._next_data()
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable
                and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._IterableDataset_len_called} (when accessing len(dataloader)), "
                   f"but {self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not "
                        "properly configuring the IterableDataset replica at each worker. "
                        "Please see https://pytorch.org/docs/stable/data.html#torch.utils."
                        "data.IterableDataset for examples.")
            warnings.warn(msg)
        return data

    next = __next__

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        assert self._timeout == 0
        assert self._num_workers == 0
        collate_fn = self._collate_fn
        if _dl_worker.is_default_collate(collate_fn):
            collate_fn = _dl_worker.collate
        elif _dl_worker.is_default_convert(collate_fn):
            collate_fn = _dl_worker.convert
        self._dataset_fetcher = _dl_worker._Fetcher(
            self._dataset_kind == _DatasetKind.Iterable, self._dataset, self._auto_collation,
            collate_fn, self._drop_last, _lower.enabled(getattr(loader, "lower_transforms",
                                                                True)))

    def _next_data(self):
        index = self._next_index()
        data = self._dataset_fetcher.fetch(index)
        if self._pin_memory:  # PyTorch pins in the main thread without workers, too
            data = self._pinner.pin(data)
        return data


# ---- the workers ---------------------------------------------------------------------------

class _ChunkBook:
    """The main process's record of the workers' chunks: their mappings here, and for each
    worker the pipe through which it learns that a chunk is free again (the worker picks a
    chunk when it collates a batch: _dl_worker._Chunks). A chunk is free when the memoryview
    of its batch (and every tensor over it) is gone; the finalizer writes the notice, from
    whatever thread drops the last view."""

    def __init__(self, n):
        self.maps = [dict() for _ in range(n)]   # chunk id -> buffer (map_shared)
        self.notices = [None] * n                # _Notices of each worker

    def map(self, wid, cid, fd, size):
        self.maps[wid][cid] = _dl_worker.map_shared(fd, size)  # the old one: unmapped when
        # its last view goes

    def give_back(self, wid, cid):
        """A batch dropped unseen (its epoch was reset): its chunk is free again."""
        buf = self.maps[wid].get(cid)
        self.notices[wid].post(cid, getattr(buf, "_sluice_pinned", False))

    def buffer(self, wid, cid):
        """A memoryview of the chunk; the chunk is free again when it (and every tensor over
        it) is gone."""
        buf = self.maps[wid][cid]
        mv = memoryview(buf)
        weakref.finalize(mv, _free_notice, self.notices[wid], buf, cid)
        return mv


def _free_notice(notices, buf, cid):
    notices.post(cid, getattr(buf, "_sluice_pinned", False))


class _Notices:
    """The write end of a worker's pipe of free-chunk notices (non-blocking; notices that do
    not fit wait in `pending` for the next post). Posts come from finalizers in any thread,
    and may come from a finalizer that a garbage collection runs inside a post: that one is
    queued for the outer call to write (never written twice, never lost). A post after close()
    is dropped (the worker is gone)."""

    def __init__(self, conn):
        self.conn, self.fd = conn, conn.fileno()
        os.set_blocking(self.fd, False)
        self.lock = threading.Lock()
        self.owner = None                # the thread inside post()
        self.queue = collections.deque()
        self.pending = b""

    def post(self, cid, pinned):
        self.put(cid << 1 | bool(pinned))

    def hurry(self, idx):
        """The main process waits for the batch of task `idx` (_dl_worker._Chunks.wait)."""
        self.put(_dl_worker.HURRY | idx & _dl_worker.HURRY_MASK)

    def put(self, rec):
        self.queue.append(_dl_worker._NOTICE.pack(rec))
        me = threading.get_ident()
        if self.owner == me:
            return
        with self.lock:
            self.owner = me
            try:
                self._flush()
            finally:
                self.owner = None

    def _flush(self):
        while self.fd is not None:
            while self.queue and len(self.pending) < 4096:
                self.pending += self.queue.popleft()
            if not self.pending:
                return
            try:  # at most PIPE_BUF bytes of whole records: written whole or not at all
                n = os.write(self.fd, self.pending[:4096])
            except BlockingIOError:
                return
            except OSError:  # the worker exited
                self.pending = b""
                self.queue.clear()
                return
            self.pending = self.pending[n:]

    def close(self):
        with self.lock:
            self.fd = None
            self.conn.close()


class _FdCloser:
    """An inherited fd a forked worker closes (sluice.worker._setup_process closes objects)."""

    def __init__(self, fd):
        self.fd = fd

    def close(self):
        try:
            os.close(self.fd)
        except OSError:
            pass


class _BatchChunks:
    """batch_assignment="sample": the batch chunks, memfds created here, mapped here and in each
    worker that writes into them (its fd sent to a worker before its first part there, and again
    when the chunk was replaced by a bigger one). A chunk is free again when every tensor over
    it is gone (as _ChunkBook): the most recently freed one keeps its pages and is reused first
    (no page faults); the others give theirs back (madvise MADV_REMOVE) as soon as a later one
    is freed or taken. `fds`: the open fds (closed at shutdown)."""

    def __init__(self):
        self.chunks = {}  # id -> [generation, size, fd, buffer]
        self.free = []    # oldest first
        self.released = collections.deque()  # freed by finalizers, not yet in `free`
        self.cold = set()  # free chunks whose pages were given back
        self.lock = threading.Lock()
        self.owner = None  # the thread holding `lock`
        self.sent = {}    # (worker, id) -> generation mapped there
        self.next_id = 0

    def _cool(self, cids):
        for c in cids:
            if c not in self.cold and c in self.chunks:
                _dl_worker.release_pages(self.chunks[c][3])
                self.cold.add(c)

    def freed(self, cid):
        """A chunk free again (its batch's finalizer, any thread): the chunks freed before it
        and not taken since give their pages back."""
        me = threading.get_ident()
        if self.owner == me:  # a finalizer run by a collection inside take(): no cooling
            self.released.append(cid)
            return
        with self.lock:
            self.owner = me
            try:
                self._cool(list(self.released))
                self.released.append(cid)
            finally:
                self.owner = None

    def fds(self):
        return [c[2] for c in self.chunks.values()]

    def take(self, need):
        with self.lock:
            self.owner = threading.get_ident()
            try:
                return self._take(need)
            finally:
                self.owner = None

    def _take(self, need):
        while self.released:
            self.free.append(self.released.popleft())
        fits = [c for c in self.free if self.chunks[c][1] >= need]
        if fits:  # the most recently freed that fits: its pages are still there
            cid = fits[-1]
            self.free.remove(cid)
        elif self.free:  # the biggest free chunk is replaced by one that fits, with headroom
            cid = max(self.free, key=lambda c: self.chunks[c][1])
            self.free.remove(cid)
            self._make(cid, int(need * _dl_worker.GROWTH))
        else:
            cid = self.next_id
            self.next_id += 1
            self._make(cid, need)
        self.cold.discard(cid)
        self._cool(self.free[:-1])  # idle for a batch: all but the spare give their pages back
        return cid

    def _make(self, cid, size):
        step = _dl_worker.MIN_CHUNK
        size = (max(size, step) + step - 1) // step * step
        old = self.chunks.pop(cid, None)
        if old is not None:
            os.close(old[2])
        fd = os.memfd_create(f"sluice-dl-batch{cid}", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, size)
            buf = _dl_worker.map_shared(fd, size)
        except BaseException:
            os.close(fd)
            raise
        self.chunks[cid] = [(old[0] + 1) if old else 0, size, fd, buf]

    def give_back(self, cid):
        self.freed(cid)

    def send_to(self, conn, wid, pid, cid):
        gen, size, fd, _ = self.chunks[cid]
        if self.sent.get((wid, cid)) != gen:
            conn.send(("chunk", cid, gen, size))
            reduction.send_handle(conn, fd, pid)
            self.sent[(wid, cid)] = gen

    def buffer(self, cid):
        buf = self.chunks[cid][3]
        mv = memoryview(buf)
        weakref.finalize(mv, self.freed, cid)
        return mv

    def close(self):
        for c in self.chunks.values():
            try:
                os.close(c[2])
            except OSError:
                pass
        self.chunks.clear()


def _signal_text(sig):
    try:
        return signal.strsignal(sig) or f"signal {sig}"
    except (ValueError, TypeError):
        return f"signal {sig}"


def _shutdown(state):
    """Stops and reaps the workers of an iterator (`state`: its _WorkerSet); idempotent."""
    if state.closed or os.getpid() != state.owner:
        return
    state.closed = True
    if state.pin_thread is not None:
        state.pin_thread.stop()
    if state.batch_chunks is not None:
        state.batch_chunks.close()
    for n in state.notices:
        n.close()
    for conn in state.conns:
        try:
            os.set_blocking(conn.fileno(), False)
            conn.send(None)
        except (OSError, ValueError):
            pass
        try:
            conn.close()
        except OSError:
            pass
    deadline = time.monotonic() + state.grace
    for p in state.procs:
        p.join(max(0.0, deadline - time.monotonic()))
    for p in state.procs:
        if p.exitcode is None:
            p.terminate()
    for p in state.procs:
        p.join(2.0)
        if p.exitcode is None:
            p.kill()
            p.join()


class _WorkerSet:
    """What shutdown needs, apart from the iterator (so that a finalizer can hold it)."""

    def __init__(self):
        self.procs, self.conns, self.closed, self.owner = [], [], False, os.getpid()
        self.grace = CLOSE_GRACE_S
        self.pin_thread = None
        self.batch_chunks = None
        self.notices = []  # _Notices of the workers


class _MultiProcessIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        assert self._num_workers > 0
        assert self._prefetch_factor > 0
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._worker_init_fn = loader.worker_init_fn
        collate_fn = self._collate_fn
        if _dl_worker.is_default_collate(collate_fn) or _dl_worker.is_default_convert(collate_fn):
            collate_fn = None  # the worker's own, stacking straight into shared memory
        init_fn = self._worker_init_fn
        if isinstance(self._dataset, _ITER_DATAPIPE):  # PyTorch's sharding of datapipes
            from torch.utils.data import dataloader as tdl

            ws, rank = tdl._get_distributed_settings()
            init_fn = functools.partial(tdl._sharding_worker_init_fn, init_fn, ws, rank)
        cfg = (self._dataset_kind == _DatasetKind.Iterable, self._dataset,
               self._auto_collation, collate_fn, self._drop_last, init_fn, self._shared_seed,
               _lower.enabled(getattr(loader, "lower_transforms", True)))
        self._ws = _WorkerSet()
        self._workers, self._conns = self._ws.procs, self._ws.conns
        self._book = _ChunkBook(self._num_workers)
        self._spread = getattr(loader, "batch_assignment", "batch") == "sample"
        self._hurried = None  # (epoch, task) whose worker was told this iterator waits for it
        self._batch_chunks = None
        if self._spread:
            self._batch_chunks = self._ws.batch_chunks = _BatchChunks()
            self._use_default_collate = _dl_worker.is_default_collate(self._collate_fn)
        self._layout = None  # the signature samples are expected to have (sample mode)
        self._parts = {}     # (epoch, batch index) -> the state of a spread batch
        self._epoch = 0
        self._dead = None
        self._pin_thread = None
        if self._pin_memory:
            self._pin_thread = self._ws.pin_thread = _PinThread(self._pinner)
            # PyTorch's name for the thread (its tests join it after dropping the iterator)
            self._pin_memory_thread = self._pin_thread.thread
        self._finalizer = weakref.finalize(self, _shutdown, self._ws)
        method = ctx.get_start_method()
        fork = method == "fork"
        # a forkserver's child has the fork server for parent: the worker watches both
        parent = -os.getpid() if method == "forkserver" else os.getpid()
        pdeathsig = threading.current_thread() is threading.main_thread() and \
            method != "forkserver"
        _LIVE.add(self)
        try:
            for wid in range(self._num_workers):
                main_end, worker_end = ctx.Pipe(duplex=True)
                notice_r, notice_w = ctx.Pipe(duplex=False)
                close = []
                if fork:
                    close = [c for it in list(_LIVE) for c in it._conns if not c.closed]
                    close += [n.conn for it in list(_LIVE) for n in it._ws.notices
                              if not n.conn.closed] + [notice_w]
                    close += [_FdCloser(fd) for it in list(_LIVE) if it._batch_chunks
                              for fd in it._batch_chunks.fds()]
                    close += _sluice_pool_conns() + [main_end]
                w = ctx.Process(target=_dl_worker.dl_worker_main, daemon=True,
                                args=(worker_end, wid, self._num_workers, self._base_seed,
                                      parent, pdeathsig, close, cfg, notice_r))
                try:
                    _start(w, fork)
                finally:
                    worker_end.close()
                    notice_r.close()
                self._workers.append(w)
                self._conns.append(main_end)
                self._book.notices[wid] = _Notices(notice_w)
                self._ws.notices.append(self._book.notices[wid])
        except BaseException:
            self._shutdown_workers()
            raise
        self._worker_pids_set = True
        self._by_conn = {c: i for i, c in enumerate(self._conns)}
        # one poll set for the whole life of the workers (a selector per wait costs more than
        # the batch): the sockets, then the workers' sentinels (readable once a worker is gone)
        self._fds = [c.fileno() for c in self._conns]
        self._poll = select.poll()
        self._fd_wid = {}
        for wid, fd in enumerate(self._fds):
            self._poll.register(fd, select.POLLIN)
            self._fd_wid[fd] = wid
        self._sentinel_w = {}
        for w in self._workers:
            self._poll.register(w.sentinel, select.POLLIN)
            self._sentinel_w[w.sentinel] = w
        self._reset(loader, first_iter=True)

    @property
    def _worker_pids(self):
        return tuple(w.pid for w in self._workers)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}       # batch index -> [worker id] or [worker id, reply]
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        self._sample_no = 0  # samples sent this epoch (sample mode: each one's seed)
        self._primed = not self._spread or self._layout is not None
        if not first_iter:
            self._check_alive()
            self._epoch += 1
            for conn in self._conns:
                self._send(conn, ("resume", self._epoch, self._shared_seed))
        ahead = self._prefetch_factor * self._num_workers
        if self._spread and self._layout is None:
            ahead = 1  # the others once the first samples have shown how rows are laid out
        for _ in range(ahead):
            self._try_put_index()

    # ---- sending -----------------------------------------------------------------------
    def _send(self, conn, msg):
        try:
            conn.send(msg)
        except (OSError, ValueError):
            self._check_workers(wait=True)
            raise

    def _send_task(self, wid, msg):
        """conn.send(msg) with plain pickle (a task holds indices): ForkingPickler copies its
        dispatch table at every call, which costs more than the task."""
        try:
            data = _dumps(msg, pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - indices only ForkingPickler's reducers can pickle
            return self._send(self._conns[wid], msg)
        try:
            self._conns[wid].send_bytes(data)
        except (OSError, ValueError):
            self._check_workers(wait=True)
            raise

    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        assert self._tasks_outstanding < max_tasks
        try:
            index = self._next_index()
        except StopIteration:
            return
        if self._spread:  # every worker takes a part (map-style only: every worker active)
            return self._put_parts(index)
        for _ in range(self._num_workers):  # the next active worker, if any
            wid = next(self._worker_queue_idx_cycle)
            if self._workers_status[wid]:
                if self._in_order:
                    break
                if self._workers_num_tasks[wid] < max_tasks // sum(self._workers_status):
                    break  # out of order: a worker with room
        else:
            return  # every worker is done (IterableDataset)
        self._send_task(wid, ("task", self._epoch, self._send_idx, None, index))
        self._task_info[self._send_idx] = [wid]
        self._tasks_outstanding += 1
        self._workers_num_tasks[wid] += 1
        self._send_idx += 1

    def _put_parts(self, index):
        """batch_assignment="sample": the batch split into up to N contiguous parts, one per
        worker (those with the fewest samples outstanding first, when the batch has fewer
        samples than there are workers), all written into one chunk."""
        index = list(index)
        rows, n = len(index), self._num_workers
        sig = self._layout
        cid = None
        if sig is not None:
            cid = self._batch_chunks.take(_dl_worker.row_layout(sig, rows)[1])
        nparts = max(1, min(n, rows))
        bounds = [rows * k // nparts for k in range(nparts + 1)]
        load = self._workers_num_tasks
        start_w = self._send_idx % n  # ties: round robin from this batch's worker
        order = sorted(range(n), key=lambda w: (load[w], (w - start_w) % n))
        for k in range(nparts):  # one part per worker: the least loaded ones first
            lo, hi = bounds[k], bounds[k + 1]
            wid = order[k]
            conn = self._conns[wid]
            if cid is not None:
                try:
                    self._batch_chunks.send_to(conn, wid, self._workers[wid].pid, cid)
                except (OSError, ValueError):
                    self._check_workers(wait=True)
                    raise
            self._send(conn, ("part", self._epoch, self._send_idx, cid, sig, rows, lo,
                              index[lo:hi], self._sample_no + lo))
            load[wid] += hi - lo
        self._parts[(self._epoch, self._send_idx)] = {
            "left": nparts, "entries": [], "err": None, "cid": cid, "sig": sig, "rows": rows}
        self._task_info[self._send_idx] = [0]
        self._tasks_outstanding += 1
        self._sample_no += rows
        self._send_idx += 1

    def _on_part(self, wid, msg):
        kind, epoch, idx, cid, (count, start, payload) = msg
        self._workers_num_tasks[wid] -= count
        st = self._parts.get((epoch, idx))
        if st is None:
            return
        if kind == "perr":  # the batch raises its first failing sample's error, as PyTorch
            if st["err"] is None or st["err"][0] > start:
                st["err"] = (start, payload)
        else:
            st["entries"] += payload
        if not self._primed and epoch == self._epoch:  # the epoch's first reply: the layout
            self._primed = True                          # is known, the window is filled
            sigs = {e[3] for e in payload} if kind == "part" else set()
            if len(sigs) == 1 and next(iter(sigs)):
                self._layout = next(iter(sigs))
            while self._tasks_outstanding < self._prefetch_factor * self._num_workers:
                before = self._send_idx
                self._try_put_index()
                if self._send_idx == before:
                    break
        st["left"] -= 1
        if st["left"]:
            return
        del self._parts[(epoch, idx)]  # every part is in: the chunk is written
        if epoch != self._epoch or idx not in self._task_info:
            if st["cid"] is not None:
                self._batch_chunks.give_back(st["cid"])  # a batch of an epoch that was reset
            return
        self._tasks_outstanding -= 1
        self._task_info[idx].append(("spread", st))

    def _assemble(self, st):
        """A spread batch: its samples read (rows as views of its chunk) and collated; the
        default collate stacks consecutive rows as views, no copy."""
        cid = st["cid"]
        if st["err"] is not None:
            if cid is not None:
                self._batch_chunks.give_back(cid)
            st["err"][1].reraise()
        rows_used = cid is not None and any(e[1] == "row" for e in st["entries"])
        if cid is not None and not rows_used:
            self._batch_chunks.give_back(cid)
        mv = self._batch_chunks.buffer(cid) if rows_used else None
        if mv is not None and self._pin_memory:
            self._pinner.register(mv.obj)
        samples, base = _dl_worker.load_samples(st["entries"], st["sig"], st["rows"], mv)
        del mv
        sigs = {e[3] for e in st["entries"]}
        if len(sigs) == 1:  # the next batches' rows are laid out for what these samples were
            only = next(iter(sigs))
            if only and only != self._layout:
                self._layout = only
        if self._use_default_collate:
            stack = _dl_worker.RowStack(base)
            data = _dl_worker.collate(samples, stack)
            views = stack.views
        else:
            data, views = self._collate_fn(samples), ()
        del samples, base
        if self._pin_memory:  # in this thread: the rows are pinned where they lie
            data = self._pinner.pin(data, views)
        return data

    # ---- receiving ---------------------------------------------------------------------
    def _check_alive(self):
        if self._dead is not None:
            raise RuntimeError(self._dead)
        if self._ws.closed:
            raise RuntimeError("the DataLoader iterator's workers were shut down")

    def _check_workers(self, wait=False):
        for w in self._workers:
            if wait and w.exitcode is None:
                w.join(2.0)
            code = w.exitcode
            if code is None:
                continue
            if code < 0:
                msg = (f"DataLoader worker (pid {w.pid}) is killed by signal: "
                       f"{_signal_text(-code)}. ")
                if -code == signal.SIGBUS:
                    msg += ("It is possible that dataloader's workers are out of shared memory. "
                            "Please try to raise your shared memory limit.")
            else:
                msg = (f"DataLoader worker (pid {w.pid}) exited unexpectedly with exit code "
                       f"{code}. Details are lost due to multiprocessing. Rerunning with "
                       "num_workers=0 may give better error trace.")
            self._dead = msg
            self._shutdown_workers()
            raise RuntimeError(msg)

    def _on_reply(self, wid, msg):
        kind, epoch, idx, cid, payload = msg
        if kind in ("part", "perr"):
            return self._on_part(wid, msg)
        grown = 0
        if kind == "ok":
            grown = payload[1]
            if grown:
                fd = reduction.recv_handle(self._conns[wid])
                try:
                    self._book.map(wid, cid, fd, grown)
                finally:
                    os.close(fd)
        # (a chunk is in the reply only when the worker wrote the batch into one: "ok", shm)
        if epoch != self._epoch or idx not in self._task_info:
            if cid is not None:
                self._book.give_back(wid, cid)  # a batch of an epoch that was reset: dropped
            return
        self._tasks_outstanding -= 1  # a worker's count drops when its batch is delivered
        if kind == "stop":  # this worker's IterableDataset ended
            self._workers_status[wid] = False
            del self._task_info[idx]
            return
        if kind == "err":
            self._task_info[idx].append(("err", payload))
            return
        if self._pin_thread is not None:  # loaded and pinned there while the program works
            mv = self._book.buffer(wid, cid) if payload[2] else None
            self._task_info[idx].append(("pin", self._pin_thread.submit(_load_and_pin,
                                                                        payload[0], mv)))
            return
        self._task_info[idx].append(("ok", payload[0], cid if payload[2] else None))

    def _receive(self):
        """Waits for at least one reply (raises on a dead worker or after the timeout). One
        reply is read from each socket that has one; a worker's sentinel that fires (the
        worker is gone) is looked at when no reply is left to read, as PyTorch does."""
        timeout = self._timeout if self._timeout > 0 else None
        start = time.monotonic() if timeout is not None else 0.0
        poll, fd_wid = self._poll.poll, self._fd_wid
        while True:
            self._check_alive()
            if timeout is None:
                events = poll(POLL_MS)
            else:
                left = timeout - (time.monotonic() - start)
                if left <= 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
                events = poll(max(1, min(POLL_MS, int(left * 1000) + 1)))
            got, gone = False, []
            for fd, _ in events:
                wid = fd_wid.get(fd)
                if wid is None:
                    gone.append(fd)  # a sentinel
                    continue
                try:
                    msg = self._read_reply(fd)
                except (EOFError, OSError, ValueError):
                    self._workers[wid].join(2.0)  # its socket closed: it is exiting
                    self._check_workers(wait=True)
                    raise
                self._on_reply(wid, msg)
                got = True
            if got:
                return
            for fd in gone:  # that worker exited (reaped here: its exit code is known)
                w = self._sentinel_w[fd]
                w.join(2.0)
                if w.exitcode is None:  # alive: the sentinel was closed some other way
                    self._poll.unregister(fd)  # (the periodic check below still sees it)
            self._check_workers()

    def _read_reply(self, fd):
        """One message of a worker's socket (Connection.send's framing: a 4-byte big-endian
        length, -1 then an 8-byte one for huge messages, then the pickle)."""
        size, = _HEADER.unpack(_read_exact(fd, 4))
        if size == -1:
            size, = struct.unpack("!Q", _read_exact(fd, 8))
        return pickle.loads(_read_exact(fd, size))

    def _next_data(self):
        while True:
            # drop the tasks whose worker ended (IterableDataset) without data for them
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._task_info:
                    if not self._persistent_workers:
                        self._shutdown_workers()
                    raise StopIteration
            if self._in_order:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and len(info) == 2:
                    del self._task_info[self._rcvd_idx]
                    self._rcvd_idx += 1
                    return self._process_data(info[0], info[1])
            else:
                ready = [i for i, v in self._task_info.items() if len(v) == 2]
                if ready:
                    info = self._task_info.pop(min(ready))
                    return self._process_data(info[0], info[1])
            self._check_alive()
            if not self._task_info:
                continue
            if self._in_order and not self._spread:
                self._hurry()
            self._receive()

    def _hurry(self):
        """Tells the worker of the batch this iterator waits for, once, that it does (its
        notices pipe): a worker waits for a chunk to come back before it makes one more
        (_dl_worker._Chunks), and must not wait for one that only that batch would free."""
        info = self._task_info.get(self._rcvd_idx)
        key = (self._epoch, self._rcvd_idx)
        if info is None or len(info) != 1 or self._hurried == key:
            return
        self._hurried = key
        notices = self._book.notices[info[0]]
        if notices is not None:
            notices.hurry(self._rcvd_idx)

    def _process_data(self, wid, reply):
        if reply[0] == "spread":
            self._try_put_index()
            return self._assemble(reply[1])
        self._workers_num_tasks[wid] -= 1
        self._try_put_index()
        if reply[0] == "err":
            reply[1].reraise()
        if reply[0] == "pin":
            data = reply[1].result()
            if isinstance(data, ExceptionWrapper):
                data.reraise()
            return data
        _, blob, cid = reply
        return _load_batch(blob, None if cid is None else self._book.buffer(wid, cid))

    def _shutdown_workers(self):
        _LIVE.discard(self)
        _shutdown(self._ws)

    def __del__(self):
        ws = getattr(self, "_ws", None)
        if ws is not None:
            _shutdown(ws)


_dumps = pickle.dumps
try:
    _profiler_enabled = torch._C._autograd._profiler_enabled
except AttributeError:  # another torch: always record, as PyTorch
    def _profiler_enabled():
        return True
_HEADER = struct.Struct("!i")  # multiprocessing.Connection's frame header
POLL_MS = int(POLL_S * 1000)


def _read_exact(fd, n):
    """`n` bytes of the blocking socket `fd` (EOFError when it closes first)."""
    data = os.read(fd, n)
    if len(data) == n:
        return data
    parts = [data]
    got = len(data)
    while got < n:
        if not data:
            raise EOFError
        data = os.read(fd, n - got)
        parts.append(data)
        got += len(data)
    return b"".join(parts)


def _start(proc, fork):
    """Starts a worker. A forked one inherits the main process's objects with the garbage
    collector's record of them frozen (gc.freeze), so that its collections never write to
    the pages those objects share with the main process: each such write would copy a page
    (copy-on-write) and cost memory in every worker (PyTorch's workers pay it)."""
    import gc

    freeze = fork and gc.isenabled() and not gc.get_freeze_count()  # (not a program's own)
    if freeze:
        gc.freeze()
    try:
        proc.start()
    finally:
        if freeze:
            gc.unfreeze()  # the main process collects them as before


def _sluice_pool_conns():
    """Sockets of sluice pipelines' worker pools in this process (a forked DataLoader worker
    closes them so that those pools see their own workers' EOFs)."""
    try:
        from .. import parallel
    except ImportError:
        return []
    return [w.conn for p in list(parallel._LIVE_POOLS) for w in p.workers if not w.conn.closed]
