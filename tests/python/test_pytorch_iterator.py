"""tests/python/test_pytorch_iterator.py: sluice.plugin.pytorch — the PyTorch iterator.

Epoch semantics: every last-batch policy x padding (reader pad_last_batch, or the iterator's
last_batch_padded) x data set size a multiple of the batch or not x 1 or 2 shards (two
pipelines in one iterator, and one iterator per shard) x reader_name or size, over several
epochs, on files whose bytes and labels are their index: the samples each step returns are
compared with DALI's documented table and with an independent model of the expected sequence
(below: it replays the readers' sample streams and states each policy in its own terms).
Also: len(), zero copy (tensor address == the TensorList's), tensors held across steps,
argument errors with DALI's messages, auto_reset, prepare_first_batch, external_source with
size=-1, errors of one batch, feed_ndarray.
"""
import gc
import logging
import os
import struct
import time
import warnings

import numpy as np
import pytest
import torch

import sluice
from sluice import fn, pipeline_def, types
from sluice.plugin import pytorch as spt
from sluice.plugin.pytorch import (DALIClassificationIterator, DALIGenericIterator,
                                   LastBatchPolicy, SluiceClassificationIterator,
                                   SluiceGenericIterator, feed_ndarray)

FILL, DROP, PARTIAL = LastBatchPolicy.FILL, LastBatchPolicy.DROP, LastBatchPolicy.PARTIAL
EPOCHS = 4

pytestmark = pytest.mark.filterwarnings(
    "ignore:Please set `reader_name`:Warning")  # size= is DALI's legacy mode, tested on purpose


# ---- data: file k holds k as 4 little-endian bytes; its label is k too ------------------------

@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("indexed")
    paths = []
    for k in range(40):
        path = d / f"{k:03d}.bin"
        path.write_bytes(struct.pack("<i", k))
        paths.append(str(path))
    return paths


def label_of(path):
    return int(os.path.basename(path).split(".")[0])


def reader_pipe(files, n, bs, shard_id=0, num_shards=1, pad=False, depth=2, stick=False,
                max_held_bytes=0):
    @pipeline_def(batch_size=bs, num_threads=1, prefetch_queue_depth=depth,
                  max_held_bytes=max_held_bytes)
    def p():
        data, label = fn.readers.file(files=files[:n], labels=[label_of(f) for f in files[:n]],
                                      shard_id=shard_id, num_shards=num_shards,
                                      pad_last_batch=pad, stick_to_shard=stick, name="Reader")
        return data, label

    return p()


def ids(batch):
    """The sample indices of one pipeline's dict, checked to agree between data and label."""
    data, label = batch["data"], batch["label"]
    assert data.dtype == torch.uint8 and label.dtype == torch.int32
    assert label.dim() == 2 and label.shape[1] == 1 and data.shape == (label.shape[0], 4)
    from_bytes = data.contiguous().view(torch.int32).reshape(-1).tolist()
    from_label = label.reshape(-1).tolist()
    assert from_bytes == from_label
    return from_label


def run_epochs(it, epochs=EPOCHS):
    """[epoch][step][pipeline] -> sample indices; also checks len() against the steps."""
    out = []
    for _ in range(epochs):
        steps_it = iter(it)  # starts the next epoch after the first (as a for loop does)
        n = len(it)
        steps = [[ids(b) for b in step] for step in steps_it]
        assert len(steps) == n, f"len() said {n}, the epoch had {len(steps)} steps"
        out.append(steps)
    return out


# ---- the independent model -------------------------------------------------------------------

def shard_bounds(n, s, g):
    return n * g // s, n * (g + 1) // s


def reader_stream(n, s, shard_id, bs, pad, stick=False):
    """What readers.file yields, sample after sample, for ever (DALI's reader semantics):
    epoch e reads shard (shard_id + e) mod S, padded with its last sample to
    ceil(ceil(N/S) / bs) * bs samples when pad_last_batch."""
    e = 0
    while True:
        g = shard_id if stick else (shard_id + e) % s
        lo, hi = shard_bounds(n, s, g)
        samples = list(range(lo, hi))
        if pad:
            length = -(-(-(-n // s)) // bs) * bs
            samples += [samples[-1]] * (length - len(samples))
        yield from samples
        e += 1


class Streams:
    def __init__(self, n, s, shard_ids, bs, pad):
        self.bs = bs
        self.streams = [reader_stream(n, s, sid, bs, pad) for sid in shard_ids]

    def step(self):
        return [[next(st) for _ in range(self.bs)] for st in self.streams]


def model_reader(policy, n, s, shard_ids, bs, pad, epochs=EPOCHS):
    """Expected [epoch][step][pipeline] samples with reader_name, stated per policy:

    FILL + padding: every epoch is the padded shard, ceil(ceil(N/S)/bs) full batches.
    FILL, no padding: epoch e ends at the first step at which every shard slot g (the reader
      that started on shard g, ranks not in this iterator included) has read all of the shards
      it reads in epochs 0..e; everything read is returned.
    PARTIAL: ceil(ceil(N/S)/bs) steps; each pipeline returns the first |its shard| samples of
      what it read in the epoch (its shard: shard_id + e mod S).
    DROP: floor(floor(N/S)/bs) full batches are returned; the reader reads one more batch
      when floor(N/S) is not a multiple of bs (it is dropped).
    """
    st = Streams(n, s, shard_ids, bs, pad)
    size = lambda g: shard_bounds(n, s, g)[1] - shard_bounds(n, s, g)[0]  # noqa: E731
    out, total_steps = [], 0
    for e in range(epochs):
        if policy == FILL and pad:
            steps = [st.step() for _ in range(-(-(-(-n // s)) // bs))]
        elif policy == FILL:
            ends = [sum(size((g + k) % s) for k in range(e + 1)) for g in range(s)]
            end_step = max(-(-x // bs) for x in ends)
            steps = [st.step() for _ in range(end_step - total_steps)]
        elif policy == PARTIAL:
            raw = [st.step() for _ in range(-(-(-(-n // s)) // bs))]
            keep = [size((sid + e) % s) for sid in shard_ids]
            steps = []
            for k, batches in enumerate(raw):
                steps.append([b[:max(0, min(bs, keep[i] - k * bs))]
                              for i, b in enumerate(batches)])
        else:
            m = n // s
            steps = [st.step() for _ in range(m // bs)]
            if m % bs:
                st.step()
        total_steps += len(steps)
        out.append(steps)
    return out


def model_size(policy, n, s, shard_ids, bs, pad, size, epochs=EPOCHS):
    """Expected samples with size= (DALI's legacy mode): the iterator counts the samples of
    all its pipelines, P * bs per step, against `size`.

    FILL: without last_batch_padded, epoch e ends at the first step at which (e + 1) * size
      samples have been returned since the start; with it, each epoch has ceil(size/(P bs))
      steps. PARTIAL: ceil(size/(P bs)) steps, the last one keeps the remaining samples,
      pipelines in order. DROP: floor(size/(P bs)) steps returned, one more read if needed.
    """
    st = Streams(n, s, shard_ids, bs, pad)
    per = len(shard_ids) * bs
    out, total = [], 0
    for e in range(epochs):
        if policy == FILL and not pad:
            steps = []
            while total < (e + 1) * size:
                steps.append(st.step())
                total += per
        elif policy == FILL:
            steps = [st.step() for _ in range(-(-size // per))]
        elif policy == PARTIAL:
            steps = [st.step() for _ in range(-(-size // per))]
            left = size - (len(steps) - 1) * per
            last = []
            for b in steps[-1]:
                if left > 0:
                    last.append(b[:min(bs, left)])
                left -= bs
            steps[-1] = last
        else:
            steps = [st.step() for _ in range(size // per)]
            if size % per:
                st.step()
        out.append(steps)
    return out


# ---- DALI's table ----------------------------------------------------------------------------

TABLE = [  # policy, padded, last batch, next epoch starts (data 1..7, batch 2)
    (PARTIAL, True, [7], [1, 2]),
    (PARTIAL, False, [7], [2, 3]),
    (FILL, True, [7, 7], [1, 2]),
    (FILL, False, [7, 1], [2, 3]),
    (DROP, True, [5, 6], [1, 2]),
    (DROP, False, [5, 6], [2, 3]),
]


@pytest.mark.parametrize("mode", ["reader_name", "size"])
@pytest.mark.parametrize("policy,padded,last,nxt", TABLE)
def test_dali_table(files, policy, padded, last, nxt, mode):
    # files 1..7: sample k is the file holding k
    pipe = reader_pipe(files[1:], 7, 2, pad=padded)
    kw = dict(reader_name="Reader") if mode == "reader_name" else dict(
        size=7, last_batch_padded=padded)
    it = DALIGenericIterator(pipe, ["data", "label"], last_batch_policy=policy, **kw)
    epoch = [ids(b[0]) for b in it]
    assert epoch[-1] == last
    assert [x for b in epoch[:-1] for x in b] == [1, 2, 3, 4, 5, 6][:2 * (len(epoch) - 1)]
    it.reset()
    assert ids(next(it)[0]) == nxt


# ---- the matrix ------------------------------------------------------------------------------

CASES = [(policy, pad, n, bs) for policy in (FILL, DROP, PARTIAL) for pad in (False, True)
         for n, bs in ((12, 2), (11, 2), (13, 3))]


def case_id(c):
    return f"{c[0].name}-{'pad' if c[1] else 'nopad'}-n{c[2]}-bs{c[3]}"


@pytest.mark.parametrize("case", CASES, ids=case_id)
@pytest.mark.parametrize("shards", ["1", "2-in-one", "2-separate"])
def test_reader_name_epochs(files, case, shards):
    policy, pad, n, bs = case
    if shards == "1":
        groups = [[0]]
        s = 1
    else:
        s = 2
        groups = [[0, 1]] if shards == "2-in-one" else [[0], [1]]
    results = []
    for group in groups:
        pipes = [reader_pipe(files, n, bs, sid, s, pad) for sid in group]
        it = SluiceGenericIterator(pipes, ["data", "label"], reader_name="Reader",
                                   last_batch_policy=policy)
        got = run_epochs(it)
        assert got == model_reader(policy, n, s, group, bs, pad)
        results.append(got)
        for epoch in got:
            for step in epoch:
                for b in step[:len(group)]:
                    if policy != PARTIAL:
                        assert len(b) == bs
    # properties that do not need the model
    per_epoch = [[x for r in results for step in r[e] for b in step for x in b]
                 for e in range(EPOCHS)]
    if policy == PARTIAL and (pad or s == 1):
        for e, samples in enumerate(per_epoch):  # each sample exactly once per epoch
            assert sorted(samples) == list(range(n)), f"epoch {e}"
    if policy == FILL:  # nothing is skipped: each pipeline returns all its reader reads
        for r, group in zip(results, groups):
            for i, sid in enumerate(group):
                mine = [x for epoch in r for step in epoch for x in step[i]]
                stream = reader_stream(n, s, sid, bs, pad)
                assert mine == [next(stream) for _ in mine]
    if len(groups) == 2:  # ranks agree on the epoch lengths
        assert [len(e) for e in results[0]] == [len(e) for e in results[1]]


@pytest.mark.parametrize("case", CASES, ids=case_id)
@pytest.mark.parametrize("shards", ["1", "2-in-one", "2-separate"])
def test_size_epochs(files, case, shards):
    policy, pad, n, bs = case
    s = 1 if shards == "1" else 2
    groups = [[0]] if s == 1 else [[0, 1]] if shards == "2-in-one" else [[0], [1]]
    for group in groups:
        pipes = [reader_pipe(files, n, bs, sid, s, pad) for sid in group]
        # the samples per epoch of these pipelines, as a user would state them
        size = sum(shard_bounds(n, s, g)[1] - shard_bounds(n, s, g)[0] for g in group)
        if pad:
            size = len(group) * -(-n // s)
        it = SluiceGenericIterator(pipes, ["data", "label"], size=size,
                                   last_batch_padded=pad, last_batch_policy=policy)
        assert run_epochs(it) == model_size(policy, n, s, group, bs, pad, size)


def test_len_and_size(files):
    it = DALIClassificationIterator(reader_pipe(files, 11, 2), reader_name="Reader",
                                    last_batch_policy=FILL)
    assert it.size == 12 and len(it) == 6 and it.batch_size == 2
    assert [len(s) for s in run_epochs(it, 3)] == [6, 5, 6]
    it = DALIClassificationIterator(reader_pipe(files, 11, 2), reader_name="Reader",
                                    last_batch_policy=DROP)
    assert it.size == 11 and len(it) == 5
    it = DALIClassificationIterator(reader_pipe(files, 11, 2, pad=True), reader_name="Reader",
                                    last_batch_policy=PARTIAL)
    assert it.size == 11 and len(it) == 6


def test_stick_to_shard(files):
    pipes = [reader_pipe(files, 11, 2, sid, 2, stick=True, pad=True) for sid in (0, 1)]
    it = SluiceGenericIterator(pipes, ["data", "label"], reader_name="Reader",
                               last_batch_policy=PARTIAL)
    for epoch in run_epochs(it, 3):
        assert sorted(x for step in epoch for x in step[0]) == list(range(5))
        assert sorted(x for step in epoch for x in step[1]) == list(range(5, 11))


def test_classification_iterator(tree):
    @pipeline_def(batch_size=4, num_threads=2, seed=3)
    def p():
        jpegs, labels = fn.readers.file(file_root=str(tree), random_shuffle=True, name="R")
        images = fn.decoders.image(jpegs)
        images = fn.resize(images, resize_x=32, resize_y=24)
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                          mean=[128.0], std=[64.0])
        return images, labels

    it = SluiceClassificationIterator(p(), reader_name="R", last_batch_policy=PARTIAL)
    assert SluiceClassificationIterator is DALIClassificationIterator
    assert SluiceGenericIterator is DALIGenericIterator
    assert spt.LastBatchPolicy is LastBatchPolicy
    seen = []
    for (b,) in it:
        assert set(b) == {"data", "label"}
        assert b["data"].shape[1:] == (3, 24, 32) and b["data"].dtype == torch.float32
        assert b["label"].dtype == torch.int32 and b["label"].shape[1] == 1
        seen += b["label"].reshape(-1).tolist()
    assert sorted(seen) == [c for c in range(4) for _ in range(25)]


# ---- zero copy and memory ----------------------------------------------------------------------

def record_pointers(pipe):
    """Wraps pipe.share_outputs to record each output's buffer address (not the outputs)."""
    ptrs = []
    share = pipe.share_outputs

    def recording():
        outs = share()
        ptrs.append([o.data_ptr() for o in outs])
        return outs

    pipe.share_outputs = recording
    return ptrs


@pytest.mark.parametrize("policy", [FILL, PARTIAL])
def test_zero_copy(files, policy):
    pipe = reader_pipe(files, 7, 2)
    ptrs = record_pointers(pipe)
    it = SluiceGenericIterator(pipe, ["data", "label"], reader_name="Reader",
                               last_batch_policy=policy)
    for k, (b,) in enumerate(it):
        assert b["data"].data_ptr() == ptrs[k][0]
        assert b["label"].data_ptr() == ptrs[k][1]
    assert k == 3
    if policy == PARTIAL:  # the short last batch is a view of the full one
        assert b["label"].shape == (1, 1) and b["label"]._base is not None


def test_tensors_outlive_iterator_and_pipeline(files):
    it = SluiceGenericIterator(reader_pipe(files, 8, 4), ["data", "label"],
                               reader_name="Reader")
    first = next(it)[0]
    second = next(it)[0]
    del it
    gc.collect()
    assert ids(first) == [0, 1, 2, 3] and ids(second) == [4, 5, 6, 7]


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_hold_previous_steps(files, depth):
    """Whatever prefetch_queue_depth, the tensors of earlier steps may be held while the next
    one is asked for (here depth + 1 of them: they are set aside); their contents never
    change."""
    pipe = reader_pipe(files, 40, 2, depth=depth)
    it = SluiceGenericIterator(pipe, ["data", "label"], reader_name="Reader")
    held = []
    for step, (b,) in enumerate(it):
        held.append((b, ids(b)))
        held = held[-(depth + 1):]
        for old, want in held:
            assert ids(old) == want
    assert step == 19


def test_holding_too_many_steps_is_a_clear_error(files):
    # max_held_bytes=1: nothing may be set aside, so held steps keep their slots
    it = SluiceGenericIterator(reader_pipe(files, 40, 2, depth=2, max_held_bytes=1),
                               ["data", "label"], reader_name="Reader")
    a, b = next(it), next(it)
    t0 = time.monotonic()
    with pytest.raises(sluice.MisuseError, match="still referenced"):
        next(it)
    assert time.monotonic() - t0 < 10
    del a  # after dropping them, the iterator goes on where it was
    assert ids(next(it)[0]) == [4, 5]
    assert ids(b[0]) == [2, 3]


def test_holding_too_many_steps_with_two_pipelines(files):
    # shard 0 has depth 3, shard 1 depth 2, neither may set batches aside: holding two steps
    # stops the second pipeline only; the first one's batch is kept until the second can
    # deliver, so both stay in step
    pipes = [reader_pipe(files, 40, 2, 0, 2, depth=3, max_held_bytes=1),
             reader_pipe(files, 40, 2, 1, 2, depth=2, max_held_bytes=1)]
    it = SluiceGenericIterator(pipes, ["data", "label"], reader_name="Reader")
    a, b = next(it), next(it)
    with pytest.raises(sluice.MisuseError, match="still referenced"):
        next(it)
    del a
    assert [ids(x) for x in next(it)] == [[4, 5], [24, 25]]
    assert [ids(x) for x in b] == [[2, 3], [22, 23]]
    del b
    assert [ids(x) for x in next(it)] == [[6, 7], [26, 27]]


def test_depth_one_needs_the_previous_batch_dropped(files):
    it = SluiceGenericIterator(reader_pipe(files, 8, 2, depth=1), ["data", "label"],
                               reader_name="Reader")
    got = []
    while True:
        try:
            batch = next(it)
        except StopIteration:
            break
        got.append(ids(batch[0]))
        del batch  # a for loop would still hold it during next(): MisuseError
    assert got == [[0, 1], [2, 3], [4, 5], [6, 7]]


# ---- arguments ---------------------------------------------------------------------------------

def test_argument_errors(files):
    pipe = reader_pipe(files, 8, 2)
    two = [reader_pipe(files, 8, 2, 0, 2), reader_pipe(files, 8, 2, 1, 2)]
    with pytest.raises(AssertionError, match="Size cannot be 0"):
        SluiceGenericIterator(pipe, ["data", "label"], size=0)
    with pytest.raises(ValueError, match="Size cannot be 0"):
        SluiceGenericIterator(pipe, ["data", "label"], size=0)
    with pytest.raises(AssertionError,
                       match="Negative size is supported only for a single pipeline"):
        SluiceGenericIterator(two, ["data", "label"])
    with pytest.raises(ValueError, match="Wrong type for `last_batch_policy`."):
        SluiceGenericIterator(pipe, ["data", "label"], reader_name="Reader",
                              last_batch_policy="FILL")
    with pytest.raises(AssertionError, match="When reader_name is provided, size should not"):
        SluiceGenericIterator(pipe, ["data", "label"], reader_name="Reader", size=8)
    with pytest.raises(AssertionError, match="last_batch_padded should not be set"):
        SluiceGenericIterator(pipe, ["data", "label"], reader_name="Reader",
                              last_batch_padded=True)
    with pytest.raises(ValueError, match="Unsupported value for `auto_reset` maybe"):
        SluiceGenericIterator(pipe, ["data", "label"], reader_name="Reader", auto_reset="maybe")
    with pytest.raises(AssertionError, match="output_map names should be distinct"):
        SluiceGenericIterator(pipe, ["data", "data"], reader_name="Reader")
    with pytest.raises(AssertionError, match="same batch size"):
        SluiceGenericIterator([pipe, reader_pipe(files, 8, 4)], ["data", "label"], size=8)
    with pytest.raises(AssertionError, match="same `pad_last_batch` argument set"):
        SluiceGenericIterator([reader_pipe(files, 8, 2, 0, 2, pad=True),
                               reader_pipe(files, 8, 2, 1, 2)], ["data", "label"],
                              reader_name="Reader")
    with pytest.raises(sluice.NotFoundError):
        SluiceGenericIterator(reader_pipe(files, 8, 2), ["data", "label"], reader_name="Nope")
    with pytest.raises(ValueError, match="2 outputs but output_map names 1"):
        SluiceGenericIterator(reader_pipe(files, 8, 2), ["data"], reader_name="Reader")
    with pytest.raises(RuntimeError, match="no data in the pipeline"):
        SluiceGenericIterator(reader_pipe(files, 3, 4), ["data", "label"], reader_name="Reader",
                              last_batch_policy=DROP)
    with pytest.warns(FutureWarning, match="fill_last_batch"):
        it = SluiceGenericIterator(reader_pipe(files, 7, 2), ["data", "label"],
                                   reader_name="Reader", fill_last_batch=False)
    assert [len(ids(b[0])) for b in it] == [2, 2, 2, 1]  # PARTIAL


def test_ragged_output_is_a_clear_error(tree):
    @pipeline_def(batch_size=4, num_threads=1)
    def p():
        jpegs, labels = fn.readers.file(file_root=str(tree), name="R")
        return fn.decoders.image(jpegs), labels

    it = SluiceClassificationIterator(p(), reader_name="R")  # the first batch's error:
    with pytest.raises(sluice.InvalidArgumentError, match='output "data" .* not a dense batch'):
        next(it)  # raised by the next() that would return it


def test_ragged_batch_is_skipped():
    def gen():
        for k in range(4):
            n = 3 if k == 1 else 2  # batch 1: samples of different lengths
            yield [np.full((n if i else 2,), 10 * k + i, np.int32) for i in range(2)]

    @pipeline_def(batch_size=2, num_threads=1)
    def p():
        return fn.external_source(source=gen)

    it = SluiceGenericIterator(p(), ["x"])
    got = []
    for _ in range(4):
        try:
            got.append(next(it)[0]["x"][:, 0].tolist())
        except sluice.InvalidArgumentError:
            got.append("ragged")
    assert got == [[0, 1], "ragged", [20, 21], [30, 31]]
    with pytest.raises(StopIteration):
        next(it)


def test_reset_mid_epoch_is_ignored(files, caplog):
    it = SluiceGenericIterator(reader_pipe(files, 8, 2), ["data", "label"], reader_name="Reader")
    next(it)
    with caplog.at_level(logging.WARNING, logger="sluice.plugin"):
        it.reset()
    assert "not supported" in caplog.text
    assert [ids(b[0]) for b in it] == [[2, 3], [4, 5], [6, 7]]


# ---- auto_reset, prepare_first_batch -----------------------------------------------------------

@pytest.mark.parametrize("auto_reset", [True, "yes"])
def test_auto_reset(files, auto_reset):
    it = SluiceGenericIterator(reader_pipe(files, 5, 2), ["data", "label"], reader_name="Reader",
                               auto_reset=auto_reset, last_batch_policy=PARTIAL)
    epochs = []
    for _ in range(3):
        steps = []
        while True:
            try:
                steps.append(ids(next(it)[0]))
            except StopIteration:
                break
        epochs.append(steps)
    assert epochs == [[[0, 1], [2, 3], [4]], [[1, 2], [3, 4], [0]], [[2, 3], [4, 0], [1]]]
    # a for loop over an auto-resetting iterator: iter() right after the reset changes nothing
    assert [ids(b[0]) for b in it] == [[3, 4], [0, 1], [2]]


@pytest.mark.parametrize("auto_reset", [False, "no", None])
def test_no_auto_reset(files, auto_reset):
    it = SluiceGenericIterator(reader_pipe(files, 4, 2), ["data", "label"], reader_name="Reader",
                               auto_reset=auto_reset)
    assert [ids(b[0]) for b in it] == [[0, 1], [2, 3]]
    for _ in range(2):
        with pytest.raises(StopIteration):
            next(it)
    it.reset()
    assert ids(next(it)[0]) == [0, 1]


def counting_source(n_batches, bs, calls):
    def gen():
        for k in range(n_batches):
            calls.append(k)
            yield [np.full((2,), 10 * k + i, dtype=np.int64) for i in range(bs)]

    return gen


@pytest.mark.parametrize("prepare", [True, False])
def test_prepare_first_batch(prepare):
    calls = []

    @pipeline_def(batch_size=2, num_threads=1, prefetch_queue_depth=2)
    def p():
        return fn.external_source(source=counting_source(5, 2, calls))

    pipe = p()
    it = SluiceGenericIterator(pipe, ["x"], prepare_first_batch=prepare)
    assert len(calls) == (3 if prepare else 0)  # prefetch 2, then one more after the first
    assert pipe.empty() is not prepare
    assert next(it)[0]["x"][:, 0].tolist() == [0, 1]


# ---- external_source and size=-1 ---------------------------------------------------------------

@pytest.mark.parametrize("auto_reset", [False, True])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_external_source_until_stop_iteration(auto_reset, depth):
    calls = []

    @pipeline_def(batch_size=3, num_threads=2, prefetch_queue_depth=depth)
    def p():
        return fn.external_source(source=counting_source(4, 3, calls), name="src")

    it = SluiceGenericIterator(p(), ["x"], auto_reset=auto_reset)
    with pytest.raises(TypeError, match="no length"):
        len(it)
    for epoch in range(3):
        got = []
        while True:
            try:
                batch = next(it)
            except StopIteration:
                break
            x = batch[0]["x"]
            assert x.dtype == torch.int64 and x.shape == (3, 2)
            got.append(x[:, 0].tolist())
            del batch, x  # depth 1 holds nothing back
        assert got == [[10 * k + i for i in range(3)] for k in range(4)], f"epoch {epoch}"
        if not auto_reset:
            with pytest.raises(StopIteration):
                next(it)
            it.reset()


def test_external_source_for_loop_epochs():
    @pipeline_def(batch_size=2, num_threads=1)
    def p():
        return fn.external_source(source=counting_source(3, 2, []))

    it = DALIGenericIterator(p(), ["x"])
    for _ in range(3):
        assert [b[0]["x"][:, 0].tolist() for b in it] == [[0, 1], [10, 11], [20, 21]]


def test_callback_error_loses_no_good_batch():
    def source(info):
        if info.iteration == 2:
            raise KeyError("bad batch 2")
        if info.iteration == 5:
            raise StopIteration
        return [np.full((1,), 10 * info.iteration + i, dtype=np.int32) for i in range(2)]

    @pipeline_def(batch_size=2, num_threads=1)
    def p():
        return fn.external_source(source=source, batch_info=True)

    it = SluiceGenericIterator(p(), ["x"])
    got, errors = [], 0
    while True:
        try:
            got.append(next(it)[0]["x"].reshape(-1).tolist())
        except KeyError:
            errors += 1
        except StopIteration:
            break
    assert errors == 1 and got == [[0, 1], [10, 11], [30, 31], [40, 41]]


def failing_samples(n):
    def sample(info):  # every sample of the epoch fails; n samples per epoch
        if info.idx_in_epoch >= n:
            raise StopIteration
        raise ValueError(f"sample {info.idx_in_epoch} is corrupt")

    return sample


@pytest.mark.parametrize("auto_reset", [True, False])
@pytest.mark.parametrize("prepare_first_batch", [True, False])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_every_sample_failing_gives_one_error_per_batch_then_stop_iteration(
        auto_reset, prepare_first_batch, depth):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, prefetch_queue_depth=depth)
    def p():
        return fn.external_source(failing_samples(100), batch=False)

    it = DALIGenericIterator(p(), ["x"], auto_reset=auto_reset,
                             prepare_first_batch=prepare_first_batch)
    for epoch in range(2):
        errors = 0
        while True:
            try:
                next(it)
            except ValueError:
                errors += 1
            except StopIteration:
                break
        assert errors == 50, f"epoch {epoch}"  # 100 samples, batches of 2: 50 failed batches
        if not auto_reset:
            with pytest.raises(StopIteration):
                next(it)
            it.reset()


@pytest.mark.parametrize("auto_reset", [True, False])
def test_the_first_batch_of_each_epoch_failing(auto_reset):
    def source(info):
        if info.iteration == 4:
            raise StopIteration
        if info.iteration == 0:
            raise KeyError(f"epoch {info.epoch_idx}: batch 0 is missing")
        return [np.full((1,), 10 * info.iteration + i, dtype=np.int32) for i in range(2)]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p():
        return fn.external_source(source=source, batch_info=True)

    it = DALIGenericIterator(p(), ["x"], auto_reset=auto_reset)  # the constructor does not raise
    for epoch in range(3):
        got = []
        while True:
            try:
                got.append(next(it)[0]["x"].reshape(-1).tolist())
            except KeyError as e:
                assert f"epoch {epoch}: batch 0" in str(e)
                got.append("error")
            except StopIteration:
                break
        assert got == ["error", [10, 11], [20, 21], [30, 31]], f"epoch {epoch}"
        if not auto_reset:
            it.reset()


def test_an_error_in_the_first_batch_is_raised_by_the_first_next(files, tmp_path):
    # prepare_first_batch=True (the default) runs the first step in the constructor; its error
    # belongs to the next() that would return that batch, and the next() after goes on
    paths = []
    for k in range(6):
        path = tmp_path / f"{k}.bin"
        path.write_bytes(struct.pack("<i", k))
        paths.append(str(path))

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p():
        data, label = fn.readers.file(files=paths, name="Reader")
        return data, label

    (tmp_path / "1.bin").rename(tmp_path / "moved")
    try:
        it = DALIClassificationIterator(p(), reader_name="Reader", last_batch_policy=PARTIAL)
    finally:
        (tmp_path / "moved").rename(tmp_path / "1.bin")
    def labels(step):
        return step[0]["label"].reshape(-1).tolist()

    with pytest.raises(sluice.ReadError, match="1.bin"):
        next(it)
    assert labels(next(it)) == [2, 3] and labels(next(it)) == [4, 5]
    with pytest.raises(StopIteration):
        next(it)
    assert [labels(b) for b in it] == [[0, 1], [2, 3], [4, 5]]  # the next epoch

    def bad_first_batch(info):
        if info.iteration == 0:
            raise KeyError("batch 0 is missing")
        if info.iteration == 3:
            raise StopIteration
        return [np.full((1,), info.iteration, dtype=np.int32)] * 2

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def q():
        return fn.external_source(bad_first_batch, batch_info=True)

    it = DALIGenericIterator(q(), ["x"])
    with pytest.raises(KeyError, match="batch 0 is missing"):
        next(it)
    assert [b[0]["x"].reshape(-1).tolist() for b in it] == [[1, 1], [2, 2]]


def test_read_error_of_one_batch(files, tmp_path):
    paths = []
    for k in range(6):
        path = tmp_path / f"{k}.bin"
        path.write_bytes(struct.pack("<i", k))
        paths.append(str(path))
    for shards in (1, 2):
        @pipeline_def(batch_size=2, num_threads=1)
        def p(sid):
            data, label = fn.readers.file(files=paths, shard_id=sid, num_shards=shards,
                                          name="Reader")
            return data, label

        pipes = [p(sid) for sid in range(shards)]
        it = SluiceGenericIterator(pipes, ["data", "label"], reader_name="Reader",
                                   prepare_first_batch=False, last_batch_policy=PARTIAL)
        victim = tmp_path / "2.bin"
        victim.rename(tmp_path / "moved")
        got = []
        try:
            while True:
                try:
                    got.append([ids(b) for b in next(it)])
                except sluice.ReadError as e:
                    assert "2.bin" in str(e)
                    got.append("error")
        except StopIteration:
            pass
        (tmp_path / "moved").rename(victim)
        # the failed step counts: the epoch ends where it would have
        if shards == 1:
            assert got == [[[0, 1]], "error", [[4, 5]]]
            assert [ids(b) for b in next(iter(it))] == [[0, 1]]
        else:
            assert got == [[[0, 1], [3, 4]], "error"]


# ---- feed_ndarray ------------------------------------------------------------------------------

def test_feed_ndarray(files):
    pipe = reader_pipe(files, 8, 4)
    data, label = pipe.run()
    out = torch.empty((4, 1), dtype=torch.int32)
    assert feed_ndarray(label, out) is out
    assert out.reshape(-1).tolist() == [0, 1, 2, 3]
    assert out.data_ptr() != label.data_ptr()
    with pytest.raises(AssertionError, match="The element type of DALI Tensor/TensorList "
                                             "doesn't match the element type of the target"):
        feed_ndarray(label, torch.empty((4, 1), dtype=torch.int64))
    with pytest.raises(AssertionError, match="Shapes do not match"):
        feed_ndarray(label, torch.empty((4,), dtype=torch.int32))
    raw = torch.empty((4, 4), dtype=torch.uint8)
    feed_ndarray(data, raw, cuda_stream=None)
    assert raw.view(torch.int32).reshape(-1).tolist() == [0, 1, 2, 3]
    # DALI's feed_ndarray also takes a tensor: one sample (tl[i]) or the whole batch
    one = torch.empty((1,), dtype=torch.int32)
    assert feed_ndarray(label[2], one).tolist() == [2]
    whole = torch.empty((4, 1), dtype=torch.int32)
    assert feed_ndarray(label.as_tensor(), whole).reshape(-1).tolist() == [0, 1, 2, 3]
    with pytest.raises(AssertionError, match="Shapes do not match"):
        feed_ndarray(label[0], torch.empty((2,), dtype=torch.int32))


def test_bool_and_float16_outputs():
    @pipeline_def(batch_size=2, num_threads=1)
    def p():
        x = fn.external_source(source=lambda: [np.array([1.5, -2.0], np.float16)] * 2)
        return x, x > 0

    it = SluiceGenericIterator(p(), ["h", "b"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = next(it)[0]
    assert b["h"].dtype == torch.float16 and b["h"][0].tolist() == [1.5, -2.0]
    assert b["b"].dtype == torch.bool and b["b"][1].tolist() == [True, False]


def test_dlpack_bool_is_tried_not_read_from_the_version():
    """Whether a bool batch goes to torch through DLPack (torch 2.x reads kDLBool) or through
    NumPy (torch 1.13 refuses it) is decided by trying torch, as a bool batch of a pipeline
    shows: the probe agrees with what torch.from_dlpack does with it."""
    @pipeline_def(batch_size=2, num_threads=1)
    def p():
        x = fn.external_source(source=lambda: [np.array([1, -2, 3], np.int32)] * 2)
        return x > 0

    pipe = p()
    pipe.build()
    (tl,) = pipe.run()
    try:
        direct = torch.from_dlpack(tl)
        takes = True
    except (RuntimeError, TypeError, BufferError):
        takes = False
    assert spt._dlpack_takes_bool() is takes and spt._DLPACK_BOOL is takes
    if takes:
        assert direct.dtype == torch.bool and direct.tolist() == [[True, False, True]] * 2
    t = spt._as_torch(tl)  # either way: the same bools
    assert t.dtype == torch.bool and t.tolist() == [[True, False, True]] * 2
