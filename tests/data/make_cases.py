#!/usr/bin/python3
"""Writes every operator reference case: make_cases.py OUTDIR [GROUP ...].

Each module tests/data/cases/<group>.py defines make(out, rng) and writes its cases into
OUTDIR/<group>/ with casekit.Case; expected outputs are computed there with an independent
reference (PIL, OpenCV, NumPy, hand-computed). tests/c/test_op_cases.c runs them all. The rng of
a group is seeded from the group's name, so groups are independent and reproducible.
"""
import importlib.util
import os
import shutil
import sys
import time
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    wanted = set(sys.argv[2:])
    groups = sorted(f[:-3] for f in os.listdir(os.path.join(HERE, "cases"))
                    if f.endswith(".py") and not f.startswith("_"))
    total, t0 = 0, time.time()
    for g in groups:
        if wanted and g not in wanted:
            continue
        spec = importlib.util.spec_from_file_location("case_" + g,
                                                      os.path.join(HERE, "cases", g + ".py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        gdir = os.path.join(out, g)
        shutil.rmtree(gdir, ignore_errors=True)
        os.makedirs(gdir)
        mod.make(gdir, np.random.default_rng(zlib.crc32(g.encode())))
        total += len([f for f in os.listdir(gdir) if f.endswith(".json")])
    print("make_cases.py: %d cases in %d groups under %s (%.1f s)"
          % (total, len(groups), out, time.time() - t0))


if __name__ == "__main__":
    main()
