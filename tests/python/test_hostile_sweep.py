"""tests/python/test_hostile_sweep.py: damaged and odd files against Pillow (issue 15, point 3).

The C sweep (tests/c/test_sweep.c, under ASan+UBSan) checks that no input crashes, hangs or
takes memory past the limit; this one checks the pixels. Every good image of the test data
(make_images.py) is cut at many lengths, has bytes changed at many offsets (headers and data),
and gets header and chunk variants that keep it decodable (odd sizes, sampling factors, tables,
restart intervals, SOF types; PNG sizes, color types, depths, palettes, tRNS, chunk layout, and
changes to the filtered scanlines recompressed with the CRCs fixed): about 4,200 files. Each is
decoded by sluice (decoders.image, RGB and GRAY, batch 1) and by Pillow (LOAD_TRUNCATED_IMAGES
off, warnings recorded), and:

- both decode: sluice gives Pillow's pixels exactly (RGB: convert("RGB"); GRAY of a YCbCr or
  gray JPEG: libjpeg's Y, as draft("L") gives; otherwise convert("L")), except 16-bit PNGs, which
  sluice rounds where Pillow truncates (at most 1 apart; 16-bit gray exactly round(v / 257)). A
  palette index past the palette (an invalid PNG) is black in sluice, as in libpng, and a gray
  level in Pillow: those pixels must be black, every other one Pillow's;
- Pillow decodes without a word, sluice refuses: allowed only where the file is damaged and
  sluice says so on purpose. A JPEG: libjpeg itself (djpeg, the same libjpeg-turbo) reports it
  corrupt or truncated, and sluice fails with libjpeg's words: sluice turns the warnings that
  mean lost pixels (premature end of data segment, bad Huffman code...) into errors, where
  Pillow returns the image with gray or repeated blocks. A PNG: it breaks the specification
  before its image data ends (a wrong CRC, a zlib stream cut short or damaged, its Adler-32
  included, fewer scanlines than the header asks for, no PLTE for a palette image, more palette
  entries than the bit depth can index), which libspng checks and Pillow does not;
- Pillow refuses (an exception, or a warning), sluice decodes: allowed only where the damage
  lies after the last row, which sluice never reads: a JPEG that djpeg decodes to the very same
  pixels before failing at what follows (djpeg and Pillow read on to the EOI marker), a PNG
  whose chunks up to the last IDAT are valid;
- both refuse: fine.
"""
import io
import os
import shutil
import struct
import subprocess
import tempfile
import warnings
import zlib

import numpy as np
import pytest
from PIL import Image, ImageFile

import sluice
from sluice import fn, pipeline_def, types


# ---- decoding --------------------------------------------------------------------------------

def sluice_decode(files, color):
    """[("ok", HWC array) or ("fail", message)] for each file, one iteration each."""
    it = iter(files)

    @pipeline_def(batch_size=1, num_threads=2, device_id=None, prefetch_queue_depth=1, seed=1)
    def pipe():
        data = fn.external_source(source=lambda: [np.frombuffer(next(it), np.uint8)])
        return fn.decoders.image(data, output_type=color)

    p = pipe()
    p.build()
    out = []
    for _ in files:
        try:
            (o,) = p.run()
            out.append(("ok", np.array(o.at(0))))
        except sluice.SluiceError as e:
            assert isinstance(e, (sluice.CorruptDataError, sluice.UnsupportedError,
                                  sluice.InvalidArgumentError)), e
            assert e.operator == "decoders.image" and e.sample == 0, e
            out.append(("fail", str(e)))
    return out


def pillow_open(data):
    """("ok", image) when Pillow decodes without an exception or a warning, else ("fail",
    why)."""
    assert not ImageFile.LOAD_TRUNCATED_IMAGES
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            im = Image.open(io.BytesIO(data))
            im.load()
        except Exception as e:  # noqa: BLE001 - any failure of Pillow's is a verdict
            return "fail", "%s: %s" % (type(e).__name__, e)
    if caught:
        return "fail", "warning: %s" % caught[0].message
    return "ok", im


def to8(v):
    return ((v.astype(np.int64) + 128) // 257).astype(np.uint8)


def luma(rgb):
    r, g, b = (rgb[..., k].astype(np.uint32) for k in range(3))
    return ((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16).astype(np.uint8)


def pillow_pixels(data, im, color):
    """Pillow's decode as sluice defines its output (HWC), and the tolerance."""
    sixteen = data[:4] == b"\x89PNG" and data[24] == 16
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convert() of a palette with tRNS warns
        if im.mode in ("I", "I;16", "I;16B"):  # 16-bit gray: sluice rounds each sample
            g = to8(np.asarray(im))
            return (np.dstack([g, g, g]) if color == types.RGB else g[..., None]), 0
        if color == types.GRAY and im.format == "JPEG" and im.mode in ("L", "RGB"):
            again = Image.open(io.BytesIO(data))
            again.draft("L", again.size)
            assert again.mode == "L"
            return np.asarray(again)[..., None], 0
        rgb = np.asarray(im.convert("RGB"))
    if color == types.RGB:
        return rgb, 1 if sixteen else 0
    return (luma(rgb) if im.mode != "L" else np.asarray(im))[..., None], 1 if sixteen else 0


# ---- what libjpeg and the PNG specification say ------------------------------------------------

def djpeg(data, gray):
    """libjpeg-turbo's own decoder (djpeg, the library sluice and Pillow link): (complains,
    pixels), complains when it printed a warning or an error, pixels (HWC) when it wrote the
    whole image (it writes rows as it goes, so an error after the last row still leaves them)."""
    exe = shutil.which("djpeg")
    assert exe, "djpeg (Debian's libjpeg-turbo-progs, scripts/setup.sh) is needed"
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.pnm")
        r = subprocess.run([exe, "-pnm", "-outfile", out] + (["-grayscale"] if gray else []),
                           input=data, capture_output=True)
        pixels = None
        if os.path.exists(out):
            with open(out, "rb") as f:
                pnm = f.read()
            head = pnm.split(maxsplit=4)
            if len(head) == 5 and head[0] in (b"P5", b"P6"):
                c = 3 if head[0] == b"P6" else 1
                w, h = int(head[1]), int(head[2])
                body = head[4]
                if len(body) == w * h * c:
                    pixels = np.frombuffer(body, np.uint8).reshape(h, w, c)
    return r.returncode != 0 or bool(r.stderr), pixels


def png_chunks(data):
    """[(type, payload, crc_ok)] up to the end or the first chunk that does not fit."""
    out, at = [], 8
    while at + 12 <= len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        if at + 12 + n > len(data):
            break
        payload = data[at + 8:at + 8 + n]
        crc, = struct.unpack(">I", data[at + 8 + n:at + 12 + n])
        out.append((kind, payload, crc == zlib.crc32(kind + payload)))
        at += 12 + n
    return out


def png_raw_size(w, h, depth, ctype, interlace):
    """Bytes of the filtered scanlines the header asks for (a filter byte per row)."""
    bits = depth * {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype]
    passes = ([(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
               (0, 1, 1, 2)] if interlace else [(0, 0, 1, 1)])
    total = 0
    for x0, y0, dx, dy in passes:
        pw, ph = (w - x0 + dx - 1) // dx, (h - y0 + dy - 1) // dy
        if pw > 0 and ph > 0:
            total += ph * (1 + (pw * bits + 7) // 8)
    return total


def png_invalid(data):
    """Why the PNG breaks the specification up to the end of its image data (None when it
    does not): a wrong CRC; image data that is not one whole zlib stream (cut short, bad
    Adler-32, bad deflate data) or that holds fewer scanlines than the header asks for; a
    palette image without PLTE, or a PLTE of more entries than its bit depth can index."""
    chunks = png_chunks(data)
    kinds = [kind for kind, _, _ in chunks]
    if not chunks or kinds[0] != b"IHDR" or b"IDAT" not in kinds:
        return "no IHDR or IDAT"
    last = len(kinds) - 1 - kinds[::-1].index(b"IDAT")
    if not all(ok for _, _, ok in chunks[:last + 1]):
        return "a wrong CRC"
    w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1][:13])
    if ctype == 3 and b"PLTE" not in kinds:
        return "no PLTE"
    if b"PLTE" in kinds and ctype == 3 and len(chunks[kinds.index(b"PLTE")][1]) // 3 > 1 << depth:
        return "more palette entries than the bit depth can index"
    z = zlib.decompressobj()
    try:
        raw = z.decompress(b"".join(p for kind, p, _ in chunks if kind == b"IDAT"))
    except zlib.error:
        return "bad zlib data"
    if not z.eof:
        return "zlib stream cut short"
    if len(raw) < png_raw_size(w, h, depth, ctype, interlace):
        return "fewer scanlines than the header asks for"
    return None


def palette_in_range(data, im):
    """For a palette PNG: the mask of pixels whose index is in the palette (an index past it
    makes the file invalid; sluice gives black there, as libpng does, Pillow a gray level);
    None for other images."""
    if im.mode != "P" or data[:4] != b"\x89PNG":
        return None
    plte = [p for kind, p, _ in png_chunks(data) if kind == b"PLTE"]
    return np.asarray(im) < len(plte[0]) // 3 if plte else None


# ---- the inputs ------------------------------------------------------------------------------

def cuts(data, n):
    return [("cut at %d" % k, data[:k])
            for k in sorted({int(len(data) * f) for f in np.linspace(0.01, 0.999, n)})]


def changes(data, rng, n, start):
    """n one-byte changes at or after `start` (bit flip, inverted, 0x00, 0xff)."""
    out = []
    for i in range(n):
        b = bytearray(data)
        at = int(rng.integers(start, len(b)))
        old = b[at]
        b[at] = [old ^ (1 << int(rng.integers(0, 8))), old ^ 0xFF, 0, 0xFF][i % 4]
        if b[at] != old:
            out.append(("byte %d: %02x -> %02x" % (at, old, b[at]), bytes(b)))
    return out


def jpeg_segments(data):
    """{marker: [offset, ...]} of the segments before the first scan's data, and where the
    headers end (after the first SOS)."""
    segs, at = {}, 2
    while at + 4 <= len(data) and data[at] == 0xFF:
        m = data[at + 1]
        n, = struct.unpack(">H", data[at + 2:at + 4])
        segs.setdefault(m, []).append(at)
        at += 2 + n
        if m == 0xDA:
            break
    return segs, at


def jpeg_variants(data):
    segs, _ = jpeg_segments(data)
    sof = min(segs[m][0] for m in segs if 0xC0 <= m <= 0xCF and m not in (0xC4, 0xC8, 0xCC))
    h, w = struct.unpack(">HH", data[sof + 5:sof + 9])
    nf = data[sof + 9]
    out = []

    def patch(at, b, what):
        out.append((what, data[:at] + b + data[at + len(b):]))

    def insert(at, b, what):
        out.append((what, data[:at] + b + data[at:]))

    for nw, nh in [(1, 1), (w, 1), (1, h), (w // 2, h // 2), (w - 1, h - 1), (w + 1, h + 1),
                   (w, h + 16), (w + 16, h)]:
        patch(sof + 5, struct.pack(">HH", nh, nw), "SOF %dx%d (was %dx%d)" % (nw, nh, w, h))
    for k in range(min(nf, 2)):
        for s in (0x11, 0x12, 0x21, 0x22, 0x41, 0x14):
            if s != data[sof + 11 + 3 * k]:
                patch(sof + 11 + 3 * k, bytes([s]), "component %d sampling %x" % (k, s))
        patch(sof + 12 + 3 * k, bytes([data[sof + 12 + 3 * k] ^ 1]),
              "component %d other quantisation table" % k)
    for t in (0xC1, 0xC2, 0xC0, 0xC9):
        if t != data[sof + 1]:
            patch(sof + 1, bytes([t]), "SOF%d" % (t & 15))
    dqt = segs[0xDB][0]
    patch(dqt + 5, bytes(range(1, 65)), "DQT 1..64")
    patch(dqt + 5, b"\x01" * 64, "DQT of ones")
    dht = segs[0xC4][0]
    n, = struct.unpack(">H", data[dht + 2:dht + 4])
    out.append(("first DHT removed", data[:dht] + data[dht + 2 + n:]))
    for interval in (0, 1, 65535):
        if 0xDD not in segs:
            insert(sof, b"\xff\xdd\x00\x04" + struct.pack(">H", interval), "DRI %d" % interval)
    sos = segs[0xDA][0]
    ns = data[sos + 4]
    ss = sos + 5 + 2 * ns
    for spectral in (b"\x00\x3f\x00", b"\x01\x3f\x00", b"\x00\x00\x00", b"\x00\x3f\x11"):
        if spectral != data[ss:ss + 3]:
            patch(ss, spectral, "SOS Ss/Se/AhAl %s" % spectral.hex())
    insert(2, b"\xff\xfe\xea\x62" + b"c" * 60000, "COM of 60000 bytes")
    insert(2, b"\xff\xe1\x00\x02", "empty APP1")
    insert(sof, b"\xff" * 100, "fill bytes before SOF")
    return out


def png_build(chunks):
    return b"\x89PNG\r\n\x1a\n" + b"".join(
        struct.pack(">I", len(p)) + k + p + struct.pack(">I", zlib.crc32(k + p)) for k, p in chunks)


def png_variants(data, rng):
    chunks = [(k, p) for k, p, _ in png_chunks(data)]
    kinds = [k for k, _ in chunks]
    ihdr = chunks[0][1]
    w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", ihdr)
    idat = b"".join(p for k, p in chunks if k == b"IDAT")
    head = [c for c in chunks if c[0] not in (b"IDAT", b"IEND")]
    out = []

    def with_ihdr(what, **f):
        v = dict(w=w, h=h, depth=depth, ctype=ctype, interlace=interlace)
        v.update(f)
        new = struct.pack(">IIBBBBB", v["w"], v["h"], v["depth"], v["ctype"], 0, 0,
                          v["interlace"])
        out.append((what, png_build([(b"IHDR", new)] + chunks[1:])))

    with_ihdr("height %d" % (h - 1), h=h - 1)
    with_ihdr("height 1", h=1)
    with_ihdr("width %d" % (w - 1), w=w - 1)
    for d in (1, 2, 4, 8, 16):
        if d != depth:
            with_ihdr("bit depth %d" % d, depth=d)
    for c in (0, 2, 3, 4, 6):
        if c != ctype:
            with_ihdr("color type %d" % c, ctype=c)
    with_ihdr("interlace %d" % (1 - interlace), interlace=1 - interlace)
    # the image data: one IDAT per byte, empty IDATs between, garbage after the zlib stream
    out.append(("IDAT in 1-byte chunks", png_build(
        head + [(b"IDAT", idat[i:i + 1]) for i in range(len(idat))] + [(b"IEND", b"")])))
    out.append(("empty IDATs between", png_build(
        head + [(b"IDAT", idat[:len(idat) // 2]), (b"IDAT", b""), (b"IDAT", idat[len(idat) // 2:]),
                (b"IEND", b"")])))
    out.append(("bytes after the zlib stream", png_build(
        head + [(b"IDAT", idat + b"\x00" * 100), (b"IEND", b"")])))
    # ancillary chunks, valid and odd
    for extra in [(b"gAMA", struct.pack(">I", 45455)), (b"sRGB", b"\x00"),
                  (b"tEXt", b"Comment\x00hello"), (b"zTXt", b"Comment\x00\x00" +
                                                   zlib.compress(b"x" * 10000)),
                  (b"prVt", b"private"), (b"tIME", b"\x07\xe8\x01\x01\x00\x00\x00")]:
        out.append(("%s chunk" % extra[0].decode(), png_build(chunks[:1] + [extra] + chunks[1:])))
    # after the image data: a damaged chunk, or no IEND
    out.append(("bad CRC after the image data", png_build(chunks[:-1]) +
                struct.pack(">I4s", 3, b"tEXt") + b"a\x00b\x00\x00\x00\x00" +
                png_build([(b"IEND", b"")])[8:]))
    out.append(("no IEND", png_build(chunks[:-1])))
    # palettes
    if b"PLTE" in kinds:
        k = kinds.index(b"PLTE")
        plte = chunks[k][1]
        for entries in (2, len(plte) // 3 - 1, 256):
            pal = (plte * 256)[:3 * entries]
            out.append(("PLTE of %d entries" % entries,
                        png_build(chunks[:k] + [(b"PLTE", pal)] + chunks[k + 1:])))
        out.append(("tRNS longer than the palette", png_build(
            [c for c in chunks[:k + 1] if c[0] != b"tRNS"] + [(b"tRNS", b"\x80" * 256)] +
            [c for c in chunks[k + 1:] if c[0] != b"tRNS"])))
    elif ctype in (0, 2):
        out.append(("suggested PLTE", png_build(chunks[:1] + [(b"PLTE", bytes(range(256)) * 3)] +
                                                chunks[1:])))
        key = b"\x00\x05" * (1 if ctype == 0 else 3) if depth == 16 else (
            b"\x00" + bytes([min(5, (1 << depth) - 1)])) * (1 if ctype == 0 else 3)
        out.append(("tRNS key", png_build(chunks[:1] + [(b"tRNS", key)] + chunks[1:])))
    # the filtered scanlines changed, recompressed, CRCs right: a valid PNG of other pixels
    raw = zlib.decompress(idat)
    for i in range(12):
        b = bytearray(raw)
        for _ in range(1 + i % 3):
            at = int(rng.integers(0, len(b)))
            b[at] = int(rng.integers(0, 256)) if i % 4 else (b[at] + 1) % 5
        out.append(("scanline bytes changed (%d)" % i,
                    png_build(head + [(b"IDAT", zlib.compress(bytes(b))), (b"IEND", b"")])))
    b = bytearray(raw)
    b[0] = 5
    out.append(("filter type 5", png_build(head + [(b"IDAT", zlib.compress(bytes(b))),
                                                   (b"IEND", b"")])))
    out.append(("scanlines cut short", png_build(
        head + [(b"IDAT", zlib.compress(raw[:len(raw) // 2])), (b"IEND", b"")])))
    return out


def sweep_inputs(testdata):
    rng = np.random.default_rng(15)
    out = []
    for line in open(testdata / "manifest.txt"):
        name, kind = line.split()
        if kind == "corrupt":
            continue
        data = (testdata / name).read_bytes()
        if name.endswith(".jpg"):
            variants = jpeg_variants(data)
            start = jpeg_segments(data)[1]
        else:
            variants = png_variants(data, rng)
            start = 8 + 25
        found = cuts(data, 24) + changes(data, rng, 24, 2) + changes(data, rng, 24, start)
        out += [("%s: %s" % (name, what), d) for what, d in found + variants]
    return out


# ---- the sweep -----------------------------------------------------------------------------

def judge(name, data, verdict, out, color):
    """(case, problem): which of the cases in the docstring this is, and what is wrong (None
    when nothing is)."""
    p_verdict, im = pillow_open(data)
    jpeg = data[:2] == b"\xff\xd8"
    if p_verdict == "ok" and verdict == "ok":
        ref, tol = pillow_pixels(data, im, color)
        if out.shape != ref.shape:
            return "both decode", "shape %s, Pillow's %s" % (out.shape, ref.shape)
        inside = palette_in_range(data, im)
        case = "both decode, same pixels"
        if inside is not None and not inside.all():
            if out[~inside].any():
                return case, "palette indices past the palette: not black"
            out, ref, case = out[inside], ref[inside], "both decode a palette index past PLTE"
        diff = int(np.abs(out.astype(np.int16) - ref).max()) if out.size else 0
        return case, None if diff <= tol else "pixels differ from Pillow's by up to %d" % diff
    if p_verdict == "ok" and jpeg:
        complains, _ = djpeg(data, color == types.GRAY)
        ok = complains and ("corrupt JPEG data" in out or "premature end" in out)
        return "sluice refuses a JPEG that libjpeg reports damaged", (
            None if ok else "refused, Pillow and djpeg decode it: " + out)
    if p_verdict == "ok":
        why = png_invalid(data)
        return "sluice refuses a PNG that breaks the specification", (
            None if why else "refused, Pillow decodes it: " + out)
    if verdict == "ok" and jpeg:
        _, pixels = djpeg(data, color == types.GRAY)
        if pixels is not None and pixels.shape[2] == 1 and out.shape[2] == 3:
            pixels = np.repeat(pixels, 3, axis=2)  # a gray JPEG: djpeg writes a PGM
        same = pixels is not None and pixels.shape == out.shape and np.array_equal(pixels, out)
        return "sluice decodes a JPEG damaged after its last row", (
            None if same else "decoded, Pillow refuses it and djpeg differs: " + im)
    if verdict == "ok":
        return "sluice decodes a PNG damaged after its image data", (
            None if png_invalid(data) is None else "decoded, Pillow refuses it: " + im)
    return "both refuse", None


@pytest.mark.parametrize("color", [types.RGB, types.GRAY])
def test_sweep_against_pillow(testdata, color):
    inputs = sweep_inputs(testdata)
    got = sluice_decode([d for _, d in inputs], color)
    tally, problems = {}, []
    for (name, data), (verdict, out) in zip(inputs, got):
        case, problem = judge(name, data, verdict, out, color)
        tally[case] = tally.get(case, 0) + 1
        if problem:
            problems.append("%s: %s" % (name, problem))
    print("\n%s: %d inputs: %s" % (color, len(inputs), tally))
    assert not problems, "\n".join(problems)
    assert tally["both decode, same pixels"] > 800  # the comparison is not an empty one
    assert tally["both refuse"] > 1000
