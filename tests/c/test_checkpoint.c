/* test_checkpoint: sl_pipeline_checkpoint and restoring through sl_pipeline_options.checkpoint.
 *
 * The data set: N = 23 small files in a mkdtemp directory, file i holding the text "<i>:" plus
 * i bytes, listed with readers.file's `files` (labels i); one listed file does not exist, so
 * with on_bad_sample "replace" its sample is replaced (and counted). The graph reads them
 * shuffled (a fresh permutation per epoch) and draws random.uniform and random.coin_flip per
 * sample. Batches of 4: an epoch is 5.75 batches, so batches straddle epoch boundaries.
 *
 * The reference is the uninterrupted run of T iterations: every output's shapes and bytes per
 * iteration. For many k (0 to T - 1, inside and across epochs), with 1 and 4 threads and
 * prefetch depths 1 and 3, a pipeline runs k iterations (the prefetch running ahead), is
 * checkpointed, and a FRESH PROCESS (fork, then a new pipeline there) restores the text and
 * runs to T: its outputs must equal the reference's iterations k..T-1 byte for byte, and its
 * bad-sample count the reference's. Mismatching pipelines (graph, batch size, seed, shard),
 * text that is no checkpoint and checkpoint() without enable_checkpointing fail with clear
 * messages.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sluice/op.h"
#include "sluice/registry.h"
#include "sluice/sluice.h"

#define N 23
#define MISSING 13 /* the listed file that does not exist */
#define BS 4
#define T 16 /* iterations of the reference run: about 2.8 epochs */

static char g_root[64];
static char g_path[N][128];

/* The reference: per iteration, its outputs serialised (shapes, then bytes). */
typedef struct run_bytes {
    char *buf[T];
    size_t len[T];
    int64_t bad[T]; /* sl_pipeline_bad_samples after iteration t */
} run_bytes;

static void run_bytes_fini(run_bytes *r)
{
    for (int t = 0; t < T; t++)
        free(r->buf[t]);
    memset(r, 0, sizeof *r);
}

/* ---- the pipeline ------------------------------------------------------------------------- */

typedef struct variant {
    int batch_size, threads, prefetch;
    int64_t seed;
    int64_t uniform_seed; /* the random.uniform node's seed argument (a graph change) */
    int shard_id, num_shards;
    bool checkpointing;
} variant;

static sl_graph *make_graph(const variant *v)
{
    sl_graph *g = NULL;
    const char *files[N];
    int64_t labels[N];
    for (int i = 0; i < N; i++) {
        files[i] = g_path[i];
        labels[i] = i;
    }
    double range[2] = {-1.0, 1.0};
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "readers.file", "r", NULL), SL_OK);
    assert_int_equal(sl_graph_arg_strs(g, "r", "files", files, N), SL_OK);
    assert_int_equal(sl_graph_arg_ints(g, "r", "labels", labels, N), SL_OK);
    assert_int_equal(sl_graph_arg_bool(g, "r", "random_shuffle", true), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "r", "seed", 7), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "r", "shard_id", v->shard_id), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "r", "num_shards", v->num_shards), SL_OK);
    assert_int_equal(sl_graph_add(g, "random.uniform", "u", NULL), SL_OK);
    assert_int_equal(sl_graph_arg_floats(g, "u", "range", range, 2), SL_OK);
    if (v->uniform_seed >= 0)
        assert_int_equal(sl_graph_arg_int(g, "u", "seed", v->uniform_seed), SL_OK);
    assert_int_equal(sl_graph_add(g, "random.coin_flip", "c", NULL), SL_OK);
    assert_int_equal(sl_graph_output(g, "r:0"), SL_OK);
    assert_int_equal(sl_graph_output(g, "r:1"), SL_OK);
    assert_int_equal(sl_graph_output(g, "u"), SL_OK);
    assert_int_equal(sl_graph_output(g, "c"), SL_OK);
    return g;
}

static void quiet(void *user, const char *line)
{
    (void)user;
    (void)line;
}

/* A pipeline of variant v restoring `ckpt` (NULL: none); *st the create or build result. */
static sl_pipeline *make(const variant *v, const char *ckpt, sl_status *st)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = v->batch_size;
    o.num_threads = v->threads;
    o.prefetch_queue_depth = v->prefetch;
    o.seed = v->seed;
    o.on_bad_sample = SL_BAD_SAMPLE_REPLACE;
    o.enable_checkpointing = v->checkpointing;
    o.checkpoint = ckpt;
    sl_graph *g = make_graph(v);
    sl_pipeline *p = NULL;
    *st = sl_pipeline_create(g, &o, &p);
    sl_graph_destroy(g);
    if (*st == SL_OK) {
        sl_pipeline_set_log(p, quiet, NULL); /* the replaced sample's lines */
        *st = sl_pipeline_build(p);
    }
    return p;
}

static const variant base = {.batch_size = BS,
                             .threads = 2,
                             .prefetch = 2,
                             .seed = 1234,
                             .uniform_seed = -1,
                             .shard_id = 0,
                             .num_shards = 1,
                             .checkpointing = true};

static size_t sample_nbytes(const sl_batch *b, int i)
{
    return (size_t)sl_batch_sample_numel(b, i) * sl_dtype_size(sl_batch_dtype(b));
}

static void append(char **buf, size_t *len, const void *src, size_t n)
{
    *buf = realloc(*buf, *len + n + 1);
    assert_non_null(*buf);
    memcpy(*buf + *len, src, n);
    *len += n;
}

/* Runs one iteration of p and serialises its outputs. */
static void run_one(sl_pipeline *p, char **buf, size_t *len)
{
    sl_status st = sl_pipeline_run(p);
    if (st != SL_OK)
        fail_msg("run: %s: %s", sl_status_name(st), sl_pipeline_error(p));
    *buf = NULL;
    *len = 0;
    for (int o = 0; o < sl_pipeline_num_outputs(p); o++) {
        const sl_batch *b = sl_pipeline_output(p, o);
        int n = sl_batch_size(b);
        append(buf, len, &n, sizeof n);
        for (int i = 0; i < n; i++) {
            int nd = sl_batch_ndim(b);
            append(buf, len, sl_batch_shape(b, i), (size_t)nd * sizeof(int64_t));
            append(buf, len, sl_batch_sample_data(b, i), sample_nbytes(b, i));
        }
    }
}

static void reference(const variant *v, run_bytes *ref)
{
    sl_status st;
    sl_pipeline *p = make(v, NULL, &st);
    assert_int_equal(st, SL_OK);
    for (int t = 0; t < T; t++) {
        run_one(p, &ref->buf[t], &ref->len[t]);
        ref->bad[t] = sl_pipeline_bad_samples(p);
    }
    sl_pipeline_destroy(p);
}

/* Runs k iterations of a fresh pipeline of variant v (extra: iterations scheduled beyond them,
 * in flight when the checkpoint is taken) and returns its checkpoint (free()). */
static char *checkpoint_after(const variant *v, int k, int extra)
{
    sl_status st;
    sl_pipeline *p = make(v, NULL, &st);
    assert_int_equal(st, SL_OK);
    for (int t = 0; t < k; t++) {
        char *b;
        size_t n;
        run_one(p, &b, &n);
        free(b);
    }
    for (int e = 0; e < extra; e++)
        assert_int_equal(sl_pipeline_schedule_run(p), SL_OK);
    char *text = NULL;
    size_t len = 0;
    st = sl_pipeline_checkpoint(p, &text, &len);
    if (st != SL_OK)
        fail_msg("checkpoint: %s", sl_pipeline_error(p));
    assert_int_equal(strlen(text), len);
    char *copy = strdup(text);
    sl_checkpoint_free(text);
    sl_pipeline_destroy(p);
    return copy;
}

/* In a child process: restores `ckpt` into a new pipeline of variant v, runs iterations k..T-1
 * and compares them (and the bad-sample counts) with ref. Exit status 0 when all equal. */
static int child_compare(const variant *v, const char *ckpt, int k, const run_bytes *ref)
{
    sl_status st;
    sl_pipeline *p = make(v, ckpt, &st);
    if (st != SL_OK) {
        fprintf(stderr, "restore at %d: %s %s\n", k, sl_last_error(),
                p ? sl_pipeline_error(p) : "");
        return 2;
    }
    int rc = 0;
    for (int t = k; t < T && rc == 0; t++) {
        if (sl_pipeline_run(p) != SL_OK) {
            fprintf(stderr, "run %d: %s\n", t, sl_pipeline_error(p));
            rc = 3;
            break;
        }
        char *buf = NULL;
        size_t len = 0;
        for (int o = 0; o < sl_pipeline_num_outputs(p); o++) {
            const sl_batch *b = sl_pipeline_output(p, o);
            int n = sl_batch_size(b);
            buf = realloc(buf, len + sizeof n);
            memcpy(buf + len, &n, sizeof n);
            len += sizeof n;
            for (int i = 0; i < n; i++) {
                size_t sh = (size_t)sl_batch_ndim(b) * sizeof(int64_t);
                size_t nb = sample_nbytes(b, i);
                buf = realloc(buf, len + sh + nb + 1);
                memcpy(buf + len, sl_batch_shape(b, i), sh);
                memcpy(buf + len + sh, sl_batch_sample_data(b, i), nb);
                len += sh + nb;
            }
        }
        if (len != ref->len[t] || memcmp(buf, ref->buf[t], len) != 0) {
            fprintf(stderr, "restored at %d: iteration %d differs\n", k, t);
            rc = 4;
        } else if (sl_pipeline_bad_samples(p) != ref->bad[t]) {
            fprintf(stderr, "restored at %d: bad samples %lld after %d, expected %lld\n", k,
                    (long long)sl_pipeline_bad_samples(p), t, (long long)ref->bad[t]);
            rc = 5;
        }
        free(buf);
    }
    sl_pipeline_destroy(p);
    return rc;
}

static void restore_in_child(const variant *v, const char *ckpt, int k, const run_bytes *ref)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_compare(v, ckpt, k, ref));
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("threads %d, prefetch %d: restoring after %d iterations: child status %d",
                 v->threads, v->prefetch, k, status);
}

/* ---- tests -------------------------------------------------------------------------------- */

/* The reference itself: the data set is what the test thinks (every sample once per epoch,
 * the missing file replaced and counted), so the comparisons below compare something. */
static void test_reference_is_meaningful(void **state)
{
    (void)state;
    run_bytes a = {0}, b = {0};
    reference(&base, &a);
    variant v = base;
    v.threads = 4;
    v.prefetch = 3;
    reference(&v, &b);
    for (int t = 0; t < T; t++) {
        assert_int_equal(a.len[t], b.len[t]); /* threads and prefetch change nothing */
        assert_memory_equal(a.buf[t], b.buf[t], a.len[t]);
    }
    assert_true(a.bad[T - 1] >= 2); /* the missing file, once per epoch */
    assert_true(a.bad[0] <= a.bad[T - 1]);
    /* successive iterations differ (shuffled data, fresh random draws) */
    for (int t = 1; t < T; t++)
        assert_true(a.len[t] != a.len[t - 1] || memcmp(a.buf[t], a.buf[t - 1], a.len[t]) != 0);
    run_bytes_fini(&a);
    run_bytes_fini(&b);
}

static void sweep(int threads, int prefetch)
{
    variant v = base;
    v.threads = threads;
    v.prefetch = prefetch;
    run_bytes ref = {0};
    reference(&v, &ref);
    for (int k = 0; k < T; k++) {
        char *ckpt = checkpoint_after(&v, k, 0);
        restore_in_child(&v, ckpt, k, &ref);
        free(ckpt);
    }
    /* with more iterations in flight than the prefetch when the checkpoint is taken */
    for (int k = 1; k < T - 4; k += 3) {
        char *ckpt = checkpoint_after(&v, k, 2);
        restore_in_child(&v, ckpt, k, &ref);
        free(ckpt);
    }
    run_bytes_fini(&ref);
}

static void test_resume_1_thread_prefetch_1(void **state)
{
    (void)state;
    sweep(1, 1);
}

static void test_resume_4_threads_prefetch_3(void **state)
{
    (void)state;
    sweep(4, 3);
}

static void test_resume_4_threads_prefetch_1(void **state)
{
    (void)state;
    sweep(4, 1);
}

/* A checkpoint restored into a pipeline with other threads / prefetch (not part of what binds
 * it) continues the same. */
static void test_resume_other_threads(void **state)
{
    (void)state;
    run_bytes ref = {0};
    reference(&base, &ref);
    char *ckpt = checkpoint_after(&base, 7, 0);
    variant v = base;
    v.threads = 3;
    v.prefetch = 4;
    restore_in_child(&v, ckpt, 7, &ref);
    /* the seed left out: the checkpoint's is taken */
    v.seed = -1;
    restore_in_child(&v, ckpt, 7, &ref);
    free(ckpt);
    run_bytes_fini(&ref);
}

/* Checkpoint twice without running: the same text; a restored pipeline's own checkpoint
 * (before it runs) is the text it restored. */
static void test_checkpoint_is_stable(void **state)
{
    (void)state;
    char *a = checkpoint_after(&base, 5, 0);
    sl_status st;
    sl_pipeline *p = make(&base, a, &st);
    assert_int_equal(st, SL_OK);
    char *b = NULL;
    assert_int_equal(sl_pipeline_checkpoint(p, &b, NULL), SL_OK);
    assert_string_equal(a, b);
    assert_non_null(strstr(b, "\"iteration\":5"));
    sl_checkpoint_free(b);
    sl_pipeline_destroy(p);
    free(a);
}

static void expect_restore_error(const variant *v, const char *ckpt, sl_status code,
                                 const char *words)
{
    sl_status st;
    sl_pipeline *p = make(v, ckpt, &st);
    assert_int_equal(st, code);
    const char *msg = p ? sl_pipeline_error(p) : sl_last_error();
    if (!strstr(msg, words))
        fail_msg("expected \"%s\" in: %s", words, msg);
    sl_pipeline_destroy(p);
}

static void test_mismatch_errors(void **state)
{
    (void)state;
    char *ckpt = checkpoint_after(&base, 3, 0);
    variant v = base;
    v.uniform_seed = 99; /* another graph */
    expect_restore_error(&v, ckpt, SL_EINVAL, "different pipeline: the graphs differ");
    v = base;
    v.batch_size = 5;
    expect_restore_error(&v, ckpt, SL_EINVAL, "batch_size 4, this pipeline has batch_size 5");
    v = base;
    v.seed = 77;
    expect_restore_error(&v, ckpt, SL_EINVAL, "seed 1234, this pipeline has seed 77");
    free(ckpt);

    /* another shard of the same job: the graph differs too (its arguments), and the reader's
     * check names the shards when the graph is the same but resolves differently: here the
     * graph check comes first */
    variant s0 = base, s1 = base;
    s0.num_shards = s1.num_shards = 2;
    s1.shard_id = 1;
    ckpt = checkpoint_after(&s0, 2, 0);
    expect_restore_error(&s1, ckpt, SL_EINVAL, "different pipeline");
    free(ckpt);

    expect_restore_error(&base, "{\"iteration\": 3", SL_EINVAL, "not valid JSON");
    expect_restore_error(&base, "{\"iteration\": 3}", SL_EINVAL,
                         "not a sluice pipeline checkpoint");
}

/* A reader whose saved position cannot be in this data set is refused, naming the node. */
static void test_corrupt_state(void **state)
{
    (void)state;
    char *ckpt = checkpoint_after(&base, 2, 0);
    char *s = strstr(ckpt, "\"state\":[");
    assert_non_null(s);
    char edited[4096];
    snprintf(edited, sizeof edited, "%.*s\"state\":[0,999]%s", (int)(s - ckpt), ckpt,
             strchr(s, ']') + 1);
    expect_restore_error(&base, edited, SL_EINVAL, "node \"r\" (readers.file) cannot take");
    free(ckpt);
}

/* Every reader (a source with reader metadata: they all share the cursor, reader.h) saves and
 * restores its state; a reader added without SL__CURSOR_CHECKPOINT fails here by name. */
static void test_every_reader_checkpoints(void **state)
{
    (void)state;
    int readers = 0;
    for (int i = 0; i < sl_registry_count(); i++) {
        const sl_op_def *op = sl_registry_get(i);
        if (!op->reader_meta)
            continue;
        readers++;
        if (!op->checkpoint || !op->restore)
            fail_msg("%s has no checkpoint/restore functions (SL__CURSOR_CHECKPOINT)", op->name);
    }
    assert_true(readers >= 6); /* file, coco, tfrecord, webdataset, numpy, mxnet, ... */
    const sl_op_def *es = sl_registry_find("external_source");
    assert_non_null(es);
    assert_non_null(es->restore); /* it restarts its numbering at the restored iteration */
}

static void test_not_enabled(void **state)
{
    (void)state;
    variant v = base;
    v.checkpointing = false;
    sl_status st;
    sl_pipeline *p = make(&v, NULL, &st);
    assert_int_equal(st, SL_OK);
    char *text = (char *)"x";
    assert_int_equal(sl_pipeline_checkpoint(p, &text, NULL), SL_EMISUSE);
    assert_null(text);
    assert_non_null(strstr(sl_pipeline_error(p), "enable_checkpointing"));
    sl_pipeline_destroy(p);
    assert_int_equal(sl_pipeline_checkpoint(NULL, &text, NULL), SL_EMISUSE);
}

/* ---- set-up ---------------------------------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int group_setup(void **state)
{
    (void)state;
    snprintf(g_root, sizeof g_root, "/tmp/sluice_ckpt_XXXXXX");
    if (!mkdtemp(g_root))
        return -1;
    for (int i = 0; i < N; i++) {
        snprintf(g_path[i], sizeof g_path[i], "%s/s%02d.bin", g_root, i);
        if (i == MISSING)
            continue;
        FILE *f = fopen(g_path[i], "wb");
        if (!f)
            return -1;
        fprintf(f, "%d:", i);
        for (int b = 0; b < i; b++)
            fputc('a' + (b + i) % 26, f);
        fclose(f);
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return nftw(g_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_is_meaningful),
        cmocka_unit_test(test_resume_1_thread_prefetch_1),
        cmocka_unit_test(test_resume_4_threads_prefetch_3),
        cmocka_unit_test(test_resume_4_threads_prefetch_1),
        cmocka_unit_test(test_resume_other_threads),
        cmocka_unit_test(test_checkpoint_is_stable),
        cmocka_unit_test(test_mismatch_errors),
        cmocka_unit_test(test_corrupt_state),
        cmocka_unit_test(test_not_enabled),
        cmocka_unit_test(test_every_reader_checkpoints),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
