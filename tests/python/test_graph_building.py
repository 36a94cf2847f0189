"""tests/python/test_graph_building.py: how DALI code builds graphs, issue 16 points 1-3.

Modelled on DALI's own tests of these features (core/test_pipeline.py: test_return_constants,
test_pipeline_out_of_scope, test_properties, test_ref_count; core/test_pipeline_decorator.py;
test_external_source_impl.py: sources made outside a pipeline, ops.ExternalSource), in our
own words. References are NumPy: every pipeline output is compared with values computed here.

1. Operators outside a pipeline definition make nodes of no pipeline; set_outputs,
   define_graph and @pipeline_def adopt whatever their outputs reach; one node may feed two
   pipelines; arguments are still checked where the call is made; operators with side effects
   (preserve=True) need a current pipeline.
2. The ops API: classes made once (in a Pipeline subclass's __init__) and called many times,
   ops.ExternalSource(source, ...), define_graph / iter_setup, `with pipe:`,
   Pipeline.current().
3. Constants where a DataNode is expected: types.Constant, fn.constant, operator inputs,
   arithmetic with arrays and lists, pipeline outputs.
"""
import sys
import warnings

import numpy as np
import pytest

import sluice
from sluice import Pipeline, fn, ops, pipeline_def, types


def arrays(tl):
    return [np.array(tl.at(i)) for i in range(len(tl))]


def batch_of(*samples):
    """A source giving the same batch every iteration (copies, so nothing is shared)."""
    return lambda: [np.array(s) for s in samples]


# ---- 1. operators outside a pipeline ------------------------------------------------------

def test_nodes_made_outside_belong_to_no_pipeline_until_adopted():
    x = fn.external_source(batch_of(np.arange(6, dtype=np.float32).reshape(2, 3),
                                    np.ones((2, 3), np.float32)))
    y = fn.cast(x * 2 + 1, dtype=types.INT16)
    assert x.pipeline is None and y.pipeline is None
    assert (x.device, y.device, y.op) == ("cpu", "cpu", "cast")
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    pipe.set_outputs(y, x)  # outside `with pipe:` too
    for _ in range(2):
        out_y, out_x = pipe.run()
        assert out_y.dtype == types.INT16
        ref = [np.arange(6).reshape(2, 3) * 2 + 1, np.full((2, 3), 3)]
        for got, want in zip(arrays(out_y), ref):
            np.testing.assert_array_equal(got, want.astype(np.int16))
        np.testing.assert_array_equal(arrays(out_x)[0], np.arange(6).reshape(2, 3))
    # the adopting graph named the nodes made without a name: DataNode.name says so now
    graph_names = {n[0] for n in pipe._graph.nodes}
    assert y.node in graph_names and x.node in graph_names


def test_arguments_are_checked_where_the_call_is_made():
    with pytest.raises(sluice.InvalidArgumentError,
                       match=r'random.coin_flip \(node "coin"\): argument "probability": '
                             r"value 1.5 is out of range \[0, 1\]"):
        fn.random.coin_flip(probability=1.5, name="coin")
    with pytest.raises(sluice.ArgumentTypeError, match='unknown argument "nope"'):
        fn.random.coin_flip(nope=1)
    with pytest.raises(TypeError, match=r"expects 1 input, got 0"):
        fn.flip()
    with pytest.raises(ValueError, match="node name"):
        fn.random.coin_flip(name="a:b")


@pytest.mark.skipif(not sluice._sluice.HAVE_CUDA, reason="needs a CUDA build (.gpu())")
def test_placement_of_a_node_outside_a_pipeline_follows_its_inputs():
    """The C placement rule, applied to the inputs' devices: GPU data makes a node run on the
    GPU, or fails at once for an operator with no GPU implementation."""
    x = fn.random.uniform(shape=[2, 2, 3]).gpu()
    assert x.device == "mixed"
    assert fn.flip(x).device == "gpu" and (x * 2).device == "gpu"
    with pytest.raises(sluice.UnsupportedError, match="operator has no gpu implementation, and "
                                                      "no device was given: input 0 comes from"):
        fn.decoders.image(x)


def test_one_node_feeds_two_pipelines():
    """DALI's test_pipeline_decorator passes fn.random.coin_flip(seed=...) made outside to two
    pipelines: each adopts its own copy, with the same values."""
    img = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    h, v = fn.random.coin_flip(seed=123), fn.random.coin_flip(seed=234)

    def flipped(batch_size):
        pipe = Pipeline(batch_size=batch_size, num_threads=1, device_id=None, seed=1)
        with pipe:
            x = fn.external_source(batch_of(*[img] * batch_size), layout="HWC")
            pipe.set_outputs(fn.flip(x, horizontal=h, vertical=v), h, v)
        return pipe

    a, b = flipped(4), flipped(4)
    for _ in range(3):
        (fa, ha, va), (fb, hb, vb) = a.run(), b.run()
        for got, other, hh, vv in zip(arrays(fa), arrays(fb), arrays(ha), arrays(va)):
            want = img[::-1 if vv else 1, ::-1 if hh else 1]
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(other, want)
        np.testing.assert_array_equal(ha.as_array(), hb.as_array())
        np.testing.assert_array_equal(va.as_array(), vb.as_array())


def test_each_pipeline_reads_its_own_pass_of_a_source():
    """An external_source made outside feeds every pipeline that adopts it from the start."""
    x = fn.external_source(lambda i: [np.array([i * 10], np.int32)])
    p1, p2 = (Pipeline(batch_size=1, num_threads=1, device_id=None) for _ in range(2))
    p1.set_outputs(x)
    p2.set_outputs(x + 1)
    assert [p1.run()[0].as_array().item() for _ in range(3)] == [0, 10, 20]
    assert [p2.run()[0].as_array().item() for _ in range(2)] == [1, 11]


def test_nodes_of_another_pipeline_are_adopted_too():
    """DALI lets a pipeline use nodes defined while another one was current."""
    a = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with a:
        x = fn.external_source(batch_of([1.0, 2.0], [3.0, 4.0]), name="src")
        a.set_outputs(x)
    assert x.pipeline is a
    b = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with b:
        b.set_outputs(x * 10)
    np.testing.assert_array_equal(b.run()[0].as_array(), [[10, 20], [30, 40]])
    np.testing.assert_array_equal(a.run()[0].as_array(), [[1, 2], [3, 4]])


def test_unnamed_nodes_made_outside_give_the_same_values_in_every_rebuild():
    """Seeds derive from node names; the adopting graph names the nodes, so identical
    pipelines repeat their values (DALI's test_seed), and other seeds change them."""
    def run(seed):
        pipe = Pipeline(batch_size=6, num_threads=1, device_id=None, seed=seed)
        pipe.set_outputs(fn.random.uniform(range=(0.0, 1.0)))
        return pipe.run()[0].as_array()

    first = run(12)
    for _ in range(3):
        np.testing.assert_array_equal(run(12), first)
    assert not np.array_equal(run(13), first)


def test_feed_input_by_name_and_by_data_node_made_outside():
    src = fn.external_source(name="feed")
    other = fn.external_source()
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, prefetch_queue_depth=1)
    pipe.set_outputs(src, other)
    pipe.build()
    pipe.feed_input("feed", [np.array([1, 2], np.int16), np.array([3], np.int16)])
    pipe.feed_input(other, np.zeros((2, 2), np.float32))
    s, o = pipe.run()
    assert [a.tolist() for a in arrays(s)] == [[1, 2], [3]]
    assert o.as_array().shape == (2, 2)


def test_operators_with_side_effects_need_a_current_pipeline():
    """DALI: an operator with side effects (or preserve=True) cannot be called without a
    current pipeline: no output would ever reach it."""
    with pytest.raises(RuntimeError, match="Current Pipeline not set"):
        fn.random.coin_flip(preserve=True)
    with pytest.raises(RuntimeError, match="Current Pipeline not set"):
        fn.external_source(source=[[np.float32([1])]], preserve=True)
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        kept = fn.random.coin_flip(preserve=True, name="kept")
        src = fn.external_source(source=[[np.float32([-0.5, 1.25])]], preserve=True, name="s")
        pipe.set_outputs(fn.random.uniform())
    assert kept.pipeline is pipe and src.pipeline is pipe
    pipe.build()
    assert {"kept", "s"} <= set(pipe.executor_statistics())  # preserved: not pruned


def test_a_parallel_source_made_outside_is_checked_by_the_pipeline_that_adopts_it():
    x = fn.external_source(lambda si: np.array([si.idx_in_epoch], np.int32), batch=False,
                           parallel=True)
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, py_num_workers=0)
    pipe.set_outputs(x)  # as in DALI, the pipeline's check comes at build
    with pytest.raises(RuntimeError, match="without Python workers pool"):
        pipe.build()
    # made inside such a pipeline's definition, the call fails, and records nothing
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, py_num_workers=0)
    with pipe:
        with pytest.raises(RuntimeError, match="without Python workers pool"):
            fn.external_source(lambda si: np.int32([1]), batch=False, parallel=True)
    assert pipe._graph.nodes == []


def test_a_long_chain_made_outside_is_adopted_without_recursion():
    x = fn.external_source(batch_of(np.zeros(3, np.int32)))
    for _ in range(sys.getrecursionlimit() + 100):
        x = x + 1
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    pipe.set_outputs(x)
    np.testing.assert_array_equal(pipe.run()[0].as_array(),
                                  [[sys.getrecursionlimit() + 100] * 3])


def test_a_failed_call_with_constant_inputs_records_nothing():
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        before = pipe._graph.nodes
        with pytest.raises(sluice.ArgumentTypeError):
            fn.cast(np.ones(3), bogus=1)
        with pytest.raises(sluice.ArgumentTypeError):
            fn.random.uniform(shape=[2]) * np.ones(2, np.float32) + fn.cast([1], nope=2)
        # the uniform, and the product with the constant it adopted
        assert [n[1] for n in pipe._graph.nodes[len(before):]] == ["random.uniform", "constant",
                                                                   "arithmetic"]


def test_no_reference_cycle_keeps_a_pipeline_alive():
    """DALI's test_ref_count: DataNodes kept on the pipeline (define_graph's self.x) do not
    refer back to it, so `del pipe` frees it at once."""
    class Legacy(Pipeline):
        def __init__(self):
            super().__init__(1, 1, None, seed=12)
            self.coin = ops.random.CoinFlip()

        def define_graph(self):
            self.labels = self.coin()
            return self.labels

    pipe = Legacy()
    assert sys.getrefcount(pipe) == 2
    pipe.build()
    assert sys.getrefcount(pipe) == 2


# ---- 2. the ops API ---------------------------------------------------------------------------

def test_ops_objects_made_once_and_called_many_times():
    class Pipe(Pipeline):
        def __init__(self, values):
            super().__init__(batch_size=2, num_threads=1, device_id=None)
            self.source = ops.ExternalSource(batch_of(*values))  # positional, as DALI
            self.cast = ops.Cast(dtype=types.INT32)
            self.flip = ops.Flip(horizontal=0, vertical=1)

        def define_graph(self):
            x = self.source()
            return self.cast(x), self.cast(x * 2.6), self.flip(self.flip(x))

    values = [np.array([[1.25], [2.5]], np.float32), np.array([[-1.5], [0.0]], np.float32)]
    for _ in range(2):  # the same classes, two pipelines
        pipe = Pipe(values)
        a, b, c = pipe.run()
        for k, v in enumerate(values):
            np.testing.assert_array_equal(a.at(k), np.trunc(v + np.sign(v) * 0.5))  # ConvertSat
            np.testing.assert_array_equal(b.at(k), np.trunc(v * np.float32(2.6) +
                                                            np.sign(v) * 0.5))
            np.testing.assert_array_equal(c.at(k), v)  # flipped twice
        assert [n[1] for n in pipe._graph.nodes].count("cast") == 2


def test_ops_external_source_with_num_outputs_and_iter_setup():
    data = [(np.full((2, 2), i, np.float32), np.arange(i + 1, dtype=np.int64)) for i in range(3)]
    it = iter(data)
    split = ops.ExternalSource(lambda: next(it), num_outputs=2, batch=False)
    pipe = Pipeline(batch_size=3, num_threads=1, device_id=None)
    a, b = split()
    pipe.set_outputs(a, b)
    out_a, out_b = pipe.run()
    for i in range(3):
        np.testing.assert_array_equal(out_a.at(i), data[i][0])
        np.testing.assert_array_equal(out_b.at(i), data[i][1])

    class Fed(Pipeline):
        def __init__(self, batches):
            super().__init__(batch_size=2, num_threads=1, device_id=None)
            self.inp = ops.ExternalSource()
            self.batches = iter(batches)

        def define_graph(self):
            self.data = self.inp()
            return self.data * 3

        def iter_setup(self):
            self.feed_input(self.data, next(self.batches))

    batches = [np.full((2, 1), k, np.int32) for k in range(4)]
    pipe = Fed(batches)
    got = []
    while True:
        try:
            got.append(pipe.run()[0].as_array().ravel().tolist())
        except StopIteration:
            break
    assert got == [[3 * k, 3 * k] for k in range(4)]


def test_ops_arguments_go_to_the_constructor_or_the_call_not_both():
    flip = ops.Flip(horizontal=1)
    src = ops.ExternalSource(batch_of([1]), layout="W")
    with Pipeline(batch_size=1, num_threads=1, device_id=None):
        with pytest.raises(ValueError, match="The argument `horizontal` was already specified"):
            flip(fn.random.uniform(shape=[1, 1, 1]), horizontal=0)
        flip(fn.random.uniform(shape=[1, 1, 1]), horizontal=None)  # None: not given
        with pytest.raises(RuntimeError, match="``source`` already specified in constructor"):
            src(source=batch_of([2]))
        with pytest.raises(RuntimeError, match="``layout`` already specified"):
            src(layout="H")
    with pytest.raises(TypeError, match="positional"):
        ops.Flip(1)  # DALI's operator classes take keyword arguments only


def test_with_pipe_and_pipeline_current():
    assert Pipeline.current() is None
    p1 = Pipeline(batch_size=2, num_threads=1, device_id=None)
    p2 = Pipeline(batch_size=3, num_threads=1, device_id=None)
    with p1:
        assert Pipeline.current() is p1
        with p2:
            assert Pipeline.current() is p2
            inner = fn.random.coin_flip()
            p2.set_outputs(inner)
        assert Pipeline.current() is p1
        outer = fn.random.coin_flip()
    assert Pipeline.current() is None
    assert inner.pipeline is p2 and outer.pipeline is p1
    Pipeline.push_current(p1)
    try:
        assert fn.random.coin_flip().pipeline is p1
    finally:
        Pipeline.pop_current()
    assert len(p2.run()[0]) == 3


def test_pipeline_current_inside_pipeline_def_has_dalis_properties():
    seen = {}

    @pipeline_def(batch_size=11, prefetch_queue_depth={"cpu_size": 3, "gpu_size": 2})
    def pipe():
        p = Pipeline.current()
        seen.update(max_batch_size=p.max_batch_size, batch_size=p.batch_size,
                    num_threads=p.num_threads, seed=p.seed, set_affinity=p.set_affinity,
                    max_streams=p.max_streams, cpu_queue_size=p.cpu_queue_size,
                    gpu_queue_size=p.gpu_queue_size, py_num_workers=p.py_num_workers,
                    py_start_method=p.py_start_method,
                    enable_memory_stats=p.enable_memory_stats,
                    exec_separated=p.exec_separated)
        return np.float32([1, 2, 3])

    pipe(device_id=None, seed=1234, num_threads=3, set_affinity=True, py_num_workers=3)
    assert seen == dict(max_batch_size=11, batch_size=11, num_threads=3, seed=1234,
                        set_affinity=True, max_streams=-1, cpu_queue_size=3, gpu_queue_size=2,
                        py_num_workers=3, py_start_method="fork", enable_memory_stats=False,
                        exec_separated=True)
    plain = Pipeline(batch_size=1, prefetch_queue_depth=4)
    assert (plain.cpu_queue_size, plain.gpu_queue_size, plain.exec_separated) == (4, 4, False)


def test_pipeline_def_conventions():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def shadowing(max_streams):
        return fn.external_source(batch_of([1], [2])) + max_streams

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        pipe = shadowing(max_streams=42)
    assert pipe.max_streams == -1  # the function's argument, not the pipeline's
    assert any("shadows" in str(x.message) for x in w)
    assert pipe.run()[0].as_array().ravel().tolist() == [43, 44]

    @pipeline_def
    def variadic(a, *args, **kwargs):
        pass

    with pytest.raises(TypeError, match=r"\*\*kwargs.*not allowed"):
        variadic(a=1, b=2)
    assert shadowing._is_pipeline_def and variadic._is_pipeline_def

    @pipeline_def(batch_size=3, num_threads=1, device_id=None)
    def constant_output():
        return 42

    out = constant_output().run()[0]
    assert out.dtype == types.INT32 and arrays(out) == [42, 42, 42]
    with pytest.raises(TypeError, match="define_graph must be callable"):
        constant_output().serialize("a_file_name.json")


# ---- 3. constants -----------------------------------------------------------------------------

def test_return_constants():
    """DALI's test_return_constants: NumPy arrays, Python and NumPy scalars as outputs."""
    pipe = Pipeline(1, 1, None)
    kinds = [bool, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.float32,
             np.float16, np.int64, np.float64]
    pipe.set_outputs(np.array([[1, 2], [3, 4]]), 10, 2.5, [1, 2.5], *[t(42) for t in kinds])
    a, b, c, d, *other = pipe.run()
    np.testing.assert_array_equal(a.at(0), [[1, 2], [3, 4]])
    assert a.dtype == types.INT32  # int64 arrays become int32 when the values fit, as DALI's
    assert b.at(0).shape == () and b.at(0) == 10 and b.dtype == types.INT32
    assert c.at(0) == 2.5 and c.dtype == types.FLOAT
    np.testing.assert_array_equal(d.at(0), np.float32([1, 2.5]))
    narrowed = {np.int64: np.int32, np.float64: np.float32}  # DALI's 64 -> 32 bits
    for t, o in zip(kinds, other):
        assert o.at(0) == t(42) and o.at(0).shape == ()
        assert o.at(0).dtype == np.dtype(narrowed.get(t, t)), (t, o.at(0).dtype)


def test_output_errors_come_at_build_as_in_dali():
    """DALI's test_set_outputs / test_set_outputs_err_msg_random_type: a list of DataNodes given
    as one output (unpacking forgotten) and a value that is no constant fail at build."""
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    pipe.set_outputs(fn.external_source([[[np.ones(2)], [np.ones(3)]]], num_outputs=2,
                                        cycle="quiet"))
    with pytest.raises(TypeError, match=r"Illegal pipeline output type. The output 0 contains "
                                        r"a nested `DataNode`"):
        pipe.build()
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    pipe.set_outputs("test")
    with pytest.raises(TypeError, match=r"Illegal output type. The output 0 is a "
                                        r"`<class 'str'>`."):
        pipe.build()

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def returns_a_list():
        return [fn.random.coin_flip(), fn.random.coin_flip()]  # sluice: its outputs

    assert len(returns_a_list().run()) == 2

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def returns_numbers():
        return [1, 2, 3]  # one constant output

    out, = returns_numbers().run()
    np.testing.assert_array_equal(out.as_array(), [[1, 2, 3], [1, 2, 3]])


def test_types_constant():
    s = types.Constant(3)
    assert isinstance(s, types.ScalarConstant) and (s.value, s.dtype) == (3, types.INT32)
    assert types.Constant(np.uint8(7)).dtype == types.UINT8
    assert types.Constant(np.array(1.5)).dtype == types.FLOAT64  # 0-d: a scalar of its type
    assert types.Constant(2.7, types.INT16).value == 2  # DALI: int() truncates
    assert types.Constant(True).dtype == types.BOOL
    assert s.uint8().dtype == types.UINT8 and s.float32().value == 3.0
    assert s == types.Constant(3, types.INT32) and s != s.int64()
    assert int(s) == 3
    with pytest.raises(TypeError):
        float(s)

    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        outs = [
            types.Constant(np.arange(6, dtype=np.float64).reshape(2, 3)),  # -> float32
            types.Constant([1, 2, 3], dtype=types.UINT8, shape=[3, 1], layout="HW"),
            types.Constant(5, shape=[2, 2]),  # a scalar with a shape fills it
            types.Constant([[1.5, -2.5]], dtype=types.INT8),  # rounded half away from zero
            types.Constant(np.array([2 ** 40, 1])),  # too big for int32: stays int64
            types.Constant(np.arange(3, dtype=np.float64), dtype=types.FLOAT64),  # exact
            types.Constant([True, False]),
            types.Constant(7, device="cpu"),
        ]
        pipe.set_outputs(*outs)
    want = [
        (np.arange(6, dtype=np.float32).reshape(2, 3), ""),
        (np.uint8([[1], [2], [3]]), "HW"),
        (np.full((2, 2), 5, np.int32), ""),
        (np.int8([[2, -3]]), ""),
        (np.array([2 ** 40, 1], np.int64), ""),
        (np.arange(3, dtype=np.float64), ""),
        (np.array([True, False]), ""),
        (np.int32(7), ""),
    ]
    for got, (ref, layout) in zip(pipe.run(), want):
        assert got.layout() == layout
        for sample in arrays(got):
            assert sample.dtype == ref.dtype
            np.testing.assert_array_equal(sample, ref)
    with pytest.raises(TypeError):
        types.Constant("text", device="cpu")
    with pytest.raises(TypeError, match="enum"):
        types.Constant([types.FLOAT, types.INT8])
    with pytest.raises(TypeError):
        types.Constant([[1, 2], [3]])
    with pytest.raises(ValueError, match="device"):
        types.Constant([1], device="tpu")


def test_fn_constant_as_dali_writes_it():
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    pipe.set_outputs(fn.constant(fdata=[0.5, 1.5, 2.5, 3.5], shape=[2, 2], dtype=types.UINT8),
                     fn.constant(idata=4, shape=[3], layout="W"),
                     fn.constant(fdata=[0.25, -1.0]))
    a, b, c = pipe.run()
    np.testing.assert_array_equal(a.as_array(), [[[1, 2], [3, 4]]] * 2)  # halves away from 0
    assert b.layout() == "W" and b.as_array().tolist() == [[4, 4, 4]] * 2
    assert c.dtype == types.FLOAT and c.as_array().tolist() == [[0.25, -1.0]] * 2


def test_constants_as_operator_inputs():
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(fn.cast([1.5, 2.5, -0.5], dtype=types.INT32),
                         fn.reshape(np.arange(6, dtype=np.int16), shape=[3, 2]),
                         fn.cast(types.Constant(9, types.UINT8), dtype=types.FLOAT))
    a, b, c = pipe.run()
    np.testing.assert_array_equal(a.as_array(), [[2, 3, -1]] * 2)
    np.testing.assert_array_equal(b.at(1), np.arange(6, dtype=np.int16).reshape(3, 2))
    assert c.at(0) == 9.0 and c.at(0).shape == ()
    with pytest.raises(TypeError, match="input 0 must be a DataNode"):
        fn.cast("text", dtype=types.INT32)


def test_out_of_range_typed_constant_as_a_node_is_converted_by_the_operator():
    """A ScalarConstant whose value does not fit its dtype (types.Constant(300, UINT8)) made a
    node: the constant operator converts it as cast does (saturated), whatever NumPy is
    installed (NumPy's own conversion wraps with a DeprecationWarning on 1.x and raises
    OverflowError on 2.x)."""
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pipe:
            pipe.set_outputs(fn.cast(types.Constant(300, types.UINT8), dtype=types.INT32),
                             types.Constant(-1, types.UINT8, shape=[2]),
                             types.Constant(-129, types.INT8),
                             fn.cast(np.int32([300, -1]), dtype=types.UINT8))
        a, b, c, ref = pipe.run()
    assert a.at(0) == 255 and a.at(0).dtype == np.int32  # np.clip(300, 0, 255)
    np.testing.assert_array_equal(b.at(0), np.array([0, 0], np.uint8))
    assert b.at(0).dtype == np.uint8
    assert c.at(0) == -128 and c.at(0).dtype == np.int8
    np.testing.assert_array_equal(ref.at(0), [255, 0])  # cast's own rule, the reference


def test_arithmetic_with_arrays_and_lists():
    img = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    mean = np.array([10, 20, 30], np.float32)
    x = fn.external_source(batch_of(img, img[:1]), layout="HWC")
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    pipe.set_outputs(x - mean,                       # [3] broadcast over H, W
                     mean * x,                       # NumPy left operand: node's __rmul__
                     [1, 2, 3] + x,                  # a list: int32 constant
                     x > np.uint8([5, 50, 0]),
                     x * types.Constant(np.float32([[2]])),
                     x + np.array(1, np.uint8),      # 0-d: a typed scalar, uint8 + uint8
                     x // 2)
    outs = pipe.run()
    for k, sample in enumerate((img, img[:1])):
        i32 = sample.astype(np.int32)
        refs = [sample - mean, mean * sample, np.int32([1, 2, 3]) + i32,
                sample > np.uint8([5, 50, 0]), sample * np.float32(2),
                (sample + np.uint8(1)).astype(np.uint8), i32 // 2]  # 2 is int32
        for out, ref in zip(outs, refs):
            got = out.at(k)
            assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
            np.testing.assert_array_equal(got, ref)
    with pytest.raises(TypeError, match="unsupported operand"):
        x + "text"


def test_a_list_of_numbers_is_one_constant_not_input_sets():
    """DALI's multiple input sets are lists of DataNodes; a list of numbers is a constant."""
    a, b = fn.random.uniform(shape=[2]), fn.random.uniform(shape=[2])
    casts = fn.cast([a, b], dtype=types.FLOAT64)
    assert isinstance(casts, list) and len(casts) == 2
    one = fn.cast([3, 4], dtype=types.FLOAT64)
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None, seed=2)
    pipe.set_outputs(*casts, one, a)
    ca, cb, c, ua = pipe.run()
    np.testing.assert_array_equal(c.as_array(), [[3.0, 4.0]])
    np.testing.assert_array_equal(ca.as_array(), ua.as_array().astype(np.float64))


def test_constant_operator_classes_and_scalar_promotion():
    """DALI's operator_1/test_constant.py: ops.Constant objects and types.Constant as inputs
    and argument inputs (shape=types.Constant([4]) is a per-sample argument input)."""
    consts = [ops.Constant(fdata=(1.25, 2.5, 3)),
              ops.Constant(idata=(1, 2, 3, 4), shape=(2, 1, 2)),
              ops.Constant(idata=(-1, 1, 2, 3, 4), dtype=types.UINT8),
              ops.Constant(fdata=(0.25, 1.25, 2.25, 3.25, 4.25), dtype=types.FLOAT16),
              ops.Constant(fdata=5.5, shape=(100, 100)),
              ops.Constant(idata=-4, shape=(10, 20)),
              ops.Constant(idata=[0, 1, 0], dtype=types.BOOL)]
    refs = [np.float32([1.25, 2.5, 3]), np.int32([[[1, 2]], [[3, 4]]]),
            np.uint8([0, 1, 2, 3, 4]), np.float16([0.25, 1.25, 2.25, 3.25, 4.25]),
            np.full((100, 100), 5.5, np.float32), np.full((10, 20), -4, np.int32),
            np.array([False, True, False])]

    class Consts(Pipeline):
        def __init__(self):
            super().__init__(batch_size=3, num_threads=1, device_id=None)

        def define_graph(self):
            return [c() for c in consts] + [
                ops.Reshape(shape=[1])(types.Constant(1.25)),
                ops.Reshape()(types.Constant(np.uint16([[1, 2], [3, 4]]), device="cpu"),
                              shape=types.Constant([4]))]

    refs += [np.float32([1.25]), np.uint16([1, 2, 3, 4])]
    pipe = Consts()
    for _ in range(2):
        for out, ref in zip(pipe.run(), refs):
            assert len(out) == 3
            for sample in arrays(out):
                assert sample.dtype == ref.dtype
                np.testing.assert_array_equal(sample, ref)
