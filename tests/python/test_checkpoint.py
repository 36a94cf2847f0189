"""tests/python/test_checkpoint.py: checkpoints and exact resume (DALI's Pipeline checkpoint API,
the iterators' checkpoints() and state_dict(), the DataLoader's state_dict(), the CLI).

The reference is always the uninterrupted run. A pipeline runs k iterations (its prefetch
running ahead), is checkpointed, and a FRESH PROCESS (ckpt_cases.py) restores the checkpoint
and runs on: its outputs must equal the reference's from iteration k on, byte for byte, and its
own checkpoint at the end the reference's at that point (iteration, readers' positions, the
bad-sample count). k runs inside and across epoch boundaries (23 samples in batches of 4),
with a shuffling reader, random operators, a conditional, a missing file replaced
(on_bad_sample="replace"), 1 and 4 threads, prefetch depths 1 and 3.
"""
import json
import os
import pathlib
import pickle
import subprocess
import sys

import numpy as np
import pytest
import torch

import sluice
from sluice import fn, pipeline_def

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import ckpt_cases  # noqa: E402

N = 23          # files; batches of 4: an epoch is 5.75 iterations
MISSING = 13    # the listed file that does not exist (replaced, counted)
T = 14          # iterations of the reference runs


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("ckpt")
    paths = []
    for i in range(N):
        p = root / f"s{i:02d}.bin"
        if i != MISSING:
            # one size for all: the iterator returns dense tensors
            p.write_bytes(f"{i:04d}".encode() + bytes((i * 7 + b) % 251 for b in range(8)))
        paths.append(str(p))
    return paths


def restore_elsewhere(case, params, ckpt, n, tmp_path):
    """ckpt_cases.main in a fresh interpreter: (the outputs of n iterations, its checkpoint)."""
    cpath, out = tmp_path / "ckpt.json", tmp_path / "out.pkl"
    cpath.write_text(ckpt)
    env = dict(os.environ)
    subprocess.run([sys.executable, ckpt_cases.__file__, case, json.dumps(params), str(cpath),
                    str(n), str(out)], check=True, env=env, timeout=120)
    result = pickle.loads(out.read_bytes())
    return (result, None) if case == "iterator" else (result[:-1], result[-1])


def reference(case, params, n):
    """The uninterrupted run: outputs of n iterations and the checkpoint after each."""
    pipe = ckpt_cases.make(case, **params)(enable_checkpointing=True)
    outs, ckpts = [], [pipe.checkpoint()]
    for _ in range(n):
        outs.append(ckpt_cases.outputs(pipe.run()))
        ckpts.append(pipe.checkpoint())
    return outs, ckpts


def checkpoint_after(case, params, k):
    pipe = ckpt_cases.make(case, **params)(enable_checkpointing=True)
    for _ in range(k):
        pipe.run()
    return pipe.checkpoint()


# A conditional and a replaced bad sample are tested apart: with both, a branch whose only
# sample is the bad one fails the batch ("no sample of the batch is good"; bad.c's rule for
# a scope's samples — reported, not this feature's).
@pytest.mark.parametrize("threads,prefetch,conditional", [
    (1, 1, True), (4, 3, True), (4, 1, False), (1, 3, False)])
def test_resume_in_fresh_process(files, tmp_path, threads, prefetch, conditional):
    if conditional:  # all files present
        files = [f for i, f in enumerate(files) if i != MISSING]
    params = dict(files=files, threads=threads, prefetch=prefetch, conditional=conditional)
    ref, ref_ckpts = reference("reader", params, T)
    # the reference is not trivially repetitive, and the missing file was replaced
    assert len({str(r) for r in ref}) == T
    assert (json.loads(ref_ckpts[-1])["bad_samples"] >= 2) != conditional
    for k in (0, 3, 6, 7, 12):  # inside the first epoch, at and across its end
        ckpt = checkpoint_after("reader", params, k)
        assert ckpt == ref_ckpts[k]  # the same state however far the prefetch ran
        got, end = restore_elsewhere("reader", params, ckpt, T - k, tmp_path)
        assert got == ref[k:], f"restored after {k} iterations"
        assert end == ref_ckpts[T]


def test_resume_with_more_in_flight(files, tmp_path):
    """Iterations scheduled beyond the prefetch, not taken, are not counted."""
    params = dict(files=files, threads=2, prefetch=3, conditional=False)
    ref, _ = reference("reader", params, 10)
    pipe = ckpt_cases.make("reader", **params)(enable_checkpointing=True)
    for _ in range(4):
        pipe.run()
    pipe.schedule_run()  # one more in flight
    ckpt = pipe.checkpoint()
    assert json.loads(ckpt)["iteration"] == 4
    got, _ = restore_elsewhere("reader", params, ckpt, 6, tmp_path)
    assert got == ref[4:]


def test_resume_decoded_and_cropped(tree, tmp_path):
    params = dict(root=str(tree), threads=3, prefetch=2)
    ref, _ = reference("jpeg", params, 6)
    ckpt = checkpoint_after("jpeg", params, 4)
    got, _ = restore_elsewhere("jpeg", params, ckpt, 2, tmp_path)
    assert got == ref[4:]


@pytest.mark.parametrize("parallel", [False, True])
def test_resume_python_source(tmp_path, parallel):
    """A source computed from SampleInfo (serial, and in worker processes) continues from its
    position: idx_in_epoch / iteration as the uninterrupted run's."""
    params = dict(threads=2, prefetch=2, parallel=parallel)
    ref, _ = reference("source", params, 7)
    assert [int(s[0]) for s in np.array([np.frombuffer(b, np.int64) for _, b in ref[5][0]])] \
        == [20, 21, 22, 23]
    ckpt = checkpoint_after("source", params, 5)
    got, _ = restore_elsewhere("source", params, ckpt, 2, tmp_path)
    assert got == ref[5:]


def test_checkpoint_to_file_and_before_first_run(files, tmp_path):
    params = dict(files=files, threads=2, prefetch=2, conditional=False)
    pipe = ckpt_cases.make("reader", **params)(enable_checkpointing=True)
    path = tmp_path / "c.cpt"
    text = pipe.checkpoint(str(path))
    assert path.read_text() == text
    assert json.loads(text)["iteration"] == 0
    # restoring the initial checkpoint is a fresh pipeline's run
    fresh = ckpt_cases.run(ckpt_cases.make("reader", **params)(), 3)
    again = ckpt_cases.run(ckpt_cases.make("reader", **params)(checkpoint=text), 3)
    assert again == fresh


def test_errors(files):
    params = dict(files=files, threads=2, prefetch=2, conditional=False)
    pipe = ckpt_cases.make("reader", **params)()
    with pytest.raises(RuntimeError, match="enable_checkpointing"):
        pipe.checkpoint()
    ckpt = checkpoint_after("reader", params, 2)
    other = ckpt_cases.make("reader", **dict(params, uniform_seed=5))
    with pytest.raises(ValueError, match="different pipeline: the graphs differ"):
        other(checkpoint=ckpt).build()
    with pytest.raises(ValueError, match="seed 1234, this pipeline has seed 1"):
        ckpt_cases.make("reader", **dict(params, seed=1))(checkpoint=ckpt).build()
    with pytest.raises(ValueError, match="not valid JSON"):
        ckpt_cases.make("reader", **params)(checkpoint="{oops").build()
    with pytest.raises(TypeError):
        ckpt_cases.make("reader", **params)(checkpoint=42)


def test_unrestorable_source_says_which():
    def gen():
        while True:
            yield np.zeros(2, np.float32)

    @pipeline_def(batch_size=2, num_threads=1, seed=1, enable_checkpointing=True)
    def pipe():
        return fn.external_source(gen, batch=False, name="frames")

    p = pipe()
    with pytest.warns(UserWarning, match="doesn't capture state of such 'source'"):
        p.build()  # warned at build, as DALI
    p.run()
    with pytest.raises(NotImplementedError, match='node "frames".*generator'):
        p.checkpoint()


@pytest.mark.parametrize("kind", ["list", "iterator", "no-argument callable"])
def test_sources_without_position_are_warned_of(kind):
    source = {"list": [np.array(1)] * 3, "iterator": iter([np.array(1)] * 3),
              "no-argument callable": lambda: np.array(42)}[kind]

    @pipeline_def(batch_size=1, num_threads=1, seed=1, enable_checkpointing=True)
    def pipe():
        return fn.external_source(source=source, batch=False)

    with pytest.warns(UserWarning, match="capture state of such 'source'"):
        pipe().build()


def test_source_made_outside_the_definition_is_refused():
    es = fn.external_source("outside")

    @pipeline_def(batch_size=1, num_threads=1, seed=1, enable_checkpointing=True)
    def pipe(x):
        return x + 1

    p = pipe(es)
    with pytest.raises(RuntimeError, match="does not support checkpointing.*outside the "
                                           "pipeline"):
        p.build()
    q = pipe(fn.external_source("outside"), enable_checkpointing=False)
    q.build()  # without checkpointing it is adopted as usual


# ---- the DALI-style iterator ------------------------------------------------------------------

def test_iterator_checkpoints_across_epochs(files, tmp_path):
    files = [f for i, f in enumerate(files) if i != MISSING]  # see test_resume_in_fresh_process
    params = dict(files=files, threads=2, prefetch=2, conditional=True)
    it = ckpt_cases.make_iterator(ckpt_cases.make("reader", **params)(enable_checkpointing=True))
    ref = ckpt_cases.iterate(it, 16)
    assert ref.count(None) == 2  # epochs of 6 steps (22 samples, FILL), then StopIteration
    for k in (0, 2, 6, 7, 9, 13):
        it = ckpt_cases.make_iterator(ckpt_cases.make("reader", **params)(
            enable_checkpointing=True))
        ckpt_cases.iterate(it, k)
        (ckpt,) = it.checkpoints()
        if k in (6, 9):  # a fresh process (torch's import makes it slow: twice is enough)
            got, _ = restore_elsewhere("iterator", params, ckpt, 16 - k, tmp_path)
        else:
            got = ckpt_cases.iterate(ckpt_cases.make_iterator(ckpt_cases.make(
                "reader", **params)(checkpoint=ckpt, enable_checkpointing=True)), 16 - k)
        assert got == ref[k:], f"restored after {k} steps"


def test_iterator_state_dict(files):
    params = dict(files=files, threads=2, prefetch=3, conditional=False)
    make = lambda: ckpt_cases.make_iterator(  # noqa: E731
        ckpt_cases.make("reader", **params)(enable_checkpointing=True))
    ref = ckpt_cases.iterate(make(), 12)
    it = make()
    ckpt_cases.iterate(it, 5)
    sd = it.state_dict()
    assert list(sd) == ["checkpoints"]
    other = make()
    ckpt_cases.iterate(other, 2)  # whatever it did before
    other.load_state_dict(sd)
    assert ckpt_cases.iterate(other, 7) == ref[5:]
    # the first batch is prepared at construction but not counted before next() took it
    fresh = make()
    assert json.loads(fresh.checkpoints()[0])["iteration"] == 0
    with pytest.raises(ValueError):
        fresh.load_state_dict({"checkpoints": []})


# ---- the DataLoader front -------------------------------------------------------------------

class _Squares(torch.utils.data.Dataset):
    def __len__(self):
        return 37

    def __getitem__(self, i):
        return torch.tensor([i, i * i])


@pytest.mark.parametrize("num_workers", [0, 2])
def test_dataloader_state_dict(num_workers):
    from sluice.plugin.pytorch import DataLoader

    def loader():
        return DataLoader(_Squares(), batch_size=4, shuffle=True, num_workers=num_workers)

    torch.manual_seed(3)
    ref = [b.clone() for b in loader()]
    torch.manual_seed(3)
    dl = loader()
    it = iter(dl)
    for _ in range(4):
        next(it)
    sd = dl.state_dict()
    assert sd["_num_yielded"] == 4
    del it
    torch.manual_seed(12345)  # another process would have another state
    dl2 = loader()
    dl2.load_state_dict(sd)
    got = [b.clone() for b in dl2]
    assert len(got) == len(ref) - 4
    assert all(torch.equal(a, b) for a, b in zip(got, ref[4:]))
    # and the epoch after that is a fresh one again (not restored twice)
    assert len(list(dl2)) == len(ref)


def test_dataloader_iterable_without_state():
    from sluice.plugin.pytorch import DataLoader

    class Stream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(10))

    dl = DataLoader(Stream(), batch_size=2)
    next(iter(dl))
    with pytest.raises(TypeError, match="Stream has no state_dict"):
        dl.state_dict()


# ---- the CLI -------------------------------------------------------------------------------------

def test_cli_checkpoint_and_resume(files, tmp_path):
    cli = os.environ.get("SLUICE_CLI")
    if not cli:
        pytest.skip("SLUICE_CLI not set (ctest sets it)")
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({
        "pipeline": {"batch_size": 4, "seed": 11, "num_threads": 2, "on_bad_sample": "replace"},
        "nodes": [{"name": "r", "op": "readers.file",
                   "args": {"files": files, "random_shuffle": True}},
                  {"name": "u", "op": "random.uniform"}],
        "outputs": ["r:0", "u"]}))
    whole, part = tmp_path / "whole.json", tmp_path / "part.json"
    run = lambda *a: subprocess.run([cli, "run", str(spec), "-q", *a], check=True,  # noqa: E731
                                    capture_output=True, text=True, timeout=60)
    run("--iters", "9", "--checkpoint", str(whole))
    run("--iters", "5", "--checkpoint", str(part))
    assert json.loads(part.read_text())["iteration"] == 5
    run("--iters", "4", "--resume", str(part), "--checkpoint", str(part))
    assert part.read_text() == whole.read_text()
    assert json.loads(whole.read_text())["nodes"][0]["state"] != [0, 0]
    bad = subprocess.run([cli, "run", str(spec), "-q", "--iters", "1", "--batch", "3",
                          "--resume", str(part)], capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "batch_size 4, this pipeline has batch_size 3" in bad.stderr


# ---- every reader on the shared cursor ------------------------------------------------------

@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """11 samples as .npy files and as one WebDataset tar (sample i: [i, i*i, -i] int32)."""
    import io
    import tarfile

    root = tmp_path_factory.mktemp("readers")
    npys = []
    with tarfile.open(root / "shard.tar", "w") as tar:
        for i in range(11):
            arr = np.array([i, i * i, -i], np.int32)
            path = root / f"a{i:02d}.npy"
            np.save(path, arr)
            npys.append(str(path))
            buf = io.BytesIO()
            np.save(buf, arr)
            info = tarfile.TarInfo(f"s{i:02d}.npy")
            info.size = len(buf.getvalue())
            tar.addfile(info, io.BytesIO(buf.getvalue()))
    return {"numpy": npys, "webdataset": str(root / "shard.tar")}


@pytest.mark.parametrize("reader", ["numpy", "webdataset"])
def test_other_readers_resume(shards, reader):
    @pipeline_def(batch_size=3, num_threads=2, prefetch_queue_depth=2, seed=4)
    def pipe():
        if reader == "numpy":
            x = fn.readers.numpy(files=shards["numpy"], random_shuffle=True, name="R")
        else:
            x = fn.readers.webdataset(paths=[shards["webdataset"]], ext=["npy"],
                                      random_shuffle=True, name="R")
        return x, fn.random.uniform(range=[0, 1])

    ref = ckpt_cases.run(pipe(), 9)
    if reader == "numpy":  # the reference reads what was written: a shuffled cover per epoch
        firsts = [int(np.frombuffer(s[1], np.int32)[0]) for it in ref for s in it[0]][:11]
        assert sorted(firsts) == list(range(11)) and firsts != list(range(11))
    for k in (2, 4, 7):
        p = pipe(enable_checkpointing=True)
        ckpt_cases.run(p, k)
        ckpt = p.checkpoint()
        assert json.loads(ckpt)["nodes"][0]["op"] == f"readers.{reader}"
        assert ckpt_cases.run(pipe(checkpoint=ckpt), 9 - k) == ref[k:]


def test_iterator_checkpoint_at_epoch_end_and_after_reset(files):
    """At the end of an epoch (StopIteration, no auto_reset) the restored iterator is at the
    end too; after reset() it starts the next epoch."""
    from sluice.plugin.pytorch import SluiceGenericIterator

    @pipeline_def(batch_size=5, num_threads=2, seed=3, enable_checkpointing=True)
    def pipe():
        data, label = fn.readers.file(files=files[:MISSING], labels=list(range(MISSING)),
                                      random_shuffle=True, name="Reader")
        return label

    def make(p):
        return SluiceGenericIterator(p, ["label"], reader_name="Reader")

    def labels(it):
        return [b[0]["label"].numpy().ravel().tolist() for b in it]

    it = make(pipe())
    first = labels(it)
    assert set(sum(first, [])) == set(range(MISSING))  # 13 samples (FILL pads to 15)
    at_end = it.checkpoints()[0]
    it.reset()
    after_reset = it.checkpoints()[0]
    second = labels(it)
    assert labels(make(pipe(checkpoint=at_end))) == []
    assert labels(make(pipe(checkpoint=after_reset))) == second
    assert second != first  # a fresh permutation


def test_sequence_reader_resumes(tmp_path):
    """readers.sequence (frame folders, tests/data/make_sequence.py) on the shared cursor."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests/data"))
    import make_sequence

    make_sequence.write(str(tmp_path), seed=5, streams=4)

    @pipeline_def(batch_size=2, num_threads=2, prefetch_queue_depth=2, seed=8)
    def pipe():
        seqs = fn.readers.sequence(file_root=str(tmp_path), sequence_length=2,
                                   random_shuffle=True, name="R")
        return seqs, fn.random.uniform(range=[0, 1])

    ref = ckpt_cases.run(pipe(), 8)
    for k in (3, 5):
        p = pipe(enable_checkpointing=True)
        ckpt_cases.run(p, k)
        ckpt = p.checkpoint()
        assert json.loads(ckpt)["nodes"][0]["op"] == "readers.sequence"
        assert ckpt_cases.run(pipe(checkpoint=ckpt), 8 - k) == ref[k:]
