/* readers.webdataset: reads samples of WebDataset tar shards — consecutive members sharing a key
 * (the name up to the first '.' of its last component) — one output per entry of `ext`.
 *
 * Exports: sl_op_readers_webdataset (listed in src/ops/ops.def).
 *
 * Invariant: after init the tables (files, samples, and per sample and output the member that
 * fills it) never change, so setup_sample and run_sample read them from any thread without
 * locks; only setup (serial, SL_OP_STATEFUL) touches the cursor. Init reads only tar headers
 * (tar.h) or the index files; a member's bytes are read with pread straight into the output
 * when its iteration runs (the executor bounds the output by max_sample_bytes first).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* GNU strerror_r */
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/op.h"

#include "core/core.h"
#include "ops/readers/reader.h"
#include "ops/readers/tar.h"

enum {
    ARG_PATHS,
    ARG_INDEX_PATHS,
    ARG_EXT,
    ARG_MISSING,
    ARG_DTYPES,
    ARG_CASE_SENSITIVE,
    ARG_RANDOM_SHUFFLE,
    ARG_SEED,
    ARG_SHARD_ID,
    ARG_NUM_SHARDS,
    ARG_STICK_TO_SHARD,
    ARG_PAD_LAST_BATCH,
    NUM_ARGS
};

typedef enum missing { MISSING_EMPTY, MISSING_SKIP, MISSING_ERROR } missing;

typedef struct member {
    int64_t offset, size; /* of its contents */
} member;

typedef struct reader {
    char **paths; /* owned */
    int num_files;
    int num_out;
    sl_dtype *dtypes; /* per output */
    /* sample k: file[k]; member of output o: slot[k * num_out + o] (offset -1: missing) */
    int32_t *file;
    member *slot;
    int64_t n, cap;
    sl__cursor cur;
} reader;

static const sl__cursor_args cursor_args = {.random_shuffle = ARG_RANDOM_SHUFFLE,
                                            .seed = ARG_SEED,
                                            .shard_id = ARG_SHARD_ID,
                                            .num_shards = ARG_NUM_SHARDS,
                                            .stick_to_shard = ARG_STICK_TO_SHARD,
                                            .pad_last_batch = ARG_PAD_LAST_BATCH};

/* What init needs while it lists samples. */
typedef struct lister {
    sl_op_init *ini;
    reader *r;
    const char *const *ext; /* per output: "jpg;png" */
    bool case_sensitive;
    missing miss;
    int file;
    const char *where; /* the tar file, or the index file */
    /* the sample being gathered */
    char key[SL__TAR_NAME_MAX + 1];
    bool open;
    member *cur; /* num_out slots */
} lister;

/* Does extension e (length n) match one of the ';'-separated alternatives of `alts`? */
static bool ext_match(const char *alts, const char *e, size_t n, bool cs)
{
    for (const char *a = alts; *a;) {
        const char *end = strchr(a, ';');
        size_t len = end ? (size_t)(end - a) : strlen(a);
        if (len == n && (cs ? strncmp(a, e, n) : strncasecmp(a, e, n)) == 0)
            return true;
        a += len + (end != NULL);
    }
    return false;
}

static sl_status flush_sample(lister *l)
{
    reader *r = l->r;
    if (!l->open)
        return SL_OK;
    l->open = false;
    for (int o = 0; o < r->num_out; o++) {
        if (l->cur[o].offset >= 0)
            continue;
        if (l->miss == MISSING_SKIP)
            return SL_OK;
        if (l->miss == MISSING_ERROR)
            return sl_init_fail(l->ini, SL_ECORRUPT,
                                "\"%s\": sample \"%s\" has no member with extension \"%s\" "
                                "(missing_component_behavior \"error\")",
                                l->where, l->key, l->ext[o]);
    }
    if (r->n == r->cap) {
        int64_t cap = r->cap ? 2 * r->cap : 256;
        int32_t *f = sl__realloc(r->file, (size_t)cap * sizeof *f);
        if (f)
            r->file = f;
        member *s = f ? sl__realloc(r->slot, (size_t)cap * (size_t)r->num_out * sizeof *s) : NULL;
        if (!s)
            return sl_init_fail(l->ini, SL_ENOMEM, "out of memory while listing samples");
        r->slot = s;
        r->cap = cap;
    }
    r->file[r->n] = l->file;
    memcpy(r->slot + r->n * r->num_out, l->cur, (size_t)r->num_out * sizeof *l->cur);
    r->n++;
    return SL_OK;
}

/* One member (name, data offset, size): starts a new sample when its key differs. */
static sl_status add_member(lister *l, const char *name, int64_t offset, int64_t size)
{
    int64_t k = sl__wds_split(name);
    if (k < 0)
        return SL_OK; /* no key or no extension: not part of any sample */
    if (!l->open || strncmp(l->key, name, (size_t)k) != 0 || l->key[k] != '\0') {
        sl_status st = flush_sample(l);
        if (st != SL_OK)
            return st;
        memcpy(l->key, name, (size_t)k);
        l->key[k] = '\0';
        l->open = true;
        for (int o = 0; o < l->r->num_out; o++)
            l->cur[o] = (member){-1, 0};
    }
    const char *e = name + k + 1;
    for (int o = 0; o < l->r->num_out; o++)
        if (l->cur[o].offset < 0 && ext_match(l->ext[o], e, strlen(e), l->case_sensitive))
            l->cur[o] = (member){offset, size};
    return SL_OK;
}

static sl_status io_fail(sl_op_init *ini, const char *what, const char *path)
{
    char buf[128];
    int e = errno;
    return sl_init_fail(ini, e == ENOENT ? SL_ENOTFOUND : SL_EIO, "%s \"%s\": %s", what, path,
                        strerror_r(e, buf, sizeof buf));
}

static sl_status scan_tar(lister *l, int fd, int64_t size)
{
    sl__tar t = {fd, size, 0};
    sl__tar_entry *e = sl__malloc(sizeof *e);
    char err[200];
    bool done = false;
    sl_status st = e ? SL_OK : sl_init_fail(l->ini, SL_ENOMEM, "out of memory");
    while (st == SL_OK && sl__tar_next(&t, e, &done, err, sizeof err))
        if (e->regular)
            st = add_member(l, e->name, e->data_offset, e->size);
    if (st == SL_OK && !done)
        st = sl_init_fail(l->ini, SL_ECORRUPT, "\"%s\": %s", l->where, err);
    sl__free(e);
    return st;
}

/* DALI's wds2idx index: "v1.2 N", then per sample "ext offset size name ..." (v1.0/v1.1:
 * "ext offset size ..."), offsets of the members' contents. */
static sl_status read_index(lister *l, const char *index, int64_t fsize)
{
    FILE *f = fopen(index, "r");
    if (!f)
        return io_fail(l->ini, "index_paths", index);
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int fields = 0;
    long long declared = -1, got = 0;
    sl_status st = SL_OK;
    l->where = index;
    while (st == SL_OK && getline(&line, &cap, f) >= 0) {
        lineno++;
        char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);
        if (lineno == 1) {
            char *rest = tok ? strtok_r(NULL, " \t\r\n", &save) : NULL, *end = NULL;
            fields = tok && strcmp(tok, "v1.2") == 0                                 ? 4
                     : tok && (strcmp(tok, "v1.1") == 0 || strcmp(tok, "v1.0") == 0) ? 3
                                                                                     : 0;
            if (rest)
                declared = strtoll(rest, &end, 10);
            if (!fields || !rest || *end || declared < 0)
                st = sl_init_fail(l->ini, SL_ECORRUPT,
                                  "index_paths \"%s\", line 1: expected \"v1.2 <samples>\" "
                                  "(DALI's wds2idx format)",
                                  index);
            continue;
        }
        if (!tok)
            continue;
        got++;
        for (int m = 0; st == SL_OK && tok; m++) {
            char *ext = tok, *so = strtok_r(NULL, " \t\r\n", &save);
            char *ss = so ? strtok_r(NULL, " \t\r\n", &save) : NULL;
            char *nm = ss && fields == 4 ? strtok_r(NULL, " \t\r\n", &save) : NULL;
            char *e1 = NULL, *e2 = NULL;
            long long off = so ? strtoll(so, &e1, 10) : -1, size = ss ? strtoll(ss, &e2, 10) : -1;
            if (!so || !ss || (fields == 4 && !nm) || *e1 || *e2 || off < 0 || size < 0 ||
                off > fsize || size > fsize - off || strlen(ext) > 256 ||
                (nm && strlen(nm) > SL__TAR_NAME_MAX)) {
                st = sl_init_fail(l->ini, SL_ECORRUPT,
                                  "index_paths \"%s\", line %ld, member %d: expected \"<ext> "
                                  "<offset> <size>%s\" inside \"%s\" (%lld bytes)",
                                  index, lineno, m + 1, fields == 4 ? " <name>" : "",
                                  l->r->paths[l->file], (long long)fsize);
                break;
            }
            /* the sample's key: from the name (v1.2), else the line number */
            if (m == 0) {
                st = flush_sample(l);
                snprintf(l->key, sizeof l->key, "%s", nm ? nm : "(line)");
                if (nm && sl__wds_split(nm) > 0)
                    l->key[sl__wds_split(nm)] = '\0';
                l->open = true;
                for (int o = 0; o < l->r->num_out; o++)
                    l->cur[o] = (member){-1, 0};
            }
            for (int o = 0; o < l->r->num_out; o++)
                if (l->cur[o].offset < 0 &&
                    ext_match(l->ext[o], ext, strlen(ext), l->case_sensitive))
                    l->cur[o] = (member){off, size};
            tok = strtok_r(NULL, " \t\r\n", &save);
        }
    }
    if (st == SL_OK)
        st = flush_sample(l);
    if (st == SL_OK && fields && got != declared)
        st = sl_init_fail(l->ini, SL_ECORRUPT,
                          "index_paths \"%s\": its first line declares %lld samples, it lists "
                          "%lld",
                          index, declared, got);
    if (st == SL_OK && lineno == 0)
        st = sl_init_fail(l->ini, SL_ECORRUPT, "index_paths \"%s\" is empty", index);
    free(line);
    fclose(f);
    return st;
}

static sl_status list_samples(sl_op_init *ini, reader *r)
{
    int np = 0, ni = 0, ne = 0;
    const char *const *paths = sl_init_arg_strs(ini, ARG_PATHS, &np);
    const char *const *idx = sl_init_arg_strs(ini, ARG_INDEX_PATHS, &ni);
    lister l = {.ini = ini, .r = r};
    l.ext = sl_init_arg_strs(ini, ARG_EXT, &ne);
    l.case_sensitive = sl_init_arg_bool(ini, ARG_CASE_SENSITIVE);
    const char *m = sl_init_arg_str(ini, ARG_MISSING);
    l.miss = strcmp(m, "skip") == 0    ? MISSING_SKIP
             : strcmp(m, "error") == 0 ? MISSING_ERROR
                                       : MISSING_EMPTY;
    if (*m && strcmp(m, "empty") != 0 && strcmp(m, "skip") != 0 && strcmp(m, "error") != 0)
        return sl_init_fail(ini, SL_EINVAL,
                            "missing_component_behavior \"%s\" is not \"\", \"empty\", \"skip\" "
                            "or \"error\"",
                            m);
    if (np == 0)
        return sl_init_fail(ini, SL_EINVAL, "paths is empty");
    if (ni && ni != np)
        return sl_init_fail(ini, SL_EINVAL,
                            "paths has %d archives but index_paths has %d: one index per "
                            "archive, or none",
                            np, ni);
    for (int o = 0; o < ne; o++)
        if (!*l.ext[o])
            return sl_init_fail(ini, SL_EINVAL, "ext[%d] is empty", o);
    if (!(r->paths = sl__calloc((size_t)np, sizeof *r->paths)) ||
        !(l.cur = sl__malloc((size_t)r->num_out * sizeof *l.cur)))
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    r->num_files = np;
    sl_status st = SL_OK;
    for (int i = 0; st == SL_OK && i < np; i++) {
        if (!(r->paths[i] = sl__strdup(paths[i]))) {
            st = sl_init_fail(ini, SL_ENOMEM, "out of memory");
            break;
        }
        int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
        struct stat sb;
        if (fd < 0 || fstat(fd, &sb) != 0) {
            st = io_fail(ini, "paths", paths[i]);
            if (fd >= 0)
                close(fd);
            break;
        }
        l.file = i;
        l.where = paths[i];
        l.open = false;
        st = ni ? read_index(&l, idx[i], (int64_t)sb.st_size) : scan_tar(&l, fd, sb.st_size);
        if (st == SL_OK)
            st = flush_sample(&l);
        close(fd);
    }
    sl__free(l.cur);
    if (st == SL_OK && r->n == 0)
        st = sl_init_fail(ini, SL_ENOTFOUND, "no samples in paths (%d archive%s)%s", np,
                          np == 1 ? "" : "s",
                          l.miss == MISSING_SKIP ? " with every extension of ext" : "");
    return st;
}

static void fini(void *state)
{
    reader *r = state;
    if (!r)
        return;
    for (int i = 0; r->paths && i < r->num_files; i++)
        sl__free(r->paths[i]);
    sl__free(r->paths);
    sl__free(r->dtypes);
    sl__free(r->file);
    sl__free(r->slot);
    sl__cursor_fini(&r->cur);
    sl__free(r);
}

static sl_status init(sl_op_init *ini, void **state)
{
    reader *r = sl__calloc(1, sizeof *r);
    if (!r)
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    sl_status st = sl__cursor_config(ini, &cursor_args, &r->cur);
    r->num_out = sl_init_num_outputs(ini);
    if (st == SL_OK && !(r->dtypes = sl__calloc((size_t)r->num_out + 1, sizeof *r->dtypes)))
        st = sl_init_fail(ini, SL_ENOMEM, "out of memory");
    if (st == SL_OK) {
        int nd = 0;
        const char *const *d = NULL;
        if (sl_init_arg_is_set(ini, ARG_DTYPES))
            d = sl_init_arg_strs(ini, ARG_DTYPES, &nd);
        if (d && nd != r->num_out && nd != 1)
            st = sl_init_fail(ini, SL_EINVAL, "dtypes has %d entries but ext has %d", nd,
                              r->num_out);
        for (int o = 0; st == SL_OK && o < r->num_out; o++) {
            r->dtypes[o] = d ? sl_dtype_from_name(d[nd == 1 ? 0 : o]) : SL_DTYPE_UINT8;
            if (r->dtypes[o] == SL_DTYPE_INVALID)
                st = sl_init_fail(ini, SL_EINVAL, "dtypes[%d] \"%s\" is not a type", o,
                                  d[nd == 1 ? 0 : o]);
        }
    }
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

static sl_status setup(sl_ctx *ctx)
{
    reader *r = sl_ctx_state(ctx);
    int64_t *idx = sl_ctx_iter_data(ctx);
    for (int o = 0; o < r->num_out; o++)
        sl_ctx_set_output(ctx, o, r->dtypes[o], 1, "");
    for (int i = 0, bs = sl_ctx_batch_size(ctx); i < bs; i++) {
        idx[i] = sl__cursor_next(&r->cur);
        for (int o = 0; o < r->num_out; o++)
            sl_ctx_set_source(ctx, o, i, r->paths[r->file[idx[i]]]);
    }
    return SL_OK;
}

static sl_status setup_sample(sl_ctx *ctx, int sample)
{
    const reader *r = sl_ctx_state(ctx);
    int64_t k = ((const int64_t *)sl_ctx_iter_data(ctx))[sample];
    for (int o = 0; o < r->num_out; o++) {
        const member *m = &r->slot[k * r->num_out + o];
        int64_t size = m->offset < 0 ? 0 : m->size, es = (int64_t)sl_dtype_size(r->dtypes[o]);
        if (size % es)
            return sl_fail(ctx, SL_ECORRUPT,
                           "member at offset %lld for output %d: %lld bytes is not a whole "
                           "number of %s elements",
                           (long long)m->offset, o, (long long)size, sl_dtype_name(r->dtypes[o]));
        int64_t n = size / es;
        sl_ctx_set_shape(ctx, o, sample, &n);
    }
    return SL_OK;
}

static sl_status run_sample(sl_ctx *ctx, int sample)
{
    const reader *r = sl_ctx_state(ctx);
    int64_t k = ((const int64_t *)sl_ctx_iter_data(ctx))[sample];
    int fd = -1;
    char buf[128];
    sl_status st = SL_OK;
    for (int o = 0; st == SL_OK && o < r->num_out; o++) {
        const member *m = &r->slot[k * r->num_out + o];
        if (m->offset < 0 || m->size == 0)
            continue;
        if (fd < 0 && (fd = open(r->paths[r->file[k]], O_RDONLY | O_CLOEXEC)) < 0)
            return sl_fail(ctx, SL_EIO, "cannot open file: %s", strerror_r(errno, buf, sizeof buf));
        uint8_t *dst = sl_ctx_output_data(ctx, o, sample);
        for (int64_t done = 0; done < m->size;) {
            ssize_t got =
                pread(fd, dst + done, (size_t)(m->size - done), (off_t)(m->offset + done));
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0) {
                st = sl_fail(ctx, SL_EIO, "member at offset %lld: read %lld of its %lld bytes: %s",
                             (long long)m->offset, (long long)done, (long long)m->size,
                             got < 0 ? strerror_r(errno, buf, sizeof buf)
                                     : "the archive is shorter than its index or headers say");
                break;
            }
            done += got;
        }
    }
    if (fd >= 0)
        close(fd);
    return st;
}

SL__CURSOR_READER(reader, cur)

static const sl_io_def outputs[] = {
    {"components", "One output per entry of ext: the member's bytes as 1-D of its dtype (uint8 "
                   "by default); empty when the sample has none and missing_component_behavior "
                   "is \"empty\"."},
};

static const sl_arg_def args[] = {
    [ARG_PATHS] = {.name = "paths",
                   .type = SL_ARG_STRINGS,
                   .flags = SL_ARG_SCALAR_OK,
                   .doc = "The tar archives (WebDataset shards), read in this order."},
    [ARG_INDEX_PATHS] = {.name = "index_paths",
                         .type = SL_ARG_STRINGS,
                         .flags = SL_ARG_SCALAR_OK,
                         .def = "[]",
                         .doc = "Index files, one per archive (DALI's wds2idx format; made by "
                                "`sluice wds-index`). Default: the archives' tar headers are "
                                "read at build."},
    [ARG_EXT] = {.name = "ext",
                 .type = SL_ARG_STRINGS,
                 .flags = SL_ARG_SCALAR_OK,
                 .doc = "One output per entry: the extension(s) of the member that fills it, "
                        "alternatives separated by ';' (\"jpg;png\")."},
    [ARG_MISSING] = {.name = "missing_component_behavior",
                     .type = SL_ARG_STRING,
                     .def = "\"\"",
                     .doc = "A sample without a member for some output: \"\" or \"empty\" gives an "
                            "empty output, \"skip\" leaves the sample out, \"error\" fails the "
                            "build."},
    [ARG_DTYPES] = {.name = "dtypes",
                    .type = SL_ARG_STRINGS,
                    .flags = SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK,
                    .doc = "Per output the element type the bytes are read as (a member's size "
                           "must be a multiple of it). Default: uint8."},
    [ARG_CASE_SENSITIVE] = {.name = "case_sensitive_extensions",
                            .type = SL_ARG_BOOL,
                            .def = "true",
                            .doc = "Match ext case-sensitively."},
    SL__CURSOR_ARG_DEFS,
};

const sl_op_def sl_op_readers_webdataset = {
    .name = "readers.webdataset",
    .doc = "Reads WebDataset samples from tar archives, one output per extension group.\n"
           "\n"
           "A sample is a run of consecutive regular members sharing a key: the member's name "
           "up to the first '.' of its last path component (the rest is its extension). Members "
           "without a key (hidden files) or extension belong to no sample. Tar headers (ustar, "
           "pax path records, GNU long names) are parsed by sluice with every checksum and size "
           "checked; or the samples come from index files (`sluice wds-index`, DALI's wds2idx "
           "format). Epoch order, sharding and padding are readers.file's.",
    .outputs = outputs,
    .num_outputs = 1,
    .num_outputs_arg = "ext",
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
