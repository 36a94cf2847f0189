#!/usr/bin/python3
"""CPU time of one DataLoader per 1,000 images: the main process and its workers, user and
system, and the workers' page faults (issue 18: on a shared machine the wall time is noise,
the CPU time is not).

    /usr/bin/python3 bench/dl_cpu.py --loader sluice|torch [--workload asis|ready|imagefolder]
        [--workers 1] [--n 2000] [--epochs 3] [--build-dir build] [--root DIR]

One process: the loader of bench/dataloader.py (the same Dataset classes and arguments: batch
32, shuffle, prefetch_factor 2, persistent workers, fork), one warm-up epoch, then --epochs
timed ones over --n samples (imagefolder: the files under --root); prints one JSON line with
CPU seconds per 1,000 images (main_user, main_sys, workers_user, workers_sys, total), minor
page faults per 1,000 images, and the wall time. Run it several times, interleaving loaders.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def stat(pid):
    """(user s, system s, minor faults) of process `pid` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick, int(fields[7])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loader", choices=["sluice", "torch"], default="sluice")
    ap.add_argument("--workload", choices=["asis", "ready", "imagefolder"], default="asis")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--batch-assignment", default="batch", choices=["batch", "sample"],
                    help="sluice's batch_assignment")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--build-dir", default=os.path.join(os.path.dirname(HERE), "build"))
    ap.add_argument("--root", default=os.path.join(os.path.dirname(HERE), "build", "bench-data",
                                                   "n500-s0"))
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.build_dir, "python"))
    import dataloader as bench

    if a.workload == "imagefolder":
        n_files = sum(len(fs) for _, _, fs in os.walk(a.root) if fs) - 1
        ds = bench.make_dataset("imagefolder", a.root, n_files)
    else:
        ds = bench.make_dataset(a.workload, a.root, a.n)
    dl = bench.make_loader(a.loader, ds, a.batch, a.workers, a.batch_assignment)

    def epoch():
        n = 0
        for x, y in dl:
            n += x.shape[0]
            int(x.reshape(-1)[::4096].sum())  # one byte per page, as bench/dataloader.py
        return n

    epoch()
    pids = [os.getpid()] + [w.pid for w in dl._iterator._workers]
    s0 = [stat(p) for p in pids]
    t = time.perf_counter()
    n = sum(epoch() for _ in range(a.epochs))
    wall = time.perf_counter() - t
    s1 = [stat(p) for p in pids]
    d = [tuple(y - x for x, y in zip(u, v)) for u, v in zip(s0, s1)]
    k = 1000 / n
    sample = a.loader == "sluice" and a.batch_assignment == "sample"
    out = {"loader": a.loader + ("-sample" if sample else ""),
           "workload": a.workload, "workers": a.workers, "images": n,
           "wall_s": round(wall, 3), "main_user": d[0][0] * k, "main_sys": d[0][1] * k,
           "workers_user": sum(x[0] for x in d[1:]) * k,
           "workers_sys": sum(x[1] for x in d[1:]) * k,
           "main_faults": round(d[0][2] * k), "workers_faults": round(sum(x[2] for x in d[1:]) * k)}
    out["total"] = out["main_user"] + out["main_sys"] + out["workers_user"] + out["workers_sys"]
    print(json.dumps({key: round(v, 4) if isinstance(v, float) else v for key, v in out.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
