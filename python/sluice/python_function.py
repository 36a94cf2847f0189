"""sluice.python_function: ``fn.python_function``, ``fn.dl_tensor_python_function`` and DALI's
classes of them (``ops.PythonFunction``, ``ops.DLTensorPythonFunction``).

The C operator ``python_function`` (src/ops/callback/python_function.c) owns the node: its
place in the graph, never being pruned (side effects), one call per iteration in iteration
order, errors at the iteration they belong to. The function itself stays here: each
pipeline that holds the node registers a Runner for it (``_sluice.Pipeline.set_callback``)
before the build, and the node calls it on one of the pipeline's threads with the GIL held
(python/sluice/_sluice/callback.c). The Runner applies DALI's calling conventions — per
sample or per batch, NumPy arrays or DLPack capsules, a tuple of num_outputs results — and
hands back num_outputs lists of batch-size NumPy arrays, which the node checks (one element
type and one number of dimensions per output) and copies.

The function gets copies of the input samples, its own to keep or modify (DALI lends views
valid during the call only). An exception it raises fails that iteration: the run() that
delivers it raises ``sluice.CallbackError`` ("Type: message", the node and the iteration)
with the exception, traceback and all, as ``__cause__``; the pipeline goes on.
"""
import weakref

from . import _sluice

_DOC_TAIL = """
The function runs once per iteration (per sample: once per sample, in order), on one of the
pipeline's threads, with the pipeline as Pipeline.current(); the functions of one pipeline
never run at the same time. It gets copies of the samples (its own: it may keep or modify
them), and returns arrays (NumPy arrays, or anything numpy.asarray takes): with
num_outputs > 1 a tuple of them, with num_outputs=0 nothing (it is called for its side
effects). With batch_processing, it gets one list of samples per input and returns, per
output, a list of batch-size samples (or one array whose first axis is the batch). The
samples of an output must share one element type and number of dimensions; strided arrays
(views, flips) are fine. output_layouts: one string for every output, or a list (outputs past
its end have no layout). An exception fails its iteration: run() raises
sluice.CallbackError naming the node and iteration, with the exception (and its traceback) as
__cause__, and the pipeline goes on with the next iteration.

The node has side effects: it is never pruned, and it must be made while a pipeline is being
defined (inside a @pipeline_def function, define_graph, or `with pipe:`). A pipeline holding
one cannot be serialized (a spec cannot hold a Python function). Device "cpu" only (DALI's
device="gpu" hands CuPy arrays: bring the data to the CPU with .cpu() instead).
"""


# ---- conversions ---------------------------------------------------------------------------

class _Capsule:
    """A DLPack capsule dressed as a producer, for numpy.from_dlpack."""

    __slots__ = ("capsule", "device")

    def __init__(self, capsule):
        self.capsule, self.device = capsule, _sluice._dlpack_device(capsule)

    def __dlpack__(self, stream=None):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def _is_capsule(x):
    return type(x).__name__ == "PyCapsule"


def dlpack_to_array(x):
    """A NumPy array over a DLPack capsule or an object with __dlpack__ (a torch tensor), CPU
    memory only; no copy (DALI's ops._dlpack_to_array)."""
    import numpy as np

    if isinstance(x, (_sluice.TensorCPU, np.ndarray)):
        return np.asarray(x)
    if _is_capsule(x):
        x = _Capsule(x)
    elif not hasattr(x, "__dlpack__"):
        raise TypeError(f"expected a DLPack capsule or an object with __dlpack__ (a torch "
                        f"tensor, a NumPy array), got {type(x).__name__}")
    try:
        return np.from_dlpack(x)
    except RuntimeError as e:
        if "dtype" not in str(e):
            raise
    # DLPack's bool (kDLBool), which NumPy 1.x does not read (nor consume): sluice's reader
    capsule = x.capsule if isinstance(x, _Capsule) else x.__dlpack__()
    return np.asarray(_sluice.TensorCPU(capsule))


def dlpack_from_array(array):
    """A DLPack capsule of a NumPy array (or anything numpy.asarray takes), copied first only
    when NumPy cannot export it (read-only data) (DALI's ops._dlpack_from_array)."""
    import numpy as np

    a = np.asarray(array)
    if not a.flags.writeable:
        a = a.copy()
    return a.__dlpack__()


def _capsule(a):
    """A DLPack capsule of input sample a (NumPy's; sluice's own for bool, which NumPy does not
    export: DLPack's kDLBool)."""
    return _sluice.TensorCPU(a).__dlpack__() if a.dtype == bool else a.__dlpack__()


def _samples(data, dtype, shapes, offsets):
    """NumPy arrays over one input's copied samples (callback.c: a bytearray, the element
    type's name, the shapes and byte offsets)."""
    import numpy as np

    t = np.dtype(dtype)
    out = []
    for shape, off in zip(shapes, offsets):
        n = 1
        for e in shape:
            n *= e
        out.append(np.frombuffer(data, dtype=t, count=n, offset=off).reshape(shape))
    return out


# ---- the runner ----------------------------------------------------------------------------

class Runner:
    """What a pipeline's node calls: runner(iteration, batch_size, inputs) -> num_outputs
    lists of batch_size NumPy arrays. Raises the function's exceptions, and TypeError or
    ValueError, in DALI's words, for results that do not fit num_outputs."""

    __slots__ = ("function", "num_outputs", "batch", "dlpack", "pipe", "name")

    def __init__(self, spec, pipe, name):
        self.function, self.num_outputs = spec.function, spec.num_outputs
        self.batch, self.dlpack = spec.batch_processing, spec.dlpack
        self.pipe = weakref.ref(pipe)  # no cycle through the C pipeline's table
        self.name = name

    def __repr__(self):
        return (f"Runner(node={self.name!r}, function={self.function!r}, "
                f"num_outputs={self.num_outputs}, batch_processing={self.batch}, "
                f"dlpack={self.dlpack})")

    def __call__(self, iteration, batch_size, inputs):
        from .pipeline import Pipeline

        args = [_samples(*inp) for inp in inputs]
        if self.dlpack:
            args = [[_capsule(a) for a in samples] for samples in args]
        pipe = self.pipe()
        Pipeline.push_current(pipe)  # DALI runs the function with its pipeline current
        try:
            if self.batch:
                return self._per_batch(args, batch_size)
            return self._per_sample(args, batch_size)
        finally:
            Pipeline.pop_current()

    def _per_sample(self, args, batch_size):
        outs = [[] for _ in range(self.num_outputs)]
        for i in range(batch_size):
            result = self.function(*[a[i] for a in args])
            for o, x in enumerate(self._split(result, f"sample {i}")):
                outs[o].append(self._array(x, o, i))
        return outs

    def _per_batch(self, args, batch_size):
        result = self.function(*args)
        outs = []
        for o, batch in enumerate(self._split(result, "the batch")):
            if isinstance(batch, (list, tuple)):
                samples = list(batch)
            elif self.dlpack:
                samples = list(dlpack_to_array(batch))  # one tensor, the batch its first axis
            else:
                samples = _leading_axis(batch, o)
            if len(samples) != batch_size:
                raise ValueError(f"The function returned a batch of {len(samples)} samples for "
                                 f"output {o}; the batch has {batch_size}")
            outs.append([self._array(x, o, i) for i, x in enumerate(samples)])
        return outs

    def _split(self, result, what):
        """The function's result as num_outputs items (DALI's rules: a tuple when more than
        one; nothing when none)."""
        n = self.num_outputs
        if n == 0:
            return []
        if result is None:
            raise ValueError(f"The function returned None for {what}; {n} output"
                             f"{'s were' if n > 1 else ' was'} expected (num_outputs={n})")
        if n > 1 and not isinstance(result, tuple):
            raise TypeError(f"The output from a multi-output Python function operator must be "
                            f"a tuple, got: {type(result)}")
        if isinstance(result, tuple):
            if len(result) != n:
                raise ValueError(f"Unexpected number of outputs from the Python function - got "
                                 f"{len(result)}, expected {n}")
            return list(result)
        return [result]

    def _array(self, x, o, i):
        import numpy as np

        a = dlpack_to_array(x) if self.dlpack else np.asarray(x)
        if a.dtype.kind not in "biuf":  # the C node refuses the sizes it has no type of
            raise TypeError(f"output {o}, sample {i}: the function returned {type(x).__name__} "
                            f"of element type {a.dtype}, not an array of numbers or booleans")
        return a


def _leading_axis(batch, o):
    import numpy as np

    a = np.asarray(batch)
    if a.ndim == 0:
        raise TypeError(f"output {o}: with batch_processing the function returns a list of "
                        f"samples (or an array whose first axis is the batch), got "
                        f"{type(batch).__name__}")
    return [a[i] for i in range(a.shape[0])]


class Spec:
    """What a python_function node records beyond its C arguments: the function and how to
    call it. runner(pipe, name) makes the Runner a pipeline registers for the node."""

    __slots__ = ("function", "num_outputs", "batch_processing", "dlpack")

    def __init__(self, function, num_outputs, batch_processing, dlpack):
        self.function, self.num_outputs = function, num_outputs
        self.batch_processing, self.dlpack = batch_processing, dlpack

    def runner(self, pipe, name):
        return Runner(self, pipe, name)


# ---- fn and ops ----------------------------------------------------------------------------

def _make(what, inputs, function, num_outputs, batch_processing, output_layouts, device,
          dlpack, kwargs):
    from . import node as _node
    from .data_node import DataNode
    from .fn import _call_node
    from .pipeline import Pipeline

    pipe = Pipeline.current()
    if pipe is None:
        raise RuntimeError(
            f"Current Pipeline not set!\n{what} operator must be used inside `define_graph` or "
            "current pipeline must be explicitly set using context manager (`with "
            "my_pipeline:`) or with a call to `Pipeline.push_current(my_pipeline)` (it has side "
            "effects: no pipeline output would reach it)")
    for x in inputs:
        if isinstance(x, (list, tuple)) and any(isinstance(e, DataNode) for e in x):
            raise TypeError(f"Expected inputs of type `DataNode`. Received input of type "
                            f"'{type(x).__name__}'. Python operators do not support multiple "
                            "input sets (a list of DataNodes as one input)")
    if not callable(function):
        raise TypeError(f"{what}: `function` must be callable, got {type(function).__name__}")
    if isinstance(output_layouts, str):  # DALI: one string is every output's layout
        output_layouts = [output_layouts] * (num_outputs if isinstance(num_outputs, int) else 1)
    args = dict(kwargs, num_outputs=num_outputs, batch_processing=batch_processing,
                output_layouts=output_layouts, device=device)
    # the C checks, in their words; the node is recorded into pipe
    node, outs = _call_node("python_function", list(inputs), args)
    node.callback = Spec(function, len(outs), bool(batch_processing), dlpack)
    _node.register_callback(pipe, node)
    return outs[0] if len(outs) == 1 else outs


def python_function(*inputs, function, num_outputs=1, batch_processing=False,
                    output_layouts=None, device="cpu", **kwargs):
    return _make("PythonFunction", inputs, function, num_outputs, batch_processing,
                 output_layouts, device, False, kwargs)


def dl_tensor_python_function(*inputs, function, num_outputs=1, batch_processing=True,
                              output_layouts=None, device="cpu", synchronize_stream=True,
                              **kwargs):
    return _make("DLTensorPythonFunction", inputs, function, num_outputs, batch_processing,
                 output_layouts, device, True, kwargs)


python_function.__doc__ = """fn.python_function(*inputs, function, num_outputs=1,
    batch_processing=False, output_layouts=None, device="cpu", name=None, preserve=None)

Runs a Python function on the data: `function` gets NumPy arrays (per sample, or with
batch_processing=True one list of samples per input) and returns NumPy arrays. Returns a
DataNode, a tuple of num_outputs DataNodes, or () for num_outputs=0.
""" + _DOC_TAIL

dl_tensor_python_function.__doc__ = """fn.dl_tensor_python_function(*inputs, function,
    num_outputs=1, batch_processing=True, output_layouts=None, device="cpu",
    synchronize_stream=True, name=None, preserve=None)

python_function with DLPack: `function` gets DLPack capsules (torch.from_dlpack and
numpy.from_dlpack take them; per batch by default, as in DALI, one list per input) and returns
DLPack capsules or objects with __dlpack__ (torch CPU tensors, NumPy arrays).
synchronize_stream is accepted and has no effect (CPU data).
""" + _DOC_TAIL


class _PythonFunctionBase:
    """Holds the constructor's arguments; each call makes a node with the call's added (an
    argument goes to one of the two, not both: ValueError, as DALI's classes)."""

    _fn = None

    def __init__(self, function, num_outputs=1, device="cpu", **kwargs):
        self.function, self.num_outputs, self._device = function, num_outputs, device
        self._kwargs = {k: v for k, v in kwargs.items() if v is not None}

    @property
    def device(self):
        return self._device

    def __call__(self, *inputs, **kwargs):
        merged = dict(self._kwargs)
        for k, v in kwargs.items():
            if v is None:
                continue
            if k in merged or k in ("function", "num_outputs", "device"):
                raise ValueError(f"The argument `{k}` was already specified in __init__.")
            merged[k] = v
        return type(self)._fn(*inputs, function=self.function, num_outputs=self.num_outputs,
                              device=self._device, **merged)

    def __repr__(self):
        return (f"{type(self).__name__}(function={self.function!r}, "
                f"num_outputs={self.num_outputs!r}, device={self._device!r}, {self._kwargs})")


class PythonFunction(_PythonFunctionBase):
    """``ops.PythonFunction(function, num_outputs=1, device="cpu", batch_processing=False,
    **kwargs)``: DALI's class of fn.python_function."""

    _fn = staticmethod(python_function)
    __doc__ = (__doc__ or "") + "\n" + _DOC_TAIL

    def __init__(self, function, num_outputs=1, device="cpu", batch_processing=False,
                 **kwargs):
        super().__init__(function, num_outputs, device, batch_processing=batch_processing,
                         **kwargs)


class DLTensorPythonFunction(_PythonFunctionBase):
    """``ops.DLTensorPythonFunction(function, num_outputs=1, device="cpu",
    synchronize_stream=True, batch_processing=True, **kwargs)``: DALI's class of
    fn.dl_tensor_python_function."""

    _fn = staticmethod(dl_tensor_python_function)
    __doc__ = (__doc__ or "") + "\n" + _DOC_TAIL

    def __init__(self, function, num_outputs=1, device="cpu", synchronize_stream=True,
                 batch_processing=True, **kwargs):
        super().__init__(function, num_outputs, device, batch_processing=batch_processing,
                         synchronize_stream=synchronize_stream, **kwargs)
