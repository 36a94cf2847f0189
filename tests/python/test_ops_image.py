"""tests/python/test_ops_image.py: the image operators of issue 19 (decoders.image_crop,
decoders.image_slice, the experimental.decoders aliases, resize_crop_mirror,
fast_resize_crop_mirror, paste, erase, ...) against independent references: PIL decodes and
resizes, NumPy models of DALI's documented geometry, and hand-computed values; DALI's
test_dali_cpu_only usage of each operator; bad arguments failing with the operator named.
"""
import io

import numpy as np
import pytest
from PIL import Image

import sluice
from sluice import fn, pipeline_def, types


def run_feed(build, batches, layout="HWC", batch_size=None, **kw):
    """Runs build(data) over external_source batches; returns the outputs of each run as lists
    of NumPy arrays."""
    it = iter(batches)
    bs = batch_size or len(batches[0])

    @pipeline_def(batch_size=bs, num_threads=2, device_id=None, **kw)
    def p():
        data = fn.external_source(source=lambda: next(it), layout=layout)
        return build(data)

    pipe = p()
    outs = []
    for _ in batches:
        res = pipe.run()
        res = res if isinstance(res, tuple) else (res,)
        outs.append([[np.array(t) for t in r] for r in res])
    return outs


def photo(h, w, seed=0):
    """A smooth, photo-like RGB image (JPEG-friendly) with some texture."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([128 + 100 * np.sin(x / 7.0 + seed), 128 + 100 * np.cos(y / 5.0),
                    (x * 3 + y * 2) % 256], axis=-1)
    img = img + rng.integers(-10, 10, size=img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def encode(img, fmt, **kw):
    b = io.BytesIO()
    Image.fromarray(img).save(b, format=fmt, **kw)
    return np.frombuffer(b.getvalue(), dtype=np.uint8)


def pil_decode(buf):
    return np.asarray(Image.open(io.BytesIO(buf.tobytes())).convert("RGB"))


def dali_anchor(pos, extent, crop):
    """crop's anchor: round(pos * (extent - crop)) in float32, halves away from zero."""
    v = np.float32(pos) * np.float32(extent - crop)
    return int(np.sign(v) * np.floor(np.abs(v) + np.float32(0.5)))


@pytest.fixture(scope="module")
def encoded():
    imgs = [photo(37, 53, 1), photo(64, 48, 2), photo(29, 71, 3)]
    return {"png": [encode(i, "PNG") for i in imgs],
            "jpeg": [encode(i, "JPEG", quality=90) for i in imgs],
            "pil": [pil_decode(encode(i, "JPEG", quality=90)) for i in imgs],
            "raw": imgs}


# ---- decoders.image_crop ---------------------------------------------------------------------

@pytest.mark.parametrize("name", ["decoders.image_crop", "experimental.decoders.image_crop"])
@pytest.mark.parametrize("kind", ["png", "jpeg"])
def test_image_crop_equals_decode_then_crop(encoded, name, kind):
    op = fn.decoders.image_crop if name.startswith("d") else fn.experimental.decoders.image_crop
    files = encoded[kind]
    ref = encoded["raw"] if kind == "png" else encoded["pil"]
    for crop, px, py in [((20, 30), 0.5, 0.5), ((10, 10), 0.0, 1.0), ((29, 17), 0.3, 0.77)]:
        (out,), = run_feed(lambda d: op(d, crop=crop, crop_pos_x=px, crop_pos_y=py,
                                        output_type=types.RGB), [files], layout=None)
        for o, r in zip(out, ref):
            h, w = r.shape[:2]
            y0, x0 = dali_anchor(py, h, crop[0]), dali_anchor(px, w, crop[1])
            assert o.shape == (crop[0], crop[1], 3)
            np.testing.assert_array_equal(o, r[y0:y0 + crop[0], x0:x0 + crop[1]])


def test_image_crop_crop_h_w_gray_and_rounding(encoded):
    (out,), = run_feed(lambda d: fn.decoders.image_crop(d, crop_h=7, crop_w=9, crop_pos_x=0.25,
                                                        crop_pos_y=0.5, rounding="truncate",
                                                        output_type=types.GRAY),
                       [encoded["png"]], layout=None)
    for o, r in zip(out, encoded["raw"]):
        h, w = r.shape[:2]
        y0 = int(np.float32(0.5) * np.float32(h - 7))
        x0 = int(np.float32(0.25) * np.float32(w - 9))
        gray = np.asarray(Image.fromarray(r).convert("L"))
        assert o.shape == (7, 9, 1)
        np.testing.assert_array_equal(o[..., 0], gray[y0:y0 + 7, x0:x0 + 9])


def test_image_crop_window_outside_fails_naming_operator(encoded):
    with pytest.raises(sluice.SluiceError, match="decoders.image_crop.*(out of bounds|outside)"):
        run_feed(lambda d: fn.decoders.image_crop(d, crop=(100, 10)), [encoded["png"]],
                 layout=None)
    with pytest.raises(sluice.SluiceError, match="exclusive"):
        run_feed(lambda d: fn.decoders.image_crop(d, crop=(10, 10), crop_w=4),
                 [encoded["png"]], layout=None)


# ---- decoders.image_slice --------------------------------------------------------------------

def slice_ref(img, anchor, shape, normalized=True):
    """The (x, y) anchor / shape of DALI's default axis_names "WH" on an image."""
    h, w = img.shape[:2]
    if normalized:
        x0, y0 = round_half_away(anchor[0] * w), round_half_away(anchor[1] * h)
        x1 = round_half_away((anchor[0] + shape[0]) * w)
        y1 = round_half_away((anchor[1] + shape[1]) * h)
    else:
        x0, y0 = int(anchor[0]), int(anchor[1])
        x1, y1 = x0 + int(shape[0]), y0 + int(shape[1])
    return img[y0:y1, x0:x1]


def round_half_away(v):
    return int(np.sign(v) * np.floor(abs(v) + 0.5))


@pytest.mark.parametrize("op", [fn.decoders.image_slice, fn.experimental.decoders.image_slice])
def test_image_slice_positional_inputs(encoded, op):
    anchors = [np.array([0.1, 0.2], np.float32), np.array([0.5, 0.0], np.float32),
               np.array([0.0, 0.6], np.float32)]
    shapes = [np.array([0.5, 0.3], np.float32), np.array([0.4, 1.0], np.float32),
              np.array([1.0, 0.25], np.float32)]
    files = encoded["png"]
    it = iter([(files, anchors, shapes)])
    batch = next(it)

    @pipeline_def(batch_size=3, num_threads=2, device_id=None)
    def p():
        d = fn.external_source(source=lambda: batch[0])
        a = fn.external_source(source=lambda: batch[1])
        s = fn.external_source(source=lambda: batch[2])
        return op(d, a, s)

    (out,) = p().run()
    for k in range(3):
        ref = slice_ref(encoded["raw"][k], [float(v) for v in np.float64(anchors[k])],
                        [float(v) for v in np.float64(shapes[k])])
        np.testing.assert_array_equal(np.array(out[k]), ref)
        assert out.layout() == "HWC"


def test_image_slice_named_arguments_and_int_inputs(encoded):
    (out,), = run_feed(lambda d: fn.decoders.image_slice(d, start=[3, 4], shape=[20, 10]),
                       [encoded["jpeg"]], layout=None)
    for o, r in zip(out, encoded["pil"]):
        np.testing.assert_array_equal(o, r[4:14, 3:23])
    (out,), = run_feed(lambda d: fn.decoders.image_slice(d, rel_start=[0.5, 0.25],
                                                         rel_end=[1.0, 0.75], axis_names="HW"),
                       [encoded["png"]], layout=None)
    for o, r in zip(out, encoded["raw"]):
        h, w = r.shape[:2]
        np.testing.assert_array_equal(
            o, r[round_half_away(0.5 * h):h, round_half_away(0.25 * w):round_half_away(0.75 * w)])


def test_image_slice_bad_arguments(encoded):
    with pytest.raises(sluice.SluiceError, match="decoders.image_slice.*out of bounds"):
        run_feed(lambda d: fn.decoders.image_slice(d, start=[0, 0], shape=[1000, 10]),
                 [encoded["png"]], layout=None)
    with pytest.raises(sluice.SluiceError, match="mutually exclusive"):
        run_feed(lambda d: fn.decoders.image_slice(d, start=[0, 0], rel_start=[0.1, 0.1],
                                                   shape=[1, 1]), [encoded["png"]], layout=None)
    with pytest.raises(sluice.SluiceError, match="channels must be kept whole"):
        run_feed(lambda d: fn.decoders.image_slice(d, start=[0], shape=[1], axis_names="C"),
                 [encoded["png"]], layout=None)


def test_experimental_decoder_aliases_match(encoded):
    def both(d):
        return (fn.decoders.image(d), fn.experimental.decoders.image(d),
                fn.decoders.image_random_crop(d, seed=7),
                fn.experimental.decoders.image_random_crop(d, seed=7))

    (a, b, c, e), = run_feed(both, [encoded["jpeg"]], layout=None)
    for k in range(3):
        np.testing.assert_array_equal(a[k], encoded["pil"][k])
        np.testing.assert_array_equal(b[k], a[k])
        np.testing.assert_array_equal(e[k], c[k])
    assert "Alias of decoders.image" in fn.experimental.decoders.image.__doc__


# ---- resize_crop_mirror ----------------------------------------------------------------------

def rcm_ref(img, size, crop, px=0.5, py=0.5, mirror=0, antialias=True):
    """PIL's bilinear resize (antialiased, as PIL always is) to size (h, w), then crop and
    flip."""
    r = np.asarray(Image.fromarray(img).resize((size[1], size[0]), Image.BILINEAR))
    y0, x0 = dali_anchor(py, size[0], crop[0]), dali_anchor(px, size[1], crop[1])
    r = r[y0:y0 + crop[0], x0:x0 + crop[1]]
    return r[:, ::-1] if mirror else r


@pytest.mark.parametrize("op", [fn.resize_crop_mirror, fn.fast_resize_crop_mirror])
def test_resize_crop_mirror_against_pil(op):
    imgs = [photo(40, 60, 4), photo(60, 40, 5), photo(33, 33, 6)]
    aa = op is fn.resize_crop_mirror
    mirrors = [np.int32(1), np.int32(0), np.int32(1)]
    it = iter([mirrors])
    m = next(it)

    @pipeline_def(batch_size=3, num_threads=2, device_id=None)
    def p():
        d = fn.external_source(source=lambda: imgs, layout="HWC")
        mir = fn.external_source(source=lambda: m)
        return op(d, resize_x=30, resize_y=20, crop=(10, 12), crop_pos_x=0.2, crop_pos_y=0.9,
                  mirror=mir)

    (out,) = p().run()
    for k, img in enumerate(imgs):
        o = np.array(out[k])
        assert o.shape == (10, 12, 3)
        if aa:  # PIL antialiases when downscaling, as resize_crop_mirror does by default
            ref = rcm_ref(img, (20, 30), (10, 12), 0.2, 0.9, int(mirrors[k]))
            assert np.abs(o.astype(int) - ref).max() <= 1
        # the unfused chain: resize, crop, flip
    (chain,), = run_feed(
        lambda d: fn.flip(fn.crop(fn.resize(d, resize_x=30, resize_y=20, antialias=aa),
                                  crop=(10, 12), crop_pos_x=0.2, crop_pos_y=0.9),
                          horizontal=1), [imgs])
    (fused,), = run_feed(
        lambda d: op(d, resize_x=30, resize_y=20, crop=(10, 12), crop_pos_x=0.2, crop_pos_y=0.9,
                     mirror=1), [imgs])
    for f, c in zip(fused, chain):
        assert np.abs(f.astype(int) - c).max() <= 1


def test_resize_crop_mirror_dali_cpu_usage_and_float():
    data = [np.random.default_rng(0).integers(0, 255, (10, 20, 3), dtype=np.uint8)
            for _ in range(2)]
    for op in (fn.resize_crop_mirror, fn.fast_resize_crop_mirror):
        (out,), = run_feed(lambda d: op(d, crop=[5, 5], resize_shorter=10), [data])
        for o, d in zip(out, data):
            # resize_shorter=10 keeps a 10 x 20 image as is; the central 5 x 5 window
            np.testing.assert_array_equal(o, d[3:8, 8:13])  # anchors round(2.5), round(7.5)
    f = [d.astype(np.float32) / 3 for d in data]
    (out,), = run_feed(lambda d: fn.resize_crop_mirror(d, size=(20, 40), crop=(6, 8),
                                                       interp_type=types.INTERP_NN), [f])
    for o, d in zip(out, f):
        up = np.repeat(np.repeat(d, 2, axis=0), 2, axis=1)
        np.testing.assert_allclose(o, up[7:13, 16:24])


def test_resize_crop_mirror_bad_arguments():
    data = [np.zeros((10, 20, 3), np.uint8)]
    with pytest.raises(sluice.SluiceError, match="resize_crop_mirror.*out of bounds"):
        run_feed(lambda d: fn.resize_crop_mirror(d, resize_x=8, resize_y=8, crop=(9, 9)),
                 [data])
    with pytest.raises(sluice.SluiceError, match="Exactly one method"):
        run_feed(lambda d: fn.resize_crop_mirror(d, crop=(4, 4)), [data])


# ---- paste -----------------------------------------------------------------------------------

def paste_ref(img, ratio, fill, px=0.5, py=0.5, min_canvas=0.0):
    h, w, c = img.shape
    nh = max(int(np.float32(ratio) * np.float32(h)), int(min_canvas))
    nw = max(int(np.float32(ratio) * np.float32(w)), int(min_canvas))
    out = np.empty((nh, nw, c), np.uint8)
    out[:] = np.broadcast_to(np.asarray(fill, np.uint8), (c,))
    y = int(np.float32(py) * np.float32(nh - h))
    x = int(np.float32(px) * np.float32(nw - w))
    out[y:y + h, x:x + w] = img
    return out


def test_paste_against_numpy():
    imgs = [photo(10, 20, 1), photo(7, 3, 2), photo(0, 5, 3)]
    for kw in [dict(ratio=2.0, fill_value=0), dict(ratio=1.7, fill_value=(10, 20, 30),
                                                   paste_x=0.1, paste_y=1.0),
               dict(ratio=1.0, fill_value=5, min_canvas_size=25.0, paste_x=0.0)]:
        (out,), = run_feed(lambda d: fn.paste(d, **kw), [imgs])
        for o, img in zip(out, imgs):
            ref = paste_ref(img, kw["ratio"], kw["fill_value"], kw.get("paste_x", 0.5),
                            kw.get("paste_y", 0.5), kw.get("min_canvas_size", 0.0))
            np.testing.assert_array_equal(o, ref)


def test_paste_bad_arguments():
    imgs = [photo(10, 20, 1)]
    with pytest.raises(sluice.SluiceError, match="paste.*ratio of less than 1"):
        run_feed(lambda d: fn.paste(d, ratio=0.5, fill_value=0), [imgs])
    with pytest.raises(sluice.SluiceError, match="fill_value has 2 values"):
        run_feed(lambda d: fn.paste(d, ratio=2.0, fill_value=(1, 2)), [imgs])
    with pytest.raises(sluice.SluiceError, match="n_channels"):
        run_feed(lambda d: fn.paste(d, ratio=2.0, fill_value=0),
                 [[np.zeros((4, 4, 1), np.uint8)]])
    with pytest.raises(TypeError):
        fn.paste(fn.external_source(source=lambda: imgs), fill_value=0)  # ratio is required


# ---- erase -----------------------------------------------------------------------------------

def erase_ref(img, layout, axes, anchor, shape, fill):
    """DALI's own model: regions of len(axes) values each, other axes whole."""
    out = img.copy()
    n = len(axes)
    for r in range(len(anchor) // n):
        sl = [slice(None)] * img.ndim
        for k, ax in enumerate(axes):
            a, s = anchor[r * n + k], shape[r * n + k]
            sl[ax] = slice(max(0, int(a)), max(0, int(a + s)))
        out[tuple(sl)] = fill
    return out


@pytest.mark.parametrize("layout,shape_,names,axes,anchor,eshape,fill", [
    ("HWC", (60, 80, 3), "HW", None, (4, 10), (40, 50), 0),
    ("HWC", (60, 80, 3), "HW", None, (4, 2, 3, 4), (50, 10, 10, 50), -1),
    ("HWC", (60, 80, 3), "HW", None, (4, 2, 3, 4), (50, 10, 10, 50), (118, 185, 0)),
    ("HWC", (60, 80, 3), "H", None, (4, 15), (7, 8), 0),
    ("HWC", (60, 80, 3), "W", None, (4, 15), (7, 8), 0),
    ("HWC", (60, 80, 3), None, (0, 1), (4, 10), (40, 50), 0),
    ("HWC", (60, 80, 3), None, (1,), (4, 15), (7, 8), 0),
    ("DHWC", (10, 60, 80, 3), "DHW", None, (2, 4, 15), (3, 7, 8), 0),
    ("XYZ", (60, 80, 3), "XY", None, (4, 10), (40, 50), -1),
    ("HWC", (60, 80, 3), "HW", None, (50, 70), (40, 50), 7),  # clipped at the far edges
])
def test_erase_against_model(layout, shape_, names, axes, anchor, eshape, fill):
    rng = np.random.default_rng(1)
    data = [rng.random(shape_, dtype=np.float32) for _ in range(3)]
    kw = dict(anchor=anchor, shape=eshape, fill_value=fill)
    if names:
        kw["axis_names"] = names
    else:
        kw["axes"] = axes
    ax = [layout.index(c) for c in names] if names else list(axes)
    (out,), = run_feed(lambda d: fn.erase(d, **kw), [data], layout=layout)
    for o, d in zip(out, data):
        np.testing.assert_array_equal(o, erase_ref(d, layout, ax, anchor, eshape,
                                                   np.asarray(fill, np.float32)))


def test_erase_normalized_and_centered():
    rng = np.random.default_rng(2)
    data = [rng.integers(0, 255, (60, 80, 3), dtype=np.uint8) for _ in range(2)]
    ref = [erase_ref(d, "HWC", [0, 1], (4, 10), (40, 50), 0) for d in data]
    for na, ns in [(True, True), (True, False), (False, True)]:
        a = (4 / 60.0, 10 / 80.0) if na else (4, 10)
        s = (40 / 60.0, 50 / 80.0) if ns else (40, 50)
        (out,), = run_feed(lambda d: fn.erase(d, anchor=a, shape=s, axis_names="HW",
                                              normalized_anchor=na, normalized_shape=ns), [data])
        for o, r in zip(out, ref):
            np.testing.assert_array_equal(o, r)
    (out,), = run_feed(lambda d: fn.erase(d, anchor=(24, 35), shape=(40, 50), axis_names="HW",
                                          centered_anchor=True), [data])
    for o, r in zip(out, ref):
        np.testing.assert_array_equal(o, r)
    # DALI's cpu-only smoke usage: rows 18..24 of a 20-row image erased
    small = [rng.integers(0, 255, (10, 20, 3), dtype=np.uint8) for _ in range(2)]
    (out,), = run_feed(lambda d: fn.erase(d, anchor=[0.3], axis_names="H", normalized_anchor=True,
                                          shape=[0.1], normalized_shape=True), [small])
    for o, d in zip(out, small):
        np.testing.assert_array_equal(o, erase_ref(d, "HWC", [0], (3,), (1,), 0))


def test_erase_bad_arguments():
    data = [np.zeros((6, 8, 3), np.uint8)]
    with pytest.raises(sluice.SluiceError, match="erase.*anchor has 3 values and shape 2"):
        run_feed(lambda d: fn.erase(d, anchor=(1, 2, 3), shape=(1, 2), axis_names="HW"), [data])
    with pytest.raises(sluice.SluiceError, match="erase.*fill_value has 2 values"):
        run_feed(lambda d: fn.erase(d, anchor=(1, 2), shape=(1, 2), fill_value=(1, 2)), [data])
    with pytest.raises(sluice.SluiceError, match="erase.*axis"):
        run_feed(lambda d: fn.erase(d, anchor=(1,), shape=(1,), axis_names="D"), [data])


# ---- gaussian_blur and laplacian (against OpenCV) --------------------------------------------

cv2 = pytest.importorskip("cv2")


@pytest.mark.parametrize("kw,ksize,sigma", [
    (dict(window_size=5), (5, 5), (1.1, 1.1)),  # sigma = (r - 1) * 0.3 + 0.8
    (dict(sigma=1.5), (11, 11), (1.5, 1.5)),
    (dict(sigma=(0.8, 2.0)), (13, 7), (0.8, 2.0)),  # (H, W) order; cv2's ksize is (W, H)
    (dict(sigma=1.2, window_size=7), (7, 7), (1.2, 1.2)),
])
def test_gaussian_blur_against_opencv(kw, ksize, sigma):
    rng = np.random.default_rng(3)
    imgs = [rng.integers(0, 255, (31, 47, 3), dtype=np.uint8),
            rng.integers(0, 255, (5, 9, 3), dtype=np.uint8)]
    (out,), = run_feed(lambda d: fn.gaussian_blur(d, **kw), [imgs])
    (outf,), = run_feed(lambda d: fn.gaussian_blur(d, dtype=types.FLOAT, **kw), [imgs])
    for o, of, img in zip(out, outf, imgs):
        ref = cv2.GaussianBlur(img.astype(np.float32), ksize, sigmaX=sigma[1], sigmaY=sigma[0],
                               borderType=cv2.BORDER_REFLECT_101)
        assert o.dtype == np.uint8 and of.dtype == np.float32
        np.testing.assert_allclose(of, ref, atol=1e-3)
        assert np.abs(o.astype(float) - ref).max() <= 0.5 + 1e-3


def test_gaussian_blur_layouts_and_bad_arguments():
    rng = np.random.default_rng(4)
    chw = [rng.random((2, 12, 14), dtype=np.float32)]
    (out,), = run_feed(lambda d: fn.gaussian_blur(d, window_size=3), [chw], layout="CHW")
    for c in range(2):
        ref = cv2.GaussianBlur(chw[0][c], (3, 3), 0.8, borderType=cv2.BORDER_REFLECT_101)
        np.testing.assert_allclose(out[0][c], ref, atol=1e-5)
    fhwc = [rng.random((3, 8, 9, 1), dtype=np.float32)]
    (out,), = run_feed(lambda d: fn.gaussian_blur(d, sigma=1.0), [fhwc], layout="FHWC")
    for f in range(3):
        ref = cv2.GaussianBlur(fhwc[0][f, :, :, 0], (7, 7), 1.0, borderType=cv2.BORDER_REFLECT_101)
        np.testing.assert_allclose(out[0][f, :, :, 0], ref, atol=1e-5)
    with pytest.raises(sluice.SluiceError, match="gaussian_blur.*sigma or window_size"):
        run_feed(lambda d: fn.gaussian_blur(d), [chw], layout="CHW")
    with pytest.raises(sluice.SluiceError, match="gaussian_blur.*odd"):
        run_feed(lambda d: fn.gaussian_blur(d, window_size=4), [chw], layout="CHW")
    with pytest.raises(sluice.SluiceError, match="gaussian_blur.*sigma has 3 values"):
        run_feed(lambda d: fn.gaussian_blur(d, sigma=(1, 2, 3)), [chw], layout="CHW")


@pytest.mark.parametrize("ksize", [3, 5, 7])
def test_laplacian_against_opencv(ksize):
    rng = np.random.default_rng(5)
    imgs = [rng.integers(0, 255, (23, 37, 3), dtype=np.uint8),
            rng.integers(0, 255, (9, 6, 1), dtype=np.uint8)]
    (out,), = run_feed(lambda d: fn.laplacian(d, window_size=ksize), [imgs])
    (outf,), = run_feed(lambda d: fn.laplacian(d, window_size=ksize, dtype=types.FLOAT), [imgs])
    for o, of, img in zip(out, outf, imgs):
        ref = cv2.Laplacian(img.astype(np.float32), cv2.CV_32F, ksize=ksize,
                            borderType=cv2.BORDER_REFLECT_101).reshape(img.shape)
        np.testing.assert_allclose(of, ref, rtol=1e-5, atol=1e-2)
        ref8 = cv2.Laplacian(img, -1, ksize=ksize,
                             borderType=cv2.BORDER_REFLECT_101).reshape(img.shape)
        assert np.abs(o.astype(int) - ref8).max() <= 1


def test_laplacian_scale_normalized_smoothing():
    rng = np.random.default_rng(6)
    img = [rng.random((16, 20, 1), dtype=np.float32)]
    (a,), = run_feed(lambda d: fn.laplacian(d, window_size=5, normalized_kernel=True), [img])
    ref = cv2.Laplacian(img[0][..., 0], cv2.CV_32F, ksize=5, borderType=cv2.BORDER_REFLECT_101)
    # each partial has windows 5 + 5 over 2 axes: 2^-(10 - 2 - 2) = 1/64
    np.testing.assert_allclose(a[0][..., 0], ref / 64, rtol=1e-5, atol=1e-5)
    (b,), = run_feed(lambda d: fn.laplacian(d, window_size=3, scale=(2.0, 0.5)), [img])
    dyy = cv2.Sobel(img[0][..., 0], cv2.CV_32F, 0, 2, ksize=3, borderType=cv2.BORDER_REFLECT_101)
    dxx = cv2.Sobel(img[0][..., 0], cv2.CV_32F, 2, 0, ksize=3, borderType=cv2.BORDER_REFLECT_101)
    np.testing.assert_allclose(b[0][..., 0], 2.0 * dyy + 0.5 * dxx, rtol=1e-5, atol=1e-4)
    (c,), = run_feed(lambda d: fn.laplacian(d, window_size=3, smoothing_size=1), [img])
    k1 = cv2.Laplacian(img[0][..., 0], cv2.CV_32F, ksize=1, borderType=cv2.BORDER_REFLECT_101)
    np.testing.assert_allclose(c[0][..., 0], k1, rtol=1e-5, atol=1e-5)
    with pytest.raises(sluice.SluiceError, match="laplacian.*scale.*normalized_kernel"):
        run_feed(lambda d: fn.laplacian(d, scale=2.0, normalized_kernel=True), [img])
    with pytest.raises(sluice.SluiceError, match="laplacian"):
        run_feed(lambda d: fn.laplacian(d, window_size=1), [img])


# ---- noise.* (statistics, and exact reproducibility per seed) --------------------------------

def run_seeded(build, batches, seed, layout="HWC"):
    it = iter(batches)

    @pipeline_def(batch_size=len(batches[0]), num_threads=3, device_id=None, seed=seed,
                  prefetch_queue_depth=2)
    def p():
        return build(fn.external_source(source=lambda: next(it), layout=layout))

    pipe = p()
    return [[np.array(t) for t in pipe.run()[0]] for _ in batches]


def test_noise_gaussian_statistics_and_reproducibility():
    data = [np.full((64, 64, 3), 100.0, np.float32), np.full((50, 40, 1), -3.0, np.float32)]
    build = lambda d: fn.noise.gaussian(d, mean=2.0, stddev=5.0)  # noqa: E731
    a = run_seeded(build, [data, data], seed=11)
    b = run_seeded(build, [data, data], seed=11)
    c = run_seeded(build, [data, data], seed=12)
    for it in range(2):
        for k in range(2):
            np.testing.assert_array_equal(a[it][k], b[it][k])
            assert not np.array_equal(a[it][k], c[it][k])
            noise = a[it][k] - data[k]
            assert abs(noise.mean() - 2.0) < 0.2 and abs(noise.std() - 5.0) < 0.2
    assert not np.array_equal(a[0][0], a[1][0])  # a new draw every iteration
    u8 = [np.full((100, 100, 3), 250, np.uint8)]
    (out,), = run_feed(lambda d: fn.noise.gaussian(d, stddev=10.0), [u8])
    assert out[0].dtype == np.uint8 and out[0].max() == 255  # saturated, not wrapped
    assert abs(out[0][out[0] < 255].astype(float).mean() - 250) < 10


def test_noise_shot_statistics():
    for factor in (0.5, 20.0):
        data = [np.full((200, 200, 1), 60.0, np.float32)]
        (out,), = run_feed(lambda d: fn.noise.shot(d, factor=factor, seed=3), [data])
        o = out[0]
        # Poisson(60 / factor) * factor: mean 60, variance 60 * factor, multiples of factor
        assert abs(o.mean() - 60) < 0.02 * 60
        assert abs(o.var() / (60 * factor) - 1) < 0.05
        np.testing.assert_allclose(np.round(o / factor) * factor, o, atol=1e-3)
    u8 = [np.arange(256, dtype=np.uint8).reshape(16, 16, 1)]
    (out,), = run_feed(lambda d: fn.noise.shot(d, factor=0.0), [u8])
    np.testing.assert_array_equal(out[0], u8[0])
    (out,), = run_feed(lambda d: fn.noise.shot(d), [[np.zeros((8, 8, 3), np.uint8)]])
    np.testing.assert_array_equal(out[0], 0)  # Poisson(0) is 0


@pytest.mark.parametrize("per_channel", [False, True])
def test_noise_salt_and_pepper_statistics(per_channel):
    data = [np.full((200, 150, 3), 128, np.uint8)]
    (out,), = run_feed(lambda d: fn.noise.salt_and_pepper(d, prob=0.2, salt_vs_pepper=0.25,
                                                          per_channel=per_channel, seed=5),
                       [data])
    o = out[0]
    assert set(np.unique(o)) <= {0, 128, 255}
    salt, pepper = (o == 255), (o == 0)
    assert abs(salt.mean() - 0.05) < 0.005 and abs(pepper.mean() - 0.15) < 0.01
    same = (o[..., 0] == o[..., 1]) & (o[..., 1] == o[..., 2])
    if per_channel:
        assert not same.all()
    else:
        assert same.all()
    f = [np.zeros((100, 100, 1), np.float32)]  # empty layout: channels last
    (out,), = run_feed(lambda d: fn.noise.salt_and_pepper(d, prob=0.5, salt_val=7.0), [f],
                       layout="")
    assert set(np.unique(out[0])) <= {0.0, 7.0, -1.0}
    assert abs((out[0] != 0).mean() - 0.5) < 0.03


def test_noise_dali_cpu_usage_and_bad_arguments():
    data = [np.random.default_rng(0).integers(0, 255, (10, 20, 3), dtype=np.uint8)] * 2
    for op in (fn.noise.gaussian, fn.noise.shot, fn.noise.salt_and_pepper):
        (out,), = run_feed(lambda d: op(d), [data])
        assert out[0].shape == (10, 20, 3) and out[0].dtype == np.uint8
    with pytest.raises(sluice.SluiceError, match="noise.gaussian.*stddev"):
        run_feed(lambda d: fn.noise.gaussian(d, stddev=-1.0), [data])
    with pytest.raises(sluice.SluiceError, match="noise.salt_and_pepper.*prob"):
        run_feed(lambda d: fn.noise.salt_and_pepper(d, prob=1.5), [data])


# ---- jpeg_compression_distortion (against OpenCV's encode + decode) --------------------------

@pytest.mark.parametrize("quality", [1, 10, 50, 95])
def test_jpeg_compression_distortion_against_opencv(quality):
    imgs = [photo(37, 53, 7), photo(64, 48, 8), photo(16, 16, 9)]
    (out,), = run_feed(lambda d: fn.jpeg_compression_distortion(d, quality=quality), [imgs])
    for o, img in zip(out, imgs):
        ok, enc = cv2.imencode(".jpg", img[..., ::-1], [cv2.IMWRITE_JPEG_QUALITY, quality])
        ref = cv2.imdecode(enc, cv2.IMREAD_COLOR)[..., ::-1]
        assert o.shape == img.shape and o.dtype == np.uint8
        diff = np.abs(o.astype(int) - ref)
        assert diff.max() <= 1 and diff.mean() < 0.05, (diff.max(), diff.mean())
        if quality <= 10:
            assert np.abs(o.astype(int) - img).mean() > 2  # it really distorts


def test_jpeg_compression_distortion_default_gray_and_bad_input():
    rng = np.random.default_rng(0)
    data = [rng.integers(0, 255, (10, 20, 3), dtype=np.uint8) for _ in range(2)]
    (out,), = run_feed(lambda d: fn.jpeg_compression_distortion(d, quality=10), [data])
    assert out[0].shape == (10, 20, 3)
    gray = [photo(20, 30, 1)[..., :1].copy()]
    (out,), = run_feed(lambda d: fn.jpeg_compression_distortion(d), [gray])
    ok, enc = cv2.imencode(".jpg", gray[0][..., 0], [cv2.IMWRITE_JPEG_QUALITY, 50])
    ref = cv2.imdecode(enc, cv2.IMREAD_GRAYSCALE)
    assert np.abs(out[0][..., 0].astype(int) - ref).max() <= 1
    with pytest.raises(sluice.SluiceError, match="jpeg_compression_distortion.*uint8"):
        run_feed(lambda d: fn.jpeg_compression_distortion(d), [[np.zeros((4, 4, 3), np.float32)]])
    with pytest.raises(sluice.SluiceError, match="jpeg_compression_distortion.*channels"):
        run_feed(lambda d: fn.jpeg_compression_distortion(d), [[np.zeros((4, 4, 2), np.uint8)]])
    with pytest.raises(sluice.SluiceError, match="quality"):
        run_feed(lambda d: fn.jpeg_compression_distortion(d, quality=0), [data])


# ---- water, sphere, jitter, grid_mask --------------------------------------------------------

def warp_nn_ref(img, mapping, fill=0):
    """NumPy model of a mapped NN warp: output pixel centre (x, y) reads the input pixel
    containing mapping(x, y); outside: fill."""
    h, w = img.shape[:2]
    y, x = np.mgrid[0:h, 0:w].astype(np.float64) + 0.5
    sx, sy = mapping(x, y)
    xi, yi = np.floor(sx).astype(np.int64), np.floor(sy).astype(np.int64)
    inside = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
    out = np.full(img.shape, fill, img.dtype)
    out[inside] = img[yi[inside], xi[inside]]
    return out


def mostly_equal(a, b, frac=0.002):
    """Equal but for rare pixels whose source lies on a pixel edge (float32 vs float64)."""
    bad = np.any(a != b, axis=-1).mean()
    assert bad <= frac, bad


def test_water_against_model():
    imgs = [photo(60, 80, 1), photo(33, 47, 2)]
    kw = dict(ampl_x=4.0, ampl_y=7.0, freq_x=0.2, freq_y=0.05, phase_x=0.3, phase_y=1.0,
              fill_value=17.0)
    (out,), = run_feed(lambda d: fn.water(d, **kw), [imgs])
    for o, img in zip(out, imgs):
        ref = warp_nn_ref(img, lambda x, y: (x + 4.0 * np.sin(0.2 * y + 0.3),
                                             y + 7.0 * np.cos(0.05 * x + 1.0)), 17)
        mostly_equal(o, ref)
    (dflt,), = run_feed(lambda d: fn.water(d), [imgs])  # DALI's defaults: 10, 2 pi / 128
    ref = warp_nn_ref(imgs[0], lambda x, y: (x + 10 * np.sin(0.049087 * y),
                                             y + 10 * np.cos(0.049087 * x)))
    mostly_equal(dflt[0], ref)
    (lin,), = run_feed(lambda d: fn.water(d, interp_type=types.INTERP_LINEAR, ampl_x=0.0,
                                          ampl_y=0.0), [imgs])
    np.testing.assert_array_equal(lin[0], imgs[0])  # no displacement: the identity
    (off,), = run_feed(lambda d: fn.water(d, mask=0), [imgs])
    np.testing.assert_array_equal(off[1], imgs[1])


def test_sphere_against_model():
    imgs = [photo(40, 64, 3), photo(51, 37, 4)]
    fimgs = [i.astype(np.float32) for i in imgs]
    (out,), = run_feed(lambda d: fn.sphere(d, fill_value=5.0), [imgs])
    (fout,), = run_feed(lambda d: fn.sphere(d, fill_value=5.0), [fimgs])
    for o, img in zip(out + fout, imgs + fimgs):
        h, w = img.shape[:2]
        cx, cy, r = w / 2, h / 2, min(w, h) / 2

        def m(x, y):
            dx, dy = x - cx, y - cy
            d = np.sqrt((dx / r) ** 2 + (dy / r) ** 2)
            return dx * d + cx, dy * d + cy

        mostly_equal(o, warp_nn_ref(img, m, 5))
    with pytest.raises(sluice.SluiceError, match="sphere.*INTERP_CUBIC"):
        run_feed(lambda d: fn.sphere(d, interp_type=types.INTERP_CUBIC), [imgs])


def test_jitter_moves_pixels_within_neighbourhood_reproducibly():
    img = np.arange(30 * 40, dtype=np.int64).reshape(30, 40)
    data = [np.stack([img % 256, img // 256, np.zeros_like(img)], -1).astype(np.uint8)]
    a = run_seeded(lambda d: fn.jitter(d, nDegree=3, fill_value=255), [data], seed=1)[0][0]
    b = run_seeded(lambda d: fn.jitter(d, nDegree=3, fill_value=255), [data], seed=1)[0][0]
    c = run_seeded(lambda d: fn.jitter(d, nDegree=3, fill_value=255), [data], seed=2)[0][0]
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    src = a[..., 0].astype(np.int64) + 256 * a[..., 1].astype(np.int64)
    filled = a[..., 2] == 255
    sy, sx = src // 40, src % 40
    y, x = np.mgrid[0:30, 0:40]
    assert np.all(np.abs(sy - y)[~filled] <= 1) and np.all(np.abs(sx - x)[~filled] <= 1)
    assert (sx != x)[~filled].mean() > 0.5  # most pixels moved (2 of 3 offsets are nonzero)
    assert filled.any() and not filled[1:-1, 1:-1].any()  # fill only at the borders
    (same,), = run_feed(lambda d: fn.jitter(d, nDegree=1), [data])
    np.testing.assert_array_equal(same[0], data[0])


def grid_model(w, h, tile, ratio, angle, d, sx=0.0, sy=0.0):
    """DALI's test model of the kept pixels (d > 0 shrinks, d < 0 grows them)."""
    ca, sa, b = np.cos(angle), np.sin(angle), tile * ratio
    j, i = np.mgrid[0:h, 0:w].astype(np.float64)
    i, j = i - sx, j - sy
    x, y = i * ca - j * sa, i * sa + j * ca
    return ((x + d) % tile > b + 2 * d) | ((y + d) % tile > b + 2 * d)


@pytest.mark.parametrize("tile,ratio,angle,shift", [(20, 0.5, 0.0, (0, 0)),
                                                    (51, 0.38158387, 2.6810782, (0, 0)),
                                                    (16, 0.3, -0.7, (5.0, -3.0))])
def test_grid_mask_against_model(tile, ratio, angle, shift):
    img = np.full((90, 120, 3), 200, np.uint8)
    (out,), = run_feed(lambda d: fn.grid_mask(d, tile=tile, ratio=ratio, angle=angle,
                                              shift_x=shift[0], shift_y=shift[1]), [[img]])
    o = out[0]
    black = ~grid_model(120, 90, tile, ratio, angle, -0.1, *shift)
    kept = grid_model(120, 90, tile, ratio, angle, 0.1, *shift)
    assert not o[black].any()
    np.testing.assert_array_equal(o[kept], img[kept])
    assert black.any() and kept.any()


# ---- roi_random_crop ---------------------------------------------------------------------------

def roi_crops(n_iter=40, seed=9, **kw):
    @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=seed)
    def p():
        return fn.roi_random_crop(**kw)

    pipe = p()
    return np.array([[np.array(t) for t in pipe.run()[0]] for _ in range(n_iter)]).reshape(-1, 2)


def test_roi_random_crop_placement_rules():
    # ROI (10..20, 10..12) vs crop 4 x 4: axis 0 window inside the ROI, axis 1 around it
    starts = roi_crops(crop_shape=[4, 4], roi_start=[10, 10], roi_end=[20, 12],
                       in_shape=[100, 100])
    assert starts.dtype == np.int64
    assert set(starts[:, 0]) == set(range(10, 17))  # s .. s + r - c, every value drawn
    assert set(starts[:, 1]) == set(range(8, 11))   # s + r - c .. s
    # bounded by in_shape: ROI at the edge, crop larger than the ROI
    starts = roi_crops(crop_shape=[6, 6], roi_start=[0, 97], roi_shape=[2, 3],
                       in_shape=[50, 100])
    assert set(starts[:, 0]) == set(range(0, 1)) and set(starts[:, 1]) == {94}
    # unbounded: may leave the data
    starts = roi_crops(crop_shape=[6, 6], roi_start=[0, 0], roi_shape=[2, 2])
    assert starts.min() == -4 and starts.max() == 0
    a = roi_crops(seed=1, crop_shape=[4, 4], roi_start=[10, 10], roi_end=[30, 30])
    b = roi_crops(seed=1, crop_shape=[4, 4], roi_start=[10, 10], roi_end=[30, 30])
    np.testing.assert_array_equal(a, b)


def test_roi_random_crop_with_input_dali_usage_and_errors():
    shape = [10, 20, 3]
    data = [np.zeros(shape, np.uint8)] * 2
    for _ in range(5):
        (o,), = run_feed(lambda d: fn.roi_random_crop(
            d, crop_shape=[x // 2 for x in shape], roi_start=[x // 4 for x in shape],
            roi_shape=[x // 2 for x in shape]), [data])
        for s in o:  # ROI == crop: the window is the ROI
            np.testing.assert_array_equal(s, [2, 5, 0])
    with pytest.raises(sluice.SluiceError, match="roi_random_crop.*not both"):
        roi_crops(crop_shape=[4, 4], roi_start=[0, 0], roi_end=[5, 5], roi_shape=[5, 5])
    with pytest.raises(sluice.SluiceError, match="roi_random_crop.*bigger than the input"):
        roi_crops(crop_shape=[40, 4], roi_start=[0, 0], roi_shape=[5, 5], in_shape=[30, 30])
    with pytest.raises(sluice.SluiceError, match="roi_random_crop.*out of bounds"):
        roi_crops(crop_shape=[4, 4], roi_start=[0, 28], roi_shape=[5, 5], in_shape=[30, 30])


# ---- multi_paste -------------------------------------------------------------------------------

def test_multi_paste_in_ids_against_model():
    rng = np.random.default_rng(12)
    imgs = [rng.integers(1, 255, (12, 16, 3), dtype=np.uint8) for _ in range(3)]
    kw = dict(in_ids=[2, 0], in_anchors=[1, 2, 0, 0], shapes=[5, 6, 4, 4],
              out_anchors=[0, 0, 3, 5], output_size=[9, 11], dtype=types.FLOAT)
    (out,), = run_feed(lambda d: fn.multi_paste(d, **kw), [imgs])
    ref = np.zeros((9, 11, 3), np.float32)
    ref[0:5, 0:6] = imgs[2][1:6, 2:8]
    ref[3:7, 5:9] = imgs[0][0:4, 0:4]  # the later region overwrites
    for o in out:
        assert o.dtype == np.float32
        np.testing.assert_array_equal(o, ref)


def test_multi_paste_inputs_mode_relative_and_defaults():
    rng = np.random.default_rng(13)
    a = [rng.integers(1, 255, (8, 8, 1), dtype=np.uint8) for _ in range(2)]
    b = [rng.integers(1, 255, (4, 4, 1), dtype=np.uint8) for _ in range(2)]
    it = iter([(a, b)])
    batch = next(it)

    @pipeline_def(batch_size=2, num_threads=2, device_id=None)
    def p():
        x = fn.external_source(source=lambda: batch[0], layout="HWC")
        y = fn.external_source(source=lambda: batch[1], layout="HWC")
        return fn.multi_paste(x, y, output_size=[10, 10], out_anchors_rel=[0.0, 0.0, 0.5, 0.6])

    (out,) = p().run()
    for k in range(2):
        ref = np.zeros((10, 10, 1), np.uint8)
        ref[0:8, 0:8] = a[k]
        ref[5:9, 6:10] = b[k]
        np.testing.assert_array_equal(np.array(out[k]), ref)


def test_multi_paste_dali_usage_and_errors():
    data = [np.random.default_rng(0).integers(0, 255, (10, 20, 3), dtype=np.uint8)
            for _ in range(2)]
    (out,), = run_feed(lambda d: fn.multi_paste(d, in_ids=np.array([0, 1]),
                                                output_size=[10, 20, 3]), [data])
    for o in out:  # whole images pasted at (0, 0), the second over the first
        np.testing.assert_array_equal(o, data[1])
    with pytest.raises(sluice.SluiceError, match="multi_paste.*out of bounds"):
        run_feed(lambda d: fn.multi_paste(d, in_ids=[0], out_anchors=[5, 5],
                                          output_size=[10, 20]), [data])
    with pytest.raises(sluice.SluiceError, match="multi_paste.*in_ids"):
        run_feed(lambda d: fn.multi_paste(d, in_ids=[0, 7], output_size=[10, 20]), [data])
    ragged = [np.zeros((4, 4, 3), np.uint8), np.zeros((5, 4, 3), np.uint8)]
    with pytest.raises(sluice.SluiceError, match="multi_paste.*output_size"):
        run_feed(lambda d: fn.multi_paste(d, in_ids=[0]), [ragged])


# ---- empty samples and empty batches -----------------------------------------------------------

EMPTY_CASES = [
    (lambda d: fn.resize_crop_mirror(d, resize_x=4, resize_y=4, crop=(2, 2)), "fails"),
    (lambda d: fn.paste(d, ratio=2.0, fill_value=3), (0, 10, 3)),
    (lambda d: fn.erase(d, anchor=(1, 1), shape=(2, 2)), (0, 5, 3)),
    (lambda d: fn.gaussian_blur(d, sigma=1.0), (0, 5, 3)),
    (lambda d: fn.laplacian(d), (0, 5, 3)),
    (lambda d: fn.noise.gaussian(d), (0, 5, 3)),
    (lambda d: fn.noise.shot(d), (0, 5, 3)),
    (lambda d: fn.noise.salt_and_pepper(d), (0, 5, 3)),
    (lambda d: fn.jpeg_compression_distortion(d), (0, 5, 3)),
    (lambda d: fn.grid_mask(d), (0, 5, 3)),
    (lambda d: fn.water(d), (0, 5, 3)),
    (lambda d: fn.sphere(d), (0, 5, 3)),
    (lambda d: fn.jitter(d), (0, 5, 3)),
    (lambda d: fn.multi_paste(d, in_ids=[0], output_size=[0, 5]), (0, 5, 3)),
]


@pytest.mark.parametrize("k", range(len(EMPTY_CASES)))
def test_zero_sized_samples(k):
    build, expect = EMPTY_CASES[k]
    data = [np.zeros((0, 5, 3), np.uint8), photo(6, 7, 1)]
    if expect == "fails":  # resizing nothing into something is refused, naming the sample
        with pytest.raises(sluice.SluiceError, match="sample 0"):
            run_feed(build, [data])
        return
    (out,), = run_feed(build, [data])
    assert out[0].shape == expect
    assert out[1].ndim == 3
