"""arithmetic and the math.* operators against Python integers / NumPy with DALI's rules.

Independent reference:
- Result types come from PROMOTE, DALI's promotion table transcribed pair by pair (DALI's
  arithmetic_meta.h REGISTER_TYPE_PROMOTION list and the docs' "Type Promotion Rules"), not
  computed by the C code's algorithm.
- Integer results are computed with Python's unbounded integers on the operands converted to the
  result type (two's complement wrap, as DALI's static_cast), then wrapped to the result type:
  wrap-around, C truncating division, C remainder, floor division and pow with a negative
  exponent (0, DALI's ipow) are checked exactly.
- Float results: NumPy in the result type (exact for + - * / fmod floor_divide min max and
  comparisons; pow and atan2 within 4 ulp); math functions: float64 NumPy on the
  float32-converted input, rounded, within 4 ulp (float32, float64: both NumPy's SIMD functions
  and glibc's may be 1-2 ulp off) or 1 ulp (float16: one rounding of a float32 result) of the
  largest value. Measured: at most 2 ulp.
Inputs: random arrays (ragged samples) over each type's full range, edge values, and real photos
for broadcasting (per-channel constants, which run the pre-tiled path) and multi-chunk samples.
"""
import numpy as np

import photos
from casekit import Case

B, U1, U2, U4, U8 = np.bool_, np.uint8, np.uint16, np.uint32, np.uint64
I1, I2, I4, I8 = np.int8, np.int16, np.int32, np.int64
F2, F4, F8 = np.float16, np.float32, np.float64
TYPES = [B, U1, U2, U4, U8, I1, I2, I4, I8, F2, F4, F8]
INTS = [U1, U2, U4, U8, I1, I2, I4, I8]
NAME = {B: "bool", U1: "uint8", U2: "uint16", U4: "uint32", U8: "uint64", I1: "int8",
        I2: "int16", I4: "int32", I8: "int64", F2: "float16", F4: "float32", F8: "float64"}


# ---- DALI's promotion table, pair by pair ----------------------------------------------------
PROMOTE = {(t, t): t for t in TYPES}


def _reg(a, b, r):
    PROMOTE[(a, b)] = r
    PROMOTE[(b, a)] = r


_reg(F4, F2, F4)
_reg(F8, F2, F8)
_reg(F8, F4, F8)
for _t in [B] + INTS:
    _reg(_t, F2, F2)
    _reg(_t, F4, F4)
    _reg(_t, F8, F8)
for _t in INTS:
    _reg(_t, B, _t)
for _a, _b, _r in [(U1, I1, I2), (I2, I1, I2), (U2, I1, I4), (I4, I1, I4), (U4, I1, I8),
                   (I8, I1, I8), (U8, I1, I8),
                   (I2, U1, I2), (U2, U1, U2), (I4, U1, I4), (U4, U1, U4), (I8, U1, I8),
                   (U8, U1, U8),
                   (U2, I2, I4), (I4, I2, I4), (U4, I2, I8), (I8, I2, I8), (U8, I2, I8),
                   (I4, U2, I4), (U4, U2, U4), (I8, U2, I8), (U8, U2, U8),
                   (U4, I4, I8), (I8, I4, I8), (U8, I4, I8),
                   (I8, U4, I8), (U8, U4, U8),
                   (U8, I8, I8)]:
    _reg(_a, _b, _r)
assert len(PROMOTE) == len(TYPES) ** 2


def is_float(t):
    return t in (F2, F4, F8)


def floaty(a, b):
    """Result type of fdiv / fpow / atan2: float32 unless an operand is a float."""
    p = PROMOTE[(a, b)]
    return p if is_float(p) else F4


# ---- exact integer semantics -----------------------------------------------------------------
def wrap(v, t):
    if t is B:
        return int(v != 0)
    bits = 8 * np.dtype(t).itemsize
    v &= (1 << bits) - 1
    if np.issubdtype(t, np.signedinteger) and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def tdiv(x, y):
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


INT_OPS = {
    "add": lambda x, y, t: x + y,
    "sub": lambda x, y, t: x - y,
    "mul": lambda x, y, t: x * y,
    "div": lambda x, y, t: tdiv(x, y),
    "mod": lambda x, y, t: x - y * tdiv(x, y),
    "floordiv": lambda x, y, t: x // y,
    "pow": lambda x, y, t: 0 if y < 0 else pow(x, y, 1 << 64),
    "min": lambda x, y, t: x if x < y else y,
    "max": lambda x, y, t: x if x > y else y,
    "bitand": lambda x, y, t: x & y,
    "bitor": lambda x, y, t: x | y,
    "bitxor": lambda x, y, t: x ^ y,
}
CMP = {"eq": np.equal, "neq": np.not_equal, "lt": np.less, "leq": np.less_equal,
       "gt": np.greater, "geq": np.greater_equal}
FLOAT_OPS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "fdiv": np.divide,
    "mod": np.fmod, "floordiv": np.floor_divide, "pow": np.power, "fpow": np.power,
    "atan2": np.arctan2,
    "min": lambda a, b: np.where(a < b, a, b), "max": lambda a, b: np.where(a > b, a, b),
}


def as_ints(a, t):
    """The values of a converted to type t (C cast), as Python ints."""
    return [wrap(int(v), t) for v in a.ravel()]


def ref_binary(op, a, b):
    """Expected out (and its dtype) of `a op b` per DALI; a and b broadcast with NumPy."""
    ta, tb = a.dtype.type, b.dtype.type
    a, b = np.broadcast_arrays(a, b)
    if op in CMP:
        p = PROMOTE[(ta, tb)]
        if is_float(p):
            return CMP[op](a.astype(p), b.astype(p))
        xs, ys = [int(v) for v in a.ravel()], [int(v) for v in b.ravel()]
        return CMP[op](np.array(xs, dtype=object), np.array(ys, dtype=object)).astype(
            B).reshape(a.shape)
    p = floaty(ta, tb) if op in ("fdiv", "fpow", "atan2") else PROMOTE[(ta, tb)]
    if is_float(p):
        with np.errstate(all="ignore"):
            return FLOAT_OPS[op](a.astype(p), b.astype(p)).astype(p)
    xs, ys = as_ints(a, p), as_ints(b, p)
    out = [wrap(INT_OPS[op](x, y, p), p) for x, y in zip(xs, ys)]
    return np.array(out, dtype=p).reshape(a.shape)


# ---- inputs ----------------------------------------------------------------------------------
SHAPES = [(5, 7), (3, 4), (1, 9)]


def rand(t, shape, rng, lo=None, hi=None, nonzero=False):
    if t is B:
        v = rng.integers(0, 2, shape).astype(B)
        return np.ones(shape, B) if nonzero else v
    if is_float(t):
        lo, hi = (-100.0, 100.0) if lo is None else (lo, hi)
        v = rng.uniform(lo, hi, shape).astype(t)
        return np.where(v == 0, t(1), v) if nonzero else v
    info = np.iinfo(t)
    lo = info.min if lo is None else max(lo, info.min)
    hi = info.max if hi is None else min(hi, info.max)
    v = rng.integers(lo, hi, shape, dtype=t, endpoint=True)
    return np.where(v == 0, t(1), v).astype(t) if nonzero else v


def samples(t, rng, **kw):
    return [rand(t, s, rng, **kw) for s in SHAPES]


def binary_case(out, name, op, a, b, note, args=None, tol=0.0):
    ref = [ref_binary(op, x, y) for x, y in zip(a, b)]
    (Case(out, name, "arithmetic", dict({"op": op}, **(args or {})), note=note)
     .input(a).input(b).expect(ref, max_abs=tol).save())


# ---- groups of cases -------------------------------------------------------------------------
def promotion_matrix(out, rng):
    """add over every ordered pair of the 12 types: the result dtype is PROMOTE's."""
    for ta in TYPES:
        for tb in TYPES:
            small = F2 in (ta, tb)  # keep integers exact in float16
            kw = {"lo": -1000, "hi": 1000} if small else {}
            a = samples(ta, rng, **(kw if not is_float(ta) else {}))
            b = samples(tb, rng, **(kw if not is_float(tb) else {}))
            name = "promote_%s_%s" % (NAME[ta], NAME[tb])
            if ta is B and tb is B:
                (Case(out, name, "arithmetic", {"op": "add"}, note="bool + bool is refused")
                 .input(a).input(b).expect_error("cannot be boolean").save())
                continue
            binary_case(out, name, "add", a, b, "add: result type = DALI's table (%s)"
                        % NAME[PROMOTE[(ta, tb)]])


PAIRS = [(U1, U1), (I1, U1), (U1, I4), (I2, U2), (U4, I4), (I8, U8), (U8, U8), (I8, I8),
         (B, I4), (I1, I1), (U2, U2), (I4, F4), (U1, F4), (F4, F8), (F2, F2), (F2, I1), (F8, F8)]


def binary_ops(out, rng):
    for op in ["sub", "mul", "div", "mod", "floordiv", "pow", "min", "max", "fdiv", "fpow",
               "atan2", "eq", "neq", "lt", "leq", "gt", "geq", "bitand", "bitor", "bitxor"]:
        for ta, tb in PAIRS:
            if op.startswith("bit") and (is_float(ta) or is_float(tb)):
                continue
            if op == "mod" and B in (ta, tb):
                continue
            small = F2 in (ta, tb)
            kw = {"lo": -1000, "hi": 1000} if small else {}
            a = [rand(ta, s, rng, **({} if is_float(ta) else kw)) for s in SHAPES]
            bkw = dict({} if is_float(tb) else kw)
            if op in ("pow", "fpow"):
                a = [rand(ta, s, rng, lo=-5 if not is_float(ta) else 0.5,
                          hi=5 if not is_float(ta) else 4.0) for s in SHAPES]
                bkw = {"lo": -3, "hi": 40} if not is_float(tb) else {"lo": -3.0, "hi": 3.0}
                if op == "fpow" or small:
                    bkw = {"lo": -3, "hi": 6} if not is_float(tb) else {"lo": -2.0, "hi": 2.0}
                if ta is F2 and not is_float(tb):
                    a = [rand(ta, s, rng, lo=0.5, hi=3.0) for s in SHAPES]
            nonzero = op in ("div", "mod", "floordiv") and not is_float(PROMOTE[(ta, tb)])
            b = [rand(tb, s, rng, nonzero=nonzero, **bkw) for s in SHAPES]
            tol = 0.0
            ref = [ref_binary(op, x, y) for x, y in zip(a, b)]
            if op in ("pow", "fpow", "atan2") and is_float(ref[0].dtype.type):
                tol = ulp_tol(ref, 1 if ref[0].dtype == F2 else 4)
            name = "%s_%s_%s" % (op, NAME[ta], NAME[tb])
            (Case(out, name, "arithmetic", {"op": op},
                  note="%s vs Python ints / NumPy in %s" % (op, NAME[ref[0].dtype.type]))
             .input(a).input(b).expect(ref, max_abs=tol).save())


# unary functions: (op, NumPy float64 reference, input range)
FUNCS = [("sqrt", np.sqrt, (0.0, 100.0)), ("rsqrt", lambda x: 1 / np.sqrt(x), (0.01, 100.0)),
         ("cbrt", np.cbrt, (-100.0, 100.0)), ("exp", np.exp, (-10.0, 10.0)),
         ("log", np.log, (0.01, 100.0)), ("log2", np.log2, (0.01, 100.0)),
         ("log10", np.log10, (0.01, 100.0)), ("sin", np.sin, (-10.0, 10.0)),
         ("cos", np.cos, (-10.0, 10.0)), ("tan", np.tan, (-1.2, 1.2)),
         ("asin", np.arcsin, (-0.99, 0.99)), ("acos", np.arccos, (-0.99, 0.99)),
         ("atan", np.arctan, (-10.0, 10.0)), ("sinh", np.sinh, (-5.0, 5.0)),
         ("cosh", np.cosh, (-5.0, 5.0)), ("tanh", np.tanh, (-5.0, 5.0)),
         ("asinh", np.arcsinh, (-10.0, 10.0)), ("acosh", np.arccosh, (1.0, 10.0)),
         ("atanh", np.arctanh, (-0.99, 0.99)), ("floor", np.floor, (-10.0, 10.0)),
         ("ceil", np.ceil, (-10.0, 10.0)), ("fabs", np.fabs, (-10.0, 10.0))]


def ulp_tol(ref, ulps):
    """ulps units in the last place of the largest finite |value| of the expected samples."""
    t = ref[0].dtype.type
    big = max([float(np.max(np.abs(r[np.isfinite(r)]), initial=0)) for r in ref])
    return float(ulps * np.spacing(t(big)))


def func_ref(fn, x, t_out):
    with np.errstate(all="ignore"):
        return fn(x.astype(t_out).astype(F8)).astype(t_out)


def unary_ops(out, rng):
    for op, fn, (lo, hi) in FUNCS:
        for t in (F4, F8, F2, I4, U1):
            if is_float(t):
                x = [rand(t, s, rng, lo=lo, hi=hi) for s in SHAPES]
            else:
                x = [rand(t, s, rng, lo=int(np.ceil(lo)), hi=int(np.floor(hi))) for s in SHAPES]
            t_out = t if is_float(t) else F4
            ref = [func_ref(fn, v, t_out) for v in x]
            ulps = 1 if t_out is F2 else 4
            tol = ulp_tol(ref, ulps)
            (Case(out, "%s_%s" % (op, NAME[t]), "arithmetic", {"op": op},
                  note="%s: integers -> float32; float64 NumPy reference within %d ulp"
                  % (op, ulps))
             .input(x).expect(ref, max_abs=tol).save())
    for t in INTS + [F4, F8, F2]:
        x = samples(t, rng)
        neg = [np.array([wrap(-int(v), t) for v in a.ravel()], t).reshape(a.shape)
               if not is_float(t) else -a for a in x]
        ab = [np.array([wrap(abs(int(v)), t) for v in a.ravel()], t).reshape(a.shape)
              if not is_float(t) else np.abs(a) for a in x]
        Case(out, "minus_%s" % NAME[t], "arithmetic", {"op": "minus"},
             note="-x keeps the type, integers wrap").input(x).expect(neg).save()
        Case(out, "abs_%s" % NAME[t], "arithmetic", {"op": "abs"},
             note="abs keeps the type; abs(MIN) = MIN").input(x).expect(ab).save()
        if not is_float(t):
            inv = [np.array([wrap(~int(v), t) for v in a.ravel()], t).reshape(a.shape)
                   for a in x]
            Case(out, "bitnot_%s" % NAME[t], "arithmetic", {"op": "bitnot"},
                 note="~x").input(x).expect(inv).save()
    x = samples(B, rng)
    Case(out, "bitnot_bool", "arithmetic", {"op": "bitnot"},
         note="~bool is logical not").input(x).expect([~v for v in x]).save()


def broadcasting(out, rng):
    imgs = photos.load(3, 96, rng)
    per_c = [np.array([1.25, 0.75, 0.5], F4), np.array([0.5, 1.0, 2.0], F4),
             np.array([2.0, 0.25, 1.0], F4)]
    binary_case(out, "bcast_image_times_channel", "mul", imgs, per_c,
                "uint8 HWC photo * float32 (3,): DALI's doc example (pre-tiled rows)")
    binary_case(out, "bcast_channel_minus_image", "sub", per_c, imgs,
                "(3,) - HWC: the small operand on the left")
    means = [im.mean(axis=2, keepdims=True).astype(F4) for im in imgs]
    binary_case(out, "bcast_image_minus_hw1", "sub", imgs, means,
                "HWC - HW1 (per-pixel mean): broadcast along the inner dimension")
    rows = [im[:1].astype(I2) for im in imgs]
    binary_case(out, "bcast_image_minus_first_row", "sub", imgs, rows,
                "HWC - 1WC: broadcast along the outer dimension")
    binary_case(out, "bcast_image_plus_image", "add", imgs, [im[::-1].copy() for im in imgs],
                "uint8 + uint8 photos, equal shapes, wraps; many chunks")
    scal = [np.array(v, I4) for v in (3, -7, 100)]
    binary_case(out, "bcast_scalar_sample", "mul", imgs, scal,
                "per-sample 0-D int32 scalar broadcasts (uint8 * int32 = int32)")
    one = [np.array([v], F8) for v in (0.5, 2.0, -1.0)]
    binary_case(out, "bcast_legacy_scalar", "add", imgs, one,
                "per-sample (1,) tensor broadcasts like a scalar")
    a = [rand(F4, s, rng) for s in [(1, 4), (2, 1), (3, 1)]]
    b = [rand(F4, s, rng) for s in [(3, 1), (1, 5), (3, 6)]]
    binary_case(out, "bcast_both_sides", "add", a, b,
                "(1,4)+(3,1): both operands broadcast, shapes differ per sample")
    a = [rand(I4, s, rng) for s in [(5, 1, 3), (2, 1, 1)]]
    b = [rand(I4, s, rng) for s in [(4, 1), (3, 4)]]
    binary_case(out, "bcast_rank_extension", "max", a, b,
                "(5,1,3) vs (4,1): missing leading extents count as 1")
    a = [rand(F4, s, rng) for s in [(0, 3), (2, 3)]]
    b = [rand(F4, s, rng) for s in [(1, 3), (2, 1)]]
    binary_case(out, "bcast_empty", "add", a, b, "a 0 extent gives an empty sample")
    a = [rand(F4, s, rng) for s in [(2, 3, 4)]]
    b = [rand(F4, s, rng) for s in [(2, 3, 3)]]
    (Case(out, "bcast_mismatch", "arithmetic", {"op": "add"}, note="4 vs 3 in the last dim")
     .input(a).input(b).expect_error("can't broadcast shapes").save())
    # layouts: HWC op C keeps HWC; HWC op CHW cannot match
    ref = [ref_binary("mul", x, y) for x, y in zip(imgs, per_c)]
    (Case(out, "layout_suffix", "arithmetic", {"op": "mul"}, note="HWC * C -> HWC")
     .input(imgs, "HWC").input(per_c, "C").expect(ref, layout="HWC").save())
    (Case(out, "layout_mismatch", "arithmetic", {"op": "add"}, note="HWC vs WHC")
     .input(imgs, "HWC").input([im.copy() for im in imgs], "WHC")
     .expect_error("do not match").save())


def constants(out, rng):
    imgs = photos.load(2, 64, rng)
    ref = [(im.astype(np.int64) + 1).astype(I4) for im in imgs]
    (Case(out, "const_uint8_plus_int", "arithmetic", {"op": "add", "scalar_int": 1},
          note="uint8 + Python int: DALI types the constant int32, so the result is int32")
     .input(imgs).expect(ref).save())
    ref = [im.astype(F4) * F4(0.5) for im in imgs]
    (Case(out, "const_uint8_times_float", "arithmetic", {"op": "mul", "scalar": 0.5},
          note="uint8 * Python float: float32").input(imgs).expect(ref).save())
    ref = [((im.astype(np.int64) + 200) % 256).astype(U1) for im in imgs]
    (Case(out, "const_dtype_uint8_wraps", "arithmetic",
          {"op": "add", "scalar_int": 200, "scalar_dtype": "uint8"},
          note="types.Constant(200, UINT8): uint8 result, wraps mod 256")
     .input(imgs).expect(ref).save())
    x = samples(F8, rng)
    ref = [F8(2.5) - v for v in x]
    (Case(out, "const_left_sub", "arithmetic", {"op": "sub", "scalar": 2.5, "scalar_left": True},
          note="2.5 - float64 x: the constant on the left, float64 kept")
     .input(x).expect(ref).save())
    x = samples(I4, rng, nonzero=True, lo=-1000, hi=1000)
    ref = [F4(1.0) / v.astype(F4) for v in x]
    (Case(out, "const_left_fdiv", "arithmetic", {"op": "fdiv", "scalar": 1.0, "scalar_left": True},
          note="1 / int32 x: true division gives float32").input(x).expect(ref).save())
    x = samples(I8, rng)
    big = 1 << 40
    ref = [np.array([wrap(int(v) * big, I8) for v in a.ravel()], I8).reshape(a.shape) for a in x]
    (Case(out, "const_int64_exact", "arithmetic",
          {"op": "mul", "scalar_int": big, "scalar_dtype": "int64"},
          note="int64 * 2^40 (exact constant beyond 2^32), wraps").input(x).expect(ref).save())
    x = samples(F4, rng)
    s = [np.float32(v) for v in (2.0, -0.5, 10.0)]
    ref = [v * w for v, w in zip(x, s)]
    (Case(out, "const_per_sample", "arithmetic", {"op": "mul"},
          note="scalar as a per-sample argument input").input(x).arg_input("scalar", s)
     .expect(ref).save())
    (Case(out, "const_does_not_fit", "arithmetic",
          {"op": "add", "scalar_int": 300, "scalar_dtype": "uint8"}, note="300 is not a uint8")
     .input(imgs).expect_error("does not fit").save())
    (Case(out, "const_fraction_in_int", "arithmetic",
          {"op": "add", "scalar": 0.5, "scalar_dtype": "int32"}, note="0.5 is not an int32")
     .input(imgs).expect_error("does not fit").save())
    (Case(out, "missing_operand", "arithmetic", {"op": "add"}, note="one input, no constant")
     .input(imgs).expect_error("takes two operands").save())
    (Case(out, "exclusive_constants", "arithmetic", {"op": "add", "scalar": 1.0, "scalar_int": 1},
          note="scalar and scalar_int").input(imgs).expect_error("exclusive").save())
    (Case(out, "scalar_for_unary", "arithmetic", {"op": "sqrt", "scalar": 1.0},
          note="sqrt has one operand").input(imgs).expect_error("one operand").save())


def edges(out, rng):
    """Division by zero, overflow wrap, MIN / -1, float special values, bool rules."""
    a = [np.array([7, -7, 5], I4), np.array([1, 2], I4)]
    b = [np.array([2, 0, 1], I4), np.array([1, 1], I4)]
    for op in ("div", "mod", "floordiv"):
        (Case(out, "zero_divisor_%s" % op, "arithmetic", {"op": op},
              note="integer division by zero fails the sample (no SIGFPE)")
         .input(a).input(b).expect_error("division by zero").save())
    (Case(out, "zero_divisor_const", "arithmetic", {"op": "div", "scalar_int": 0},
          note="x // 0 with a constant").input(a).expect_error("division by zero").save())
    for t in (I1, I2, I4, I8):
        mn = np.iinfo(t).min
        a = [np.array([mn, mn, mn, -7, 7, -7, 7], t)]
        b = [np.array([-1, 1, 3, 2, -2, -2, 2], t)]
        for op in ("div", "mod", "floordiv"):
            binary_case(out, "minint_%s_%s" % (op, NAME[t]), op, a, b,
                        "MIN op -1 wraps (no trap); C truncation vs floor on signs")
    wraps = [(U1, "add", [200, 255, 0], [100, 1, 0]), (I1, "sub", [-128, 127, 0], [1, -1, 1]),
             (I4, "mul", [2 ** 30, -2 ** 31, 65536], [4, -1, 65536]),
             (U2, "mul", [65535, 300, 2], [65535, 300, 3]),
             (U8, "sub", [0, 1, 2 ** 63], [1, 2, 2 ** 63 + 1]),
             (I8, "add", [2 ** 63 - 1, -2 ** 63, 5], [1, -1, 5]),
             (U1, "pow", [2, 3, 255], [8, 5, 2]), (I4, "pow", [3, -2, 7], [25, -1, 0])]
    for t, op, x, y in wraps:
        binary_case(out, "wrap_%s_%s" % (op, NAME[t]), op, [np.array(x, t)], [np.array(y, t)],
                    "integer overflow wraps modulo 2^bits")
    # int64 against uint64 compares exactly (DALI's safe compare)
    a = [np.array([-1, -2 ** 63, 5, 2 ** 63 - 1], I8)]
    b = [np.array([2 ** 64 - 1, 0, 5, 2 ** 63], U8)]
    for op in CMP:
        binary_case(out, "cmp_mixed_%s" % op, op, a, b, "int64 vs uint64 exact")
        binary_case(out, "cmp_mixed_rev_%s" % op, op, b, a, "uint64 vs int64 exact")
    sp = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1e-45, 3e38], F4)
    sq = np.array([1.0, np.inf, np.inf, 0.0, -0.0, np.nan, -np.inf, 2.0, 3e38], F4)
    for op in ("add", "sub", "mul", "fdiv", "div", "mod", "floordiv", "min", "max", "eq", "lt",
               "geq", "neq"):
        binary_case(out, "special_%s" % op, op, [sp], [sq], "NaN, inf, -0, denormals: IEEE")
    for op, fn in (("sqrt", np.sqrt), ("log", np.log), ("exp", np.exp), ("floor", np.floor)):
        with np.errstate(all="ignore"):
            ref = fn(sp)
        Case(out, "special_%s" % op, "arithmetic", {"op": op},
             note="IEEE special values (finite ones within 4 ulp)").input([sp]) \
            .expect([ref], max_abs=ulp_tol([ref], 4)).save()
    ref = np.where(np.isnan(sp), sp, np.clip(sp, F4(-1.5), F4(2.0)))
    (Case(out, "special_clamp", "arithmetic", {"op": "clamp", "lo": -1.5, "hi": 2.0},
          note="clamp keeps NaN").input([sp]).expect([ref]).save())
    # bool rules
    x, y = samples(B, rng), samples(B, rng)
    Case(out, "bool_mul", "arithmetic", {"op": "mul"}, note="bool * bool = logical and") \
        .input(x).input(y).expect([p & q for p, q in zip(x, y)]).save()
    for op in ("bitand", "bitor", "bitxor", "eq", "lt"):
        binary_case(out, "bool_%s" % op, op, x, y, "bool op bool")
    for op in ("sub", "fdiv", "div", "pow", "min", "atan2"):
        (Case(out, "bool_refused_%s" % op, "arithmetic", {"op": op}, note="DALI refuses")
         .input(x).input(y).expect_error("cannot be boolean").save())
    for op in ("sqrt", "minus", "abs"):
        (Case(out, "bool_refused_%s" % op, "arithmetic", {"op": op}, note="DALI refuses")
         .input(x).expect_error("cannot be boolean").save())
    binary_case(out, "bool_plus_int8", "add", x, samples(I1, rng), "bool + int8 = int8")
    (Case(out, "bool_mod", "arithmetic", {"op": "mod"}, note="mod takes no bool operand")
     .input(x).input(samples(I4, rng, nonzero=True)).expect_error("cannot be boolean").save())
    (Case(out, "bitand_float", "arithmetic", {"op": "bitand"}, note="bitwise needs integers")
     .input(samples(F4, rng)).input(samples(I4, rng)).expect_error("integral type").save())
    (Case(out, "bitnot_float", "arithmetic", {"op": "bitnot"}, note="bitwise needs integers")
     .input(samples(F8, rng)).expect_error("integral type").save())


def clamp_and_math_ops(out, rng):
    imgs = photos.load(2, 80, rng)
    ref = [np.clip(im.astype(F4), 50, 200) for im in imgs]
    Case(out, "clamp_uint8_default", "arithmetic", {"op": "clamp", "lo": 50.0, "hi": 200.0},
         note="bounds are float32 by default: uint8 -> float32").input(imgs).expect(ref).save()
    ref = [np.clip(im, 50, 200) for im in imgs]
    Case(out, "clamp_uint8_keep", "math.clamp",
         {"lo": 50.0, "hi": 200.0, "scalar_dtype": "uint8"},
         note="uint8 bounds keep uint8").input(imgs).expect(ref).save()
    ref = [np.full(im.shape, 10, I4) for im in imgs]
    Case(out, "clamp_hi_below_lo", "math.clamp",
         {"lo": 100.0, "hi": 10.0, "scalar_dtype": "int32"},
         note="hi < lo gives hi (NumPy's clip)").input(imgs).expect(ref).save()
    lo = [np.float32(v) for v in (0.0, 100.0)]
    ref = [np.clip(im.astype(F4), l, 150) for im, l in zip(imgs, lo)]
    (Case(out, "clamp_per_sample", "math.clamp", {"hi": 150.0}, note="lo per sample")
     .input(imgs).arg_input("lo", lo).expect(ref).save())
    (Case(out, "clamp_missing_hi", "arithmetic", {"op": "clamp", "lo": 1.0},
          note="clamp needs both bounds").input(imgs).expect_error("lo and hi").save())
    x = samples(I2, rng)
    Case(out, "math_abs_int16", "math.abs", {}, note="math.abs = arithmetic abs").input(x) \
        .expect([np.array([wrap(abs(int(v)), I2) for v in a.ravel()], I2).reshape(a.shape)
                 for a in x]).save()
    for name, fn, lo_, hi_ in (("sqrt", np.sqrt, 0.0, 100.0), ("exp", np.exp, -5.0, 5.0),
                               ("log", np.log, 0.1, 100.0)):
        x = samples(F4, rng, lo=lo_, hi=hi_)
        ref = [func_ref(fn, v, F4) for v in x]
        Case(out, "math_%s" % name, "math." + name, {}, note="float32, 4 ulp").input(x) \
            .expect(ref, max_abs=ulp_tol(ref, 4)).save()
    x = [rand(U1, s, rng) for s in SHAPES]
    ref = [np.sqrt(v.astype(F4)) for v in x]
    Case(out, "math_sqrt_uint8", "math.sqrt", {}, note="uint8 -> float32").input(x) \
        .expect(ref, max_abs=float(np.spacing(F4(16)))).save()
    a, b = samples(I4, rng), samples(U2, rng)
    for op in ("min", "max"):
        (Case(out, "math_%s" % op, "math." + op, {}, note="int32 op uint16 -> int32")
         .input(a).input(b).expect([ref_binary(op, p, q) for p, q in zip(a, b)]).save())
    ref = [np.array([wrap(max(int(v), 3), I4) for v in p.ravel()], I4).reshape(p.shape)
           for p in a]
    Case(out, "math_max_const", "math.max", {"scalar_int": 3}, note="max(x, 3)").input(a) \
        .expect(ref).save()
    x = [rand(I4, s, rng, lo=-4, hi=4) for s in SHAPES]
    ref = [np.array([wrap(pow(2, int(v)) if v >= 0 else 0, I4) for v in p.ravel()],
                    I4).reshape(p.shape) for p in x]
    (Case(out, "math_pow_left", "math.pow", {"scalar_int": 2, "scalar_left": True},
          note="2 ** x, negative exponent gives 0").input(x).expect(ref).save())


def make(out, rng):
    promotion_matrix(out, rng)
    binary_ops(out, rng)
    unary_ops(out, rng)
    broadcasting(out, rng)
    constants(out, rng)
    edges(out, rng)
    clamp_and_math_ops(out, rng)
