#!/usr/bin/python3
"""Make the ImageNet-like benchmark dataset described in /work/shared/BENCHMARK.md (docs: "Data"):

    /usr/bin/python3 bench/make_dataset.py --out DIR [--n 2000] [--seed 0] [--workers 2]

Sources: every JPEG/PNG photo in Debian's wallpaper packages (plasma-workspace-wallpapers,
mate-backgrounds, ukui-wallpapers) under /usr/share/wallpapers and /usr/share/backgrounds, at
least 1000 px on the shorter side (the 400x250 screenshots and phone-size variants are left out),
byte-identical copies removed (SHA-256), sorted by path; transparent pixels composited on white;
sources are first reduced to at most 2560 px on the longer side (JPEG: DCT scaling).

Each of the N images (DIR/class_XX/img_NNNNNN.jpg, image i in class i % 10) is drawn from its own
generator numpy.random.default_rng([seed, i]), so the dataset does not depend on --workers:
  - a source photo, uniformly;
  - a random crop: area 10..100% of the photo, aspect ratio log-uniform in [3/4, 4/3]
    (torchvision RandomResizedCrop's sampling, 10 tries, then the centred largest crop);
  - resized (Lanczos) so the shorter side is uniform in [300, 500] px (longer side <= 800);
  - photographic grain: Gaussian noise at 1, 2 and 4 px scales (the coarser fields drawn at 1/2
    and 1/4 resolution, upsampled bilinearly and renormalised), each scale with the per-image
    sigma, uniform in [12, 36] levels (so the summed field has std sigma*sqrt(3)); a luminance
    field added to R, G and B alike, plus an independent field per channel at 0.25 of it (chroma);
  - JPEG quality uniform in [75, 95]; 4:2:0 (90%) or 4:4:4 (10%); progressive 2%;
    grayscale (mode L) 3%.
The grain makes these smooth wallpapers code like camera photos: the mean file is ~105 KiB at
~0.19 MP, like ImageNet (without it ~30 KiB, and every decode figure ~2x too optimistic).
DIR/file_list.txt lists "class_XX/img_NNNNNN.jpg LABEL" per image. At the end one line with the
count, mean KiB, mean MP, the mix of encodings and the time taken is printed.
"""
import argparse
import hashlib
import math
import os
import sys
import time
from multiprocessing import Pool

import numpy as np
from PIL import Image, ImageFile

# PIL encodes progressive JPEGs in one buffer of max(MAXBLOCK, w*h) bytes and fails ("Suspension
# not allowed here") when a grainy file is larger; 8 MiB holds any image made here.
ImageFile.MAXBLOCK = 8 << 20

PHOTO_DIRS = ("/usr/share/wallpapers", "/usr/share/backgrounds")
NUM_CLASSES = 10
MIN_SOURCE_SIDE = 1000
MAX_SOURCE_SIDE = 2560
GRAIN_WEIGHTS = (1.0, 1.0, 1.0)  # 1, 2, 4 px scales, in units of the per-image sigma
CHROMA_GRAIN = 0.25
SIGMA_RANGE = (12.0, 36.0)


def list_sources():
    paths = []
    for d in PHOTO_DIRS:
        for root, _, files in os.walk(d):
            paths += [os.path.join(root, f) for f in files
                      if f.lower().endswith((".jpg", ".jpeg", ".png"))]
    seen, out = set(), []
    for p in sorted(paths):
        try:
            with Image.open(p) as im:
                if min(im.size) < MIN_SOURCE_SIDE:
                    continue
        except OSError:
            continue
        with open(p, "rb") as f:
            h = hashlib.sha256(f.read()).digest()
        if h not in seen:
            seen.add(h)
            out.append(p)
    return out


def load_source(path):
    with Image.open(path) as im:
        if im.format == "JPEG":
            s = MAX_SOURCE_SIDE / max(im.size)
            im.draft("RGB", (math.ceil(im.size[0] * s), math.ceil(im.size[1] * s)))
        im.load()
        if im.mode in ("RGBA", "LA", "P", "PA") or "transparency" in im.info:
            rgba = im.convert("RGBA")
            im = Image.new("RGB", rgba.size, (255, 255, 255))
            im.paste(rgba, mask=rgba.getchannel("A"))
        else:
            im = im.convert("RGB")
    if max(im.size) > MAX_SOURCE_SIDE:
        s = MAX_SOURCE_SIDE / max(im.size)
        im = im.resize((round(im.size[0] * s), round(im.size[1] * s)), Image.LANCZOS)
    return im


def params(seed, i, n_sources):
    """Everything about image i, from its own generator."""
    r = np.random.default_rng([seed, i])
    p = dict(index=i, source=int(r.integers(n_sources)))
    p["crop_u"] = r.random((10, 4))  # area, log-aspect, x, y for 10 tries
    p["short"] = int(r.integers(300, 501))
    p["sigma"] = float(r.uniform(*SIGMA_RANGE))
    p["quality"] = int(r.integers(75, 96))
    p["subsampling"] = 2 if r.random() < 0.9 else 0
    p["progressive"] = bool(r.random() < 0.02)
    p["gray"] = bool(r.random() < 0.03)
    p["noise_seed"] = int(r.integers(2**63))
    return p


def crop_box(W, H, u):
    area = W * H
    lo, hi = math.log(3 / 4), math.log(4 / 3)
    for a_u, r_u, x_u, y_u in u:
        target = area * (0.10 + 0.90 * a_u)
        ar = math.exp(lo + (hi - lo) * r_u)
        w = int(round(math.sqrt(target * ar)))
        h = int(round(math.sqrt(target / ar)))
        if 0 < w <= W and 0 < h <= H:
            x = int(x_u * (W - w + 1))
            y = int(y_u * (H - h + 1))
            return x, y, w, h
    ar = min(max(W / H, 3 / 4), 4 / 3)  # fallback: centred largest crop, aspect clamped
    w, h = (W, int(round(W / ar))) if W / H < ar else (int(round(H * ar)), H)
    w, h = min(w, W), min(h, H)
    return (W - w) // 2, (H - h) // 2, w, h


def grain_field(rng, h, w):
    """Sum of unit-std Gaussian noise fields at 1, 2 and 4 px scales, weighted GRAIN_WEIGHTS."""
    import cv2
    total = np.zeros((h, w), np.float32)
    for scale, wt in zip((1, 2, 4), GRAIN_WEIGHTS):
        if scale == 1:
            f = rng.standard_normal((h, w), dtype=np.float32)
        else:
            small = rng.standard_normal((h // scale + 2, w // scale + 2), dtype=np.float32)
            f = cv2.resize(small, ((w // scale + 2) * scale, (h // scale + 2) * scale),
                           interpolation=cv2.INTER_LINEAR)[scale:scale + h, scale:scale + w]
            f = f / max(float(f.std()), 1e-6)
        total += wt * f
    return total


def make_image(src, p):
    W, H = src.size
    x, y, w, h = crop_box(W, H, p["crop_u"])
    s = p["short"]
    if w <= h:
        nw, nh = s, min(800, int(round(h * s / w)))
    else:
        nw, nh = min(800, int(round(w * s / h))), s
    im = src.resize((nw, nh), Image.LANCZOS, box=(x, y, x + w, y + h), reducing_gap=3.0)
    a = np.asarray(im, dtype=np.float32)
    rng = np.random.default_rng(p["noise_seed"])
    sig = p["sigma"]
    a = a + (sig * grain_field(rng, nh, nw))[..., None]
    for c in range(3):
        a[..., c] += (sig * CHROMA_GRAIN) * grain_field(rng, nh, nw)
    im = Image.fromarray(np.clip(np.rint(a), 0, 255).astype(np.uint8), "RGB")
    if p["gray"]:
        im = im.convert("L")
    return im


def work(task):
    out, src_path, plist = task
    import cv2
    cv2.setNumThreads(1)
    src = load_source(src_path)
    res = []
    for p in plist:
        im = make_image(src, p)
        rel = "class_%02d/img_%06d.jpg" % (p["index"] % NUM_CLASSES, p["index"])
        fn = os.path.join(out, rel)
        kw = dict(quality=p["quality"], progressive=p["progressive"])
        if im.mode == "RGB":
            kw["subsampling"] = p["subsampling"]
        im.save(fn, "JPEG", **kw)
        res.append((p["index"], os.path.getsize(fn), im.size[0] * im.size[1],
                    p["gray"], p["progressive"], p["subsampling"] == 0))
    return res


def main():
    ap = argparse.ArgumentParser(description="ImageNet-like benchmark dataset from wallpapers")
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    a = ap.parse_args()
    t0 = time.time()
    sources = list_sources()
    if not sources:
        sys.exit("make_dataset.py: no wallpaper photos under %s" % " ".join(PHOTO_DIRS))
    for c in range(NUM_CLASSES):
        os.makedirs(os.path.join(a.out, "class_%02d" % c), exist_ok=True)
    groups = {}
    for i in range(a.n):
        p = params(a.seed, i, len(sources))
        groups.setdefault(p["source"], []).append(p)
    # biggest groups first; split big ones so both workers stay busy to the end
    tasks = []
    chunk = max(8, a.n // (8 * max(1, a.workers)))
    for s, plist in groups.items():
        for k in range(0, len(plist), chunk):
            tasks.append((a.out, sources[s], plist[k:k + chunk]))
    tasks.sort(key=lambda t: -len(t[2]))
    results = []
    if a.workers > 1:
        with Pool(a.workers) as pool:
            for r in pool.imap_unordered(work, tasks):
                results += r
    else:
        for t in tasks:
            results += work(t)
    results.sort()
    with open(os.path.join(a.out, "file_list.txt"), "w") as f:
        for i, *_ in results:
            f.write("class_%02d/img_%06d.jpg %d\n" % (i % NUM_CLASSES, i, i % NUM_CLASSES))
    sizes = np.array([r[1] for r in results], np.float64)
    mp = np.array([r[2] for r in results], np.float64) / 1e6
    print("make_dataset.py: %d images from %d sources in %s: mean %.1f KiB (median %.1f), "
          "mean %.3f MP; %d gray, %d progressive, %d 4:4:4; %.1f s" % (
              len(results), len(sources), a.out, sizes.mean() / 1024, np.median(sizes) / 1024,
              mp.mean(), sum(r[3] for r in results), sum(r[4] for r in results),
              sum(r[5] and not r[3] for r in results), time.time() - t0))


if __name__ == "__main__":
    main()
