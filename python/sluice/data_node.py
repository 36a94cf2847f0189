"""sluice.data_node: DataNode, one output of an operator node in a pipeline definition.

Python operators on DataNodes record nodes of the C ``arithmetic`` operator, mapped as DALI
maps them: ``+`` add, ``-`` sub, ``*`` mul, ``/`` fdiv (true division: integers give float32),
``//`` div (integers: C division, truncating toward zero, as DALI), ``%`` mod (C's ``%``),
``**`` pow, unary ``-`` minus, ``abs()`` abs, ``~`` bitnot, ``== != < <= > >=`` eq neq lt leq gt
geq (bool results), ``& | ^`` bitand bitor bitxor. A Python int is an int32 constant, a float a
float32 one (DALI's typing); ``types.Constant(v, dtype)`` or a NumPy scalar gives the type. A
NumPy array, a list or a tensor operand becomes a constant node (types.Constant) broadcast
against the other operand, as in DALI.
Indexing (``x[10:20, :, 0]``, ``x[..., ::-1]``, ``x[-1]``) records a C ``tensor_subscript`` node
(NumPy's basic indexing, resolved per sample; see sluice.subscript). Like fn.*, these nodes
run where their inputs are: on the GPU when an operand is GPU data.
"""
from . import _sluice

_BINARY = {
    "add": "add", "sub": "sub", "mul": "mul", "truediv": "fdiv", "floordiv": "div",
    "mod": "mod", "pow": "pow", "and": "bitand", "or": "bitor", "xor": "bitxor",
}
_COMPARE = {"eq": "eq", "ne": "neq", "lt": "lt", "le": "leq", "gt": "gt", "ge": "geq"}


class DataNode:
    """One output of an operator node: what ``fn.*`` returns and takes.

    ``name`` is ``"node"`` or ``"node:k"`` (the reference the JSON spec uses); ``device`` is
    where its node runs: "cpu", "mixed" (data on the GPU, made from CPU inputs: a mixed decoder,
    ``.gpu()``) or "gpu" — the device given, or the one the C build infers from the inputs.
    ``pipeline`` is the pipeline whose definition made it, or None when it was made outside any
    (a pipeline adopts it when its outputs reach it; see sluice.node).
    """

    __slots__ = ("_node", "index")

    # NumPy defers to DataNode's operators (np.array([1, 2]) + node is node.__radd__), instead
    # of broadcasting the node into an object array.
    __array_ufunc__ = None

    def __init__(self, node, index):
        self._node = node  # sluice.node.Node
        self.index = index

    @property
    def node(self):
        """The name of the operator node."""
        return self._node.name

    @property
    def op(self):
        return self._node.op

    @property
    def device(self):
        return self._node.placed

    @property
    def name(self):
        return self.node if self.index == 0 else f"{self.node}:{self.index}"

    @property
    def ref(self):
        return f"{self.node}:{self.index}"

    @property
    def pipeline(self):
        return self._node.home

    def __repr__(self):
        return f"DataNode(name={self.name!r}, op={self.op!r}, device={self.device!r})"

    def gpu(self):
        """This data on the GPU: a ``copy`` node on device "mixed" (DALI's ``.gpu()``), which
        gathers the batch in pinned memory and sends it in one asynchronous transfer. A node
        already on the GPU is returned as it is. Needs a CUDA build and a pipeline with a
        device_id (checked here when the node belongs to a pipeline or one is being defined,
        else when a pipeline adopts it)."""
        if self.device != "cpu":
            return self
        if not _sluice.HAVE_CUDA:
            raise _sluice.UnsupportedError(
                f"DataNode.gpu() ({self.name}): sluice was built without CUDA support; "
                "this is a CPU-only pipeline")
        from .pipeline import Pipeline

        pipe = self.pipeline if self.pipeline is not None else Pipeline.current()
        if pipe is not None and pipe.device_id is None:
            raise _sluice.UnsupportedError(
                f"Cannot move the data node {self.name} to the GPU in a CPU-only pipeline "
                "(device_id is None); give the pipeline a device_id")
        from . import fn

        return fn.copy(self, device="mixed")

    def cpu(self):
        """This data on the CPU: itself when it is there, else a ``copy`` node on device "cpu"
        that brings the batch back from the GPU (DALI's ``.cpu()``), which CPU operators can
        then read. The copy waits for the GPU work that produced the data."""
        if self.device == "cpu":
            return self
        from . import fn

        return fn.copy(self, device="cpu")

    def shape(self, *, dtype=None, device="cpu"):
        """The run-time shape of each sample as a new DataNode (DALI's ``DataNode.shape()``):
        a ``shapes`` node, int64 unless ``dtype`` says otherwise. It reads the shapes only, so
        GPU data is not copied back for it; ``device="gpu"`` moves the (small) result to the
        GPU."""
        from . import fn

        if device not in ("cpu", "gpu"):
            raise ValueError(f"DataNode.shape: device must be \"cpu\" or \"gpu\", got {device!r}")
        out = fn.shapes(self, dtype=dtype, device="cpu")
        return out.gpu() if device == "gpu" else out

    def __iter__(self):
        raise TypeError(f"{self!r} is not iterable: a DataNode stands for a batch computed "
                        "later; index it (x[0]) or use a per-sample operator")

    def __bool__(self):
        raise TypeError("a DataNode has no truth value (it stands for a batch computed later): "
                        "to branch on it per sample (`if`, `and`, `or`, `not`), define the "
                        "pipeline with enable_conditionals=True; code marked @do_not_convert "
                        "is not converted")

    __hash__ = object.__hash__

    # ---- arithmetic (the binary operators are added below) --------------------------------
    def __neg__(self):
        return _arith("minus", self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _arith("abs", self)

    def __invert__(self):
        return _arith("bitnot", self)

    def __getitem__(self, index):
        from .subscript import subscript

        return subscript(self, index)


def _make_binary(op):
    def forward(self, other):
        return _arith(op, self, other)

    def reflected(self, other):
        return _arith(op, self, other, reflected=True)

    return forward, reflected


for _py, _op in _BINARY.items():
    _f, _r = _make_binary(_op)
    setattr(DataNode, f"__{_py}__", _f)
    setattr(DataNode, f"__r{_py}__", _r)
for _py, _op in _COMPARE.items():
    setattr(DataNode, f"__{_py}__", _make_binary(_op)[0])


def _scalar(value):
    """(arg name, value, scalar_dtype or None) for a scalar operand: a Python or NumPy number,
    a 0-d array or tensor, a types.ScalarConstant; None for anything else (arrays, lists),
    which becomes a constant node instead. scalar_dtype is None for the arithmetic operator's
    defaults (int32 for scalar_int, float32 for scalar), so plain numbers keep the spec short."""
    from . import types

    if not isinstance(value, types.ScalarConstant):
        if not isinstance(value, (bool, int, float)) and getattr(value, "shape", None) != ():
            return None
        value = types.ScalarConstant(value)
    dtype = value.dtype
    if dtype in types._FLOAT_TYPES:
        default = types.DALIDataType.FLOAT
        name, v = "scalar", float(value.value)
    else:
        default = types.DALIDataType.INT32
        name, v = "scalar_int", int(value.value)
    return name, v, None if dtype == default else dtype.sl_name


_UNARY = ("minus", "abs", "bitnot")


def _arith(op, left, right=None, reflected=False):
    """Records an `arithmetic` node: op(left), op(left, right), or with reflected=True
    op(right, left). A scalar right operand becomes `scalar`/`scalar_int`; an array, a list or
    a tensor a constant node (types.Constant), on the GPU when left is there (as DALI's)."""
    from .fn import _call
    from . import node, types

    kwargs = {"op": op}
    if op in _UNARY:
        return _call("arithmetic", [left], kwargs)
    if not isinstance(right, DataNode):
        scalar = _scalar(right)
        if scalar is not None:
            name, value, dtype = scalar
            kwargs[name] = value
            if dtype is not None:
                kwargs["scalar_dtype"] = dtype
            if reflected:
                kwargs["scalar_left"] = True
            return _call("arithmetic", [left], kwargs)
        try:
            with node.detached():  # adopted with the arithmetic node (see sluice.node)
                right = types.Constant(right, device="cpu" if left.device == "cpu" else "gpu")
        except TypeError:
            raise TypeError(f"arithmetic: unsupported operand {right!r} "
                            f"({type(right).__name__}); expected a DataNode, a number, a list "
                            "or array of numbers, or types.Constant") from None
    return _call("arithmetic", [right, left] if reflected else [left, right], kwargs)
