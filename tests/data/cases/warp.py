"""warp_affine and rotate against OpenCV's cv2.warpAffine and a NumPy model of the formula.

Convention (DALI's, section 1.9 of the semantics): the centre of pixel (row i, column j) is
(j + 0.5, i + 0.5); with inverse_map the matrix M maps output centres to input points. OpenCV
puts pixel centres at integers, so the same warp is cv2.warpAffine with WARP_INVERSE_MAP and
M' = M except M'[:, 2] = M @ (0.5, 0.5, 1) - 0.5 (BORDER_CONSTANT with the fill value, or
BORDER_REPLICATE when there is none). rotate's reference builds OpenCV's own forward matrix
(cv2.getRotationMatrix2D about the input centre (W-1)/2, (H-1)/2, moved to the output centre) and
lets OpenCV invert it; its output sizes follow section 1.9's rule, computed here.

Tolerances, stated per case:
- vs OpenCV, INTER_LINEAR: OpenCV quantises source coordinates to 1/32 pixel and interpolates
  in fixed point, sluice does not, so a pixel on a sharp edge can differ by several levels
  (DALI's own test allows 8): max_abs 8 (uint8), mean_abs 0.4 (measured: worst pixel 4, mean
  <= 0.18 per photo; float32 the same in units of 1/255).
  On the smooth synthetic gradient, and wherever the coordinates are exact (0, 90, 180
  degrees, integer shifts), uint8 results agree within 1.
- vs OpenCV, INTER_NEAREST: exact (max_abs 0) for maps whose sample points stay away from pixel
  boundaries (quarter-turns, flips, x2 / x0.5 scales, integer shifts); elsewhere OpenCV rounds
  coordinates to 1/1024 pixel, so ties are only compared against the NumPy model.
- vs the NumPy model (source coordinates in float32 exactly as documented, bilinear weights in
  float32, uint8 rounded half up): uint8 within 1 (mean_abs 0.02), float32 within 1e-3 on
  0..255 values; NN exact.
"""
import math

import cv2
import numpy as np

import photos
from casekit import Case

F32 = np.float32


# ---- references ---------------------------------------------------------------------------

def to_u8(v):
    return np.floor(np.clip(np.asarray(v, np.float64), 0, 255) + 0.5).astype(np.uint8)


def cv_matrix(m):
    """DALI-convention (pixel centres at +0.5) dst->src matrix to OpenCV's (centres at 0)."""
    m = np.asarray(m, np.float64).reshape(2, 3)
    out = m.copy()
    out[:, 2] = m @ np.array([0.5, 0.5, 1.0]) - 0.5
    return out


def cv_border(fill, channels):
    if fill is None:
        return dict(borderMode=cv2.BORDER_REPLICATE)
    fill = list(np.broadcast_to(np.asarray(fill, np.float64), (channels,)))
    return dict(borderMode=cv2.BORDER_CONSTANT, borderValue=fill + [0.0] * (4 - channels))


def cv_flags(interp):
    return cv2.INTER_NEAREST if interp == "INTERP_NN" else cv2.INTER_LINEAR


def cv_warp(img, m, out_hw, fill=None, interp="INTERP_LINEAR"):
    """cv2.warpAffine with WARP_INVERSE_MAP on the half-pixel-shifted matrix."""
    h, w = out_hw
    out = cv2.warpAffine(img, cv_matrix(m), (w, h), flags=cv_flags(interp) | cv2.WARP_INVERSE_MAP,
                         **cv_border(fill, img.shape[2]))
    return out.reshape(h, w, img.shape[2])


def np_warp(img, m, out_hw, fill=None, interp="INTERP_LINEAR", dtype=None):
    """The documented formula in NumPy: sx = m0 x + (m1 y + m2) in float32 at pixel centres,
    NN = the pixel containing the point, LINEAR = bilinear between centres in float32,
    outside = fill or the clamped edge; uint8 rounded half up and saturated."""
    m = np.asarray(m, F32).reshape(2, 3)
    src = img.astype(F32)
    H, W, C = img.shape
    h, w = out_hw
    x = np.arange(w, dtype=F32) + F32(0.5)
    y = np.arange(h, dtype=F32) + F32(0.5)
    sx = m[0, 0] * x[None, :] + (m[0, 1] * y + m[0, 2])[:, None]
    sy = m[1, 0] * x[None, :] + (m[1, 1] * y + m[1, 2])[:, None]
    fillv = None if fill is None else np.broadcast_to(np.asarray(fill, F32), (C,))

    def tap(xi, yi):
        inside = (xi >= 0) & (xi < W) & (yi >= 0) & (yi < H)
        v = src[np.clip(yi, 0, H - 1), np.clip(xi, 0, W - 1)]
        return v if fillv is None else np.where(inside[..., None], v, fillv)

    if interp == "INTERP_NN":
        out = tap(np.floor(sx).astype(np.int64), np.floor(sy).astype(np.int64))
    else:
        fx, fy = sx - F32(0.5), sy - F32(0.5)
        x0f, y0f = np.floor(fx), np.floor(fy)
        qx, qy = (fx - x0f)[..., None], (fy - y0f)[..., None]
        x0, y0 = x0f.astype(np.int64), y0f.astype(np.int64)
        v00, v01 = tap(x0, y0), tap(x0 + 1, y0)
        v10, v11 = tap(x0, y0 + 1), tap(x0 + 1, y0 + 1)
        top = v00 + (v01 - v00) * qx
        bot = v10 + (v11 - v10) * qx
        out = top + (bot - top) * qy
    dtype = dtype or img.dtype
    return to_u8(out) if dtype == np.uint8 else out.astype(F32)


def rotate_size(h, w, angle):
    """Section 1.9: bounding box minus 0.01, ceil, then parity fixed by adding 1."""
    a = math.radians(angle)
    c, s = abs(math.cos(a)), abs(math.sin(a))
    wo = math.ceil(c * w + s * h - 0.01)
    ho = math.ceil(c * h + s * w - 0.01)
    pw, ph = (w, h) if s <= c else (h, w)
    wo += (wo % 2) != (pw % 2)
    ho += (ho % 2) != (ph % 2)
    return ho, wo


def rotate_matrix(in_hw, out_hw, angle):
    """sluice's dst->src rotation about the centres (for the NumPy model)."""
    a = math.radians(math.fmod(angle, 360.0))
    c, s = math.cos(a), math.sin(a)
    icx, icy = in_hw[1] / 2, in_hw[0] / 2
    ocx, ocy = out_hw[1] / 2, out_hw[0] / 2
    return [c, -s, icx - c * ocx + s * ocy, s, c, icy - s * ocx - c * ocy]


def cv_rotate(img, angle, out_hw, fill=None, interp="INTERP_LINEAR"):
    """OpenCV's own counter-clockwise rotation about the centres (pixel centres at integers)."""
    H, W, C = img.shape
    h, w = out_hw
    fwd = cv2.getRotationMatrix2D(((W - 1) / 2, (H - 1) / 2), angle, 1.0)
    fwd[:, 2] += [(w - 1) / 2 - (W - 1) / 2, (h - 1) / 2 - (H - 1) / 2]
    out = cv2.warpAffine(img, fwd, (w, h), flags=cv_flags(interp), **cv_border(fill, C))
    return out.reshape(h, w, C)


# ---- inputs ---------------------------------------------------------------------------------

def gradient(h, w, c, rng):
    """Smooth synthetic image: a sum of slow sinusoids per channel, uint8."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    out = np.empty((h, w, c))
    for k in range(c):
        fx, fy, ph = rng.uniform(0.02, 0.08), rng.uniform(0.02, 0.08), rng.uniform(0, 6)
        out[..., k] = 127.5 + 100 * np.sin(fx * x + ph) * np.cos(fy * y - ph)
    return to_u8(out)


def affine(rng, in_hw, out_hw):
    """A random dst->src map (rotation, anisotropic scale, shear) between the centres, moved a
    little so part of the output falls outside the input."""
    a = rng.uniform(-np.pi, np.pi)
    sx, sy, sh = rng.uniform(0.6, 1.5), rng.uniform(0.6, 1.5), rng.uniform(-0.3, 0.3)
    r = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    lin = r @ np.array([[sx, sh], [0, sy]])
    oc = np.array([out_hw[1] / 2, out_hw[0] / 2])
    ic = np.array([in_hw[1] / 2, in_hw[0] / 2]) + rng.uniform(-0.2, 0.2, 2) * in_hw[::-1]
    t = ic - lin @ oc
    return [lin[0, 0], lin[0, 1], t[0], lin[1, 0], lin[1, 1], t[1]]


def invert(m):
    """Closed-form inverse of a 2x3 affine map, in float64 (as sluice's)."""
    a, b, c, d, e, f = m
    det = a * e - b * d
    r0, r1, r3, r4 = e / det, -b / det, -d / det, a / det
    return [r0, r1, -(r0 * c + r1 * f), r3, r4, -(r3 * c + r4 * f)]


# ---- cases ----------------------------------------------------------------------------------

def warp_cases(out, rng, imgs):
    size = (72, 88)
    mats = [affine(rng, im.shape[:2], size) for im in imgs]
    marg = [F32(m) for m in mats]
    for interp in ("INTERP_LINEAR", "INTERP_NN"):
        tag = "linear" if interp == "INTERP_LINEAR" else "nn"
        args = {"size": list(size), "fill_value": 42.0, "interp_type": interp}
        refs = [np_warp(im, m, size, 42.0, interp) for im, m in zip(imgs, marg)]
        (Case(out, "affine_%s_fill_np" % tag, "warp_affine", args,
              note="per-sample matrices, constant border 42, uint8 vs the NumPy model")
         .input(imgs, "HWC").arg_input("matrix", marg)
         .expect(refs, max_abs=1 if tag == "linear" else 0, mean_abs=0.02, layout="HWC").save())
    refs = [cv_warp(im, m, size, 42.0) for im, m in zip(imgs, marg)]
    (Case(out, "affine_linear_fill_cv", "warp_affine", {"size": list(size), "fill_value": 42.0},
          note="per-sample matrices vs cv2.warpAffine(INTER_LINEAR | WARP_INVERSE_MAP, "
               "BORDER_CONSTANT 42); OpenCV's 1/32-pixel coordinates: max 8, mean 0.4")
     .input(imgs, "HWC").arg_input("matrix", marg).expect(refs, max_abs=8, mean_abs=0.4).save())

    m = affine(rng, imgs[0].shape[:2], imgs[0].shape[:2])
    refs = [cv_warp(im, m, im.shape[:2]) for im in imgs]
    (Case(out, "affine_linear_clamp_cv", "warp_affine", {"matrix": m},
          note="one matrix, no fill_value (BORDER_REPLICATE), output = input size, vs OpenCV")
     .input(imgs, "HWC").expect(refs, max_abs=8, mean_abs=0.4).save())
    refs = [np_warp(im, m, im.shape[:2]) for im in imgs]
    (Case(out, "affine_linear_clamp_np", "warp_affine", {"matrix": m},
          note="one matrix, clamped border, vs the NumPy model")
     .input(imgs, "HWC").expect(refs, max_abs=1, mean_abs=0.02).save())

    fwd = invert(m)
    (Case(out, "affine_forward_map", "warp_affine", {"matrix": fwd, "inverse_map": False},
          note="inverse_map=false with the inverse matrix = the same warp (float64 inversion)")
     .input(imgs, "HWC").expect(refs, max_abs=1, mean_abs=0.02).save())


def exact_cases(out, rng, imgs):
    """Maps whose sample points sit on or between pixel centres: OpenCV agrees exactly (NN) or
    within 1 (LINEAR)."""
    im = imgs[0]
    H, W = im.shape[:2]
    maps = {
        "flip_xy": ([-1, 0, W, 0, -1, H], (H, W)),
        "transpose": ([0, 1, 0, 1, 0, 0], (W, H)),
        "shift": ([1, 0, 7, 0, 1, -5], (H, W)),
        "up2": ([0.5, 0, 0, 0, 0.5, 0], (2 * H, 2 * W)),
        "down2": ([2, 0, 0, 0, 2, 0], (H // 2, W // 2)),
    }
    for name, (m, size) in maps.items():
        for interp, tol in (("INTERP_NN", 0), ("INTERP_LINEAR", 1)):
            fill = [10.0, 20.0, 30.0] if name == "shift" else None
            args = {"matrix": m, "size": list(size), "interp_type": interp}
            if fill:
                args["fill_value"] = fill
            ref = cv_warp(im, m, size, fill, interp)
            (Case(out, "exact_%s_%s" % (name, interp[7:].lower()), "warp_affine", args,
                  note="sample points on the pixel grid: vs OpenCV within %d" % tol)
             .input([im], "HWC").expect([ref], max_abs=tol).save())


def mtx_input_case(out, rng, imgs):
    mats = [np.asarray(affine(rng, im.shape[:2], im.shape[:2]), F32).reshape(2, 3) for im in imgs]
    refs = [np_warp(im, m, im.shape[:2], 0.0) for im, m in zip(imgs, mats)]
    (Case(out, "affine_mtx_input", "warp_affine", {"fill_value": 0.0},
          note="matrices as the 2nd positional input (2x3 float32 each)")
     .input(imgs, "HWC").input(mats).expect(refs, max_abs=1, mean_abs=0.02).save())


def type_cases(out, rng, imgs):
    m = affine(rng, imgs[0].shape[:2], (60, 70))
    f32 = [im.astype(F32) / F32(255) for im in imgs]
    refs = [np_warp(im, m, (60, 70), 0.5) for im in f32]
    (Case(out, "affine_float32", "warp_affine",
          {"matrix": m, "size": [60, 70], "fill_value": 0.5},
          note="float32 in and out vs the NumPy model (1e-5 on 0..1 values)")
     .input(f32, "HWC").expect(refs, max_abs=1e-5).save())
    refs = [cv_warp(im, m, (60, 70), 0.5) for im in f32]
    (Case(out, "affine_float32_cv", "warp_affine",
          {"matrix": m, "size": [60, 70], "fill_value": 0.5},
          note="float32 vs OpenCV: 1/32-pixel coordinates bound the difference (8/255, "
               "mean 0.4/255)")
     .input(f32, "HWC").expect(refs, max_abs=8 / 255, mean_abs=0.4 / 255).save())
    refs = [np_warp(im, m, (60, 70), 0.0, dtype=F32) for im in imgs]
    (Case(out, "affine_u8_to_float32", "warp_affine",
          {"matrix": m, "size": [60, 70], "fill_value": 0.0, "dtype": "float32"},
          note="uint8 input, float32 output: unrounded interpolated values")
     .input(imgs, "HWC").expect(refs, max_abs=1e-3).save())
    f255 = [im.astype(F32) for im in imgs]
    refs = [np_warp(im, m, (60, 70), 300.0, dtype=np.uint8) for im in f255]
    (Case(out, "affine_float32_to_u8", "warp_affine",
          {"matrix": m, "size": [60, 70], "fill_value": 300.0, "dtype": "uint8"},
          note="float32 input (0..255) to uint8: rounding; fill 300 saturates to 255")
     .input(f255, "HWC").expect(refs, max_abs=1, mean_abs=0.02).save())


def channel_cases(out, rng):
    for c in (1, 2, 4, 5):
        imgs = [gradient(int(rng.integers(20, 40)), int(rng.integers(20, 40)), c, rng)
                for _ in range(2)]
        m = affine(rng, imgs[0].shape[:2], (30, 30))
        fill = [float(v) for v in range(10, 10 + 10 * c, 10)]
        refs = [np_warp(im, m, (30, 30), fill) for im in imgs]
        (Case(out, "channels_%d" % c, "warp_affine",
              {"matrix": m, "size": [30, 30], "fill_value": fill},
              note="%d channels, per-channel fill values, smooth input" % c)
         .input(imgs, "HWC").expect(refs, max_abs=1, mean_abs=0.02).save())
        if c in (1, 4):
            refs = [cv_warp(im, m, (30, 30)) for im in imgs]
            (Case(out, "channels_%d_cv" % c, "warp_affine", {"matrix": m, "size": [30, 30]},
                  note="%d channels vs OpenCV on a smooth image, replicated border (no sharp "
                       "edge, so OpenCV's coordinate rounding stays within 1)" % c)
             .input(imgs, "HWC").expect(refs, max_abs=1).save())


def rotate_cases(out, rng, imgs):
    angles = [0.0, 90.0, 180.0, 30.0, -45.0]
    imgs = (imgs * 2)[:len(angles)]
    arg = [F32(a) for a in angles]
    for interp in ("INTERP_LINEAR", "INTERP_NN"):
        tag = interp[7:].lower()
        sizes = [rotate_size(im.shape[0], im.shape[1], a) for im, a in zip(imgs, angles)]
        refs = [np_warp(im, rotate_matrix(im.shape[:2], s, a), s, 0.0, interp)
                for im, a, s in zip(imgs, angles, sizes)]
        (Case(out, "rotate_%s_np" % tag, "rotate", {"fill_value": 0.0, "interp_type": interp},
              note="per-sample angles 0, 90, 180, 30, -45; sizes from section 1.9; NumPy model")
         .input(imgs, "HWC").arg_input("angle", arg)
         .expect(refs, max_abs=1 if tag == "linear" else 0, mean_abs=0.02).save())
        refs = [cv_rotate(im, a, s, 0.0, interp) for im, a, s in zip(imgs, angles, sizes)]
        (Case(out, "rotate_%s_cv" % tag, "rotate", {"fill_value": 0.0, "interp_type": interp},
              note="vs cv2.getRotationMatrix2D + warpAffine (OpenCV inverts); NN may differ at "
                   "ties, LINEAR by OpenCV's 1/32-pixel coordinates")
         .input(imgs, "HWC").arg_input("angle", arg)
         .expect(refs, max_abs=255 if tag == "nn" else 8,
                 mean_abs=1.0 if tag == "nn" else 0.4).save())
    for a in (0.0, 90.0, 180.0, -90.0):
        ref = [cv_rotate(im, a, rotate_size(im.shape[0], im.shape[1], a)) for im in imgs[:2]]
        (Case(out, "rotate_quarter_%d" % int(a), "rotate", {"angle": a},
              note="quarter turns without fill_value are exact permutations (vs OpenCV)")
         .input(imgs[:2], "HWC").expect(ref, max_abs=0).save())


def rotate_shape_cases(out, rng):
    """Parity rule of section 1.9 on small odd / even synthetic images."""
    shapes = [(7, 10), (8, 8), (9, 5), (6, 11), (1, 1), (2, 3)]
    angles = [10.0, 30.0, 45.0, 60.0, 100.0, 135.0, 170.0, -20.0]
    for h, w in shapes:
        imgs, args, refs = [], [], []
        for a in angles:
            im = gradient(h, w, 3, rng)
            s = rotate_size(h, w, a)
            imgs.append(im)
            args.append(F32(a))
            refs.append(np_warp(im, rotate_matrix((h, w), s, a), s, [1.0, 2.0, 3.0]))
        (Case(out, "rotate_size_%dx%d" % (h, w), "rotate", {"fill_value": [1.0, 2.0, 3.0]},
              note="output sizes for several angles by section 1.9's parity rule")
         .input(imgs, "HWC").arg_input("angle", args).expect(refs, max_abs=1).save())
    px = gradient(1, 1, 3, rng)
    (Case(out, "rotate_1x1_clamp", "rotate", {"angle": 30.0},
          note="1x1 image by 30 degrees: a 3x3 output (parity rule), clamped border repeats "
               "the pixel everywhere")
     .input([px], "HWC").expect([np.broadcast_to(px, (3, 3, 3))], max_abs=0).save())


def rotate_size_args(out, rng, imgs):
    im = imgs[1]
    H, W = im.shape[:2]
    ref = np_warp(im, rotate_matrix((H, W), (H, W), 30.0), (H, W), 0.0)
    (Case(out, "rotate_keep_size", "rotate", {"angle": 30.0, "keep_size": True, "fill_value": 0},
          note="keep_size: output = input size, corners cut")
     .input([im], "HWC").expect([ref], max_abs=1, mean_abs=0.02).save())
    ref = np_warp(im, rotate_matrix((H, W), (50, 61), -60.0), (50, 61), None, "INTERP_NN")
    (Case(out, "rotate_size_nn_clamp", "rotate",
          {"angle": -60.0, "size": [50.4, 60.6], "interp_type": "INTERP_NN"},
          note="explicit size (rounded), NN, clamped border")
     .input([im], "HWC").expect([ref], max_abs=0).save())
    f32 = im.astype(F32)
    s = rotate_size(H, W, 75.0)
    ref = np_warp(f32, rotate_matrix((H, W), s, 75.0), s, 0.0)
    (Case(out, "rotate_float32", "rotate", {"angle": 75.0, "fill_value": 0.0},
          note="float32 input, values 0..255")
     .input([f32], "HWC").expect([ref], max_abs=1e-3).save())


def edge_cases(out, rng, imgs):
    empty = np.zeros((0, 5, 3), np.uint8)
    (Case(out, "empty_input_fill", "warp_affine",
          {"matrix": [1, 0, 0, 0, 1, 0], "size": [4, 5], "fill_value": [7, 8, 9]},
          note="an empty image warped to a 4x5 output with a fill value: all fill")
     .input([empty, imgs[0]], "HWC")
     .expect([np.broadcast_to(np.uint8([7, 8, 9]), (4, 5, 3)),
              cv_warp(imgs[0], [1, 0, 0, 0, 1, 0], (4, 5), [7, 8, 9])], max_abs=0).save())
    (Case(out, "empty_input_same_size", "warp_affine", {"matrix": [1, 0, 0, 0, 1, 0]},
          note="empty in, empty out (no size): nothing to sample")
     .input([empty], "HWC").expect([empty]).save())
    (Case(out, "empty_input_clamp", "warp_affine", {"matrix": [1, 0, 0, 0, 1, 0], "size": [4, 5]},
          note="no pixel to replicate: a clear error")
     .input([empty], "HWC").expect_error("empty").save())
    (Case(out, "rotate_empty_angle0", "rotate", {"angle": 0.0},
          note="rotating an empty image by 0: empty output")
     .input([empty], "HWC").expect([empty]).save())
    im = imgs[0]
    (Case(out, "huge_coordinates", "warp_affine",
          {"matrix": [1e20, 0, 0, 0, 1e20, 0], "size": [6, 7], "fill_value": 5},
          note="coordinates far outside: all fill, no out-of-bounds read")
     .input([im], "HWC").expect([np.full((6, 7, 3), 5, np.uint8)]).save())
    (Case(out, "huge_coordinates_clamp", "warp_affine",
          {"matrix": [1e20, 0, 0, 0, 1e20, 0], "size": [6, 7]},
          note="coordinates far outside, clamped: the bottom-right pixel everywhere")
     .input([im], "HWC").expect([np.broadcast_to(im[-1, -1], (6, 7, 3))]).save())
    (Case(out, "err_nan_matrix", "warp_affine", {},
          note="a NaN in a per-sample matrix fails that sample")
     .input(imgs[:1], "HWC").arg_input("matrix", [F32([1, 0, 0, 0, np.nan, 0])])
     .expect_error("non-finite").save())
    (Case(out, "err_no_matrix", "warp_affine", {},
          note="DALI's message when no transform is given")
     .input(imgs[:1], "HWC").expect_error("`matrix` argument must be provided").save())
    (Case(out, "err_cubic", "warp_affine", {"matrix": [1, 0, 0, 0, 1, 0],
                                            "interp_type": "INTERP_CUBIC"},
          note="DALI's warps support NN and LINEAR only")
     .input(imgs[:1], "HWC").expect_error("not supported").save())
    (Case(out, "err_singular", "warp_affine", {"matrix": [1, 2, 0, 2, 4, 0], "inverse_map": False},
          note="a singular forward map cannot be inverted")
     .input(imgs[:1], "HWC").expect_error("not invertible").save())
    (Case(out, "err_fill_length", "warp_affine", {"matrix": [1, 0, 0, 0, 1, 0],
                                                  "fill_value": [1, 2]},
          note="fill_value must have 1 or C values")
     .input(imgs[:1], "HWC").expect_error("fill_value has 2 values").save())
    (Case(out, "err_size", "warp_affine", {"matrix": [1, 0, 0, 0, 1, 0], "size": [0, 5]},
          note="output sizes must be positive")
     .input(imgs[:1], "HWC").expect_error("must be positive").save())
    (Case(out, "err_keep_size_and_size", "rotate", {"angle": 5.0, "keep_size": True,
                                                    "size": [5, 5]},
          note="exclusive arguments")
     .input(imgs[:1], "HWC").expect_error("exclusive").save())
    (Case(out, "err_nan_angle", "rotate", {},
          note="a NaN angle fails the sample")
     .input(imgs[:1], "HWC").arg_input("angle", [F32("nan")]).expect_error("finite").save())
    (Case(out, "err_layout", "rotate", {"angle": 5.0},
          note="planar input is rejected")
     .input([np.zeros((3, 4, 5), np.uint8)], "CHW").expect_error("layout").save())


def make(out, rng):
    imgs = photos.load(3, 96, rng)
    warp_cases(out, rng, imgs)
    exact_cases(out, rng, imgs)
    mtx_input_case(out, rng, imgs)
    type_cases(out, rng, imgs)
    channel_cases(out, rng)
    rotate_cases(out, rng, imgs)
    rotate_shape_cases(out, rng)
    rotate_size_args(out, rng, imgs)
    edge_cases(out, rng, imgs)
