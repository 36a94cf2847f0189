/* src/core/distributed.c: the launcher rules of sluice/distributed.h (rank, world size, local
 * rank from torchrun, Open MPI, MPICH/PMI, SLURM or a front end's registration).
 *
 * Exports sl_distributed_info / _rank / _world_size / _local_rank / _set. Invariant: a
 * registered job (front end) is consistent (0 <= rank < world_size, local_rank >= -1); the
 * environment is read afresh on every call, so a test or a launcher that sets it late is seen.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "sluice/distributed.h"

/* One launcher's variables; local2 is a second spelling of the local rank (NULL: none). */
typedef struct launcher {
    const char *name, *rank, *size, *local, *local2;
} launcher;

static const launcher launchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", NULL},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", NULL},
    {"mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "PMI_LOCAL_RANK"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", NULL},
};
#define NUM_LAUNCHERS ((int)(sizeof launchers / sizeof launchers[0]))

/* The front end's registration (sl_distributed_set), under lock. */
static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER;
static bool set_valid;
static sl_distributed set_job;
static char set_source[32];

/* Reads variable var as a decimal integer in [lo, INT_MAX] into *out. Returns SL_OK,
 * SL_ENOTFOUND when unset (or empty), SL_EINVAL (message set) when malformed. */
static sl_status env_int(const launcher *l, const char *var, int lo, int *out)
{
    const char *s = getenv(var);
    if (!s || !*s)
        return SL_ENOTFOUND;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > INT_MAX || (s[0] == '+' || s[0] == ' '))
        return sl__last_error_set(SL_EINVAL,
                                  "distributed: %s=\"%s\" (set by %s) is not an integer >= %d", var,
                                  s, l->name, lo);
    *out = (int)v;
    return SL_OK;
}

/* Fills *out from launcher l. SL_ENOTFOUND when its rank or size variable is unset. */
static sl_status from_env(const launcher *l, sl_distributed *out)
{
    sl_status st_r = env_int(l, l->rank, 0, &out->rank);
    if (st_r == SL_EINVAL)
        return st_r;
    sl_status st_s = env_int(l, l->size, 1, &out->world_size);
    if (st_s == SL_EINVAL)
        return st_s;
    if (st_r != SL_OK || st_s != SL_OK)
        return SL_ENOTFOUND;
    if (out->rank >= out->world_size)
        return sl__last_error_set(SL_EINVAL,
                                  "distributed: %s=%d is out of range for %s=%d (set by %s): "
                                  "need 0 <= rank < world size",
                                  l->rank, out->rank, l->size, out->world_size, l->name);
    out->local_rank = -1;
    sl_status st = env_int(l, l->local, 0, &out->local_rank);
    if (st == SL_ENOTFOUND && l->local2)
        st = env_int(l, l->local2, 0, &out->local_rank);
    if (st == SL_EINVAL)
        return st;
    out->source = l->name;
    return SL_OK;
}

sl_status sl_distributed_info(sl_distributed *out)
{
    if (!out)
        return sl__last_error_set(SL_EMISUSE, "sl_distributed_info: out is NULL");
    pthread_mutex_lock(&set_lock);
    bool have = set_valid;
    if (have)
        *out = set_job;
    pthread_mutex_unlock(&set_lock);
    if (have)
        return SL_OK;
    for (int k = 0; k < NUM_LAUNCHERS; k++) {
        sl_distributed d;
        sl_status st = from_env(&launchers[k], &d);
        if (st == SL_OK)
            *out = d;
        if (st != SL_ENOTFOUND)
            return st;
    }
    return sl__last_error_set(SL_ENOTFOUND,
                              "distributed: no launcher found: none of torchrun (RANK, "
                              "WORLD_SIZE), Open MPI (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE), "
                              "MPICH (PMI_RANK, PMI_SIZE) or SLURM (SLURM_PROCID, SLURM_NTASKS) "
                              "is set, and no initialised torch.distributed was registered");
}

sl_status sl_distributed_rank(int *rank)
{
    sl_distributed d;
    if (!rank)
        return sl__last_error_set(SL_EMISUSE, "sl_distributed_rank: rank is NULL");
    sl_status st = sl_distributed_info(&d);
    if (st == SL_OK)
        *rank = d.rank;
    return st;
}

sl_status sl_distributed_world_size(int *world_size)
{
    sl_distributed d;
    if (!world_size)
        return sl__last_error_set(SL_EMISUSE, "sl_distributed_world_size: world_size is NULL");
    sl_status st = sl_distributed_info(&d);
    if (st == SL_OK)
        *world_size = d.world_size;
    return st;
}

sl_status sl_distributed_local_rank(int *local_rank)
{
    sl_distributed d;
    if (!local_rank)
        return sl__last_error_set(SL_EMISUSE, "sl_distributed_local_rank: local_rank is NULL");
    sl_status st = sl_distributed_info(&d);
    if (st != SL_OK)
        return st;
    if (d.local_rank < 0)
        return sl__last_error_set(SL_ENOTFOUND,
                                  "distributed: %s gives rank %d of %d but not the local rank "
                                  "(the rank on this node)",
                                  d.source, d.rank, d.world_size);
    *local_rank = d.local_rank;
    return SL_OK;
}

sl_status sl_distributed_set(int rank, int world_size, int local_rank, const char *source)
{
    if (world_size != 0 && (world_size < 0 || rank < 0 || rank >= world_size || local_rank < -1))
        return sl__last_error_set(SL_EINVAL,
                                  "sl_distributed_set: rank %d, world size %d, local rank %d: "
                                  "need 0 <= rank < world size and local rank >= -1",
                                  rank, world_size, local_rank);
    pthread_mutex_lock(&set_lock);
    set_valid = world_size != 0;
    snprintf(set_source, sizeof set_source, "%s", source && *source ? source : "front end");
    set_job = (sl_distributed){rank, world_size, local_rank, set_source};
    pthread_mutex_unlock(&set_lock);
    return SL_OK;
}
