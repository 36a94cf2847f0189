#!/usr/bin/python3
"""tests/data/make_tfrecord.py: seeded TFRecord files of tf.train.Example records with known
contents, for readers.tfrecord's tests.

    make_tfrecord.py OUT_DIR [--files F] [--records N] [--seed S]

Writes OUT_DIR/data{i}.tfrecord, OUT_DIR/data{i}.idx (the index, written here from the
writer's own offsets: the reference `sluice tfrecord-index` is compared with) and
OUT_DIR/model.json: per file, per record, the features it holds, as
{"name": ["int64" | "float" | "bytes", [values]]} (bytes as latin-1 text, floats already
rounded to float32).

The encoders are written here from the TFRecord and protobuf specifications, independently of
sluice's C parser: a bitwise CRC-32C (no table), varints, and each list written packed or
unpacked, fields and map entries in random order, with unknown fields mixed in. Features:
  "image"  bytes (one value; absent in some records)
  "label"  int64 [1] (full 64-bit range, negative too)
  "grid"   int64 (2, 3) (absent in some records)
  "boxes"  float32, a multiple of 4 values (0 to 3 boxes)
  "score"  float32 (one value)
"""
import argparse
import json
import pathlib
import random
import struct


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(payload):
    """One TFRecord record around payload."""
    n = struct.pack("<Q", len(payload))
    return n + struct.pack("<I", masked_crc(n)) + payload + struct.pack("<I", masked_crc(payload))


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(number, wire):
    return varint(number << 3 | wire)


def ldelim(number, data):
    return key(number, 2) + varint(len(data)) + data


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def encode_list(kind, values, rng):
    """The BytesList / FloatList / Int64List message (field 1 repeated)."""
    if kind == "bytes":
        return b"".join(ldelim(1, v) for v in values)
    packed = rng.random() < 0.5
    if kind == "float":
        if packed and values:
            return ldelim(1, b"".join(struct.pack("<f", v) for v in values))
        return b"".join(key(1, 5) + struct.pack("<f", v) for v in values)
    if packed and values:
        return ldelim(1, b"".join(varint(v) for v in values))
    return b"".join(key(1, 0) + varint(v) for v in values)


def unknown_field(rng):
    n = rng.randrange(4, 30)
    return rng.choice([key(n, 0) + varint(rng.getrandbits(40)),
                       key(n, 5) + bytes(rng.getrandbits(8) for _ in range(4)),
                       key(n, 1) + bytes(rng.getrandbits(8) for _ in range(8)),
                       ldelim(n, b"junk")])


def encode_example(features, rng=None):
    """A serialized tf.train.Example of {name: (kind, values)}; kind "bytes" | "float" |
    "int64" (its field number in Feature: 1, 2, 3)."""
    rng = rng or random.Random(0)
    number = {"bytes": 1, "float": 2, "int64": 3}
    entries = []
    for name, (kind, values) in features.items():
        feat = ldelim(number[kind], encode_list(kind, values, rng))
        parts = [ldelim(1, name.encode()), ldelim(2, feat)]
        rng.shuffle(parts)
        if rng.random() < 0.2:
            parts.append(unknown_field(rng))
        entries.append(ldelim(1, b"".join(parts)))
    rng.shuffle(entries)
    ex = ldelim(1, b"".join(entries))
    if rng.random() < 0.2:
        ex = unknown_field(rng) + ex
    return ex


def random_record(rng):
    feats = {}
    if rng.random() < 0.8:
        feats["image"] = ("bytes", [bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 40)))])
    feats["label"] = ("int64", [rng.choice([rng.randrange(-2**63, 2**63), rng.randrange(0, 10)])])
    if rng.random() < 0.7:
        feats["grid"] = ("int64", [rng.randrange(-1000, 1000) for _ in range(6)])
    feats["boxes"] = ("float", [f32(rng.uniform(-1, 1)) for _ in range(4 * rng.randrange(0, 4))])
    feats["score"] = ("float", [f32(rng.uniform(0, 100))])
    return feats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--files", type=int, default=3)
    ap.add_argument("--records", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(a.seed)
    model = []
    for i in range(a.files):
        recs, idx, blob = [], [], bytearray()
        n = a.records // a.files + (i < a.records % a.files)
        for _ in range(n):
            feats = random_record(rng)
            rec = frame(encode_example(feats, rng))
            idx.append(f"{len(blob)} {len(rec)}\n")
            blob += rec
            recs.append({k: [kind, [v.decode("latin-1") for v in vals] if kind == "bytes"
                                    else vals] for k, (kind, vals) in feats.items()})
        (out / f"data{i}.tfrecord").write_bytes(bytes(blob))
        (out / f"data{i}.idx").write_text("".join(idx))
        model.append(recs)
    (out / "model.json").write_text(json.dumps(model))


if __name__ == "__main__":
    main()
