"""tests/python/test_prefetch_auto.py: prefetch_queue_depth="auto" and num_threads="auto"
(sluice's defaults) from Python: the executor's decisions visible in prefetch_statistics(),
outputs identical to fixed depths (the depth it picks never changes them), external sources
fixed at 2, the spec round trip, and bad values. The policy itself is tested on injected
measurements in tests/c/test_exec_autotune.c."""
import json
import os

import numpy as np
import pytest

import sluice
from sluice import fn, pipeline_def, types


def augment(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, seed=3, name="Reader")
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.random_resized_crop(images, size=(32, 32))
    images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(), dtype=types.FLOAT)
    return images, labels


def outputs(pipe, n):
    got = []
    for _ in range(n):
        images, labels = pipe.run()
        got.append((np.stack([images.at(i) for i in range(len(images))]),
                    np.stack([labels.at(i) for i in range(len(labels))])))
    return got


def test_auto_is_the_default_and_reports_its_decisions(tree):
    pipe = pipeline_def(augment, batch_size=4, device_id=None, seed=11)(str(tree))
    assert pipe.prefetch_queue_depth == "auto"
    pipe.build()
    outputs(pipe, 12)
    s = pipe.prefetch_statistics()
    assert s["autotune"] is True
    assert 2 <= s["depth"] <= s["depth_limit"] <= 8
    assert s["num_threads"] == len(os.sched_getaffinity(0))
    assert s["iteration_bytes"] > 4 * 32 * 32 * 3 * 4  # at least the float images
    assert 0 < s["budget_bytes"] <= 1 << 30
    assert s["windows"] >= 2  # a decision every 4 runs after the first
    assert 0.0 <= s["idle"] <= 1.0 and 0.0 <= s["consumer_wait"] <= 1.0
    assert s["increases"] - s["decreases"] == s["depth"] - 2
    assert len(s["changes"]) == min(16, s["increases"] + s["decreases"])
    assert isinstance(s["reason"], str) and s["reason"]


@pytest.mark.parametrize("threads", [1, 3])
def test_outputs_do_not_depend_on_the_depth(tree, threads):
    want = outputs(pipeline_def(augment, batch_size=5, num_threads=threads, device_id=None,
                                seed=5, prefetch_queue_depth=1)(str(tree)), 16)
    for depth in ("auto", 3):
        pipe = pipeline_def(augment, batch_size=5, num_threads=threads, device_id=None, seed=5,
                            prefetch_queue_depth=depth)(str(tree))
        for (a, la), (b, lb) in zip(want, outputs(pipe, 16)):
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(la, lb)
    assert pipe.prefetch_statistics()["autotune"] is False  # a fixed depth
    assert pipe.prefetch_statistics()["depth"] == 3


def test_external_source_runs_auto_at_two():
    pipe = sluice.Pipeline(batch_size=2, device_id=None)
    with pipe:
        pipe.set_outputs(fn.external_source(source=lambda: [np.full((3,), k, np.int32)
                                                            for k in range(2)]))
    pipe.build()
    for _ in range(6):
        (out,) = pipe.run()
        np.testing.assert_array_equal(out.at(1), np.full((3,), 1, np.int32))
    s = pipe.prefetch_statistics()
    assert s["autotune"] is False and s["depth"] == 2


def test_spec_round_trip_keeps_auto(tree):
    pipe = pipeline_def(augment, batch_size=3, device_id=None, seed=2,
                        prefetch_max_bytes=1 << 24)(str(tree))
    spec = json.loads(pipe.serialize())["pipeline"]
    assert spec["prefetch_queue_depth"] == "auto" and spec["num_threads"] == "auto"
    assert spec["prefetch_max_bytes"] == 1 << 24
    again = sluice.Pipeline.deserialize(pipe.serialize())
    assert again.prefetch_queue_depth == "auto"
    for (a, la), (b, lb) in zip(outputs(pipe, 4), outputs(again, 4)):
        np.testing.assert_array_equal(a, b)
    assert again.prefetch_statistics()["budget_bytes"] == 1 << 24


def test_bad_values():
    with pytest.raises(ValueError, match="prefetch_queue_depth"):
        sluice.Pipeline(batch_size=1, prefetch_queue_depth="deep")
    with pytest.raises(ValueError, match="prefetch_max_bytes"):
        sluice.Pipeline(batch_size=1, prefetch_max_bytes=-1)
