#!/usr/bin/python3
"""tests/data/make_lmdb.py: seeded Caffe and Caffe2 LMDB databases with known contents, for
readers.caffe's and readers.caffe2's tests (and bench/readers.py).

    make_lmdb.py OUT_DIR caffe  [--n N] [--seed S] [--raw]
    make_lmdb.py OUT_DIR caffe2 [--n N] [--seed S] [--raw] [--label-type T] [--num-labels L]
                                [--additional A] [--bbox]

Writes the LMDB database OUT_DIR (through Debian's python3-lmdb) and OUT_DIR.json, the model:
per entry in key order (LMDB's byte order), what the reader must return. From Python:
write_caffe(out, n, seed, raw) / write_caffe2(out, n, seed, ...) return the same list.

The protobuf encoders are written here from the wire-format specification, independently of
sluice's C parser: fields in random order, repeated numbers packed or not, unknown fields
mixed in, and Datum's optional `encoded` sometimes left out (DALI then takes the data as
encoded). Images: JPEGs of the wallpaper-derived test photos (photos.py), or their raw pixels
(H, W, C) with --raw. Keys: "%08d_<name>" with a random name, not in insertion order.
"""
import argparse
import io
import json
import os
import struct
import sys

import lmdb
import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import photos  # noqa: E402


def varint(x):
    x &= (1 << 64) - 1  # negative int32/int64: two's complement in 10 bytes
    out = bytearray()
    while True:
        b = x & 0x7F
        x >>= 7
        if x:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(num, wire):
    return varint(num << 3 | wire)


def f_varint(num, x):
    return key(num, 0) + varint(x)


def f_bytes(num, b):
    return key(num, 2) + varint(len(b)) + b


def f_ints(num, xs, packed):
    if packed:
        return f_bytes(num, b"".join(varint(x) for x in xs)) if xs else b""
    return b"".join(f_varint(num, x) for x in xs)


def f_floats(num, xs, packed):
    if packed:
        return f_bytes(num, struct.pack(f"<{len(xs)}f", *xs)) if xs else b""
    return b"".join(key(num, 5) + struct.pack("<f", x) for x in xs)


def unknown(rng):
    """An unknown field of a random wire type (numbers 50+)."""
    w = int(rng.integers(0, 3))
    num = int(rng.integers(50, 200))
    if w == 0:
        return f_varint(num, int(rng.integers(0, 1 << 40)))
    if w == 1:
        return key(num, 1) + bytes(rng.integers(0, 256, 8, dtype=np.uint8))
    return f_bytes(num, bytes(rng.integers(0, 256, int(rng.integers(0, 9)), dtype=np.uint8)))


def shuffled(rng, fields):
    fields = list(fields) + [unknown(rng) for _ in range(int(rng.integers(0, 3)))]
    order = rng.permutation(len(fields))
    return b"".join(fields[int(i)] for i in order)


def images(n, seed, raw):
    """n (bytes, shape) pairs: JPEG bytes and (len,), or raw pixels and (H, W, C)."""
    rng = np.random.default_rng(seed + 1000)
    out = []
    for k, im in enumerate(photos.load(n, 48, rng)):
        if raw:
            if k % 3 == 1:
                im = im[:, :, :1]  # one channel too
            out.append((im.tobytes(), list(im.shape)))
        else:
            buf = io.BytesIO()
            Image.fromarray(im).save(buf, format="JPEG", quality=90)
            out.append((buf.getvalue(), [len(buf.getvalue())]))
    return out


def names(rng, n):
    """Keys not in insertion order: a random number then the entry number."""
    perm = rng.permutation(n)
    return [f"{int(perm[k]):08d}_img{k}".encode() for k in range(n)]


def commit(out, entries):
    """Writes the (key, value) pairs; returns them in LMDB's (byte) key order."""
    env = lmdb.open(out, map_size=1 << 28, subdir=True)
    with env.begin(write=True) as txn:
        for k, v in entries:
            txn.put(k, v)
    env.close()
    return sorted(entries, key=lambda e: e[0])


def write_caffe(out, n=12, seed=0, raw=False):
    rng = np.random.default_rng(seed)
    imgs = images(n, seed, raw)
    keys = names(rng, n)
    model, entries = {}, []
    for k in range(n):
        data, shape = imgs[k]
        label = int(rng.integers(0, 1000)) * (-1 if k % 5 == 1 else 1)  # negative ones too
        fields = [f_bytes(4, data), f_varint(5, label)]
        if raw:
            fields += [f_varint(1, shape[2]), f_varint(2, shape[0]), f_varint(3, shape[1]),
                       f_varint(7, 0)]
        else:
            # encoded = true, or left out (DALI: encoded); width etc. of the decoded image
            if k % 2:
                fields.append(f_varint(7, 1))
            fields += [f_varint(1, 3), f_varint(2, 1), f_varint(3, 1)]
        fields.append(f_floats(6, [float(x) for x in rng.random(int(rng.integers(0, 3)))],
                               bool(k % 2)))
        entries.append((keys[k], shuffled(rng, fields)))
        model[keys[k]] = {"key": keys[k].decode(), "image": data.hex(), "shape": shape,
                          "label": [label]}
    return [model[k] for k, _ in commit(out, entries)]


def tensor(rng, dtype, dims=(), floats=None, ints=None, int64s=None, byte_data=None,
           strings=None):
    f = []
    if dtype != 1 or rng.random() < 0.5:  # FLOAT is the default: sometimes left out
        f.append(f_varint(2, dtype))
    if dims:
        f.append(f_ints(1, list(dims), bool(rng.random() < 0.5)))
    if floats is not None:
        f.append(f_floats(3, floats, bool(rng.random() < 0.5)))
    if ints is not None:
        f.append(f_ints(4, ints, bool(rng.random() < 0.5)))
    if int64s is not None:
        f.append(f_ints(10, int64s, bool(rng.random() < 0.5)))
    if byte_data is not None:
        f.append(f_bytes(5, byte_data))
    if strings:  # one chunk: the strings keep their order
        f.append(b"".join(f_bytes(6, s) for s in strings))
    if rng.random() < 0.3:
        f.append(f_bytes(7, b"name"))
    return shuffled(rng, f)


def write_caffe2(out, n=12, seed=0, raw=False, label_type=0, num_labels=10, additional=0,
                 bbox=False, image=True, float_labels=False):
    rng = np.random.default_rng(seed)
    imgs = images(n, seed, raw)
    keys = names(rng, n)
    model, entries = {}, []
    f32 = lambda xs: [float(np.float32(x)) for x in xs]  # noqa: E731
    for k in range(n):
        protos, m = [], {"key": keys[k].decode()}
        if image:
            data, shape = imgs[k]
            if raw:
                dims = shape if shape[2] != 1 or k % 2 else shape[:2]  # 2-D: C = 1
                protos.append(tensor(rng, 3, dims=dims, byte_data=data))
            else:
                protos.append(tensor(rng, 4, strings=[data] + ([b"extra"] if k % 4 == 3 else [])))
            m["image"], m["shape"] = data.hex(), shape
        ldt = 1 if float_labels else 2
        put = (lambda xs: tensor(rng, 1, floats=f32(xs))) if float_labels else \
            (lambda xs: tensor(rng, 2, ints=[int(x) for x in xs]))
        if label_type == 0:
            lab = [int(rng.integers(-3, 1000))]
            protos.append(put(lab))
            m["label"] = f32(lab) if float_labels else lab
        elif label_type in (1, 3):
            idx = sorted(int(x) for x in rng.choice(num_labels, int(rng.integers(0, 4)),
                                                    replace=False))
            protos.append(put(idx))
            dense = [0.0] * num_labels
            w = f32(rng.random(len(idx)) + 0.5)
            for j, i in enumerate(idx):
                dense[i] = w[j] if label_type == 3 else 1
            if label_type == 3:
                protos.append(tensor(rng, 1, floats=w))
            m["label"] = dense if label_type == 3 or float_labels else [int(x) for x in dense]
        elif label_type == 2:
            lab = [int(x) for x in rng.integers(-50, 50, int(rng.integers(1, 6)))]
            protos.append(put(lab))
            m["label"] = f32(lab) if float_labels else lab
        m["label_dtype"] = "float32" if float_labels or label_type == 3 else "int32"
        del ldt
        m["additional"] = []
        for a in range(additional):
            kind = a % 3
            cnt = int(rng.integers(0, 5))
            if kind == 0:
                v = f32(rng.normal(size=cnt))
                protos.append(tensor(rng, 1, floats=v))
                m["additional"].append(["float32", v])
            elif kind == 1:
                v = [int(x) for x in rng.integers(-(1 << 31), 1 << 31, cnt)]
                protos.append(tensor(rng, 2, ints=v))
                m["additional"].append(["int32", v])
            else:
                v = [int(x) for x in rng.integers(-(1 << 62), 1 << 62, cnt)]
                protos.append(tensor(rng, 10, int64s=v))
                m["additional"].append(["int64", v])
        if bbox:
            if k % 4 != 2:  # some entries have none
                b = [int(x) for x in rng.integers(0, 500, 4)]
                protos.append(tensor(rng, 2, ints=b))
                m["bbox"] = b
            else:
                m["bbox"] = []
        value = b"".join(f_bytes(1, p) for p in protos)
        entries.append((keys[k], value))
        model[keys[k]] = m
    return [model[k] for k, _ in commit(out, entries)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("kind", choices=["caffe", "caffe2"])
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--raw", action="store_true")
    ap.add_argument("--label-type", type=int, default=0)
    ap.add_argument("--num-labels", type=int, default=10)
    ap.add_argument("--additional", type=int, default=0)
    ap.add_argument("--bbox", action="store_true")
    a = ap.parse_args()
    if a.kind == "caffe":
        model = write_caffe(a.out, a.n, a.seed, a.raw)
    else:
        model = write_caffe2(a.out, a.n, a.seed, a.raw, a.label_type, a.num_labels,
                             a.additional, a.bbox)
    with open(a.out.rstrip("/") + ".json", "w") as fp:
        json.dump(model, fp)


if __name__ == "__main__":
    main()
