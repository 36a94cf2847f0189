/* test_exec_cache: the sample cache (sl_pipeline_options.cache_bytes, src/exec/cache.c).
 *
 * The reference is the same pipeline without a cache: over several epochs, shuffled, at 1 and
 * 4 threads, with the whole data set cached, a part of it (a budget smaller than the data
 * set), the file-backed cache and a corrupt file skipped, every output batch must be the same
 * bytes (shapes, data, labels) — and the counters must say that the later epochs were served
 * from the cache (hits), which is also shown by deleting the files after the first epoch.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/graph.h" /* sl__spec_write */
#include "sluice/sluice.h"

#define BATCH 8
#define ITERS 40 /* 320 samples: 3.2 epochs of the 100-image tree */

typedef struct cfg {
    int threads;
    int64_t cache_bytes;
    const char *cache_file;
    bool mirror_random; /* crop_mirror_normalize's mirror from random.coin_flip: not cacheable */
    bool skip_bad;      /* on_bad_sample "skip" */
    int fuse;
} cfg;

/* The run's outputs, concatenated: per iteration and output, the batch's size, every sample's
 * shape, then its bytes. */
typedef struct blobs {
    uint8_t *data;
    size_t n, cap;
} blobs;

static void put(blobs *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->data = realloc(b->data, b->cap);
        assert_non_null(b->data);
    }
    memcpy(b->data + b->n, p, n);
    b->n += n;
}

static const char *tree(void)
{
    const char *t = getenv("SLUICE_TEST_TREE");
    if (!t)
        fail_msg("SLUICE_TEST_TREE is not set");
    return t;
}

/* readers.file (file_list or file_root) -> decoders.image -> resize -> crop_mirror_normalize,
 * outputs cmn and the labels: the val pipeline, small. */
static sl_graph *val_graph(const char *file_root, const char *file_list, const cfg *c)
{
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "readers.file", "reader", NULL), SL_OK);
    if (file_list)
        assert_int_equal(sl_graph_arg_str(g, "reader", "file_list", file_list), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", file_root), SL_OK);
    assert_int_equal(sl_graph_arg_bool(g, "reader", "random_shuffle", true), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "reader", "seed", 7), SL_OK);
    assert_int_equal(sl_graph_add(g, "decoders.image", "dec", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "dec", "reader:0"), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "dec", "output_type", "RGB"), SL_OK);
    assert_int_equal(sl_graph_add(g, "resize", "resize", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "resize", "dec"), SL_OK);
    assert_int_equal(sl_graph_arg_float(g, "resize", "resize_shorter", 40), SL_OK);
    assert_int_equal(sl_graph_add(g, "crop_mirror_normalize", "cmn", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "cmn", "resize"), SL_OK);
    const int64_t crop[2] = {32, 32};
    const double mean[3] = {123.675, 116.28, 103.53}, std[3] = {58.395, 57.12, 57.375};
    assert_int_equal(sl_graph_arg_ints(g, "cmn", "crop", crop, 2), SL_OK);
    assert_int_equal(sl_graph_arg_floats(g, "cmn", "mean", mean, 3), SL_OK);
    assert_int_equal(sl_graph_arg_floats(g, "cmn", "std", std, 3), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "cmn", "dtype", "float32"), SL_OK);
    if (c->mirror_random) {
        assert_int_equal(sl_graph_add(g, "random.coin_flip", "coin", NULL), SL_OK);
        assert_int_equal(sl_graph_arg_float(g, "coin", "probability", 0.5), SL_OK);
        assert_int_equal(sl_graph_arg_input(g, "cmn", "mirror", "coin"), SL_OK);
        /* a window that moves between epochs: what is cached must be resize's whole sample,
         * not the box one epoch's window read */
        const double range[2] = {0.0, 1.0};
        assert_int_equal(sl_graph_add(g, "random.uniform", "pos", NULL), SL_OK);
        assert_int_equal(sl_graph_arg_floats(g, "pos", "range", range, 2), SL_OK);
        assert_int_equal(sl_graph_arg_input(g, "cmn", "crop_pos_x", "pos"), SL_OK);
    }
    assert_int_equal(sl_graph_output(g, "cmn"), SL_OK);
    assert_int_equal(sl_graph_output(g, "reader:1"), SL_OK);
    return g;
}

static sl_pipeline *make(sl_graph *g, const cfg *c)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = BATCH;
    o.num_threads = c->threads;
    o.prefetch_queue_depth = 2;
    o.seed = 1234;
    o.fuse_samples = c->fuse;
    o.cache_bytes = c->cache_bytes;
    if (c->cache_file)
        snprintf(o.cache_file, sizeof o.cache_file, "%s", c->cache_file);
    if (c->skip_bad)
        o.on_bad_sample = SL_BAD_SAMPLE_SKIP;
    sl_pipeline *p = NULL;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    sl_graph_destroy(g);
    sl_status st = sl_pipeline_build(p);
    if (st != SL_OK)
        fail_msg("build: %s", sl_pipeline_error(p));
    return p;
}

static void quiet(void *user, const char *line)
{
    (void)user;
    (void)line;
}

/* Runs iterations [from, to) of p, appending their outputs to out. */
static void run(sl_pipeline *p, int from, int to, blobs *out)
{
    for (int it = from; it < to; it++) {
        sl_status st = sl_pipeline_run(p);
        if (st != SL_OK)
            fail_msg("iteration %d: %s", it, sl_pipeline_error(p));
        for (int k = 0; k < sl_pipeline_num_outputs(p); k++) {
            const sl_batch *b = sl_pipeline_output(p, k);
            int n = sl_batch_size(b), nd = sl_batch_ndim(b);
            put(out, &n, sizeof n);
            for (int i = 0; i < n; i++) {
                put(out, sl_batch_shape(b, i), sizeof(int64_t) * (size_t)nd);
                put(out, sl_batch_sample_data(b, i),
                    (size_t)sl_batch_sample_numel(b, i) * sl_dtype_size(sl_batch_dtype(b)));
            }
        }
    }
}

static blobs run_all(const char *root, const char *list, const cfg *c, sl_cache_stats *stats)
{
    blobs out = {0};
    sl_pipeline *p = make(val_graph(root, list, c), c);
    sl_pipeline_set_log(p, quiet, NULL);
    run(p, 0, ITERS, &out);
    if (stats)
        assert_int_equal(sl_pipeline_cache_stats(p, stats), SL_OK);
    sl_pipeline_destroy(p);
    return out;
}

static void assert_same(const blobs *a, const blobs *b)
{
    assert_int_equal(a->n, b->n);
    assert_true(a->n > 0);
    assert_memory_equal(a->data, b->data, a->n);
}

static blobs reference(const cfg *c)
{
    cfg plain = *c;
    plain.cache_bytes = 0;
    plain.cache_file = NULL;
    return run_all(tree(), NULL, &plain, NULL);
}

/* The whole data set fits: the first epoch fills, the later ones only hit; same bytes at 1 and
 * 4 threads, fused or not. */
static void whole_data_set_cached(void **state)
{
    (void)state;
    for (int fuse = 0; fuse <= 1; fuse++) {
        cfg c = {.threads = 1, .cache_bytes = 64 << 20, .fuse = fuse};
        blobs ref = reference(&c);
        for (int t = 1; t <= 4; t += 3) {
            c.threads = t;
            sl_cache_stats s;
            blobs got = run_all(tree(), NULL, &c, &s);
            assert_same(&ref, &got);
            assert_int_equal(s.nodes, 4); /* reader, dec, resize, cmn */
            assert_int_equal(s.entries, 100);
            /* a sample of epoch 2 may be in flight while its epoch-1 fill is not published: a
             * miss then, never a wrong hit */
            assert_true(s.hits + s.misses >= BATCH * ITERS &&
                        s.hits + s.misses <= BATCH * (ITERS + 2) /* prefetched */);
            assert_true(s.misses >= 100 && s.misses <= 100 + 2 * BATCH);
            assert_false(s.full);
            /* cmn's float32 3x32x32 and the 4-byte label per sample, and the entries */
            assert_true(s.bytes >= 100 * (3 * 32 * 32 * 4 + 4));
            assert_true(s.bytes <= s.capacity);
            free(got.data);
        }
        free(ref.data);
    }
}

/* A budget of about 40 samples: some cached, admission closed, the rest computed every epoch;
 * the outputs the same. */
static void partial_cache(void **state)
{
    (void)state;
    cfg c = {.threads = 4, .cache_bytes = 40 * (3 * 32 * 32 * 4 + 1024), .fuse = 1};
    blobs ref = reference(&c);
    sl_cache_stats s;
    blobs got = run_all(tree(), NULL, &c, &s);
    assert_same(&ref, &got);
    assert_true(s.full);
    assert_true(s.entries > 20 && s.entries < 100);
    assert_true(s.hits > 0);
    assert_true(s.bytes <= s.capacity);
    free(got.data);
    free(ref.data);
}

/* cache_file: the same outputs; the file exists while the pipeline does and is removed after. */
static void file_cache(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/cache-test-%d.bin",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    cfg c = {.threads = 4, .cache_bytes = 64 << 20, .cache_file = path, .fuse = 1};
    blobs ref = reference(&c);
    blobs got = {0};
    sl_pipeline *p = make(val_graph(tree(), NULL, &c), &c);
    run(p, 0, ITERS, &got);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    sl_cache_stats s;
    assert_int_equal(sl_pipeline_cache_stats(p, &s), SL_OK);
    assert_int_equal(s.entries, 100);
    assert_true(s.hits >= 2 * 100);
    assert_true(st.st_size >= 100 * (3 * 32 * 32 * 4 + 4)); /* the samples' bytes are there */
    sl_pipeline_destroy(p);
    assert_int_not_equal(stat(path, &st), 0);
    assert_same(&ref, &got);
    free(got.data);
    free(ref.data);
}

/* mirror and window from random operators: cmn is not cacheable, resize's output is cached
 * instead (a consumer outside the subgraph; with sample fusion resize runs fused into cmn, and
 * a hit hands cmn the cached sample), and the random draws stay the uncached run's. In memory
 * and in a file, fused and not. */
static void random_consumer(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/cache-test-r%d.bin",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    for (int fuse = 0; fuse <= 1; fuse++) {
        cfg c = {.threads = 4, .cache_bytes = 64 << 20, .mirror_random = true, .fuse = fuse};
        blobs ref = reference(&c);
        for (int file = 0; file <= 1; file++) {
            c.cache_file = file ? path : NULL;
            sl_cache_stats s;
            blobs got = run_all(tree(), NULL, &c, &s);
            assert_same(&ref, &got);
            assert_int_equal(s.nodes, 3); /* reader, dec, resize */
            assert_int_equal(s.entries, 100);
            assert_true(s.hits >= 200 - 2 * BATCH);
            free(got.data);
        }
        free(ref.data);
    }
}

static void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    assert_non_null(a);
    assert_non_null(b);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0)
        assert_int_equal(fwrite(buf, 1, n, b), n);
    fclose(a);
    fclose(b);
}

/* A copy of the tree's file list and images in a temporary folder; with `corrupt`, one image
 * truncated to 40 bytes. Returns the folder (the list is <dir>/list.txt). */
static void make_copy(char *dir, size_t cap, bool corrupt)
{
    snprintf(dir, cap, "%s/cache-tree-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(dir));
    char src[512], dst[512], line[512];
    snprintf(src, sizeof src, "%s/file_list.txt", tree());
    FILE *in = fopen(src, "r");
    assert_non_null(in);
    snprintf(dst, sizeof dst, "%s/list.txt", dir);
    FILE *list = fopen(dst, "w");
    assert_non_null(list);
    int k = 0;
    while (fgets(line, sizeof line, in)) {
        char name[256];
        int label;
        if (sscanf(line, "%255s %d", name, &label) != 2)
            continue;
        snprintf(src, sizeof src, "%s/%s", tree(), name);
        snprintf(dst, sizeof dst, "%s/%03d.jpg", dir, k);
        copy_file(src, dst);
        if (corrupt && k == 17)
            assert_int_equal(truncate(dst, 40), 0);
        fprintf(list, "%03d.jpg %d\n", k, label);
        k++;
    }
    fclose(in);
    fclose(list);
    assert_int_equal(k, 100);
}

static void remove_copy(const char *dir)
{
    char path[512];
    for (int k = 0; k < 100; k++) {
        snprintf(path, sizeof path, "%s/%03d.jpg", dir, k);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/list.txt", dir);
    unlink(path);
    rmdir(dir);
}

/* After the first epoch is cached the files can go: the later epochs read none of them. */
static void later_epochs_read_no_file(void **state)
{
    (void)state;
    char dir[256], list[300];
    make_copy(dir, sizeof dir, false);
    snprintf(list, sizeof list, "%s/list.txt", dir);
    cfg c = {.threads = 4, .cache_bytes = 64 << 20, .fuse = 1};
    cfg plain = c;
    plain.cache_bytes = 0;
    blobs ref = run_all(dir, list, &plain, NULL);
    blobs got = {0};
    sl_pipeline *p = make(val_graph(dir, list, &c), &c);
    /* epoch 1 and the prefetched iterations past it; then the files are deleted */
    run(p, 0, 15, &got);
    sl_cache_stats s;
    for (int tries = 0; tries < 200; tries++) { /* the prefetched iterations publish their fills */
        assert_int_equal(sl_pipeline_cache_stats(p, &s), SL_OK);
        if (s.entries == 100)
            break;
        usleep(10000);
    }
    assert_int_equal(s.entries, 100);
    for (int k = 0; k < 100; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%03d.jpg", dir, k);
        assert_int_equal(unlink(path), 0);
    }
    run(p, 15, ITERS, &got);
    sl_pipeline_destroy(p);
    assert_same(&ref, &got);
    remove_copy(dir);
    free(got.data);
    free(ref.data);
}

/* A corrupt file, skipped: never cached (it fails again each epoch, skipped and counted as
 * without a cache), and the batches are the same. */
static void bad_sample_skipped(void **state)
{
    (void)state;
    char dir[256], list[300];
    make_copy(dir, sizeof dir, true);
    snprintf(list, sizeof list, "%s/list.txt", dir);
    for (int t = 1; t <= 4; t += 3) {
        cfg c = {.threads = t, .cache_bytes = 64 << 20, .skip_bad = true, .fuse = 1};
        cfg plain = c;
        plain.cache_bytes = 0;
        blobs ref = run_all(dir, list, &plain, NULL);
        sl_cache_stats s;
        blobs got = {0};
        sl_pipeline *p = make(val_graph(dir, list, &c), &c);
        sl_pipeline_set_log(p, quiet, NULL);
        run(p, 0, ITERS, &got);
        assert_int_equal(sl_pipeline_cache_stats(p, &s), SL_OK);
        assert_int_equal(s.entries, 99);
        /* once per epoch delivered: 3, or 4 when it is among the 4th epoch's first 20 */
        int64_t bad = sl_pipeline_bad_samples(p);
        assert_true(bad == 3 || bad == 4);
        sl_pipeline_destroy(p);
        assert_same(&ref, &got);
        free(got.data);
        free(ref.data);
    }
    remove_copy(dir);
}

/* Options: the JSON keys, their checks, a cache file that cannot be created. */
static void options(void **state)
{
    (void)state;
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    assert_int_equal(o.cache_bytes, 0);
    assert_string_equal(o.cache_file, "");
    assert_int_equal(
        sl_pipeline_options_from_json(
            "{\"pipeline\": {\"cache_bytes\": 1048576, \"cache_file\": \"/tmp/x.bin\"}}", &o),
        SL_OK);
    assert_int_equal(o.cache_bytes, 1048576);
    assert_string_equal(o.cache_file, "/tmp/x.bin");
    assert_int_equal(sl_pipeline_options_from_json("{\"pipeline\": {\"cache_file\": 3}}", &o),
                     SL_EINVAL);
    assert_non_null(strstr(sl_last_error(), "cache_file"));

    cfg c = {.threads = 1, .cache_bytes = -1, .fuse = 1};
    sl_pipeline_options_init(&o);
    o.cache_bytes = -1;
    sl_pipeline *p = NULL;
    sl_graph *g = val_graph(tree(), NULL, &c);
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_EINVAL);
    assert_non_null(strstr(sl_last_error(), "cache_bytes"));

    o.cache_bytes = 1 << 20;
    snprintf(o.cache_file, sizeof o.cache_file, "/nonexistent-dir/cache.bin");
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_EIO);
    assert_non_null(strstr(sl_pipeline_error(p), "/nonexistent-dir/cache.bin"));
    sl_pipeline_destroy(p);

    /* the spec writer keeps them (the file name escaped), the reader reads them back */
    sl_pipeline_options_init(&o);
    o.cache_bytes = 4096;
    snprintf(o.cache_file, sizeof o.cache_file, "/tmp/a \"b\".bin");
    char *json = NULL;
    assert_int_equal(sl__spec_write(g, &o, &json), SL_OK);
    assert_non_null(strstr(json, "\"cache_bytes\": 4096"));
    assert_non_null(strstr(json, "\"cache_file\": \"/tmp/a \\\"b\\\".bin\""));
    sl_pipeline_options back;
    sl_pipeline_options_init(&back);
    assert_int_equal(sl_pipeline_options_from_json(json, &back), SL_OK);
    assert_int_equal(back.cache_bytes, 4096);
    assert_string_equal(back.cache_file, o.cache_file);
    free(json);
    /* the default is not written */
    sl_pipeline_options_init(&o);
    assert_int_equal(sl__spec_write(g, &o, &json), SL_OK);
    assert_null(strstr(json, "cache_"));
    free(json);
    sl_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(whole_data_set_cached),
        cmocka_unit_test(partial_cache),
        cmocka_unit_test(file_cache),
        cmocka_unit_test(random_consumer),
        cmocka_unit_test(later_epochs_read_no_file),
        cmocka_unit_test(bad_sample_skipped),
        cmocka_unit_test(options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
