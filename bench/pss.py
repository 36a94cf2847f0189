"""Proportional set size (PSS) of a process and all its descendants, sampled while it runs.

PSS counts each private page once and each shared page divided among the processes sharing it,
so summing it over a DataLoader's main process and its forked workers counts the
copy-on-write-shared interpreter and libraries once, not once per worker (RSS would). Read from
/proc/PID/smaps_rollup (Linux >= 4.14); descendants are found through
/proc/PID/task/TID/children (CONFIG_PROC_CHILDREN, on in Debian's kernels).

    from pss import PssSampler
    with PssSampler(pid, interval=0.2) as s:   # a background thread
        ...
    s.peak_mib, s.samples

A sample read while a process of the tree forked or exited is dropped (tree_pss_sample).
"""
import os
import threading


def descendants(pid):
    """pid and every process below it (children found through each thread's children file)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            tids = os.listdir("/proc/%d/task" % p)
        except OSError:
            continue
        for t in tids:
            try:
                with open("/proc/%d/task/%s/children" % (p, t)) as f:
                    todo += [int(c) for c in f.read().split()]
            except OSError:
                pass
    return out


def pss_kib(pid):
    """PSS of one process in KiB (0 when it is gone or unreadable)."""
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def tree_pss_kib(pid):
    """(PSS summed over pid and its descendants in KiB, number of processes)."""
    procs = descendants(pid)
    return sum(pss_kib(p) for p in procs), len(procs)


PF_EXITING = 0x4


def exiting(pid):
    """Whether process `pid` is gone or on its way out (PF_EXITING in /proc/PID/stat)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return True
    return fields[0] in "ZX" or bool(int(fields[6]) & PF_EXITING)


def tree_pss_sample(pid):
    """tree_pss_kib(pid), or None when the tree changed while it was read: a process that
    forks or exits meanwhile moves the PSS shares of the pages it shares to the others, so
    that processes read before and after the move count those pages more than once (seen: a
    DataLoader's workers exiting, one read at 52 MiB and the next at 64 MiB, the sum 12 MiB
    over what the tree ever held)."""
    procs = descendants(pid)
    kib = sum(pss_kib(p) for p in procs)
    if descendants(pid) != procs or any(exiting(p) for p in procs):
        return None
    return kib, len(procs)


class PssSampler:
    """Samples tree_pss_kib(pid) every `interval` s on a daemon thread; keeps the peak."""

    def __init__(self, pid, interval=0.2):
        self.pid, self.interval = pid, interval
        self.peak_kib, self.peak_procs, self.samples, self.skipped = 0, 0, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while True:
            self.sample()
            if self._stop.wait(self.interval):
                return

    def sample(self):
        got = tree_pss_sample(self.pid)
        if got is None:  # read while a process forked or exited: not counted
            self.skipped += 1
            return
        kib, n = got
        self.samples += 1
        if kib > self.peak_kib:
            self.peak_kib, self.peak_procs = kib, n

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def peak_mib(self):
        return self.peak_kib / 1024.0
