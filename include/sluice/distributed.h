/* sluice/distributed.h: the rank, world size and local rank of a distributed job, from the
 * launcher that started this process.
 *
 * sluice never starts processes of its own: the job's launcher does (torchrun, mpirun/srun,
 * SLURM) and leaves its answer in the environment. The rules below are read here, once, for
 * every front end: the C API, JSON specs ("auto" arguments) and Python (sluice.distributed,
 * which adds an initialised torch.distributed through sl_distributed_set). In order, the first
 * that applies wins:
 *
 *   set by a front end   sl_distributed_set (Python: an initialised torch.distributed)
 *   torchrun             RANK, WORLD_SIZE, LOCAL_RANK
 *   Open MPI             OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK
 *   MPICH / Hydra (PMI)  PMI_RANK, PMI_SIZE, MPI_LOCALRANKID (or PMI_LOCAL_RANK)
 *   SLURM                SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID
 *
 * A launcher applies when its rank and size variables are both set; a value that is not a
 * decimal integer, or a rank outside [0, size), is an error naming the variable (never a
 * silent fallback to the next launcher). The local rank may be unknown (-1) when the launcher
 * does not say; asking for it is then an error.
 *
 * Readers take "auto" for shard_id (= rank) and num_shards (= world size); the pipeline option
 * device_id takes SL_DEVICE_ID_AUTO ("auto" in a spec or in Python) for the local rank. They
 * are resolved when the pipeline is built, so a spec with "auto" is the same file on every
 * rank.
 */
#ifndef SLUICE_DISTRIBUTED_H
#define SLUICE_DISTRIBUTED_H

#include "sluice/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the launcher says about this process. */
typedef struct sl_distributed {
    int rank;           /* 0 <= rank < world_size */
    int world_size;     /* processes in the job, >= 1 */
    int local_rank;     /* rank among the processes of this node; -1 when unknown */
    const char *source; /* "torchrun", "openmpi", "mpich", "slurm", or what sl_distributed_set
                         * was given ("torch.distributed"); static storage */
} sl_distributed;

/* The job this process belongs to, by the rules above.
 * Returns SL_OK; SL_ENOTFOUND when no launcher is found (the message lists the variables
 * looked at); SL_EINVAL when a launcher's variable is malformed. Errors in sl_last_error().
 * Threads: any (reads the environment; do not setenv() at the same time). */
SL_API sl_status sl_distributed_info(sl_distributed *out);
/* The rank, the world size, the local rank alone; as sl_distributed_info (local_rank: also
 * SL_ENOTFOUND when the launcher does not say). */
SL_API sl_status sl_distributed_rank(int *rank);
SL_API sl_status sl_distributed_world_size(int *world_size);
SL_API sl_status sl_distributed_local_rank(int *local_rank);
/* Registers the job as a front end knows it (Python: torch.distributed once initialised); it
 * then wins over the environment. world_size 0 forgets it. local_rank -1: unknown. source is
 * copied (at most 31 bytes kept). Returns SL_EINVAL for an inconsistent triple.
 * Threads: any. */
SL_API sl_status sl_distributed_set(int rank, int world_size, int local_rank, const char *source);

#ifdef __cplusplus
}
#endif
#endif
