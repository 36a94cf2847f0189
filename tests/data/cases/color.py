"""Colour operators against their documented formulas in NumPy float64 (section 1.10 of the
semantics and DALI's kernels), on real photos and synthetic arrays.

- color_twist: YIQ model, out = ((Y2R HS R2Y px - grey) * contrast + grey) * brightness with HS
  rotating (I, Q) by hue degrees (rows [1,0,0], [0,c S,s S], [0,-s S,c S]) and Y2R the exact
  inverse of R2Y; grey 128 for uint8 input, 0.5 for float32. BGR: the same on reversed channels.
- hsv: out = value * Y2R HS R2Y px; hue and saturation: color_twist with one knob.
- brightness_contrast: out = shift * R + brightness * (center + contrast * (in - center)), R =
  255 for uint8 output, 1 for float32; center 128 / 0.5 by input type unless given; brightness
  and contrast: the same with the other half neutral.
- color_space_conversion: DALI's coefficients (luma 0.299/0.587/0.114 for GRAY; BT.601 video
  range for YCbCr; offsets 16/128 for uint8, 0.0625/0.5 for float32).
uint8 references are rounded half up and saturated; float32 ones are not clamped.
Tolerances: sluice computes in float32, so uint8 outputs may differ by 1 where the float64
value is within ~1e-4 of a .5 (max_abs 1, mean_abs 0.01: a wrong rounding rule or offset
moves the mean by far more); float32 outputs 1e-5 on 0..1 values, 1e-3 on 0..255 values.
"""
import math

import numpy as np

import photos
from casekit import Case

F32 = np.float32
R2Y = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])
Y2R = np.linalg.inv(R2Y)


def finish(v, dtype):
    if dtype == np.uint8:
        return np.floor(np.clip(v, 0, 255) + 0.5).astype(np.uint8)
    return v.astype(F32)


def apply(img, m, off=0.0):
    px = img.astype(np.float64)
    return px @ np.asarray(m).T + off


def yiq_matrix(hue, sat, val=1.0):
    h = math.radians(hue)
    c, s = math.cos(h) * sat, math.sin(h) * sat
    hs = np.array([[1, 0, 0], [0, c, s], [0, -s, c]])
    return val * Y2R @ hs @ R2Y


def ref_twist(img, b, c, h, s, dtype=None, bgr=False):
    grey = 128.0 if img.dtype == np.uint8 else 0.5
    px = img[..., ::-1] if bgr else img
    v = (apply(px, yiq_matrix(h, s)) - grey) * c + grey
    v = v * b
    v = v[..., ::-1] if bgr else v
    return finish(v, dtype or img.dtype)


def ref_hsv(img, h, s, val, dtype=None):
    return finish(apply(img, yiq_matrix(h, s, val)), dtype or img.dtype)


def ref_bc(img, b=1.0, shift=0.0, c=1.0, center=None, dtype=None):
    dtype = dtype or img.dtype
    if center is None:
        center = 128.0 if img.dtype == np.uint8 else 0.5
    rng = 255.0 if dtype == np.uint8 else 1.0
    v = shift * rng + b * (center + c * (img.astype(np.float64) - center))
    return finish(v, dtype)


# ---- color_space_conversion model (DALI's kernels) -----------------------------------------

YCC = np.array([[0.257, 0.504, 0.098], [-0.148, -0.291, 0.439], [0.439, -0.368, -0.071]])
LUMA = np.array([0.299, 0.587, 0.114])


def to_rgb(img, space, oy, oc):
    v = img.astype(np.float64)
    if space == "RGB":
        return v
    if space == "BGR":
        return v[..., ::-1]
    if space == "GRAY":
        return np.repeat(v, 3, axis=-1)
    y, cb, cr = v[..., 0] - oy, v[..., 1] - oc, v[..., 2] - oc
    return np.stack([1.164 * y + 1.596 * cr, 1.164 * y - 0.813 * cr - 0.392 * cb,
                     1.164 * y + 2.017 * cb], axis=-1)


def from_rgb(rgb, space, oy, oc):
    if space == "RGB":
        return rgb
    if space == "BGR":
        return rgb[..., ::-1]
    if space == "GRAY":
        return (rgb @ LUMA)[..., None]
    return rgb @ YCC.T + np.array([oy, oc, oc])


def ref_csc(img, src, dst):
    u8 = img.dtype == np.uint8
    oy, oc = (16.0, 128.0) if u8 else (0.0625, 0.5)
    if src == dst:
        v = img.astype(np.float64)
    elif src == "YCbCr" and dst == "GRAY":
        v = (img[..., :1].astype(np.float64) - oy) / (0.257 + 0.504 + 0.098)
    elif src == "GRAY" and dst == "YCbCr":
        g = img.astype(np.float64)
        v = np.concatenate([0.859 * g + oy, np.full_like(g, oc), np.full_like(g, oc)], axis=-1)
    else:
        v = from_rgb(to_rgb(img, src, oy, oc), dst, oy, oc)
    return finish(v, img.dtype)


# ---- cases ----------------------------------------------------------------------------------

def tol(dtype, big=False):
    if dtype == np.uint8:
        return dict(max_abs=1, mean_abs=0.01)
    return dict(max_abs=1e-3 if big else 1e-5)


def twist_cases(out, rng, imgs, fimgs):
    n = len(imgs)
    b = [F32(v) for v in rng.uniform(0.5, 1.5, n)]
    c = [F32(v) for v in rng.uniform(0.5, 1.5, n)]
    h = [F32(v) for v in rng.uniform(-180, 180, n)]
    s = [F32(v) for v in rng.uniform(0, 2, n)]
    for name, src, dtype, big in (("u8", imgs, None, False), ("f32", fimgs, None, False),
                                  ("u8_to_f32", imgs, "float32", True),
                                  ("f32_to_u8", [im * F32(255) for im in fimgs], "uint8",
                                   False)):
        odt = {None: src[0].dtype, "float32": F32, "uint8": np.uint8}[dtype]
        args = {"dtype": dtype} if dtype else {}
        refs = [ref_twist(im, *p, dtype=odt) for im, p in zip(src, zip(b, c, h, s))]
        (Case(out, "twist_" + name, "color_twist", args,
              note="per-sample brightness, contrast, hue, saturation vs the YIQ formula")
         .input(src, "HWC").arg_input("brightness", b).arg_input("contrast", c)
         .arg_input("hue", h).arg_input("saturation", s)
         .expect(refs, layout="HWC", **tol(odt, big)).save())
    bgr = [np.ascontiguousarray(im[..., ::-1]) for im in imgs]
    refs = [ref_twist(im, 1.2, 0.8, 40.0, 1.3, bgr=True) for im in bgr]
    assert all((r[..., ::-1] == ref_twist(im, 1.2, 0.8, 40.0, 1.3)).all()
               for r, im in zip(refs, imgs))
    (Case(out, "twist_bgr", "color_twist",
          {"brightness": 1.2, "contrast": 0.8, "hue": 40.0, "saturation": 1.3, "image_type": "BGR"},
          note="BGR order: the RGB formula on reversed channels")
     .input(bgr, "HWC").expect(refs, **tol(np.uint8)).save())
    (Case(out, "twist_identity", "color_twist", {},
          note="neutral settings are exactly the identity (exact inverse YIQ matrix)")
     .input(imgs, "HWC").expect(imgs, max_abs=0).save())
    refs = [ref_twist(im, 1.0, 1.0, 0.0, 0.0) for im in imgs]
    (Case(out, "twist_grey", "color_twist", {"saturation": 0.0},
          note="saturation 0: Y of YIQ in every channel (0.299 R + 0.587 G + 0.114 B, plus the "
               "small I/Q leakage of the YIQ matrix)")
     .input(imgs, "HWC").expect(refs, **tol(np.uint8)).save())
    (Case(out, "twist_gray_input", "color_twist", {"hue": 10.0},
          note="1-channel input is rejected with a clear message")
     .input([im[..., :1] for im in imgs[:1]], "HWC")
     .expect_error("expected RGB or BGR images (3 channels), got 1").save())


def hsv_cases(out, rng, imgs, fimgs):
    n = len(imgs)
    h = [F32(v) for v in rng.uniform(-360, 360, n)]
    s = [F32(v) for v in rng.uniform(0, 2, n)]
    v = [F32(x) for x in rng.uniform(0.5, 1.5, n)]
    for name, src in (("u8", imgs), ("f32", fimgs)):
        refs = [ref_hsv(im, *p) for im, p in zip(src, zip(h, s, v))]
        (Case(out, "hsv_" + name, "hsv", {},
              note="per-sample hue (wrapping), saturation, value vs the YIQ formula")
         .input(src, "HWC").arg_input("hue", h).arg_input("saturation", s).arg_input("value", v)
         .expect(refs, **tol(src[0].dtype)).save())
    refs = [ref_hsv(im, 120.0, 1.0, 1.0) for im in imgs]
    refs2 = [ref_hsv(im, 480.0, 1.0, 1.0) for im in imgs]
    assert all(np.abs(a.astype(int) - b).max() <= 1 for a, b in zip(refs, refs2))
    (Case(out, "hsv_wrap", "hsv", {"hue": 480.0},
          note="hue 480 = 120 degrees")
     .input(imgs, "HWC").expect(refs, **tol(np.uint8)).save())
    refs = [ref_hsv(im, 0.0, 1.0, 1.0, dtype=F32) for im in imgs]
    (Case(out, "hsv_to_float", "hsv", {"dtype": "float32"},
          note="identity settings to float32: the input values")
     .input(imgs, "HWC").expect(refs, max_abs=1e-3).save())
    (Case(out, "hsv_4_channels", "hsv", {"hue": 10.0},
          note="RGBA input is rejected")
     .input([np.zeros((4, 4, 4), np.uint8)], "HWC").expect_error("got 4 channels").save())


def bc_cases(out, rng, imgs, fimgs):
    n = len(imgs)
    b = [F32(x) for x in rng.uniform(0.3, 1.7, n)]
    sh = [F32(x) for x in rng.uniform(-0.2, 0.2, n)]
    c = [F32(x) for x in rng.uniform(0.3, 1.7, n)]
    for name, src, dtype, big in (("u8", imgs, None, False), ("f32", fimgs, None, False),
                                  ("u8_to_f32", imgs, "float32", True),
                                  ("f32_to_u8", fimgs, "uint8", False)):
        odt = {None: src[0].dtype, "float32": F32, "uint8": np.uint8}[dtype]
        refs = [ref_bc(im, bb, ss, cc, dtype=odt) for im, bb, ss, cc in zip(src, b, sh, c)]
        (Case(out, "bc_" + name, "brightness_contrast", {"dtype": dtype} if dtype else {},
              note="per-sample brightness, brightness_shift, contrast; R by output type, "
                   "centre by input type")
         .input(src, "HWC").arg_input("brightness", b).arg_input("brightness_shift", sh)
         .arg_input("contrast", c).expect(refs, **tol(odt, big)).save())
    gray = [im[..., :1].copy() for im in imgs]
    rgba = [np.concatenate([im, im[..., :1]], axis=-1) for im in imgs]
    for name, src in (("gray", gray), ("rgba", rgba)):
        refs = [ref_bc(im, 1.1, 0.05, 1.4, center=100.0) for im in src]
        (Case(out, "bc_" + name, "brightness_contrast",
              {"brightness": 1.1, "brightness_shift": 0.05, "contrast": 1.4,
               "contrast_center": 100.0},
              note="any channel count; explicit contrast_center")
         .input(src, "HWC").expect(refs, **tol(np.uint8)).save())
    seq = np.stack(imgs[:1] * 3)  # FHWC
    (Case(out, "bc_sequence", "brightness_contrast", {"contrast": 2.0},
          note="FHWC sequences: every frame alike; contrast 2 saturates")
     .input([seq], "FHWC").expect([ref_bc(seq, c=2.0)], layout="FHWC", **tol(np.uint8)).save())
    empty = np.zeros((0, 7, 3), np.uint8)
    (Case(out, "bc_empty", "brightness_contrast", {"brightness": 2.0},
          note="an empty sample stays empty")
     .input([empty, imgs[0]], "HWC").expect([empty, ref_bc(imgs[0], 2.0)], max_abs=1).save())


def knob_cases(out, rng, imgs, fimgs):
    """The single-knob ops: hue, saturation (YIQ), brightness, contrast (linear)."""
    n = len(imgs)
    h = [F32(v) for v in rng.uniform(-180, 180, n)]
    s = [F32(v) for v in rng.uniform(0, 2, n)]
    b = [F32(v) for v in rng.uniform(0.3, 1.7, n)]
    sh = [F32(v) for v in rng.uniform(-0.2, 0.2, n)]
    c = [F32(v) for v in rng.uniform(0.3, 1.7, n)]
    bgr = [np.ascontiguousarray(im[..., ::-1]) for im in imgs]
    (Case(out, "hue_bgr", "hue", {"image_type": "BGR"}, note="per-sample hue, BGR order")
     .input(bgr, "HWC").arg_input("hue", h)
     .expect([ref_twist(im, 1, 1, hh, 1, bgr=True) for im, hh in zip(bgr, h)],
             **tol(np.uint8)).save())
    (Case(out, "saturation_f32", "saturation", {}, note="per-sample saturation, float32")
     .input(fimgs, "HWC").arg_input("saturation", s)
     .expect([ref_twist(im, 1, 1, 0, ss) for im, ss in zip(fimgs, s)], **tol(F32)).save())
    (Case(out, "brightness_u8", "brightness", {},
          note="out = shift * 255 + brightness * in")
     .input(imgs, "HWC").arg_input("brightness", b).arg_input("brightness_shift", sh)
     .expect([ref_bc(im, bb, ss) for im, bb, ss in zip(imgs, b, sh)], **tol(np.uint8)).save())
    (Case(out, "contrast_f32", "contrast", {},
          note="out = 0.5 + contrast * (in - 0.5) for float32")
     .input(fimgs, "HWC").arg_input("contrast", c)
     .expect([ref_bc(im, c=cc) for im, cc in zip(fimgs, c)], **tol(F32)).save())
    (Case(out, "contrast_center_u8", "contrast", {"contrast": 1.5},
          note="per-sample contrast_center")
     .input(imgs, "HWC").arg_input("contrast_center", [F32(60), F32(200), F32(128)])
     .expect([ref_bc(im, c=1.5, center=cc) for im, cc in zip(imgs, (60, 200, 128))],
             **tol(np.uint8)).save())


def csc_cases(out, rng, imgs, fimgs):
    spaces = ["RGB", "BGR", "GRAY", "YCbCr"]
    synth = {}
    for sp in spaces:
        c = 1 if sp == "GRAY" else 3
        synth[sp] = [rng.integers(0, 256, (int(rng.integers(5, 30)), int(rng.integers(5, 30)), c),
                                  dtype=np.uint8) for _ in range(2)]
    for src in spaces:
        for dst in spaces:
            if src in ("RGB", "BGR"):
                u8 = imgs
            elif src == "GRAY":
                u8 = [im[..., :1].copy() for im in imgs[:2]] + synth["GRAY"]
            else:
                u8 = [ref_csc(im, "RGB", "YCbCr") for im in imgs[:2]] + synth["YCbCr"]
            for tag, data in (("u8", u8), ("f32", [im.astype(F32) / F32(255) for im in u8])):
                refs = [ref_csc(im, src, dst) for im in data]
                (Case(out, "csc_%s_%s_%s" % (src, dst, tag), "color_space_conversion",
                      {"image_type": src, "output_type": dst},
                      note="DALI's coefficients, %s" % tag)
                 .input(data, "HWC").expect(refs, layout="HWC", **tol(data[0].dtype)).save())
    grey = np.full((3, 4, 3), 77, np.uint8)
    (Case(out, "csc_grey_chroma", "color_space_conversion",
          {"image_type": "RGB", "output_type": "YCbCr"},
          note="neutral colours have Cb = Cr = 128 exactly (DALI special-cases it)")
     .input([grey], "HWC").expect([ref_csc(grey, "RGB", "YCbCr")], max_abs=0).save())
    (Case(out, "csc_wrong_channels", "color_space_conversion",
          {"image_type": "GRAY", "output_type": "RGB"},
          note="image_type GRAY with 3 channels is rejected")
     .input(imgs[:1], "HWC").expect_error("expected GRAY images (1 channel), got 3").save())
    empty = np.zeros((0, 4, 3), np.uint8)
    (Case(out, "csc_empty", "color_space_conversion",
          {"image_type": "RGB", "output_type": "GRAY"},
          note="zero-extent samples give zero-extent outputs with the new channel count")
     .input([empty], "HWC").expect([np.zeros((0, 4, 1), np.uint8)]).save())


def make(out, rng):
    imgs = photos.load(3, 64, rng)
    fimgs = [im.astype(F32) / F32(255) for im in imgs]
    twist_cases(out, rng, imgs, fimgs)
    hsv_cases(out, rng, imgs, fimgs)
    bc_cases(out, rng, imgs, fimgs)
    knob_cases(out, rng, imgs, fimgs)
    csc_cases(out, rng, imgs, fimgs)
