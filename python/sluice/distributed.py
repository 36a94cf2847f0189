"""sluice.distributed: the rank, world size and local rank of the job this process belongs to.

sluice starts no processes: the job's launcher does, and sluice reads what it says. The rules
for the environment live in the C library (sluice/distributed.h), the same for C programs, JSON
specs and Python; in order, the first that applies wins:

    torchrun              RANK, WORLD_SIZE, LOCAL_RANK
    Open MPI (mpirun)     OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK
    MPICH / Hydra (PMI)   PMI_RANK, PMI_SIZE, MPI_LOCALRANKID (or PMI_LOCAL_RANK)
    SLURM (srun)          SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID

Python adds one source before them: an initialised ``torch.distributed`` process group (only
when the program imported torch itself; sluice never imports it for this). Its rank and world
size win; its local rank is the environment's when a launcher gives one.

Readers take ``shard_id="auto"`` and ``num_shards="auto"``, and ``Pipeline(device_id="auto")``
takes the local rank. With no launcher, asking raises ``sluice.NotFoundError`` (a LookupError)
listing what was looked at; a malformed variable raises ``InvalidArgumentError`` naming it.
"""
import collections
import sys

from . import _sluice

__all__ = ["rank", "world_size", "local_rank", "info", "JobInfo"]

JobInfo = collections.namedtuple("JobInfo", "rank world_size local_rank source")
JobInfo.__doc__ = ("The job as its launcher describes it: rank, world_size, local_rank (-1 when "
                   "the launcher does not say) and source (\"torchrun\", \"openmpi\", \"mpich\", "
                   "\"slurm\" or \"torch.distributed\").")


def _torch_group():
    """(rank, world_size) of an initialised torch.distributed default group, or None."""
    torch = sys.modules.get("torch")
    dist = getattr(torch, "distributed", None) if torch is not None else None
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return None
    return dist.get_rank(), dist.get_world_size()


def _register_torch():
    """Registers an initialised torch.distributed with the C library, or forgets a stale
    registration, so that the "auto" arguments the build resolves see it too. Returns its
    JobInfo, or None when torch.distributed is not initialised."""
    _sluice._distributed_set(0, 0, -1, "")
    group = _torch_group()
    if group is None:
        return None
    try:
        local = _sluice._distributed_info()[2]
    except (LookupError, ValueError):
        local = -1
    _sluice._distributed_set(group[0], group[1], local, "torch.distributed")
    return JobInfo(group[0], group[1], local, "torch.distributed")


def _sync():
    return _register_torch() or JobInfo(*_sluice._distributed_info())


def info():
    """JobInfo(rank, world_size, local_rank, source) of this process's job."""
    return _sync()


def rank():
    """This process's rank in the job, 0 <= rank < world_size()."""
    return _sync().rank


def world_size():
    """The number of processes in the job."""
    return _sync().world_size


def local_rank():
    """This process's rank among the job's processes on this node (the GPU it should use)."""
    job = _sync()
    if job.local_rank < 0:
        raise _sluice.NotFoundError(
            f"distributed: {job.source} gives rank {job.rank} of {job.world_size} but not the "
            f"local rank (the rank on this node)")
    return job.local_rank
