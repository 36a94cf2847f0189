"""sluice.worker: what runs inside the worker processes of parallel external sources.

Exports ``get_worker_info()`` (also ``sluice.get_worker_info``), ``WorkerInfo``, and the
worker's entry point ``worker_main`` (started by ``sluice.parallel.WorkerPool``). One worker:

- starts: SIGINT ignored (Ctrl-C is the main process's business: it shuts the pool down),
  ``faulthandler`` on (a segfault prints the worker's Python stack), the process named
  ``sluice-w<id>``, ``PR_SET_PDEATHSIG(SIGKILL)`` when the pool was started from the main
  thread, and in every case a watchdog thread that exits the worker within 0.5 s of its parent
  dying (PyTorch's manager watchdog: ``os.getppid()`` changes). Then it seeds Python's
  ``random``, NumPy's global generator and, if the parent imported it, torch, with this
  worker's seed (distinct per worker, derived from the pipeline seed), publishes
  ``get_worker_info()`` and calls ``py_worker_init(worker_id)``; an exception there is sent
  back with the worker's first task (PyTorch's rule), the worker keeps serving.
- serves its index queue (one duplex socket with the main process, in order): a task names a
  source, what to compute (sample range, batch, or the next batch of an iterable) and a
  shared-memory chunk to write the result into. The result is written into that chunk (a
  memfd this worker created; grown, with ``posix_fallocate`` so that running out of memory is an
  error of the task, not a SIGBUS, and its fd sent again to the main process when it grows);
  the reply is a small message: where each sample lies, its dtype and shape. A Python
  exception (the source's own, or a wrong type/dtype/number of outputs found here, named with
  the source and the sample) becomes that task's reply, with the formatted traceback; the
  worker goes on. ``StopIteration`` ends the epoch: a task that met it says how many samples it
  got before.
- ends at ``None`` or EOF on its socket, or by the watchdog; exiting is ``os._exit`` (the
  multiprocessing bootstrap), so nothing of the parent's state inherited by ``fork`` is
  finalised here.
"""
import errno
import faulthandler
import os
import pickle
import random
import signal
import sys
import threading
import time
import traceback

import numpy as np

from . import _sluice
from .external_source import BatchInfo, SampleInfo, _fresh_iterator, to_numpy, to_samples

# Samples start on 64-byte boundaries in a chunk (what the pipeline's own buffers use).
ALIGN = 64
# Smallest chunk, and headroom when a chunk grows (samples of one source vary in size).
MIN_CHUNK = 64 << 10
GROWTH = 1.25

# numpy dtype.str -> sl_dtype index, for every element type sluice has.
DTYPE_CODES = {np.dtype(name).str: code for code, name in enumerate(_sluice.DTYPE_NAMES)
               if name != "invalid"}


class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: ``id`` (0 ..
    ``num_workers`` - 1), ``num_workers`` and ``seed`` (this worker's seed; Python's ``random``,
    NumPy's global generator and torch, when imported, were seeded from it). Read-only."""

    __slots__ = ("id", "num_workers", "seed")

    def __init__(self, id, num_workers, seed):  # noqa: A002 - PyTorch's attribute name
        for k, v in (("id", id), ("num_workers", num_workers), ("seed", seed)):
            object.__setattr__(self, k, v)

    def __setattr__(self, key, value):
        raise AttributeError(f"WorkerInfo is read-only: cannot set {key!r}")

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed})"


_info = None


def get_worker_info():
    """In a worker process of a parallel external source: its ``WorkerInfo`` (id, num_workers,
    seed). In the main process: None."""
    return _info


def worker_seed(pipeline_seed, worker_id):
    """The seed of worker `worker_id` of a pipeline whose seed is `pipeline_seed` (the C
    pipeline's: the one given, or the fresh one drawn when none was): distinct per worker, the
    same for the same pipeline seed (a SeedSequence hash, as PyTorch seeds NumPy since 1.9)."""
    entropy = int(pipeline_seed) & (2**64 - 1)
    words = np.random.SeedSequence(entropy, spawn_key=(worker_id,)).generate_state(2)
    return (int(words[0]) << 32 | int(words[1])) & (2**63 - 1)


def _seed_everything(seed):
    random.seed(seed)
    np.random.seed(np.random.SeedSequence(seed).generate_state(4))
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "manual_seed"):
        torch.manual_seed(seed)


# ---- process set-up ---------------------------------------------------------------------------

def _prctl(option, arg):
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, arg, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _name_process(wid):
    try:
        import ctypes

        name = ctypes.create_string_buffer(f"sluice-w{wid}".encode()[:15])
        ctypes.CDLL(None).prctl(15, name, 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass


def _watch_parent(parent_pid):
    """Exits this worker when its parent is gone (the main process was killed)."""
    def loop():
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=loop, name="sluice-parent-watchdog", daemon=True).start()


def _setup_process(wid, parent_pid, pdeathsig, close_fds):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for conn in close_fds:  # inherited (fork) ends of other workers' and pools' sockets
        try:
            conn.close()
        except OSError:
            pass
    faulthandler.enable(all_threads=False)
    _name_process(wid)
    if pdeathsig:
        _prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent_pid:
        os._exit(1)  # the parent died before we could watch it
    _watch_parent(parent_pid)


def _load_callbacks(payload):
    """(specs, py_worker_init) from what the pool passed: the objects themselves (fork) or a
    pickled blob and the pickler to read it with (spawn)."""
    kind = payload[0]
    if kind == "objects":
        return payload[1], payload[2]
    _, pickler, loads_kwargs, blob = payload
    if isinstance(pickler, str):
        import importlib

        pickler = importlib.import_module(pickler)
    return pickler.loads(blob, **loads_kwargs)


# ---- tasks -------------------------------------------------------------------------------------

class SourceSpec:
    """What a worker needs of one parallel source (picklable when the source is)."""

    def __init__(self, kind, source, name, num_outputs, batch, batch_info, nparams,
                 is_genfunc, cycle, dtypes, ndims, batch_size, bytes_hint, several=False):
        self.kind = kind                  # "sample", "batch" or "iter"
        self.source, self.name, self.num_outputs = source, name, num_outputs
        self.several = several            # num_outputs given (even 1): a tuple is returned
        self.batch, self.batch_info, self.nparams = batch, batch_info, nparams
        self.is_genfunc, self.cycle = is_genfunc, cycle
        self.dtypes, self.ndims = dtypes, ndims  # per output: dtype.str / int, or None
        self.batch_size, self.bytes_hint = batch_size, bytes_hint


class TaskError(Exception):
    """A wrong result found in the worker (type, dtype, number of outputs, batch size): the
    message already names the source and the sample; no traceback is attached."""


def _describe(value):
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


class _Task:
    """One task of a source: its outputs as lists of arrays, checked."""

    def __init__(self, spec, where):
        self.spec, self.where = spec, where
        self.outs = [[] for _ in range(spec.num_outputs)]

    def fail(self, what, cls=TypeError):
        raise TaskError(cls.__name__, f'external_source "{self.spec.name}" (parallel): '
                                      f"{self.where}: {what}")

    def split(self, data, what):
        n = self.spec.num_outputs
        if not self.spec.several:
            return [data]
        if not isinstance(data, (list, tuple)) or len(data) != n:
            got = (f"{len(data)} values" if isinstance(data, (list, tuple))
                   else f"a {_describe(data)}")
            self.fail(f"{what} must be a tuple of {n} values (num_outputs={n}), got {got}",
                      ValueError)
        return list(data)

    def array(self, value, o, what):
        if value is None or isinstance(value, (str, bytes, dict, set)):
            self.fail(f"{what} is a {_describe(value)}; expected an array (a NumPy array, a torch "
                      "CPU tensor, a DLPack object or a number)")
        try:
            a = to_numpy(value)
        except _sluice.SluiceError as e:
            self.fail(f"{what}: {e}")
        except (TypeError, ValueError) as e:
            self.fail(f"{what} ({_describe(value)}) cannot be converted to an array: {e}")
        if a.dtype.str not in DTYPE_CODES:
            self.fail(f"{what} has element type {a.dtype} ({_describe(value)}), which sluice does "
                      "not support (bool, int8..int64, uint8..uint64, float16/32/64)")
        want = self.spec.dtypes[o]
        if want is not None and a.dtype.str != want:
            self.fail(f"{what} has element type {a.dtype}, expected {np.dtype(want)} (dtype)")
        nd = self.spec.ndims[o]
        if nd is not None and a.ndim != nd:
            self.fail(f"{what} has {a.ndim} dimensions, expected {nd} (ndim)", ValueError)
        first = self.outs[o][0] if self.outs[o] else None
        if first is not None and (first.dtype != a.dtype or first.ndim != a.ndim):
            self.fail(f"{what} is {a.dtype} with {a.ndim} dimensions, but the first sample of "
                      f"this batch is {first.dtype} with {first.ndim}; the samples of a batch "
                      "must share element type and number of dimensions", ValueError)
        self.outs[o].append(a)

    def add_sample(self, data, what):
        for o, v in enumerate(self.split(data, what)):
            self.array(v, o, what if self.spec.num_outputs == 1 else f"{what}, output {o}")

    def add_batch(self, data, what, batch_size):
        parts = self.split(data, what)
        counts = set()
        for o, b in enumerate(parts):
            if b is None or isinstance(b, (str, bytes, dict)):
                self.fail(f"{what} is a {_describe(b)}; expected a batch (a list of arrays or "
                          "an array whose first axis is the batch)")
            try:
                samples = to_samples(b)
            except (TypeError, ValueError) as e:
                self.fail(f"{what}: {e}")
            counts.add(len(samples))
            for i, s in enumerate(samples):
                self.array(s, o, f"{what}, sample {i}" + (f", output {o}" if len(parts) > 1
                                                          else ""))
        n = counts.pop() if len(counts) == 1 else None
        if n is None:
            self.fail(f"{what}: the outputs have different numbers of samples", ValueError)
        if n < 1 or n > batch_size:
            self.fail(f"{what} has {n} samples; a batch has 1 to {batch_size} (the pipeline's "
                      "batch size)", ValueError)


class Worker:
    """The state of one worker process: its sources, iterators and chunks."""

    def __init__(self, conn, wid, specs):
        self.conn, self.wid, self.specs = conn, wid, specs
        self.chunks = {}     # chunk id -> [fd, mmap, size, uint8 view]
        self.iters = {}      # source index -> [epoch, iterator or None (exhausted)]

    # -- computing -------------------------------------------------------------------------
    def run_task(self, spec, sidx, payload):
        kind = spec.kind
        if kind == "sample":
            epoch, iteration, first, in_batch, count = payload
            task = _Task(spec, None)  # where: set for each sample below
            got = 0
            for k in range(count):
                info = SampleInfo(first + k, in_batch + k, iteration, epoch)
                task.where = (f"sample idx_in_epoch={first + k} (idx_in_batch {in_batch + k}, "
                              f"iteration {iteration}, epoch {epoch})")
                try:
                    data = spec.source(info)  # a per-sample source takes one argument (parallel.py)
                except StopIteration:
                    return task, got, True
                except Exception as e:
                    _set_where(e, f" for {task.where}")
                    raise
                task.add_sample(data, "the value returned")
                got += 1
            return task, got, False
        if kind == "batch":
            epoch, iteration = payload
            task = _Task(spec, f"iteration {iteration} (epoch {epoch})")
            if spec.nparams == 0:
                args = ()
            else:
                args = (BatchInfo(iteration, epoch) if spec.batch_info else iteration,)
            try:
                data = spec.source(*args)
            except StopIteration:
                return task, 0, True
            task.add_batch(data, "the batch returned", spec.batch_size)
            return task, len(task.outs[0]), False
        return self.run_iterable(spec, sidx, payload)

    def _iterator(self, spec, sidx, epoch):
        state = self.iters.get(sidx)
        if state is None or state[0] != epoch:
            state = self.iters[sidx] = [epoch, None]
            try:
                state[1] = _fresh_iterator(spec.source, spec.is_genfunc)
            except Exception:
                state[1] = None  # this epoch has no data; the error goes with this task
                raise
        return state

    def _next(self, spec, state):
        if state[1] is None:
            raise StopIteration
        try:
            return next(state[1])
        except StopIteration:
            if spec.cycle != "quiet":
                state[1] = None
                raise
            state[1] = _fresh_iterator(spec.source, spec.is_genfunc)
            return next(state[1])  # an empty source ends the epoch even when cycling

    def run_iterable(self, spec, sidx, payload):
        epoch, iteration = payload
        task = _Task(spec, f"iteration {iteration} (epoch {epoch})")
        state = self._iterator(spec, sidx, epoch)
        if spec.batch:
            try:
                data = self._next(spec, state)
            except StopIteration:
                return task, 0, True
            task.add_batch(data, "the batch the iterator gave", spec.batch_size)
            return task, len(task.outs[0]), False
        for k in range(spec.batch_size):
            try:
                data = self._next(spec, state)
            except StopIteration:
                return task, k, True
            task.add_sample(data, f"sample {k} the iterator gave")
        return task, spec.batch_size, False

    # -- shared memory ----------------------------------------------------------------------
    def _chunk(self, chunk_id, need, hint):
        """The chunk, with room for `need` bytes; (chunk, new size or 0 if it kept its size)."""
        c = self.chunks.get(chunk_id)
        if c is None:
            fd = os.memfd_create(f"sluice-w{self.wid}-c{chunk_id}", os.MFD_CLOEXEC)
            c = self.chunks[chunk_id] = [fd, None, 0, None]
        if need <= c[2] and c[1] is not None:
            return c, 0
        size = max(int(need * GROWTH), hint, MIN_CHUNK)
        size = (size + MIN_CHUNK - 1) // MIN_CHUNK * MIN_CHUNK
        import mmap

        c[3] = None  # no view may outlive the old mapping
        if c[1] is not None:
            c[1].close()
            c[1] = None
        os.ftruncate(c[0], size)
        try:
            os.posix_fallocate(c[0], 0, size)
        except OSError as e:
            if e.errno in (errno.EOPNOTSUPP, errno.EINVAL):
                pass  # no reservation on this kernel: pages come as they are written
            else:
                os.ftruncate(c[0], 0)
                c[2] = 0
                raise MemoryError(f"sluice worker {self.wid}: cannot reserve {size} bytes of "
                                  f"shared memory for a result: {e}") from None
        c[1] = mmap.mmap(c[0], size)
        c[2] = size
        c[3] = np.frombuffer(c[1], np.uint8)
        return c, size

    def write(self, chunk_id, task, hint):
        """Writes the task's arrays into the chunk: ([(dtype str, [(offset, shape)])], grown)."""
        metas, off = [], 0
        for arrs in task.outs:
            entries = []
            for a in arrs:
                off = (off + ALIGN - 1) // ALIGN * ALIGN
                entries.append((off, tuple(int(d) for d in a.shape)))
                off += a.nbytes
            metas.append((arrs[0].dtype.str if arrs else None, entries))
        c, grown = self._chunk(chunk_id, off, hint)
        view = c[3]
        for arrs, (_, entries) in zip(task.outs, metas):
            for a, (o, _) in zip(arrs, entries):
                if a.nbytes:
                    view[o:o + a.nbytes] = a.reshape(-1).view(np.uint8)
        return metas, grown

    # -- the loop ---------------------------------------------------------------------------
    def reply_error(self, key, chunk_id, exc, spec, plain=False):
        etype = type(exc)
        try:
            type_blob = pickle.dumps(etype)
        except Exception:  # noqa: BLE001 - a class main cannot import: RuntimeError there
            type_blob = None
        if plain:
            text = f"{exc.args[1]} [sluice worker {self.wid}, pid {os.getpid()}]"
            type_blob = pickle.dumps({"TypeError": TypeError, "ValueError": ValueError}
                                     .get(exc.args[0], TypeError))
        else:
            where = getattr(exc, "_sluice_where", "")
            text = (f"Caught {etype.__name__} in sluice worker {self.wid} (pid {os.getpid()}) "
                    f'running external_source "{spec.name}"{where}.\nOriginal '
                    f"{traceback.format_exc()}")
        self.conn.send(("err", key, chunk_id, (type_blob, etype.__name__, text)))

    def serve(self, init_error, load_error):
        try:
            self._serve(init_error, load_error)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the main process closed the pool (or is gone) while this worker worked

    def _serve(self, init_error, load_error):
        while True:
            try:
                msg = self.conn.recv()
            except (EOFError, OSError):
                return
            if msg is None:
                return
            _, key, sidx, chunk_id, payload = msg
            if init_error is not None or load_error is not None:
                self.conn.send(("err", key, chunk_id, init_error or load_error))
                init_error = None
                continue
            spec = self.specs[sidx]
            try:
                task, n, stopped = self.run_task(spec, sidx, payload)
                metas, grown = self.write(chunk_id, task, spec.bytes_hint * max(n, 1)) \
                    if n else ([], 0)
            except TaskError as e:
                self.reply_error(key, chunk_id, e, spec, plain=True)
                continue
            except Exception as e:  # noqa: BLE001 - the source's own error, sent to main
                if not hasattr(e, "_sluice_where"):
                    _set_where(e, _where_of(spec, payload))
                self.reply_error(key, chunk_id, e, spec)
                continue
            self.conn.send(("ok", key, chunk_id, grown, metas, n, stopped))
            if grown:
                from multiprocessing import reduction

                reduction.send_handle(self.conn, self.chunks[chunk_id][0], os.getppid())


def _set_where(exc, where):
    try:
        exc._sluice_where = where
    except Exception:  # noqa: BLE001 - an exception class with __slots__
        pass


def _where_of(spec, payload):
    if spec.kind == "sample":
        epoch, iteration, first, _, count = payload
        return (f" for iteration {iteration} (samples idx_in_epoch {first}..{first + count - 1}"
                f" of epoch {epoch})")
    epoch, iteration = payload
    return f" for iteration {iteration} (epoch {epoch})"


def worker_main(conn, wid, num_workers, seed, parent_pid, pdeathsig, close_fds, payload):
    """Entry point of a worker process (multiprocessing target)."""
    global _info
    _setup_process(wid, parent_pid, pdeathsig, close_fds)
    init_error = load_error = None
    try:
        specs, init_fn = _load_callbacks(payload)
    except Exception as e:  # noqa: BLE001 - reported with every task
        specs, init_fn = [], None
        load_error = _init_error(e, wid, "loading the callbacks (pickled for spawn)")
    _seed_everything(seed)
    _info = WorkerInfo(wid, num_workers, seed)
    if init_fn is not None:
        try:
            init_fn(wid)
        except Exception as e:  # noqa: BLE001 - reported with the first task
            init_error = _init_error(e, wid, "py_worker_init")
    Worker(conn, wid, specs).serve(init_error, load_error)


def _init_error(exc, wid, what):
    try:
        type_blob = pickle.dumps(type(exc))
    except Exception:  # noqa: BLE001
        type_blob = None
    text = (f"Caught {type(exc).__name__} in sluice worker {wid} (pid {os.getpid()}) in "
            f"{what}.\nOriginal {traceback.format_exc()}")
    return (type_blob, type(exc).__name__, text)
