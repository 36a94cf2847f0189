#!/usr/bin/python3
"""sluice's train and val pipelines through the Python API and the PyTorch consumer — the same
graphs as bench/specs/train.json and val.json, written as a DALI user writes them.

    /usr/bin/python3 bench/sluice_py.py --workload train|val --root DIR [--threads N]
                                        [--batch 64] [--prefetch 2] [--warmup 1] [--epochs 1]
                                        [--seed 0] [--device cpu|gpu] [--check]

This is the hook bench/run uses for the "sluice (Python)" rows. Until the Python package
(python/sluice: pipeline_def, fn, types, plugin.pytorch) is importable it prints
{"status": "pending python API: ..."} and exits 0; `--check` only tests that import.
The package is looked up in BUILD_DIR/python (--build-dir, default build/: where the CMake
build puts it), then as installed.

Timing matches bench/peers.py: --warmup epochs, then --epochs timed epochs (images/s over
their wall time); "time_to_first_batch_s" runs from pipe.build() to the first batch the
PyTorch iterator hands out (the figure of issue 5: ≤ 0.3 s). The consumer receives torch
tensors (DALIGenericIterator's contract), so this process's proportional set size, sampled from
outside by bench/run, compares with the DataLoader's on equal terms.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def import_api(build_dir):
    """(pipeline_def, fn, types, DALIGenericIterator, LastBatchPolicy); raises when the package
    or a part of it is missing."""
    sys.path.insert(0, os.path.join(build_dir, "python"))
    from sluice import pipeline_def, fn, types  # noqa: F401
    from sluice.plugin.pytorch import DALIGenericIterator, LastBatchPolicy
    return pipeline_def, fn, types, DALIGenericIterator, LastBatchPolicy


def make_pipelines(pipeline_def, fn, types, gpu=False):
    """The two workloads; with gpu, DALI's GPU placement: the decoder on "mixed" (CPU decode
    into pinned memory, one copy to the device), resize and crop_mirror_normalize on "gpu",
    labels moved with .gpu() — the iterator then hands out CUDA tensors."""
    dec, dev = ("mixed", "gpu") if gpu else ("cpu", "cpu")

    def place(labels):
        return labels.gpu() if gpu else labels

    @pipeline_def
    def train(root):
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="reader")
        images = fn.decoders.image_random_crop(jpegs, device=dec, output_type=types.RGB,
                                               random_area=[0.08, 1.0],
                                               random_aspect_ratio=[3 / 4, 4 / 3],
                                               num_attempts=10)
        images = fn.resize(images, device=dev, resize_x=224, resize_y=224,
                           interp_type=types.INTERP_LINEAR, antialias=True)
        images = fn.crop_mirror_normalize(images, device=dev, dtype=types.FLOAT,
                                          output_layout="CHW", mean=MEAN, std=STD,
                                          mirror=fn.random.coin_flip(probability=0.5))
        return images, place(labels)

    @pipeline_def
    def val(root):
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=False, name="reader")
        images = fn.decoders.image(jpegs, device=dec, output_type=types.RGB)
        images = fn.resize(images, device=dev, resize_shorter=256,
                           interp_type=types.INTERP_LINEAR, antialias=True)
        images = fn.crop_mirror_normalize(images, device=dev, dtype=types.FLOAT,
                                          output_layout="CHW", crop=(224, 224), mean=MEAN,
                                          std=STD)
        return images, place(labels)

    return {"train": train, "val": val}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workload", choices=("train", "val"), default="val")
    ap.add_argument("--root")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--prefetch", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu",
                    help="gpu: decoders on mixed, resize and crop_mirror_normalize on the GPU "
                         "(device_id 0); the consumer gets CUDA tensors")
    ap.add_argument("--build-dir", default=os.path.join(os.path.dirname(HERE), "build"),
                    help="the build tree whose python/ holds the package (default: build)")
    ap.add_argument("--check", action="store_true", help="only test that the API imports")
    a = ap.parse_args()
    try:
        pipeline_def, fn, types, Iterator, LastBatchPolicy = import_api(a.build_dir)
    except Exception as e:  # ImportError, or a half-built package (AttributeError, ...)
        print(json.dumps({"bench": "sluice_py", "workload": a.workload,
                          "status": "pending python API (%s: %s)" % (type(e).__name__, e)}))
        return 0
    if a.check:
        print(json.dumps({"bench": "sluice_py", "status": "ok"}))
        return 0
    if not a.root:
        ap.error("--root is needed")

    import torch
    gpu = a.device == "gpu"
    pipe = make_pipelines(pipeline_def, fn, types, gpu)[a.workload](
        a.root, batch_size=a.batch, num_threads=a.threads, device_id=0 if gpu else None,
        prefetch_queue_depth=a.prefetch, seed=a.seed)
    t0 = time.perf_counter()
    pipe.build()
    it = Iterator(pipe, ["data", "label"], reader_name="reader",
                  last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)
    ttfb, rates, timed_s, timed_images, shape = None, [], 0.0, 0, None
    for epoch in range(a.warmup + a.epochs):
        images = 0
        te = time.perf_counter()
        for out in it:
            x = out[0]["data"]
            if ttfb is None:
                ttfb = time.perf_counter() - t0
                shape = list(x.shape)
            images += x.shape[0]
            del x, out
        if gpu and torch.cuda.is_available():
            torch.cuda.synchronize()
        dt = time.perf_counter() - te
        if epoch >= a.warmup:
            rates.append(images / dt)
            timed_s += dt
            timed_images += images
    print(json.dumps({
        "bench": "sluice_py", "workload": a.workload, "device": a.device, "status": "ok",
        "threads": a.threads,
        "batch": a.batch, "batch_shape": shape, "prefetch": a.prefetch,
        "warmup_epochs": a.warmup, "epochs": a.epochs, "images": timed_images,
        "seconds": round(timed_s, 4), "images_per_s": round(timed_images / timed_s, 1),
        "epoch_images_per_s": [round(r, 1) for r in rates],
        "time_to_first_batch_s": round(ttfb, 4), "torch": torch.__version__,
        # where the time went (every epoch, warm-up included): per node, the CPU threads' busy
        # time and the device time (ms), and the prefetch depth's decisions
        "nodes": {k: {f: v.get(f) for f in ("op", "device", "iterations", "busy_ms", "gpu_ms")}
                  for k, v in pipe.executor_statistics().items()},
        "prefetch_stats": pipe.prefetch_statistics()}, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
