"""tests/python/test_roi_decode_exact.py: a region decoded alone equals the same region of the
whole decode, for JPEGs whose decode depends on context: progressive files that hold only their
first scans (a truncated download), which libjpeg block-smooths from the blocks up to two to each
side (issue 15, finding 1), at every chroma subsampling, in colour and gray.

`decoders.image` fused into `crop` decodes only the crop's columns (jpeg_crop_scanline); with
fuse_samples=False the whole image is decoded and cut. The two must give the same bytes, and the
whole decode must be Pillow's (the same libjpeg-turbo, the same smoothing). Files are made from
the test tree's photos with Pillow, cut after k scans (an EOI appended), for several k; windows
are drawn at many positions and sizes, edges included. The inputs of the fuzzing run that found
the difference (tests/fuzz/regressions/roi, issue 15) are checked too.
"""
import glob
import io
import os
import pathlib

import numpy as np
import pytest
from PIL import Image

from sluice import fn, pipeline_def, types

ROOT = pathlib.Path(__file__).resolve().parents[2]
REGRESSIONS = ROOT / "tests" / "fuzz" / "regressions" / "roi"


def progressive_cut(img, scans, subsampling, quality=90):
    """img saved as a progressive JPEG, then cut before its scan number `scans` (0-based SOS
    markers), with an EOI: a valid file that lacks its later scans."""
    buf = io.BytesIO()
    img.save(buf, "JPEG", progressive=True, quality=quality, subsampling=subsampling)
    data = buf.getvalue()
    sos = [i for i in range(len(data) - 1) if data[i] == 0xFF and data[i + 1] == 0xDA]
    assert len(sos) > scans
    return data[:sos[scans]] + b"\xff\xd9"


def crops(files, windows, color, fuse):
    """For each (h, w, x, y) window (crop_pos as fractions), for each file: the crop's pixels.
    One pipeline, one crop (so that the decoder is fused into it): a sample per (window, file),
    the window given per sample."""
    pairs = [(f, win) for win in windows for f in files]
    data = [np.frombuffer(f, np.uint8) for f, _ in pairs]
    hw = [np.array([h, w], np.float32) for _, (h, w, _, _) in pairs]
    xs = [np.float32(x) for _, (_, _, x, _) in pairs]
    ys = [np.float32(y) for _, (_, _, _, y) in pairs]

    @pipeline_def(batch_size=len(pairs), num_threads=2, device_id=None, fuse_samples=fuse,
                  prefetch_queue_depth=1)
    def pipe():
        jpegs, crop, x, y = fn.external_source(source=[(data, hw, xs, ys)], num_outputs=4,
                                               batch=True, cycle=True)
        images = fn.decoders.image(jpegs, output_type=color)
        return fn.crop(images, crop=crop, crop_pos_x=x, crop_pos_y=y,
                       out_of_bounds_policy="trim_to_shape")

    p = pipe()
    p.build()
    (out,) = p.run()
    n = len(files)
    return [[np.array(out.at(k * n + i)) for i in range(n)] for k in range(len(windows))]


def windows_for(rng, n):
    out = [(13, 21, 0.7, 0.6), (9, 30, 0.3, 0.9), (8, 8, 0.0, 0.0), (40, 17, 1.0, 1.0)]
    for _ in range(n):
        out.append((int(rng.integers(1, 64)), int(rng.integers(1, 64)),
                    float(rng.random()), float(rng.random())))
    return out


@pytest.mark.parametrize("subsampling", [0, 1, 2])  # 4:4:4, 4:2:2, 4:2:0
@pytest.mark.parametrize("color", [types.RGB, types.GRAY])
def test_fused_crop_of_incomplete_progressive_jpegs(tree_files, subsampling, color):
    rng = np.random.default_rng(subsampling * 10 + (color == types.GRAY))
    files = []
    for path, _ in tree_files[::17][:6]:
        img = Image.open(path).convert("RGB")
        for scans in (1, 2, 3, 5):
            files.append(progressive_cut(img, scans, subsampling))
    windows = windows_for(rng, 24)
    fused = crops(files, windows, color, True)
    whole = crops(files, windows, color, False)
    for k, (h, w, x, y) in enumerate(windows):
        for i in range(len(files)):
            assert np.array_equal(fused[k][i], whole[k][i]), (k, (h, w, x, y), i)
    # and the whole decode is Pillow's (GRAY: libjpeg's own, as Pillow's draft("L") gives)
    mode = "L" if color == types.GRAY else "RGB"
    for i, f in enumerate(files):
        im = Image.open(io.BytesIO(f))
        im.draft(mode, im.size)
        ref = np.asarray(im.convert(mode))
        ref = ref if mode == "RGB" else ref[:, :, None]
        h, w = ref.shape[:2]
        full = crops([f], [(h, w, 0.5, 0.5)], color, False)[0][0]
        assert np.array_equal(full, ref), i


def test_inputs_of_the_fuzzing_run():
    # the plain JPEGs of the folder (the fuzz target's bare mode); its other inputs start with
    # the target's 8-byte header (tests/fuzz/fuzz_roi.c) and are checked by fuzz_replay.roi
    files = sorted(f for f in glob.glob(str(REGRESSIONS / "*"))
                   if pathlib.Path(f).read_bytes()[:3] == b"\xff\xd8\xff")
    assert len(files) >= 9, REGRESSIONS  # the findings of issue 15
    datas = [open(f, "rb").read() for f in files]
    for color in (types.RGB, types.GRAY):
        windows = [(13, 21, 0.7, 0.6), (9, 30, 0.3, 0.9)]
        fused = crops(datas, windows, color, True)
        whole = crops(datas, windows, color, False)
        for k in range(len(windows)):
            for i, name in enumerate(files):
                assert np.array_equal(fused[k][i], whole[k][i]), (os.path.basename(name), k)
