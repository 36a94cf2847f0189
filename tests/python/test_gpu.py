"""tests/python/test_gpu.py: the GPU stage from Python — .gpu(), device="mixed"/"gpu", devices
inferred from the inputs when not given (DALI's rule, decided in C), TensorListGPU (DLPack
kDLCUDA, as_cpu), the PyTorch iterator's CUDA tensors, and what a machine without a GPU does.

Each GPU check runs in a child process twice: on the real device (skipped, with the reason,
when this machine has none) and with SLUICE_GPU_EMULATE=1, where the GPU stage is emulated on
the host (src/cuda/gpu.h), so the checks run in CI too. References are the same pipelines on
the CPU: decoded and copied bytes must be identical.
"""
import os
import subprocess
import sys
import textwrap

import pytest

import sluice
from sluice import _sluice

pytestmark = pytest.mark.skipif(not _sluice.HAVE_CUDA,
                                reason="this build of sluice has no CUDA support")


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
    import sluice
    from sluice import fn, types, pipeline_def
    ROOT = os.environ["SLUICE_TEST_TREE"]
""")


def run_child(body, emulated, tree):
    env = dict(os.environ, SLUICE_TEST_TREE=str(tree))
    if emulated:
        env["SLUICE_GPU_EMULATE"] = "1"
    else:
        env.pop("SLUICE_GPU_EMULATE", None)
    r = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"child failed:\n{r.stdout}\n{r.stderr}"
    return r.stdout


@pytest.mark.parametrize("emulated", MODES)
def test_gpu_outputs_equal_cpu(emulated, tree):
    out = run_child("""
        @pipeline_def(batch_size=5, num_threads=2, device_id=0, seed=3)
        def pipe(dec_device):
            jpegs, labels = fn.readers.file(file_root=ROOT, random_shuffle=True, seed=1)
            images = fn.decoders.image(jpegs, device=dec_device, output_type=types.RGB)
            return images, images.gpu(), fn.copy(images.gpu(), device="gpu"), labels.gpu()

        pc, pg = pipe("cpu"), pipe("mixed")
        for it in range(6):
            c, g = pc.run(), pg.run()
            assert type(c[0]).__name__ == "TensorListCPU"
            for t in g:
                assert type(t).__name__ == "TensorListGPU", type(t)
                assert t.__dlpack_device__() == (2, 0)
                assert t.device_id() == 0  # a method, as in DALI
            for k in range(3):
                host = g[k].as_cpu()
                assert host.layout() == "HWC" and host.shape() == c[0].shape()
                for i in range(5):
                    assert np.array_equal(host.at(i), c[0].at(i)), (it, k, i)
                    assert g[k].source_info(i) == c[0].source_info(i)
            assert np.array_equal(g[3].as_cpu().as_array(), c[3].as_cpu().as_array())
            assert c[1].as_cpu().shape() == c[0].shape()
        print("ok")
    """, emulated, tree)
    assert "ok" in out


@pytest.mark.parametrize("emulated", MODES)
def test_dlpack_export_of_gpu_outputs(emulated, tree):
    run_child("""
        @pipeline_def(batch_size=3, num_threads=1, device_id=0)
        def pipe():
            jpegs, labels = fn.readers.file(file_root=ROOT)
            return labels.gpu(), fn.decoders.image(jpegs, device="mixed")

        p = pipe()
        labels, images = p.run()
        cap = labels.__dlpack__(stream=None)
        assert type(cap).__name__ == "PyCapsule"
        del cap
        # the protocol's checks: stream 0 is ambiguous; a CPU device request is refused
        for bad in (dict(stream=0), dict(dl_device=(1, 0))):
            try:
                labels.__dlpack__(**bad)
            except BufferError as e:
                print("refused:", e)
            else:
                raise AssertionError(bad)
        # ragged: no dense tensor
        try:
            images.__dlpack__()
        except BufferError as e:
            assert "different shapes" in str(e)
        else:
            raise AssertionError("ragged batch exported")
        # a capsule keeps the outputs: the next iteration does not overwrite them, and once it
        # is gone the pipeline goes on
        keep = labels.__dlpack__(stream=-1)
        first = labels.as_cpu().as_array().copy()
        p.run()
        assert np.array_equal(labels.as_cpu().as_array(), first)
        del labels, images, keep
        for _ in range(3):
            p.run()
        print("ok")
    """, emulated, tree)


@pytest.mark.parametrize("emulated", MODES)
def test_pytorch_iterator_gives_device_tensors(emulated, tree):
    out = run_child("""
        import torch
        from sluice.plugin.pytorch import SluiceClassificationIterator
        @pipeline_def(batch_size=4, num_threads=2, device_id=0, seed=5)
        def pipe(gpu):
            jpegs, labels = fn.readers.file(file_root=ROOT, name="Reader")
            images = fn.decoders.image(jpegs, device="mixed" if gpu else "cpu")
            images = fn.crop_mirror_normalize(images, device="gpu" if gpu else "cpu",
                                              crop=(32, 32),
                                              dtype=types.FLOAT, output_layout="CHW",
                                              mean=[120.0, 115.0, 100.0], std=[60.0, 61.0, 62.0])
            return images, labels.gpu() if gpu else labels
        try:
            pg = pipe(True)
            pg.build()
        except sluice.SluiceError as e:
            if "no gpu implementation" in str(e):
                print("skip: crop_mirror_normalize has no GPU kernel in this build")
                sys.exit(0)
            raise
        pc = pipe(False)
        ig = SluiceClassificationIterator(pg, reader_name="Reader")
        ic = SluiceClassificationIterator(pc, reader_name="Reader")
        n = 0
        emulated = os.environ.get("SLUICE_GPU_EMULATE") == "1"
        for bg, bc in zip(ig, ic):
            x, y = bg[0]["data"], bg[0]["label"]
            if not emulated:
                assert x.is_cuda and x.device.index == 0
            assert x.shape == (4, 3, 32, 32) and x.dtype == torch.float32
            assert torch.equal(x.cpu(), bc[0]["data"])
            assert torch.equal(y.cpu().reshape(-1), bc[0]["label"].reshape(-1))
            n += 1
        assert n == 25, n
        print("ok")
    """, emulated, tree)
    assert "ok" in out or "skip" in out


def test_cpu_pipeline_with_device_id_runs_without_a_gpu(tree):
    """A machine without a GPU runs CPU pipelines as before, device_id or not; a pipeline that
    needs the GPU fails at build with a clear message."""
    out = run_child("""
        @pipeline_def(batch_size=2, num_threads=1, device_id=0)
        def cpu_only():
            jpegs, labels = fn.readers.file(file_root=ROOT)
            return fn.decoders.image(jpegs), labels
        p = cpu_only()
        p.build()
        a, b = p.run()
        assert type(a).__name__ == "TensorListCPU"
        @pipeline_def(batch_size=2, num_threads=1, device_id=0)
        def needs_gpu():
            jpegs, labels = fn.readers.file(file_root=ROOT)
            return fn.decoders.image(jpegs, device="mixed")
        try:
            needs_gpu().build()
        except sluice.SluiceError as e:
            print("build error:", e)
        else:
            print("built: a GPU is present")
    """, False, tree)
    if not HAVE_GPU:
        assert "build error:" in out and "GPU stage on device 0" in out, out


def test_data_node_placement():
    @sluice.pipeline_def(batch_size=1, num_threads=1, device_id=0)
    def pipe():
        u = sluice.fn.random.uniform()
        assert u.cpu() is u
        g = u.gpu()
        assert g.device == "mixed" and g.op == "copy"
        assert g.gpu() is g
        back = g.cpu()
        assert back.device == "cpu" and back.op == "copy"
        return g

    pipe()


@pytest.mark.parametrize("emulated", MODES)
def test_cpu_brings_gpu_data_back(emulated, tree):
    run_child('''
        @pipeline_def(batch_size=4, num_threads=2, device_id=0, seed=2)
        def pipe(gpu):
            jpegs, _ = fn.readers.file(file_root=ROOT)
            images = fn.decoders.image(jpegs, device="mixed" if gpu else "cpu")
            flipped = fn.flip(images, device="gpu" if gpu else "cpu", horizontal=1)
            back = flipped.cpu()
            return fn.cast(back, dtype=types.FLOAT), back

        pc, pg = pipe(False), pipe(True)
        for _ in range(4):
            (fc, bc), (fg, bg) = pc.run(), pg.run()
            assert type(bg).__name__ == "TensorListCPU" and type(fg).__name__ == "TensorListCPU"
            for i in range(4):
                assert np.array_equal(bc.at(i), bg.at(i))
                assert np.array_equal(fc.at(i), fg.at(i))
        print("ok")
    ''', emulated, tree)


@pytest.mark.parametrize("emulated", MODES)
def test_tensor_gpu_and_shapes_of_gpu_data(emulated, tree):
    """TensorListGPU as DALI returns it: tl[i] / at(i) (deprecated) TensorGPU views, as_tensor,
    as_cpu() a TensorListCPU; DataNode.shape() of GPU data is read without copying the data
    (the shapes node reads metadata only), equal to the CPU decoder's shapes."""
    run_child('''
        import warnings

        @pipeline_def(batch_size=3, num_threads=1, device_id=0)
        def pipe():
            jpegs, labels = fn.readers.file(file_root=ROOT)
            img = fn.decoders.image(jpegs, device="mixed")
            cpu = fn.decoders.image(jpegs)
            return (img, labels.gpu(), img.shape(), img.shape(dtype=types.INT32, device="gpu"),
                    cpu)

        p = pipe()
        for _ in range(3):
            g, lab, s, sg, c = p.run()
            assert type(s).__name__ == "TensorListCPU" and type(sg).__name__ == "TensorListGPU"
            assert s.as_array().tolist() == [list(x) for x in c.shape()]
            assert sg.as_cpu().as_array().dtype == np.int32
            assert sg.as_cpu().as_array().tolist() == s.as_array().tolist()
            for i in range(3):
                t = g[i]
                assert type(t).__name__ == "TensorGPU"
                assert t.shape() == list(c.shape()[i]) and t.layout() == "HWC"
                assert t.dtype == types.UINT8 and t.device_id() == 0
                assert t.__dlpack_device__() == (2, 0) and t.source_info() == c.source_info(i)
                host = t.as_cpu()
                assert type(host).__name__ == "TensorCPU"
                assert np.array_equal(np.asarray(host), c.at(i))
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                assert type(g.at(0)).__name__ == "TensorGPU"
            assert w and w[0].category is DeprecationWarning
            h = g.as_cpu()
            assert type(h).__name__ == "TensorListCPU" and type(h[0]).__name__ == "TensorCPU"
            assert [np.array_equal(h.at(i), c.at(i)) for i in range(3)] == [True] * 3
            whole = lab.as_tensor()
            assert type(whole).__name__ == "TensorGPU" and whole.shape() == [3, 1]
            assert np.array_equal(np.asarray(whole.as_cpu()), lab.as_cpu().as_array())
        print("ok")
    ''', emulated, tree)


@pytest.mark.parametrize("emulated", MODES)
def test_constants_meet_gpu_data(emulated, tree):
    """Issue 16: a constant operand of GPU data is made on the GPU (as DALI places it), and so
    are fn.constant / types.Constant with device="gpu" and a constant input of an operator
    given device="gpu"; nodes made outside the pipeline are adopted."""
    run_child('''
        img = np.arange(24, dtype=np.float32).reshape(2, 4, 3)
        scale = np.array([1, 10, 100], np.float32)
        x = fn.external_source(lambda: [img.copy(), img[:1].copy()], layout="HWC").gpu()
        scaled, shifted = x * scale, [1.0, 2.0, 3.0] + x
        assert (scaled.device, shifted.device) == ("gpu", "gpu")
        c = types.Constant(scale, device="gpu")
        assert c.device == "gpu"
        p = sluice.Pipeline(batch_size=2, num_threads=1, device_id=0)
        with p:
            cast = fn.cast(np.arange(6, dtype=np.int16), dtype=types.INT32, device="gpu")
            filled = fn.constant(fdata=2.5, shape=[3, 4], dtype=types.FLOAT16, device="gpu")
            scalar = fn.constant(idata=[-7], shape=[], dtype=types.INT8, layout="", device="gpu")
        p.set_outputs(scaled, shifted, c, cast, filled, scalar)
        for _ in range(2):
            outs = p.run()
            assert all(type(t).__name__ == "TensorListGPU" for t in outs)
            host = [t.as_cpu() for t in outs]
            for k, sample in enumerate((img, img[:1])):
                assert np.array_equal(host[0].at(k), sample * scale)
                assert np.array_equal(host[1].at(k), sample + np.float32([1, 2, 3]))
                assert np.array_equal(host[2].at(k), scale)
                assert np.array_equal(host[3].at(k), np.arange(6, dtype=np.int32))
                f = host[4].at(k)
                assert f.dtype == np.float16 and np.array_equal(f, np.full((3, 4), 2.5))
                assert host[5].at(k).dtype == np.int8 and host[5].at(k) == -7
        print("ok")
    ''', emulated, tree)


def test_placement_errors_at_build():
    @sluice.pipeline_def(batch_size=1, num_threads=1, device_id=0)
    def cpu_into_gpu():
        return sluice.fn.copy(sluice.fn.random.uniform(), device="gpu")

    with pytest.raises(sluice.SluiceError, match=r"\.gpu\(\)"):
        cpu_into_gpu().build()

    @sluice.pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def cpu_only():
        return sluice.fn.copy(sluice.fn.random.uniform(), device="mixed")

    with pytest.raises(sluice.SluiceError, match="CPU-only pipeline"):
        cpu_only().build()

    @sluice.pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def cpu_only_gpu_call():
        return sluice.fn.random.uniform().gpu()

    with pytest.raises(NotImplementedError, match="CPU-only pipeline"):
        cpu_only_gpu_call()


@pytest.mark.parametrize("emulated", MODES)
def test_device_inferred_from_the_inputs(emulated, tree):
    """DALI: "If the device parameter is not specified, it is selected automatically based on
    the placement of the inputs ... it would work the same if only device='mixed' was specified
    for fn.decoders.image." Below a mixed decoder, fn.* and ops.* calls and arithmetic without a
    device run on the GPU with the CPU pipeline's bytes; each DataNode.device is the device the
    build gives its node; a node reading only CPU data stays on the CPU."""
    run_child('''
        from sluice import ops
        nodes = []

        @pipeline_def(batch_size=4, num_threads=2, device_id=0, seed=3)
        def pipe(gpu):
            jpegs, labels = fn.readers.file(file_root=ROOT, random_shuffle=True, seed=1)
            images = fn.decoders.image(jpegs, device="mixed" if gpu else "cpu")
            flipped = fn.flip(images, horizontal=1)
            half = flipped * 0.5
            both = images + flipped
            crop = ops.Crop(crop=(16, 16))
            cropped = crop(flipped)
            lab = fn.cast(labels, dtype=types.FLOAT)
            want = "gpu" if gpu else "cpu"
            assert images.device == ("mixed" if gpu else "cpu")
            assert [x.device for x in (flipped, half, both, cropped)] == [want] * 4
            assert crop.device is None
            assert jpegs.device == labels.device == lab.device == "cpu"
            nodes.extend([jpegs, images, flipped, half, both, cropped, lab])
            return flipped, half, both, cropped, lab

        pc, pg = pipe(False), pipe(True)
        stats = pg.executor_statistics()
        for x in nodes[7:]:
            assert stats[x.node]["device"] == x.device, (x, stats[x.node])
        for _ in range(3):
            c, g = pc.run(), pg.run()
            assert [type(t).__name__ for t in g] == ["TensorListGPU"] * 4 + ["TensorListCPU"]
            for k in range(5):
                host = g[k].as_cpu() if k < 4 else g[k]
                assert host.dtype == c[k].dtype
                for i in range(4):
                    assert np.array_equal(host.at(i), c[k].at(i)), (k, i)

        # the spec leaves the devices out, and reads back into the same pipeline
        import json
        text = pg.serialize()
        spec = {n["name"]: n for n in json.loads(text)["nodes"]}
        assert spec[nodes[8].node]["device"] == "mixed"
        assert all("device" not in spec[x.node] for x in nodes[9:])
        pd = sluice.Pipeline.deserialize(text)
        pd.build()
        assert pd.executor_statistics().keys() == stats.keys()
        assert all(s["device"] == stats[n]["device"]
                   for n, s in pd.executor_statistics().items())
        pr = pipe(True)
        for _ in range(2):
            d, r = pd.run(), pr.run()
            assert [type(t).__name__ for t in d] == [type(t).__name__ for t in r]
            for k in range(5):
                dh = d[k].as_cpu() if k < 4 else d[k]
                rh = r[k].as_cpu() if k < 4 else r[k]
                for i in range(4):
                    assert np.array_equal(dh.at(i), rh.at(i)), (k, i)
        print("ok")
    ''', emulated, tree)


def test_inferred_placement_errors(tree):
    """What a node without a device cannot do where its inputs put it is an error naming the
    operator, the node and the input that placed it (at the call, in the build's words); argument
    inputs do not count and stay CPU data; a given device wins; in a CPU-only pipeline the mixed
    node is the error."""
    pipe = sluice.Pipeline(batch_size=2, num_threads=1, device_id=0)
    with pipe:
        jpegs, labels = sluice.fn.readers.file(file_root=str(tree), name="r")
        moved = jpegs.gpu()
        with pytest.raises(sluice.UnsupportedError) as e:
            sluice.fn.decoders.image(moved, name="d")
        assert e.value.operator == "decoders.image" and e.value.node == "d"
        assert ('operator has no gpu implementation, and no device was given: input 0 comes '
                f'from node "{moved.node}" on mixed') in str(e.value)
        assert not pipe._graph.has_node("d")  # a failed call records nothing
        images = sluice.fn.decoders.image(jpegs, device="mixed")
        with pytest.raises(NotImplementedError, match="tensor_subscript .*no device was given"):
            images[0:8]
        flipped = sluice.fn.flip(images, device="cpu", name="f")  # a given device wins
        assert flipped.device == "cpu"
        pipe.set_outputs(flipped)
    with pytest.raises(sluice.SluiceError, match=r'flip \(node "f"\).*a cpu operator reads CPU data'):
        pipe.build()

    pipe = sluice.Pipeline(batch_size=2, num_threads=1, device_id=0)
    with pipe:
        jpegs, labels = sluice.fn.readers.file(file_root=str(tree))
        images = sluice.fn.decoders.image(jpegs)
        coin = sluice.fn.random.coin_flip().gpu()
        cmn = sluice.fn.crop_mirror_normalize(images, crop=(8, 8), mirror=coin, name="cmn")
        assert cmn.device == "cpu"  # an argument input does not place the node
        pipe.set_outputs(cmn)
    with pytest.raises(sluice.SluiceError,
                       match=rf'argument input "mirror" comes from node "{coin.node}" on mixed; '
                             'argument inputs must come from CPU nodes'):
        pipe.build()

    @sluice.pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def cpu_only():
        jpegs, _ = sluice.fn.readers.file(file_root=str(tree))
        images = sluice.fn.decoders.image(jpegs, device="mixed", name="dec")
        flipped = sluice.fn.flip(images, name="f")
        assert flipped.device == "gpu"
        return flipped

    with pytest.raises(sluice.SluiceError,
                       match=r'decoders.image \(node "dec"\): device "mixed" in a CPU-only'):
        cpu_only().build()


def test_prefetch_queue_depth_dict():
    p = sluice.Pipeline(batch_size=1, num_threads=1, device_id=0,
                        prefetch_queue_depth={"cpu_size": 3, "gpu_size": 2})
    assert p.prefetch_queue_depth == {"cpu_size": 3, "gpu_size": 2}
    assert p._depth == 5  # iterations in flight: the CPU stage runs 3 beyond the 2 GPU sets
    for bad in ({"cpu_size": 0, "gpu_size": 2}, {"cpu_size": 2, "gpu_size": 1.5},
                {"cpu_size": 2, "gpu": 2}):
        with pytest.raises(ValueError, match="prefetch_queue_depth"):
            sluice.Pipeline(batch_size=1, num_threads=1, device_id=0, prefetch_queue_depth=bad)


@pytest.mark.parametrize("emulated", MODES)
def test_separated_queues(emulated, tree):
    """prefetch_queue_depth=dict(cpu_size, gpu_size): the same batches through the PyTorch
    iterator as the CPU pipeline, the option kept by serialize(), and the C pipeline built with
    gpu_size GPU buffer sets."""
    out = run_child("""
        import torch
        from sluice.plugin.pytorch import SluiceClassificationIterator
        def make(gpu, depth):
            @pipeline_def(batch_size=4, num_threads=2, device_id=0, seed=5,
                          prefetch_queue_depth=depth)
            def pipe():
                jpegs, labels = fn.readers.file(file_root=ROOT, name="Reader",
                                                random_shuffle=True, seed=2)
                images = fn.decoders.image(jpegs, device="mixed" if gpu else "cpu")
                images = fn.crop(images, crop=(24, 24), device="gpu" if gpu else "cpu")
                return images, labels
            return pipe()
        depth = {"cpu_size": 3, "gpu_size": 2}  # the loop holds one batch while asking
        pg, pc = make(True, depth), make(False, 2)
        ig = SluiceClassificationIterator(pg, reader_name="Reader")
        ic = SluiceClassificationIterator(pc, reader_name="Reader")
        n = 0
        for epoch in range(2):
            for bg, bc in zip(ig, ic):
                assert torch.equal(bg[0]["data"].cpu(), bc[0]["data"])
                assert torch.equal(bg[0]["label"].reshape(-1), bc[0]["label"].reshape(-1))
                n += 1
            ig.reset(); ic.reset()
        assert n == 50, n
        text = pg.serialize()
        assert '"cpu_queue_depth": 3' in text and '"gpu_queue_depth": 2' in text, text
        again = sluice.Pipeline.deserialize(text)
        assert again.prefetch_queue_depth == depth and again._depth == 5
        print("ok")
    """, emulated, tree)
    assert "ok" in out


@pytest.mark.parametrize("emulated", MODES)
def test_resize_batches_of_repeated_sizes(emulated, tree):
    """The GPU resize computes the coefficient tables of a batch's same-sized samples once
    (resample.cu: same_tables): a batch whose sizes repeat out of order (A B A A B C) gives the
    CPU operator's bytes in every sample, for the fixed-point and the float paths."""
    run_child('''
        rng = np.random.default_rng(5)
        shapes = [(37, 50, 3), (50, 37, 3), (37, 50, 3), (37, 50, 3), (50, 37, 3), (23, 61, 3)]
        imgs = [rng.integers(0, 256, s, dtype=np.uint8) for s in shapes]
        # per sample: the same input size with another output size or input region, so that
        # samples which share only some of what the tables depend on are in one batch
        sizes = [np.float32(v) for v in ([21, 30], [30, 21], [21, 30], [22, 30], [30, 21],
                                         [21, 30])]
        starts = [np.float32(v) for v in ([0, 0], [0, 0], [0.1, 0], [0, 0], [0, 0.2], [0, 0])]
        ends = [np.float32(v) for v in ([1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [0.9, 1])]
        for args in ({"resize_shorter": 20},
                     {"resize_x": 45, "resize_y": 29, "interp_type": types.INTERP_CUBIC},
                     {"resize_shorter": 24, "dtype": types.FLOAT},
                     {"size": "sizes"},
                     {"size": "sizes", "roi_start": "starts", "roi_end": "ends",
                      "roi_relative": True}):
            outs = []
            for dev in ("cpu", "gpu"):
                p = sluice.Pipeline(batch_size=len(imgs), num_threads=1, device_id=0)
                with p:
                    x = fn.external_source(source=lambda: imgs, layout="HWC")
                    x = x.gpu() if dev == "gpu" else x
                    kw = dict(args)
                    for key, v in list(kw.items()):
                        named = {"sizes": sizes, "starts": starts, "ends": ends}
                        if isinstance(v, str) and v in named:
                            kw[key] = fn.external_source(source=lambda v=named[v]: v)
                    p.set_outputs(fn.resize(x, device=dev, **kw))
                p.build()
                o = p.run()[0]
                outs.append([np.array((o.as_cpu() if dev == "gpu" else o).at(k))
                             for k in range(len(imgs))])
            for k, (c, g) in enumerate(zip(*outs)):
                assert c.shape == g.shape and c.dtype == g.dtype, (args, k)
                assert np.array_equal(c, g), (args, k)
            if "resize_shorter" in args:  # A and B's outputs really differ in size
                assert outs[0][0].shape != outs[0][1].shape, args
        print("ok")
    ''', emulated, tree)
