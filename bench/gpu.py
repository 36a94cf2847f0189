#!/usr/bin/env python3
"""The GPU stage's benchmark (issue 7), for a machine with a CUDA GPU (the `device` tool).

    python3 bench/gpu.py --root DATASET [--threads 1 4 16] [--rounds 3] [--batch 256]
                         [--epochs 1] [--out bench/results] [--build-dir build]

Two parts, in one run, written to OUT/gpu.json and OUT/gpu.md:

1. **Training pipeline**: the ImageNet train workload of BENCHMARK.md (bench/sluice_py.py)
   with the GPU stage (decoders.image_random_crop on "mixed", resize and
   crop_mirror_normalize on "gpu", CUDA tensors out; again with SLUICE_HYBRID_DEVICE_HUFF=0,
   the hybrid decoder's entropy decoding on the CPU) against the same pipeline on the CPU and
   torchvision's DataLoader (bench/peers.py), interleaved for --rounds rounds, for each number
   of CPU threads (= DataLoader workers) in --threads: images/s, median over the rounds, and
   the ratio to the DataLoader of the same round.
2. **GPU kernels against the copy bandwidth** (issue 21, point 3): a batch of --batch uint8
   HWC images (--size, default 224x224x3) fed once per iteration, moved to the GPU, then
   crop_mirror_normalize (CHW float32 and float16, mean/std, mirror on every other sample) and
   a device-to-device copy of the same input (fn.copy: cudaMemcpyAsync), each the only gpu node
   of its own pipeline (depth 1); and resize (--resize-batch images of --resize-in to shorter
   side --resize-shorter, linear, antialiased, as the val pipeline) with a copy of its input.
   Device times come from CUDA events (executor_statistics()[node]["gpu_ms"]); bandwidth =
   bytes read + written / time. Goals: cmn >= 70 % of the copy's bandwidth; the resize's time
   against its bound (its input read and output written at the copy's bandwidth).

Needs the build's Python package (BUILD_DIR/python), NumPy, and for part 1 torch and
torchvision. Uses whatever python3 runs it (on the device machines: their python3 with torch).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from measure import last_json  # noqa: E402


def run_json(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, **env) if env else None)
    out = last_json(r.stdout) if r.returncode == 0 else None
    return out or {"status": "failed", "cmd": " ".join(cmd), "stderr": r.stderr[-2000:]}


def train_rows(a):
    py = sys.executable
    contenders = {
        "sluice GPU stage": [py, os.path.join(HERE, "sluice_py.py"), "--device", "gpu"],
        # the same with the hybrid decoder's entropy decoding kept on the CPU (hybrid.h)
        "sluice GPU stage, CPU entropy": [py, os.path.join(HERE, "sluice_py.py"), "--device",
                                          "gpu"],
        "sluice CPU": [py, os.path.join(HERE, "sluice_py.py"), "--device", "cpu"],
        "torchvision DataLoader": [py, os.path.join(HERE, "peers.py"), "--lib", "torchvision"],
    }
    rows = []
    for threads in a.threads:
        per = {name: [] for name in contenders}
        for _ in range(a.rounds):
            for name, cmd in contenders.items():
                opt = "--workers" if "peers" in cmd[1] else "--threads"
                extra = ["--build-dir", a.build_dir] if "sluice_py" in cmd[1] else []
                env = {"SLUICE_HYBRID_DEVICE_HUFF": "0"} if "CPU entropy" in name else None
                res = run_json(cmd + ["--workload", "train", "--root", a.root, opt,
                                      str(threads), "--batch", str(a.batch_train),
                                      "--epochs", str(a.epochs)] + extra, env)
                per[name].append(res)
                print(name, threads, res.get("images_per_s", res), flush=True)
        peer = [r.get("images_per_s") for r in per["torchvision DataLoader"]]
        for name, results in per.items():
            ips = [r.get("images_per_s") for r in results]
            ok = [v for v in ips if v]
            ratios = [v / p for v, p in zip(ips, peer) if v and p]
            rows.append({"contender": name, "threads": threads, "images_per_s": ips,
                         "median": statistics.median(ok) if ok else None,
                         "ratio_to_dataloader": statistics.median(ratios) if ratios else None,
                         "errors": [r for r in results if r.get("status") != "ok"][:1],
                         # the last round's per-node busy / device time (sluice rows)
                         "nodes": results[-1].get("nodes") if results else None})
    return rows


def bandwidth(a):
    sys.path.insert(0, os.path.join(a.build_dir, "python"))
    import numpy as np
    import sluice
    from sluice import fn, types

    h, w = a.size
    rng = np.random.default_rng(0)
    batch = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for _ in range(a.batch)]
    mirror = [np.int32(i % 2) for i in range(a.batch)]
    rh, rw = a.resize_in
    rbatch = [rng.integers(0, 256, (rh, rw, 3), dtype=np.uint8) for _ in range(a.resize_batch)]

    # One gpu node per pipeline and one iteration in flight: the node's CUDA events then
    # bracket its own kernels only (the compute stream is shared by a pipeline's nodes and
    # iterations; the host-to-device copy runs on the copy stream).
    def make(kind):
        images = rbatch if kind in ("resize", "d2d_resize") else batch

        @sluice.pipeline_def(batch_size=len(images), num_threads=4, device_id=0,
                             prefetch_queue_depth=1)
        def pipe():
            x = fn.external_source(source=lambda: images, layout="HWC", name="src")
            g = x.gpu()
            if kind in ("cmn", "cmn16"):
                m = fn.external_source(source=lambda: mirror, name="mirror")
                return fn.crop_mirror_normalize(g, device="gpu", output_layout="CHW", mirror=m,
                                                dtype=types.FLOAT if kind == "cmn"
                                                else types.FLOAT16, name="k",
                                                mean=[123.7, 116.3, 103.5],
                                                std=[58.4, 57.1, 57.4])
            if kind == "resize":  # the val pipeline's: shorter side to 256, antialiased linear
                return fn.resize(g, device="gpu", resize_shorter=a.resize_shorter,
                                 interp_type=types.INTERP_LINEAR, antialias=True, name="k")
            return fn.copy(g, device="gpu", name="k")  # cudaMemcpyAsync device to device
        return pipe()

    def device_ms(kind):
        p = make(kind)
        p.build()
        for _ in range(5):
            p.run()
        before = p.executor_statistics()["k"]["gpu_ms"]
        t0 = time.perf_counter()
        for _ in range(a.iters):
            p.run()
        wall = time.perf_counter() - t0
        after = p.executor_statistics()["k"]["gpu_ms"]
        return (after - before) / a.iters, 1e3 * wall / a.iters

    ms, wall = {}, {}
    for kind in ("d2d", "cmn", "cmn16", "d2d_resize", "resize"):
        ms[kind], wall[kind] = device_ms(kind)
    in_bytes = a.batch * h * w * 3
    rin = a.resize_batch * rh * rw * 3
    s = a.resize_shorter / min(rh, rw)  # resize_shorter's output extents (rounded)
    rout = a.resize_batch * round(rh * s) * round(rw * s) * 3
    moved = {"d2d": 2 * in_bytes, "cmn": in_bytes + a.batch * 3 * h * w * 4,
             "cmn16": in_bytes + a.batch * 3 * h * w * 2, "d2d_resize": 2 * rin,
             "resize": rin + rout}
    gbps = {k: (moved[k] / ms[k] / 1e6 if ms[k] else None) for k in ms}
    res = {"batch": a.batch, "size": [h, w, 3], "iterations": a.iters,
           "resize_batch": a.resize_batch, "resize_in": [rh, rw, 3],
           "resize_shorter": a.resize_shorter, "device_ms": ms, "bytes": moved, "GBps": gbps,
           "pipeline_ms_per_iteration": wall,
           # kept from the first version of this report
           "cmn_ms": ms["cmn"], "d2d_ms": ms["d2d"], "cmn_GBps": gbps["cmn"],
           "d2d_GBps": gbps["d2d"]}
    if gbps["d2d"]:
        for k in ("cmn", "cmn16"):
            if gbps[k]:
                res[k + "_fraction_of_copy"] = gbps[k] / gbps["d2d"]
    if gbps["d2d_resize"] and gbps["resize"]:
        # the resize's bound: its input read and output written at the copy's bandwidth (the
        # intermediate of its two separable passes and the tables are extra traffic)
        res["resize_bound_ms"] = moved["resize"] / gbps["d2d_resize"] / 1e6
        res["resize_fraction_of_bound"] = res["resize_bound_ms"] / ms["resize"]
    print(json.dumps(res), flush=True)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", help="a data set made by bench/make_dataset.py")
    ap.add_argument("--threads", type=int, nargs="+", default=[4, 16])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch-train", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=1,
                    help="timed epochs of the train part, after one warm-up epoch (500 photos "
                         "at batch 256 are two iterations an epoch: use a larger set or more)")
    ap.add_argument("--batch", type=int, default=256, help="bandwidth part: images per batch")
    ap.add_argument("--size", type=int, nargs=2, default=[224, 224])
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--resize-batch", type=int, default=64, help="images per resize batch")
    ap.add_argument("--resize-in", type=int, nargs=2, default=[375, 500])
    ap.add_argument("--resize-shorter", type=int, default=256)
    ap.add_argument("--only", choices=("train", "bandwidth"))
    ap.add_argument("--build-dir", default=os.path.join(os.path.dirname(HERE), "build"))
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    report = {"machine": os.uname().nodename, "when": time.strftime("%Y-%m-%d %H:%M:%S")}
    if a.only != "train":
        report["bandwidth"] = bandwidth(a)
    if a.only != "bandwidth":
        if not a.root:
            ap.error("--root is needed for the training part")
        report["train"] = train_rows(a)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "gpu.json"), "w") as f:
        json.dump(report, f, indent=1)
    lines = ["| contender | CPU threads | images/s (median) | × DataLoader |", "|---|---|---|---|"]
    for r in report.get("train", []):
        med = f"{r['median']:.0f}" if r["median"] else "failed"
        ratio = f"{r['ratio_to_dataloader']:.2f}" if r["ratio_to_dataloader"] else "–"
        lines.append(f"| {r['contender']} | {r['threads']} | {med} | {ratio} |")
    if "bandwidth" in report:
        b = report["bandwidth"]
        lines.append("")
        if b.get("cmn_fraction_of_copy"):
            g = b["GBps"]
            lines.append(f"device-to-device copy (cudaMemcpyAsync) {g['d2d']:.0f} GB/s; "
                         f"crop_mirror_normalize float32 CHW {g['cmn']:.0f} GB/s "
                         f"({100 * b['cmn_fraction_of_copy']:.0f} %), float16 CHW "
                         f"{g['cmn16']:.0f} GB/s ({100 * b.get('cmn16_fraction_of_copy', 0):.0f} %)")
        else:
            lines.append("crop_mirror_normalize bandwidth: no device times (emulated GPU?)")
        if b.get("resize_bound_ms"):
            lines.append(f"resize {b['resize_batch']} x {b['resize_in'][0]}x{b['resize_in'][1]} "
                         f"to shorter side {b['resize_shorter']}: {b['device_ms']['resize']:.3f} "
                         f"ms against a bound of {b['resize_bound_ms']:.3f} ms (input + output "
                         f"at the copy's {b['GBps']['d2d_resize']:.0f} GB/s): "
                         f"{100 * b['resize_fraction_of_bound']:.0f} %")
    with open(os.path.join(a.out, "gpu.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
