#!/usr/bin/python3
"""The peers of /work/shared/BENCHMARK.md: what a PyTorch user would run instead of sluice.

    /usr/bin/python3 bench/peers.py --lib torchvision|opencv --workload train|val --root DIR
                                    [--workers N] [--batch 64] [--warmup 1] [--epochs 1]
                                    [--pss] [--seed 0]

Both feed torch.utils.data.DataLoader(batch_size=64, num_workers=N (default: the CPUs this
process may run on), persistent_workers=True, shuffle for train only, pin_memory=False,
drop_last=False); the main process only receives the batches (`for x, y in loader`), as a
training loop would before moving them to the accelerator.

  torchvision  datasets.ImageFolder (PIL decode, .convert("RGB")) with
               train: RandomResizedCrop(224) (area [0.08, 1], aspect [3/4, 4/3], bilinear; PIL
                      antialiases), RandomHorizontalFlip(), ToTensor(), Normalize(mean, std)
               val:   Resize(256) (shorter side, bilinear, antialiased), CenterCrop(224),
                      ToTensor(), Normalize(mean, std)
  opencv       a Dataset over the same files (classes = sorted sub-directories), each sample
               cv2.imdecode(IMREAD_COLOR) -> RGB, the same crops with the same sampling
               (RandomResizedCrop.get_params's algorithm, Python's `random`, seeded per worker
               by the DataLoader), cv2.resize with INTER_AREA when shrinking (antialiased)
               and INTER_LINEAR when enlarging, flip by cv2.flip, then NumPy: float32,
               (x - 255 mean) / (255 std), HWC -> CHW, torch.from_numpy. cv2.setNumThreads(1)
               in every worker (OpenCV's own threads would oversubscribe the cores).

Timing: --warmup epochs (default 1: starts the persistent workers, warms caches) then --epochs
timed epochs (default 1); images/s = images of the timed epochs / their wall time.
"time_to_first_batch_s": from before the Dataset is built (directory scan) to the first batch in
the main process, workers' start included. --pss samples the proportional set size of this
process and its workers (bench/pss.py) every 0.2 s and reports the peak (bench/run samples from
outside instead, the same way for every workload, and leaves this off).
One line of JSON goes to stdout.
"""
import argparse
import json
import math
import os
import random
import sys
import time

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
CROP, RESIZE = 224, 256
AREA, RATIO = (0.08, 1.0), (3.0 / 4.0, 4.0 / 3.0)
IMG_EXT = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def rrc_params(h, w, rnd=random):
    """torchvision's RandomResizedCrop.get_params (scale AREA, ratio RATIO), on Python's random:
    returns top, left, height, width."""
    area = h * w
    lo, hi = math.log(RATIO[0]), math.log(RATIO[1])
    for _ in range(10):
        target = area * rnd.uniform(*AREA)
        ar = math.exp(rnd.uniform(lo, hi))
        cw = int(round(math.sqrt(target * ar)))
        ch = int(round(math.sqrt(target / ar)))
        if 0 < cw <= w and 0 < ch <= h:
            return rnd.randint(0, h - ch), rnd.randint(0, w - cw), ch, cw
    in_ratio = w / h
    if in_ratio < min(RATIO):
        cw, ch = w, int(round(w / min(RATIO)))
    elif in_ratio > max(RATIO):
        ch, cw = h, int(round(h * max(RATIO)))
    else:
        cw, ch = w, h
    return (h - ch) // 2, (w - cw) // 2, ch, cw


def torchvision_dataset(root, train):
    from torchvision import datasets, transforms as T
    norm = [T.ToTensor(), T.Normalize(MEAN, STD)]
    if train:
        tf = T.Compose([T.RandomResizedCrop(CROP), T.RandomHorizontalFlip()] + norm)
    else:
        tf = T.Compose([T.Resize(RESIZE), T.CenterCrop(CROP)] + norm)
    return datasets.ImageFolder(root, tf)


class OpenCVFolder:
    """ImageFolder's file list and labels, decoded and transformed with OpenCV and NumPy."""

    def __init__(self, root, train):
        import numpy as np
        classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
        self.samples = []
        for label, c in enumerate(classes):
            for dirpath, _, files in sorted(os.walk(os.path.join(root, c), followlinks=True)):
                self.samples += [(os.path.join(dirpath, f), label) for f in sorted(files)
                                 if f.lower().endswith(IMG_EXT)]
        self.train = train
        self.mean = np.array(MEAN, np.float32) * 255
        self.inv_std = 1.0 / (np.array(STD, np.float32) * 255)

    def __len__(self):
        return len(self.samples)

    @staticmethod
    def _resize(cv2, img, w, h):
        shrink = w < img.shape[1] or h < img.shape[0]
        return cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)

    def __getitem__(self, i):
        import cv2
        import numpy as np
        import torch
        path, label = self.samples[i]
        img = cv2.imdecode(np.fromfile(path, np.uint8), cv2.IMREAD_COLOR)
        if img is None:
            raise RuntimeError("cannot decode %s" % path)
        img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
        h, w = img.shape[:2]
        if self.train:
            y, x, ch, cw = rrc_params(h, w)
            img = self._resize(cv2, img[y:y + ch, x:x + cw], CROP, CROP)
            if random.random() < 0.5:
                img = cv2.flip(img, 1)
        else:
            # torchvision Resize(256): the shorter side becomes 256, the longer int(256 * l / s)
            if h <= w:
                nh, nw = RESIZE, int(RESIZE * w / h)
            else:
                nh, nw = int(RESIZE * h / w), RESIZE
            img = self._resize(cv2, img, nw, nh)
            top, left = int(round((nh - CROP) / 2.0)), int(round((nw - CROP) / 2.0))
            img = img[top:top + CROP, left:left + CROP]
        x = img.astype(np.float32)
        x -= self.mean
        x *= self.inv_std
        return torch.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1))), label


def opencv_worker_init(_):
    import cv2
    cv2.setNumThreads(1)
    cv2.ocl.setUseOpenCL(False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", choices=("torchvision", "opencv"), required=True)
    ap.add_argument("--workload", choices=("train", "val"), required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pss", action="store_true", help="sample the PSS of this process tree")
    a = ap.parse_args()

    t_import = time.perf_counter()
    import torch
    from torch.utils.data import DataLoader
    import_s = time.perf_counter() - t_import

    sampler = None
    if a.pss:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from pss import PssSampler
        sampler = PssSampler(os.getpid()).start()

    torch.manual_seed(a.seed)
    random.seed(a.seed)
    train = a.workload == "train"
    t0 = time.perf_counter()
    if a.lib == "torchvision":
        ds, init = torchvision_dataset(a.root, train), None
    else:
        ds, init = OpenCVFolder(a.root, train), opencv_worker_init
    loader = DataLoader(ds, batch_size=a.batch, shuffle=train, num_workers=a.workers,
                        persistent_workers=a.workers > 0, worker_init_fn=init,
                        pin_memory=False, drop_last=False)
    ttfb, rates, timed_s, timed_images = None, [], 0.0, 0
    shape = None
    for epoch in range(a.warmup + a.epochs):
        images = 0
        te = time.perf_counter()
        for x, _ in loader:
            if ttfb is None:
                ttfb = time.perf_counter() - t0
                shape = list(x.shape)
            images += x.shape[0]
            del x
        dt = time.perf_counter() - te
        if epoch >= a.warmup:
            rates.append(images / dt)
            timed_s += dt
            timed_images += images
    out = {
        "bench": "peer", "lib": a.lib, "workload": a.workload, "workers": a.workers,
        "batch": a.batch, "batch_shape": shape, "dataset_images": len(ds),
        "warmup_epochs": a.warmup, "epochs": a.epochs, "images": timed_images,
        "seconds": round(timed_s, 4), "images_per_s": round(timed_images / timed_s, 1),
        "epoch_images_per_s": [round(r, 1) for r in rates],
        "time_to_first_batch_s": round(ttfb, 4), "import_torch_s": round(import_s, 3),
        "torch": torch.__version__,
    }
    if a.lib == "torchvision":
        import torchvision
        import PIL
        out.update(torchvision=torchvision.__version__, pillow=PIL.__version__)
    else:
        import cv2
        out.update(opencv=cv2.__version__)
    del loader  # stops the persistent workers before the last sample
    if sampler:
        sampler.stop()
        out.update(peak_pss_mib=round(sampler.peak_mib, 1), pss_processes=sampler.peak_procs)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
