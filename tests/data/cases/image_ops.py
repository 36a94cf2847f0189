"""The image operators of issue 19 (decoders.image_crop / image_slice and their experimental
aliases, resize_crop_mirror, paste, erase, gaussian_blur, laplacian, the noise operators,
jpeg_compression_distortion, ...) against independent references, run by the C runner (so the
ASan+UBSan build checks them too).

Independent reference:
- decoders: PIL's decode of the same bytes (equal to sluice's decoder), then NumPy slicing with
  DALI's window formulas (crop: round(pos * (extent - crop)) in float32; slice: fractions of the
  extent rounded half away from zero). Exact.
- resize_crop_mirror: PIL's bilinear resize (antialiased) to the size, then slicing and a flip;
  within 1.
- paste, erase: NumPy models of DALI's geometry (paste: float32 products truncated). Exact.
- gaussian_blur, laplacian: cv2.GaussianBlur / cv2.Laplacian with BORDER_REFLECT_101 in float32.
- noise: the identity settings (stddev 0, factor 0, prob 0) exactly; statistics are checked by
  tests/python/test_ops_image.py.
- jpeg_compression_distortion: cv2.imencode + cv2.imdecode at the quality; within 1.
- grid_mask: DALI's per-pixel grid test in float64 NumPy (exact away from square edges, which
  the images avoid: tile and angle 0 put every edge between pixels).
- water, sphere with zero displacement (amplitudes 0 / mask 0): the identity; jitter with
  nDegree 1: the identity.
- roi_random_crop with the ROI equal to the crop: the ROI's start (no draw).
- multi_paste: a NumPy canvas with the regions pasted in order.
"""
import io

import cv2
import numpy as np
from PIL import Image

import photos
from casekit import Case


def round_away(x):
    return int(np.sign(x) * np.floor(abs(x) + 0.5))


def anchor(n, c, pos):
    return round_away(float(np.float32(pos) * np.float32(n - c)))


def encode(img, fmt, **kw):
    b = io.BytesIO()
    Image.fromarray(img).save(b, format=fmt, **kw)
    return np.frombuffer(b.getvalue(), dtype=np.uint8)


def decode(buf):
    return np.asarray(Image.open(io.BytesIO(buf.tobytes())).convert("RGB"))


def make(out, rng):
    imgs = photos.load(3, 96, rng)
    jpegs = [encode(im, "JPEG", quality=85) for im in imgs]
    dec = [decode(b) for b in jpegs]

    for name in ("decoders.image_crop", "experimental.decoders.image_crop"):
        refs = []
        for d in dec:
            y, x = anchor(d.shape[0], 20, 0.3), anchor(d.shape[1], 24, 0.8)
            refs.append(d[y:y + 20, x:x + 24])
        (Case(out, name.replace(".", "_"), name,
              {"crop": [20, 24], "crop_pos_x": 0.8, "crop_pos_y": 0.3})
         .input(jpegs).expect(refs, layout="HWC").save())
    (Case(out, "image_crop_outside", "decoders.image_crop", {"crop": [5000, 10]})
     .input(jpegs[:1]).expect_error("out of bounds").save())

    anc = [np.float32([0.1, 0.2]), np.float32([0.5, 0.0]), np.float32([0.0, 0.6])]
    shp = [np.float32([0.5, 0.3]), np.float32([0.4, 1.0]), np.float32([1.0, 0.25])]
    refs = []
    for d, a, s in zip(dec, anc, shp):
        h, w = d.shape[:2]
        x0, y0 = round_away(float(a[0]) * w), round_away(float(a[1]) * h)
        x1 = round_away((float(a[0]) + float(s[0])) * w)
        y1 = round_away((float(a[1]) + float(s[1])) * h)
        refs.append(d[y0:y1, x0:x1])
    for name in ("decoders.image_slice", "experimental.decoders.image_slice"):
        (Case(out, name.replace(".", "_"), name, note="anchor / shape inputs, WH")
         .input(jpegs).input(anc).input(shp).expect(refs, layout="HWC").save())

    # resize_crop_mirror: PIL resize to 48 x 64, central window 30 x 40, mirrored
    refs = []
    for im in imgs:
        r = np.asarray(Image.fromarray(im).resize((64, 48), Image.BILINEAR))
        y, x = anchor(48, 30, 0.5), anchor(64, 40, 0.5)
        refs.append(np.ascontiguousarray(r[y:y + 30, x:x + 40][:, ::-1]))
    (Case(out, "resize_crop_mirror", "resize_crop_mirror",
          {"resize_x": 64, "resize_y": 48, "crop": [30, 40], "mirror": 1})
     .input(imgs, "HWC").expect(refs, max_abs=1, layout="HWC").save())

    # paste
    refs = []
    for im in imgs:
        h, w, c = im.shape
        nh, nw = int(np.float32(1.5) * np.float32(h)), int(np.float32(1.5) * np.float32(w))
        o = np.empty((nh, nw, c), np.uint8)
        o[:] = np.uint8([10, 20, 30])
        y, x = int(np.float32(0.25) * np.float32(nh - h)), int(np.float32(1.0) * np.float32(nw - w))
        o[y:y + h, x:x + w] = im
        refs.append(o)
    (Case(out, "paste", "paste", {"ratio": 1.5, "fill_value": [10, 20, 30], "paste_x": 1.0,
                                  "paste_y": 0.25})
     .input(imgs, "HWC").expect(refs, layout="HWC").save())
    (Case(out, "paste_ratio_below_1", "paste", {"ratio": 0.5, "fill_value": [0]})
     .input(imgs[:1], "HWC").expect_error("ratio of less than 1").save())

    # erase: two regions on H, W; one reaches past the far edges
    refs = []
    for im in imgs:
        o = im.copy()
        o[4:44, 10:60] = 0
        o[50:, 70:] = 0
        refs.append(o)
    (Case(out, "erase", "erase", {"anchor": [4, 10, 50, 70], "shape": [40, 50, 400, 500],
                                  "axis_names": "HW"})
     .input(imgs, "HWC").expect(refs, layout="HWC").save())

    f32 = [im.astype(np.float32) for im in imgs]
    refs = [cv2.GaussianBlur(im, (7, 7), 1.1, borderType=cv2.BORDER_REFLECT_101)
            .reshape(im.shape) for im in f32]
    (Case(out, "gaussian_blur", "gaussian_blur", {"sigma": [1.1], "window_size": [7]})
     .input(f32, "HWC").expect(refs, max_abs=1e-3, layout="HWC").save())
    refs = [cv2.Laplacian(im, cv2.CV_32F, ksize=5, borderType=cv2.BORDER_REFLECT_101)
            .reshape(im.shape) for im in f32]
    (Case(out, "laplacian", "laplacian", {"window_size": [5]})
     .input(f32, "HWC").expect(refs, max_abs=1e-2, layout="HWC").save())

    for op, args in (("noise.gaussian", {"stddev": 0.0}), ("noise.shot", {"factor": 0.0}),
                     ("noise.salt_and_pepper", {"prob": 0.0})):
        (Case(out, op.replace(".", "_") + "_identity", op, args)
         .input(imgs, "HWC").expect(imgs, layout="HWC").save())

    refs = []
    for im in imgs:
        ok, enc = cv2.imencode(".jpg", im[..., ::-1], [cv2.IMWRITE_JPEG_QUALITY, 30])
        refs.append(cv2.imdecode(enc, cv2.IMREAD_COLOR)[..., ::-1].copy())
    (Case(out, "jpeg_compression_distortion", "jpeg_compression_distortion", {"quality": 30})
     .input(imgs, "HWC").expect(refs, max_abs=1, layout="HWC").save())

    # grid_mask, angle 0, tile 8, ratio 0.5: zero where (x % 8 < 4) and (y % 8 < 4)
    refs = []
    for im in imgs:
        h, w = im.shape[:2]
        y, x = np.mgrid[0:h, 0:w]
        o = im.copy()
        o[((x % 8) < 4) & ((y % 8) < 4)] = 0
        refs.append(o)
    (Case(out, "grid_mask", "grid_mask", {"tile": 8, "ratio": 0.5})
     .input(imgs, "HWC").expect(refs, layout="HWC").save())
    (Case(out, "water_flat", "water", {"ampl_x": 0.0, "ampl_y": 0.0, "interp_type":
                                       "INTERP_LINEAR"})
     .input(imgs, "HWC").expect(imgs, layout="HWC").save())
    (Case(out, "sphere_masked", "sphere", {"mask": 0})
     .input(imgs, "HWC").expect(imgs, layout="HWC").save())
    (Case(out, "jitter_degree_1", "jitter", {"nDegree": 1})
     .input(imgs, "HWC").expect(imgs, layout="HWC").save())
    (Case(out, "roi_random_crop_roi_is_crop", "roi_random_crop",
          {"crop_shape": [10, 12, 3], "roi_start": [3, 4, 0], "roi_shape": [10, 12, 3]})
     .input(imgs, "HWC").expect([np.int64([3, 4, 0])] * len(imgs)).save())
    refs = []
    for k in range(len(imgs)):
        o = np.zeros((30, 40, 3), np.uint8)
        o[0:10, 0:12] = imgs[2][5:15, 6:18]
        o[20:30, 30:40] = imgs[0][0:10, 0:10]
        refs.append(o)
    (Case(out, "multi_paste", "multi_paste",
          {"in_ids": [2, 0], "in_anchors": [5, 6, 0, 0], "shapes": [10, 12, 10, 10],
           "out_anchors": [0, 0, 20, 30], "output_size": [30, 40]})
     .input(imgs, "HWC").expect(refs, layout="HWC").save())
