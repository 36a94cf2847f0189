"""tests/python/test_ops_detect.py: the geometry and detection operators (issue 19) against
NumPy models written here from the operators' definitions (DALI's documentation and the
assertions of its tests): transforms.* matrices (hand-built homogeneous matrices, composition
order, scipy-free Rodrigues rotation checked by its properties), coord_transform, coord_flip,
bb_flip and bbox_paste; each with per-sample arguments, empty samples and bad arguments."""
import math

import numpy as np
import pytest

import sluice
from sluice import fn, pipeline_def

BATCH = 3
RNG = np.random.default_rng(19)


def run(build, batch=BATCH, iters=1, **kw):
    """Runs build() -> tuple of DataNodes in a pipeline; returns [[np samples] per output]."""
    @pipeline_def(batch_size=batch, num_threads=2, prefetch_queue_depth=1, seed=1234, **kw)
    def p():
        out = build()
        return out if isinstance(out, tuple) else (out,)

    pipe = p()
    res = []
    for _ in range(iters):
        outs = pipe.run()
        res.append([[np.array(o.at(i)) for i in range(len(o))] for o in outs])
    return res[0] if iters == 1 else res


def src(samples):
    return fn.external_source(source=lambda: samples)


# ---- homogeneous-matrix models -------------------------------------------------------------

def h_translate(offset):
    m = np.identity(len(offset) + 1)
    m[:-1, -1] = offset
    return m


def h_about(lin, center):
    n = lin.shape[0]
    m = np.identity(n + 1)
    m[:n, :n] = lin
    if center is None:
        return m
    return h_translate(center) @ m @ h_translate(-np.asarray(center, float))


def h_rot2(deg):
    a = math.radians(deg)
    return np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])


def h_rot3(deg, axis):
    """Rotation about `axis` by `deg` through the matrix exponential of the cross-product
    matrix (an independent route: a truncated series, not Rodrigues' closed form)."""
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]]) * math.radians(deg)
    out, term = np.identity(3), np.identity(3)
    for n in range(1, 40):
        term = term @ kx / n
        out = out + term
    return out


def top(m):
    return m[:-1, :]


def homog(t):
    n = t.shape[0]
    m = np.identity(n + 1)
    m[:n, :] = t
    return m


def compose(own, t0, reverse):
    if t0 is None:
        return top(own)
    return top(homog(t0) @ own if reverse else own @ homog(t0))


def check_op(op, ref, nd, **kw):
    """op without and with an input transform (both orders) against ref (homogeneous)."""
    t0s = [RNG.uniform(-1, 1, (nd, nd + 1)).astype(np.float32) for _ in range(BATCH)]
    (plain,), = [run(lambda: op(**kw))]
    for i in range(BATCH):
        assert plain[i].dtype == np.float32 and plain[i].shape == (nd, nd + 1)
        np.testing.assert_allclose(plain[i], top(ref), atol=2e-6)
    for reverse in (False, True):
        out, t0 = run(lambda: (op(src(t0s), reverse_order=reverse, **kw), src(t0s)))
        for i in range(BATCH):
            np.testing.assert_allclose(out[i], compose(ref, t0[i], reverse), atol=2e-6)


@pytest.mark.parametrize("offset", [(0.0, 1.0), (2.0, 1.0, 3.0), (-4.5,)])
def test_translation(offset):
    check_op(fn.transforms.translation, h_translate(offset), len(offset), offset=offset)


@pytest.mark.parametrize("scale,center,ndim", [
    ((0.0, 1.0), None, None), ((2.0, 1.0, 3.0), None, None), ((2.0, 1.0), (1.0, 0.5), None),
    ((2.0,), (1.0, 0.5), 2), ((3.0,), None, 3)])
def test_scale(scale, center, ndim):
    n = ndim or len(scale)
    lin = np.diag([scale[0]] * n if len(scale) == 1 else scale)
    kw = {"scale": scale}
    if center is not None:
        kw["center"] = center
    if ndim is not None:
        kw["ndim"] = ndim
    check_op(fn.transforms.scale, h_about(lin, center), n, **kw)


@pytest.mark.parametrize("angle,axis,center", [
    (30.0, None, None), (30.0, None, (1.0, 0.5)), (-125.0, None, None),
    (40.0, (0.4, 0.3, 0.1), None), (40.0, (0.4, 0.3, 0.1), (1.0, -0.4, 10.0)),
    (90.0, (0, 0, 2), None)])
def test_rotation(angle, axis, center):
    lin = h_rot2(angle) if axis is None else h_rot3(angle, axis)
    kw = {"angle": angle}
    if axis is not None:
        kw["axis"] = axis
    if center is not None:
        kw["center"] = center
    check_op(fn.transforms.rotation, h_about(lin, center), 3 if axis else 2, **kw)


def test_rotation_3d_about_z_is_the_2d_rotation():
    (r3,), = [run(lambda: fn.transforms.rotation(angle=33.0, axis=(0, 0, 1)))]
    (r2,), = [run(lambda: fn.transforms.rotation(angle=33.0))]
    np.testing.assert_allclose(r3[0][:2, :2], r2[0][:, :2], atol=1e-7)
    np.testing.assert_allclose(r3[0][2], [0, 0, 1, 0], atol=1e-7)


def test_rotation_per_sample_angle():
    angles = [np.float32(a) for a in (10.0, -75.0, 180.0)]
    out, = run(lambda: fn.transforms.rotation(angle=src(angles), center=(2.0, 3.0)))
    for i, a in enumerate(angles):
        np.testing.assert_allclose(out[i], top(h_about(h_rot2(float(a)), (2.0, 3.0))), atol=2e-6)


def shear_lin(v):
    v = list(v)
    n = 2 if len(v) == 2 else 3
    m = np.identity(n)
    k = 0
    for r in range(n):
        for c in range(n):
            if r != c:
                m[r, c] = v[k]
                k += 1
    return m


@pytest.mark.parametrize("shear,angles,center", [
    ((1.0, 2.0), None, None), ((1.0, 2.0), None, (0.4, 0.5)),
    ((1.0, 2.0, 3.0, 4.0, 5.0, 6.0), None, None),
    ((1.0, 2.0, 3.0, 4.0, 5.0, 6.0), None, (0.4, 0.5, 0.6)),
    (None, (30.0, 10.0), None), (None, (30.0, 10.0), (0.4, 0.5)),
    (None, (40.0, 30.0, 10.0, 35.0, 25.0, 15.0), (0.4, 0.5, 0.6))])
def test_shear(shear, angles, center):
    v = shear if shear is not None else [math.tan(math.radians(a)) for a in angles]
    kw = {"shear": shear} if shear is not None else {"angles": angles}
    if center is not None:
        kw["center"] = center
    check_op(fn.transforms.shear, h_about(shear_lin(v), center), 2 if len(v) == 2 else 3, **kw)


def test_shear_per_sample_matrix_argument():
    # a (ndim, ndim - 1) tensor per sample, as DALI's runtime-argument tests feed it
    sh = [RNG.uniform(-2, 2, (3, 2)).astype(np.float32) for _ in range(BATCH)]
    out, = run(lambda: fn.transforms.shear(shear=src(sh)))
    for i in range(BATCH):
        np.testing.assert_allclose(out[i], top(h_about(shear_lin(sh[i].ravel()), None)),
                                   atol=1e-6)


def crop_ref(fs, fe, ts, te, absolute):
    fs, fe, ts, te = (np.asarray(x, float) for x in (fs, fe, ts, te))
    if absolute:
        fs, fe = np.minimum(fs, fe), np.maximum(fs, fe)
        ts, te = np.minimum(ts, te), np.maximum(ts, te)
    s = (te - ts) / (fe - fs)
    return h_translate(ts) @ h_about(np.diag(s), None) @ h_translate(-fs)


@pytest.mark.parametrize("fs,fe,ts,te", [
    ((0.1, 0.2), (1.0, 1.2), (0.3, 0.2), (0.5, 0.6)), ((0.1, 0.2), (0.4, 0.9), None, None),
    ((0.2, 0.2), None, None, None), (None, (0.4, 0.9), None, None),
    ((0.1, 0.2, 0.3), (1.0, 1.2, 1.3), (0.3, 0.2, 0.1), (0.5, 0.6, 0.7)), (None,) * 4])
@pytest.mark.parametrize("swap,absolute", [(False, False), (True, False), (True, True)])
def test_crop(fs, fe, ts, te, swap, absolute):
    if swap:
        fs, fe, ts, te = fe, fs, te, ts
    given = {k: v for k, v in dict(from_start=fs, from_end=fe, to_start=ts, to_end=te).items()
             if v is not None}
    ndim = max([len(v) for v in given.values()] or [1])
    full = {k: (list(v) * ndim if len(v) == 1 else list(v)) for k, v in given.items()}
    dflt = {"from_start": [0.0] * ndim, "from_end": [1.0] * ndim,
            "to_start": [0.0] * ndim, "to_end": [1.0] * ndim}
    dflt.update(full)
    if swap and not given:
        dflt = {"from_start": [1.0], "from_end": [0.0], "to_start": [1.0], "to_end": [0.0]}
        given = dict(dflt)
    ref = crop_ref(dflt["from_start"], dflt["from_end"], dflt["to_start"], dflt["to_end"],
                   absolute)
    check_op(fn.transforms.crop, ref, ndim, absolute=absolute, **given)
    # the defining property: from_start -> to_start, from_end -> to_end
    (m,), = [run(lambda: fn.transforms.crop(absolute=absolute, **given))]
    fs_, fe_, ts_, te_ = (np.asarray(dflt[k]) for k in ("from_start", "from_end", "to_start",
                                                        "to_end"))
    if absolute:
        fs_, fe_ = np.minimum(fs_, fe_), np.maximum(fs_, fe_)
        ts_, te_ = np.minimum(ts_, te_), np.maximum(ts_, te_)
    np.testing.assert_allclose(m[0][:, :ndim] @ fs_ + m[0][:, ndim], ts_, atol=1e-6)
    np.testing.assert_allclose(m[0][:, :ndim] @ fe_ + m[0][:, ndim], te_, atol=1e-6)


@pytest.mark.parametrize("count", [2, 3, 10])
@pytest.mark.parametrize("ndim", [2, 3, 6])
@pytest.mark.parametrize("reverse", [False, True])
def test_combine(count, ndim, reverse):
    mats = [[RNG.uniform(-1, 1, (ndim, ndim + 1)).astype(np.float32) for _ in range(BATCH)]
            for _ in range(count)]
    out, = run(lambda: fn.transforms.combine(*[src(m) for m in mats], reverse_order=reverse))
    for i in range(BATCH):
        hs = [homog(m[i]) for m in mats]
        ref = np.identity(ndim + 1)
        for h in hs:
            ref = ref @ h if reverse else h @ ref
        np.testing.assert_allclose(out[i], top(ref), atol=1e-5)


def test_combine_order_matches_chaining():
    T = fn.transforms
    a, b, c, d = run(lambda: (T.combine(T.translation(offset=(1, 2)), T.rotation(angle=30.0)),
                              T.rotation(T.translation(offset=(1, 2)), angle=30.0),
                              T.combine(T.translation(offset=(1, 2)), T.rotation(angle=30.0),
                                        reverse_order=True),
                              T.translation(T.rotation(angle=30.0), offset=(1, 2))))
    for i in range(BATCH):
        np.testing.assert_allclose(a[i], b[i], atol=1e-6)
        np.testing.assert_allclose(c[i], d[i], atol=1e-6)
        assert not np.allclose(a[i], c[i])


def test_transforms_bad_arguments():
    with pytest.raises(ValueError, match="shear and angles are exclusive"):
        run(lambda: fn.transforms.shear(shear=(1.0, 2.0), angles=(3.0, 4.0)))
    with pytest.raises(ValueError, match=r"angles\[0\] is 95"):
        run(lambda: fn.transforms.shear(angles=(95.0, 4.0)))
    with pytest.raises(ValueError, match="number of dimensions is not known"):
        run(lambda: fn.transforms.scale(scale=(2.0,)))
    with pytest.raises(ValueError, match="center has 3 values, expected 2"):
        run(lambda: fn.transforms.rotation(angle=3.0, center=(1.0, 2.0, 3.0)))
    # an empty source extent divides by zero (DALI's cpu-only smoke test uses one): IEEE values
    (m,), = [run(lambda: fn.transforms.crop(from_start=(0., 1.), from_end=(1., 1.),
                                             to_start=(0.2, 0.3), to_end=(0.8, 0.5)))]
    np.testing.assert_allclose(m[0][0], [0.6, 0, 0.2], rtol=1e-6)
    assert np.isinf(m[0][1, 1]) and not np.isfinite(m[0][1, 2])
    t3 = [np.zeros((3, 4), np.float32)] * BATCH
    with pytest.raises(ValueError, match=r"transforms\.translation.*input transform has 3 "
                                         r"dimensions, but the arguments describe a 2-D"):
        run(lambda: fn.transforms.translation(src(t3), offset=(1.0, 2.0)))
    bad = [np.zeros((2, 5), np.float32)] * BATCH
    with pytest.raises(ValueError, match=r"shape \(ndim, ndim \+ 1\)"):
        run(lambda: fn.transforms.combine(src(bad), src(bad)))


def test_transforms_empty_batch_of_one_sample_each_call():
    # an input transform given as (n + 1, n + 1) is accepted: its top rows are used
    full = [homog(RNG.uniform(-1, 1, (2, 3))).astype(np.float32) for _ in range(BATCH)]
    out, = run(lambda: fn.transforms.translation(src(full), offset=(1.0, -1.0)))
    for i in range(BATCH):
        np.testing.assert_allclose(out[i], top(h_translate((1.0, -1.0)) @ full[i]), atol=1e-6)


# ---- coord_transform -----------------------------------------------------------------------

def test_coord_transform_matches_numpy():
    pts = [RNG.uniform(-10, 10, (n, 3)).astype(np.float32) for n in (5, 0, 17)]
    M = RNG.uniform(-2, 2, (2, 3))
    T = RNG.uniform(-1, 1, 2)
    a, b, c, d = run(lambda: (fn.coord_transform(src(pts), M=M.ravel().tolist(), T=T.tolist()),
                              fn.coord_transform(src(pts), MT=np.hstack([M, T[:, None]])
                                                 .ravel().tolist()),
                              fn.coord_transform(src(pts), M=2.0, T=0.5),
                              fn.coord_transform(src(pts))))
    for i, p in enumerate(pts):
        ref = p.astype(np.float64) @ M.T + T
        assert a[i].shape == (len(p), 2) and a[i].dtype == np.float32
        np.testing.assert_allclose(a[i], ref, rtol=1e-6, atol=1e-5)
        np.testing.assert_allclose(b[i], ref, rtol=1e-6, atol=1e-5)
        np.testing.assert_allclose(c[i], 2 * p + 0.5, rtol=1e-6)
        np.testing.assert_array_equal(d[i], p)


def test_coord_transform_per_sample_matrix_from_transforms():
    pts = [RNG.uniform(0, 1, (7, 2)).astype(np.float32) for _ in range(BATCH)]
    angles = [np.float32(a) for a in (15.0, 90.0, -40.0)]

    def build():
        mt = fn.transforms.rotation(angle=src(angles), center=(0.5, 0.5))
        return fn.coord_transform(src(pts), MT=mt)
    out, = run(build)
    for i in range(BATCH):
        ref = top(h_about(h_rot2(float(angles[i])), (0.5, 0.5)))
        np.testing.assert_allclose(out[i], pts[i] @ ref[:, :2].T + ref[:, 2], atol=1e-5)


def test_coord_transform_uint8_hwc_as_dali_cpu_test():
    img = [RNG.integers(0, 255, (10, 20, 3), dtype=np.uint8) for _ in range(2)]
    M = [0, 0, 1, 0, 1, 0, 1, 0, 0]
    out, = run(lambda: fn.coord_transform(fn.external_source(source=lambda: img, layout="HWC"),
                                          M=M, dtype=sluice.types.UINT8), batch=2)
    for i in range(2):
        assert out[i].dtype == np.uint8
        np.testing.assert_array_equal(out[i], img[i][..., ::-1])


def test_coord_transform_rounds_and_saturates():
    pts = [np.array([[0.5, 1.49], [-3.0, 300.7]], np.float32)] * BATCH
    out, = run(lambda: fn.coord_transform(src(pts), dtype=sluice.types.UINT8))
    np.testing.assert_array_equal(out[0], [[1, 1], [0, 255]])


def test_coord_transform_bad_arguments():
    pts = [np.zeros((4, 3), np.float32)] * BATCH
    with pytest.raises(ValueError, match="MT is exclusive with M and T"):
        run(lambda: fn.coord_transform(src(pts), MT=[1.0] * 12, M=[1.0] * 9))
    with pytest.raises(ValueError, match=r"coord_transform.*M has 4 values"):
        run(lambda: fn.coord_transform(src(pts), M=[1.0] * 4))
    with pytest.raises(ValueError, match="T has 2 values"):
        run(lambda: fn.coord_transform(src(pts), T=[1.0, 2.0]))


# ---- coord_flip ------------------------------------------------------------------------------

@pytest.mark.parametrize("ndim,layout", [(1, ""), (2, ""), (3, ""), (2, "yx"), (3, "zxy")])
def test_coord_flip(ndim, layout):
    pts = [RNG.uniform(0, 1, (n, ndim)).astype(np.float32) for n in (200, 0, 9)]
    fx = [np.int32(v) for v in (1, 0, 1)]
    fy = [np.int32(v) for v in (1, 1, 0)]
    cy = [np.float32(v) for v in (0.5, 0.25, 0.75)]
    kw = {"layout": layout} if layout else {}
    out, = run(lambda: fn.coord_flip(src(pts), flip_x=src(fx), flip_y=src(fy), flip_z=1,
                                     center_y=src(cy), **kw))
    names = layout or "xyz"[:ndim]
    for i, p in enumerate(pts):
        ref = p.copy()
        for k, ax in enumerate(names):
            flip = {"x": fx[i], "y": fy[i], "z": 1}[ax]
            c = {"x": 0.5, "y": cy[i], "z": 0.5}[ax]
            if flip:
                ref[:, k] = 2 * c - p[:, k]
        np.testing.assert_allclose(out[i], ref, atol=1e-6)


def test_coord_flip_bad_input():
    with pytest.raises(ValueError, match="coord_flip.*float32"):
        run(lambda: fn.coord_flip(src([np.zeros((3, 2), np.uint8)] * BATCH)))
    with pytest.raises(ValueError, match='layout "xyx"'):
        run(lambda: fn.coord_flip(src([np.zeros((3, 3), np.float32)] * BATCH), layout="xyx"))
    with pytest.raises(ValueError, match=r"4 coordinates"):
        run(lambda: fn.coord_flip(src([np.zeros((3, 4), np.float32)] * BATCH)))


# ---- bb_flip ---------------------------------------------------------------------------------

def bb_flip_ref(b, ltrb, h, v, d=0):
    b = b.astype(np.float64).copy()
    dims = b.shape[1] // 2
    for ax, flip in enumerate((h, v, d)[:dims]):
        if not flip:
            continue
        lo, hi = b[:, ax].copy(), b[:, ax + dims].copy()
        if ltrb:
            b[:, ax], b[:, ax + dims] = 1 - hi, 1 - lo
        else:
            b[:, ax] = 1 - lo - hi
    return b


@pytest.mark.parametrize("ltrb", [False, True])
@pytest.mark.parametrize("cols", [4, 6])
def test_bb_flip(ltrb, cols):
    boxes = [RNG.uniform(0, 0.5, (n, cols)).astype(np.float32) for n in (200, 0, 3)]
    hs, vs, ds = ([np.int32(x) for x in v] for v in ((1, 0, 1), (0, 1, 1), (1, 1, 0)))
    flipped, default = run(lambda: (
        fn.bb_flip(src(boxes), ltrb=ltrb, horizontal=src(hs), vertical=src(vs),
                   depthwise=src(ds)),
        fn.bb_flip(src(boxes), ltrb=ltrb)))
    for i, b in enumerate(boxes):
        np.testing.assert_allclose(flipped[i], bb_flip_ref(b, ltrb, hs[i], vs[i], ds[i]),
                                   atol=1e-6)
        np.testing.assert_allclose(default[i], bb_flip_ref(b, ltrb, 1, 0, 0), atol=1e-6)


def test_bb_flip_bad_input():
    with pytest.raises(ValueError, match=r"bb_flip.*\(N, 4 or 6\)"):
        run(lambda: fn.bb_flip(src([np.zeros((3, 5), np.float32)] * BATCH)))


# ---- bbox_paste ------------------------------------------------------------------------------

@pytest.mark.parametrize("ltrb", [False, True])
def test_bbox_paste(ltrb):
    boxes = [RNG.uniform(0, 0.5, (n, 4)).astype(np.float32) for n in (200, 0, 3)]
    px = [np.float32(x) for x in (0.0, 0.3, 1.0)]
    py = [np.float32(x) for x in (0.5, 1.0, 0.0)]
    ratio = [np.float32(x) for x in (1.0, 1.7, 3.0)]
    out, = run(lambda: fn.bbox_paste(src(boxes), ltrb=ltrb, paste_x=src(px), paste_y=src(py),
                                     ratio=src(ratio)))
    for i, b in enumerate(boxes):
        # the image occupies [off, off + 1/ratio] of the canvas on each axis
        r = float(ratio[i])
        off = np.array([(1 - 1 / r) * px[i], (1 - 1 / r) * py[i]])
        ref = b.astype(np.float64).copy()
        ref[:, :2] = b[:, :2] / r + off
        ref[:, 2:] = b[:, 2:] / r + (off if ltrb else 0)
        np.testing.assert_allclose(out[i], ref, atol=1e-6)


def test_bbox_paste_bad_ratio():
    with pytest.raises(ValueError, match="ratio"):
        run(lambda: fn.bbox_paste(src([np.zeros((3, 4), np.float32)] * BATCH), ratio=0.5))


# ---- random_bbox_crop ------------------------------------------------------------------------

BOXES_2D = np.array([[0.0123, 0.0123, 0.2123, 0.2123], [0.1123, 0.1123, 0.19123, 0.19123],
                     [0.3123, 0.3123, 0.5123, 0.5123]], np.float32)
BOXES_3D = np.array([[0.123, 0.6123, 0.6123, 0.7123, 0.7123, 0.7123],
                     [0.1123, 0.1123, 0.1123, 0.2123, 0.2123, 0.2123],
                     [0.7123, 0.7123, 0.7123, 0.8123, 0.8123, 0.8123]], np.float32)


def box_batches(ndim):
    b = BOXES_2D if ndim == 2 else BOXES_3D
    boxes = [b, b[[2, 1]], b[[2]], np.zeros((0, 2 * ndim), np.float32)]
    labels = [np.array([1, 2, 3], np.int32), np.array([3, 2], np.int32), np.array([3], np.int32),
              np.zeros((0,), np.int32)]
    return boxes, labels


def np_inter(a, b):
    nd = len(a) // 2
    lo, hi = np.maximum(a[:nd], b[:nd]), np.minimum(a[nd:], b[nd:])
    return 0.0 if np.any(hi <= lo) else float(np.prod(hi - lo))


def np_kept(anchor, shape, boxes, prune):
    """Indices of the boxes a window keeps (NumPy model of DALI's pruning rules)."""
    nd = len(anchor)
    win = np.concatenate([anchor, np.asarray(anchor) + shape])
    keep = []
    for k, b in enumerate(boxes.astype(np.float64)):
        if prune is None:
            c = 0.5 * (b[:nd] + b[nd:])
            ok = np.all(c >= win[:nd] - 1e-6) and np.all(c <= win[nd:] + 1e-6)
        else:
            inter, vol = np_inter(b, win), np.prod(b[nd:] - b[:nd])
            ok = inter > 0 and inter / vol >= prune - 1e-6
        if ok:
            keep.append(k)
    return keep


def np_map(box, anchor, shape):
    nd = len(anchor)
    a, e = np.asarray(anchor, float), np.asarray(anchor, float) + shape
    lo = np.clip((np.maximum(box[:nd], a) - a) / shape, 0, 1)
    hi = np.clip((np.minimum(box[nd:], e) - a) / shape, 0, 1)
    return np.concatenate([lo, hi])


def check_boxes(anchor, shape, boxes, out_boxes, prune, indices=None, labels=None,
                out_labels=None):
    keep = np_kept(anchor, shape, boxes, prune)
    if indices is not None:
        assert list(indices) == keep
    assert len(out_boxes) == len(keep)
    for m, k in enumerate(keep):
        np.testing.assert_allclose(out_boxes[m], np_map(boxes[k], anchor, shape), atol=1e-6)
    if labels is not None:
        np.testing.assert_array_equal(out_labels, labels[keep])


@pytest.mark.parametrize("ndim,aspect", [(2, [0.5, 2.0]), (2, [1.0, 1.0]), (2, [0.01, 100]),
                                         (3, [0.5, 2.0, 0.6, 2.1, 0.4, 1.9]), (3, [1.0, 1.0]),
                                         (3, [0.5, 0.5, 0.25, 0.25, 0.5, 0.5])])
@pytest.mark.parametrize("scaling", [[0.3, 0.5], [0.9, 0.99]])
@pytest.mark.parametrize("prune", [None, 0.0, 0.3])
def test_random_bbox_crop_variable_shape(ndim, aspect, scaling, prune):
    boxes, labels = box_batches(ndim)
    layout = "xyzXYZ" if ndim == 3 else "xyXY"
    kw = {"bbox_prune_threshold": prune} if prune is not None else {}
    res = run(lambda: fn.random_bbox_crop(
        src(boxes), src(labels), thresholds=[0, 0.01, 0.05, 0.1, 0.15], scaling=scaling,
        aspect_ratio=aspect, bbox_layout=layout, num_attempts=100, allow_no_crop=False,
        output_bbox_indices=True, **kw), batch=4, iters=4)
    npairs = len(aspect) // 2
    for anchor, shape, ob, ol, idx in res:
        for i in range(4):
            a, s = anchor[i], shape[i]
            assert a.dtype == np.float32 and a.shape == (ndim,) and s.shape == (ndim,)
            assert scaling[0] - 1e-6 <= s.max() <= scaling[1] + 1e-6
            assert np.all(a >= 0) and np.all(a + s <= 1 + 1e-6)
            k = 0
            for d in range(ndim):
                for d2 in range(d + 1, ndim):
                    lo, hi = aspect[2 * k], aspect[2 * k + 1]
                    assert lo * (1 - 1e-5) <= s[d] / s[d2] <= hi * (1 + 1e-5)
                    k = (k + 1) % npairs
            check_boxes(a, s, boxes[i], ob[i], prune, idx[i], labels[i], ol[i])
            if len(boxes[i]):
                assert len(ob[i]) > 0  # an accepted window keeps a box


@pytest.mark.parametrize("ndim,input_shape,crop_shape", [
    (2, [400, 300], [100, 50]), (2, [400, 300], [400, 300]), (2, [400, 300], [600, 400]),
    (3, [400, 300, 64], [100, 50, 32]), (3, [400, 300, 64], [600, 400, 48])])
@pytest.mark.parametrize("prune", [None, 0.1])
def test_random_bbox_crop_fixed_shape(ndim, input_shape, crop_shape, prune):
    boxes, labels = box_batches(ndim)
    kw = {"bbox_prune_threshold": prune} if prune is not None else {}
    res = run(lambda: fn.random_bbox_crop(
        src(boxes), thresholds=[0, 0.01, 0.05, 0.1, 0.15], input_shape=input_shape,
        crop_shape=crop_shape, allow_no_crop=False, num_attempts=100,
        bbox_layout="xyzXYZ" if ndim == 3 else "xyXY", **kw), batch=4, iters=3)
    for anchor, shape, ob in res:
        for i in range(4):
            np.testing.assert_array_equal(shape[i], crop_shape)
            for d in range(ndim):
                lo, hi = sorted((0.0, input_shape[d] - crop_shape[d]))
                assert lo <= anchor[i][d] <= hi
            rel_a = anchor[i] / np.asarray(input_shape, float)
            rel_s = shape[i] / np.asarray(input_shape, float)
            check_boxes(rel_a, rel_s, boxes[i], ob[i], prune)


def test_random_bbox_crop_overlap_keeps_one_whole_box():
    boxes, _ = box_batches(2)
    res = run(lambda: fn.random_bbox_crop(
        src(boxes[:3]), thresholds=[1.0], threshold_type="overlap", num_attempts=1000,
        input_shape=[400, 300], crop_shape=[150, 150], all_boxes_above_threshold=False,
        allow_no_crop=False, bbox_layout="xyXY"), iters=5)
    for anchor, shape, _ in res:
        for i in range(BATCH):
            a = anchor[i] / [400, 300]
            e = a + shape[i] / [400, 300]
            inside = [np.all(b[:2] >= a - 1e-6) and np.all(b[2:] <= e + 1e-6) for b in boxes[i]]
            assert any(inside)


@pytest.mark.parametrize("use_input_shape", [False, True])
def test_random_bbox_crop_square(use_input_shape):
    boxes, _ = box_batches(2)

    def build():
        in_sh = src([RNG.integers(400, 600, 2).astype(np.int32) for _ in range(BATCH)])
        out = fn.random_bbox_crop(src(boxes[:3]), aspect_ratio=(1.0, 1.0), scaling=(0.5, 0.8),
                                  thresholds=[0.0], bbox_layout="xyXY", total_num_attempts=100,
                                  allow_no_crop=False,
                                  input_shape=in_sh if use_input_shape else None)
        return in_sh, out[1]
    for in_sh, shape in run(build, iters=3):
        for i in range(BATCH):
            if use_input_shape:
                np.testing.assert_allclose(in_sh[i][0] * shape[i][0], in_sh[i][1] * shape[i][1],
                                           rtol=1e-6)
            else:
                np.testing.assert_allclose(shape[i][0], shape[i][1], rtol=1e-6)


def test_random_bbox_crop_outputs_and_layouts():
    boxes, labels = box_batches(2)
    # without labels and indices: 3 outputs; xywh boxes keep their layout
    xywh = [np.concatenate([b[:, :2], b[:, 2:] - b[:, :2]], 1) for b in boxes]
    outs = run(lambda: fn.random_bbox_crop(src(xywh), ltrb=False, scaling=[0.5, 0.9],
                                           allow_no_crop=False, num_attempts=50), batch=4)
    assert len(outs) == 3
    anchor, shape, ob = outs
    for i in range(4):
        ref = [np_map(boxes[i][k], anchor[i], shape[i]) for k in
               np_kept(anchor[i], shape[i], boxes[i], None)]
        ref = np.array(ref).reshape(-1, 4)
        np.testing.assert_allclose(ob[i][:, :2], ref[:, :2], atol=1e-6)
        np.testing.assert_allclose(ob[i][:, 2:], ref[:, 2:] - ref[:, :2], atol=1e-6)
    # labels of shape (N, 1) keep their rows
    lab2 = [lab[:, None] for lab in labels]
    outs = run(lambda: fn.random_bbox_crop(src(boxes), src(lab2), bbox_layout="xyXY"), batch=4)
    assert len(outs) == 4
    for i in range(4):
        assert outs[3][i].shape == (len(outs[2][i]), 1) and outs[3][i].dtype == np.int32


def test_random_bbox_crop_empty_sample_and_no_crop():
    empty = [np.zeros((0, 4), np.float32)]
    for _ in range(2):
        anchor, shape, ob = run(lambda: fn.random_bbox_crop(
            src(empty), thresholds=[1.0], bbox_layout="xyXY", allow_no_crop=False,
            input_shape=[600, 400], crop_shape=[200, 200]), batch=1)
        assert ob[0].shape == (0, 4)
        np.testing.assert_array_equal(shape[0], [200, 200])
        assert np.all(anchor[0] <= [400, 200]) and np.all(anchor[0] >= 0)
    # thresholds that no window meets: "no crop" (the whole image, boxes unchanged) wins
    boxes, _ = box_batches(2)
    anchor, shape, ob = run(lambda: fn.random_bbox_crop(
        src(boxes[:3]), thresholds=[1.0], scaling=[0.2, 0.3], bbox_layout="xyXY"))
    for i in range(BATCH):
        np.testing.assert_array_equal(anchor[i], [0, 0])
        np.testing.assert_array_equal(shape[i], [1, 1])
        np.testing.assert_allclose(ob[i], boxes[i], atol=1e-7)


def test_random_bbox_crop_is_deterministic_and_seeded():
    boxes, _ = box_batches(2)

    def build():
        return fn.random_bbox_crop(src(boxes), scaling=[0.3, 1.0], aspect_ratio=[0.5, 2.0],
                                   thresholds=[0.0, 0.1], seed=7)
    a = run(build, batch=4, iters=2)
    b = run(build, batch=4, iters=2)
    for x, y in zip(a, b):
        for o1, o2 in zip(x, y):
            for s1, s2 in zip(o1, o2):
                np.testing.assert_array_equal(s1, s2)
    # different iterations draw different windows
    assert not all(np.array_equal(p, q) for p, q in zip(a[0][0], a[1][0]))


def test_random_bbox_crop_bad_arguments():
    boxes, labels = box_batches(2)
    with pytest.raises(ValueError, match="bbox_layout \"xyXW\""):
        run(lambda: fn.random_bbox_crop(src(boxes), bbox_layout="xyXW"), batch=4)
    with pytest.raises(ValueError, match="crop_shape needs input_shape"):
        run(lambda: fn.random_bbox_crop(src(boxes), crop_shape=[10, 10]), batch=4)
    with pytest.raises(ValueError, match=r"scaling \[0\.8, 0\.2\]"):
        run(lambda: fn.random_bbox_crop(src(boxes), scaling=[0.8, 0.2]), batch=4)
    # which sample's mismatch is named depends on which task fails first (3, 1 or 0 boxes)
    with pytest.raises(ValueError, match=r"sample \d: [310] boxes but 2 labels"):
        run(lambda: fn.random_bbox_crop(src(boxes), src([labels[1]] * 4)), batch=4)
    with pytest.raises(ValueError, match=r"random_bbox_crop.*\(N, 4 or 6\)"):
        run(lambda: fn.random_bbox_crop(src([np.zeros((2, 5), np.float32)] * 4)), batch=4)


# ---- box_encoder ----------------------------------------------------------------------------

def ssd300_anchors():
    """SSD300's 8732 COCO default boxes, [l, t, r, b] (the MLPerf reference's formula)."""
    import itertools
    fig, feat, steps = 300, [38, 19, 10, 5, 3, 1], [8, 16, 32, 64, 100, 300]
    scales, ars = [21, 45, 99, 153, 207, 261, 315], [[2], [2, 3], [2, 3], [2, 3], [2], [2]]
    out = []
    for idx, sfeat in enumerate(feat):
        sk1, sk2 = scales[idx] / fig, scales[idx + 1] / fig
        sk3 = math.sqrt(sk1 * sk2)
        sizes = [(sk1, sk1), (sk3, sk3)]
        for a in ars[idx]:
            w, h = sk1 * math.sqrt(a), sk1 / math.sqrt(a)
            sizes += [(w, h), (h, w)]
        fk = fig / steps[idx]
        for w, h in sizes:
            for i, j in itertools.product(range(sfeat), repeat=2):
                out.append(((j + 0.5) / fk, (i + 0.5) / fk, w, h))
    c = np.clip(np.array(out), 0, 1)
    return np.stack([c[:, 0] - c[:, 2] / 2, c[:, 1] - c[:, 3] / 2, c[:, 0] + c[:, 2] / 2,
                     c[:, 1] + c[:, 3] / 2], 1).astype(np.float32)


def np_iou(a, b):
    """IoU matrix of [l, t, r, b] boxes a (N, 4) and b (M, 4), in float32 as the encoder."""
    a, b = a.astype(np.float32), b.astype(np.float32)
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = rb - lt
    inter = np.where(np.all(wh > 0, -1), wh[..., 0] * wh[..., 1], np.float32(0))
    area = lambda x: (x[:, 2] - x[:, 0]) * (x[:, 3] - x[:, 1])  # noqa: E731
    return inter / (area(a)[:, None] + area(b)[None, :] - inter)


def cwh(b):
    return np.stack([(b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2, b[:, 2] - b[:, 0],
                     b[:, 3] - b[:, 1]], 1)


def box_encoder_ref(boxes, labels, anchors, criteria, offset, means, stds, scale):
    A = len(anchors)
    out_b = np.zeros((A, 4)) if offset else cwh(anchors.astype(np.float64))
    out_l = np.zeros(A, np.int32)
    if len(boxes) == 0:
        return out_b, out_l
    ious = np_iou(boxes, anchors)
    # each box's best anchor (the last of equal ones) is forced to match it
    best_anchor = A - 1 - np.argmax(ious[:, ::-1], axis=1)
    ious[np.arange(len(boxes)), best_anchor] = 2.0
    n = len(boxes)
    best_box = n - 1 - np.argmax(ious[::-1, :], axis=0)
    matched = ious[best_box, np.arange(A)] > criteria
    bb = cwh(boxes[best_box].astype(np.float64))
    if offset:
        ab = cwh(anchors.astype(np.float64)) * scale
        bb = bb * scale
        enc = np.concatenate([(bb[:, :2] - ab[:, :2]) / ab[:, 2:], np.log(bb[:, 2:] / ab[:, 2:])],
                             1)
        enc = (enc - np.asarray(means)) / np.asarray(stds)
        out_b[matched] = enc[matched]
    else:
        out_b[matched] = bb[matched]
    out_l[matched] = np.asarray(labels).reshape(-1)[best_box][matched]
    return out_b, out_l


def random_ltrb(n, rng):
    lt = rng.uniform(0, 0.7, (n, 2))
    wh = rng.uniform(0.05, 0.3, (n, 2))
    return np.concatenate([lt, lt + wh], 1).astype(np.float32)


@pytest.mark.parametrize("offset,means,stds,scale,criteria", [
    (False, [0, 0, 0, 0], [1, 1, 1, 1], 1.0, 0.5),
    (True, [0, 0, 0, 0], [1, 1, 1, 1], 1.0, 0.5),
    (True, [0.0, 0.0, 0.0, 0.0], [0.1, 0.1, 0.2, 0.2], 300.0, 0.5),
    (True, [0.1, -0.2, 0.3, 0.0], [0.5, 0.4, 0.3, 0.2], 2.0, 0.3),
    (False, [0, 0, 0, 0], [1, 1, 1, 1], 1.0, 0.0)])
def test_box_encoder(offset, means, stds, scale, criteria):
    anchors = ssd300_anchors()
    assert anchors.shape == (8732, 4)
    rng = np.random.default_rng(5)
    boxes = [random_ltrb(n, rng) for n in (7, 0, 1, 20)]
    labels = [rng.integers(1, 81, (len(b), 1)).astype(np.int32) for b in boxes]
    ob, ol = run(lambda: fn.box_encoder(src(boxes), src(labels), anchors=anchors.ravel().tolist(),
                                        offset=offset, means=means, stds=stds, scale=scale,
                                        criteria=criteria), batch=4)
    for i in range(4):
        rb, rl = box_encoder_ref(boxes[i], labels[i], anchors, criteria, offset, means, stds,
                                 scale)
        assert ob[i].shape == (8732, 4) and ob[i].dtype == np.float32
        assert ol[i].shape == (8732,) and ol[i].dtype == np.int32
        np.testing.assert_array_equal(ol[i], rl)
        np.testing.assert_allclose(ob[i], rb, rtol=1e-4, atol=1e-5)
        if len(boxes[i]):
            # every box is someone's target
            assert set(np.unique(rl[rl > 0])) <= set(labels[i].ravel())
            assert (ol[i] > 0).sum() >= 1


def test_box_encoder_hand_computed():
    anchors = [0.0, 0.0, 0.5, 0.5, 0.5, 0.5, 1.0, 1.0, 0.0, 0.5, 0.5, 1.0]
    box = [np.array([[0.1, 0.1, 0.5, 0.5]], np.float32)]
    lab = [np.array([7], np.int32)]
    ob, ol = run(lambda: fn.box_encoder(src(box), src(lab), anchors=anchors), batch=1)
    # IoU with anchor 0 is 0.16 / 0.25 = 0.64 > 0.5: matched; the others do not overlap
    np.testing.assert_array_equal(ol[0], [7, 0, 0])
    np.testing.assert_allclose(ob[0], [[0.3, 0.3, 0.4, 0.4], [0.75, 0.75, 0.5, 0.5],
                                       [0.25, 0.75, 0.5, 0.5]], atol=1e-7)
    ob, ol = run(lambda: fn.box_encoder(src(box), src(lab), anchors=anchors, offset=True),
                 batch=1)
    np.testing.assert_allclose(ob[0][0], [(0.3 - 0.25) / 0.5, (0.3 - 0.25) / 0.5,
                                          math.log(0.4 / 0.5), math.log(0.4 / 0.5)], atol=1e-6)
    np.testing.assert_array_equal(ob[0][1:], 0)


def test_box_encoder_bad_arguments():
    box = [np.zeros((2, 4), np.float32)]
    with pytest.raises(ValueError, match="anchors has 5 values"):
        run(lambda: fn.box_encoder(src(box), src([np.zeros(2, np.int32)]), anchors=[0.0] * 5),
            batch=1)
    with pytest.raises(ValueError, match="2 boxes but 3 labels"):
        run(lambda: fn.box_encoder(src(box), src([np.zeros(3, np.int32)]), anchors=[0.0] * 4),
            batch=1)
    with pytest.raises(ValueError, match="labels .* must be int32"):
        run(lambda: fn.box_encoder(src(box), src([np.zeros(2, np.float32)]), anchors=[0.0] * 4),
            batch=1)


# ---- ssd_random_crop ------------------------------------------------------------------------

def test_ssd_random_crop_matches_its_window():
    rng = np.random.default_rng(3)
    H, W = 120, 200
    yy, xx = np.mgrid[0:H, 0:W]
    img = np.stack([yy, xx, yy * W + xx], -1).astype(np.int32)  # each pixel knows its place
    boxes = [random_ltrb(n, rng) for n in (6, 1, 3, 0)]
    labels = [np.arange(1, len(b) + 1, dtype=np.int32) for b in boxes]
    imgs = [img] * 4
    crops = 0
    for out_img, out_b, out_l in run(lambda: fn.ssd_random_crop(
            fn.external_source(source=lambda: imgs, layout="HWC"), src(boxes), src(labels),
            num_attempts=3), batch=4, iters=6):
        for i in range(4):
            o = out_img[i]
            assert o.dtype == np.int32 and o.ndim == 3 and o.shape[2] == 3
            y0, x0 = int(o[0, 0, 0]), int(o[0, 0, 1])
            np.testing.assert_array_equal(o, img[y0:y0 + o.shape[0], x0:x0 + o.shape[1]])
            if o.shape[:2] == (H, W):  # no crop: everything unchanged
                np.testing.assert_array_equal(out_b[i], boxes[i])
                np.testing.assert_array_equal(out_l[i], labels[i])
                continue
            crops += 1
            assert len(boxes[i]) > 0  # a sample without boxes is never cropped
            h, w = o.shape[0] / H, o.shape[1] / W
            assert 0.3 - 1.5 / H <= h <= 1 and 0.3 - 1.5 / W <= w <= 1
            assert 0.5 * (1 - 0.05) <= w / h <= 2 * (1 + 0.05)
            left, top = x0 / W, y0 / H
            assert len(out_l[i]) >= 1 and len(out_b[i]) == len(out_l[i])
            for b, lab in zip(out_b[i], out_l[i]):
                src_box = boxes[i][lab - 1].astype(np.float64)
                ref = np.clip((src_box - [left, top, left, top]) / [w, h, w, h], 0, 1)
                np.testing.assert_allclose(b, ref, atol=0.02)
                c = 0.5 * (src_box[:2] + src_box[2:])
                assert left - 0.01 <= c[0] <= left + w + 0.01
                assert top - 0.01 <= c[1] <= top + h + 0.01
    assert crops > 0


def test_ssd_random_crop_dali_cpu_usage_and_errors():
    img = [np.random.default_rng(1).integers(0, 255, (10, 20, 3), dtype=np.uint8)] * 2
    boxes = [(np.random.default_rng(2).integers(0, 255, (200, 4)) / 255).astype(np.float32)] * 2
    labels = [np.random.default_rng(3).integers(0, 255, (200,)).astype(np.int32)] * 2
    for o, b, lab in run(lambda: fn.ssd_random_crop(src(img), src(boxes), src(labels)), batch=2,
                         iters=3):
        for i in range(2):
            assert len(b[i]) == len(lab[i]) and o[i].shape[2] == 3
    with pytest.raises(ValueError, match="200 boxes but 3 labels"):
        run(lambda: fn.ssd_random_crop(src(img), src(boxes), src([labels[0][:3]] * 2)), batch=2)
    with pytest.raises(ValueError, match="HWC"):
        run(lambda: fn.ssd_random_crop(src([img[0][0]] * 2), src(boxes), src(labels)), batch=2)


# ---- segmentation.random_mask_pixel / select_masks -------------------------------------------

@pytest.mark.parametrize("ndim", [2, 3])
def test_random_mask_pixel(ndim):
    rng = np.random.default_rng(ndim)
    masks = [rng.integers(0, 3, tuple(rng.integers(20, 51, ndim))).astype(np.int32)
             for _ in range(BATCH)]
    masks[1][...] = 0  # no foreground: any pixel
    masks.append(np.zeros((0,) * ndim, np.int32))  # empty: zeros
    coins = [np.int32(c) for c in (1, 0, 1, 1)]
    res = run(lambda: (fn.segmentation.random_mask_pixel(src(masks), foreground=1),
                       fn.segmentation.random_mask_pixel(src(masks), foreground=1,
                                                         threshold=1.5),
                       fn.segmentation.random_mask_pixel(src(masks), foreground=1, value=2),
                       fn.segmentation.random_mask_pixel(src(masks), foreground=0),
                       fn.segmentation.random_mask_pixel(src(masks), foreground=src(coins))),
              batch=4, iters=5)
    drawn = set()
    for p1, p2, p3, anyp, biased in res:
        for i in range(3):
            m = masks[i]
            for p in (p1, p2, p3, anyp, biased):
                assert p[i].dtype == np.int64 and p[i].shape == (ndim,)
                assert np.all(p[i] >= 0) and np.all(p[i] < m.shape)
            if i != 1:
                assert m[tuple(p1[i])] > 0 and m[tuple(p2[i])] > 1.5 and m[tuple(p3[i])] == 2
                assert m[tuple(biased[i])] > 0 or not coins[i]
            drawn.add(tuple(anyp[i]))
        np.testing.assert_array_equal(p1[3], np.zeros(ndim))
    assert len(drawn) > 10  # spread over the mask, not one fixed pixel


def test_random_mask_pixel_is_uniform_over_the_foreground():
    mask = np.zeros((4, 4), np.uint8)
    fg = [(0, 1), (2, 3), (3, 0)]
    for y, x in fg:
        mask[y, x] = 1
    res = run(lambda: fn.segmentation.random_mask_pixel(src([mask] * 8), foreground=1),
              batch=8, iters=60)
    counts = {}
    for (p,) in res:
        for s in p:
            counts[tuple(s)] = counts.get(tuple(s), 0) + 1
    assert set(counts) == set(fg)
    assert all(abs(c - 160) < 50 for c in counts.values())  # 480 draws, 3 pixels


def make_select_data(rng, n, vdim, vdtype):
    polys, verts, ids = [], [], []
    for _ in range(n):
        nm = int(rng.integers(1, 10))
        counts = rng.integers(3, 40, nm)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        polys.append(np.stack([np.arange(nm), starts, starts + counts], 1).astype(np.int32))
        verts.append((rng.random((int(counts.sum()), vdim)) * 100).astype(vdtype))
        ids.append(rng.permutation(nm)[:int(rng.integers(1, nm + 1))].astype(np.int32))
    return polys, verts, ids


@pytest.mark.parametrize("vdim,vdtype", [(2, np.float32), (3, np.int16), (6, np.int64)])
@pytest.mark.parametrize("reindex", [False, True])
def test_select_masks(vdim, vdtype, reindex):
    rng = np.random.default_rng(vdim)
    polys, verts, ids = make_select_data(rng, BATCH, vdim, vdtype)
    op, ov = run(lambda: fn.segmentation.select_masks(src(ids), src(polys), src(verts),
                                                      reindex_masks=reindex))
    for i in range(BATCH):
        start = 0
        assert len(op[i]) == len(ids[i]) and ov[i].dtype == vdtype
        for m, mid in enumerate(ids[i]):
            _, a, b = polys[i][mid]
            assert list(op[i][m]) == [m if reindex else mid, start, start + b - a]
            np.testing.assert_array_equal(ov[i][start:start + b - a], verts[i][a:b])
            start += b - a
        assert len(ov[i]) == start


def test_select_masks_errors():
    polys = [np.array([[0, 0, 2], [1, 3, 5], [2, 6, 8]], np.int32)]
    verts = [np.zeros((9, 2), np.float32)]
    with pytest.raises(ValueError, match=r"Selected mask_id 10 is not present in the input\."):
        run(lambda: fn.segmentation.select_masks(src([np.array([10, 11], np.int32)]),
                                                 src(polys), src(verts)), batch=1)
    with pytest.raises(ValueError, match="3 columns: ``mask_id, start_idx, end_idx``. Got 4"):
        run(lambda: fn.segmentation.select_masks(
            src([np.array([0], np.int32)]), src([np.zeros((3, 4), np.int32)]), src(verts)),
            batch=1)
    with pytest.raises(ValueError, match="Vertex index range for mask id 0 is out of bounds"):
        run(lambda: fn.segmentation.select_masks(
            src([np.array([0], np.int32)]), src([np.array([[0, 0, 20]], np.int32)]),
            src([np.zeros((3, 2), np.float32)])), batch=1)


# ---- segmentation.random_object_bbox ---------------------------------------------------------

OBJ_DATA = [np.int32([[1, 0, 0, 0], [1, 2, 2, 1], [1, 1, 2, 0], [2, 0, 0, 1]]),
            np.int32([[0, 3, 3, 0], [1, 0, 1, 2], [0, 1, 1, 0], [0, 2, 0, 1], [0, 2, 2, 1]])]


def scipy_boxes(mask, select):
    """[start..., end...] of the face-connected components of `select` (scipy.ndimage)."""
    import scipy.ndimage
    cc, _ = scipy.ndimage.label(select)
    objs = scipy.ndimage.find_objects(cc)
    return [np.array([s.start for s in o] + [s.stop for s in o]) for o in objs if o is not None]


def test_random_object_bbox_outputs_count():
    x = src(OBJ_DATA)
    assert len(fn.segmentation.random_object_bbox(x)) == 2
    for oc in (None, False, True):
        for fmt, n in (("anchor_shape", 2), ("start_end", 2), ("box", 1)):
            out = fn.segmentation.random_object_bbox(x, format=fmt, output_class=oc)
            got = 1 if not isinstance(out, tuple) else len(out)
            assert got == n + (1 if oc else 0)


@pytest.mark.parametrize("fmt", ["anchor_shape", "start_end", "box"])
@pytest.mark.parametrize("kw", [{}, {"classes": [1, 2]}, {"classes": [3]}, {"background": 1},
                                {"k_largest": 1}, {"threshold": [2, 1]},
                                {"class_weights": [0, 1, 0]}])
def test_random_object_bbox_against_scipy(fmt, kw):
    rng = np.random.default_rng(4)
    masks = OBJ_DATA + [rng.integers(0, 4, tuple(rng.integers(5, 12, 2))).astype(np.int32)
                        for _ in range(2)]
    res = run(lambda: fn.segmentation.random_object_bbox(src(masks), format=fmt,
                                                         output_class=True, **kw),
              batch=4, iters=8)
    for outs in res:
        for i, m in enumerate(masks):
            if fmt == "box":
                box, cls = outs[0][i], outs[1][i]
            else:
                a, b, cls = outs[0][i], outs[1][i], outs[2][i]
                box = np.concatenate([a, a + b if fmt == "anchor_shape" else b])
            assert box.dtype == np.int32 and cls.dtype == np.int32 and cls.shape == ()
            bg = kw.get("background", 0)
            if int(cls) == bg:  # nothing qualified: the whole input
                np.testing.assert_array_equal(box, [0, 0, *m.shape])
                continue
            assert "classes" not in kw or int(cls) in kw["classes"]
            if "class_weights" in kw:
                assert int(cls) == 2
            boxes = scipy_boxes(m, m == int(cls))
            assert any(np.array_equal(box, b) for b in boxes)
            ext = box[2:] - box[:2]
            if "threshold" in kw:
                assert np.all(ext >= kw["threshold"])
            if "k_largest" in kw:
                vmax = max(np.prod(b[2:] - b[:2]) for b in boxes)
                assert np.prod(ext) == vmax


def test_random_object_bbox_ignore_class_and_background_prob():
    masks = OBJ_DATA
    res = run(lambda: fn.segmentation.random_object_bbox(src(masks), format="box",
                                                         ignore_class=True), batch=2, iters=6)
    for (boxes,) in res:
        for i, m in enumerate(masks):
            assert any(np.array_equal(boxes[i], b) for b in scipy_boxes(m, m != 0))
    res = run(lambda: fn.segmentation.random_object_bbox(src(masks), format="box",
                                                         foreground_prob=0.0), batch=2)
    for i, m in enumerate(masks):
        np.testing.assert_array_equal(res[0][i], [0, 0, *m.shape])


def test_random_object_bbox_3d_and_draws_all_objects():
    m = np.zeros((6, 7, 8), np.int16)
    m[0:2, 0:3, 0:1] = 5
    m[3:6, 4:7, 2:8] = 5
    m[5, 0, 0] = 5
    res = run(lambda: fn.segmentation.random_object_bbox(src([m] * 4), format="start_end"),
              batch=4, iters=10)
    seen = set()
    for s, e in res:
        for i in range(4):
            seen.add(tuple(s[i]) + tuple(e[i]))
    assert seen == {tuple(b) for b in scipy_boxes(m, m == 5)}
