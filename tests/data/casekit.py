"""Writing operator test cases for tests/c/test_op_cases.c.

    from casekit import Case
    c = Case(out, "linear_down", "resize", args={"resize_x": 64}, note="PIL BILINEAR")
    c.input([img0, img1], layout="HWC")          # positional input 0, one array per sample
    c.arg_input("angle", [np.float32(30), ...])  # optional per-sample argument input
    c.expect([ref0, ref1], max_abs=1, mean_abs=0.3, layout="HWC")   # output 0
    c.save()
or c.expect_error("out of bounds").save() for a case that must fail.
"""
import json
import os

import numpy as np


class Case:
    def __init__(self, out, name, op, args=None, note=""):
        self.out, self.name = out, name
        self.spec = {"op": op, "args": args or {}, "inputs": [], "layouts": [], "note": note}
        self.arrays = {}

    def _files(self, tag, samples):
        names = []
        for i, a in enumerate(samples):
            a = np.ascontiguousarray(np.asarray(a))
            if a.dtype.byteorder == ">":
                a = a.astype(a.dtype.newbyteorder("<"))
            fname = "%s.%s.%d.npy" % (self.name, tag, i)
            self.arrays[fname] = a
            names.append(fname)
        return names

    def input(self, samples, layout=""):
        k = len(self.spec["inputs"])
        self.spec["inputs"].append(self._files("in%d" % k, samples))
        self.spec["layouts"].append(layout)
        return self

    def arg_input(self, name, samples):
        self.spec.setdefault("arg_inputs", {})[name] = self._files("arg_" + name, samples)
        return self

    def expect(self, samples, max_abs=0, mean_abs=None, layout=None):
        e = {"samples": self._files("out%d" % len(self.spec.get("expect", [])), samples),
             "max_abs": max_abs}
        if mean_abs is not None:
            e["mean_abs"] = mean_abs
        if layout is not None:
            e["layout"] = layout
        self.spec.setdefault("expect", []).append(e)
        return self

    def expect_error(self, text):
        self.spec["expect_error"] = text
        return self

    def batch(self, n):
        """Batch size for a case without tensor inputs."""
        self.spec["batch"] = n
        return self

    def save(self):
        os.makedirs(self.out, exist_ok=True)
        for fname, a in self.arrays.items():
            np.save(os.path.join(self.out, fname), a, allow_pickle=False)
        with open(os.path.join(self.out, self.name + ".json"), "w") as f:
            json.dump(self.spec, f, indent=1, sort_keys=True)
