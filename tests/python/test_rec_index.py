"""tests/python/test_rec_index.py: `sluice rec-index` (DALI's rec2idx) on RecordIO files written
by tests/data/make_recordio.py: the index it writes holds, per record in file order, its number
and its offset — the writer's own index (written in a shuffled line order) sorted by key — and
readers.mxnet reading through it returns the records in file order; corrupt files fail naming
the file and the offset and leave no index behind."""
import json
import os
import pathlib
import re
import struct
import subprocess

import numpy as np
import pytest

import sluice
from sluice import fn, pipeline_def

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("SLUICE_CLI", str(ROOT / "build/sluice"))


@pytest.fixture(scope="module")
def rec(tmp_path_factory):
    out = tmp_path_factory.mktemp("rec")
    subprocess.run(["/usr/bin/python3", str(ROOT / "tests/data/make_recordio.py"), str(out),
                    "--seed", "9", "--files", "2", "--n", "12"], check=True)
    return out, json.loads((out / "model.json").read_text())


def index(path, idx):
    return subprocess.run([CLI, "rec-index", str(path), str(idx)], capture_output=True, text=True)


def parse(text):
    rows = []
    for line in text.splitlines():
        key, off = line.split("\t")
        rows.append((int(key), int(off)))
    return rows


@pytest.mark.parametrize("f", [0, 1])
def test_index_equals_the_writers(rec, tmp_path, f):
    out, model = rec
    idx = tmp_path / "got.idx"
    r = index(out / f"part_{f}.rec", idx)
    assert r.returncode == 0, r.stderr
    assert "12 records" in r.stderr
    got = parse(idx.read_text())
    want = sorted(parse((out / f"part_{f}.idx").read_text()))
    assert got == want
    assert got == [(k, off) for k, off in enumerate(sorted(off for _, off in want))]
    # the writer split some records into parts: their offsets are still the first part's
    assert any(m["parts"] > 1 for m in model if m["file"] == f"part_{f}.rec")


def test_reading_through_the_index(rec, tmp_path):
    out, model = rec
    idx = tmp_path / "p0.idx"
    assert index(out / "part_0.rec", idx).returncode == 0
    want = sorted((m for m in model if m["file"] == "part_0.rec"), key=lambda m: m["key"])

    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def p():
        return fn.readers.mxnet(path=str(out / "part_0.rec"), index_path=str(idx))
    pipe = p()
    pipe.build()
    got = []
    for _ in range(3):
        d, l = pipe.run()
        got += [(np.array(d.at(i)), np.array(l.at(i))) for i in range(4)]
    for (d, l), m in zip(got, want):
        assert d.tobytes() == bytes.fromhex(m["image"])
        np.testing.assert_array_equal(l, np.array(m["labels"], np.float32))


def test_corrupt_files(rec, tmp_path):
    out, _ = rec
    blob = (out / "part_0.rec").read_bytes()
    offs = sorted(o for _, o in parse((out / "part_0.idx").read_text()))
    cases = {
        "cut.rec": (blob[:offs[3] + 20], rf"offset {offs[3]}\b.*(truncated|past the end)"),
        "hdr.rec": (blob[:offs[2] + 5], rf"truncated RecordIO part header at offset {offs[2]}"),
        "magic.rec": (blob[:offs[4]] + b"\0\0\0\0" + blob[offs[4] + 4:],
                      rf"bad RecordIO magic 0x00000000 at offset {offs[4]}"),
        "flag.rec": (blob[:offs[1] + 4] + struct.pack("<I", 2 << 29 | 4) + blob[offs[1] + 8:],
                     rf"offset {offs[1]} has flag 2"),
        "huge.rec": (blob[:offs[5] + 4] + struct.pack("<I", (1 << 29) - 1) + blob[offs[5] + 8:],
                     rf"offset {offs[5]} holds 536870911 bytes, past the end"),
        "empty.rec": (b"", None),
    }
    for name, (data, pattern) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        idx = tmp_path / (name + ".idx")
        r = index(path, idx)
        if pattern is None:  # an empty file: an empty index
            assert r.returncode == 0 and idx.read_text() == ""
            continue
        assert r.returncode == 1, name
        assert name in r.stderr
        assert re.search(pattern, r.stderr), r.stderr
        assert not idx.exists()
        assert not list(tmp_path.glob(name + ".idx.tmp*"))


def test_usage_and_missing_file(tmp_path):
    r = subprocess.run([CLI, "rec-index", "only-one"], capture_output=True, text=True)
    assert r.returncode == 2 and "expected FILE.rec FILE.idx" in r.stderr
    r = index(tmp_path / "nope.rec", tmp_path / "x.idx")
    assert r.returncode == 1 and "nope.rec" in r.stderr
