"""tests/python/test_readers_caffe.py: readers.caffe and readers.caffe2 on LMDB databases written
by tests/data/make_lmdb.py (python3-lmdb; Datum and TensorProtos encoded by the writer, images
from the wallpaper-derived test photos) against the writer's model: every entry in key order
with its image bytes (encoded) or pixels (raw, (H, W, C)) and labels, every label type of
caffe2, additional inputs and bounding boxes, the outputs the flags ask for, sharding covering
each epoch once, shuffling, and corrupt values (bad protobuf, truncated fields, lengths near
2^63, raw sizes that do not match) failing with the operator, the database and the key."""
import pathlib
import sys

import lmdb
import numpy as np
import pytest

import sluice
from sluice import fn, pipeline_def

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/data"))
import make_lmdb  # noqa: E402


def run(op, batch, iters, **kw):
    @pipeline_def(batch_size=batch, num_threads=2, device_id=None, prefetch_queue_depth=1)
    def p():
        out = getattr(fn.readers, op)(**kw)
        return tuple(out) if isinstance(out, (list, tuple)) else out
    pipe = p()
    pipe.build()
    res = []
    for _ in range(iters):
        outs = pipe.run()
        outs = outs if isinstance(outs, tuple) else (outs,)
        for i in range(batch):
            res.append([np.array(o.at(i)) for o in outs])
    return res


@pytest.fixture(scope="module")
def caffe_db(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("caffe") / "db")
    return out, make_lmdb.write_caffe(out, n=12, seed=3)


@pytest.fixture(scope="module")
def caffe_raw(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("caffe_raw") / "db")
    return out, make_lmdb.write_caffe(out, n=7, seed=4, raw=True)


def check_image(got, m):
    assert got.dtype == np.uint8
    assert list(got.shape) == m["shape"]
    assert got.tobytes() == bytes.fromhex(m["image"])


def test_caffe_every_entry_in_key_order(caffe_db):
    path, model = caffe_db
    assert [m["key"] for m in model] == sorted(m["key"] for m in model)
    got = run("caffe", 5, 5, path=path)  # 25 samples: two epochs and a bit
    for k, (img, lab) in enumerate(got):
        m = model[k % len(model)]
        check_image(img, m)
        assert lab.dtype == np.int32 and lab.shape == (1,)
        assert lab.tolist() == m["label"]
    assert any(m["label"][0] < 0 for m in model)


def test_caffe_raw_pixels_and_decoded_images(caffe_raw, caffe_db):
    path, model = caffe_raw
    got = run("caffe", 7, 1, path=path)
    for (img, lab), m in zip(got, model):
        check_image(img, m)
        assert img.ndim == 3 and lab.tolist() == m["label"]
    # the encoded images decode to what PIL decodes
    path, model = caffe_db

    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def p():
        jpegs, labels = fn.readers.caffe(path=path)
        return fn.decoders.image(jpegs), labels
    pipe = p()
    pipe.build()
    imgs, _ = pipe.run()
    import io
    from PIL import Image
    for i in range(4):
        ref = np.asarray(Image.open(io.BytesIO(bytes.fromhex(model[i]["image"]))).convert("RGB"))
        got = np.array(imgs.at(i)).astype(int)
        assert got.shape == ref.shape
        assert np.abs(got - ref).max() <= 2  # libjpeg-turbo vs PIL's libjpeg: IDCT rounding


def test_caffe_flags_choose_the_outputs(caffe_db):
    path, model = caffe_db
    got = run("caffe", 3, 1, path=path, label_available=False)
    assert all(len(g) == 1 for g in got)
    for (img,), m in zip(got, model):
        check_image(img, m)
    got = run("caffe", 3, 1, path=path, image_available=False)
    for (lab,), m in zip(got, model):
        assert lab.tolist() == m["label"]


@pytest.mark.parametrize("shards", [2, 5])
def test_caffe_sharding_covers_each_epoch_once(caffe_db, shards):
    path, model = caffe_db
    seen = []
    for s in range(shards):
        n = len(model) * (s + 1) // shards - len(model) * s // shards
        seen += [g[0].tobytes()
                 for g in run("caffe", 1, n, path=path, shard_id=s, num_shards=shards,
                              stick_to_shard=True, random_shuffle=True, seed=5)]
    assert sorted(seen) == sorted(bytes.fromhex(m["image"]) for m in model)


def test_caffe_shuffle_is_a_permutation_and_two_databases(caffe_db, caffe_raw):
    path, model = caffe_db
    got = [g[0].tobytes() for g in run("caffe", 4, 3, path=path, random_shuffle=True, seed=1)]
    want = [bytes.fromhex(m["image"]) for m in model]
    assert sorted(got) == sorted(want) and got != want
    # two databases: one after the other (the first's layout: encoded; the raw one then fails)
    got = run("caffe", 6, 4, path=[path, path])
    assert [g[0].tobytes() for g in got] == want + want
    with pytest.raises(sluice.SluiceError, match=r"readers\.caffe.*raw image where the first"):
        run("caffe", 19, 1, path=[path, caffe_raw[0]])


def caffe2_db(tmp_path, **kw):
    out = str(tmp_path / "c2")
    return out, make_lmdb.write_caffe2(out, **kw)


@pytest.mark.parametrize("label_type,float_labels", [(0, False), (0, True), (1, False),
                                                     (1, True), (2, False), (2, True),
                                                     (3, False)])
def test_caffe2_label_types(tmp_path, label_type, float_labels):
    path, model = caffe2_db(tmp_path, n=9, seed=label_type, label_type=label_type,
                            num_labels=7, float_labels=float_labels)
    got = run("caffe2", 3, 3, path=path, label_type=label_type, num_labels=7)
    for (img, lab), m in zip(got, model):
        check_image(img, m)
        assert lab.dtype == np.dtype(m["label_dtype"])
        if label_type in (1, 3):
            assert lab.shape == (7,)
        np.testing.assert_array_equal(lab, np.array(m["label"], m["label_dtype"]))


def test_caffe2_raw_additional_bbox(tmp_path):
    path, model = caffe2_db(tmp_path, n=8, seed=11, raw=True, label_type=2, additional=4,
                            bbox=True)
    got = run("caffe2", 4, 2, path=path, label_type=2, additional_inputs=4, bbox=True)
    assert all(len(g) == 7 for g in got)
    for g, m in zip(got, model):
        check_image(g[0], m)
        np.testing.assert_array_equal(g[1], np.array(m["label"], np.int32))
        for a, (dt, v) in enumerate(m["additional"]):
            assert g[2 + a].dtype == np.dtype(dt) and g[2 + a].ndim == 1
            np.testing.assert_array_equal(g[2 + a], np.array(v, dt))
        assert g[6].dtype == np.int32 and g[6].tolist() == m["bbox"]
    assert any(m["bbox"] == [] for m in model) and any(m["bbox"] for m in model)


def test_caffe2_no_image_no_label(tmp_path):
    path, model = caffe2_db(tmp_path, n=5, seed=2, image=False, label_type=0, additional=1)
    got = run("caffe2", 5, 1, path=path, image_available=False, additional_inputs=1)
    for (lab, add), m in zip(got, model):
        assert lab.tolist() == m["label"]
        np.testing.assert_array_equal(add, np.array(m["additional"][0][1], np.float32))
    (tmp_path / "x").mkdir()
    path2, model2 = caffe2_db(tmp_path / "x", n=4, seed=3, label_type=4)
    got = run("caffe2", 4, 1, path=path2, label_type=4)
    assert all(len(g) == 1 for g in got)
    for (img,), m in zip(got, model2):
        check_image(img, m)


def test_caffe2_sharding_with_padding(tmp_path):
    path, model = caffe2_db(tmp_path, n=10, seed=6)
    want = sorted(bytes.fromhex(m["image"]) for m in model)
    seen = []
    for s in range(3):
        got = run("caffe2", 4, 1, path=path, shard_id=s, num_shards=3, pad_last_batch=True)
        n = 10 * (s + 1) // 3 - 10 * s // 3
        imgs = [g[0].tobytes() for g in got]
        assert imgs[n:] == [imgs[n - 1]] * (4 - n)  # padded with the shard's last sample
        seen += imgs[:n]
    assert sorted(seen) == want


def put(path, entries):
    env = lmdb.open(path, map_size=1 << 24)
    with env.begin(write=True) as txn:
        for k, v in entries:
            txn.put(k, v)
    env.close()


F = make_lmdb


@pytest.mark.parametrize("value,msg", [
    (b"\x22\x05abc", r"field 4 .*runs past the end"),                 # truncated bytes
    (b"\x22" + F.varint((1 << 63) - 5) + b"ab", r"runs past the end"),  # length near 2^63
    (b"\x28\xff\xff\xff", r"truncated or malformed|runs past"),       # truncated varint
    (b"\x0b\x00", r"unsupported protobuf wire type 3"),               # a group
    (b"\x22\x01a", r"label"),                                         # no label
    (F.f_bytes(4, b"abcde") + F.f_varint(7, 0) + F.f_varint(1, 3) + F.f_varint(2, 1)
     + F.f_varint(3, 1) + F.f_varint(5, 1), r"raw \(not encoded\) Datum of 1 x 1 x 3 holds 5"),
    (F.f_varint(4, 7) + F.f_varint(5, 1), r"field data \(4\) has wire type 0"),
    # 2^21 x 2^21 x 2^22 wraps to 0 in 64 bits: refused, not taken for an empty image
    (F.f_varint(2, 1 << 21) + F.f_varint(3, 1 << 21) + F.f_varint(1, 1 << 22) + F.f_varint(7, 0)
     + F.f_bytes(4, b"") + F.f_varint(5, 1), r"raw \(not encoded\) Datum of 2097152 x"),
])
def test_caffe_corrupt_values_name_db_and_key(tmp_path, value, msg):
    good = F.f_bytes(4, b"\xff\xd8xx") + F.f_varint(5, 3)
    path = str(tmp_path / "bad")
    put(path, [(b"a_good", good), (b"b_\x01bad", value)])
    with pytest.raises(sluice.SluiceError,
                       match=rf"readers\.caffe.*bad.*key \"b_\\x01bad\".*{msg}"):
        run("caffe", 2, 1, path=path)


@pytest.mark.parametrize("value,msg", [
    (F.f_bytes(1, F.f_varint(2, 4) + F.f_bytes(6, b"img")) + b"\x0a\x80", r"runs past"),
    (F.f_bytes(1, F.f_varint(2, 4) + F.f_bytes(6, b"img"))
     + F.f_bytes(1, F.f_varint(2, 2) + F.f_ints(4, [1, 2], True)),
     r"holds 2 values; label_type 0 \(single label\) needs 1"),
    (F.f_bytes(1, F.f_varint(2, 4) + F.f_bytes(6, b"img")), r"too few for the label"),
    (F.f_bytes(1, F.f_varint(2, 3) + F.f_ints(1, [2, 2], False) + F.f_bytes(5, b"abc"))
     + F.f_bytes(1, F.f_varint(2, 2) + F.f_ints(4, [1], True)), r"dims that do not describe"),
    (F.f_bytes(1, F.f_varint(2, 4) + b"\x32" + F.varint((1 << 63) - 1)), r"runs past"),
    (F.f_bytes(1, F.f_varint(2, 13)), r"data_type 13"),
    (F.f_bytes(1, F.f_varint(2, 3) + F.f_ints(1, [1 << 21, 1 << 21, 1 << 22], True)
               + F.f_bytes(5, b"")), r"dims that do not describe its 0 bytes"),
])
def test_caffe2_corrupt_values_name_db_and_key(tmp_path, value, msg):
    good = (F.f_bytes(1, F.f_varint(2, 4) + F.f_bytes(6, b"img"))
            + F.f_bytes(1, F.f_varint(2, 2) + F.f_ints(4, [1], True)))
    path = str(tmp_path / "bad2")
    put(path, [(b"k0", good), (b"k1", value)])
    with pytest.raises(sluice.SluiceError, match=rf"readers\.caffe2.*bad2.*key \"k1\".*{msg}"):
        run("caffe2", 2, 1, path=path)


def test_caffe2_sparse_index_out_of_range(tmp_path):
    v = (F.f_bytes(1, F.f_varint(2, 4) + F.f_bytes(6, b"img"))
         + F.f_bytes(1, F.f_varint(2, 2) + F.f_ints(4, [1, 9], True)))
    path = str(tmp_path / "sp")
    put(path, [(b"k", v)])
    with pytest.raises(sluice.SluiceError, match=r"readers\.caffe2.*label index 9 is outside"):
        run("caffe2", 1, 1, path=path, label_type=1, num_labels=5)


def test_missing_and_empty_databases(tmp_path):
    with pytest.raises(sluice.SluiceError, match=r"readers\.caffe.*nope.*no such LMDB"):
        run("caffe", 1, 1, path=str(tmp_path / "nope"))
    put(str(tmp_path / "empty"), [])
    with pytest.raises(sluice.SluiceError, match=r"readers\.caffe2.*empty.*is empty"):
        run("caffe2", 1, 1, path=str(tmp_path / "empty"))
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "data.mdb").write_bytes(b"\0" * 10000)
    with pytest.raises(sluice.SluiceError, match=r"readers\.caffe.*junk.*cannot read the LMDB"):
        run("caffe", 1, 1, path=str(tmp_path / "junk"))


def test_arguments_checked():
    with pytest.raises((sluice.SluiceError, ValueError), match=r"label_type"):
        run("caffe2", 1, 1, path="x", label_type=5)
    with pytest.raises((sluice.SluiceError, ValueError, TypeError), match=r"label_type"):
        run("caffe", 1, 1, path="x", label_type=1)
