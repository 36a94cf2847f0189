"""resize and random_resized_crop against PIL, OpenCV and a NumPy resampler (reference §1.4-1.5).

References
- PIL 9.4 Image.resize (NEAREST, BILINEAR, BICUBIC, LANCZOS; `box` for regions of interest):
  sluice's uint8 path uses PIL's 22-bit fixed point and pass order, so uint8 outputs are equal
  (tolerance max 1, mean 0.01 for safety across libm versions); float32 against PIL's mode "F"
  (double arithmetic): max 2e-3 on values 0..255 (float32 accumulation). Channels other than 3
  go through PIL one channel at a time (mode "L"; PIL's RGBA would premultiply alpha).
- OpenCV 4.6 without antialiasing: INTER_LINEAR (uint8 uses 11-bit fixed point: max 1, mean
  0.3; float32: max 1e-3) and INTER_AREA for an exact 2x downscale (= unwidened LINEAR there).
  OpenCV's INTER_CUBIC uses a = -0.75 (sluice and PIL: -0.5) and INTER_NEAREST has no half-pixel
  offset, so they are not comparable.
- np_resample below: the documented filters (src/ops/image/resample.h) in float64, used where
  PIL has no equivalent: GAUSSIAN, CUBIC / LANCZOS3 without antialiasing, ROIs reaching outside
  the image, subpixel_scale's adjusted ROI, mixed min/mag filters. make() first checks it
  against PIL on the filters PIL has, so its conventions are PIL's. uint8 outputs max 1.
- Output sizes of every mode from §1.5's worked examples (written (W, H) there; sluice's size,
  max_size and ROI are (H, W) like DALI's) are hand-computed constants, not the formula.
"""
import math

import cv2
import numpy as np
from PIL import Image

import photos
from casekit import Case

PIL_FILTER = {"INTERP_NN": Image.NEAREST, "INTERP_LINEAR": Image.BILINEAR,
              "INTERP_CUBIC": Image.BICUBIC, "INTERP_LANCZOS3": Image.LANCZOS,
              "INTERP_TRIANGULAR": Image.BILINEAR}
U8 = dict(max_abs=1, mean_abs=0.01)  # uint8 vs PIL (equal in practice)
F32 = dict(max_abs=2e-3)


# ---- references -------------------------------------------------------------------------------

def pil_resize(img, size_hw, interp, box=None):
    """PIL per channel (uint8 -> mode L, float32 -> mode F); box = (x0, y0, x1, y1)."""
    h, w = size_hw
    f = PIL_FILTER[interp]
    chans = []
    for c in range(img.shape[2]):
        ch = img[:, :, c]
        mode = "L" if img.dtype == np.uint8 else "F"
        im = Image.fromarray(ch if mode == "L" else ch.astype(np.float32), mode)
        chans.append(np.asarray(im.resize((w, h), f, box=box)))
    return np.stack(chans, axis=2)


def _lanczos(x):
    return np.where((x >= -3) & (x < 3), np.sinc(x) * np.sinc(x / 3), 0.0)


KERNELS = {  # (function, support) as documented in resample.h
    "INTERP_LINEAR": (lambda x: np.maximum(0.0, 1 - np.abs(x)), 1.0),
    "INTERP_TRIANGULAR": (lambda x: np.maximum(0.0, 1 - np.abs(x)), 1.0),
    "INTERP_CUBIC": (lambda x: np.where(np.abs(x) < 1, (1.5 * np.abs(x) - 2.5) * x * x + 1,
                                        np.where(np.abs(x) < 2, (((np.abs(x) - 5) * np.abs(x)
                                                                  + 8) * np.abs(x) - 4) * -0.5,
                                                 0.0)), 2.0),
    "INTERP_LANCZOS3": (_lanczos, 3.0),
    "INTERP_GAUSSIAN": (lambda x: np.where(np.abs(x) < 1, np.exp(-4 * x * x), 0.0), 1.0),
}


def weights(n_in, n_out, lo, hi, interp, antialias):
    """(n_out, n_in) matrix mapping the input interval [lo, hi) onto n_out pixels."""
    m = np.zeros((n_out, n_in))
    scale = (hi - lo) / n_out
    if interp == "INTERP_NN":
        x = lo + scale * 0.5
        for o in range(n_out):  # accumulated like PIL
            m[o, min(max(int(x) if x > 0 else 0, 0), n_in - 1)] = 1
            x += scale
        return m
    f, support = KERNELS[interp]
    fs = abs(scale) if (antialias or interp == "INTERP_TRIANGULAR") and abs(scale) > 1 else 1.0
    support *= fs
    for o in range(n_out):
        c = lo + (o + 0.5) * scale
        b = min(max(math.floor(c - support + 0.5), 0), n_in)
        e = min(max(math.floor(c + support + 0.5), 0), n_in)
        w = f((np.arange(b, e) - c + 0.5) / fs) if e > b else np.zeros(0)
        if e <= b or abs(w.sum()) <= 1e-9 or np.abs(w).sum() > 1.9 * abs(w.sum()):
            m[o, min(max(math.floor(c), 0), n_in - 1)] = 1  # nearest pixel
        else:
            m[o, b:e] = w / w.sum()
    return m


def np_resample(img, size_hw, interp, antialias=True, roi=None, min_filter=None,
                dtype=None):
    """Separable float64 resampling; roi = ((y0, x0), (y1, x1)), reversed axes mirror."""
    h, w = img.shape[:2]
    (y0, x0), (y1, x1) = roi if roi is not None else ((0, 0), (h, w))
    fy = min_filter if min_filter and size_hw[0] < abs(y1 - y0) else interp
    fx = min_filter if min_filter and size_hw[1] < abs(x1 - x0) else interp
    my = weights(h, size_hw[0], y0, y1, fy, antialias)
    mx = weights(w, size_hw[1], x0, x1, fx, antialias)
    tmp = np.tensordot(my, img.astype(np.float64), axes=(1, 0))  # (oh, w, c)
    out = np.tensordot(tmp, mx, axes=(1, 1)).transpose(0, 2, 1)  # (oh, ow, c)
    return to_dtype(out, dtype or img.dtype)


def to_dtype(a, dtype):
    if np.dtype(dtype) == np.uint8:
        return np.clip(np.rint(a), 0, 255).astype(np.uint8)
    return a.astype(np.float32)


# ---- case groups ------------------------------------------------------------------------------

def check_reference(imgs):
    """np_resample agrees with PIL where PIL has the filter (so it shares PIL's conventions)."""
    img = imgs[0].astype(np.float32)
    for interp in ("INTERP_NN", "INTERP_LINEAR", "INTERP_CUBIC", "INTERP_LANCZOS3"):
        for size in ((61, 47), (300, 211)):
            a = np_resample(img, size, interp)
            b = pil_resize(img, size, interp)
            assert np.abs(a - b).max() < 1e-3, (interp, size, np.abs(a - b).max())
    box = (10.5, 7.25, 90.0, 60.75)
    a = np_resample(img, (33, 41), "INTERP_CUBIC", roi=((box[1], box[0]), (box[3], box[2])))
    assert np.abs(a - pil_resize(img, (33, 41), "INTERP_CUBIC", box=box)).max() < 1e-3


def filters_vs_pil(out, imgs, big):
    """Every PIL filter, up and down, large factors, uint8 and float32."""
    for interp in ("INTERP_NN", "INTERP_LINEAR", "INTERP_CUBIC", "INTERP_LANCZOS3",
                   "INTERP_TRIANGULAR"):
        name = interp[7:].lower()
        for tag, (h, w) in (("down", (57, 83)), ("up", (301, 417)), ("mixed", (250, 90))):
            args = {"resize_x": w, "resize_y": h, "interp_type": interp}
            refs = [pil_resize(im, (h, w), interp) for im in imgs]
            (Case(out, "%s_%s_u8" % (name, tag), "resize", args,
                  note="uint8 vs PIL %s (antialiased when downscaling)" % interp)
             .input(imgs, "HWC").expect(refs, layout="HWC", **U8).save())
        fimgs = [im.astype(np.float32) for im in imgs[:2]]
        args = {"resize_x": 83, "resize_y": 301, "interp_type": interp}
        refs = [pil_resize(im, (301, 83), interp) for im in fimgs]
        (Case(out, "%s_f32" % name, "resize", args,
              note="float32 vs PIL mode F (double arithmetic)")
         .input(fimgs, "HWC").expect(refs, **F32).save())
        args = {"resize_x": 37, "resize_y": 28, "interp_type": interp}
        (Case(out, "%s_large_factor_u8" % name, "resize", args,
              note="%d x %d -> 37 x 28: filter support widened ~%dx, vs PIL"
              % (big.shape[1], big.shape[0], big.shape[1] // 37))
         .input([big], "HWC").expect([pil_resize(big, (28, 37), interp)], **U8).save())


def one_axis(out, imgs):
    """One axis keeps its size (mode stretch): a single pass, as PIL."""
    for interp, dt in (("INTERP_CUBIC", np.uint8), ("INTERP_LANCZOS3", np.float32),
                       ("INTERP_GAUSSIAN", np.uint8)):
        for tag, size in (("keep_h", [0, 150]), ("keep_w", [150, 0])):
            batch = [im.astype(dt) for im in imgs]
            hw = [(im.shape[0], 150) if tag == "keep_h" else (150, im.shape[1]) for im in imgs]
            if interp == "INTERP_GAUSSIAN":
                refs = [np_resample(im, s, interp) for im, s in zip(batch, hw)]
                tol = dict(max_abs=1, mean_abs=0.3)
            else:
                refs = [pil_resize(im, s, interp) for im, s in zip(batch, hw)]
                tol = U8 if dt == np.uint8 else F32
            (Case(out, "%s_%s_%s" % (tag, interp[7:].lower(), np.dtype(dt).name), "resize",
                  {"size": size, "mode": "stretch", "interp_type": interp},
                  note="one axis resized, the other kept (its pass skipped)")
             .input(batch, "HWC").expect(refs, **tol).save())


def gaussian(out, imgs):
    for tag, (h, w) in (("down", (57, 83)), ("up", (301, 417))):
        args = {"resize_x": w, "resize_y": h, "interp_type": "INTERP_GAUSSIAN"}
        refs = [np_resample(im, (h, w), "INTERP_GAUSSIAN") for im in imgs[:2]]
        (Case(out, "gaussian_%s_u8" % tag, "resize", args,
              note="PIL has no Gaussian: NumPy float64 of exp(-4x^2), |x| < 1, widened")
         .input(imgs[:2], "HWC").expect(refs, max_abs=1, mean_abs=0.3).save())
        fimgs = [im.astype(np.float32) for im in imgs[:2]]
        refs = [np_resample(im, (h, w), "INTERP_GAUSSIAN") for im in fimgs]
        (Case(out, "gaussian_%s_f32" % tag, "resize", args, note="NumPy float64 Gaussian")
         .input(fimgs, "HWC").expect(refs, max_abs=1e-3).save())


def no_antialias(out, imgs):
    """antialias=False: OpenCV's INTER_LINEAR / INTER_AREA conventions."""
    args = {"resize_x": 111, "resize_y": 70, "antialias": False}
    refs = [cv2.resize(im, (111, 70), interpolation=cv2.INTER_LINEAR) for im in imgs]
    (Case(out, "linear_noaa_opencv_u8", "resize", args,
          note="OpenCV INTER_LINEAR (11-bit fixed point: +-1)")
     .input(imgs, "HWC").expect(refs, max_abs=1, mean_abs=0.3).save())
    fimgs = [im.astype(np.float32) for im in imgs[:2]]
    refs = [cv2.resize(im, (111, 70), interpolation=cv2.INTER_LINEAR) for im in fimgs]
    (Case(out, "linear_noaa_opencv_f32", "resize", args, note="OpenCV INTER_LINEAR float32")
     .input(fimgs, "HWC").expect(refs, max_abs=1e-3).save())
    even = [im[:im.shape[0] // 2 * 2, :im.shape[1] // 2 * 2].astype(np.float32) for im in imgs]
    refs = [cv2.resize(im, (im.shape[1] // 2, im.shape[0] // 2), interpolation=cv2.INTER_AREA)
            for im in even]
    for k, (im, ref) in enumerate(zip(even, refs)):
        (Case(out, "linear_noaa_area2x_f32_%d" % k, "resize",
              {"resize_x": im.shape[1] // 2, "resize_y": im.shape[0] // 2, "antialias": False},
              note="exact 2x downscale: unwidened LINEAR = OpenCV INTER_AREA (2x2 mean)")
         .input([im], "HWC").expect([ref], max_abs=1e-3).save())
    for interp in ("INTERP_CUBIC", "INTERP_LANCZOS3", "INTERP_GAUSSIAN", "INTERP_NN"):
        args = {"resize_x": 71, "resize_y": 45, "interp_type": interp, "antialias": False}
        refs = [np_resample(im, (45, 71), interp, antialias=False) for im in imgs[:2]]
        (Case(out, "%s_noaa_u8" % interp[7:].lower(), "resize", args,
              note="unwidened filter, NumPy float64 reference")
         .input(imgs[:2], "HWC").expect(refs, max_abs=1, mean_abs=0.3).save())
    refs = [pil_resize(im, (45, 71), "INTERP_LINEAR") for im in imgs[:2]]
    (Case(out, "triangular_noaa_u8", "resize",
          {"resize_x": 71, "resize_y": 45, "interp_type": "INTERP_TRIANGULAR",
           "antialias": False},
          note="TRIANGULAR antialiases even with antialias=False: PIL BILINEAR")
     .input(imgs[:2], "HWC").expect(refs, **U8).save())


def channels_and_types(out, imgs, rng):
    gray = [im[:, :, :1].copy() for im in imgs]
    rgba = [np.concatenate([im, rng.integers(0, 256, im.shape[:2] + (1,), np.uint8)], axis=2)
            for im in imgs]
    five = [np.concatenate([im, im[:, :, ::-1][:, :, :2]], axis=2) for im in imgs[:2]]
    for tag, batch in (("c1", gray), ("c4", rgba), ("c5", five)):
        for interp in ("INTERP_LINEAR", "INTERP_LANCZOS3", "INTERP_NN"):
            refs = [pil_resize(im, (90, 64), interp) for im in batch]
            (Case(out, "%s_%s_u8" % (tag, interp[7:].lower()), "resize",
                  {"size": [90, 64], "interp_type": interp},
                  note="%s channels vs PIL per channel (mode L)" % tag[1:])
             .input(batch, "HWC").expect(refs, **U8).save())
    refs = [pil_resize(im.astype(np.float32), (90, 64), "INTERP_CUBIC") for im in imgs]
    (Case(out, "u8_to_f32", "resize",
          {"size": [90, 64], "interp_type": "INTERP_CUBIC", "dtype": "float32"},
          note="uint8 in, float32 out: PIL mode F on the same pixels")
     .input(imgs, "HWC").expect(refs, **F32).save())
    fimgs = [im.astype(np.float32) * 1.1 - 10 for im in imgs]
    refs = [to_dtype(pil_resize(im, (90, 64), "INTERP_CUBIC"), np.uint8) for im in fimgs]
    (Case(out, "f32_to_u8", "resize",
          {"size": [90, 64], "interp_type": "INTERP_CUBIC", "dtype": "uint8"},
          note="float32 in (beyond 0..255), uint8 out: rounded and clamped")
     .input(fimgs, "HWC").expect(refs, max_abs=1, mean_abs=0.01).save())
    img = np.zeros((1, 1, 3), np.uint8) + np.array([[[7, 130, 255]]], np.uint8)
    for interp in ("INTERP_NN", "INTERP_LINEAR", "INTERP_CUBIC", "INTERP_LANCZOS3",
                   "INTERP_GAUSSIAN"):
        (Case(out, "one_pixel_%s" % interp[7:].lower(), "resize",
              {"resize_x": 7, "resize_y": 5, "interp_type": interp},
              note="1x1 image: every output pixel is the input pixel")
         .input([img], "HWC").expect([np.broadcast_to(img, (5, 7, 3))], max_abs=0).save())
    (Case(out, "to_one_pixel", "resize", {"resize_x": 1, "resize_y": 1},
          note="whole image to 1x1, vs PIL (triangle over the whole image)")
     .input(imgs, "HWC").expect([pil_resize(im, (1, 1), "INTERP_LINEAR") for im in imgs],
                                **U8).save())


def sizes(out, rng):
    """§1.5's worked examples: shapes hand-computed, pixels vs PIL (subpixel_scale off) or
    NumPy (subpixel_scale on, adjusted ROI)."""
    img = rng.integers(0, 256, (480, 640, 3), np.uint8)  # W x H = 640 x 480
    img = cv2.GaussianBlur(img, (0, 0), 3)
    tall = np.ascontiguousarray(img[:, :300])  # H x W = 480 x 300
    wide = cv2.resize(img, (1200, 600), interpolation=cv2.INTER_AREA)
    cases = [  # name, args, input, expected (H, W)
        ("default_x", {"resize_x": 600}, img, (450, 600)),
        ("default_y", {"resize_y": 600}, img, (600, 800)),
        ("default_size_w", {"size": [0, 600]}, img, (450, 600)),
        ("default_both", {"size": [100, 200]}, img, (100, 200)),
        ("stretch_max", {"size": [500, 600], "mode": "stretch", "max_size": [300, 1000]}, img,
         (300, 600)),
        ("stretch_missing", {"size": [0, 600], "mode": "stretch"}, img, (480, 600)),
        ("default_max", {"resize_x": 800, "max_size": [500, 0]}, img, (500, 800)),
        ("not_larger", {"size": [500, 600], "mode": "not_larger", "max_size": 720}, img,
         (450, 600)),
        ("not_smaller", {"size": [600, 600], "mode": "not_smaller", "max_size": 720}, img,
         (540, 720)),
        ("not_smaller_max_wins", {"size": 800, "mode": "not_smaller", "max_size": 1400}, wide,
         (700, 1400)),
        ("not_larger_one_given", {"size": [0, 320], "mode": "not_larger"}, img, (240, 320)),
        ("shorter", {"resize_shorter": 240}, img, (240, 320)),
        ("shorter_tall", {"resize_shorter": 150}, tall, (240, 150)),
        ("longer", {"resize_longer": 300}, img, (225, 300)),
        ("longer_tall", {"resize_longer": 320}, tall, (320, 200)),
        ("shorter_max_tie", {"resize_shorter": 200, "max_size": 250}, img, (188, 250)),
        ("very_small", {"size": [1e-10, 1e-10]}, img, (1, 1)),
    ]
    for name, args, im, (h, w) in cases:
        args = dict(args, subpixel_scale=False)
        (Case(out, "size_" + name, "resize", args, note="§1.5 size rules; PIL pixels")
         .input([im], "HWC").expect([pil_resize(im, (h, w), "INTERP_LINEAR")], **U8).save())
    # subpixel_scale on (the default): 640 x 480 shorter 256 -> 341.33 -> 341 columns that keep
    # the exact scale 0.5333: the ROI shrinks about its centre to 341 / 0.5333 = 639.375 px.
    sw = 640 * 256 / 480
    adj = 341 / sw
    roi = ((0, 320 - 320 * adj), (480, 320 + 320 * adj))
    (Case(out, "size_shorter_subpixel", "resize", {"resize_shorter": 256},
          note="subpixel_scale=true keeps the scale 256/480 for the rounded 341 columns")
     .input([img], "HWC").expect([np_resample(img, (256, 341), "INTERP_LINEAR", roi=roi)],
                                 max_abs=1, mean_abs=0.3).save())
    (Case(out, "size_shorter_nosubpixel", "resize",
          {"resize_shorter": 256, "subpixel_scale": False},
          note="subpixel_scale=false maps the whole width onto 341 columns, as PIL")
     .input([img], "HWC").expect([pil_resize(img, (256, 341), "INTERP_LINEAR")], **U8).save())
    # per-sample sizes through argument inputs
    ims = [img, tall, img]
    xs = [np.float32(v) for v in (100, 0, 50)]
    ys = [np.float32(v) for v in (0, 64, 30)]
    exp = [(75, 100), (64, 40), (30, 50)]
    (Case(out, "size_per_sample", "resize", {},
          note="resize_x / resize_y as argument inputs: a ragged batch")
     .input(ims, "HWC").arg_input("resize_x", xs).arg_input("resize_y", ys)
     .expect([pil_resize(im, hw, "INTERP_LINEAR") for im, hw in zip(ims, exp)], **U8).save())


def roi_and_flip(out, imgs):
    im = imgs[0]
    h, w = im.shape[:2]
    box = (w * 0.1 + 0.25, h * 0.2, w * 0.7, h * 0.9 + 0.5)  # x0, y0, x1, y1
    args = {"resize_x": 100, "resize_y": 80, "roi_start": [box[1], box[0]],
            "roi_end": [box[3], box[2]], "interp_type": "INTERP_CUBIC"}
    (Case(out, "roi_abs", "resize", args, note="fractional ROI = PIL's box")
     .input([im], "HWC").expect([pil_resize(im, (80, 100), "INTERP_CUBIC", box=box)],
                                **U8).save())
    rel = {"resize_x": 100, "resize_y": 80, "roi_start": [0.2, 0.1], "roi_end": [0.9, 0.7],
           "roi_relative": True}
    rbox = (0.1 * w, 0.2 * h, 0.7 * w, 0.9 * h)
    (Case(out, "roi_relative", "resize", rel, note="relative ROI = PIL's box")
     .input([im], "HWC").expect([pil_resize(im, (80, 100), "INTERP_LINEAR", box=rbox)],
                                **U8).save())
    flipped = dict(args, roi_start=[box[1], box[2]], roi_end=[box[3], box[0]])
    ref = pil_resize(im, (80, 100), "INTERP_CUBIC", box=box)[:, ::-1]
    (Case(out, "roi_reversed_x", "resize", flipped, note="roi_start x > roi_end x mirrors")
     .input([im], "HWC").expect([ref], **U8).save())
    outside = {"resize_x": 90, "resize_y": 70, "roi_start": [-20.0, -35.5],
               "roi_end": [h + 10.0, w * 0.5], "interp_type": "INTERP_LANCZOS3",
               "subpixel_scale": False}
    ref = np_resample(im, (70, 90), "INTERP_LANCZOS3", roi=((-20, -35.5), (h + 10, w * 0.5)))
    (Case(out, "roi_outside", "resize", outside,
          note="ROI reaching outside the image: pixels outside dropped, weights renormalised")
     .input([im], "HWC").expect([ref], max_abs=1, mean_abs=0.3).save())
    for tag, args, sl in (("x", {"resize_x": -120, "resize_y": 90}, np.s_[:, ::-1]),
                          ("y", {"resize_x": 120, "resize_y": -90}, np.s_[::-1, :]),
                          ("xy", {"size": [-90, -120]}, np.s_[::-1, ::-1])):
        refs = [pil_resize(i, (90, 120), "INTERP_LINEAR")[sl] for i in imgs]
        (Case(out, "flip_" + tag, "resize", args, note="negative size mirrors the axis")
         .input(imgs, "HWC").expect(refs, **U8).save())
    args = {"resize_x": 120, "resize_y": 40, "min_filter": "INTERP_NN",
            "mag_filter": "INTERP_LINEAR"}
    refs = [np_resample(i, (40, 120), "INTERP_LINEAR", min_filter="INTERP_NN") for i in imgs]
    (Case(out, "min_mag_filters", "resize", args,
          note="min_filter on downscaled axes, mag_filter on upscaled ones")
     .input(imgs, "HWC").expect(refs, max_abs=1, mean_abs=0.3).save())


def errors(out, imgs):
    im = imgs[:1]
    bad = [
        ("two_methods", {"resize_x": 10, "size": [10, 10]}, "Exactly one method"),
        ("no_method", {}, "Exactly one method"),
        ("shorter_and_mode", {"resize_shorter": 10, "mode": "stretch"}, "mutually exclusive"),
        ("shorter_and_longer", {"resize_shorter": 10, "resize_longer": 10},
         "Exactly one method"),
        ("roi_half", {"resize_x": 10, "roi_start": [0, 0]}, "together"),
        ("bad_dtype", {"resize_x": 10, "dtype": "int16"}, "not supported"),
        ("bad_interp", {"resize_x": 10, "interp_type": "INTERP_BOX"}, "INTERP_BOX"),
        ("bad_mode", {"resize_x": 10, "mode": "fit"}, "fit"),
        ("size_three", {"size": [1, 2, 3]}, "size"),
        ("huge", {"resize_x": 1e12}, "size"),
    ]
    for name, args, text in bad:
        Case(out, "error_" + name, "resize", args, note="rejected").input(im, "HWC") \
            .expect_error(text).save()
    empty = [np.zeros((0, 10, 3), np.uint8)]
    (Case(out, "error_empty", "resize", {"resize_x": 5, "resize_y": 5},
          note="DALI: non-empty output from an empty input")
     .input(empty, "HWC").expect_error("Cannot produce non-empty output from empty input")
     .save())
    (Case(out, "empty_not_larger", "resize", {"resize_longer": 5},
          note="an empty sample with not_larger gives an empty output")
     .input(empty, "HWC").expect([np.zeros((0, 5, 3), np.uint8)]).save())
    (Case(out, "error_chw", "resize", {"resize_x": 5}, note="only HWC")
     .input([np.zeros((3, 8, 8), np.uint8)], "CHW").expect_error("not supported").save())
    (Case(out, "error_int16", "resize", {"resize_x": 5}, note="uint8 / float32 only")
     .input([np.zeros((8, 8, 3), np.int16)], "HWC").expect_error("not supported").save())


def rrc(out, imgs, rng):
    """random_resized_crop with a fixed window, against PIL."""
    for k, im in enumerate(imgs[:2]):
        h, w = im.shape[:2]
        args = {"size": [96, 80], "random_area": [1.0, 1.0], "random_aspect_ratio": [w / h, w / h],
                "interp_type": "INTERP_CUBIC"}
        (Case(out, "rrc_whole_%d" % k, "random_resized_crop", args,
              note="area 1 at the image's aspect ratio: the whole image, = PIL resize")
         .input([im], "HWC").expect([pil_resize(im, (96, 80), "INTERP_CUBIC")], **U8).save())
    img = imgs[0][:50, :100].copy()  # W / H = 2: no draw fits, central-crop fallback
    crop = img[0:50, 16:83]  # w = round(50 * 1.333333) = 67, x = (100 - 67) // 2 = 16
    (Case(out, "rrc_fallback", "random_resized_crop",
          {"size": 64, "random_area": [1.0, 1.0], "dtype": "float32"},
          note="torchvision's fallback: central crop of the clamped aspect ratio, then resize "
               "of the crop alone (PIL mode F), float32 out")
     .input([img], "HWC")
     .expect([pil_resize(crop.astype(np.float32), (64, 64), "INTERP_LINEAR")], **F32)
     .save())
    for name, args, text in (
            ("no_size", {}, "size"),
            ("bad_area", {"size": 8, "random_area": [0.5, 0.1]}, "random_area"),
            ("zero_ratio", {"size": 8, "random_aspect_ratio": [0.0, 1.0]},
             "random_aspect_ratio"),
            ("zero_size", {"size": [0, 8]}, "size")):
        Case(out, "rrc_error_" + name, "random_resized_crop", args, note="rejected") \
            .input(imgs[:1], "HWC").expect_error(text).save()
    (Case(out, "rrc_error_empty", "random_resized_crop", {"size": 8}, note="empty image")
     .input([np.zeros((0, 4, 3), np.uint8)], "HWC").expect_error("empty image").save())


def make(out, rng):
    imgs = photos.load(3, 240, rng)
    big = photos.load(1, 2000, rng)[0]
    check_reference(imgs)
    filters_vs_pil(out, imgs, big)
    one_axis(out, imgs)
    gaussian(out, imgs)
    no_antialias(out, imgs)
    channels_and_types(out, imgs, rng)
    sizes(out, rng)
    roi_and_flip(out, imgs)
    errors(out, imgs)
    rrc(out, imgs, rng)
