#!/usr/bin/python3
"""tests/data/make_wds.py: seeded WebDataset tar shards with known contents, for
readers.webdataset's tests, written with Python's tarfile.

    make_wds.py OUT_DIR [--shards F] [--samples N] [--seed S]

Writes OUT_DIR/shard{i}.tar and OUT_DIR/model.json: per shard, per sample, {"key": KEY,
"members": {EXT: bytes as latin-1 text}} in the archive's order. Samples have:
  "jpg" (some "JPG": upper case, for case_sensitive_extensions) random bytes,
  "cls" the label as text (missing in some samples), "f32" 0 to 5 float32 values (raw bytes),
  "seg.png" (a two-dot extension) in some.
Some keys live in sub-directories; one key of every shard is longer than 100 bytes (a pax
header); each shard also holds a directory entry and a hidden file, which belong to no sample.
"""
import argparse
import io
import json
import pathlib
import random
import struct
import tarfile


def add(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0
    tar.addfile(info, io.BytesIO(data))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(a.seed)
    model, k = [], 0
    for s in range(a.shards):
        n = a.samples // a.shards + (s < a.samples % a.shards)
        samples = []
        with tarfile.open(out / f"shard{s}.tar", "w", format=tarfile.PAX_FORMAT) as tar:
            d = tarfile.TarInfo("dir")
            d.type = tarfile.DIRTYPE
            tar.addfile(d)
            add(tar, "dir/.hidden.txt", b"not a sample")
            for j in range(n):
                key = f"dir/s{k:05d}" if k % 3 == 0 else f"s{k:05d}"
                if j == 1:
                    key = "long/" + "x" * 110 + f"{k:05d}"
                k += 1
                m = {}
                m["JPG" if rng.random() < 0.25 else "jpg"] = bytes(
                    rng.getrandbits(8) for _ in range(rng.randrange(1, 64)))
                if rng.random() < 0.75:
                    m["cls"] = str(rng.randrange(1000)).encode()
                m["f32"] = b"".join(struct.pack("<f", rng.uniform(-10, 10))
                                    for _ in range(rng.randrange(0, 6)))
                if rng.random() < 0.5:
                    m["seg.png"] = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 20)))
                items = list(m.items())
                rng.shuffle(items)
                for ext, data in items:
                    add(tar, f"{key}.{ext}", data)
                samples.append({"key": key, "members": {e: v.decode("latin-1")
                                                        for e, v in items}})
        model.append(samples)
    (out / "model.json").write_text(json.dumps(model))


if __name__ == "__main__":
    main()
