"""tests/python/test_tensors.py: outputs as DALI returns them (issue 16.4) — TensorCPU, the
TensorListCPU API around it, TensorListCPU made from NumPy data, and DataNode.shape().

Modelled on DALI's test_backend_impl.py (TensorCPU / TensorListCPU API, squeeze, str, DLPack)
and test_pipeline.py's output checks; references are NumPy. Zero copy is proven by addresses
(data_ptr, __array_interface__, DLPack), the memory-safety rule by views that keep their values
while the pipeline runs on (the iteration is set aside, not overwritten).
"""
import gc
import warnings

import numpy as np
import pytest
import torch

import sluice
from sluice import fn, pipeline_def, types
from sluice.tensors import TensorCPU, TensorListCPU


def feed_pipe(batches, depth=2, layout=None):
    it = iter(batches)

    @pipeline_def(batch_size=len(batches[0]), num_threads=2, prefetch_queue_depth=depth,
                  device_id=None)
    def p():
        return fn.external_source(source=lambda: next(it), layout=layout)

    return p()


def ragged(k=0):
    return [np.arange(np.prod(s), dtype=np.int16).reshape(s) + 100 * k
            for s in ((2, 3, 4), (1, 5, 4), (3, 1, 4))]


# ---- TensorCPU from a pipeline output -------------------------------------------------------

def test_indexing_gives_tensors_and_at_gives_arrays():
    src = ragged()
    (tl,) = feed_pipe([src], depth=1, layout="DHW").run()
    assert type(tl[0]) is TensorCPU and type(tl[-3]) is TensorCPU
    assert type(tl.at(0)) is np.ndarray
    assert [type(t) for t in tl] == [TensorCPU] * 3 and len(list(tl)) == len(tl) == 3
    for i, t in enumerate(tl):
        assert t.shape() == list(src[i].shape) and t.ndim() == 3
        assert t.layout() == "DHW" and t.dtype == types.INT16
        np.testing.assert_array_equal(np.array(t), src[i])
        np.testing.assert_array_equal(tl.at(i), src[i])
    for bad in (3, -4):
        with pytest.raises(IndexError, match="out of range"):
            tl[bad]
    assert tl.as_cpu() is tl and tl.ndim() == 3


def test_tensor_views_are_zero_copy():
    src = [np.arange(12, dtype=np.float32).reshape(3, 4) + i for i in range(4)]
    (tl,) = feed_pipe([src], depth=1).run()
    base = tl.data_ptr()
    for i in range(4):
        t = tl[i]
        addr = base + i * 12 * 4
        assert t.data_ptr() == addr
        assert np.asarray(t).__array_interface__["data"][0] == addr
        assert t.__array_interface__ == {"typestr": "<f4", "shape": (3, 4), "data": (addr, False),
                                         "version": 3, "strides": None}
        assert np.from_dlpack(t).__array_interface__["data"][0] == addr
        assert torch.from_dlpack(t).data_ptr() == addr
        assert memoryview(t).shape == (3, 4) and memoryview(t).format == "f"
        assert t.__dlpack_device__() == (1, 0)
    whole = tl.as_tensor()
    assert whole.shape() == [4, 3, 4] and whole.data_ptr() == base
    np.testing.assert_array_equal(np.array(whole), np.stack(src))
    flat = tl.as_reshaped_tensor([48])
    assert flat.shape() == [48] and flat.data_ptr() == base and flat.layout() == ""
    np.testing.assert_array_equal(np.array(flat), np.stack(src).ravel())
    with pytest.raises(sluice.InvalidArgumentError, match="volume"):
        tl.as_reshaped_tensor([47])


def test_layout_of_the_whole_batch_tensor():
    src = [np.zeros((2, 2, 3), np.uint8)] * 2
    (tl,) = feed_pipe([src], depth=1, layout="HWC").run()
    assert tl.as_tensor().layout() == "NHWC"  # DALI: N + the sample layout
    assert tl.as_reshaped_tensor([2, 2, 2, 3]).layout() == "NHWC"
    assert tl.as_reshaped_tensor([4, 6]).layout() == ""


def test_ragged_batch_has_no_whole_tensor():
    (tl,) = feed_pipe([ragged()], depth=1).run()
    with pytest.raises(sluice.InvalidArgumentError, match="not one dense tensor"):
        tl.as_tensor()
    np.testing.assert_array_equal(np.array(tl[1]), ragged()[1])


def test_tensors_keep_their_iteration_while_the_pipeline_runs_on():
    batches = [[np.full((16, 16), 10 * k + i, dtype=np.int32) for i in range(3)]
               for k in range(8)]
    pipe = feed_pipe(batches, depth=2)
    (tl,) = pipe.run()
    t, whole = tl[2], tl.as_tensor()
    arr = np.asarray(tl[1])
    del tl
    pipe.release_outputs()
    for k in range(1, 6):  # more iterations than the depth while iteration 0 is held
        (other,) = pipe.run()
        assert np.asarray(other[0])[0, 0] == 10 * k
        del other
    assert (np.asarray(t) == 2).all() and (arr == 1).all()
    np.testing.assert_array_equal(np.array(whole)[:, 0, 0], [0, 1, 2])
    del t, whole, arr
    gc.collect()
    for k in range(6, 8):
        assert pipe.run()[0].at(2)[0, 0] == 10 * k + 2


def test_source_info_and_properties(tree_files, tree):
    pipe = sluice.Pipeline(batch_size=3, num_threads=1, device_id=None)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=str(tree))
        pipe.set_outputs(fn.decoders.image(jpegs), labels)
    images, labels = pipe.run()
    for i in range(3):
        t = images[i]
        assert t.source_info() == tree_files[i][0] == images.source_info(i)
        assert t.get_property("source_info") == tree_files[i][0]
        assert t.get_property("layout") == "HWC"
        assert labels[i].get_property("layout") is None  # DALI: None for an empty layout
        assert int(np.asarray(labels[i])[0]) == tree_files[i][1]


def test_str_and_repr_follow_dali():
    (tl,) = feed_pipe([[np.arange(4, dtype=np.int64).reshape(2, 2)] * 2], depth=1,
                      layout="HW").run()
    assert str(tl[0]) == ("TensorCPU(\n    [[0 1]\n     [2 3]],\n    dtype=DALIDataType.INT64,\n"
                          "    layout=HW,\n    shape=[2, 2])")
    assert repr(tl[0]) == ("TensorCPU(\n    dtype=DALIDataType.INT64,\n    layout=HW,\n"
                           "    shape=[2, 2])")
    assert str(tl).startswith("TensorListCPU(\n    [[[0 1]\n")
    assert str(tl).endswith('dtype=DALIDataType.INT64,\n    layout="HW",\n    num_samples=2,\n'
                            "    shape=[(2, 2), (2, 2)])")


def test_dtype_is_a_member_and_calling_it_is_deprecated():
    (tl,) = feed_pipe([[np.zeros(3, np.float16)]], depth=1).run()
    assert tl[0].dtype == types.FLOAT16 and tl.dtype == types.FLOAT16
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert tl[0].dtype() == "<f2"
    assert str(w[-1].message) == "Calling '.dtype()' is deprecated, please use '.dtype' instead"


# ---- TensorCPU and TensorListCPU made from Python data -------------------------------------

def test_tensor_wraps_numpy_without_a_copy():
    arr = np.random.rand(3, 5, 6)
    t = TensorCPU(arr, "NHWC")
    np.testing.assert_array_equal(np.array(t), arr)
    assert t.data_ptr() == arr.ctypes.data and t.layout() == "NHWC"
    arr[0, 0, 0] = 42.0
    assert np.asarray(t)[0, 0, 0] == 42.0  # the same memory
    del arr
    gc.collect()
    assert np.asarray(t)[0, 0, 0] == 42.0  # kept alive by the tensor
    ro = TensorCPU(b"\x01\x02\x03")
    assert ro.shape() == [3] and ro.dtype == types.UINT8
    assert not np.asarray(ro).flags.writeable


def test_array_protocol_copy_argument():
    """NumPy 2 passes copy= to __array__: None and False give the tensor's own memory, True a
    copy, and a dtype that needs a copy with copy=False is a ValueError (NumPy 2's rule for
    np.asarray(x, dtype, copy=False)); NumPy 1.x passes only the dtype."""
    arr = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = TensorCPU(arr)
    for kw in ({}, {"copy": None}, {"copy": False}, {"dtype": np.int32, "copy": False}):
        v = t.__array__(**kw)
        assert v.ctypes.data == arr.ctypes.data and v.dtype == np.int32, kw
    c = t.__array__(copy=True)
    assert c.ctypes.data != arr.ctypes.data
    np.testing.assert_array_equal(c, arr)
    f = t.__array__(np.float64)
    assert f.dtype == np.float64 and f.ctypes.data != arr.ctypes.data
    np.testing.assert_array_equal(f, arr.astype(np.float64))
    with pytest.raises(ValueError, match="copy=False"):
        t.__array__(np.float64, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        t.__array__(dtype=np.float64, copy=False)


@pytest.mark.parametrize("t", [np.bool_, np.int_, np.intc, np.intp, np.int8, np.int16,
                               np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                               np.float32, np.float16, np.float64, np.short, np.longlong,
                               np.ushort, np.ulonglong])
def test_array_types(t):
    arr = np.array([[-0.39, 1.5], [-1.5, 0.33]], dtype=t)
    tensor = TensorCPU(arr, "NHWC")
    assert np.asarray(tensor).dtype == arr.dtype
    np.testing.assert_array_equal(np.asanyarray(tensor), arr)
    assert tensor.dtype.to_numpy() == arr.dtype


def test_tensor_from_dlpack_capsules():
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    t = TensorCPU(a.__dlpack__())
    assert t.shape() == [2, 3] and t.data_ptr() == a.ctypes.data
    t2 = TensorCPU(t.__dlpack__())  # DALI's test_dlpack_reimport
    assert t2.shape() == t.shape() and t2.data_ptr() == t.data_ptr() and t2.dtype == t.dtype
    tt = torch.arange(6, dtype=torch.float32)
    t3 = TensorCPU(tt)  # an object with __dlpack__
    assert t3.data_ptr() == tt.data_ptr()
    np.testing.assert_array_equal(np.asarray(t3), tt.numpy())


@pytest.mark.parametrize("dim,shape,in_layout,out_layout", [
    (None, (3, 5, 6), "ABC", "ABC"), (None, (3, 1, 6), "ABC", "AC"), (1, (3, 1, 6), "ABC", "AC"),
    (-2, (3, 1, 6), "ABC", "AC"), (None, (1, 1, 6), "ABC", "C"), (1, (1, 1, 6), "ABC", "AC"),
    (None, (1, 1, 1), "ABC", ""), (None, (1, 5, 1), "ABC", "B"), (-1, (1, 5, 1), "ABC", "AB"),
    (0, (1, 5, 1), "ABC", "BC"), (None, (3, 5, 1), "ABC", "AB")])
def test_squeeze(dim, shape, in_layout, out_layout):
    # DALI's test_tensor_cpu_squeeze
    arr = np.random.rand(*shape)
    t = TensorCPU(arr, in_layout)
    changed = t.squeeze(dim)
    ref = arr.squeeze(dim)
    assert tuple(t.shape()) == ref.shape and t.layout() == out_layout
    assert t.get_property("layout") == (out_layout or None)
    np.testing.assert_array_equal(np.array(t), ref)
    assert changed == (len(out_layout) < len(in_layout))


def test_tensorlist_from_numpy():
    arr = np.random.rand(3, 5, 6)
    tl = TensorListCPU(arr, "HW")
    np.testing.assert_array_equal(tl.as_array(), arr)
    assert tl.shape() == [(5, 6)] * 3 and tl.layout() == "HW" and tl.iteration is None
    np.testing.assert_array_equal(np.array(tl.as_tensor()), arr)
    assert tl.as_array().__array_interface__["data"][0] == tl.data_ptr()  # a view of its copy
    del arr
    gc.collect()
    assert tl.as_array().shape == (3, 5, 6)
    one = TensorListCPU([np.ones((2, 2), np.uint8) * 7], "HW")
    np.testing.assert_array_equal(one.as_array(), np.full((1, 2, 2), 7, np.uint8))
    empty = TensorListCPU(np.array([], dtype=np.float32))
    assert len(empty) == 0 and empty.as_array().shape == (0,)
    assert np.array(TensorCPU(np.array([], dtype=np.float32))).shape == (0,)
    with pytest.raises(sluice.InvalidArgumentError, match="0-dim"):
        TensorListCPU(np.float32(1.5))


def test_tensorlist_from_a_list_of_tensors():
    arrays = [np.random.rand(*s) for s in ((1, 2, 3), (4, 5, 6), (8, 8, 8))]
    tl = TensorListCPU([TensorCPU(a) for a in arrays])
    assert tl.shape() == [a.shape for a in arrays] and not tl.is_dense_tensor()
    for a, t in zip(arrays, tl):
        np.testing.assert_array_equal(a, t)
    same = np.random.rand(4, 3)
    np.testing.assert_array_equal(TensorListCPU([TensorCPU(a) for a in same]).as_array(),
                                  TensorListCPU(same).as_array())


def test_tensorlist_construction_errors_in_dalis_words():
    with pytest.raises(TypeError, match="Object at position 1 cannot be converted to TensorCPU"):
        TensorListCPU([np.zeros(1), object()])
    with pytest.raises(TypeError, match="Tensors cannot have different data types. Tensor at "
                                        "position 1 has type '.*' expected to have type '.*'."):
        TensorListCPU([TensorCPU(np.zeros(1, np.float32)), TensorCPU(np.zeros(1, np.int8))])


@pytest.mark.parametrize("data,text", [
    (np.empty(0), "TensorListCPU(\n    [],\n    dtype=DALIDataType.FLOAT64,\n    num_samples=0,\n"
                  "    shape=[])"),
    (np.arange(10), "TensorListCPU(\n    [0 1 2 3 4 5 6 7 8 9],\n    dtype=DALIDataType.INT64,\n"
                    "    num_samples=10,\n    shape=[(), (), (), (), (), (), (), (), (), ()])"),
])
def test_tensorlist_str(data, text):
    assert str(TensorListCPU(data)) == text


def test_tensor_str():
    assert str(TensorCPU(np.empty(0))) == ("TensorCPU(\n    [],\n    dtype=DALIDataType.FLOAT64,\n"
                                           "    shape=[0])")
    assert str(TensorCPU(np.arange(16))) == (
        "TensorCPU(\n    [ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15],\n"
        "    dtype=DALIDataType.INT64,\n    shape=[16])")


def test_a_tensorlist_from_python_feeds_a_pipeline():
    tl = TensorListCPU([np.full((2,), k, np.int32) for k in range(3)])
    pipe = sluice.Pipeline(batch_size=3, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(fn.external_source(name="x") * 2)
    pipe.build()
    pipe.feed_input("x", [tl[i] for i in range(3)])  # TensorCPU samples feed like arrays
    (out,) = pipe.run()
    np.testing.assert_array_equal(out.as_array(), [[0, 0], [2, 2], [4, 4]])


# ---- DataNode.shape() ------------------------------------------------------------------------

def test_data_node_shape():
    src = ragged()

    @pipeline_def(batch_size=3, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: src, layout="DHW")
        return x.shape(), x.shape(dtype=types.INT32), fn.shapes(x, dtype=types.FLOAT), x[0].shape()

    p = pipe()
    s64, s32, sf, sub = p.run()
    assert s64.dtype == types.INT64 and s32.dtype == types.INT32 and sf.dtype == types.FLOAT
    for i, a in enumerate(src):
        np.testing.assert_array_equal(s64.at(i), np.array(a.shape, np.int64))
        np.testing.assert_array_equal(s32.at(i), np.array(a.shape, np.int32))
        np.testing.assert_array_equal(sf.at(i), np.array(a.shape, np.float32))
        np.testing.assert_array_equal(sub.at(i), np.array(a[0].shape, np.int64))


def test_shapes_type_alias_and_errors():
    with pytest.warns(DeprecationWarning, match="``type`` is a deprecated alias for ``dtype``"):
        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def pipe():
            return fn.shapes(fn.external_source(source=lambda: [np.zeros((4, 5))]),
                             type=types.UINT8)

        p = pipe()
    (s,) = p.run()
    np.testing.assert_array_equal(s.at(0), np.array([4, 5], np.uint8))
    with pytest.raises(ValueError, match="device must be"):
        with sluice.Pipeline(batch_size=1, num_threads=1, device_id=None):
            fn.external_source(name="x").shape(device="mixed")


def test_data_node_is_not_iterable():
    with sluice.Pipeline(batch_size=1, num_threads=1, device_id=None):
        x = fn.external_source(name="x")
        with pytest.raises(TypeError, match="not iterable"):
            list(x)


def test_dalis_module_names_of_the_types():
    import sluice.backend
    import sluice.backend_impl

    assert sluice.backend_impl.TensorCPU is TensorCPU is sluice.backend.TensorCPU
    assert sluice.backend_impl.TensorListGPU is sluice.TensorListGPU
    assert sluice.backend_impl.TensorGPU is sluice.tensors.TensorGPU
