#!/usr/bin/python3
"""Reference points for bench_ops (bench/ops_bench.c): the same kind of per-image operations done
by OpenCV, PIL and NumPy, on one thread, on the same images bench_ops feeds.

    /usr/bin/python3 bench/ops_ref.py --data DIR [--batch 64] [--runs 5] [--json PATH]

The images are the first `batch` files in the order readers.file lists a class-per-folder tree
(class folders sorted, then file names sorted), decoded to RGB by PIL. Each case runs over the
whole batch `runs` times; the median pass gives input megapixels per second (H x W, as bench_ops
counts them) and images per second. OpenCV runs with cv2.setNumThreads(1). Timings include
Python's per-call overhead (about a microsecond per image, under 1% here) and each library's
output allocation, as a user of these libraries pays them.
"""
import argparse
import json
import os
import statistics
import time

import cv2
import numpy as np
from PIL import Image

EXTS = (".jpg", ".jpeg", ".png")


def list_files(root, n):
    files = []
    for d in sorted(os.listdir(root)):
        sub = os.path.join(root, d)
        if os.path.isdir(sub):
            files += [os.path.join(sub, f) for f in sorted(os.listdir(sub))
                      if f.lower().endswith(EXTS)]
    return files[:n]


def make_cases(imgs, enc):
    pils = [Image.fromarray(a) for a in imgs]
    f32 = [a.astype(np.float32) / 255 for a in imgs]
    mean = np.array([0.485, 0.456, 0.406], np.float32)
    std = np.array([0.229, 0.224, 0.225], np.float32)
    mat = cv2.getRotationMatrix2D((250, 187), 10, 1 / 1.1)

    def pil(flt):
        return lambda: [p.resize((224, 224), flt) for p in pils]

    def cvr(flt):
        return lambda: [cv2.resize(a, (224, 224), interpolation=flt) for a in imgs]

    def cvt(code):
        return lambda: [cv2.cvtColor(a, code) for a in imgs]

    def warp(flt):
        return lambda: [cv2.warpAffine(a, mat, (a.shape[1], a.shape[0]), flags=flt) for a in imgs]

    return {
        "cv2.imdecode (BGR)": lambda: [cv2.imdecode(np.frombuffer(e, np.uint8), cv2.IMREAD_COLOR)
                                       for e in enc],
        "PIL resize BILINEAR 224x224 (antialiased)": pil(Image.BILINEAR),
        "PIL resize BICUBIC 224x224": pil(Image.BICUBIC),
        "PIL resize LANCZOS 224x224": pil(Image.LANCZOS),
        "PIL resize NEAREST 224x224": pil(Image.NEAREST),
        "cv2.resize INTER_LINEAR 224x224 (no antialias)": cvr(cv2.INTER_LINEAR),
        "cv2.resize INTER_AREA 224x224": cvr(cv2.INTER_AREA),
        "cv2.resize INTER_CUBIC 224x224": cvr(cv2.INTER_CUBIC),
        "cv2.resize INTER_LANCZOS4 224x224": cvr(cv2.INTER_LANCZOS4),
        "cv2.flip horizontal": lambda: [cv2.flip(a, 1) for a in imgs],
        "cv2.flip vertical": lambda: [cv2.flip(a, 0) for a in imgs],
        "cv2.cvtColor RGB2BGR": cvt(cv2.COLOR_RGB2BGR),
        "cv2.cvtColor RGB2YCrCb": cvt(cv2.COLOR_RGB2YCrCb),
        "cv2.cvtColor RGB2GRAY": cvt(cv2.COLOR_RGB2GRAY),
        "cv2.cvtColor RGB2HSV": cvt(cv2.COLOR_RGB2HSV),
        "cv2.warpAffine LINEAR (rot 10 + scale)": warp(cv2.INTER_LINEAR),
        "cv2.warpAffine NEAREST (rot 10 + scale)": warp(cv2.INTER_NEAREST),
        "cv2.convertScaleAbs alpha 1.2 (brightness)": lambda: [cv2.convertScaleAbs(a, alpha=1.2)
                                                               for a in imgs],
        "numpy u8 -> f32": lambda: [a.astype(np.float32) for a in imgs],
        "numpy u8 -> f16": lambda: [a.astype(np.float16) for a in imgs],
        "numpy f32 -> f16": lambda: [a.astype(np.float16) for a in f32],
        "numpy f32 (x - mean) / std per channel": lambda: [(a - mean) / std for a in f32],
        "numpy u8 HWC -> CHW copy": lambda: [np.ascontiguousarray(a.transpose(2, 0, 1))
                                             for a in imgs],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json")
    a = ap.parse_args()
    cv2.setNumThreads(1)
    files = list_files(a.data, a.batch)
    enc = [open(f, "rb").read() for f in files]
    imgs = [np.asarray(Image.open(f).convert("RGB")) for f in files]
    mp = sum(x.shape[0] * x.shape[1] for x in imgs) / 1e6
    print(f"ops_ref: {len(imgs)} images from {a.data}, mean {mp / len(imgs):.3f} MP; "
          f"median of {a.runs} passes, 1 thread")
    rows = []
    for name, fn in make_cases(imgs, enc).items():
        times = []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        t = statistics.median(times)
        rows.append({"case": name, "mp_s": mp / t, "img_s": len(imgs) / t})
        print(f"{name:48s} {mp / t:9.1f} MP/s {len(imgs) / t:9.0f} img/s", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"data": a.data, "batch": len(imgs), "mean_mp": mp / len(imgs),
                       "opencv": cv2.__version__, "numpy": np.__version__,
                       "pillow": Image.__version__, "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
