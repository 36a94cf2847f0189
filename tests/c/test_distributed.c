/* test_distributed: the launcher rules of sluice/distributed.h and "auto" shards.
 *
 * Each case sets the environment a launcher would (torchrun, Open MPI, MPICH/Hydra, SLURM),
 * then checks sl_distributed_* against the values it set by hand: the order of the rules,
 * malformed and out-of-range variables, a missing local rank, a front end's registration.
 * Then readers.file with shard_id="auto" / num_shards="auto" (C API and JSON spec) over a tree
 * of N files whose contents are their ids: every rank of a 3-process job reads exactly what the
 * same reader with explicit numbers reads, the shards are disjoint and cover the data set, and
 * every rank runs the same number of iterations (pad_last_batch); device_id "auto" becomes the
 * local rank; "auto" with no launcher fails the build naming the argument.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "graph/graph.h" /* sl__spec_write */
#include "sluice/sluice.h"
#include "testutil.h"

#define N 10 /* files in the tree */

static const char *const all_vars[] = {"RANK",
                                       "WORLD_SIZE",
                                       "LOCAL_RANK",
                                       "OMPI_COMM_WORLD_RANK",
                                       "OMPI_COMM_WORLD_SIZE",
                                       "OMPI_COMM_WORLD_LOCAL_RANK",
                                       "PMI_RANK",
                                       "PMI_SIZE",
                                       "MPI_LOCALRANKID",
                                       "PMI_LOCAL_RANK",
                                       "SLURM_PROCID",
                                       "SLURM_NTASKS",
                                       "SLURM_LOCALID"};

static void clear_env(void)
{
    for (size_t k = 0; k < sizeof all_vars / sizeof all_vars[0]; k++)
        unsetenv(all_vars[k]);
    assert_int_equal(sl_distributed_set(0, 0, -1, NULL), SL_OK);
}

static int setup_each(void **state)
{
    (void)state;
    clear_env();
    return 0;
}

static void expect_job(int rank, int world, int local, const char *source)
{
    sl_distributed d;
    assert_int_equal(sl_distributed_info(&d), SL_OK);
    assert_int_equal(d.rank, rank);
    assert_int_equal(d.world_size, world);
    assert_int_equal(d.local_rank, local);
    assert_string_equal(d.source, source);
    int r = -7, w = -7;
    assert_int_equal(sl_distributed_rank(&r), SL_OK);
    assert_int_equal(sl_distributed_world_size(&w), SL_OK);
    assert_int_equal(r, rank);
    assert_int_equal(w, world);
    int l = -7;
    if (local >= 0) {
        assert_int_equal(sl_distributed_local_rank(&l), SL_OK);
        assert_int_equal(l, local);
    } else {
        assert_int_equal(sl_distributed_local_rank(&l), SL_ENOTFOUND);
        assert_non_null(strstr(sl_last_error(), "local rank"));
        assert_int_equal(l, -7);
    }
}

static void test_none(void **state)
{
    (void)state;
    sl_distributed d;
    int r = -7;
    assert_int_equal(sl_distributed_info(&d), SL_ENOTFOUND);
    const char *e = sl_last_error();
    assert_non_null(strstr(e, "no launcher found"));
    assert_non_null(strstr(e, "WORLD_SIZE"));
    assert_non_null(strstr(e, "OMPI_COMM_WORLD_RANK"));
    assert_non_null(strstr(e, "PMI_RANK"));
    assert_non_null(strstr(e, "SLURM_PROCID"));
    assert_int_equal(sl_distributed_rank(&r), SL_ENOTFOUND);
    assert_int_equal(r, -7);
    assert_int_equal(sl_distributed_info(NULL), SL_EMISUSE);
    /* half a launcher (a rank without a size) is no launcher */
    setenv("RANK", "1", 1);
    setenv("SLURM_NTASKS", "4", 1);
    assert_int_equal(sl_distributed_info(&d), SL_ENOTFOUND);
}

static void test_each_launcher(void **state)
{
    (void)state;
    setenv("SLURM_PROCID", "5", 1);
    setenv("SLURM_NTASKS", "8", 1);
    setenv("SLURM_LOCALID", "1", 1);
    expect_job(5, 8, 1, "slurm");
    setenv("PMI_RANK", "3", 1);
    setenv("PMI_SIZE", "6", 1);
    expect_job(3, 6, -1, "mpich"); /* MPICH over SLURM's variables; no local rank given */
    setenv("PMI_LOCAL_RANK", "2", 1);
    expect_job(3, 6, 2, "mpich");
    setenv("MPI_LOCALRANKID", "0", 1); /* Hydra's spelling first */
    expect_job(3, 6, 0, "mpich");
    setenv("OMPI_COMM_WORLD_RANK", "2", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "2", 1);
    expect_job(2, 4, 2, "openmpi");
    setenv("RANK", "7", 1);
    setenv("WORLD_SIZE", "16", 1);
    setenv("LOCAL_RANK", "3", 1);
    expect_job(7, 16, 3, "torchrun");
}

static void expect_bad(const char *var, const char *value, const char *words)
{
    sl_distributed d;
    clear_env();
    setenv("RANK", "1", 1);
    setenv("WORLD_SIZE", "4", 1);
    setenv("SLURM_PROCID", "0", 1); /* a later launcher is not a fallback */
    setenv("SLURM_NTASKS", "1", 1);
    setenv(var, value, 1);
    assert_int_equal(sl_distributed_info(&d), SL_EINVAL);
    const char *e = sl_last_error();
    if (!strstr(e, var) || !strstr(e, words))
        fail_msg("%s=%s: expected \"%s\" and \"%s\" in: %s", var, value, var, words, e);
}

static void test_malformed(void **state)
{
    (void)state;
    expect_bad("RANK", "one", "not an integer");
    expect_bad("RANK", "-1", "not an integer >= 0");
    expect_bad("RANK", "1x", "not an integer");
    expect_bad("RANK", "99999999999", "not an integer");
    expect_bad("WORLD_SIZE", "0", "not an integer >= 1");
    expect_bad("RANK", "4", "out of range");
    expect_bad("LOCAL_RANK", "a", "not an integer");
}

static void test_front_end(void **state)
{
    (void)state;
    setenv("RANK", "1", 1);
    setenv("WORLD_SIZE", "2", 1);
    assert_int_equal(sl_distributed_set(3, 4, -1, "torch.distributed"), SL_OK);
    expect_job(3, 4, -1, "torch.distributed");
    assert_int_equal(sl_distributed_set(4, 4, 0, "x"), SL_EINVAL);
    assert_int_equal(sl_distributed_set(0, -1, 0, "x"), SL_EINVAL);
    assert_int_equal(sl_distributed_set(0, 1, -2, "x"), SL_EINVAL);
    expect_job(3, 4, -1, "torch.distributed"); /* a refused call changes nothing */
    assert_int_equal(sl_distributed_set(0, 0, -1, NULL), SL_OK);
    expect_job(1, 2, -1, "torchrun");
}

/* ---- readers.file with "auto" ------------------------------------------------------------- */

static char *g_root;

static int make_tree(void **state)
{
    (void)state;
    char path[PATH_MAX];
    g_root = tu_mkdtemp();
    assert_non_null(g_root);
    snprintf(path, sizeof path, "%s/c0", g_root);
    assert_int_equal(mkdir(path, 0755), 0);
    for (int id = 0; id < N; id++) {
        snprintf(path, sizeof path, "%s/c0/f%02d.txt", g_root, id);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "%d", id);
        fclose(f);
    }
    return 0;
}

static int remove_tree(void **state)
{
    (void)state;
    tu_rmtree(g_root);
    free(g_root);
    return 0;
}

/* A reader graph; shard and shards are "auto" or a number as text. */
static sl_graph *reader_graph(const char *shard, const char *shards)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"nodes\": [{\"name\": \"r\", \"op\": \"readers.file\", \"args\": {"
             "\"file_root\": \"%s\", \"file_filters\": [\"*.txt\"], \"random_shuffle\": true, "
             "\"pad_last_batch\": true, "
             "\"shard_id\": %s, \"num_shards\": %s}}], \"outputs\": [\"r:0\"]}",
             g_root, shard, shards);
    sl_graph *g = NULL;
    if (sl_graph_from_json(json, &g) != SL_OK)
        fail_msg("spec: %s", sl_last_error());
    return g;
}

/* Runs `iters` iterations of batch 2 and writes the sample ids read into ids. */
static void read_ids(sl_graph *g, int iters, int *ids, int shard, int shards)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 2;
    o.num_threads = 2;
    sl_pipeline *p;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    if (sl_pipeline_build(p) != SL_OK)
        fail_msg("build: %s", sl_pipeline_error(p));
    sl_reader_meta m;
    assert_int_equal(sl_pipeline_reader_meta(p, "r", &m), SL_OK);
    assert_int_equal(m.shard_id, shard);
    assert_int_equal(m.number_of_shards, shards);
    for (int it = 0; it < iters; it++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        const sl_batch *b = sl_pipeline_output(p, 0);
        for (int i = 0; i < 2; i++) {
            char text[16] = "";
            memcpy(text, sl_batch_sample_data(b, i), (size_t)sl_batch_sample_numel(b, i));
            ids[it * 2 + i] = atoi(text);
        }
    }
    sl_pipeline_destroy(p);
}

static void test_auto_shards(void **state)
{
    (void)state;
    enum { S = 3, PER = (N + S - 1) / S, ITERS = (PER + 1) / 2 }; /* 4 per shard, 2 iterations */
    int seen[N] = {0};
    for (int rank = 0; rank < S; rank++) {
        char r[8];
        snprintf(r, sizeof r, "%d", rank);
        clear_env();
        setenv("OMPI_COMM_WORLD_RANK", r, 1);
        setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
        int got[ITERS * 2], want[ITERS * 2];
        sl_graph *g = reader_graph("\"auto\"", "\"auto\"");
        read_ids(g, ITERS, got, rank, S);
        sl_graph_destroy(g);
        clear_env();
        g = reader_graph(r, "3");
        read_ids(g, ITERS, want, rank, S);
        sl_graph_destroy(g);
        assert_memory_equal(got, want, sizeof got);
        /* shard rank: positions [N*rank/S, N*(rank+1)/S), padded with its last sample */
        int len = N * (rank + 1) / S - N * rank / S;
        for (int k = 0; k < len; k++)
            seen[got[k]]++;
        for (int k = len; k < ITERS * 2; k++)
            assert_int_equal(got[k], got[len - 1]);
    }
    for (int id = 0; id < N; id++)
        assert_int_equal(seen[id], 1); /* disjoint and covering */
}

static void test_auto_c_api_and_no_launcher(void **state)
{
    (void)state;
    sl_graph *g;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "readers.file", "r", NULL), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "r", "file_root", g_root), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "r", "file_filters", "*.txt"), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "r", "shard_id", "auto"), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "r", "num_shards", "auto"), SL_OK);
    assert_int_equal(sl_graph_output(g, "r:0"), SL_OK);
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.num_threads = 1;
    sl_pipeline *p;
    /* no launcher: the build fails naming the argument and why */
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    assert_int_not_equal(sl_pipeline_build(p), SL_OK);
    const char *e = sl_pipeline_error(p);
    if (!strstr(e, "shard_id") || !strstr(e, "\"auto\"") || !strstr(e, "no launcher found"))
        fail_msg("unexpected error: %s", e);
    sl_pipeline_destroy(p);
    /* SLURM says rank 1 of 2 */
    setenv("SLURM_PROCID", "1", 1);
    setenv("SLURM_NTASKS", "2", 1);
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_OK);
    sl_reader_meta m;
    assert_int_equal(sl_pipeline_reader_meta(p, "r", &m), SL_OK);
    assert_int_equal(m.shard_id, 1);
    assert_int_equal(m.number_of_shards, 2);
    sl_pipeline_destroy(p);
    /* a string other than "auto" is refused */
    assert_int_equal(sl_graph_arg_str(g, "r", "shard_id", "first"), SL_OK);
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_EINVAL);
    assert_non_null(strstr(sl_pipeline_error(p), "expected an int or \"auto\""));
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

static void test_device_id_auto(void **state)
{
    (void)state;
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    assert_int_equal(sl_pipeline_options_from_json("{\"pipeline\": {\"device_id\": \"auto\"}}", &o),
                     SL_OK);
    assert_int_equal(o.device_id, SL_DEVICE_ID_AUTO);
    sl_pipeline_options bad = o;
    assert_int_not_equal(
        sl_pipeline_options_from_json("{\"pipeline\": {\"device_id\": \"gpu\"}}", &bad), SL_OK);
    assert_non_null(strstr(sl_last_error(), "\"auto\""));

    /* the spec writes it back as "auto" (the same file on every rank) */
    sl_graph *g = reader_graph("\"auto\"", "\"auto\"");
    char *json = NULL;
    assert_int_equal(sl__spec_write(g, &o, &json), SL_OK);
    assert_non_null(strstr(json, "\"device_id\": \"auto\""));
    assert_non_null(strstr(json, "\"shard_id\": \"auto\""));
    sl_pipeline_options back;
    sl_pipeline_options_init(&back);
    assert_int_equal(sl_pipeline_options_from_json(json, &back), SL_OK);
    assert_int_equal(back.device_id, SL_DEVICE_ID_AUTO);
    free(json);

    sl_pipeline *p = NULL;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_ENOTFOUND);
    assert_null(p);
    assert_non_null(strstr(sl_last_error(), "device_id \"auto\" needs the job's local rank"));
    setenv("RANK", "5", 1);
    setenv("WORLD_SIZE", "8", 1);
    setenv("LOCAL_RANK", "1", 1);
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    assert_int_equal(sl_pipeline_device_id(p), 1);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_none, setup_each),
        cmocka_unit_test_setup(test_each_launcher, setup_each),
        cmocka_unit_test_setup(test_malformed, setup_each),
        cmocka_unit_test_setup(test_front_end, setup_each),
        cmocka_unit_test_setup(test_auto_shards, setup_each),
        cmocka_unit_test_setup(test_auto_c_api_and_no_launcher, setup_each),
        cmocka_unit_test_setup(test_device_id_auto, setup_each),
    };
    return cmocka_run_group_tests(tests, make_tree, remove_tree);
}
