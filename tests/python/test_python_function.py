"""tests/python/test_python_function.py: fn.python_function, fn.dl_tensor_python_function and
their ops classes (issue 17, point 3), against NumPy (and PIL, torch) references.

Per sample and per batch; 0, 1, 2 and 3 outputs of different dtypes; strided results (flips,
channel slices); output layouts (DALI's rules); an exception at its iteration, with the
Python traceback as __cause__, the pipeline going on (prefetch depth 1 to 3); calls once per
iteration, in order, never two at a time; the function's own copies of its inputs; never
pruned; a current pipeline required; serialize() refused; the DLPack flavour with torch;
a pipeline referring to itself through its function is collected; deleting a pipeline, or
leaving the interpreter, with a call in flight neither hangs nor crashes.
"""
import gc
import os
import subprocess
import sys
import textwrap
import threading
import time
import traceback
import weakref

import numpy as np
import pytest
import torch
from PIL import Image

import sluice
from sluice import Pipeline, fn, ops, pipeline_def, types

BS = 4


def counting_source(info):
    """Sample i of iteration k: [100k + 10i, ..., 100k + 10i + i + 1] as int32 (ragged)."""
    base = 100 * info.iteration + 10 * info.idx_in_batch
    return np.arange(base, base + info.idx_in_batch + 2, dtype=np.int32)


def source_sample(k, i):
    base = 100 * k + 10 * i
    return np.arange(base, base + i + 2, dtype=np.int32)


def make(graph, depth=2, threads=2, **kwargs):
    """A pipeline of `graph(x)` where x is counting_source's data."""

    @pipeline_def(batch_size=BS, num_threads=threads, device_id=None, seed=7,
                  prefetch_queue_depth=depth, **kwargs)
    def p():
        return graph(fn.external_source(source=counting_source, batch=False))

    return p()


def arrays(tl):
    return [np.array(tl.at(i)) for i in range(len(tl))]


# ---- images: DALI's own cases against NumPy and PIL --------------------------------------------

def image_pipeline(tree, function, **kwargs):
    @pipeline_def(batch_size=BS, num_threads=2, device_id=None, seed=3)
    def p():
        jpegs, _ = fn.readers.file(file_root=str(tree))
        images = fn.decoders.image(jpegs, output_type=types.RGB)
        return images, fn.python_function(images, function=function, **kwargs)

    return p()


@pytest.mark.parametrize("function", [
    lambda im: im[:, :, 1] / 255.0,                        # a strided float64 channel
    lambda im: np.array([im[:, :, c].mean() for c in range(3)]),
    lambda im: np.array(im > 127, dtype=bool),
    np.fliplr,                                             # negative strides
    lambda im: np.rot90(im),
    lambda im: np.array(Image.fromarray(im).resize((30, 20))),
], ids=["channel", "mean", "bool", "fliplr", "rot90", "pil_resize"])
def test_per_sample_equals_numpy_on_decoded_images(tree, function):
    pipe = image_pipeline(tree, function)
    for _ in range(3):
        images, out = pipe.run()
        for im, got in zip(arrays(images), arrays(out)):
            want = function(im)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(got, want)


def test_fliplr_equals_the_flip_operator(tree):
    @pipeline_def(batch_size=BS, num_threads=2, device_id=None, seed=3)
    def p():
        jpegs, _ = fn.readers.file(file_root=str(tree))
        images = fn.decoders.image(jpegs, output_type=types.RGB)
        return fn.flip(images, horizontal=1), fn.python_function(images, function=np.fliplr)

    pipe = p()
    for _ in range(2):
        flipped, ours = pipe.run()
        for a, b in zip(arrays(flipped), arrays(ours)):
            assert np.array_equal(a, b)


# ---- outputs ---------------------------------------------------------------------------------

def test_two_outputs_of_different_dtypes_and_a_sink():
    calls = []

    def graph(x):
        halves, sums = fn.python_function(
            x, function=lambda a: (a.astype(np.float32) / 2, a.sum()), num_outputs=2)
        sink = fn.python_function(x, function=lambda a: calls.append(a.tolist()), num_outputs=0)
        assert sink == ()
        return x, halves, sums

    pipe = make(graph, depth=1)
    for k in range(3):
        x, halves, sums = pipe.run()
        for i, (a, h, s) in enumerate(zip(arrays(x), arrays(halves), arrays(sums))):
            assert np.array_equal(a, source_sample(k, i))
            assert h.dtype == np.float32 and np.array_equal(h, a / 2)
            assert s.shape == () and s == a.sum()
        # the sink is never pruned: called once per sample, with the sample
        assert calls[-BS:] == [source_sample(k, i).tolist() for i in range(BS)]
    assert len(calls) == 3 * BS


def test_batch_processing_two_inputs_three_outputs():
    def mix(xs, ys):
        assert isinstance(xs, list) and len(xs) == BS
        return ([x + y for x, y in zip(xs, ys)], [x[::-1] for x in xs],
                np.stack([np.float64(x.max()) for x in xs]))  # one array: the batch its axis 0

    def graph(x):
        y = fn.python_function(x, function=lambda a: a * 3)
        s, r, m = fn.python_function(x, y, function=mix, num_outputs=3, batch_processing=True)
        return x, s, r, m

    pipe = make(graph)
    for k in range(3):
        x, s, r, m = pipe.run()
        for i, a in enumerate(arrays(x)):
            assert np.array_equal(np.array(s.at(i)), a * 4)
            assert np.array_equal(np.array(r.at(i)), a[::-1])
            assert np.array(m.at(i)).dtype == np.float64 and np.array(m.at(i)) == a.max()


def test_functions_without_inputs():
    @pipeline_def(batch_size=BS, num_threads=1, device_id=None, seed=1)
    def p():
        per_sample = fn.python_function(function=lambda: np.zeros((2, 2), np.uint8))
        per_batch = fn.python_function(
            function=lambda: [np.full(3, k, np.int16) for k in range(BS)], batch_processing=True)
        return per_sample, per_batch

    a, b = p().run()
    assert [x.tolist() for x in arrays(a)] == [[[0, 0], [0, 0]]] * BS
    assert [x.tolist() for x in arrays(b)] == [[k] * 3 for k in range(BS)]
    assert np.array(b.at(0)).dtype == np.int16


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.uint16, np.uint32, np.uint64, np.float16, np.float32,
                                   np.float64])
def test_every_dtype_reaches_the_function_and_comes_back(dtype):
    seen = []

    def check(a):
        seen.append(a.dtype)
        return a

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def p():
        x = fn.external_source(source=lambda: [np.ones((2, 3), dtype)] * 2)
        return fn.python_function(x, function=check)

    (out,) = p().run()
    assert seen[0] == np.dtype(dtype)
    assert np.array(out.at(1)).dtype == np.dtype(dtype)
    assert np.array_equal(np.array(out.at(1)), np.ones((2, 3), dtype))


def test_the_function_owns_copies_of_its_inputs():
    kept = []

    def modify(a):
        a += 1  # its own copy: writable, and the pipeline's x is untouched
        kept.append(a)
        return a

    pipe = make(lambda x: (x, fn.python_function(x, function=modify)))
    x, y = pipe.run()
    for i, (a, b) in enumerate(zip(arrays(x), arrays(y))):
        assert np.array_equal(a, source_sample(0, i))
        assert np.array_equal(b, source_sample(0, i) + 1)
    pipe.run()
    pipe.run()
    assert np.array_equal(kept[0], source_sample(0, 0) + 1)  # still valid later


def test_output_layouts_follow_dalis_rules():
    def graph(x):
        x2 = fn.python_function(x, function=lambda a: np.tile(a, (2, 1)))  # 2-D samples
        o1, o2 = fn.python_function(x2, function=lambda a: (a, a[0]), num_outputs=2,
                                    output_layouts=["AB", "C"])
        o3, o4 = fn.python_function(x2, function=lambda a: (a, a * 2), num_outputs=2,
                                    output_layouts="DE")
        o5, o6 = fn.python_function(x2, function=lambda a: (a, a * 2), num_outputs=2,
                                    output_layouts=["FG"])
        return o1, o2, o3, o4, o5, o6

    outs = make(graph).run()
    assert [o.layout() for o in outs] == ["AB", "C", "DE", "DE", "FG", ""]


def test_layout_errors():
    with pytest.raises(RuntimeError, match="length of output_layouts.*greater than"):
        make(lambda x: fn.python_function(x, function=lambda a: a,
                                          output_layouts=["A", "B"])).build()
    pipe = make(lambda x: fn.python_function(x, function=lambda a: a, output_layouts="HW"),
                depth=1)
    with pytest.raises(sluice.InvalidArgumentError,
                       match=r'output_layouts\[0\] "HW" has 2 dimensions, but output 0 has 1'):
        pipe.run()


# ---- errors at their iteration ---------------------------------------------------------------

def failing_at(k):
    def bad_function(a):
        if a[0] == 100 * k + 10:  # sample 1 of iteration k
            raise ValueError(f"no good at {k}")
        return a * 2

    return bad_function


@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("batch", [False, True])
def test_an_exception_fails_its_iteration_with_the_traceback_and_the_pipeline_goes_on(depth,
                                                                                      batch):
    function = failing_at(2)
    if batch:
        per_sample = function
        function = lambda xs: [per_sample(a) for a in xs]  # noqa: E731
    pipe = make(lambda x: fn.python_function(x, function=function, batch_processing=batch,
                                             name="f"), depth=depth, threads=3)
    for k in range(6):
        if k != 2:
            (out,) = pipe.run()
            assert [a.tolist() for a in arrays(out)] == [
                (source_sample(k, i) * 2).tolist() for i in range(BS)]
            continue
        with pytest.raises(sluice.CallbackError) as info:
            pipe.run()
        e = info.value
        assert isinstance(e, RuntimeError)
        assert str(e) == 'python_function (node "f"): iteration 2: ValueError: no good at 2'
        assert (e.node, e.iteration, e.operator) == ("f", 2, "python_function")
        cause = e.__cause__
        assert isinstance(cause, ValueError) and str(cause) == "no good at 2"
        frames = traceback.extract_tb(cause.__traceback__)
        assert frames[-1].name == "bad_function" and frames[-1].filename == __file__


def test_dalis_invalid_function_message():
    def invalid_function(image):
        return img  # noqa: F821

    with pytest.raises(RuntimeError, match="NameError: name 'img' is not defined") as info:
        make(lambda x: fn.python_function(x, function=invalid_function)).run()
    assert isinstance(info.value.__cause__, NameError)


@pytest.mark.parametrize("function,num_outputs,batch,error,message", [
    (lambda a: [a, a], 2, False, TypeError, "must be a tuple, got: <class 'list'>"),
    (lambda a: (a, a, a), 2, False, ValueError,
     "Unexpected number of outputs from the Python function - got 3, expected 2"),
    (lambda a: None, 1, False, ValueError, "returned None for sample 0; 1 output was expected"),
    (lambda xs: xs[:-1], 1, True, ValueError,
     "returned a batch of 3 samples for output 0; the batch has 4"),
    (lambda a: ["ragged", 1], 1, False, TypeError, "not an array of numbers"),
    (lambda xs: (xs, 5), 2, True, TypeError, "a list of samples"),
])
def test_results_that_do_not_fit(function, num_outputs, batch, error, message):
    def graph(x):
        outs = fn.python_function(x, function=function, num_outputs=num_outputs,
                                  batch_processing=batch)
        return outs if isinstance(outs, tuple) else (outs,)

    pipe = make(graph, depth=1)
    with pytest.raises(sluice.CallbackError, match=message.replace("(", r"\(")) as info:
        pipe.run()
    assert isinstance(info.value.__cause__, error)


def test_samples_of_an_output_must_share_dtype_and_dimensions():
    pipe = make(lambda x: fn.python_function(
        x, function=lambda a: a.astype(np.float32) if a[0] % 100 == 20 else a), depth=1)
    with pytest.raises(sluice.InvalidArgumentError,
                       match="iteration 0, sample 2: output 0 is float32, but int32 in sample 0"):
        pipe.run()
    pipe = make(lambda x: fn.python_function(
        x, function=lambda a: a.reshape(1, -1) if a[0] == 10 else a), depth=1)
    with pytest.raises(sluice.InvalidArgumentError,
                       match="sample 1: output 0 has 2 dimensions, but 1 in sample 0"):
        pipe.run()
    (out,) = pipe.run()  # the next iteration is its own
    assert len(out) == BS


# ---- scheduling ------------------------------------------------------------------------------

def test_called_in_order_one_call_at_a_time_with_the_pipeline_current():
    log, busy, overlaps, currents = [], [], [], []

    def watched(tag):
        def f(a):
            if busy:
                overlaps.append((tag, a.tolist()))
            busy.append(tag)
            time.sleep(0.002)  # lets go of the GIL: another call could start now
            log.append((tag, int(a[0]) // 100, threading.get_ident()))
            currents.append(Pipeline.current())
            busy.pop()
            return a
        return f

    pipe = make(lambda x: (fn.python_function(x, function=watched("f")),
                           fn.python_function(x, function=watched("g"))), depth=3, threads=4)
    for _ in range(6):
        pipe.run()
    assert overlaps == []
    for tag in "fg":
        iterations = [k for t, k, _ in log if t == tag]
        assert iterations == sorted(iterations) and iterations[:6 * BS] == [
            k for k in range(6) for _ in range(BS)]
    assert threading.get_ident() not in {t for _, _, t in log}  # on the pipeline's threads
    assert all(c is pipe for c in currents)


def test_dalis_counter_with_two_pipelines_and_prefetch_1():
    counter = [0]

    def count(a):
        counter[0] += 1
        return np.full_like(a, counter[0])

    pipes = [make(lambda x: fn.python_function(x, function=count), depth=1) for _ in range(2)]
    for _ in range(4):
        counter[0] = 0
        (one,) = pipes[0].run()
        (two,) = pipes[1].run()
        assert counter[0] == 2 * BS
        assert sorted(int(a[0]) for a in arrays(one)) == list(range(1, BS + 1))
        assert sorted(int(a[0]) for a in arrays(two)) == list(range(BS + 1, 2 * BS + 1))


def test_exec_async_and_exec_pipelined_false_are_accepted():
    pipe = make(lambda x: fn.python_function(x, function=lambda a: a + 1), exec_async=False,
                exec_pipelined=False)
    (out,) = pipe.run()
    assert np.array_equal(np.array(out.at(3)), source_sample(0, 3) + 1)


# ---- the graph's rules -----------------------------------------------------------------------

def test_needs_a_current_pipeline_and_no_input_sets():
    x = types.Constant(np.int32(1), device="cpu")
    with pytest.raises(RuntimeError, match="Current Pipeline not set"):
        fn.python_function(x, function=lambda a: a)
    pipe = Pipeline(batch_size=2, num_threads=1)
    with pipe, pytest.raises(TypeError, match="do not support multiple input sets"):
        fn.python_function([x, x], function=lambda a: a)
    with pipe, pytest.raises(TypeError, match="`function` must be callable"):
        fn.python_function(x, function=3)
    with pipe, pytest.raises(sluice.UnsupportedError, match="operator has no gpu implementation"):
        fn.python_function(x, function=lambda a: a, device="gpu")


def test_serialize_is_refused_naming_the_node():
    pipe = make(lambda x: fn.python_function(x, function=lambda a: a, name="mine"))
    with pytest.raises(sluice.UnsupportedError,
                       match='node "mine" \\(python_function\\) cannot be serialized: its Python '
                             'function'):
        pipe.serialize()
    (out,) = pipe.run()  # the pipeline itself still runs
    assert len(out) == BS


def test_a_spec_with_python_function_fails_at_build():
    spec = ('{"pipeline": {"batch_size": 2}, "nodes": [{"name": "f", "op": "python_function"}],'
            ' "outputs": ["f"]}')
    pipe = Pipeline.deserialize(spec)
    with pytest.raises(sluice.UnsupportedError, match='python_function \\(node "f"\\): needs a '
                                                      'Python callable: build it from Python'):
        pipe.build()


def test_ops_classes():
    class P(Pipeline):
        def __init__(self):
            super().__init__(batch_size=BS, num_threads=2, device_id=None, seed=1)
            self.src = ops.ExternalSource(source=counting_source, batch=False)
            self.twice = ops.PythonFunction(function=self.twice_it, output_layouts="X")
            self.split = ops.PythonFunction(function=lambda a: (a[:1], a[1:]), num_outputs=2)

        def twice_it(self, a):
            return a * 2

        def define_graph(self):
            x = self.src()
            head, tail = self.split(x)
            return self.twice(x), head, tail

    pipe = P()
    twice, head, tail = pipe.run()
    assert twice.layout() == "X"
    for i in range(BS):
        assert np.array_equal(np.array(twice.at(i)), source_sample(0, i) * 2)
        assert np.array_equal(np.concatenate([np.array(head.at(i)), np.array(tail.at(i))]),
                              source_sample(0, i))
    op = ops.PythonFunction(function=np.abs, output_layouts="X")
    with Pipeline(batch_size=1, num_threads=1), pytest.raises(ValueError, match="already"):
        op(types.Constant(np.int32(1), device="cpu"), output_layouts="Y")
    # the pipeline refers to itself through its bound method: the collector still frees it
    ref = weakref.ref(pipe)
    del pipe, twice, head, tail
    gc.collect()
    assert ref() is None


# ---- DLPack ----------------------------------------------------------------------------------

def test_dlpack_helpers_round_trip_strided_arrays():
    array = np.arange(0, 10, 0.5).reshape((2, 10, 1))
    view = array[:, 2:5, :]
    back = ops._dlpack_to_array(ops._dlpack_from_array(view))
    assert back.shape == view.shape and np.array_equal(back, view)


def test_dl_tensor_python_function_with_torch():
    def flip_batch(xs):  # per batch by default, as DALI's
        assert isinstance(xs, list) and all(type(c).__name__ == "PyCapsule" for c in xs)
        return [torch.flip(torch.from_dlpack(c), dims=[0]) * 10 for c in xs]

    def per_sample(c):
        t = torch.from_dlpack(c)
        return (torch.utils.dlpack.to_dlpack(t.to(torch.float64) + 0.5),
                ops._dlpack_from_array(np.array([t.numel()])))

    def graph(x):
        flipped = fn.dl_tensor_python_function(x, function=flip_batch)
        plus, count = fn.dl_tensor_python_function(x, function=per_sample, num_outputs=2,
                                                   batch_processing=False)
        return flipped, plus, count

    pipe = make(graph)
    for k in range(2):
        flipped, plus, count = pipe.run()
        for i in range(BS):
            a = source_sample(k, i)
            assert np.array_equal(np.array(flipped.at(i)), a[::-1] * 10)
            assert np.array(plus.at(i)).dtype == np.float64
            assert np.array_equal(np.array(plus.at(i)), a + 0.5)
            assert np.array(count.at(i)).tolist() == [len(a)]
    # bool, which NumPy 1.x does not export or read as DLPack: sluice's capsules carry it
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def bools():
        x = fn.external_source(source=lambda: [np.array([True, False])] * 2)
        return fn.dl_tensor_python_function(
            x, function=lambda cs: [sluice.TensorCPU(c).__dlpack__() for c in cs])

    (out,) = bools().run()
    assert np.array(out.at(1)).tolist() == [True, False]
    op = ops.DLTensorPythonFunction(function=lambda xs: xs, num_outputs=2)
    with pytest.raises(sluice.CallbackError, match="must be a tuple"):
        make(lambda x: op(x)).run()


# ---- lifetime --------------------------------------------------------------------------------

def test_deleting_a_pipeline_while_its_function_runs():
    def slow(a):
        time.sleep(0.02)
        return a

    for _ in range(5):
        with Pipeline(batch_size=1, num_threads=1, device_id=None) as pipe:
            pipe.set_outputs(fn.python_function(types.Constant(0), function=slow))
        pipe.run()  # the next iteration is in flight now
        ref = weakref.ref(pipe)
        del pipe
        # the call in flight holds it (it is current there) and lets it go when it returns, on
        # the pipeline's own thread, which then cannot destroy it: another thread does
        deadline = time.monotonic() + 10
        while ref() is not None and time.monotonic() < deadline:
            gc.collect()
            time.sleep(0.01)
        assert ref() is None


@pytest.mark.parametrize("keep", ["global", "local"])
def test_leaving_the_interpreter_with_a_call_in_flight(keep):
    script = textwrap.dedent(f"""
        import time, numpy as np
        from sluice import fn, pipeline_def

        def slow(a):
            time.sleep(0.2)
            return a

        @pipeline_def(batch_size=2, num_threads=2, device_id=None, prefetch_queue_depth=3)
        def p():
            return fn.python_function(fn.random.uniform(range=[0, 1]), function=slow)

        def main():
            pipe = p()
            pipe.run()
            return pipe

        if "{keep}" == "global":
            pipe = main()
        else:
            main()
        print("done", flush=True)
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "done"


def test_the_picture_shows_each_output_and_the_kept_sink():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def p():
        x = fn.external_source(source=lambda: [np.zeros(2)] * 2, name="src")
        a, b = fn.python_function(x, function=lambda v: (v, v), num_outputs=2, name="f")
        fn.python_function(a, function=lambda v: None, num_outputs=0, name="sink")
        return b

    dot = p().graph()
    assert 'n2 [label="sink\\npython_function\\ncpu"' in dot  # kept although nothing reads it
    assert 'n1 -> n2 [label="0"];' in dot and 'n1 -> out0 [label="1"];' in dot


def test_a_node_adopted_by_another_pipeline_calls_its_function_there_too():
    seen = []

    def double(v):
        seen.append(int(v))
        return v * 2

    a = Pipeline(batch_size=2, num_threads=1, device_id=None, seed=1)
    with a:
        y = fn.python_function(types.Constant(np.int32(3), device="cpu"), function=double)
        a.set_outputs(y)
    b = Pipeline(batch_size=2, num_threads=1, device_id=None, seed=1)
    b.set_outputs(y + 1)  # b adopts the node, function and all
    assert np.array(a.run()[0].at(0)) == 6 and np.array(b.run()[0].at(1)) == 7
    assert seen[:2] == [3, 3] and len(seen) >= 4  # each pipeline calls it per sample
