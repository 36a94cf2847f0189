/* test_reader_file: the readers.file operator through the public C API (sl_graph_*,
 * sl_pipeline_*), over a directory tree the test writes into a mkdtemp directory.
 *
 * The tree holds N = 23 samples; the file of sample `id` contains the text "<id>", so every
 * batch tells which samples it holds. Sorted order of the tree = id order:
 *   tree/c0/f00..f03.txt            label 0
 *   tree/c1/f04..f08.txt (+ x.dat)  label 1   (x.dat is filtered out)
 *   tree/c2/f09..f11.txt            label 2
 *   tree/c2_empty/                  label 3   (an empty class still takes its index)
 *   tree/c3/f12..f16.txt, sub/f17   label 4   (files of sub-directories belong to the class)
 *   tree/c4/f18.txt, f19.TXT, f20..f22.txt  label 5 (the filter is case-insensitive)
 *   tree/top.txt                    (not in a class directory: ignored)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp, nftw */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/sluice.h"

#include "core/core.h" /* sl__alloc_fail_after: fault injection */

#define N 23
#define MAX_STREAM 256

static char g_root[64];   /* the mkdtemp directory */
static char g_tree[128];  /* g_root/tree: the file_root */
static char g_rel[N][32]; /* sample id's path relative to the tree */
static int g_label[N];    /* sample id's label */

/* ---- making files ----------------------------------------------------------------------- */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static void mkdir_p(const char *base, const char *rel)
{
    char path[PATH_MAX], *p;
    snprintf(path, sizeof path, "%s/%s", base, rel);
    for (p = path + strlen(base) + 1; (p = strchr(p, '/')); *p++ = '/') {
        *p = '\0';
        mkdir(path, 0755);
    }
    mkdir(path, 0755);
}

static void sample_path(const char *tree, int id, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", tree, g_rel[id]);
}

static void write_sample(const char *tree, int id)
{
    char path[PATH_MAX], text[16];
    sample_path(tree, id, path, sizeof path);
    snprintf(text, sizeof text, "%d", id);
    write_text(path, text);
}

/* Fills g_rel / g_label (the same for every tree) and writes the tree under `tree`. */
static void make_tree(const char *tree)
{
    static const int class_end[] = {4, 9, 12, 12, 18, 23}; /* ids of class c end before */
    static const char *const class_dir[] = {"c0", "c1", "c2", "c2_empty", "c3", "c4"};
    char path[PATH_MAX];
    mkdir(tree, 0755);
    for (int c = 0, id = 0; c < 6; c++) {
        mkdir_p(tree, class_dir[c]);
        for (; id < class_end[c]; id++) {
            const char *fmt = id == 17   ? "%s/sub/f%02d.txt"
                              : id == 19 ? "%s/f%02d.TXT"
                                         : "%s/f%02d.txt";
            snprintf(g_rel[id], sizeof g_rel[id], fmt, class_dir[c], id);
            g_label[id] = c;
        }
    }
    mkdir_p(tree, "c3/sub");
    for (int id = 0; id < N; id++)
        write_sample(tree, id);
    snprintf(path, sizeof path, "%s/c1/x.dat", tree);
    write_text(path, "999");
    snprintf(path, sizeof path, "%s/top.txt", tree);
    write_text(path, "998");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int group_setup(void **state)
{
    (void)state;
    strcpy(g_root, "/tmp/sluice_test_reader_XXXXXX");
    if (!mkdtemp(g_root))
        return -1;
    snprintf(g_tree, sizeof g_tree, "%s/tree", g_root);
    make_tree(g_tree);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return nftw(g_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- pipelines -------------------------------------------------------------------------- */

typedef struct cfg {
    int batch, threads, depth;
    int64_t pipeline_seed;
    bool shuffle, stick, pad;
    int64_t seed; /* the reader's; -1 default */
    int shard_id, num_shards;
} cfg;

static cfg cfg_default(void)
{
    return (cfg){
        .batch = 4, .threads = 2, .depth = 2, .pipeline_seed = 1, .seed = -1, .num_shards = 1};
}

/* A graph with one readers.file node "reader" and outputs reader:0, reader:1. */
static sl_graph *reader_graph(void)
{
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "readers.file", "reader", NULL), SL_OK);
    assert_int_equal(sl_graph_output(g, "reader:0"), SL_OK);
    assert_int_equal(sl_graph_output(g, "reader:1"), SL_OK);
    return g;
}

static void set_reader_args(sl_graph *g, const cfg *c)
{
    assert_int_equal(sl_graph_arg_bool(g, "reader", "random_shuffle", c->shuffle), SL_OK);
    assert_int_equal(sl_graph_arg_bool(g, "reader", "stick_to_shard", c->stick), SL_OK);
    assert_int_equal(sl_graph_arg_bool(g, "reader", "pad_last_batch", c->pad), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "reader", "seed", c->seed), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "reader", "shard_id", c->shard_id), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "reader", "num_shards", c->num_shards), SL_OK);
}

/* Creates and builds a pipeline of g (destroyed here); *status gets the build's result.
 * Returns the pipeline (also on a failed build, to read its error). */
static sl_pipeline *make_pipeline(sl_graph *g, const cfg *c, sl_status *status)
{
    sl_pipeline_options o;
    sl_pipeline *p = NULL;
    sl_pipeline_options_init(&o);
    o.batch_size = c->batch;
    o.num_threads = c->threads;
    o.prefetch_queue_depth = c->depth;
    o.seed = c->pipeline_seed;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    sl_graph_destroy(g);
    *status = sl_pipeline_build(p);
    return p;
}

/* A built pipeline reading g_tree (or `root`) with c's settings and "*.txt" files. */
static sl_pipeline *tree_pipeline(const char *root, const cfg *c)
{
    static const char *const filters[] = {"*.txt"};
    sl_graph *g = reader_graph();
    sl_status st;
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", root), SL_OK);
    assert_int_equal(sl_graph_arg_strs(g, "reader", "file_filters", filters, 1), SL_OK);
    set_reader_args(g, c);
    sl_pipeline *p = make_pipeline(g, c, &st);
    if (st != SL_OK)
        fail_msg("build: %s", sl_pipeline_error(p));
    return p;
}

static int sample_id(const sl_batch *data, int i)
{
    char text[32];
    const int64_t *shape = sl_batch_shape(data, i);
    assert_non_null(shape);
    assert_in_range(shape[0], 1, (int64_t)sizeof text - 1);
    memcpy(text, sl_batch_sample_data(data, i), (size_t)shape[0]);
    text[shape[0]] = '\0';
    return atoi(text);
}

/* Runs one iteration and appends its ids and labels at ids[*n], labels[*n]. */
static void run_one(sl_pipeline *p, int *ids, int *labels, int *n)
{
    sl_status st = sl_pipeline_run(p);
    if (st != SL_OK)
        fail_msg("run: %s: %s", sl_status_name(st), sl_pipeline_error(p));
    assert_int_equal(sl_pipeline_num_outputs(p), 2);
    const sl_batch *data = sl_pipeline_output(p, 0), *label = sl_pipeline_output(p, 1);
    assert_int_equal(sl_batch_dtype(data), SL_DTYPE_UINT8);
    assert_int_equal(sl_batch_ndim(data), 1);
    assert_int_equal(sl_batch_dtype(label), SL_DTYPE_INT32);
    assert_int_equal(sl_batch_ndim(label), 1);
    assert_int_equal(sl_batch_size(data), sl_batch_size(label));
    for (int i = 0; i < sl_batch_size(data); i++) {
        assert_int_equal(sl_batch_shape(label, i)[0], 1);
        assert_true(*n < MAX_STREAM);
        ids[*n] = sample_id(data, i);
        labels[*n] = *(const int32_t *)sl_batch_sample_data(label, i);
        (*n)++;
    }
}

/* Reads at least `want` samples of a tree pipeline, checking each label and source. */
static int stream(sl_pipeline *p, int want, int *ids)
{
    int labels[MAX_STREAM], n = 0;
    while (n < want) {
        int first = n;
        run_one(p, ids, labels, &n);
        for (int i = first; i < n; i++) {
            assert_in_range(ids[i], 0, N - 1);
            assert_int_equal(labels[i], g_label[ids[i]]);
            const char *src = sl_batch_source(sl_pipeline_output(p, 0), i - first);
            assert_non_null(src);
            assert_non_null(strstr(src, g_rel[ids[i]]));
        }
    }
    return n;
}

static bool is_permutation(const int *ids, int n)
{
    int seen[N] = {0};
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= N || seen[ids[i]]++)
            return false;
    return n == N;
}

static const int depths[] = {1, 3};
static const int threads[] = {1, 2};

/* ---- tests ------------------------------------------------------------------------------ */

static void test_labels_follow_sorted_classes(void **state)
{
    (void)state;
    cfg c = cfg_default();
    sl_pipeline *p = tree_pipeline(g_tree, &c);
    int ids[MAX_STREAM];
    int n = stream(p, N + 1, ids); /* labels and sources are checked inside */
    for (int i = 0; i < n; i++)
        assert_int_equal(ids[i], i % N);
    sl_pipeline_destroy(p);
}

static void test_sequential_epochs(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++)
        for (int t = 0; t < 2; t++) {
            cfg c = cfg_default();
            c.depth = depths[d], c.threads = threads[t];
            sl_pipeline *p = tree_pipeline(g_tree, &c);
            int ids[MAX_STREAM];
            int n = stream(p, 4 * N, ids); /* batches of 4 span epoch ends */
            for (int i = 0; i < n; i++)
                assert_int_equal(ids[i], i % N);
            sl_pipeline_destroy(p);
        }
}

/* `epochs` epochs of a shuffled reader: each a permutation, no two equal. */
static void check_shuffled_epochs(const int *ids, int epochs)
{
    for (int e = 0; e < epochs; e++) {
        assert_true(is_permutation(ids + e * N, N));
        for (int f = 0; f < e; f++)
            assert_memory_not_equal(ids + e * N, ids + f * N, N * sizeof *ids);
    }
}

static void test_shuffled_epochs(void **state)
{
    (void)state;
    int first[MAX_STREAM], ids[MAX_STREAM];
    for (int d = 0; d < 2; d++)
        for (int t = 0; t < 2; t++) {
            cfg c = cfg_default();
            c.shuffle = true;
            c.depth = depths[d], c.threads = threads[t];
            c.pipeline_seed = 10 + 2 * d + t; /* must not matter: the reader's seed is -1 */
            sl_pipeline *p = tree_pipeline(g_tree, &c);
            stream(p, 4 * N, d == 0 && t == 0 ? first : ids);
            sl_pipeline_destroy(p);
            check_shuffled_epochs(first, 4);
            if (d || t)
                assert_memory_equal(ids, first, 4 * N * sizeof *ids);
        }
}

static void test_shuffle_seed(void **state)
{
    (void)state;
    int a[MAX_STREAM], b[MAX_STREAM], a2[MAX_STREAM];
    int *out[] = {a, b, a2};
    const int64_t seeds[] = {7, 8, 7};
    for (int k = 0; k < 3; k++) {
        cfg c = cfg_default();
        c.shuffle = true;
        c.seed = seeds[k];
        sl_pipeline *p = tree_pipeline(g_tree, &c);
        stream(p, 2 * N, out[k]);
        sl_pipeline_destroy(p);
    }
    check_shuffled_epochs(a, 2);
    assert_memory_equal(a, a2, 2 * N * sizeof *a);
    assert_memory_not_equal(a, b, N * sizeof *a);
}

/* Shard i of S reads ids[0..len) of its first epoch; the shards must partition 0..N-1. */
static void check_shards_cover(bool shuffle, int S)
{
    int seen[N] = {0}, ids[MAX_STREAM];
    for (int i = 0; i < S; i++) {
        cfg c = cfg_default();
        c.shuffle = shuffle, c.shard_id = i, c.num_shards = S;
        c.pipeline_seed = 100 + i; /* ranks usually differ in pipeline seed */
        sl_pipeline *p = tree_pipeline(g_tree, &c);
        int len = N * (i + 1) / S - N * i / S;
        stream(p, len, ids);
        for (int k = 0; k < len; k++)
            assert_int_equal(seen[ids[k]]++, 0);
        if (!shuffle)
            for (int k = 0; k < len; k++)
                assert_int_equal(ids[k], N * i / S + k);
        sl_pipeline_destroy(p);
    }
    for (int k = 0; k < N; k++)
        assert_int_equal(seen[k], 1);
}

static void test_shards_disjoint_and_cover(void **state)
{
    (void)state;
    for (int S = 1; S <= 5; S++) {
        check_shards_cover(false, S);
        check_shards_cover(true, S);
    }
}

static void sorted_copy(const int *in, int n, int *out)
{
    memcpy(out, in, (size_t)n * sizeof *in);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
            int t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
}

static void test_shard_rotation(void **state)
{
    (void)state;
    const int S = 3, len0 = N / S, len1 = 2 * N / S - N / S;
    int s0[MAX_STREAM], s1[MAX_STREAM], a[MAX_STREAM], b[MAX_STREAM];
    cfg c = cfg_default();
    c.num_shards = S;
    c.shard_id = 1;
    sl_pipeline *p = tree_pipeline(g_tree, &c);
    stream(p, len1, s1);
    sl_pipeline_destroy(p);
    c.shard_id = 0;
    p = tree_pipeline(g_tree, &c);
    stream(p, len0 + len1, s0);
    sl_pipeline_destroy(p);
    /* stick_to_shard=false: shard 0's epoch 1 is shard 1's epoch 0 */
    sorted_copy(s0 + len0, len1, a);
    sorted_copy(s1, len1, b);
    assert_memory_equal(a, b, (size_t)len1 * sizeof *a);
    /* stick_to_shard=true: shard 0's epoch 1 is its epoch 0 again */
    c.stick = true;
    p = tree_pipeline(g_tree, &c);
    stream(p, 2 * len0, s0);
    sl_pipeline_destroy(p);
    assert_memory_equal(s0, s0 + len0, (size_t)len0 * sizeof *s0);
}

/* Reads `nbatches` batches and compares with the expected ids. */
static void expect_batches(const cfg *c, const int *expect, int nbatches)
{
    int ids[MAX_STREAM], labels[MAX_STREAM], n = 0;
    sl_pipeline *p = tree_pipeline(g_tree, c);
    for (int k = 0; k < nbatches; k++)
        run_one(p, ids, labels, &n);
    assert_int_equal(n, nbatches * c->batch);
    for (int i = 0; i < n; i++) {
        if (ids[i] != expect[i])
            fail_msg("sample %d: id %d, expected %d", i, ids[i], expect[i]);
        assert_int_equal(labels[i], g_label[ids[i]]);
    }
    sl_pipeline_destroy(p);
}

static void test_pad_last_batch(void **state)
{
    (void)state;
    cfg c = cfg_default();
    c.pad = true;
    c.batch = 5, c.num_shards = 3; /* shards [0,7) [7,15) [15,23); 8 per epoch, padded to 10 */
    static const int rotate[] = {0,  1,  2,  3,  4,  5,  6,  6,  6,  6,  7,  8,
                                 9,  10, 11, 12, 13, 14, 14, 14, 15, 16, 17, 18,
                                 19, 20, 21, 22, 22, 22, 0,  1,  2,  3,  4};
    expect_batches(&c, rotate, 7);
    c.stick = true, c.shard_id = 2;
    static const int stick[] = {15, 16, 17, 18, 19, 20, 21, 22, 22, 22, 15, 16, 17, 18, 19};
    expect_batches(&c, stick, 3);
    c = cfg_default(); /* one shard: 23 samples, the last batch of 4 ends with a copy */
    c.pad = true;
    int one[28];
    for (int i = 0; i < 28; i++)
        one[i] = i < 23 ? i : i == 23 ? 22 : i - 24;
    for (int d = 0; d < 2; d++)
        for (int t = 0; t < 2; t++) {
            c.depth = depths[d], c.threads = threads[t];
            expect_batches(&c, one, 7);
        }
}

static void test_reader_meta(void **state)
{
    (void)state;
    sl_reader_meta m;
    cfg c = cfg_default();
    c.num_shards = 4, c.shard_id = 2, c.stick = true, c.pad = true;
    sl_pipeline *p = tree_pipeline(g_tree, &c);
    assert_int_equal(sl_pipeline_reader_meta(p, "reader", &m), SL_OK);
    assert_int_equal(m.epoch_size, N);
    assert_int_equal(m.epoch_size_padded, 24); /* ceil(23 / 4) * 4 */
    assert_int_equal(m.number_of_shards, 4);
    assert_int_equal(m.shard_id, 2);
    assert_true(m.pad_last_batch);
    assert_true(m.stick_to_shard);
    assert_int_equal(sl_pipeline_epoch_size(p, "reader"), N);
    assert_int_equal(sl_pipeline_epoch_size(p, NULL), N);
    assert_int_equal(sl_pipeline_reader_meta(p, "no_such_node", &m), SL_ENOTFOUND);
    sl_pipeline_destroy(p);
    c = cfg_default();
    c.num_shards = 5;
    p = tree_pipeline(g_tree, &c);
    assert_int_equal(sl_pipeline_reader_meta(p, "reader", &m), SL_OK);
    assert_int_equal(m.epoch_size, N);
    assert_int_equal(m.epoch_size_padded, N);
    assert_int_equal(m.number_of_shards, 5);
    assert_int_equal(m.shard_id, 0);
    assert_false(m.pad_last_batch);
    assert_false(m.stick_to_shard);
    sl_pipeline_destroy(p);
}

static void test_case_sensitive_filter(void **state)
{
    (void)state;
    static const char *const filters[] = {"*.txt"};
    cfg c = cfg_default();
    sl_status st;
    sl_graph *g = reader_graph();
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", g_tree), SL_OK);
    assert_int_equal(sl_graph_arg_strs(g, "reader", "file_filters", filters, 1), SL_OK);
    assert_int_equal(sl_graph_arg_bool(g, "reader", "case_sensitive_filter", true), SL_OK);
    sl_pipeline *p = make_pipeline(g, &c, &st);
    assert_int_equal(st, SL_OK);
    assert_int_equal(sl_pipeline_epoch_size(p, "reader"), N - 1); /* c4/f19.TXT is left out */
    int ids[MAX_STREAM], labels[MAX_STREAM], n = 0;
    while (n < N - 1)
        run_one(p, ids, labels, &n);
    for (int i = 0; i < N - 1; i++)
        assert_int_equal(ids[i], i < 19 ? i : i + 1);
    sl_pipeline_destroy(p);
}

/* Builds a pipeline over a file_list (and file_root when given), batch 3. */
static sl_pipeline *list_pipeline(const char *list, const char *root, sl_status *st)
{
    cfg c = cfg_default();
    c.batch = 3;
    sl_graph *g = reader_graph();
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_list", list), SL_OK);
    if (root)
        assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", root), SL_OK);
    return make_pipeline(g, &c, st);
}

static void expect_ids_labels(sl_pipeline *p, const int *ids_want, const int *labels_want,
                              int n_want)
{
    int ids[MAX_STREAM], labels[MAX_STREAM], n = 0;
    while (n < n_want)
        run_one(p, ids, labels, &n);
    for (int i = 0; i < n_want; i++) {
        assert_int_equal(ids[i], ids_want[i]);
        assert_int_equal(labels[i], labels_want[i]);
    }
}

static void test_file_list(void **state)
{
    (void)state;
    char path[PATH_MAX], list[PATH_MAX], text[4 * PATH_MAX];
    sl_status st;
    mkdir_p(g_root, "lists/spaced dir");
    snprintf(path, sizeof path, "%s/lists/spaced dir/a b.txt", g_root);
    write_text(path, "100");
    /* relative to the list's directory; a name with spaces; CRLF; blank lines; absolute */
    snprintf(list, sizeof list, "%s/lists/list.txt", g_root);
    snprintf(text, sizeof text,
             "../tree/c1/f05.txt 11\n\n   \nspaced dir/a b.txt   42\r\n%s/c0/f00.txt -3\n", g_tree);
    write_text(list, text);
    sl_pipeline *p = list_pipeline(list, NULL, &st);
    if (st != SL_OK)
        fail_msg("build: %s", sl_pipeline_error(p));
    static const int ids[] = {5, 100, 0, 5, 100, 0}, labels[] = {11, 42, -3, 11, 42, -3};
    expect_ids_labels(p, ids, labels, 6);
    assert_int_equal(sl_pipeline_epoch_size(p, "reader"), 3);
    sl_pipeline_destroy(p);
    /* relative to file_root */
    snprintf(list, sizeof list, "%s/lists/rooted.txt", g_root);
    write_text(list, "c2/f09.txt 5\nc4/f19.TXT 6\n");
    p = list_pipeline(list, g_tree, &st);
    if (st != SL_OK)
        fail_msg("build: %s", sl_pipeline_error(p));
    static const int ids2[] = {9, 19, 9}, labels2[] = {5, 6, 5};
    expect_ids_labels(p, ids2, labels2, 3);
    sl_pipeline_destroy(p);
}

static sl_pipeline *files_pipeline(const char *const *files, int n, const int64_t *labels, int nl,
                                   sl_status *st)
{
    cfg c = cfg_default();
    c.batch = 2;
    sl_graph *g = reader_graph();
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", g_tree), SL_OK);
    assert_int_equal(sl_graph_arg_strs(g, "reader", "files", files, n), SL_OK);
    if (labels)
        assert_int_equal(sl_graph_arg_ints(g, "reader", "labels", labels, nl), SL_OK);
    return make_pipeline(g, &c, st);
}

static void test_files_and_labels(void **state)
{
    (void)state;
    char abs[PATH_MAX];
    sl_status st;
    sample_path(g_tree, 22, abs, sizeof abs);
    const char *const files[] = {"c1/f04.txt", abs, "c0/f00.txt"};
    static const int64_t labels[] = {10, 20, 30};
    sl_pipeline *p = files_pipeline(files, 3, labels, 3, &st);
    if (st != SL_OK)
        fail_msg("build: %s", sl_pipeline_error(p));
    static const int ids[] = {4, 22, 0, 4}, want[] = {10, 20, 30, 10};
    expect_ids_labels(p, ids, want, 4);
    sl_pipeline_destroy(p);
    p = files_pipeline(files, 3, NULL, 0, &st); /* without labels: the index */
    assert_int_equal(st, SL_OK);
    static const int idx[] = {0, 1, 2, 0};
    expect_ids_labels(p, ids, idx, 4);
    sl_pipeline_destroy(p);
    p = files_pipeline(files, 3, labels, 2, &st);
    assert_int_not_equal(st, SL_OK);
    assert_non_null(strstr(sl_pipeline_error(p), "labels"));
    sl_pipeline_destroy(p);
}

/* Builds a pipeline of g and expects the build to fail with a message containing `needle` (and
 * `needle2` when not NULL). */
static void expect_build_error(sl_graph *g, const char *needle, const char *needle2)
{
    cfg c = cfg_default();
    sl_status st;
    sl_pipeline *p = make_pipeline(g, &c, &st);
    assert_int_not_equal(st, SL_OK);
    const char *msg = sl_pipeline_error(p);
    if (!strstr(msg, needle) || (needle2 && !strstr(msg, needle2)))
        fail_msg("error \"%s\" does not mention \"%s\" %s", msg, needle, needle2 ? needle2 : "");
    sl_pipeline_destroy(p);
}

static sl_graph *graph_with_str(const char *arg, const char *value)
{
    static const char *const filters[] = {"*.txt"};
    sl_graph *g = reader_graph();
    assert_int_equal(sl_graph_arg_str(g, "reader", arg, value), SL_OK);
    assert_int_equal(sl_graph_arg_strs(g, "reader", "file_filters", filters, 1), SL_OK);
    return g;
}

static void test_build_errors(void **state)
{
    (void)state;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/no_such_dir", g_root);
    expect_build_error(graph_with_str("file_root", path), path, NULL);
    snprintf(path, sizeof path, "%s/empty", g_root);
    mkdir(path, 0755);
    expect_build_error(graph_with_str("file_root", path), path, NULL);
    snprintf(path, sizeof path, "%s/no_such_list.txt", g_root);
    expect_build_error(graph_with_str("file_list", path), path, NULL);
    snprintf(path, sizeof path, "%s/lists/bad.txt", g_root);
    write_text(path, "../tree/c0/f00.txt 1\nno_label_here.txt\n");
    expect_build_error(graph_with_str("file_list", path), path, "line 2");
    write_text(path, "../tree/c0/f00.txt 1\n\n../tree/c0/f01.txt one\n");
    expect_build_error(graph_with_str("file_list", path), path, "line 3");
    sl_graph *g = graph_with_str("file_root", g_tree);
    assert_int_equal(sl_graph_arg_int(g, "reader", "num_shards", N + 1), SL_OK);
    expect_build_error(g,
                       "The number of input samples: 23, needs to be at least equal to the "
                       "requested number of shards: 24.",
                       NULL);
    g = graph_with_str("file_root", g_tree);
    assert_int_equal(sl_graph_arg_int(g, "reader", "num_shards", 3), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "reader", "shard_id", 3), SL_OK);
    expect_build_error(g, "shard_id", NULL);
    expect_build_error(reader_graph(), "file_root", NULL); /* no mode at all */
}

/* A file deleted after build fails the iteration that reads it, naming it; the next one works. */
static void test_deleted_file(void **state)
{
    (void)state;
    char tree[128], victim[PATH_MAX];
    snprintf(tree, sizeof tree, "%s/tree_deleted", g_root);
    make_tree(tree);
    sample_path(tree, 5, victim, sizeof victim); /* iteration 1, sample 1 */
    for (int d = 0; d < 2; d++)
        for (int t = 0; t < 2; t++) {
            cfg c = cfg_default();
            c.depth = depths[d], c.threads = threads[t];
            sl_pipeline *p = tree_pipeline(tree, &c);
            assert_int_equal(unlink(victim), 0);
            int ids[MAX_STREAM], labels[MAX_STREAM], n = 0;
            run_one(p, ids, labels, &n);
            assert_int_equal(sl_pipeline_run(p), SL_EIO);
            if (!strstr(sl_pipeline_error(p), g_rel[5]))
                fail_msg("error \"%s\" does not name the file", sl_pipeline_error(p));
            sl_error_detail det;
            sl_pipeline_error_detail(p, &det);
            assert_int_equal(det.code, SL_EIO);
            assert_int_equal(det.iteration, 1);
            assert_int_equal(det.sample, 1);
            assert_non_null(det.source);
            assert_string_equal(det.source, victim);
            run_one(p, ids, labels, &n);
            for (int i = 0; i < 4; i++)
                assert_int_equal(ids[4 + i], 8 + i);
            sl_pipeline_destroy(p);
            write_sample(tree, 5);
        }
}

/* Builds g with the n-th allocation failing, for n = 1, 2, ... until a build succeeds without
 * the injected failure firing: every failure path of the listing must fail cleanly (no crash, no
 * leak under ASan), with a message. */
static void build_with_faults(sl_graph *(*make)(void))
{
    cfg c = cfg_default();
    for (uint64_t n = 1; n < 100000; n++) {
        sl_pipeline_options o;
        sl_pipeline *p = NULL;
        sl_graph *g = make();
        sl_pipeline_options_init(&o);
        o.batch_size = c.batch, o.num_threads = 1, o.prefetch_queue_depth = 1;
        assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
        sl_graph_destroy(g);
        sl__alloc_fail_after(n);
        sl_status st = sl_pipeline_build(p);
        bool fired = sl__alloc_fail_fired();
        sl__alloc_fail_after(0);
        if (st != SL_OK)
            assert_true(fired && sl_pipeline_error(p)[0] != '\0');
        sl_pipeline_destroy(p);
        if (!fired) {
            assert_int_equal(st, SL_OK);
            return;
        }
    }
    fail_msg("the build never succeeded");
}

static sl_graph *faults_tree(void)
{
    static const char *const filters[] = {"*.txt"};
    sl_graph *g = reader_graph();
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", g_tree), SL_OK);
    assert_int_equal(sl_graph_arg_strs(g, "reader", "file_filters", filters, 1), SL_OK);
    assert_int_equal(sl_graph_arg_bool(g, "reader", "random_shuffle", true), SL_OK);
    return g;
}

static sl_graph *faults_list(void)
{
    char list[PATH_MAX];
    snprintf(list, sizeof list, "%s/lists/faults.txt", g_root);
    sl_graph *g = reader_graph();
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_list", list), SL_OK);
    return g;
}

static sl_graph *faults_files(void)
{
    const char *const files[] = {"c1/f04.txt", "c0/f00.txt"};
    sl_graph *g = reader_graph();
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", g_tree), SL_OK);
    assert_int_equal(sl_graph_arg_strs(g, "reader", "files", files, 2), SL_OK);
    return g;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    char list[PATH_MAX];
    mkdir_p(g_root, "lists");
    snprintf(list, sizeof list, "%s/lists/faults.txt", g_root);
    write_text(list, "../tree/c0/f00.txt 1\n../tree/c1/f05.txt 2\n");
    build_with_faults(faults_tree);
    build_with_faults(faults_list);
    build_with_faults(faults_files);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_labels_follow_sorted_classes),
        cmocka_unit_test(test_sequential_epochs),
        cmocka_unit_test(test_shuffled_epochs),
        cmocka_unit_test(test_shuffle_seed),
        cmocka_unit_test(test_shards_disjoint_and_cover),
        cmocka_unit_test(test_shard_rotation),
        cmocka_unit_test(test_pad_last_batch),
        cmocka_unit_test(test_reader_meta),
        cmocka_unit_test(test_case_sensitive_filter),
        cmocka_unit_test(test_file_list),
        cmocka_unit_test(test_files_and_labels),
        cmocka_unit_test(test_build_errors),
        cmocka_unit_test(test_deleted_file),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
