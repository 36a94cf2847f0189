"""sluice.types: DALI's type names (``types.FLOAT``, ``types.RGB``, ``types.INTERP_LINEAR``).

Each enum keeps DALI's member names and integer values (so code comparing them keeps working)
and knows the value sluice's C operators take: a dtype name (``"float32"``), an image type
(``"RGB"``) or an interpolation name (``"INTERP_LINEAR"``). Passing a member as an operator
argument converts it (see :func:`to_arg`).
"""
import enum

from . import _sluice


class _Enum(enum.IntEnum):
    """DALI's enums print as "DALIDataType.FLOAT" (3.11's IntEnum would print "9")."""

    def __str__(self):
        return f"{type(self).__name__}.{self.name}"


class DALIDataType(_Enum):
    """Element types. ``sl_name`` is sluice's name ("uint8", "float32", ...)."""

    NO_TYPE = -1
    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    UINT64 = 3
    INT8 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    FLOAT16 = 8
    FLOAT = 9
    FLOAT64 = 10
    BOOL = 11

    @property
    def sl_name(self):
        return _SL_DTYPE[self]

    def to_numpy(self):
        """The matching numpy dtype (numpy.float32 for FLOAT)."""
        import numpy

        return numpy.dtype(self.sl_name)

    def __call__(self):
        """DALI's legacy ``tensor.dtype()``: NumPy's type string ("<f4"), with a warning."""
        import warnings

        warnings.warn("Calling '.dtype()' is deprecated, please use '.dtype' instead",
                      DeprecationWarning, stacklevel=2)
        return self.to_numpy().str


_SL_DTYPE = {
    DALIDataType.NO_TYPE: "invalid", DALIDataType.UINT8: "uint8", DALIDataType.UINT16: "uint16",
    DALIDataType.UINT32: "uint32", DALIDataType.UINT64: "uint64", DALIDataType.INT8: "int8",
    DALIDataType.INT16: "int16", DALIDataType.INT32: "int32", DALIDataType.INT64: "int64",
    DALIDataType.FLOAT16: "float16", DALIDataType.FLOAT: "float32",
    DALIDataType.FLOAT64: "float64", DALIDataType.BOOL: "bool",
}


class DALIImageType(_Enum):
    """Colour spaces of decoded images (``output_type``, ``image_type``)."""

    RGB = 0
    BGR = 1
    GRAY = 2
    YCbCr = 3
    ANY_DATA = 4

    @property
    def sl_name(self):
        return self.name


class DALIInterpType(_Enum):
    """Interpolation types (``interp_type``, ``min_filter``, ``mag_filter``)."""

    INTERP_NN = 0
    INTERP_LINEAR = 1
    INTERP_CUBIC = 2
    INTERP_LANCZOS3 = 3
    INTERP_TRIANGULAR = 4
    INTERP_GAUSSIAN = 5

    @property
    def sl_name(self):
        return self.name


# DALI's module-level aliases.
globals().update({m.name: m for m in DALIDataType})
globals().update({m.name: m for m in DALIImageType})
globals().update({m.name: m for m in DALIInterpType})
NO_TYPE = DALIDataType.NO_TYPE
FLOAT32 = DALIDataType.FLOAT  # not in DALI; convenient

# Layout strings DALI users write as types.NHWC etc.
NHWC, NCHW, NFHWC, NFCHW, SAME = "HWC", "CHW", "FHWC", "FCHW", ""


# DALI's type families (which dtypes a constant or an arithmetic scalar treats alike).
_BOOL_TYPES = (DALIDataType.BOOL,)
_INT_TYPES = (DALIDataType.INT8, DALIDataType.INT16, DALIDataType.INT32, DALIDataType.INT64,
              DALIDataType.UINT8, DALIDataType.UINT16, DALIDataType.UINT32, DALIDataType.UINT64)
_FLOAT_TYPES = (DALIDataType.FLOAT16, DALIDataType.FLOAT, DALIDataType.FLOAT64)


def to_dali_type(t):
    """The DALIDataType of a dtype given any way: a DALIDataType or its int value, a NumPy
    dtype or type, a torch dtype, or a name (sluice's "float32", NumPy's, DALI's "FLOAT")."""
    if isinstance(t, DALIDataType):
        return t
    if isinstance(t, int) and not isinstance(t, bool):
        return DALIDataType(t)
    name = to_arg(t)
    if isinstance(name, str):
        name = name[6:] if name.startswith("torch.") else name
        if name.lower() in _BY_SL_NAME:
            return _BY_SL_NAME[name.lower()]
        if name.upper() in DALIDataType.__members__:
            return DALIDataType[name.upper()]
        if name.upper() == "FLOAT32":
            return DALIDataType.FLOAT
    raise TypeError(f"{t!r} could not be converted into any known DALIDataType")


class ScalarConstant:
    """A typed scalar, what ``types.Constant(value, dtype)`` gives for one number.

    In DataNode arithmetic it is an operand of that type (``x + types.Constant(1,
    types.UINT8)`` promotes as uint8 + uint8; a Python int counts as INT32, a float as FLOAT,
    a bool as BOOL, a NumPy scalar as its own type). Given where a DataNode is expected (an
    operator's input, a pipeline output) it becomes a 0-d constant node. ``value`` is a Python
    bool, int or float of the dtype's kind (converted as DALI does: int() truncates);
    ``dtype`` a DALIDataType. ``.uint8()``, ``.float32()``, ... give it another type.
    """

    __slots__ = ("value", "dtype")

    def __init__(self, value, dtype=None):
        if getattr(value, "dtype", None) is not None:  # a NumPy scalar, a 0-d array / tensor
            if getattr(value, "shape", ()) not in ((), []):
                raise TypeError(f"types.ScalarConstant: expected a scalar, got an array of "
                                f"shape {tuple(value.shape)}")
            natural = to_dali_type(value.dtype)
            value = value.item()
        elif isinstance(value, bool):
            natural = DALIDataType.BOOL
        elif isinstance(value, int):
            natural = DALIDataType.INT32
        elif isinstance(value, float):
            natural = DALIDataType.FLOAT
        else:
            raise TypeError("types.ScalarConstant: expected a bool, int or float scalar, got "
                            f"{type(value).__name__}")
        self.dtype = natural if dtype is None else to_dali_type(dtype)
        if self.dtype in _BOOL_TYPES:
            self.value = bool(value)
        elif self.dtype in _INT_TYPES:
            self.value = int(value)
        elif self.dtype in _FLOAT_TYPES:
            self.value = float(value)
        else:
            raise TypeError(f"types.ScalarConstant: {self.dtype} is not a numeric type")

    def __int__(self):
        if self.dtype in _FLOAT_TYPES:
            raise TypeError(f"a {self.dtype} constant must be converted to an integer type "
                            "(.int32(), ...) before int()")
        return int(self.value)

    def __float__(self):
        if self.dtype not in _FLOAT_TYPES:
            raise TypeError(f"a {self.dtype} constant must be converted to a float type "
                            "(.float32(), ...) before float()")
        return float(self.value)

    def __bool__(self):
        if self.dtype in _FLOAT_TYPES:
            raise TypeError(f"a {self.dtype} constant must be converted to bool or an integer "
                            "type before bool()")
        return bool(self.value)

    def __eq__(self, other):
        if isinstance(other, ScalarConstant):
            return self.value == other.value and self.dtype == other.dtype
        return NotImplemented  # a DataNode answers (its reflected ==)

    def __ne__(self, other):
        if isinstance(other, ScalarConstant):
            return not self == other
        return NotImplemented

    __hash__ = None

    def __str__(self):
        return f"{self.value}:{self.dtype}"

    def __repr__(self):
        return repr(self.value)


def _retyped(dtype):
    def retype(self):
        return ScalarConstant(self.value, dtype)

    retype.__name__ = retype.__qualname__ = _SL_DTYPE[dtype]
    retype.__doc__ = f"This constant as {dtype}."
    return retype


for _t in _BOOL_TYPES + _INT_TYPES + _FLOAT_TYPES:
    setattr(ScalarConstant, _SL_DTYPE[_t], _retyped(_t))


def _scalar_shape(shape):
    """DALI's scalar shapes: none, (), [], and the legacy 1, [1], (1,)."""
    return shape is None or (isinstance(shape, int) and shape == 1) or (
        isinstance(shape, (list, tuple)) and list(shape) in ([], [1]))


def _is_array(value):
    """A NumPy array or scalar, or a torch tensor."""
    mod = type(value).__module__.split(".")[0]
    return mod in ("numpy", "torch") and hasattr(value, "shape")


def Constant(value, dtype=None, shape=None, layout=None, device=None, **kwargs):
    """``types.Constant(value, dtype=None, shape=None, layout=None, device=None, **kwargs)``:
    a constant for a pipeline, as DALI's.

    A scalar (a bool, int, float, NumPy scalar or 0-d array) with no shape, layout, device or
    other keyword argument gives a ScalarConstant, for arithmetic (``x * types.Constant(2,
    types.UINT8)``). Anything else gives a DataNode of the ``constant`` operator, the same
    tensor in every sample: a NumPy array or torch tensor (its shape and dtype are the
    defaults; 64-bit types become 32-bit unless dtype says otherwise, as in DALI — an int64
    array whose values do not fit int32 stays int64), a list or tuple of numbers (int32 if all
    are ints, bool if all bools, else float32; nested lists are N-d arrays), or a scalar with a
    shape (it fills it). dtype converts the values (rounded to nearest and saturated for
    integer types), shape reshapes them (or is filled by a single value), layout names the
    dimensions; device "gpu" makes it on the GPU.
    Other keyword arguments (name, preserve) go to ``fn.constant``.
    """
    if (device is None and layout is None and not kwargs and _scalar_shape(shape)
            and (isinstance(value, (bool, int, float, ScalarConstant))
                 or (_is_array(value) and tuple(value.shape) == ()))
            and not isinstance(value, (DALIDataType, DALIImageType, DALIInterpType))):
        if isinstance(value, ScalarConstant):
            return value if dtype is None else ScalarConstant(value.value, dtype)
        return ScalarConstant(value, dtype)
    return _constant_node(value, dtype, shape, layout, device, **kwargs)


def _as_numpy(value):
    """value as a NumPy array of numbers and its DALIDataType, 64-bit types narrowed as DALI
    narrows them (float64 -> float32; int64 and uint64 -> 32 bits when the values fit)."""
    import numpy as np

    if isinstance(value, ScalarConstant):
        # the Python value itself, converted to its dtype by the constant operator (as any
        # types.Constant with a dtype): NumPy's own conversion of an out-of-range int wraps
        # with a DeprecationWarning on NumPy 1.x and is an OverflowError on NumPy 2
        return np.asarray(value.value), value.dtype
    if isinstance(value, (DALIDataType, DALIImageType, DALIInterpType)) or (
            isinstance(value, (list, tuple))
            and any(isinstance(v, (DALIDataType, DALIImageType, DALIInterpType))
                    for v in value)):
        raise TypeError("types.Constant: enum constants (types.DALIDataType, ...) are not "
                        "supported by sluice")
    if type(value).__module__.split(".")[0] == "torch":
        value = value.detach().cpu().numpy()
    try:
        a = np.asarray(value)
    except ValueError as e:  # ragged nested lists
        raise TypeError(f"types.Constant: {e}") from None
    if a.dtype.kind not in "biuf":
        raise TypeError(f"types.Constant: expected numbers, a list of numbers or an array, "
                        f"got {type(value).__name__}" + (f" of {a.dtype}" if a.size else ""))
    if a.dtype == np.float64:
        a = a.astype(np.float32)
    elif a.dtype in (np.int64, np.uint64):
        narrow = np.dtype(np.int32 if a.dtype == np.int64 else np.uint32)
        if a.size == 0 or (a.min() >= np.iinfo(narrow).min and a.max() <= np.iinfo(narrow).max):
            a = a.astype(narrow)
    return a, to_dali_type(a.dtype)


def _constant_node(value, dtype, shape, layout, device, **kwargs):
    """The DataNode of a ``constant`` node for types.Constant (see there)."""
    from . import fn

    a, natural = _as_numpy(value)
    if device not in (None, "cpu", "gpu"):
        raise ValueError(f'types.Constant: device must be "cpu" or "gpu", got {device!r}')
    if shape is None:
        shape = list(a.shape)
    elif isinstance(shape, int):
        shape = [shape]
    data = {"fdata": a.ravel().tolist()} if natural in _FLOAT_TYPES else \
        {"idata": [int(v) for v in a.ravel().tolist()]}
    return fn.constant(**data, shape=list(shape), dtype=natural if dtype is None else dtype,
                       layout=layout, device=device, **kwargs)


def to_arg(value):
    """Converts an argument value to what the C registry takes: enum members to their sluice
    names, NumPy scalars and arrays to Python numbers and lists, numpy dtypes to names."""
    if isinstance(value, (DALIDataType, DALIImageType, DALIInterpType)):
        return value.sl_name
    if isinstance(value, ScalarConstant):
        return value.value
    if isinstance(value, (list, tuple)):
        return [to_arg(v) for v in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    mod = type(value).__module__.split(".")[0]  # numpy 2: dtypes live in numpy.dtypes
    if mod == "numpy":
        import numpy

        if isinstance(value, numpy.dtype) or (isinstance(value, type)):
            return numpy.dtype(value).name
        if hasattr(value, "tolist"):
            return value.tolist()
    if isinstance(value, type) and getattr(value, "__module__", "") == "numpy":
        import numpy

        return numpy.dtype(value).name
    if mod == "torch" and type(value).__name__ == "dtype":
        return str(value).replace("torch.", "")  # torch.float32 -> "float32"
    return value


def _dtype_of(name):
    """The DALIDataType of a sluice dtype name."""
    return _BY_SL_NAME[name]


_BY_SL_NAME = {v: k for k, v in _SL_DTYPE.items()}
# TensorListCPU.dtype reports DALIDataType members (indexed by sl_dtype).
_sluice._set_dtypes([_BY_SL_NAME[n] for n in _sluice.DTYPE_NAMES])
