"""tests/python/test_readers_tfrecord.py: readers.tfrecord on files written by
tests/data/make_tfrecord.py (its own protobuf encoder and bitwise CRC-32C, packed and unpacked
lists, shuffled fields, unknown fields), against the writer's model: every feature's values,
dtype and shape (FixedLenFeature's shape and default, VarLenFeature with and without a partial
shape, strings as uint8 bytes), every record exactly once per epoch per shard, shuffling,
`sluice tfrecord-index` against the writer's own offsets, and corrupt or truncated files
failing with errors that name the file and the record's offset."""
import json
import os
import pathlib
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest

import sluice
import sluice.tfrecord as tfrec
from sluice import fn, pipeline_def

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/data"))
import make_tfrecord  # noqa: E402

FILES, N = 3, 20
FEATURES = {
    "image": tfrec.FixedLenFeature((), tfrec.string, "none"),
    "label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
    "grid": tfrec.FixedLenFeature([2, 3], tfrec.int64, 7),
    "boxes": tfrec.VarLenFeature([4], tfrec.float32, 0.0),
    "flat": tfrec.VarLenFeature(tfrec.float32, 0.0),  # absent everywhere: (0,)
    "score": tfrec.FixedLenFeature((), tfrec.float32, 0.0),
}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("tfrecord")
    subprocess.run(["/usr/bin/python3", str(ROOT / "tests/data/make_tfrecord.py"), str(out),
                    "--files", str(FILES), "--records", str(N), "--seed", "5"], check=True)
    model = json.loads((out / "model.json").read_text())
    paths = [str(out / f"data{i}.tfrecord") for i in range(FILES)]
    idx = [str(out / f"data{i}.idx") for i in range(FILES)]
    flat = [(paths[f], r) for f in range(FILES) for r in model[f]]
    return out, paths, idx, flat


def expected(rec):
    """The writer's record as readers.tfrecord must give it (FEATURES' rules, written here)."""
    img = rec["image"][1][0].encode("latin-1") if "image" in rec else b"none"
    grid = np.array(rec["grid"][1], np.int64).reshape(2, 3) if "grid" in rec \
        else np.full((2, 3), 7, np.int64)
    return {"image": np.frombuffer(img, np.uint8),
            "label": np.array(rec["label"][1], np.int64),
            "grid": grid,
            "boxes": np.array(rec["boxes"][1], np.float32).reshape(-1, 4),
            "flat": np.zeros((0,), np.float32),
            "score": np.array(rec["score"][1], np.float32)}


def read(paths, idx, batch, iters, features=FEATURES, **kw):
    names = list(features)

    @pipeline_def(batch_size=batch, num_threads=2, prefetch_queue_depth=1)
    def p():
        out = fn.readers.tfrecord(path=paths, index_path=idx, features=features, name="r", **kw)
        assert isinstance(out, dict) and list(out) == names
        return tuple(out[n] for n in names)
    pipe = p()
    res = []
    for _ in range(iters):
        outs = pipe.run()
        for i in range(batch):
            res.append(({n: np.array(o.at(i)) for n, o in zip(names, outs)},
                        outs[0].source_info(i) if hasattr(outs[0], "source_info") else None))
    return res, pipe


def same(got, want):
    for k, w in want.items():
        g = got[k]
        assert g.dtype == w.dtype, k
        assert g.shape == w.shape, (k, g.shape, w.shape)
        np.testing.assert_array_equal(g, w, err_msg=k)


def test_every_feature_in_order(data):
    _, paths, idx, flat = data
    got, pipe = read(paths, idx, 4, N // 4 + 1)
    for k, (g, src) in enumerate(got):
        path, rec = flat[k % N]
        same(g, expected(rec))
        if src is not None:
            assert src == path
    assert pipe.epoch_size("r") == N


def test_shapes_dtypes_of_outputs(data):
    _, paths, idx, flat = data
    got, _ = read(paths, idx, 2, 1)
    g = got[0][0]
    assert g["label"].shape == (1,) and g["label"].dtype == np.int64
    assert g["score"].shape == (1,) and g["score"].dtype == np.float32
    assert g["grid"].shape == (2, 3)
    assert g["image"].dtype == np.uint8 and g["image"].ndim == 1
    assert g["boxes"].ndim == 2 and g["boxes"].shape[1] == 4


@pytest.mark.parametrize("shards", [1, 2, 3])
@pytest.mark.parametrize("shuffle", [False, True])
def test_each_record_once_per_epoch_per_shard(data, shards, shuffle):
    _, paths, idx, flat = data
    seen = []
    for s in range(shards):
        lo, hi = N * s // shards, N * (s + 1) // shards
        got, _ = read(paths, idx, hi - lo, 1, num_shards=shards, shard_id=s,
                      random_shuffle=shuffle, seed=11, stick_to_shard=True)
        seen += [int(g["label"][0]) for g, _ in got]
        if not shuffle:
            assert seen[lo:hi] == [flat[k][1]["label"][1][0] for k in range(lo, hi)]
    assert sorted(seen) == sorted(r["label"][1][0] for _, r in flat)
    if shuffle and shards == 1:
        assert seen != [r["label"][1][0] for _, r in flat]


def test_varlen_without_partial_shape_and_int_defaults(data):
    _, paths, idx, flat = data
    feats = {"boxes": tfrec.VarLenFeature(tfrec.float32, 0.0),
             "grid": tfrec.VarLenFeature(tfrec.int64, 0)}
    got, _ = read(paths, idx, N, 1, features=feats)
    for (g, _), (_, rec) in zip(got, flat):
        np.testing.assert_array_equal(g["boxes"], np.array(rec["boxes"][1], np.float32))
        want = np.array(rec["grid"][1] if "grid" in rec else [], np.int64)
        assert g["grid"].dtype == np.int64
        np.testing.assert_array_equal(g["grid"], want)


def test_index_command_matches_the_writer(data, tmp_path):
    out, paths, idx, _ = data
    cli = os.environ.get("SLUICE_CLI", str(ROOT / "build/sluice"))
    for p, i in zip(paths, idx):
        mine = tmp_path / "x.idx"
        subprocess.run([cli, "tfrecord-index", p, str(mine)], check=True, capture_output=True)
        assert mine.read_text() == pathlib.Path(i).read_text()


def test_ops_class_and_argument_errors(data):
    _, paths, idx, flat = data

    @pipeline_def(batch_size=1, num_threads=1)
    def p():
        r = sluice.ops.readers.TFRecord(path=paths, index_path=idx,
                                        features={"label": FEATURES["label"]})
        return r()["label"]
    pipe = p()
    assert int(np.array(pipe.run()[0].at(0))[0]) == flat[0][1]["label"][1][0]
    with pytest.raises(TypeError):
        tfrec.FixedLenFeature([1], "int64", 0)
    with pytest.raises(TypeError):
        tfrec.VarLenFeature(tfrec.int64)
    with pytest.raises(TypeError, match="features"):
        fn.readers.tfrecord(path=paths, index_path=idx)
    with pytest.raises(TypeError):
        fn.readers.tfrecord(path=paths, index_path=idx, features={"x": 1})


def build_error(paths, idx, features=FEATURES):
    @pipeline_def(batch_size=1, num_threads=1)
    def p():
        out = fn.readers.tfrecord(path=paths, index_path=idx, features=features)
        return tuple(out.values())
    pipe = p()
    pipe.build()
    return pipe


def run_error(tmp_path, blob, index, match):
    (tmp_path / "bad.tfrecord").write_bytes(blob)
    (tmp_path / "bad.idx").write_text(index)
    pipe = build_error([str(tmp_path / "bad.tfrecord")], [str(tmp_path / "bad.idx")])
    with pytest.raises(sluice.SluiceError, match=match) as e:
        pipe.run()
    assert "bad.tfrecord" in str(e.value)


def one_record(features):
    return make_tfrecord.frame(make_tfrecord.encode_example(features))


GOOD = {"label": ("int64", [3]), "boxes": ("float", [1.0, 2.0, 3.0, 4.0]),
        "score": ("float", [0.5])}


def test_good_handmade_record(tmp_path):
    rec = one_record(GOOD)
    (tmp_path / "a.tfrecord").write_bytes(rec)
    (tmp_path / "a.idx").write_text(f"0 {len(rec)}\n")
    got, _ = read([str(tmp_path / "a.tfrecord")], [str(tmp_path / "a.idx")], 1, 1)
    same(got[0][0], expected({k: [v[0], v[1]] for k, v in GOOD.items()}))


def test_bad_payload_crc(tmp_path):
    rec = bytearray(one_record(GOOD))
    rec[14] ^= 1
    run_error(tmp_path, bytes(rec), f"0 {len(rec)}\n", r"offset 0.*CRC.*payload")


def test_bad_length_crc(tmp_path):
    rec = bytearray(one_record(GOOD))
    rec[9] ^= 0x40
    run_error(tmp_path, bytes(rec), f"0 {len(rec)}\n", r"offset 0.*CRC.*length")


def test_huge_length_field(tmp_path):
    payload = make_tfrecord.encode_example(GOOD)
    n = struct.pack("<Q", (1 << 63) - 5)
    rec = n + struct.pack("<I", make_tfrecord.masked_crc(n)) + payload + b"\0" * 4
    run_error(tmp_path, rec, f"0 {len(rec)}\n", r"offset 0.*length field says")


def test_wrong_kind_and_wrong_count(tmp_path):
    rec = one_record(dict(GOOD, label=("float", [1.0])))
    run_error(tmp_path, rec, f"0 {len(rec)}\n", r'"label" holds a float_list')
    rec = one_record(dict(GOOD, label=("int64", [1, 2])))
    run_error(tmp_path, rec, f"0 {len(rec)}\n", r'"label" has 2 values')
    rec = one_record(dict(GOOD, boxes=("float", [1.0, 2.0, 3.0])))
    run_error(tmp_path, rec, f"0 {len(rec)}\n", r'"boxes" has 3 values, not a multiple')


def test_malformed_example(tmp_path):
    payload = make_tfrecord.ldelim(1, b"\x0a\xff\xff\xff\x7f")  # an entry longer than its message
    run_error(tmp_path, make_tfrecord.frame(payload), "0 %d\n" % (len(payload) + 16),
              r"offset 0.*past the end")


def test_truncated_file_and_bad_index(tmp_path):
    rec = one_record(GOOD)
    (tmp_path / "t.tfrecord").write_bytes(rec[:-3])
    (tmp_path / "t.idx").write_text(f"0 {len(rec)}\n")
    with pytest.raises(sluice.SluiceError, match=r"t\.idx.*line 1"):
        build_error([str(tmp_path / "t.tfrecord")], [str(tmp_path / "t.idx")])
    (tmp_path / "t.idx").write_text("zero 12\n")
    with pytest.raises(sluice.SluiceError, match=r"t\.idx.*line 1"):
        build_error([str(tmp_path / "t.tfrecord")], [str(tmp_path / "t.idx")])
    cli = os.environ.get("SLUICE_CLI", str(ROOT / "build/sluice"))
    r = subprocess.run([cli, "tfrecord-index", str(tmp_path / "t.tfrecord"),
                        str(tmp_path / "u.idx")], capture_output=True, text=True)
    assert r.returncode == 1 and "t.tfrecord" in r.stderr and "offset 0" in r.stderr
    assert not (tmp_path / "u.idx").exists()
    with pytest.raises(sluice.SluiceError, match="index_path"):
        build_error([str(tmp_path / "t.tfrecord")], [str(tmp_path / "missing.idx")])


def test_string_tensor_refused(tmp_path):
    rec = one_record(GOOD)
    (tmp_path / "a.tfrecord").write_bytes(rec)
    (tmp_path / "a.idx").write_text(f"0 {len(rec)}\n")
    with pytest.raises(sluice.SluiceError, match="strings are not supported"):
        build_error([str(tmp_path / "a.tfrecord")], [str(tmp_path / "a.idx")],
                    {"s": tfrec.VarLenFeature(tfrec.string, "")})
    shutil.rmtree(tmp_path)


def test_index_command_hostile_headers(tmp_path):
    cli = os.environ.get("SLUICE_CLI", str(ROOT / "build/sluice"))
    good = one_record(GOOD)
    for name, blob, words in [
            ("huge", struct.pack("<Q", (1 << 63) - 5), "runs past the end"),
            ("crc", bytearray(good), "CRC"),
            ("short", good + good[:7], "truncated record header at offset %d" % len(good))]:
        if name == "huge":
            blob = blob + struct.pack("<I", make_tfrecord.masked_crc(blob)) + b"x" * 40
        if name == "crc":
            blob[8] ^= 1
        f = tmp_path / f"{name}.tfrecord"
        f.write_bytes(bytes(blob))
        r = subprocess.run([cli, "tfrecord-index", str(f), str(tmp_path / "o.idx")],
                           capture_output=True, text=True)
        assert r.returncode == 1, name
        assert f.name in r.stderr and words in r.stderr, r.stderr
        assert not (tmp_path / "o.idx").exists()
    (tmp_path / "empty.tfrecord").write_bytes(b"")
    r = subprocess.run([cli, "tfrecord-index", str(tmp_path / "empty.tfrecord"),
                        str(tmp_path / "o.idx")], capture_output=True, text=True)
    assert r.returncode == 0 and (tmp_path / "o.idx").read_text() == ""
    r = subprocess.run([cli, "tfrecord-index", str(tmp_path / "empty.tfrecord")],
                       capture_output=True, text=True)
    assert r.returncode == 2
