"""sluice.pipeline: Pipeline and pipeline_def, following DALI's API.

A Pipeline records operator nodes as fn.* is called inside its definition (``with pipe:``, a
``@pipeline_def`` function, or ``define_graph``) into a C graph — and adopts, when it is built,
the nodes made outside any definition that its outputs reach (sluice.node) —, builds it into a
C pipeline
(sluice._sluice.Pipeline) and runs it with DALI's run API. This class adds what is Python's:
feeding ``fn.external_source`` sources before each iteration is scheduled, their epochs
(StopIteration / reset), the worker processes of parallel sources (sluice.parallel: started
at build, shut down when the pipeline dies), and DALI's argument conventions.

Scheduling keeps a queue of *units*, one per scheduled step, in order: an iteration of the C
pipeline, a "ghost" (an iteration the C pipeline's first schedule_run started although the
epoch ended before it got data: it fails and is skipped), or the exception of a parallel
source's batch, raised by the share_outputs() that reaches it — so a worker's error comes out
at the batch it belongs to, and the pipeline goes on.

Differences from DALI, on purpose or not yet: ``exec_async=False`` changes nothing (work
always runs on the pipeline's threads; run() waits for it); ``exec_pipelined=False`` means
prefetch depth 1; ``prefetch_queue_depth`` as a dict gives separated queues with the dynamic
executor's other traits (in DALI it selects the legacy executor); the debug mode is not
supported; a checkpoint is sluice's JSON (the C library's, sl_pipeline_checkpoint, plus the
Python sources' and iterator's positions under "application"), not DALI's format; outputs stay valid while referenced (a view keeps its
iteration's buffers, which are set aside so the pipeline goes on: memory grows while batches
are kept, up to max_held_bytes), not only until the next run; an error of an external source
does not end the pipeline. As in DALI, no seed means a fresh seed per pipeline (drawn by the C
library; ``seed`` is then None and serialize() writes the one drawn).
"""
import collections
import contextlib
import functools
import inspect
import os
import shutil
import subprocess
import threading
import warnings
import weakref

from . import _conditionals
from . import _convert
from . import _sluice
from . import distributed
from . import node as _node
from ._convert import do_not_convert  # noqa: F401  (DALI's sluice.pipeline.do_not_convert)

_tls = threading.local()

# Keyword arguments of Pipeline() (what pipeline_def routes to the pipeline).
_PIPELINE_ARGS = (
    "batch_size", "num_threads", "device_id", "seed", "exec_pipelined", "prefetch_queue_depth",
    "exec_async", "bytes_per_sample", "set_affinity", "max_streams",
    "default_cuda_stream_priority", "enable_memory_stats", "enable_checkpointing", "checkpoint",
    "py_num_workers", "py_start_method", "py_callback_pickler", "py_worker_init",
    "output_dtype", "output_ndim", "exec_dynamic", "stream_policy", "concurrency",
    "max_batch_size", "fuse_samples", "max_held_bytes", "max_sample_bytes", "on_bad_sample",
    "max_bad_samples", "prefetch_max_bytes", "cache_bytes", "cache_file")

# What a unit of the schedule queue is when it is not an exception (see the module comment).
_ITER, _GHOST = "iteration", "ghost"


def _stack():
    if not hasattr(_tls, "stack"):
        _tls.stack = []
    return _tls.stack


def _queues(prefetch_queue_depth, exec_pipelined):
    """(iterations in flight, cpu_queue_depth, gpu_queue_depth): an int is one queue for both
    stages (0, 0); a dict(cpu_size, gpu_size) separated queues, as DALI's: gpu_size buffer sets
    for the mixed and gpu stages, the CPU stage cpu_size iterations beyond them."""
    if isinstance(prefetch_queue_depth, str):
        if prefetch_queue_depth != "auto":
            raise ValueError('prefetch_queue_depth must be an int, "auto" or dict(cpu_size, '
                             f"gpu_size), got {prefetch_queue_depth!r}")
        # tuned by the C executor from 2 on (sluice's addition); 2 is what the first run
        # schedules, and the depth of a pipeline fed by external sources
        return (2 if exec_pipelined else 1), 0, 0
    if isinstance(prefetch_queue_depth, dict):
        unknown = set(prefetch_queue_depth) - {"cpu_size", "gpu_size"}
        if unknown:
            raise ValueError(f"prefetch_queue_depth: unknown keys {sorted(unknown)} (expected "
                             "cpu_size, gpu_size)")
        cpu = prefetch_queue_depth.get("cpu_size", 2)
        gpu = prefetch_queue_depth.get("gpu_size", 2)
        for key, v in (("cpu_size", cpu), ("gpu_size", gpu)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"prefetch_queue_depth: {key} must be an int of at least 1, "
                                 f"got {v!r}")
        if not exec_pipelined:
            return 1, 0, 0
        return cpu + gpu, cpu, gpu
    return (1 if not exec_pipelined else int(prefetch_queue_depth)), 0, 0


def _queue_size(prefetch_queue_depth, key):
    """DALI's cpu_queue_size / gpu_queue_size: the dict's entry, or the int for both."""
    if isinstance(prefetch_queue_depth, dict):
        return prefetch_queue_depth.get(key, 2)
    return prefetch_queue_depth


# sl_pipeline_options.device_id's SL_DEVICE_ID_AUTO ("auto" in a JSON spec)
_DEVICE_ID_AUTO = -2


def _device_arg(device_id):
    """Pipeline's device_id: None (-1: CPU only), an int, or "auto": the job's local rank
    (sluice.distributed.local_rank(), resolved now)."""
    if device_id is None or (not isinstance(device_id, str) and device_id == -1):
        return None
    if device_id == "auto" or (not isinstance(device_id, str) and device_id == _DEVICE_ID_AUTO):
        return distributed.local_rank()
    if isinstance(device_id, str):
        raise ValueError(f'Pipeline: device_id must be an int, None or "auto", got {device_id!r}')
    return int(device_id)


class Pipeline:
    """Pipeline(batch_size, num_threads, device_id=None, seed=None, exec_pipelined=True,
    prefetch_queue_depth="auto", exec_async=True, bytes_per_sample=0, set_affinity=False, ...)

    batch_size: samples per iteration (required). num_threads: CPU worker threads (-1 or
    "auto", the default: one per CPU this process may run on, its affinity mask; 0, sluice's
    addition: no worker threads, run() runs the iteration's work on the calling thread). device_id: the CUDA device of the GPU stage (mixed and gpu operators, .gpu()); None
    (or -1) for a CPU-only pipeline; "auto" (sluice's addition): the local rank of the job's
    launcher (sluice.distributed.local_rank()). A pipeline without mixed or gpu nodes never touches CUDA,
    whatever its device_id. seed: pipeline seed; None (or negative, DALI's older spelling): a
    fresh seed drawn for this pipeline (by the C library, when the pipeline is created at
    build, serialize() or start_py_workers(); serialize() writes it, so a deserialized
    pipeline repeats the run). The seed property is then None, as in DALI.
    prefetch_queue_depth: iterations in flight or waiting (int); "auto" (sluice's default; DALI's
    is 2): from 2 up to 8, tuned while it runs — more while the threads idle at the tails of
    the batches in flight and run() waits, fewer when the consumer is the bottleneck, within
    prefetch_max_bytes of outputs (default 0: 1 GiB or an eighth of the memory);
    prefetch_statistics() shows the decisions; the outputs are the same at any depth; with an
    external source or a GPU stage "auto" is 2; or dict(cpu_size, gpu_size):
    separated queues, as DALI's: gpu_size buffer sets for the mixed and gpu stages' outputs
    (each lent to the consumer until released), and the CPU stage runs up to cpu_size
    iterations beyond them (cpu_size + gpu_size in flight; the first run schedules them all).
    py_num_workers (default 1), py_start_method ("fork", default, or "spawn"),
    py_callback_pickler (spawn: a module or object with dumps/loads, or (it, dumps_kwargs,
    loads_kwargs); None: pickle, with lambdas and local functions saved by value) and
    py_worker_init (sluice's addition: called as py_worker_init(worker_id) in each worker, after
    seeding) configure the worker processes of parallel external sources.
    fuse_samples (sluice's addition, default True): sample fusion, a node whose one output only
    a per-sample operator reads runs sample by sample with it (less memory; the same outputs);
    False runs every node batch by batch.
    max_held_bytes (sluice's addition, default 0): outputs released while something still
    references them (a TensorList, an array or tensor made from one) are set aside and the
    pipeline goes on with other buffers, up to this many bytes of host memory and as many of
    device memory; 0 is a quarter of the machine's memory and a quarter of the GPU's. Past it,
    run() waits for references to die and raises MisuseError after about 2 s naming the
    iterations that hold the memory.
    max_sample_bytes (sluice's addition, default 1 GiB): the largest output sample of any
    operator, and the most working memory an operator takes for one sample (a decoder's); a
    sample past it fails its batch (InvalidArgumentError naming the operator, the sample and its
    file) before anything is allocated for it, and the pipeline goes on with the next batch.
    on_bad_sample (sluice's addition, default "raise"): what a sample whose per-sample work
    fails (a file a decoder cannot decode, one past max_sample_bytes) does: "raise" fails its
    batch (run() raises, the next run goes on), "skip" delivers the batch without it (a smaller
    batch, the other samples in order), "replace" puts the next good sample of the same batch
    (wrapping around) in its place in every output. Each skipped or replaced sample is logged on
    stderr with its file and counted (bad_samples(), executor_statistics()). A decoder's own
    on_bad_sample argument overrides it for that decoder. CPU pipelines only (a pipeline with
    mixed or gpu operators raises UnsupportedError at build for "skip" and "replace").
    max_bad_samples (sluice's addition, default 0: no limit): the most samples skipped or
    replaced over the pipeline's life; the batch that passes it raises its first bad sample's
    error.
    cache_bytes (sluice's addition, default 0: no cache) and cache_file (default None: in
    memory): the sample cache. The outputs of the part of the graph that hangs off a reader
    through deterministic operators only (readers.file -> decoders.image -> resize ->
    crop_mirror_normalize, not a random operator, an external source or a Python function) are
    kept per sample, keyed by the sample's index in the data set, up to cache_bytes bytes (in
    memory, or in the file cache_file, created at build and removed with the pipeline); a later
    epoch, shuffled or not, copies a cached sample instead of reading, decoding and transforming
    it again, byte for byte what the work gives. Samples are admitted as they are first
    computed until one does not fit; none is evicted. cache_stats() tells hits and misses.
    The other DALI arguments are accepted; those with no meaning for sluice are ignored, and
    enable_checkpointing=True lets checkpoint() save the pipeline's state; checkpoint=<the text
    checkpoint() returned> restores it: the pipeline continues with what the checkpointed one
    would have delivered next, byte for byte (readers' positions, random operators, the
    bad-sample count, Python sources called with SampleInfo/BatchInfo/the iteration).
    """

    def __init__(self, batch_size=-1, num_threads=-1, device_id=None, seed=None,
                 exec_pipelined=True, prefetch_queue_depth="auto", exec_async=True,
                 bytes_per_sample=0, set_affinity=False, max_streams=-1,
                 default_cuda_stream_priority=0, *, enable_memory_stats=False,
                 enable_checkpointing=False, checkpoint=None, py_num_workers=1,
                 py_start_method="fork", py_callback_pickler=None, py_worker_init=None,
                 output_dtype=None, output_ndim=None, exec_dynamic=None, stream_policy=None,
                 concurrency=None, max_batch_size=None, fuse_samples=True, max_held_bytes=0,
                 max_sample_bytes=1 << 30, enable_conditionals=False, on_bad_sample="raise",
                 max_bad_samples=0, prefetch_max_bytes=0, cache_bytes=0, cache_file=None):
        self._enable_checkpointing = bool(enable_checkpointing)
        self._adopted_sources = []  # sources made outside the definition (sluice.node.adopt)
        self._restore_text, self._restored_app = None, {}
        if checkpoint is not None:
            self._restore_text, self._restored_app = _split_checkpoint(checkpoint)
        if py_start_method not in ("fork", "spawn"):
            raise ValueError(f'Pipeline: py_start_method must be "fork" or "spawn", got '
                             f"{py_start_method!r}")
        if py_num_workers is None or int(py_num_workers) < 0:
            raise ValueError(f"Pipeline: py_num_workers must be 0 or more, got {py_num_workers}")
        if py_worker_init is not None and not callable(py_worker_init):
            raise TypeError("Pipeline: py_worker_init must be callable (it gets the worker id)")
        self._py_num_workers = int(py_num_workers)
        self._py_start_method = py_start_method
        # DALI's arguments with no effect in sluice, kept for the properties of their names
        self._set_affinity, self._max_streams = bool(set_affinity), max_streams
        self._default_cuda_stream_priority = default_cuda_stream_priority
        self._enable_memory_stats = bool(enable_memory_stats)
        self._py_callback_pickler = py_callback_pickler
        self._py_worker_init = py_worker_init
        self._pool = None           # sluice.parallel.WorkerPool of the parallel sources
        if max_batch_size is not None and batch_size in (-1, None):
            batch_size = max_batch_size
        self._batch_size = -1 if batch_size is None else int(batch_size)
        self._num_threads = -1 if num_threads in (None, "auto") else int(num_threads)
        self._device_id = _device_arg(device_id)
        self._seed = None if seed is None or int(seed) < 0 else int(seed)  # None: not fixed
        self._fuse_samples = bool(fuse_samples)
        self._max_held_bytes = 0 if max_held_bytes is None else int(max_held_bytes)
        self._max_sample_bytes = 1 << 30 if max_sample_bytes is None else int(max_sample_bytes)
        if on_bad_sample not in ("raise", "skip", "replace"):
            raise ValueError(f'Pipeline: on_bad_sample must be "raise", "skip" or "replace", '
                             f"got {on_bad_sample!r}")
        self._on_bad_sample = on_bad_sample
        if max_bad_samples is None or int(max_bad_samples) < 0:
            raise ValueError(f"Pipeline: max_bad_samples must be 0 (no limit) or more, got "
                             f"{max_bad_samples}")
        self._max_bad_samples = int(max_bad_samples)
        if prefetch_max_bytes is None or int(prefetch_max_bytes) < 0:
            raise ValueError("Pipeline: prefetch_max_bytes must be 0 (the default budget) or "
                             f"more, got {prefetch_max_bytes}")
        self._prefetch_max_bytes = int(prefetch_max_bytes)
        if cache_bytes is None or int(cache_bytes) < 0:
            raise ValueError(f"Pipeline: cache_bytes must be 0 (no cache) or more, got "
                             f"{cache_bytes}")
        self._cache_bytes = int(cache_bytes)
        self._cache_file = "" if cache_file is None else os.fspath(cache_file)
        self._exec_pipelined, self._exec_async = bool(exec_pipelined), bool(exec_async)
        self._prefetch_queue_depth = prefetch_queue_depth
        self._depth, self._cpu_queue, self._gpu_queue = _queues(prefetch_queue_depth,
                                                                exec_pipelined)
        self._output_dtype, self._output_ndim = output_dtype, output_ndim
        self._graph = _sluice.Graph()
        self._names = {}            # sluice.node.Node -> its name in _graph (sluice.node)
        self._groups = set()        # external_source groups given a Source here
        self._callbacks = {}        # python_function node name -> its function's Spec
        self._outputs = None        # DataNodes given to set_outputs
        self._finalized = False     # outputs written into the graph
        self._cpipe = None          # the C pipeline, created (its seed drawn) at first need
        self._pipe = None           # the same, once built
        self._sources = []          # external_source.Source objects
        # enable_conditionals: the open conditionals while the definition is traced
        self._conditionals = bool(enable_conditionals)
        self._cond_stack = _conditionals.Stack() if enable_conditionals else None
        self._reset_run_state()

    def _reset_run_state(self):
        self._fed = 0               # C iterations given their batches (or skipped as ghosts)
        self._src_snaps = {}        # C iteration -> the sources' state before its batch
        self._prefetched = False    # this epoch's first schedule_run happened
        self._c_prefetched = False  # the C pipeline's first schedule_run happened
        self._n_first = 0           # batches fed for the C pipeline's first schedule_run
        self._units = collections.deque()  # scheduled, not yet shared: _ITER, _GHOST or an error
        self._n_held = 0            # shared and not yet released
        self._epoch_ended = False

    # ---- properties -------------------------------------------------------------------------
    batch_size = property(lambda self: self._batch_size)
    max_batch_size = batch_size
    num_threads = property(lambda self: self._num_threads)
    device_id = property(lambda self: self._device_id)
    seed = property(lambda self: self._seed, doc="The seed given, or None: a fresh one is "
                    "drawn for this pipeline (serialize() writes it).")
    exec_pipelined = property(lambda self: self._exec_pipelined)
    exec_async = property(lambda self: self._exec_async)
    prefetch_queue_depth = property(lambda self: self._prefetch_queue_depth)
    exec_separated = property(lambda self: isinstance(self._prefetch_queue_depth, dict))
    cpu_queue_size = property(lambda self: _queue_size(self._prefetch_queue_depth, "cpu_size"))
    gpu_queue_size = property(lambda self: _queue_size(self._prefetch_queue_depth, "gpu_size"))
    py_num_workers = property(lambda self: self._py_num_workers)
    py_start_method = property(lambda self: self._py_start_method)
    set_affinity = property(lambda self: self._set_affinity)
    max_streams = property(lambda self: self._max_streams)
    default_cuda_stream_priority = property(lambda self: self._default_cuda_stream_priority)
    enable_memory_stats = property(lambda self: self._enable_memory_stats)
    enable_conditionals = property(lambda self: self._conditionals)
    enable_checkpointing = property(lambda self: self._enable_checkpointing)

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
        """Called before each iteration is scheduled (DALI's legacy feed hook): override it to
        feed_input() the iteration's data. Raising StopIteration ends the epoch: the batches
        fed before are still delivered, then run() raises StopIteration; reset() starts the
        next epoch."""

    def set_outputs(self, *outputs):
        """The pipeline's outputs, in order: DataNodes — of this pipeline's definition, made
        outside any (this pipeline adopts them, and what they read, when it is built), or of
        another pipeline — or constants (numbers, lists, NumPy arrays, types.Constant), which
        become constant nodes on the CPU. As in DALI they are checked when the pipeline is
        built: a list of DataNodes given as one output (set_outputs(nodes) for
        set_outputs(*nodes)) or anything else is a TypeError then."""
        if self._finalized:
            raise RuntimeError("set_outputs: the pipeline is already built or serialized")
        self._outputs = list(outputs)

    def _finalize(self):
        if self._finalized:
            return
        if self._outputs is None and type(self).define_graph is not Pipeline.define_graph:
            define = self.define_graph
            if self._conditionals:
                define = _convert.convert(define)
            with self:
                outs = define()
            self.set_outputs(*(outs if isinstance(outs, (list, tuple)) else [outs]))
        if self._outputs is None:
            raise RuntimeError("the pipeline has no outputs: call set_outputs() inside its "
                               "definition, or use @pipeline_def")
        outputs = _node.outputs(self._outputs)
        refs = [_node.ref(self, o) for o in outputs]  # adopts what they reach
        for r in refs:
            self._graph.output(r)
        self._finalized = True
        self._outputs = []  # the graph holds them now

    def _add_source(self, source):
        self._sources.append(source)

    # ---- build ------------------------------------------------------------------------------
    def _options(self):
        # 0: the calling thread runs the tasks; negative: the affinity's CPUs
        threads = self._num_threads if self._num_threads >= 0 else "auto"
        auto = self._prefetch_queue_depth == "auto" and self._exec_pipelined
        return {"batch_size": self._batch_size, "num_threads": threads,
                "prefetch_queue_depth": "auto" if auto else self._depth,
                "seed": -1 if self._seed is None else self._seed,
                "device_id": -1 if self._device_id is None else self._device_id,
                "fuse_samples": int(self._fuse_samples),
                "cpu_queue_depth": self._cpu_queue, "gpu_queue_depth": self._gpu_queue,
                "max_held_bytes": self._max_held_bytes,
                "max_sample_bytes": self._max_sample_bytes,
                "on_bad_sample": self._on_bad_sample, "max_bad_samples": self._max_bad_samples,
                "prefetch_max_bytes": self._prefetch_max_bytes,
                "cache_bytes": self._cache_bytes, "cache_file": self._cache_file,
                "enable_checkpointing": int(self._enable_checkpointing)}

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
        self._check_checkpointable()
        pipe = self._c_pipeline()
        self.start_py_workers()  # before the pipeline's threads exist (fork)
        try:
            pipe.build()
        except BaseException:
            self._close_pool()
            self._cpipe = None  # a failed build is not retried on the same C pipeline
            raise
        self._pipe = pipe
        self._restore_sources()
        # external sources whose nodes were pruned (no output uses them) are not fed
        live = {st["name"] for st in pipe.stats()}
        for src in self._sources:
            src.live = [n in live for n in src.nodes]
        self._sources = [src for src in self._sources if any(src.live)]

    def _built(self):
        if self._pipe is None:
            self.build()
        return self._pipe

    def _c_pipeline(self):
        """The C pipeline, created on first need and not yet built (no thread started): its
        seed is the pipeline's, drawn by the C library when none was given — build, serialize()
        and the workers' seeds all see that one."""
        if self._cpipe is None:
            self._finalize()
            o = self._options()
            distributed._register_torch()  # for readers' shard_id/num_shards="auto"
            cpipe = _sluice.Pipeline(self._graph, o, self._restore_text)
            for name, spec in self._callbacks.items():  # python_function nodes' functions
                cpipe.set_callback(name, spec.runner(self, name))
            self._cpipe = cpipe
        return self._cpipe

    # ---- worker processes of parallel external sources ----------------------------------------
    def start_py_workers(self):
        """Starts the worker processes of the parallel external sources (build() does it when
        they are not running yet). DALI's advice holds: with several pipelines, start their
        workers before the first is built or any heavy library started threads."""
        parallel = [s for s in self._sources if s.parallel]
        if self._pool is not None or not parallel:
            return
        self._finalize()
        from .parallel import WorkerPool

        n = self._py_num_workers
        try:
            cpus = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cpus = os.cpu_count() or 1
        if n > cpus:
            warnings.warn(f"Pipeline: py_num_workers={n} worker processes for {cpus} CPUs "
                          "(this process's affinity): excessive worker creation might make the "
                          "pipeline slow or even freeze it", UserWarning, stacklevel=3)
        pool = WorkerPool(parallel, n, self._py_start_method, self._py_callback_pickler,
                          self._py_worker_init, self._c_pipeline().seed, self._batch_size)
        # the pool must not refer to the pipeline: the finalizer stops it when the pipeline
        # dies (del, garbage collection, interpreter exit)
        self._pool_finalizer = weakref.finalize(self, pool.close)
        self._pool = pool
        pool.start()

    def _close_pool(self):
        if self._pool is not None:
            self._pool_finalizer()
            self._pool = None

    def external_source_shm_statistics(self):
        """Shared-memory chunks of the parallel sources' workers: {"capacities": [bytes of each
        chunk], "per_worker": [{"pid", "chunks", "bytes"}]} (DALI's name)."""
        if self._pool is None:
            return {"capacities": [], "per_worker": []}
        return self._pool.shm_statistics()

    @property
    def py_worker_pids(self):
        """Process ids of the parallel sources' workers ([] before they start)."""
        return [] if self._pool is None else self._pool.pids

    # ---- running ----------------------------------------------------------------------------
    def _feed_sources(self):
        """Feeds every source one batch. Returns True (fed), False (a source ended its epoch:
        nothing fed) or the exception of a parallel source's batch (nothing fed: the unit is
        that error). A serial source's exception propagates (that batch of every source is
        skipped); a parallel source's WorkerError/timeout propagates with nothing consumed."""
        parallel = [s for s in self._sources if s.parallel]
        serial_sources = [s for s in self._sources if not s.parallel]
        for s in parallel:
            s.prepare()  # may raise; nothing is consumed yet
        serial = []
        try:
            serial = [s.next_batch(self._batch_size) for s in serial_sources]
        except BaseException as e:
            for s in parallel:
                s.drop(s.take())
            if isinstance(e, StopIteration):
                return False
            raise
        units = [s.take() for s in parallel]
        kinds = [u[0] for u in units]
        if "end" in kinds or "error" in kinds:
            for s, u in zip(parallel, units):
                s.drop(u)
            return False if "end" in kinds else units[kinds.index("error")][1]
        sizes = {}
        for s, u in zip(parallel, units):
            sizes.update({node: u[1].n for node in s.nodes})
        for s, outs in zip(serial_sources, serial):
            sizes.update({node: len(samples) for node, samples in zip(s.nodes, outs)})
        # All nodes get their batch or none does (a node fed alone would be a batch ahead of
        # the others from then on): the batch sizes are checked first.
        bad = [(node, n) for node, n in sizes.items() if not 1 <= n <= self._batch_size]
        if not bad and len(set(sizes.values())) > 1:
            bad = [(node, n) for node, n in sizes.items()]
        if bad:
            for s, u in zip(parallel, units):
                s.drop(u)
            node, n = bad[0]
            why = (f"expected 1 to {self._batch_size} (the pipeline's batch size)"
                   if not 1 <= n <= self._batch_size else
                   "the external sources of a pipeline must give batches of one size: "
                   + ", ".join(f'"{k}" {v}' for k, v in sizes.items()))
            e = _sluice.InvalidArgumentError(
                f'external_source (node "{node}"): feed_input: got {n} samples; {why}')
            e.code, e.operator, e.node = "SL_EINVAL", "external_source", node
            raise e
        for s, u in zip(parallel, units):
            self._feed_lent(s, u[1])
        for s, outs in zip(serial_sources, serial):
            for node, samples, layout, live in zip(s.nodes, outs, s.layouts, s.live):
                if live:
                    self._pipe.feed_input(node, samples, layout)
        return True

    def _feed_lent(self, source, batch):
        try:
            for node, (dtype, ndim, samples), layout, live in zip(
                    source.nodes, batch.outputs, source.layouts, source.live):
                if live:
                    self._pipe.feed_lent(node, batch.chunks, samples, dtype, ndim, layout)
        finally:
            self._pool.lend(batch.refs)  # free again once the pipeline released them

    def _schedule_c(self, n_data):
        """Schedules C iterations for n_data batches just fed (the C pipeline's first call
        starts `depth` of them: it waits until that many were fed or the epoch ended)."""
        pipe = self._pipe
        if self._c_prefetched:
            for _ in range(n_data):
                pipe.schedule_run()
            return
        self._n_first += n_data
        if self._n_first < self._depth and not self._epoch_ended:
            return
        if self._n_first == 0:
            return  # nothing at all in this epoch: no iteration to run
        pipe.schedule_run()
        self._c_prefetched = True
        # iterations given no data (the epoch ended during the prefetch) fail: skip them
        self._units.extend([_GHOST] * (self._depth - self._n_first))
        self._fed += self._depth - self._n_first

    def schedule_run(self):
        """Asks for one more iteration (the first call: prefetch_queue_depth of them), after
        feeding external sources. At the end of a source's epoch, nothing more is scheduled."""
        self._built()
        if not self._c_prefetched:
            want = self._depth - self._n_first  # the first C call needs `depth` batches
        else:
            want = 1 if self._prefetched else self._depth
        while want > 0 and not self._epoch_ended:
            try:
                self.iter_setup()
            except StopIteration:
                # DALI's legacy feed hook ends the epoch as a source does: what was fed and
                # scheduled before is still delivered, then run() raises StopIteration
                self._epoch_ended = True
                break
            snap = self._snapshot_sources()
            fed = self._feed_sources() if self._sources else True
            if fed is True:
                self._src_snaps[self._fed] = snap
                self._fed += 1
            if fed is False:
                self._epoch_ended = True
                break
            if fed is True:
                self._units.append(_ITER)
                want -= 1
                self._schedule_c(1)
            else:  # a parallel source's error: a unit of its own, raised in its turn
                self._units.append(fed)
                if self._c_prefetched:
                    want -= 1
        if self._epoch_ended and not self._c_prefetched:
            self._schedule_c(0)
        self._prefetched = True

    def _skip_ghosts(self):
        while self._units and self._units[0] is _GHOST:
            self._units.popleft()
            try:
                self._pipe.share_outputs()
            except _sluice.SluiceError:
                continue  # expected: that iteration had no data
            self._pipe.release_outputs()

    def share_outputs(self):
        """Waits for the oldest scheduled iteration and returns its outputs (a tuple of
        TensorListCPU) without releasing any. Raises StopIteration at the end of an external
        source's epoch, and the iteration's error (SluiceError, or the exception of a parallel
        source's batch) if it failed — the next call goes on with the next iteration."""
        pipe = self._built()
        self._skip_ghosts()
        if not self._units and self._epoch_ended:
            raise StopIteration
        if self._units and self._units[0] is not _ITER:
            error = self._units.popleft()
            try:
                raise error
            finally:
                del error  # no cycle through this frame
        try:
            outs = pipe.share_outputs()
        except _sluice.SluiceError as e:
            if e.iteration is not None and self._units:
                self._units.popleft()  # that iteration is consumed; the next call continues
            raise
        if self._units:
            self._units.popleft()
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
        """Starts the next epoch of the external sources after StopIteration (parallel
        sources: the workers stay; tasks still out for the old epoch are dropped)."""
        if not self._epoch_ended:
            return
        for s in self._sources:
            s.reset()
        self._epoch_ended = False
        if self.empty():
            self._prefetched = False  # nothing in flight: prefetch again

    def empty(self):
        """True when no scheduled iteration is waiting to be taken by share_outputs() (DALI's
        Pipeline.empty(); the iterators schedule again after reset() when it is)."""
        if self._pipe is None:
            return True
        return all(u is _GHOST for u in self._units)

    def feed_input(self, data_node, data, layout=None, cuda_stream=None, use_copy_kernel=None):
        """Feeds one batch to the external_source named `data_node` (its name or DataNode):
        a list of arrays or one array with a leading batch dimension (NumPy, torch CPU
        tensors, DLPack objects); copied. Feed before the iteration is scheduled: the first
        run() schedules prefetch_queue_depth iterations."""
        from .data_node import DataNode
        from .external_source import to_samples

        name = _node.name_in(self, data_node) if isinstance(data_node, DataNode) else str(data_node)
        pipe = self._built()
        for s in self._sources:
            if name in s.nodes:
                raise RuntimeError(f"feed_input: the external source \"{name}\" has a 'source' "
                                   "argument; it is fed from there")
        pipe.feed_input(name, to_samples(data), layout)

    # ---- checkpoints -------------------------------------------------------------------------
    def checkpoint(self, filename=None):
        """The pipeline's state after the iterations taken so far, as a string (JSON), also
        written to ``filename`` when given (DALI's Pipeline.checkpoint). Iterations prefetched
        but not taken are not counted: ``Pipeline(..., checkpoint=text)`` runs them again.
        Needs ``enable_checkpointing=True``; raises UnsupportedError naming the source when a
        Python source cannot be restored (an iterable, a generator, a callable without
        arguments: their state is their own)."""
        text = self._checkpoint()
        if filename is not None:
            with open(filename, "w") as f:
                f.write(text)
        return text

    def _checkpoint(self, iterator=None):
        """checkpoint() with the state of the iterator driving this pipeline (its dict)."""
        import json

        if not self._enable_checkpointing:
            raise _sluice.MisuseError(
                "Pipeline.checkpoint: checkpointing is not enabled for this pipeline (create it "
                "with enable_checkpointing=True)")
        ckpt = json.loads(self._built().checkpoint())
        app = {}
        if self._sources:
            snap = self._src_snaps.get(ckpt["iteration"])
            app["sources"] = self._sources_state(snap)
        if iterator is not None:
            app["iterator"] = iterator
        if app:
            ckpt["application"] = app
        return json.dumps(ckpt, separators=(",", ":"))

    def _restored_iterator(self):
        """The state an iterator saved with the checkpoint this pipeline was restored from
        (None: not restored, or no iterator state); taken once."""
        return self._restored_app.pop("iterator", None)

    def _restore(self, checkpoint):
        """Replaces the C pipeline with one restored from `checkpoint` (the iterators'
        load_state_dict): everything in flight is dropped; the workers stay."""
        self._restore_text, self._restored_app = _split_checkpoint(checkpoint)
        if self._restore_text is not None and not self._enable_checkpointing:
            self._enable_checkpointing = True  # a restored pipeline can be checkpointed again
        self._pipe = self._cpipe = None
        self._reset_run_state()
        for s in self._sources:
            s.reset()
        self.build() if self._pool is None else self._rebuild_with_pool()

    def _rebuild_with_pool(self):
        pipe = self._c_pipeline()
        pipe.build()
        self._pipe = pipe
        self._restore_sources()

    def _check_checkpointable(self):
        """With enable_checkpointing, at build: a source made outside the definition is an
        error, and a Python source whose position only it knows is warned of (DALI's rules;
        checkpoint() then refuses the pipeline, naming it)."""
        if not self._enable_checkpointing:
            return
        if self._adopted_sources:
            raise _sluice.MisuseError(
                "The pipeline does not support checkpointing, because it contains operator "
                f'"{self._adopted_sources[0]}" made outside the pipeline\'s definition (its state '
                "is not the pipeline's): create it inside the definition")
        for s in self._sources:
            why = s.checkpoint_state() if hasattr(s, "checkpoint_state") else None
            if isinstance(why, str):
                warnings.warn(f'external_source (node "{s.nodes[0]}"): {why}, and checkpoint() '
                              "will refuse this pipeline (pass a callable taking the "
                              "iteration, BatchInfo or SampleInfo). In DALI's words: DALI "
                              "doesn't capture state of such 'source'.", UserWarning,
                              stacklevel=3)

    def _snapshot_sources(self):
        """Each source's position before its next batch (None for one that cannot say)."""
        return [s.checkpoint_state() if hasattr(s, "checkpoint_state") else None
                for s in self._sources]

    def _sources_state(self, snap):
        state = snap if snap is not None else self._snapshot_sources()
        for s, st in zip(self._sources, state):
            if st is None or isinstance(st, str):
                why = st or "it cannot say where it is"
                raise _sluice.UnsupportedError(
                    f'external_source (node "{s.nodes[0]}"): cannot be checkpointed: {why}')
        return state

    def _restore_sources(self):
        """After the build: the sources continue where the checkpoint's were."""
        saved = self._restored_app.pop("sources", None)
        if saved is None:
            return
        if len(saved) != len(self._sources):
            raise _sluice.InvalidArgumentError(
                f"Pipeline: the checkpoint saved {len(saved)} Python sources, this pipeline has "
                f"{len(self._sources)}")
        for s, st in zip(self._sources, saved):
            s.restore_state(st)

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
        """Per-node timing: {node: dict(op, device, iterations, total_ms, busy_ms, gpu_ms,
        fused_into, fallbacks)} (gpu_ms: device time of a mixed or gpu node's copies and kernels;
        fused_into: the node it runs sample by sample with, see fuse_samples, or None;
        fallbacks: samples decoders.image on "mixed" decoded whole on the CPU; bad_samples:
        samples the node failed that were skipped or replaced, see on_bad_sample)."""
        return {s.pop("name"): s for s in self._built().stats()}

    def prefetch_statistics(self):
        """sluice's addition: the prefetch depth and what prefetch_queue_depth="auto" decided:
        dict(autotune, depth, depth_limit, num_threads, iteration_bytes, budget_bytes,
        increases, decreases, windows, idle, consumer_wait, reason, changes) — idle and
        consumer_wait are the last window's fractions of the threads' time idle and of the
        time run() waited, changes the last (iteration, new depth) pairs."""
        return self._built().prefetch_stats()

    def bad_samples(self):
        """sluice's addition: the samples skipped or replaced so far (on_bad_sample)."""
        return sum(s["bad_samples"] for s in self._built().stats())

    def cache_stats(self):
        """sluice's addition: what the sample cache (cache_bytes) did so far, a dict: nodes
        (nodes whose work a cached sample skips; 0: nothing to cache), hits (samples copied from
        the cache), misses (samples of a cacheable reader that were computed), entries (samples
        held), bytes (what they take), capacity (cache_bytes), full (a sample did not fit, no
        more are admitted)."""
        return self._built().cache_stats()

    def graph(self, path=None):
        """A picture of the pipeline: its graph as Graphviz DOT text, the same text as
        ``sluice graph`` writes for serialize()'s spec. One box per node the build keeps (name,
        operator, device), data inputs solid, argument inputs dashed and named, the outputs as
        ovals, fused chains (fuse_samples) grouped; pruned nodes are left out (named in a
        comment). It draws the plan the build makes without building (no file is read, no
        thread started): a graph the build rejects raises the build's error. With ``path``
        the picture is also written there: ``.dot`` or ``.gv`` the text, ``.svg``, ``.png``
        or ``.pdf`` drawn by Graphviz's ``dot`` command (Debian's graphviz package; without
        it, RuntimeError). Returns the DOT text."""
        text = (self._pipe if self._pipe is not None else self._c_pipeline()).dot()
        if path is not None:
            _write_picture(text, os.fspath(path))
        return text

    # ---- serialisation ------------------------------------------------------------------------
    def serialize(self, define_graph=None, filename=None):
        """The pipeline as the JSON spec `sluice run` reads (graph + options); written to
        `filename` too when given. Python sources of external_source nodes are not part of it:
        a deserialized pipeline is fed with feed_input. A pipeline with a python_function
        node cannot be serialized (UnsupportedError naming the node): a spec cannot hold a
        Python function."""
        if define_graph is not None and not callable(define_graph):
            raise TypeError("serialize: define_graph must be callable" + (
                "; did you mean serialize(filename=...)?" if isinstance(define_graph, str)
                else ""))
        if define_graph is not None and self._outputs is None:
            with self:
                outs = define_graph()
            self.set_outputs(*(outs if isinstance(outs, (list, tuple)) else [outs]))
        self._finalize()
        for name in self._callbacks:
            raise _sluice.UnsupportedError(
                f'Pipeline.serialize(): node "{name}" (python_function) cannot be serialized: '
                "its Python function lives in this process, and a spec cannot hold it; run "
                "this pipeline from Python")
        o = self._options()
        if self._seed is None:
            o["seed"] = self._c_pipeline().seed  # the one drawn, as DALI serializes it
        text = self._graph.to_json(o)
        if filename is not None:
            with open(filename, "w") as f:
                f.write(text)
        return text

    @classmethod
    def deserialize(cls, serialized_pipeline=None, filename=None, **kwargs):
        """A Pipeline (not built) from a JSON spec (a string, or `filename`); keyword
        arguments override the spec's pipeline options."""
        text = _read_spec(serialized_pipeline, filename)
        opts = _spec_options(text)
        opts.update({k: v for k, v in kwargs.items() if k in opts})
        extra = {k: v for k, v in kwargs.items() if k not in opts}
        pipe = cls(**opts, **extra)
        pipe._adopt_spec(text)
        return pipe

    def deserialize_and_build(self, serialized_pipeline):
        """Replaces this pipeline's graph and options with a spec's, then builds."""
        if self._pipe is not None:
            raise RuntimeError("deserialize_and_build: the pipeline is already built")
        o = _spec_options(serialized_pipeline)
        self._batch_size, self._num_threads = o["batch_size"], o["num_threads"]
        self._prefetch_queue_depth = o["prefetch_queue_depth"]
        self._depth, self._cpu_queue, self._gpu_queue = _queues(self._prefetch_queue_depth, True)
        self._seed = None if o["seed"] < 0 else o["seed"]
        self._device_id = _device_arg(o["device_id"])
        self._fuse_samples = o["fuse_samples"]
        self._max_held_bytes = o["max_held_bytes"]
        self._max_sample_bytes = o["max_sample_bytes"]
        self._on_bad_sample = o["on_bad_sample"]
        self._max_bad_samples = o["max_bad_samples"]
        self._prefetch_max_bytes = o["prefetch_max_bytes"]
        self._cache_bytes, self._cache_file = o["cache_bytes"], o["cache_file"]
        self._adopt_spec(serialized_pipeline)
        self.build()

    def _adopt_spec(self, text):
        self._graph = _sluice.graph_from_json(text)
        self._names, self._groups, self._callbacks = {}, set(), {}
        self._cpipe = None  # created again from this graph and options
        self._finalized = True
        self._sources, self._outputs = [], []

    # ---- misc --------------------------------------------------------------------------------
    def __repr__(self):
        return (f"Pipeline(batch_size={self._batch_size}, num_threads={self._num_threads}, "
                f"prefetch_queue_depth={self._prefetch_queue_depth!r}, seed={self._seed}, "
                f"built={self._pipe is not None})")


def _split_checkpoint(checkpoint):
    """(the C library's text, the Python front end's part) of a checkpoint string; a path-like
    or bytes is read / decoded first. ("", {}) is never returned: None for no checkpoint."""
    import json

    if isinstance(checkpoint, (bytes, bytearray)):
        checkpoint = checkpoint.decode()
    if not isinstance(checkpoint, str):
        raise TypeError(f"Pipeline: checkpoint must be the string Pipeline.checkpoint() "
                        f"returned, got {type(checkpoint).__name__}")
    try:
        ckpt = json.loads(checkpoint)
    except ValueError as e:
        raise _sluice.InvalidArgumentError(f"checkpoint: not valid JSON: {e}") from None
    if not isinstance(ckpt, dict):
        raise _sluice.InvalidArgumentError("checkpoint: not a sluice pipeline checkpoint")
    app = ckpt.pop("application", None) or {}
    return json.dumps(ckpt, separators=(",", ":")), dict(app)


def _write_picture(text, path):
    """Writes DOT text to path: as is for .dot/.gv, drawn by Graphviz's dot for .svg/.png/.pdf
    (the formats and words of ``sluice graph -o``)."""
    suffix = os.path.splitext(path)[1]
    if suffix in (".dot", ".gv"):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return
    if suffix not in (".svg", ".png", ".pdf"):
        raise ValueError(f'graph: "{path}": the suffix says the format: .dot or .gv (DOT '
                         "text), .svg, .png or .pdf (drawn by Graphviz)")
    dot = shutil.which("dot")
    if dot is None:
        raise RuntimeError(f'writing "{path}" needs Graphviz\'s dot command, which is not '
                           "installed: install Debian's graphviz package (apt-get install "
                           "graphviz), or write DOT text to a .dot file")
    r = subprocess.run([dot, "-T" + suffix[1:], "-o", path], input=text.encode("utf-8"),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if r.returncode != 0:
        raise RuntimeError(f'dot -T{suffix[1:]} -o "{path}" failed (exit status '
                           f"{r.returncode}): {r.stderr.decode(errors='replace').strip()}")


def _spec_options(text):
    """A spec's pipeline options as Pipeline's keyword arguments (separated queues as
    prefetch_queue_depth=dict(cpu_size, gpu_size))."""
    o = _sluice.options_from_json(text)
    cpu, gpu = o.pop("cpu_queue_depth"), o.pop("gpu_queue_depth")
    if cpu or gpu:
        o["prefetch_queue_depth"] = {"cpu_size": cpu, "gpu_size": gpu}
    return o


def _read_spec(serialized_pipeline, filename):
    if (serialized_pipeline is None) == (filename is None):
        raise ValueError("deserialize: give exactly one of serialized_pipeline and filename")
    if filename is not None:
        with open(filename) as f:
            return f.read()
    if isinstance(serialized_pipeline, bytes):
        return serialized_pipeline.decode()
    return serialized_pipeline


def _reject_debug(debug):
    if debug:
        raise NotImplementedError("pipeline_def(debug=True): sluice has no debug mode")


def pipeline_def(fn=None, *, enable_conditionals=False, debug=False, **pipeline_kwargs):
    """Decorator: ``@pipeline_def(batch_size=..., ...)`` turns a function that calls fn.* and
    returns DataNodes (or constants) into a factory of Pipelines. Pipeline arguments given at
    the decorator are defaults; the same arguments given when calling the factory override
    them. As in DALI, a parameter of the function shadows the Pipeline argument of that name
    (the call's value goes to the function only, with a warning), the function may not take
    ``**kwargs``, and ``Pipeline.current()`` inside it is the pipeline being made.
    enable_conditionals=True (at the decorator or the call): the function's ``if``/``elif``/
    ``else``, ``and``, ``or``, ``not`` (and ``x if c else y``) on DataNodes become per-sample
    conditionals in the graph, as DALI's (see sluice._convert and docs/python.md); the
    functions it calls are converted too unless marked ``@do_not_convert``."""
    _reject_debug(debug)

    def decorate(func):
        params = inspect.signature(func).parameters
        varkw = [p.name for p in params.values() if p.kind == p.VAR_KEYWORD]

        @functools.wraps(func)
        def create(*args, **kwargs):
            if varkw:
                raise TypeError(f"Using variadic keyword argument `**{varkw[0]}` in a "
                                "graph-defining function is not allowed (it would take "
                                "Pipeline arguments silently)")
            conditionals = kwargs.pop("enable_conditionals", enable_conditionals)
            _reject_debug(kwargs.pop("debug", False))
            ctor = dict(pipeline_kwargs)
            for k in list(kwargs):
                if k in _PIPELINE_ARGS and k in params:
                    warnings.warn(f"pipeline_def: the argument `{k}` of {func.__name__} shadows "
                                  "the Pipeline argument of the same name", stacklevel=2)
                elif k in _PIPELINE_ARGS:
                    ctor[k] = kwargs.pop(k)
            pipe = Pipeline(**ctor, enable_conditionals=conditionals)
            define = _convert.convert(func) if conditionals else func
            with pipe:
                outs = define(*args, **kwargs)
                if outs is None:
                    raise RuntimeError(f"{func.__name__}: a pipeline definition must return "
                                       "its outputs (DataNodes)")
                # a tuple is the outputs, and so is a list of DataNodes (sluice's leniency:
                # DALI refuses it at build); anything else, a list of numbers too, is one
                pipe.set_outputs(*(outs if isinstance(outs, tuple) or (
                    isinstance(outs, list) and _node.holds_data_node(outs)) else (outs,)))
            return pipe

        create._is_pipeline_def = True
        return create

    return decorate(fn) if fn is not None else decorate


class experimental:
    """DALI's ``pipeline.experimental`` namespace: its pipeline_def is sluice's."""

    pipeline_def = staticmethod(pipeline_def)
