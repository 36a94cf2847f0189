"""tests/python/test_readers_sequence.py: readers.sequence on frame streams written by
tests/data/make_sequence.py against an independent model: the sequences enumerated here from the
writer's listing (DALI's rule: per stream, starts every `step` frames while the last frame,
`(sequence_length - 1) * stride` further, is inside the stream), each frame decoded by PIL
(exact: sluice's decoder matches Pillow bit for bit), stacked [F, H, W, C]; every sequence once
per epoch under sharding, shuffling as a permutation, GRAY / BGR, and bad streams (frames of
different sizes, a corrupt frame, nothing long enough) failing with the operator and the file."""
import os
import pathlib
import sys

import numpy as np
import pytest
from PIL import Image

import sluice
from sluice import fn, pipeline_def

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/data"))
import make_sequence  # noqa: E402


@pytest.fixture(scope="module")
def streams(tmp_path_factory):
    out = tmp_path_factory.mktemp("seq")
    return str(out), make_sequence.write(str(out), seed=5, streams=5)


def sequences(root, model, length, step, stride):
    """The model's sequences: lists of frame paths, streams in path order."""
    seqs = []
    for name in sorted(model, key=lambda n: os.path.join(root, n) + "/"):
        files = [os.path.join(root, name, f) for f in model[name]]
        i = 0
        while i + (length - 1) * stride < len(files):
            seqs.append([files[i + k * stride] for k in range(length)])
            i += step
    return seqs


def decode(path, mode):
    im = Image.open(path)
    if mode == "GRAY" and im.format == "JPEG":
        im.draft("L", im.size)  # libjpeg's own grayscale output (decoders.image's GRAY)
    return np.asarray(im.convert("L" if mode == "GRAY" else "RGB"))


def ref(seq, mode="RGB"):
    frames = [decode(p, mode) for p in seq]
    a = np.stack(frames)
    if mode == "GRAY":
        a = a[..., None]
    if mode == "BGR":
        a = a[..., ::-1]
    return a


def run(batch, iters, **kw):
    @pipeline_def(batch_size=batch, num_threads=2, device_id=None, prefetch_queue_depth=1)
    def p():
        return fn.readers.sequence(**kw)
    pipe = p()
    pipe.build()
    got = []
    for _ in range(iters):
        (out,) = pipe.run()
        assert out.layout() == "FHWC"
        got += [np.array(out.at(i)) for i in range(batch)]
    return got, pipe


@pytest.mark.parametrize("length,step,stride", [(3, 1, 1), (2, 3, 2), (1, 1, 1), (4, 2, 1),
                                                (3, 2, 3)])
def test_every_sequence_in_order(streams, length, step, stride):
    root, model = streams
    want = sequences(root, model, length, step, stride)
    assert want, "the data must hold sequences of this shape"
    got, pipe = run(1, len(want) + 2, file_root=root, sequence_length=length, step=step,
                    stride=stride)
    assert list(pipe.epoch_size().values()) == [len(want)]  # the epoch counts sequences
    for k, g in enumerate(got):
        w = ref(want[k % len(want)])
        assert g.dtype == np.uint8 and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_enumeration_counts(streams):
    root, model = streams
    # a stream of 9 frames with length 3, stride 2: starts 0..4 -> 5 sequences
    assert any(len(v) == 9 for v in model.values())
    assert any(any(f.endswith(".JPG") or f.endswith(".PNG") for f in v) for v in model.values())
    n = len(sequences(root, model, 3, 1, 2))
    assert n == sum(max(0, len(v) - 4) for v in model.values())


@pytest.mark.parametrize("mode", ["GRAY", "BGR"])
def test_image_types(streams, mode):
    root, model = streams
    want = sequences(root, model, 2, 1, 1)
    got, _ = run(2, 2, file_root=root, sequence_length=2, image_type=mode)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, ref(w, mode))


@pytest.mark.parametrize("shards", [2, 3])
def test_sharding_covers_each_epoch_once(streams, shards):
    root, model = streams
    want = sequences(root, model, 2, 2, 1)
    seen = []
    for s in range(shards):
        n = len(want) * (s + 1) // shards - len(want) * s // shards
        got, _ = run(1, n, file_root=root, sequence_length=2, step=2, shard_id=s,
                     num_shards=shards, random_shuffle=True, seed=7, stick_to_shard=True)
        seen += [g.tobytes() for g in got]
    assert sorted(seen) == sorted(ref(w).tobytes() for w in want)


def test_shuffle_is_a_permutation(streams):
    root, model = streams
    want = [ref(w).tobytes() for w in sequences(root, model, 1, 1, 1)]
    got, _ = run(len(want), 1, file_root=root, sequence_length=1, random_shuffle=True, seed=3)
    got = [g.tobytes() for g in got]
    assert sorted(got) == sorted(want) and got != want


def test_bad_streams(tmp_path):
    root = tmp_path / "bad"
    make_sequence.write(str(root), seed=1, streams=2)
    with pytest.raises(sluice.SluiceError, match=r"readers\.sequence.*no stream has the 50 frames"):
        run(1, 1, file_root=str(root), sequence_length=50)
    with pytest.raises(sluice.SluiceError, match=r"readers\.sequence.*nope.*cannot open"):
        run(1, 1, file_root=str(tmp_path / "nope"), sequence_length=1)
    # a frame of another size, and a corrupt frame, in a stream of their own
    odd = tmp_path / "odd"
    (odd / "a").mkdir(parents=True)
    Image.new("RGB", (8, 6), (1, 2, 3)).save(odd / "a" / "0.png")
    Image.new("RGB", (8, 7), (1, 2, 3)).save(odd / "a" / "1.png")
    with pytest.raises(sluice.SluiceError,
                       match=r"readers\.sequence.*frame \".*1\.png\" is 8 x 7.*one size"):
        run(1, 1, file_root=str(odd), sequence_length=2)
    (odd / "a" / "1.png").write_bytes((odd / "a" / "0.png").read_bytes()[:40])
    with pytest.raises(sluice.SluiceError, match=r"readers\.sequence.*frame \".*1\.png\""):
        run(1, 1, file_root=str(odd), sequence_length=2)
    with pytest.raises((sluice.SluiceError, ValueError), match=r"sequence_length"):
        run(1, 1, file_root=str(odd))
