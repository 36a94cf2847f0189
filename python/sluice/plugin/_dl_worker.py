"""sluice.plugin._dl_worker: the worker process of sluice.plugin.pytorch.DataLoader, and the
collation and shared-memory transport both sides use.

Exports ``collate`` / ``convert`` (PyTorch's ``default_collate`` / ``default_convert`` semantics,
with the stacking step pluggable), ``ShmPickler`` / ``load_batch`` (a batch crosses the process
boundary as a small pickle whose tensors and NumPy arrays live in a shared-memory chunk) and
``dl_worker_main`` (the worker's entry point). One worker:

- starts like a sluice pipeline worker (``sluice.worker._setup_process``: SIGINT ignored,
  faulthandler, PR_SET_PDEATHSIG, parent watchdog), then as PyTorch's ``_worker_loop``: one
  intra-op thread, ``random`` and torch seeded with ``base_seed + id``, NumPy with
  ``_generate_state(base_seed, id)``, ``torch.utils.data.get_worker_info()`` (and sluice's)
  set to ``WorkerInfo(id, num_workers, seed, dataset)``, ``worker_init_fn(id)``, the dataset's
  fetcher created (``iter(dataset)`` for an IterableDataset). An exception there is sent with
  the first task.
- serves its socket in order: ``("task", epoch, idx, chunk, index)`` -> fetch + collate; the
  batch is pickled with its tensors and arrays written straight into the chunk (the default
  collate stacks the samples directly into it: no intermediate batch, no pickled tensor data).
  A sample's exception becomes that task's reply (``torch._utils.ExceptionWrapper``, PyTorch's
  wording); the worker goes on. ``("resume", epoch)`` (persistent workers, next epoch)
  re-creates the fetcher. An exhausted IterableDataset answers ``stop`` to every task.
- ends at ``None`` or EOF (``os._exit`` through multiprocessing's bootstrap).
"""
import collections
import collections.abc
import ctypes
import errno
import io
import mmap
import os
import pickle
import random
import re
import select
import struct
import sys
import time

import numpy as np
import torch

from .. import _sluice
from . import _lower

# Tensors and arrays start on 64-byte boundaries in a chunk.
ALIGN = 64
MIN_CHUNK = 64 << 10
GROWTH = 1.25
COOL_AFTER = 64  # batches a free chunk keeps its pages while the worker is busy
CAP = 2  # chunks in use a worker has before it waits for one to come back (_Chunks.get)
WAIT_S = 0.25  # how long it waits before it makes one more (and keeps the higher cap)
RECENT = 2  # it waits only when a chunk came back within its last RECENT batches
HURRIES = 1  # two waits cut short by the main process within this many batches raise the cap

_np_str_obj = re.compile(r"[SaUO]")
COLLATE_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
               "lists; found {}")
_string_classes = (str, bytes)


# ---- collation -----------------------------------------------------------------------------

def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def collate(batch, stack=None):
    """PyTorch's default_collate: a list of samples -> one batch, recursively. `stack` makes
    the batch of a list of equally shaped tensors (torch.stack by default; in a worker it
    defers the stack into the shared-memory chunk)."""
    stack = stack or _torch_stack
    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, torch.Tensor):
        if getattr(elem, "is_nested", False):
            raise RuntimeError(
                "Batches of nested tensors are not currently supported by the default "
                "collate_fn; please provide a custom collate_fn to handle them appropriately.")
        if elem.layout != torch.strided:
            raise RuntimeError(
                "Batches of sparse tensors are not currently supported by the default "
                "collate_fn; please provide a custom collate_fn to handle them appropriately.")
        return stack(batch)
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_",
                                                                     "bytes_"):
        if elem_type.__name__ in ("ndarray", "memmap"):
            if _np_str_obj.search(elem.dtype.str) is not None:
                raise TypeError(COLLATE_ERR.format(elem.dtype))
            if stack is _defer_stack or stack is _Stack:  # stacked straight from the arrays
                return _Stack.of_arrays(batch)  # (torch.as_tensor of each: the same bytes)
            return collate([torch.as_tensor(b) for b in batch], stack)
        if elem.shape == ():  # a NumPy scalar
            return torch.as_tensor(batch)
    elif isinstance(elem, float):
        return torch.tensor(batch, dtype=torch.float64)
    elif isinstance(elem, int):
        return torch.tensor(batch)
    elif isinstance(elem, _string_classes):
        return batch
    elif isinstance(elem, collections.abc.Mapping):
        out = {key: collate([d[key] for d in batch], stack) for key in elem}
        if isinstance(elem, collections.abc.MutableMapping):
            import copy

            clone = copy.copy(elem)
            clone.update(out)
            return clone
        try:
            return elem_type(out)
        except TypeError:  # the mapping type does not take a dict
            return out
    elif _is_namedtuple(elem):
        return elem_type(*(collate(samples, stack) for samples in zip(*batch)))
    elif isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        out = [collate(samples, stack) for samples in transposed]
        if isinstance(elem, tuple):
            return out
        return _rebuilt_sequence(elem, out, _TORCH_RULES[0])
    raise TypeError(COLLATE_ERR.format(elem_type))


def _rebuilt_sequence(like, items, clone):
    """A sequence of type(like) holding `items`, as this torch's default_collate /
    default_convert rebuild it: a copy of `like` with its items replaced (`clone`: newer torch,
    for a MutableSequence: its other attributes kept), else type(like)(items); a list when the
    type refuses."""
    if clone and isinstance(like, collections.abc.MutableSequence):
        try:
            import copy

            out = copy.copy(like)
            for i, v in enumerate(items):
                out[i] = v
            return out
        except TypeError:  # no copy() / __setitem__
            return items
    try:
        return type(like)(items)
    except TypeError:  # the sequence type does not take a list (range)
        return items


def _torch_container_rules():
    """(default_collate clones a MutableSequence, default_convert does): found by giving this
    torch's functions a list subclass with an attribute, which a clone keeps (newer torch) and
    type(x)(items) drops (torch 1.13)."""
    from torch.utils.data._utils import collate as tc

    class Tagged(list):
        pass

    def tagged(v):
        t = Tagged([v])
        t.sluice_probe = True
        return t

    found = []
    for fn, arg in ((tc.default_collate, [tagged(1), tagged(2)]), (tc.default_convert, tagged(1))):
        try:
            found.append(getattr(fn(arg), "sluice_probe", False) is True)
        except Exception:  # noqa: BLE001 - a torch that refuses it: the type(x)(items) rule
            found.append(False)
    return tuple(found)


_TORCH_RULES = _torch_container_rules()


def _torch_stack(batch):
    return torch.stack(batch, 0)


def convert(data):
    """PyTorch's default_convert (batch_size=None): NumPy arrays and scalars become tensors,
    containers are converted recursively, anything else is returned as it is."""
    elem_type = type(data)
    if isinstance(data, torch.Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_",
                                                                     "bytes_"):
        if elem_type.__name__ == "ndarray" and _np_str_obj.search(data.dtype.str) is not None:
            return data
        return torch.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        out = {key: convert(data[key]) for key in data}
        if isinstance(data, collections.abc.MutableMapping):
            import copy

            clone = copy.copy(data)
            clone.update(out)
            return clone
        try:
            return elem_type(out)
        except TypeError:
            return out
    if _is_namedtuple(data):
        return elem_type(*(convert(d) for d in data))
    if isinstance(data, tuple):
        return [convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, _string_classes):
        return _rebuilt_sequence(data, [convert(d) for d in data], _TORCH_RULES[1])
    return data


def is_default_collate(fn):
    """Whether `fn` collates as ``collate`` does: sluice's own, or torch's default_collate
    while torch's ``default_collate_fn_map`` (which default_collate dispatches on, and which
    programs may extend in place since torch 1.13) holds only torch's own entries; with other
    entries torch's default_collate itself is used, as any collate_fn."""
    from torch.utils.data._utils import collate as tc

    return fn is collate or (fn is tc.default_collate and _torch_map_is_default(tc))


def _torch_map_is_default(tc):
    fn_map = getattr(tc, "default_collate_fn_map", None)
    if fn_map is None:  # a torch without the map: default_collate is fixed
        return True
    keys = {torch.Tensor, np.ndarray, (np.bool_, np.number, np.object_), float, int, str, bytes,
            (str, bytes)}
    return all(k in keys and getattr(v, "__module__", None) == tc.__name__
               for k, v in fn_map.items())


def is_default_convert(fn):
    from torch.utils.data._utils import collate as tc

    return fn is tc.default_convert or fn is convert


class _Stack:
    """A batch of equally shaped tensors to be stacked straight into the chunk (`dtype`: their
    torch dtype; `arrays`: NumPy arrays of one dtype and shape, whose torch.as_tensor()
    PyTorch would stack, rather than tensors)."""

    __slots__ = ("tensors", "dtype", "arrays")

    def __init__(self, tensors, dtype=None, arrays=False):
        self.tensors, self.dtype, self.arrays = tensors, dtype, arrays

    @classmethod
    def of_arrays(cls, batch):
        first = torch.as_tensor(batch[0])  # PyTorch's errors for what torch cannot hold
        dt, shape = batch[0].dtype, batch[0].shape
        if all(b.dtype == dt and b.shape == shape for b in batch):
            return cls(batch, first.dtype, True)
        return cls([first] + [torch.as_tensor(b) for b in batch[1:]])  # torch.stack's error


def _shm_collate(batch):
    return collate(batch, _defer_stack)


def _defer_stack(batch):
    """CPU tensors are stacked later, straight into the chunk; tensors on another device
    (CUDA: PyTorch's test_multiprocessing_contexts with spawn) are stacked here by torch.stack
    on their device, as PyTorch's default_collate does in its workers, and travel through
    ForkingPickler (CUDA IPC; ShmPickler.persistent_id leaves them alone): a chunk is host
    memory."""
    if all(t.device.type == "cpu" for t in batch):
        return _Stack(batch)
    return torch.stack(batch, 0)


def _shm_convert(data):
    return convert(data)


# ---- the transport -------------------------------------------------------------------------

def _plain_tensor(obj):
    return (type(obj) is torch.Tensor and not getattr(obj, "is_nested", False)
            and obj.device.type == "cpu" and obj.layout == torch.strided
            and not obj.is_quantized and not obj.requires_grad)


def _forking_pickler():
    from multiprocessing.reduction import ForkingPickler

    return ForkingPickler


class ShmPickler(_forking_pickler()):
    """Pickles a batch; its plain CPU tensors, deferred stacks and numeric NumPy arrays are
    laid out in a chunk instead (`self.items`: (offset, nbytes, kind, source, dtype, shape));
    `self.size` is the bytes the chunk needs. Anything else goes through multiprocessing's
    ForkingPickler, with the reductions torch registers there (CUDA tensors, tensor
    subclasses, nested tensors travel as torch.multiprocessing sends them)."""

    def __init__(self, buf):
        super().__init__(buf, pickle.HIGHEST_PROTOCOL)
        self.items, self.size = [], 0

    def _place(self, kind, nbytes, src, dtype, shape):
        off = (self.size + ALIGN - 1) // ALIGN * ALIGN
        self.items.append((off, nbytes, kind, src, dtype, shape))
        self.size = off + nbytes
        return (kind, off, nbytes, str(dtype) if kind != "n" else dtype.str, shape)

    def persistent_id(self, obj):
        if type(obj) is _lower.Images:  # decoded by C straight into the chunk (write)
            return self._place("s", obj.nbytes, obj, obj.dtype, obj.shape)
        if isinstance(obj, _Stack):
            first = obj.tensors[0]
            shape = (len(obj.tensors),) + tuple(first.shape)
            if obj.arrays:
                return self._place("s", first.nbytes * len(obj.tensors), obj, obj.dtype, shape)
            nbytes = first.element_size() * first.numel() * len(obj.tensors)
            return self._place("s", nbytes, obj, first.dtype, shape)
        if _plain_tensor(obj):
            return self._place("t", obj.element_size() * obj.numel(), obj, obj.dtype,
                               tuple(obj.shape))
        if type(obj) is np.ndarray and obj.dtype.kind in "biufc" and not obj.dtype.hasobject:
            return self._place("n", obj.nbytes, obj, obj.dtype, obj.shape)
        return None

    def write(self, mm, base):
        """Writes the items into the chunk (`mm` its mapping, `base` a uint8 tensor over it):
        contiguous data with memmove (torch.stack's and copy_'s element loops cost twice as
        much), the rest as PyTorch copies it."""
        addr = ctypes.addressof(mm)
        for off, nbytes, kind, src, dtype, shape in self.items:
            if not nbytes:
                continue
            if kind == "n":
                if src.flags.c_contiguous:
                    _memmove(addr + off, src.__array_interface__["data"][0], nbytes)
                else:
                    np.copyto(np.frombuffer(mm, dtype, nbytes // dtype.itemsize,
                                            off).reshape(shape), src)
            elif kind == "s" and type(src) is _lower.Images:
                src.write(mm, off)
            elif kind == "s":
                _write_stack(src, addr + off, nbytes, lambda: _view(base, off, nbytes, dtype,
                                                                    shape))
            elif _flat(src):
                _memmove(addr + off, src.data_ptr(), nbytes)
            else:
                _view(base, off, nbytes, dtype, shape).copy_(src)


def _flat(t):
    """Whether tensor `t`'s bytes are its values, in order, in CPU memory (and torch.stack
    would take it as it is: no grad, no subclass)."""
    return (type(t) is torch.Tensor and t.is_cpu and t.layout == torch.strided
            and t.is_contiguous() and not (t.requires_grad or t.is_conj() or t.is_neg()
                                           or t.is_quantized))


def _write_stack(st, addr, nbytes, view):
    """The rows of a _Stack written at `addr` (`view()`: a tensor over the destination)."""
    items = st.tensors
    rb = nbytes // len(items)
    if st.arrays:  # contiguous arrays: one C call copies them all (_sluice._dl_gather)
        if not _gather(addr, items, rb):
            out = view().numpy()
            for i, a in enumerate(items):
                np.copyto(out[i], a, casting="no")
        return
    t0 = items[0]
    dt, shape = t0.dtype, t0.shape
    if not (all(t.dtype == dt and t.shape == shape and _flat(t) for t in items)
            and _gather(addr, [t.data_ptr() for t in items], rb)):
        torch.stack(items, 0, out=view())  # torch.stack's checks, errors and strided copies


_TORCH_DTYPES = {str(d): d for d in (
    torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.uint8, torch.int8,
    torch.int16, torch.int32, torch.int64, torch.bool, torch.complex64, torch.complex128)}


def _view(base, off, nbytes, dtype, shape):
    """A tensor of `dtype`/`shape` over bytes [off, off + nbytes) of the uint8 tensor `base`."""
    if nbytes == 0:
        return torch.empty(shape, dtype=dtype)
    return base[off:off + nbytes].view(dtype).view(shape)


def load_batch(blob, buffer, views=None):
    """The batch a worker sent: `blob` unpickled over `buffer` (a memoryview of the chunk, or
    None when the batch has no tensors). The tensors and arrays are views of the chunk (they
    keep `buffer` alive); the tensors are appended to `views` when it is a list."""
    base = [None]

    def persistent_load(pid):
        kind, off, nbytes, dtype, shape = pid
        if base[0] is None:
            base[0] = torch.frombuffer(buffer, dtype=torch.uint8)
        if kind != "n":
            t = _view(base[0], off, nbytes, _TORCH_DTYPES[dtype], shape)
            if views is not None and nbytes:
                views.append(t)
            return t
        dt = np.dtype(dtype)
        if nbytes == 0:
            return np.empty(shape, dt)
        return np.frombuffer(buffer, dt, nbytes // dt.itemsize, off).reshape(shape)

    up = pickle.Unpickler(io.BytesIO(blob))
    up.persistent_load = persistent_load
    return up.load()


# ---- per-sample spreading (batch_assignment="sample") -------------------------------------
#
# The samples of one batch are computed by several workers straight into one chunk that the
# main process created: leaf k of the samples (their plain CPU tensors and numeric NumPy
# arrays, in pickling order) is a region of B rows, row p holding sample p's leaf. The layout
# is a pure function of the samples' signature (each leaf's kind, dtype and shape) and B, so
# every worker computes the same one; a sample whose signature differs from the one the main
# process expects travels pickled instead (the first batch of an epoch, ragged samples).

def _itemsize(kind, dtype):
    if kind == "n":
        return np.dtype(dtype).itemsize
    return torch.empty((), dtype=_TORCH_DTYPES[dtype]).element_size()


def row_layout(sig, rows):
    """[(offset, bytes per row)] of each leaf of signature `sig` for a batch of `rows`
    samples, and the chunk size needed."""
    out, size = [], 0
    for kind, dtype, shape in sig:
        n = 1
        for d in shape:
            n *= d
        off = (size + ALIGN - 1) // ALIGN * ALIGN
        rb = n * _itemsize(kind, dtype)
        out.append((off, rb))
        size = off + rb * rows
    return out, size


_MASK64 = (1 << 64) - 1


def sample_seed(base_seed, epoch, number):
    """The seed of sample `number` (its place in the epoch's sample order) of epoch `epoch` of an
    iterator with `base_seed`: SplitMix64 of the three, the same whichever worker computes it."""
    z = (base_seed * 0x9E3779B97F4A7C15 + (epoch + 1) * 0xBF58476D1CE4E5B9
         + (number + 1) * 0x94D049BB133111EB) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def seed_sample(seed):
    """`random`, torch and NumPy's global generators seeded for one sample."""
    random.seed(seed)
    torch.manual_seed(seed)
    np.random.seed([seed & 0xFFFFFFFF, seed >> 32])


class _RowPickler(pickle.Pickler):
    """Pickles one sample, leaving out its leaves (`self.leaves`: (kind, object))."""

    def __init__(self, buf):
        super().__init__(buf, pickle.HIGHEST_PROTOCOL)
        self.leaves = []

    def persistent_id(self, obj):
        if _plain_tensor(obj) and str(obj.dtype) in _TORCH_DTYPES:
            kind = "t"
        elif type(obj) is np.ndarray and obj.dtype.kind in "biufc" and not obj.dtype.hasobject:
            kind = "n"
        else:
            return None
        self.leaves.append((kind, obj))
        return ("L", len(self.leaves) - 1)

    def signature(self):
        return tuple((k, str(o.dtype) if k == "t" else o.dtype.str, tuple(o.shape))
                     for k, o in self.leaves)


def _fill_part(samples, start, rows, sig, chunk):
    """[(position, "row" or "val", pickle, signature)] of a part of a batch; the samples that
    match `sig` are written into their rows of `chunk` ((mapping, uint8 tensor) or None)."""
    offs = row_layout(sig, rows)[0] if sig is not None and chunk is not None else None
    out = []
    for j, sample in enumerate(samples):
        pos = start + j
        buf = io.BytesIO()
        p = _RowPickler(buf)
        p.dump(sample)
        mine = p.signature()
        if offs is not None and mine == sig and mine:
            mm, base = chunk
            for (off, rb), (kind, obj), (_, dtype, shape) in zip(offs, p.leaves, sig):
                if not rb:
                    continue
                at = off + pos * rb
                if kind == "n":
                    np.copyto(np.frombuffer(mm, obj.dtype, obj.size, at).reshape(shape), obj)
                else:
                    _view(base, at, rb, obj.dtype, shape).copy_(obj)
            out.append((pos, "row", buf.getvalue(), mine))
        else:
            out.append((pos, "val", pickle.dumps(sample, pickle.HIGHEST_PROTOCOL), mine))
    return out


class RowStack:
    """The `stack` of collate() in the main process: tensors that are consecutive rows of
    the chunk (`base`, a uint8 tensor over it) become a view of those rows, no copy; anything
    else is stacked as torch.stack does. `self.views`: the ids of the views returned."""

    def __init__(self, base):
        self.base, self.views = base, set()

    def __call__(self, tensors):
        t0 = tensors[0]
        base = self.base
        if base is not None and t0.is_contiguous():
            rb = t0.numel() * t0.element_size()
            p0 = t0.data_ptr() - base.data_ptr()
            n = len(tensors)
            if rb and 0 <= p0 and p0 + n * rb <= base.numel() and all(
                    t.dtype == t0.dtype and t.shape == t0.shape and t.is_contiguous()
                    and t.data_ptr() == t0.data_ptr() + i * rb for i, t in enumerate(tensors)):
                v = base[p0:p0 + n * rb].view(t0.dtype).view((n,) + tuple(t0.shape))
                self.views.add(id(v))
                return v
        return torch.stack(tensors, 0)


def load_samples(entries, sig, rows, buffer):
    """The samples of a batch in position order: `entries` from _fill_part, rows of `buffer`
    (a memoryview of the chunk, or None) read as views."""
    base = torch.frombuffer(buffer, dtype=torch.uint8) if buffer is not None else None
    offs = row_layout(sig, rows)[0] if base is not None else None
    out = []
    for pos, kind, blob, _ in sorted(entries, key=lambda e: e[0]):
        if kind == "val":
            out.append(pickle.loads(blob))
            continue

        def persistent_load(pid, pos=pos):
            k = pid[1]
            off, rb = offs[k]
            leaf, dtype, shape = sig[k]
            at = off + pos * rb
            if leaf == "n":
                dt = np.dtype(dtype)
                if not rb:
                    return np.empty(shape, dt)
                return np.frombuffer(buffer, dt, rb // dt.itemsize, at).reshape(shape)
            return _view(base, at, rb, _TORCH_DTYPES[dtype], shape)

        up = pickle.Unpickler(io.BytesIO(blob))
        up.persistent_load = persistent_load
        out.append(up.load())
    return out, base


# ---- the worker ----------------------------------------------------------------------------

class _Unmap:
    """Unmaps a mapping when the buffer that owns it is collected (`before`, when set, is
    called first: the main process's pin_memory un-registers a page-locked chunk)."""

    __slots__ = ("addr", "size", "before")

    def __init__(self, addr, size):
        self.addr, self.size, self.before = addr, size, None

    def __del__(self):
        if self.before is not None:
            try:
                self.before()
            except Exception:  # noqa: BLE001 - CUDA torn down at exit: the unmap still counts
                pass
        _libc().munmap(self.addr, self.size)


_LIBC = None
_memmove = ctypes.memmove
_gather = _sluice._dl_gather
_NOTICE = struct.Struct("<I")  # a free-chunk notice: chunk id << 1 | pinned, or HURRY | idx
HURRY = 1 << 31  # the main process waits for the batch of task idx (_Chunks.wait)
HURRY_MASK = HURRY - 1


def _libc():
    global _LIBC
    if _LIBC is None:
        import ctypes

        lib = ctypes.CDLL(None, use_errno=True)
        lib.mmap.restype = ctypes.c_void_p
        lib.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                             ctypes.c_int, ctypes.c_long]
        lib.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        lib.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        _LIBC = lib
    return _LIBC


def release_pages(buf):
    """Gives the memory of a chunk that is free again back to the system (madvise
    MADV_REMOVE: the pages leave the memfd, for every process mapping it; the next batch
    written there faults in new ones), so that idle chunks cost address space, not memory. A
    chunk page-locked for pin_memory keeps its pages (CUDA holds them)."""
    import ctypes

    if getattr(buf, "_sluice_pinned", False):
        return
    _libc().madvise(ctypes.addressof(buf), ctypes.sizeof(buf), mmap.MADV_REMOVE)


def map_shared(fd, size):
    """A writable buffer (ctypes array) over a MAP_SHARED mapping of `fd`; the fd may be closed
    right after (Python's mmap keeps a dup of it open for the mapping's lifetime, and a program
    holding thousands of batches would run out of fds). Unmapped when the buffer and every
    view of it are gone."""
    import ctypes

    addr = _libc().mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, 0)
    if addr is None or addr == ctypes.c_void_p(-1).value:
        e = ctypes.get_errno()
        raise OSError(e, f"mmap of a shared-memory chunk of {size} bytes: {os.strerror(e)}")
    buf = (ctypes.c_ubyte * size).from_address(addr)
    buf._unmap = _Unmap(addr, size)
    return buf


class _Chunks:
    """This worker's chunks: mappings of memfds it created, and which of them are free. The
    worker picks a chunk when a batch is collated (as PyTorch's worker allocates a batch's
    shared memory then), so chunks hold the batches that exist, not the tasks queued; the main
    process says which are free again through the `notices` pipe (4-byte records, chunk id << 1
    | pinned, written by the finalizer of a batch's views). A free chunk keeps its pages while
    it is reused (no page faults in either process); one left free for COOL_AFTER batches,
    or while the worker idles, gives its pages back (madvise MADV_REMOVE). A chunk that
    must grow is replaced by a new memfd (its fd goes to the main process, which maps it in
    place of the old one); no fd is kept open here, so a program holding thousands of batches
    exhausts no fd limit.

    The chunks that exist are what is in flight. A worker that needs a chunk when none is free
    and it has `cap` of them waits, up to WAIT_S, for one to come back rather than make
    another, when chunks have been coming back or none came yet (a program that keeps its
    batches sends no notice: after one wait that times out, the worker waits no more until
    one comes), and never for the batch the main process is waiting for (it says so through
    the notices pipe, HURRY: it holds the chunks in use and waits for this batch — the first
    batch of an epoch while the program holds the last one of the epoch before, from the
    same worker; two batches held at a time): that batch takes a free chunk beyond the cap
    (with its pages while it is used now and then: COOL_AFTER) or a new one, and the cap
    stays, unless that happens at two batches in a row (HURRIES: the program holds more
    batches than the cap at every step: the worker writes ahead again). `cap` (CAP) is 2: the batch
    the main process holds (or the one queued for it) and the one written now. A wait that
    times out raises `cap` by one for good: the program holds more batches than that (a
    step longer than WAIT_S, a reorder buffer waiting for another worker, a pin thread's
    queue), and later batches make the chunk they need at once. (Before the cap, a worker
    wrote ahead into a new chunk whenever none was free, and every chunk kept its pages for
    COOL_AFTER batches: 3-4 chunks with one worker, 3 each with two. Faster with the cap,
    measured on `asis` batches at real-time priority — so that wake-ups cost what they cost
    on a quiet machine: docs/performance.md, "Ready arrays: memory (sixth session)". One
    chunk per worker with several workers, tried too, leaves one worker writing at a time:
    20 % slower with two.)
    """

    def __init__(self, wid, notices, cap=CAP):
        self.wid, self.chunks = wid, {}  # id -> [mmap, size, uint8 tensor]
        self.notices = notices  # the read end's fd (non-blocking), or None
        self.free = []          # [id, batch count when freed, pages held], most recent last
        self.pinned = set()     # page-locked by the main process: they keep their pages
        self.next_id = 0
        self.count = 0          # chunks handed out so far
        self.cap = cap          # chunks made before waiting for a free one
        self.noticed = 0        # self.count when the last notice came (None: after a wait
        # that timed out, until the next notice)
        self.hurry = None       # the batch (idx & HURRY_MASK) the main process waits for
        self.hurried = None     # self.count at the last wait the main process cut short

    def drain(self):
        """Reads the notices that arrived (chunks free again)."""
        while self.notices is not None:
            try:
                data = os.read(self.notices, 4096)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:  # the main process closed its end
                self.notices = None
                return
            for (rec,) in _NOTICE.iter_unpack(data):
                if rec & HURRY:
                    self.hurry = rec & HURRY_MASK
                    continue
                self.noticed = self.count
                cid = rec >> 1
                if rec & 1:
                    self.pinned.add(cid)
                if cid in self.chunks:
                    self.free.append([cid, self.count, True])

    def cool(self, idle=False):
        """Gives back the pages of the free chunks that stayed free for COOL_AFTER batches of
        this worker, but for the most recently freed one (a spare: a notice that comes late,
        after the worker needed a chunk, costs no page faults); all of them when `idle`.
        Pinned chunks keep their pages. (After one batch, as before, a loaded machine's late
        notices made the worker take a cold chunk every few dozen batches: 1,200 page faults
        for a 4.8 MB batch, in the worker and again in the main process.)"""
        for f in self.free if idle else self.free[:-1]:
            if f[2] and (idle or f[1] < self.count - COOL_AFTER) and f[0] not in self.pinned:
                release_pages(self.chunks[f[0]][0])
                f[2] = False

    def get(self, need, idx=None):
        """(chunk id, mapping, uint8 tensor over it, fd of a new memfd to send or None) for
        the batch of task `idx`."""
        self.drain()
        if len(self.chunks) - len(self.free) >= self.cap:
            self.wait(idx)
        self.count += 1
        pick = None
        for k in range(len(self.free) - 1, -1, -1):  # the most recently freed that fits
            if self.chunks[self.free[k][0]][1] >= need:
                pick = k
                break
        if pick is not None:
            cid = self.free.pop(pick)[0]
            self.cool()
            c = self.chunks[cid]
            return cid, c[0], c[2], None
        if self.free:  # the most recently freed chunk grows, with headroom (batches vary)
            cid = self.free.pop()[0]
            size = int(need * GROWTH)
            self.chunks[cid][2] = None  # the old mapping goes with its last view
        else:
            cid, size = self.next_id, need  # a new chunk fits its first batch
            self.next_id += 1
        self.cool()
        size = max(size, MIN_CHUNK)
        size = (size + MIN_CHUNK - 1) // MIN_CHUNK * MIN_CHUNK
        fd = os.memfd_create(f"sluice-dl-w{self.wid}-c{cid}", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, size)
            try:
                os.posix_fallocate(fd, 0, size)
            except OSError as e:
                if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                    raise MemoryError(f"sluice DataLoader worker {self.wid}: cannot reserve "
                                      f"{size} bytes of shared memory for a batch: {e}") from None
            mm = map_shared(fd, size)
        except BaseException:
            os.close(fd)
            self.chunks.pop(cid, None)
            raise
        self.chunks[cid] = [mm, size, torch.frombuffer(mm, dtype=torch.uint8)]
        self.pinned.discard(cid)
        return cid, mm, self.chunks[cid][2], fd

    def wait(self, idx):
        """Waits up to WAIT_S for one of the `cap` chunks in use to come back (see the
        class): not when the main process waits for this batch (`idx`), and it raises the cap
        when none comes."""
        if self.notices is None or self.noticed is None or self.count - self.noticed > RECENT:
            return
        deadline = time.monotonic() + WAIT_S
        mine = None if idx is None else idx & HURRY_MASK
        while len(self.chunks) - len(self.free) >= self.cap and self.notices is not None:
            if mine is not None and self.hurry == mine:
                if self.hurried is not None and self.count - self.hurried <= HURRIES:
                    self.cap += 1  # the program holds more batches than the cap, always
                self.hurried = self.count
                return  # a free chunk beyond the cap (or a new one) for this batch
            left = deadline - time.monotonic()
            if left <= 0:
                self.cap, self.noticed = len(self.chunks) - len(self.free) + 1, None
                return
            select.select([self.notices], [], [], left)
            self.drain()

    def put_back(self, cid, fd):
        """A chunk taken by get() that carries no batch after all (the batch failed)."""
        if fd is not None:  # a new memfd the main process never saw: dropped
            os.close(fd)
            self.chunks.pop(cid, None)
        else:
            self.free.append([cid, self.count, True])


class _Fetcher:
    """PyTorch's dataset fetchers: a batch of indices (or one index without auto-collation)
    -> collated data; an IterableDataset's iterator is created here (errors go with the first
    task). `lower`: batches of a torchvision ImageFolder whose transform sluice knows are
    made in C (_lower.py) when the collation is the default one."""

    def __init__(self, kind_iterable, dataset, auto_collation, collate_fn, drop_last,
                 lower=False):
        self.iterable, self.dataset = kind_iterable, dataset
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, \
            drop_last
        self.ended = False
        self.it = iter(dataset) if kind_iterable else None
        self.lower = (lower and auto_collation and not kind_iterable
                      and (collate_fn is _shm_collate or collate_fn is collate))

    def fetch(self, index):
        if self.iterable:
            if self.ended:
                raise StopIteration
            if self.auto_collation:
                data = []
                for _ in index:
                    try:
                        data.append(next(self.it))
                    except StopIteration:
                        self.ended = True
                        break
                if not data or (self.drop_last and len(data) < len(index)):
                    raise StopIteration
            else:
                data = next(self.it)
            return self.collate_fn(data)
        if self.auto_collation:
            plan = _lower.plan_of(self.dataset) if self.lower else None
            if plan is not None:
                data = _lower.fetch(plan, self.dataset, index, self.collate_fn)
                if self.collate_fn is collate:  # no worker: the batch is a tensor now
                    data[0] = data[0].tensor()
                return data
            getitems = getattr(self.dataset, "__getitems__", None)
            if getitems:
                data = getitems(index)
            else:
                data = [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


def _wrap_exception(wid):
    from torch._utils import ExceptionWrapper

    w = ExceptionWrapper(where=f"in DataLoader worker process {wid}")
    try:
        pickle.dumps(w)
    except Exception:  # noqa: BLE001 - a class the main process cannot load by reference
        w.exc_type = RuntimeError
    return w


def _set_worker_info(info):
    from torch.utils.data._utils import worker as tw

    from .. import worker as sw

    tw._worker_info = info
    sw._info = info


def torch_worker_info(tw, wid, num_workers, seed, dataset, torch_generator):
    """torch's WorkerInfo for worker `wid` (`tw`: torch.utils.data._utils.worker). Newer torch
    makes it a dataclass that also holds the worker's generators (``rng``: random's, torch's
    and NumPy's global ones in a process worker) and ``worker_method`` ("multiprocessing"):
    given where its fields name them (torch 1.13's takes any keyword, so the fields decide)."""
    kw = dict(id=wid, num_workers=num_workers, seed=seed, dataset=dataset)
    fields = getattr(tw.WorkerInfo, "__dataclass_fields__", {})
    rng_cls = getattr(tw, "_RNG", None)
    if "rng" in fields and rng_cls is not None:
        try:
            kw["rng"] = rng_cls(random_generator=getattr(random, "_inst", None),
                                torch_generator=torch_generator,
                                numpy_generator=getattr(np.random.mtrand, "_rand", None))
        except TypeError:  # a torch whose _RNG has other fields: its default (None)
            pass
    if "worker_method" in fields:
        kw["worker_method"] = "multiprocessing"
    return tw.WorkerInfo(**kw)


def dl_worker_main(conn, wid, num_workers, base_seed, parent_pid, pdeathsig, close_fds, cfg,
                   notices=None):
    """Entry point of a DataLoader worker (multiprocessing target). `cfg`: (iterable, dataset,
    auto_collation, collate_fn, drop_last, worker_init_fn); `notices`: the read end of the
    pipe of free-chunk notices (a Connection, read as raw 4-byte records; see _Chunks)."""
    from torch.utils.data._utils import worker as tw

    from .. import worker as sw

    if parent_pid < 0:  # forkserver: the parent is the fork server; watch the main process too
        _watch_pid(-parent_pid)
        parent_pid = os.getppid()
    sw._setup_process(wid, parent_pid, pdeathsig, close_fds)
    iterable, dataset, auto_collation, collate_fn, drop_last, init_fn, shared_seed = cfg[:7]
    lower = len(cfg) > 7 and cfg[7]  # lower_transforms (_lower.py)
    torch.set_num_threads(1)
    seed = base_seed + wid
    random.seed(seed)
    torch_generator = torch.manual_seed(seed)
    np.random.seed(tw._generate_state(base_seed, wid))
    dataset = _seed_datapipe(dataset, shared_seed)
    _set_worker_info(torch_worker_info(tw, wid, num_workers, seed, dataset, torch_generator))
    if collate_fn is None:
        collate_fn = _shm_collate if auto_collation else _shm_convert
    init_error, fetcher = None, None
    try:
        if init_fn is not None:
            init_fn(wid)
    except Exception:  # noqa: BLE001 - PyTorch's rule: raised with the first task
        init_error = _wrap_exception(wid)
    try:  # after a failed worker_init_fn too: the other batches of a map-style dataset load
        fetcher = _Fetcher(iterable, dataset, auto_collation, collate_fn, drop_last, lower)
    except Exception:  # noqa: BLE001 - iter(dataset) failed: raised with the first task
        init_error = init_error or _wrap_exception(wid)
    try:
        _serve(conn, wid, fetcher, init_error, [iterable, dataset, auto_collation, collate_fn,
                                               drop_last, lower], base_seed, notices)
    except (BrokenPipeError, ConnectionResetError, EOFError):
        pass  # the main process closed the loader (or is gone) while this worker worked
    finally:
        sys.stdout.flush() if sys.stdout else None


def _watch_pid(pid):
    """Exits this worker when process `pid` is gone."""
    import threading
    import time

    def loop():
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:
                pass
            time.sleep(0.5)

    threading.Thread(target=loop, name="sluice-main-watchdog", daemon=True).start()


def _seed_datapipe(dataset, shared_seed):
    """PyTorch's rule for an IterDataPipe: its random operations seeded with the seed shared
    by all workers of an epoch."""
    if shared_seed is None:
        return dataset
    from torch.utils.data.graph_settings import apply_random_seed

    rng = torch.Generator()
    rng.manual_seed(shared_seed)
    return apply_random_seed(dataset, rng)


def _reader(conn, inbox):
    """Reads the main process's messages as they come, so that the main process never blocks
    sending tasks to a worker that is itself blocked sending a result (PyTorch's queues have
    feeder threads for the same reason). A ("chunk", id, generation, size) message is followed
    by the chunk's fd: mapped here, the mapping queued instead."""
    from multiprocessing import reduction

    while True:
        try:
            msg = conn.recv()
            if msg is not None and msg[0] == "chunk":
                fd = reduction.recv_handle(conn)
                try:
                    msg = ("chunk", msg[1], msg[2], map_shared(fd, msg[3]))
                finally:
                    os.close(fd)
        except (EOFError, OSError):
            msg = None
        inbox.put(msg)
        if msg is None:
            return


def _serve_part(msg, wid, dataset, base_seed, shared):
    """A part of a batch (batch_assignment="sample"): its samples computed, each seeded with
    its own seed, and written into the batch's chunk. The reply."""
    _, t_epoch, idx, cid, sig, rows, start, indices, first = msg
    try:
        getitems = getattr(dataset, "__getitems__", None)
        if getitems:  # one call for the part: seeded with its first sample's seed
            seed_sample(sample_seed(base_seed, t_epoch, first))
            samples = getitems(indices)
        else:
            samples = []
            for j, i in enumerate(indices):
                seed_sample(sample_seed(base_seed, t_epoch, first + j))
                samples.append(dataset[i])
        chunk = shared.get(cid)
        entries = _fill_part(samples, start, rows, sig, None if chunk is None else chunk[1:])
    except Exception:  # noqa: BLE001 - raised by the next() of that batch
        return ("perr", t_epoch, idx, cid, (len(indices), start, _wrap_exception(wid)))
    return ("part", t_epoch, idx, cid, (len(indices), start, entries))


IDLE_S = 1.0  # a worker without a task this long gives back the pages of its free chunks


def _serve(conn, wid, fetcher, init_error, fetch_args, base_seed=0, notices=None):
    import queue
    import threading
    from multiprocessing import reduction

    inbox = queue.SimpleQueue()
    threading.Thread(target=_reader, args=(conn, inbox), name="sluice-dl-reader",
                     daemon=True).start()
    nfd = None
    if notices is not None:
        nfd = notices.fileno()
        os.set_blocking(nfd, False)
    chunks = _Chunks(wid, nfd)
    shared = {}  # batch chunks of the main process (sample mode): id -> (gen, mapping, tensor)
    epoch = 0
    while True:
        try:
            msg = inbox.get(timeout=IDLE_S)
        except queue.Empty:
            chunks.drain()
            chunks.cool(idle=True)
            continue
        if msg is None:
            return
        if msg[0] == "chunk":
            shared[msg[1]] = (msg[2], msg[3], torch.frombuffer(msg[3], dtype=torch.uint8))
            continue
        if msg[0] == "part":
            if init_error is not None:
                conn.send(("perr", msg[1], msg[2], msg[3], (len(msg[7]), msg[6], init_error)))
                init_error = None
                continue
            conn.send(_serve_part(msg, wid, fetch_args[1], base_seed, shared))
            continue
        if msg[0] == "resume":
            epoch = msg[1]
            fetch_args[1] = _seed_datapipe(fetch_args[1], msg[2])
            try:
                fetcher = _Fetcher(*fetch_args)
            except Exception:  # noqa: BLE001 - the new epoch's iter() failed
                fetcher, init_error = None, _wrap_exception(wid)
            continue
        _, t_epoch, idx, _, index = msg  # (the chunk is chosen when the batch is collated)
        if init_error is not None:
            conn.send(("err", t_epoch, idx, None, init_error))
            init_error = None
            continue
        if fetcher is None or t_epoch != epoch:
            conn.send(("stop", t_epoch, idx, None, None))
            continue
        try:
            data = fetcher.fetch(index)
        except StopIteration:
            if fetcher.iterable:
                conn.send(("stop", t_epoch, idx, None, None))
                continue
            data_err = _wrap_exception(wid)  # a map-style dataset raising StopIteration
            conn.send(("err", t_epoch, idx, None, data_err))
            continue
        except Exception:  # noqa: BLE001 - the sample's error, raised at its batch
            conn.send(("err", t_epoch, idx, None, _wrap_exception(wid)))
            continue
        fd = cid = None
        try:
            buf = io.BytesIO()
            p = ShmPickler(buf)
            p.dump(data)
            if p.items:
                cid, mm, base, fd = chunks.get(p.size, idx)
                p.write(mm, base)
            blob, shm = buf.getvalue(), bool(p.items)
            del data, p
        except Exception:  # noqa: BLE001 - an unpicklable batch, a ragged stack, no memory
            if cid is not None:
                chunks.put_back(cid, fd)
            conn.send(("err", t_epoch, idx, None, _wrap_exception(wid)))
            continue
        size = 0 if fd is None else chunks.chunks[cid][1]
        # what conn.send() would write, without ForkingPickler's per-call copy of its
        # dispatch table (the reply holds bytes and numbers only)
        conn.send_bytes(pickle.dumps(("ok", t_epoch, idx, cid, (blob, size, shm)),
                                     pickle.HIGHEST_PROTOCOL))
        if fd is not None:
            try:
                reduction.send_handle(conn, fd, os.getppid())
            finally:
                os.close(fd)
