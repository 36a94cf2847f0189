#!/usr/bin/python3
"""bench/sim.py: replays the per-sample costs that `sluice run --trace` recorded at N threads and
prefetch depth D, or with prefetch_queue_depth "auto" (the executor's policy, src/exec/
autotune.c, ported below), to predict thread scaling where no such machine is at hand
(issue 21 point 1).

    bench/sim.py TRACE [--threads 1,2,4,8,16] [--depth 2 | --depth auto] [--batch B]
                 [--repeat R] [--iterations N --timed M] [--measured IMAGES_PER_S] [--json OUT]
    sluice run SPEC --epochs 3 --trace TRACE --stats   (makes TRACE; bench/sim.py --help)

The model. From the trace (sl_pipeline_write_trace): per iteration, the run task of every
sample of the node that runs per sample (cat "sample": a fused chain's whole sample, e.g.
decode + resize + crop_mirror_normalize), and the wall time of the nodes that run once per
iteration (the reader's setup: the file reads; pid 1 events without samples). Per iteration the
simulator runs one serial head task (those nodes, after the previous iteration's: the reader is
stateful) and then the samples as tasks on N workers, oldest iteration first (the thread pool's
priority), as the executor does; the consumer (`sluice run`: nothing per batch) asks for
iteration r when it has r - 1, which frees iteration r - 2's slot, and at most D iterations are
in flight or waiting (runs - 1 + D scheduled, as sl_pipeline_schedule_run). With "auto" the depth
follows the autotuner's policy on the simulated windows (threads' idle fraction, consumer's
waiting fraction, iterations ready when asked). The decode bound is the same samples as one
bag of tasks on N workers (no batches): bench_decode_bound's model.
What it leaves out: memory bandwidth and cache effects (the measured decode bound scales 13.3x
on 16 threads, the model 16x), so scaling is compared as a ratio to the model's own bound, and
the per-sample setup phases (header parsing: small) are folded into the head task's time.
It also assumes nothing else orders iterations. Until 2614cd1 something did: an intermediate
output's single storage buffer (src/exec/istore.c) made iteration k+1's coin flips wait for
iteration k's last sample. That is why the model predicted 0.97-0.99 of the bound's scaling where
the lent 16-core machine measured 0.61-0.68. With two buffers it measured 1.09, and the model
replaying that machine's own trace predicts 1.00.
"""
import argparse
import heapq
import json
import sys

# the policy of src/exec/autotune.c (keep in step)
AUTO_SLOTS, AUTO_START, AUTO_WINDOW = 8, 2, 4
WAIT_MIN, IDLE_MIN, CONSUMER_WINDOWS = 0.02, 0.05, 3


class Autotune:
    def __init__(self, on, fixed, budget_iterations=AUTO_SLOTS):
        self.on = on
        self.depth = AUTO_START if on else fixed
        self.floor = self.depth
        self.limit = max(AUTO_START, min(AUTO_SLOTS, budget_iterations))
        self.settle = self.calm = 0
        self.since_down = 1 << 20
        self.changes = []

    def decide(self, idle, wait, ready, n):
        if not self.on:
            return self.depth
        self.since_down = min(self.since_down + 1, 1 << 20)
        if self.settle > 0:
            self.settle -= 1
            return self.depth
        waited = wait > WAIT_MIN
        if waited and idle > IDLE_MIN:
            self.calm = 0
            if self.depth >= self.limit:
                return self.depth
            self.depth += 1
            if self.since_down <= 2:
                self.floor = self.depth
            self.settle = 1
            return self.depth
        if not waited and n > 0 and ready == n:
            self.calm += 1
            if self.calm >= CONSUMER_WINDOWS and self.depth > self.floor:
                self.depth -= 1
                self.calm, self.settle, self.since_down = 0, 1, 0
            return self.depth
        self.calm = 0
        return self.depth


def load(path):
    """Per iteration, in order: (head seconds, [[sample seconds] per phase]). The phases are the
    nodes that ran per sample (cat "sample" events), ordered by their first sample's start in
    the iteration (reader, then the fused chain): a phase starts when the one before it is
    done. The head is the first phase node's serial part (its setup: the node's busy time less
    its samples'); the reader is stateful, so iteration k's head follows iteration k - 1's
    first phase."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    spans = {}   # (iteration, node) -> [(start, dur)]
    walls = {}   # (iteration, node) -> (start, dur)
    for e in events:
        it = e.get("args", {}).get("iteration")
        if it is None or e.get("ph") != "X":
            continue
        if e.get("cat") == "sample":
            spans.setdefault((it, e["name"]), []).append((e["ts"] / 1e6, e["dur"] / 1e6))
        elif e.get("pid") == 1:
            walls[(it, e["name"])] = e.get("args", {}).get("busy_us", 0.0) / 1e6
    its = sorted({it for it, _ in spans})
    full = {}
    for (it, node), v in spans.items():
        full[node] = max(full.get(node, 0), len(v))
    iters = []
    for it in its:
        nodes = [n for (i, n) in spans if i == it]
        if any(len(spans[(it, n)]) != full[n] for n in nodes) or len(nodes) != len(full):
            continue  # cut short by the ring
        nodes.sort(key=lambda n: min(s for s, _ in spans[(it, n)]))
        # the serial part: the first node's busy time less its samples' (its setup)
        busy = walls.get((it, nodes[0]), 0.0)
        head = max(0.0, busy - sum(d for _, d in spans[(it, nodes[0])]))
        iters.append((head, [[d for _, d in spans[(it, n)]] for n in nodes]))
    if not iters:
        sys.exit(f"{path}: no complete iteration with sample spans (an older sluice?)")
    return iters


def simulate(iters, threads, depth="2", consumer_s=0.0, setup_first=True, timed=None):
    """images/s of the iterations replayed on `threads` workers at prefetch depth `depth` (an
    int, or "auto"), and the autotuner's changes [(iteration delivered, new depth)]. timed: the
    rate over the last `timed` deliveries only (a run whose first epoch is a warm-up, as
    `bench/run` times `sluice run`); None: over all after the first."""
    tune = Autotune(depth == "auto", AUTO_START if depth == "auto" else int(depth))
    n_it = len(iters)
    ready, running = [], []  # (iteration, kind, seq, cost): oldest first, heads first
    seq = 0
    phase = [0] * n_it  # the phase under way
    left = [len(p[0]) for _, p in iters]
    head_done = [False] * n_it
    done = [False] * n_it
    started = runs = scheduled = 0
    delivered = []
    clock = {"t": 0.0, "acc": 0.0, "nidle": threads}  # the workers' idle integral

    def advance(t):
        clock["acc"] += clock["nidle"] * (t - clock["t"])
        clock["t"] = t

    def push(it, kind, cost):
        nonlocal seq
        seq += 1
        # the thread pool's order (sched.c prio): setup work (the head, the first phase: the
        # reader) before run work, then older iterations first; setup_first=False: iterations
        # only (the executor before issue 21)
        late = setup_first and kind >= 2
        heapq.heappush(ready, ((late, it) if setup_first else (it,), kind, seq, cost))

    def try_start():
        nonlocal started
        if started < min(scheduled, n_it) and (started == 0 or head_done[started - 1]):
            push(started, 0, iters[started][0])
            started += 1

    def finish(it, kind):
        if kind == 0:  # the head: the first phase's samples
            for c in iters[it][1][0]:
                push(it, 1, c)
            return
        left[it] -= 1
        if left[it]:
            return
        if phase[it] == 0:
            head_done[it] = True  # the stateful first node is done: the next head may start
            try_start()
        phase[it] += 1
        if phase[it] == len(iters[it][1]):
            done[it] = True
            return
        left[it] = len(iters[it][1][phase[it]])
        for c in iters[it][1][phase[it]]:
            push(it, 1 + phase[it], c)

    t = 0.0
    win = None
    while True:
        # the consumer's run(): frees the previous slot, schedules, waits for iteration runs-1
        runs += 1
        scheduled = max(scheduled, runs - 1 + tune.depth)
        want = runs - 1
        was_ready, asked = done[want], t
        try_start()
        while not done[want]:
            while ready and clock["nidle"] > 0:
                key, kind, _, cost = heapq.heappop(ready)
                it = key[-1]
                clock["nidle"] -= 1
                seq += 1
                heapq.heappush(running, (t + cost, seq, it, kind))
            end, _, it, kind = heapq.heappop(running)
            advance(end)
            t = end
            clock["nidle"] += 1
            finish(it, kind)
        delivered.append(t)
        if win is None:
            win = {"start": t, "idle": clock["acc"], "wait": 0.0, "ready": 0, "n": 0}
        else:
            win["wait"] += t - asked
            win["ready"] += was_ready
            win["n"] += 1
            if win["n"] == AUTO_WINDOW:
                span = t - win["start"]
                before = tune.depth
                tune.decide((clock["acc"] - win["idle"]) / (span * threads) if span else 0.0,
                            win["wait"] / span if span else 0.0, win["ready"], win["n"])
                if tune.depth != before:
                    tune.changes.append((want, tune.depth))
                win = {"start": t, "idle": clock["acc"], "wait": 0.0, "ready": 0, "n": 0}
        if want + 1 >= n_it:
            break
        t += consumer_s  # the consumer's own work; the workers go on meanwhile
        while running and running[0][0] <= t:
            end, _, it, kind = heapq.heappop(running)
            advance(end)
            clock["nidle"] += 1
            finish(it, kind)
            while ready and clock["nidle"] > 0:
                key2, kind2, _, cost = heapq.heappop(ready)
                it2 = key2[-1]
                clock["nidle"] -= 1
                seq += 1
                heapq.heappush(running, (end + cost, seq, it2, kind2))
        advance(t)
    n = len(delivered)
    batch = len(iters[0][1][-1])
    k = n - 1 if timed is None else min(timed, n - 1)
    if k < 1:
        return 0.0, tune.changes
    return batch * k / (delivered[-1] - delivered[-1 - k]), tune.changes


def bound(iters, threads):
    """images/s of the decode bound: every sample one task, no batches, `threads` workers."""
    costs = [c for _, p in iters for ph in p for c in ph]
    workers = [0.0] * threads
    for c in costs:
        w = heapq.heappop(workers)
        heapq.heappush(workers, w + c)
    return len(iters) * len(iters[0][1][-1]) / max(workers)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--threads", default="1,2,4,8,16")
    ap.add_argument("--depth", action="append", help="2, 3, ... or auto (repeatable)")
    ap.add_argument("--measured", type=float, help="images/s the traced run measured")
    ap.add_argument("--measured-threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=4,
                    help="replay the recorded iterations this many times (the tuner needs "
                         "windows to settle)")
    ap.add_argument("--iterations", type=int,
                    help="replay only this many iterations (of the repeated list): a short run")
    ap.add_argument("--timed", type=int,
                    help="images/s over the last TIMED iterations only (bench/run's timing of "
                         "`sluice run`: the epochs after a warm-up one)")
    ap.add_argument("--iteration-order", action="store_true",
                    help="the thread pool's order before issue 21: older iterations first only "
                         "(no setup work first)")
    ap.add_argument("--json")
    a = ap.parse_args()
    sf = not a.iteration_order
    iters = load(a.trace) * a.repeat
    if a.iterations:
        iters = (iters * (a.iterations // len(iters) + 1))[:a.iterations]
    threads = [int(x) for x in a.threads.split(",")]
    depths = a.depth or ["2", "auto"]
    batch = len(iters[0][1][-1])
    costs = [c for _, p in iters for c in p[-1]]
    mean = sum(costs) / len(costs)
    cv = (sum((c - mean) ** 2 for c in costs) / len(costs)) ** 0.5 / mean
    print(f"{a.trace}: {len(iters)} iterations of {batch} samples, {len(iters[0][1])} phases; "
          f"last phase's sample cost mean "
          f"{mean * 1e3:.2f} ms, coefficient of variation {cv:.2f}; head (serial) mean "
          f"{sum(h for h, _ in iters) / len(iters) * 1e3:.2f} ms")
    out = {"trace": a.trace, "setup_first": sf, "iterations": len(iters), "batch": batch,
           "sample_ms": mean * 1e3, "sample_cv": cv, "rows": []}
    b1 = bound(iters, 1)
    p1 = {d: simulate(iters, 1, d, setup_first=sf, timed=a.timed)[0] for d in depths}
    print(f"{'threads':>7}  {'bound img/s':>11}  {'scaling':>7}" +
          "".join(f"  {'D=' + d + ' img/s':>12}  {'scaling':>7}  {'/bound':>6}" for d in depths))
    for n in threads:
        bn = bound(iters, n)
        row = {"threads": n, "bound": bn, "bound_scaling": bn / b1}
        line = f"{n:>7}  {bn:>11.1f}  {bn / b1:>6.2f}x"
        for d in depths:
            v, changes = simulate(iters, n, d, setup_first=sf, timed=a.timed)
            ratio = (v / p1[d]) / (bn / b1)
            row[d] = {"images_per_s": v, "scaling": v / p1[d], "vs_bound": ratio,
                      "changes": changes[:8]}
            line += f"  {v:>12.1f}  {v / p1[d]:>6.2f}x  {ratio:>6.2f}"
        out["rows"].append(row)
        print(line)
    if a.measured:
        v, _ = simulate(iters, a.measured_threads, depths[0], setup_first=sf)
        out["validation"] = {"threads": a.measured_threads, "depth": depths[0],
                             "measured": a.measured, "simulated": v, "ratio": v / a.measured}
        print(f"validation: {a.measured_threads} threads, depth {depths[0]}: simulated "
              f"{v:.1f} img/s, measured {a.measured:.1f} ({v / a.measured:.2f}x)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
