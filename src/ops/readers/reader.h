/* reader.h: the family helper of the readers: the epoch order every sluice reader shares
 * (DESIGN.md, Readers) — a permutation of the data set per epoch drawn from (seed, epoch),
 * sharded, the reader's state being (epoch, position).
 *
 * A reader fills the configuration from its arguments (sl__cursor_config: random_shuffle, seed,
 * shard_id, num_shards, stick_to_shard, pad_last_batch, which every reader declares with the
 * same names and meanings) and, once it knows its number of samples, calls sl__cursor_start;
 * its setup (serial, iterations in order) calls sl__cursor_next per sample.
 * Invariant: only setup touches the cursor.
 */
#ifndef SLUICE_OPS_READERS_READER_H
#define SLUICE_OPS_READERS_READER_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/op.h"

/* The permutation seed when `seed` is -1 (readers.file's doc says why it is not the pipeline
 * seed). */
#define SL__CURSOR_SEED_DEFAULT 0x5111ce5eedULL

typedef struct sl__cursor {
    int64_t n; /* samples in the data set */
    int shard_id, num_shards;
    bool shuffle, stick_to_shard, pad_last_batch;
    uint64_t perm_seed;
    int batch_size;
    int64_t epoch, pos;
    int64_t *perm; /* with shuffle: the order of epoch perm_epoch */
    int64_t perm_epoch;
} sl__cursor;

/* Argument indices of the shared reader arguments in the operator's table. */
typedef struct sl__cursor_args {
    int random_shuffle, seed, shard_id, num_shards, stick_to_shard, pad_last_batch;
} sl__cursor_args;

/* The shared arguments' definitions, for the table of a reader whose argument enum names them
 * ARG_RANDOM_SHUFFLE, ARG_SEED, ARG_SHARD_ID, ARG_NUM_SHARDS, ARG_STICK_TO_SHARD and
 * ARG_PAD_LAST_BATCH (the indices its sl__cursor_args gives): one wording for every reader. */
#define SL__CURSOR_ARG_DEFS                                                                        \
    [ARG_RANDOM_SHUFFLE] = {.name = "random_shuffle",                                              \
                            .type = SL_ARG_BOOL,                                                   \
                            .def = "false",                                                        \
                            .doc = "Read each epoch in a fresh random permutation of the whole "   \
                                   "data set (as readers.file)."},                                 \
    [ARG_SEED] = {.name = "seed",                                                                  \
                  .type = SL_ARG_INT,                                                              \
                  .def = "-1",                                                                     \
                  .doc =                                                                           \
                      "Seed of the epoch permutations; -1: a fixed default (as readers.file)."},   \
    [ARG_SHARD_ID] = {.name = "shard_id",                                                          \
                      .type = SL_ARG_INT,                                                          \
                      .def = "0",                                                                  \
                      .flags = SL_ARG_RANGE | SL_ARG_AUTO_RANK,                                    \
                      .min = 0,                                                                    \
                      .max = INT32_MAX,                                                            \
                      .doc = "Which shard this reader reads, 0 <= shard_id < num_shards; "         \
                             "\"auto\": the job's rank."},                                         \
    [ARG_NUM_SHARDS] = {.name = "num_shards",                                                      \
                        .type = SL_ARG_INT,                                                        \
                        .def = "1",                                                                \
                        .flags = SL_ARG_RANGE | SL_ARG_AUTO_WORLD_SIZE,                            \
                        .min = 1,                                                                  \
                        .max = INT32_MAX,                                                          \
                        .doc = "Number of shards; \"auto\": the job's world size."},               \
    [ARG_STICK_TO_SHARD] = {.name = "stick_to_shard",                                              \
                            .type = SL_ARG_BOOL,                                                   \
                            .def = "false",                                                        \
                            .doc = "Read the same shard every epoch (as readers.file)."},          \
    [ARG_PAD_LAST_BATCH] = {.name = "pad_last_batch",                                              \
                            .type = SL_ARG_BOOL,                                                   \
                            .def = "false",                                                        \
                            .doc = "Pad every shard's epoch to whole batches by repeating its "    \
                                   "last sample (as readers.file)."}

/* Reads the shared arguments into c (zeroed by the caller) and checks them. */
sl_status sl__cursor_config(sl_op_init *ini, const sl__cursor_args *a, sl__cursor *c);
/* Sets the number of samples n (checked against num_shards) and allocates the permutation. */
sl_status sl__cursor_start(sl_op_init *ini, sl__cursor *c, int64_t n);
void sl__cursor_fini(sl__cursor *c);
/* The next sample's index in the data set; advances the cursor. */
int64_t sl__cursor_next(sl__cursor *c);
/* The reader's metadata (epoch size, shards, padding). */
void sl__cursor_meta(const sl__cursor *c, sl_reader_meta *m);

/* Checkpointing (sl_op_def.checkpoint / restore): the cursor's state is (epoch, position);
 * the permutation follows from (seed, epoch). sl__cursor_save writes those 2 values and
 * returns 2; sl__cursor_restore checks and sets them (SL_EINVAL, why in err, for values this
 * cursor cannot have). */
#define SL__CURSOR_STATE_LEN 2
int sl__cursor_save(const sl__cursor *c, int64_t *vals, int cap);
sl_status sl__cursor_restore(sl__cursor *c, const int64_t *vals, int n, char *err, size_t errlen);

/* Defines the three functions of a reader whose state type `type` holds its cursor in member
 * `member` (its metadata, checkpoint and restore): name them in the op's definition with
 * SL__CURSOR_READER_FNS. Every reader on the cursor does all three, so each one reports its
 * epoch and is checkpointable (a reader with more state — a read-ahead window, a shuffle
 * buffer — writes its own checkpoint functions, the cursor's values first). */
#define SL__CURSOR_READER(type, member)                                                            \
    static void cursor_meta(const void *state, sl_reader_meta *m)                                  \
    {                                                                                              \
        sl__cursor_meta(&((const type *)state)->member, m);                                        \
    }                                                                                              \
    static int cursor_checkpoint(const void *state, int64_t *vals, int cap, char *err,             \
                                 size_t errlen)                                                    \
    {                                                                                              \
        (void)err;                                                                                 \
        (void)errlen;                                                                              \
        return sl__cursor_save(&((const type *)state)->member, vals, cap);                         \
    }                                                                                              \
    static sl_status cursor_restore(void *state, int64_t iteration, const int64_t *vals, int n,    \
                                    char *err, size_t errlen)                                      \
    {                                                                                              \
        (void)iteration;                                                                           \
        return sl__cursor_restore(&((type *)state)->member, vals, n, err, errlen);                 \
    }
#define SL__CURSOR_READER_FNS                                                                      \
    .reader_meta = cursor_meta, .checkpoint = cursor_checkpoint, .restore = cursor_restore

/* Files, read with stat + open + pread (no mmap: a file that shrinks under us is an error, not
 * a SIGBUS). Failures are SL_EIO with the system's words; the executor adds the file name
 * (the sample's source). */
/* *size = the size of the regular file at path. */
sl_status sl__reader_file_size(sl_ctx *ctx, const char *path, int64_t *size);
/* Reads exactly `size` bytes of the file at path into dst; a file now shorter or longer is an
 * error. */
sl_status sl__reader_read_file(sl_ctx *ctx, const char *path, uint8_t *dst, int64_t size);

/* Reads exactly `size` bytes at byte `offset` of the open file fd into dst; a short read (the
 * file ends early or shrank) is SL_ECORRUPT naming the offset, a failed read SL_EIO. */
sl_status sl__reader_pread(sl_ctx *ctx, int fd, void *dst, int64_t size, int64_t offset);

#endif
