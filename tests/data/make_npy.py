#!/usr/bin/python3
"""Write seeded .npy files for readers.numpy's tests, with known contents:

    /usr/bin/python3 tests/data/make_npy.py OUTDIR [--seed S]

OUTDIR/<dtype>/<order>/a_XX.npy: for every dtype in DTYPES, both orders ("c", "f") and
SHAPES (rank 0 to 4, so a batch of one rank directory agrees on rank), an array of
random values (np.random.default_rng(seed + k)) written by np.save (np.asfortranarray for
"f"). OUTDIR/special/: the same kind of array written big-endian ('>f4', '>i2'), with a
format 2.0 header, and 3-D arrays in both orders for the ROI tests. Every file is read back
by the tests with np.load, the independent reference.
"""
import argparse
import os

import numpy as np

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64"]
SHAPES = {0: [()] * 3, 1: [(10,), (12,), (1,)], 2: [(10, 10), (12, 7), (3, 11)],
          3: [(6, 2, 5), (5, 6, 2), (3, 3, 3)], 4: [(2, 6, 2, 5), (5, 1, 6, 2), (3, 2, 3, 3)]}


def array(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("float"):
        return (rng.random(shape) * 200 - 100).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def write(out, seed=0):
    k = 0
    for dt in DTYPES:
        for order in ("c", "f"):
            for ndim, shapes in SHAPES.items():
                d = os.path.join(out, dt, order, f"r{ndim}")
                os.makedirs(d, exist_ok=True)
                for i, sh in enumerate(shapes):
                    a = array(np.random.default_rng(seed + k), sh, dt)
                    k += 1
                    if order == "f":
                        a = np.asfortranarray(a)
                    np.save(os.path.join(d, f"a_{i:02d}.npy"), a)
    sp = os.path.join(out, "special")
    os.makedirs(sp, exist_ok=True)
    rng = np.random.default_rng(seed + 10_000)
    np.save(os.path.join(sp, "big_f4.npy"), array(rng, (4, 5), "float32").astype(">f4"))
    np.save(os.path.join(sp, "big_i2_f.npy"),
            np.asfortranarray(array(rng, (3, 4, 2), "int16").astype(">i2")))
    with open(os.path.join(sp, "v2.npy"), "wb") as f:
        np.lib.format.write_array(f, array(rng, (7, 3), "uint16"), version=(2, 0))
    for order in ("c", "f"):
        d = os.path.join(out, "roi", order)
        os.makedirs(d, exist_ok=True)
        for i, sh in enumerate([(10, 12, 5), (13, 9, 4), (20, 15, 3), (8, 8, 8)]):
            a = array(rng, sh, "int32")
            np.save(os.path.join(d, f"v_{i:02d}.npy"),
                    np.asfortranarray(a) if order == "f" else a)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    write(a.out, a.seed)


if __name__ == "__main__":
    main()
