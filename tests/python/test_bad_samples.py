"""tests/python/test_bad_samples.py: bad-sample policies (issue 20, point 4).

Pipeline(on_bad_sample="raise" | "skip" | "replace", max_bad_samples=N) and the decoders'
on_bad_sample argument, on a folder of good JPEGs and PNGs (each a flat colour of its own, so
every delivered sample is recognised by its pixels as well as by its label) mixed with damaged
files made here (a JPEG cut short, a PNG with its IDAT cut, an HTML page named .jpg, an empty
file). Checked against PIL's decode of each good file: which samples come out and in which
order, their labels, the counts (bad_samples(), executor_statistics()), the lines logged on
stderr naming the files, max_bad_samples, the spec round trip, and the PyTorch iterator taking
the smaller batches of "skip".
"""
import io
import json
import os

import numpy as np
import pytest
from PIL import Image

import sluice
from sluice import fn, pipeline_def, types

BATCH = 4


def _jpeg(colour):
    buf = io.BytesIO()
    Image.new("RGB", (24, 16), colour).save(buf, "JPEG", quality=95)
    return buf.getvalue()


def _png(colour):
    buf = io.BytesIO()
    Image.new("RGB", (24, 16), colour).save(buf, "PNG")
    return buf.getvalue()


# 8 files, 2 batches: batch 0 = good, bad, good, good; batch 1 = bad, good, bad, good
KINDS = ["good", "cut_jpeg", "good", "good", "html", "good", "cut_png", "good"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad_samples")
    paths, good = [], {}
    for i, kind in enumerate(KINDS):
        colour = (30 * i + 10, 255 - 25 * i, (70 * i) % 256)
        if kind == "good":
            data = _jpeg(colour) if i % 2 == 0 else _png(colour)
        elif kind == "cut_jpeg":
            data = _jpeg(colour)[:200]
        elif kind == "cut_png":
            p = _png(colour)
            data = p[:len(p) // 2]
        else:
            data = b"<!DOCTYPE html><html>404 Not Found</html>"
        path = os.path.join(d, f"{i:02d}_{kind}.{'png' if 'png' in kind else 'jpg'}")
        with open(path, "wb") as f:
            f.write(data)
        paths.append(path)
        if kind == "good":
            good[i] = np.array(Image.open(path).convert("RGB"))
    return paths, good


def make_pipe(paths, policy=None, dec_policy=None, **kw):
    opts = {} if policy is None else {"on_bad_sample": policy}

    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, seed=3, **opts, **kw)
    def pipe():
        data, label = fn.readers.file(files=paths, labels=list(range(len(paths))),
                                      name="reader")
        args = {} if dec_policy is None else {"on_bad_sample": dec_policy}
        images = fn.decoders.image(data, output_type=types.RGB, name="dec", **args)
        return images, label

    p = pipe()
    p.build()
    return p


def expected(policy, batch, good):
    """The files (labels) batch `batch` should deliver under `policy`."""
    idx = list(range(batch * BATCH, (batch + 1) * BATCH))
    if policy == "skip":
        return [i for i in idx if i in good]
    out = []
    for k, i in enumerate(idx):
        j = k
        while idx[j % BATCH] not in good:  # the next good sample of the batch, wrapping
            j += 1
        out.append(idx[j % BATCH])
    return out


def check_batch(outs, want, good):
    images, labels = outs
    assert len(images) == len(want) and len(labels) == len(want)
    got = [int(np.array(labels.at(k)).reshape(-1)[0]) for k in range(len(labels))]
    assert got == want
    for k, f in enumerate(want):
        np.testing.assert_array_equal(np.array(images.at(k)), good[f])


@pytest.mark.parametrize("policy", ["skip", "replace"])
def test_policy_outputs_counts_and_log(files, policy, capfd):
    paths, good = files
    p = make_pipe(paths, policy)
    for epoch in range(2):
        for b in range(2):
            check_batch(p.run(), expected(policy, b, good), good)
    nbad = sum(k != "good" for k in KINDS)
    assert p.bad_samples() == 2 * nbad
    stats = p.executor_statistics()
    assert stats["dec"]["bad_samples"] == 2 * nbad
    assert stats["reader"]["bad_samples"] == 0
    err = capfd.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("sluice: bad sample")]
    assert len(lines) == 2 * nbad
    word = "skipped" if policy == "skip" else "replaced"
    bad_paths = [pth for pth, k in zip(paths, KINDS) if k != "good"]
    for ln in lines:
        assert word in ln and "decoders.image" in ln
        assert sum(pth in ln for pth in bad_paths) == 1, ln
    # every damaged file named, in sample order within its batch
    assert [next(pth for pth in bad_paths if pth in ln) for ln in lines[:nbad]] == bad_paths


def test_raise_is_the_default(files):
    paths, good = files
    p = make_pipe(paths)
    with pytest.raises(sluice.SluiceError) as e:
        p.run()
    assert paths[1] in str(e.value)
    with pytest.raises(sluice.SluiceError) as e:  # batch 1: its first damaged file
        p.run()
    assert paths[4] in str(e.value)
    assert p.bad_samples() == 0
    # the next epoch's first batch fails again, the pipeline still runs
    with pytest.raises(sluice.SluiceError):
        p.run()


def test_decoder_argument_overrides_pipeline(files):
    paths, good = files
    p = make_pipe(paths, "raise", dec_policy="skip")
    check_batch(p.run(), expected("skip", 0, good), good)
    p = make_pipe(paths, "skip", dec_policy="raise")
    with pytest.raises(sluice.SluiceError):
        p.run()


def test_max_bad_samples(files):
    paths, good = files
    p = make_pipe(paths, "skip", max_bad_samples=2)
    check_batch(p.run(), expected("skip", 0, good), good)  # 1 bad so far
    with pytest.raises(sluice.SluiceError) as e:  # 3 bad: past the limit
        p.run()
    assert "max_bad_samples=2" in str(e.value) and paths[4] in str(e.value)
    # past the limit, every batch holding a bad sample fails
    with pytest.raises(sluice.SluiceError):
        p.run()


def test_all_bad_batch_fails(tmp_path):
    paths = []
    for i in range(BATCH):
        pth = tmp_path / f"{i}.jpg"
        pth.write_bytes(b"not an image at all")
        paths.append(str(pth))
    p = make_pipe(paths, "replace")
    with pytest.raises(sluice.SluiceError) as e:
        p.run()
    assert "no sample of the batch is good" in str(e.value)


def test_bad_option_values(files):
    paths, _ = files
    with pytest.raises(ValueError):
        make_pipe(paths, "ignore")
    with pytest.raises(ValueError):
        make_pipe(paths, "skip", max_bad_samples=-1)
    with pytest.raises(sluice.SluiceError) as e:
        make_pipe(paths, dec_policy="drop")
    assert "on_bad_sample" in str(e.value)


def test_spec_round_trip(files):
    paths, good = files
    p = make_pipe(paths, "replace", max_bad_samples=7)
    spec = p.serialize()
    opts = json.loads(spec)["pipeline"]
    assert opts["on_bad_sample"] == "replace" and opts["max_bad_samples"] == 7
    q = sluice.Pipeline.deserialize(spec)
    q.build()
    check_batch(q.run(), expected("replace", 0, good), good)
    # the default is not written
    assert "on_bad_sample" not in json.loads(make_pipe(paths).serialize())["pipeline"]


def test_pytorch_iterator_smaller_batches(files):
    torch = pytest.importorskip("torch")
    from sluice.plugin.pytorch import SluiceGenericIterator
    paths, good = files
    p = make_pipe(paths, "skip")
    it = SluiceGenericIterator([p], ["data", "label"], reader_name="reader")
    got = []
    for (batch,) in it:
        assert batch["data"].shape[0] == batch["label"].shape[0] <= BATCH
        got += [int(x) for x in batch["label"].reshape(-1)]
        for k in range(batch["data"].shape[0]):
            f = int(batch["label"][k].reshape(-1)[0])
            assert torch.equal(batch["data"][k], torch.from_numpy(good[f]))
    assert got == expected("skip", 0, good) + expected("skip", 1, good)


def test_reader_argument_skips_unreadable_file(tmp_path):
    """readers.file(on_bad_sample="skip"): a file gone when its batch reads it is skipped."""
    paths, want = [], {}
    for i in range(BATCH):
        pth = tmp_path / f"{i}.png"
        Image.new("RGB", (5, 3), (40 * i, 7, 9)).save(pth)
        paths.append(str(pth))
        want[i] = np.array(Image.open(pth).convert("RGB"))

    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None)
    def pipe():
        data, label = fn.readers.file(files=paths, labels=list(range(BATCH)),
                                      on_bad_sample="skip")
        return fn.decoders.image(data, output_type=types.RGB), label

    p = pipe()
    p.build()
    os.remove(paths[2])
    outs = p.run()
    check_batch(outs, [0, 1, 3], want)
    assert p.bad_samples() == 1


@pytest.mark.parametrize("policy", ["skip", "replace"])
@pytest.mark.parametrize("fuse", [True, False])
def test_sample_past_max_sample_bytes(tmp_path, fuse, policy):
    """A sample past max_sample_bytes is a bad sample too; fused or not, the others come out
    (replace: the next sample's copy, of its own shape)."""
    paths, want = [], {}
    for i in range(BATCH):
        size = (200, 150) if i == 1 else (20, 10)
        pth = tmp_path / f"{i}.png"
        Image.new("RGB", size, (50 * i, 3, 200)).save(pth)
        paths.append(str(pth))
        want[i] = np.array(Image.open(pth).convert("RGB"))

    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, fuse_samples=fuse,
                  max_sample_bytes=20000, on_bad_sample=policy)
    def pipe():
        data, label = fn.readers.file(files=paths, labels=list(range(BATCH)))
        images = fn.decoders.image(data, output_type=types.RGB)
        return fn.flip(images, horizontal=0), label

    p = pipe()
    p.build()
    check_batch(p.run(), [0, 2, 3] if policy == "skip" else [0, 2, 2, 3], want)
    assert p.bad_samples() == 1


@pytest.mark.parametrize("policy", ["skip", "replace"])
@pytest.mark.parametrize("branch", ["only_bad", "bad_and_good"])
def test_conditional_branch_of_bad_samples(files, policy, branch):
    """A conditional's branch holding only bad samples (or bad and good ones): the bad samples
    are skipped or replaced from the whole batch, as without the conditional."""
    paths, good = files

    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, seed=3,
                  enable_conditionals=True, on_bad_sample=policy)
    def pipe():
        data, label = fn.readers.file(files=paths, labels=list(range(len(paths))),
                                      name="reader")
        # batch 0 = good, bad, good, good: label 1 is the bad one; labels < 2 also hold a good one
        if (label == 1 if branch == "only_bad" else label < 2):
            images = fn.decoders.image(data, output_type=types.RGB, name="dec_a")
        else:
            images = fn.decoders.image(data, output_type=types.RGB, name="dec_b")
        return images, label

    p = pipe()
    p.build()
    for epoch in range(2):
        for b in range(2):
            check_batch(p.run(), expected(policy, b, good), good)
    assert p.bad_samples() == 2 * sum(k != "good" for k in KINDS)


def test_conditional_no_good_sample_fails(tmp_path):
    """Every sample bad, split over two branches: the batch fails naming a bad file."""
    paths = []
    for i in range(BATCH):
        path = os.path.join(tmp_path, f"{i}.jpg")
        with open(path, "wb") as f:
            f.write(_jpeg((10, 20, 30))[:100])
        paths.append(path)

    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, seed=3,
                  enable_conditionals=True, on_bad_sample="replace")
    def pipe():
        data, label = fn.readers.file(files=paths, labels=list(range(BATCH)))
        if label < 2:
            images = fn.decoders.image(data, output_type=types.RGB)
        else:
            images = fn.decoders.image(data, output_type=types.RGB)
        return images, label

    p = pipe()
    p.build()
    with pytest.raises(sluice.SluiceError, match="no sample of the batch is good"):
        p.run()


def test_error_names_the_first_failing_sample_of_the_batch():
    """The default policy ("raise"): the error names the batch's first failing sample, whatever
    the threads' timing. Two PNGs cut short, whose headers read well (so both fail in the same
    phase, the decode): sample 0 a large one (its failure comes after most of its rows are
    decoded), sample 3 a small one cut after its header (it fails at once). With four threads
    sample 3 always fails first, and sample 0, still running, must be the one reported."""
    rng = np.random.default_rng(3)
    buf = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (1200, 1600, 3), dtype=np.uint8)).save(
        buf, "PNG", compress_level=1)
    big = buf.getvalue()
    data = [np.frombuffer(b, np.uint8)
            for b in (big[: len(big) * 9 // 10], _png("red"), _png("blue"), _png("green")[:40])]

    @pipeline_def(batch_size=4, num_threads=4, device_id=None, prefetch_queue_depth=1)
    def pipe():
        return fn.decoders.image(fn.external_source(source=lambda: data),
                                 device="cpu")

    p = pipe()
    p.build()
    for _ in range(3):
        with pytest.raises(sluice.SluiceError, match=r"sample 0\b") as info:
            p.run()
        assert "sample 3" not in str(info.value)
