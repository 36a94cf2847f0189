"""sluice.math: DALI's ``nvidia.dali.math`` functions over DataNodes.

``math.sqrt(x)``, ``math.atan2(y, x)``, ``math.clamp(x, lo, hi)`` ... record the C
``arithmetic`` operator with the matching ``op`` (the operation the registered ``fn.math.*``
operators fix), with DALI's operands and typing: each argument may be a DataNode, a Python
number (an int is an int32 constant, a float a float32 one, a bool a bool one), a
``types.Constant`` or a NumPy scalar (its own type), or an array / list (a constant node,
broadcast); at least one must be a DataNode. Functions of one argument give float32 for integer
inputs (``abs`` keeps the type); ``pow`` promotes (integers stay integers), ``fpow`` and
``atan2`` give a float type; ``min``, ``max`` and ``clamp`` promote their operands (DALI's type
promotion, see ``arithmetic``).
"""
from . import types as _types
from .data_node import DataNode as _DataNode, _arith, _scalar

__all__ = ["abs", "fabs", "floor", "ceil", "pow", "fpow", "min", "max", "clamp", "sqrt", "rsqrt",
           "cbrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
           "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"]


def _need_node(name, *args):
    if not any(isinstance(a, _DataNode) for a in args):
        raise TypeError(f"math.{name}: at least one argument must be a DataNode (the output of "
                        "another operator)")


def _unary(op):
    def f(input):
        _need_node(op, input)
        from .fn import _call

        return _call("arithmetic", [input], {"op": op})

    f.__name__ = f.__qualname__ = op
    f.__doc__ = (f"Element-wise {op} of a DataNode (DALI's math.{op}); the C operator "
                 f"``arithmetic`` with op \"{op}\" (also ``fn.math.{op}``).")
    return f


def _binary(op):
    def f(left, right):
        _need_node(op, left, right)
        if isinstance(left, _DataNode):
            return _arith(op, left, right)
        return _arith(op, right, left, reflected=True)

    f.__name__ = f.__qualname__ = op
    f.__doc__ = (f"Element-wise {op}(left, right) (DALI's math.{op}); the C operator "
                 f"``arithmetic`` with op \"{op}\". One operand may be a constant.")
    return f


abs = _unary("abs")  # noqa: A001 (DALI's name)
fabs = _unary("fabs")
floor = _unary("floor")
ceil = _unary("ceil")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
cbrt = _unary("cbrt")
exp = _unary("exp")
log = _unary("log")
log2 = _unary("log2")
log10 = _unary("log10")
sin = _unary("sin")
cos = _unary("cos")
tan = _unary("tan")
asin = _unary("asin")
acos = _unary("acos")
atan = _unary("atan")
sinh = _unary("sinh")
cosh = _unary("cosh")
tanh = _unary("tanh")
asinh = _unary("asinh")
acosh = _unary("acosh")
atanh = _unary("atanh")
pow = _binary("pow")  # noqa: A001
fpow = _binary("fpow")
min = _binary("min")  # noqa: A001
max = _binary("max")  # noqa: A001
atan2 = _binary("atan2")


def _bound_type(v):
    """The DALI type of a constant bound (None for a DataNode or an array)."""
    s = _scalar(v)
    if s is None:
        return None
    return _types.ScalarConstant(v).dtype if not isinstance(v, _types.ScalarConstant) \
        else v.dtype


def clamp(input, lo, hi):
    """Clamps each element of ``input`` to [lo, hi] (DALI's math.clamp): ``x < lo ? lo : x``,
    then ``> hi ? hi``, so hi < lo gives hi, as NumPy's clip. The result type promotes the
    input with the bounds' types, left to right (Python ints are int32, floats float32, as in
    DALI). Number bounds make one fused ``arithmetic`` clamp node; a DataNode or array bound
    (broadcast against the input) makes ``max(input, lo)`` then ``min(.., hi)``, which is the
    same expression and the same promotion."""
    _need_node("clamp", input, lo, hi)
    if not isinstance(input, _DataNode) or any(_scalar(v) is None for v in (lo, hi)):
        return min(max(input, lo), hi)
    from .fn import _call

    kwargs = {"op": "clamp", "lo": float(_scalar(lo)[1]), "hi": float(_scalar(hi)[1])}
    t = _promote_constants(_bound_type(lo), _bound_type(hi))
    if t != _types.DALIDataType.FLOAT:
        kwargs["scalar_dtype"] = t.sl_name
    return _call("arithmetic", [input], kwargs)


def _promote_constants(a, b):
    """DALI's promotion of the two bounds' types (the C rule, applied to constants)."""
    if a == b:
        return a
    na, nb = a.to_numpy(), b.to_numpy()
    if na.kind == "f" or nb.kind == "f":
        if na.kind == "f" and nb.kind == "f":
            return a if na.itemsize >= nb.itemsize else b
        return a if na.kind == "f" else b
    if na.kind == "b" or nb.kind == "b":
        return b if na.kind == "b" else a
    if na.kind == nb.kind:
        return a if na.itemsize >= nb.itemsize else b
    s, u = (na, nb) if na.kind == "i" else (nb, na)
    size = s.itemsize if s.itemsize > u.itemsize else (8 if u.itemsize >= 4 else u.itemsize * 2)
    return _types.to_dali_type(f"int{size * 8}")
