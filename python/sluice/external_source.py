"""sluice.external_source: ``fn.external_source``, data from Python fed into a pipeline.

The C ``external_source`` operator takes batches that the application feeds
(``sl_pipeline_feed_input``); this module is the Python side: it calls the ``source`` (a
callable, an iterable, or a generator function) once per scheduled iteration, converts what
it returns (NumPy arrays, lists of them, torch CPU tensors, DLPack-capable objects) and feeds
it before the iteration is scheduled. Without a ``source`` the application calls
``pipe.feed_input(name, data)`` itself. With ``parallel=True`` the source runs in worker
processes instead (sluice.parallel, sluice.worker) and its batches are lent to the pipeline
from shared memory.
"""
import functools
import inspect

from . import _sluice
from . import types


class BatchInfo:
    """What a batch-mode callable gets with ``batch_info=True``."""

    __slots__ = ("iteration", "epoch_idx")

    def __init__(self, iteration, epoch_idx):
        self.iteration, self.epoch_idx = iteration, epoch_idx

    def __repr__(self):
        return f"BatchInfo(iteration={self.iteration}, epoch_idx={self.epoch_idx})"


class SampleInfo:
    """What a per-sample callable (``batch=False``) gets."""

    __slots__ = ("idx_in_epoch", "idx_in_batch", "iteration", "epoch_idx")

    def __init__(self, idx_in_epoch, idx_in_batch, iteration, epoch_idx):
        self.idx_in_epoch, self.idx_in_batch = idx_in_epoch, idx_in_batch
        self.iteration, self.epoch_idx = iteration, epoch_idx

    def __repr__(self):
        return (f"SampleInfo(idx_in_epoch={self.idx_in_epoch}, idx_in_batch="
                f"{self.idx_in_batch}, iteration={self.iteration}, epoch_idx={self.epoch_idx})")


# ---- data conversion ----------------------------------------------------------------------

def to_numpy(x):
    """A C-contiguous NumPy array for one sample or batch (no copy when already one). A 0-D
    value (a NumPy scalar, a 0-D array or tensor, a Python number) stays 0-D: a scalar sample
    has shape (), as in DALI (np.ascontiguousarray would make it (1,))."""
    import numpy as np

    if isinstance(x, np.ndarray):
        return np.asarray(x, order="C")
    mod = type(x).__module__.split(".")[0]
    if mod == "torch" and hasattr(x, "device"):
        if x.device.type != "cpu":
            raise _sluice.UnsupportedError(
                f"external_source: a tensor on {x.device} was given; sluice pipelines take "
                "CPU data only")
        return np.asarray(x.detach().numpy(), order="C")
    if isinstance(x, _sluice.TensorListCPU):
        return np.asarray(x.as_array(), order="C")
    if hasattr(x, "__dlpack__") and not hasattr(x, "__array_interface__"):
        return np.asarray(np.from_dlpack(x), order="C")
    return np.asarray(x, order="C")


def to_samples(batch):
    """A batch (a list of samples, or one array whose first axis is the batch) as a list of
    C-contiguous arrays."""
    if isinstance(batch, (list, tuple)):
        return [to_numpy(s) for s in batch]
    if isinstance(batch, _sluice.TensorListCPU):
        return [to_numpy(batch.at(i)) for i in range(len(batch))]
    arr = to_numpy(batch)
    if arr.ndim == 0:
        raise ValueError("external_source: a batch must be a list of samples or an array with "
                         "a leading batch dimension, got a scalar")
    return [arr[i, ...] for i in range(arr.shape[0])]  # arrays, 0-D for a 1-D batch


# ---- sources --------------------------------------------------------------------------------

def _num_params(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return 1
    return sum(1 for p in sig.parameters.values()
               if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               and p.default is p.empty)


def _cycle_mode(cycle):
    if cycle in (None, False, "no"):
        return "no"
    if cycle in (True, "quiet"):
        return "quiet"
    if cycle == "raise":
        return "raise"
    raise ValueError(f"external_source: cycle must be False, True, \"no\", \"quiet\" or "
                     f"\"raise\", got {cycle!r}")


def _is_generator_function(x):
    """Whether calling x gives a fresh generator, as DALI decides: a generator function, a
    functools.partial of one, or an object whose __call__ is one."""
    if inspect.isgeneratorfunction(x):
        return True
    if isinstance(x, functools.partial):
        return _is_generator_function(x.func)
    if x is None or inspect.isfunction(x) or inspect.ismethod(x):
        return False
    call = getattr(x, "__call__", None)
    return call is not None and call is not x and _is_generator_function(call)


def _source_kind(source, cycle):
    """What `source` is: "genfunc", "callable" or "iterable" (a generator function counts as
    the first, a callable iterable as a callable). Raises TypeError for anything else and for
    a generator object with cycle (a _cycle_mode) other than "no" (it cannot start again:
    DALI's words), ValueError for a callable with such a cycle."""
    if _is_generator_function(source):
        kind = "genfunc"
    elif callable(source):
        kind = "callable"
    elif hasattr(source, "__iter__"):
        kind = "iterable"
    else:
        raise TypeError("external_source: source must be a callable, an iterable or a "
                        f"generator function, got {type(source).__name__}")
    if cycle != "no" and inspect.isgenerator(source):
        raise TypeError("Cannot cycle through a generator - if the generator is a result of "
                        "calling a generator function, pass that function instead as `source`.")
    if cycle != "no" and kind == "callable":
        raise ValueError("The argument `cycle` can only be specified if `source` is iterable "
                         "(an iterable or a generator function), not a callable.")
    return kind


def _fresh_iterator(source, is_genfunc):
    """A new pass over an iterable source: a new call of a generator function."""
    return iter(source()) if is_genfunc else iter(source)


class Source:
    """The Python side of one fn.external_source call: produces one batch per iteration.
    (With parallel=True: sluice.parallel.ParallelSource.)

    Epochs: StopIteration from the source ends one; Pipeline.reset() starts the next (a new
    iterator over an iterable, a new call of a generator function; callables see the counters
    start again). ``cycle="quiet"`` restarts an exhausted iterable silently instead.
    """

    parallel = False

    def __init__(self, source, nodes, num_outputs, cycle, batch, batch_info, layouts,
                 several=False):
        # several: num_outputs was given (even 1): the source returns a tuple (or list) of
        # num_outputs items, DALI's rule; otherwise it returns the one item itself
        self.source, self.nodes, self.num_outputs = source, nodes, num_outputs
        self.several = several
        self.cycle, self.batch, self.batch_info = _cycle_mode(cycle), batch, batch_info
        self.layouts = layouts
        self.epoch, self.iteration, self.sample_idx = 0, 0, 0
        kind = _source_kind(source, self.cycle)
        self.is_genfunc, self.is_callable = kind == "genfunc", kind == "callable"
        self.nparams = _num_params(source) if self.is_callable else 0
        self.it = None

    def checkpoint_state(self):
        """Where it is, for a checkpoint: a dict, or why it cannot say (a str)."""
        if not self.is_callable:
            return "an iterable or generator keeps its own position, which sluice cannot save"
        if self.nparams == 0:
            return "a callable without arguments keeps its own state, which sluice cannot save"
        return {"epoch": self.epoch, "iteration": self.iteration, "sample_idx": self.sample_idx}

    def restore_state(self, state):
        """Continues at the position checkpoint_state() gave."""
        self.epoch, self.iteration = int(state["epoch"]), int(state["iteration"])
        self.sample_idx, self.it = int(state["sample_idx"]), None

    def reset(self):
        self.epoch += 1
        self.iteration = self.sample_idx = 0
        self.it = None

    def _next_item(self):
        if self.it is None:
            self.it = _fresh_iterator(self.source, self.is_genfunc)
        try:
            return next(self.it)
        except StopIteration:
            if self.cycle != "quiet":
                raise
            self.it = _fresh_iterator(self.source, self.is_genfunc)
            return next(self.it)  # an empty source ends the epoch even when cycling

    def _call_batch(self):
        if self.nparams == 0:
            return self.source()
        arg = BatchInfo(self.iteration, self.epoch) if self.batch_info else self.iteration
        return self.source(arg)

    def _sample(self, k):
        if not self.is_callable:
            return self._next_item()
        if self.nparams == 0:
            return self.source()
        return self.source(SampleInfo(self.sample_idx + k, k, self.iteration, self.epoch))

    def next_batch(self, batch_size):
        """The next batch per output: a list of num_outputs lists of arrays. Raises
        StopIteration at the end of the epoch; the source's own exceptions propagate, and the
        next call asks for the next batch (the failed one is skipped). Per sample, a
        StopIteration after some samples ends the epoch with that smaller batch."""
        try:
            if self.batch:
                data = self._call_batch() if self.is_callable else self._next_item()
                outs = [to_samples(b) for b in self._split(data)]
            else:
                samples = []
                for k in range(batch_size):
                    try:
                        samples.append(self._split(self._sample(k)))
                    except StopIteration:
                        if not samples:
                            raise
                        break
                outs = [[to_numpy(s[o]) for s in samples] for o in range(self.num_outputs)]
        except StopIteration:
            raise
        except BaseException:
            self._advance(batch_size)
            raise
        self._advance(batch_size)
        return outs

    def _advance(self, batch_size):
        self.iteration += 1
        self.sample_idx += batch_size

    def _split(self, data):
        if not self.several:
            return [data]
        if not isinstance(data, (list, tuple)) or len(data) != self.num_outputs:
            got = (f"{len(data)} items" if isinstance(data, (list, tuple))
                   else type(data).__name__)
            raise ValueError(f"external_source: the source must return a tuple (or list) of "
                             f"{self.num_outputs} items (num_outputs={self.num_outputs}), "
                             f"got {got}")
        return list(data)


# ---- fn.external_source ----------------------------------------------------------------------

def _per_output(value, n, per_output, what):
    if per_output and isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"external_source: {what} needs {n} entries (num_outputs)")
        return list(value)
    return [value] * n


def external_source(source=None, num_outputs=None, *, cycle=None, name=None, device="cpu",
                    layout=None, dtype=None, ndim=None, cuda_stream=None, use_copy_kernel=None,
                    blocking=None, batch=True, repeat_last=False, parallel=None, no_copy=None,
                    prefetch_queue_depth=None, bytes_per_sample_hint=None, batch_info=None,
                    timeout=None, preserve=None, **kwargs):
    from . import node as _node
    from .fn import _call
    from .pipeline import Pipeline

    if repeat_last:
        raise NotImplementedError("external_source(repeat_last=True) is not supported")
    if kwargs:
        raise TypeError(f"external_source() got unexpected keyword arguments {sorted(kwargs)}")
    if parallel:
        if source is None:
            raise ValueError("external_source(parallel=True) needs a source (feed_input cannot "
                             "run in worker processes)")
        from ._convert import is_autograph_artifact

        if is_autograph_artifact(source) or is_autograph_artifact(
                getattr(source, "__call__", None)):
            raise ValueError(
                f"external_source(parallel=True): the source {source!r} was converted by "
                "enable_conditionals (it is defined in, or made by a function called from, "
                "the converted pipeline definition). To allow the `source` to be correctly "
                "used in the worker processes, it must remain unconverted: define it outside "
                "and mark the function that makes it with @sluice.pipeline.do_not_convert")
    elif timeout is not None:
        raise ValueError("external_source: timeout applies to parallel=True sources")
    if source is None and cycle is not None and cycle is not False:
        raise ValueError("external_source: cycle needs a source")
    n = 1 if num_outputs is None else int(num_outputs)
    if n < 1:
        raise ValueError("external_source: num_outputs must be at least 1")
    if num_outputs is not None and name is not None:
        names = [f"{name}_{k}" for k in range(n)]
    else:
        names = [name] * n
    several = num_outputs is not None
    layouts = _per_output(layout, n, several, "layout")
    dtypes = _per_output(dtype, n, several, "dtype")
    ndims = _per_output(ndim, n, several, "ndim")

    def make(pipe, nodes):
        """The Source feeding these nodes (their names in pipe) in pipeline pipe."""
        if parallel:
            from .parallel import ParallelSource

            if pipe is not None and pipe._py_num_workers < 1:
                raise RuntimeError("The external source cannot run in parallel mode without "
                                   "Python workers pool (the pipeline has py_num_workers=0)")
            return ParallelSource(source, nodes, n, cycle, batch, batch_info, layouts, dtypes,
                                  ndims, prefetch_queue_depth, timeout, bytes_per_sample_hint,
                                  name or nodes[0], several=several)
        return Source(source, nodes, n, cycle, batch, batch_info, layouts, several=several)

    pipe = Pipeline.current()
    if source is not None:  # the source's checks (and the pipeline's, if one is being
        make(pipe, [name or "external_source"] * n)  # defined) before any node is made
    outs = []
    for k in range(n):
        args = {"layout": layouts[k] or None, "dtype": dtypes[k], "ndim": ndims[k],
                "device": device, "name": names[k], "preserve": preserve}
        outs.append(_call("external_source", [], args))
    if source is not None:
        # each pipeline that adopts these nodes gets its own Source (sluice.node)
        group = _node.Group([o._node for o in outs], make)
        if pipe is not None:
            _node.register(pipe, group)
    return outs[0] if num_outputs is None else outs  # DALI: a list, even of one DataNode


external_source.__doc__ = """fn.external_source(source=None, num_outputs=None, *, cycle=None, name=None,
    device="cpu", layout=None, dtype=None, ndim=None, batch=True, batch_info=None,
    parallel=False, prefetch_queue_depth=None, bytes_per_sample_hint=None, timeout=None, ...)

Data from Python: a batch per iteration, from `source` or from `pipe.feed_input(name, data)`.

source:
    - a callable: batch mode (``batch=True``) calls it once per iteration with no argument,
      the iteration index within the epoch, or ``BatchInfo(iteration, epoch_idx)`` with
      ``batch_info=True``; per-sample mode (``batch=False``) calls it once per sample with
      ``SampleInfo(idx_in_epoch, idx_in_batch, iteration, epoch_idx)`` (or no argument);
    - an iterable or a generator function: ``next()`` gives a batch (or, with ``batch=False``,
      a sample);
    - None: feed each batch with ``pipe.feed_input(name, data, layout=None)`` before the
      iteration is scheduled (the first run schedules ``prefetch_queue_depth`` iterations,
      cpu_size + gpu_size for a dict).
    A batch is a list of 1 to batch_size arrays (shapes may differ, same dtype and ndim) or
    one array whose first axis is the batch: NumPy arrays, torch CPU tensors, DLPack-capable
    objects. Its number of samples is that iteration's batch size (several sources of a
    pipeline must agree). The data is copied when fed. ``num_outputs=k`` (even 1): the source
    returns a tuple (or list) of k batches (or, with ``batch=False``, of k samples) and the
    call returns a list of k DataNodes; without it the source returns the batch itself and
    the call returns one DataNode.
cycle: False/"no" (default): StopIteration from the source ends the epoch — ``run()`` raises
    StopIteration once the batches already scheduled are delivered, and ``pipe.reset()``
    starts the next epoch (a new iterator; a generator function is called again). Per sample,
    a StopIteration after some samples of a batch ends the epoch with that smaller batch.
    "quiet" or True: an exhausted iterable restarts silently. "raise": StopIteration at the
    end, the next epoch (after reset) restarts it.
layout, dtype, ndim: declared for the data (per output when num_outputs is given); fed data
    that does not match raises InvalidArgumentError from run().
An exception raised by the source propagates from ``run()`` (or ``schedule_run()``) with its
original type and traceback; that batch is skipped and the pipeline goes on.

parallel=True runs the source in the pipeline's worker processes (``py_num_workers``,
``py_start_method`` "fork" or "spawn", ``py_callback_pickler``, ``py_worker_init`` of the
Pipeline), as PyTorch's DataLoader runs a Dataset:
    - per-sample callables (``batch=False``) take the SampleInfo and must compute the sample
      from it alone (a batch is split among the workers); batch callables take the
      iteration index or BatchInfo (each batch is computed by one worker); iterables and
      generator functions run in one worker, in order (``batch=True``: next() gives a batch;
      ``batch=False``: a sample). Callables must keep raising StopIteration past the end of
      the epoch (work is dispatched ahead).
    - prefetch_queue_depth (default 2): tasks in flight per worker: at most depth × workers
      tasks are outstanding. bytes_per_sample_hint presizes the shared-memory chunks.
    - timeout (seconds, default None: wait forever, checking that the workers live): a batch
      not delivered in time raises ``sluice.WorkerTimeoutError``; it stays pending.
    - an exception in a worker is raised by the ``run()`` that reaches its batch, same type,
      with the worker's traceback in the message; a result of the wrong type, dtype or
      number of outputs raises TypeError/ValueError naming the source and the sample; a
      worker that dies raises ``sluice.WorkerError`` naming it, its pid and the signal.
    - ``sluice.get_worker_info()`` inside a worker: id, num_workers, seed (random, NumPy and
      torch are seeded per worker from the pipeline seed).
    See docs/python.md, "Parallel external source".

Limitations (sluice today): data must be on the CPU; ``no_copy``, ``blocking``,
``cuda_stream`` and ``use_copy_kernel`` are accepted and have no effect (a serial source's
data is copied when fed; a parallel source's is read from shared memory in place);
``repeat_last=True`` raises NotImplementedError.
"""


class ExternalSource:
    """``ops.ExternalSource(source=None, num_outputs=None, *, cycle=None, layout=None,
    dtype=None, ndim=None, name=None, device="cpu", batch=None, parallel=None, ...)``: DALI's
    operator class of fn.external_source.

    The constructor keeps the arguments (a source is checked now); each call
    ``src(*, source=None, name=None, ...)`` makes nodes as ``fn.external_source`` with the
    arguments of both. An argument goes to one of the two, not both (the call's ``name``
    replaces the constructor's): RuntimeError for source, layout, dtype, ndim, cuda_stream
    and use_copy_kernel, ValueError for the others, as DALI. Unlike fn.external_source,
    ``batch`` left unset is ``not parallel`` (DALI's class default: a parallel source is per
    sample unless batch=True).
    """

    _RUNTIME = ("source", "layout", "dtype", "ndim", "cuda_stream", "use_copy_kernel")

    def __init__(self, source=None, num_outputs=None, *, device="cpu", name=None, **kwargs):
        self._num_outputs, self._device, self._name = num_outputs, device, name
        self._kwargs = {k: v for k, v in kwargs.items() if v is not None}
        if source is not None:
            self._kwargs["source"] = source
            _source_kind(source, _cycle_mode(kwargs.get("cycle")))

    @property
    def device(self):
        return self._device

    def __call__(self, *, name=None, **kwargs):
        merged = dict(self._kwargs)
        for k, v in kwargs.items():
            if v is None:
                continue
            if k in merged:
                what = f"``{k}`` already specified in constructor."
                raise (RuntimeError if k in self._RUNTIME else ValueError)(what)
            merged[k] = v
        if merged.get("batch") is None:
            merged["batch"] = not merged.get("parallel")
        return external_source(num_outputs=self._num_outputs, device=self._device,
                               name=self._name if name is None else name, **merged)

    def __repr__(self):
        return f"ExternalSource(num_outputs={self._num_outputs!r}, {self._kwargs})"
