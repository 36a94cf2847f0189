"""tests/python/test_subscript.py: DataNode indexing (the tensor_subscript operator) against
NumPy's basic indexing on the same samples: negative indices and steps, ellipsis, None, integer
indices dropping axes and layout letters, per-sample (DataNode) indices, and the errors."""
import numpy as np
import pytest

import sluice
from sluice import fn, pipeline_def

RNG = np.random.default_rng(11)
# HWC images of different sizes (the index is resolved per sample), and a 2-D float batch.
IMG = [RNG.integers(0, 255, size=(h, w, 3)).astype(np.uint8)
       for h, w in [(24, 17), (30, 9), (21, 21), (40, 4)]]
MAT = [RNG.standard_normal((n, 5)).astype(np.float32) for n in (1, 4, 7, 2)]

INDICES = {
    "flip_last": (..., slice(None, None, -1)),
    "rows_col0": (slice(10, 20), slice(None), 0),
    "last_row": -1,
    "strided": (slice(None, None, 2), slice(None, None, -3)),
    "first": 0,
    "column": (slice(None), 1),
    "neg_range": (slice(-5, -1), slice(-100, 3)),
    "backward_range": (slice(-2, 1, -1),),
    "ellipsis_mid": (1, ..., 2),
    "ellipsis_front_int": (..., 0),
    "new_axes": (None, slice(1, 3), None, ..., None),
    "all": (...,),
    "empty_step": (slice(5, 2), slice(None, None, 4)),
    "scalar": (2, 1, 1),
    "last_elem": (-1, -1),
}


def run(build, data, layout=None, batch=4):
    """Runs one batch of `data` through build(x) -> {name: DataNode}; name -> TensorListCPU."""
    @pipeline_def(batch_size=batch, num_threads=2, prefetch_queue_depth=1)
    def p():
        x = fn.external_source(source=lambda: data, layout=layout)
        nodes = build(x)
        p.names = list(nodes)
        return tuple(nodes.values())

    pipe = p()
    return dict(zip(p.names, pipe.run()))


def samples(t):
    return [np.array(t.at(i)) for i in range(len(t))]


@pytest.mark.parametrize("data,layout", [(IMG, "HWC"), (MAT, None)], ids=["hwc_u8", "mat_f32"])
def test_indexing_matches_numpy(data, layout):
    ok = {k: v for k, v in INDICES.items()
          if all(_numpy_ok(a, v) for a in data)}
    got = run(lambda x: {k: x[v] for k, v in ok.items()}, data, layout)
    assert len(ok) >= 8
    for name, index in ok.items():
        for i, (g, a) in enumerate(zip(samples(got[name]), data)):
            ref = a[index]
            assert g.dtype == a.dtype and g.shape == ref.shape, (name, i, g.shape, ref.shape)
            np.testing.assert_array_equal(g, ref, err_msg=f"{name} sample {i}")


def _numpy_ok(a, index):
    try:
        a[index]
        return True
    except IndexError:
        return False


def test_layout_follows_kept_axes():
    got = run(lambda x: {"hw": x[..., 0], "wc": x[3], "hwc": x[::-1], "c": x[0, 0],
                         "new": x[None]}, IMG, "HWC")
    assert got["hw"].layout() == "HW"
    assert got["wc"].layout() == "WC"
    assert got["hwc"].layout() == "HWC"
    assert got["c"].layout() == "C"
    assert got["new"].layout() == ""  # a new axis has no letter


def test_per_sample_indices():
    idx = [np.int32(k) for k in (3, -1, 0, 20)]
    lo = [np.int64(k) for k in (1, 2, -3, 0)]
    step = [np.int32(k) for k in (1, -1, 2, -3)]

    def build(x):
        i = fn.external_source(source=lambda: idx)
        l = fn.external_source(source=lambda: lo)
        s = fn.external_source(source=lambda: step)
        return {"at": x[i], "slice": x[l:, ::s], "two_at": x[i, i % 3],
                "mixed": x[l::s, i % 5, 1], "steps": x[::s, ::s]}

    got = run(build, IMG, "HWC")
    for k, a in enumerate(IMG):
        i, l, s = int(idx[k]), int(lo[k]), int(step[k])
        j3, j5 = int(np.fmod(i, 3)), int(np.fmod(i, 5))  # DataNode % is C's remainder
        refs = {"at": a[i], "slice": a[l:, ::s], "two_at": a[i, j3],
                "mixed": a[l::s, j5, 1], "steps": a[::s, ::s]}
        for name, ref in refs.items():
            np.testing.assert_array_equal(samples(got[name])[k], ref, err_msg=f"{name} {k}")


def test_out_of_range_index_fails_naming_axis_and_size():
    # samples 0 (24 rows) and 2 (21 rows) both fail: the first to fail, which depends on the
    # threads, names itself
    with pytest.raises(sluice.SluiceError, match=r"index 24 is out of bounds for axis 0 "
                                                 r"with size (24|21)"):
        run(lambda x: {"o": x[24]}, IMG, "HWC")
    with pytest.raises(sluice.SluiceError, match=r"index -4 is out of bounds for axis 2 "
                                                 r"with size 3"):
        run(lambda x: {"o": x[..., -4]}, IMG, "HWC")
    with pytest.raises(sluice.SluiceError, match="too many indices"):
        run(lambda x: {"o": x[0, 0, 0, 0]}, IMG, "HWC")


def test_per_sample_step_zero_fails():
    with pytest.raises(sluice.SluiceError, match="step cannot be zero"):
        run(lambda x: {"o": x[::fn.external_source(source=lambda: [np.int32(0)] * 4)]},
            IMG, "HWC")


def test_invalid_indices_at_definition():
    with sluice.Pipeline(batch_size=1):
        x = fn.random.coin_flip(shape=[3, 3])
        with pytest.raises(IndexError, match="single ellipsis"):
            x[..., 0, ...]
        with pytest.raises(ValueError, match="step cannot be zero"):
            x[::0]
        with pytest.raises(IndexError, match="valid DataNode indices"):
            x[1.5]
        with pytest.raises(IndexError, match="valid DataNode indices"):
            x["a"]
        with pytest.raises(IndexError, match="valid DataNode indices"):
            x[True]
        with pytest.raises(NotImplementedError, match="advanced indexing"):
            x[[0, 1]]
        with pytest.raises(NotImplementedError, match="advanced indexing"):
            x[np.array([0, 1])]


def test_the_node_is_tensor_subscript():
    with sluice.Pipeline(batch_size=1):
        x = fn.random.coin_flip(shape=[3, 3])
        assert x[..., ::-1].op == "tensor_subscript"
        assert x[np.int64(1)].op == "tensor_subscript"
