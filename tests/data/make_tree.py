#!/usr/bin/python3
"""Make a small class-folder image tree for reader / pipeline tests:

    /usr/bin/python3 tests/data/make_tree.py OUTDIR [--classes C] [--per-class N] [--seed S]
                                             [--corrupt K]

writes OUTDIR/class_XX/img_YYYY.jpg (C classes, N images each, XX = 00.., YYYY = 0000..):
JPEGs 40..120 px a side (width and height drawn independently), random crops of Debian's
wallpaper photos (decoded at a reduced DCT scale, so this is fast), quality 70..95, mostly 4:2:0,
some 4:4:4 / 4:2:2 and progressive. OUTDIR/file_list.txt has one "class_XX/img_YYYY.jpg LABEL"
line per image (LABEL = XX as an integer), in sorted order. Everything is drawn from the seed,
per image, so the tree is byte-identical for a given (seed, C, N) and image (c, i) does not
depend on C or N.

--corrupt K truncates K of the files (chosen from the seed) to 40% of their bytes, so any JPEG
decoder must fail on them (PIL raises "image file is truncated" or cannot identify them), and
prints their paths (OUTDIR/class_XX/img_YYYY.jpg) to stdout, one per line, in sorted order.
Without --corrupt nothing is printed.
"""
import argparse
import os
import sys

import numpy as np
from PIL import Image

PHOTO_DIRS = ("/usr/share/wallpapers", "/usr/share/backgrounds")
N_SOURCES = 8


def list_photos():
    """Sorted JPEG wallpapers at least 1000 px a side (screenshots/thumbnails left out)."""
    paths = []
    for d in PHOTO_DIRS:
        for root, _, files in os.walk(d):
            paths += [os.path.join(root, f) for f in files if f.lower().endswith((".jpg", ".jpeg"))]
    good = []
    for p in sorted(paths):
        try:
            with Image.open(p) as im:
                if min(im.size) >= 1000 and im.mode == "RGB":
                    good.append(p)
        except OSError:
            pass
    return good


def load_small(path):
    with Image.open(path) as im:
        im.draft("RGB", (480, 300))
        return np.asarray(im.convert("RGB"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--classes", type=int, default=4)
    ap.add_argument("--per-class", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--corrupt", type=int, default=0, metavar="K")
    a = ap.parse_args()
    total = a.classes * a.per_class
    if a.classes < 1 or a.per_class < 1 or not 0 <= a.corrupt <= total:
        ap.error("need classes >= 1, per-class >= 1, 0 <= corrupt <= classes*per-class")

    photos = list_photos()
    if not photos:
        sys.exit("make_tree.py: no wallpaper photos under %s" % " ".join(PHOTO_DIRS))
    rng = np.random.default_rng([a.seed, 0])
    pick = sorted(rng.choice(len(photos), size=min(N_SOURCES, len(photos)), replace=False))
    srcs = [load_small(photos[i]) for i in pick]

    lines = []
    for c in range(a.classes):
        cdir = "class_%02d" % c
        os.makedirs(os.path.join(a.outdir, cdir), exist_ok=True)
        for i in range(a.per_class):
            r = np.random.default_rng([a.seed, 1, c, i])
            src = srcs[r.integers(len(srcs))]
            H, W = src.shape[:2]
            w, h = (int(v) for v in r.integers(40, 121, size=2))
            s = r.uniform(0.3, 1.0)
            cw = max(1, int(min(W, H * w / h) * s))
            ch = max(1, int(cw * h / w))
            x, y = int(r.integers(0, W - cw + 1)), int(r.integers(0, H - ch + 1))
            im = Image.fromarray(src[y:y + ch, x:x + cw]).resize((w, h), Image.BILINEAR)
            u = r.random()
            kw = dict(quality=int(r.integers(70, 96)),
                      subsampling=2 if u < 0.8 else (0 if u < 0.9 else 1),
                      progressive=bool(r.random() < 0.1))
            rel = "%s/img_%04d.jpg" % (cdir, i)
            im.save(os.path.join(a.outdir, rel), "JPEG", **kw)
            lines.append("%s %d" % (rel, c))

    with open(os.path.join(a.outdir, "file_list.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")

    if a.corrupt:
        r = np.random.default_rng([a.seed, 2])
        bad = sorted(r.choice(total, size=a.corrupt, replace=False))
        for k in bad:
            p = os.path.join(a.outdir, lines[k].split()[0])
            with open(p, "rb") as f:
                data = f.read()
            with open(p, "wb") as f:
                f.write(data[: len(data) * 4 // 10])
            print(p)


if __name__ == "__main__":
    main()
