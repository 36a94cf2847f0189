"""tests/python/test_arithmetic.py: DataNode operators (arithmetic, comparisons, bitwise,
unary) and indexing, against NumPy on the same data; DALI's typing of Python constants."""
import numpy as np
import pytest

import sluice
from sluice import fn, pipeline_def, types

RNG = np.random.default_rng(7)
A = [RNG.integers(1, 200, size=(3, 5)).astype(np.int32) for _ in range(4)]
B = [RNG.integers(1, 50, size=(3, 5)).astype(np.int32) for _ in range(4)]
U = [RNG.integers(0, 255, size=(6, 4, 3)).astype(np.uint8) for _ in range(4)]
F = [RNG.uniform(-4, 4, size=(2, 7)).astype(np.float32) for _ in range(4)]


def outputs(build):
    """Runs a pipeline whose sources are A, B, U, F (one batch); build(a, b, u, f) returns a
    dict name -> DataNode. Returns name -> list of per-sample arrays."""
    @pipeline_def(batch_size=4, num_threads=2, prefetch_queue_depth=1)
    def p():
        srcs = [fn.external_source(source=lambda d=d: d) for d in (A, B, U, F)]
        nodes = build(*srcs)
        p.names = list(nodes)
        return tuple(nodes.values())

    pipe = p()
    outs = pipe.run()
    return {n: [t.at(i).copy() for i in range(len(t))] for n, t in zip(p.names, outs)}, outs


def check(got, ref_fn, *sources, dtype=None):
    for i, g in enumerate(got):
        ref = ref_fn(*(s[i] for s in sources))
        if dtype is not None:
            assert g.dtype == np.dtype(dtype), (g.dtype, dtype)
        if np.issubdtype(g.dtype, np.floating):
            np.testing.assert_allclose(g, ref, rtol=1e-6, atol=1e-6)
        else:
            np.testing.assert_array_equal(g, ref)


def test_binary_operators_match_numpy():
    got, _ = outputs(lambda a, b, u, f: {
        "add": a + b, "sub": a - b, "mul": a * b, "truediv": a / b, "floordiv": a // b,
        "mod": a % b, "pow": b ** 2, "and": a & b, "or": a | b, "xor": a ^ b})
    check(got["add"], np.add, A, B, dtype=np.int32)
    check(got["sub"], np.subtract, A, B, dtype=np.int32)
    check(got["mul"], np.multiply, A, B, dtype=np.int32)
    check(got["truediv"], lambda x, y: (x / y).astype(np.float32), A, B, dtype=np.float32)
    check(got["floordiv"], np.floor_divide, A, B, dtype=np.int32)  # positive: C == floor
    check(got["mod"], np.mod, A, B, dtype=np.int32)
    check(got["pow"], lambda y: y ** 2, B, dtype=np.int32)
    check(got["and"], np.bitwise_and, A, B)
    check(got["or"], np.bitwise_or, A, B)
    check(got["xor"], np.bitwise_xor, A, B)


def test_comparisons_give_bool():
    got, _ = outputs(lambda a, b, u, f: {
        "eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b,
        "lt_const": f < 0.5})
    for name, ref in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                      ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
        check(got[name], ref, A, B, dtype=np.bool_)
    check(got["lt_const"], lambda x: x < np.float32(0.5), F, dtype=np.bool_)


def test_unary_and_constants_with_dali_typing():
    got, _ = outputs(lambda a, b, u, f: {
        "neg": -f, "abs": abs(f), "pos": +f, "u_plus_int": u + 1, "u_times_float": u * 0.5,
        "rsub": 2 - a, "rdiv": 1.0 / b, "rpow": 2 ** b, "typed": u + types.Constant(1, types.UINT8),
        "np_scalar": u * np.uint8(2), "fmod": f % 1.5, "inv": ~u})
    check(got["neg"], np.negative, F, dtype=np.float32)
    check(got["abs"], np.abs, F, dtype=np.float32)
    check(got["pos"], lambda x: x, F)
    # a Python int is an int32 constant, a float a float32 one (DALI's typing)
    check(got["u_plus_int"], lambda x: x.astype(np.int32) + 1, U, dtype=np.int32)
    check(got["u_times_float"], lambda x: x.astype(np.float32) * np.float32(0.5), U,
          dtype=np.float32)
    check(got["rsub"], lambda x: 2 - x, A, dtype=np.int32)
    check(got["rdiv"], lambda x: (np.float32(1.0) / x.astype(np.float32)), B, dtype=np.float32)
    check(got["rpow"], lambda x: np.power(2, x.astype(np.int64)).astype(np.int32), B)
    check(got["typed"], lambda x: (x + np.uint8(1)).astype(np.uint8), U, dtype=np.uint8)
    check(got["np_scalar"], lambda x: (x * np.uint8(2)).astype(np.uint8), U, dtype=np.uint8)
    check(got["fmod"], lambda x: np.fmod(x, np.float32(1.5)), F, dtype=np.float32)
    check(got["inv"], np.invert, U, dtype=np.uint8)


def test_chained_expression():
    got, _ = outputs(lambda a, b, u, f: {"e": (a * 3 - b) / (b + 1) >= 2})
    check(got["e"], lambda x, y: ((x * 3 - y).astype(np.float32) / (y + 1)) >= 2, A, B)


def test_indexing_matches_numpy():
    got, _ = outputs(lambda a, b, u, f: {
        "rows": u[1:4], "hwc0": u[2:5, :, 0], "last": u[..., 1:3], "clip": u[3:100, 1:2],
        "all": u[...], "empty": u[10:], "flip": u[..., ::-1], "first": u[0], "neg": u[-1],
        "strided": f[::2, ::-3], "col": a[:, 1], "tail": f[-1, -4:]})
    check(got["rows"], lambda x: x[1:4], U)
    check(got["hwc0"], lambda x: x[2:5, :, 0], U)
    check(got["last"], lambda x: x[..., 1:3], U)
    check(got["clip"], lambda x: x[3:100, 1:2], U)
    check(got["all"], lambda x: x, U)
    check(got["empty"], lambda x: x[10:], U)
    check(got["flip"], lambda x: x[..., ::-1], U)
    check(got["first"], lambda x: x[0], U)
    check(got["neg"], lambda x: x[-1], U)
    check(got["strided"], lambda x: x[::2, ::-3], F)
    check(got["col"], lambda x: x[:, 1], A)
    check(got["tail"], lambda x: x[-1, -4:], F)


def test_invalid_indexing_and_truth_value():
    with sluice.Pipeline(batch_size=1):
        x = fn.random.coin_flip(shape=[3, 3])
        with pytest.raises(IndexError):
            x[..., 0, ...]
        with pytest.raises(NotImplementedError, match="advanced indexing"):
            x[[0, 2]]
        with pytest.raises(TypeError, match="no truth value"):
            bool(x)


def test_arithmetic_errors_come_from_the_c_operator():
    with sluice.Pipeline(batch_size=1):
        x = fn.random.coin_flip()
        with pytest.raises(TypeError, match="unsupported operand"):
            x + "a"
