"""tests/python/test_gpu_image.py: issue 19's image operators with device="gpu" from Python —
gaussian_blur, laplacian, erase, noise.gaussian, noise.shot, noise.salt_and_pepper.

Each check runs in a child process twice, as in test_gpu.py: on the real device (skipped, with
the reason, when there is none) and with SLUICE_GPU_EMULATE=1 (the GPU stage emulated on the
host). The GPU outputs are compared with independent references — OpenCV's GaussianBlur and
Laplacian (BORDER_REFLECT_101), a NumPy model of erase, the noise's statistics — and with the
same operator on the CPU: the random ones draw the same numbers on both backends (emulated:
bit-identical; on a device within 1, see tests/c/test_cuda_image_ops.c).
"""
import os
import subprocess
import sys
import textwrap

import pytest

from sluice import _sluice

pytestmark = pytest.mark.skipif(not _sluice.HAVE_CUDA,
                                reason="this build of sluice has no CUDA support")

cv2 = pytest.importorskip("cv2")


def _gpu_available():
    code = ("import sluice, sys\n"
            "from sluice import fn\n"
            "@sluice.pipeline_def(batch_size=1, num_threads=1, device_id=0)\n"
            "def p():\n"
            "    return fn.random.uniform().gpu()\n"
            "try:\n"
            "    p().build()\n"
            "except sluice.SluiceError as e:\n"
            "    print(e)\n"
            "    sys.exit(3)\n")
    env = dict(os.environ)
    env.pop("SLUICE_GPU_EMULATE", None)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    return r.returncode == 0, (r.stdout + r.stderr).strip()


HAVE_GPU, NO_GPU_REASON = _gpu_available()
MODES = [pytest.param(False, id="device",
                      marks=pytest.mark.skipif(not HAVE_GPU, reason=f"no GPU: {NO_GPU_REASON}")),
         pytest.param(True, id="emulated")]

PRELUDE = textwrap.dedent("""
    import os, sys
    import numpy as np
    import cv2
    import sluice
    from sluice import fn, types, pipeline_def
    EMULATED = os.environ.get("SLUICE_GPU_EMULATE") == "1"

    def run(build, data, layout="HWC", seed=5, iters=1):
        '''Outputs of build(x) on the CPU and on the GPU (x: the external batch, moved to the
        GPU for the second), as lists of NumPy arrays per output, per iteration.'''
        res = {}
        for dev in ("cpu", "gpu"):
            @pipeline_def(batch_size=len(data), num_threads=2, device_id=0, seed=seed)
            def p():
                x = fn.external_source(source=lambda: data, layout=layout)
                return build(x.gpu() if dev == "gpu" else x)
            pipe = p()
            outs = []
            for _ in range(iters):
                r = pipe.run()
                r = r if isinstance(r, tuple) else (r,)
                if dev == "gpu":
                    assert all(type(t).__name__ == "TensorListGPU" for t in r)
                    r = tuple(t.as_cpu() for t in r)
                outs.append([[np.array(t.at(i)) for i in range(len(data))] for t in r])
            res[dev] = outs
        return res["cpu"], res["gpu"]

    def assert_same(cpu, gpu, tol=0):
        for c_it, g_it in zip(cpu, gpu):
            for c_out, g_out in zip(c_it, g_it):
                for c, g in zip(c_out, g_out):
                    assert c.dtype == g.dtype and c.shape == g.shape, (c.dtype, g.dtype, c.shape)
                    d = np.abs(c.astype(np.float64) - g.astype(np.float64)).max() if c.size else 0
                    assert d <= tol, d
""")


def run_child(body, emulated):
    env = dict(os.environ)
    if emulated:
        env["SLUICE_GPU_EMULATE"] = "1"
    else:
        env.pop("SLUICE_GPU_EMULATE", None)
    r = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"child failed:\n{r.stdout}\n{r.stderr}"
    assert "ok" in r.stdout
    return r.stdout


@pytest.mark.parametrize("emulated", MODES)
def test_gaussian_blur_and_laplacian_gpu_against_opencv(emulated):
    run_child("""
        rng = np.random.default_rng(7)
        imgs = [rng.integers(0, 255, s, dtype=np.uint8)
                for s in [(31, 47, 3), (5, 9, 3), (64, 20, 3), (1, 1, 3)]]
        cpu, gpu = run(lambda x: (fn.gaussian_blur(x, sigma=1.5),
                                  fn.gaussian_blur(x, sigma=(0.8, 2.0), dtype=types.FLOAT),
                                  fn.laplacian(x, dtype=types.FLOAT),
                                  fn.laplacian(x, window_size=5, dtype=types.FLOAT)), imgs)
        assert_same(cpu, gpu)
        blur, blurf, lap3, lap5 = gpu[0]
        for k, img in enumerate(imgs):
            f = img.astype(np.float32)
            ref = cv2.GaussianBlur(f, (11, 11), 1.5, borderType=cv2.BORDER_REFLECT_101)
            assert np.abs(blur[k].astype(float) - ref).max() <= 0.5 + 1e-3
            ref = cv2.GaussianBlur(f, (13, 7), sigmaX=2.0, sigmaY=0.8,
                                   borderType=cv2.BORDER_REFLECT_101)
            np.testing.assert_allclose(blurf[k], ref, atol=1e-3)
            if min(img.shape[:2]) > 1:  # OpenCV's reflect-101 needs two pixels
                for ks, out in ((3, lap3), (5, lap5)):
                    ref = cv2.Laplacian(f, cv2.CV_32F, ksize=ks,
                                        borderType=cv2.BORDER_REFLECT_101)
                    np.testing.assert_allclose(out[k], ref, atol=1e-2)
        # planar float input, per-sample sigma from an argument input
        chw = [rng.random((2, 12, 14), dtype=np.float32), rng.random((3, 7, 30), dtype=np.float32)]
        cpu, gpu = run(lambda x: fn.gaussian_blur(
            x, sigma=fn.random.uniform(range=[0.5, 2.0], seed=3)), chw, layout="CHW")
        assert_same(cpu, gpu)
        print("ok")
    """, emulated)


@pytest.mark.parametrize("emulated", MODES)
def test_erase_gpu_against_model(emulated):
    run_child("""
        rng = np.random.default_rng(8)
        imgs = [rng.integers(0, 255, s, dtype=np.uint8) for s in [(30, 40, 3), (10, 12, 3)]]
        cpu, gpu = run(lambda x: fn.erase(x, anchor=(4, 10, 20, -3), shape=(10, 20, 50, 8),
                                          axis_names="HW", fill_value=(1, 2, 3)), imgs)
        assert_same(cpu, gpu)
        for o, img in zip(gpu[0][0], imgs):
            ref = img.copy()
            ref[4:14, 10:30] = (1, 2, 3)
            ref[20:70, 0:5] = (1, 2, 3)
            np.testing.assert_array_equal(o, ref)
        f = [rng.random((9, 11, 2), dtype=np.float32)]
        cpu, gpu = run(lambda x: fn.erase(x, anchor=(0.5,), shape=(0.25,), axis_names="W",
                                          normalized=True, centered_anchor=True,
                                          fill_value=-1.0), f)
        ref = f[0].copy()
        ref[:, 4:7] = -1.0  # centre 5.5, width 2.75: [round(4.125), + round(2.75))
        np.testing.assert_array_equal(gpu[0][0][0], ref)
        assert_same(cpu, gpu)
        print("ok")
    """, emulated)


@pytest.mark.parametrize("emulated", MODES)
def test_noise_gpu_draws_equal_cpu(emulated):
    run_child("""
        rng = np.random.default_rng(9)
        imgs = [np.full((64, 48, 3), 100, np.uint8), np.full((33, 17, 3), 60, np.uint8)]
        build = lambda x: (fn.noise.gaussian(x, stddev=10.0, seed=4),
                           fn.noise.shot(x, factor=5.0, seed=4),
                           fn.noise.salt_and_pepper(x, prob=0.2, seed=4))
        cpu, gpu = run(build, imgs, iters=2)
        if EMULATED:
            assert_same(cpu, gpu)
        else:
            assert_same([it[:1] + it[2:] for it in cpu], [it[:1] + it[2:] for it in gpu], tol=1)
        for it in range(2):
            g, s, sp = gpu[it]
            for k, img in enumerate(imgs):
                v = img[0, 0, 0]
                d = g[k].astype(float) - v  # N(0, 10), rounded
                assert abs(d.mean()) < 1.0 and 9.0 < d.std() < 11.0
                # Poisson(v / 5) * 5: mean v, variance 5 v
                assert abs(s[k].mean() - v) < 2.0 and abs(s[k].var() / (5.0 * v) - 1) < 0.15
                noisy = (sp[k] != v).any(axis=2)  # per pixel, all channels together
                assert abs(noisy.mean() - 0.2) < 0.05
                assert ((sp[k] == 255).all(axis=2) | (sp[k] == 0).all(axis=2))[noisy].all()
        # each iteration draws anew
        assert not np.array_equal(gpu[0][0][0], gpu[1][0][0])
        print("ok")
    """, emulated)


@pytest.mark.parametrize("emulated", MODES)
def test_explicit_gpu_device_and_bad_arguments(emulated):
    run_child("""
        imgs = [np.zeros((6, 8, 3), np.uint8)]
        # device="gpu" given explicitly, on GPU data: a GPU node
        for op in (lambda x, d: fn.gaussian_blur(x, sigma=1.0, device=d),
                   lambda x, d: fn.noise.salt_and_pepper(x, device=d),
                   lambda x, d: fn.multi_paste(x, in_ids=[0], device=d)):
            @pipeline_def(batch_size=1, num_threads=1, device_id=0)
            def explicit():
                x = fn.external_source(source=lambda: imgs, layout="HWC")
                return op(x.gpu(), "gpu")
            out = explicit().run()
            out = out[0] if isinstance(out, tuple) else out
            assert type(out).__name__ == "TensorListGPU"
            assert out.as_cpu().at(0).shape == (6, 8, 3)
        for build, pattern in [
                (lambda x: fn.gaussian_blur(x, window_size=4), "gaussian_blur"),
                (lambda x: fn.erase(x, anchor=(1, 2, 3), shape=(1, 2)), "erase"),
                (lambda x: fn.noise.gaussian(x, stddev=-1.0), "noise.gaussian")]:
            try:
                run(build, imgs)
            except sluice.SluiceError as e:
                assert pattern in str(e), e
            else:
                raise AssertionError("no error for " + pattern)
        print("ok")
    """, emulated)


@pytest.mark.parametrize("emulated", MODES)
def test_warps_masks_and_pastes_gpu(emulated):
    run_child("""
        rng = np.random.default_rng(10)
        imgs = [rng.integers(0, 255, s, dtype=np.uint8) for s in [(30, 40, 3), (17, 23, 3)]]
        cpu, gpu = run(lambda x: (fn.water(x), fn.sphere(x, interp_type=types.INTERP_LINEAR),
                                  fn.jitter(x, nDegree=3, seed=2), fn.jitter(x, nDegree=1),
                                  fn.water(x, ampl_x=0.0, ampl_y=0.0),
                                  fn.grid_mask(x, tile=8, ratio=0.5, angle=0.3),
                                  fn.paste(x, ratio=2.0, fill_value=(9, 8, 7), paste_x=0.25,
                                           paste_y=1.0),
                                  fn.multi_paste(x, in_ids=[1, 0], shapes=[5, 6, 10, 10],
                                                 out_anchors=[0, 0, 2, 3],
                                                 output_size=[20, 20])), imgs)
        assert_same(cpu, gpu, tol=0 if EMULATED else 1)
        water, sphere, jit3, jit1, still, gm, pasted, mp = gpu[0]
        for k, img in enumerate(imgs):
            h, w, _ = img.shape
            # nDegree 1 moves nothing; a wave of amplitude 0 neither
            np.testing.assert_array_equal(jit1[k], img)
            np.testing.assert_array_equal(still[k], img)
            # jitter with nDegree 3 takes each pixel from within one pixel (or the fill, 0)
            near = np.zeros(img.shape, bool)
            pad = np.pad(img, ((1, 1), (1, 1), (0, 0)))
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    near |= jit3[k] == pad[1 + dy:1 + dy + h, 1 + dx:1 + dx + w]
            assert near.all() and not np.array_equal(jit3[k], img)
            # grid_mask: NumPy's model of the rotated grid
            y, x = np.mgrid[0:h, 0:w].astype(np.float64)
            ca, sa = np.cos(0.3) / 8, np.sin(0.3) / 8
            fx, fy = x * ca - y * sa, x * sa + y * ca
            keep = (fx - np.floor(fx) >= 0.5) | (fy - np.floor(fy) >= 0.5)
            np.testing.assert_array_equal(gm[k], np.where(keep[..., None], img, 0))
            # paste: the image at (int(1.0 * (2h - h)), int(0.25 * (2w - w))) on a 2h x 2w canvas
            ref = np.empty((2 * h, 2 * w, 3), np.uint8)
            ref[...] = (9, 8, 7)
            ax = int(np.float32(0.25) * np.float32(w))
            ref[h:, ax:ax + w] = img
            np.testing.assert_array_equal(pasted[k], ref)
            # multi_paste: sample 1's 5 x 6 corner, then sample 0's 10 x 10 corner at (2, 3)
            ref = np.zeros((20, 20, 3), np.uint8)
            ref[0:5, 0:6] = imgs[1][0:5, 0:6]
            ref[2:12, 3:13] = imgs[0][0:10, 0:10]
            np.testing.assert_array_equal(mp[k], ref)
        print("ok")
    """, emulated)
