"""tests/python/test_readers_numpy.py: readers.numpy on files written by tests/data/make_npy.py
(np.save in C and Fortran order, every supported dtype, ranks 0-4, big-endian, format 2.0),
checked against np.load of the same files; regions of interest against NumPy slicing of the
full array (a model of DALI's rules written here: relative coordinates times the extent,
rounded half away from zero; pad / trim_to_shape) and against fn.slice; the bytes read for a
small region of a large file; sharding and shuffling; unsupported dtypes, mismatched batches
and corrupt or truncated files failing with the operator and the file named."""
import math
import pathlib
import subprocess

import numpy as np
import pytest

import sluice
from sluice import fn, pipeline_def

ROOT = pathlib.Path(__file__).resolve().parents[2]
DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64"]


@pytest.fixture(scope="module")
def npd(tmp_path_factory):
    out = tmp_path_factory.mktemp("npy")
    subprocess.run(["/usr/bin/python3", str(ROOT / "tests/data/make_npy.py"), str(out),
                    "--seed", "7"], check=True)
    return out


def run(batch, iters, num_threads=2, **kw):
    """[(array, source)] of `iters` iterations of readers.numpy(**kw)."""
    @pipeline_def(batch_size=batch, num_threads=num_threads, device_id=None,
                  prefetch_queue_depth=1)
    def p():
        return fn.readers.numpy(**kw)
    pipe = p()
    pipe.build()
    res = []
    for _ in range(iters):
        out, = pipe.run()
        for i in range(batch):
            res.append(np.array(out.at(i)))
    return res


def files_of(d):
    return sorted(str(f) for f in pathlib.Path(d).rglob("*.npy"))


def same(got, want):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["c", "f"])
def test_every_dtype_both_orders_match_np_load(npd, dtype, order):
    for ndim in range(5):
        d = npd / dtype / order / f"r{ndim}"
        files = files_of(d)
        ref = [np.load(f) for f in files]
        if order == "f" and ndim >= 2:
            assert all(np.isfortran(np.load(f)) for f in files)  # the files really are F-order
        got = run(len(files), 1, file_root=str(d))
        for g, w in zip(got, ref):
            same(g, w)
            assert g.flags["C_CONTIGUOUS"]


def test_files_and_file_list_modes(npd, tmp_path):
    d = npd / "float32" / "f" / "r3"
    names = ["a_02.npy", "a_00.npy", "a_01.npy"]
    ref = [np.load(d / n) for n in names]
    for g, w in zip(run(3, 1, file_root=str(d), files=names), ref):
        same(g, w)
    lst = tmp_path / "list.txt"
    lst.write_text("\n".join(names) + "\n\n")
    for g, w in zip(run(3, 1, file_root=str(d), file_list=str(lst)), ref):
        same(g, w)
    # file_filter picks among the tree's files; a batch of rank-0 arrays from another filter
    got = run(1, 1, file_root=str(npd / "int16" / "c"), file_filter="a_01.npy")
    same(got[0], np.load(npd / "int16" / "c" / "r0" / "a_01.npy"))


def test_big_endian_and_format_2(npd):
    sp = npd / "special"
    for name in ["big_f4.npy", "big_i2_f.npy", "v2.npy"]:
        g, = run(1, 1, files=[str(sp / name)])
        w = np.load(sp / name)
        np.testing.assert_array_equal(g, w)
        assert g.dtype == w.dtype.newbyteorder("=") and g.shape == w.shape
    with open(sp / "v2.npy", "rb") as f:
        assert f.read(8)[6] == 2  # the writer did write a version 2 header


# ---- regions of interest ------------------------------------------------------------------

def rnd(x):
    """Round half away from zero, as DALI's slice arguments."""
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


def roi_model(a, roi_start=None, rel_roi_start=None, roi_end=None, rel_roi_end=None,
              roi_shape=None, rel_roi_shape=None, roi_axes=None, out_of_bounds_policy="error",
              fill_value=0.0):
    """The region of `a` as DALI defines it; None where policy "error" must fail."""
    if not any([roi_start, rel_roi_start, roi_end, rel_roi_end, roi_shape, rel_roi_shape]):
        return a  # no coordinates (or only empty lists): the whole array
    axes = list(range(a.ndim)) if not roi_axes else [x % a.ndim for x in roi_axes]
    lo, hi = [0] * a.ndim, list(a.shape)
    for k, ax in enumerate(axes):
        n = a.shape[ax]
        s = roi_start[k] if roi_start is not None else \
            rel_roi_start[k] * n if rel_roi_start is not None else 0
        if roi_end is not None:
            e = roi_end[k]
        elif rel_roi_end is not None:
            e = rel_roi_end[k] * n
        elif roi_shape is not None:
            e = s + roi_shape[k]
        elif rel_roi_shape is not None:
            e = (rel_roi_start[k] + rel_roi_shape[k]) * n if rel_roi_start is not None \
                else s + rel_roi_shape[k] * n
        else:
            e = n
        lo[ax], hi[ax] = rnd(s), rnd(e)
    if out_of_bounds_policy == "trim_to_shape":
        lo = [min(max(x, 0), n) for x, n in zip(lo, a.shape)]
        hi = [min(max(x, l), n) for x, l, n in zip(hi, lo, a.shape)]
    elif any(x < 0 or y > n for x, y, n in zip(lo, hi, a.shape)):
        if out_of_bounds_policy == "error":
            return None
    out = np.full([y - x for x, y in zip(lo, hi)], fill_value).astype(a.dtype)
    src = tuple(slice(max(x, 0), min(y, n)) for x, y, n in zip(lo, hi, a.shape))
    dst = tuple(slice(max(x, 0) - x, max(x, 0) - x + max(min(y, n) - max(x, 0), 0))
                for x, y, n in zip(lo, hi, a.shape))
    out[dst] = a[src]
    return out


ROI_CASES = [
    dict(roi_start=[1, 2, 0]),
    dict(rel_roi_start=[0.1, 0.25, 0.5]),
    dict(roi_end=[8, 7, 3]),
    dict(rel_roi_end=[0.5, 0.9, 0.75]),
    dict(roi_shape=[4, 5, 2]),
    dict(rel_roi_shape=[0.4, 0.8, 0.5]),
    dict(rel_roi_start=[0.1, 0.2, 0.0], rel_roi_shape=[0.35, 0.5, 1.0]),
    dict(roi_start=[1], roi_end=[6], roi_axes=[0]),
    dict(roi_start=[1], roi_end=[6], roi_axes=[1]),
    dict(roi_start=[2], roi_shape=[1], roi_axes=[-1]),
    dict(roi_start=[1, 2], roi_end=[7, 8], roi_axes=[0, 1]),
    dict(roi_start=[2, 1], roi_end=[3, 8], roi_axes=[2, 0]),
    dict(roi_start=[1, 2], rel_roi_end=[0.5, 0.4], roi_axes=[0, 1]),
    dict(rel_roi_start=[0.1, 0.2], roi_end=[8, 6], roi_axes=[0, 1]),
    dict(roi_start=[1, 2], roi_end=[30, 7], roi_axes=[0, 1], out_of_bounds_policy="pad"),
    dict(roi_start=[-10, 2], roi_end=[8, 7], roi_axes=[0, 1], out_of_bounds_policy="pad",
         fill_value=-3.0),
    dict(roi_start=[40], roi_end=[45], roi_axes=[1], out_of_bounds_policy="pad", fill_value=9),
    dict(roi_start=[1, 2], roi_end=[30, 7], roi_axes=[0, 1], out_of_bounds_policy="trim_to_shape"),
    dict(roi_start=[-10, 2], roi_end=[8, 7], roi_axes=[0, 1],
         out_of_bounds_policy="trim_to_shape"),
    dict(roi_start=[1], roi_end=[1], roi_axes=[1]),
    dict(roi_start=[], roi_end=[], roi_axes=[]),
]


@pytest.mark.parametrize("order", ["c", "f"])
@pytest.mark.parametrize("case", range(len(ROI_CASES)))
def test_roi_matches_numpy_slicing(npd, order, case):
    kw = ROI_CASES[case]
    d = npd / "roi" / order
    files = files_of(d)
    got = run(len(files), 1, file_root=str(d), **kw)
    for f, g in zip(files, got):
        want = roi_model(np.load(f), **kw)
        assert want is not None
        same(g, want)


def test_roi_equals_slice_with_argument_inputs(npd):
    """As DALI's own check: the reader's region equals fn.slice of the whole array, here with
    per-sample start/end drawn by a random operator feeding both."""
    d = npd / "roi" / "f"
    n = len(files_of(d))

    @pipeline_def(batch_size=n, num_threads=2, device_id=None, seed=11)
    def p():
        start = fn.cast(fn.random.uniform(range=(0, 3), shape=(2,)), dtype=sluice.types.INT32)
        end = fn.cast(fn.random.uniform(range=(4, 8), shape=(2,)), dtype=sluice.types.INT32)
        whole = fn.readers.numpy(file_root=str(d))
        roi = fn.readers.numpy(file_root=str(d), roi_start=start, roi_end=end, roi_axes=[0, 1])
        return roi, fn.slice(whole, start=start, end=end, axes=[0, 1]), start, end
    pipe = p()
    pipe.build()
    seen = set()
    for _ in range(2):
        roi, sl, start, end = pipe.run()
        for i in range(n):
            same(np.array(roi.at(i)), np.array(sl.at(i)))
            s, e = np.array(start.at(i)), np.array(end.at(i))
            assert np.array(roi.at(i)).shape[0] == e[0] - s[0]
            seen.add((tuple(s), tuple(e)))
    assert len(seen) > 1  # the argument really varies per sample


def test_roi_reads_only_the_region(tmp_path):
    """A 2 x 2 x 4 region of a 64 MiB array costs a few KiB of read() calls (/proc/self/io
    rchar counts every byte the process's read calls return), in both orders."""
    for order in "cf":
        a = np.arange(2048 * 1024 * 8, dtype=np.float32).reshape(2048, 1024, 8)
        if order == "f":
            a = np.asfortranarray(a)
        path = tmp_path / f"big_{order}.npy"
        np.save(path, a)
        want = a[100:102, 500:502, 2:6].copy()
        del a

        @pipeline_def(batch_size=1, num_threads=1, device_id=None, prefetch_queue_depth=1)
        def p():
            return fn.readers.numpy(files=[str(path)], roi_start=[100, 500, 2],
                                    roi_shape=[2, 2, 4])
        pipe = p()
        pipe.build()

        def rchar():
            with open("/proc/self/io") as f:
                return int(next(line for line in f if line.startswith("rchar")).split()[1])
        before = rchar()
        out, = pipe.run()
        used = rchar() - before
        same(np.array(out.at(0)), want)
        assert used < 256 * 1024, f"{order}: read {used} bytes for a 64-byte region"


@pytest.mark.parametrize("kw", [
    dict(roi_start=[1, 2, 0], rel_roi_start=[0.1, 0.2, 0.0]),
    dict(roi_end=[8, 7, 3], rel_roi_end=[0.4, 0.5, 0.5]),
    dict(roi_end=[8, 7, 3], roi_shape=[8, 7, 3]),
    dict(roi_end=[8, 7, 3], rel_roi_shape=[0.4, 0.5, 0.5]),
    dict(rel_roi_end=[0.5, 0.4, 0.5], roi_shape=[8, 7, 3]),
])
def test_roi_exclusive_arguments_fail_at_build(npd, kw):
    with pytest.raises(sluice.SluiceError, match=r"readers\.numpy.*mutually exclusive"):
        run(2, 1, file_root=str(npd / "roi" / "c"), **kw)


@pytest.mark.parametrize("kw", [
    dict(roi_start=[-1, 2, 0]),
    dict(roi_end=[100, 8, 3]),
    dict(roi_shape=[100, 8, 3]),
    dict(roi_start=[5], roi_end=[2], roi_axes=[0], out_of_bounds_policy="pad"),
])
def test_roi_out_of_bounds_fails_with_error_policy(npd, kw):
    if "roi_axes" not in kw:  # the model agrees that these reach outside
        assert roi_model(np.load(files_of(npd / "roi" / "c")[0]), **kw) is None
    with pytest.raises(sluice.SluiceError, match=r"readers\.numpy.*v_00\.npy"):
        run(4, 1, file_root=str(npd / "roi" / "c"), **kw)


# ---- order, shards ------------------------------------------------------------------------

def test_sharding_covers_each_epoch_once(npd):
    d = npd / "uint16" / "c"  # 15 files of ranks 0-4 -> batch 1
    files = files_of(d)
    ref = {f: np.load(f) for f in files}
    for shards in (2, 3, 4):
        for epoch_reads in (False, True):
            seen = []
            for s in range(shards):
                lo, hi = len(files) * s // shards, len(files) * (s + 1) // shards
                got = run(1, hi - lo, file_root=str(d), shard_id=s, num_shards=shards,
                          stick_to_shard=True, random_shuffle=epoch_reads, seed=3)
                seen += [g.tobytes() + bytes(str(g.shape), "ascii") for g in got]
            want = [a.tobytes() + bytes(str(a.shape), "ascii") for a in ref.values()]
            assert sorted(seen) == sorted(want)


def test_shuffle_is_a_permutation_and_epochs_repeat(npd):
    d = npd / "int32" / "c" / "r1"
    files = files_of(d)
    plain = run(1, 2 * len(files), file_root=str(d))
    for k, g in enumerate(plain):
        same(g, np.load(files[k % len(files)]))
    d = npd / "float64" / "f"
    files = files_of(d)
    got = run(1, len(files), file_root=str(d), random_shuffle=True, seed=9)
    key = lambda a: a.tobytes() + bytes(str(a.shape), "ascii")  # noqa: E731
    assert sorted(map(key, got)) == sorted(key(np.load(f)) for f in files)
    assert list(map(key, got)) != [key(np.load(f)) for f in files]


def test_cache_header_information_gives_the_same_arrays(npd):
    d = npd / "float32" / "c" / "r2"
    files = files_of(d)
    got = run(3, 2, file_root=str(d), cache_header_information=True)
    for k, g in enumerate(got):
        same(g, np.load(files[k % len(files)]))


# ---- bad input ----------------------------------------------------------------------------

def test_inconsistent_batch(tmp_path):
    np.save(tmp_path / "int.npy", np.zeros((1, 2, 5), np.int32))
    np.save(tmp_path / "float.npy", np.zeros((2, 3, 4), np.float32))
    np.save(tmp_path / "two.npy", np.zeros((3, 4), np.float32))
    with pytest.raises(RuntimeError, match=r"(?=.*Inconsistent data)(?=.*int32)(?=.*float)"):
        run(2, 1, file_root=str(tmp_path), files=["int.npy", "float.npy"])
    with pytest.raises(RuntimeError, match=r"Inconsistent data"):
        run(2, 1, file_root=str(tmp_path), files=["two.npy", "float.npy"])


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "longdouble", "U3", "O"])
def test_unsupported_types(tmp_path, dtype):
    a = np.zeros(4, dtype=dtype)
    np.save(tmp_path / "x.npy", a, allow_pickle=True)
    with pytest.raises(RuntimeError, match=r"readers\.numpy.*x\.npy.*Unknown Numpy type string"):
        run(1, 1, files=[str(tmp_path / "x.npy")])


def header(descr="<f4", fortran="False", shape="(2, 3)", version=1, pad=True):
    body = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}"
    if pad:
        body += " " * ((64 - (len(body) + 11) % 64) % 64)
    body += "\n"
    raw = body.encode()
    n = len(raw).to_bytes(2 if version == 1 else 4, "little")
    return b"\x93NUMPY" + bytes([version, 0]) + n + raw


CORRUPT = {
    "magic": (b"\x93NUMPX\x01\x00" + header()[8:] + bytes(24), "magic"),
    "version": (b"\x93NUMPY\x09\x00" + header()[8:] + bytes(24), "version 9"),
    "huge_len": (b"\x93NUMPY\x02\x00\xff\xff\xff\x7f{", "above the limit"),
    "short_header": (header()[:40], "ends inside its header"),
    "truncated_data": (header() + bytes(23), "truncated"),
    "bad_shape": (header(shape="(2, -3)") + bytes(24), "shape"),
    "huge_shape": (header(shape="(4611686018427387903, 4611686018427387903)"), "shape|overflow"),
    "overflow": (header(shape="(4000000000, 4000000000, 4000000000)"), "overflow"),
    # an empty array whose other extents' product overflows: NumPy refuses it too ("array is
    # too big"); a padded region around it overflowed a product later (fuzz finding)
    "empty_overflow": (header(shape="(0, 4000000000, 4000000000, 4000000000)"), "overflow"),
    # 35 digits: the parse overflowed int64 before it saw the value was too large (fuzz finding)
    "long_digits": (header(shape="(" + "3" * 34 + "0, 2)") + bytes(8), "shape"),
    "too_many_dims": (header(shape="(1,1,1,1,1,1,1,1,1)") + bytes(4), "dimensions"),
    "bad_order": (header(fortran="Maybe") + bytes(24), "fortran_order"),
    "extra_key": (header(descr="<f4', 'x': '1") + bytes(24), "unexpected key"),
    "structured": (header().replace(b"'<f4'", b"[('a','<f4')]") + bytes(24), "structured"),
    "empty": (b"", "ends inside its header"),
}


@pytest.mark.parametrize("name", sorted(CORRUPT))
def test_corrupt_files_fail_naming_the_file(tmp_path, name):
    data, msg = CORRUPT[name]
    (tmp_path / f"{name}.npy").write_bytes(data)
    with pytest.raises(sluice.SluiceError, match=rf"readers\.numpy.*{name}\.npy.*({msg})"):
        run(1, 1, files=[str(tmp_path / f"{name}.npy")])


def test_empty_arrays_read_as_numpy_loads_them(tmp_path):
    """Zero-size arrays, a zero extent anywhere, both orders: the shape np.load gives, no data;
    a region padded around one is all fill."""
    shapes = [(0,), (0, 3), (4, 0), (2, 0, 5), (0, 1000000, 1000000)]
    for k, shape in enumerate(shapes):
        for order in "CF":
            np.save(tmp_path / f"e{k}{order}.npy", np.zeros(shape, np.int16, order=order))
            want = np.load(tmp_path / f"e{k}{order}.npy")
            got, = run(1, 1, files=[str(tmp_path / f"e{k}{order}.npy")])
            same(got, want)
    got, = run(1, 1, files=[str(tmp_path / "e1C.npy")], roi_start=[1], roi_shape=[2], roi_axes=[0],
               out_of_bounds_policy="pad", fill_value=7)
    same(got, np.full((2, 3), 7, np.int16))


def test_header_helper_is_right(tmp_path):
    """The hand-made header of the corrupt cases is a valid .npy header when left intact."""
    (tmp_path / "ok.npy").write_bytes(header() + np.arange(6, dtype="<f4").tobytes())
    same(np.load(tmp_path / "ok.npy"), np.arange(6, dtype=np.float32).reshape(2, 3))
    g, = run(1, 1, files=[str(tmp_path / "ok.npy")])
    same(g, np.arange(6, dtype=np.float32).reshape(2, 3))


def test_a_bad_file_fails_its_iteration_only(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(3, dtype=np.int16))
    (tmp_path / "b.npy").write_bytes(b"not numpy at all")
    np.save(tmp_path / "c.npy", np.arange(5, dtype=np.int16))

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, prefetch_queue_depth=1)
    def p():
        return fn.readers.numpy(file_root=str(tmp_path))
    pipe = p()
    pipe.build()
    same(np.array(pipe.run()[0].at(0)), np.arange(3, dtype=np.int16))
    with pytest.raises(sluice.SluiceError, match=r"b\.npy"):
        pipe.run()
    same(np.array(pipe.run()[0].at(0)), np.arange(5, dtype=np.int16))


def test_no_files_and_bad_modes(tmp_path):
    with pytest.raises(sluice.SluiceError, match=r"readers\.numpy.*no file matches"):
        run(1, 1, file_root=str(tmp_path))
    with pytest.raises(sluice.SluiceError, match=r"readers\.numpy.*required"):
        run(1, 1)
    with pytest.raises(sluice.SluiceError, match=r"readers\.numpy.*gone\.npy.*cannot open"):
        run(1, 1, files=[str(tmp_path / "gone.npy")])
