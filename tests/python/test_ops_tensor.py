"""tests/python/test_ops_tensor.py: the tensor family of issue 19 (reductions, math functions,
tensor utilities) against NumPy on the same data, with DALI's output types, shapes and layouts
and its tolerances (reductions: exact for integer results, np.allclose for float32)."""
import os
import re

import numpy as np
import pytest

import sluice
from sluice import fn, pipeline_def, types
from sluice import math as smath

RNG = np.random.default_rng(19)


def run_once(data, build, layout=None, batch_size=None):
    """One iteration of a pipeline over `data` (a list of samples); build(x) returns a
    DataNode or a tuple of them. Returns the outputs (TensorLists)."""
    bs = batch_size or len(data)

    @pipeline_def(batch_size=bs, num_threads=2, prefetch_queue_depth=1)
    def p():
        x = fn.external_source(source=lambda: data, layout=layout)
        out = build(x)
        return out if isinstance(out, tuple) else (out,)

    pipe = p()
    return pipe.run()


def samples(tl):
    return [np.array(tl.at(i)) for i in range(len(tl))]


# ---- reductions ------------------------------------------------------------------------------

BATCH3D = [RNG.integers(0, 100, size=(2, 3, 4)) for _ in range(3)]
AXES_3D = [None, (), 0, 1, 2, (0, 1), (0, 2), (1, 2), (0, 1, 2), -1, (-3, 1)]


def _np_mean_square(x, axis=None, keepdims=False, dtype=None):
    return np.mean(np.square(x.astype(np.float64)), axis=axis, keepdims=keepdims)


def _np_rms(x, axis=None, keepdims=False, dtype=None):
    return np.sqrt(_np_mean_square(x, axis=axis, keepdims=keepdims))


REDUCTIONS = {
    "sum": np.sum, "min": np.min, "max": np.max, "mean": np.mean,
    "mean_square": _np_mean_square, "rms": _np_rms,
}


def _expected_layout(layout, axes, keep):
    if keep or not layout:
        return layout or ""
    if axes is None:
        return ""
    axes = [axes] if isinstance(axes, int) else axes
    axes = [(a + len(layout)) % len(layout) for a in axes]
    return "".join(c for i, c in enumerate(layout) if i not in axes)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.uint32, np.int64,
                                   np.float32])
@pytest.mark.parametrize("keep", [False, True])
def test_reductions_match_numpy(name, dtype, keep):
    data = [s.astype(dtype) for s in BATCH3D]
    op = getattr(fn.reductions, name)
    nodes = lambda x: tuple(op(x, axes=a, keep_dims=keep) for a in AXES_3D)  # noqa: E731
    outs = run_once(data, nodes, layout="ABC")
    for axes, tl in zip(AXES_3D, outs):
        assert tl.layout() == _expected_layout("ABC", axes, keep), (axes, tl.layout())
        for s, got in zip(data, samples(tl)):
            ref = REDUCTIONS[name](s, axis=axes, keepdims=keep)
            assert got.shape == np.shape(ref), (name, axes, got.shape, np.shape(ref))
            if name in ("min", "max"):
                assert got.dtype == dtype
            if name == "sum":
                want = {np.uint8: np.uint64, np.uint32: np.uint64, np.int16: np.int64,
                        np.int32: np.int64}.get(dtype, dtype)
                assert got.dtype == want, (got.dtype, want)
            if name in ("mean", "mean_square", "rms"):
                assert got.dtype == np.float32
                np.testing.assert_allclose(got, ref, rtol=1e-6)
            else:
                np.testing.assert_array_equal(got, ref)


def test_sum_overflow_promotes_and_dtype_wraps():
    # DALI's overflow batch: values that overflow the narrow type unless promoted
    data = [(s.astype(np.int64) * 100000).astype(np.int32) for s in BATCH3D]
    outs = run_once(data, lambda x: (fn.reductions.sum(x), fn.reductions.sum(x, dtype=types.INT32),
                                     fn.reductions.sum(x, dtype=types.FLOAT),
                                     fn.reductions.mean(x, axes=(0, 2))))
    for s, a, b, c, m in zip(data, *(samples(o) for o in outs)):
        assert a.dtype == np.int64 and a == np.sum(s, dtype=np.int64)
        assert b.dtype == np.int32 and b == np.sum(s, dtype=np.int32)  # wraps as NumPy's
        assert c.dtype == np.float32
        np.testing.assert_allclose(c, np.sum(s, dtype=np.float64), rtol=1e-6)
        np.testing.assert_allclose(m, np.mean(s, axis=(0, 2)), rtol=1e-6)


@pytest.mark.parametrize("name,np_fn", [("std_dev", np.std), ("variance", np.var)])
@pytest.mark.parametrize("axes,ddofs", [(None, [0, 1, 3]), ((), [0]), (1, [0, 1]),
                                        ((0, 2), [0, 1])])
@pytest.mark.parametrize("keep", [False, True])
def test_std_dev_variance_with_mean_input(name, np_fn, axes, ddofs, keep):
    data = [s.astype(np.float32) * 0.37 for s in BATCH3D]
    op = getattr(fn.reductions, name)

    def build(x):
        mean = fn.reductions.mean(x, axes=axes, keep_dims=keep)
        return tuple(op(x, mean, axes=axes, keep_dims=keep, ddof=d) for d in ddofs)

    outs = run_once(data, build, layout="XYZ")
    for d, tl in zip(ddofs, outs):
        assert tl.layout() == _expected_layout("XYZ", axes, keep)
        for s, got in zip(data, samples(tl)):
            ref = np_fn(s.astype(np.float64), axis=axes, keepdims=keep, ddof=d)
            assert got.dtype == np.float32 and got.shape == np.shape(ref)
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_std_dev_scalar_mean_and_unkept_mean():
    data = [RNG.uniform(-1, 1, size=(5, 6)).astype(np.float32) for _ in range(2)]
    outs = run_once(data, lambda x: (
        fn.reductions.std_dev(x, 0.25),
        # mean without kept dims, reduction with: same number of values
        fn.reductions.variance(x, fn.reductions.mean(x, axes=1), axes=1, keep_dims=True)))
    for s, a, b in zip(data, *(samples(o) for o in outs)):
        np.testing.assert_allclose(a, np.sqrt(np.mean((s.astype(np.float64) - 0.25) ** 2)),
                                   rtol=1e-5)
        np.testing.assert_allclose(b, np.var(s.astype(np.float64), axis=1, keepdims=True),
                                   rtol=1e-5, atol=1e-7)


def test_reductions_axis_names_equal_axes():
    data = [s.astype(np.float32) for s in BATCH3D]
    pairs = [((), ""), (0, "A"), (2, "C"), ((0, 2), "AC"), ((1, 2), "BC"), ((0, 1, 2), "ABC")]

    def build(x):
        out = []
        for axes, names in pairs:
            out += [fn.reductions.rms(x, axes=axes), fn.reductions.rms(x, axis_names=names)]
            m = fn.reductions.mean(x, axes=axes)
            out += [fn.reductions.std_dev(x, m, axes=axes),
                    fn.reductions.std_dev(x, m, axis_names=names)]
        return tuple(out)

    outs = run_once(data, build, layout="ABC")
    for k in range(0, len(outs), 2):
        assert outs[k].layout() == outs[k + 1].layout()
        for a, b in zip(samples(outs[k]), samples(outs[k + 1])):
            np.testing.assert_array_equal(a, b)


def test_reductions_empty_and_degenerate_samples():
    data = [np.ones((0, 2), np.int32), np.ones((3, 0), np.int32), np.ones((0,) * 2, np.int32)]
    outs = run_once(data, lambda x: (fn.reductions.sum(x, axes=0), fn.reductions.sum(x, axes=1),
                                     fn.reductions.sum(x), fn.reductions.mean(x, axes=0)))
    for k, s in enumerate(data):
        np.testing.assert_array_equal(samples(outs[0])[k], np.sum(s, axis=0))
        np.testing.assert_array_equal(samples(outs[1])[k], np.sum(s, axis=1))
        assert samples(outs[2])[k] == 0
        assert samples(outs[3])[k].shape == (s.shape[1],)
        assert np.all(np.isnan(samples(outs[3])[k]))


def test_reductions_nan_propagates_in_min_max():
    data = [np.array([1.0, np.nan, -3.0], np.float32), np.array([2.0, 5.0], np.float32)]
    mn, mx = run_once(data, lambda x: (fn.reductions.min(x), fn.reductions.max(x)))
    assert np.isnan(mn.at(0)) and np.isnan(mx.at(0))
    assert mn.at(1) == 2.0 and mx.at(1) == 5.0


def test_reductions_bad_arguments():
    data = [np.zeros((2, 3, 4), np.uint8)]
    for bad in ({"axes": 3}, {"axes": [-100]}, {"axes": [100, 0]}):
        with pytest.raises(sluice.SluiceError, match="Axis index out of range"):
            run_once(data, lambda x: fn.reductions.sum(x, **bad))
    with pytest.raises(sluice.SluiceError, match="exclusive"):
        run_once(data, lambda x: fn.reductions.sum(x, axes=0, axis_names="A"), layout="ABC")
    with pytest.raises(sluice.SluiceError, match="not in the input layout"):
        run_once(data, lambda x: fn.reductions.max(x, axis_names="Q"), layout="ABC")
    with pytest.raises(sluice.SluiceError, match="reductions.min.*empty"):
        run_once([np.zeros((0, 3), np.float32)], lambda x: fn.reductions.min(x, axes=0))
    with pytest.raises(sluice.SluiceError, match="mean of sample 0 has 3 values"):
        run_once(data, lambda x: fn.reductions.variance(
            x, types.Constant(np.float32([1, 2, 3])), axes=0))
    with pytest.raises(sluice.SluiceError, match="cannot accumulate"):
        run_once([np.zeros(3, np.float32)], lambda x: fn.reductions.sum(x, dtype=types.INT32))


# ---- math functions (sluice.math, fn.math.*) ------------------------------------------------

def _pos(t):
    return (1, 20) if np.issubdtype(t, np.integer) else (0.5, 20.0)


def _one(t):
    return (-1, 1) if np.issubdtype(t, np.integer) else (-0.99, 0.99)


def _any(t):
    return (-30, 30)


UNARY = [  # (name, NumPy reference, input range)
    ("sqrt", np.sqrt, _pos), ("rsqrt", lambda x: 1 / np.sqrt(x), _pos), ("cbrt", np.cbrt, _any),
    ("exp", np.exp, lambda t: (-10, 10)), ("log", np.log, _pos), ("log2", np.log2, _pos),
    ("log10", np.log10, _pos), ("fabs", np.fabs, _any), ("floor", np.floor, _any),
    ("ceil", np.ceil, _any), ("sin", np.sin, _any), ("cos", np.cos, _any), ("tan", np.tan, _any),
    ("asin", np.arcsin, _one), ("acos", np.arccos, _one), ("atan", np.arctan, _any),
    ("sinh", np.sinh, lambda t: (-10, 10)), ("cosh", np.cosh, lambda t: (-10, 10)),
    ("tanh", np.tanh, _any), ("asinh", np.arcsinh, _any), ("acosh", np.arccosh, lambda t: (1, 20)),
    ("atanh", np.arctanh, _one),
]


def _data(t, rng_range, shape=(4, 5), n=3):
    lo, hi = rng_range(t)
    if np.issubdtype(t, np.integer):
        return [RNG.integers(lo, hi, size=shape, endpoint=True).astype(t) for _ in range(n)]
    return [RNG.uniform(lo, hi, size=shape).astype(t) for _ in range(n)]


@pytest.mark.parametrize("name,ref,rng_range", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.float32, np.float64])
def test_math_unary_functions_match_numpy(name, ref, rng_range, dtype):
    if dtype == np.uint16 and rng_range(dtype)[0] < 0:
        dtype = np.uint8  # keep the values in the function's domain
        data = [np.abs(s).astype(dtype) for s in _data(np.int8, rng_range)]
    else:
        data = _data(dtype, rng_range)
    out_t = np.float32 if np.issubdtype(dtype, np.integer) else dtype
    outs = run_once(data, lambda x: (getattr(smath, name)(x), getattr(fn.math, name)(x)))
    for tl in outs:
        for s, got in zip(data, samples(tl)):
            assert got.dtype == out_t, (name, got.dtype, out_t)
            np.testing.assert_allclose(got, ref(s.astype(out_t)), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["sqrt", "sin", "exp", "floor"])
def test_math_unary_float16(name):
    data = [RNG.uniform(0.5, 3, size=(7,)).astype(np.float16) for _ in range(2)]
    (out,) = run_once(data, lambda x: getattr(smath, name)(x))
    ref = {"sqrt": np.sqrt, "sin": np.sin, "exp": np.exp, "floor": np.floor}[name]
    for s, got in zip(data, samples(out)):
        assert got.dtype == np.float16
        np.testing.assert_allclose(got, ref(s.astype(np.float32)), rtol=0.005)


def _div_promote(a, b):
    a, b = np.dtype(a), np.dtype(b)
    if a.kind != "f" and b.kind != "f":
        return np.dtype(np.float32)
    if a.kind == "f" and b.kind == "f":
        return a if a.itemsize >= b.itemsize else b
    return a if a.kind == "f" else b


@pytest.mark.parametrize("types_", [(np.int32, np.int32), (np.uint8, np.float32),
                                    (np.float64, np.int16), (np.float32, np.float64)])
def test_math_binary_float_functions(types_):
    lt, rt = types_
    left = [RNG.integers(-15, 15, size=(3, 4)).astype(lt) if lt != np.uint8 else
            RNG.integers(0, 15, size=(3, 4)).astype(lt) for _ in range(2)]
    right = [RNG.integers(-4, 4, size=(3, 4)).astype(rt) for _ in range(2)]
    want = _div_promote(lt, rt)

    @pipeline_def(batch_size=2, num_threads=1, prefetch_queue_depth=1)
    def p():
        a = fn.external_source(source=lambda: left)
        b = fn.external_source(source=lambda: right)
        return (smath.atan2(a, b), fn.math.atan2(a, b), smath.fpow(a, b), fn.math.fpow(a, b),
                smath.atan2(a, 2), smath.fpow(3.0, b))

    outs = p().run()
    for i in range(2):
        l64, r64 = left[i].astype(want), right[i].astype(want)
        for k, ref in enumerate([np.arctan2(l64, r64), np.arctan2(l64, r64)]):
            got = np.array(outs[k].at(i))
            assert got.dtype == want
            np.testing.assert_allclose(got, ref, rtol=1e-6)
        for k in (2, 3):
            got = np.array(outs[k].at(i))
            assert got.dtype == want
            with np.errstate(divide="ignore"):
                np.testing.assert_allclose(got, np.power(l64, r64), rtol=1e-6)
        c = np.array(outs[4].at(i))  # a Python int is an int32 constant
        assert c.dtype == _div_promote(lt, np.int32)
        np.testing.assert_allclose(c, np.arctan2(left[i].astype(c.dtype), 2), rtol=1e-6)
        d = np.array(outs[5].at(i))  # a Python float is a float32 constant
        assert d.dtype == _div_promote(np.float32, rt)
        np.testing.assert_allclose(d, np.power(3.0, right[i].astype(d.dtype)), rtol=1e-6)


def test_math_module_pow_min_max_abs_clamp():
    data = [RNG.integers(-20, 20, size=(4, 4)).astype(np.int16) for _ in range(2)]
    outs = run_once(data, lambda x: (smath.pow(x, 2), smath.min(x, 3), smath.max(-1, x),
                                     smath.abs(x), smath.clamp(x, -5, 5),
                                     smath.clamp(x, -5.5, 5), smath.clamp(x, types.Constant(
                                         0, types.UINT8), types.Constant(9, types.UINT8))))
    for i, s in enumerate(data):
        got = [np.array(o.at(i)) for o in outs]
        s32 = s.astype(np.int32)
        np.testing.assert_array_equal(got[0], s32 ** 2)
        assert got[0].dtype == np.int32  # int16 with an int32 constant
        np.testing.assert_array_equal(got[1], np.minimum(s32, 3))
        np.testing.assert_array_equal(got[2], np.maximum(s32, -1))
        assert got[3].dtype == np.int16
        np.testing.assert_array_equal(got[3], np.abs(s))
        assert got[4].dtype == np.int32
        np.testing.assert_array_equal(got[4], np.clip(s32, -5, 5))
        assert got[5].dtype == np.float32
        np.testing.assert_array_equal(got[5], np.clip(s.astype(np.float32), -5.5, 5))
        assert got[6].dtype == np.int16  # int16 with uint8 bounds
        np.testing.assert_array_equal(got[6], np.clip(s, 0, 9))


def test_math_functions_reject_bool_and_constants_alone():
    data = [np.array([True, False])]
    with pytest.raises(sluice.SluiceError, match="cannot be boolean"):
        run_once(data, lambda x: smath.sin(x))
    with pytest.raises(TypeError, match="DataNode"):
        smath.atan2(1.0, 2.0)


@pytest.mark.parametrize("types_", [(np.int32, np.int32, np.int32), (np.int32, np.int8, np.int16),
                                    (np.int32, np.uint8, np.float32), (np.uint8, np.float32,
                                                                       np.float32)])
def test_math_clamp_tensor_bounds_promote(types_):
    # DALI's ternary promotion: promote(promote(x, lo), hi), bounds broadcast (a (1,) bound too)
    xt, lt, ht = types_
    x = [RNG.integers(0, 100, size=(5, 3)).astype(xt) for _ in range(2)]
    lo = [RNG.integers(0, 50, size=(5, 3)).astype(lt), np.array([[20]], lt)]
    hi = [RNG.integers(30, 90, size=(5, 3)).astype(ht), np.array([[10]], ht)]  # hi < lo: hi

    @pipeline_def(batch_size=2, num_threads=1, prefetch_queue_depth=1)
    def p():
        a, b, c = (fn.external_source(source=lambda d=d: d) for d in (x, lo, hi))
        return smath.clamp(a, b, c), smath.clamp(a, b, 60)

    o1, o2 = p().run()
    for i in range(2):
        want = {np.int8: np.int32, np.uint8: np.int32}.get(lt, lt) if ht != np.float32 else ht
        got = np.array(o1.at(i))
        assert got.dtype == want, (got.dtype, want)
        np.testing.assert_array_equal(got, _dali_clamp(x[i], lo[i], hi[i]))
        np.testing.assert_array_equal(np.array(o2.at(i)), _dali_clamp(x[i], lo[i], 60))


def _dali_clamp(x, lo, hi):
    t = np.where(x < lo, lo, x)
    return np.where(t > hi, hi, t)


# ---- tensor utilities --------------------------------------------------------------------------

@pytest.mark.parametrize("axes,names,layout,shape,want_shape,want_layout", [
    ([0, 2], "AB", "XYZ", (10, 20, 30), (1, 10, 1, 20, 30), "AXBYZ"),
    ([0, 3], None, "XYZ", (10, 20, 30), (1, 10, 20, 1, 30), ""),
    ([4, 3], None, "XYZ", (10, 20, 30), (10, 20, 30, 1, 1), ""),
    ([0, 1, 3, 5, 7], "ABCDE", "XYZ", (11, 22, 33), (1, 1, 11, 1, 22, 1, 33, 1), "ABXCYDZE"),
    ([], "", "HW", (10, 20), (10, 20), "HW"),
    ([0, 1], "", "", (), (1, 1), ""),
    ([0], "", "HW", (10, 20), (1, 10, 20), ""),
    ([4, 3], "AB", "XYZ", (10, 20, 30), (10, 20, 30, 1, 1), "XYZBA"),
    ([0], "X", "", (), (1,), "X"),
])
def test_expand_dims(axes, names, layout, shape, want_shape, want_layout):
    data = [RNG.integers(0, 255, size=shape).astype(np.uint8) for _ in range(2)]
    (out,) = run_once(data, lambda x: fn.expand_dims(x, axes=axes, new_axis_names=names),
                      layout=layout or None)
    assert out.layout() == want_layout
    for s, got in zip(data, samples(out)):
        np.testing.assert_array_equal(got, s.reshape(want_shape))


@pytest.mark.parametrize("axes,names,layout,match", [
    ([4], None, None, "not enough dimensions"), ([0, -1], None, None, "can't be negative"),
    ([2, 0, 2], "AB", "XYZ", "twice|new dimension names"),
    ([0, 1], "ABC", "XYZ", "new dimension names"),
    ([2], "C", None, "requires an input with a proper layout")])
def test_expand_dims_errors(axes, names, layout, match):
    with pytest.raises(sluice.SluiceError, match=match):
        run_once([np.zeros((10, 20, 30), np.uint8)],
                 lambda x: fn.expand_dims(x, axes=axes, new_axis_names=names), layout=layout)


def test_squeeze():
    data = [RNG.integers(0, 9, size=(1, 4, 1, 3)).astype(np.int16) for _ in range(2)]
    outs = run_once(data, lambda x: (fn.squeeze(x, axes=[0, 2]), fn.squeeze(x, axis_names="AC"),
                                     fn.squeeze(x, axes=-2), fn.squeeze(x, axes=[])),
                    layout="ABCD")
    assert [o.layout() for o in outs] == ["BD", "BD", "ABD", "ABCD"]
    for k, s in enumerate(data):
        np.testing.assert_array_equal(samples(outs[0])[k], np.squeeze(s, axis=(0, 2)))
        np.testing.assert_array_equal(samples(outs[1])[k], np.squeeze(s, axis=(0, 2)))
        np.testing.assert_array_equal(samples(outs[2])[k], np.squeeze(s, axis=2))
        np.testing.assert_array_equal(samples(outs[3])[k], s)
    # a 0-volume sample may lose a dimension of extent 0 when the volume stays 0
    (o,) = run_once([np.zeros((0, 2, 0), np.float32)], lambda x: fn.squeeze(x, axes=0))
    assert o.at(0).shape == (2, 0)
    with pytest.raises(sluice.SluiceError, match="extent 4"):
        run_once(data, lambda x: fn.squeeze(x, axes=1))


def test_reinterpret():
    data = [RNG.integers(0, 255, size=(3, 8)).astype(np.uint8) for _ in range(2)]
    outs = run_once(data, lambda x: (
        fn.reinterpret(x, dtype=types.INT32), fn.reinterpret(x, dtype=types.UINT16, shape=[-1]),
        fn.reinterpret(x, shape=[4, -1], layout="AB"), fn.reinterpret(x, rel_shape=[1 / 3, 3]),
        fn.reinterpret(x, dtype=types.FLOAT64, shape=[3])), layout="HW")
    assert [o.layout() for o in outs] == ["HW", "", "AB", "HW", ""]
    for k, s in enumerate(data):
        got = [samples(o)[k] for o in outs]
        np.testing.assert_array_equal(got[0], s.view(np.int32))
        np.testing.assert_array_equal(got[1], s.reshape(-1).view(np.uint16))
        np.testing.assert_array_equal(got[2], s.reshape(4, -1))
        np.testing.assert_array_equal(got[3], s.reshape(1, 24))
        np.testing.assert_array_equal(got[4], s.reshape(-1).view(np.float64))


def test_reinterpret_errors():
    data = [np.zeros((3, 5), np.uint8)]
    with pytest.raises(sluice.SluiceError, match="innermost extent holds 5 bytes"):
        run_once(data, lambda x: fn.reinterpret(x, dtype=types.INT32))
    with pytest.raises(sluice.SluiceError, match="15 bytes"):
        run_once(data, lambda x: fn.reinterpret(x, shape=[4, 4]))


def test_cast_like():
    a = [RNG.uniform(-300, 300, size=(4, 3)).astype(np.float32) for _ in range(2)]
    b = [np.zeros(5, np.uint8), np.zeros(2, np.uint8)]

    @pipeline_def(batch_size=2, num_threads=1, prefetch_queue_depth=1)
    def p():
        x = fn.external_source(source=lambda: a, layout="HW")
        y = fn.external_source(source=lambda: b)
        return fn.cast_like(x, y), fn.cast_like(y, x)

    o1, o2 = p().run()
    assert o1.layout() == "HW"
    for k in range(2):
        got = np.array(o1.at(k))
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, np.clip(np.round(a[k]), 0, 255).astype(np.uint8))
        assert np.array(o2.at(k)).dtype == np.float32


def _np_one_hot(x, nc, axis):
    out = (np.arange(nc) == x[..., None]).astype(np.int32)
    return np.moveaxis(out, -1, axis if axis >= 0 else x.ndim)


@pytest.mark.parametrize("axis", [-1, 0, 1, 2, 3])
def test_one_hot_3d(axis):
    data = [RNG.integers(0, 20, size=RNG.integers(2, 6, size=3)).astype(np.int32)
            for _ in range(3)]
    outs = run_once(data, lambda x: (
        fn.one_hot(x, num_classes=20, axis=axis, dtype=types.INT32, axis_name="O"),
        fn.one_hot(x, num_classes=20, axis=axis, dtype=types.INT32)), layout="ABC")
    want_layout = "ABC"[:axis if axis >= 0 else 3] + "O" + "ABC"[axis if axis >= 0 else 3:]
    assert outs[0].layout() == want_layout and outs[1].layout() == ""
    for s, got in zip(data, samples(outs[0])):
        np.testing.assert_array_equal(got, _np_one_hot(s, 20, axis))


def test_one_hot_scalars_values_and_errors():
    scal = [np.array(v, np.int32) for v in (3, 0, 25, -1)]  # out of range: all off
    like = [np.array([[v]], np.int64) for v in (1, 4, 0, 2)]
    o1, = run_once(scal, lambda x: fn.one_hot(x, num_classes=5, on_value=2.5, off_value=-1,
                                               axis_name="O"))
    o2, = run_once(like, lambda x: fn.one_hot(x, num_classes=5, dtype=types.UINT8))
    assert o1.layout() == "O"
    for v, got in zip((3, 0, 25, -1), samples(o1)):
        want = np.full(5, -1, np.float32)
        if 0 <= v < 5:
            want[v] = 2.5
        np.testing.assert_array_equal(got, want)
    for v, got in zip((1, 4, 0, 2), samples(o2)):
        assert got.shape == (5,) and got.dtype == np.uint8
        np.testing.assert_array_equal(got, np.eye(5, dtype=np.uint8)[v])
    with pytest.raises(sluice.SluiceError, match="Unsupported axis_name value"):
        run_once(scal, lambda x: fn.one_hot(x, num_classes=5, axis_name="CD"))
    with pytest.raises(sluice.SluiceError, match="Input layout mismatch"):
        run_once([np.zeros((2, 3), np.int32)],
                 lambda x: fn.one_hot(x, num_classes=5, axis_name="O"))


def test_lookup_table():
    data = [RNG.integers(-3, 12, size=(5, 6)).astype(np.int16) for _ in range(2)]
    keys, values = [0, 2, 4, 7, 100000], [1.5, -2.0, 4.25, 9.0, 3.0]
    outs = run_once(data, lambda x: (
        fn.lookup_table(x, keys=keys, values=values, default_value=-7.0),
        fn.lookup_table(x, keys=[1, 2], values=[10, 300], dtype=types.UINT8),
        fn.lookup_table(x, keys=[-2, 10 ** 12], values=[5, 6])), layout="HW")
    for k, s in enumerate(data):
        got = [samples(o)[k] for o in outs]
        table = dict(zip(keys, values))
        want = np.vectorize(lambda v: table.get(int(v), -7.0))(s).astype(np.float32)
        assert got[0].dtype == np.float32
        np.testing.assert_array_equal(got[0], want)
        want = np.where(s == 1, 10, np.where(s == 2, 255, 0)).astype(np.uint8)  # saturated
        np.testing.assert_array_equal(got[1], want)
        np.testing.assert_array_equal(got[2], np.where(s == -2, 5, 0).astype(np.float32))
    assert outs[0].layout() == "HW"
    with pytest.raises(sluice.SluiceError, match="integer type"):
        run_once([np.zeros(3, np.float32)], lambda x: fn.lookup_table(x, keys=[1], values=[2]))
    with pytest.raises(sluice.SluiceError, match="one value per key"):
        run_once(data, lambda x: fn.lookup_table(x, keys=[1, 2], values=[2]))


def test_get_property_source_info_and_layout(tree_files):
    files = [f for f, _ in tree_files[:6]]

    @pipeline_def(batch_size=3, num_threads=2, prefetch_queue_depth=1)
    def p():
        read, _ = fn.readers.file(files=files)
        return fn.get_property(read, key="source_info"), fn.get_property(read, key="layout")

    pipe = p()
    for it in range(2):
        info, layout = pipe.run()
        for k in range(3):
            assert np.array(info.at(k)).dtype == np.uint8
            assert np.array(info.at(k)).tobytes().decode() == files[it * 3 + k]
            assert np.array(layout.at(k)).tobytes().decode() == ""
    (lay,) = run_once([np.zeros((2, 2, 3), np.uint8)], lambda x: fn.get_property(x, key="layout"),
                      layout="HWC")
    assert np.array(lay.at(0)).tobytes() == b"HWC"


def test_permute_batch_and_batch_permutation():
    data = [np.full((k + 1, 2), k, np.int32) for k in range(5)]

    @pipeline_def(batch_size=5, num_threads=2, prefetch_queue_depth=1, seed=3)
    def p():
        x = fn.external_source(source=lambda: data, layout="AB")
        perm = fn.batch_permutation(seed=420)
        der = fn.batch_permutation(no_fixed_points=True)
        rep = fn.batch_permutation(allow_repetitions=True)
        return (perm, fn.permute_batch(x, indices=perm), fn.permute_batch(x, indices=[4, 4, 0, 1, 2]),
                der, rep)

    pipe = p()
    seen = set()
    for _ in range(4):
        perm, out, fixed, der, rep = pipe.run()
        idx = [int(np.array(perm.at(k))) for k in range(5)]
        assert sorted(idx) == list(range(5)) and np.array(perm.at(0)).dtype == np.int32
        seen.add(tuple(idx))
        assert out.layout() == "AB"
        for k in range(5):
            np.testing.assert_array_equal(np.array(out.at(k)), data[idx[k]])
        for k, j in enumerate([4, 4, 0, 1, 2]):
            np.testing.assert_array_equal(np.array(fixed.at(k)), data[j])
        d = [int(np.array(der.at(k))) for k in range(5)]
        assert sorted(d) == list(range(5)) and all(d[k] != k for k in range(5))
        assert all(0 <= int(np.array(rep.at(k))) < 5 for k in range(5))
    assert len(seen) > 1  # a new permutation per iteration
    with pytest.raises(sluice.SluiceError, match="index 7 is out of range"):
        run_once(data, lambda x: fn.permute_batch(x, indices=[0, 1, 2, 3, 7]))


def test_per_frame_layouts():
    data = [np.arange(24, dtype=np.uint8).reshape(2, 4, 3)]
    outs = run_once(data, lambda x: fn.per_frame(x, replace=True), layout="HWC")
    assert outs[0].layout() == "FWC"
    np.testing.assert_array_equal(np.array(outs[0].at(0)), data[0])
    assert run_once(data, lambda x: fn.per_frame(x))[0].layout() == "F**"
    assert run_once(data, lambda x: fn.per_frame(x), layout="FWC")[0].layout() == "FWC"
    with pytest.raises(sluice.SluiceError, match="does not start with 'F'"):
        run_once(data, lambda x: fn.per_frame(x), layout="HWC")


def test_sequence_rearrange():
    data = [RNG.integers(0, 255, size=(5, 4, 6, 3)).astype(np.uint8) for _ in range(2)]
    order = [0, 4, 1, 3, 2]
    outs = run_once(data, lambda x: (fn.sequence_rearrange(x, new_order=order),
                                     fn.sequence_rearrange(x, new_order=[2, 2])), layout="FHWC")
    assert outs[0].layout() == "FHWC"
    for k, s in enumerate(data):
        np.testing.assert_array_equal(np.array(outs[0].at(k)), s[order])
        np.testing.assert_array_equal(np.array(outs[1].at(k)), s[[2, 2]])
    with pytest.raises(sluice.SluiceError, match="new_order\\[1\\] = 5"):
        run_once(data, lambda x: fn.sequence_rearrange(x, new_order=[0, 5]), layout="FHWC")


@pytest.mark.parametrize("shape,layout,element_map", [
    ((4, 2, 2), "FHW", [1, 3]), ((6, 1), "FX", [0]), ((8, 10, 10, 3), "FHWC", [2, 2]),
    ((4, 3, 3), "FXY", [0, 1, 2, 3, 3, 2, 1, 0]), ((5, 3), None, [4, 0])])
def test_element_extract(shape, layout, element_map):
    data = [RNG.integers(0, 255, size=shape).astype(np.int32) for _ in range(3)]

    def build(x):
        out = fn.element_extract(x, element_map=element_map)
        return (out,) if len(element_map) == 1 else tuple(out)

    outs = run_once(data, build, layout=layout)
    assert len(outs) == len(element_map)
    for j, idx in enumerate(element_map):
        assert outs[j].layout() == (layout or "")[1:]
        for k, s in enumerate(data):
            np.testing.assert_array_equal(np.array(outs[j].at(k)), s[idx])


@pytest.mark.parametrize("shape,layout,emap,match", [
    ((4,), "F", [1, 3], "at least two dimensions"),
    ((6, 1), "XF", [1], "must start with 'F', got 'XF'"),
    ((6, 1), "FX", [10], "Index `10` from `element_map` is out of bounds for sample with "
                         "sequence length equal `6`"),
    ((6, 1), "FX", [-5], "Negative indices in `element_map` are not allowed, found: -5")])
def test_element_extract_errors(shape, layout, emap, match):
    with pytest.raises(sluice.SluiceError, match=match):
        run_once([np.zeros(shape, np.uint8)], lambda x: fn.element_extract(x, element_map=emap),
                 layout=layout)


def test_peek_image_shape_matches_pil(tree_files):
    from PIL import Image

    files = [f for f, _ in tree_files[:4]]

    @pipeline_def(batch_size=4, num_threads=2, prefetch_queue_depth=1)
    def p():
        enc, _ = fn.readers.file(files=files)
        return (fn.peek_image_shape(enc), fn.experimental.peek_image_shape(enc, dtype=types.INT32),
                fn.peek_image_shape(enc, image_type=types.GRAY), fn.decoders.image(enc))

    shapes, shapes32, gray, decoded = p().run()
    for k, f in enumerate(files):
        w, h = Image.open(f).size
        s = np.array(shapes.at(k))
        assert s.dtype == np.int64 and list(s) == [h, w, 3]
        assert np.array(shapes32.at(k)).dtype == np.int32 and list(shapes32.at(k)) == [h, w, 3]
        assert list(gray.at(k)) == [h, w, 1]
        assert tuple(s) == np.array(decoded.at(k)).shape


def test_peek_image_shape_png_channels_and_corrupt_input(tmp_path):
    from PIL import Image
    import io

    buf = io.BytesIO()
    Image.new("RGBA", (7, 5)).save(buf, format="PNG")
    png = np.frombuffer(buf.getvalue(), np.uint8)
    outs = run_once([png], lambda x: (fn.peek_image_shape(x, image_type=types.ANY_DATA),
                                      fn.peek_image_shape(x)))
    assert list(outs[0].at(0)) == [5, 7, 4] and list(outs[1].at(0)) == [5, 7, 3]
    with pytest.raises(sluice.SluiceError, match="not a JPEG or PNG"):
        run_once([np.frombuffer(b"hello, not an image", np.uint8)],
                 lambda x: fn.peek_image_shape(x))


def test_dump_image_writes_ppm_and_passes_through(tmp_path, monkeypatch):
    from PIL import Image

    monkeypatch.chdir(tmp_path)
    data = [RNG.integers(0, 255, size=(4 + k, 6, 3)).astype(np.uint8) for k in range(2)]
    gray = [RNG.integers(0, 255, size=(1, 3, 5)).astype(np.uint8) for _ in range(2)]

    @pipeline_def(batch_size=2, num_threads=2, prefetch_queue_depth=1)
    def p():
        x = fn.external_source(source=lambda: data, layout="HWC")
        g = fn.external_source(source=lambda: gray, layout="CHW")
        fn.dump_image(g, suffix="gray", input_layout="CHW")  # unused output: never pruned
        return fn.dump_image(x, suffix="rgb")

    (out,) = p().run()
    for k in range(2):
        np.testing.assert_array_equal(np.array(out.at(k)), data[k])
        np.testing.assert_array_equal(np.array(Image.open(tmp_path / f"{k}-rgb-0.ppm")), data[k])
        np.testing.assert_array_equal(np.array(Image.open(tmp_path / f"{k}-gray-0.ppm")),
                                      gray[k][0])
    with pytest.raises(sluice.SluiceError, match="three dimensions and type uint8"):
        run_once([np.zeros((4, 4), np.uint8)], lambda x: fn.dump_image(x))
    monkeypatch.chdir(tmp_path / "..")
    (tmp_path / "ro").mkdir(mode=0o500)
    monkeypatch.chdir(tmp_path / "ro")
    if os.access(".", os.W_OK):
        return  # root ignores the mode: nothing more to check
    with pytest.raises(sluice.SluiceError, match="cannot write \"0--0.ppm\""):
        run_once(data, lambda x: fn.dump_image(x))


@pytest.mark.parametrize("size,interp", [((7, 9), "INTERP_LINEAR"), ((31, 17), "INTERP_LINEAR"),
                                         ((50, 40), "INTERP_LINEAR"), ((7, 9), "INTERP_NN"),
                                         ((50, 45), "INTERP_NN")])
def test_tensor_resize_matches_pil(size, interp):
    from PIL import Image

    data = [RNG.uniform(0, 255, size=(23, 19)).astype(np.float32) for _ in range(2)]
    (out,) = run_once(data, lambda x: fn.experimental.tensor_resize(
        x, sizes=list(size), axes=[0, 1], interp_type=getattr(types, interp)))
    pil_mode = Image.BILINEAR if interp == "INTERP_LINEAR" else Image.NEAREST
    for s, got in zip(data, samples(out)):
        ref = np.array(Image.fromarray(s, mode="F").resize(size[::-1], pil_mode))
        assert got.shape == size and got.dtype == np.float32
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-3)


def test_tensor_resize_nd_scales_and_uint8():
    vol = [RNG.integers(0, 255, size=(6, 8, 4, 3)).astype(np.uint8) for _ in range(2)]
    outs = run_once(vol, lambda x: (
        fn.experimental.tensor_resize(x, scales=[2.0], axes=[2]),
        fn.experimental.tensor_resize(x, sizes=[3, 4], axis_names="DH", dtype=types.FLOAT),
        fn.experimental.tensor_resize(x, sizes=[6, 8, 4, 3])), layout="DHWC")
    for k, s in enumerate(vol):
        a, b, c = (samples(o)[k] for o in outs)
        assert a.shape == (6, 8, 8, 3) and a.dtype == np.uint8
        # upscaling a line by 2 with half-pixel centres: 0.75 / 0.25 blends, edges clamped
        f = s.astype(np.float64)
        ref = np.empty((6, 8, 8, 3))
        for o in range(8):
            c0 = (o + 0.5) / 2 - 0.5
            j = int(np.floor(c0))
            t = c0 - j
            ref[:, :, o] = (1 - t) * f[:, :, max(j, 0)] + t * f[:, :, min(j + 1, 3)]
        np.testing.assert_array_equal(a, np.clip(np.floor(ref + 0.5), 0, 255).astype(np.uint8))
        assert b.shape == (3, 4, 4, 3) and b.dtype == np.float32
        assert np.isfinite(b).all() and b.min() >= 0 and b.max() <= 255
        np.testing.assert_array_equal(c, s)  # same size: unchanged
    with pytest.raises(sluice.SluiceError, match="sizes has 1 values for 2 resized axes"):
        run_once(vol, lambda x: fn.experimental.tensor_resize(x, sizes=[3], axes=[0, 1]))


# ---- each operator used the way DALI's CPU-only smoke tests use it ---------------------------

def _hwc():
    return [RNG.integers(0, 255, size=(10, 20, 3), dtype=np.uint8) for _ in range(2)]


SMOKE = {
    "reductions.min": lambda x: fn.reductions.min(x),
    "reductions.sum": lambda x: fn.reductions.sum(x),
    "reductions.rms": lambda x: fn.reductions.rms(x),
    "reductions.std_dev": lambda x: fn.reductions.std_dev(x, fn.reductions.mean(x)),
    "reductions.variance": lambda x: fn.reductions.variance(x, fn.reductions.mean(x)),
    "reinterpret": lambda x: fn.reinterpret(x, rel_shape=[0.5, 1, -1]),
    "expand_dims": lambda x: fn.expand_dims(x, axes=1, new_axis_names="Z"),
    "per_frame": lambda x: fn.per_frame(x, replace=True),
    "tensor_resize": lambda x: fn.experimental.tensor_resize(x, sizes=[50, 50], axes=[0, 1]),
    "dump_image": lambda x: fn.dump_image(x),
    "permute_batch": lambda x: fn.permute_batch(x, indices=fn.batch_permutation(seed=420)),
    "math": lambda x: (smath.sqrt(x), smath.atan2(x, 2), smath.clamp(x, 10, 20),
                       smath.fpow(x, 0.5), smath.floor(x)),
}


@pytest.mark.parametrize("name", sorted(SMOKE))
def test_dali_cpu_only_usage(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # dump_image writes into the working directory
    pipe = sluice.Pipeline(batch_size=2, num_threads=4, device_id=None)
    with pipe:
        data = fn.external_source(source=_hwc, layout="HWC")
        out = SMOKE[name](data)
        pipe.set_outputs(*(out if isinstance(out, tuple) else (out,)))
    for _ in range(3):
        pipe.run()


def test_dali_cpu_only_usage_other_inputs():
    pipe = sluice.Pipeline(batch_size=2, num_threads=3, device_id=None)
    out = fn.cast_like(np.array([1, 2, 3], dtype=np.int32), np.array([1.0], dtype=np.float32))
    pipe.set_outputs(out)
    for _ in range(3):
        (o,) = pipe.run()
    np.testing.assert_array_equal(np.array(o.at(0)), np.float32([1, 2, 3]))

    def run(get_data, build, layout=None):
        p = sluice.Pipeline(batch_size=2, num_threads=4, device_id=None)
        with p:
            d = fn.external_source(source=get_data, layout=layout)
            r = build(d)
            p.set_outputs(*(r if isinstance(r, (tuple, list)) else (r,)))
        for _ in range(3):
            res = p.run()
        return res

    res = run(lambda: [RNG.integers(0, 255, size=[200], dtype=np.uint8) for _ in range(2)],
              lambda d: fn.one_hot(d, num_classes=256))
    assert res[0].at(0).shape == (200, 256)
    run(lambda: [RNG.integers(0, 5, size=[100], dtype=np.uint8) for _ in range(2)],
        lambda d: fn.lookup_table(d, keys=[1, 3], values=[10, 50]))
    res = run(_hwc, lambda d: fn.element_extract(d, element_map=[0, 3]))
    assert len(res) == 2 and res[1].at(0).shape == (20, 3)
    run(lambda: [RNG.integers(0, 255, size=[5, 10, 20, 3], dtype=np.uint8) for _ in range(2)],
        lambda d: fn.sequence_rearrange(d, new_order=[0, 4, 1, 3, 2]), layout="FHWC")
    run(lambda: [np.zeros([10, 20, 3, 1, 1], np.uint8) for _ in range(2)],
        lambda d: fn.squeeze(d, axis_names="YZ"), layout="HWCYZ")


ZERO = {  # name: (build, expected shape of sample 0, or the error text naming sample 0)
    "sum": (lambda x: fn.reductions.sum(x), ()),
    "min": (lambda x: fn.reductions.min(x), "sample 0: min of an empty set"),
    "max_c": (lambda x: fn.reductions.max(x, axes=2), (0, 4)),
    "mean": (lambda x: fn.reductions.mean(x, axes=[0, 1]), (3,)),
    "std": (lambda x: fn.reductions.std_dev(x, fn.reductions.mean(x, axes=2), axes=2), (0, 4)),
    "expand_dims": (lambda x: fn.expand_dims(x, axes=[0]), (1, 0, 4, 3)),
    "reinterpret": (lambda x: fn.reinterpret(x, dtype=types.INT8), (0, 4, 3)),
    "one_hot": (lambda x: fn.one_hot(x, num_classes=3), (0, 4, 3, 3)),
    "lookup_table": (lambda x: fn.lookup_table(x, keys=[1], values=[2]), (0, 4, 3)),
    "element_extract": (lambda x: fn.element_extract(x, element_map=[0]),
                        "sequence length equal `0` (sample 0)"),
    "sequence_rearrange": (lambda x: fn.sequence_rearrange(x, new_order=[0]),
                           "sample 0: new_order[0] = 0 is not a frame"),
    "permute_batch": (lambda x: fn.permute_batch(x, indices=[1, 0]), (2, 4, 3)),
    "tensor_resize": (lambda x: fn.experimental.tensor_resize(x, sizes=[3, 3], axes=[0, 1]),
                      "sample 0: the sample is empty"),
    "peek_image_shape": (lambda x: fn.peek_image_shape(x), "sample 0: not a JPEG or PNG"),
    "sin": (lambda x: smath.sin(x), (0, 4, 3)),
}


@pytest.mark.parametrize("name", sorted(ZERO))
def test_zero_sized_sample(name):
    build, want = ZERO[name]
    data = [np.zeros((0, 4, 3), np.uint8), np.ones((2, 4, 3), np.uint8)]
    if isinstance(want, str):
        with pytest.raises(sluice.SluiceError, match=re.escape(want)):
            run_once(data, build, layout="FHW")
        return
    (out,) = run_once(data, build, layout="FHW")
    assert np.array(out.at(0)).shape == want


def test_math_functions_on_the_gpu_equal_the_cpu(tree):
    """The thin math.* operators run the element-wise family's GPU kernels (run_gpu): on GPU
    data (emulated here; a device when one is present) they equal the CPU results within
    float32 rounding of the device functions."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import numpy as np
        from sluice import fn, pipeline_def
        from sluice import math as M
        rng = np.random.default_rng(5)
        data = [rng.uniform(-0.9, 0.9, size=(6, 7)).astype(np.float32) for _ in range(3)]
        names = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
                 "atanh", "floor", "ceil", "fabs", "cbrt", "log2", "log10", "rsqrt", "exp"]

        @pipeline_def(batch_size=3, num_threads=1, device_id=0)
        def p():
            x = fn.external_source(source=lambda: data)
            a = abs(x) + 0.5
            outs = [getattr(fn.math, n)(a) for n in names]
            outs += [getattr(fn.math, n)(a.gpu()) for n in names]
            outs += [fn.math.atan2(x, a), fn.math.atan2(x.gpu(), a.gpu()),
                     M.fpow(a, 1.5), M.fpow(a.gpu(), 1.5)]
            return tuple(outs)

        out = p().run()
        k = len(names)
        pairs = [(out[i], out[k + i]) for i in range(k)] + [(out[2 * k], out[2 * k + 1]),
                                                              (out[2 * k + 2], out[2 * k + 3])]
        for c, g in pairs:
            g = g.as_cpu()
            for i in range(3):
                np.testing.assert_allclose(np.array(g.at(i)), np.array(c.at(i)), rtol=2e-6,
                                           atol=1e-7)
        print("ok")
    """)
    env = dict(os.environ, SLUICE_GPU_EMULATE="1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr
