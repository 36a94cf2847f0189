#!/usr/bin/python3
"""bench/cond_py.py: the cost of a conditional written in Python (enable_conditionals=True)
against the same pipeline without it, through the Python front end.

    /usr/bin/python3 bench/cond_py.py --root DIR [--iters 8] [--warmup 3] [--rounds 3]
                                      [--batch 64] [--threads 2]

(PYTHONPATH=build/python, as the tests run.) The C side measures the same three graphs written
as specs (bench/specs/cond_{none,all,half}.json, docs/performance.md "Conditionals"); this
script checks that the `if` traced by sluice._convert costs what those graphs cost:

- none: decode RGB, resize shorter side 256 (antialias), centre crop-mirror-normalize 224
  (float32 CHW);
- all:  `if labels >= 0:` that work, `else:` flip first — every sample in the true branch;
- half: `if fn.random.coin_flip(probability=0.5):` the same two branches.

The three run interleaved, `--rounds` times, each `--iters` iterations after `--warmup`
iterations (the first batch and every prefetch slot's buffers); prints per round images/s
(wall) and the process's CPU time per image (user + sys of all its threads: steadier than
wall time on a shared machine), then the medians; the first batch of `all` is checked to
equal the unconditional one.
"""
import argparse
import resource
import statistics
import time

import numpy as np

from sluice import fn, pipeline_def, types

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


def _work(images):
    images = fn.resize(images, resize_shorter=256, antialias=True)
    return fn.crop_mirror_normalize(images, crop=(224, 224), mean=MEAN, std=STD,
                                    dtype=types.FLOAT, output_layout="CHW")


def make(kind, root, batch, threads):
    @pipeline_def(batch_size=batch, num_threads=threads, device_id=None, seed=0,
                  enable_conditionals=(kind != "none"))
    def pipe():
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=False)
        images = fn.decoders.image(jpegs, output_type=types.RGB)
        if kind == "none":                      # a Python value: plain Python
            out = _work(images)
        elif kind == "all":
            if labels >= 0:
                out = _work(images)
            else:
                out = _work(fn.flip(images))
        else:
            if fn.random.coin_flip(probability=0.5):
                out = _work(images)
            else:
                out = _work(fn.flip(images))
        return out, labels

    p = pipe()
    p.build()
    return p


def _cpu():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--iters", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    kinds = ["none", "all", "half"]
    rates = {k: [] for k in kinds}
    cpu = {k: [] for k in kinds}
    for r in range(a.rounds):
        for k in kinds:
            p = make(k, a.root, a.batch, a.threads)
            first = p.run()
            for _ in range(a.warmup - 1):   # every prefetch slot's buffers grown
                p.run()
            if k in ("none", "all"):
                rates.setdefault("_first_" + k, np.array(first[0].at(0)))
            t, c = time.perf_counter(), _cpu()
            for _ in range(a.iters):
                p.run()
            n = a.iters * a.batch
            rates[k].append(n / (time.perf_counter() - t))
            cpu[k].append(1000 * (_cpu() - c) / n)
            del p
        print(f"round {r + 1}: " + ", ".join(f"{k} {rates[k][-1]:.1f} img/s "
                                             f"{cpu[k][-1]:.2f} CPU ms/img" for k in kinds),
              flush=True)
    np.testing.assert_array_equal(rates["_first_none"], rates["_first_all"])
    print("| pipeline | img/s per round | median img/s | CPU ms/img per round | "
          "median CPU ms/img |")
    print("|---|---|---|---|---|")
    for k in kinds:
        print(f"| {k} | " + ", ".join(f"{v:.1f}" for v in rates[k]) +
              f" | **{statistics.median(rates[k]):.1f}** | " +
              ", ".join(f"{v:.2f}" for v in cpu[k]) +
              f" | **{statistics.median(cpu[k]):.2f}** |")


if __name__ == "__main__":
    main()
