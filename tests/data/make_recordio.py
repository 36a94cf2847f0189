#!/usr/bin/python3
"""Write a seeded MXNet RecordIO data set for readers.mxnet's tests, with known contents:

    /usr/bin/python3 tests/data/make_recordio.py OUTDIR [--seed S] [--files F] [--n N]

OUTDIR/part_K.rec and part_K.idx for K < F, N records each, framed as dmlc-core's writer does
(magic 0xced7230a, lrec = cflag << 29 | length, data padded to 4 bytes; data holding the magic
at a 4-aligned position is split there into parts flagged 1, 2..., 3 and the magic dropped) and
indexed as im2rec does ("key\\toffset" lines, here written in a shuffled key order so that the
index's order, not the file's, is the sample order). Record data: IRHeader (uint32 flag, float
label, uint64 id, uint64 id2), `flag` float labels when flag > 0, then the "image": random
bytes of random length; every third record has the magic planted at aligned positions (so it
is split), record 1 of each file has flag 3. OUTDIR/model.json lists, in sample order, each
record's file, key, image bytes (hex) and labels: what the reader must return.
"""
import argparse
import json
import os
import struct

import numpy as np

MAGIC = 0xCED7230A


def frame(data):
    """The record's bytes as dmlc::RecordIOWriter writes them."""
    out = bytearray()
    m = struct.pack("<I", MAGIC)
    parts, start = [], 0
    for i in range(0, len(data) - len(data) % 4, 4):
        if data[i:i + 4] == m:
            parts.append(data[start:i])
            start = i + 4
    parts.append(data[start:])
    for k, p in enumerate(parts):
        cflag = 0 if len(parts) == 1 else 1 if k == 0 else 3 if k == len(parts) - 1 else 2
        out += struct.pack("<II", MAGIC, cflag << 29 | len(p)) + p + bytes(-len(p) % 4)
    return bytes(out), len(parts)


def record(rng, k):
    flag = 3 if k == 1 else 0
    label = float(np.float32(rng.integers(0, 1000) / 4))
    labels = [float(x) for x in (rng.random(flag) * 100).astype(np.float32)]
    img = bytearray(rng.integers(0, 256, size=int(rng.integers(1, 400)), dtype=np.uint8))
    if k % 3 == 2:
        for pos in (0, 8, len(img) // 8 * 4):
            if pos + 4 <= len(img):
                img[pos:pos + 4] = struct.pack("<I", MAGIC)
    head = struct.pack("<IfQQ", flag, label, k, 0) + struct.pack(f"<{flag}f", *labels)
    return head + bytes(img), bytes(img), (labels if flag else [label])


def write(out, seed=0, files=2, n=10):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(seed)
    model = []
    for f in range(files):
        rec, entries = bytearray(), []
        for k in range(n):
            data, img, labels = record(rng, k)
            framed, nparts = frame(data)
            entries.append((k, len(rec), img, labels, nparts))
            rec += framed
        with open(os.path.join(out, f"part_{f}.rec"), "wb") as fp:
            fp.write(rec)
        order = list(rng.permutation(n))
        with open(os.path.join(out, f"part_{f}.idx"), "w") as fp:
            for j in order:
                fp.write(f"{entries[j][0]}\t{entries[j][1]}\n")
        for j in order:
            k, off, img, labels, nparts = entries[j]
            model.append({"file": f"part_{f}.rec", "key": k, "offset": off, "image": img.hex(),
                          "labels": labels, "parts": nparts})
    with open(os.path.join(out, "model.json"), "w") as fp:
        json.dump(model, fp)
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--files", type=int, default=2)
    ap.add_argument("--n", type=int, default=10)
    a = ap.parse_args()
    write(a.out, a.seed, a.files, a.n)


if __name__ == "__main__":
    main()
