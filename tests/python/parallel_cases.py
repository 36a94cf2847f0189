#!/usr/bin/python3
"""tests/python/parallel_cases.py: sources for the parallel external_source tests, and the
child processes of its failure tests (tests/python/test_parallel_failures.py).

As PyTorch's DataLoader tests do, every failure case runs in a process of its own with a time
limit, so a hang fails by name and a crash cannot take the test runner down:

    parallel_cases.py harness CASE fork|spawn [SIGINT|SIGKILL]

runs `parallel_cases.py case CASE METHOD` as a child of a *subreaper* (PR_SET_CHILD_SUBREAPER:
workers the case leaves behind are re-parented to the harness, which sees them and reaps
them), optionally sends the case a signal once it printed READY, and prints one JSON line:
the case's own result (its RESULT line), its exit code and stderr, the processes it left
behind (alive or zombie) and how long they lived on, and new /dev/shm entries. The case
prints its worker pids (PIDS line) as soon as the workers run.

Light on purpose (NumPy and sluice only): spawned workers import this module.
"""
import ctypes
import gc
import json
import os
import signal
import subprocess
import sys
import time
import traceback

import numpy as np

import sluice
from sluice import fn, pipeline_def, types

# ---- sources (module level: picklable by reference for spawn) ---------------------------------


def ident(si):
    """Sample i of the epoch: [i, epoch] as int32; 41 samples per epoch."""
    if si.idx_in_epoch >= 41:
        raise StopIteration
    return np.array([si.idx_in_epoch, si.epoch_idx], np.int32)


def always_raises(si):
    if si.idx_in_epoch >= 41:
        raise StopIteration
    raise NotImplementedError(f"sample {si.idx_in_epoch} is not implemented")


def raises_at_7(si):
    if si.idx_in_epoch >= 12:
        raise StopIteration
    if si.idx_in_epoch == 7:
        raise ValueError("bad record 7")  # the line the traceback must show
    return np.array([si.idx_in_epoch], np.int32)


def segfaults_at_5(si):
    if si.idx_in_epoch == 5:
        ctypes.string_at(0)  # reads address 0: SIGSEGV
    return np.array([si.idx_in_epoch], np.int32)


def bus_error_at_5(si):
    if si.idx_in_epoch == 5:
        # what a full tmpfs does to a writer: touching a page of a mapping past the end of
        # its file raises SIGBUS
        import mmap
        import tempfile

        with tempfile.TemporaryFile() as f:
            f.truncate(mmap.PAGESIZE)
            m = mmap.mmap(f.fileno(), mmap.PAGESIZE)
            f.truncate(0)
            m[0] = 1
    return np.array([si.idx_in_epoch], np.int32)


def exits_at_5(si):
    if si.idx_in_epoch == 5:
        os._exit(3)
    return np.array([si.idx_in_epoch], np.int32)


def slow_first(si):
    """Sample 0 is held until the main process has seen its timeout (the file named by
    SLUICE_TEST_RELEASE exists), at most 30 s: a sleep of fixed length raced a slow pipe.build()
    on a loaded machine (spawned workers starting) and could end before run() began waiting."""
    if si.idx_in_epoch == 0:
        release = os.environ["SLUICE_TEST_RELEASE"]
        end = time.monotonic() + 30
        while not os.path.exists(release) and time.monotonic() < end:
            time.sleep(0.02)
    return np.array([si.idx_in_epoch], np.int32)


def endless(si):
    return np.array([si.idx_in_epoch], np.int32)


def init_raises(worker_id):
    raise RuntimeError("Error in worker_init_fn")


class IterRaises:
    def __iter__(self):
        raise ValueError("Error in __iter__")


def bad_type(si):
    return "a string" if si.idx_in_epoch == 2 else np.array([1], np.int32)


def bad_dtype(si):
    return np.array([1.5]) if si.idx_in_epoch == 2 else np.array([1], np.int32)


def bad_outputs(si):
    if si.idx_in_epoch == 2:
        return np.array([1], np.int32)  # one value, two declared
    return np.array([1], np.int32), np.array([2], np.int32)


def worker_seed_sample(si):
    """[worker id, worker seed (low 31 bits), a draw of NumPy's and of random's global RNG]."""
    import random

    info = sluice.get_worker_info()
    return np.array([info.id, info.seed & 0x7FFFFFFF, np.random.randint(1 << 30),
                     random.randrange(1 << 30)], np.int64)


def sized_batch(info):
    """Batch mode: iteration i has i % 3 + 1 samples of value 100 * epoch + 10 * i + k;
    5 batches per epoch."""
    if info.iteration >= 5:
        raise StopIteration
    base = 100 * info.epoch_idx + 10 * info.iteration
    return [np.array([base + k], np.int32) for k in range(info.iteration % 3 + 1)]


def images(si):
    """Two outputs: an HWC uint8 image whose size depends on the sample, and an int64 label."""
    if si.idx_in_epoch >= 10:
        raise StopIteration
    i = si.idx_in_epoch
    return np.full((4 + i, 5 + 2 * i, 3), i, np.uint8), np.int64(1000 + i)


def big_at_60(si):
    """Sample 60 is 3 MiB, larger than any chunk so far: the chunk must grow."""
    n = (3 << 20) if si.idx_in_epoch == 60 else 16
    return np.full(n, si.idx_in_epoch % 251, np.uint8)


def slow_part_0(si):
    """The first half of every batch is slow: later tasks finish first."""
    if si.idx_in_epoch >= 16:
        raise StopIteration
    if si.idx_in_epoch % 4 < 2:
        time.sleep(0.05)
    return np.array([si.idx_in_epoch], np.int32)


def info_sample(si):
    info = sluice.get_worker_info()
    return np.array([si.idx_in_epoch, info.id, info.num_workers, os.getpid()], np.int64)


def stops_only_at_10(si):
    """Breaks the contract (StopIteration only at 10, data past it): work computed ahead past
    the end must be dropped, its chunks reused."""
    if si.idx_in_epoch == 10:
        raise StopIteration
    return np.array([si.idx_in_epoch], np.int32)


def stop():
    raise StopIteration


def gen_batches():
    """A generator function: 3 batches of 2."""
    for i in range(3):
        yield [np.array([i, k], np.int32) for k in range(2)]


# ---- helpers of the cases ---------------------------------------------------------------------

def make(source, method="fork", workers=2, bs=2, depth=2, **es):
    @pipeline_def(batch_size=bs, num_threads=1, prefetch_queue_depth=depth, seed=7,
                  py_num_workers=workers, py_start_method=method,
                  py_worker_init=es.pop("py_worker_init", None))
    def p():
        return fn.external_source(source, parallel=True, name="src", **es)

    pipe = p()
    pipe.build()
    print("PIDS", json.dumps(pipe.py_worker_pids), flush=True)
    return pipe


def values(out):
    return [int(x) for x in out.as_array()[:, 0]]


def epoch(pipe, limit=1000):
    """(batches as lists of first values, errors as (type name, message)) until StopIteration."""
    got, errors = [], []
    for _ in range(limit):
        try:
            got.append(values(pipe.run()[0]))
        except StopIteration:
            return got, errors
        except sluice.WorkerError:
            raise
        except Exception as e:  # noqa: BLE001 - what the case reports
            errors.append((type(e).__name__, str(e)))
    raise AssertionError("the epoch did not end")


def fds(method):
    """Open file descriptors of this process. With spawn, multiprocessing keeps one pipe to its
    resource tracker for the life of the process: started first, so that it is counted in
    both measures."""
    if method == "spawn":
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    return len(os.listdir("/proc/self/fd"))


def gone(pids, within=10.0):
    """True when every pid exited and was reaped (no /proc entry) within `within` s."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(os.path.exists(f"/proc/{p}") for p in pids):
            return True
        time.sleep(0.02)
    return False


def worker_death(pipe, started):
    """Runs until the WorkerError; returns what the test checks."""
    try:
        epoch(pipe)
    except sluice.WorkerError as e:
        took = time.monotonic() - started
        pids = pipe.py_worker_pids
        again = None
        try:
            pipe.run()
        except sluice.WorkerError as e2:
            again = str(e2)
        return {"message": str(e), "took": took, "reaped": gone(pids, 0.5), "again": again,
                "worker_id": e.worker_id, "pid": e.pid, "pids": pids}
    return {"message": None}


# ---- the cases ----------------------------------------------------------------------------------

def case_errors41(method):
    pipe = make(always_raises, method, workers=4, bs=2, batch=False)
    out = []
    for _ in range(2):  # two epochs: the workers persist
        got, errors = epoch(pipe)
        out.append({"batches": len(got), "errors": len(errors),
                    "types": sorted({t for t, _ in errors}),
                    "traceback": all("Original Traceback" in m and "not implemented" in m
                                     for _, m in errors)})
        pipe.reset()
    return {"epochs": out, "first": errors[0][1]}


def case_error_at_batch(method):
    pipe = make(raises_at_7, method, workers=2, bs=2, batch=False)
    got, errors = epoch(pipe)
    return {"batches": got, "errors": errors}


def case_init_error(method):
    pipe = make(ident, method, workers=2, bs=2, batch=False, py_worker_init=init_raises)
    got, errors = epoch(pipe)
    return {"batches": len(got), "errors": errors}


def case_iter_error(method):
    pipe = make(IterRaises(), method, workers=1, bs=2, batch=True)
    got, errors = epoch(pipe)
    return {"batches": len(got), "errors": errors}


def case_segfault(method):
    return worker_death(make(segfaults_at_5, method, batch=False), time.monotonic())


def case_bus_error(method):
    return worker_death(make(bus_error_at_5, method, batch=False), time.monotonic())


def case_exit_code(method):
    return worker_death(make(exits_at_5, method, batch=False), time.monotonic())


def case_sigkill(method):
    pipe = make(endless, method, batch=False)
    pipe.run()
    victim = pipe.py_worker_pids[1]
    os.kill(victim, signal.SIGKILL)  # as the OOM killer would
    r = worker_death(pipe, time.monotonic())
    r["victim"] = victim
    return r


def case_timeout(method):
    release = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"sluice-release-{os.getpid()}")
    os.environ["SLUICE_TEST_RELEASE"] = release  # inherited by the workers, however started
    pipe = make(slow_first, method, batch=False, timeout=1)
    t = time.monotonic()
    try:
        pipe.run()
        return {"message": None}
    except sluice.WorkerTimeoutError as e:
        took = time.monotonic() - t
        msg, is_timeout = str(e), isinstance(e, TimeoutError)
    finally:
        open(release, "w").close()
    try:
        first = values(pipe.run()[0])  # the batch came later: the next call has it
    finally:
        os.unlink(release)
    return {"message": msg, "took": took, "timeout_error": is_timeout, "then": first}


def case_bad_output(method):
    out = {}
    for name, src, kw in (("type", bad_type, {}), ("dtype", bad_dtype, {"dtype": types.INT32}),
                          ("outputs", bad_outputs, {"num_outputs": 2})):
        pipe = make(src, method, workers=2, bs=2, batch=False, **kw)
        got = []
        for _ in range(3):
            try:
                got.append(len(pipe.run()[0]))
            except Exception as e:  # noqa: BLE001 - what the case reports
                got.append([type(e).__name__, str(e)])
        out[name] = got
        del pipe
    return out


def _loop(method, then):
    pipe = make(endless, method, workers=2, bs=2, batch=False)
    for _ in range(3):
        pipe.run()
    print("READY", flush=True)
    return then(pipe)


def case_exit_normal(method):
    pipe = make(ident, method, batch=False)
    epoch(pipe)
    return {"done": True}  # the interpreter exits with the pipeline alive


def case_exit_break(method):
    def then(pipe):
        return {"done": True}  # breaks out after 3 of an endless stream; exits
    return _loop(method, then)


def case_exit_del(method):
    before = fds(method)
    pipe = make(ident, method, batch=False)
    pids = pipe.py_worker_pids
    epoch(pipe)
    del pipe
    gc.collect()
    return {"reaped": gone(pids, 5.0), "fds": [before, fds(method)],
            "shm_live": list(sluice._sluice._shm_live())}


def case_exit_exception(method):
    def then(pipe):
        raise RuntimeError("the training loop failed")
    return _loop(method, then)


def case_exit_loop(method):
    def then(pipe):  # until the harness interrupts (SIGINT) or kills (SIGKILL) this process
        while True:
            pipe.run()
    return _loop(method, then)


def case_two_pipelines(method):
    before = fds(method)
    a = make(ident, method, workers=2, bs=4, batch=False)
    b = make(ident, method, workers=1, bs=3, batch=False)
    pids = a.py_worker_pids + b.py_worker_pids
    ra, rb = [], []
    for k in range(30):  # interleaved: a and b alive and in use at once
        try:
            (ra if k % 2 else rb).append(values((a if k % 2 else b).run()[0]))
        except StopIteration:
            (a if k % 2 else b).reset()
    del a, b
    gc.collect()
    return {"a": ra, "b": rb, "reaped": gone(pids, 5.0), "fds": [before, fds(method)],
            "shm_live": list(sluice._sluice._shm_live())}


def case_seeds(method):
    @pipeline_def(batch_size=4, num_threads=1, seed=11, py_num_workers=4,
                  py_start_method=method)
    def p():
        return fn.external_source(worker_seed_sample, parallel=True, batch=False)

    pipe = p()
    rows = [pipe.run()[0].as_array().tolist() for _ in range(3)]
    return {"rows": rows, "main_info": sluice.get_worker_info() is None}


CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}


def run_case(name, method):
    # Ctrl-C raises KeyboardInterrupt, as in a terminal, even when this process was started
    # with SIGINT ignored (a background job of a non-interactive shell)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        result = CASES[name](method)
    except BaseException as e:
        if isinstance(e, (KeyboardInterrupt, RuntimeError)) and name.startswith("exit_"):
            raise  # these exit paths end the process with that exception
        print("RESULT", json.dumps({"crashed": traceback.format_exc()}), flush=True)
        raise
    print("RESULT", json.dumps(result), flush=True)


# ---- the harness ------------------------------------------------------------------------------

def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def _state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def _shm():
    try:
        return set(os.listdir("/dev/shm"))
    except OSError:
        return set()


def harness(name, method, sig=None):
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    shm_before = _shm()
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "case", name, method],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    lines = []
    killed_at = None
    if sig:
        for line in child.stdout:
            lines.append(line)
            if line.startswith("READY"):
                os.kill(child.pid, getattr(signal, sig))
                killed_at = time.monotonic()
                break
    out, err = child.communicate(timeout=50)
    lines += out.splitlines(keepends=True)
    main_gone = time.monotonic()
    # whatever the case left behind was re-parented to this subreaper
    left = [p for p in _children(os.getpid())]
    left_states = {p: _state(p) for p in left}
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        if not _children(os.getpid()):
            break
        time.sleep(0.02)
    lived_on = time.monotonic() - (killed_at if sig == "SIGKILL" else main_gone)
    pids = next((json.loads(x[5:]) for x in lines if x.startswith("PIDS ")), [])
    result = next((json.loads(x[7:]) for x in lines if x.startswith("RESULT ")), None)
    mine = set(pids) | {child.pid}
    # not the case's: another process's torch segments, the fuzz targets' folders (a fuzzing
    # run beside the tests: docs/fuzzing.md)
    new_shm = sorted(f for f in _shm() - shm_before
                     if not (f.startswith("torch_") and int(f.split("_")[1]) not in mine)
                     and not f.startswith("sluice-fuzz-"))
    print(json.dumps({"rc": child.returncode, "result": result, "stderr": err[-4000:],
                      "left": left_states, "still_alive": _children(os.getpid()),
                      "left_for_s": lived_on if left else 0.0, "pids": pids,
                      "new_shm": new_shm}))


if __name__ == "__main__":
    if sys.argv[1] == "harness":
        harness(*sys.argv[2:])
    else:
        run_case(sys.argv[2], sys.argv[3])
