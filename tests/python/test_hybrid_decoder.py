"""tests/python/test_hybrid_decoder.py: fn.decoders.image(device="mixed") through the hybrid
decoder (entropy decoding on the CPU, IDCT, upsampling and color conversion in kernels) gives
the CPU decoder's bytes, and PIL's, on the decoder test images; what it cannot decode exactly
(CMYK, PNG) is decoded on the CPU and counted in executor_statistics()["fallbacks"].

Runs in a child process with SLUICE_GPU_EMULATE=1 (the GPU stage emulated on the host), and on
the real device when this machine has one (test_gpu.py's MODES).
"""
import pytest

from test_gpu import MODES, run_child

JPEGS = ["jpeg_444_q90.jpg", "jpeg_444_odd_131x97.jpg", "jpeg_422_odd_97x131.jpg",
         "jpeg_420_odd_301x67.jpg", "jpeg_420_tiny_13x7.jpg", "jpeg_440_odd_101x75.jpg",
         "jpeg_411_odd_75x101.jpg", "jpeg_progressive_420.jpg", "jpeg_progressive_444_odd.jpg",
         "jpeg_gray.jpg", "jpeg_gray_progressive_odd.jpg", "jpeg_restart_rows_420.jpg",
         "jpeg_restart_mcu_422.jpg", "jpeg_q10_420.jpg", "jpeg_q100_444.jpg"]
OTHERS = ["jpeg_cmyk.jpg", "png_rgb.png"]


@pytest.mark.parametrize("emulated", MODES)
@pytest.mark.parametrize("output_type", ["RGB", "BGR", "GRAY"])
def test_mixed_decoder_equals_cpu_and_pil(emulated, output_type, testdata):
    out = run_child(f"""
        from PIL import Image
        DATA = {str(testdata)!r}
        FILES = {JPEGS + OTHERS!r}
        N = len(FILES)

        @pipeline_def(batch_size=N, num_threads=2, device_id=0)
        def pipe(dev):
            jpegs, _ = fn.readers.file(file_root=DATA, files=FILES)
            return fn.decoders.image(jpegs, device=dev, output_type=types.{output_type})

        pc, pg = pipe("cpu"), pipe("mixed")
        for it in range(2):
            (c,), (g,) = pc.run(), pg.run()
            assert type(g).__name__ == "TensorListGPU"
            g = g.as_cpu()
            for i, name in enumerate(FILES):
                assert np.array_equal(g.at(i), c.at(i)), (name, it)
                if name.startswith("jpeg_") and "cmyk" not in name:
                    im = Image.open(os.path.join(DATA, name))
                    if "{output_type}" == "GRAY":
                        im.draft("L", im.size)
                        ref = np.asarray(im.convert("L"))[:, :, None]
                    else:
                        ref = np.asarray(im.convert("RGB"))
                        if "{output_type}" == "BGR":
                            ref = ref[:, :, ::-1]
                    assert np.array_equal(g.at(i), ref), name
        stats = pg.executor_statistics()
        dec = [s for s in stats.values() if s["op"] == "decoders.image"][0]
        assert dec["device"] == "mixed"
        # CMYK and PNG, in each iteration run (prefetching runs ahead of the two consumed);
        # every other JPEG went through the kernels
        assert dec["iterations"] >= 2
        assert dec["fallbacks"] == dec["iterations"] * {len(OTHERS)}, dec
        cpu = [s for s in pc.executor_statistics().values() if s["op"] == "decoders.image"][0]
        assert cpu["fallbacks"] == 0
        print("ok")
    """, emulated, testdata)
    assert "ok" in out
