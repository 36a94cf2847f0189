"""tests/python/test_hostile_input.py: hostile headers and damaged files (issue 15).

- Per-sample limit (Pipeline(max_sample_bytes=...), default 1 GiB): an output sample larger than
  it, or a decode that needs more working memory than it — the whole-image coefficient buffer
  of a progressive JPEG, the RGBA16 scratch of an interlaced 16-bit PNG — fails its batch with an
  InvalidArgumentError / UnsupportedError naming the operator and the file, before allocating,
  and the pipeline goes on with the next batch. The same images decode when they fit.
- Size arguments have ranges: a typo-sized `size` is refused at build, naming the argument.
- A damaged file gets the same verdict whichever window is decoded: decoders.image_random_crop
  and a crop fused into decoders.image read the rows below their window too (without
  reconstructing them), so a truncated or byte-flipped JPEG or PNG fails for every seed exactly
  when the whole decode fails (finding 6).
"""
import io
import struct
import time
import zlib

import numpy as np
import pytest
from PIL import Image

import sluice
from sluice import fn, pipeline_def, types

MiB = 1 << 20


def decode_pipe(batches, op="image", max_sample_bytes=1 << 30, seed=1, **kw):
    """external_source of encoded files -> decoders.<op>; one batch per item of `batches`."""
    it = iter(batches)

    @pipeline_def(batch_size=max(len(b) for b in batches), num_threads=1, device_id=None,
                  prefetch_queue_depth=1, seed=seed, max_sample_bytes=max_sample_bytes)
    def pipe():
        data = fn.external_source(source=lambda: [np.frombuffer(f, np.uint8) for f in next(it)])
        return getattr(fn.decoders, op)(data, output_type=types.RGB, **kw)

    p = pipe()
    p.build()
    return p


def outcome(pipe):
    """'ok' or the error's class name and message."""
    try:
        (out,) = pipe.run()
        return "ok", [np.array(out.at(i)) for i in range(len(out))]
    except sluice.SluiceError as e:
        return type(e).__name__, str(e)


def jpeg(size, progressive, subsampling=0, seed=0):
    rng = np.random.default_rng(seed)
    img = Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8))
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=50, progressive=progressive, subsampling=subsampling)
    return buf.getvalue()


def png_chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data +
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def png_rgba16(width, height, interlaced):
    """An all-zero RGBA 16-bit PNG, Adam7-interlaced or not (Pillow cannot write interlaced)."""
    bpp = 8
    if interlaced:
        passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4),
                  (1, 0, 2, 2), (0, 1, 1, 2)]
        raw = b""
        for x0, y0, dx, dy in passes:
            w = (width - x0 + dx - 1) // dx if width > x0 else 0
            h = (height - y0 + dy - 1) // dy if height > y0 else 0
            if w and h:
                raw += (b"\0" + b"\0" * (w * bpp)) * h
    else:
        raw = (b"\0" + b"\0" * (width * bpp)) * height
    ihdr = struct.pack(">IIBBBBB", width, height, 16, 6, 0, 0, 1 if interlaced else 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) +
            png_chunk(b"IDAT", zlib.compress(raw, 9)) + png_chunk(b"IEND", b""))


# ---- the per-sample limit ------------------------------------------------------------------

def test_progressive_coefficients_count_against_the_limit():
    """2048 x 2048 at 4:4:4: the output is 12 MiB, a progressive file's coefficients 24 MiB."""
    prog, base = jpeg((2048, 2048), True), jpeg((2048, 2048), False)
    small = jpeg((64, 48), True, seed=1)
    p = decode_pipe([[prog], [small], [base]], max_sample_bytes=16 * MiB)
    t0 = time.monotonic()
    kind, msg = outcome(p)
    assert kind == "UnsupportedError", msg
    assert "decoders.image" in msg and "coefficients" in msg and "max_sample_bytes" in msg
    assert time.monotonic() - t0 < 5
    kind, out = outcome(p)  # the pipeline goes on
    assert kind == "ok" and out[0].shape == (48, 64, 3)
    kind, out = outcome(p)  # a baseline file of the same size fits: no coefficient buffer
    assert kind == "ok" and out[0].shape == (2048, 2048, 3)
    p = decode_pipe([[prog]], max_sample_bytes=32 * MiB)  # and the progressive one with room
    kind, out = outcome(p)
    assert kind == "ok"
    np.testing.assert_array_equal(out[0], np.asarray(Image.open(io.BytesIO(prog))))


def test_progressive_coefficients_also_for_a_random_window():
    prog = jpeg((2048, 2048), True)
    p = decode_pipe([[prog]], op="image_random_crop", max_sample_bytes=16 * MiB)
    kind, msg = outcome(p)
    assert kind == "UnsupportedError" and "coefficients" in msg, msg


def test_interlaced_16bit_png_scratch_counts_against_the_limit():
    """2048 x 2048 RGBA16: the RGB output is 12 MiB, the interlaced scratch 32 MiB."""
    inter, plain = png_rgba16(2048, 2048, True), png_rgba16(2048, 2048, False)
    p = decode_pipe([[inter], [plain]], max_sample_bytes=16 * MiB)
    kind, msg = outcome(p)
    assert kind == "UnsupportedError", msg
    assert "interlaced" in msg and "max_sample_bytes" in msg
    kind, out = outcome(p)  # not interlaced: decoded row by row
    assert kind == "ok" and out[0].shape == (2048, 2048, 3) and not out[0].any()
    kind, out = outcome(decode_pipe([[inter]], max_sample_bytes=64 * MiB))
    assert kind == "ok" and out[0].shape == (2048, 2048, 3) and not out[0].any()


def test_an_output_over_the_limit_fails_before_allocating(tree_files):
    """crop_mirror_normalize asked for a 601601 x 224 float window (1.5 GiB a sample): the batch
    fails at once, naming the node, the sample and its file; a per-sample crop that fits runs."""
    files = [open(f, "rb").read() for f, _ in tree_files[:2]]
    crops = iter([[np.array([601601, 224], np.float32)] * 2, [np.array([24, 24], np.float32)] * 2])

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, prefetch_queue_depth=1)
    def pipe():
        data = fn.external_source(source=lambda: [np.frombuffer(f, np.uint8) for f in files])
        crop = fn.external_source(source=lambda: next(crops))
        images = fn.decoders.image(data)
        return fn.crop_mirror_normalize(images, crop=crop, out_of_bounds_policy="pad",
                                        dtype=types.FLOAT)

    p = pipe()
    t0 = time.monotonic()
    with pytest.raises(sluice.InvalidArgumentError,
                       match=r"crop_mirror_normalize .*sample 0.*max_sample_bytes") as e:
        p.run()
    assert time.monotonic() - t0 < 5
    assert e.value.operator == "crop_mirror_normalize" and e.value.sample == 0
    (out,) = p.run()
    assert out.as_array().shape == (2, 3, 24, 24)


def test_size_arguments_have_ranges():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        data = fn.external_source(source=lambda: [np.zeros(1, np.uint8)])
        return fn.random_resized_crop(fn.decoders.image(data), size=[434323333, 224])

    with pytest.raises(sluice.InvalidArgumentError, match=r"size.*434323333.*out of range"):
        pipe().build()


def test_an_empty_shape_whose_other_extents_overflow_is_refused():
    """A sample with a zero extent holds no byte, but the product of its other extents must still
    fit in int64 (as NumPy's "array is too big"), or an operator's size arithmetic downstream
    could overflow on it (fuzz finding, readers.numpy): it fails its batch naming the operator,
    the next batch runs, and an empty shape that fits comes out as NumPy shapes it."""
    shapes = iter([[0, 1 << 40, 1 << 40], [0, 1 << 20, 1 << 20]])

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, prefetch_queue_depth=1)
    def pipe():
        data = fn.external_source(source=lambda: [np.zeros(0, np.int8)])
        shape = fn.external_source(source=lambda: [np.array(next(shapes), np.int64)])
        return fn.reshape(data, shape=shape)

    p = pipe()
    p.build()
    with pytest.raises(sluice.InvalidArgumentError, match=r"reshape.*sample 0.*impossible size"):
        p.run()
    out, = p.run()
    got = np.array(out.at(0))
    assert got.shape == (0, 1 << 20, 1 << 20) and got.dtype == np.int8


def test_max_sample_bytes_is_checked_and_serialized():
    with pytest.raises(sluice.InvalidArgumentError, match="max_sample_bytes"):
        decode_pipe([[b"x"]], max_sample_bytes=0)
    p = decode_pipe([[jpeg((8, 8), False)]], max_sample_bytes=5 * MiB)
    assert '"max_sample_bytes": 5242880' in p.serialize()


# ---- the same verdict whatever the window ------------------------------------------------------

def damaged(data, rng, n_cut, n_flip):
    out = [data[:int(len(data) * f)] for f in np.linspace(0.3, 0.999, n_cut)]
    for _ in range(n_flip):
        b = bytearray(data)
        k = int(rng.integers(len(b) // 3, len(b)))  # in the image data, past the headers
        b[k] ^= 1 << int(rng.integers(0, 8))
        out.append(bytes(b))
    return out


@pytest.mark.parametrize("fmt", ["jpeg420", "jpeg444", "png"])
def test_damaged_files_fail_for_every_window_or_none(tree_files, fmt):
    rng = np.random.default_rng(len(fmt))
    files = []
    for path, _ in tree_files[::25]:
        img = Image.open(path).convert("RGB")
        buf = io.BytesIO()
        if fmt == "png":
            img.save(buf, "PNG")
        else:
            img.save(buf, "JPEG", quality=90, subsampling=2 if fmt == "jpeg420" else 0)
        files += damaged(buf.getvalue(), rng, 12, 20)
    whole = [outcome(decode_pipe([[f]]))[0] == "ok" for f in files]
    assert 0 < sum(whole) < len(files)  # some damage is detected, some is not
    for seed in range(1, 7):  # six windows per file
        p = decode_pipe([[f] for f in files], op="image_random_crop", seed=seed)
        for k, f in enumerate(files):
            assert (outcome(p)[0] == "ok") == whole[k], (k, seed)


def test_damaged_files_in_a_folder_fail_in_every_epoch(tmp_path, tree_files):
    """Read by name, the good files are remembered as whole after the first epoch and later
    epochs decode only their windows; the damaged ones fail in every epoch, as in a whole
    decode, whatever the window."""
    rng = np.random.default_rng(7)
    img = Image.open(tree_files[3][0]).convert("RGB")
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=90)
    files = damaged(buf.getvalue(), rng, 10, 30) + [buf.getvalue()] * 4
    for k, f in enumerate(files):
        (tmp_path / f"{k:03d}.jpg").write_bytes(f)
    whole = [outcome(decode_pipe([[f]]))[0] == "ok" for f in files]
    assert 4 < sum(whole) < len(files)

    @pipeline_def(batch_size=1, num_threads=2, device_id=None, seed=3, prefetch_queue_depth=2)
    def pipe():
        jpegs, _ = fn.readers.file(files=[str(tmp_path / f"{k:03d}.jpg")
                                          for k in range(len(files))], name="Reader")
        return fn.decoders.image_random_crop(jpegs, output_type=types.RGB)

    p = pipe()
    p.build()
    for epoch in range(3):
        got = [outcome(p)[0] == "ok" for _ in files]
        assert got == whole, epoch
