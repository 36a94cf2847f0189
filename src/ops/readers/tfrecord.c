/* readers.tfrecord: reads tf.train.Example records from TFRecord files, located by their index
 * files (DALI's tfrecord2idx format, `sluice tfrecord-index`), one output per requested feature.
 *
 * Exports: sl_op_readers_tfrecord (listed in src/ops/ops.def).
 *
 * Invariant: after init the sample table (file, offset, size per record) and the feature table
 * never change, so setup_sample and run_sample read them from any thread without locks; only
 * setup (serial, SL_OP_STATEFUL) touches the cursor. A record is read with pread into the
 * worker's scratch memory, at most max_sample_bytes, never a whole file; setup_sample reads and
 * parses it for the output shapes, run_sample reads and parses it again to fill the outputs (the
 * page cache serves the second read), so nothing is held between the two.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* GNU strerror_r */
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sluice/op.h"

#include "core/core.h"
#include "ops/readers/reader.h"
#include "ops/readers/tfrecord_parse.h"

enum {
    ARG_PATH,
    ARG_INDEX_PATH,
    ARG_FEATURE_NAMES,
    ARG_FEATURE_KINDS,
    ARG_FEATURE_DTYPES,
    ARG_FEATURE_NDIMS,
    ARG_FEATURE_SHAPES,
    ARG_FEATURE_DEFAULTS,
    ARG_RANDOM_SHUFFLE,
    ARG_SEED,
    ARG_SHARD_ID,
    ARG_NUM_SHARDS,
    ARG_STICK_TO_SHARD,
    ARG_PAD_LAST_BATCH,
    NUM_ARGS
};

#define MAX_NDIM 8

typedef enum ftype { FT_INT64, FT_FLOAT32, FT_STRING } ftype;

typedef struct feature {
    const char *name; /* borrowed from the argument (lives as long as the node) */
    bool var;         /* VarLenFeature */
    ftype type;
    int ndim; /* fixed: the shape; var: the partial shape (0: none) */
    int64_t shape[MAX_NDIM];
    int64_t volume; /* product of shape (1 when ndim is 0) */
    int64_t def_i;
    float def_f;
    const char *def_s; /* borrowed */
} feature;

typedef struct record {
    int32_t file;
    int64_t offset, size; /* the whole record, framing included */
} record;

typedef struct reader {
    char **paths; /* owned copies */
    int num_files;
    record *recs;
    int64_t num_recs, cap;
    feature *feats;
    int num_feats;
    sl__cursor cur;
} reader;

static const sl__cursor_args cursor_args = {.random_shuffle = ARG_RANDOM_SHUFFLE,
                                            .seed = ARG_SEED,
                                            .shard_id = ARG_SHARD_ID,
                                            .num_shards = ARG_NUM_SHARDS,
                                            .stick_to_shard = ARG_STICK_TO_SHARD,
                                            .pad_last_batch = ARG_PAD_LAST_BATCH};

static const sl_dtype out_dtype[] = {
    [FT_INT64] = SL_DTYPE_INT64, [FT_FLOAT32] = SL_DTYPE_FLOAT32, [FT_STRING] = SL_DTYPE_UINT8};

/* ---- init: features --------------------------------------------------------------------- */

static sl_status parse_features(sl_op_init *ini, reader *r)
{
    int n = 0, nk = 0, nt = 0, nn = 0, ns = 0, nd = 0;
    const char *const *names = sl_init_arg_strs(ini, ARG_FEATURE_NAMES, &n);
    const char *const *kinds = sl_init_arg_strs(ini, ARG_FEATURE_KINDS, &nk);
    const char *const *types = sl_init_arg_strs(ini, ARG_FEATURE_DTYPES, &nt);
    const int64_t *ndims = sl_init_arg_ints(ini, ARG_FEATURE_NDIMS, &nn);
    const int64_t *shapes = sl_init_arg_ints(ini, ARG_FEATURE_SHAPES, &ns);
    const char *const *defs = sl_init_arg_strs(ini, ARG_FEATURE_DEFAULTS, &nd);
    if (n == 0)
        return sl_init_fail(ini, SL_EINVAL, "no features requested (feature_names is empty)");
    if (nk != n || nt != n || nn != n || nd != n)
        return sl_init_fail(ini, SL_EINVAL,
                            "feature_names has %d entries but feature_kinds %d, feature_dtypes "
                            "%d, feature_ndims %d and feature_defaults %d: one each per feature",
                            n, nk, nt, nn, nd);
    if (!(r->feats = sl__calloc((size_t)n, sizeof *r->feats)))
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    r->num_feats = n;
    int at = 0;
    for (int i = 0; i < n; i++) {
        feature *f = &r->feats[i];
        f->name = names[i];
        for (int j = 0; j < i; j++)
            if (strcmp(names[j], names[i]) == 0)
                return sl_init_fail(ini, SL_EINVAL, "feature \"%s\" is requested twice", names[i]);
        if (strcmp(kinds[i], "fixed") && strcmp(kinds[i], "var"))
            return sl_init_fail(ini, SL_EINVAL,
                                "feature \"%s\": feature_kinds value \"%s\" is not \"fixed\" "
                                "or \"var\"",
                                f->name, kinds[i]);
        f->var = strcmp(kinds[i], "var") == 0;
        if (strcmp(types[i], "int64") == 0)
            f->type = FT_INT64;
        else if (strcmp(types[i], "float32") == 0)
            f->type = FT_FLOAT32;
        else if (strcmp(types[i], "string") == 0)
            f->type = FT_STRING;
        else
            return sl_init_fail(ini, SL_EINVAL,
                                "feature \"%s\": dtype \"%s\" is not int64, float32 or string",
                                f->name, types[i]);
        if (ndims[i] < 0 || ndims[i] > MAX_NDIM || ndims[i] > ns - at)
            return sl_init_fail(ini, SL_EINVAL,
                                "feature \"%s\": feature_ndims %lld is out of range (0 to %d, "
                                "and feature_shapes must hold every feature's extents)",
                                f->name, (long long)ndims[i], MAX_NDIM);
        f->ndim = (int)ndims[i];
        f->volume = 1;
        for (int d = 0; d < f->ndim; d++) {
            int64_t e = shapes[at++];
            if (e < 0 || e > (int64_t)1 << 40 || (e && f->volume > ((int64_t)1 << 40) / e))
                return sl_init_fail(ini, SL_EINVAL, "feature \"%s\": bad extent %lld in its shape",
                                    f->name, (long long)e);
            f->shape[d] = e;
            f->volume *= e;
        }
        if (f->type == FT_STRING && (f->var || f->volume != 1))
            return sl_init_fail(ini, SL_EINVAL,
                                "feature \"%s\": tensors of strings are not supported (a string "
                                "feature must be a FixedLenFeature of one value, shape () or "
                                "[1])",
                                f->name);
        char *end;
        errno = 0;
        if (f->type == FT_INT64)
            f->def_i = strtoll(defs[i], &end, 10);
        else if (f->type == FT_FLOAT32)
            f->def_f = strtof(defs[i], &end);
        else
            end = (char *)defs[i] + strlen(defs[i]);
        if (end == defs[i] && f->type != FT_STRING)
            end = NULL;
        if (!end || *end || (f->type == FT_INT64 && errno))
            return sl_init_fail(ini, SL_EINVAL, "feature \"%s\": default value \"%s\" is not %s",
                                f->name, defs[i], types[i]);
        f->def_s = defs[i];
    }
    if (at != ns)
        return sl_init_fail(ini, SL_EINVAL,
                            "feature_shapes has %d extents but feature_ndims adds up to %d", ns,
                            at);
    return SL_OK;
}

/* ---- init: index files ------------------------------------------------------------------ */

static bool push_record(reader *r, record rec)
{
    if (r->num_recs == r->cap) {
        int64_t cap = r->cap ? 2 * r->cap : 256;
        record *v = sl__realloc(r->recs, (size_t)cap * sizeof *v);
        if (!v)
            return false;
        r->recs = v;
        r->cap = cap;
    }
    r->recs[r->num_recs++] = rec;
    return true;
}

/* Index lines: "offset size" (DALI's tfrecord2idx), each record inside its file. */
static sl_status read_index(sl_op_init *ini, reader *r, int file, const char *index)
{
    char buf[128], *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    sl_status st = SL_OK;
    int64_t fsize = 0;
    const char *path = r->paths[file];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || (fsize = lseek(fd, 0, SEEK_END)) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return sl_init_fail(ini, e == ENOENT ? SL_ENOTFOUND : SL_EIO, "path \"%s\": %s", path,
                            strerror_r(e, buf, sizeof buf));
    }
    close(fd);
    FILE *f = fopen(index, "r");
    if (!f) {
        int e = errno;
        return sl_init_fail(ini, e == ENOENT ? SL_ENOTFOUND : SL_EIO, "index_path \"%s\": %s",
                            index, strerror_r(e, buf, sizeof buf));
    }
    int64_t first = r->num_recs;
    while (st == SL_OK && getline(&line, &cap, f) >= 0) {
        lineno++;
        long long off, size;
        int used = 0;
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\n' || *s == '\r' || !*s)
            continue;
        if (sscanf(s, "%lld %lld %n", &off, &size, &used) < 2 || s[used] || off < 0 ||
            size < SL__TFR_HEADER + SL__TFR_FOOTER || off > fsize || size > fsize - off)
            st = sl_init_fail(ini, SL_ECORRUPT,
                              "index_path \"%s\", line %ld: expected \"<offset> <size>\" of a "
                              "record inside \"%s\" (%lld bytes), got \"%.60s\"",
                              index, lineno, path, (long long)fsize, s);
        else if (!push_record(r, (record){file, off, size}))
            st = sl_init_fail(ini, SL_ENOMEM, "out of memory while reading index files");
    }
    if (st == SL_OK && ferror(f))
        st = sl_init_fail(ini, SL_EIO, "index_path \"%s\": read error", index);
    if (st == SL_OK && r->num_recs == first)
        st = sl_init_fail(ini, SL_ENOTFOUND, "index_path \"%s\" lists no records", index);
    fclose(f);
    free(line);
    return st;
}

static sl_status list_records(sl_op_init *ini, reader *r)
{
    int np = 0, ni = 0;
    const char *const *paths = sl_init_arg_strs(ini, ARG_PATH, &np);
    const char *const *idx = sl_init_arg_strs(ini, ARG_INDEX_PATH, &ni);
    if (np == 0)
        return sl_init_fail(ini, SL_EINVAL, "path is empty");
    if (np != ni)
        return sl_init_fail(ini, SL_EINVAL,
                            "path has %d files but index_path has %d: one index per file", np, ni);
    if (!(r->paths = sl__calloc((size_t)np, sizeof *r->paths)))
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    r->num_files = np;
    for (int i = 0; i < np; i++)
        if (!(r->paths[i] = sl__strdup(paths[i])))
            return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    for (int i = 0; i < np; i++) {
        sl_status st = read_index(ini, r, i, idx[i]);
        if (st != SL_OK)
            return st;
    }
    return SL_OK;
}

static void fini(void *state)
{
    reader *r = state;
    if (!r)
        return;
    for (int i = 0; r->paths && i < r->num_files; i++)
        sl__free(r->paths[i]);
    sl__free(r->paths);
    sl__free(r->recs);
    sl__free(r->feats);
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
        st = parse_features(ini, r);
    if (st == SL_OK)
        st = list_records(ini, r);
    if (st == SL_OK)
        st = sl__cursor_start(ini, &r->cur, r->num_recs);
    if (st != SL_OK) {
        fini(r);
        return st;
    }
    *state = r;
    return SL_OK;
}

/* ---- per sample ------------------------------------------------------------------------- */

/* Reads record k into scratch, checks its framing; *payload, *len: the Example's bytes. */
static sl_status load(sl_ctx *ctx, const reader *r, int64_t k, const uint8_t **payload,
                      uint64_t *len)
{
    const record *rec = &r->recs[k];
    char err[160], buf[128];
    if ((uint64_t)rec->size > sl_ctx_max_sample_bytes(ctx))
        return sl_fail(ctx, SL_ECORRUPT,
                       "record at offset %lld: its index gives %lld bytes, more than "
                       "max_sample_bytes (%zu)",
                       (long long)rec->offset, (long long)rec->size, sl_ctx_max_sample_bytes(ctx));
    uint8_t *b = sl_ctx_scratch(ctx, (size_t)rec->size);
    if (!b)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for a %lld-byte record",
                       (long long)rec->size);
    int fd = open(r->paths[rec->file], O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sl_fail(ctx, SL_EIO, "cannot open file: %s", strerror_r(errno, buf, sizeof buf));
    int64_t done = 0;
    int e = 0;
    while (done < rec->size) {
        ssize_t got = pread(fd, b + done, (size_t)(rec->size - done), (off_t)(rec->offset + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            e = got < 0 ? errno : 0;
            break;
        }
        done += got;
    }
    close(fd);
    if (done < rec->size)
        return sl_fail(ctx, SL_EIO, "record at offset %lld: read %lld of its %lld bytes: %s",
                       (long long)rec->offset, (long long)done, (long long)rec->size,
                       e ? strerror_r(e, buf, sizeof buf)
                         : "the file is shorter than its index says (truncated?)");
    uint64_t n;
    if (!sl__tfr_header(b, &n, err, sizeof err))
        return sl_fail(ctx, SL_ECORRUPT, "record at offset %lld: %s", (long long)rec->offset, err);
    if (n != (uint64_t)(rec->size - SL__TFR_HEADER - SL__TFR_FOOTER))
        return sl_fail(ctx, SL_ECORRUPT,
                       "record at offset %lld: its length field says %llu payload bytes but the "
                       "index gives the record %lld bytes (payload %lld); a stale index?",
                       (long long)rec->offset, (unsigned long long)n, (long long)rec->size,
                       (long long)(rec->size - SL__TFR_HEADER - SL__TFR_FOOTER));
    if (!sl__tfr_check_payload(b + SL__TFR_HEADER, n, err, sizeof err))
        return sl_fail(ctx, SL_ECORRUPT, "record at offset %lld: %s", (long long)rec->offset, err);
    *payload = b + SL__TFR_HEADER;
    *len = n;
    return SL_OK;
}

static const char *kind_name(sl__tf_kind k)
{
    return k == SL__TF_BYTES ? "bytes_list" : k == SL__TF_FLOAT ? "float_list" : "int64_list";
}

/* Feature f of the Example: its shape (ndim as set in setup) and, with out, its values. */
static sl_status feature_value(sl_ctx *ctx, const record *rec, const feature *f, const uint8_t *ex,
                               uint64_t n, int64_t *shape, void *out)
{
    char err[160];
    sl__tf_feature ft;
    sl__tf_kind want = f->type == FT_STRING    ? SL__TF_BYTES
                       : f->type == FT_FLOAT32 ? SL__TF_FLOAT
                                               : SL__TF_INT64;
    if (!sl__tf_example_find(ex, (size_t)n, f->name, &ft, err, sizeof err))
        return sl_fail(ctx, SL_ECORRUPT, "record at offset %lld: %s", (long long)rec->offset, err);
    if (ft.kind != SL__TF_NONE && ft.kind != want)
        return sl_fail(ctx, SL_ECORRUPT,
                       "record at offset %lld: feature \"%s\" holds a %s, not the %s its "
                       "dtype asks for",
                       (long long)rec->offset, f->name, kind_name(ft.kind), kind_name(want));
    if (f->type == FT_STRING) {
        const uint8_t *v = NULL;
        size_t len = 0;
        int64_t count = 0;
        if (ft.kind != SL__TF_NONE && !sl__tf_list_bytes(&ft, 0, &v, &len, &count, err, sizeof err))
            return sl_fail(ctx, SL_ECORRUPT, "record at offset %lld: feature \"%s\": %s",
                           (long long)rec->offset, f->name, err);
        if (!v) {
            v = (const uint8_t *)f->def_s;
            len = strlen(f->def_s);
        } else if (count > 1) {
            return sl_fail(ctx, SL_ECORRUPT,
                           "record at offset %lld: feature \"%s\" holds %lld strings; a "
                           "FixedLenFeature of string takes one",
                           (long long)rec->offset, f->name, (long long)count);
        }
        shape[0] = (int64_t)len;
        if (out && len)
            memcpy(out, v, len);
        return SL_OK;
    }
    int64_t count = 0;
    if (ft.kind != SL__TF_NONE && !sl__tf_list_numbers(&ft, NULL, &count, err, sizeof err))
        return sl_fail(ctx, SL_ECORRUPT, "record at offset %lld: feature \"%s\": %s",
                       (long long)rec->offset, f->name, err);
    if (f->var) {
        if (f->ndim && (f->volume == 0 || count % f->volume))
            return sl_fail(ctx, SL_ECORRUPT,
                           "record at offset %lld: feature \"%s\" has %lld values, not a "
                           "multiple of its partial shape's %lld",
                           (long long)rec->offset, f->name, (long long)count, (long long)f->volume);
        shape[0] = f->ndim ? count / f->volume : count;
        for (int d = 0; d < f->ndim; d++)
            shape[d + 1] = f->shape[d];
    } else {
        if (count != 0 && count != f->volume)
            return sl_fail(ctx, SL_ECORRUPT,
                           "record at offset %lld: feature \"%s\" has %lld values but its "
                           "FixedLenFeature shape holds %lld",
                           (long long)rec->offset, f->name, (long long)count, (long long)f->volume);
        if (f->ndim == 0)
            shape[0] = 1;
        for (int d = 0; d < f->ndim; d++)
            shape[d] = f->shape[d];
        if (out && count == 0) { /* absent: the default value, repeated */
            for (int64_t i = 0; i < f->volume; i++)
                if (f->type == FT_INT64)
                    ((int64_t *)out)[i] = f->def_i;
                else
                    ((float *)out)[i] = f->def_f;
            return SL_OK;
        }
    }
    if (out && count && !sl__tf_list_numbers(&ft, out, &count, err, sizeof err))
        return sl_fail(ctx, SL_ECORRUPT, "record at offset %lld: feature \"%s\": %s",
                       (long long)rec->offset, f->name, err);
    return SL_OK;
}

static int out_ndim(const feature *f)
{
    if (f->type == FT_STRING)
        return 1;
    if (f->var)
        return 1 + f->ndim;
    return f->ndim ? f->ndim : 1;
}

static sl_status setup(sl_ctx *ctx)
{
    reader *r = sl_ctx_state(ctx);
    int64_t *idx = sl_ctx_iter_data(ctx);
    for (int o = 0; o < r->num_feats; o++)
        sl_ctx_set_output(ctx, o, out_dtype[r->feats[o].type], out_ndim(&r->feats[o]), "");
    for (int i = 0, bs = sl_ctx_batch_size(ctx); i < bs; i++) {
        idx[i] = sl__cursor_next(&r->cur);
        for (int o = 0; o < r->num_feats; o++)
            sl_ctx_set_source(ctx, o, i, r->paths[r->recs[idx[i]].file]);
    }
    return SL_OK;
}

static sl_status setup_sample(sl_ctx *ctx, int sample)
{
    const reader *r = sl_ctx_state(ctx);
    int64_t k = ((const int64_t *)sl_ctx_iter_data(ctx))[sample];
    const uint8_t *ex;
    uint64_t n;
    sl_status st = load(ctx, r, k, &ex, &n);
    for (int o = 0; st == SL_OK && o < r->num_feats; o++) {
        int64_t shape[MAX_NDIM + 1];
        st = feature_value(ctx, &r->recs[k], &r->feats[o], ex, n, shape, NULL);
        if (st == SL_OK)
            sl_ctx_set_shape(ctx, o, sample, shape);
    }
    return st;
}

static sl_status run_sample(sl_ctx *ctx, int sample)
{
    const reader *r = sl_ctx_state(ctx);
    int64_t k = ((const int64_t *)sl_ctx_iter_data(ctx))[sample];
    const uint8_t *ex;
    uint64_t n;
    sl_status st = load(ctx, r, k, &ex, &n);
    for (int o = 0; st == SL_OK && o < r->num_feats; o++) {
        int64_t shape[MAX_NDIM + 1];
        const feature *f = &r->feats[o];
        st = feature_value(ctx, &r->recs[k], f, ex, n, shape, NULL);
        if (st != SL_OK)
            break;
        const int64_t *want = sl_ctx_output_shape(ctx, o, sample);
        if (memcmp(shape, want, (size_t)out_ndim(f) * sizeof *shape) != 0)
            return sl_fail(ctx, SL_EIO, "record at offset %lld changed while it was being read",
                           (long long)r->recs[k].offset);
        st = feature_value(ctx, &r->recs[k], f, ex, n, shape, sl_ctx_output_data(ctx, o, sample));
    }
    return st;
}

SL__CURSOR_READER(reader, cur)

/* ---- definition ------------------------------------------------------------------------- */

static const sl_io_def outputs[] = {
    {"features", "One output per feature, in feature_names' order: int64 or float32 values "
                 "(a FixedLenFeature's shape, () read as (1,); a VarLenFeature's (count,) or "
                 "(count / prod(partial_shape), *partial_shape)), or a string's bytes as 1-D "
                 "uint8."},
};

static const sl_arg_def args[] = {
    [ARG_PATH] = {.name = "path",
                  .type = SL_ARG_STRINGS,
                  .flags = SL_ARG_SCALAR_OK,
                  .doc = "TFRecord files, read in this order."},
    [ARG_INDEX_PATH] = {.name = "index_path",
                        .type = SL_ARG_STRINGS,
                        .flags = SL_ARG_SCALAR_OK,
                        .doc = "Index files, one per file of `path` (DALI's tfrecord2idx format, "
                               "lines `offset size`; made by `sluice tfrecord-index`)."},
    [ARG_FEATURE_NAMES] = {.name = "feature_names",
                           .type = SL_ARG_STRINGS,
                           .doc = "Names of the features to read, one output each. Python: "
                                  "fn.readers.tfrecord fills this and the feature_* arguments "
                                  "from its `features` dict."},
    [ARG_FEATURE_KINDS] = {.name = "feature_kinds",
                           .type = SL_ARG_STRINGS,
                           .doc = "Per feature \"fixed\" (FixedLenFeature) or \"var\" "
                                  "(VarLenFeature)."},
    [ARG_FEATURE_DTYPES] = {.name = "feature_dtypes",
                            .type = SL_ARG_STRINGS,
                            .doc = "Per feature \"int64\", \"float32\" or \"string\"."},
    [ARG_FEATURE_NDIMS] = {.name = "feature_ndims",
                           .type = SL_ARG_INTS,
                           .doc = "Per feature the number of extents it has in feature_shapes "
                                  "(a FixedLenFeature's shape, a VarLenFeature's partial shape; "
                                  "0 for none)."},
    [ARG_FEATURE_SHAPES] = {.name = "feature_shapes",
                            .type = SL_ARG_INTS,
                            .def = "[]",
                            .doc = "The features' shapes, concatenated."},
    [ARG_FEATURE_DEFAULTS] = {.name = "feature_defaults",
                              .type = SL_ARG_STRINGS,
                              .doc = "Per feature its default value as text: what a "
                                     "FixedLenFeature absent from a record reads as (repeated to "
                                     "its shape)."},
    SL__CURSOR_ARG_DEFS,
};

const sl_op_def sl_op_readers_tfrecord = {
    .name = "readers.tfrecord",
    .doc = "Reads tf.train.Example records from TFRecord files, one output per feature.\n"
           "\n"
           "Records are found through index files (`sluice tfrecord-index FILE INDEX`, DALI's "
           "tfrecord2idx format); every record's length and payload CRC-32C are checked, and "
           "the Example message is decoded by sluice itself (no TensorFlow, no protobuf "
           "library). Epoch order, sharding and padding are readers.file's. A record is read "
           "with pread when its iteration runs, never a whole file. A corrupt record (bad CRC, "
           "truncated, a feature of another kind or size than asked) fails its iteration with "
           "SL_ECORRUPT naming the file and the record's offset.",
    .outputs = outputs,
    .num_outputs = 1,
    .num_outputs_arg = "feature_names",
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_SOURCE | SL_OP_STATEFUL,
    .iter_bytes_per_sample = sizeof(int64_t),
    .init = init,
    .fini = fini,
    .setup = setup,
    .setup_sample = setup_sample,
    .run_sample = run_sample,
    SL__CURSOR_READER_FNS,
};
