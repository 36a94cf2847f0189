"""Measuring one benchmark process on a shared machine: shared by bench/run, bench/py_workers.py
and bench/gpu.py.

    from measure import wait_quiet, measured, last_json
    wait_quiet(20, threshold=0.25)          # until the rest of the machine is quiet (or 20 s)
    r = measured([cmd, ...])                # its output, wall time, peak PSS, background
    last_json(r["stdout"])                  # the last JSON line it printed

The background is the CPU time the rest of the machine used while cmd ran, in cores: busy
jiffies of the whole machine (/proc/stat) less the CPU time of cmd's process tree (its workers
are reaped by it before it exits) and of this process. Peak memory is the proportional set size
of cmd and its descendants (pss.py), sampled every `interval` s, and, where this process may
make memory cgroups (root on cgroup v1 or v2), the peak of the memory the kernel charged to a
cgroup of cmd's own (`CgroupPeak`): every page cmd's processes allocated, shared memory
included, for as long as it existed — also while no process maps it (a batch in a pipe between
a DataLoader's worker and its main process, which PSS cannot see), and never sampled, so
never missed between samples. Pages cached before cmd started (the interpreter's libraries, a
data set already read) stay charged where they were.
"""
import json
import os
import resource
import subprocess
import time

from pss import PssSampler

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_jiffies():
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)  # idle + iowait
    total = sum(v[:8])  # guest time is already inside user
    return total - idle, total


def busy_cores(interval=0.5):
    """Cores kept busy by the whole machine over `interval` s (the caller sleeps meanwhile)."""
    b0, t0 = cpu_jiffies()
    time.sleep(interval)
    b1, t1 = cpu_jiffies()
    return (b1 - b0) / max(1, t1 - t0) * os.cpu_count()


def wait_quiet(limit_s, threshold=0.25):
    """Waits, up to limit_s, until other processes use less than `threshold` cores. Returns the
    last measurement (cores)."""
    deadline = time.time() + limit_s
    while True:
        busy = busy_cores()
        if busy < threshold or time.time() >= deadline:
            return busy


def children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def self_cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class CgroupPeak:
    """A memory cgroup of its own for one command: `preexec` (run in the child before exec)
    joins it; `peak_mib()` is the kernel's peak of the memory charged to it (cgroup v1
    memory.max_usage_in_bytes, v2 memory.peak); `close()` removes it. `path` is None where no
    cgroup can be made (not root, no memory controller): then peak_mib() is None."""

    def __init__(self):
        self.path = self.peak_file = None
        for base, peak in (("/sys/fs/cgroup/memory", "memory.max_usage_in_bytes"),
                           ("/sys/fs/cgroup", "memory.peak")):
            if not os.path.isfile(os.path.join(base, "cgroup.procs")):
                continue
            path = os.path.join(base, "sluice-measure-%d-%d" % (os.getpid(), time.monotonic_ns()))
            try:
                os.mkdir(path)
            except OSError:
                continue
            if os.path.isfile(os.path.join(path, peak)):
                self.path, self.peak_file = path, os.path.join(path, peak)
                return
            os.rmdir(path)

    def preexec(self):
        if self.path:
            with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
                f.write("0")  # this process (the child, before exec)

    def peak_mib(self):
        if not self.peak_file:
            return None
        with open(self.peak_file) as f:
            return int(f.read()) / (1 << 20)

    def close(self):
        if not self.path:
            return
        for _ in range(50):  # the last exiting task may still be leaving
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.1)


def measured(cmd, timeout=900, env=None, interval=0.2):
    """Runs cmd (in the repository root), sampling the PSS of its process tree. Returns a dict
    with its return code and output, wall time, peak PSS, CPU time (its whole tree) and the
    background: cores that other processes of the machine kept busy meanwhile, on average. A
    command still running after `timeout` s is killed (its stderr then says so)."""
    j0, c0, s0 = cpu_jiffies(), children_cpu_s(), self_cpu_s()
    cg = CgroupPeak()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=ROOT, env=env, preexec_fn=cg.preexec if cg.path else None)
    s = PssSampler(p.pid, interval).start()
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        err += "\n(timed out after %d s)" % timeout
    s.stop()
    wall = time.perf_counter() - t0
    cg_peak = cg.peak_mib()
    cg.close()
    j1 = cpu_jiffies()
    tick = os.sysconf("SC_CLK_TCK")
    machine_s = (j1[0] - j0[0]) / tick
    ours = (children_cpu_s() - c0) + (self_cpu_s() - s0)
    return {"rc": p.returncode, "stdout": out, "stderr": err, "wall_s": round(wall, 3),
            "cpu_s": round(children_cpu_s() - c0, 2),
            "background_cores": round(max(0.0, machine_s - ours) / wall, 2),
            "peak_pss_mib": round(s.peak_mib, 1), "pss_processes": s.peak_procs,
            "peak_cgroup_mib": None if cg_peak is None else round(cg_peak, 1)}


def last_json(text):
    """The last line of text that parses as a JSON object, or None."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                pass
    return None
