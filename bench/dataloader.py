#!/usr/bin/python3
"""sluice.plugin.pytorch.DataLoader against torch.utils.data.DataLoader: the same Dataset code,
the same arguments, in the same run, interleaved (issue 18, "Benchmark").

    /usr/bin/python3 bench/dataloader.py [--root build/bench-data/n500-s0] [--workers 1 2]
                                         [--batch 32] [--rounds 3] [--epochs 2] [--json FILE]

Workloads (one Dataset class each, defined here, used unchanged by both loaders):

- **imagefolder**: ``torchvision.datasets.ImageFolder(root, transforms.Compose([
  RandomResizedCrop(224), RandomHorizontalFlip(), PILToTensor()]))`` — PIL decodes, crops,
  resizes and flips; each sample a uint8 CHW tensor and an int label;
- **ready**: a sample is a ready 224x224x3 uint8 NumPy array (a copy of a cached one) and an
  int label: what the loader itself costs (collation, transport) without decoding, plus the
  Dataset's own copy of 150 KB per sample (and the page faults of its allocation), which both
  loaders pay;
- **asis**: the cached 224x224x3 array itself (returned as it is, no copy) and an int label:
  the loader's own cost alone (what the issue's "ready NumPy arrays" measured);
- **varying**: the ready sample after a wait whose length varies from sample to sample (2 ms
  for most, 100 ms for one in 32, chosen by a hash of the index: a storage read with a heavy
  tail; a wait rather than CPU work so that the samples' scheduling is what is measured even
  on a busy machine): where spreading a batch's samples over the workers should pay.

Contenders: torch's DataLoader, sluice's with its default ``batch_assignment="batch"``
(PyTorch's round robin) and sluice's with ``batch_assignment="sample"`` (``sluice-sample``: a
batch's samples spread over the workers), and ``sluice-python``: sluice's with
``lower_transforms=False`` (the ImageFolder's transforms run in Python, as torch runs them; by
default sluice runs them in C, byte-identical: plugin/_lower.py).

Both loaders: ``DataLoader(dataset, batch_size, shuffle=True, num_workers=N, prefetch_factor=2,
persistent_workers=True)``, fork. Each measurement is a fresh process (one warm-up epoch, then
--epochs timed ones: images/s over their wall time), with the peak PSS (proportional set size)
of that process and all its workers sampled every 50 ms (bench/pss.py, bench/measure.py), and,
where memory cgroups can be made (root), the peak of the memory the kernel charged to the
run's own cgroup ("charged"): shared memory counts for as long as it exists, also while it
is only in a pipe between a worker and the main process, where PSS cannot see it.
Before each measurement the script waits (up to --quiet-wait s) for the machine to be quiet and
records the background load; the table shows medians over the quiet rounds (all rounds if none
was) and the per-round ratio sluice/torch. It also shows the CPU time (user + system) that the
process and its workers spent in the timed epochs, per 1,000 images (from /proc/PID/stat of
each): steadier than the wall time on a shared machine, and what a loader costs the CPUs that
training also needs.
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


class ReadyArrays:
    """A ready image per sample (a copy of a cached one) and its label."""

    def __init__(self, n):
        import numpy as np

        self.n = n
        self.img = np.random.default_rng(0).integers(0, 255, (SIZE, SIZE, 3), np.uint8)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.img.copy(), i % 10


class AsIsArrays(ReadyArrays):
    """The cached image itself (no copy) and its label: the loader's own cost alone."""

    def __getitem__(self, i):
        return self.img, i % 10


class VaryingCost(ReadyArrays):
    """ReadyArrays after a wait whose length varies from sample to sample (deterministic per
    index): 2 ms for most samples, 100 ms for one in 32 — a storage read with a heavy tail.
    A wait, not CPU work, so that the scheduling of the samples is what is measured, even on
    a machine whose CPUs other jobs use."""

    @staticmethod
    def cost_ms(i):
        return 100 if (i * 2654435761) % 2 ** 32 % 32 == 0 else 2

    def __getitem__(self, i):
        time.sleep(self.cost_ms(i) / 1000)
        return self.img.copy(), i % 10


def make_dataset(workload, root, n_files):
    if workload == "ready":
        return ReadyArrays(n_files)
    if workload == "asis":
        return AsIsArrays(n_files)
    if workload == "varying":
        return VaryingCost(n_files)
    import torchvision
    from torchvision import transforms

    return torchvision.datasets.ImageFolder(root, transforms.Compose([
        transforms.RandomResizedCrop(SIZE), transforms.RandomHorizontalFlip(),
        transforms.PILToTensor()]))


def make_loader(loader, ds, batch, workers, batch_assignment="batch", lower=True):
    """The DataLoader both loaders are measured with (loader "sluice" or "torch"): batch,
    shuffle, prefetch_factor 2, persistent workers, a seeded generator; bench/dl_cpu.py too.
    `lower`: sluice's lower_transforms (False: the ImageFolder's transforms run in Python)."""
    import torch

    kw = {}
    if loader == "sluice":
        from sluice.plugin.pytorch import DataLoader

        kw["batch_assignment"] = batch_assignment
        if not lower:
            kw["lower_transforms"] = False
    else:
        from torch.utils.data import DataLoader
    return DataLoader(ds, batch_size=batch, shuffle=True, num_workers=workers,
                      prefetch_factor=2, persistent_workers=True,
                      generator=torch.Generator().manual_seed(0), **kw)


def child(a):
    sys.path.insert(0, os.path.join(a.build_dir, "python"))
    import torch

    n_files = sum(len(fs) for _, _, fs in os.walk(a.root) if fs) - 1  # less file_list.txt
    ds = make_dataset(a.workload, a.root, n_files)
    dl = make_loader("sluice" if a.contender.startswith("sluice") else "torch", ds, a.batch,
                     a.workers, "sample" if a.contender == "sluice-sample" else "batch",
                     lower=a.contender != "sluice-python")

    def epoch():
        n = 0
        for x, y in dl:
            n += x.shape[0]
            assert x.dtype == torch.uint8 and y.shape == (x.shape[0],)
            # read one byte per page, as a training step reads the batch: its memory counts
            # in this process's PSS for both loaders
            int(x.reshape(-1)[::4096].sum())
        return n

    phases = os.environ.get("SLUICE_BENCH_PHASES")  # bench/pss_breakdown.py: when each began

    def phase(name):
        if phases:
            print(f"phase {name} {time.monotonic():.4f}", file=sys.stderr, flush=True)

    phase("warm-up")
    epoch()  # warm-up: workers started, chunks grown, files in the page cache
    phase("timed")
    pids = [os.getpid()] + [w.pid for w in getattr(dl._iterator, "_workers", [])]
    c0 = [cpu_seconds(p) for p in pids]
    t = time.perf_counter()
    n = sum(epoch() for _ in range(a.epochs))
    dt = time.perf_counter() - t
    c1 = [cpu_seconds(p) for p in pids]
    phase("exit")
    print(json.dumps({"images": n, "seconds": dt, "cpu_main": c1[0] - c0[0],
                      "cpu_workers": sum(c1[1:]) - sum(c0[1:])}))


def cpu_seconds(pid):
    """User + system CPU seconds of process `pid` so far (all its threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


CPU_MIN_S = 0.1  # the least CPU time of a measurement that a CPU ratio is computed from


def measure(a, contender, workers, workload):
    wait_quiet(a.quiet_wait, a.max_background)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--contender", contender,
           "--workers", str(workers), "--workload", workload, "--root",
           os.path.abspath(a.root), "--batch", str(a.batch), "--epochs", str(a.epochs),
           "--build-dir", os.path.abspath(a.build_dir)]
    m = measured(cmd, interval=0.05)
    if m["rc"] != 0:
        raise RuntimeError(f"{contender} N={workers} {workload}: {m['stderr'][-2000:]}")
    r = last_json(m["stdout"])
    k = 1000 / r["images"]
    return {"images_per_s": r["images"] / r["seconds"], "peak_pss_mib": m["peak_pss_mib"],
            "peak_cgroup_mib": m["peak_cgroup_mib"],
            "cpu_s_per_1000": (r["cpu_main"] + r["cpu_workers"]) * k,
            "cpu_main_s_per_1000": r["cpu_main"] * k, "background_cpus": m["background_cores"],
            "cpu_s": r["cpu_main"] + r["cpu_workers"]}


NAMES = {"sluice": "sluice.plugin.pytorch.DataLoader", "torch": "torch.utils.data.DataLoader",
         "sluice-sample": "sluice, batch_assignment=sample",
         "sluice-python": "sluice, lower_transforms=False"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(ROOT, "build", "bench-data", "n500-s0"))
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--workloads", nargs="+",
                    default=["imagefolder", "ready", "asis", "varying"])
    ap.add_argument("--contenders", nargs="+", default=["sluice", "sluice-sample", "torch"])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--json", help="write every measurement here")
    ap.add_argument("--quiet-wait", type=float, default=30.0)
    ap.add_argument("--max-background", type=float, default=0.3)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--contender", help=argparse.SUPPRESS)
    ap.add_argument("--workload", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        a.workers = a.workers[0]
        return child(a)
    if not os.path.isdir(a.root):
        ap.error(f"{a.root}: no such data set (bench/make_dataset.py --out {a.root} --n 500)")
    # every file read once here first: the page cache's pages are charged to the cgroup that
    # first reads them, and no measurement should pay for the data set's first read
    for d, _, files in os.walk(a.root):
        for name in files:
            with open(os.path.join(d, name), "rb") as f:
                while f.read(1 << 20):
                    pass
    runs = [(c, n, w) for w in a.workloads for n in a.workers for c in a.contenders]
    results = {r: [] for r in runs}
    for rnd in range(a.rounds):
        for r in runs:
            results[r].append(measure(a, *r))
            m = results[r][-1]
            print(f"round {rnd + 1}: {NAMES[r[0]]:32} N={r[1]} {r[2]:11} "
                  f"{m['images_per_s']:8.1f} images/s {m['peak_pss_mib']:7.1f} MiB "
                  f"(charged {m['peak_cgroup_mib'] or 0:.1f}) "
                  f"{m['cpu_s_per_1000']:6.3f} CPU s/1000 "
                  f"(background {m['background_cpus']:.2f} CPUs)", file=sys.stderr, flush=True)
    quiet = [k for k in range(a.rounds)
             if all(results[r][k]["background_cpus"] < a.max_background for r in runs)]
    use = quiet or list(range(a.rounds))
    med = {r: {k: statistics.median(ms[i][k] for i in use) if ms[0][k] is not None else None
               for k in ms[0]} for r, ms in results.items()}
    charged = all(m["peak_cgroup_mib"] is not None for m in med.values())
    print(f"\n{a.root}, batch {a.batch}, shuffle, prefetch_factor 2, persistent workers, fork; "
          f"{a.epochs} timed epochs after one warm-up; median of {len(use)} of {a.rounds} "
          f"interleaved rounds ({'quiet ones' if quiet else 'none was quiet: all'}); PSS summed "
          f"over all processes; {os.cpu_count()} CPUs"
          + ("; charged: the peak of the memory the kernel charged to the run's own memory "
             "cgroup (shared memory included while no process maps it)" if charged else "")
          + "\n")
    print("| workload | N | loader | images/s | peak PSS (MiB) | speed vs torch | "
          "memory vs torch | CPU s / 1000 images (main) | CPU: torch / this |"
          + (" peak charged (MiB) | charged vs torch |" if charged else ""))
    print("|---|---|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if charged else ""))
    for w in a.workloads:
        for n in a.workers:
            for c in a.contenders:
                m, base = med[(c, n, w)], results[("torch", n, w)]
                ratio = statistics.median(results[(c, n, w)][i]["images_per_s"] /
                                          base[i]["images_per_s"] for i in use)
                mem = statistics.median(results[(c, n, w)][i]["peak_pss_mib"] -
                                        base[i]["peak_pss_mib"] for i in use)
                # CPU time hardly depends on the machine's load: every round counts
                cpu = statistics.median(ms["cpu_s_per_1000"] for ms in results[(c, n, w)])
                cpu_main = statistics.median(ms["cpu_main_s_per_1000"]
                                             for ms in results[(c, n, w)])
                # /proc's CPU times count clock ticks (10 ms): a run of a few ticks has no ratio
                if min(ms["cpu_s"] for ms in results[(c, n, w)] + base) < CPU_MIN_S:
                    cpu_ratio = "too short (more --epochs)"
                else:
                    cpu_ratio = "{:.2f}x".format(statistics.median(
                        base[i]["cpu_s_per_1000"] / results[(c, n, w)][i]["cpu_s_per_1000"]
                        for i in range(a.rounds)))
                row = (f"| {w} | {n} | {NAMES[c]} | {m['images_per_s']:.0f} | "
                       f"{m['peak_pss_mib']:.0f} | {ratio:.2f}x | {mem:+.0f} MiB | "
                       f"{cpu:.3f} ({cpu_main:.3f}) | {cpu_ratio} |")
                if charged:
                    cmem = statistics.median(results[(c, n, w)][i]["peak_cgroup_mib"] -
                                             base[i]["peak_cgroup_mib"] for i in use)
                    row += f" {m['peak_cgroup_mib']:.0f} | {cmem:+.0f} MiB |"
                print(row)
    if a.json:
        with open(a.json, "w") as f:
            json.dump([{"contender": c, "workers": n, "workload": w, "rounds": ms,
                        "median": med[(c, n, w)]} for (c, n, w), ms in results.items()], f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
