"""tests/python/test_cache.py: the sample cache from Python (issue 21, point 4).

Pipeline(cache_bytes=..., cache_file=...) and cache_stats(): decoded images served from the
cache in later (shuffled) epochs are PIL's decodes of the right files; the val pipeline
(decode, resize, crop_mirror_normalize) gives the same bytes with and without the cache over
several epochs at 1 and 4 threads, with a budget smaller than the data set and with the cache
in a file; a random operator downstream keeps its draws; the options go through serialize()
and are checked.
"""
import json
import os

import numpy as np
import pytest
from PIL import Image

import sluice
from sluice import fn, pipeline_def, types

BATCH = 8


def decode_pipe(files, **kw):
    paths = [p for p, _ in files]

    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, seed=5, **kw)
    def pipe():
        data, label = fn.readers.file(files=paths, labels=list(range(len(paths))),
                                      random_shuffle=True, seed=11, name="reader")
        return fn.decoders.image(data, output_type=types.RGB), label

    p = pipe()
    p.build()
    return p


def val_pipe(tree, threads=2, mirror=False, **kw):
    @pipeline_def(batch_size=BATCH, num_threads=threads, device_id=None, seed=5, **kw)
    def pipe():
        data, label = fn.readers.file(file_root=str(tree), random_shuffle=True, seed=3,
                                      name="reader")
        images = fn.decoders.image(data, output_type=types.RGB)
        images = fn.resize(images, resize_shorter=40)
        args = {"mirror": fn.random.coin_flip()} if mirror else {}
        images = fn.crop_mirror_normalize(images, crop=(32, 32), dtype=types.FLOAT,
                                          mean=[123.675, 116.28, 103.53],
                                          std=[58.395, 57.12, 57.375], **args)
        return images, label

    p = pipe()
    p.build()
    return p


def batches(p, n):
    out = []
    for _ in range(n):
        images, labels = p.run()
        out.append(([np.array(images.at(k)) for k in range(len(images))],
                    [int(np.array(labels.at(k)).reshape(-1)[0]) for k in range(len(labels))]))
    return out


def assert_same(a, b):
    assert len(a) == len(b)
    for (ia, la), (ib, lb) in zip(a, b):
        assert la == lb
        for x, y in zip(ia, ib):
            assert x.dtype == y.dtype and x.shape == y.shape
            assert x.tobytes() == y.tobytes()


def test_cached_epochs_are_pils_decodes(tree_files):
    files = tree_files[:40]  # 5 batches an epoch
    p = decode_pipe(files, cache_bytes=32 << 20)
    seen = []
    for images, labels in batches(p, 15):  # 3 epochs
        for img, lab in zip(images, labels):
            ref = np.array(Image.open(files[lab][0]).convert("RGB"))
            np.testing.assert_array_equal(img, ref)
            seen.append(lab)
    # each epoch is a permutation of the 40 files, a different one each time
    epochs = [seen[k * 40:(k + 1) * 40] for k in range(3)]
    assert all(sorted(e) == list(range(40)) for e in epochs)
    assert epochs[0] != epochs[1]
    s = p.cache_stats()
    assert s["nodes"] == 2 and s["entries"] == 40 and s["capacity"] == 32 << 20
    assert s["hits"] >= 80 - 2 * BATCH and s["misses"] >= 40 and not s["full"]
    assert s["bytes"] >= sum(np.array(Image.open(f)).nbytes for f, _ in files)


@pytest.mark.parametrize("threads", [1, 4])
def test_val_pipeline_same_bytes(tree, threads):
    ref = batches(val_pipe(tree, threads), 40)  # 3.2 epochs of the 100-image tree
    p = val_pipe(tree, threads, cache_bytes=64 << 20)
    assert_same(ref, batches(p, 40))
    s = p.cache_stats()
    assert s["nodes"] == 4 and s["entries"] == 100 and s["hits"] >= 200 - 2 * BATCH


def test_partial_budget_and_file(tree, tmp_path):
    ref = batches(val_pipe(tree, 4), 40)
    small = 30 * (3 * 32 * 32 * 4 + 1024)  # about 30 of the 100 samples
    p = val_pipe(tree, 4, cache_bytes=small)
    assert_same(ref, batches(p, 40))
    s = p.cache_stats()
    assert s["full"] and 10 < s["entries"] < 100 and s["bytes"] <= small and s["hits"] > 0

    path = tmp_path / "val.cache"
    q = val_pipe(tree, 4, cache_bytes=64 << 20, cache_file=path)
    assert_same(ref, batches(q, 40))
    assert path.stat().st_size >= 100 * 3 * 32 * 32 * 4
    assert q.cache_stats()["entries"] == 100
    del q
    import gc
    gc.collect()
    assert not path.exists()


def test_random_operator_downstream(tree):
    ref = batches(val_pipe(tree, 4, mirror=True), 30)
    p = val_pipe(tree, 4, mirror=True, cache_bytes=64 << 20)
    assert_same(ref, batches(p, 30))
    assert p.cache_stats()["nodes"] == 3  # reader, decoder, resize: cmn draws its mirror


def test_options(tree, tmp_path):
    with pytest.raises(ValueError, match="cache_bytes"):
        val_pipe(tree, cache_bytes=-1)
    p = val_pipe(tree, cache_bytes=1 << 20, cache_file=tmp_path / "x.cache")
    opts = json.loads(p.serialize())["pipeline"]
    assert opts["cache_bytes"] == 1 << 20 and opts["cache_file"] == str(tmp_path / "x.cache")
    q = sluice.Pipeline.deserialize(p.serialize())
    assert q._cache_bytes == 1 << 20
    plain = val_pipe(tree)
    assert "cache_bytes" not in json.loads(plain.serialize())["pipeline"]
    plain.run()
    assert plain.cache_stats() == {"nodes": 0, "hits": 0, "misses": 0, "entries": 0,
                                   "bytes": 0, "capacity": 0, "full": False}
    with pytest.raises(sluice.errors.ReadError, match="nonexistent-dir"):
        val_pipe(tree, cache_bytes=1 << 20, cache_file="/nonexistent-dir/x.cache")


def test_deterministic_trait_in_the_registry():
    ops = {op["name"]: op for op in sluice._sluice.registry()}
    for name in ("readers.file", "decoders.image", "resize", "crop_mirror_normalize"):
        assert "deterministic" in ops[name]["flags"], name
    for name in ("random.coin_flip", "decoders.image_random_crop", "python_function",
                 "external_source"):
        assert "deterministic" not in ops[name]["flags"], name
