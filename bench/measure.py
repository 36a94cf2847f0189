"""Measuring one benchmark process on a shared machine: shared by bench/run, bench/py_workers.py
and bench/gpu.py.

    from measure import wait_quiet, measured, last_json
    wait_quiet(20, threshold=0.25)          # until the rest of the machine is quiet (or 20 s)
    r = measured([cmd, ...])                # its output, wall time, peak PSS, background
    last_json(r["stdout"])                  # the last JSON line it printed

The background is the CPU time the rest of the machine used while cmd ran, in cores: busy
jiffies of the whole machine (/proc/stat) less the CPU time of cmd's process tree (its workers
are reaped by it before it exits) and of this process. Peak memory is the proportional set size
of cmd and its descendants (pss.py), sampled every `interval` s.
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


def measured(cmd, timeout=900, env=None, interval=0.2):
    """Runs cmd (in the repository root), sampling the PSS of its process tree. Returns a dict
    with its return code and output, wall time, peak PSS, CPU time (its whole tree) and the
    background: cores that other processes of the machine kept busy meanwhile, on average. A
    command still running after `timeout` s is killed (its stderr then says so)."""
    j0, c0, s0 = cpu_jiffies(), children_cpu_s(), self_cpu_s()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=ROOT, env=env)
    s = PssSampler(p.pid, interval).start()
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        err += "\n(timed out after %d s)" % timeout
    s.stop()
    wall = time.perf_counter() - t0
    j1 = cpu_jiffies()
    tick = os.sysconf("SC_CLK_TCK")
    machine_s = (j1[0] - j0[0]) / tick
    ours = (children_cpu_s() - c0) + (self_cpu_s() - s0)
    return {"rc": p.returncode, "stdout": out, "stderr": err, "wall_s": round(wall, 3),
            "cpu_s": round(children_cpu_s() - c0, 2),
            "background_cores": round(max(0.0, machine_s - ours) / wall, 2),
            "peak_pss_mib": round(s.peak_mib, 1), "pss_processes": s.peak_procs}


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
