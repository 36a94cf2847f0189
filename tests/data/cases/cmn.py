"""crop_mirror_normalize against NumPy (reference section 1.7 of DALI's semantics).

out = scale * (in - mean[c]) / std[c] + shift over the crop window (anchor = round(pos * (in -
crop)), halves away from zero), mirrored along W when mirror != 0, in the output layout; integer
outputs rounded (halves away from zero) and saturated.
"""
import numpy as np

import photos
from casekit import Case

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


def reference(img, crop, pos, mirror, mean, std, layout="CHW", dtype=np.float32, scale=1.0,
              shift=0.0):
    h, w = img.shape[:2]
    ch, cw = crop
    y = int(np.floor(pos[1] * (h - ch) + 0.5))
    x = int(np.floor(pos[0] * (w - cw) + 0.5))
    win = img[y:y + ch, x:x + cw].astype(np.float64)
    if mirror:
        win = win[:, ::-1]
    inv = (np.float32(1) / np.asarray(std, np.float32)).astype(np.float64)
    out = (win - np.asarray(mean, np.float64)) * inv * scale + shift
    if layout == "CHW":
        out = out.transpose(2, 0, 1)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        out = np.clip(np.sign(out) * np.floor(np.abs(out) + 0.5), info.min, info.max)
    return np.ascontiguousarray(out.astype(dtype))


def make(out, rng):
    imgs = photos.load(4, 160, rng)
    crops = [(min(96, im.shape[0]), min(112, im.shape[1])) for im in imgs]
    crop = (min(c[0] for c in crops), min(c[1] for c in crops))
    mirror = [np.int32(v) for v in (0, 1, 1, 0)]
    refs = [reference(im, crop, (0.5, 0.5), m, MEAN, STD) for im, m in zip(imgs, mirror)]
    (Case(out, "imagenet_chw", "crop_mirror_normalize",
          {"crop": list(crop), "mean": MEAN, "std": STD},
          note="ImageNet normalisation, per-sample mirror, float32 CHW vs NumPy")
     .input(imgs, "HWC").arg_input("mirror", mirror)
     .expect(refs, max_abs=1e-4, layout="CHW").save())

    refs = [reference(im, crop, (0.0, 1.0), 0, [128.0], [1.0], "HWC", np.uint8, 0.5, 128.0)
            for im in imgs]
    (Case(out, "uint8_hwc_corner", "crop_mirror_normalize",
          {"crop": list(crop), "crop_pos_x": 0.0, "crop_pos_y": 1.0, "mean": [128.0],
           "std": [1.0], "scale": 0.5, "shift": 128.0, "dtype": "uint8",
           "output_layout": "HWC"},
          note="bottom-left window, uint8 rounding and saturation, HWC")
     .input(imgs, "HWC").expect(refs, max_abs=0, layout="HWC").save())

    (Case(out, "window_out_of_bounds", "crop_mirror_normalize", {"crop": [4000, 10]},
          note="default policy 'error'")
     .input(imgs[:1], "HWC").expect_error("out of bounds").save())
