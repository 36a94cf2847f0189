/* readers.file: reads whole files and their integer labels from a class-per-directory tree, a
 * list file or an explicit list, one epoch after another, optionally shuffled and sharded.
 *
 * Exports: sl_op_readers_file (listed in src/ops/ops.def).
 *
 * Invariant: after init the sample table (paths, labels) never changes, so setup_sample and
 * run_sample read it from any thread without locks. Only setup — serial, iterations in order
 * (SL_OP_STATEFUL) — touches the cursor (epoch, position) and the cached permutation; it writes
 * the sample indices it picked into the iteration's data, which is all the later stages read.
 * Files are read with open + pread (no mmap), so a file that shrinks under us is an error, not
 * a SIGBUS.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* FNM_CASEFOLD, GNU strerror_r */
#endif

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/op.h"

#include "core/core.h" /* sl__malloc & co: the library's one (fault-injectable) allocator */
#include "ops/readers/reader.h"

/* Argument indices: the order of `args` below. */
enum {
    ARG_FILE_ROOT,
    ARG_FILE_LIST,
    ARG_FILES,
    ARG_LABELS,
    ARG_FILE_FILTERS,
    ARG_CASE_SENSITIVE_FILTER,
    ARG_RANDOM_SHUFFLE,
    ARG_SEED,
    ARG_SHARD_ID,
    ARG_NUM_SHARDS,
    ARG_STICK_TO_SHARD,
    ARG_PAD_LAST_BATCH,
    ARG_ON_BAD_SAMPLE,
    NUM_ARGS
};

/* Deepest directory nesting below a class directory (guards against symlink loops). */
#define MAX_DEPTH 32

typedef struct strvec {
    char **v; /* owned strings */
    size_t n, cap;
} strvec;

typedef struct reader {
    /* sample table, immutable after init */
    strvec paths;    /* sample k's file, as resolved; also the samples' source strings */
    int32_t *labels; /* sample k's label; capacity labels_cap */
    size_t labels_cap;
    /* the epoch order and shards (readers/reader.h): touched only by setup */
    sl__cursor cur;
} reader;

static const sl__cursor_args cursor_args = {.random_shuffle = ARG_RANDOM_SHUFFLE,
                                            .seed = ARG_SEED,
                                            .shard_id = ARG_SHARD_ID,
                                            .num_shards = ARG_NUM_SHARDS,
                                            .stick_to_shard = ARG_STICK_TO_SHARD,
                                            .pad_last_batch = ARG_PAD_LAST_BATCH};

/* ---- small helpers ---------------------------------------------------------------------- */

static const char *errstr(int e, char *buf, size_t len)
{
    return strerror_r(e, buf, len); /* GNU: returns a static string or buf */
}

static bool strvec_push(strvec *sv, char *s)
{
    if (!s)
        return false;
    if (sv->n == sv->cap) {
        size_t cap = sv->cap ? 2 * sv->cap : 64;
        char **v = sl__realloc(sv->v, cap * sizeof *v);
        if (!v) {
            sl__free(s);
            return false;
        }
        sv->v = v;
        sv->cap = cap;
    }
    sv->v[sv->n++] = s;
    return true;
}

static void strvec_clear(strvec *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        sl__free(sv->v[i]);
    sv->n = 0;
}

static void strvec_free(strvec *sv)
{
    strvec_clear(sv);
    sl__free(sv->v);
    *sv = (strvec){0};
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void strvec_sort(strvec *sv)
{
    if (sv->n > 1)
        qsort(sv->v, sv->n, sizeof *sv->v, cmp_str);
}

/* dir + "/" + rel, or a copy of rel when dir is NULL/empty or rel is absolute. NULL: no memory. */
static char *join(const char *dir, const char *rel)
{
    if (!dir || !*dir || rel[0] == '/')
        return sl__strdup(rel);
    size_t dl = strlen(dir), rl = strlen(rel);
    bool slash = dir[dl - 1] != '/';
    char *s = sl__malloc(dl + slash + rl + 1);
    if (!s)
        return NULL;
    memcpy(s, dir, dl);
    if (slash)
        s[dl] = '/';
    memcpy(s + dl + slash, rel, rl + 1);
    return s;
}

/* Takes ownership of path (freed on failure). */
static bool add_sample(reader *r, char *path, int32_t label)
{
    if (!strvec_push(&r->paths, path))
        return false;
    if (r->labels_cap < r->paths.cap) {
        int32_t *l = sl__realloc(r->labels, r->paths.cap * sizeof *l);
        if (!l) {
            sl__free(r->paths.v[--r->paths.n]);
            return false;
        }
        r->labels = l;
        r->labels_cap = r->paths.cap;
    }
    r->labels[r->paths.n - 1] = label;
    return true;
}

static sl_status no_memory(sl_op_init *ini)
{
    return sl_init_fail(ini, SL_ENOMEM, "out of memory while listing files");
}

/* ---- mode 1: file_root, one class per sub-directory ------------------------------------ */

typedef struct filter {
    const char *const *pat; /* fnmatch patterns; none: every file */
    int n;
    int flags; /* FNM_CASEFOLD unless case_sensitive_filter */
} filter;

static bool filter_match(const filter *f, const char *name)
{
    if (f->n == 0)
        return true;
    for (int i = 0; i < f->n; i++)
        if (fnmatch(f->pat[i], name, f->flags) == 0)
            return true;
    return false;
}

/* 'd' directory, 'f' regular file, 0 anything else or gone (a broken link is skipped). Uses
 * d_type when it is conclusive, so a large tree is listed without a stat per file. */
static char entry_kind(const struct dirent *e, const char *full)
{
    if (e->d_type == DT_DIR)
        return 'd';
    if (e->d_type == DT_REG)
        return 'f';
    struct stat st;
    if ((e->d_type != DT_UNKNOWN && e->d_type != DT_LNK) || stat(full, &st) != 0)
        return 0;
    return S_ISDIR(st.st_mode) ? 'd' : S_ISREG(st.st_mode) ? 'f' : 0;
}

static bool is_dot(const char *name)
{
    return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

static sl_status opendir_fail(sl_op_init *ini, const char *what, const char *path)
{
    int e = errno;
    char buf[128];
    return sl_init_fail(ini, e == ENOENT ? SL_ENOTFOUND : SL_EIO, "%s \"%s\": %s", what, path,
                        errstr(e, buf, sizeof buf));
}

/* Appends to `out`, unsorted, the matching regular files under `dir` (recursively), each as
 * `rel` + "/" + its path below `dir`; `rel` (NULL at the class directory) is `dir`'s own path
 * relative to the class directory. */
static sl_status list_files(sl_op_init *ini, const filter *f, const char *dir, const char *rel,
                            int depth, strvec *out)
{
    if (depth > MAX_DEPTH)
        return sl_init_fail(ini, SL_EINVAL,
                            "directory \"%s\" is nested more than %d levels "
                            "deep below its class directory (a symlink loop?)",
                            dir, MAX_DEPTH);
    DIR *d = opendir(dir);
    if (!d)
        return opendir_fail(ini, "cannot list directory", dir);
    sl_status st = SL_OK;
    struct dirent *e;
    while (st == SL_OK && (e = readdir(d))) {
        if (is_dot(e->d_name))
            continue;
        char *full = join(dir, e->d_name), *sub = join(rel, e->d_name);
        char kind = full && sub ? entry_kind(e, full) : 0;
        if (!full || !sub)
            st = no_memory(ini);
        else if (kind == 'd')
            st = list_files(ini, f, full, sub, depth + 1, out);
        else if (kind == 'f' && filter_match(f, e->d_name)) {
            st = strvec_push(out, sub) ? SL_OK : no_memory(ini);
            sub = NULL;
        }
        sl__free(full);
        sl__free(sub);
    }
    closedir(d);
    return st;
}

/* The sub-directories of root, sorted (strcmp): the classes. */
static sl_status list_classes(sl_op_init *ini, const char *root, strvec *classes)
{
    DIR *d = opendir(root);
    if (!d)
        return opendir_fail(ini, "file_root", root);
    sl_status st = SL_OK;
    struct dirent *e;
    while (st == SL_OK && (e = readdir(d))) {
        if (is_dot(e->d_name))
            continue;
        char *full = join(root, e->d_name);
        if (!full)
            st = no_memory(ini);
        else if (entry_kind(e, full) == 'd' && !strvec_push(classes, sl__strdup(e->d_name)))
            st = no_memory(ini);
        sl__free(full);
    }
    closedir(d);
    strvec_sort(classes);
    return st;
}

static sl_status add_class(sl_op_init *ini, reader *r, const filter *f, const char *cdir,
                           int32_t label, strvec *files)
{
    sl_status st = list_files(ini, f, cdir, NULL, 0, files);
    if (st != SL_OK)
        return st;
    strvec_sort(files);
    for (size_t i = 0; i < files->n; i++)
        if (!add_sample(r, join(cdir, files->v[i]), label))
            return no_memory(ini);
    return SL_OK;
}

static sl_status list_tree(sl_op_init *ini, reader *r, const char *root)
{
    filter f = {.flags = sl_init_arg_bool(ini, ARG_CASE_SENSITIVE_FILTER) ? 0 : FNM_CASEFOLD};
    f.pat = sl_init_arg_strs(ini, ARG_FILE_FILTERS, &f.n);
    strvec classes = {0}, files = {0};
    sl_status st = list_classes(ini, root, &classes);
    for (size_t c = 0; st == SL_OK && c < classes.n; c++) {
        char *cdir = join(root, classes.v[c]);
        st = cdir ? add_class(ini, r, &f, cdir, (int32_t)c, &files) : no_memory(ini);
        strvec_clear(&files);
        sl__free(cdir);
    }
    strvec_free(&files);
    strvec_free(&classes);
    if (st == SL_OK && r->paths.n == 0)
        st = sl_init_fail(ini, SL_ENOTFOUND,
                          "file_root \"%s\": no files matching file_filters "
                          "in its sub-directories (each sub-directory is a class)",
                          root);
    return st;
}

/* ---- mode 2: file_list, lines "path label" ---------------------------------------------- */

/* Parses one line in place; blank lines add nothing. */
static sl_status parse_line(sl_op_init *ini, reader *r, const char *list, long lineno, char *s,
                            const char *base)
{
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = '\0';
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return SL_OK;
    char *tok = end; /* the label: the last whitespace-separated token */
    while (tok > s && !isspace((unsigned char)tok[-1]))
        tok--;
    char *pend = tok;
    while (pend > s && isspace((unsigned char)pend[-1]))
        pend--;
    char *num_end;
    errno = 0;
    long long v = strtoll(tok, &num_end, 10);
    if (pend == s || num_end == tok || *num_end || errno || v < INT32_MIN || v > INT32_MAX)
        return sl_init_fail(ini, SL_ECORRUPT,
                            "file_list \"%s\", line %ld: expected \"<path> "
                            "<integer label>\", got \"%s\"",
                            list, lineno, s);
    *pend = '\0';
    return add_sample(r, join(base, s), (int32_t)v) ? SL_OK : no_memory(ini);
}

/* Paths in the list are relative to file_root when given, else to the list's directory. */
static char *list_base(const char *list, const char *root)
{
    if (root)
        return sl__strdup(root);
    const char *slash = strrchr(list, '/');
    if (!slash)
        return sl__strdup(""); /* the list is in the working directory: paths stay as written */
    if (slash == list)
        return sl__strdup("/");
    char *base = sl__malloc((size_t)(slash - list) + 1);
    if (base) {
        memcpy(base, list, (size_t)(slash - list));
        base[slash - list] = '\0';
    }
    return base;
}

static sl_status list_file(sl_op_init *ini, reader *r, const char *list, const char *root)
{
    char buf[128], *line = NULL, *base = list_base(list, root);
    size_t cap = 0;
    long lineno = 0;
    sl_status st = SL_OK;
    if (!base)
        return no_memory(ini);
    FILE *f = fopen(list, "r");
    if (!f) {
        st = opendir_fail(ini, "file_list", list);
        goto fail;
    }
    while (st == SL_OK && getline(&line, &cap, f) >= 0)
        st = parse_line(ini, r, list, ++lineno, line, base);
    if (st == SL_OK && ferror(f))
        st = sl_init_fail(ini, SL_EIO, "file_list \"%s\": read error: %s", list,
                          errstr(errno, buf, sizeof buf));
    if (st == SL_OK && r->paths.n == 0)
        st = sl_init_fail(ini, SL_ENOTFOUND, "file_list \"%s\" lists no files", list);
    fclose(f);
fail:
    free(line); /* getline's buffer comes from libc */
    sl__free(base);
    return st;
}

/* ---- mode 3: files (+ labels) ----------------------------------------------------------- */

static sl_status list_args(sl_op_init *ini, reader *r, const char *root)
{
    int n = 0, nl = 0;
    const char *const *files = sl_init_arg_strs(ini, ARG_FILES, &n);
    const int64_t *labels = NULL;
    if (sl_init_arg_is_set(ini, ARG_LABELS))
        labels = sl_init_arg_ints(ini, ARG_LABELS, &nl);
    if (labels && nl != n)
        return sl_init_fail(ini, SL_EINVAL,
                            "files has %d entries but labels has %d; they must "
                            "have the same length",
                            n, nl);
    if (n == 0)
        return sl_init_fail(ini, SL_EINVAL, "files is empty");
    for (int i = 0; i < n; i++) {
        int64_t l = labels ? labels[i] : i;
        if (l < INT32_MIN || l > INT32_MAX)
            return sl_init_fail(ini, SL_EINVAL, "labels[%d] = %lld does not fit in int32", i,
                                (long long)l);
        if (!add_sample(r, join(root, files[i]), (int32_t)l))
            return no_memory(ini);
    }
    return SL_OK;
}

/* ---- init / fini ------------------------------------------------------------------------ */

static sl_status list_samples(sl_op_init *ini, reader *r)
{
    bool has_list = sl_init_arg_is_set(ini, ARG_FILE_LIST);
    bool has_files = sl_init_arg_is_set(ini, ARG_FILES);
    const char *root =
        sl_init_arg_is_set(ini, ARG_FILE_ROOT) ? sl_init_arg_str(ini, ARG_FILE_ROOT) : NULL;
    if (has_list && has_files)
        return sl_init_fail(ini, SL_EINVAL, "give either file_list or files, not both");
    if (sl_init_arg_is_set(ini, ARG_LABELS) && !has_files)
        return sl_init_fail(ini, SL_EINVAL, "labels is only used with files");
    if (has_list)
        return list_file(ini, r, sl_init_arg_str(ini, ARG_FILE_LIST), root);
    if (has_files)
        return list_args(ini, r, root);
    if (root)
        return list_tree(ini, r, root);
    return sl_init_fail(ini, SL_EINVAL, "one of file_root, file_list or files is required");
}

static void fini(void *state)
{
    reader *r = state;
    if (!r)
        return;
    strvec_free(&r->paths);
    sl__free(r->labels);
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
        st = sl__cursor_start(ini, &r->cur, (int64_t)r->paths.n);
    if (st == SL_OK)
        st = sl_init_on_bad_sample(ini, ARG_ON_BAD_SAMPLE);
    if (st != SL_OK)
        goto fail;
    *state = r;
    return SL_OK;
fail:
    fini(r);
    return st;
}

/* ---- per iteration ---------------------------------------------------------------------- */

static sl_status setup(sl_ctx *ctx)
{
    reader *r = sl_ctx_state(ctx);
    int64_t *idx = sl_ctx_iter_data(ctx);
    static const int64_t label_shape[1] = {1};
    sl_ctx_set_output(ctx, 0, SL_DTYPE_UINT8, 1, "");
    sl_ctx_set_output(ctx, 1, SL_DTYPE_INT32, 1, "");
    for (int i = 0, bs = sl_ctx_batch_size(ctx); i < bs; i++) {
        idx[i] = sl__cursor_next(&r->cur);
        sl_ctx_set_sample_key(ctx, i, idx[i]); /* the sample cache's key: its index */
        sl_ctx_set_shape(ctx, 1, i, label_shape);
        sl_ctx_set_source(ctx, 0, i, r->paths.v[idx[i]]);
        sl_ctx_set_source(ctx, 1, i, r->paths.v[idx[i]]);
    }
    return SL_OK;
}

static sl_status setup_sample(sl_ctx *ctx, int sample)
{
    const reader *r = sl_ctx_state(ctx);
    const char *path = r->paths.v[((const int64_t *)sl_ctx_iter_data(ctx))[sample]];
    int64_t size = 0;
    sl_status st = sl__reader_file_size(ctx, path, &size);
    if (st == SL_OK)
        sl_ctx_set_shape(ctx, 0, sample, &size);
    return st;
}

static sl_status run_sample(sl_ctx *ctx, int sample)
{
    const reader *r = sl_ctx_state(ctx);
    int64_t k = ((const int64_t *)sl_ctx_iter_data(ctx))[sample];
    *(int32_t *)sl_ctx_output_data(ctx, 1, sample) = r->labels[k];
    int64_t size = sl_ctx_output_shape(ctx, 0, sample)[0];
    return sl__reader_read_file(ctx, r->paths.v[k], sl_ctx_output_data(ctx, 0, sample), size);
}

SL__CURSOR_READER(reader, cur)

/* ---- definition ------------------------------------------------------------------------- */

static const sl_io_def outputs[] = {
    {"data", "The file's bytes, 1-D uint8 (encoded; feed it to decoders.image)."},
    {"label", "The sample's label, int32 of shape (1,)."},
};

static const sl_arg_def args[] = {
    [ARG_FILE_ROOT] =
        {.name = "file_root",
         .type = SL_ARG_STRING,
         .flags = SL_ARG_OPTIONAL,
         .doc = "Directory of the data set. Alone: each sub-directory is a class. With file_list "
                "or files: the directory their relative paths start from."},
    [ARG_FILE_LIST] =
        {.name = "file_list",
         .type = SL_ARG_STRING,
         .flags = SL_ARG_OPTIONAL,
         .doc = "Text file with one `path label` per line; the label is the last "
                "whitespace-separated token, so paths may contain spaces. Relative paths start "
                "from file_root if given, else from the list's directory. Blank lines are "
                "ignored."},
    [ARG_FILES] = {.name = "files",
                   .type = SL_ARG_STRINGS,
                   .flags = SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK,
                   .doc =
                       "Explicit list of files (absolute, relative to file_root, or to the working "
                       "directory)."},
    [ARG_LABELS] = {.name = "labels",
                    .type = SL_ARG_INTS,
                    .flags = SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK | SL_ARG_RANGE,
                    .min = INT32_MIN,
                    .max = INT32_MAX,
                    .doc = "Labels of `files`, one each. Default: the file's index in `files`."},
    [ARG_FILE_FILTERS] =
        {.name = "file_filters",
         .type = SL_ARG_STRINGS,
         .flags = SL_ARG_SCALAR_OK,
         .def = "[\"*.jpg\", \"*.jpeg\", \"*.png\", \"*.bmp\", \"*.tif\", \"*.tiff\", \"*.pnm\", "
                "\"*.ppm\", \"*.pgm\", \"*.pbm\", \"*.jp2\", \"*.webp\"]",
         .doc = "Glob patterns (fnmatch) a file name must match, with file_root alone. An empty "
                "list accepts every file."},
    [ARG_CASE_SENSITIVE_FILTER] = {.name = "case_sensitive_filter",
                                   .type = SL_ARG_BOOL,
                                   .def = "false",
                                   .doc = "Match file_filters case-sensitively."},
    [ARG_RANDOM_SHUFFLE] =
        {.name = "random_shuffle",
         .type = SL_ARG_BOOL,
         .def = "false",
         .doc = "Read each epoch in a fresh random permutation of the whole data set."},
    [ARG_SEED] = {.name = "seed",
                  .type = SL_ARG_INT,
                  .def = "-1",
                  .doc =
                      "Seed of the epoch permutations. -1: a fixed default, NOT derived from the "
                      "pipeline seed, so that every rank of a distributed job draws the same "
                      "permutation."},
    [ARG_SHARD_ID] = {.name = "shard_id",
                      .type = SL_ARG_INT,
                      .def = "0",
                      .flags = SL_ARG_RANGE | SL_ARG_AUTO_RANK,
                      .min = 0,
                      .max = INT32_MAX,
                      .doc = "Which shard this reader reads (its rank), 0 <= shard_id < "
                             "num_shards. \"auto\": the job's rank, from its launcher "
                             "(torchrun, MPI, SLURM or torch.distributed)."},
    [ARG_NUM_SHARDS] = {.name = "num_shards",
                        .type = SL_ARG_INT,
                        .def = "1",
                        .flags = SL_ARG_RANGE | SL_ARG_AUTO_WORLD_SIZE,
                        .min = 1,
                        .max = INT32_MAX,
                        .doc = "Number of shards the data set is split into (the world size). "
                               "\"auto\": the job's world size, from its launcher."},
    [ARG_STICK_TO_SHARD] = {.name = "stick_to_shard",
                            .type = SL_ARG_BOOL,
                            .def = "false",
                            .doc = "Read the same shard every epoch. Default: epoch e reads shard "
                                   "(shard_id + e) mod num_shards."},
    [ARG_PAD_LAST_BATCH] =
        {.name = "pad_last_batch",
         .type = SL_ARG_BOOL,
         .def = "false",
         .doc = "Every shard yields ceil(N / num_shards) samples per epoch, and the epoch's last "
                "batch is filled up; both by repeating the shard's last sample. The next epoch "
                "starts a fresh batch."},
    [ARG_ON_BAD_SAMPLE] =
        {.name = "on_bad_sample",
         .type = SL_ARG_STRING,
         .def = "\"raise\"",
         .choices = "raise|skip|replace",
         .doc = "sluice's addition: what a file that cannot be read (gone, unreadable, not a "
                "regular file) does to its batch, overriding the pipeline's on_bad_sample for "
                "this node: \"raise\" (the batch fails), \"skip\" (the batch is delivered "
                "without the sample) or \"replace\" (the next good sample of the batch takes its "
                "place). Unset: the pipeline's."},
};

const sl_op_def sl_op_readers_file = {
    .name = "readers.file",
    .doc = "Reads whole files with integer labels: a class-per-directory tree, a list file, or a "
           "list of paths.\n"
           "\n"
           "Modes (exactly one): `file_root` alone — each sub-directory of file_root is a class, "
           "labelled by its index in sorted (byte-wise) order; its files, found recursively and "
           "filtered by `file_filters` (case-insensitive unless `case_sensitive_filter`), are "
           "read sorted by their path. `file_list` — lines `path label`. `files` (+ `labels`).\n"
           "\n"
           "Order: without `random_shuffle` the listed order. With it, each epoch is a true "
           "permutation of all N samples (Fisher-Yates) drawn from (`seed`, epoch) — unlike "
           "DALI's shuffle buffer (`initial_fill`), whose output stays close to the sorted order. "
           "When `seed` is -1 the permutation seed is a fixed constant, deliberately not the "
           "pipeline seed: ranks of a distributed job often use different pipeline seeds yet "
           "must agree on the permutation for their shards to stay disjoint.\n"
           "\n"
           "Sharding: shard i of S covers positions `[floor(N*i/S), floor(N*(i+1)/S))` of the "
           "epoch's order; with `stick_to_shard` false epoch e reads shard (shard_id + e) mod S. "
           "Without `pad_last_batch` samples stream on: a batch may end one epoch and begin the "
           "next. `num_shards` > N fails at build.\n"
           "\n"
           "Files are read with open/pread (not mmap), so DALI's dont_use_mmap, read_ahead, "
           "lazy_init, initial_fill, shuffle_after_epoch and prefetch_queue_depth arguments are "
           "not accepted. A file that is missing or unreadable when its iteration runs fails that "
           "iteration with SL_EIO naming the file; the next iteration goes on.",
    .inputs = NULL,
    .min_inputs = 0,
    .max_inputs = 0,
    .outputs = outputs,
    .num_outputs = 2,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_SOURCE | SL_OP_STATEFUL | SL_OP_DETERMINISTIC,
    .iter_bytes_per_sample = sizeof(int64_t),
    .init = init,
    .fini = fini,
    .setup = setup,
    .setup_sample = setup_sample,
    .run_sample = run_sample,
    SL__CURSOR_READER_FNS,
};
