#!/usr/bin/python3
"""tests/data/make_sequence.py: a seeded folder of frame streams for readers.sequence's tests
(and bench/readers.py).

    make_sequence.py OUT_DIR [--seed S] [--streams N] [--size W H]

OUT_DIR/<stream>/<frame files>: N streams of 1 to 9 frames each, cut from one wallpaper-derived
test photo per stream (photos.py) and shifted a little per frame, all of one size per stream
(streams differ in size); frames saved as PNG or JPEG, with names that sort differently as text
and as numbers in some streams ("f9.png" after "f10.png"). Mixed in: a hidden file, a file that is
no image (by extension), an empty subfolder and a file at the top level, none of which count.
From Python, write(out, seed, streams) returns {stream name: [frame file names, sorted]}: the
listing the reader must find.
"""
import argparse
import os
import sys

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import photos  # noqa: E402


def write(out, seed=0, streams=4, size=None):
    rng = np.random.default_rng(seed)
    os.makedirs(out, exist_ok=True)
    model = {}
    base = photos.load(streams, 96, rng)
    for s in range(streams):
        name = f"s{s}" if s % 3 else f"stream_{s:02d}"
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        img = base[s]
        if size:
            img = np.asarray(Image.fromarray(img).resize(size))
        h, w = img.shape[:2]
        fh, fw = max(1, h - 8), max(1, w - 8)
        count = int(rng.integers(1, 10)) if s else 9
        files = []
        for f in range(count):
            dy, dx = int(rng.integers(0, 9)), int(rng.integers(0, 9))
            frame = img[dy:dy + fh, dx:dx + fw]
            ext = ".png" if (s + f) % 2 else ".jpg"
            fname = (f"f{f}" if s % 2 else f"{f:05d}") + (ext.upper() if f == 3 else ext)
            Image.fromarray(frame).save(os.path.join(d, fname), quality=90)
            files.append(fname)
        with open(os.path.join(d, ".hidden.jpg"), "wb") as fp:
            fp.write(b"not an image, hidden")
        with open(os.path.join(d, "notes.txt"), "w") as fp:
            fp.write("not a frame")
        model[name] = sorted(files)
    os.makedirs(os.path.join(out, "empty"), exist_ok=True)
    Image.fromarray(base[0]).save(os.path.join(out, "top.png"))
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--streams", type=int, default=4)
    ap.add_argument("--size", type=int, nargs=2)
    a = ap.parse_args()
    write(a.out, a.seed, a.streams, tuple(a.size) if a.size else None)


if __name__ == "__main__":
    main()
