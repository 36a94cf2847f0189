"""Layout and tensor operators against NumPy: cast, flip, transpose, pad, reshape, cat, stack,
shapes, slice, normalize, constant (DALI semantics, reference section 1 and DALI's operator
docs).

Every expected output is computed here with NumPy indexing, np.pad-like assembly and an
independent implementation of DALI's conversion rules (round half away from zero written with
floor, saturation with Python integers). All cases are exact (max_abs 0) except normalize,
whose float32 arithmetic is compared with a float64 reference (tolerance stated per case).
Each op also gets its error cases.
"""
import numpy as np

import photos
from casekit import Case

DTYPES = ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "float16", "float32", "float64", "bool"]


# ---- DALI's conversion rules, written independently of the C code -------------------------

def round_away(x):
    """Round half away from zero, exactly, for float64 arrays."""
    x = np.asarray(x, np.float64)
    f = np.floor(x)
    with np.errstate(invalid="ignore"):
        d = x - f  # exact for |x| < 2**52; beyond that d == 0 (inf - inf: NaN, unused)
    return np.where(d > 0.5, f + 1, np.where(d < 0.5, f, np.where(x > 0, f + 1, f)))


def dali_cast(a, dtype):
    """DALI's ConvertSat: float -> int rounds half away and saturates (NaN -> 0 in sluice),
    int -> int saturates, anything -> bool is x != 0, -> float is an IEEE cast."""
    a = np.asarray(a)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return a != 0
    if dt.kind == "f" or a.dtype == np.bool_:
        with np.errstate(over="ignore", invalid="ignore"):
            return a.astype(dt)
    info = np.iinfo(dt)
    if a.dtype.kind == "f":
        x = a.astype(np.float64)
        nan = np.isnan(x)
        r = round_away(np.where(nan, 0, x))
        big = r >= float(int(info.max) + 1)
        small = r < float(int(info.min))
        out = np.zeros(a.shape, dt)
        mid = ~(big | small)
        out[mid] = r[mid].astype(dt)
        out[big] = info.max
        out[small] = info.min
        return out
    vals = [min(max(int(v), int(info.min)), int(info.max)) for v in a.reshape(-1)]
    return np.array(vals, dtype=dt).reshape(a.shape)


def special_values(dtype, rng):
    """Edge values of a type (extremes, halves, NaN, infinities) plus random ones."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return np.array([0, 1, 1, 0, 1], dtype=bool)
    if dt.kind == "f":
        v = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997, 1.0, -1.0,
             127.5, 128.5, 255.5, 256.0, -128.5, -129.0, 32767.5, 65504.0, 65519.0, 65520.0,
             65535.5, 2.0 ** 31 - 0.5, 2.0 ** 31, -2.0 ** 31 - 1, 2.0 ** 32, 2.0 ** 32 - 0.5,
             2.0 ** 63, -2.0 ** 63, 2.0 ** 64, 1e30, -1e30, np.inf, -np.inf, np.nan,
             1e-8, -3e-5, 6e-8, 0.1,
             # float64 -> float16 must round once: through float32 these become ties
             1 + 2.0 ** -11 + 2.0 ** -30, -(1 + 2.0 ** -11 + 2.0 ** -30), 1 + 2.0 ** -11,
             1 + 3 * 2.0 ** -11 - 2.0 ** -32, 65519.99999999, 2.0 ** -25 * (1 + 2.0 ** -30)]
        with np.errstate(over="ignore"):
            a = np.array(v, np.float64).astype(dt)
        with np.errstate(over="ignore"):
            rnd = (rng.standard_normal(40) * 10.0 ** rng.integers(0, 8, 40)).astype(dt)
        halves = (rng.integers(-300, 300, 20) + 0.5).astype(dt)
        return np.concatenate([a, rnd, halves])
    info = np.iinfo(dt)
    v = [0, 1, -1, 127, 128, 255, 256, -128, -129, 32767, 32768, 65504, 65519, 65520, 65535,
         65536, 2 ** 31 - 1, 2 ** 31, -2 ** 31, -2 ** 31 - 1, 2 ** 32 - 1, 2 ** 32, 2 ** 53 + 1,
         2 ** 63 - 1, -2 ** 63, 2 ** 64 - 1, int(info.min), int(info.max)]
    v = [min(max(x, int(info.min)), int(info.max)) for x in v]
    rnd = rng.integers(int(info.min), int(info.max), 30, dtype=dt, endpoint=True)
    return np.concatenate([np.array(v, dtype=dt), rnd])


# ---- cast ------------------------------------------------------------------------------------

def make_cast(out, rng):
    for tin in DTYPES:
        vals = special_values(tin, rng)
        grid = vals[: (len(vals) // 4) * 4].reshape(-1, 4)  # a 2-D sample
        empty = np.zeros((0, 4), np.dtype(tin))
        one = vals[:1].reshape(1, 1)
        for tout in DTYPES:
            samples = [grid, empty, one]
            refs = [dali_cast(s, tout) for s in samples]
            (Case(out, "cast_%s_to_%s" % (tin, tout), "cast", {"dtype": tout},
                  note="DALI ConvertSat rules vs NumPy + round-half-away written with floor")
             .input(samples, "AB").expect(refs, layout="AB").save())
    (Case(out, "cast_dali_name", "cast", {"dtype": "FLOAT"}, note="DALI type names work")
     .input([np.arange(6, dtype=np.uint8).reshape(2, 3)])
     .expect([np.arange(6, dtype=np.float32).reshape(2, 3)]).save())
    (Case(out, "cast_bad_dtype", "cast", {"dtype": "complex64"}, note="unknown type name")
     .input([np.zeros(3, np.uint8)]).expect_error("unknown data type").save())
    (Case(out, "cast_no_dtype", "cast", {}, note="dtype is required")
     .input([np.zeros(3, np.uint8)]).expect_error("dtype").save())


# ---- flip --------------------------------------------------------------------------------------

def make_flip(out, rng, imgs):
    refs = [im[:, ::-1] for im in imgs]
    (Case(out, "flip_default_horizontal", "flip", note="DALI: horizontal=1 by default")
     .input(imgs, "HWC").expect(refs, layout="HWC").save())
    hv = [(0, 0), (1, 0), (0, 1), (1, 1)]
    refs = [im[::(-1 if v else 1), ::(-1 if h else 1)] for im, (h, v) in zip(imgs, hv)]
    (Case(out, "flip_per_sample", "flip", note="argument inputs from e.g. coin_flip")
     .input(imgs, "HWC")
     .arg_input("horizontal", [np.int32(h) for h, _ in hv])
     .arg_input("vertical", [np.int32(v) for _, v in hv])
     .expect(refs, layout="HWC").save())
    chw = [np.ascontiguousarray(im.transpose(2, 0, 1)).astype(np.float32) / 255 for im in imgs]
    (Case(out, "flip_chw_float_both", "flip", {"horizontal": 1, "vertical": 1})
     .input(chw, "CHW").expect([c[:, ::-1, ::-1] for c in chw], layout="CHW").save())
    gray = [im[..., :1].copy() for im in imgs[:2]] + [np.zeros((1, 1, 1), np.uint8) + 7]
    (Case(out, "flip_gray_1x1", "flip", {"vertical": 1}, note="C=1 and a 1x1 image")
     .input(gray, "HWC").expect([g[::-1, ::-1] for g in gray]).save())
    rgba = [rng.integers(0, 256, (5, 7, 4), dtype=np.uint8), np.zeros((0, 6, 4), np.uint8),
            np.zeros((3, 0, 4), np.uint8)]
    (Case(out, "flip_rgba_empty", "flip", {"vertical": 1},
          note="4 channels; zero-extent samples are legal")
     .input(rgba, "HWC").expect([a[::-1, ::-1] for a in rgba]).save())
    hw = [rng.integers(-1000, 1000, (4, 9), dtype=np.int16)]
    (Case(out, "flip_no_layout_2d", "flip", note="2-D without a layout is HW")
     .input(hw).expect([hw[0][:, ::-1]]).save())
    vol = [rng.standard_normal((3, 4, 5, 2)).astype(np.float64)]
    (Case(out, "flip_dhwc_depthwise", "flip", {"horizontal": 0, "depthwise": 1})
     .input(vol, "DHWC").expect([vol[0][::-1]], layout="DHWC").save())
    seq = [rng.integers(0, 255, (2, 3, 4, 3), dtype=np.uint8)]
    (Case(out, "flip_fhwc_depthwise_ignored", "flip", {"depthwise": 1},
          note="no D axis: depthwise does nothing; W flipped by default")
     .input(seq, "FHWC").expect([seq[0][:, :, ::-1]], layout="FHWC").save())
    (Case(out, "flip_bad_layout", "flip", note="no H and W axes")
     .input([np.zeros((2, 3, 4), np.uint8)], "ABC").expect_error("does not match").save())


# ---- transpose ---------------------------------------------------------------------------------

def make_transpose(out, rng, imgs):
    refs = [np.ascontiguousarray(im.transpose(2, 0, 1)) for im in imgs]
    (Case(out, "transpose_hwc_chw_u8", "transpose", {"perm": [2, 0, 1]}, note="fast path")
     .input(imgs, "HWC").expect(refs, layout="CHW").save())
    f = [im.astype(np.float32) * 0.5 for im in imgs[:2]] + [np.zeros((1, 1, 3), np.float32)]
    (Case(out, "transpose_hwc_chw_f32", "transpose", {"perm": [2, 0, 1]})
     .input(f, "HWC").expect([a.transpose(2, 0, 1) for a in f], layout="CHW").save())
    gray = [im[..., :1].copy() for im in imgs[:2]] + [np.zeros((0, 4, 1), np.uint8)]
    (Case(out, "transpose_gray_empty", "transpose", {"perm": [2, 0, 1]})
     .input(gray, "HWC").expect([g.transpose(2, 0, 1) for g in gray], layout="CHW").save())
    (Case(out, "transpose_chw_hwc", "transpose", {"perm": [1, 2, 0]})
     .input(refs, "CHW").expect(imgs, layout="HWC").save())
    (Case(out, "transpose_swap_hw", "transpose", {"perm": [1, 0, 2]})
     .input(imgs, "HWC").expect([im.transpose(1, 0, 2) for im in imgs], layout="WHC").save())
    x4 = [rng.integers(-30000, 30000, s, dtype=np.int16) for s in ((2, 3, 4, 5), (1, 6, 2, 3))]
    (Case(out, "transpose_4d_explicit_layout", "transpose",
          {"perm": [3, 1, 0, 2], "output_layout": "ABCD"})
     .input(x4, "FHWC").expect([a.transpose(3, 1, 0, 2) for a in x4], layout="ABCD").save())
    x2 = [rng.standard_normal((7, 3))]
    (Case(out, "transpose_2d_keep_layout", "transpose",
          {"perm": [1, 0], "transpose_layout": False}, note="DALI: the input layout is kept")
     .input(x2, "HW").expect([x2[0].T], layout="HW").save())
    (Case(out, "transpose_default_reverses", "transpose", note="no perm: np.transpose(a)")
     .input(imgs, "HWC").expect([im.transpose() for im in imgs], layout="CWH").save())
    (Case(out, "transpose_default_4d", "transpose")
     .input(x4, "FHWC").expect([a.transpose() for a in x4], layout="CWHF").save())
    (Case(out, "transpose_scalar_perm", "transpose", {"perm": 0}, note="one int: perm [0]")
     .input([np.arange(5, dtype=np.int8)]).expect([np.arange(5, dtype=np.int8)]).save())
    rgba = [rng.integers(0, 256, (3, 5, 4), dtype=np.uint8)]
    (Case(out, "transpose_rgba_u64", "transpose", {"perm": [2, 0, 1]})
     .input([rgba[0].astype(np.uint64)], "HWC")
     .expect([rgba[0].astype(np.uint64).transpose(2, 0, 1)]).save())
    (Case(out, "transpose_not_permutation", "transpose", {"perm": [0, 0, 1]})
     .input(imgs[:1], "HWC").expect_error("permutation").save())
    (Case(out, "transpose_wrong_ndim", "transpose", {"perm": [1, 0]})
     .input(imgs[:1], "HWC").expect_error("dimensions").save())


# ---- pad ---------------------------------------------------------------------------------------

def pad_to(a, shape, fill):
    out = np.full(shape, fill, a.dtype)
    out[tuple(slice(0, e) for e in a.shape)] = a
    return out


def make_pad(out, rng, imgs):
    docs = [np.array(v, np.int32) for v in ([3, 4, 2, 5, 4], [2, 2], [3, 199, 5])]
    (Case(out, "pad_doc_largest", "pad", {"fill_value": -1, "axes": [0]},
          note="DALI docs example 1 (hand-written expected values)")
     .input(docs).expect([np.array(v, np.int32) for v in
                          ([3, 4, 2, 5, 4], [2, 2, -1, -1, -1], [3, 199, 5, -1, -1])]).save())
    docs4 = docs + [np.arange(1, 9, dtype=np.int32)]
    (Case(out, "pad_doc_min_shape", "pad", {"fill_value": -1, "axes": [0], "shape": [7]},
          note="DALI docs example 2: minimum extent 7, the longer sample is not cropped")
     .input(docs4).expect([pad_to(d, (max(7, len(d)),), -1) for d in docs4]).save())
    (Case(out, "pad_doc_align", "pad", {"fill_value": -1, "axes": [0], "align": [4]},
          note="DALI docs example 3: largest 5 aligned to 8")
     .input(docs).expect([pad_to(d, (8,), -1) for d in docs]).save())
    (Case(out, "pad_doc_align_only", "pad",
          {"fill_value": -1, "axes": [0], "shape": [1], "align": [2]},
          note="DALI docs example 4: per-sample alignment")
     .input(docs).expect([pad_to(docs[0], (6,), -1), docs[1], pad_to(docs[2], (4,), -1)]).save())
    m = [np.arange(1, 13, dtype=np.float32).reshape(3, 4), np.array([[1, 2], [4, 5]], np.float32)]
    (Case(out, "pad_doc_2d_align", "pad", {"axes": [0, 1], "align": [4, 5]},
          note="DALI docs example 6")
     .input(m).expect([pad_to(m[0], (4, 5), 0), pad_to(m[1], (4, 5), 0)]).save())
    m2 = [np.array([[1, 2, 3], [4, 5, 6]], np.int64), np.array([[1, 2], [4, 5], [6, 7]], np.int64)]
    (Case(out, "pad_doc_shape_minus1", "pad",
          {"axes": [0, 1], "align": [1, 2], "shape": [4, -1]}, note="DALI docs example 7")
     .input(m2).expect([pad_to(m2[0], (4, 4), 0), pad_to(m2[1], (4, 4), 0)]).save())
    H = max(im.shape[0] for im in imgs)
    W = max(im.shape[1] for im in imgs)
    (Case(out, "pad_images_hw", "pad", {"axis_names": "HW", "fill_value": 255},
          note="photos padded to the batch's largest H and W")
     .input(imgs, "HWC").expect([pad_to(im, (H, W, 3), 255) for im in imgs], layout="HWC")
     .save())
    fills = [np.float32(v) for v in (1.5, -2.0, 300.0, 7.0)]
    x = [rng.integers(0, 9, s, dtype=np.uint8) for s in ((2, 3), (4, 1), (0, 2), (1, 1))]
    (Case(out, "pad_per_sample_fill_u8", "pad", {},
          note="fill per sample, converted with DALI rules (1.5 -> 2, -2 -> 0, 300 -> 255); "
               "an empty sample is all fill")
     .input(x).arg_input("fill_value", fills)
     .expect([pad_to(a, (4, 3), dali_cast(np.float64(f), np.uint8)) for a, f in zip(x, fills)])
     .save())
    c = [rng.standard_normal((2, 3, 3)).astype(np.float16), rng.standard_normal((2, 5, 3))
         .astype(np.float16)]
    (Case(out, "pad_negative_axis_f16", "pad", {"axes": [-2], "fill_value": 0.25})
     .input(c, "HWC").expect([pad_to(a, (2, 5, 3), 0.25) for a in c]).save())
    (Case(out, "pad_empty_axes_all", "pad", {"axes": [], "fill_value": 3},
          note="DALI: empty axes pad every axis")
     .input(m2).expect([pad_to(a, (3, 3), 3) for a in m2]).save())
    (Case(out, "pad_bad_align", "pad", {"axes": [0], "align": [0]})
     .input(docs).expect_error("must be positive").save())
    (Case(out, "pad_axes_and_names", "pad", {"axes": [0], "axis_names": "H"})
     .input(imgs[:1], "HWC").expect_error("exclusive").save())
    (Case(out, "pad_shape_length", "pad", {"axes": [0, 1], "shape": [5]})
     .input(imgs[:1], "HWC").expect_error("one per padded axis").save())
    (Case(out, "pad_unknown_axis_name", "pad", {"axis_names": "D"})
     .input(imgs[:1], "HWC").expect_error("not in the input layout").save())


# ---- reshape -----------------------------------------------------------------------------------

def make_reshape(out, rng, imgs):
    (Case(out, "reshape_flatten", "reshape", {"shape": [-1]})
     .input(imgs, "HWC").expect([im.reshape(-1) for im in imgs], layout="").save())
    a = [rng.integers(0, 100, (480 // 8, 640 // 8, 3), dtype=np.uint8)]
    (Case(out, "reshape_doc_shape", "reshape", {"shape": [30, -1]},
          note="DALI docs: [480, 640, 3] with [240, -1] -> [240, 3840], scaled by 1/8")
     .input(a, "HWC").expect([a[0].reshape(30, -1)]).save())
    (Case(out, "reshape_doc_rel_shape", "reshape", {"rel_shape": [0.5, -1]},
          note="DALI docs: rel_shape [0.5, -1] on [60, 80, 3] -> [30, 480]")
     .input(a, "HWC").expect([a[0].reshape(30, 480)]).save())
    x = [rng.standard_normal((4, 6)).astype(np.float32) for _ in range(3)]
    shapes = [np.array(s, np.int32) for s in ([2, 12], [24, -1], [3, 2, 4])]
    (Case(out, "reshape_per_sample_shape", "reshape", {},
          note="shape as an argument input; ndim must agree").input(x)
     .arg_input("shape", shapes[:2] + [np.array([8, 3], np.int32)])
     .expect([x[0].reshape(2, 12), x[1].reshape(24, 1), x[2].reshape(8, 3)]).save())
    (Case(out, "reshape_layout", "reshape", {"shape": [3, -1], "layout": "CN"})
     .input([im.transpose(2, 0, 1).copy() for im in imgs[:2]], "CHW")
     .expect([im.transpose(2, 0, 1).reshape(3, -1) for im in imgs[:2]], layout="CN").save())
    (Case(out, "reshape_layout_only", "reshape", {"layout": "YXC"})
     .input(imgs[:2], "HWC").expect(imgs[:2], layout="YXC").save())
    e = [np.zeros((0, 3), np.int8), np.ones((2, 3), np.int8)]
    (Case(out, "reshape_empty", "reshape", {"shape": [-1, 3, 1]}, note="0 elements infer 0")
     .input(e).expect([a.reshape(-1, 3, 1) for a in e]).save())
    (Case(out, "reshape_volume_mismatch", "reshape", {"shape": [7, 7]})
     .input(imgs[:1], "HWC").expect_error("volume of the new shape").save())
    (Case(out, "reshape_two_wildcards", "reshape", {"shape": [-1, -1]})
     .input(imgs[:1], "HWC").expect_error("Only one negative").save())
    (Case(out, "reshape_zero_extent", "reshape", {"shape": [0, -1]})
     .input(imgs[:1], "HWC").expect_error("Extent of 0").save())
    (Case(out, "reshape_noop", "reshape", {}).input(imgs[:1], "HWC")
     .expect_error("no-op").save())
    (Case(out, "reshape_exclusive", "reshape", {"shape": [-1], "rel_shape": [1.0]})
     .input(imgs[:1], "HWC").expect_error("exclusive").save())


# ---- cat / stack -------------------------------------------------------------------------------

def make_join(out, rng, imgs):
    a = imgs
    b = [im[:, ::-1].copy() for im in imgs]
    c = [im[:, : im.shape[1] // 3 + 1].copy() for im in imgs]
    (Case(out, "cat_width", "cat", {"axis": 1}, note="np.concatenate(axis=1)")
     .input(a, "HWC").input(b, "HWC").input(c, "HWC")
     .expect([np.concatenate(t, axis=1) for t in zip(a, b, c)], layout="HWC").save())
    (Case(out, "cat_axis_name", "cat", {"axis_name": "W"})
     .input(a, "HWC").input(c, "HWC")
     .expect([np.concatenate(t, axis=1) for t in zip(a, c)], layout="HWC").save())
    g = [im[..., :1].copy() for im in imgs]
    (Case(out, "cat_channels_negative_axis", "cat", {"axis": -1}, note="RGB + gray -> 4 channels")
     .input(a, "HWC").input(g, "HWC")
     .expect([np.concatenate(t, axis=2) for t in zip(a, g)], layout="HWC").save())
    x = [rng.standard_normal((2, 3)).astype(np.float32), np.zeros((0, 3), np.float32)]
    y = [rng.standard_normal((1, 3)).astype(np.float32), rng.standard_normal((2, 3))
         .astype(np.float32)]
    (Case(out, "cat_rows_empty_sample", "cat").input(x).input(y)
     .expect([np.concatenate(t) for t in zip(x, y)]).save())
    (Case(out, "cat_single_input", "cat", {"axis": 0}).input(x).expect(x).save())
    (Case(out, "stack_axis0", "stack", {"axis": 0, "axis_name": "F"},
          note="np.stack(axis=0); layout F + HWC")
     .input(a, "HWC").input(b, "HWC")
     .expect([np.stack(t) for t in zip(a, b)], layout="FHWC").save())
    (Case(out, "stack_interleave", "stack", {"axis": 3}, note="axis = ndim interleaves")
     .input(a, "HWC").input(b, "HWC").input(a, "HWC")
     .expect([np.stack(t, axis=3) for t in zip(a, b, a)], layout="").save())
    s = [np.array([5], np.int64), np.array([-7], np.int64)]
    t = [np.array([1], np.int64), np.array([2], np.int64)]
    (Case(out, "stack_one_element", "stack", {}, note="1-element samples stack into 2x1")
     .input(s).input(t).expect([np.array([[5], [1]]), np.array([[-7], [2]])]).save())
    (Case(out, "stack_negative_axis", "stack", {"axis": -1, "axis_name": "C"},
          note="planes stacked into channels: HW + C")
     .input([im[..., 0].copy() for im in a], "HW").input([im[..., 1].copy() for im in a], "HW")
     .expect([im[..., :2] for im in a], layout="HWC").save())
    (Case(out, "cat_shape_mismatch", "cat", {"axis": 0})
     .input(a, "HWC").input(c, "HWC").expect_error("equal extents").save())
    (Case(out, "cat_type_mismatch", "cat")
     .input(a, "HWC").input([im.astype(np.float32) for im in a], "HWC")
     .expect_error("same type").save())
    (Case(out, "cat_bad_axis", "cat", {"axis": 3})
     .input(a, "HWC").input(b, "HWC").expect_error("Invalid axis").save())
    (Case(out, "cat_layout_mismatch", "cat")
     .input(a, "HWC").input(b, "WHC").expect_error("layouts must match").save())
    (Case(out, "stack_shape_mismatch", "stack")
     .input(a, "HWC").input(c, "HWC").expect_error("equal shapes").save())


# ---- shapes ------------------------------------------------------------------------------------

def make_shapes(out, rng, imgs):
    ragged = [np.zeros((2, 3, 4, 1), np.float32), np.zeros((5, 0, 1, 7), np.float32)]
    (Case(out, "shapes_int64", "shapes", note="np.array(a.shape, int64)")
     .input(imgs, "HWC").expect([np.array(im.shape, np.int64) for im in imgs], layout="").save())
    (Case(out, "shapes_4d_int32", "shapes", {"dtype": "int32"})
     .input(ragged, "FHWC").expect([np.array(a.shape, np.int32) for a in ragged]).save())
    (Case(out, "shapes_float", "shapes", {"dtype": "float32"})
     .input(imgs[:2]).expect([np.array(im.shape, np.float32) for im in imgs[:2]]).save())
    big = [np.zeros((300, 2), np.uint8)]
    (Case(out, "shapes_uint8_saturates", "shapes", {"dtype": "uint8"}, note="cast's rules")
     .input(big).expect([np.array([255, 2], np.uint8)]).save())
    (Case(out, "shapes_type_alias", "shapes", {"type": "int16"}, note="DALI's deprecated name")
     .input(imgs[:1]).expect([np.array(imgs[0].shape, np.int16)]).save())
    (Case(out, "shapes_bool", "shapes", {"dtype": "bool"})
     .input(imgs[:1]).expect_error("numeric type").save())


# ---- slice -------------------------------------------------------------------------------------

def window(a, anchor, shape, fill=0, dtype=None):
    """a[anchor : anchor + shape] with positions outside `a` set to fill (per channel along the
    last axis when fill is a list)."""
    dt = np.dtype(dtype) if dtype else a.dtype
    out = np.empty(shape, dt)
    out[...] = dali_cast(np.asarray(fill, np.float64), dt)
    src, dst = [], []
    for e, an, sh in zip(a.shape, anchor, shape):
        lo, hi = max(an, 0), min(an + sh, e)
        if hi <= lo:
            return out
        src.append(slice(lo, hi))
        dst.append(slice(lo - an, hi - an))
    out[tuple(dst)] = dali_cast(a[tuple(src)], dt)
    return out


def coords(ext, rs=None, s=None, e=None, re=None, sh=None, rsh=None):
    """DALI's named slice arguments on one axis -> (anchor, shape), rounding half away."""
    a = 0.0 if s is None and rs is None else (float(s) if s is not None else rs * ext)
    if e is not None:
        end = float(e)
    elif re is not None:
        end = re * ext
    elif sh is not None:
        end = a + sh
    elif rsh is not None:
        end = (rs + rsh) * ext if rs is not None else a + rsh * ext
    else:
        end = float(ext)
    an = int(round_away(a))
    return an, int(round_away(end)) - an


def make_slice(out, rng, imgs):
    rs, rsh = [0.1, 0.25], [0.5, 0.6]  # (W, H) order: the default axis_names "WH"
    refs = []
    for im in imgs:
        x, w = coords(im.shape[1], rs=rs[0], rsh=rsh[0])
        y, h = coords(im.shape[0], rs=rs[1], rsh=rsh[1])
        refs.append(window(im, (y, x, 0), (h, w, 3)))
    (Case(out, "slice_rel_start_rel_shape", "slice", {"rel_start": rs, "rel_shape": rsh},
          note="default axis_names WH; end = (rel_start + rel_shape) * extent, rounded once")
     .input(imgs, "HWC").expect(refs, layout="HWC").save())
    m = [rng.integers(-99, 99, (9, 11), dtype=np.int32) for _ in range(2)]
    (Case(out, "slice_start_end_axes", "slice", {"start": [2, 3], "end": [7, 11], "axes": [0, 1]})
     .input(m).expect([a[2:7, 3:11] for a in m]).save())
    fill = [10.0, 20.0, 30.0]
    refs = [window(im, (-3, im.shape[1] - 4, 0), (8, 9, 3), fill) for im in imgs]
    (Case(out, "slice_pad_per_channel", "slice",
          {"axis_names": "HW", "out_of_bounds_policy": "pad", "fill_values": fill},
          note="start / shape as argument inputs; over the top and right edges; per-channel "
               "fill")
     .input(imgs, "HWC").arg_input("start", [np.array([-3, im.shape[1] - 4], np.int32)
                                             for im in imgs])
     .arg_input("shape", [np.array([8, 9], np.int32) for _ in imgs])
     .expect(refs, layout="HWC").save())
    refs = [im[max(0, -2):, 5:] for im in imgs]
    (Case(out, "slice_trim", "slice",
          {"start": [5, -2], "end": [100000, 100000], "out_of_bounds_policy": "trim_to_shape"},
          note="WH: x from 5, y from -2 (trimmed to 0), ends past the edges")
     .input(imgs, "HWC").expect(refs).save())
    (Case(out, "slice_out_of_bounds", "slice", {"start": [0, 0], "shape": [10000, 5]})
     .input(imgs, "HWC").expect_error("out of bounds").save())
    anc = [np.array(v, np.float32) for v in ([0.2, 0.1], [0.0, 0.5], [0.5, 0.5], [0.9, 0.0])]
    shp = [np.array(v, np.float32) for v in ([0.5, 0.5], [1.0, 0.5], [0.25, 0.1], [0.1, 1.0])]
    refs = []
    for im, an, sh in zip(imgs, anc, shp):
        a64, s64 = an.astype(np.float64), sh.astype(np.float64)
        x0 = int(round_away(a64[0] * im.shape[1]))
        x1 = int(round_away((a64[0] + s64[0]) * im.shape[1]))
        y0 = int(round_away(a64[1] * im.shape[0]))
        y1 = int(round_away((a64[1] + s64[1]) * im.shape[0]))
        refs.append(im[y0:y1, x0:x1])
    (Case(out, "slice_positional_normalized", "slice",
          note="fn.slice(data, anchor, shape): float inputs are fractions (W, H order)")
     .input(imgs, "HWC").input(anc).input(shp).expect(refs, layout="HWC").save())
    anc_i = [np.array([3, 1], np.int32) for _ in imgs]
    shp_i = [np.array([5, 4], np.int32) for _ in imgs]
    (Case(out, "slice_positional_int", "slice", note="integer inputs are absolute")
     .input(imgs, "HWC").input(anc_i).input(shp_i).expect([im[1:5, 3:8] for im in imgs]).save())
    anc_f = [np.array([2.5, 1.0], np.float32) for _ in imgs]
    shp_f = [np.array([4.0, 3.0], np.float32) for _ in imgs]
    (Case(out, "slice_positional_absolute_float", "slice",
          {"normalized_anchor": False, "normalized_shape": False},
          note="anchor 2.5 rounds to 3 (halves away), end 6.5 to 7")
     .input(imgs, "HWC").input(anc_f).input(shp_f).expect([im[1:4, 3:7] for im in imgs]).save())
    chw = [np.ascontiguousarray(im.transpose(2, 0, 1)) for im in imgs]
    (Case(out, "slice_chw_names_dtype", "slice",
          {"axis_names": "HW", "start": [1, 2], "shape": [3, 4], "dtype": "float32"})
     .input(chw, "CHW").expect([c[:, 1:4, 2:6].astype(np.float32) for c in chw], layout="CHW")
     .save())
    flat = [rng.standard_normal((6, 5)).astype(np.float64), np.zeros((0, 5)), np.ones((1, 1))]
    (Case(out, "slice_no_layout_trim_empty", "slice",
          {"start": [1, 0], "end": [4, 3], "out_of_bounds_policy": "trim_to_shape"},
          note="no layout: axes [1, 0]; empty and 1x1 samples trim to what exists")
     .input(flat).expect([a[0:3, 1:4] for a in flat]).save())
    vol = [rng.integers(0, 255, (3, 4, 5), dtype=np.uint8)]
    (Case(out, "slice_all_axes", "slice", {"axes": [], "start": [1, 1, 1], "end": [3, 4, 5]},
          note="an empty axes list means all axes").input(vol).expect([vol[0][1:, 1:, 1:]]).save())
    (Case(out, "slice_end_before_start", "slice", {"start": [5, 5], "end": [2, 9]})
     .input(imgs[:1], "HWC").expect_error("before start").save())
    (Case(out, "slice_start_exclusive", "slice", {"start": [1, 1], "rel_start": [0.1, 0.1]})
     .input(imgs[:1], "HWC").expect_error("mutually exclusive").save())
    (Case(out, "slice_named_and_positional", "slice", {"start": [1, 1]})
     .input(imgs[:1], "HWC").input(anc_i[:1]).input(shp_i[:1]).expect_error("not compatible")
     .save())
    (Case(out, "slice_no_window", "slice").input(imgs[:1], "HWC")
     .expect_error("Expected named slice arguments").save())
    (Case(out, "slice_wrong_count", "slice", {"start": [1, 1, 1]})
     .input(imgs[:1], "HWC").expect_error("one per sliced axis").save())
    (Case(out, "slice_fill_count", "slice",
          {"start": [-1, -1], "shape": [4, 4], "out_of_bounds_policy": "pad",
           "fill_values": [1.0, 2.0]})
     .input(imgs[:1], "HWC").expect_error("fill_values").save())


# ---- normalize -----------------------------------------------------------------------------------

def norm_ref(x, axes, mean=None, std=None, scale=1.0, shift=0.0, eps=0.0, ddof=0,
             dtype=np.float32):
    """DALI's normalize in float64: statistics over `axes` (a tuple) of x (or of a list of
    samples stacked along a new axis 0 for batch statistics)."""
    x = np.asarray(x, np.float64)
    if mean is None:
        mean = x.mean(axis=axes, keepdims=True) if x.size else np.zeros(1)
    mean = np.asarray(mean, np.float64)
    if std is None:
        n = int(np.prod([x.shape[a] for a in axes])) if x.ndim else 1
        ss = ((x - mean) ** 2).sum(axis=axes, keepdims=True)
        var = ss / (n - ddof) if n > ddof else np.zeros_like(ss)
        with np.errstate(divide="ignore"):
            f = np.where(var + eps > 0, scale / np.sqrt(var + eps), 0.0)
        if n <= ddof and eps == 0:
            f = np.zeros_like(f)
    else:
        std = np.asarray(std, np.float64)
        with np.errstate(divide="ignore"):
            f = scale / np.sqrt(std * std + eps) if eps else np.where(std != 0, scale / std, 0)
    return dali_cast((x - mean) * f + shift, dtype), mean, f


def make_normalize(out, rng, imgs):
    refs = [norm_ref(im, (0, 1, 2))[0] for im in imgs]
    (Case(out, "normalize_per_sample_all_axes", "normalize",
          note="float64 reference; float32 arithmetic: |diff| < 2e-5")
     .input(imgs, "HWC").expect(refs, max_abs=2e-5, layout="HWC").save())
    refs = [norm_ref(im, (0, 1))[0] for im in imgs]
    (Case(out, "normalize_per_channel", "normalize", {"axis_names": "HW"},
          note="per-sample, per-channel statistics")
     .input(imgs, "HWC").expect(refs, max_abs=2e-5).save())
    flat = np.concatenate([im.reshape(-1, 3) for im in imgs]).astype(np.float64)
    m = flat.mean(axis=0)
    sd = np.sqrt(((flat - m) ** 2).mean(axis=0))
    refs = [norm_ref(im, (0, 1), mean=m, std=sd)[0] for im in imgs]
    (Case(out, "normalize_batch_per_channel", "normalize", {"axes": [0, 1], "batch": True},
          note="channel statistics over the whole batch (samples of different sizes)")
     .input(imgs, "HWC").expect(refs, max_abs=2e-5).save())
    mean, std = [123.675, 116.28, 103.53], [58.395, 57.12, 57.375]
    refs = [norm_ref(im, (0, 1), mean=mean, std=std)[0] for im in imgs]
    (Case(out, "normalize_given_per_channel", "normalize",
          {"axis_names": "HW", "mean": mean, "stddev": std}, note="ImageNet constants")
     .input(imgs, "HWC").expect(refs, max_abs=2e-5).save())
    refs = [norm_ref(im, (0, 1, 2), mean=[128.0], std=[40.0], scale=64.0, shift=128.0,
                     dtype=np.uint8)[0] for im in imgs]
    (Case(out, "normalize_given_uint8", "normalize",
          {"mean": 128.0, "stddev": 40.0, "scale": 64.0, "shift": 128.0, "dtype": "uint8"},
          note="rounding + saturation; float32 vs float64 may flip a .5 tie: max 1, mean tiny")
     .input(imgs, "HWC").expect(refs, max_abs=1, mean_abs=0.01).save())
    x = [rng.standard_normal((5, 7, 2)) * 3 + 1, rng.standard_normal((4, 7, 2))]
    refs = [norm_ref(a, (0,), eps=0.5, ddof=1)[0] for a in x]
    (Case(out, "normalize_eps_ddof_f64_in", "normalize",
          {"axes": [0], "epsilon": 0.5, "ddof": 1}, note="float64 input, axis 0 reduced")
     .input(x).expect(refs, max_abs=2e-5).save())
    c = [np.full((3, 4), 7, np.int16), np.zeros((0, 4), np.int16), np.full((1, 1), -3, np.int16)]
    refs = [np.full(a.shape, 2.5, np.float32) for a in c]
    (Case(out, "normalize_constant_empty_1x1", "normalize", {"shift": 2.5},
          note="zero variance gives factor 0 (output = shift), as DALI; empty sample stays empty")
     .input(c).expect(refs).save())
    means = [np.float32(v) for v in (100.0, 0.0, 50.0, 200.0)]
    refs = [norm_ref(im, (0, 1, 2), mean=[float(mv)], std=[2.0], dtype=np.float64)[0]
            for im, mv in zip(imgs, means)]
    (Case(out, "normalize_mean_arg_input_f64_out", "normalize", {"stddev": 2.0,
                                                                  "dtype": "float64"})
     .input(imgs, "HWC").arg_input("mean", means).expect(refs, max_abs=2e-5).save())
    (Case(out, "normalize_mean_count", "normalize", {"axis_names": "HW", "mean": [1.0, 2.0]})
     .input(imgs[:1], "HWC").expect_error("mean has 2 values").save())
    (Case(out, "normalize_batch_tensor_mean", "normalize", {"batch": True, "mean": [1.0, 2.0]})
     .input(imgs[:1], "HWC").expect_error("Non-scalar mean").save())
    (Case(out, "normalize_batch_shapes", "normalize", {"batch": True, "axes": [0]})
     .input(imgs, "HWC").expect_error("non-averaged axes match").save())
    (Case(out, "normalize_bool_out", "normalize", {"dtype": "bool"})
     .input(imgs[:1], "HWC").expect_error("bool").save())


def make_constant(out, rng):
    """constant: no inputs, the same sample in each of a batch of 3; values converted with
    DALI's rules (dali_cast), shapes filled or broadcast from one value."""
    vals = [1.5, 2.5, -3.7, 4.0, -0.5, 1e9]
    ref = dali_cast(np.array(vals, np.float64).reshape(2, 3), "int16")
    (Case(out, "constant_fdata_int16_hw", "constant",
          {"fdata": vals, "shape": [2, 3], "dtype": "int16", "layout": "HW"},
          note="float values rounded half away from zero and saturated (1e9 -> 32767)")
     .batch(3).expect([ref] * 3, layout="HW").save())
    (Case(out, "constant_idata_default_int32", "constant", {"idata": [7, -2, 2 ** 31 - 1]},
          note="no shape: 1-D; no dtype: int32")
     .batch(2).expect([np.array([7, -2, 2 ** 31 - 1], np.int32)] * 2).save())
    (Case(out, "constant_fdata_default_float32", "constant", {"fdata": [0.1, -2.0]})
     .batch(2).expect([np.array([0.1, -2.0], np.float32)] * 2).save())
    (Case(out, "constant_one_value_fills_uint8", "constant",
          {"idata": [300], "shape": [2, 4, 3], "dtype": "uint8"},
          note="one value repeated over the shape; 300 saturates to 255")
     .batch(2).expect([np.full((2, 4, 3), 255, np.uint8)] * 2).save())
    (Case(out, "constant_float64_exact", "constant",
          {"fdata": [0.1, 1 / 3], "dtype": "float64"},
          note="double precision kept (DALI would store float32)")
     .batch(1).expect([np.array([0.1, 1 / 3], np.float64)]).save())
    (Case(out, "constant_int64_exact", "constant", {"idata": [2 ** 40 + 1], "dtype": "int64"})
     .batch(1).expect([np.array([2 ** 40 + 1], np.int64)]).save())
    (Case(out, "constant_bool", "constant", {"idata": [1, 0, 5], "dtype": "bool"})
     .batch(2).expect([np.array([True, False, True])] * 2).save())
    (Case(out, "constant_empty", "constant", {"fdata": [1.0], "shape": [0, 3]},
          note="a shape with no elements: empty samples")
     .batch(2).expect([np.zeros((0, 3), np.float32)] * 2).save())
    for name, args, err in [
            ("both", {"fdata": [1.0], "idata": [1]}, "exclusive"),
            ("neither", {"shape": [2]}, "either fdata or idata"),
            ("count", {"fdata": [1.0, 2.0, 3.0], "shape": [2, 2]}, "3 values do not fill"),
            ("layout", {"idata": [1, 2], "layout": "HWC"}, "has 3 letters"),
            ("negative", {"idata": [1], "shape": [2, -1]}, "must be 0 or more")]:
        Case(out, "constant_" + name, "constant", args).batch(1).expect_error(err).save()


def make(out, rng):
    imgs = photos.load(4, 96, rng)
    make_constant(out, rng)
    make_cast(out, rng)
    make_flip(out, rng, imgs)
    make_transpose(out, rng, imgs)
    make_pad(out, rng, imgs)
    make_reshape(out, rng, imgs)
    make_join(out, rng, imgs)
    make_shapes(out, rng, imgs)
    make_slice(out, rng, imgs)
    make_normalize(out, rng, imgs)
