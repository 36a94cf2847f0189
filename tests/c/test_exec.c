/* tests/c/test_exec.c: the executor through the public API.
 *
 * In-order delivery, determinism across threads and prefetch depths, an error delivered at the
 * iteration it belongs to (and the pipeline usable afterwards), shutdown with work in flight,
 * DALI's run-API misuse cases, no allocation in steady state, stats and the trace, and one
 * storage per intermediate output whatever the prefetch depth, two buffers of it so that the
 * next iteration fills a batch's tail (exec/istore.c, white-box).
 * Data: the JPEG class tree made by tests/data/make_tree.py (env SLUICE_TEST_TREE).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "exec/exec.h"
#include "testutil.h"

enum chain { CHAIN_NONE, CHAIN_RESIZE, CHAIN_RRC, CHAIN_VAL };

/* reader (no shuffle unless seed >= 0) -> decoder -> [CHAIN_RESIZE: resize shorter 40 ->
 * vertical flip; CHAIN_RRC: random_resized_crop 40 x 40; CHAIN_VAL: resize shorter 40] -> cmn
 * crop x crop (pad outside, or an error with a chain) mirrored by a coin flip. */
static sl_graph *make_graph_with(const char *root, int64_t shuffle_seed, enum chain chain,
                                 double crop)
{
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "readers.file", "reader", NULL), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", root), SL_OK);
    if (shuffle_seed >= 0) {
        assert_int_equal(sl_graph_arg_bool(g, "reader", "random_shuffle", true), SL_OK);
        assert_int_equal(sl_graph_arg_int(g, "reader", "seed", shuffle_seed), SL_OK);
    }
    assert_int_equal(sl_graph_add(g, "decoders.image", "dec", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "dec", "reader:0"), SL_OK);
    assert_int_equal(sl_graph_add(g, "random.coin_flip", "coin", NULL), SL_OK);
    if (chain == CHAIN_RRC) {
        assert_int_equal(sl_graph_add(g, "random_resized_crop", "rrc", NULL), SL_OK);
        assert_int_equal(sl_graph_input(g, "rrc", "dec"), SL_OK);
        double size[2] = {40, 40};
        assert_int_equal(sl_graph_arg_floats(g, "rrc", "size", size, 2), SL_OK);
    }
    if (chain == CHAIN_RESIZE || chain == CHAIN_VAL) {
        assert_int_equal(sl_graph_add(g, "resize", "resize", NULL), SL_OK);
        assert_int_equal(sl_graph_input(g, "resize", "dec"), SL_OK);
        assert_int_equal(sl_graph_arg_float(g, "resize", "resize_shorter", 40), SL_OK);
    }
    if (chain == CHAIN_RESIZE) {
        assert_int_equal(sl_graph_add(g, "flip", "flip", NULL), SL_OK);
        assert_int_equal(sl_graph_input(g, "flip", "resize"), SL_OK);
        assert_int_equal(sl_graph_arg_int(g, "flip", "vertical", 1), SL_OK);
    }
    assert_int_equal(sl_graph_add(g, "crop_mirror_normalize", "cmn", NULL), SL_OK);
    const char *last[] = {"dec", "flip", "rrc", "resize"};
    assert_int_equal(sl_graph_input(g, "cmn", last[chain]), SL_OK);
    double crops[2] = {crop, crop};
    assert_int_equal(sl_graph_arg_floats(g, "cmn", "crop", crops, 2), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "cmn", "out_of_bounds_policy", chain ? "error" : "pad"),
                     SL_OK);
    assert_int_equal(sl_graph_arg_input(g, "cmn", "mirror", "coin"), SL_OK);
    assert_int_equal(sl_graph_output(g, "cmn"), SL_OK);
    assert_int_equal(sl_graph_output(g, "reader:1"), SL_OK);
    return g;
}

static sl_graph *make_graph(const char *root, int64_t shuffle_seed)
{
    return make_graph_with(root, shuffle_seed, CHAIN_NONE, 24);
}

/* sl_pipeline_options.fuse_samples of the pipelines make_pipeline builds. */
static int g_fuse = 1;
/* Their cpu_queue_depth and gpu_queue_depth (0, 0: one queue). */
static int g_queues[2];

static sl_pipeline *make_pipeline(const sl_graph *g, int batch, int threads, int depth)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    assert_int_equal(o.fuse_samples, 1); /* the default */
    o.fuse_samples = g_fuse;
    o.batch_size = batch;
    o.num_threads = threads;
    o.prefetch_queue_depth = depth;
    o.cpu_queue_depth = g_queues[0];
    o.gpu_queue_depth = g_queues[1];
    o.seed = 1234;
    sl_pipeline *p = NULL;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    sl_status st = sl_pipeline_build(p);
    if (st != SL_OK)
        fail_msg("build failed: %s", sl_pipeline_error(p));
    return p;
}

/* The files of the tree in the reader's order (sorted class dirs, sorted files). */
static int tree_files(const char *root, char ***paths, int **labels)
{
    char **classes;
    int nc = tu_list(root, NULL, &classes), n = 0;
    *paths = NULL;
    *labels = NULL;
    for (int c = 0; c < nc; c++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", root, classes[c]);
        struct stat st;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        char **files;
        int nf = tu_list(dir, ".jpg", &files);
        *paths = realloc(*paths, sizeof(char *) * (size_t)(n + nf));
        *labels = realloc(*labels, sizeof(int) * (size_t)(n + nf));
        for (int f = 0; f < nf; f++) {
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", dir, files[f]);
            (*paths)[n] = strdup(path);
            (*labels)[n++] = c;
        }
        tu_free_list(files, nf);
    }
    tu_free_list(classes, nc);
    return n;
}

/* Iterations come out in order: labels and sources follow the sorted file list exactly, for
 * several thread counts and depths (later iterations often finish first with 4 threads). */
static void test_in_order(void **state)
{
    const char *root = tu_env_dir("SLUICE_TEST_TREE");
    char **paths;
    int *labels;
    int n = tree_files(root, &paths, &labels);
    assert_true(n >= 20);
    sl_graph *g = make_graph(root, -1);
    int configs[][2] = {{1, 1}, {2, 2}, {4, 3}, {4, 4}, {0, 1}, {0, 3}};
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        sl_pipeline *p = make_pipeline(g, 5, configs[c][0], configs[c][1]);
        int64_t pos = 0;
        for (int it = 0; it < 2 * n / 5 + 3; it++) {
            assert_int_equal(sl_pipeline_run(p), SL_OK);
            assert_int_equal(sl_pipeline_iteration(p), it);
            const sl_batch *lab = sl_pipeline_output(p, 1);
            for (int i = 0; i < 5; i++, pos++) {
                int want = (int)(pos % n);
                assert_int_equal(((const int32_t *)sl_batch_sample_data(lab, i))[0], labels[want]);
                assert_string_equal(sl_batch_source(lab, i), paths[want]);
                assert_string_equal(sl_batch_source(sl_pipeline_output(p, 0), i), paths[want]);
            }
        }
        sl_pipeline_destroy(p);
    }
    sl_graph_destroy(g);
    for (int i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    free(labels);
}

/* Hash of the first `iters` iterations' outputs. */
static uint64_t run_hash(const sl_graph *g, int threads, int depth, int iters)
{
    sl_pipeline *p = make_pipeline(g, 6, threads, depth);
    uint64_t h = 0xCBF29CE484222325ull;
    for (int it = 0; it < iters; it++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        h = tu_hash_batch(sl_pipeline_output(p, 0), h);
        h = tu_hash_batch(sl_pipeline_output(p, 1), h);
    }
    sl_pipeline_destroy(p);
    return h;
}

/* Identical outputs for 0, 1, 2 and 4 threads and prefetch depths 1-4 (shuffled reader, random
 * mirror): results depend on the seeds only. */
static void test_determinism(void **state)
{
    sl_graph *g = make_graph(tu_env_dir("SLUICE_TEST_TREE"), 7);
    uint64_t ref = run_hash(g, 1, 1, 8);
    int threads[] = {1, 2, 4, 0}; /* 0: the calling thread runs the tasks */
    for (int t = 0; t < 4; t++) {
        for (int d = 1; d <= 4; d++)
            assert_true(run_hash(g, threads[t], d, 8) == ref);
    }
    g_fuse = 0; /* the decoder runs fused into cmn by default: batch by batch, the same */
    assert_true(run_hash(g, 2, 2, 8) == ref);
    assert_true(run_hash(g, 0, 2, 8) == ref);
    g_fuse = 1;
    /* separated queues in a CPU-only pipeline: cpu + gpu iterations in flight, the same */
    int queues[][2] = {{1, 1}, {3, 2}};
    for (int q = 0; q < 2; q++) {
        g_queues[0] = queues[q][0];
        g_queues[1] = queues[q][1];
        sl_pipeline *p = make_pipeline(g, 6, 2, 2);
        assert_int_equal(p->depth, queues[q][0] + queues[q][1]);
        sl_pipeline_destroy(p);
        assert_true(run_hash(g, 2, 2, 8) == ref);
    }
    g_queues[0] = g_queues[1] = 0;
    int bad[][2] = {{1, 0}, {0, 2}, {-1, 2}, {40, 30}};
    for (int q = 0; q < 4; q++) {
        sl_pipeline_options o;
        sl_pipeline_options_init(&o);
        o.cpu_queue_depth = bad[q][0];
        o.gpu_queue_depth = bad[q][1];
        sl_pipeline *p = NULL;
        assert_int_equal(sl_pipeline_create(g, &o, &p), SL_EINVAL);
        assert_null(p);
        assert_non_null(strstr(sl_last_error(), "cpu_queue_depth and gpu_queue_depth must"));
    }
    sl_graph_arg_int(g, "reader", "seed", 8); /* a different seed gives different data */
    assert_true(run_hash(g, 2, 2, 8) != ref);
    sl_graph_destroy(g);
}

/* A tree of 20 copies of the test JPEGs, file 9 (iteration 2, sample 1 at batch 4) truncated. */
static char *make_corrupt_tree(char *bad_path, size_t cap)
{
    char **paths;
    int *labels;
    int n = tree_files(tu_env_dir("SLUICE_TEST_TREE"), &paths, &labels);
    assert_true(n >= 20);
    char *dir = tu_mkdtemp(), sub[1024];
    snprintf(sub, sizeof sub, "%s/only_class", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    for (int i = 0; i < 20; i++) {
        char dst[1200];
        snprintf(dst, sizeof dst, "%s/f%02d.jpg", sub, i);
        assert_int_equal(tu_copy_prefix(paths[i], dst, i == 9 ? 300 : SIZE_MAX), 0);
        if (i == 9)
            snprintf(bad_path, cap, "%s", dst);
    }
    for (int i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    free(labels);
    return dir;
}

static void check_error_at_2(sl_pipeline *p, const char *bad)
{
    for (int it = 0; it < 5; it++) {
        sl_status st = sl_pipeline_run(p);
        if (it != 2) {
            if (st != SL_OK)
                fail_msg("iteration %d: %s", it, sl_pipeline_error(p));
            assert_int_equal(sl_pipeline_iteration(p), it);
            continue;
        }
        assert_int_equal(st, SL_ECORRUPT);
        const char *msg = sl_pipeline_error(p);
        assert_non_null(strstr(msg, "decoders.image"));
        assert_non_null(strstr(msg, "node \"dec\""));
        assert_non_null(strstr(msg, "iteration 2"));
        assert_non_null(strstr(msg, "sample 1"));
        assert_non_null(strstr(msg, bad));
        sl_error_detail d;
        sl_pipeline_error_detail(p, &d);
        assert_int_equal(d.iteration, 2);
        assert_int_equal(d.sample, 1);
        assert_string_equal(d.source, bad);
        assert_string_equal(d.node, "dec");
    }
}

/* The corrupt file's error comes with iteration 2, names operator, node, sample and file, and
 * iterations 3 and 4 are delivered normally afterwards. */
static void test_error_delivery(void **state)
{
    char bad[1300];
    char *dir = make_corrupt_tree(bad, sizeof bad);
    sl_graph *g = make_graph(dir, -1);
    int configs[][2] = {{1, 1}, {2, 2}, {4, 4}, {0, 2}};
    for (g_fuse = 1; g_fuse >= 0; g_fuse--) { /* the decoder fused into cmn, then not */
        for (int c = 0; c < 4; c++) {
            sl_pipeline *p = make_pipeline(g, 4, configs[c][0], configs[c][1]);
            check_error_at_2(p, bad);
            sl_pipeline_destroy(p);
        }
    }
    g_fuse = 1;
    sl_graph_destroy(g);
    tu_rmtree(dir);
    free(dir);
}

/* Destroying with iterations queued and running, or with outputs still shared, returns
 * promptly, joins the threads and frees everything (ASan reports any leak). */
static void test_shutdown_in_flight(void **state)
{
    sl_graph *g = make_graph(tu_env_dir("SLUICE_TEST_TREE"), 3);
    for (int round = 0; round < 12; round++) {
        sl_pipeline *p = make_pipeline(g, 8, round % 5, 1 + round % 4);
        assert_int_equal(sl_pipeline_schedule_run(p), SL_OK);
        if (round % 3 == 1)
            assert_int_equal(sl_pipeline_share_outputs(p), SL_OK);
        if (round % 3 == 2)
            assert_int_equal(sl_pipeline_run(p), SL_OK);
        sl_pipeline_destroy(p);
    }
    sl_pipeline *p = make_pipeline(g, 8, 2, 2); /* built, never run */
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* DALI's contract: schedule_run + share_outputs + release_outputs; misuse is SL_EMISUSE with a
 * message, never a hang. */
static void test_run_api(void **state)
{
    sl_graph *g = make_graph(tu_env_dir("SLUICE_TEST_TREE"), -1);
    sl_pipeline *p = make_pipeline(g, 4, 2, 2);
    assert_int_equal(sl_pipeline_share_outputs(p), SL_EMISUSE);
    assert_non_null(strstr(sl_pipeline_error(p), "schedule_run"));
    assert_int_equal(sl_pipeline_release_outputs(p), SL_EMISUSE);
    assert_null(sl_pipeline_output(p, 0));
    assert_int_equal(sl_pipeline_schedule_run(p), SL_OK); /* first call: iterations 0 and 1 */
    assert_int_equal(sl_pipeline_share_outputs(p), SL_OK);
    assert_int_equal(sl_pipeline_iteration(p), 0);
    assert_int_equal(sl_pipeline_share_outputs(p), SL_OK);
    assert_int_equal(sl_pipeline_iteration(p), 1);
    assert_int_equal(sl_pipeline_schedule_run(p), SL_OK); /* iteration 2 needs slot 0 */
    assert_int_equal(sl_pipeline_share_outputs(p), SL_EMISUSE);
    assert_non_null(strstr(sl_pipeline_error(p), "release_outputs"));
    assert_int_equal(sl_pipeline_release_outputs(p), SL_OK); /* frees iteration 0's slot */
    assert_int_equal(sl_pipeline_share_outputs(p), SL_OK);
    assert_int_equal(sl_pipeline_iteration(p), 2);
    assert_int_equal(sl_pipeline_release_outputs(p), SL_OK);
    assert_int_equal(sl_pipeline_release_outputs(p), SL_OK);
    assert_int_equal(sl_pipeline_release_outputs(p), SL_EMISUSE);
    assert_int_equal(sl_pipeline_run(p), SL_OK); /* run() after the scheduled API */
    assert_int_equal(sl_pipeline_iteration(p), 3);
    sl_pipeline_destroy(p);
    assert_int_equal(sl_pipeline_run(NULL), SL_EMISUSE);
    assert_int_equal(sl_pipeline_create(NULL, NULL, &p), SL_EMISUSE);
    assert_true(strlen(sl_last_error()) > 0);
    sl_graph_destroy(g);
}

/* After the first epoch has grown every buffer, further epochs allocate nothing. */
static void test_steady_state_no_alloc(void **state)
{
    const char *root = tu_env_dir("SLUICE_TEST_TREE");
    char **paths;
    int *labels;
    int n = tree_files(root, &paths, &labels);
    sl_graph *g = make_graph(root, -1);
    sl_pipeline *p = make_pipeline(g, n % 10 == 0 ? 10 : 1, 2, 3); /* epochs end on batches */
    int per_epoch = n / (n % 10 == 0 ? 10 : 1);
    for (int it = 0; it < 2 * per_epoch; it++)
        assert_int_equal(sl_pipeline_run(p), SL_OK);
    uint64_t before = sl__alloc_count();
    for (int it = 0; it < 2 * per_epoch; it++)
        assert_int_equal(sl_pipeline_run(p), SL_OK);
    assert_int_equal(sl__alloc_count() - before, 0);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
    for (int i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    free(labels);
}

/* Intermediate outputs (the decoded images, the coin flips) have two buffers shared by all
 * slots, which a slot borrows only while its iteration needs it; pipeline outputs (cmn,
 * reader:1) and a source's (reader:0: it runs ahead) keep one per slot. Checked with iterations
 * shared, in flight and done. */
static void test_intermediates_share_storage(void **state)
{
    g_fuse = 0; /* fused, the decoder would have no storage at all (test_sample_fusion) */
    sl_graph *g = make_graph(tu_env_dir("SLUICE_TEST_TREE"), 3);
    sl_pipeline *p = make_pipeline(g, 5, 4, 3);
    const sl__plan *plan = p->plan;
    int dec = -1, cmn = -1, reader = -1;
    for (int j = 0; j < plan->n; j++) {
        dec = strcmp(plan->nodes[j].name, "dec") == 0 ? j : dec;
        cmn = strcmp(plan->nodes[j].name, "cmn") == 0 ? j : cmn;
        reader = strcmp(plan->nodes[j].name, "reader") == 0 ? j : reader;
    }
    assert_true(dec >= 0 && cmn >= 0 && reader >= 0);
    assert_true(p->istores[dec].stored[0]);
    assert_false(p->istores[reader].stored[0] || p->istores[reader].stored[1] ||
                 p->istores[cmn].stored[0]);
    for (int it = 0; it < 12; it++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK); /* later iterations are in flight */
        pthread_mutex_lock(&p->mu);
        int holders = 0;
        for (int s = 0; s < p->depth; s++) {
            const sl__slot *slot = &p->slots[s];
            holders += slot->nodes[dec].holds;
            /* a finished iteration borrows nothing (running ones are written without mu) */
            if (slot->state == SLOT_SHARED || slot->state == SLOT_READY) {
                assert_false(slot->nodes[dec].holds || slot->nodes[reader].holds);
                assert_null(slot->nodes[dec].outs[0].data);
                assert_non_null(slot->nodes[reader].outs[0].data);
                assert_non_null(slot->nodes[reader].outs[1].data);
                assert_non_null(slot->nodes[cmn].outs[0].data);
            }
        }
        assert_true(holders <= SL__ISTORE_BUFS);
        pthread_mutex_unlock(&p->mu);
    }
    sl_pipeline_destroy(p);
    /* and the results are those of depth 1 (test_determinism covers the other depths) */
    assert_true(run_hash(g, 4, 3, 8) == run_hash(g, 1, 1, 8));
    g_fuse = 1;
    sl_graph_destroy(g);
}

/* The chain dec -> resize -> flip -> cmn fuses: three intermediates, both scratch buffers in
 * turn. */
static sl_graph *make_chain_graph(const char *root, double crop)
{
    return make_graph_with(root, 5, CHAIN_RESIZE, crop);
}

static const char *fused_into(const sl_pipeline *p, const char *name)
{
    for (int i = 0; i < sl_pipeline_num_nodes(p); i++) {
        sl_node_stats s;
        assert_int_equal(sl_pipeline_node_stats(p, i, &s), SL_OK);
        if (strcmp(s.name, name) == 0)
            return s.fused_into ? s.fused_into : "(none)";
    }
    fail_msg("no node %s", name);
    return NULL;
}

/* Sample fusion: a node whose one output only feeds a per-sample consumer runs sample by
 * sample with it. The outputs are those of the unfused pipeline for every thread count and
 * depth, the intermediates never exist as batches, and nothing is allocated in steady state. */
static void test_sample_fusion(void **state)
{
    sl_graph *g = make_chain_graph(tu_env_dir("SLUICE_TEST_TREE"), 32);
    g_fuse = 0;
    uint64_t ref = run_hash(g, 1, 1, 9);
    sl_pipeline *p = make_pipeline(g, 6, 2, 2);
    assert_string_equal(fused_into(p, "dec"), "(none)");
    sl_pipeline_destroy(p);
    g_fuse = 1;
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.fuse_samples = 2;
    p = NULL;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_EINVAL);
    assert_null(p);
    assert_non_null(strstr(sl_last_error(), "fuse_samples must be 0 or 1, got 2"));
    int configs[][2] = {{1, 1}, {2, 2}, {4, 3}, {3, 1}};
    for (int c = 0; c < 4; c++)
        assert_true(run_hash(g, configs[c][0], configs[c][1], 9) == ref);

    /* Regions of interest: random_resized_crop tells the fused decoder which part of the
     * image it reads, and the decoder decodes only that; cmn tells resize which part of its
     * output it crops, resize computes only those pixels and tells the decoder what they need
     * (sl_ctx_input_roi / sl_ctx_output_roi). The same results. */
    for (enum chain ch = CHAIN_RRC; ch <= CHAIN_VAL; ch++) {
        sl_graph *rg = make_graph_with(tu_env_dir("SLUICE_TEST_TREE"), 5, ch, 32);
        g_fuse = 0;
        uint64_t rref = run_hash(rg, 2, 2, 9);
        g_fuse = 1;
        for (int c = 0; c < 4; c++)
            assert_true(run_hash(rg, configs[c][0], configs[c][1], 9) == rref);
        p = make_pipeline(rg, 6, 2, 2);
        assert_string_equal(fused_into(p, "dec"), ch == CHAIN_RRC ? "rrc" : "resize");
        sl_pipeline_destroy(p);
        sl_graph_destroy(rg);
    }

    /* samples larger than fuse_keep get buffers of their own, freed after their consumer ran
     * (ASan: nothing leaks, nothing is read after it is freed); the same results */
    for (int c = 0; c < 2; c++) {
        p = make_pipeline(g, 6, configs[c][0], configs[c][1]);
        p->fuse_keep = 1024;
        uint64_t h = 0xCBF29CE484222325ull;
        for (int it = 0; it < 9; it++) {
            assert_int_equal(sl_pipeline_run(p), SL_OK);
            h = tu_hash_batch(sl_pipeline_output(p, 0), h);
            h = tu_hash_batch(sl_pipeline_output(p, 1), h);
        }
        assert_true(h == ref);
        sl_pipeline_destroy(p);
    }

    /* one thread: which worker meets the largest sample is then fixed, so after two epochs the
     * scratch has grown to everything it needs */
    p = make_pipeline(g, 6, 1, 2);
    assert_string_equal(fused_into(p, "dec"), "resize");
    assert_string_equal(fused_into(p, "resize"), "flip");
    assert_string_equal(fused_into(p, "flip"), "cmn");
    assert_string_equal(fused_into(p, "cmn"), "(none)");    /* a pipeline output */
    assert_string_equal(fused_into(p, "reader"), "(none)"); /* a source: runs ahead */
    assert_string_equal(fused_into(p, "coin"), "(none)");   /* an argument input */
    for (int it = 0; it < 2 * (int)sl_pipeline_epoch_size(p, "reader") / 6 + 1; it++)
        assert_int_equal(sl_pipeline_run(p), SL_OK);
    uint64_t before = sl__alloc_count();
    for (int it = 0; it < 6; it++)
        assert_int_equal(sl_pipeline_run(p), SL_OK);
    assert_int_equal(sl__alloc_count() - before, 0);
    pthread_mutex_lock(&p->mu);
    for (int j = 0; j < p->plan->n; j++) {
        bool fused = p->plan->nodes[j].fuse_into >= 0;
        assert_true(fused == (strcmp(p->plan->nodes[j].name, "dec") == 0 ||
                              strcmp(p->plan->nodes[j].name, "resize") == 0 ||
                              strcmp(p->plan->nodes[j].name, "flip") == 0));
        for (int s = 0; fused && s < p->depth; s++) {
            assert_null(p->slots[s].nodes[j].outs[0].data);
            assert_non_null(p->slots[s].nodes[j].outs[0].sample_ptrs);
        }
    }
    pthread_mutex_unlock(&p->mu);
    sl_node_stats st;
    for (int i = 0; i < sl_pipeline_num_nodes(p); i++) {
        assert_int_equal(sl_pipeline_node_stats(p, i, &st), SL_OK);
        assert_true(st.iterations >= 12);
        assert_true(st.busy_ms > 0);
    }
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* A failure inside a fused chain names the node that failed (here the tail's setup: the crop
 * does not fit the resized images), not its fused producers, and the chain's nodes all
 * complete (no hang, nothing leaked). Then a corrupt file fails the head, named as such. */
static void test_sample_fusion_errors(void **state)
{
    sl_graph *g = make_chain_graph(tu_env_dir("SLUICE_TEST_TREE"), 64);
    sl_pipeline *p = make_pipeline(g, 4, 2, 2);
    assert_string_equal(fused_into(p, "flip"), "cmn");
    for (int it = 0; it < 3; it++) {
        assert_int_equal(sl_pipeline_run(p), SL_EINVAL);
        const char *msg = sl_pipeline_error(p);
        if (!strstr(msg, "crop_mirror_normalize") || !strstr(msg, "node \"cmn\"") ||
            !strstr(msg, ".jpg"))
            fail_msg("unexpected error: %s", msg);
    }
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);

    char bad[1300];
    char *dir = make_corrupt_tree(bad, sizeof bad);
    g = make_chain_graph(dir, 32);
    p = make_pipeline(g, 4, 2, 2);
    check_error_at_2(p, bad);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
    tu_rmtree(dir);
    free(dir);
}

/* Per-node stats count iterations; the trace is valid JSON with one span per node run. */
static void test_stats_and_trace(void **state)
{
    sl_graph *g = make_graph(tu_env_dir("SLUICE_TEST_TREE"), -1);
    sl_pipeline *p = make_pipeline(g, 4, 2, 2);
    for (int it = 0; it < 5; it++)
        assert_int_equal(sl_pipeline_run(p), SL_OK);
    assert_int_equal(sl_pipeline_num_nodes(p), 4);
    for (int i = 0; i < 4; i++) {
        sl_node_stats s;
        assert_int_equal(sl_pipeline_node_stats(p, i, &s), SL_OK);
        assert_true(s.iterations >= 5 && s.iterations <= 6); /* 6th may be in flight */
        assert_true(s.total_ms > 0 && s.busy_ms > 0);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(sl_pipeline_write_trace(p, f), SL_OK);
    fclose(f);
    json_error_t je;
    json_t *j = json_loads(buf, 0, &je);
    assert_non_null(j);
    assert_true(json_array_size(json_object_get(j, "traceEvents")) >= 20);
    json_decref(j);
    free(buf);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* With the split API, a failed iteration frees only its own slot: iterations still shared stay
 * intact and must still be released. */
static void test_error_with_shared_iterations(void **state)
{
    char bad[1300];
    char *dir = make_corrupt_tree(bad, sizeof bad);
    sl_graph *g = make_graph(dir, -1);
    sl_pipeline *p = make_pipeline(g, 4, 2, 3);
    assert_int_equal(sl_pipeline_schedule_run(p), SL_OK); /* iterations 0, 1, 2 */
    assert_int_equal(sl_pipeline_share_outputs(p), SL_OK);
    uint64_t h0 = tu_hash_batch(sl_pipeline_output(p, 0), 1);
    const sl_batch *b0 = sl_pipeline_output(p, 0);
    assert_int_equal(sl_pipeline_share_outputs(p), SL_OK);
    uint64_t h1 = tu_hash_batch(sl_pipeline_output(p, 0), 1);
    assert_int_equal(sl_pipeline_share_outputs(p), SL_ECORRUPT); /* iteration 2 */
    assert_non_null(strstr(sl_pipeline_error(p), bad));
    assert_int_equal(sl_pipeline_iteration(p), 1); /* still the last one shared */
    assert_true(tu_hash_batch(sl_pipeline_output(p, 0), 1) == h1);
    assert_true(tu_hash_batch(b0, 1) == h0);
    const sl_batch *b1 = sl_pipeline_output(p, 0);
    assert_int_equal(sl_pipeline_release_outputs(p), SL_OK); /* frees iteration 0's slot */
    assert_int_equal(sl_pipeline_schedule_run(p), SL_OK);    /* iteration 3, in that slot */
    assert_int_equal(sl_pipeline_share_outputs(p), SL_OK);
    assert_int_equal(sl_pipeline_iteration(p), 3);
    assert_true(tu_hash_batch(b1, 1) == h1); /* iteration 1 is still shared, untouched */
    assert_int_equal(sl_pipeline_release_outputs(p), SL_OK);
    assert_int_equal(sl_pipeline_release_outputs(p), SL_OK);
    assert_int_equal(sl_pipeline_release_outputs(p), SL_EMISUSE);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
    tu_rmtree(dir);
    free(dir);
}

/* Feeds n int32 scalars (value base + i) to node `name`. */
static sl_status feed_ints(sl_pipeline *p, const char *name, int n, int base)
{
    int32_t v[8];
    const void *data[8];
    int64_t shapes[8];
    for (int i = 0; i < n; i++) {
        v[i] = base + i;
        data[i] = &v[i];
        shapes[i] = 1;
    }
    sl_feed f = {
        .num_samples = n, .ndim = 1, .dtype = SL_DTYPE_INT32, .shapes = shapes, .data = data};
    return sl_pipeline_feed_input(p, name, &f);
}

/* An iteration's batch size is the size fed to its external sources (up to batch_size); the
 * sources of one iteration must agree. */
static void test_variable_batch_size(void **state)
{
    sl_graph *g;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    sl_graph_add(g, "external_source", "a", NULL);
    sl_graph_add(g, "external_source", "b", NULL);
    sl_graph_add(g, "arithmetic", "sum", NULL);
    sl_graph_arg_str(g, "sum", "op", "add");
    sl_graph_input(g, "sum", "a");
    sl_graph_input(g, "sum", "b");
    sl_graph_output(g, "sum");
    sl_pipeline *p = make_pipeline(g, 4, 2, 1); /* depth 1: run k starts iteration k */
    int sizes[] = {4, 3, 1, 4};
    for (int k = 0; k < 4; k++) {
        assert_int_equal(feed_ints(p, "a", sizes[k], 10 * k), SL_OK);
        assert_int_equal(feed_ints(p, "b", sizes[k], 100), SL_OK);
    }
    assert_int_equal(feed_ints(p, "a", 5, 0), SL_EINVAL); /* more than batch_size */
    assert_non_null(strstr(sl_pipeline_error(p), "expected 1 to 4"));
    for (int k = 0; k < 4; k++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        const sl_batch *b = sl_pipeline_output(p, 0);
        assert_int_equal(sl_batch_size(b), sizes[k]);
        for (int i = 0; i < sizes[k]; i++)
            assert_int_equal(*(const int32_t *)sl_batch_sample_data(b, i), 10 * k + 2 * i + 100);
    }
    assert_int_equal(sl_pipeline_run(p), SL_EINVAL); /* iteration 4: nothing fed */
    assert_non_null(strstr(sl_pipeline_error(p), "no data was fed"));
    assert_int_equal(feed_ints(p, "a", 2, 0), SL_OK); /* iteration 5: the sources disagree */
    assert_int_equal(feed_ints(p, "b", 3, 0), SL_OK);
    assert_int_equal(sl_pipeline_run(p), SL_EINVAL);
    assert_non_null(strstr(sl_pipeline_error(p), "but node \"a\" was fed 2"));
    assert_int_equal(feed_ints(p, "a", 2, 7), SL_OK); /* iteration 6 is fine again */
    assert_int_equal(feed_ints(p, "b", 2, 7), SL_OK);
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    assert_int_equal(sl_batch_size(sl_pipeline_output(p, 0)), 2);
    assert_int_equal(*(const int32_t *)sl_batch_sample_data(sl_pipeline_output(p, 0), 1), 16);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

static void count_release(void *ctx)
{
    ++*(int *)ctx;
}

/* Feeds node `name` n int32 samples data[0..n-1], lent (release counts into *released) or
 * copied (released NULL). */
static void feed_int_batch(sl_pipeline *p, const char *name, const int32_t *data, int n,
                           int *released)
{
    const void *ptr[4];
    int64_t shapes[4];
    for (int i = 0; i < n; i++) {
        ptr[i] = &data[i];
        shapes[i] = 1;
    }
    sl_feed f = {.num_samples = n,
                 .ndim = 1,
                 .dtype = SL_DTYPE_INT32,
                 .shapes = shapes,
                 .data = ptr,
                 .release = released ? count_release : NULL,
                 .release_ctx = released};
    assert_int_equal(sl_pipeline_feed_input(p, name, &f), SL_OK);
}

/* Lent batches (sl_feed.release) are read in place and given back exactly once: as soon as
 * their samples were copied into the output; when an iteration failed before copying them,
 * when its slot moves on or the pipeline is destroyed. */
static void test_lent_feed(void **state)
{
    sl_graph *g;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    sl_graph_add(g, "external_source", "a", NULL);
    sl_graph_add(g, "external_source", "b", NULL);
    sl_graph_output(g, "a");
    sl_graph_output(g, "b");
    sl_pipeline *p = make_pipeline(g, 2, 2, 1);
    int32_t data[5][2] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}};
    int released = 0;
    for (int k = 0; k < 5; k++) {
        feed_int_batch(p, "a", data[k], 2, &released);
        feed_int_batch(p, "b", data[k], k == 1 ? 1 : 2, NULL); /* iteration 1: sizes disagree */
    }
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    assert_int_equal(*(const int32_t *)sl_batch_sample_data(sl_pipeline_output(p, 0), 1), 2);
    assert_int_equal(released, 1); /* copied: given back before the iteration was delivered */
    assert_int_equal(sl_pipeline_run(p), SL_EINVAL); /* failed before copying */
    assert_non_null(strstr(sl_pipeline_error(p), "was fed 2"));
    assert_int_equal(released, 1); /* still lent to the failed iteration's slot */
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    assert_int_equal(*(const int32_t *)sl_batch_sample_data(sl_pipeline_output(p, 0), 1), 6);
    assert_int_equal(released, 3); /* the failed one's at recycling, iteration 2's copied */
    sl_pipeline_destroy(p);        /* gives back the unused fourth and fifth */
    assert_int_equal(released, 5);
    sl_graph_destroy(g);
}

/* A pinned iteration's buffers survive release and later runs: the iteration that needs the
 * pinned slot runs in other buffers (outputs.c; test_exec_held.c has the rest). */
static void test_pinned_outputs(void **state)
{
    sl_graph *g = make_graph(tu_env_dir("SLUICE_TEST_TREE"), 5);
    sl_pipeline *p = make_pipeline(g, 4, 2, 2);
    assert_null(sl_pipeline_outputs_pin(p)); /* nothing shared yet */
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    sl_outputs *o = sl_pipeline_outputs_pin(p);
    assert_non_null(o);
    assert_int_equal(sl_outputs_iteration(o), 0);
    uint64_t h0 = tu_hash_batch(sl_outputs_get(o, 0), 1);
    const void *data0 = sl_batch_data(sl_outputs_get(o, 0));
    for (int k = 1; k < 4; k++) { /* iteration 2 needs the pinned slot: it gets other buffers */
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        assert_int_equal(sl_pipeline_iteration(p), k);
        assert_ptr_not_equal(sl_batch_data(sl_pipeline_output(p, 0)), data0);
    }
    assert_int_equal(sl_outputs_iteration(o), 0);
    assert_true(tu_hash_batch(sl_outputs_get(o, 0), 1) == h0);
    sl_outputs_unpin(o);
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    assert_int_equal(sl_pipeline_iteration(p), 4);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

static void *holds_lock_thread(void *arg)
{
    return (void *)(uintptr_t)sl__exec_holds_lock(arg);
}

/* The pipeline lock's owner check (exec.h): exact per thread, and a `_locked` function called
 * without the lock aborts (in a child: assert() is on in every configuration of this build). */
static void test_lock_checks(void **state)
{
#ifdef NDEBUG
    skip(); /* the checks are compiled out */
#else
    sl_graph *g = make_graph(tu_env_dir("SLUICE_TEST_TREE"), -1);
    sl_pipeline *p = make_pipeline(g, 2, 2, 2);
    assert_false(sl__exec_holds_lock(p));
    sl__exec_lock(p);
    assert_true(sl__exec_holds_lock(p));
    pthread_t t;
    void *other = (void *)1;
    assert_int_equal(pthread_create(&t, NULL, holds_lock_thread, p), 0);
    assert_int_equal(pthread_join(t, &other), 0);
    assert_null(other); /* another thread does not hold it */
    sl__exec_unlock(p);
    assert_false(sl__exec_holds_lock(p));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGABRT, SIG_DFL);
        sl__exec_start_frames_locked(p); /* without the lock: the assertion fires */
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status))
        fail_msg("the child exited with %d instead of aborting", WEXITSTATUS(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
    assert_int_equal(sl_pipeline_run(p), SL_OK); /* the lock works as before */
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
#endif
}

/* ---- num_threads 0 --------------------------------------------------------------------- */

typedef struct caller_fx {
    pthread_t caller;
    int calls, other_thread;
    int64_t next_iteration;
    int64_t shape[4][1];
} caller_fx;

/* python_function's C side: hands back its input sample by sample, and records the thread. */
static sl_status identity_on_caller(void *user, sl_callback_call *call)
{
    caller_fx *fx = user;
    fx->calls++;
    fx->other_thread += !pthread_equal(pthread_self(), fx->caller);
    if (call->iteration != fx->next_iteration++)
        fx->other_thread += 1000; /* out of order: fails below */
    for (int i = 0; i < call->batch_size; i++) {
        const sl_batch *in = call->inputs[0];
        fx->shape[i][0] = sl_batch_shape(in, i)[0];
        call->outputs[i] = (sl_sample_view){.dtype = SL_DTYPE_UINT8,
                                            .ndim = 1,
                                            .shape = fx->shape[i],
                                            .data = sl_batch_sample_data(in, i)};
    }
    return SL_OK;
}

/* num_threads 0: every task runs on the thread that waits (sl_pipeline_run), in iteration
 * order, with the outputs of any other thread count; no worker thread exists. The options'
 * range is [0, 1024] or -1, and "auto" prefetch is not tuned (nothing idles). */
static void test_caller_runs(void **state)
{
    (void)state;
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "external_source", "in", NULL), SL_OK);
    assert_int_equal(sl_graph_add(g, "python_function", "f", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "f", "in"), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "f", "num_outputs", 1), SL_OK);
    assert_int_equal(sl_graph_output(g, "f:0"), SL_OK);
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 3;
    o.num_threads = 0;
    sl_pipeline *p = NULL;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    caller_fx fx = {.caller = pthread_self()};
    assert_int_equal(sl_pipeline_set_callback(p, "f", identity_on_caller, &fx), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_OK);
    assert_int_equal(sl__tpool_threads(p->pool), 0);
    sl_prefetch_stats ps;
    assert_int_equal(sl_pipeline_prefetch_stats(p, &ps), SL_OK);
    assert_false(ps.autotune);
    assert_int_equal(ps.depth, 2);
    assert_int_equal(ps.num_threads, 0);
    static uint8_t data[6][3][8];
    for (int it = 0; it < 6; it++) {
        const void *ptrs[3];
        int64_t shapes[3];
        for (int i = 0; i < 3; i++) {
            shapes[i] = 1 + (it + i) % 8;
            for (int k = 0; k < 8; k++)
                data[it][i][k] = (uint8_t)(it * 31 + i * 7 + k);
            ptrs[i] = data[it][i];
        }
        sl_feed f = {.num_samples = 3,
                     .ndim = 1,
                     .dtype = SL_DTYPE_UINT8,
                     .shapes = shapes,
                     .data = (const void *const *)ptrs};
        assert_int_equal(sl_pipeline_feed_input(p, "in", &f), SL_OK);
        if (it == 0) /* the first run asks for two iterations */
            continue;
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        int done = it - 1;
        assert_int_equal(sl_pipeline_iteration(p), done);
        const sl_batch *b = sl_pipeline_output(p, 0);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(sl_batch_shape(b, i)[0], 1 + (done + i) % 8);
            assert_memory_equal(sl_batch_sample_data(b, i), data[done][i],
                                (size_t)(1 + (done + i) % 8));
        }
    }
    assert_true(fx.calls >= 5);
    assert_int_equal(fx.other_thread, 0);
    sl_pipeline_destroy(p);

    int bad[] = {-2, 1025};
    for (int k = 0; k < 2; k++) {
        o.num_threads = bad[k];
        assert_int_equal(sl_pipeline_create(g, &o, &p), SL_EINVAL);
        assert_null(p);
        assert_non_null(strstr(sl_last_error(), "num_threads must be in [0, 1024]"));
    }
    sl_graph_destroy(g);

    /* a reader pipeline with "auto" prefetch: fixed at 2, with its reason */
    g = make_graph(tu_env_dir("SLUICE_TEST_TREE"), 5);
    o.num_threads = 0;
    o.batch_size = 4;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_OK);
    for (int it = 0; it < 3; it++)
        assert_int_equal(sl_pipeline_run(p), SL_OK);
    assert_int_equal(sl_pipeline_prefetch_stats(p, &ps), SL_OK);
    assert_false(ps.autotune);
    assert_int_equal(ps.depth, 2);
    assert_non_null(strstr(ps.reason, "num_threads 0"));
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* ---- the intermediate storage's two buffers ------------------------------------------------ */

typedef struct overlap_fx {
    sl_pipeline *p;
    int gen;      /* the generator's node */
    int saw_next; /* the consumer's iteration 0 saw the generator's iteration 1 allocate */
    int64_t shape[4][1];
    uint8_t byte[4];
} overlap_fx;

/* python_function with no inputs: one byte per sample (its iteration). */
static sl_status overlap_gen(void *user, sl_callback_call *call)
{
    overlap_fx *fx = user;
    for (int i = 0; i < call->batch_size; i++) {
        fx->shape[i][0] = 1;
        call->outputs[i] = (sl_sample_view){.dtype = SL_DTYPE_UINT8,
                                            .ndim = 1,
                                            .shape = fx->shape[i],
                                            .data = &fx->byte[call->iteration % 4]};
    }
    return SL_OK;
}

/* Its consumer: iteration 0 waits (5 s at most) until the generator's iteration 1 has taken
 * its output storage (white-box: the storage's turn has passed iteration 1), a batch tail
 * that later iterations should fill; then hands its input back. */
static sl_status overlap_consume(void *user, sl_callback_call *call)
{
    overlap_fx *fx = user;
    for (int k = 0; call->iteration == 0 && k < 5000 && !fx->saw_next; k++) {
        pthread_mutex_lock(&fx->p->mu);
        fx->saw_next = fx->p->istores[fx->gen].next >= 2;
        pthread_mutex_unlock(&fx->p->mu);
        usleep(1000);
    }
    static int64_t one[1] = {1};
    for (int i = 0; i < call->batch_size; i++)
        call->outputs[i] = (sl_sample_view){.dtype = SL_DTYPE_UINT8,
                                            .ndim = 1,
                                            .shape = one,
                                            .data = sl_batch_sample_data(call->inputs[0], i)};
    return SL_OK;
}

/* A stored intermediate output (the generator's) has two buffers: while iteration 0's consumer
 * is still running, iteration 1 runs the generator in the other buffer (with one, it waited for
 * that consumer: the threads idled through every batch's tail). The values stay each
 * iteration's own, and at most two iterations hold the storage. */
static void test_intermediate_buffers_overlap(void **state)
{
    (void)state;
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "python_function", "gen", NULL), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "gen", "num_outputs", 1), SL_OK);
    assert_int_equal(sl_graph_add(g, "python_function", "use", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "use", "gen"), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "use", "num_outputs", 1), SL_OK);
    assert_int_equal(sl_graph_output(g, "use:0"), SL_OK);
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 3;
    o.num_threads = 2;
    o.prefetch_queue_depth = 3;
    sl_pipeline *p = NULL;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    overlap_fx fx = {.p = p, .byte = {10, 11, 12, 13}};
    assert_int_equal(sl_pipeline_set_callback(p, "gen", overlap_gen, &fx), SL_OK);
    assert_int_equal(sl_pipeline_set_callback(p, "use", overlap_consume, &fx), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_OK);
    int gen = -1;
    for (int j = 0; j < p->plan->n; j++)
        gen = strcmp(p->plan->nodes[j].name, "gen") == 0 ? j : gen;
    assert_true(gen >= 0 && p->istores[gen].stored[0]);
    fx.gen = gen;
    for (int it = 0; it < 8; it++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        const sl_batch *b = sl_pipeline_output(p, 0);
        for (int i = 0; i < 3; i++)
            assert_int_equal(*(const uint8_t *)sl_batch_sample_data(b, i), 10 + it % 4);
        pthread_mutex_lock(&p->mu);
        int holders = 0;
        for (int s = 0; s < p->depth; s++)
            holders += p->slots[s].nodes[gen].holds;
        assert_true(holders <= SL__ISTORE_BUFS);
        pthread_mutex_unlock(&p->mu);
    }
    assert_true(fx.saw_next);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_caller_runs),
        cmocka_unit_test(test_error_delivery),
        cmocka_unit_test(test_shutdown_in_flight),
        cmocka_unit_test(test_run_api),
        cmocka_unit_test(test_steady_state_no_alloc),
        cmocka_unit_test(test_stats_and_trace),
        cmocka_unit_test(test_pinned_outputs),
        cmocka_unit_test(test_error_with_shared_iterations),
        cmocka_unit_test(test_variable_batch_size),
        cmocka_unit_test(test_lent_feed),
        cmocka_unit_test(test_intermediates_share_storage),
        cmocka_unit_test(test_intermediate_buffers_overlap),
        cmocka_unit_test(test_sample_fusion),
        cmocka_unit_test(test_sample_fusion_errors),
        cmocka_unit_test(test_lock_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
