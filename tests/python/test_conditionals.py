"""Conditionals (enable_conditionals=True, issue 17): the source transformation, the scopes
and the graph they build, and, where the C library has the _conditional operators, the
results of whole pipelines against the same function run one sample at a time on NumPy values
(the function is its own reference: Python's if/and/or/not on one sample's values)."""
import numpy as np
import pytest

import sluice
from sluice import Pipeline, fn, pipeline_def, types
from sluice import _conditionals, _convert
from sluice.pipeline import do_not_convert

HAVE_OPS = hasattr(fn, "_conditional")
needs_ops = pytest.mark.skipif(not HAVE_OPS, reason="the C library has no _conditional "
                               "operators in this build")


# ---- the transformation keeps Python semantics for Python values ------------------------------

def _mixed(n, m=2, *, k=3):
    """doc"""
    a = 0
    if n > 0:
        a = -n
        b = 1  # noqa: F841  (assigned in one branch only, never read)
    elif n == 0:
        return "zero"
    else:
        a = 2 * n
    c = a and m or 7
    d = not a
    e = k if n > 1 else 4
    total = 0
    for i in range(5):
        if i == 1:
            continue
        if i == 4 and n > 3:
            break
        total += i
    while total > 100:
        total -= 1
    if n == 7:
        return None
    return a, c, d, e, total, (n > 2 and n < 6), (n < 0 or "neg")


def _helper_sign(x):
    if x > 0:
        return 1
    return -1


def _calls_helper(x):
    return _helper_sign(x) * 10


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 3, 4, 5, 7, 9])
def test_python_values_keep_python_semantics(n):
    conv = _convert.convert(_mixed)
    assert conv(n) == _mixed(n)
    assert conv(n, 5, k=1) == _mixed(n, 5, k=1)
    assert conv.__doc__ == "doc" and conv.__name__ == "_mixed"
    assert _convert.convert(_calls_helper)(n) == _calls_helper(n)


def test_closures_nested_functions_and_artifacts():
    def outer():
        k = [5]

        def inner(x):
            def local(y):
                return y
            if x:
                return k[0], _convert.is_autograph_artifact(local)
            return -k[0], None
        return inner

    conv = _convert.convert(outer())
    assert _convert.is_autograph_artifact(conv)
    assert conv(1) == (5, True) and conv(0) == (-5, None)
    assert not _convert.is_autograph_artifact(outer())


def test_do_not_convert_and_converted_calls():
    @do_not_convert
    def plain(x):
        return x

    def user(x):
        return x

    def caller():
        return _convert.cc(plain), _convert.cc(user)

    p, u = caller()
    assert p is plain and not _convert.is_autograph_artifact(p)
    assert _convert.is_autograph_artifact(u)
    assert _convert.cc(np.add) is np.add and _convert.cc(len) is len


def test_datanode_truth_value_without_conditionals_says_how():
    with pytest.raises(TypeError, match="enable_conditionals=True"):
        with Pipeline(batch_size=2, num_threads=1):
            x = fn.external_source(name="x")
            bool(x)


# ---- scopes and the graph they build (operators recorded by a fake) ---------------------------

class FakeOps(_conditionals.Ops):
    """Records the splits and merges the stack asks for; stands for them with arithmetic nodes
    (never run: these tests look at the graph being built)."""

    def __init__(self):
        super().__init__()
        self.splits, self.merges = [], []

    def split(self, dn, predicate, line):
        t, f = dn + 0, dn + 0
        self.splits.append((dn, predicate, t, f))
        return t, f

    def merge(self, true, false, predicate, line):
        out = true + false
        self.merges.append((true, false, predicate, out))
        return out

    def validate_logical(self, value, name, side):
        return value

    def not_(self, value):
        return value == 0


def _trace(func, n_inputs, **kw):
    """Traces the converted func on n_inputs external sources in a conditional pipeline whose
    operators are recorded by FakeOps. Returns (ops, inputs, outputs)."""
    pipe = Pipeline(batch_size=4, num_threads=1, enable_conditionals=True, **kw)
    ops = FakeOps()
    pipe._cond_stack.ops = ops
    conv = _convert.convert(func)
    with pipe:
        ins = [fn.external_source(name=f"in{i}") for i in range(n_inputs)]
        outs = conv(*ins)
    assert pipe._cond_stack.depth == 1
    return ops, ins, outs


def _producers(dn):
    return dn._node.inputs


def test_if_else_splits_each_outer_node_once_and_merges():
    def f(p, x):
        if p:
            y = x + 1
            z = x * 2
        else:
            y = x - 1
            z = x
        return y, z

    ops, (p, x), (y, z) = _trace(f, 2)
    # x is split once by p (the true branch's use caches it; the else branch uses its half)
    assert [(s[0]._node, s[1]._node) for s in ops.splits] == [(x._node, p._node)]
    assert len(ops.merges) == 2
    (t_y, f_y, pr, out_y), (t_z, f_z, _, out_z) = ops.merges
    assert pr._node is p._node and out_y is y and out_z is z
    half_t, half_f = ops.splits[0][2], ops.splits[0][3]
    assert _producers(t_y)[0]._node is half_t._node   # x + 1 reads the true half
    assert _producers(f_y)[0]._node is half_f._node   # x - 1 reads the false half
    assert f_z._node is half_f._node                  # z = x: the false half itself


def test_nested_scopes_split_the_inner_predicate():
    def f(p, q, x):
        if p:
            if q:
                y = x + 10
            else:
                y = x + 200
        else:
            y = x + 3000
        return y

    ops, (p, q, x), y = _trace(f, 3)
    split_of = [(s[0]._node, s[1]._node) for s in ops.splits]
    assert (q._node, p._node) in split_of          # the inner predicate, seen in p's branch
    assert (x._node, p._node) in split_of
    inner_pred = next(s for s in ops.splits if s[0]._node is q._node)[2]
    # x's true half is split again by q's true half
    assert any(s[1]._node is inner_pred._node for s in ops.splits)
    assert ops.merges[-1][3] is y and ops.merges[-1][2]._node is p._node


def test_node_without_inputs_in_a_branch_belongs_to_the_whole_batch():
    def f(p, x):
        if p:
            r = fn.random.uniform(range=(0, 1))
            y = x + r
        else:
            y = x
        return y

    ops, (p, x), y = _trace(f, 2)
    r_split = [s for s in ops.splits if s[0].op == "random.uniform"]
    assert len(r_split) == 1 and r_split[0][1]._node is p._node


def test_argument_inputs_in_a_branch_are_split():
    def f(p, x, lo):
        if p:
            y = fn.random.uniform(range=(0, 1)) + lo
            z = fn.cast(x, dtype=types.FLOAT)
        else:
            y = lo
            z = fn.cast(x, dtype=types.FLOAT)
        return y, z

    ops, (p, x, lo), _ = _trace(f, 3)
    assert {s[0]._node for s in ops.splits} >= {x._node, lo._node}


def test_variable_only_in_one_branch():
    def unused(p, x):
        if p:
            b = x + 1  # noqa: F841
        return x

    ops, (p, x), out = _trace(unused, 2)
    assert ops.merges == [] and out is x

    def used(p, x):
        if p:
            out = x + 1
        return out

    with pytest.raises(RuntimeError, match=r"Variable 'out' must also be initialized in the "
                       r"`else` branch\..*line \d+"):
        _trace(used, 2)

    def used_before_else(p, x):
        if p:
            pass
        else:
            out = x
        return out

    with pytest.raises(RuntimeError, match="Variable 'out' must also be initialized in the `if`"):
        _trace(used_before_else, 2)

    def killed_later(p, x):
        if p:
            out = x + 1  # noqa: F841
        out = x
        return out

    ops, (p, x), out = _trace(killed_later, 2)
    assert ops.merges == [] and out is x


def test_returns_in_branches():
    def both(p, x):
        if p:
            return x + 1
        return x - 1

    ops, (p, x), out = _trace(both, 2)
    assert len(ops.merges) == 1 and ops.merges[0][3] is out

    def one(p, x):
        if p:
            return x

    with pytest.raises(RuntimeError, match="The `else` branch must also have a return statement"):
        _trace(one, 2)

    def in_loop(p, x):
        for _ in range(2):
            if p:
                return x
        return x

    with pytest.raises(RuntimeError, match=r"`return`, `break` or `continue` .* line \d+"):
        _trace(in_loop, 2)


def test_branch_value_from_the_other_branch_is_an_error():
    def f(p, x):
        keep = []
        if p:
            keep.append(x + 1)
            y = x
        else:
            y = keep[0] if keep else x
            y = y * 2
        return y

    with pytest.raises(RuntimeError, match="made inside a branch"):
        _trace(f, 2)


def test_constants_and_structures_are_merged():
    def f(p, x):
        if p:
            out = {"a": x, "b": (x + 1, 2)}
        else:
            out = {"a": np.int32(5), "b": (x, 3)}
        return out["a"], out["b"][0], out["b"][1]

    ops, (p, x), outs = _trace(f, 2)
    assert len(ops.merges) == 3
    ops_made = [m[1].op for m in ops.merges]
    assert ops_made[0] == "arithmetic"  # the constant node's false half (a fake split)

    def divergent(p, x):
        if p:
            out = {"out": x, "mismatched": x}
        else:
            out = {"out": x}
        return out["out"]

    with pytest.raises(ValueError, match="Divergent data found in different branches"):
        _trace(divergent, 2)


def test_python_predicate_inside_conditional_pipeline_is_plain_python():
    def f(p, x, flag=True):
        if flag:
            y = x + 1
        else:
            y = x - 1
        return y

    ops, (p, x), y = _trace(f, 2)
    assert ops.splits == [] and ops.merges == [] and y.op == "arithmetic"


def test_gpu_predicate_is_an_error_naming_the_line():
    if not sluice._sluice.HAVE_CUDA:
        pytest.skip("GPU data nodes need a CUDA build")

    def f(p, x):
        if p.gpu():
            y = x + 1
        else:
            y = x
        return y

    with pytest.raises(RuntimeError, match=r"placed on CPU.*line \d+"):
        _trace(f, 2, device_id=0)


# ---- end to end: the _conditional operators of the C library -----------------------------------

def _run_against_samples(func, gens, iters=4, bs=8, num_threads=4, depth=1):
    """Runs func as a conditional pipeline over external sources fed by gens (one per input:
    gen(iteration, index) -> a NumPy value) and checks every output sample against func run
    on that sample's values alone."""
    pipe = pipeline_def(enable_conditionals=True)(func)(
        *[fn.external_source(name=f"input_{i}") for i in range(len(gens))],
        batch_size=bs, num_threads=num_threads, device_id=None, prefetch_queue_depth=depth)
    pipe.build()
    batches = [[[g(it, j) for j in range(bs)] for g in gens] for it in range(iters + depth)]
    for it in range(depth):
        for i, b in enumerate(batches[it]):
            pipe.feed_input(f"input_{i}", b)
    for it in range(iters):
        if it + depth < len(batches):
            for i, b in enumerate(batches[it + depth]):
                pipe.feed_input(f"input_{i}", b)
        outs = pipe.run()
        for j in range(bs):
            want = func(*[b[j] for b in batches[it]])
            want = want if isinstance(want, tuple) else (want,)
            assert len(outs) == len(want)
            for k, (o, w) in enumerate(zip(outs, want)):
                got = np.array(o.at(j))
                np.testing.assert_array_equal(got, np.asarray(w), err_msg=f"iteration {it}, "
                                              f"sample {j}, output {k}")


_rng = np.random.default_rng(1234)
_RANDOM_BOOLS = _rng.integers(0, 2, size=(64, 64)).astype(bool)
_RANDOM_INTS = _rng.integers(-3, 4, size=(64, 64)).astype(np.int32)

PREDICATES = {
    "random": lambda it, j: np.array(_RANDOM_BOOLS[it, j]),
    "all_true": lambda it, j: np.array(True),
    "all_false": lambda it, j: np.array(False),
    "alternate": lambda it, j: np.array((j + it) % 2 == 0),
}
NUMBERS = {
    "random": lambda it, j: np.int32(_RANDOM_INTS[it, j]),
    "index": lambda it, j: np.int32(j - 3),
    "zero": lambda it, j: np.int32(0),
}
VALUE = lambda it, j: np.array([it * 100 + j, -j], dtype=np.int32)  # noqa: E731


def _basic(n):
    a = np.int32(0)
    b = np.int32(0)
    if n > 0:
        a = -n
    else:
        b = 2 * n
    return a, b


def _chain(n):
    if n == 0:
        result = n + 10
    elif n > 0:
        result = n + 100
    else:
        result = n - 50
    return result


def _nested(x, p, q):
    to_assign = x * -5
    if p:
        if q:
            out = x + 10
        else:
            out = to_assign
    else:
        out = x + 3000
    return out


def _consecutive(x, p, q):
    if p:
        out = x + 1
    else:
        out = x + 2
    if q:
        out2 = out + 3
    else:
        out2 = out + 4
    return out, out2


def _logical(p, q, x):
    if not (p or q) and not (p and q):
        y = x * 2
    else:
        y = x
    return y, (p and q), (p or q), (not p)


def _empty_branch(p, x):
    y = x
    if p:
        pass
    else:
        y = x + 7
    return y


@needs_ops
@pytest.mark.parametrize("num", sorted(NUMBERS))
def test_run_basic_and_chain(num):
    _run_against_samples(_basic, [NUMBERS[num]])
    _run_against_samples(_chain, [NUMBERS[num]])


@needs_ops
@pytest.mark.parametrize("p", sorted(PREDICATES))
@pytest.mark.parametrize("q", ["random", "alternate"])
def test_run_nested_consecutive_logical(p, q):
    gens = [VALUE, PREDICATES[p], PREDICATES[q]]
    _run_against_samples(_nested, gens)
    _run_against_samples(_consecutive, gens)
    _run_against_samples(_logical, [PREDICATES[p], PREDICATES[q], VALUE])
    _run_against_samples(_empty_branch, [PREDICATES[p], VALUE])


@needs_ops
@pytest.mark.parametrize("threads,depth", [(1, 1), (4, 1), (1, 3), (4, 3)])
def test_run_threads_and_prefetch(threads, depth):
    gens = [VALUE, PREDICATES["random"], PREDICATES["alternate"]]
    _run_against_samples(_nested, gens, num_threads=threads, depth=depth)


def test_lambdas_are_converted_with_python_semantics():
    exprs = [lambda x: not x, lambda x: x and 5, lambda x: x or 6]
    for e in exprs:
        conv = _convert.convert(e)
        assert _convert.is_autograph_artifact(conv)
        for v in (0, 1, 3):
            assert conv(v) == e(v)


def test_parallel_source_must_stay_unconverted():
    from sluice import _autograph

    def make():
        def source_local(si):
            return np.full((2,), 1)
        return source_local

    src = _convert.convert(make)()
    assert _autograph.is_autograph_artifact(src)
    with pytest.raises(ValueError, match="it must remain unconverted"):
        fn.external_source(source=src, parallel=True, batch=False)


def test_issue_example_and_define_graph_trace():
    """The issue's pipeline, unchanged, builds its graph: the elif chain nests, and/or/not
    on DataNodes become scopes of their own."""
    root = "/nonexistent"  # tracing reads no file

    @pipeline_def(batch_size=64, num_threads=4, device_id=None, enable_conditionals=True)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=root)
        images = fn.decoders.image(jpegs)
        if fn.random.coin_flip(probability=0.25):          # per sample
            images = fn.rotate(images, angle=fn.random.uniform(range=(-30, 30)))
        elif labels > 5:
            images = fn.flip(images)
        else:
            images = fn.hsv(images, saturation=0.5)
        out = fn.resize(images, size=(224, 224))
        if not (labels < 3 or labels == 7):                # and / or / not on DataNodes
            out = out * 0.5
        return out, labels

    ops = FakeOps()
    orig = _conditionals.Stack.__init__

    def init(self, ops_=None):
        orig(self, ops)
    try:
        _conditionals.Stack.__init__ = init
        p = pipe()
    finally:
        _conditionals.Stack.__init__ = orig
    assert p.enable_conditionals
    # three if-scopes (if, elif, the last if) and one for `or`: 4 merges of images/out, 1 of or
    preds = {m[2]._node.op for m in ops.merges}
    assert "random.coin_flip" in preds and len(ops.merges) == 4
    split_ops = {s[0].op for s in ops.splits}
    assert {"decoders.image", "random.uniform"} <= split_ops

    class Sub(Pipeline):
        def __init__(self):
            super().__init__(batch_size=2, num_threads=1, enable_conditionals=True)
            self._cond_stack.ops = ops

        def define_graph(self):
            p = fn.external_source(name="p")
            x = fn.external_source(name="x")
            if p:
                x = x + 1
            return x

    del ops.merges[:]
    s = Sub()
    s._finalize()
    assert len(ops.merges) == 1


class _Private:
    def __init__(self):
        self.__hidden = 3

    def get(self, x):
        if x:
            return self.__hidden
        return 0


def test_methods_with_private_names_stay_unconverted():
    obj = _Private()
    with pytest.warns(UserWarning, match="name-mangled"):
        conv = _convert.convert(obj.get)
    assert conv(1) == 3 and conv(0) == 0
    assert _convert.cc(obj.get)(1) == 3
