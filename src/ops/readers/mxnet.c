/* readers.mxnet: reads MXNet RecordIO data sets (.rec files with their .idx index files, as
 * im2rec writes them): each record's image bytes and its float labels, one epoch after
 * another, optionally shuffled and sharded (readers/reader.h).
 *
 * Exports: sl_op_readers_mxnet (listed in src/ops/ops.def).
 *
 * Record framing (dmlc-core recordio): uint32 magic 0xced7230a, uint32 lrec (cflag in the top 3
 * bits, length in the low 29), the data, padding to 4 bytes. A record whose data contains the
 * magic at a 4-aligned position was split there into parts (cflag 1 first, 2 middle, 3 last;
 * 0: a whole record); the reader joins them, putting the magic back between parts. The data
 * is an image record: IRHeader {uint32 flag; float label; uint64 id, id2} (24 bytes), then
 * `flag` float labels when flag > 0, then the encoded image.
 *
 * Invariant: after init the sample table (file, offset, bytes up to the next record) never
 * changes. setup (serial) picks the samples; setup_sample walks a record's part headers with
 * small preads, bounded by the bytes the index leaves it, and records its extent in the
 * iteration data; run_sample preads exactly those parts. Nothing else of the file is read.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/op.h"

#include "core/core.h"
#include "ops/readers/reader.h"

#define MAGIC 0xced7230au
#define IR_HEADER 24
#define MAX_PARTS 4096 /* parts of one record (each split is a magic inside the data) */

enum {
    ARG_PATH,
    ARG_INDEX_PATH,
    ARG_RANDOM_SHUFFLE,
    ARG_SEED,
    ARG_SHARD_ID,
    ARG_NUM_SHARDS,
    ARG_STICK_TO_SHARD,
    ARG_PAD_LAST_BATCH,
    NUM_ARGS
};

static const sl__cursor_args cursor_args = {.random_shuffle = ARG_RANDOM_SHUFFLE,
                                            .seed = ARG_SEED,
                                            .shard_id = ARG_SHARD_ID,
                                            .num_shards = ARG_NUM_SHARDS,
                                            .stick_to_shard = ARG_STICK_TO_SHARD,
                                            .pad_last_batch = ARG_PAD_LAST_BATCH};

typedef struct entry {
    int32_t file;   /* index in path */
    int64_t offset; /* the record's first byte */
    int64_t limit;  /* bytes from offset to the next indexed record or the file's end */
} entry;

typedef struct reader {
    char **paths; /* the .rec files (copies) */
    int npaths;
    entry *e; /* samples in index order, file after file */
    int64_t n, cap;
    sl__cursor cur; /* setup only */
} reader;

/* Per sample, from setup_sample to run_sample. */
typedef struct sample {
    int64_t k;
    int64_t payload; /* bytes of the joined record data */
    int64_t nparts;
    uint32_t flag;
} sample;

/* ---- the index ----------------------------------------------------------------------------- */

static int cmp_offset(const void *a, const void *b)
{
    int64_t x = ((const entry *)a)->offset, y = ((const entry *)b)->offset;
    return (x > y) - (x < y);
}

static bool push(reader *r, entry e)
{
    if (r->n == r->cap) {
        int64_t cap = r->cap ? 2 * r->cap : 256;
        entry *v = sl__realloc(r->e, (size_t)cap * sizeof *v);
        if (!v)
            return false;
        r->e = v;
        r->cap = cap;
    }
    r->e[r->n++] = e;
    return true;
}

/* Reads one .idx file ("key<TAB>offset" lines) for .rec file f of `size` bytes; sets each
 * entry's limit from the offsets sorted (the records lie in offset order in the file). */
static sl_status read_index(sl_op_init *ini, reader *r, int f, const char *idx, int64_t size)
{
    FILE *fp = fopen(idx, "r");
    if (!fp)
        return sl_init_fail(ini, errno == ENOENT ? SL_ENOTFOUND : SL_EIO, "index_path \"%s\": %s",
                            idx, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int64_t first = r->n;
    sl_status st = SL_OK;
    while (st == SL_OK && getline(&line, &cap, fp) >= 0) {
        lineno++;
        char *p = line, *end;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\n' || *p == '\r' || !*p)
            continue;
        errno = 0;
        (void)strtoll(p, &end, 10); /* the key: not used, the line's position is the order */
        long long off = end > p ? strtoll(end, &p, 10) : -1;
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            p++;
        if (end == line || errno || off < 0 || *p || off > size - 8)
            st = sl_init_fail(ini, SL_ECORRUPT,
                              "index_path \"%s\", line %ld: expected \"<key> <offset>\" with "
                              "an offset inside the %lld-byte file \"%s\"",
                              idx, lineno, (long long)size, r->paths[f]);
        else if (!push(r, (entry){.file = f, .offset = off}))
            st = sl_init_fail(ini, SL_ENOMEM, "out of memory reading index_path \"%s\"", idx);
    }
    fclose(fp);
    free(line);
    if (st != SL_OK)
        return st;
    /* Limits: sort a copy by offset, then write each record's distance to the next. */
    int64_t m = r->n - first;
    entry *sorted = sl__malloc((size_t)(m ? m : 1) * sizeof *sorted);
    if (!sorted)
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    for (int64_t k = 0; k < m; k++) {
        sorted[k] = r->e[first + k];
        sorted[k].limit = first + k; /* remember the slot */
    }
    qsort(sorted, (size_t)m, sizeof *sorted, cmp_offset);
    for (int64_t k = 0; k < m; k++) {
        int64_t next = k + 1 < m ? sorted[k + 1].offset : size;
        r->e[sorted[k].limit].limit = next - sorted[k].offset;
    }
    sl__free(sorted);
    return SL_OK;
}

static sl_status list_samples(sl_op_init *ini, reader *r)
{
    int np = 0, ni = 0;
    const char *const *paths = sl_init_arg_strs(ini, ARG_PATH, &np);
    const char *const *idx = sl_init_arg_strs(ini, ARG_INDEX_PATH, &ni);
    if (np == 0)
        return sl_init_fail(ini, SL_EINVAL, "path is empty");
    if (ni != np)
        return sl_init_fail(ini, SL_EINVAL,
                            "path has %d files but index_path %d; give one index per file", np, ni);
    r->paths = sl__calloc((size_t)np, sizeof *r->paths);
    if (!r->paths)
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    r->npaths = np;
    for (int f = 0; f < np; f++) {
        struct stat st;
        if (!(r->paths[f] = sl__strdup(paths[f])))
            return sl_init_fail(ini, SL_ENOMEM, "out of memory");
        if (stat(paths[f], &st) != 0 || !S_ISREG(st.st_mode))
            return sl_init_fail(ini, SL_ENOTFOUND, "path \"%s\": not a readable file", paths[f]);
        sl_status s = read_index(ini, r, f, idx[f], (int64_t)st.st_size);
        if (s != SL_OK)
            return s;
    }
    if (r->n == 0)
        return sl_init_fail(ini, SL_ENOTFOUND, "the index files list no records");
    return SL_OK;
}

static void fini(void *state)
{
    reader *r = state;
    if (!r)
        return;
    for (int f = 0; f < r->npaths; f++)
        sl__free(r->paths[f]);
    sl__free(r->paths);
    sl__free(r->e);
    sl__cursor_fini(&r->cur);
    sl__free(r);
}

static sl_status init(sl_op_init *ini, void **state)
{
    reader *r = sl__calloc(1, sizeof *r);
    if (!r)
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    sl_status st = sl__cursor_config(ini, &cursor_args, &r->cur);
    if (st == SL_OK)
        st = list_samples(ini, r);
    if (st == SL_OK)
        st = sl__cursor_start(ini, &r->cur, r->n);
    if (st != SL_OK) {
        fini(r);
        return st;
    }
    *state = r;
    return SL_OK;
}

/* ---- per iteration --------------------------------------------------------------------------- */

static sl_status setup(sl_ctx *ctx)
{
    reader *r = sl_ctx_state(ctx);
    sample *ss = sl_ctx_iter_data(ctx);
    sl_ctx_set_output(ctx, 0, SL_DTYPE_UINT8, 1, "");
    sl_ctx_set_output(ctx, 1, SL_DTYPE_FLOAT32, 1, "");
    for (int i = 0, bs = sl_ctx_batch_size(ctx); i < bs; i++) {
        ss[i].k = sl__cursor_next(&r->cur);
        const char *src = r->paths[r->e[ss[i].k].file];
        sl_ctx_set_source(ctx, 0, i, src);
        sl_ctx_set_source(ctx, 1, i, src);
    }
    return SL_OK;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Walks the parts of record e: calls `part` (when not NULL) with each part's data extent.
 * Returns the joined payload length in *payload, the part count in *nparts. */
typedef sl_status (*part_fn)(sl_ctx *ctx, int fd, int64_t at, int64_t len, int64_t pos, void *user);

static sl_status walk(sl_ctx *ctx, int fd, const entry *e, part_fn part, void *user,
                      int64_t *payload, int64_t *nparts)
{
    int64_t pos = 0, at = e->offset, end = e->offset + e->limit;
    for (int64_t k = 0;; k++) {
        uint8_t h[8];
        if (k == MAX_PARTS)
            return sl_fail(ctx, SL_ECORRUPT, "record at offset %lld has more than %d parts",
                           (long long)e->offset, MAX_PARTS);
        if (at + 8 > end)
            return sl_fail(ctx, SL_ECORRUPT,
                           "truncated record: part %lld at offset %lld runs past the record's "
                           "end at %lld (the next indexed record or the file's end)",
                           (long long)k, (long long)at, (long long)end);
        sl_status st = sl__reader_pread(ctx, fd, h, 8, at);
        if (st != SL_OK)
            return st;
        uint32_t magic = le32(h), lrec = le32(h + 4), cflag = lrec >> 29,
                 len = lrec & ((1u << 29) - 1);
        if (magic != MAGIC)
            return sl_fail(ctx, SL_ECORRUPT,
                           "bad RecordIO magic 0x%08" PRIx32 " at offset %lld (expected "
                           "0xced7230a): not a record start",
                           magic, (long long)at);
        bool first = k == 0;
        if ((first && cflag != 0 && cflag != 1) || (!first && cflag != 2 && cflag != 3))
            return sl_fail(ctx, SL_ECORRUPT,
                           "RecordIO part at offset %lld has flag %" PRIu32 " after %lld parts",
                           (long long)at, cflag, (long long)k);
        if (at + 8 + (int64_t)len > end)
            return sl_fail(ctx, SL_ECORRUPT,
                           "truncated record: part at offset %lld holds %" PRIu32
                           " bytes, past the record's end at %lld",
                           (long long)at, len, (long long)end);
        if (!first)
            pos += 4; /* the magic the writer split at */
        if (part && (st = part(ctx, fd, at + 8, len, pos, user)) != SL_OK)
            return st;
        pos += len;
        at += 8 + (((int64_t)len + 3) & ~(int64_t)3);
        if (cflag == 0 || cflag == 3) {
            *payload = pos;
            *nparts = k + 1;
            return SL_OK;
        }
    }
}

/* Reads a part's data to buf + pos, with the magic before it when pos > 0. */
static sl_status read_part(sl_ctx *ctx, int fd, int64_t at, int64_t len, int64_t pos, void *user)
{
    uint8_t *buf = user;
    if (pos > 0) {
        const uint8_t m[4] = {MAGIC & 0xff, MAGIC >> 8 & 0xff, MAGIC >> 16 & 0xff, MAGIC >> 24};
        memcpy(buf + pos - 4, m, 4);
    }
    return sl__reader_pread(ctx, fd, buf + pos, len, at);
}

static sl_status first_bytes(sl_ctx *ctx, int fd, int64_t at, int64_t len, int64_t pos, void *user)
{
    uint8_t *h = user;
    if (pos != 0)
        return SL_OK;
    if (len < 4) /* the rest of the header is checked against the joined length */
        return sl_fail(ctx, SL_ECORRUPT,
                       "record at offset %lld: its first part holds %lld bytes, too few for "
                       "the image record header's flag",
                       (long long)at - 8, (long long)len);
    return sl__reader_pread(ctx, fd, h, 4, at);
}

static int open_rec(sl_ctx *ctx, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        sl_fail(ctx, SL_EIO, "cannot open file: %s", strerror(errno));
    return fd;
}

static sl_status setup_sample(sl_ctx *ctx, int i)
{
    const reader *r = sl_ctx_state(ctx);
    sample *s = (sample *)sl_ctx_iter_data(ctx) + i;
    const entry *e = &r->e[s->k];
    int fd = open_rec(ctx, r->paths[e->file]);
    if (fd < 0)
        return SL_EIO;
    uint8_t h[4];
    sl_status st = walk(ctx, fd, e, first_bytes, h, &s->payload, &s->nparts);
    close(fd);
    if (st != SL_OK)
        return st;
    s->flag = le32(h);
    int64_t head = IR_HEADER + 4 * (int64_t)s->flag;
    if (s->flag > (1u << 24) || head > s->payload)
        return sl_fail(ctx, SL_ECORRUPT,
                       "record at offset %lld: the header announces %" PRIu32
                       " labels, more than its %lld bytes hold",
                       (long long)e->offset, s->flag, (long long)s->payload);
    int64_t data = s->payload - head, labels = s->flag ? s->flag : 1;
    sl_ctx_set_shape(ctx, 0, i, &data);
    sl_ctx_set_shape(ctx, 1, i, &labels);
    return SL_OK;
}

static sl_status run_sample(sl_ctx *ctx, int i)
{
    const reader *r = sl_ctx_state(ctx);
    const sample *s = (const sample *)sl_ctx_iter_data(ctx) + i;
    const entry *e = &r->e[s->k];
    uint8_t *buf = sl_ctx_scratch(ctx, (size_t)s->payload);
    if (!buf)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for a %lld-byte record",
                       (long long)s->payload);
    int fd = open_rec(ctx, r->paths[e->file]);
    if (fd < 0)
        return SL_EIO;
    int64_t payload = 0, nparts = 0;
    sl_status st = walk(ctx, fd, e, read_part, buf, &payload, &nparts);
    close(fd);
    if (st == SL_OK && (payload != s->payload || nparts != s->nparts))
        st = sl_fail(ctx, SL_EIO, "record at offset %lld changed while it was read",
                     (long long)e->offset);
    if (st != SL_OK)
        return st;
    int64_t head = IR_HEADER + 4 * (int64_t)s->flag;
    float *label = sl_ctx_output_data(ctx, 1, i);
    memcpy(label, s->flag ? buf + IR_HEADER : buf + 4, 4 * (size_t)(s->flag ? s->flag : 1));
    memcpy(sl_ctx_output_data(ctx, 0, i), buf + head, (size_t)(s->payload - head));
    return SL_OK;
}

SL__CURSOR_READER(reader, cur)

/* ---- definition ------------------------------------------------------------------------- */

static const sl_io_def outputs[] = {
    {"data", "The record's image bytes, 1-D uint8 (encoded; feed it to decoders.image)."},
    {"label", "The record's labels, float32: shape (1,) (the header's label) when the header's "
              "flag is 0, else (flag,) (the labels after the header)."},
};

static const sl_arg_def args[] = {
    [ARG_PATH] = {.name = "path",
                  .type = SL_ARG_STRINGS,
                  .flags = SL_ARG_SCALAR_OK,
                  .doc = "The RecordIO .rec files, read one after another."},
    [ARG_INDEX_PATH] = {.name = "index_path",
                        .type = SL_ARG_STRINGS,
                        .flags = SL_ARG_SCALAR_OK,
                        .doc = "Their index files (.idx, `key<TAB>offset` per record, as "
                               "im2rec writes them), one per .rec file, in the same order."},
    SL__CURSOR_ARG_DEFS,
};

#define NO_EFFECT(name)                                                                            \
    {                                                                                              \
        name, NULL, "readers.mxnet reads with pread; " name " has no effect"                       \
    }
static const sl_arg_alias aliases[] = {
    NO_EFFECT("dont_use_mmap"),        NO_EFFECT("read_ahead"),        NO_EFFECT("lazy_init"),
    NO_EFFECT("prefetch_queue_depth"), NO_EFFECT("tensor_init_bytes"),
};

const sl_op_def sl_op_readers_mxnet = {
    .name = "readers.mxnet",
    .doc = "Reads MXNet RecordIO data sets: `.rec` files and their `.idx` index files (as "
           "im2rec writes them).\n"
           "\n"
           "Samples come in index order, file after file. Each record's parts (a record whose "
           "data contains the RecordIO magic is split there by the writer) are joined; its "
           "image record header gives the labels: output 1 is float32 (1,) with the header's "
           "label when its flag is 0, else the `flag` labels that follow the header. Output 0 "
           "is the rest, the encoded image.\n"
           "\n"
           "Only the record's own bytes are read (pread), bounded by the next indexed record "
           "(or the file's end); a bad magic, a part running past that bound, or a header "
           "announcing more labels than the record holds fails the sample naming the file and "
           "the offset. Order, shuffling and sharding as readers.file.",
    .outputs = outputs,
    .num_outputs = 2,
    .args = args,
    .num_args = NUM_ARGS,
    .aliases = aliases,
    .num_aliases = sizeof aliases / sizeof *aliases,
    .devices = SL_OP_CPU,
    .flags = SL_OP_SOURCE | SL_OP_STATEFUL,
    .iter_bytes_per_sample = sizeof(sample),
    .init = init,
    .fini = fini,
    .setup = setup,
    .setup_sample = setup_sample,
    .run_sample = run_sample,
    SL__CURSOR_READER_FNS,
};
