"""sluice.pipeline: Pipeline and pipeline_def, following DALI's API.

A Pipeline records operator nodes as fn.* is called inside its definition (``with pipe:``, a
``@pipeline_def`` function, or ``define_graph``) into a C graph, builds it into a C pipeline
(sluice._sluice.Pipeline) and runs it with DALI's run API. This class adds what is Python's:
feeding ``fn.external_source`` sources before each iteration is scheduled, their epochs
(StopIteration / reset), and DALI's argument conventions.

Differences from DALI, on purpose or not yet: seed -1/None is a fixed seed (reproducible);
``exec_async=False`` changes nothing (work always runs on the pipeline's threads; run() waits
for it); ``exec_pipelined=False`` means prefetch depth 1; ``prefetch_queue_depth`` as a dict
uses ``cpu_size``; the batch size is fixed (no variable batch sizes); checkpointing,
conditionals and the debug mode are not supported; outputs stay valid while referenced
(a view keeps its iteration's buffers), not only until the next run.
"""
import contextlib
import functools
import inspect
import os
import threading

from . import _sluice

_tls = threading.local()

# Keyword arguments of Pipeline() (what pipeline_def routes to the pipeline).
_PIPELINE_ARGS = (
    "batch_size", "num_threads", "device_id", "seed", "exec_pipelined", "prefetch_queue_depth",
    "exec_async", "bytes_per_sample", "set_affinity", "max_streams",
    "default_cuda_stream_priority", "enable_memory_stats", "enable_checkpointing", "checkpoint",
    "py_num_workers", "py_start_method", "py_callback_pickler", "output_dtype", "output_ndim",
    "exec_dynamic", "stream_policy", "concurrency", "max_batch_size")


def _stack():
    if not hasattr(_tls, "stack"):
        _tls.stack = []
    return _tls.stack


def _depth(prefetch_queue_depth, exec_pipelined):
    if isinstance(prefetch_queue_depth, dict):
        unknown = set(prefetch_queue_depth) - {"cpu_size", "gpu_size"}
        if unknown:
            raise ValueError(f"prefetch_queue_depth: unknown keys {sorted(unknown)} (expected "
                             "cpu_size, gpu_size)")
        depth = int(prefetch_queue_depth.get("cpu_size", 2))
    else:
        depth = int(prefetch_queue_depth)
    return 1 if not exec_pipelined else depth


class Pipeline:
    """Pipeline(batch_size, num_threads, device_id=None, seed=-1, exec_pipelined=True,
    prefetch_queue_depth=2, exec_async=True, bytes_per_sample=0, set_affinity=False, ...)

    batch_size: samples per iteration (required). num_threads: CPU worker threads (-1: one per
    CPU). device_id: None (or -1) for a CPU-only pipeline — the only kind sluice runs today; a
    device id needs a CUDA build. seed: pipeline seed; -1 or None is a fixed seed.
    prefetch_queue_depth: iterations in flight or waiting (int, or dict(cpu_size, gpu_size)).
    The other DALI arguments are accepted; those with no meaning for sluice are ignored, and
    enable_checkpointing/checkpoint raise NotImplementedError.
    """

    def __init__(self, batch_size=-1, num_threads=-1, device_id=None, seed=-1,
                 exec_pipelined=True, prefetch_queue_depth=2, exec_async=True,
                 bytes_per_sample=0, set_affinity=False, max_streams=-1,
                 default_cuda_stream_priority=0, *, enable_memory_stats=False,
                 enable_checkpointing=False, checkpoint=None, py_num_workers=1,
                 py_start_method="fork", py_callback_pickler=None, output_dtype=None,
                 output_ndim=None, exec_dynamic=None, stream_policy=None, concurrency=None,
                 max_batch_size=None):
        if enable_checkpointing or checkpoint is not None:
            raise NotImplementedError("Pipeline: checkpointing is not supported by sluice yet")
        if max_batch_size is not None and batch_size in (-1, None):
            batch_size = max_batch_size
        self._batch_size = -1 if batch_size is None else int(batch_size)
        self._num_threads = -1 if num_threads is None else int(num_threads)
        self._device_id = None if device_id in (None, -1) else int(device_id)
        self._seed = -1 if seed is None else int(seed)
        self._exec_pipelined, self._exec_async = bool(exec_pipelined), bool(exec_async)
        self._prefetch_queue_depth = prefetch_queue_depth
        self._depth = _depth(prefetch_queue_depth, exec_pipelined)
        self._output_dtype, self._output_ndim = output_dtype, output_ndim
        self._graph = _sluice.Graph()
        self._outputs = None        # DataNodes given to set_outputs
        self._finalized = False     # outputs written into the graph
        self._pipe = None           # the built C pipeline
        self._sources = []          # external_source.Source objects
        self._fed_nodes = set()     # external_source nodes fed by feed_input
        self._reset_run_state()

    def _reset_run_state(self):
        self._prefetched = False    # this epoch's first schedule_run happened
        self._c_prefetched = False  # the C pipeline's first schedule_run happened
        self._n_scheduled = 0       # iterations asked of the C pipeline
        self._n_shared = 0          # iterations taken (shared or failed) from it
        self._n_held = 0            # shared and not yet released
        self._ghosts = set()        # scheduled iterations that were given no data (epoch end)
        self._epoch_ended = False

    # ---- properties -------------------------------------------------------------------------
    batch_size = property(lambda self: self._batch_size)
    max_batch_size = batch_size
    num_threads = property(lambda self: self._num_threads)
    device_id = property(lambda self: self._device_id)
    seed = property(lambda self: self._seed)
    exec_pipelined = property(lambda self: self._exec_pipelined)
    exec_async = property(lambda self: self._exec_async)
    prefetch_queue_depth = property(lambda self: self._prefetch_queue_depth)

    # ---- definition ---------------------------------------------------------------------------
    @staticmethod
    def current():
        """The pipeline whose definition is being recorded on this thread, or None."""
        s = _stack()
        return s[-1] if s else None

    @staticmethod
    def push_current(pipe):
        _stack().append(pipe)

    @staticmethod
    def pop_current():
        return _stack().pop()

    def __enter__(self):
        Pipeline.push_current(self)
        return self

    def __exit__(self, *exc):
        Pipeline.pop_current()
        return False

    def define_graph(self):
        """Override (DALI's legacy style) to return the outputs; or use set_outputs."""
        raise NotImplementedError("define_graph is not implemented: use set_outputs(), "
                                  "@pipeline_def, or override define_graph")

    def iter_setup(self):
        """Called before each iteration is scheduled (DALI's legacy feed hook)."""

    def set_outputs(self, *outputs):
        """The pipeline's outputs, in order: DataNodes of this pipeline."""
        from .data_node import DataNode

        if self._finalized:
            raise RuntimeError("set_outputs: the pipeline is already built or serialized")
        flat = []
        for o in outputs:
            flat.extend(o if isinstance(o, (list, tuple)) else [o])
        for k, o in enumerate(flat):
            if not isinstance(o, DataNode):
                raise TypeError(f"set_outputs: output {k} must be a DataNode, got "
                                f"{type(o).__name__}")
            if o.pipeline is not self:
                raise ValueError(f"set_outputs: output {k} ({o.name}) belongs to another "
                                 "pipeline")
        self._outputs = flat

    def _finalize(self):
        if self._finalized:
            return
        if self._outputs is None and type(self).define_graph is not Pipeline.define_graph:
            with self:
                outs = self.define_graph()
            self.set_outputs(*(outs if isinstance(outs, (list, tuple)) else [outs]))
        if self._outputs is None:
            raise RuntimeError("the pipeline has no outputs: call set_outputs() inside its "
                               "definition, or use @pipeline_def")
        for o in self._outputs:
            self._graph.output(o.ref)
        self._finalized = True

    def _add_source(self, source):
        self._sources.append(source)

    def _add_fed_nodes(self, nodes):
        self._fed_nodes.update(nodes)

    # ---- build ------------------------------------------------------------------------------
    def _options(self):
        threads = self._num_threads if self._num_threads > 0 else (os.cpu_count() or 1)
        return {"batch_size": self._batch_size, "num_threads": threads,
                "prefetch_queue_depth": self._depth, "seed": self._seed,
                "device_id": -1 if self._device_id is None else self._device_id}

    def build(self):
        """Validates, prunes and places the graph, initialises the operators and starts the
        threads. run() builds implicitly; calling it twice is harmless."""
        if self._pipe is not None:
            return
        self._finalize()
        if self._device_id is not None and not _sluice.HAVE_CUDA:
            raise _sluice.UnsupportedError(
                f"Pipeline(device_id={self._device_id}): sluice was built without CUDA "
                "support; pass device_id=None for a CPU-only pipeline")
        o = self._options()
        pipe = _sluice.Pipeline(self._graph, o["batch_size"], o["num_threads"],
                                o["prefetch_queue_depth"], o["seed"], o["device_id"])
        pipe.build()
        self._pipe = pipe
        # external sources whose nodes were pruned (no output uses them) are not fed
        live = {st["name"] for st in pipe.stats()}
        for src in self._sources:
            src.live = [n in live for n in src.nodes]
        self._sources = [src for src in self._sources if any(src.live)]

    def _built(self):
        if self._pipe is None:
            self.build()
        return self._pipe

    # ---- running ----------------------------------------------------------------------------
    def _feed_sources(self):
        """Feeds every source one batch; False (nothing fed) when one ended its epoch."""
        try:
            batches = [s.next_batch(self._batch_size) for s in self._sources]
        except StopIteration:
            return False
        # All nodes get their batch or none does (a node fed alone would be a batch ahead of
        # the others from then on): the batch size, the usual mistake, is checked first.
        for s, outs in zip(self._sources, batches):
            for node, samples in zip(s.nodes, outs):
                if len(samples) != self._batch_size:
                    e = _sluice.InvalidArgumentError(
                        f'external_source (node "{node}"): feed_input: got {len(samples)} '
                        f"samples; the pipeline's batch size is {self._batch_size} (variable "
                        "batch sizes are not supported)")
                    e.code, e.operator, e.node = "SL_EINVAL", "external_source", node
                    raise e
        for s, outs in zip(self._sources, batches):
            for node, samples, layout, live in zip(s.nodes, outs, s.layouts, s.live):
                if live:
                    self._pipe.feed_input(node, samples, layout)
        return True

    def schedule_run(self):
        """Asks for one more iteration (the first call: prefetch_queue_depth of them), after
        feeding external sources. At the end of a source's epoch, nothing more is scheduled."""
        pipe = self._built()
        want = 1 if self._prefetched else self._depth
        fed = 0
        while fed < want and not self._epoch_ended:
            self.iter_setup()
            if self._sources and not self._feed_sources():
                self._epoch_ended = True
                break
            fed += 1
        if fed == 0:
            return
        if not self._c_prefetched:  # the C pipeline's first call asks for `depth` iterations
            pipe.schedule_run()
            # iterations given no data (the epoch ended during the prefetch) fail; skip them
            self._ghosts.update(range(self._n_scheduled + fed, self._n_scheduled + self._depth))
            self._n_scheduled += self._depth
            self._c_prefetched = True
        else:
            for _ in range(fed):
                pipe.schedule_run()
            self._n_scheduled += fed
        self._prefetched = True

    def _skip_ghosts(self):
        while self._n_shared < self._n_scheduled and self._n_shared in self._ghosts:
            self._ghosts.discard(self._n_shared)
            self._n_shared += 1
            try:
                self._pipe.share_outputs()
            except _sluice.SluiceError:
                continue  # expected: that iteration had no data
            self._pipe.release_outputs()

    def share_outputs(self):
        """Waits for the oldest scheduled iteration and returns its outputs (a tuple of
        TensorListCPU) without releasing any. Raises StopIteration at the end of an external
        source's epoch, and the iteration's error (SluiceError) if it failed — the next call
        goes on with the next iteration."""
        pipe = self._built()
        self._skip_ghosts()
        if self._n_shared >= self._n_scheduled and self._epoch_ended:
            raise StopIteration
        try:
            outs = pipe.share_outputs()
        except _sluice.SluiceError as e:
            if e.iteration is not None:
                self._n_shared += 1  # that iteration is consumed; the next call continues
            raise
        self._n_shared += 1
        self._n_held += 1
        self._check_outputs(outs)
        return outs

    def release_outputs(self):
        """Gives the oldest shared iteration back to the pipeline. Views of it (arrays,
        tensors) stay valid: its buffers are reused only after they are gone."""
        self._built().release_outputs()
        self._n_held -= 1

    def outputs(self):
        """release_outputs() (if something is shared) + share_outputs()."""
        if self._n_held:
            self.release_outputs()
        return self.share_outputs()

    def run(self, **pipeline_inputs):
        """schedule_run() + outputs(): the next iteration's outputs, a tuple of TensorListCPU.
        Builds the pipeline first if needed. Keyword arguments feed external sources by name
        (``pipe.run(images=batch)``)."""
        self._built()
        for name, data in pipeline_inputs.items():
            self.feed_input(name, data)
        if self._n_held:
            self.release_outputs()
        self.schedule_run()
        return self.share_outputs()

    def reset(self):
        """Starts the next epoch of the external sources after StopIteration."""
        if not self._epoch_ended:
            return
        for s in self._sources:
            s.reset()
        self._epoch_ended = False
        if self._n_shared >= self._n_scheduled:
            self._prefetched = False  # nothing in flight: prefetch again

    def empty(self):
        """True when no scheduled iteration is waiting to be taken by share_outputs() (DALI's
        Pipeline.empty(); the iterators schedule again after reset() when it is)."""
        if self._pipe is None:
            return True
        waiting = self._n_scheduled - self._n_shared
        waiting -= sum(1 for k in self._ghosts if k >= self._n_shared)
        return waiting <= 0

    def feed_input(self, data_node, data, layout=None, cuda_stream=None, use_copy_kernel=None):
        """Feeds one batch to the external_source named `data_node` (its name or DataNode):
        a list of arrays or one array with a leading batch dimension (NumPy, torch CPU
        tensors, DLPack objects); copied. Feed before the iteration is scheduled: the first
        run() schedules prefetch_queue_depth iterations."""
        from .data_node import DataNode
        from .external_source import to_samples

        name = data_node.node if isinstance(data_node, DataNode) else str(data_node)
        pipe = self._built()
        for s in self._sources:
            if name in s.nodes:
                raise RuntimeError(f"feed_input: the external source \"{name}\" has a 'source' "
                                   "argument; it is fed from there")
        pipe.feed_input(name, to_samples(data), layout)

    def _check_outputs(self, outs):
        from . import types

        for k, t in enumerate(outs):
            want = self._output_dtype
            want = want[k] if isinstance(want, (list, tuple)) else want
            if want is not None and types.to_arg(want) != types.to_arg(t.dtype):
                raise TypeError(f"output {k}: dtype {t.dtype!r}, expected {want!r} "
                                "(output_dtype)")
            nd = self._output_ndim
            nd = nd[k] if isinstance(nd, (list, tuple)) else nd
            if nd is not None and len(t.shape()[0] if len(t) else ()) != nd:
                raise ValueError(f"output {k}: {len(t.shape()[0])} dimensions, expected {nd} "
                                 "(output_ndim)")

    # ---- readers ----------------------------------------------------------------------------
    def _reader_names(self):
        names = []
        for s in self._built().stats():
            with contextlib.suppress(_sluice.NotFoundError):
                self._pipe.reader_meta(s["name"])
                names.append(s["name"])
        return names

    def epoch_size(self, name=None):
        """Samples in reader `name`'s epoch (the whole data set, not the shard); with no name,
        a dict {reader name: size}."""
        if name is not None:
            self._built().reader_meta(name)  # NotFoundError when there is no such reader
            return self._pipe.epoch_size(name)
        return {n: self._pipe.epoch_size(n) for n in self._reader_names()}

    def reader_meta(self, name=None):
        """DALI's reader metadata (epoch_size, epoch_size_padded, number_of_shards, shard_id,
        pad_last_batch, stick_to_shard) of reader `name`; with no name, a dict of them."""
        if name is not None:
            return self._built().reader_meta(name)
        return {n: self._pipe.reader_meta(n) for n in self._reader_names()}

    def executor_statistics(self):
        """Per-node timing: {node: dict(op, device, iterations, total_ms, busy_ms)}."""
        return {s.pop("name"): s for s in self._built().stats()}

    # ---- serialisation ------------------------------------------------------------------------
    def serialize(self, define_graph=None, filename=None):
        """The pipeline as the JSON spec `sluice run` reads (graph + options); written to
        `filename` too when given. Python sources of external_source nodes are not part of it:
        a deserialized pipeline is fed with feed_input."""
        if define_graph is not None and self._outputs is None:
            with self:
                outs = define_graph()
            self.set_outputs(*(outs if isinstance(outs, (list, tuple)) else [outs]))
        self._finalize()
        text = self._graph.to_json(self._options())
        if filename is not None:
            with open(filename, "w") as f:
                f.write(text)
        return text

    @classmethod
    def deserialize(cls, serialized_pipeline=None, filename=None, **kwargs):
        """A Pipeline (not built) from a JSON spec (a string, or `filename`); keyword
        arguments override the spec's pipeline options."""
        text = _read_spec(serialized_pipeline, filename)
        opts = _sluice.options_from_json(text)
        opts.update({k: v for k, v in kwargs.items() if k in opts})
        extra = {k: v for k, v in kwargs.items() if k not in opts}
        pipe = cls(**opts, **extra)
        pipe._adopt_spec(text)
        return pipe

    def deserialize_and_build(self, serialized_pipeline):
        """Replaces this pipeline's graph and options with a spec's, then builds."""
        if self._pipe is not None:
            raise RuntimeError("deserialize_and_build: the pipeline is already built")
        o = _sluice.options_from_json(serialized_pipeline)
        self._batch_size, self._num_threads = o["batch_size"], o["num_threads"]
        self._depth = self._prefetch_queue_depth = o["prefetch_queue_depth"]
        self._seed = o["seed"]
        self._device_id = None if o["device_id"] == -1 else o["device_id"]
        self._adopt_spec(serialized_pipeline)
        self.build()

    def _adopt_spec(self, text):
        self._graph = _sluice.graph_from_json(text)
        self._finalized = True
        self._sources, self._outputs = [], []

    # ---- misc --------------------------------------------------------------------------------
    def __repr__(self):
        return (f"Pipeline(batch_size={self._batch_size}, num_threads={self._num_threads}, "
                f"prefetch_queue_depth={self._depth}, seed={self._seed}, "
                f"built={self._pipe is not None})")


def _read_spec(serialized_pipeline, filename):
    if (serialized_pipeline is None) == (filename is None):
        raise ValueError("deserialize: give exactly one of serialized_pipeline and filename")
    if filename is not None:
        with open(filename) as f:
            return f.read()
    if isinstance(serialized_pipeline, bytes):
        return serialized_pipeline.decode()
    return serialized_pipeline


def _reject_conditionals(enable_conditionals, debug=False):
    if enable_conditionals:
        raise NotImplementedError(
            "pipeline_def(enable_conditionals=True): sluice has no conditional execution "
            "(if/else on DataNodes); compute both branches and select with arithmetic")
    if debug:
        raise NotImplementedError("pipeline_def(debug=True): sluice has no debug mode")


def pipeline_def(fn=None, *, enable_conditionals=False, debug=False, **pipeline_kwargs):
    """Decorator: ``@pipeline_def(batch_size=..., ...)`` turns a function that calls fn.* and
    returns DataNodes into a factory of Pipelines. Pipeline arguments given at the decorator
    are defaults; the same arguments given when calling the factory override them (and are
    also passed to the function when it takes a parameter of that name)."""
    _reject_conditionals(enable_conditionals, debug)

    def decorate(func):
        params = inspect.signature(func).parameters

        @functools.wraps(func)
        def create(*args, **kwargs):
            _reject_conditionals(kwargs.pop("enable_conditionals", False),
                                 kwargs.pop("debug", False))
            ctor = dict(pipeline_kwargs)
            for k in list(kwargs):
                if k in _PIPELINE_ARGS:
                    ctor[k] = kwargs[k] if k in params else kwargs.pop(k)
            pipe = Pipeline(**ctor)
            with pipe:
                outs = func(*args, **kwargs)
                if outs is None:
                    raise RuntimeError(f"{func.__name__}: a pipeline definition must return "
                                       "its outputs (DataNodes)")
                pipe.set_outputs(*(outs if isinstance(outs, (list, tuple)) else [outs]))
            return pipe

        return create

    return decorate(fn) if fn is not None else decorate
