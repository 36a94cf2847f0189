"""crop against NumPy slicing (reference section 1.6 of DALI's semantics).

Window along each axis: crop extent truncated to int, anchor = pos * (in - crop) computed in
float32 and rounded half away from zero ("round") or toward zero ("truncate"); pixels outside
the image are fill_values (policy "pad"), or the window is clipped ("trim_to_shape"), or the
sample fails ("error"). The DALI rounding example (20 x 8 image, crop 11 x 9, pos 0.5) uses
hand-computed anchors, not the formula. All cases are exact.
"""
import numpy as np

import photos
from casekit import Case


def round_away(x):
    x = float(x)
    f = np.floor(x)
    d = x - f
    return int(f + 1 if d > 0.5 or (d == 0.5 and x > 0) else f)


def anchor(n, c, pos, rounding="round"):
    """DALI: float32 product, then round / truncate."""
    v = float(np.float32(pos) * np.float32(n - c))
    return round_away(v) if rounding == "round" else int(np.trunc(v))


def window(img, y, x, h, w, fill=0.0, chw=False, dtype=None):
    """img[y:y+h, x:x+w] (HWC or CHW) with outside pixels set to fill (scalar or per channel)."""
    a = img.transpose(1, 2, 0) if chw else img
    H, W, C = a.shape
    dt = np.dtype(dtype) if dtype else a.dtype
    out = np.empty((h, w, C), dt)
    out[...] = np.asarray(fill, np.float64).astype(dt)
    y0, y1, x0, x1 = max(y, 0), min(y + h, H), max(x, 0), min(x + w, W)
    if y1 > y0 and x1 > x0:
        out[y0 - y:y1 - y, x0 - x:x1 - x] = a[y0:y1, x0:x1].astype(dt)
    return np.ascontiguousarray(out.transpose(2, 0, 1) if chw else out)


def crop_ref(img, ch, cw, px=0.5, py=0.5, fill=0.0, rounding="round", chw=False, dtype=None):
    H, W = (img.shape[1], img.shape[2]) if chw else img.shape[:2]
    ch, cw = (int(ch) if ch >= 1 else H), (int(cw) if cw >= 1 else W)
    y = anchor(H, ch, py, rounding)
    x = anchor(W, cw, px, rounding)
    return window(img, y, x, ch, cw, fill, chw, dtype)


def make(out, rng):
    imgs = photos.load(4, 120, rng)
    crop = [min(im.shape[0] for im in imgs) - 3, min(im.shape[1] for im in imgs) - 2]
    (Case(out, "center", "crop", {"crop": crop}, note="default position 0.5, 0.5")
     .input(imgs, "HWC").expect([crop_ref(im, *crop) for im in imgs], layout="HWC").save())

    px = [np.float32(v) for v in (0.0, 1.0, 0.3, 0.77)]
    py = [np.float32(v) for v in (1.0, 0.0, 0.5, 0.123)]
    refs = [crop_ref(im, 33.9, 47.2, a, b) for im, a, b in zip(imgs, px, py)]
    (Case(out, "per_sample_pos_fractional_extent", "crop", {"crop_h": 33.9, "crop_w": 47.2},
          note="crop_pos_x/y argument inputs; extents 33.9 x 47.2 truncate to 33 x 47")
     .input(imgs, "HWC").arg_input("crop_pos_x", px).arg_input("crop_pos_y", py)
     .expect(refs).save())

    chw = [np.ascontiguousarray(im.transpose(2, 0, 1)) for im in imgs]
    refs = [crop_ref(c, 20, 31, 0.25, 0.75, chw=True) for c in chw]
    (Case(out, "chw", "crop", {"crop": [20, 31], "crop_pos_x": 0.25, "crop_pos_y": 0.75})
     .input(chw, "CHW").expect(refs, layout="CHW").save())

    # DALI test_crop_rounding: 20 x 8 x 3, crop (11, 9), pos 0.5:
    # anchor_y = 0.5 * 9 = 4.5 -> 5 (round) / 4 (truncate); anchor_x = 0.5 * -1 = -0.5 -> -1
    # (round: a padded column on the left) / 0 (truncate: padded column on the right).
    img = rng.integers(0, 256, (20, 8, 3), dtype=np.uint8)
    for rounding, y, x in (("round", 5, -1), ("truncate", 4, 0)):
        (Case(out, "dali_rounding_" + rounding, "crop",
              {"crop": [11, 9], "rounding": rounding, "out_of_bounds_policy": "pad"},
              note="hand-computed anchors of DALI's test_crop_rounding")
         .input([img], "HWC").expect([window(img, y, x, 11, 9)]).save())

    rgba = [rng.integers(0, 256, (9, 13, 4), dtype=np.uint8),
            rng.integers(0, 256, (30, 5, 4), dtype=np.uint8)]
    fill = [1.0, 2.0, 3.0, 255.0]
    refs = [crop_ref(a, 16, 16, 0.2, 0.9, fill=fill) for a in rgba]
    (Case(out, "rgba_pad_per_channel", "crop",
          {"crop": [16, 16], "crop_pos_x": 0.2, "crop_pos_y": 0.9, "out_of_bounds_policy": "pad",
           "fill_values": fill}, note="window larger than the image; one fill value per channel")
     .input(rgba, "HWC").expect(refs).save())

    gray = [im[..., :1].copy() for im in imgs]
    refs = [crop_ref(g, 500, 10, 0.5, 0.5, fill=7.0) for g in gray]
    (Case(out, "gray_pad_scalar", "crop",
          {"crop": [500, 10], "out_of_bounds_policy": "pad", "fill_values": 7.0})
     .input(gray, "HWC").expect(refs).save())

    refs = []
    for im in imgs:
        H, W = im.shape[:2]
        y, x = anchor(H, 500, 0.5), anchor(W, 10, 0.5)
        y0, x0 = max(y, 0), max(x, 0)
        refs.append(im[y0:min(y + 500, H), x0:min(x + 10, W)])
    (Case(out, "trim_to_shape", "crop", {"crop": [500, 10], "out_of_bounds_policy": "trim_to_shape"},
          note="the window is clipped to the image")
     .input(imgs, "HWC").expect(refs).save())

    refs = [crop_ref(im, 40, 40, 0.0, 0.0, dtype=np.float32) for im in imgs]
    (Case(out, "to_float", "crop", {"crop": [40, 40], "crop_pos_x": 0.0, "crop_pos_y": 0.0,
                                     "dtype": "float32"})
     .input(imgs, "HWC").expect(refs).save())
    f = [(im.astype(np.float32) - 100.3) * 1.7 for im in imgs]
    refs = [crop_ref(a, 0, 0, dtype=np.int8) for a in f]
    for r, a in zip(refs, f):  # DALI's saturating cast: round half away, clamp
        v = a.astype(np.float64)
        r[...] = np.clip(np.where(v >= 0, np.floor(v + 0.5), np.ceil(v - 0.5)), -128, 127)
    (Case(out, "float_to_int8_saturating", "crop", {"dtype": "int8"},
          note="no crop arguments: the whole image, cast with saturation")
     .input(f, "HWC").expect(refs).save())

    small = [np.full((1, 1, 3), 9, np.uint8), np.zeros((0, 0, 3), np.uint8),
             rng.integers(0, 9, (3, 2, 3), dtype=np.uint8)]
    (Case(out, "tiny_and_empty", "crop", note="1x1 and 0x0 images without crop arguments")
     .input(small, "HWC").expect(small).save())
    (Case(out, "no_layout_is_hwc", "crop", {"crop": [1, 2]}, note="unannotated input = HWC")
     .input(imgs[:2]).expect([crop_ref(im, 1, 2) for im in imgs[:2]]).save())

    (Case(out, "out_of_bounds", "crop", {"crop": [4000, 10]}, note="default policy 'error'")
     .input(imgs[:1], "HWC").expect_error("out of bounds").save())
    (Case(out, "bad_layout", "crop", {"crop": [2, 2]})
     .input([np.zeros((4, 4, 3), np.uint8)], "ABC").expect_error("does not match any").save())
    (Case(out, "crop_and_crop_h", "crop", {"crop": [2, 2], "crop_h": 3.0})
     .input(imgs[:1], "HWC").expect_error("exclusive").save())
    (Case(out, "fill_count", "crop",
          {"crop": [400, 400], "out_of_bounds_policy": "pad", "fill_values": [1.0, 2.0]})
     .input(imgs[:1], "HWC").expect_error("fill_values has 2 values").save())
    (Case(out, "not_3d", "crop", {"crop": [2, 2]})
     .input([np.zeros((4, 4), np.uint8)]).expect_error("3 dimensions").save())
