"""tests/python/test_gpu_tensor.py: the GPU backends of the reductions, tensor utilities and
point / box operators from Python: fn.<op>(..., device="gpu") (or a node placed on the GPU by
its GPU input, DALI's rule) gives GPU data whose values equal NumPy's models of the operators.

Each check runs in a child process twice: on the real device (skipped, with the reason, when
this machine has none) and with SLUICE_GPU_EMULATE=1 (the GPU stage emulated on the host), as
test_gpu.py. The C tests (tests/c/test_cuda_reduce.c, test_cuda_tensor_util.c) compare every
GPU run with the CPU operator; these check the values against independent references.
"""
import pytest

from sluice import _sluice
from test_gpu import MODES, run_child

pytestmark = pytest.mark.skipif(not _sluice.HAVE_CUDA,
                                reason="this build of sluice has no CUDA support")


@pytest.mark.parametrize("emulated", MODES)
def test_reductions_on_gpu_match_numpy(emulated, tree):
    run_child('''
        rng = np.random.default_rng(5)
        data = [rng.integers(0, 256, size=(int(rng.integers(1, 30)), int(rng.integers(1, 30)),
                                           3), dtype=np.uint8) for _ in range(4)]
        fdata = [(d.astype(np.float32) / 255 - 0.5) for d in data]

        @pipeline_def(batch_size=4, num_threads=1, device_id=0)
        def pipe():
            x = fn.external_source(lambda: data, layout="HWC").gpu()
            f = fn.external_source(lambda: fdata, layout="HWC").gpu()
            m = fn.reductions.mean(x, axes=(0, 1))
            fm = fn.reductions.mean(f, axis_names="HW", keep_dims=True)
            return (fn.reductions.sum(x), fn.reductions.min(x, axis_names="HW"),
                    fn.reductions.max(x, axes=2, keep_dims=True), m,
                    fn.reductions.std_dev(x, m, axes=(0, 1), ddof=1),
                    fn.reductions.variance(f, fm, axis_names="HW"),
                    fn.reductions.rms(f, dtype=types.FLOAT64),
                    fn.reductions.mean_square(x, axes=1),
                    fn.reductions.sum(x, axes=(0, 1), dtype=types.UINT8))

        p = pipe()
        for _ in range(2):
            out = p.run()
            for o in out:
                assert type(o).__name__ == "TensorListGPU"
            s, mn, mx, m, sd, var, rms, ms, wrap = [o.as_cpu() for o in out]
            for i, d in enumerate(data):
                d64, f64 = d.astype(np.float64), fdata[i].astype(np.float64)
                assert s.at(i).dtype == np.uint64 and s.at(i) == d.sum(dtype=np.uint64)
                assert np.array_equal(mn.at(i), d.min(axis=(0, 1)))
                assert np.array_equal(mx.at(i), d.max(axis=2, keepdims=True))
                assert m.at(i).dtype == np.float32
                np.testing.assert_allclose(m.at(i), d64.mean(axis=(0, 1)), rtol=1e-6)
                mean32 = d64.mean(axis=(0, 1)).astype(np.float32).astype(np.float64)
                n = d.shape[0] * d.shape[1]
                ref = np.sqrt(((d64 - mean32) ** 2).sum(axis=(0, 1)) / (n - 1)) if n > 1 else None
                if ref is not None:
                    np.testing.assert_allclose(sd.at(i), ref, rtol=1e-5)
                fmean = f64.mean(axis=(0, 1), keepdims=True).astype(np.float32)
                np.testing.assert_allclose(var.at(i), ((f64 - fmean) ** 2).mean(axis=(0, 1)),
                                           rtol=1e-5, atol=1e-7)
                assert rms.at(i).dtype == np.float64
                np.testing.assert_allclose(rms.at(i), np.sqrt((fdata[i].astype(np.float64) ** 2)
                                                              .mean()), rtol=1e-12)
                np.testing.assert_allclose(ms.at(i), (d64 ** 2).mean(axis=1), rtol=1e-6)
                assert np.array_equal(wrap.at(i), d.sum(axis=(0, 1), dtype=np.uint8))
        print("ok")
    ''', emulated, tree)


@pytest.mark.parametrize("emulated", MODES)
def test_tensor_utilities_on_gpu_match_numpy(emulated, tree):
    run_child('''
        rng = np.random.default_rng(9)
        ids = [rng.integers(-1, 6, size=(int(rng.integers(1, 9)), 2)).astype(np.int32)
               for _ in range(3)]
        seqs = [rng.random((int(rng.integers(2, 5)), 3, 2), dtype=np.float32) for _ in range(3)]
        pts = [rng.random((int(rng.integers(2, 9)), 2), dtype=np.float32) for _ in range(3)]

        @pipeline_def(batch_size=3, num_threads=1, device_id=0)
        def pipe():
            x = fn.external_source(lambda: ids).gpu()
            s = fn.external_source(lambda: seqs, layout="FHW").gpu()
            p = fn.external_source(lambda: pts).gpu()
            b = fn.external_source(lambda: [q[:2].reshape(1, 4) for q in pts]).gpu()
            return (fn.one_hot(x, num_classes=5, axis=1, dtype=types.INT16, on_value=7,
                               off_value=-2),
                    fn.lookup_table(x, keys=[0, 3, 5], values=[0.5, 1.5, 2.5],
                                    default_value=-1.0),
                    fn.shapes(s), fn.expand_dims(x, axes=[0]),
                    fn.element_extract(s, element_map=[1]),
                    fn.sequence_rearrange(s, new_order=[1, 0, 1]),
                    fn.permute_batch(x, indices=[2, 2, 0]),
                    fn.cast_like(x, p), fn.reinterpret(p, dtype=types.INT32),
                    fn.coord_flip(p, layout="xy", flip_y=1),
                    fn.coord_transform(p, M=[2, 0, 1, 1], T=[0.5, -1]),
                    fn.bb_flip(b, ltrb=True))

        out = pipe().run()
        for o in out:
            assert type(o).__name__ == "TensorListGPU", type(o).__name__
        oh, lut, shp, ed, ee, sr, pb, cl, ri, cf, ct, bb = [o.as_cpu() for o in out]
        for i in range(3):
            eye = np.where(np.arange(5)[None, :, None] == ids[i][:, None, :], 7, -2)
            assert oh.at(i).dtype == np.int16 and np.array_equal(oh.at(i), eye)
            table = {0: 0.5, 3: 1.5, 5: 2.5}
            ref = np.vectorize(lambda k: table.get(int(k), -1.0))(ids[i]).astype(np.float32)
            assert np.array_equal(lut.at(i), ref)
            assert shp.at(i).tolist() == list(seqs[i].shape)
            assert np.array_equal(ed.at(i), ids[i][None])
            assert np.array_equal(ee.at(i), seqs[i][1])
            assert np.array_equal(sr.at(i), seqs[i][[1, 0, 1]])
            assert np.array_equal(pb.at(i), ids[[2, 2, 0][i]])
            assert cl.at(i).dtype == np.float32 and np.array_equal(cl.at(i), ids[i])
            assert np.array_equal(ri.at(i), pts[i].view(np.int32))
            flipped = pts[i].copy()
            flipped[:, 0] = 1 - flipped[:, 0]
            flipped[:, 1] = 1 - flipped[:, 1]
            np.testing.assert_allclose(cf.at(i), flipped, rtol=0, atol=1e-7)
            ref = pts[i].astype(np.float64) @ np.array([[2, 0], [1, 1]]).T + [0.5, -1]
            np.testing.assert_allclose(ct.at(i), ref, rtol=1e-6)
            b = pts[i][:2].reshape(1, 4)
            assert np.array_equal(bb.at(i), np.stack([1 - b[:, 2], b[:, 1], 1 - b[:, 0], b[:, 3]],
                                                     axis=1))
        print("ok")
    ''', emulated, tree)


@pytest.mark.parametrize("emulated", MODES)
def test_box_encoder_on_gpu_matches_numpy(emulated, tree):
    run_child('''
        anchors = np.array([[0.0, 0.0, 0.5, 0.5], [0.5, 0.0, 1.0, 0.5], [0.0, 0.5, 0.5, 1.0],
                            [0.5, 0.5, 1.0, 1.0], [0.25, 0.25, 0.75, 0.75]], dtype=np.float32)
        boxes = [np.array([[0.05, 0.05, 0.45, 0.5], [0.3, 0.3, 0.7, 0.8]], dtype=np.float32),
                 np.array([[0.6, 0.1, 0.95, 0.45]], dtype=np.float32)]
        labels = [np.array([3, 7], dtype=np.int32), np.array([2], dtype=np.int32)]

        def iou(a, b):
            l, t = np.maximum(a[0], b[0]), np.maximum(a[1], b[1])
            r, btm = np.minimum(a[2], b[2]), np.minimum(a[3], b[3])
            if r <= l or btm <= t:
                return 0.0
            inter = (r - l) * (btm - t)
            area = lambda x: (x[2] - x[0]) * (x[3] - x[1])
            return inter / (area(a) + area(b) - inter)

        def encode(bx, lb, crit=0.5):
            ious = np.array([[iou(b, a) for a in anchors] for b in bx])
            for k in range(len(bx)):
                ious[k, len(anchors) - 1 - np.argmax(ious[k][::-1])] = 2.0
            out = np.stack([(anchors[:, 0] + anchors[:, 2]) / 2, (anchors[:, 1] + anchors[:, 3]) / 2,
                            anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]], 1)
            lab = np.zeros(len(anchors), np.int32)
            for a in range(len(anchors)):
                b = len(bx) - 1 - np.argmax(ious[::-1, a])
                if ious[b, a] > crit:
                    x = bx[b]
                    out[a] = [(x[0] + x[2]) / 2, (x[1] + x[3]) / 2, x[2] - x[0], x[3] - x[1]]
                    lab[a] = lb[b]
            return out, lab

        @pipeline_def(batch_size=2, num_threads=1, device_id=0)
        def pipe():
            b = fn.external_source(lambda: boxes).gpu()
            l = fn.external_source(lambda: labels).gpu()
            return fn.box_encoder(b, l, anchors=anchors.ravel().tolist(), criteria=0.4)

        eb, el = pipe().run()
        assert type(eb).__name__ == "TensorListGPU"
        eb, el = eb.as_cpu(), el.as_cpu()
        for i in range(2):
            ref_b, ref_l = encode(boxes[i], labels[i], 0.4)
            assert eb.at(i).shape == (5, 4) and el.at(i).dtype == np.int32
            np.testing.assert_allclose(eb.at(i), ref_b, rtol=1e-6, atol=1e-7)
            assert np.array_equal(el.at(i), ref_l)
        print("ok")
    ''', emulated, tree)
