#!/usr/bin/python3
"""Where a DataLoader's peak PSS goes: per process and per kind of mapping, at the peak.

    /usr/bin/python3 bench/pss_breakdown.py [--contenders sluice torch] [--workers 1 2]
        [--workload asis] [--epochs 20] [--rounds 1] [--root build/bench-data/n500-s0]

Runs bench/dataloader.py's measurement process (the same loader, Dataset and loop: one warm-up
epoch, then --epochs timed ones), samples the PSS of its process tree every --interval s
(/proc/PID/smaps_rollup, bench/pss.py: samples read while a process forked or exited are
dropped) and, whenever the sum is within 2 % of the peak so far, reads every
process's /proc/PID/smaps and sums PSS by kind of mapping (the breakdown shown is the largest
sample within 2 % of the peak whose smaps agree with its rollups within 2 %: a process that
forks or exits between two reads moves PSS shares from one to another):

- **chunks**: shared-memory batches — sluice's memfds (``memfd:sluice-dl-...``) and torch's
  segments (``/dev/shm/torch_*`` and other ``/dev/shm`` or memfd files);
- **anon**: anonymous memory (the heap, malloc's arenas, NumPy/torch buffers, stacks);
- **libs**: shared objects (``.so``: libpython, torch, NumPy, sluice's extension, ...);
- **files**: other file mappings (the interpreter, locale data, ...).

The peak is reported with its time (seconds after the start; the workers appear when the
first iterator is created) and the process roles: ``main``, ``w0``, ``w1``... (workers in
order of pid). Prints one table per measurement and the medians over --rounds.
"""
import argparse
import os
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from pss import descendants, exiting, pss_kib  # noqa: E402

KINDS = ("chunks", "anon", "libs", "files")


def kind_of(path):
    if not path or path.startswith("["):
        return "anon"
    if path.startswith("/memfd:") or path.startswith("/dev/shm/"):
        return "chunks"
    base = os.path.basename(path.split(" (deleted)")[0])
    if ".so" in base:
        return "libs"
    return "files"


def smaps_kinds(pid):
    """{kind: PSS KiB} of process `pid` (empty when it is gone)."""
    out = dict.fromkeys(KINDS, 0)
    kind = "anon"
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                first = line.split(None, 1)[0]
                if "-" in first and not first.endswith(":"):  # a mapping's header
                    parts = line.split(None, 5)
                    kind = kind_of(parts[5].strip() if len(parts) > 5 else "")
                elif first == "Pss:":
                    out[kind] += int(line.split()[1])
    except (OSError, ValueError):
        return {}
    return out


class Sampler:
    def __init__(self, pid, interval):
        self.pid, self.interval = pid, interval
        self.t0 = time.monotonic()
        self.peak, self.at, self.detail = 0, 0.0, {}
        self.detail_kib, self.detail_at = 0, 0.0  # the breakdown: its sum and time
        self.first_workers = None
        self.series = []  # (s, KiB) of every sample
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self._stop.is_set():
            procs = descendants(self.pid)
            kib = sum(pss_kib(p) for p in procs)
            now = time.monotonic() - self.t0
            if descendants(self.pid) != procs or any(exiting(p) for p in procs):
                self._stop.wait(self.interval)  # (pss.tree_pss_sample's rule)
                continue
            if len(procs) > 1 and self.first_workers is None:
                self.first_workers = now
            self.series.append((now, kib))
            if kib > self.peak:
                self.peak, self.at = kib, now
            if kib >= 0.98 * self.peak:  # near the peak: where does it go?
                detail = {p: smaps_kinds(p) for p in procs}
                total = sum(sum(d.values()) for d in detail.values())
                # consistent: every process read, and the smaps sum within 2 % of the
                # rollups' (a process that exits or forks meanwhile moves shares around)
                if (descendants(self.pid) == procs and all(detail.values())
                        and abs(total - kib) <= 0.02 * kib and total > self.detail_kib):
                    self.detail, self.detail_kib, self.detail_at = detail, total, now
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def measure(a, contender, workers):
    cmd = [sys.executable, os.path.join(HERE, "dataloader.py"), "--child", "--contender",
           contender, "--workers", str(workers), "--workload", a.workload, "--root",
           os.path.abspath(a.root), "--batch", str(a.batch), "--epochs", str(a.epochs),
           "--build-dir", os.path.abspath(a.build_dir)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=ROOT, env=dict(os.environ, SLUICE_BENCH_PHASES="1"))
    with Sampler(p.pid, a.interval) as s:
        out, err = p.communicate()
    end = time.monotonic() - s.t0
    if p.returncode:
        raise RuntimeError(err[-2000:])
    phases = {}
    for line in err.splitlines():
        if line.startswith("phase "):
            _, name, t = line.split()
            phases[name] = float(t) - s.t0
    # the phase the peak fell in: the loader's start (import, workers forked) and warm-up
    # epoch, the timed epochs, or the exit (workers shut down: PSS read while processes go)
    at = "start"
    for name in ("warm-up", "timed", "exit"):
        if name in phases and s.at >= phases[name]:
            at = name
    peak_timed = max((k for t, k in s.series if phases.get("timed", 1e9) <= t
                      < phases.get("exit", 1e9)), default=0)
    roles = {}
    for i, pid in enumerate(sorted(q for q in s.detail if q != p.pid)):
        roles[pid] = f"w{i}"
    roles[p.pid] = "main"
    rows = {roles[q]: d for q, d in s.detail.items() if d}
    return {"peak_mib": s.peak / 1024, "at_s": s.at, "workers_at_s": s.first_workers,
            "end_s": end, "rows": rows, "phase": at, "phases": phases,
            "peak_timed_mib": peak_timed / 1024, "detail_mib": s.detail_kib / 1024,
            "detail_at_s": s.detail_at}


def show(name, m):
    ph = " ".join(f"{k} {v:.2f}" for k, v in m["phases"].items())
    print(f"{name}: peak {m['peak_mib']:.1f} MiB at {m['at_s']:.2f} s, in the {m['phase']} "
          f"phase (phases from: {ph}; workers from {m['workers_at_s'] or 0:.2f} s, end "
          f"{m['end_s']:.2f} s); peak within the timed epochs {m['peak_timed_mib']:.1f} MiB; "
          f"breakdown of a consistent sample near the peak ({m['detail_mib']:.1f} MiB at "
          f"{m['detail_at_s']:.2f} s):")
    print("| process | " + " | ".join(KINDS) + " | total |")
    print("|---|" + "---:|" * (len(KINDS) + 1))
    tot = dict.fromkeys(KINDS, 0)
    for role in sorted(m["rows"], key=lambda r: (r != "main", r)):
        d = m["rows"][role]
        for k in KINDS:
            tot[k] += d[k]
        print(f"| {role} | " + " | ".join(f"{d[k] / 1024:.1f}" for k in KINDS)
              + f" | {sum(d.values()) / 1024:.1f} |")
    print("| all | " + " | ".join(f"{tot[k] / 1024:.1f}" for k in KINDS)
          + f" | {sum(tot.values()) / 1024:.1f} |\n", flush=True)
    return tot


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(ROOT, "build", "bench-data", "n500-s0"))
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--contenders", nargs="+", default=["sluice", "torch"])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--workload", default="asis")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--interval", type=float, default=0.02)
    a = ap.parse_args()
    summary = {}
    for rnd in range(a.rounds):
        for n in a.workers:
            for c in a.contenders:
                m = measure(a, c, n)
                tot = show(f"round {rnd + 1}: {c} N={n} {a.workload}", m)
                summary.setdefault((c, n), []).append((m["peak_mib"], tot))
    print("medians over rounds (MiB):")
    print("| loader | N | peak | " + " | ".join(KINDS) + " |")
    print("|---|---|---:|" + "---:|" * len(KINDS))
    for (c, n), ms in summary.items():
        print(f"| {c} | {n} | {statistics.median(p for p, _ in ms):.1f} | "
              + " | ".join(f"{statistics.median(t[k] for _, t in ms) / 1024:.1f}"
                           for k in KINDS) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
