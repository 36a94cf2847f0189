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


class Constant:
    """``types.Constant(value, dtype=None)``: a typed scalar for DataNode arithmetic.

    ``x + types.Constant(1, types.UINT8)`` promotes as uint8 + uint8. Only scalars are
    supported (sluice's arithmetic takes a tensor constant as a second input instead).
    """

    def __init__(self, value, dtype=None, shape=None, layout=None, device=None, **kwargs):
        if shape not in (None, (), []) or not isinstance(value, (bool, int, float)):
            try:
                value = value.item()  # NumPy scalar or 0-d array
            except (AttributeError, ValueError):
                raise NotImplementedError(
                    "types.Constant: sluice supports scalar constants only") from None
        self.value = value
        self.dtype = DALIDataType(dtype) if isinstance(dtype, int) else dtype

    def __repr__(self):
        return f"Constant({self.value!r}, dtype={self.dtype!r})"


def to_arg(value):
    """Converts an argument value to what the C registry takes: enum members to their sluice
    names, NumPy scalars and arrays to Python numbers and lists, numpy dtypes to names."""
    if isinstance(value, (DALIDataType, DALIImageType, DALIInterpType)):
        return value.sl_name
    if isinstance(value, (list, tuple)):
        return [to_arg(v) for v in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    mod = type(value).__module__
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
