"""tensor_subscript against NumPy's basic indexing (the operator behind DataNode indexing).

Every expected output is `sample[index]` computed by NumPy on the same arrays, so the cases check
NumPy's rules: negative indices and bounds count from the end, slice bounds are clipped, steps
of any sign, "..." anywhere, None (new axes), integer indices dropping axes and layout letters.
Inputs: photos (HWC uint8), random arrays of every dtype and 1 to 5 dimensions with samples of
different shapes (each resolves the index against its own shape), 1x1 and empty samples.
Random indices are drawn per case; integer indices are kept inside the smallest extent of the
batch so that NumPy accepts every sample. Errors: out-of-range index, too many indices, bad
strings, two ellipses, step 0 (literal and per sample), unused or missing named arguments.
"""
import numpy as np

import photos
from casekit import Case

DTYPES = ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "float16", "float32", "float64", "bool"]


def tokens(index):
    """The `subscript` argument of an index tuple: Python's own spelling of each position."""
    out = []
    for x in index:
        if x is Ellipsis:
            out.append("...")
        elif x is None:
            out.append("None")
        elif isinstance(x, slice):
            parts = ["" if v is None else str(v) for v in (x.start, x.stop, x.step)]
            out.append(":".join(parts) if x.step is not None else ":".join(parts[:2]))
        else:
            out.append(str(x))
    return out


def layout_of(layout, index, ndim):
    """Letters of the kept axes (none when a new axis is inserted), computed from the index."""
    if not layout or any(x is None for x in index):
        return ""
    written = [x for x in index if x is not Ellipsis]
    full = list(index) if Ellipsis in index else list(index) + [Ellipsis]
    kept, d = [], 0
    for x in full:
        if x is Ellipsis:
            n = ndim - len(written)
            kept += list(layout[d:d + n])
            d += n
        elif isinstance(x, slice):
            kept.append(layout[d])
            d += 1
        else:
            d += 1
    return "".join(kept)


def random_bound(rng, n):
    r = rng.random()
    if r < 0.25:
        return None
    return int(rng.integers(-n - 3, n + 4))


def random_index(rng, shapes):
    """A random basic index valid for all of `shapes` (same ndim)."""
    ndim = len(shapes[0])
    n_written = int(rng.integers(0, ndim + 1))
    # the written positions are the first ones, or (with an ellipsis) split around it
    use_ell = rng.random() < 0.5
    k = int(rng.integers(0, n_written + 1)) if use_ell else n_written
    front = list(range(k))
    back = list(range(ndim - (n_written - k), ndim))
    items = []
    for d in front + back:
        mn, mx = min(s[d] for s in shapes), max(s[d] for s in shapes)
        if mn > 0 and rng.random() < 0.3:
            items.append(int(rng.integers(-mn, mn)))
        else:
            step = None if rng.random() < 0.3 else int(rng.choice([-3, -2, -1, 1, 2, 5]))
            items.append(slice(random_bound(rng, mx), random_bound(rng, mx), step))
    if use_ell:
        items.insert(k, Ellipsis)
    for _ in range(int(rng.integers(0, 3)) if rng.random() < 0.3 else 0):
        items.insert(int(rng.integers(0, len(items) + 1)), None)
    return tuple(items)


def case(out, name, samples, index, layout="", note=""):
    """One case; skipped when the result is 0-D (casekit stores arrays as at least 1-D; the
    Python tests cover 0-D results)."""
    ndim = samples[0].ndim
    exp = [np.asarray(a[index]) for a in samples]
    if exp[0].ndim == 0:
        return
    c = Case(out, name, "tensor_subscript", {"subscript": tokens(index)},
             note=note or "NumPy: sample%s" % (str(index).replace("Ellipsis", "...")))
    c.input(samples, layout).expect(exp, layout=layout_of(layout, index, ndim) if layout
                                    else None).save()


def make_named(out, rng, imgs):
    """The issue's examples and each kind of position on HWC photos."""
    ex = {
        "flip_last": (Ellipsis, slice(None, None, -1)),
        "rows_col0": (slice(10, 20), slice(None), 0),
        "last_row": (-1,),
        "strided": (slice(None, None, 2), slice(None, None, -3)),
        "first": (0,),
        "column": (slice(None), 1),
        "hflip": (slice(None), slice(None, None, -1)),
        "vflip_crop": (slice(-5, 2, -2), slice(3, -3)),
        "channel_last_int": (Ellipsis, -1),
        "middle_ellipsis": (2, Ellipsis, 0),
        "pixel": (3, 4),
        "none_front": (None, Ellipsis),
        "none_everywhere": (None, 1, None, slice(None, None, 3), Ellipsis, None),
        "clip_both": (slice(-1000, 1000), slice(1000, -1000, -1)),
        "empty_range": (slice(7, 3), ),
        "empty_backward": (slice(3, 7, -1), ),
        "huge_step": (slice(None, None, 1000), slice(None, None, -1000)),
        "nothing": (),
        "ellipsis_only": (Ellipsis,),
        "all_written": (slice(1, None), slice(None, -1), slice(None, None, -1)),
    }
    for name, index in ex.items():
        case(out, "hwc_" + name, imgs, index, "HWC")


def make_random(out, rng):
    """Random indices on random arrays of every dtype and 1..5 dimensions."""
    k = 0
    for dt in DTYPES:
        for ndim in range(1, 6):
            shapes = [tuple(int(v) for v in rng.integers(1, 7, ndim)) for _ in range(3)]
            if ndim and rng.random() < 0.3:  # an empty sample somewhere
                s = list(shapes[1])
                s[int(rng.integers(0, ndim))] = 0
                shapes[1] = tuple(s)
            samples = [rng.integers(0, 100, s).astype(dt) if dt[0] in "ui" else
                       (rng.standard_normal(s) * 50).astype(dt) for s in shapes]
            for _ in range(2):
                index = random_index(rng, shapes)
                case(out, "rand_%02d_%s_%dd" % (k, dt, ndim), samples, index,
                     "ABCDE"[:ndim] if rng.random() < 0.5 else "")
                k += 1


def make_edges(out, rng):
    one = [np.array([[7]], np.int16), np.array([[-3]], np.int16)]
    for name, index in {"1x1_int": (0,), "1x1_neg": (Ellipsis, -1),
                        "1x1_slice": (slice(None, None, -1), 0), "1x1_empty": (slice(1, None),),
                        "1x1_new": (None, 0, None)}.items():
        case(out, name, one, index)
    empty = [np.zeros((0, 4), np.float32), np.zeros((3, 0), np.float32),
             np.zeros((0, 0), np.float32)]
    for name, index in {"empty_flip": (slice(None, None, -1), slice(None, None, -1)),
                        "empty_range": (slice(1, -1), slice(-2, None)),
                        "empty_new": (None, Ellipsis, None)}.items():
        case(out, name, empty, index)
    vec = [np.arange(10, dtype=np.int32), np.arange(3, dtype=np.int32)]
    case(out, "1d_new_int", vec, (None, -3, None), note="the integer's axis goes, new ones come")
    case(out, "1d_backward", vec, (slice(-2, None, -2),))


def make_per_sample(out, rng, imgs):
    at = [np.int32(v) for v in (0, -1, 5, -7)]
    (Case(out, "arg_at", "tensor_subscript", {"subscript": ["at", "::-1"]},
          note="per-sample integer index (an argument input)")
     .input(imgs, "HWC").arg_input("at", at)
     .expect([im[int(a), ::-1] for im, a in zip(imgs, at)], layout="WC").save())
    lo = [np.int64(v) for v in (2, -4, 0, 100)]
    hi = [np.int32(v) for v in (-1, 1, 9, 0)]
    step = [np.int16(v) for v in (1, -1, 3, -2)]
    (Case(out, "arg_lo_hi_step", "tensor_subscript",
          {"subscript": ["...", "lo:hi:step", "1"]},
          note="per-sample start, stop and step on the W axis")
     .input(imgs, "HWC").arg_input("lo", lo).arg_input("hi", hi).arg_input("step", step)
     .expect([im[..., int(a):int(b):int(s), 1] for im, a, b, s in zip(imgs, lo, hi, step)],
             layout="HW").save())
    (Case(out, "arg_step_open", "tensor_subscript", {"subscript": ["::step", "lo:"]},
          note="open bounds with a per-sample step of either sign")
     .input(imgs, "HWC").arg_input("step", step).arg_input("lo", lo)
     .expect([im[::int(s), int(a):] for im, a, s in zip(imgs, lo, step)], layout="HWC")
     .save())


def make_errors(out, imgs):
    one = imgs[:1]
    h = one[0].shape[0]
    err = {
        "err_index_high": (["%d" % h], "index %d is out of bounds for axis 0 with size %d"
                           % (h, h)),
        "err_index_low": (["...", "-4"], "index -4 is out of bounds for axis 2 with size 3"),
        "err_too_many": (["0", "0", "0", "0"], "too many indices"),
        "err_token": (["1:2:3:4"], "is not an integer index"),
        "err_word": (["first"], "is not an integer index"),
        "err_float": (["1.5"], "is not an integer index"),
        "err_two_ellipses": (["...", "0", "..."], "single ellipsis"),
        "err_step_zero": (["::0"], "step cannot be zero"),
        "err_missing_arg": (["at"], "the argument is not given"),
    }
    for name, (sub, msg) in err.items():
        Case(out, name, "tensor_subscript", {"subscript": sub}).input(one, "HWC") \
            .expect_error(msg).save()
    (Case(out, "err_unused_arg", "tensor_subscript", {"subscript": [":"], "at": 1})
     .input(one, "HWC").expect_error("no subscript position reads it").save())
    (Case(out, "err_arg_step_zero", "tensor_subscript", {"subscript": ["::step"]})
     .input(imgs, "HWC").arg_input("step", [np.int32(v) for v in (1, 0, 2, 1)])
     .expect_error("step cannot be zero").save())
    (Case(out, "err_arg_index", "tensor_subscript", {"subscript": [":", "at"]})
     .input(imgs, "HWC").arg_input("at", [np.int32(-1000)] * len(imgs))
     .expect_error("out of bounds for axis 1").save())


def make(out, rng):
    imgs = photos.load(4, 48, rng)
    make_named(out, rng, imgs)
    make_random(out, rng)
    make_edges(out, rng)
    make_per_sample(out, rng, imgs)
    make_errors(out, imgs)
