"""sluice.tfrecord: the feature descriptions of fn.readers.tfrecord, as DALI's
``nvidia.dali.tfrecord``.

``features={"image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
"image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
"image/object/bbox": tfrec.VarLenFeature([4], tfrec.float32, 0.0)}``

- ``FixedLenFeature(shape, dtype, default_value)``: the feature has exactly prod(shape) values
  (shape () reads as (1,)); a record without it reads as default_value repeated to the shape.
  A string feature is one value and comes out as its bytes, 1-D uint8.
- ``VarLenFeature(dtype, default_value)`` or ``VarLenFeature(partial_shape, dtype,
  default_value)``: any number of values, shape (count,), or (count / prod(partial_shape),
  *partial_shape); a record without it gives an empty (0, ...) tensor.
- dtypes ``int64`` (int64 output), ``float32`` (float32 output), ``string`` (uint8 bytes).

The rules are the C operator's (src/ops/readers/tfrecord.c); this module only turns the dict
into its arguments (feature_names, feature_kinds, feature_dtypes, feature_ndims,
feature_shapes, feature_defaults).
"""
import enum as _enum
import numbers as _numbers


class FeatureType(_enum.Enum):
    """The value types of a feature (DALI's tfrecord.int64 / float32 / string)."""
    int64 = 0
    float32 = 1
    string = 2


int64 = FeatureType.int64
float32 = FeatureType.float32
string = FeatureType.string


class Feature:
    """One feature's description: made by FixedLenFeature or VarLenFeature."""

    def __init__(self, kind, shape, dtype, default_value):
        if not isinstance(dtype, FeatureType):
            raise TypeError("tfrecord feature dtype must be sluice.tfrecord.int64, float32 or "
                            f"string, got {dtype!r}")
        shape = [] if shape is None else shape
        if isinstance(shape, _numbers.Integral):
            shape = [shape]
        try:
            shape = [int(e) for e in shape]
        except TypeError:
            raise TypeError(f"tfrecord feature shape must be a list of ints, got {shape!r}") \
                from None
        if any(e < 0 for e in shape):
            raise ValueError(f"tfrecord feature shape must not have negative extents: {shape}")
        if dtype is string:
            if isinstance(default_value, bytes):
                default_value = default_value.decode("utf-8")
            if not isinstance(default_value, str):
                raise TypeError("the default value of a string feature must be a str, got "
                                f"{type(default_value).__name__}")
        elif dtype is int64:
            if not isinstance(default_value, _numbers.Integral) or isinstance(default_value, bool):
                raise TypeError("the default value of an int64 feature must be an int, got "
                                f"{default_value!r}")
            default_value = int(default_value)
        else:
            if not isinstance(default_value, _numbers.Real):
                raise TypeError("the default value of a float32 feature must be a number, got "
                                f"{default_value!r}")
            default_value = float(default_value)
        self.kind, self.shape, self.dtype, self.default_value = kind, shape, dtype, default_value

    def __repr__(self):
        name = "FixedLenFeature" if self.kind == "fixed" else "VarLenFeature"
        return f"{name}({self.shape}, {self.dtype.name}, {self.default_value!r})"


def FixedLenFeature(shape, dtype, default_value):  # noqa: N802  (DALI's name)
    """A feature of fixed shape (tf.io.FixedLenFeature)."""
    return Feature("fixed", shape, dtype, default_value)


def VarLenFeature(*args):  # noqa: N802  (DALI's name)
    """A feature of any length: VarLenFeature(dtype, default_value) or
    VarLenFeature(partial_shape, dtype, default_value)."""
    if len(args) == 2:
        return Feature("var", [], *args)
    if len(args) == 3:
        return Feature("var", *args)
    raise TypeError("VarLenFeature takes (dtype, default_value) or "
                    f"(partial_shape, dtype, default_value), got {len(args)} arguments")


def _to_args(features):
    """The C operator's arguments for a features dict (its order is the outputs' order)."""
    if not isinstance(features, dict) or not features:
        raise TypeError("readers.tfrecord: features must be a non-empty dict of "
                        "name -> sluice.tfrecord.FixedLenFeature / VarLenFeature")
    args = {k: [] for k in ("feature_names", "feature_kinds", "feature_dtypes",
                            "feature_ndims", "feature_shapes", "feature_defaults")}
    for name, f in features.items():
        if not isinstance(name, str) or not isinstance(f, Feature):
            raise TypeError(f"readers.tfrecord: features entry {name!r}: expected a str name "
                            "and a sluice.tfrecord.FixedLenFeature / VarLenFeature, got "
                            f"{type(f).__name__}")
        args["feature_names"].append(name)
        args["feature_kinds"].append(f.kind)
        args["feature_dtypes"].append(f.dtype.name)
        args["feature_ndims"].append(len(f.shape))
        args["feature_shapes"].extend(f.shape)
        args["feature_defaults"].append(repr(f.default_value) if f.dtype is float32
                                        else str(f.default_value))
    return args
