"""Conditionals end to end (issue 17): pipelines with enable_conditionals=True run by the C
executor (_conditional.split / merge / not_ / validate_logical), every output sample checked
against a NumPy model that processes that sample alone, or against the same operators run
unconditionally (random operators: same seed, same values); the issue's example and DALI's
tutorial examples on real photos; the errors DALI's tests assert; conditionals next to a
parallel external_source. The tracing itself (scopes, splits, merges) is tested with fake
operators in test_conditionals.py."""
import numpy as np
import pytest

from sluice import fn, pipeline_def, types
from sluice.pipeline import do_not_convert

import parallel_cases as pc

pytestmark = pytest.mark.skipif(not hasattr(fn, "_conditional"),
                                reason="the C library has no _conditional operators")


def _samples(tl):
    return [np.array(tl.at(j)) for j in range(len(tl))]


def _run(pipe, iters):
    pipe.build()
    return [[_samples(o) for o in pipe.run()] for _ in range(iters)]


def _value(info):
    """A per-sample int32 vector that tells its iteration and index apart."""
    return np.array([info.iteration * 100 + info.idx_in_batch, -info.idx_in_batch, 7],
                    dtype=np.int32)


def _image(info):
    """A small random RGB image, its size depending on the sample."""
    rng = np.random.default_rng(info.iteration * 1000 + info.idx_in_batch)
    h, w = 5 + info.idx_in_batch % 4, 7 + info.idx_in_batch % 3
    return rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)


def _flag(info):
    return np.array((info.iteration + info.idx_in_batch) % 3 == 0)


# ---- random predicates (coin_flip), nested branches, threads and prefetch ---------------------

def _nested_model(p, q, x):
    if p:
        if q:
            return x * 2
        return x - 1
    return x + 100


@pytest.mark.parametrize("threads,depth", [(1, 1), (4, 1), (1, 3), (4, 3)])
def test_coin_flip_predicates_nested_against_model(threads, depth):
    @pipeline_def(batch_size=16, num_threads=threads, device_id=None, seed=7,
                  prefetch_queue_depth=depth, enable_conditionals=True)
    def pipe():
        x = fn.external_source(source=_value, batch=False)
        p = fn.random.coin_flip(probability=0.5)
        q = fn.random.coin_flip(probability=0.3, dtype=types.BOOL)
        if p:
            if q:
                y = x * 2
            else:
                y = x - 1
        else:
            y = x + 100
        return p, q, x, y

    seen = set()
    for it, (p, q, x, y) in enumerate(_run(pipe(), 5)):
        for j in range(16):
            assert x[j].tolist() == [it * 100 + j, -j, 7]
            np.testing.assert_array_equal(y[j], _nested_model(p[j], q[j], x[j]),
                                          err_msg=f"iteration {it}, sample {j}")
            seen.add((bool(p[j]), bool(q[j])))
    assert len(seen) == 4  # every path taken at least once


def test_results_do_not_depend_on_threads_or_depth():
    def make(threads, depth):
        @pipeline_def(batch_size=12, num_threads=threads, device_id=None, seed=3,
                      prefetch_queue_depth=depth, enable_conditionals=True)
        def pipe():
            x = fn.external_source(source=_value, batch=False)
            p = fn.random.coin_flip(probability=0.5, seed=11)
            if p:
                y = x + fn.random.uniform(range=(0, 10), seed=12)
            else:
                y = x - fn.random.normal(seed=13)
            return y
        return _run(pipe(), 4)

    ref = make(1, 1)
    for threads, depth in [(4, 1), (1, 3), (4, 3)]:
        got = make(threads, depth)
        for it in range(4):
            for a, b in zip(ref[it][0], got[it][0]):
                np.testing.assert_array_equal(a, b)


# ---- random operators in a branch draw what they draw unconditionally -------------------------

def test_random_operators_in_branches_match_unconditional():
    kw = dict(batch_size=16, num_threads=2, device_id=None, seed=5)

    @pipeline_def(enable_conditionals=True, **kw)
    def cond():
        x = fn.external_source(source=_value, batch=False)
        p = fn.random.coin_flip(probability=0.4, seed=21)
        if p:
            y = fn.cast(x, dtype=types.FLOAT) * fn.random.uniform(range=(0.5, 1.5), seed=22)
        else:
            y = fn.cast(x, dtype=types.FLOAT) + fn.random.normal(seed=23)
        return p, y

    @pipeline_def(**kw)
    def plain():
        x = fn.external_source(source=_value, batch=False)
        p = fn.random.coin_flip(probability=0.4, seed=21)
        u = fn.random.uniform(range=(0.5, 1.5), seed=22)
        n = fn.random.normal(seed=23)
        return p, fn.cast(x, dtype=types.FLOAT) * u, fn.cast(x, dtype=types.FLOAT) + n

    for (cp, cy), (pp, when_true, when_false) in zip(_run(cond(), 4), _run(plain(), 4)):
        for j in range(16):
            assert bool(cp[j]) == bool(pp[j])
            want = when_true[j] if pp[j] else when_false[j]
            np.testing.assert_array_equal(cy[j], want)


# ---- argument inputs in branches; image operators on empty and full branches -------------------

@pytest.mark.parametrize("flag", ["mixed", "all_true", "all_false"])
def test_argument_inputs_and_image_operators_in_branches(flag):
    flags = {"mixed": _flag,
             "all_true": lambda info: np.array(True),
             "all_false": lambda info: np.array(False)}[flag]

    @pipeline_def(batch_size=8, num_threads=2, device_id=None, enable_conditionals=True)
    def pipe():
        img = fn.external_source(source=_image, batch=False, layout="HWC")
        p = fn.external_source(source=flags, batch=False)
        h = fn.external_source(source=lambda info: np.int32(info.idx_in_batch % 2), batch=False)
        if p:
            out = fn.flip(img, horizontal=h, vertical=1)   # h: an argument input, split too
        else:
            out = fn.crop(img, crop=(3, 4), crop_pos_x=0.0, crop_pos_y=0.0)
        return p, img, out

    for it, (p, img, out) in enumerate(_run(pipe(), 3)):
        for j in range(8):
            if p[j]:
                want = img[j][::-1]
                if j % 2:
                    want = want[:, ::-1]
            else:
                want = img[j][:3, :4]
            np.testing.assert_array_equal(out[j], want, err_msg=f"iteration {it}, sample {j}")


# ---- the issue's example and DALI's tutorial, on real photos -----------------------------------

def test_issue_example_runs_unchanged(tree, tree_files):
    root = str(tree)

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

    scaled = 0
    for it, (out, labels) in enumerate(_run(pipe(), 2)):
        assert len(out) == 64
        for j in range(64):
            label = int(labels[j])
            assert label == tree_files[(it * 64 + j) % len(tree_files)][1]
            assert out[j].shape == (224, 224, 3) and out[j].dtype == np.float32
            if not (label < 3 or label == 7):   # halved uint8 values: k / 2, at most 127.5
                scaled += 1
                assert out[j].max() <= 127.5 and np.all(out[j] * 2 == np.round(out[j] * 2))
            else:                               # uint8 values, promoted to float32
                assert np.all(out[j] == np.round(out[j])) and out[j].max() > 127.5
    assert scaled > 0


def _example_candidates(root, seed):
    """The issue's example's branches computed for every sample, unconditionally."""
    @pipeline_def(batch_size=32, num_threads=2, device_id=None, seed=seed)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=root)
        images = fn.decoders.image(jpegs)
        coin = fn.random.coin_flip(probability=0.25, seed=31)
        rot = fn.rotate(images, angle=fn.random.uniform(range=(-30, 30), seed=32))
        size = (224, 224)
        return (coin, labels, fn.resize(rot, size=size), fn.resize(fn.flip(images), size=size),
                fn.resize(fn.hsv(images, saturation=0.5), size=size))
    return _run(pipe(), 2)


def test_issue_example_against_its_branches_run_unconditionally(tree):
    """The issue's pipeline (with seeds on its random operators, thresholds fitting the four
    classes of the test tree, and a float factor in both branches of the last `if`): each
    sample is exactly the output of the branch its predicates choose."""
    root = str(tree)

    @pipeline_def(batch_size=32, num_threads=4, device_id=None, seed=9,
                  enable_conditionals=True)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=root)
        images = fn.decoders.image(jpegs)
        if fn.random.coin_flip(probability=0.25, seed=31):
            images = fn.rotate(images, angle=fn.random.uniform(range=(-30, 30), seed=32))
        elif labels > 1:
            images = fn.flip(images)
        else:
            images = fn.hsv(images, saturation=0.5)
        out = fn.resize(images, size=(224, 224))
        if not (labels < 1 or labels == 3):
            out = out * 0.5
        else:
            out = out * 1.0
        return out, labels

    got = _run(pipe(), 2)
    ref = _example_candidates(root, 9)
    branches = set()
    for it in range(2):
        out, labels = got[it]
        coin, rlabels, rot, flip, hsv = ref[it]
        for j in range(32):
            label = int(labels[j])
            assert label == int(rlabels[j])
            which = "rot" if coin[j] else ("flip" if label > 1 else "hsv")
            branches.add(which)
            want = {"rot": rot, "flip": flip, "hsv": hsv}[which][j].astype(np.float32)
            want = want * np.float32(0.5 if not (label < 1 or label == 3) else 1.0)
            np.testing.assert_array_equal(out[j], want, err_msg=f"it {it}, sample {j} {which}")
    assert branches == {"rot", "flip", "hsv"}


def test_dali_tutorial_rotate_with_probability(tree):
    """DALI's conditional tutorial, first example (on the CPU): rotate a quarter of the images
    by an angle in [10, 30), leave the others, resize all."""
    root = str(tree)

    @pipeline_def(batch_size=16, num_threads=4, device_id=None, seed=2,
                  enable_conditionals=True)
    def conditional_pipeline():
        encoded, _ = fn.readers.file(file_root=root)
        decoded = fn.decoders.image(encoded)
        do_rotate = fn.random.coin_flip(probability=0.25, seed=41)
        angle = fn.random.uniform(range=(10, 30), seed=42)
        if do_rotate:
            result = fn.rotate(decoded, angle=angle, fill_value=0)
        else:
            result = decoded
        resized = fn.resize(result, size=[224, 224])
        return resized

    @pipeline_def(batch_size=16, num_threads=4, device_id=None, seed=2)
    def reference():
        encoded, _ = fn.readers.file(file_root=root)
        decoded = fn.decoders.image(encoded)
        do_rotate = fn.random.coin_flip(probability=0.25, seed=41)
        angle = fn.random.uniform(range=(10, 30), seed=42)
        rotated = fn.rotate(decoded, angle=angle, fill_value=0)
        return (do_rotate, angle, fn.resize(rotated, size=[224, 224]),
                fn.resize(decoded, size=[224, 224]))

    rotated_any = False
    for (out,), (coin, angle, rot, plain) in zip(_run(conditional_pipeline(), 3),
                                                  _run(reference(), 3)):
        for j in range(16):
            assert 10 <= float(angle[j]) < 30
            np.testing.assert_array_equal(out[j], rot[j] if coin[j] else plain[j])
            rotated_any |= bool(coin[j])
    assert rotated_any


def test_dali_tutorial_predicate_from_data(tree):
    """DALI's tutorial, predicate computed from the data: the images darker than a threshold
    (mean of their pixels) are brightened, the others kept."""
    root = str(tree)

    @pipeline_def(batch_size=16, num_threads=2, device_id=None, enable_conditionals=True)
    def pipe():
        encoded, _ = fn.readers.file(file_root=root)
        decoded = fn.decoders.image(encoded)
        small = fn.resize(decoded, size=[32, 32])
        mean = fn.cast(small, dtype=types.FLOAT)
        gray = (mean[:, :, 0] + mean[:, :, 1] + mean[:, :, 2]) / 3.0
        level = fn.cast(gray[0, 0], dtype=types.FLOAT)
        if level < 100:
            out = fn.brightness(small, brightness=1.5)
        else:
            out = small
        return small, level, out

    dark = 0
    for small, level, out in _run(pipe(), 2):
        for j in range(16):
            if float(level[j]) < 100:
                dark += 1
                want = np.clip(np.round(small[j].astype(np.float32) * 1.5), 0, 255)
                np.testing.assert_allclose(out[j].astype(np.float32), want, atol=1)
            else:
                np.testing.assert_array_equal(out[j], small[j])
    assert dark > 0


# ---- DALI's errors --------------------------------------------------------------------------

def _build_run(pipe):
    pipe.build()
    pipe.run()


def test_non_scalar_condition_is_an_error():
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe():
        pred = fn.random.coin_flip(dtype=types.BOOL)
        stacked = fn.stack(pred, pred)
        if stacked:
            out = types.Constant(np.int32(1))
        else:
            out = types.Constant(np.int32(0))
        return out

    with pytest.raises(RuntimeError, match=r"Conditions inside `if` statements are restricted "
                                           r"to scalar \(0-d tensors\) inputs"):
        _build_run(pipe())


def _true_false_random(info):
    if info.idx_in_batch < 2:
        return np.array(info.idx_in_batch == 0)
    return np.array(bool((info.iteration * 7 + info.idx_in_batch * 3) % 2))


LOGICAL = {
    "not": lambda x: not x,
    "and_left": lambda x: x and fn.external_source(source=_true_false_random, batch=False),
    "and_right": lambda x: fn.external_source(source=_true_false_random, batch=False) and x,
    "or_left": lambda x: x or fn.external_source(source=_true_false_random, batch=False),
    "or_right": lambda x: fn.external_source(source=_true_false_random, batch=False) or x,
}


@pytest.mark.parametrize("expr", sorted(LOGICAL))
def test_logical_expression_errors(expr):
    expression = LOGICAL[expr]
    kw = dict(enable_conditionals=True, batch_size=10, num_threads=4, device_id=None)

    @pipeline_def(**kw)
    def non_scalar():
        pred = fn.random.coin_flip(dtype=types.BOOL)
        return expression(fn.stack(pred, pred))

    with pytest.raises(RuntimeError, match=r"Logical expression `\w+` is restricted to scalar "
                                           r"\(0-d tensors\) inputs.*, that are placed on CPU\. "
                                           r"Got a 1-d input.*in logical expression"):
        _build_run(non_scalar())

    if expr == "not":
        return

    @pipeline_def(**kw)
    def non_bool():
        return expression(fn.random.coin_flip(dtype=types.INT32))

    with pytest.raises(RuntimeError, match=r"Logical expression `\w+` is restricted to scalar "
                                           r"\(0-d tensors\) inputs of `bool` type, that are "
                                           r"placed on CPU\. Got an input of type `int32` "
                                           r".*in logical expression"):
        _build_run(non_bool())


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int16, np.int32, np.uint64,
                                   np.float16, np.float32, np.float64])
def test_not_takes_any_numeric_type(dtype):
    @pipeline_def(batch_size=10, num_threads=2, device_id=None, enable_conditionals=True)
    def pipe():
        x = fn.external_source(source=lambda info: np.array(42 if info.idx_in_batch < 5 else 0,
                                                            dtype=dtype), batch=False)
        return not x

    (out,), = _run(pipe(), 1)
    assert [bool(v) for v in out] == [False] * 5 + [True] * 5
    assert all(v.dtype == np.bool_ for v in out)


@pytest.mark.parametrize("op", ["and", "or"])
def test_and_or_against_bitwise(op):
    """DALI's test: `a and b` / `a or b` on boolean DataNodes equal `a & b` / `a | b`, also
    with a constant on either side; and `not b` equals `b == 0`."""
    kw = dict(batch_size=10, num_threads=4, device_id=None, seed=42)

    def inputs():
        return (fn.random.coin_flip(dtype=types.BOOL, seed=6),
                fn.random.coin_flip(dtype=types.BOOL, seed=9),
                types.Constant(np.array(False), device="cpu"),
                types.Constant(np.array(True), device="cpu"))

    @pipeline_def(**kw)
    def plain():
        a, b, f, t = inputs()
        if op == "and":
            return a & b, a & f, t & b, b == 0
        return a | b, a | f, t | b, b == 0

    @pipeline_def(enable_conditionals=True, **kw)
    def logical():
        a, b, f, t = inputs()
        if op == "and":
            return a and b, a and f, t and b, not b
        return a or b, a or f, t or b, not b

    for ref, got in zip(_run(plain(), 3), _run(logical(), 3)):
        for r, g in zip(ref, got):
            assert [bool(v) for v in r] == [bool(v) for v in g]


def test_lazy_right_side_is_not_computed_for_short_circuited_samples():
    """DALI's test: the right side of `or` indexes out of bounds, but no sample needs it."""
    @pipeline_def(batch_size=6, num_threads=2, device_id=None, enable_conditionals=True)
    def pipe():
        bools = types.Constant(np.array([True, True, False]), device="cpu")
        one = types.Constant(np.int32(1), device="cpu")
        oob = types.Constant(np.int32(42), device="cpu")
        return bools[one] or bools[oob]

    (out,), = _run(pipe(), 1)
    assert [bool(v) for v in out] == [True] * 6


def test_branches_of_different_types_merge_into_the_promoted_type():
    """sluice's extension (docs/python.md): int32 in one branch, float32 in the other give
    float32 for every sample (DALI fails where both branches have samples)."""
    @pipeline_def(batch_size=8, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe():
        pred = fn.external_source(source=_flag, batch=False)
        if pred:
            out = types.Constant(np.int32(3), device="cpu")
        else:
            out = types.Constant(np.float32(0.25), device="cpu")
        return pred, out

    for p, out in _run(pipe(), 2):
        for j in range(8):
            assert out[j].dtype == np.float32
            assert float(out[j]) == (3.0 if p[j] else 0.25)


def test_branches_of_different_dimensions_are_an_error():
    @pipeline_def(batch_size=8, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe():
        pred = fn.external_source(source=_flag, batch=False)
        if pred:
            out = types.Constant(np.int32([1, 2]), device="cpu")
        else:
            out = types.Constant(np.int32(0), device="cpu")
        return out

    with pytest.raises(RuntimeError, match=r"Divergent data found in different branches.*"
                                           r"true branch 1-d int32, the false branch 0-d int32"):
        _build_run(pipe())


# ---- a parallel external_source next to conditionals -------------------------------------------

def test_parallel_external_source_with_conditionals():
    @pipeline_def(batch_size=4, num_threads=2, device_id=None, py_num_workers=2,
                  enable_conditionals=True)
    def pipe():
        x = fn.external_source(pc.ident, batch=False, parallel=True)
        p = fn.external_source(source=_flag, batch=False)
        if p:
            y = x * 3
        else:
            y = x + 1
        return p, x, y

    for p, x, y in _run(pipe(), 4):
        for j in range(4):
            np.testing.assert_array_equal(y[j], x[j] * 3 if p[j] else x[j] + 1)


# ---- sources defined in a converted function (DALI's test_external_source) ---------------------

def _check_artifact(fn_, expected):
    from sluice._autograph import is_autograph_artifact

    if is_autograph_artifact(fn_) != expected:
        raise AssertionError(f"{fn_} converted: {not expected}, expected {expected}")


def _converted_factory(size):
    def source_in_factory(si):
        _check_artifact(source_in_factory, True)
        return np.full(size, 10)
    return source_in_factory


@do_not_convert
def _plain_factory(size):
    def source_in_factory(si):
        _check_artifact(source_in_factory, False)
        return np.full(size, 10)
    return source_in_factory


def _source_pipe(kind, parallel):
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, enable_conditionals=True,
                  py_start_method="spawn")
    def pipe():
        if kind == "local":
            def source_local(si):
                _check_artifact(source_local, True)
                return np.full((3,), 10)
            source = source_local
        else:
            source = (_converted_factory if kind == "converted" else _plain_factory)((3,))
            _check_artifact(source, kind == "converted")
        return fn.external_source(source=source, parallel=parallel, batch=False)

    p = pipe()
    p.build()
    (out,) = p.run()
    np.testing.assert_array_equal(out.as_array(), np.full((4, 3), 10))


@pytest.mark.parametrize("kind", ["local", "converted", "plain"])
def test_sources_made_in_a_converted_definition(kind):
    _source_pipe(kind, parallel=False)


@pytest.mark.parametrize("kind", ["local", "converted"])
def test_parallel_source_made_converted_is_refused(kind):
    with pytest.raises(ValueError, match="it must remain unconverted"):
        _source_pipe(kind, parallel=True)


def test_parallel_source_from_do_not_convert_factory_runs():
    _source_pipe("plain", parallel=True)


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int64, np.float16, np.float32,
                                   np.float64])
def test_if_predicate_of_any_numeric_type(dtype):
    @pipeline_def(batch_size=10, num_threads=2, device_id=None, enable_conditionals=True)
    def pipe():
        p = fn.external_source(source=lambda info: np.array(7 if info.idx_in_batch < 5 else 0,
                                                            dtype=dtype), batch=False)
        if p:
            out = types.Constant(np.array(42), device="cpu")
        else:
            out = types.Constant(np.array(0), device="cpu")
        return out

    (out,), = _run(pipe(), 1)
    assert [int(v) for v in out] == [42] * 5 + [0] * 5


# ---- nested structures in branches (DALI's test_nests) -----------------------------------------

def _parity(info):
    return np.array(info.idx_in_batch % 2)


def test_dicts_and_tuples_merge_element_by_element():
    @pipeline_def(batch_size=8, num_threads=2, device_id=None, enable_conditionals=True)
    def pipe():
        pred = fn.external_source(source=_parity, batch=False)
        data = types.Constant(np.array(42), device="cpu")
        if pred:
            d = {"out": data - 1}
            t = (data, data + 10, data + 20)
        else:
            d = {"out": data + 1}
            t = (np.array(-10), data, data * 2)
        a, b, c = t
        return d["out"], a, b, c

    (d, a, b, c), = _run(pipe(), 1)
    odd = [i % 2 == 1 for i in range(8)]
    assert [int(v) for v in d] == [41 if o else 43 for o in odd]
    assert [int(v) for v in a] == [42 if o else -10 for o in odd]
    assert [int(v) for v in b] == [52 if o else 42 for o in odd]
    assert [int(v) for v in c] == [62 if o else 84 for o in odd]


def test_dicts_with_different_keys_are_an_error():
    @pipeline_def(batch_size=8, num_threads=2, device_id=None, enable_conditionals=True)
    def pipe():
        pred = fn.external_source(source=_parity, batch=False)
        if pred:
            out = {"out": np.array(2), "mismatched": np.array(9999)}
        else:
            out = {"out": np.array(1)}
        return out

    with pytest.raises(ValueError, match=r"(?s)Divergent data found in different branches of "
                                         r"`if/else` control flow statement.*The two "
                                         r"dictionaries don't have the same set of keys\. First "
                                         r"structure has keys type=list str=\['out', "
                                         r"'mismatched'\], while second structure has keys "
                                         r"type=list str=\['out'\]"):
        pipe()


def _select(lo, hi, ops, idx, image, label):
    """A recursive helper called from the definition (converted too): picks ops[idx] per
    sample by bisection, returning a tuple from every branch."""
    if lo == hi:
        return ops[lo](image, label)
    mid = (lo + hi) // 2
    if idx <= mid:
        image, label = _select(lo, mid, ops, idx, image, label)
    else:
        image, label = _select(mid + 1, hi, ops, idx, image, label)
    return image, label


def test_recursive_helper_returning_tuples():
    ops = [lambda im, lb: (fn.flip(im, horizontal=1), lb + 10),
           lambda im, lb: (fn.flip(im, horizontal=0, vertical=1), lb + 20),
           lambda im, lb: (im, lb + 30)]

    @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=1, enable_conditionals=True)
    def pipe():
        image = fn.external_source(source=_image, batch=False, layout="HWC")
        label = types.Constant(np.int32(1), device="cpu")
        idx = fn.random.uniform(values=[0.0, 1.0, 2.0], seed=3)
        out, lab = _select(0, len(ops) - 1, ops, idx, image, label)
        return idx, image, out, lab

    seen = set()
    for idx, image, out, lab in _run(pipe(), 2):
        for j in range(8):
            k = int(idx[j])
            seen.add(k)
            want = [image[j][:, ::-1], image[j][::-1], image[j]][k]
            np.testing.assert_array_equal(out[j], want)
            assert int(lab[j]) == 1 + 10 * (k + 1)
    assert seen == {0, 1, 2}
