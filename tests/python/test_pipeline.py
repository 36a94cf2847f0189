"""tests/python/test_pipeline.py: Pipeline / pipeline_def against independent references —
decodes bit-exact with PIL, labels and order from the file tree, reader metadata, serialization
(round trip and `sluice run`), determinism across thread counts, errors at the iteration they
belong to, and misuse."""
import json
import os
import shutil
import subprocess
import threading

import numpy as np
import pytest
from PIL import Image

import sluice
from sluice import fn, pipeline_def, types


@pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=42)
def decode_pipe(root, shuffle=False):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=shuffle, name="Reader")
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    return images, labels


def test_decode_equals_pil_bit_exactly(tree, tree_files):
    pipe = decode_pipe(str(tree))
    seen = 0
    for _ in range(3):
        images, labels = pipe.run()
        assert images.layout() == "HWC" and images.dtype == types.UINT8
        assert labels.dtype == types.INT32
        for i in range(len(images)):
            path, label = tree_files[seen]
            ref = np.asarray(Image.open(path).convert("RGB"))
            np.testing.assert_array_equal(images.at(i), ref)
            assert images.source_info(i) == path
            assert labels.at(i).tolist() == [label]
            seen += 1


def test_decode_matches_the_reference_decodes(testdata):
    files = sorted(p for p in testdata.glob("jpeg_*.jpg") if (p.parent / (p.name + ".rgb.ppm")).exists())
    assert files
    pipe = sluice.Pipeline(batch_size=len(files), num_threads=3)
    with pipe:
        data, _ = fn.readers.file(files=[str(f) for f in files])
        pipe.set_outputs(fn.decoders.image(data))
    (images,) = pipe.run()
    for i, f in enumerate(files):
        ref = np.asarray(Image.open(str(f) + ".rgb.ppm"))
        np.testing.assert_array_equal(images.at(i), ref, err_msg=f.name)


def test_pipeline_def_arguments_are_overridable_at_call_time(tree):
    pipe = decode_pipe(str(tree), batch_size=3, num_threads=1, prefetch_queue_depth=1)
    assert (pipe.batch_size, pipe.num_threads, pipe._depth) == (3, 1, 1)
    images, labels = pipe.run()
    assert len(images) == 3 and len(labels) == 3

    @pipeline_def
    def bare():
        return fn.random.coin_flip()

    p = bare(batch_size=5)
    assert len(p.run()[0]) == 5


def test_with_pipe_set_outputs_and_define_graph(tree):
    pipe = sluice.Pipeline(batch_size=2, num_threads=1)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=str(tree))
        pipe.set_outputs(labels)
    assert pipe.run()[0].as_array().tolist() == [[0], [0]]

    class Legacy(sluice.Pipeline):
        def __init__(self):
            super().__init__(batch_size=2, num_threads=1, seed=3)

        def define_graph(self):
            _, labels = fn.readers.file(file_root=str(tree))
            return labels

    assert Legacy().run()[0].as_array().tolist() == [[0], [0]]


def test_run_builds_implicitly_and_reader_meta(tree, tree_files):
    pipe = decode_pipe(str(tree))
    assert pipe.epoch_size("Reader") == len(tree_files)  # builds
    assert pipe.epoch_size() == {"Reader": len(tree_files)}
    meta = pipe.reader_meta("Reader")
    assert meta == {"epoch_size": 100, "epoch_size_padded": 100, "number_of_shards": 1,
                    "shard_id": 0, "pad_last_batch": False, "stick_to_shard": False}
    assert pipe.reader_meta() == {"Reader": meta}
    with pytest.raises(LookupError):
        pipe.reader_meta("nope")
    sharded = decode_pipe.__wrapped__  # the plain function: build a sharded variant by hand
    pipe = sluice.Pipeline(batch_size=4)
    with pipe:
        _, labels = fn.readers.file(file_root=str(tree), num_shards=3, shard_id=1,
                                    pad_last_batch=True, name="R")
        pipe.set_outputs(labels)
    assert pipe.reader_meta("R")["epoch_size_padded"] == 102
    assert sharded is not None


def run_n(pipe, n):
    return [[t.as_array().copy() if t.is_dense_tensor() else [t.at(i).copy() for i in range(len(t))]
             for t in pipe.run()] for _ in range(n)]


def assert_same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            if isinstance(u, list):
                for p, q in zip(u, v):
                    np.testing.assert_array_equal(p, q)
            else:
                np.testing.assert_array_equal(u, v)


@pipeline_def(batch_size=8, device_id=None, seed=1234)
def augment_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
    images = fn.decoders.image(jpegs)
    images = fn.crop_mirror_normalize(images, crop=(16, 16), dtype=types.FLOAT,
                                      mean=[128.0, 128.0, 128.0], std=[64.0, 64.0, 64.0],
                                      out_of_bounds_policy="pad",
                                      mirror=fn.random.coin_flip(probability=0.5))
    return images, labels, fn.random.uniform(range=[0.0, 1.0])


def test_determinism_one_vs_two_threads(tree):
    a = run_n(augment_pipe(str(tree), num_threads=1, prefetch_queue_depth=1), 4)
    b = run_n(augment_pipe(str(tree), num_threads=2, prefetch_queue_depth=3), 4)
    assert_same(a, b)
    c = run_n(augment_pipe(str(tree), num_threads=2, seed=99), 4)
    assert not np.array_equal(a[0][2], c[0][2])  # another seed, other numbers


def test_num_threads_zero_runs_on_the_calling_thread(tree, tree_files):
    """num_threads=0 (sluice's addition, DALI refuses it): no worker thread; run() runs the
    work on the calling thread. Same outputs as with threads (PIL's decode, the reader's
    order), a python_function called on the thread that called run(), the option serialized
    as 0, and no thread left behind."""
    ref = run_n(augment_pipe(str(tree), num_threads=2, prefetch_queue_depth=2), 4)
    tasks = lambda: len(os.listdir("/proc/self/task"))  # the OS threads of this process
    before = tasks()
    pipe = augment_pipe(str(tree), num_threads=0)
    assert pipe.num_threads == 0
    assert_same(run_n(pipe, 4), ref)
    assert tasks() == before  # built and run: no thread started
    assert json.loads(pipe.serialize())["pipeline"]["num_threads"] == 0
    stats = pipe.prefetch_statistics()
    assert stats["num_threads"] == 0 and stats["depth"] == 2 and not stats["autotune"]

    seen = []

    def where(x):
        seen.append(threading.get_ident())
        return x[::-1]

    @pipeline_def(batch_size=3, num_threads=0, device_id=None, prefetch_queue_depth=1)
    def files():
        jpegs, labels = fn.readers.file(file_root=str(tree), name="R")
        return fn.python_function(jpegs, function=where), labels, fn.decoders.image(jpegs)

    p = files()
    for it in range(3):
        rev, labels, images = p.run()
        for i in range(3):
            path, label = tree_files[3 * it + i]
            raw = np.fromfile(path, dtype=np.uint8)
            np.testing.assert_array_equal(np.array(rev.at(i)), raw[::-1])
            assert int(np.array(labels.at(i)).reshape(-1)[0]) == label
            np.testing.assert_array_equal(np.array(images.at(i)),
                                          np.asarray(Image.open(path).convert("RGB")))
    assert len(seen) == 9 and set(seen) == {threading.get_ident()}  # per sample
    again = sluice.Pipeline.deserialize(augment_pipe(str(tree), num_threads=0).serialize())
    assert again.num_threads == 0
    assert_same(run_n(again, 4), ref)


def test_serialize_round_trip_gives_identical_outputs(tree, tmp_path):
    pipe = augment_pipe(str(tree), num_threads=2)
    text = pipe.serialize(filename=str(tmp_path / "p.json"))
    spec = json.loads(text)
    assert spec["pipeline"]["batch_size"] == 8 and spec["pipeline"]["seed"] == 1234
    assert [n["op"] for n in spec["nodes"]][:2] == ["readers.file", "decoders.image"]
    expected = run_n(pipe, 3)
    again = sluice.Pipeline.deserialize(text)
    assert again.batch_size == 8
    assert_same(run_n(again, 3), expected)
    from_file = sluice.Pipeline.deserialize(filename=str(tmp_path / "p.json"), num_threads=1)
    assert from_file.num_threads == 1
    assert_same(run_n(from_file, 3), expected)
    other = sluice.Pipeline(batch_size=1)
    other.deserialize_and_build(text)
    assert_same(run_n(other, 3), expected)


@pipeline_def(batch_size=6, num_threads=1, device_id=None)
def random_pipe():
    return fn.random.uniform(range=[0.0, 1.0]), fn.random.coin_flip(probability=0.5)


def draws(pipe, n=2):
    return np.concatenate([pipe.run()[0].as_array() for _ in range(n)])


@pytest.mark.parametrize("unseeded", [{}, {"seed": None}, {"seed": -1}])
def test_no_seed_gives_each_pipeline_a_fresh_one(unseeded):
    # DALI: "If not set, a random seed will be generated" -- per pipeline
    runs = [draws(random_pipe(**unseeded)) for _ in range(3)]
    assert not np.array_equal(runs[0], runs[1]) and not np.array_equal(runs[1], runs[2])
    pipe = random_pipe(**unseeded)
    assert pipe.seed is None  # DALI's Pipeline.seed: None when the seed is not fixed


def test_a_fixed_seed_reproduces():
    assert random_pipe(seed=5).seed == 5
    np.testing.assert_array_equal(draws(random_pipe(seed=5)), draws(random_pipe(seed=5)))
    assert not np.array_equal(draws(random_pipe(seed=5)), draws(random_pipe(seed=6)))


def test_serialize_writes_the_seed_drawn_and_reproduces_the_run():
    pipe = random_pipe()
    text = pipe.serialize()  # before build: the seed is drawn here, once
    seed = json.loads(text)["pipeline"]["seed"]
    assert isinstance(seed, int) and seed >= 0
    assert json.loads(pipe.serialize())["pipeline"]["seed"] == seed
    expected = draws(pipe)  # built now, with that same seed
    again = sluice.Pipeline.deserialize(text)
    assert again.seed == seed
    np.testing.assert_array_equal(draws(again), expected)
    np.testing.assert_array_equal(draws(random_pipe(seed=seed)), expected)
    other = sluice.Pipeline(batch_size=1)
    other.deserialize_and_build(text)
    np.testing.assert_array_equal(draws(other), expected)
    # serialized after the run: still the seed the run used
    built = random_pipe()
    out = draws(built)
    np.testing.assert_array_equal(draws(sluice.Pipeline.deserialize(built.serialize())), out)


@pipeline_def(batch_size=8, device_id=None, seed=7)
def val_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
    images = fn.resize(fn.decoders.image(jpegs), resize_shorter=40)
    return fn.crop_mirror_normalize(images, crop=(32, 32), dtype=types.FLOAT,
                                    mean=[128.0, 128.0, 128.0], std=[64.0, 64.0, 64.0]), labels


def test_fuse_samples_off_gives_the_same_outputs_and_survives_serialisation(tree):
    fused = val_pipe(str(tree), num_threads=2)
    plain = val_pipe(str(tree), num_threads=2, fuse_samples=False)
    assert_same(run_n(fused, 4), run_n(plain, 4))
    stats = fused.executor_statistics()
    into = {s["op"]: s["fused_into"] for s in stats.values()}  # decoder -> resize -> cmn
    assert stats[into["decoders.image"]]["op"] == "resize"
    assert stats[into["resize"]]["op"] == "crop_mirror_normalize"
    assert into["crop_mirror_normalize"] is None and into["readers.file"] is None
    assert all(s["fused_into"] is None for s in plain.executor_statistics().values())
    text = plain.serialize()
    assert json.loads(text)["pipeline"]["fuse_samples"] == 0
    assert "fuse_samples" not in json.loads(fused.serialize())["pipeline"]  # the default
    again = sluice.Pipeline.deserialize(text)
    again.build()
    assert all(s["fused_into"] is None for s in again.executor_statistics().values())
    other = sluice.Pipeline(batch_size=1)
    other.deserialize_and_build(text)
    assert all(s["fused_into"] is None for s in other.executor_statistics().values())


def test_serialized_spec_runs_with_the_cli(tree, tmp_path):
    cli = os.environ.get("SLUICE_CLI")
    if not cli:
        pytest.skip("SLUICE_CLI not set")
    path = tmp_path / "p.json"
    augment_pipe(str(tree)).serialize(filename=str(path))
    r = subprocess.run([cli, "run", str(path), "--iters", "3", "--quiet"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "iterations           3" in r.stdout


def test_a_corrupt_file_fails_its_iteration_and_the_next_run_continues(tree, tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(tree / "class_00", root / "a")
    files = sorted((root / "a").glob("*.jpg"))
    bad = files[5]  # sample 1 of iteration 1 with batch 4
    bad.write_bytes(bad.read_bytes()[:200])
    pipe = sluice.Pipeline(batch_size=4, num_threads=2)
    with pipe:
        jpegs, _ = fn.readers.file(file_root=str(root))
        pipe.set_outputs(fn.decoders.image(jpegs, name="dec"))
    assert pipe.run()[0].iteration == 0  # (dropped at once: a kept view pins its buffers)
    with pytest.raises(sluice.SluiceError) as e:
        pipe.run()
    err = e.value
    assert isinstance(err, RuntimeError)
    assert (err.operator, err.node, err.iteration, err.sample) == ("decoders.image", "dec", 1, 1)
    assert err.source == str(bad) and str(bad) in str(err)
    third = pipe.run()[0]  # iteration 2 goes on
    assert third.iteration == 2
    np.testing.assert_array_equal(third.at(0), np.asarray(Image.open(files[8]).convert("RGB")))


def test_build_errors_raise_with_context(tmp_path):
    pipe = sluice.Pipeline(batch_size=2)
    with pipe:
        _, labels = fn.readers.file(file_root=str(tmp_path / "missing"), name="R")
        pipe.set_outputs(labels)
    with pytest.raises(sluice.SluiceError) as e:
        pipe.build()
    assert e.value.node == "R" and e.value.operator == "readers.file"
    with pytest.raises(RuntimeError, match="no outputs"):
        sluice.Pipeline(batch_size=2).build()
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        bad = sluice.Pipeline()
        with bad:
            bad.set_outputs(fn.random.coin_flip())
        bad.build()


def test_misuse_gives_clear_errors():
    pipe = sluice.Pipeline(batch_size=2, num_threads=1)
    with pipe:
        pipe.set_outputs(fn.random.coin_flip())
    with pytest.raises(sluice.MisuseError, match="no iteration is scheduled"):
        pipe.share_outputs()  # builds implicitly, nothing scheduled
    with pytest.raises(sluice.MisuseError, match="no outputs are shared"):
        pipe.release_outputs()
    pipe.schedule_run()
    (out,) = pipe.share_outputs()
    pipe.release_outputs()
    with pytest.raises(sluice.MisuseError, match="no outputs are shared"):
        pipe.release_outputs()  # released twice
    assert len(out.as_array()) == 2  # the outputs stay readable after release
    with pipe:
        with pytest.raises(RuntimeError, match="already built"):
            pipe.set_outputs(fn.random.coin_flip())


def test_device_id_needs_cuda_and_unsupported_options():
    pipe = sluice.Pipeline(batch_size=2, device_id=0)
    with pipe:
        pipe.set_outputs(fn.random.coin_flip())
    if not sluice._sluice.HAVE_CUDA:
        with pytest.raises(NotImplementedError, match="built without CUDA support"):
            pipe.build()
    # conditionals are supported (test_conditionals.py); the debug mode is not
    assert pipeline_def(lambda: 1)(enable_conditionals=True, batch_size=1).enable_conditionals
    with pytest.raises(NotImplementedError, match="debug"):
        pipeline_def(debug=True)
    # checkpointing is supported (test_checkpoint.py)
    assert sluice.Pipeline(batch_size=2, enable_checkpointing=True).enable_checkpointing
    p = sluice.Pipeline(batch_size=2, prefetch_queue_depth={"cpu_size": 3, "gpu_size": 2},
                        exec_async=False, set_affinity=True, py_num_workers=4)
    assert p._depth == 5  # separated queues: cpu_size + gpu_size in flight
    assert sluice.Pipeline(batch_size=2, exec_pipelined=False)._depth == 1


def test_split_run_api_and_outputs(tree):
    pipe = decode_pipe(str(tree), prefetch_queue_depth=3)
    pipe.schedule_run()  # three iterations
    a = pipe.share_outputs()
    b = pipe.share_outputs()  # two shared at once
    assert (a[1].iteration, b[1].iteration) == (0, 1)
    pipe.release_outputs()
    pipe.release_outputs()
    labels = [x[1].as_array().ravel().tolist() for x in (a, b)]
    del a, b  # views pin their iteration's buffers: three held iterations would block
    c = pipe.outputs()
    assert c[1].iteration == 2
    d = pipe.run()
    assert d[1].iteration == 3
    labels += [x[1].as_array().ravel().tolist() for x in (c, d)]
    assert sum(labels, []) == [0] * 16
