/* lmdb.h: what readers.caffe (caffe.c) and readers.caffe2 (caffe2.c) share (lmdb.c): the LMDB
 * databases (opened read-only, keys listed once in order at build, each value looked up with
 * mdb_get in a read transaction of its own), the values parsed in place (caffe_parse.c) and the
 * per-sample flow (shapes in setup_sample, the parts copied into the outputs in run_sample).
 * Each operator's file holds its definition: arguments, outputs, docs.
 */
#ifndef SLUICE_OPS_READERS_LMDB_H
#define SLUICE_OPS_READERS_LMDB_H

#include "sluice/op.h"

#include "ops/readers/reader.h"

#define MAX_ADDITIONAL 8 /* readers.caffe2's additional_inputs */
#define MAX_PROTOS (MAX_ADDITIONAL + 4)
#define NO_LABEL 4

/* The arguments both readers have first, then each one's own. */
enum {
    ARG_PATH,
    ARG_IMAGE_AVAILABLE,
    ARG_RANDOM_SHUFFLE,
    ARG_SEED,
    ARG_SHARD_ID,
    ARG_NUM_SHARDS,
    ARG_STICK_TO_SHARD,
    ARG_PAD_LAST_BATCH,
    NUM_COMMON_ARGS
};
enum { ARG_LABEL_AVAILABLE = NUM_COMMON_ARGS, NUM_CAFFE_ARGS };
enum {
    ARG_LABEL_TYPE = NUM_COMMON_ARGS,
    ARG_NUM_LABELS,
    ARG_ADDITIONAL_INPUTS,
    ARG_BBOX,
    NUM_CAFFE2_ARGS
};

/* The argument-table entries both readers have (path names the format). */
#define SL__LMDB_PATH_ARG(what)                                                                    \
    [ARG_PATH] = {.name = "path",                                                                  \
                  .type = SL_ARG_STRINGS,                                                          \
                  .flags = SL_ARG_SCALAR_OK,                                                       \
                  .doc = "The " what " LMDB databases (directories, or data files), read one "     \
                         "after another, each in its key order."}
#define SL__LMDB_IMAGE_ARG                                                                         \
    [ARG_IMAGE_AVAILABLE] = {.name = "image_available",                                            \
                             .type = SL_ARG_BOOL,                                                  \
                             .def = "true",                                                        \
                             .doc = "Whether the entries hold an image (the images output)."}

/* DALI's loader arguments the LMDB readers accept without effect (sl_op_def.aliases). */
#define SL__LMDB_NUM_ALIASES 7
extern const sl_arg_alias sl__lmdb_aliases[SL__LMDB_NUM_ALIASES];

/* Doc paragraph both readers end with. */
#define SL__LMDB_DOC                                                                               \
    "Entries come in key order, database after database; each one is looked up with mdb_get in "   \
    "a read transaction of its own and parsed where it lies in LMDB's map (no copy of the "        \
    "value; only its parts are copied into the outputs). The outputs' dtypes and ranks are the "   \
    "first entry's; an entry that differs, or a value that does not parse, fails naming the "      \
    "database and the key. Order, shuffling and sharding as readers.file."

/* Per-sample iteration data (sl_op_def.iter_bytes_per_sample). */
typedef struct sl__lmdb_sample {
    int64_t k;
} sl__lmdb_sample;

/* The operator functions: init for each format, the rest shared. */
sl_status sl__lmdb_init_caffe(sl_op_init *ini, void **state);
sl_status sl__lmdb_init_caffe2(sl_op_init *ini, void **state);
void sl__lmdb_fini(void *state);
sl_status sl__lmdb_setup(sl_ctx *ctx);
sl_status sl__lmdb_setup_sample(sl_ctx *ctx, int i);
sl_status sl__lmdb_run_sample(sl_ctx *ctx, int i);
void sl__lmdb_reader_meta(const void *state, sl_reader_meta *m);
/* Checkpointing (sl_op_def.checkpoint / restore): the shared cursor's (epoch, position). */
int sl__lmdb_checkpoint(const void *state, int64_t *vals, int cap, char *err, size_t errlen);
sl_status sl__lmdb_restore(void *state, int64_t iteration, const int64_t *vals, int n, char *err,
                           size_t errlen);

#endif
