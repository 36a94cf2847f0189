"""Real photographs for operator test cases, cut from Debian's wallpaper packages.

    import photos
    imgs = photos.load(3, 256, rng)   # 3 HxWx3 uint8 arrays, longer side <= 256

Sources: JPEGs under /usr/share/wallpapers and /usr/share/backgrounds (packages
plasma-workspace-wallpapers, mate-backgrounds, ukui-wallpapers, installed by scripts/setup.sh),
sorted by path, at least 1000 px on the shorter side. Each image is a random crop (30-100% of
each side) resized with PIL's LANCZOS so the longer side is at most `max_side`; sizes vary, odd
extents included. Deterministic for a given rng state.
"""
import glob
import os

import numpy as np
from PIL import Image

ROOTS = ("/usr/share/wallpapers", "/usr/share/backgrounds")
_sources = None


def sources():
    """Sorted paths of the usable wallpaper JPEGs (cached)."""
    global _sources
    if _sources is None:
        paths = []
        for root in ROOTS:
            for ext in ("jpg", "jpeg", "JPG"):
                paths += glob.glob(os.path.join(root, "**", "*." + ext), recursive=True)
        good = []
        for p in sorted(set(paths)):
            try:
                with Image.open(p) as im:
                    if min(im.size) >= 1000:
                        good.append(p)
            except OSError:
                continue
        if not good:
            raise RuntimeError("no wallpaper photos found: run scripts/setup.sh")
        _sources = good
    return _sources


def load(n, max_side, rng):
    """n RGB uint8 arrays (H, W, 3) cut from different photos, longer side <= max_side."""
    paths = sources()
    picks = rng.choice(len(paths), size=n, replace=n > len(paths))
    out = []
    for k in picks:
        with Image.open(paths[int(k)]) as im:
            im.draft("RGB", (max_side * 3, max_side * 3))
            im = im.convert("RGB")
            w, h = im.size
            cw = int(w * rng.uniform(0.3, 1.0))
            ch = int(h * rng.uniform(0.3, 1.0))
            x = int(rng.integers(0, w - cw + 1))
            y = int(rng.integers(0, h - ch + 1))
            im = im.crop((x, y, x + cw, y + ch))
            scale = min(1.0, max_side / max(cw, ch))
            size = (max(1, round(cw * scale)) | int(rng.integers(0, 2)),
                    max(1, round(ch * scale)))
            size = (min(size[0], max_side), size[1])
            out.append(np.asarray(im.resize(size, Image.LANCZOS)).copy())
    return out
