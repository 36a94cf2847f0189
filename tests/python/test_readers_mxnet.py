"""tests/python/test_readers_mxnet.py: readers.mxnet on RecordIO files written by
tests/data/make_recordio.py (dmlc-core's framing, records split where their data holds the
magic, im2rec-style indexes in shuffled key order, multi-label headers), against the writer's
model: every record's image bytes and float32 labels in index order, sharding covering each
epoch once, shuffling, and corrupt framing (bad magic, truncated parts, bad part flags, label
counts past the record, bad index lines) failing with the operator, the file and the offset."""
import json
import pathlib
import struct
import subprocess

import numpy as np
import pytest

import sluice
from sluice import fn, pipeline_def

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rec(tmp_path_factory):
    out = tmp_path_factory.mktemp("rec")
    subprocess.run(["/usr/bin/python3", str(ROOT / "tests/data/make_recordio.py"), str(out),
                    "--seed", "4", "--files", "2", "--n", "10"], check=True)
    model = json.loads((out / "model.json").read_text())
    return out, model


def paths(out, files=(0, 1)):
    return ([str(out / f"part_{f}.rec") for f in files],
            [str(out / f"part_{f}.idx") for f in files])


def run(batch, iters, **kw):
    @pipeline_def(batch_size=batch, num_threads=2, device_id=None, prefetch_queue_depth=1)
    def p():
        return fn.readers.mxnet(**kw)
    pipe = p()
    pipe.build()
    res = []
    for _ in range(iters):
        data, label = pipe.run()
        for i in range(batch):
            res.append((np.array(data.at(i)), np.array(label.at(i))))
    return res


def check(got, want):
    d, l = got
    assert d.dtype == np.uint8 and d.ndim == 1
    assert d.tobytes() == bytes.fromhex(want["image"])
    assert l.dtype == np.float32 and l.shape == (len(want["labels"]),)
    np.testing.assert_array_equal(l, np.array(want["labels"], np.float32))


def test_every_record_in_index_order(rec):
    out, model = rec
    assert any(m["parts"] > 1 for m in model)  # split records are really there
    assert any(len(m["labels"]) == 3 for m in model)  # and multi-label headers
    assert [m["key"] for m in model[:10]] != sorted(m["key"] for m in model[:10])
    p, i = paths(out)
    got = run(4, 10, path=p, index_path=i)  # two epochs of 20
    for k, g in enumerate(got):
        check(g, model[k % len(model)])


def test_one_file_scalar_arguments(rec):
    out, model = rec
    got = run(1, 10, path=str(out / "part_1.rec"), index_path=str(out / "part_1.idx"))
    for g, w in zip(got, model[10:]):
        check(g, w)


@pytest.mark.parametrize("shards", [2, 3, 7])
def test_sharding_covers_each_epoch_once(rec, shards):
    out, model = rec
    p, i = paths(out)
    seen = []
    for s in range(shards):
        n = len(model) * (s + 1) // shards - len(model) * s // shards
        seen += [g[0].tobytes() for g in run(1, n, path=p, index_path=i, shard_id=s,
                                             num_shards=shards, stick_to_shard=True,
                                             random_shuffle=True, seed=2)]
    assert sorted(seen) == sorted(bytes.fromhex(m["image"]) for m in model)


def test_shuffle_is_a_permutation(rec):
    out, model = rec
    p, i = paths(out)
    got = [g[0].tobytes() for g in run(5, 4, path=p, index_path=i, random_shuffle=True, seed=3)]
    want = [bytes.fromhex(m["image"]) for m in model]
    assert sorted(got) == sorted(want) and got != want


def corrupt(out, tmp_path, name, edit, idx_text=None):
    data = bytearray((out / "part_0.rec").read_bytes())
    edit(data)
    (tmp_path / f"{name}.rec").write_bytes(bytes(data))
    (tmp_path / f"{name}.idx").write_text(idx_text if idx_text is not None
                                          else (out / "part_0.idx").read_text())
    return [str(tmp_path / f"{name}.rec")], [str(tmp_path / f"{name}.idx")]


def test_corrupt_records_fail_naming_file_and_offset(rec, tmp_path):
    out, model = rec
    first = [m for m in model if m["file"] == "part_0.rec"]
    k0 = next(m for m in first if m["key"] == 0)  # the record at offset 0 (4 parts or 1)
    cases = {
        "magic": (lambda d: d.__setitem__(slice(0, 4), b"\0\0\0\0"), r"magic.*offset 0"),
        "flag": (lambda d: d.__setitem__(slice(4, 8), struct.pack("<I", 2 << 29 | 8)),
                 r"flag 2"),
        "huge_len": (lambda d: d.__setitem__(slice(4, 8), struct.pack("<I", (1 << 29) - 1)),
                     r"past the record's end"),
        "labels": (lambda d: d.__setitem__(slice(8, 12), struct.pack("<I", 1 << 20)),
                   r"labels"),
    }
    for name, (edit, msg) in cases.items():
        p, i = corrupt(out, tmp_path, name, edit)
        # the index's order puts key 0 somewhere: read the whole file's epoch
        with pytest.raises(sluice.SluiceError,
                           match=rf"readers\.mxnet.*{name}\.rec.*{msg}"):
            run(len(first), 1, path=p, index_path=i)
    assert k0["offset"] == 0
    # truncated file: the last record's parts run past the end
    p, i = corrupt(out, tmp_path, "trunc", lambda d: d.__delitem__(slice(len(d) - 6, None)))
    with pytest.raises(sluice.SluiceError, match=r"readers\.mxnet.*trunc\.rec.*truncated"):
        run(len(first), 1, path=p, index_path=i)


@pytest.mark.parametrize("idx,msg", [
    ("0\t99999999\n", "offset inside"),
    ("0 x\n", "expected"),
    ("", "no records"),
])
def test_bad_index_fails_at_build(rec, tmp_path, idx, msg):
    out, _ = rec
    p, i = corrupt(out, tmp_path, "bad", lambda d: None, idx_text=idx)
    with pytest.raises(sluice.SluiceError, match=rf"readers\.mxnet.*{msg}"):
        run(1, 1, path=p, index_path=i)
    with pytest.raises(sluice.SluiceError, match=r"readers\.mxnet.*one index per file"):
        run(1, 1, path=p + p, index_path=i)
