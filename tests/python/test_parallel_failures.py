"""tests/python/test_parallel_failures.py: every failure mode of parallel external sources,
modelled on PyTorch's DataLoader tests (test_dataloader.py: test_error / test_error_workers,
test_error_in_init, test_segfault, test_timeout, test_proper_exit, test_partial_workers,
test_multiple_dataloaders, test_worker_seed*) plus what PyTorch skips: a worker killed with
SIGKILL and a worker dying of SIGBUS.

Each case runs in a process of its own under a subreaper harness with a time limit
(parallel_cases.py: `harness CASE METHOD [SIGNAL]`), so a hang fails by name and a crash cannot
take pytest down; the harness reports the case's result, its exit status, the processes it left
behind and new /dev/shm entries. Every case is checked for leftovers: no worker may outlive the
case's main process (except after SIGKILL, where they must be gone within a bound), nothing new
in /dev/shm.
"""
import json
import os
import pathlib
import re
import signal
import subprocess
import sys

import pytest

CASES = pathlib.Path(__file__).with_name("parallel_cases.py")
METHODS = ["fork", "spawn"]


def harness(case, method, sig=None, limit=60):
    cmd = [sys.executable, str(CASES), "harness", case, method] + ([sig] if sig else [])
    # a session of its own: on a hang the harness, the case and its workers are killed together
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail(f"{case} ({method}) hung for {limit} s: {err[-3000:]}")
    assert p.returncode == 0, err
    r = json.loads(out.strip().splitlines()[-1])
    # nothing of ours outlives the case: workers were reaped by the case (a worker re-parented
    # to the harness means it was left running); with spawn multiprocessing's resource
    # tracker (not a worker) exits on its own when the case does
    left_workers = [int(p) for p in r["left"] if int(p) in r["pids"]]
    if sig != "SIGKILL":
        assert left_workers == [], f"workers left behind: {r}"
    assert r["still_alive"] == [], f"processes still alive 10 s after the case: {r}"
    assert r["new_shm"] == [], f"new /dev/shm entries: {r['new_shm']}"
    if sig is None and r["rc"] == 0:
        assert r["result"] is not None and "crashed" not in r["result"], r["stderr"]
    return r


# ---- Python exceptions: raised at their batch, the pipeline goes on ---------------------------

@pytest.mark.parametrize("method", METHODS)
def test_error_in_every_sample_gives_one_error_per_batch(method):
    # PyTorch's test_error_workers: 41 samples, batch 2, 4 workers, every sample raises ->
    # exactly 21 errors, then the epoch ends (the last batch has 1 sample); twice (persistent
    # workers, reset)
    r = harness("errors41", method)["result"]
    for ep in r["epochs"]:
        assert ep == {"batches": 0, "errors": 21, "types": ["NotImplementedError"],
                      "traceback": True}
    assert re.match(r"Caught NotImplementedError in sluice worker \d \(pid \d+\) running "
                    r'external_source "src" for sample idx_in_epoch=0 \(idx_in_batch 0, '
                    r"iteration 0, epoch 1\)\.\nOriginal Traceback \(most recent call last\):",
                    r["first"])


def test_error_is_raised_at_its_batch_with_the_worker_traceback():
    r = harness("error_at_batch", "fork")["result"]
    assert r["batches"] == [[0, 1], [2, 3], [4, 5], [8, 9], [10, 11]]
    (etype, msg), = r["errors"]
    assert etype == "ValueError"
    assert "for sample idx_in_epoch=7 (idx_in_batch 1, iteration 3, epoch 0)." in msg
    assert 'in raises_at_7\n    raise ValueError("bad record 7")' in msg
    assert msg.rstrip().endswith("ValueError: bad record 7")


@pytest.mark.parametrize("method", METHODS)
def test_error_in_py_worker_init_is_reraised(method):
    r = harness("init_error", method)["result"]
    (etype, msg), = r["errors"]  # with the workers' first task (batch 0); then data
    assert etype == "RuntimeError" and "Error in worker_init_fn" in msg
    assert "in py_worker_init" in msg
    assert r["batches"] == 20  # samples 2..40


@pytest.mark.parametrize("method", METHODS)
def test_error_in_iterable_iter_is_reraised(method):
    r = harness("iter_error", method)["result"]
    (etype, msg), = r["errors"]
    assert etype == "ValueError" and "Error in __iter__" in msg
    assert r["batches"] == 0  # that epoch has no data


@pytest.mark.parametrize("method", METHODS)
def test_wrong_type_dtype_or_outputs_name_source_and_sample(method):
    r = harness("bad_output", method)["result"]
    where = r'external_source "src" \(parallel\): sample idx_in_epoch=2 \(idx_in_batch 0, ' \
            r"iteration 1, epoch 0\): "
    for name, etype, what in (
            ("type", "TypeError", r"the value returned is a str; expected an array \(a NumPy "
                                  r"array, a torch CPU tensor, a DLPack object or a number\)"),
            ("dtype", "TypeError", r"the value returned has element type float64, expected "
                                   r"int32 \(dtype\)"),
            ("outputs", "ValueError", r"the value returned must be a tuple of 2 values "
                                      r"\(num_outputs=2\), got a numpy.ndarray")):
        ok, (got_type, msg), ok2 = r[name]
        assert (ok, ok2) == (2, 2), r[name]  # the batches around it are fine
        assert got_type == etype
        assert re.match(where + what + r" \[sluice worker \d, pid \d+\]$", msg), msg


# ---- workers that die -------------------------------------------------------------------------

def _check_death(r, signal_text):
    res = r["result"]
    assert re.fullmatch(r'external_source "src" \(parallel\): sluice worker (\d) \(pid (\d+)\) '
                        + signal_text, res["message"]), res["message"]
    wid, pid = re.match(r".*worker (\d) \(pid (\d+)\)", res["message"]).groups()
    assert int(pid) == res["pid"] == res["pids"][int(wid)] and int(wid) == res["worker_id"]
    assert res["took"] < 5.0         # seen at once, not after a long poll
    assert res["reaped"]             # no zombie: the dead worker (and the others) were joined
    assert res["again"].startswith(res["message"])  # later calls fail the same way
    assert "the worker pool was shut down" in res["again"]
    return res


@pytest.mark.parametrize("method", METHODS)
def test_worker_segfault(method):
    _check_death(harness("segfault", method),
                 r"was killed by signal SIGSEGV \(Segmentation fault\)")


@pytest.mark.parametrize("method", METHODS)
def test_worker_killed_with_sigkill(method):
    res = _check_death(harness("sigkill", method), r"was killed by signal SIGKILL \(Killed\)")
    assert res["pid"] == res["victim"]


def test_worker_bus_error_names_shared_memory():
    res = _check_death(harness("bus_error", "fork"),
                       r"was killed by signal SIGBUS \(Bus error\)\. A bus error in a worker "
                       r"usually means shared memory ran out: .*")
    assert re.search(r"this worker's result chunks map [\d.]+ MiB \(memfd.*/dev/shm has "
                     r"[\d.]+ MiB free of [\d.]+ MiB", res["message"])


def test_worker_exit_code():
    _check_death(harness("exit_code", "fork"),
                 r"exited unexpectedly with exit code 3 \(a source or py_worker_init called "
                 r"sys\.exit or os\._exit\?\)")


@pytest.mark.parametrize("method", METHODS)
def test_timeout(method):
    res = harness("timeout", method)["result"]
    assert res["timeout_error"]  # WorkerTimeoutError: a WorkerError and a TimeoutError
    assert re.fullmatch(r'external_source "src" \(parallel\): timed out after 1 s waiting for '
                        r"iteration 0 \(epoch 0\) \(timeout=1\); still computing: worker 0 "
                        r"\(pid \d+\)(, worker 1 \(pid \d+\))?", res["message"])
    # worker 1's sample is quick, but on a loaded machine a spawned worker 1 may still be starting
    # (so still computing it) when the second passes: the message then names it too, rightly
    assert 0.9 < res["took"] < 3.0
    assert res["then"] == [0, 1]  # the batch stayed pending: the next call delivers it


# ---- every exit path leaves nothing behind ------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", ["exit_normal", "exit_break", "exit_del"])
def test_exit_paths_leave_nothing(method, case):
    r = harness(case, method)
    assert r["rc"] == 0 and r["result"]
    if case == "exit_del":  # in the process itself: workers reaped, fds and mappings back
        res = r["result"]
        assert res["reaped"] and res["fds"][0] == res["fds"][1] and res["shm_live"] == [0, 0]


@pytest.mark.parametrize("method", METHODS)
def test_exception_in_main_loop_leaves_nothing(method):
    r = harness("exit_exception", method)
    assert r["rc"] == 1 and "RuntimeError: the training loop failed" in r["stderr"]


@pytest.mark.parametrize("method", METHODS)
def test_ctrl_c_leaves_nothing(method):
    r = harness("exit_loop", method, "SIGINT")
    assert r["rc"] in (-2, 1) and "KeyboardInterrupt" in r["stderr"]


@pytest.mark.parametrize("method", METHODS)
def test_main_killed_workers_follow(method):
    # the main process gets SIGKILL: nothing runs in it; its workers notice (PR_SET_PDEATHSIG,
    # parent watchdog) and exit at once
    r = harness("exit_loop", method, "SIGKILL")
    assert r["rc"] == -9
    assert r["left_for_s"] < 2.0, r


# ---- several pipelines, seeds ---------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_two_pipelines_at_once(method):
    res = harness("two_pipelines", method)["result"]

    def expected(bs, calls=15):  # 41 samples per epoch; StopIteration costs a call
        ep = [list(range(k, min(k + bs, 41))) for k in range(0, 41, bs)]
        return (ep + ep)[:calls - 1] if calls > len(ep) else ep[:calls]

    assert res["a"] == expected(4) and res["b"] == expected(3)
    assert res["reaped"] and res["fds"][0] == res["fds"][1] and res["shm_live"] == [0, 0]


def test_worker_seeds_distinct_and_reproducible():
    runs = [harness("seeds", m)["result"] for m in ("fork", "fork", "spawn")]
    rows = runs[0]["rows"]
    assert [r[0] for r in rows[0]] == [0, 1, 2, 3]  # sample i of a batch of 4 -> worker i
    assert len({r[1] for r in rows[0]}) == 4  # 4 workers, 4 seeds
    assert len({tuple(r[2:]) for r in rows[0]}) == 4  # and different NumPy/random streams
    assert all(run["rows"] == rows for run in runs)  # same pipeline seed: same data, any method
    assert runs[0]["main_info"]  # get_worker_info() is None in the main process
