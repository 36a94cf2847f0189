"""expand_dims, squeeze, reinterpret, one_hot, lookup_table, element_extract,
sequence_rearrange, permute_batch and experimental.tensor_resize against NumPy.

Independent reference: NumPy reshapes / views / fancy indexing (np.expand_dims, np.squeeze,
ndarray.view, arange comparison for one-hot, a Python dict for the lookup table, frame
indexing for the sequence operators, nearest-neighbour resampling written as index arithmetic
with half-pixel centres). All exact. Each operator also gets an error case in DALI's words.
"""
import numpy as np

from casekit import Case


def make(out, rng):
    img = [rng.integers(0, 255, size=(4 + k, 6, 3)).astype(np.uint8) for k in range(3)]
    (Case(out, "expand_dims_1_Z", "expand_dims", {"axes": [1], "new_axis_names": "Z"})
     .input(img, "HWC").expect([np.expand_dims(a, 1) for a in img], layout="HZWC").save())
    (Case(out, "expand_dims_no_names", "expand_dims", {"axes": [0, 4]})
     .input(img, "HWC").expect([a.reshape((1,) + a.shape + (1,)) for a in img], layout="")
     .save())
    (Case(out, "err_expand_dims_range", "expand_dims", {"axes": [5]})
     .input(img, "HWC").expect_error("not enough dimensions").save())
    sq = [rng.integers(0, 9, size=(1, 3, 1, 2)).astype(np.int32) for _ in range(2)]
    (Case(out, "squeeze_names", "squeeze", {"axis_names": "AC"}).input(sq, "ABCD")
     .expect([np.squeeze(a, (0, 2)) for a in sq], layout="BD").save())
    (Case(out, "err_squeeze_extent", "squeeze", {"axes": [1]}).input(sq, "ABCD")
     .expect_error("extent 3").save())
    raw = [rng.integers(0, 255, size=(10, 20, 3)).astype(np.uint8) for _ in range(2)]
    (Case(out, "reinterpret_rel", "reinterpret", {"rel_shape": [0.5, 1, -1]})
     .input(raw, "HWC").expect([a.reshape(5, 20, 6) for a in raw], layout="HWC").save())
    (Case(out, "reinterpret_dtype", "reinterpret", {"dtype": "int32", "shape": [-1]})
     .input([a[:, :4] for a in raw], "HWC")
     .expect([np.ascontiguousarray(a[:, :4]).reshape(-1).view(np.int32) for a in raw],
             layout="").save())
    (Case(out, "err_reinterpret_bytes", "reinterpret", {"shape": [7, 7]})
     .input(raw, "HWC").expect_error("bytes").save())
    ids = [rng.integers(-1, 7, size=(3, 4)).astype(np.int32) for _ in range(2)]
    for axis in (-1, 0, 1):
        want = []
        for a in ids:
            oh = (np.arange(6) == a[..., None]).astype(np.float32)
            want.append(np.moveaxis(oh, -1, a.ndim if axis < 0 else axis))
        lay = {-1: "XYO", 0: "OXY", 1: "XOY"}[axis]
        (Case(out, "one_hot_axis%d" % axis, "one_hot",
              {"num_classes": 6, "axis": axis, "axis_name": "O"})
         .input(ids, "XY").expect(want, layout=lay).save())
    (Case(out, "err_one_hot_axis_name", "one_hot", {"num_classes": 3, "axis_name": "AB"})
     .input(ids).expect_error("Unsupported axis_name value").save())
    table = {1: 10.0, 3: 50.0, 6: -2.5}
    (Case(out, "lookup_table", "lookup_table",
          {"keys": list(table), "values": list(table.values()), "default_value": 0.5})
     .input(ids).expect([np.vectorize(lambda v: table.get(int(v), 0.5))(a).astype(np.float32)
                         for a in ids]).save())
    (Case(out, "err_lookup_float", "lookup_table", {"keys": [1], "values": [2.0]})
     .input([np.zeros(3, np.float32)]).expect_error("integer type").save())
    seq = [rng.integers(0, 255, size=(5, 2, 3)).astype(np.int16) for _ in range(2)]
    (Case(out, "element_extract", "element_extract", {"element_map": [4, 0, 4]})
     .input(seq, "FHW").expect([a[4] for a in seq], layout="HW")
     .expect([a[0] for a in seq], layout="HW").expect([a[4] for a in seq], layout="HW").save())
    (Case(out, "err_element_extract_range", "element_extract", {"element_map": [5]})
     .input(seq, "FHW").expect_error("out of bounds").save())
    (Case(out, "sequence_rearrange", "sequence_rearrange", {"new_order": [0, 4, 1, 3, 2, 2]})
     .input(seq, "FHW").expect([a[[0, 4, 1, 3, 2, 2]] for a in seq], layout="FHW").save())
    (Case(out, "err_sequence_rearrange_layout", "sequence_rearrange", {"new_order": [0]})
     .input(seq, "HWC").expect_error("Expected sequence").save())
    (Case(out, "permute_batch", "permute_batch", {"indices": [2, 2, 0]})
     .input(img, "HWC").expect([img[2], img[2], img[0]], layout="HWC").save())
    (Case(out, "err_permute_batch", "permute_batch", {"indices": [0, 1, 3]})
     .input(img, "HWC").expect_error("out of range").save())
    vol = [rng.integers(0, 255, size=(6, 5, 4)).astype(np.uint8) for _ in range(2)]
    want = []
    for a in vol:  # nearest, half-pixel centres: index floor((o + 0.5) * in / out)
        i0 = np.floor((np.arange(9) + 0.5) * 6 / 9).astype(int)
        i2 = np.floor((np.arange(3) + 0.5) * 4 / 3).astype(int)
        want.append(a[i0][:, :, i2])
    (Case(out, "tensor_resize_nn", "experimental.tensor_resize",
          {"sizes": [9, 3], "axes": [0, 2], "interp_type": "INTERP_NN"})
     .input(vol, "DHW").expect(want, layout="DHW").save())
