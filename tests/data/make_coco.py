#!/usr/bin/python3
"""Make a small COCO-format detection data set whose annotations are known from the pixels:

    /usr/bin/python3 tests/data/make_coco.py OUTDIR [--n N] [--seed S] [--max-side P]

writes OUTDIR/images/img_XXXX.jpg (N photos cut from Debian's wallpapers, tests/data/photos.py,
longer side <= P) and OUTDIR/instances.json. On each photo 1..4 objects are drawn: a filled
polygon (a triangle, rectangle or pentagon) in a flat colour of its category, so an object's
box is the tight box of its polygon's vertices and its mask is the polygon (both written to the
JSON as COCO does: bbox [x, y, w, h], segmentation [[x0, y0, x1, y1, ...]], area, iscrowd 0).
What the tests rely on, all drawn from the seed:
- categories have ids 3, 7, 11, 90 ("red", "green", "blue", "yellow"; colours CATEGORY_COLOURS),
  so readers.coco renumbers them 1..4 (the JSON lists them in that order);
- image ids are 100 + 7 * k for image k, written to "images" in a shuffled order (the reader
  sorts them by id);
- image N-1 has no annotation (skip_empty drops it) when N >= 3;
- image 0 also has one 1-pixel-wide object (below a size_threshold of 2) and one iscrowd object
  whose segmentation is an uncompressed RLE ({"size": [h, w], "counts": [...]}, column-major
  runs starting with background) of its polygon filled by PIL at the image's size.
Everything is deterministic for a given (seed, N, P).
"""
import argparse
import json
import os
import sys

import numpy as np
from PIL import Image, ImageDraw

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import photos  # noqa: E402

CATEGORIES = [(3, "red"), (7, "green"), (11, "blue"), (90, "yellow")]
CATEGORY_COLOURS = {3: (230, 20, 20), 7: (20, 210, 30), 11: (25, 30, 235), 90: (240, 230, 20)}


def polygon(rng, w, h):
    """A convex polygon's vertices (x, y) inside the image, at least 8 px a side."""
    bw = int(rng.integers(8, max(9, w // 2)))
    bh = int(rng.integers(8, max(9, h // 2)))
    x0 = int(rng.integers(0, max(1, w - bw)))
    y0 = int(rng.integers(0, max(1, h - bh)))
    kind = int(rng.integers(0, 3))
    if kind == 0:  # rectangle
        pts = [(x0, y0), (x0 + bw, y0), (x0 + bw, y0 + bh), (x0, y0 + bh)]
    elif kind == 1:  # triangle
        pts = [(x0 + bw // 2, y0), (x0 + bw, y0 + bh), (x0, y0 + bh)]
    else:  # pentagon
        pts = [(x0 + bw // 2, y0), (x0 + bw, y0 + bh // 3), (x0 + 3 * bw // 4, y0 + bh),
               (x0 + bw // 4, y0 + bh), (x0, y0 + bh // 3)]
    return [(float(x), float(y)) for x, y in pts]


def rle_counts(mask):
    """COCO's uncompressed RLE of a (h, w) 0/1 mask: run lengths of the column-major pixels,
    the first run background (0 long when the first pixel is set)."""
    flat = np.asarray(mask, np.uint8).flatten(order="F")
    edges = np.flatnonzero(np.diff(flat)) + 1
    bounds = np.concatenate([[0], edges, [flat.size]])
    runs = np.diff(bounds).tolist()
    return ([0] + runs) if flat[0] else runs


def annotation(ann_id, image_id, cat, pts, iscrowd=0, size=None):
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    x, y = min(xs), min(ys)
    a = {"id": ann_id, "image_id": image_id, "category_id": cat, "iscrowd": iscrowd,
         "bbox": [x, y, max(xs) - x, max(ys) - y], "area": (max(xs) - x) * (max(ys) - y)}
    if iscrowd:
        h, w = size
        m = Image.new("L", (w, h), 0)
        ImageDraw.Draw(m).polygon(pts, fill=1)
        a["segmentation"] = {"size": [h, w], "counts": rle_counts(np.array(m))}
    else:
        a["segmentation"] = [[c for p in pts for c in p]]
    return a


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-side", type=int, default=160)
    o = ap.parse_args()
    rng = np.random.default_rng(o.seed)
    os.makedirs(os.path.join(o.out, "images"), exist_ok=True)
    imgs = photos.load(o.n, o.max_side, rng)
    images, anns = [], []
    for k, img in enumerate(imgs):
        h, w = img.shape[:2]
        image_id = 100 + 7 * k
        name = f"img_{k:04d}.jpg"
        pil = Image.fromarray(img)
        draw = ImageDraw.Draw(pil)
        count = 0 if (o.n >= 3 and k == o.n - 1) else int(rng.integers(1, 5))
        for _ in range(count):
            cat = CATEGORIES[int(rng.integers(0, len(CATEGORIES)))][0]
            pts = polygon(rng, w, h)
            draw.polygon(pts, fill=CATEGORY_COLOURS[cat])
            anns.append(annotation(len(anns) + 1, image_id, cat, pts))
        if k == 0:
            thin = [(2.0, 2.0), (3.0, 2.0), (3.0, 12.0), (2.0, 12.0)]  # 1 px wide
            draw.polygon(thin, fill=CATEGORY_COLOURS[7])
            anns.append(annotation(len(anns) + 1, image_id, 7, thin))
            crowd = polygon(rng, w, h)
            anns.append(annotation(len(anns) + 1, image_id, 11, crowd, iscrowd=1, size=(h, w)))
        pil.save(os.path.join(o.out, "images", name), quality=95)
        images.append({"id": image_id, "file_name": name, "width": w, "height": h})
    order = rng.permutation(len(images))
    doc = {"info": {"description": "sluice test set (tests/data/make_coco.py)", "seed": o.seed},
           "images": [images[int(i)] for i in order],
           "annotations": anns,
           "categories": [{"id": i, "name": n, "supercategory": "colour"} for i, n in CATEGORIES]}
    with open(os.path.join(o.out, "instances.json"), "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
