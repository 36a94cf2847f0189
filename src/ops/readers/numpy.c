/* readers.numpy: reads NumPy .npy arrays (C or Fortran order, bool/int/uint/float dtypes),
 * whole or a region of interest, from a directory tree, a list file or a list of paths, one
 * epoch after another, optionally shuffled and sharded (readers/reader.h).
 *
 * Exports: sl_op_readers_numpy (listed in src/ops/ops.def).
 *
 * Invariant: after init the file table never changes. Only setup — serial, iterations in order
 * (SL_OP_STATEFUL) — touches the cursor and the header cache: it picks the samples, reads and
 * parses their headers (a small pread each; the parser is npy.c), checks that the batch agrees
 * on dtype and rank, places the region of interest (the slice window helper, so the ROI
 * arguments mean what slice's do) and writes it all into the iteration's data, which is all
 * run_sample reads. run_sample preads only the rows of the region that lie inside the array,
 * (one pread per contiguous run, or one for the span of runs lying close together: at most 4
 * times the bytes wanted), then transposes (Fortran order), byte-swaps (big-endian) and pads
 * (policy "pad") in memory.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nftw */
#endif

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/op.h"

#include "core/core.h"
#include "ops/readers/npy.h"
#include "ops/readers/reader.h"
#include "ops/tensor/slice_window.h"
#include "ops/tensor/tensor.h"

enum {
    ARG_FILE_ROOT,
    ARG_FILE_LIST,
    ARG_FILES,
    ARG_FILE_FILTER,
    ARG_ROI_START,
    ARG_REL_ROI_START,
    ARG_ROI_END,
    ARG_REL_ROI_END,
    ARG_ROI_SHAPE,
    ARG_REL_ROI_SHAPE,
    ARG_ROI_AXES,
    ARG_OOB_POLICY,
    ARG_FILL_VALUE,
    ARG_CACHE_HEADER,
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

/* The ROI arguments as the slice window helper reads them; roi_axes unset means all axes. */
static const sl__slice_args roi_args = {.axes = ARG_ROI_AXES,
                                        .axis_names = -1,
                                        .normalized_anchor = -1,
                                        .normalized_shape = -1,
                                        .start = ARG_ROI_START,
                                        .rel_start = ARG_REL_ROI_START,
                                        .end = ARG_ROI_END,
                                        .rel_end = ARG_REL_ROI_END,
                                        .shape = ARG_ROI_SHAPE,
                                        .rel_shape = ARG_REL_ROI_SHAPE,
                                        .anchor_input = 0,
                                        .all_axes_default = true};

typedef struct reader {
    char **paths; /* sample k's file; immutable after init */
    int64_t n, cap;
    sl__npy_header *cache; /* with cache_header_information: headers parsed so far (setup only) */
    bool *cached;
    sl__cursor cur; /* setup only */
} reader;

/* What setup hands run_sample, per sample. */
typedef struct sample {
    int64_t k;
    sl__npy_header h;
    int64_t anchor[SL_MAX_NDIM], out[SL_MAX_NDIM]; /* the window, after the policy */
} sample;

/* ---- the file table ---------------------------------------------------------------------- */

static bool add_path(reader *r, char *path)
{
    if (!path)
        return false;
    if (r->n == r->cap) {
        int64_t cap = r->cap ? 2 * r->cap : 64;
        char **v = sl__realloc(r->paths, (size_t)cap * sizeof *v);
        if (!v) {
            sl__free(path);
            return false;
        }
        r->paths = v;
        r->cap = cap;
    }
    r->paths[r->n++] = path;
    return true;
}

static char *join(const char *dir, const char *rel)
{
    if (!dir || !*dir || rel[0] == '/')
        return sl__strdup(rel);
    size_t dl = strlen(dir), rl = strlen(rel);
    bool slash = dir[dl - 1] != '/';
    char *s = sl__malloc(dl + slash + rl + 1);
    if (s) {
        memcpy(s, dir, dl);
        if (slash)
            s[dl] = '/';
        memcpy(s + dl + slash, rel, rl + 1);
    }
    return s;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* nftw has no user pointer: the walk's state, one walk per thread at a time. */
static _Thread_local struct walk {
    reader *r;
    const char *filter;
    bool oom;
} walk;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    if (type == FTW_F && S_ISREG(st->st_mode) && fnmatch(walk.filter, path + ftw->base, 0) == 0 &&
        !add_path(walk.r, sl__strdup(path))) {
        walk.oom = true;
        return 1;
    }
    return 0;
}

/* file_root alone: every regular file below it (recursively, symlinks followed, each
 * directory once) whose name matches file_filter, sorted by path. */
static sl_status list_tree(sl_op_init *ini, reader *r, const char *root)
{
    walk = (struct walk){.r = r, .filter = sl_init_arg_str(ini, ARG_FILE_FILTER)};
    struct stat st;
    if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode))
        return sl_init_fail(ini, SL_ENOTFOUND, "file_root \"%s\" is not a directory", root);
    int rc = nftw(root, visit, 32, 0);
    if (walk.oom)
        return sl_init_fail(ini, SL_ENOMEM, "out of memory while listing files");
    if (rc != 0)
        return sl_init_fail(ini, SL_EIO, "cannot list file_root \"%s\": %s", root, strerror(errno));
    if (r->n > 1)
        qsort(r->paths, (size_t)r->n, sizeof *r->paths, cmp_str);
    if (r->n == 0)
        return sl_init_fail(ini, SL_ENOTFOUND, "file_root \"%s\": no file matches \"%s\"", root,
                            walk.filter);
    return SL_OK;
}

/* file_list: one path per line, relative to file_root (or the list's directory). */
static sl_status list_file(sl_op_init *ini, reader *r, const char *list, const char *root)
{
    FILE *f = fopen(list, "r");
    if (!f)
        return sl_init_fail(ini, errno == ENOENT ? SL_ENOTFOUND : SL_EIO, "file_list \"%s\": %s",
                            list, strerror(errno));
    char *line = NULL, *dir = NULL;
    size_t cap = 0;
    sl_status st = SL_OK;
    if (!root) {
        const char *slash = strrchr(list, '/');
        dir = slash ? sl__strdup(list) : NULL;
        if (dir)
            dir[slash - list + (slash == list)] = '\0';
        root = dir;
    }
    ssize_t len;
    while (st == SL_OK && (len = getline(&line, &cap, f)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' ' ||
                           line[len - 1] == '\t'))
            line[--len] = '\0';
        if (len > 0 && !add_path(r, join(root, line)))
            st = sl_init_fail(ini, SL_ENOMEM, "out of memory while listing files");
    }
    fclose(f);
    free(line);
    sl__free(dir);
    if (st == SL_OK && r->n == 0)
        st = sl_init_fail(ini, SL_ENOTFOUND, "file_list \"%s\" lists no files", list);
    return st;
}

static sl_status list_samples(sl_op_init *ini, reader *r)
{
    bool has_list = sl_init_arg_is_set(ini, ARG_FILE_LIST);
    bool has_files = sl_init_arg_is_set(ini, ARG_FILES);
    const char *root =
        sl_init_arg_is_set(ini, ARG_FILE_ROOT) ? sl_init_arg_str(ini, ARG_FILE_ROOT) : NULL;
    if (has_list && has_files)
        return sl_init_fail(ini, SL_EINVAL, "give either file_list or files, not both");
    if (has_list)
        return list_file(ini, r, sl_init_arg_str(ini, ARG_FILE_LIST), root);
    if (has_files) {
        int n = 0;
        const char *const *files = sl_init_arg_strs(ini, ARG_FILES, &n);
        if (n == 0)
            return sl_init_fail(ini, SL_EINVAL, "files is empty");
        for (int i = 0; i < n; i++)
            if (!add_path(r, join(root, files[i])))
                return sl_init_fail(ini, SL_ENOMEM, "out of memory");
        return SL_OK;
    }
    if (root)
        return list_tree(ini, r, root);
    return sl_init_fail(ini, SL_EINVAL, "one of file_root, file_list or files is required");
}

/* ---- init / fini ------------------------------------------------------------------------ */

static void fini(void *state)
{
    reader *r = state;
    if (!r)
        return;
    for (int64_t k = 0; k < r->n; k++)
        sl__free(r->paths[k]);
    sl__free(r->paths);
    sl__free(r->cache);
    sl__free(r->cached);
    sl__cursor_fini(&r->cur);
    sl__free(r);
}

static sl_status check_roi_args(sl_op_init *ini)
{
    if (sl_init_arg_is_set(ini, ARG_ROI_START) && sl_init_arg_is_set(ini, ARG_REL_ROI_START))
        return sl_init_fail(ini, SL_EINVAL, "roi_start and rel_roi_start are mutually exclusive");
    if (sl_init_arg_is_set(ini, ARG_ROI_END) + sl_init_arg_is_set(ini, ARG_REL_ROI_END) +
            sl_init_arg_is_set(ini, ARG_ROI_SHAPE) + sl_init_arg_is_set(ini, ARG_REL_ROI_SHAPE) >
        1)
        return sl_init_fail(ini, SL_EINVAL,
                            "roi_end, rel_roi_end, roi_shape and rel_roi_shape are mutually "
                            "exclusive");
    return SL_OK;
}

static sl_status init(sl_op_init *ini, void **state)
{
    reader *r = sl__calloc(1, sizeof *r);
    if (!r)
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    sl_status st = check_roi_args(ini);
    if (st == SL_OK)
        st = sl__cursor_config(ini, &cursor_args, &r->cur);
    if (st == SL_OK)
        st = list_samples(ini, r);
    if (st == SL_OK && sl_init_arg_bool(ini, ARG_CACHE_HEADER)) {
        r->cache = sl__calloc((size_t)r->n, sizeof *r->cache);
        r->cached = sl__calloc((size_t)r->n, sizeof *r->cached);
        if (!r->cache || !r->cached)
            st = sl_init_fail(ini, SL_ENOMEM, "out of memory");
    }
    if (st == SL_OK)
        st = sl__cursor_start(ini, &r->cur, r->n);
    if (st != SL_OK) {
        fini(r);
        return st;
    }
    *state = r;
    return SL_OK;
}

/* ---- setup: headers and windows ---------------------------------------------------------- */

static sl_status read_header(sl_ctx *ctx, const char *path, sl__npy_header *h)
{
    uint8_t small[1024], *buf = small;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sl_fail(ctx, errno == ENOENT ? SL_ENOTFOUND : SL_EIO, "cannot open file: %s",
                       strerror(errno));
    sl_status st = SL_OK;
    struct stat sb;
    char err[256];
    int64_t need = sizeof small, have = 0;
    if (fstat(fd, &sb) != 0) {
        st = sl_fail(ctx, SL_EIO, "cannot stat file: %s", strerror(errno));
        goto done;
    }
    for (int tries = 0; tries < 2; tries++) {
        if (need > (int64_t)sizeof small && !(buf = sl__malloc((size_t)need))) {
            st = sl_fail(ctx, SL_ENOMEM, "out of memory for a .npy header");
            goto done;
        }
        have = need < (int64_t)sb.st_size ? need : (int64_t)sb.st_size;
        if ((st = sl__reader_pread(ctx, fd, buf, have, 0)) != SL_OK)
            goto done;
        int64_t r = sl__npy_parse(buf, (size_t)have, h, err, sizeof err);
        if (r == 0)
            break;
        if (r < 0 || r <= have || r > (int64_t)sb.st_size) {
            st = r < 0 ? sl_fail(ctx, SL_ECORRUPT, "%s", err)
                       : sl_fail(ctx, SL_ECORRUPT,
                                 "invalid .npy header: the file (%lld bytes) ends inside its "
                                 "header (%lld bytes)",
                                 (long long)sb.st_size, (long long)r);
            goto done;
        }
        need = r;
    }
    if (h->offset + h->nbytes > (int64_t)sb.st_size || h->nbytes > INT64_MAX - h->offset)
        st = sl_fail(ctx, SL_ECORRUPT,
                     "truncated .npy file: the array needs %lld bytes from offset %lld, the file "
                     "has %lld",
                     (long long)h->nbytes, (long long)h->offset, (long long)sb.st_size);
done:
    if (buf != small)
        sl__free(buf);
    close(fd);
    return st;
}

static sl_status sample_header(sl_ctx *ctx, reader *r, int64_t k, sl__npy_header *h)
{
    if (r->cache && r->cached[k]) {
        *h = r->cache[k];
        return SL_OK;
    }
    sl_status st = read_header(ctx, r->paths[k], h);
    if (st == SL_OK && r->cache) {
        r->cache[k] = *h;
        r->cached[k] = true;
    }
    return st;
}

/* True when sample i asks for a region: some ROI coordinate argument is given with values
 * (DALI reads empty lists, e.g. roi_start=[] with roi_axes=[], as the whole array). */
static bool has_roi(sl_ctx *ctx, int i)
{
    const int named[] = {ARG_ROI_START,   ARG_REL_ROI_START, ARG_ROI_END,
                         ARG_REL_ROI_END, ARG_ROI_SHAPE,     ARG_REL_ROI_SHAPE};
    for (int k = 0; k < 6; k++)
        if (sl_ctx_arg_is_set(ctx, named[k]) && sl_ctx_arg_floats(ctx, named[k], i, NULL, 0) > 0)
            return true;
    return false;
}

static sl_status place_window(sl_ctx *ctx, int i, sample *s)
{
    const sl__npy_header *h = &s->h;
    for (int d = 0; d < h->ndim; d++)
        s->anchor[d] = 0, s->out[d] = h->shape[d];
    if (!has_roi(ctx, i))
        return SL_OK;
    sl_status st = sl__slice_window(ctx, &roi_args, i, h->ndim, h->shape, "", s->anchor, s->out);
    if (st != SL_OK)
        return st;
    sl__oob policy = sl__oob_parse(sl_ctx_arg_str(ctx, ARG_OOB_POLICY));
    if (!sl__oob_apply(policy, h->ndim, h->shape, s->anchor, s->out)) {
        char a[160], b[160], c[160];
        return sl_fail(ctx, SL_EINVAL,
                       "the region of interest reaches outside the array with "
                       "out_of_bounds_policy \"error\": array shape %s, roi start %s, roi "
                       "shape %s",
                       sl__shape_str(a, sizeof a, h->shape, h->ndim),
                       sl__shape_str(b, sizeof b, s->anchor, h->ndim),
                       sl__shape_str(c, sizeof c, s->out, h->ndim));
    }
    return SL_OK;
}

static sl_status setup(sl_ctx *ctx)
{
    reader *r = sl_ctx_state(ctx);
    sample *ss = sl_ctx_iter_data(ctx);
    int bs = sl_ctx_batch_size(ctx);
    /* Declared twice: first so that errors name the sample's file, then with the dtype and
     * rank the headers give. */
    sl_ctx_set_output(ctx, 0, SL_DTYPE_UINT8, 0, "");
    for (int i = 0; i < bs; i++) {
        ss[i].k = sl__cursor_next(&r->cur);
        sl_ctx_set_source(ctx, 0, i, r->paths[ss[i].k]);
    }
    sl_status st = SL_OK;
    for (int i = 0; i < bs && st == SL_OK; i++) {
        sl_ctx_focus_sample(ctx, i);
        st = sample_header(ctx, r, ss[i].k, &ss[i].h);
        if (st == SL_OK && i > 0 &&
            (ss[i].h.dtype != ss[0].h.dtype || ss[i].h.ndim != ss[0].h.ndim))
            st = sl_fail(ctx, SL_EINVAL,
                         "Inconsistent data: all samples in the batch must have the same "
                         "dtype and number of dimensions; this file holds %s with %d "
                         "dimensions, sample 0 (\"%s\") %s with %d",
                         sl_dtype_name(ss[i].h.dtype), ss[i].h.ndim, r->paths[ss[0].k],
                         sl_dtype_name(ss[0].h.dtype), ss[0].h.ndim);
        if (st == SL_OK)
            st = place_window(ctx, i, &ss[i]);
    }
    sl_ctx_focus_sample(ctx, -1);
    if (st != SL_OK || bs == 0)
        return st;
    sl_ctx_set_output(ctx, 0, ss[0].h.dtype, ss[0].h.ndim, "");
    for (int i = 0; i < bs; i++) {
        sl_ctx_set_source(ctx, 0, i, r->paths[ss[i].k]);
        sl_ctx_set_shape(ctx, 0, i, ss[i].out);
    }
    return SL_OK;
}

/* ---- run: read the region ---------------------------------------------------------------- */

/* Runs of a box: `run` contiguous bytes at base + first + the offsets idx walks. */
typedef struct runs {
    int64_t stride[SL_MAX_NDIM + 1]; /* bytes per step of each axis; [ndim]: the element */
    int64_t run, first, span, count; /* span: first run's start to the last's end */
    int outer;                       /* axes 0..outer-1 step between runs */
} runs;

static void plan_runs(runs *r, size_t esize, int ndim, const int64_t *S, const int64_t *lo,
                      const int64_t *hi)
{
    r->stride[ndim] = (int64_t)esize;
    for (int d = ndim - 1; d >= 0; d--)
        r->stride[d] = r->stride[d + 1] * S[d];
    int j = ndim; /* axes j.. are covered whole; axis j-1 is the run's outer axis */
    while (j > 0 && lo[j - 1] == 0 && hi[j - 1] == S[j - 1])
        j--;
    r->run = j > 0 ? (hi[j - 1] - lo[j - 1]) * r->stride[j] : r->stride[0];
    r->outer = j > 0 ? j - 1 : 0;
    r->first = j > 0 ? lo[j - 1] * r->stride[j] : 0;
    int64_t last = r->first;
    r->count = 1;
    for (int d = 0; d < r->outer; d++) {
        r->first += lo[d] * r->stride[d + 1];
        last += (hi[d] - 1) * r->stride[d + 1];
        r->count *= hi[d] - lo[d];
    }
    r->span = last + r->run - r->first;
}

/* Rows closer than this are read in one pread of their whole span (and copied out), when the
 * span is at most 4 times the bytes wanted: fewer system calls for a slightly larger read. */
#define COALESCE_BYTES (1 << 20)

/* Reads the box [lo, hi) of an array stored in C order with extents S (ndim axes, esize-byte
 * elements, data at `base`) into dst, densely in C order: one pread per run of contiguous
 * bytes (the trailing axes the box covers whole merge into one run), or one for all runs when
 * they lie close together (scratch buffer 1 holds the span). */
static sl_status read_box(sl_ctx *ctx, int fd, int64_t base, size_t esize, int ndim,
                          const int64_t *S, const int64_t *lo, const int64_t *hi, uint8_t *dst)
{
    runs r;
    plan_runs(&r, esize, ndim, S, lo, hi);
    const uint8_t *span = NULL;
    if (r.count > 1 && r.span <= COALESCE_BYTES && r.span <= 4 * r.run * r.count) {
        uint8_t *buf = sl_ctx_scratch_n(ctx, 1, (size_t)r.span);
        sl_status st = buf ? sl__reader_pread(ctx, fd, buf, r.span, base + r.first) : SL_OK;
        if (st != SL_OK)
            return st;
        span = buf; /* NULL (no memory for it): one pread per run instead */
    }
    int64_t idx[SL_MAX_NDIM];
    for (int d = 0; d < r.outer; d++)
        idx[d] = lo[d];
    for (;;) {
        int64_t off = r.first;
        for (int d = 0; d < r.outer; d++)
            off += (idx[d] - lo[d]) * r.stride[d + 1];
        if (span)
            memcpy(dst, span + (off - r.first), (size_t)r.run);
        else {
            sl_status st = sl__reader_pread(ctx, fd, dst, r.run, base + off);
            if (st != SL_OK)
                return st;
        }
        dst += r.run;
        int d = r.outer - 1;
        while (d >= 0 && ++idx[d] == hi[d])
            idx[d] = lo[d], d--;
        if (d < 0)
            return SL_OK;
    }
}

static void byteswap(uint8_t *p, int64_t n, size_t esize)
{
    for (int64_t e = 0; e < n; e++, p += esize)
        for (size_t a = 0, b = esize - 1; a < b; a++, b--) {
            uint8_t t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* A shape with a zero extent holds no element, whatever the product of its other extents: an
 * output region padded around an empty array ((2, 333300000000000, 23330, 0, ...): issue 15,
 * fuzz target npy) overflowed int64 before reaching the zero. Without a zero extent the product
 * is an allocated sample's element count, which fits. */
static int64_t numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        if (shape[d] == 0)
            return 0;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    return n;
}

/* The box of the window inside the array, read into dst in C order (transposed from Fortran
 * order through tmp, which has room for the box). */
static sl_status read_region(sl_ctx *ctx, int fd, const sample *s, const int64_t *lo,
                             const int64_t *hi, uint8_t *dst, uint8_t *tmp)
{
    const sl__npy_header *h = &s->h;
    size_t es = sl_dtype_size(h->dtype);
    int nd = h->ndim;
    int64_t box[SL_MAX_NDIM];
    for (int d = 0; d < nd; d++)
        box[d] = hi[d] - lo[d];
    sl_status st;
    if (!h->fortran_order) {
        st = read_box(ctx, fd, h->offset, es, nd, h->shape, lo, hi, dst);
    } else {
        /* A Fortran array is the C array of the reversed axes. */
        int64_t rS[SL_MAX_NDIM] = {0}, rlo[SL_MAX_NDIM] = {0}, rhi[SL_MAX_NDIM] = {0},
                stride[SL_MAX_NDIM];
        for (int d = 0; d < nd; d++)
            rS[d] = h->shape[nd - 1 - d], rlo[d] = lo[nd - 1 - d], rhi[d] = hi[nd - 1 - d];
        st = read_box(ctx, fd, h->offset, es, nd, rS, rlo, rhi, tmp);
        int64_t acc = 1;
        for (int d = 0; d < nd; d++)
            stride[d] = acc, acc *= box[d];
        if (st == SL_OK)
            sl__gather(dst, tmp, es, nd, box, stride);
    }
    if (st == SL_OK && h->swap)
        byteswap(dst, numel(nd, box), es);
    return st;
}

static sl_status run_sample(sl_ctx *ctx, int i)
{
    const reader *r = sl_ctx_state(ctx);
    const sample *s = (const sample *)sl_ctx_iter_data(ctx) + i;
    const sl__npy_header *h = &s->h;
    int nd = h->ndim;
    size_t es = sl_dtype_size(h->dtype);
    uint8_t *out = sl_ctx_output_data(ctx, 0, i);
    int64_t lo[SL_MAX_NDIM], hi[SL_MAX_NDIM];
    bool inside = true;
    for (int d = 0; d < nd; d++) {
        lo[d] = s->anchor[d] < 0 ? 0 : s->anchor[d];
        hi[d] = s->anchor[d] + s->out[d] > h->shape[d] ? h->shape[d] : s->anchor[d] + s->out[d];
        inside &= lo[d] == s->anchor[d] && hi[d] == s->anchor[d] + s->out[d];
        if (hi[d] < lo[d])
            hi[d] = lo[d];
    }
    int64_t nout = numel(nd, s->out), boxn = 1;
    for (int d = 0; d < nd; d++)
        boxn *= hi[d] - lo[d];
    if (nout == 0)
        return SL_OK;
    /* Scratch: the box (unless it is the output) and Fortran's untransposed copy. */
    size_t boxb = ((size_t)boxn * es + 63) & ~(size_t)63, fill_bytes = 64;
    int64_t box_shape[SL_MAX_NDIM], rel[SL_MAX_NDIM];
    for (int d = 0; d < nd; d++)
        box_shape[d] = hi[d] - lo[d], rel[d] = s->anchor[d] - lo[d];
    sl__window_job job = {.ndim = nd,
                          .in_shape = box_shape,
                          .anchor = rel,
                          .out = out,
                          .out_shape = s->out,
                          .in_type = h->dtype,
                          .out_type = h->dtype,
                          .nfill = 1,
                          .fill_axis = -1};
    size_t need = (inside ? 0 : boxb + fill_bytes + sl__window_scratch_bytes(&job)) +
                  (h->fortran_order ? boxb : 0);
    uint8_t *scratch = need ? sl_ctx_scratch(ctx, need) : NULL;
    if (need && !scratch)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for the region of interest");
    uint8_t *box = inside ? out : scratch, *tmp = inside ? scratch : scratch + boxb;
    sl_status st = SL_OK;
    if (boxn > 0) {
        int fd = open(r->paths[s->k], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return sl_fail(ctx, SL_EIO, "cannot open file: %s", strerror(errno));
        st = read_region(ctx, fd, s, lo, hi, box, tmp);
        close(fd);
    }
    if (st != SL_OK || inside)
        return st;
    /* Pad around the box with fill_value. */
    uint8_t *fill = scratch + boxb + (h->fortran_order ? boxb : 0);
    double fv = sl_ctx_arg_float(ctx, ARG_FILL_VALUE, i);
    sl__convert_get(h->dtype, SL_DTYPE_FLOAT64)(fill, &fv, 1);
    job.in = box;
    job.fill = fill;
    sl__window_copy(&job, fill + fill_bytes);
    return SL_OK;
}

SL__CURSOR_READER(reader, cur)

/* ---- definition ------------------------------------------------------------------------- */

static const sl_io_def outputs[] = {
    {"data", "The array (or its region of interest) in C order, with the file's dtype and "
             "shape; no layout."},
};

#define ROI_COORDS(NAME, TYPE, DOC)                                                                \
    {                                                                                              \
        .name = NAME, .type = TYPE, .doc = DOC, .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR,          \
        .max_len = SL_MAX_NDIM                                                                     \
    }

static const sl_arg_def args[] = {
    [ARG_FILE_ROOT] = {.name = "file_root",
                       .type = SL_ARG_STRING,
                       .flags = SL_ARG_OPTIONAL,
                       .doc = "Directory of the data set. Alone: every file below it (recursively) "
                              "whose name matches file_filter, sorted by path. With file_list or "
                              "files: the directory their relative paths start from."},
    [ARG_FILE_LIST] = {.name = "file_list",
                       .type = SL_ARG_STRING,
                       .flags = SL_ARG_OPTIONAL,
                       .doc = "Text file with one path per line, relative to file_root if given, "
                              "else to the list's directory. Blank lines are ignored."},
    [ARG_FILES] = {.name = "files",
                   .type = SL_ARG_STRINGS,
                   .flags = SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK,
                   .doc = "Explicit list of files (absolute or relative to file_root)."},
    [ARG_FILE_FILTER] = {.name = "file_filter",
                         .type = SL_ARG_STRING,
                         .def = "\"*.npy\"",
                         .doc = "Glob pattern (fnmatch) the file names under file_root must "
                                "match (file_root alone)."},
    [ARG_ROI_START] = ROI_COORDS("roi_start", SL_ARG_INTS,
                                 "Start of the region of interest, absolute, one value per axis "
                                 "of roi_axes; exclusive with rel_roi_start."),
    [ARG_REL_ROI_START] = ROI_COORDS("rel_roi_start", SL_ARG_FLOATS,
                                     "Start of the region as fractions of the extents."),
    [ARG_ROI_END] = ROI_COORDS("roi_end", SL_ARG_INTS,
                               "End (exclusive) of the region, absolute; exclusive with "
                               "rel_roi_end, roi_shape and rel_roi_shape."),
    [ARG_REL_ROI_END] =
        ROI_COORDS("rel_roi_end", SL_ARG_FLOATS, "End of the region as fractions of the extents."),
    [ARG_ROI_SHAPE] = ROI_COORDS("roi_shape", SL_ARG_INTS, "Extents of the region, absolute."),
    [ARG_REL_ROI_SHAPE] = ROI_COORDS("rel_roi_shape", SL_ARG_FLOATS,
                                     "Extents of the region as fractions of the array's."),
    [ARG_ROI_AXES] = {.name = "roi_axes",
                      .type = SL_ARG_INTS,
                      .def = "[]",
                      .max_len = SL_MAX_NDIM,
                      .doc = "Axes (negative from the back) the ROI coordinates refer to, in "
                             "order; [] = all axes."},
    [ARG_OOB_POLICY] = {.name = "out_of_bounds_policy",
                        .type = SL_ARG_STRING,
                        .def = "\"error\"",
                        .choices = "error|pad|trim_to_shape",
                        .doc = "A region reaching outside the array: \"error\" fails the sample, "
                               "\"pad\" fills the outside with fill_value, \"trim_to_shape\" "
                               "clips the region to the array."},
    [ARG_FILL_VALUE] = {.name = "fill_value",
                        .type = SL_ARG_FLOAT,
                        .def = "0.0",
                        .flags = SL_ARG_TENSOR,
                        .doc = "Value of the elements outside the array (policy \"pad\"), "
                               "converted to the array's dtype."},
    [ARG_CACHE_HEADER] = {.name = "cache_header_information",
                          .type = SL_ARG_BOOL,
                          .def = "false",
                          .doc = "Parse each file's header once and keep it (the file must not "
                                 "change while the pipeline runs)."},
    SL__CURSOR_ARG_DEFS,
};

#define NO_EFFECT(name)                                                                            \
    {                                                                                              \
        name, NULL, "readers.numpy reads with pread into host memory; " name " has no effect"      \
    }
static const sl_arg_alias aliases[] = {
    NO_EFFECT("dont_use_mmap"),        NO_EFFECT("use_o_direct"),
    NO_EFFECT("read_ahead"),           NO_EFFECT("lazy_init"),
    NO_EFFECT("register_buffers"),     NO_EFFECT("tensor_init_bytes"),
    NO_EFFECT("prefetch_queue_depth"),
};

const sl_op_def sl_op_readers_numpy = {
    .name = "readers.numpy",
    .doc = "Reads NumPy .npy arrays: from a directory tree filtered by `file_filter`, a list "
           "file, or a list of paths.\n"
           "\n"
           "Each sample is the file's array with its own dtype (bool, int8..int64, uint8..uint64, "
           "float16, float32, float64; others fail with \"Unknown Numpy type string\") and shape, "
           "always in C order: Fortran-order files are transposed, big-endian ones byte-swapped. "
           "A batch must agree on dtype and number of dimensions (\"Inconsistent data\").\n"
           "\n"
           "Region of interest: `roi_start`/`rel_roi_start` and one of `roi_end`/`rel_roi_end`/"
           "`roi_shape`/`rel_roi_shape` on `roi_axes` (default: all axes), meaning what slice's "
           "start/rel_start/end/rel_end/shape/rel_shape mean (relative values are fractions of "
           "the extent, rounded half away from zero). Only the bytes of the region that lie "
           "inside the array are read (pread of contiguous runs). `out_of_bounds_policy` "
           "\"error\" fails a region reaching outside, \"trim_to_shape\" clips it, \"pad\" fills "
           "the outside with `fill_value`.\n"
           "\n"
           "Order, shuffling and sharding as readers.file. Files are read with open/pread, so "
           "dont_use_mmap, use_o_direct, read_ahead, lazy_init, register_buffers and "
           "tensor_init_bytes are accepted and have no effect.",
    .outputs = outputs,
    .num_outputs = 1,
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
    .run_sample = run_sample,
    SL__CURSOR_READER_FNS,
};
