/* reader.c: what the readers share (reader.h): the epoch order — Fisher-Yates permutations
 * drawn from (seed, epoch), shards as contiguous slices of the epoch's order, optional padding
 * of a shard's epoch to whole batches — and reading whole files with pread. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* GNU strerror_r */
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops/readers/reader.h"

#include "core/core.h"

sl_status sl__cursor_config(sl_op_init *ini, const sl__cursor_args *a, sl__cursor *c)
{
    int64_t seed = sl_init_arg_int(ini, a->seed);
    c->shuffle = sl_init_arg_bool(ini, a->random_shuffle);
    c->perm_seed = seed == -1 ? SL__CURSOR_SEED_DEFAULT : (uint64_t)seed;
    c->shard_id = (int)sl_init_arg_int(ini, a->shard_id);
    c->num_shards = (int)sl_init_arg_int(ini, a->num_shards);
    c->stick_to_shard = sl_init_arg_bool(ini, a->stick_to_shard);
    c->pad_last_batch = sl_init_arg_bool(ini, a->pad_last_batch);
    c->batch_size = sl_init_batch_size(ini);
    c->perm_epoch = -1;
    if (c->num_shards < 1 || c->shard_id < 0 || c->shard_id >= c->num_shards)
        return sl_init_fail(ini, SL_EINVAL,
                            "shard_id %d is out of range for num_shards %d: "
                            "need 0 <= shard_id < num_shards",
                            c->shard_id, c->num_shards);
    if (c->batch_size < 1)
        return sl_init_fail(ini, SL_EINVAL, "batch size %d < 1", c->batch_size);
    return SL_OK;
}

sl_status sl__cursor_start(sl_op_init *ini, sl__cursor *c, int64_t n)
{
    c->n = n;
    if (c->num_shards > n)
        return sl_init_fail(ini, SL_EINVAL,
                            "The number of input samples: %lld, needs to be at "
                            "least equal to the requested number of shards: %d.",
                            (long long)n, c->num_shards);
    if (c->shuffle && !(c->perm = sl__malloc((size_t)n * sizeof *c->perm)))
        return sl_init_fail(ini, SL_ENOMEM, "out of memory for a permutation of %lld samples",
                            (long long)n);
    return SL_OK;
}

void sl__cursor_fini(sl__cursor *c)
{
    sl__free(c->perm);
    c->perm = NULL;
}

/* Sample at position q of epoch e's order: the listed order, or a Fisher-Yates permutation drawn
 * from (perm_seed, e), the same in every process that uses the same seed. */
static int64_t order_at(sl__cursor *c, int64_t e, int64_t q)
{
    if (!c->shuffle)
        return q;
    if (c->perm_epoch != e) {
        sl_rng rng;
        sl_rng_init(&rng, c->perm_seed, (uint64_t)e, 0);
        for (int64_t i = 0; i < c->n; i++)
            c->perm[i] = i;
        for (int64_t i = c->n - 1; i > 0; i--) {
            int64_t j = (int64_t)sl_rng_below(&rng, (uint64_t)i + 1), t = c->perm[i];
            c->perm[i] = c->perm[j];
            c->perm[j] = t;
        }
        c->perm_epoch = e;
    }
    return c->perm[q];
}

/* Samples one epoch of a shard yields: its length, or with pad_last_batch ceil(n / shards)
 * rounded up to whole batches (the extra positions repeat the shard's last sample). */
static int64_t epoch_length(const sl__cursor *c, int64_t shard_len)
{
    if (!c->pad_last_batch)
        return shard_len;
    int64_t per_shard = (c->n + c->num_shards - 1) / c->num_shards;
    return (per_shard + c->batch_size - 1) / c->batch_size * c->batch_size;
}

int64_t sl__cursor_next(sl__cursor *c)
{
    int64_t s = c->shard_id, S = c->num_shards;
    if (!c->stick_to_shard)
        s = (s + c->epoch) % S;
    int64_t lo = c->n * s / S, len = c->n * (s + 1) / S - lo;
    int64_t q = lo + (c->pos < len ? c->pos : len - 1);
    int64_t k = order_at(c, c->epoch, q);
    if (++c->pos >= epoch_length(c, len)) {
        c->epoch++;
        c->pos = 0;
    }
    return k;
}

void sl__cursor_meta(const sl__cursor *c, sl_reader_meta *m)
{
    int64_t per_shard = (c->n + c->num_shards - 1) / c->num_shards;
    m->epoch_size = c->n;
    m->epoch_size_padded = c->pad_last_batch ? per_shard * c->num_shards : c->n;
    m->number_of_shards = c->num_shards;
    m->shard_id = c->shard_id;
    m->pad_last_batch = c->pad_last_batch;
    m->stick_to_shard = c->stick_to_shard;
}

int sl__cursor_save(const sl__cursor *c, int64_t *vals, int cap)
{
    if (cap >= SL__CURSOR_STATE_LEN) {
        vals[0] = c->epoch;
        vals[1] = c->pos;
    }
    return SL__CURSOR_STATE_LEN;
}

sl_status sl__cursor_restore(sl__cursor *c, const int64_t *vals, int n, char *err, size_t errlen)
{
    if (n != SL__CURSOR_STATE_LEN) {
        snprintf(err, errlen, "a reader's state is 2 values (epoch, position), got %d", n);
        return SL_EINVAL;
    }
    int64_t s = c->shard_id, S = c->num_shards;
    if (!c->stick_to_shard && vals[0] >= 0)
        s = (s + vals[0]) % S;
    int64_t len = epoch_length(c, c->n * (s + 1) / S - c->n * s / S);
    if (vals[0] < 0 || vals[1] < 0 || vals[1] >= len) {
        snprintf(err, errlen,
                 "reader state epoch %lld, position %lld is out of range (this shard's epoch "
                 "has %lld samples)",
                 (long long)vals[0], (long long)vals[1], (long long)len);
        return SL_EINVAL;
    }
    c->epoch = vals[0];
    c->pos = vals[1];
    return SL_OK;
}

/* Fails with SL_EIO and the system's words for errno. */
static sl_status io_fail(sl_ctx *ctx, const char *what)
{
    char buf[128];
    return sl_fail(ctx, SL_EIO, "%s: %s", what, strerror_r(errno, buf, sizeof buf));
}

sl_status sl__reader_file_size(sl_ctx *ctx, const char *path, int64_t *size)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return io_fail(ctx, "cannot read file");
    if (!S_ISREG(st.st_mode))
        return sl_fail(ctx, SL_EIO, "not a regular file");
    *size = (int64_t)st.st_size;
    return SL_OK;
}

static sl_status read_all(sl_ctx *ctx, int fd, uint8_t *dst, int64_t size)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return io_fail(ctx, "cannot read file");
    if ((int64_t)st.st_size != size)
        return sl_fail(ctx, SL_EIO,
                       "file size changed from %lld to %lld bytes while it was "
                       "being read",
                       (long long)size, (long long)st.st_size);
    for (int64_t done = 0; done < size;) {
        ssize_t got = pread(fd, dst + done, (size_t)(size - done), (off_t)done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return io_fail(ctx, "read failed");
        if (got == 0)
            return sl_fail(ctx, SL_EIO,
                           "file shrank to %lld bytes while it was being read "
                           "(expected %lld)",
                           (long long)done, (long long)size);
        done += got;
    }
    return SL_OK;
}

sl_status sl__reader_read_file(sl_ctx *ctx, const char *path, uint8_t *dst, int64_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return io_fail(ctx, "cannot open file");
    sl_status st = read_all(ctx, fd, dst, size);
    close(fd);
    return st;
}

sl_status sl__reader_pread(sl_ctx *ctx, int fd, void *dst, int64_t size, int64_t offset)
{
    for (int64_t done = 0; done < size;) {
        ssize_t got =
            pread(fd, (uint8_t *)dst + done, (size_t)(size - done), (off_t)(offset + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return io_fail(ctx, "read failed");
        if (got == 0)
            return sl_fail(ctx, SL_ECORRUPT,
                           "file ends at byte %lld, before the %lld bytes expected at offset %lld "
                           "(truncated?)",
                           (long long)(offset + done), (long long)size, (long long)offset);
        done += got;
    }
    return SL_OK;
}
