#!/usr/bin/python3
"""Make sluice's image-decoder test set:  /usr/bin/python3 tests/data/make_images.py OUTDIR

Small crops (7..300 px a side, odd sizes included) of a few real wallpaper photos from Debian's
wallpaper packages (plasma-workspace-wallpapers, mate-backgrounds, ukui-wallpapers), picked
from the sorted list of photos with a fixed seed, written as:

  JPEG  every chroma subsampling (4:4:4, 4:2:2, 4:2:0 by PIL; 4:4:0 and 4:1:1 by cjpeg from
        libjpeg-turbo-progs), odd sizes, progressive, grayscale (also sampled 2x2 and 1x4 by
        cjpeg), CMYK (Adobe), restart intervals (cjpeg), optimized Huffman tables, qualities
        10..100
  PNG   RGB, RGBA, palette (8-bit, 4-bit, with tRNS), 1-bit, L, LA, 16-bit gray, 16-bit RGB and
        RGBA (OpenCV), Adam7-interlaced RGB and L (written by the small encoder below, because
        PIL 9.4 cannot write interlaced PNGs)
  bad   a truncated JPEG, a JPEG with 2 KiB of its entropy-coded data overwritten by random bytes,
        a PNG with an IDAT byte flipped (CRC error), a truncated PNG, empty files, text named .jpg

For every good image NAME.EXT there is a reference decode made independently of sluice:
  NAME.EXT.rgb.ppm  (P6)  PIL  Image.open(f).convert('RGB')          (alpha dropped)
  NAME.EXT.gray.pgm (P5)  JPEG: PIL draft('L') = libjpeg's grayscale output (the Y channel);
                          PNG:  PIL convert('L')  (Pillow luma, (R*19595+G*38470+B*7471+0x8000)>>16)
  Exceptions, computed in NumPy because PIL does not do what sluice does:
    16-bit PNGs  8-bit value = round(v*255/65535) of the uint16 array written; gray = Pillow luma
                 of those 8-bit RGB values (16-bit gray: the rounded value itself)
    CMYK JPEG    rgb = PIL's convert('RGB') (R = 255-K - MULDIV255(C, 255-K) on the Adobe-inverted
                 samples); gray = Pillow luma of that RGB (libjpeg cannot output gray from CMYK)

manifest.txt lists every image file with its class:
  exact    decode must equal the reference bit for bit (YCbCr/gray JPEG, 8-bit and sub-8-bit PNG;
           assumes libjpeg-turbo with its defaults: islow IDCT, fancy upsampling)
  tol1     max |decode - reference| <= 1 (none at present: CMYK and 16-bit PNG references are
           computed with the same formulas sluice documents and must match exactly)
  corrupt  decode must fail with an error (PIL's load() raises on each of them)

Deterministic (fixed seed, sorted inputs), needs cjpeg for 4:4:0, 4:1:1 and restart markers
(skipped, and said so in the summary line, when it is missing). Prints one summary line.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import warnings
import zlib

import cv2
import numpy as np
from PIL import Image

SEED = 20240611
# convert() of a palette image with tRNS warns; dropping alpha is what we want
warnings.filterwarnings("ignore", message="Palette images with Transparency")
PHOTO_DIRS = ("/usr/share/wallpapers", "/usr/share/backgrounds")


def list_photos():
    """Sorted JPEG wallpapers at least 1000 px a side (screenshots/thumbnails left out)."""
    out = []
    for d in PHOTO_DIRS:
        for root, _, files in os.walk(d):
            for f in files:
                if f.lower().endswith((".jpg", ".jpeg")):
                    out.append(os.path.join(root, f))
    out.sort()
    good = []
    for p in out:
        try:
            with Image.open(p) as im:
                if min(im.size) >= 1000 and im.mode == "RGB":
                    good.append(p)
        except OSError:
            pass
    return good


def load_small(path, target=(400, 300)):
    """Decode a photo at a reduced DCT scale (fast) and return an RGB uint8 array."""
    with Image.open(path) as im:
        im.draft("RGB", target)
        return np.asarray(im.convert("RGB"))


class Crops:
    def __init__(self, rng, photos):
        self.rng = rng
        self.photos = photos

    def rgb(self, w, h):
        """A random crop of a random photo, resized to w x h (uint8 HxWx3)."""
        src = self.photos[self.rng.integers(len(self.photos))]
        H, W = src.shape[:2]
        # crop with the target aspect, 40..100% of the largest such crop
        scale = self.rng.uniform(0.4, 1.0)
        cw = min(W, H * w / h) * scale
        ch = cw * h / w
        cw, ch = max(1, int(round(cw))), max(1, int(round(ch)))
        x = int(self.rng.integers(0, W - cw + 1))
        y = int(self.rng.integers(0, H - ch + 1))
        im = Image.fromarray(src[y:y + ch, x:x + cw])
        return np.asarray(im.resize((w, h), Image.LANCZOS))


def write_pnm(path, arr):
    arr = np.ascontiguousarray(arr, dtype=np.uint8)
    if arr.ndim == 2:
        hdr = b"P5\n%d %d\n255\n" % (arr.shape[1], arr.shape[0])
    else:
        assert arr.shape[2] == 3
        hdr = b"P6\n%d %d\n255\n" % (arr.shape[1], arr.shape[0])
    with open(path, "wb") as f:
        f.write(hdr)
        f.write(arr.tobytes())


def luma(rgb):
    """Pillow's RGB -> L: (R*19595 + G*38470 + B*7471 + 0x8000) >> 16."""
    r = rgb.astype(np.uint32)
    return ((r[..., 0] * 19595 + r[..., 1] * 38470 + r[..., 2] * 7471 + 0x8000) >> 16).astype(np.uint8)


def to8(v16):
    """sluice's 16 -> 8 bit: round(v*255/65535) (= round(v/257), never a tie)."""
    return np.round(v16.astype(np.float64) * 255.0 / 65535.0).astype(np.uint8)


# ---------------------------------------------------------------- PNG writer (Adam7)
ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


def _filter_rows(sub, bpp):
    """Filter each row, cycling through filter types 0..4 so the decoder meets all of them."""
    h = sub.shape[0]
    rows = sub.reshape(h, -1).astype(np.int16)
    out = bytearray()
    prior = np.zeros_like(rows[0])
    for i in range(h):
        raw = rows[i]
        left = np.concatenate([np.zeros(bpp, np.int16), raw[:-bpp]])
        upleft = np.concatenate([np.zeros(bpp, np.int16), prior[:-bpp]])
        ft = i % 5
        if ft == 0:
            f = raw
        elif ft == 1:
            f = raw - left
        elif ft == 2:
            f = raw - prior
        elif ft == 3:
            f = raw - ((left + prior) >> 1)
        else:
            p = left + prior - upleft
            pa, pb, pc = np.abs(p - left), np.abs(p - prior), np.abs(p - upleft)
            pred = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prior, upleft))
            f = raw - pred
        out.append(ft)
        out += (f & 0xFF).astype(np.uint8).tobytes()
        prior = raw
    return bytes(out)


def _chunk(tag, data):
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def write_png_adam7(path, arr):
    """8-bit gray (HxW) or RGB (HxWx3) PNG, interlace method 1 (Adam7)."""
    h, w = arr.shape[:2]
    ctype, bpp = (0, 1) if arr.ndim == 2 else (2, 3)
    raw = bytearray()
    for xs, ys, dx, dy in ADAM7:
        sub = arr[ys::dy, xs::dx]
        if sub.shape[0] and sub.shape[1]:
            raw += _filter_rows(sub, bpp)
    data = b"\x89PNG\r\n\x1a\n"
    data += _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, ctype, 0, 0, 1))
    data += _chunk(b"IDAT", zlib.compress(bytes(raw), 9))
    data += _chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(data)


# ---------------------------------------------------------------- main
def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_images.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(SEED)
    photos = list_photos()
    if len(photos) < 4:
        sys.exit("make_images.py: need wallpaper photos under %s" % " ".join(PHOTO_DIRS))
    pick = sorted(rng.choice(len(photos), size=6, replace=False))
    crops = Crops(rng, [load_small(photos[i]) for i in pick])
    cjpeg = shutil.which("cjpeg")
    tmp = tempfile.mkdtemp(prefix="sluice_imgs_")
    manifest = []  # (file, class)
    skipped = []
    refs = {}  # file -> (rgb, gray) when not taken from PIL

    def path(name):
        return os.path.join(out, name)

    # ---- JPEG by PIL
    def pil_jpeg(name, w, h, mode="RGB", **kw):
        a = crops.rgb(w, h)
        im = Image.fromarray(a)
        if mode == "L":
            im = im.convert("L")
        im.save(path(name), "JPEG", **kw)
        manifest.append((name, "exact"))

    def cjpeg_jpeg(name, w, h, args, gray=False):
        a = crops.rgb(w, h)  # drawn even when skipped, so the other files do not change
        if not cjpeg:
            skipped.append(name)
            return
        src = os.path.join(tmp, "in.ppm")
        write_pnm(src, luma(a) if gray else a)
        subprocess.run([cjpeg] + args + ["-outfile", path(name), src], check=True)
        manifest.append((name, "exact"))

    pil_jpeg("jpeg_444_q90.jpg", 128, 96, quality=90, subsampling=0)
    pil_jpeg("jpeg_444_odd_131x97.jpg", 131, 97, quality=88, subsampling=0)
    pil_jpeg("jpeg_422_q90.jpg", 160, 112, quality=90, subsampling=1)
    pil_jpeg("jpeg_422_odd_97x131.jpg", 97, 131, quality=85, subsampling=1)
    pil_jpeg("jpeg_420_q90.jpg", 208, 144, quality=90, subsampling=2)
    pil_jpeg("jpeg_420_odd_97x131.jpg", 97, 131, quality=90, subsampling=2)
    pil_jpeg("jpeg_420_odd_301x67.jpg", 301, 67, quality=80, subsampling=2)
    pil_jpeg("jpeg_420_tiny_13x7.jpg", 13, 7, quality=90, subsampling=2)
    cjpeg_jpeg("jpeg_440_q90.jpg", 144, 112, ["-quality", "90", "-sample", "1x2"])
    cjpeg_jpeg("jpeg_440_odd_101x75.jpg", 101, 75, ["-quality", "85", "-sample", "1x2"])
    cjpeg_jpeg("jpeg_411_q90.jpg", 160, 96, ["-quality", "90", "-sample", "4x1"])
    cjpeg_jpeg("jpeg_411_odd_75x101.jpg", 75, 101, ["-quality", "85", "-sample", "4x1"])
    pil_jpeg("jpeg_progressive_420.jpg", 240, 180, quality=90, subsampling=2, progressive=True)
    pil_jpeg("jpeg_progressive_444_odd.jpg", 123, 89, quality=92, subsampling=0, progressive=True)
    pil_jpeg("jpeg_gray.jpg", 160, 120, mode="L", quality=90)
    pil_jpeg("jpeg_gray_progressive_odd.jpg", 99, 77, mode="L", quality=85, progressive=True)
    cjpeg_jpeg("jpeg_restart_rows_420.jpg", 129, 97, ["-quality", "90", "-sample", "2x2", "-restart", "1"])
    cjpeg_jpeg("jpeg_restart_mcu_422.jpg", 120, 88, ["-quality", "90", "-sample", "2x1", "-restart", "1B"])
    cjpeg_jpeg("jpeg_restart_gray.jpg", 96, 72, ["-quality", "90", "-grayscale", "-restart", "2B"], gray=True)
    # 9 x 7 MCUs, a marker every 5: the last interval is short (the device's decode by intervals)
    cjpeg_jpeg("jpeg_restart_5mcu_420.jpg", 130, 100, ["-quality", "85", "-sample", "2x2", "-restart", "5B"])
    # one component sampled 1x4 with a marker every 5 MCUs: the MCU index's iMCU row and MCU row
    # in it (4 a row, 2 in the last) in the decode by intervals
    cjpeg_jpeg("jpeg_restart_gray_1x4_odd_70x45.jpg", 70, 45, ["-quality", "90", "-grayscale", "-sample", "1x4", "-restart", "5B"], gray=True)
    # a restart interval longer than the scan (100 MCUs of 12): no marker is ever checked
    cjpeg_jpeg("jpeg_restart_over_420.jpg", 64, 48, ["-quality", "90", "-sample", "2x2", "-restart", "100B"])
    # one component sampled 2x2 / 1x4: a non-interleaved scan whose iMCU rows hold 2 / 4 rows of
    # blocks, the last one fewer (odd sizes): the MCU walk's v_samp and last_row_height
    cjpeg_jpeg("jpeg_gray_2x2_odd_83x61.jpg", 83, 61, ["-quality", "88", "-grayscale", "-sample", "2x2"], gray=True)
    cjpeg_jpeg("jpeg_gray_1x4_odd_70x45.jpg", 70, 45, ["-quality", "90", "-grayscale", "-sample", "1x4"], gray=True)
    pil_jpeg("jpeg_optimized_420.jpg", 180, 120, quality=90, subsampling=2, optimize=True)
    pil_jpeg("jpeg_q10_420.jpg", 160, 120, quality=10, subsampling=2)
    pil_jpeg("jpeg_q50_422.jpg", 160, 120, quality=50, subsampling=1)
    pil_jpeg("jpeg_q75_420.jpg", 256, 192, quality=75, subsampling=2)
    pil_jpeg("jpeg_q100_444.jpg", 128, 128, quality=100, subsampling=0)

    # CMYK with a real K channel (PIL's own RGB->CMYK leaves K = 0)
    a = crops.rgb(150, 100).astype(np.float64)
    k = 255.0 - a.max(axis=2)
    denom = np.maximum(255.0 - k, 1e-9)[..., None]
    cmy = np.where(k[..., None] < 255, (255.0 - a - k[..., None]) / denom * 255.0, 0)
    cmyk = np.dstack([cmy, k]).round().clip(0, 255).astype(np.uint8)
    Image.fromarray(cmyk, "CMYK").save(path("jpeg_cmyk.jpg"), "JPEG", quality=90)
    manifest.append(("jpeg_cmyk.jpg", "exact"))
    with Image.open(path("jpeg_cmyk.jpg")) as im:
        assert im.mode == "CMYK"
        rgb = np.asarray(im.convert("RGB"))
    refs["jpeg_cmyk.jpg"] = (rgb, luma(rgb))

    # ---- PNG
    def pil_png(name, im, **kw):
        im.save(path(name), "PNG", **kw)
        manifest.append((name, "exact"))

    a = crops.rgb(160, 120)
    pil_png("png_rgb.png", Image.fromarray(a))
    pil_png("png_rgb_odd_97x131.png", Image.fromarray(crops.rgb(97, 131)))
    a = crops.rgb(128, 96)
    yy, xx = np.mgrid[0:96, 0:128]
    alpha = ((xx * 2 + yy) * 255 // (2 * 127 + 95)).astype(np.uint8)
    pil_png("png_rgba.png", Image.fromarray(np.dstack([a, alpha]), "RGBA"))
    pil_png("png_palette.png", Image.fromarray(crops.rgb(120, 90)).quantize(colors=200, dither=Image.FLOYDSTEINBERG))
    p = Image.fromarray(crops.rgb(111, 83)).quantize(colors=64, dither=Image.NONE)
    trns = bytes(int(v) for v in np.linspace(0, 255, 64).astype(np.uint8))
    pil_png("png_palette_trns.png", p, transparency=trns)
    p4 = Image.fromarray(crops.rgb(90, 70)).quantize(colors=16)
    pil_png("png_palette_4bit.png", p4, bits=4)
    pil_png("png_1bit.png", Image.fromarray(crops.rgb(77, 61)).convert("1"))
    pil_png("png_gray.png", Image.fromarray(crops.rgb(140, 100)).convert("L"))
    g = Image.fromarray(crops.rgb(100, 80)).convert("L")
    ga = np.dstack([np.asarray(g), 255 - np.asarray(g) // 2])
    pil_png("png_gray_alpha.png", Image.fromarray(ga, "LA"))
    write_png_adam7(path("png_interlaced_rgb.png"), crops.rgb(103, 77))
    manifest.append(("png_interlaced_rgb.png", "exact"))
    write_png_adam7(path("png_interlaced_gray.png"), luma(crops.rgb(64, 64)))
    manifest.append(("png_interlaced_gray.png", "exact"))

    # 16-bit: smooth photo values * 257 plus noise in the low bits, so rounding matters
    def photo16(w, h):
        v = crops.rgb(w, h).astype(np.float64) * 257.0 + rng.normal(0, 90, (h, w, 3))
        return v.round().clip(0, 65535).astype(np.uint16)

    v = photo16(120, 90)[..., 1]
    cv2.imwrite(path("png_gray16.png"), v)
    g8 = to8(v)
    refs["png_gray16.png"] = (np.dstack([g8, g8, g8]), g8)
    manifest.append(("png_gray16.png", "exact"))
    v = photo16(117, 85)
    cv2.imwrite(path("png_rgb16.png"), v[..., ::-1])  # OpenCV writes BGR
    rgb8 = to8(v)
    refs["png_rgb16.png"] = (rgb8, luma(rgb8))
    manifest.append(("png_rgb16.png", "exact"))
    v = photo16(64, 48)
    a16 = np.linspace(0, 65535, 64 * 48).reshape(48, 64).astype(np.uint16)
    cv2.imwrite(path("png_rgba16.png"), np.dstack([v[..., ::-1], a16]))
    rgb8 = to8(v)
    refs["png_rgba16.png"] = (rgb8, luma(rgb8))
    manifest.append(("png_rgba16.png", "exact"))

    # ---- references
    for name, _ in manifest:
        with Image.open(path(name)) as im:
            im.load()
            if name in refs:
                rgb, gray = refs[name]
            else:
                rgb = np.asarray(im.convert("RGB"))
                if im.format == "JPEG":
                    gray = None
                else:
                    gray = np.asarray(im.convert("L"))
        if gray is None:  # libjpeg's own grayscale output
            with Image.open(path(name)) as im:
                im.draft("L", im.size)
                if im.mode != "L":
                    raise SystemExit("make_images.py: draft('L') did not give L for %s" % name)
                assert im.size == rgb.shape[1::-1]
                gray = np.asarray(im)
        write_pnm(path(name + ".rgb.ppm"), rgb)
        write_pnm(path(name + ".gray.pgm"), gray)

    # ---- corrupt files
    def pil_fails(name):
        try:
            with Image.open(path(name)) as im:
                im.load()
        except Exception:
            return True
        return False

    def corrupt(name, data):
        with open(path(name), "wb") as f:
            f.write(data)
        if not pil_fails(name):
            raise SystemExit("make_images.py: PIL decodes corrupt file %s without error" % name)
        manifest.append((name, "corrupt"))

    buf = _encode_jpeg(Image.fromarray(crops.rgb(300, 200)), quality=92, subsampling=2)
    corrupt("corrupt_truncated.jpg", buf[: len(buf) * 6 // 10])
    # 2 KiB of random bytes in the middle; keep the first attempt libjpeg really rejects
    # (random data that only makes libjpeg warn "corrupt data" is not an error)
    mid = len(buf) // 2 - 1024
    for attempt in range(1000):
        r = np.random.default_rng([SEED, attempt])
        bad = buf[:mid] + r.integers(0, 256, 2048, dtype=np.uint8).tobytes() + buf[mid + 2048:]
        with open(path("corrupt_garbage.jpg"), "wb") as f:
            f.write(bad)
        if pil_fails("corrupt_garbage.jpg"):
            break
    else:
        raise SystemExit("make_images.py: no garbage JPEG that libjpeg rejects")
    manifest.append(("corrupt_garbage.jpg", "corrupt"))

    png = open(path("png_rgb.png"), "rb").read()
    idat = png.index(b"IDAT")
    ln = struct.unpack(">I", png[idat - 4:idat])[0]
    pos = idat + 4 + ln // 2
    corrupt("corrupt_crc.png", png[:pos] + bytes([png[pos] ^ 0x10]) + png[pos + 1:])
    corrupt("corrupt_truncated.png", png[: len(png) * 6 // 10])
    corrupt("empty.jpg", b"")
    corrupt("empty.png", b"")
    corrupt("x.jpg", b"this is not a JPEG file, just text\n" * 4)
    shutil.rmtree(tmp)

    with open(path("manifest.txt"), "w") as f:
        for name, cls in manifest:
            f.write("%s %s\n" % (name, cls))
    n = {c: sum(1 for _, k in manifest if k == c) for c in ("exact", "tol1", "corrupt")}
    msg = "make_images.py: %d files in %s (%d exact, %d tol1, %d corrupt)" % (
        len(manifest), out, n["exact"], n["tol1"], n["corrupt"])
    if skipped:
        msg += "; skipped (no cjpeg): " + " ".join(skipped)
    print(msg)


def _encode_jpeg(im, **kw):
    import io
    b = io.BytesIO()
    im.save(b, "JPEG", **kw)
    return b.getvalue()


if __name__ == "__main__":
    main()
