#!/usr/bin/python3
"""Each reader's throughput against reading the same samples as plain files (issue 20).

    /usr/bin/python3 bench/readers.py [--n 2000] [--threads 2] [--batch 64] [--rounds 3]
                                      [--epochs 2] [--json FILE]

The same N samples — JPEG encodings of the wallpaper-derived test photos (tests/data/photos.py,
32 distinct ones cycled, each sample its own copy) with the label k % 10 — are written once into
every format with the project's writers and indexers: plain files in class folders
(readers.file), TFRecord (make_tfrecord.py's Example encoder, `sluice tfrecord-index`),
WebDataset tar (tarfile, jpg + cls), MXNet RecordIO (make_recordio.py's framing,
`sluice rec-index`), Caffe and Caffe2 LMDB (make_lmdb.py's encoders, python3-lmdb) and NumPy
(each sample's bytes as a 1-D uint8 .npy). readers.sequence is left out: it decodes its frames,
so it does not read "the same samples".

Each reader runs in the same process in a pipeline of --threads threads and batch --batch
producing the encoded bytes (and the label where the format has one; readers.numpy only the
bytes), nothing else: one warm-up epoch (the files then sit in the page cache), then --epochs
timed epochs; samples/s over their wall time. Readers are interleaved for --rounds rounds; the
table shows the median samples/s and its ratio to readers.file's median (> 1: faster than plain
files). The machine's load average is printed before and after: the machine may be shared.
"""
import argparse
import io
import json
import os
import statistics
import struct
import subprocess
import sys
import tarfile
import tempfile
import time

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests/data"))
import make_lmdb  # noqa: E402
import make_recordio  # noqa: E402
import make_tfrecord  # noqa: E402
import photos  # noqa: E402

import sluice  # noqa: E402
from sluice import fn, pipeline_def  # noqa: E402

CLI = os.environ.get("SLUICE_CLI", os.path.join(ROOT, "build/sluice"))


def samples(n):
    rng = np.random.default_rng(0)
    jpegs = []
    for im in photos.load(32, 320, rng):
        buf = io.BytesIO()
        Image.fromarray(im).save(buf, format="JPEG", quality=90)
        jpegs.append(buf.getvalue())
    return [jpegs[k % len(jpegs)] for k in range(n)]


def write_all(out, data):
    """Writes the samples in every format; returns {reader: (op, kwargs)}."""
    import lmdb
    n = len(data)
    files = os.path.join(out, "files")
    for k, d in enumerate(data):
        os.makedirs(os.path.join(files, f"c{k % 10}"), exist_ok=True)
        with open(os.path.join(files, f"c{k % 10}", f"{k:06d}.jpg"), "wb") as fp:
            fp.write(d)
    tfr = os.path.join(out, "data.tfrecord")
    with open(tfr, "wb") as fp:
        for k, d in enumerate(data):
            fp.write(make_tfrecord.frame(make_tfrecord.encode_example(
                {"image/encoded": ("bytes", [d]), "label": ("int64", [k % 10])})))
    subprocess.run([CLI, "tfrecord-index", tfr, tfr + ".idx"], check=True, capture_output=True)
    tar = os.path.join(out, "data.tar")
    with tarfile.open(tar, "w") as t:
        for k, d in enumerate(data):
            for ext, b in (("jpg", d), ("cls", str(k % 10).encode())):
                info = tarfile.TarInfo(f"{k:06d}.{ext}")
                info.size = len(b)
                t.addfile(info, io.BytesIO(b))
    rec = os.path.join(out, "data.rec")
    with open(rec, "wb") as fp:
        for k, d in enumerate(data):
            fp.write(make_recordio.frame(struct.pack("<IfQQ", 0, float(k % 10), k, 0) + d)[0])
    subprocess.run([CLI, "rec-index", rec, rec[:-4] + ".idx"], check=True, capture_output=True)
    F = make_lmdb
    for kind in ("caffe", "caffe2"):
        env = lmdb.open(os.path.join(out, kind), map_size=1 << 32)
        with env.begin(write=True) as txn:
            for k, d in enumerate(data):
                if kind == "caffe":
                    v = F.f_bytes(4, d) + F.f_varint(5, k % 10) + F.f_varint(7, 1)
                else:
                    v = (F.f_bytes(1, F.f_varint(2, 4) + F.f_bytes(6, d))
                         + F.f_bytes(1, F.f_varint(2, 2) + F.f_varint(4, k % 10)))
                txn.put(f"{k:08d}".encode(), v)
        env.close()
    npy = os.path.join(out, "npy")
    os.makedirs(npy)
    for k, d in enumerate(data):
        np.save(os.path.join(npy, f"{k:06d}.npy"), np.frombuffer(d, np.uint8))
    assert n == len(os.listdir(npy))
    return {
        "readers.file": ("file", dict(file_root=files)),
        "readers.tfrecord": ("tfrecord", dict(
            path=tfr, index_path=tfr + ".idx",
            features={"image/encoded": sluice.tfrecord.FixedLenFeature((), sluice.tfrecord.string, ""),
                      "label": sluice.tfrecord.FixedLenFeature([1], sluice.tfrecord.int64, -1)})),
        "readers.webdataset": ("webdataset", dict(paths=tar, ext=["jpg", "cls"])),
        "readers.mxnet": ("mxnet", dict(path=rec, index_path=rec[:-4] + ".idx")),
        "readers.caffe": ("caffe", dict(path=os.path.join(out, "caffe"))),
        "readers.caffe2": ("caffe2", dict(path=os.path.join(out, "caffe2"))),
        "readers.numpy": ("numpy", dict(file_root=npy)),
    }


def measure(op, kw, n, threads, batch, epochs):
    @pipeline_def(batch_size=batch, num_threads=threads, device_id=None)
    def p():
        out = getattr(fn.readers, op)(**kw)
        if isinstance(out, dict):
            out = tuple(out.values())
        return tuple(out) if isinstance(out, (list, tuple)) else out
    pipe = p()
    pipe.build()
    iters = (n + batch - 1) // batch
    for _ in range(iters):  # warm-up epoch
        pipe.run()
    t = time.perf_counter()
    for _ in range(iters * epochs):
        pipe.run()
    return iters * epochs * batch / (time.perf_counter() - t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--json")
    a = ap.parse_args()
    load0 = open("/proc/loadavg").read().split()[:3]
    with tempfile.TemporaryDirectory(prefix="sluice-bench-readers-") as out:
        readers = write_all(out, samples(a.n))
        rates = {r: [] for r in readers}
        for _ in range(a.rounds):
            for r, (op, kw) in readers.items():
                rates[r].append(measure(op, kw, a.n, a.threads, a.batch, a.epochs))
    load1 = open("/proc/loadavg").read().split()[:3]
    base = statistics.median(rates["readers.file"])
    print(f"bench/readers.py --n {a.n} --threads {a.threads} --batch {a.batch} "
          f"--rounds {a.rounds} --epochs {a.epochs}; {os.cpu_count()} CPUs, load average "
          f"{' '.join(load0)} before, {' '.join(load1)} after")
    print()
    print("| reader | samples/s (median) | best | vs readers.file |")
    print("|---|---:|---:|---:|")
    res = {}
    for r, v in rates.items():
        med = statistics.median(v)
        res[r] = {"median": med, "rounds": v, "ratio": med / base}
        print(f"| {r} | {med:,.0f} | {max(v):,.0f} | {med / base:.2f} |")
    if a.json:
        with open(a.json, "w") as fp:
            json.dump({"args": vars(a), "load": [load0, load1], "readers": res}, fp, indent=1)


if __name__ == "__main__":
    main()
