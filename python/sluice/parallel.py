"""sluice.parallel: parallel external sources — Python sources run in worker processes.

Exports ``WorkerPool`` (one per pipeline, shared by its parallel sources), ``ParallelSource``
(the main-process side of one ``fn.external_source(..., parallel=True)``) and
``WorkerTimeoutError``. The design is PyTorch DataLoader's, with DALI's API:

- **Workers**: ``py_num_workers`` processes started with ``py_start_method`` ("fork" or
  "spawn"; for spawn the sources are pickled with ``py_callback_pickler``, by default a pickle
  that saves lambdas and local functions by value), at ``build()`` (or
  ``start_py_workers()``), before the pipeline's threads exist; persistent across epochs.
  What runs inside them is ``sluice.worker``.
- **Index queues**: one duplex socket per worker (``multiprocessing.Pipe``): tasks go down it in
  order, replies come back on it. A task is computed by a fixed worker — sample ranges of
  batch b go to workers (b·P + j) mod N, batch callables' batch b to worker b mod N, an
  iterable to its one worker — so with per-worker seeds the data does not depend on timing.
- **Prefetch**: when batch k of a source is needed, batches up to k + A − 1 are dispatched,
  A chosen so that at most ``prefetch_queue_depth`` × workers tasks are outstanding (a batch
  is split into P = min(workers, batch_size) tasks per sample source, is one task for a batch
  callable or an iterable). Dispatching happens only there — never because a reply arrived —
  so each worker sees the same sequence of tasks in every run.
- **Shared memory**: a worker writes a task's samples into a chunk — a memfd it created, sized
  with ``posix_fallocate``, grown (never shrunk) when a result outgrows it, its fd sent to the
  main process over the socket (SCM_RIGHTS) when new or grown. The main process maps it
  read-only (``_sluice.SharedChunk``, MADV_DONTFORK) and closes the fd. Nothing is ever
  named in /dev/shm, so nothing can leak there, and a chunk dies with the last process that
  maps it. Chunks are reused: the main process picks a free chunk of the worker for each task.
- **Lending**: a batch is fed to the pipeline *lent* (``Pipeline.feed_lent``, ``sl_feed.release``):
  external_source reads the samples in place and copies them once into its output. The
  release callback runs on an executor thread without the GIL and only decrements the chunk's
  atomic ``lent`` counter (C, shm.c); this module polls it and hands a chunk back to its worker
  at 0.
- **Reorder buffer**: replies are parked by task key and batches are assembled strictly in task
  order, whatever order the workers finish in.
- **Epochs** (PyTorch's ``_ResumeIteration``): StopIteration from a source ends the epoch (the
  samples before it form a last, smaller batch); ``reset()`` starts the next with a new
  generation number: before the first task of the new epoch goes out, the tasks still out for
  the old one are waited for and dropped.
- **Failures**: a Python exception in a worker becomes that task's reply and is raised in the
  main process at the batch it belongs to (same type when it can be rebuilt, message with the
  worker's traceback; ``.iteration``, ``.worker_id``, ``.source`` set); the pipeline goes on.
  A worker that dies (signal or exit code) is seen at once — the wait includes every worker's
  process sentinel and polls ``exitcode`` (waitpid WNOHANG) at least every second — and
  raises ``WorkerError`` naming worker, pid and signal (with the shared-memory sizes for
  SIGBUS); the pool is then shut down (workers joined: no zombies) and every later call
  raises the same error. ``timeout`` bounds each wait for a batch (``WorkerTimeoutError``);
  the batch stays pending and the next call waits again.
- **Shutdown** (``close()``, also run by a ``weakref.finalize`` of the pipeline, at interpreter
  exit included): a ``None`` to every worker, sockets closed (EOF), a short grace period, then
  SIGTERM, then SIGKILL; every worker is joined and its process handle closed. Workers watch
  their parent (PR_SET_PDEATHSIG and a getppid watchdog), so a SIGKILLed main process leaves
  nothing behind either.
"""
import multiprocessing
import os
import pickle
import signal
import threading
import time
import weakref
from multiprocessing import connection, reduction

from . import _sluice
from . import worker as _worker

# Longest a wait sleeps between liveness checks of the workers.
POLL_S = 1.0
# Grace given to workers to exit at close() before SIGTERM.
CLOSE_GRACE_S = 1.0

# Every pool alive in this process: a worker forked for one pool closes the sockets of the
# others it inherited.
_LIVE_POOLS = weakref.WeakSet()


class WorkerTimeoutError(_sluice.WorkerError, TimeoutError):
    """A parallel source's batch did not arrive within its ``timeout``."""


def _worker_error(msg, cls=None, **attrs):
    e = (cls or _sluice.WorkerError)(msg)
    e.code, e.operator, e.detail = "SL_EWORKER", "external_source", msg
    for k, v in attrs.items():
        setattr(e, k, v)
    return e


class _KeyErrorMessage(str):
    """KeyError shows repr(message); this keeps the traceback text readable (as PyTorch)."""

    def __repr__(self):
        return self


def _rebuild_error(err, source, iteration, wid):
    """The exception a worker sent, to raise in the main process."""
    type_blob, type_name, text = err
    cls = None
    if type_blob is not None:
        try:
            cls = pickle.loads(type_blob)
        except Exception:  # noqa: BLE001 - a class this process cannot import
            cls = None
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        cls = RuntimeError
    try:
        e = cls(_KeyErrorMessage(text) if cls is KeyError else text)
    except Exception:  # noqa: BLE001 - a class that wants other arguments
        e = RuntimeError(text)
    for k, v in (("iteration", iteration), ("worker_id", wid), ("source", source)):
        try:
            setattr(e, k, v)
        except (AttributeError, TypeError):
            pass
    return e


def _signal_name(sig):
    try:
        return f"{signal.Signals(sig).name} ({signal.strsignal(sig)})"
    except (ValueError, TypeError):
        return f"signal {sig}"


def _mib(n):
    return f"{n / (1 << 20):.1f} MiB"


class _Worker:
    """The main process's record of one worker."""

    def __init__(self, wid, proc, conn):
        self.wid, self.proc, self.conn, self.pid = wid, proc, conn, proc.pid
        self.chunks = {}     # chunk id -> SharedChunk
        self.free = []       # chunk ids the worker may write into
        self.lent = set()    # chunk ids fed to the pipeline (free again when .lent is 0)
        self.next_chunk = 0
        self.outstanding = 0

    def poll_lent(self):
        for cid in [c for c in self.lent if self.chunks[c].lent == 0]:
            self.lent.discard(cid)
            self.free.append(cid)

    def take_chunk(self):
        self.poll_lent()
        if self.free:
            return self.free.pop()
        cid, self.next_chunk = self.next_chunk, self.next_chunk + 1
        self.chunks[cid] = _sluice.SharedChunk()
        return cid


class _Reply:
    __slots__ = ("ok", "wid", "chunk", "metas", "n", "stopped", "error")

    def __init__(self, ok, wid, chunk, metas=None, n=0, stopped=False, error=None):
        self.ok, self.wid, self.chunk = ok, wid, chunk
        self.metas, self.n, self.stopped, self.error = metas, n, stopped, error


class WorkerPool:
    """``num_workers`` worker processes serving the parallel sources of one pipeline."""

    def __init__(self, sources, num_workers, start_method, pickler, worker_init, seed,
                 batch_size):
        if start_method not in ("fork", "spawn"):
            raise ValueError(f'py_start_method must be "fork" or "spawn", got {start_method!r}')
        self.sources = list(sources)
        self.num_workers, self.start_method = int(num_workers), start_method
        self.pickler, self.worker_init, self.seed = pickler, worker_init, seed
        self.batch_size = batch_size
        self.workers = []
        self.replies = {}       # task key -> _Reply (the reorder buffer)
        self.outstanding = {}   # task key -> (worker id, chunk id)
        self.broken = None      # the WorkerError message once a worker died
        self.closed = False
        self.owner = os.getpid()  # a process forked by the user inherits the pool: hands off
        self._by_conn = {}
        for i, s in enumerate(self.sources):
            s.bind(self, i, batch_size, self.num_workers)

    # ---- start and stop ---------------------------------------------------------------------
    def _payload(self):
        specs = [s.spec(self.batch_size) for s in self.sources]
        if self.start_method == "fork":
            return ("objects", specs, self.worker_init)
        from . import _pickling

        pickler, dumps_kw, loads_kw = self.pickler, {}, {}
        if isinstance(pickler, tuple):
            pickler, dumps_kw, loads_kw = (tuple(pickler) + ({}, {}))[:3]
        if pickler is None:
            dumps, ref = _pickling.dumps, "pickle"
        else:
            dumps = lambda obj: pickler.dumps(obj, **(dumps_kw or {}))  # noqa: E731
            ref = pickler.__name__ if isinstance(pickler, type(os)) else pickler
        try:
            blob = dumps((specs, self.worker_init))
        except Exception as e:
            names = ", ".join(f'"{s.name}"' for s in self.sources)
            raise RuntimeError(
                f"parallel external_source {names}: with py_start_method=\"spawn\" the sources "
                f"and py_worker_init are pickled to reach the workers, and that failed: "
                f"{type(e).__name__}: {e}. Define them at module level, make them picklable, "
                "pass py_callback_pickler=cloudpickle (or dill), or use "
                "py_start_method=\"fork\"") from e
        return ("pickled", ref, loads_kw or {}, blob)

    def start(self):
        """Starts the workers (idempotent)."""
        if self.workers or self.closed:
            return
        ctx = multiprocessing.get_context(self.start_method)
        payload = self._payload()
        pdeathsig = threading.current_thread() is threading.main_thread()
        _LIVE_POOLS.add(self)
        try:
            for wid in range(self.num_workers):
                main_end, worker_end = ctx.Pipe(duplex=True)
                close_fds = []
                if self.start_method == "fork":
                    close_fds = [w.conn for p in list(_LIVE_POOLS) for w in p.workers
                                 if not w.conn.closed] + [main_end]
                proc = ctx.Process(
                    target=_worker.worker_main, name=f"sluice-worker-{wid}", daemon=True,
                    args=(worker_end, wid, self.num_workers,
                          _worker.worker_seed(self.seed, wid), os.getpid(), pdeathsig,
                          close_fds, payload))
                try:
                    proc.start()
                finally:
                    worker_end.close()
                w = _Worker(wid, proc, main_end)
                self.workers.append(w)
                self._by_conn[main_end] = w
        except BaseException:
            self.close()
            raise

    def close(self):
        """Stops every worker (gracefully, then SIGTERM, then SIGKILL) and reaps them; drops
        the chunks (a chunk still lent to a pipeline stays mapped until it is released)."""
        if self.closed or os.getpid() != self.owner:
            return
        self.closed = True
        _LIVE_POOLS.discard(self)
        for w in self.workers:
            try:
                os.set_blocking(w.conn.fileno(), False)
                w.conn.send(None)
            except (OSError, ValueError):
                pass
            try:
                w.conn.close()
            except OSError:
                pass
        deadline = time.monotonic() + CLOSE_GRACE_S
        for w in self.workers:
            w.proc.join(max(0.0, deadline - time.monotonic()))
        for w in self.workers:
            if w.proc.exitcode is None:
                w.proc.terminate()
        for w in self.workers:
            w.proc.join(2.0)
            if w.proc.exitcode is None:
                w.proc.kill()
                w.proc.join()
            w.proc.close()  # the sentinel's fd
            w.chunks.clear()
        self._by_conn.clear()
        self.replies.clear()
        self.outstanding.clear()

    @property
    def pids(self):
        return [w.pid for w in self.workers]

    # ---- tasks ------------------------------------------------------------------------------
    def _check_usable(self):
        if self.broken is not None:
            raise _worker_error(f"{self.broken} (the worker pool was shut down; rebuild the "
                                "pipeline)")
        if self.closed:
            raise _worker_error("the worker pool of the parallel external sources is closed")

    def submit(self, wid, key, payload):
        self._check_usable()
        w = self.workers[wid]
        cid = w.take_chunk()
        try:
            w.conn.send(("task", key, key[0], cid, payload))
        except OSError:
            w.free.append(cid)
            self._died(w, self.sources[key[0]].name, wait=True)
        w.outstanding += 1
        self.outstanding[key] = (wid, cid)

    def _on_reply(self, w, msg):
        kind, key, cid = msg[0], msg[1], msg[2]
        if kind == "ok":
            _, _, _, grown, metas, n, stopped = msg
            if grown:
                fd = reduction.recv_handle(w.conn)
                try:
                    w.chunks[cid].map(fd, grown)
                finally:
                    os.close(fd)
            reply = _Reply(True, w.wid, cid, metas, n, stopped)
        else:
            reply = _Reply(False, w.wid, cid, error=msg[3])
        self.outstanding.pop(key, None)
        w.outstanding -= 1
        src = self.sources[key[0]]
        if key[1] != src.gen or not reply.ok or not reply.n:
            w.free.append(cid)  # a stale reply, or nothing written: the chunk is free again
            reply.chunk = None
        if key[1] == src.gen:
            self.replies[key] = reply

    def _drain(self, w, source):
        try:
            while w.conn.poll():
                self._on_reply(w, w.conn.recv())
        except (EOFError, OSError):
            self._died(w, source, wait=True)

    def _died(self, w, source, wait=False):
        """Raises the WorkerError of a dead worker (after reaping it and stopping the rest)."""
        if wait:
            w.proc.join(2.0)  # the socket closed: the exit status follows at once
        code = w.proc.exitcode
        if code is None:
            what = "closed its connection unexpectedly"
        elif code < 0:
            what = f"was killed by signal {_signal_name(-code)}"
            if -code == signal.SIGBUS:
                what += self._bus_note(w)
        else:
            what = (f"exited unexpectedly with exit code {code}" +
                    (" (a source or py_worker_init called sys.exit or os._exit?)" if code else ""))
        msg = (f'external_source "{source}" (parallel): sluice worker {w.wid} (pid {w.pid}) '
               f"{what}")
        self.broken = msg
        self.close()
        raise _worker_error(msg, worker_id=w.wid, pid=w.pid, source=source)

    def _bus_note(self, w):
        chunks = sum(c.size for c in w.chunks.values())
        try:
            st = os.statvfs("/dev/shm")
            shm = (f"/dev/shm has {_mib(st.f_bavail * st.f_frsize)} free of "
                   f"{_mib(st.f_blocks * st.f_frsize)}")
        except OSError:
            shm = "/dev/shm is not available"
        return (f". A bus error in a worker usually means shared memory ran out: this worker's "
                f"result chunks map {_mib(chunks)} (memfd, counted against RAM and the "
                f"container's memory limit, not /dev/shm); {shm}. If the source maps files in "
                "/dev/shm or another tmpfs, that file system is full: raise its size (docker run "
                "--shm-size=...)")

    def _check_workers(self, source):
        for w in self.workers:
            if w.proc.exitcode is not None:  # waitpid(WNOHANG): reaps it
                self._drain(w, source)
                self._died(w, source)

    def wait(self, done, source, timeout=None, what="a batch"):
        """Collects replies until done() is true. Raises WorkerError when a worker died,
        WorkerTimeoutError after `timeout` seconds."""
        self._check_usable()
        start = time.monotonic()
        while not done():
            self._check_workers(source)
            left = None if timeout is None else timeout - (time.monotonic() - start)
            if left is not None and left <= 0:
                busy = ", ".join(f"worker {w.wid} (pid {w.pid})" for w in self.workers
                                 if w.outstanding)
                raise _worker_error(
                    f'external_source "{source}" (parallel): timed out after {timeout:g} s '
                    f"waiting for {what} (timeout={timeout:g}); still computing: "
                    f"{busy or 'nothing'}", WorkerTimeoutError, source=source)
            objs = [w.conn for w in self.workers] + [w.proc.sentinel for w in self.workers]
            for obj in connection.wait(objs, POLL_S if left is None else min(POLL_S, left)):
                w = self._by_conn.get(obj)
                if w is not None:
                    self._drain(w, source)

    def take(self, key):
        return self.replies.pop(key)

    def purge(self, sidx, gen):
        """Drops the parked replies of source `sidx` older than generation `gen` (batches
        computed ahead past the end of an epoch), freeing their chunks."""
        for key in [k for k in self.replies if k[0] == sidx and k[1] < gen]:
            reply = self.replies.pop(key)
            if reply.chunk is not None:
                self.workers[reply.wid].free.append(reply.chunk)

    def free(self, refs):
        """Chunks (worker id, chunk id) not fed after all: free again."""
        for wid, cid in refs:
            self.workers[wid].free.append(cid)

    def lend(self, refs):
        """Chunks fed to the pipeline: free again once it released them."""
        for wid, cid in refs:
            self.workers[wid].lent.add(cid)

    def chunk(self, wid, cid):
        return self.workers[wid].chunks[cid]

    def stale(self, sidx, gen):
        return any(k[0] == sidx and k[1] != gen for k in self.outstanding)

    def shm_statistics(self):
        caps = [c.size for w in self.workers for c in w.chunks.values()]
        return {"capacities": caps, "per_worker": [
            {"pid": w.pid, "chunks": len(w.chunks), "bytes": sum(c.size for c in
                                                                  w.chunks.values())}
            for w in self.workers]}


# ---- one parallel source ---------------------------------------------------------------------

class _LentBatch:
    """A batch in shared memory: per output (dtype code, ndim, [(chunk index, offset,
    shape)]) over `chunks` (SharedChunk), `refs` the (worker, chunk) pairs behind them."""

    __slots__ = ("n", "outputs", "chunks", "refs")

    def __init__(self, n, outputs, chunks, refs):
        self.n, self.outputs, self.chunks, self.refs = n, outputs, chunks, refs


class ParallelSource:
    """The main-process side of one parallel external source: dispatches its tasks, assembles
    its batches in order and keeps its epoch."""

    parallel = True

    def __init__(self, source, nodes, num_outputs, cycle, batch, batch_info, layouts, dtypes,
                 ndims, prefetch_queue_depth, timeout, bytes_per_sample_hint, name,
                 several=False):
        from .external_source import _cycle_mode, _num_params, _source_kind

        self.source, self.nodes, self.num_outputs = source, nodes, num_outputs
        self.several = several  # num_outputs given: the source returns a tuple
        self.layouts, self.name = layouts, name
        self.batch, self.batch_info = bool(batch), bool(batch_info)
        self.cycle = _cycle_mode(cycle)
        kind = _source_kind(source, self.cycle)
        self.is_genfunc = kind == "genfunc"
        if kind == "callable":
            self.kind = "batch" if self.batch else "sample"
        else:
            self.kind = "iter"
        self.nparams = _num_params(source) if self.kind != "iter" else 0
        if self.kind == "sample" and self.nparams != 1:
            raise TypeError(f'external_source "{name}" (parallel=True, batch=False): a '
                            "per-sample source must take one argument, the SampleInfo, and "
                            "compute the sample from it (workers run samples in any order)")
        import numpy as np

        self.dtypes = [None if d is None else _np_dtype(d, np) for d in dtypes]
        self.ndims = [None if d is None else int(d) for d in ndims]
        self.depth = 2 if prefetch_queue_depth is None else int(prefetch_queue_depth)
        if self.depth < 1:
            raise ValueError("external_source: prefetch_queue_depth must be at least 1, got "
                             f"{prefetch_queue_depth}")
        self.timeout = None if timeout in (None, 0) else float(timeout)
        if self.timeout is not None and self.timeout < 0:
            raise ValueError(f"external_source: timeout must be positive, got {timeout}")
        self.bytes_hint = int(bytes_per_sample_hint or 0)
        self.epoch = self.gen = 0
        self.consumed = self.dispatched = 0   # batches of this epoch taken / sent out
        self.ended = False                    # a StopIteration was met: no batch after this
        self._ready = None                    # the prepared next unit, until take()
        self.pool = None

    # ---- set-up by the pool -----------------------------------------------------------------
    def bind(self, pool, sidx, batch_size, num_workers):
        self.pool, self.sidx, self.bs, self.nw = pool, sidx, batch_size, num_workers
        if self.kind == "sample":
            self.parts = min(num_workers, batch_size)
            bounds = [batch_size * j // self.parts for j in range(self.parts + 1)]
            self.slices = list(zip(bounds[:-1], bounds[1:]))
        else:
            self.parts = 1
        per_worker = self.depth * (1 if self.kind == "iter" else num_workers)
        self.ahead = max(1, per_worker // self.parts)
        iterables = [s for s in pool.sources[:sidx] if s.kind == "iter"]
        self.iter_worker = len(iterables) % num_workers

    def spec(self, batch_size):
        return _worker.SourceSpec(self.kind, self.source, self.name, self.num_outputs,
                                  self.batch, self.batch_info, self.nparams, self.is_genfunc,
                                  self.cycle, self.dtypes, self.ndims, batch_size,
                                  self.bytes_hint, self.several)

    # ---- dispatch -----------------------------------------------------------------------------
    def _worker_of(self, b, j):
        if self.kind == "sample":
            return (b * self.parts + j) % self.nw
        return self.iter_worker if self.kind == "iter" else b % self.nw

    def _dispatch(self, b):
        for j in range(self.parts):
            if self.kind == "sample":
                lo, hi = self.slices[j]
                payload = (self.epoch, b, b * self.bs + lo, lo, hi - lo)
            else:
                payload = (self.epoch, b)
            self.pool.submit(self._worker_of(b, j), (self.sidx, self.gen, b, j), payload)

    def _top_up(self):
        if self.pool.stale(self.sidx, self.gen):  # _ResumeIteration: drain the old epoch
            self.pool.wait(lambda: not self.pool.stale(self.sidx, self.gen), self.name,
                           self.timeout, "the previous epoch's tasks")
        while self.dispatched < self.consumed + self.ahead:
            self._dispatch(self.dispatched)
            self.dispatched += 1

    # ---- batches ------------------------------------------------------------------------------
    def prepare(self):
        """Gets the next unit ready: ("data", _LentBatch), ("error", exception) or ("end",
        None). Raises WorkerError/WorkerTimeoutError (nothing is consumed then)."""
        if self._ready is not None:
            return self._ready
        if self.ended:
            self._ready = ("end", None)
            return self._ready
        self._top_up()
        b = self.consumed
        keys = [(self.sidx, self.gen, b, j) for j in range(self.parts)]
        replies = self.pool.replies
        self.pool.wait(lambda: all(k in replies for k in keys), self.name, self.timeout,
                       f"iteration {b} (epoch {self.epoch})")
        self._ready = self._assemble(b, [self.pool.take(k) for k in keys])
        return self._ready

    def _assemble(self, b, replies):
        refs = [(r.wid, r.chunk) for r in replies if r.chunk is not None]
        used, n, error = [], 0, None
        for r in replies:
            if not r.ok:
                error = _rebuild_error(r.error, self.name, b, r.wid)
                break
            if r.n:
                used.append(r)
                n += r.n
            if r.stopped:
                self.ended = True
                break
        if error is None and n:
            batch = self._lent_batch(b, used, n)
            if isinstance(batch, Exception):
                error = batch
            else:
                unused = [x for x in refs if x not in batch.refs]
                self.pool.free(unused)
                return ("data", batch)
        self.pool.free(refs)
        if error is not None:
            return ("error", error)
        self.ended = True
        return ("end", None)

    def _lent_batch(self, b, used, n):
        chunks = [self.pool.chunk(r.wid, r.chunk) for r in used]
        outputs = []
        for o in range(self.num_outputs):
            code = ndim = None
            samples = []
            for ci, r in enumerate(used):
                dt, entries = r.metas[o]
                c = _worker.DTYPE_CODES[dt]
                nd = len(entries[0][1])
                if code is None:
                    code, ndim, first = c, nd, dt
                elif (c, nd) != (code, ndim):
                    import numpy as np

                    return TypeError(
                        f'external_source "{self.name}" (parallel): iteration {b}, sample '
                        f"{len(samples)}{'' if self.num_outputs == 1 else f', output {o}'}: "
                        f"{np.dtype(dt)} with {nd} dimensions (from worker {r.wid}), but sample "
                        f"0 is {np.dtype(first)} with {ndim}; the samples of a batch must "
                        "share element type and number of dimensions")
                samples.extend((ci, off, shape) for off, shape in entries)
            outputs.append((code, ndim, samples))
        return _LentBatch(n, outputs, chunks, [(r.wid, r.chunk) for r in used])

    def take(self):
        """The prepared unit, consumed (the next prepare() moves on)."""
        unit, self._ready = self._ready, None
        if unit is not None and unit[0] != "end":
            self.consumed += 1
        return unit

    def drop(self, unit):
        """A unit taken but not fed (another source ended or failed): frees its chunks."""
        if unit is not None and unit[0] == "data":
            self.pool.free(unit[1].refs)

    def checkpoint_state(self):
        """Where it is, for a checkpoint: a dict, or why it cannot say (a str)."""
        if self.kind == "iter":
            return "an iterable or generator keeps its own position, which sluice cannot save"
        if self.nparams == 0:
            return "a callable without arguments keeps its own state, which sluice cannot save"
        return {"epoch": self.epoch, "consumed": self.consumed}

    def restore_state(self, state):
        """Continues at the position checkpoint_state() gave (before any batch is taken)."""
        if self._ready is not None:
            self.drop(self._ready)
            self._ready = None
        self.gen += 1
        if self.pool is not None:
            self.pool.purge(self.sidx, self.gen)
        self.epoch, self.consumed = int(state["epoch"]), int(state["consumed"])
        self.dispatched, self.ended = self.consumed, False

    def reset(self):
        if self._ready is not None:
            self.drop(self._ready)
            self._ready = None
        self.epoch += 1
        self.gen += 1
        self.consumed = self.dispatched = 0
        self.ended = False
        if self.pool is not None:
            self.pool.purge(self.sidx, self.gen)


def _np_dtype(d, np):
    from . import types

    name = types.to_arg(d) if not isinstance(d, str) else d
    try:
        return np.dtype(name).str
    except TypeError:
        return np.dtype(_sluice.DTYPE_NAMES[int(name)]).str
