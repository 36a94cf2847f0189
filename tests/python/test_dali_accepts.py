"""tests/python/test_dali_accepts.py: what DALI still accepts, and sluice with it (issue 16.5).

Modelled on DALI's own tests (test_pipeline.py's deprecated arguments, operator_1/test_join.py,
operator_2/test_transpose.py, test_external_source_impl.py's cycling), with NumPy references:

- deprecated argument names (crop_mirror_normalize's output_dtype and image_type, ...): the
  value goes where DALI sends it, a DeprecationWarning in DALI's words is issued, an alias
  given together with its current name is a TypeError; the spec written afterwards has the
  current name only;
- cat / stack of any number of inputs (100, as DALI's test), 0-d samples stacked with an
  axis_name;
- transpose without perm reverses the axes (0-d included), transpose_layout=False keeps the
  input layout;
- external_source cycle="raise" with a list and a generator function, cycle over a generator
  object refused.
"""
import functools
import json
import warnings

import numpy as np
import pytest

import sluice
from sluice import Pipeline, fn, ops, pipeline_def, types


def _run(pipe):
    pipe.build()
    return pipe.run()


# ---- deprecated argument names -------------------------------------------------------------

def _image_batch():
    rng = np.random.default_rng(7)
    return [rng.integers(0, 256, (6, 8, 3), dtype=np.uint8) for _ in range(2)]


def _cmn_pipe(**cmn_args):
    data = _image_batch()

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(lambda: data, layout="HWC")
        return fn.crop_mirror_normalize(x, mean=[10.0], std=[2.0], **cmn_args)

    return pipe(), data


def test_output_dtype_is_dtype_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning) as rec:
        pipe, data = _cmn_pipe(output_dtype=types.FLOAT16, output_layout="HWC")
    assert [str(w.message) for w in rec] == [
        "The argument ``output_dtype`` is a deprecated alias for ``dtype``. Use ``dtype`` "
        "instead."]
    (out,) = _run(pipe)
    assert out.dtype == types.FLOAT16
    for i, img in enumerate(data):
        ref = ((img.astype(np.float32) - 10.0) / 2.0).astype(np.float16)
        np.testing.assert_array_equal(out.at(i), ref)


def test_removed_argument_is_ignored_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning,
                      match="``image_type`` is no longer used and will be removed"):
        pipe, data = _cmn_pipe(image_type=types.RGB, output_layout="HWC")
    (out,) = _run(pipe)
    assert out.dtype == types.FLOAT  # the default: nothing else changed
    np.testing.assert_allclose(out.at(1), (data[1].astype(np.float32) - 10.0) / 2.0)


def test_alias_and_current_name_together_is_a_type_error():
    with pytest.raises(TypeError, match='"output_dtype" is a deprecated alias for "dtype", '
                                        'which is given too'):
        _cmn_pipe(output_dtype=types.FLOAT16, dtype=types.FLOAT)


def test_ops_api_and_other_operators_accept_aliases():
    data = [np.arange(24, dtype=np.uint8).reshape(4, 6, 1)]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(lambda: data, layout="HWC")
        with pytest.warns(DeprecationWarning) as rec:
            a = ops.Crop(crop=(2, 3), crop_pos_x=0.0, crop_pos_y=0.0, output_dtype=types.FLOAT)(x)
            b = fn.slice(x, start=[1], shape=[2], axes=[0], output_dtype=types.INT32,
                         image_type=types.GRAY)
            c = fn.rotate(x, angle=0.0, output_dtype=types.FLOAT)
        assert [str(w.message).split("``")[1] for w in rec] == [
            "output_dtype", "output_dtype", "image_type", "output_dtype"]
        return a, b, c

    a, b, c = _run(pipe())
    assert (a.dtype, b.dtype, c.dtype) == (types.FLOAT, types.INT32, types.FLOAT)
    np.testing.assert_array_equal(a.at(0), data[0][:2, :3].astype(np.float32))
    np.testing.assert_array_equal(b.at(0), data[0][1:3].astype(np.int32))


def test_the_registry_lists_the_aliases_and_the_spec_has_current_names():
    cmn = fn.crop_mirror_normalize._schema
    aliases = {a["name"]: a["renamed_to"] for a in cmn["aliases"]}
    assert aliases == {"output_dtype": "dtype", "image_type": None}
    with pytest.warns(DeprecationWarning):
        pipe, _ = _cmn_pipe(output_dtype=types.FLOAT16, image_type=types.BGR)
    spec = json.loads(pipe.serialize())
    (node,) = [n for n in spec["nodes"] if n["op"] == "crop_mirror_normalize"]
    assert "output_dtype" not in node["args"] and "image_type" not in node["args"]
    assert node["args"]["dtype"] in ("float16", "FLOAT16")


def test_alias_outside_a_pipeline_warns_once_at_the_call():
    data = _image_batch()
    x = fn.external_source(lambda: data, layout="HWC")  # no pipeline being defined
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        y = fn.crop_mirror_normalize(x, output_dtype=types.FLOAT16, output_layout="HWC")
        pipes = []
        for _ in range(2):  # adopted by two pipelines: replayed, no warning again
            p = Pipeline(batch_size=2, num_threads=1, device_id=None)
            p.set_outputs(y)
            pipes.append(p)
        outs = [p.run()[0] for p in pipes]
    assert [w.category for w in rec] == [DeprecationWarning]
    for out in outs:
        assert out.dtype == types.FLOAT16
        np.testing.assert_array_equal(out.at(0), data[0].astype(np.float16))


def test_a_shown_warning_even_where_deprecation_warnings_are_ignored():
    # DALI shows its deprecation warnings whatever the filters (catch_warnings + "default")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("ignore")
        _cmn_pipe(output_dtype=types.FLOAT)
    assert [w.category for w in rec] == [DeprecationWarning]


# ---- cat and stack: any number of inputs --------------------------------------------------

@pytest.mark.parametrize("num_inputs", [1, 3, 17, 100])
def test_cat_and_stack_any_number_of_inputs(num_inputs):
    rng = np.random.default_rng(num_inputs)
    batches = [[rng.random((2, int(rng.integers(1, 4)), 3), dtype=np.float32) for _ in range(3)]
               for _ in range(num_inputs)]
    same = [[rng.random((2, 3), dtype=np.float32) for _ in range(3)] for _ in range(num_inputs)]

    @pipeline_def(batch_size=3, num_threads=2, device_id=None)
    def pipe():
        ins = fn.external_source(lambda: batches, num_outputs=num_inputs, layout="HWC")
        sins = fn.external_source(lambda: same, num_outputs=num_inputs, layout="HW")
        return (fn.cat(*ins, axis_name="W"), fn.stack(*sins, axis=1, axis_name="N"),
                fn.stack(*sins, axis=-1))

    cat, stack, stack_last = _run(pipe())
    assert cat.layout() == "HWC" and stack.layout() == "HNW" and stack_last.layout() == ""
    for i in range(3):
        np.testing.assert_array_equal(cat.at(i), np.concatenate([b[i] for b in batches], 1))
        np.testing.assert_array_equal(stack.at(i), np.stack([b[i] for b in same], 1))
        np.testing.assert_array_equal(stack_last.at(i), np.stack([b[i] for b in same], -1))


def test_stack_of_scalars_with_axis_name():
    vals = [[np.float32(10 * k + i) for i in range(4)] for k in range(3)]

    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def pipe():
        ins = fn.external_source(lambda: vals, num_outputs=3)
        return fn.stack(*ins, axis_name="C"), fn.stack(*ins, axis=-1, axis_name="C")

    a, b = _run(pipe())
    assert a.layout() == "C" and b.layout() == "C"
    for i in range(4):
        np.testing.assert_array_equal(a.at(i), np.stack([v[i] for v in vals]))
        np.testing.assert_array_equal(b.at(i), np.stack([v[i] for v in vals], -1))


def test_cat_needs_an_input():
    with pytest.raises(TypeError, match="expects at least 1 input, got 0"):
        with Pipeline(batch_size=1, num_threads=1, device_id=None):
            fn.cat()


# ---- transpose without perm ----------------------------------------------------------------

@pytest.mark.parametrize("shape", [(10, 20, 3), (10, 20), (1,), (), (3, 3, 2, 2, 3)])
def test_transpose_default_reverses_the_axes(shape):
    # DALI's test_transpose_default: fn.transpose(x) == fn.transpose(x, perm=reversed)
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3)
    def pipe():
        data = fn.random.uniform(range=[0, 255], shape=shape)
        perm = list(range(len(shape)))[::-1]
        return data, fn.transpose(data), fn.transpose(data, perm=perm)

    data, out_default, out_explicit = _run(pipe())
    for i in range(2):
        ref = np.transpose(np.asarray(data.at(i)))
        np.testing.assert_array_equal(out_default.at(i), ref)
        np.testing.assert_array_equal(out_explicit.at(i), ref)


@pytest.mark.parametrize("perm,in_layout,transpose_layout,out_layout_arg,expected", [
    ((2, 0, 1), "HWC", True, None, "CHW"),
    ((2, 0, 1), "HWC", True, "CHW", "CHW"),
    ((2, 0, 1), "HWC", False, "CHW", "CHW"),
    ((1, 0, 2), None, False, None, ""),
    ((1, 0, 2), "XYZ", True, None, "YXZ"),
    ((1, 0, 2), "XYZ", False, None, "XYZ"),  # DALI: the input layout is copied
    ((1, 0, 2), None, None, "ABC", "ABC"),
    (None, "HWC", True, None, "CWH"),
])
def test_transpose_layout(perm, in_layout, transpose_layout, out_layout_arg, expected):
    # DALI's test_transpose_layout, fed through feed_input like DALI's TransposePipeline
    x = np.arange(2 * 3 * 4, dtype=np.int16).reshape(2, 3, 4)
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        data = fn.external_source(name="x")
        pipe.set_outputs(fn.transpose(data, perm=perm, transpose_layout=transpose_layout,
                                      output_layout=out_layout_arg))
    pipe.build()
    pipe.feed_input("x", [x], layout=in_layout)
    (out,) = pipe.run()
    assert out.layout() == expected
    np.testing.assert_array_equal(out.at(0), np.transpose(x, perm))


# ---- external_source: cycle ------------------------------------------------------------------

def test_cycle_raise_with_a_list_and_a_generator_function():
    # DALI's test_external_source_collection_cycling_raise
    batches = [[np.array([1.5, 2.5], dtype=np.float32)],
               [np.array([-1, 3.5, 4.5], dtype=np.float32)]]

    def batch_gen():
        yield from batches

    pipe = Pipeline(1, 3, None, prefetch_queue_depth=1)
    with pipe:
        pipe.set_outputs(fn.external_source(batches, cycle="raise"),
                         fn.external_source(batch_gen, cycle="raise"))
    pipe.build()
    for _ in range(3):
        for b in batches:
            a, g = pipe.run()
            np.testing.assert_array_equal(a.at(0), b[0])
            np.testing.assert_array_equal(g.at(0), b[0])
        with pytest.raises(StopIteration):
            pipe.run()
        pipe.reset()


def test_cycle_quiet_with_a_partial_generator_function():
    # DALI's test_external_source_gen_function_partial: a partial of a generator function
    # is a generator function
    def gen(base):
        for i in range(5):
            yield [np.array([i + base], dtype=np.float32)]

    class GenCallable:  # an object whose __call__ is a generator function counts too
        def __call__(self):
            yield from gen(10.0)

    pipe = Pipeline(1, 3, None)
    with pipe:
        pipe.set_outputs(fn.external_source(functools.partial(gen, 1.5), cycle=True),
                         fn.external_source(GenCallable(), cycle="quiet"))
    pipe.build()
    for _ in range(3):
        for i in range(5):
            a, b = pipe.run()
            np.testing.assert_array_equal(a.at(0), [i + 1.5])
            np.testing.assert_array_equal(b.at(0), [i + 10.0])


def test_cycle_over_a_generator_object_is_refused():
    # DALI's test_external_source_generator_cycle_error
    def gen():
        for i in range(5):
            yield [np.array([i + 1.5], dtype=np.float32)]

    _ = Pipeline(1, 3, None)  # DALI's test calls it outside any pipeline definition
    fn.external_source(gen(), cycle=False)  # no cycle: fine
    with pytest.raises(TypeError, match="Cannot cycle through a generator - .* pass that "
                                        "function instead as `source`."):
        fn.external_source(gen(), cycle=True)
    with pytest.raises(ValueError, match="Invalid value|cycle must be"):
        fn.external_source(gen, cycle="sometimes")


# ---- the decoders' nvJPEG tuning arguments ---------------------------------------------------

_RN50_TUNING = dict(device_memory_padding=211025920, host_memory_padding=140544512,
                    preallocate_width_hint=5980, preallocate_height_hint=6430,
                    hw_decoder_load=0.65, hybrid_huffman_threshold=1000000, affine=True,
                    jpeg_fancy_upsampling=True, device_memory_padding_jpeg2k=0,
                    host_memory_padding_jpeg2k=0)


@pytest.mark.parametrize("op", ["image", "image_random_crop"])
def test_decoder_tuning_arguments_build_and_change_no_pixel(tree, op):
    # DALI's ResNet-50 pipeline passes nvJPEG's memory and load tuning to its decoders; they
    # must build unchanged, without a warning, and give the bytes of the plain decode
    def pipe(**tuning):
        @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=11)
        def p():
            jpegs, _ = fn.readers.file(file_root=str(tree))
            return getattr(fn.decoders, op)(jpegs, output_type=types.RGB, **tuning)
        return p()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tuned = _run(pipe(**_RN50_TUNING))[0]
    plain = _run(pipe())[0]
    for i in range(4):
        assert np.array_equal(np.asarray(tuned.at(i)), np.asarray(plain.at(i)))
    with pytest.raises(ValueError, match="hw_decoder_load"):
        _run(pipe(hw_decoder_load=1.5))
