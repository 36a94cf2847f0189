"""tests/python/test_distributed.py: sluice.distributed, "auto" shards and device_id, and real
launcher runs.

The launcher rules live in C (sluice/distributed.h); here each is driven through the variables
its launcher sets, and the answers are compared with the values set. "auto" readers are
compared with the same readers given explicit numbers. Then real jobs: `python3 -m
torch.distributed.run --nproc_per_node=4` (each rank in a gloo process group) and `mpirun -np
4` (Debian's Open MPI) run tests/python/dist_rank.py, each rank writing what it read over two
epochs; the shards must be disjoint, cover the data set, match the explicit reader, and take
every rank through the same number of iterations.
"""
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import uuid

import pytest

import sluice
from sluice import fn, pipeline_def
from sluice.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

HERE = pathlib.Path(__file__).resolve().parent
N = 23  # samples in the tree
LAUNCH_VARS = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK",
               "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "PMI_SIZE",
               "MPI_LOCALRANKID", "PMI_LOCAL_RANK", "SLURM_PROCID", "SLURM_NTASKS",
               "SLURM_LOCALID"]


@pytest.fixture
def env(monkeypatch):
    """The environment without any launcher's variables (and no registered job)."""
    for v in LAUNCH_VARS:
        monkeypatch.delenv(v, raising=False)
    sluice._sluice._distributed_set(0, 0, -1, "")
    yield monkeypatch
    sluice._sluice._distributed_set(0, 0, -1, "")


@pytest.fixture(scope="module")
def id_tree(tmp_path_factory):
    """Class folders c0..c2 of N files whose 4 bytes are the sample's id."""
    root = tmp_path_factory.mktemp("ids")
    for i in range(N):
        d = root / f"c{i % 3}"
        d.mkdir(exist_ok=True)
        (d / f"f{i:02d}.txt").write_bytes(b"%04d" % i)
    return root


def expect(rank, world, local, source):
    d = sluice.distributed
    assert d.info() == (rank, world, local, source)
    assert (d.rank(), d.world_size()) == (rank, world)
    if local >= 0:
        assert d.local_rank() == local
    else:
        with pytest.raises(LookupError, match="not the local rank"):
            d.local_rank()


def test_no_launcher(env):
    for f in (sluice.distributed.rank, sluice.distributed.world_size,
              sluice.distributed.local_rank, sluice.distributed.info):
        with pytest.raises(sluice.NotFoundError, match="no launcher found") as e:
            f()
        assert isinstance(e.value, LookupError)
        for var in ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"):
            assert var in str(e.value)


@pytest.mark.parametrize("variables, job", [
    (dict(RANK=3, WORLD_SIZE=8, LOCAL_RANK=1), (3, 8, 1, "torchrun")),
    (dict(OMPI_COMM_WORLD_RANK=5, OMPI_COMM_WORLD_SIZE=6, OMPI_COMM_WORLD_LOCAL_RANK=2),
     (5, 6, 2, "openmpi")),
    (dict(PMI_RANK=1, PMI_SIZE=2, MPI_LOCALRANKID=1), (1, 2, 1, "mpich")),
    (dict(PMI_RANK=1, PMI_SIZE=2, PMI_LOCAL_RANK=0), (1, 2, 0, "mpich")),
    (dict(PMI_RANK=1, PMI_SIZE=2), (1, 2, -1, "mpich")),
    (dict(SLURM_PROCID=7, SLURM_NTASKS=16, SLURM_LOCALID=3), (7, 16, 3, "slurm")),
    # the first launcher in the order wins: mpirun inside a SLURM allocation, torchrun in srun
    (dict(OMPI_COMM_WORLD_RANK=1, OMPI_COMM_WORLD_SIZE=2, SLURM_PROCID=0, SLURM_NTASKS=1),
     (1, 2, -1, "openmpi")),
    (dict(RANK=2, WORLD_SIZE=4, LOCAL_RANK=0, SLURM_PROCID=0, SLURM_NTASKS=1, PMI_RANK=0,
          PMI_SIZE=1), (2, 4, 0, "torchrun")),
])
def test_launchers(env, variables, job):
    for k, v in variables.items():
        env.setenv(k, str(v))
    expect(*job)


@pytest.mark.parametrize("var, value, words", [
    ("RANK", "first", "not an integer"), ("RANK", "-2", "not an integer >= 0"),
    ("WORLD_SIZE", "0", "not an integer >= 1"), ("RANK", "4", "out of range"),
    ("LOCAL_RANK", "1.5", "not an integer")])
def test_malformed(env, var, value, words):
    env.setenv("RANK", "1")
    env.setenv("WORLD_SIZE", "4")
    env.setenv("SLURM_PROCID", "0")  # no fallback to a later launcher
    env.setenv("SLURM_NTASKS", "1")
    env.setenv(var, value)
    with pytest.raises(ValueError, match=words) as e:
        sluice.distributed.rank()
    assert var in str(e.value)


def read_epochs(root, shard_id, num_shards, epochs=2, seed=5):
    """Sample ids per epoch read through the PyTorch iterator (PARTIAL, reader_name), and
    the number of iterations of each epoch."""
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=seed)
    def pipe():
        data, _ = fn.readers.file(file_root=str(root), file_filters=["*.txt"], random_shuffle=True,
                                  shard_id=shard_id,
                                  num_shards=num_shards, pad_last_batch=True, name="r")
        return data

    p = pipe()
    p.build()
    it = DALIGenericIterator(p, ["data"], reader_name="r",
                             last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)
    out = []
    for _ in range(epochs):
        ids, iters = [], 0
        for batch in it:
            iters += 1
            ids += [int(bytes(row.tolist()).decode()) for row in batch[0]["data"]]
        out.append({"ids": ids, "iterations": iters})
    return out, p.reader_meta("r")


def check_cover(per_rank, world):
    """per_rank[r] = rank r's epochs: each epoch, the ranks' samples are disjoint and cover
    the N samples exactly once (PARTIAL leaves the padding out), and every rank ran the same
    number of iterations, ceil(ceil(N / S) / batch)."""
    for e in range(len(per_rank[0])):
        ids = [i for r in range(world) for i in per_rank[r][e]["ids"]]
        assert sorted(ids) == list(range(N)), f"epoch {e}: not a disjoint cover: {ids}"
        iters = {per_rank[r][e]["iterations"] for r in range(world)}
        assert iters == {-(-(-(-N // world)) // 4)}, iters


def test_auto_shards_match_explicit(env, id_tree):
    world, per_rank = 4, []
    for rank in range(world):
        env.setenv("OMPI_COMM_WORLD_RANK", str(rank))
        env.setenv("OMPI_COMM_WORLD_SIZE", str(world))
        got, meta = read_epochs(id_tree, "auto", "auto", seed=rank + 1)
        assert (meta["shard_id"], meta["number_of_shards"]) == (rank, world)
        want, _ = read_epochs(id_tree, rank, world)
        assert got == want
        per_rank.append(got)
    check_cover(per_rank, world)


def test_auto_errors(env, id_tree):
    with pytest.raises(sluice.SluiceError, match=r'shard_id.*"auto".*no launcher found'):
        read_epochs(id_tree, "auto", 2)
    env.setenv("SLURM_PROCID", "0")
    env.setenv("SLURM_NTASKS", "2")
    with pytest.raises(ValueError, match=r'num_shards.*expected an int or "auto"'):
        read_epochs(id_tree, 0, "all")
    with pytest.raises(ValueError, match="shard_id 3 is out of range for num_shards 2"):
        read_epochs(id_tree, 3, "auto")


def test_device_id_auto(env):
    with pytest.raises(LookupError, match="no launcher found"):
        sluice.Pipeline(batch_size=1, num_threads=1, device_id="auto")
    with pytest.raises(ValueError, match="device_id"):
        sluice.Pipeline(batch_size=1, num_threads=1, device_id="gpu")
    env.setenv("SLURM_PROCID", "3")
    env.setenv("SLURM_NTASKS", "4")
    env.setenv("SLURM_LOCALID", "1")
    assert sluice.Pipeline(batch_size=1, num_threads=1, device_id="auto").device_id == 1
    spec = '{"pipeline": {"batch_size": 2, "num_threads": 1, "device_id": "auto"}, ' \
           '"nodes": [], "outputs": []}'
    assert sluice._sluice.options_from_json(spec)["device_id"] == -2  # SL_DEVICE_ID_AUTO
    assert sluice.Pipeline.deserialize(spec).device_id == 1


def test_torch_distributed(env, id_tree, tmp_path):
    import torch.distributed as dist
    env.setenv("RANK", "2")  # the process group wins over the environment ...
    env.setenv("WORLD_SIZE", "3")
    env.setenv("LOCAL_RANK", "1")  # ... which still gives the local rank
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/pg", rank=0, world_size=1)
    try:
        expect(0, 1, 1, "torch.distributed")
        got, meta = read_epochs(id_tree, "auto", "auto", epochs=1)
        assert (meta["shard_id"], meta["number_of_shards"]) == (0, 1)
        assert sorted(got[0]["ids"]) == list(range(N))
    finally:
        dist.destroy_process_group()
    expect(2, 3, 1, "torchrun")


def child_env():
    e = {k: v for k, v in os.environ.items() if k not in LAUNCH_VARS}
    pkg = str(pathlib.Path(sluice.__file__).resolve().parents[1])
    e["PYTHONPATH"] = os.pathsep.join([pkg] + [p for p in [e.get("PYTHONPATH")] if p])
    return e


def check_job(out, root, world, source):
    results = [json.loads((out / f"rank{r}.json").read_text()) for r in range(world)]
    assert len({r["pid"] for r in results}) == world
    for rank, r in enumerate(results):
        assert r["job"][:2] == [rank, world] and r["job"][3] == source
        assert (r["meta"]["shard_id"], r["meta"]["number_of_shards"]) == (rank, world)
        want, _ = read_epochs(root, rank, world)
        assert r["epochs"] == want, f"rank {rank} read other samples than shard {rank}"
    assert sorted(r["local_rank_env"] for r in results) == list(range(world))  # one node
    check_cover([r["epochs"] for r in results], world)


def free_port():
    """A TCP port free now: torchrun's --standalone always takes 29400, which fails when two
    test runs (two build trees, CI next to a developer) launch jobs at the same time."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(nproc):
    """torchrun on this machine alone, as --standalone but on a free rendezvous port."""
    return [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--rdzv_backend=c10d",
            f"--rdzv_endpoint=localhost:{free_port()}", f"--rdzv_id={uuid.uuid4().hex}",
            f"--nproc_per_node={nproc}"]


def run_job(cmd, out):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=child_env(),
                          cwd=str(out))
    assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout}\n{proc.stderr}"


def test_torchrun(env, id_tree, tmp_path):
    # Debian's torch 1.13 on Python 3.11 needs --redirects/--tee (its default log handling
    # fails with AttributeError: 'NoneType' object has no attribute 'get')
    run_job([*torchrun(4), "--redirects", "1", "--tee", "2",
             str(HERE / "dist_rank.py"), str(tmp_path), str(id_tree), "torch"], tmp_path)
    check_job(tmp_path, id_tree, 4, "torch.distributed")


def test_mpirun(env, id_tree, tmp_path):
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("mpirun not found (Debian's openmpi-bin; scripts/setup.sh installs it)")
    as_root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    run_job([mpirun, *as_root, "--oversubscribe", "-np", "4", "-x", "PYTHONPATH",
             sys.executable, str(HERE / "dist_rank.py"), str(tmp_path), str(id_tree)],
            tmp_path)
    check_job(tmp_path, id_tree, 4, "openmpi")


def test_dataset_source_auto(env):
    import torch
    from sluice.plugin.pytorch import dataset_source
    data = list(range(10))
    with pytest.raises(LookupError, match="no launcher found"):
        dataset_source(data, shard_id="auto", num_shards="auto")
    env.setenv("RANK", "1")
    env.setenv("WORLD_SIZE", "3")
    src = dataset_source(data, seed=4, shard_id="auto", num_shards="auto")
    for epoch in (0, 1):
        ref = torch.utils.data.DistributedSampler(data, num_replicas=3, rank=1, shuffle=True,
                                                  seed=4)
        ref.set_epoch(epoch)
        assert src.indices(epoch) == list(ref)


@pytest.mark.examples
@pytest.mark.parametrize("launcher", ["torchrun", "mpirun"])
def test_ddp_example(env, tree, tmp_path, launcher):
    example = [str(HERE.parents[1] / "examples" / "ddp_train.py"), str(tree.resolve()), "--steps", "3",
               "--batch-size", "8", "--image-size", "32"]
    if launcher == "torchrun":
        cmd = [*torchrun(2), "--redirects", "1", "--tee", "1", *example]  # stdout
    else:
        mpirun = shutil.which("mpirun")
        if mpirun is None:
            pytest.skip("mpirun not found (Debian's openmpi-bin; scripts/setup.sh installs it)")
        as_root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
        cmd = [mpirun, *as_root, "--oversubscribe", "-np", "2", "-x", "PYTHONPATH",
               "-x", f"MASTER_PORT={free_port()}", sys.executable, *example]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=child_env(),
                          cwd=str(tmp_path))
    out = proc.stdout
    assert proc.returncode == 0, f"{cmd} failed:\n{out}\n{proc.stderr}"
    source = "torchrun" if launcher == "torchrun" else "openmpi"
    # 100 images in 2 shards of 50, batch 8, DROP: 6 steps per epoch on each rank
    assert f"ddp: 2 ranks ({source}), 100 images, 6 steps per epoch, batch 8 per rank" in out
    losses = [float(x) for x in re.findall(r"step +\d+ loss ([\d.]+)", out)]
    assert len(losses) == 3 and all(0 < x < 10 for x in losses), out
    assert "parameters identical on all ranks: True" in out
    assert "images read per rank: [24, 24]" in out
