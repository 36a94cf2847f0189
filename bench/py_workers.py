#!/usr/bin/python3
"""Python sources in worker processes: sluice's parallel external_source against PyTorch's
DataLoader, the same Python function in both, in the same run (issue 6, item 5).

    /usr/bin/python3 bench/py_workers.py [--root build/bench-data/n500-s0] [--workers 1 2]
                                         [--batch 32] [--rounds 3] [--epochs 2] [--json FILE]

The function (`load`) is what a PyTorch user writes: PIL opens a JPEG, converts it to RGB and
resizes it to 224x224 (bilinear, antialiased), returning an HWC uint8 array and the label. It
runs in N worker processes (fork) through

- **sluice (workers)**: ``fn.external_source(load, num_outputs=2, batch=False,
  parallel=True)`` in a pipeline with ``py_num_workers=N``; the consumer takes each batch as
  torch tensors (``torch.from_dlpack``, no copy) — results travel through the workers'
  shared-memory chunks, lent to the pipeline, copied once into its output;
- **DataLoader**: ``torch.utils.data.DataLoader(dataset, batch_size, num_workers=N,
  prefetch_factor=2, persistent_workers=True)`` — the worker collates the batch into shared
  memory and passes its file descriptor;
- **sluice (own decoders)**: ``readers.file`` → ``decoders.image`` → ``resize`` to 224x224
  (linear, antialiased) with ``num_threads=N``: the same files and output, without Python;
- and, to isolate the transport, **transport only** rows: the function returns a ready
  224x224x3 array (copied from a cache) instead of decoding, in both loaders.

Each measurement is a fresh process (one warm-up epoch, then --epochs timed ones: images/s
over their wall time); this script samples the proportional set size (PSS: shared pages
divided among the processes sharing them) of that process and all its children every 50 ms
and keeps the peak. Contenders are interleaved for --rounds rounds. The machines this runs on
are shared, so before each measurement it waits (up to --quiet-wait s) until other processes
use less than --max-background CPUs, and it records what they used meanwhile (busy CPU time
from /proc/stat minus the measured process tree's own): the table shows the median over the
rounds measured on a quiet machine (background < --max-background CPUs; all rounds if none
was) and the best round. The headline ratio is sluice (workers) / DataLoader images/s, the
median of the per-round ratios: ≥ 1.0 means sluice's transport costs no more than PyTorch's.
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIZE = 224
sys.path.insert(0, HERE)
from measure import last_json, measured, wait_quiet  # noqa: E402


# ---- the function both loaders run ---------------------------------------------------------------

def list_files(root):
    classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    return [(os.path.join(root, c, f), label) for label, c in enumerate(classes)
            for f in sorted(os.listdir(os.path.join(root, c))) if f.endswith(".jpg")]


def load(path):
    """Decode + resize with PIL: what the worker computes per sample."""
    import numpy as np
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im.convert("RGB").resize((SIZE, SIZE), Image.BILINEAR))


class Ready:
    """Transport only: a ready image per sample (a copy of a cached one)."""

    def __init__(self):
        import numpy as np

        self.img = np.random.default_rng(0).integers(0, 255, (SIZE, SIZE, 3), np.uint8)

    def __call__(self, path):
        return self.img.copy()


class SluiceSource:
    def __init__(self, files, fn):
        self.files, self.fn = files, fn

    def __call__(self, si):
        import numpy as np

        if si.idx_in_epoch >= len(self.files):
            raise StopIteration
        path, label = self.files[si.idx_in_epoch]
        return self.fn(path), np.int32(label)


class TorchDataset:
    def __init__(self, files, fn):
        self.files, self.fn = files, fn

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        import torch

        path, label = self.files[i]
        return torch.from_numpy(self.fn(path)), label


# ---- one measurement (a child process) ------------------------------------------------------------

def run_sluice_workers(files, fn, a):
    import torch
    from sluice import fn as sfn, pipeline_def

    @pipeline_def(batch_size=a.batch, num_threads=1, device_id=None, py_num_workers=a.workers,
                  prefetch_queue_depth=2)
    def p():
        images, labels = sfn.external_source(SluiceSource(files, fn), num_outputs=2,
                                             batch=False, parallel=True,
                                             prefetch_queue_depth=2)
        return images, labels

    pipe = p()
    pipe.build()

    def epoch():
        n = 0
        while True:
            try:
                images, labels = pipe.run()
            except StopIteration:
                pipe.reset()
                return n
            batch = torch.from_dlpack(images), torch.from_dlpack(labels)
            n += batch[0].shape[0]
            del batch, images, labels
    return epoch


def run_dataloader(files, fn, a):
    import torch

    dl = torch.utils.data.DataLoader(TorchDataset(files, fn), batch_size=a.batch,
                                     num_workers=a.workers, prefetch_factor=2,
                                     persistent_workers=True)

    def epoch():
        n = 0
        for x, _ in dl:
            n += x.shape[0]
        return n
    return epoch


def run_sluice_native(files, fn, a):
    import torch
    from sluice import fn as sfn, pipeline_def, types

    @pipeline_def(batch_size=a.batch, num_threads=a.workers, device_id=None)
    def p():
        jpegs, labels = sfn.readers.file(file_root=a.root, name="reader")
        images = sfn.decoders.image(jpegs, output_type=types.RGB)
        images = sfn.resize(images, resize_x=SIZE, resize_y=SIZE,
                            interp_type=types.INTERP_LINEAR, antialias=True)
        return images, labels

    pipe = p()
    pipe.build()
    steps = -(-len(files) // a.batch)

    def epoch():
        n = 0
        for _ in range(steps):
            images, labels = pipe.run()
            x = torch.from_dlpack(images)
            n += x.shape[0]
            del x, images, labels
        return n
    return epoch


RUNNERS = {"sluice": run_sluice_workers, "torch": run_dataloader, "native": run_sluice_native}


def child(a):
    a.workers = a.workers[0]
    sys.path.insert(0, os.path.join(a.build_dir, "python"))
    files = list_files(a.root)
    fn = Ready() if a.source == "ready" else load
    epoch = RUNNERS[a.contender](files, fn, a)
    epoch()  # warm-up: workers started, chunks and buffers grown, files in the page cache
    t = time.perf_counter()
    n = sum(epoch() for _ in range(a.epochs))
    dt = time.perf_counter() - t
    print(json.dumps({"images": n, "seconds": dt}))


# ---- the driver -------------------------------------------------------------------------------

def measure(a, contender, workers, source):
    wait_quiet(a.quiet_wait, a.max_background)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--contender", contender,
           "--workers", str(workers), "--source", source, "--root", os.path.abspath(a.root),
           "--batch", str(a.batch), "--epochs", str(a.epochs),
           "--build-dir", os.path.abspath(a.build_dir)]
    m = measured(cmd, interval=0.05)
    if m["rc"] != 0:
        raise RuntimeError(f"{contender} N={workers} {source}: {m['stderr'][-2000:]}")
    r = last_json(m["stdout"])
    return {"images_per_s": r["images"] / r["seconds"], "peak_pss_mib": m["peak_pss_mib"],
            "background_cpus": m["background_cores"]}


NAMES = {"sluice": "sluice (workers)", "torch": "DataLoader", "native": "sluice (own decoders)"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(ROOT, "build", "bench-data", "n500-s0"))
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--json", help="write every measurement here")
    ap.add_argument("--quiet-wait", type=float, default=30.0)
    ap.add_argument("--max-background", type=float, default=0.3)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--contender", help=argparse.SUPPRESS)
    ap.add_argument("--source", default="pil", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(a)
    if not os.path.isdir(a.root):
        ap.error(f"{a.root}: no such data set (bench/make_dataset.py --out {a.root} --n 500)")
    runs = [(c, n, s) for n in a.workers for c, s in
            (("sluice", "pil"), ("torch", "pil"), ("native", "pil"), ("sluice", "ready"),
             ("torch", "ready"))]
    results = {r: [] for r in runs}
    for rnd in range(a.rounds):
        for r in runs:
            results[r].append(measure(a, *r))
            m = results[r][-1]
            print(f"round {rnd + 1}: {NAMES[r[0]]:22} N={r[1]} {r[2]:5} "
                  f"{m['images_per_s']:8.1f} images/s {m['peak_pss_mib']:7.1f} MiB "
                  f"(background {m['background_cpus']:.2f} CPUs)", file=sys.stderr, flush=True)
    quiet_rounds = [k for k in range(a.rounds)
                    if all(results[r][k]["background_cpus"] < a.max_background for r in runs)]
    use = quiet_rounds or list(range(a.rounds))
    med = {r: {k: statistics.median(ms[i][k] for i in use) for k in ms[0]}
           for r, ms in results.items()}
    best = {r: max(m["images_per_s"] for m in ms) for r, ms in results.items()}
    files = len(list_files(a.root))
    print(f"\n{files} JPEGs of {a.root}, batch {a.batch}, {a.epochs} timed epochs after one "
          f"warm-up; median of {len(use)} of {a.rounds} interleaved rounds "
          f"({'quiet ones' if quiet_rounds else 'none was quiet: all'}); PSS summed over all "
          f"processes; {os.cpu_count()} CPUs\n")
    print("| N | source | loader | images/s | best round | peak PSS (MiB) | vs DataLoader |")
    print("|---|---|---|---:|---:|---:|---:|")
    for n in a.workers:
        for s in ("pil", "ready"):
            for c in ("sluice", "torch", "native"):
                if (c, n, s) not in med:
                    continue
                m = med[(c, n, s)]
                base = results[("torch", n, s)]
                ratio = statistics.median(results[(c, n, s)][i]["images_per_s"] /
                                          base[i]["images_per_s"] for i in use)
                what = "PIL decode + resize" if s == "pil" else "ready array (transport)"
                if c == "native":
                    what = "readers.file + decoders.image + resize"
                print(f"| {n} | {what} | {NAMES[c]} | {m['images_per_s']:.0f} | "
                      f"{best[(c, n, s)]:.0f} | {m['peak_pss_mib']:.0f} | {ratio:.2f}x |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump([{"contender": c, "workers": n, "source": s, "rounds": ms,
                        "median": med[(c, n, s)]} for (c, n, s), ms in results.items()], f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
