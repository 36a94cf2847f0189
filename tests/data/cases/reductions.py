"""reductions.* against NumPy: sum, min, max, mean, mean_square, rms, std_dev, variance.

Independent reference: NumPy's reductions over the same axes (np.sum with the output dtype for
the integer sums, which wraps as accumulating in that type does; float64 for the means and
deviations, compared with a float32 tolerance). Layouts: the input's without the reduced letters
(kept with keep_dims). Ragged samples, a reduction over no axes, samples with a 0 extent, and the
error cases (an axis out of range, an empty min, a mean of the wrong size).
"""
import numpy as np

from casekit import Case

SUM_DEFAULT = {np.uint8: np.uint64, np.uint16: np.uint64, np.uint32: np.uint64,
               np.int8: np.int64, np.int16: np.int64, np.int32: np.int64}


def layout_of(layout, axes, ndim, keep):
    if keep:
        return layout
    if axes is None:
        return ""
    return "".join(c for i, c in enumerate(layout) if i not in [a % ndim for a in axes])


def args_of(axes, keep, **more):
    a = {"keep_dims": keep, **more}
    if axes is not None:
        a["axes"] = list(axes)
    return a


def make(out, rng):
    shapes = [(3, 4, 5), (2, 1, 6), (4, 3, 1)]
    for dtype in (np.uint8, np.int16, np.int32, np.float32):
        data = [rng.integers(0, 120, size=s).astype(dtype) for s in shapes]
        if dtype == np.int32:
            data = [d * 40000 for d in data]  # sums that overflow int32
        for axes in (None, (0,), (1, 2), (-1,), ()):
            for keep in (False, True):
                if axes is None and not keep:
                    continue  # a 0-d result: casekit saves arrays of at least 1-D (Python tests)
                tag = "%s_%s_%s" % (np.dtype(dtype).name, "all" if axes is None else
                                    "_".join(str(a) for a in axes) or "none", int(keep))
                lay = layout_of("ABC", axes, 3, keep)
                want = SUM_DEFAULT.get(dtype, dtype)
                (Case(out, "sum_" + tag, "reductions.sum", args_of(axes, keep))
                 .input(data, "ABC")
                 .expect([np.sum(d, axis=axes, keepdims=keep, dtype=want) for d in data],
                         layout=lay).save())
                for op, f in (("min", np.min), ("max", np.max)):
                    (Case(out, op + "_" + tag, "reductions." + op, args_of(axes, keep))
                     .input(data, "ABC")
                     .expect([f(d, axis=axes, keepdims=keep) for d in data], layout=lay).save())
                f64 = [d.astype(np.float64) for d in data]
                refs = {"mean": [np.mean(d, axis=axes, keepdims=keep) for d in f64],
                        "mean_square": [np.mean(d * d, axis=axes, keepdims=keep) for d in f64]}
                refs["rms"] = [np.sqrt(r) for r in refs["mean_square"]]
                for op, ref in refs.items():
                    tol = 1e-6 * max(float(np.max(np.abs(r))) for r in ref) + 1e-6
                    (Case(out, op + "_" + tag, "reductions." + op, args_of(axes, keep))
                     .input(data, "ABC")
                     .expect([r.astype(np.float32) for r in ref], max_abs=tol, layout=lay)
                     .save())
                for op, f in (("std_dev", np.std), ("variance", np.var)):
                    ddof = 1 if axes is None else 0  # N - ddof > 0 everywhere
                    ref = [f(d, axis=axes, keepdims=keep, ddof=ddof) for d in f64]
                    mean = [np.mean(d, axis=axes, keepdims=keep).astype(np.float32) for d in f64]
                    tol = 1e-5 * max(float(np.max(np.abs(r))) for r in ref) + 1e-5
                    (Case(out, op + "_" + tag, "reductions." + op,
                          args_of(axes, keep, ddof=ddof))
                     .input(data, "ABC").input(mean)
                     .expect([r.astype(np.float32) for r in ref], max_abs=tol, layout=lay)
                     .save())
    # a narrower accumulator wraps: sum of uint8 as uint8
    data = [rng.integers(200, 255, size=(7, 3)).astype(np.uint8) for _ in range(2)]
    (Case(out, "sum_uint8_dtype_uint8", "reductions.sum", {"axes": [0], "dtype": "uint8"})
     .input(data).expect([np.sum(d, axis=0, dtype=np.uint8) for d in data]).save())
    # 0 extents: a sum of nothing is 0, a mean NaN-free only where something is reduced
    empty = [np.zeros((0, 3), np.float32), np.ones((2, 0), np.float32)]
    (Case(out, "sum_empty", "reductions.sum", {"axes": [0]}).input(empty)
     .expect([np.zeros(3, np.float32), np.zeros(0, np.float32)]).save())
    (Case(out, "err_axis_range", "reductions.sum", {"axes": [3]})
     .input([np.zeros((2, 2, 2), np.uint8)]).expect_error("Axis index out of range").save())
    (Case(out, "err_min_empty", "reductions.min", {"axes": [0]})
     .input([np.zeros((0, 2), np.float32)]).expect_error("empty set").save())
    (Case(out, "err_mean_size", "reductions.std_dev", {"axes": [0]})
     .input([np.zeros((4, 3), np.float32)]).input([np.zeros(2, np.float32)])
     .expect_error("has 2 values; the reduction has 3").save())
