/* test_random: random.coin_flip and random.uniform through the public C API.
 *
 * Statistics: means (and the uniform variance) over 20,000 draws must lie within 4 standard
 * errors of the exact value (a false failure has probability ~6e-5 per check, and the seeds are
 * fixed, so a run either always passes or always fails). Determinism: the same seed gives the
 * same bytes in two pipelines and for every num_threads / prefetch_queue_depth; different seeds
 * give different values; no seed (-1) gives each pipeline a fresh one, reported by
 * sl_pipeline_seed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeutil.h"
#include "sluice/sluice.h"

#define NDRAWS 20000

/* ---- helpers ----------------------------------------------------------------------------- */

static double value_at(const sl_batch *b, int i, int64_t k)
{
    const void *d = sl_batch_sample_data(b, i);
    switch (sl_batch_dtype(b)) {
    case SL_DTYPE_INT32: return ((const int32_t *)d)[k];
    case SL_DTYPE_UINT8: return ((const uint8_t *)d)[k];
    case SL_DTYPE_BOOL: return ((const uint8_t *)d)[k];
    case SL_DTYPE_FLOAT32: return ((const float *)d)[k];
    case SL_DTYPE_FLOAT64: return ((const double *)d)[k];
    default: fail_msg("unexpected dtype %s", sl_dtype_name(sl_batch_dtype(b)));
    }
    return 0;
}

/* Runs iterations until `n` values were collected from output 0 into out[] (allocated). */
static double *collect(sl_pipeline *p, int64_t n)
{
    double *v = malloc(sizeof(double) * (size_t)n);
    int64_t got = 0;
    assert_non_null(v);
    while (got < n) {
        tu_run_ok(p);
        const sl_batch *b = sl_pipeline_output(p, 0);
        for (int i = 0; i < sl_batch_size(b) && got < n; i++)
            for (int64_t k = 0; k < sl_batch_sample_numel(b, i) && got < n; k++)
                v[got++] = value_at(b, i, k);
    }
    return v;
}

static void mean_var(const double *v, int64_t n, double *mean, double *var)
{
    double s = 0, s2 = 0;
    for (int64_t k = 0; k < n; k++)
        s += v[k];
    *mean = s / (double)n;
    for (int64_t k = 0; k < n; k++)
        s2 += (v[k] - *mean) * (v[k] - *mean);
    *var = s2 / (double)(n - 1);
}

/* ---- coin_flip --------------------------------------------------------------------------- */

static void check_coin(double p, bool scalar)
{
    sl_graph *g = tu_one_node("random.coin_flip");
    assert_int_equal(sl_graph_arg_float(g, "r", "probability", p), SL_OK);
    if (!scalar) {
        int64_t shape[] = {50};
        assert_int_equal(sl_graph_arg_ints(g, "r", "shape", shape, 1), SL_OK);
    }
    sl_pipeline *pl = tu_make_ok(g, &tu_default_opts);
    tu_run_ok(pl);
    const sl_batch *b = sl_pipeline_output(pl, 0);
    assert_int_equal(sl_batch_dtype(b), SL_DTYPE_INT32);
    assert_int_equal(sl_batch_size(b), tu_default_opts.batch_size);
    if (scalar) {
        assert_int_equal(sl_batch_ndim(b), 0);
        assert_int_equal(sl_batch_sample_numel(b, 0), 1);
    } else {
        assert_int_equal(sl_batch_ndim(b), 1);
        assert_int_equal(sl_batch_shape(b, 3)[0], 50);
    }

    double *v = collect(pl, NDRAWS), mean, var;
    for (int k = 0; k < NDRAWS; k++)
        if (v[k] != 0.0 && v[k] != 1.0)
            fail_msg("draw %d is %g, not 0 or 1", k, v[k]);
    mean_var(v, NDRAWS, &mean, &var);
    double sigma = sqrt(p * (1 - p) / NDRAWS);
    if (fabs(mean - p) > 4 * sigma)
        fail_msg("p = %g: mean of %d draws is %g, more than 4 sigma (%g) away", p, NDRAWS, mean,
                 sigma);
    free(v);
    sl_pipeline_destroy(pl);
}

static void test_coin_flip_stats(void **state)
{
    (void)state;
    check_coin(0.1, true);
    check_coin(0.5, true);
    check_coin(0.9, true);
    check_coin(0.1, false);
    check_coin(0.5, false);
    check_coin(0.9, false);
}

static void test_coin_flip_extremes_and_dtypes(void **state)
{
    (void)state;
    static const struct {
        double p;
        const char *dtype;
        sl_dtype t;
    } cases[] = {{0.0, "uint8", SL_DTYPE_UINT8},
                 {1.0, "bool", SL_DTYPE_BOOL},
                 {1.0, "INT32", SL_DTYPE_INT32}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sl_graph *g = tu_one_node("random.coin_flip");
        int64_t shape[] = {10, 10};
        sl_graph_arg_float(g, "r", "probability", cases[c].p);
        sl_graph_arg_str(g, "r", "dtype", cases[c].dtype);
        sl_graph_arg_ints(g, "r", "shape", shape, 2);
        sl_pipeline *pl = tu_make_ok(g, &tu_default_opts);
        tu_run_ok(pl);
        const sl_batch *b = sl_pipeline_output(pl, 0);
        assert_int_equal(sl_batch_dtype(b), cases[c].t);
        assert_int_equal(sl_batch_ndim(b), 2);
        for (int i = 0; i < sl_batch_size(b); i++)
            for (int64_t k = 0; k < 100; k++)
                assert_true(value_at(b, i, k) == cases[c].p);
        sl_pipeline_destroy(pl);
    }
}

static void test_coin_flip_bad_dtype(void **state)
{
    (void)state;
    sl_graph *g = tu_one_node("random.coin_flip");
    sl_graph_arg_str(g, "r", "dtype", "float32");
    sl_status st;
    sl_pipeline *p = tu_make(g, &tu_default_opts, &st);
    assert_int_not_equal(st, SL_OK);
    assert_non_null(strstr(sl_pipeline_error(p), "dtype"));
    sl_pipeline_destroy(p);
}

/* ---- uniform ----------------------------------------------------------------------------- */

static void check_uniform(double lo, double hi, const char *dtype)
{
    sl_graph *g = tu_one_node("random.uniform");
    double range[] = {lo, hi};
    int64_t shape[] = {4, 25};
    assert_int_equal(sl_graph_arg_floats(g, "r", "range", range, 2), SL_OK);
    assert_int_equal(sl_graph_arg_ints(g, "r", "shape", shape, 2), SL_OK);
    if (dtype)
        sl_graph_arg_str(g, "r", "dtype", dtype);
    sl_pipeline *pl = tu_make_ok(g, &tu_default_opts);
    double *v = collect(pl, NDRAWS), mean, var;
    assert_int_equal(sl_batch_dtype(sl_pipeline_output(pl, 0)),
                     dtype ? SL_DTYPE_FLOAT64 : SL_DTYPE_FLOAT32);
    double flo = dtype ? lo : (float)lo, fhi = dtype ? hi : (float)hi;
    for (int k = 0; k < NDRAWS; k++)
        if (!(v[k] >= flo && v[k] < fhi))
            fail_msg("draw %d = %.9g is outside [%g, %g)", k, v[k], lo, hi);
    mean_var(v, NDRAWS, &mean, &var);
    double w = hi - lo;
    double se_mean = w / sqrt(12.0 * NDRAWS);
    double se_var = w * w * sqrt(1.0 / 80 - 1.0 / 144) / sqrt((double)NDRAWS);
    if (fabs(mean - (lo + hi) / 2) > 4 * se_mean)
        fail_msg("[%g, %g): mean %g, expected %g +- %g", lo, hi, mean, (lo + hi) / 2, 4 * se_mean);
    if (fabs(var - w * w / 12) > 4 * se_var)
        fail_msg("[%g, %g): variance %g, expected %g +- %g", lo, hi, var, w * w / 12, 4 * se_var);
    free(v);
    sl_pipeline_destroy(pl);
}

static void test_uniform_stats(void **state)
{
    (void)state;
    check_uniform(-1.0, 1.0, NULL);
    check_uniform(2.0, 5.0, NULL);
    check_uniform(-10.0, -9.5, "float64");
}

/* Default range [-1, 1), one scalar per sample. */
static void test_uniform_default_scalar(void **state)
{
    (void)state;
    sl_pipeline *pl = tu_make_ok(tu_one_node("random.uniform"), &tu_default_opts);
    tu_run_ok(pl);
    const sl_batch *b = sl_pipeline_output(pl, 0);
    assert_int_equal(sl_batch_ndim(b), 0);
    assert_int_equal(sl_batch_dtype(b), SL_DTYPE_FLOAT32);
    double *v = collect(pl, 2000), mean, var;
    for (int k = 0; k < 2000; k++)
        assert_true(v[k] >= -1.0 && v[k] < 1.0);
    mean_var(v, 2000, &mean, &var);
    assert_true(fabs(mean) < 4 * 2 / sqrt(12.0 * 2000));
    free(v);
    sl_pipeline_destroy(pl);
}

/* A range too narrow for float32 to hold a value strictly inside [lo, hi) apart from lo: the
 * half-open promise must survive rounding. */
static void test_uniform_narrow_range_stays_half_open(void **state)
{
    (void)state;
    sl_graph *g = tu_one_node("random.uniform");
    double range[] = {1.0, 1.0 + 1e-7}; /* float32 neighbours of 1 are 1 - 6e-8, 1 + 1.2e-7 */
    int64_t shape[] = {1000};
    sl_graph_arg_floats(g, "r", "range", range, 2);
    sl_graph_arg_ints(g, "r", "shape", shape, 1);
    sl_pipeline *pl = tu_make_ok(g, &tu_default_opts);
    tu_run_ok(pl);
    const sl_batch *b = sl_pipeline_output(pl, 0);
    for (int i = 0; i < sl_batch_size(b); i++)
        for (int k = 0; k < 1000; k++)
            assert_true(value_at(b, i, k) == 1.0);
    sl_pipeline_destroy(pl);
}

static void test_uniform_values(void **state)
{
    (void)state;
    static const double members[] = {1.0, 2.5, 7.0};
    sl_graph *g = tu_one_node("random.uniform");
    int64_t shape[] = {100};
    assert_int_equal(sl_graph_arg_floats(g, "r", "values", members, 3), SL_OK);
    assert_int_equal(sl_graph_arg_ints(g, "r", "shape", shape, 1), SL_OK);
    sl_pipeline *pl = tu_make_ok(g, &tu_default_opts);
    double *v = collect(pl, NDRAWS);
    int count[3] = {0, 0, 0};
    for (int k = 0; k < NDRAWS; k++) {
        int m = v[k] == 1.0 ? 0 : v[k] == 2.5 ? 1 : v[k] == 7.0 ? 2 : -1;
        if (m < 0)
            fail_msg("draw %d = %g is not one of the values", k, v[k]);
        count[m]++;
    }
    double sigma = sqrt(NDRAWS * (1.0 / 3) * (2.0 / 3));
    for (int m = 0; m < 3; m++)
        if (fabs(count[m] - NDRAWS / 3.0) > 4 * sigma)
            fail_msg("value %g drawn %d times of %d", members[m], count[m], NDRAWS);
    free(v);
    sl_pipeline_destroy(pl);
}

static void test_uniform_values_and_range_exclusive(void **state)
{
    (void)state;
    static const double members[] = {1.0, 2.0};
    static const double range[] = {0.0, 3.0};
    sl_graph *g = tu_one_node("random.uniform");
    sl_graph_arg_floats(g, "r", "values", members, 2);
    sl_graph_arg_floats(g, "r", "range", range, 2);
    sl_status st;
    sl_pipeline *p = tu_make(g, &tu_default_opts, &st);
    assert_int_equal(st, SL_EINVAL);
    assert_non_null(strstr(sl_pipeline_error(p), "range"));
    assert_non_null(strstr(sl_pipeline_error(p), "values"));
    sl_pipeline_destroy(p);
}

static void test_uniform_empty_range_fails(void **state)
{
    (void)state;
    static const double range[] = {3.0, 2.0};
    sl_graph *g = tu_one_node("random.uniform");
    sl_graph_arg_floats(g, "r", "range", range, 2);
    sl_pipeline *p = tu_make_ok(g, &tu_default_opts);
    assert_int_equal(sl_pipeline_run(p), SL_EINVAL);
    assert_non_null(strstr(sl_pipeline_error(p), "range"));
    sl_pipeline_destroy(p);
}

/* ---- determinism ------------------------------------------------------------------------- */

#define DET_ITERS 6

/* A coin_flip and a uniform node, both outputs; returns every output byte of DET_ITERS
 * iterations (allocated), *len its size. */
static unsigned char *run_bytes(const tu_opts *op, size_t *len)
{
    sl_graph *g = NULL;
    int64_t shape[] = {7};
    assert_int_equal(sl_graph_create(&g), SL_OK);
    sl_graph_add(g, "random.coin_flip", "coin", NULL);
    sl_graph_arg_ints(g, "coin", "shape", shape, 1);
    sl_graph_add(g, "random.uniform", "uni", NULL);
    sl_graph_add(g, "random.uniform", "uni2", NULL);
    sl_graph_arg_float(g, "coin", "probability", 0.5);
    sl_graph_output(g, "coin");
    sl_graph_output(g, "uni");
    sl_graph_output(g, "uni2");
    sl_pipeline *p = tu_make_ok(g, op);
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    assert_non_null(buf);
    for (int it = 0; it < DET_ITERS; it++) {
        tu_run_ok(p);
        assert_int_equal(sl_pipeline_iteration(p), it);
        for (int o = 0; o < sl_pipeline_num_outputs(p); o++) {
            const sl_batch *b = sl_pipeline_output(p, o);
            size_t nb = sl_batch_nbytes(b);
            assert_true(n + nb <= cap);
            memcpy(buf + n, sl_batch_data(b), nb);
            n += nb;
        }
    }
    sl_pipeline_destroy(p);
    *len = n;
    return buf;
}

static void test_same_seed_same_values(void **state)
{
    (void)state;
    size_t len0, len;
    unsigned char *ref = run_bytes(&tu_default_opts, &len0);
    unsigned char *again = run_bytes(&tu_default_opts, &len);
    assert_int_equal(len, len0);
    assert_memory_equal(again, ref, len0);
    free(again);
    for (int threads = 1; threads <= 4; threads *= 2) {
        for (int prefetch = 1; prefetch <= 3; prefetch++) {
            tu_opts op = tu_default_opts;
            op.num_threads = threads;
            op.prefetch = prefetch;
            unsigned char *b = run_bytes(&op, &len);
            assert_int_equal(len, len0);
            if (memcmp(b, ref, len0) != 0)
                fail_msg("num_threads %d, prefetch %d: outputs differ from the reference run",
                         threads, prefetch);
            free(b);
        }
    }
    free(ref);
}

static void test_different_seeds_differ(void **state)
{
    (void)state;
    size_t len_a, len_b;
    tu_opts op = tu_default_opts;
    unsigned char *a = run_bytes(&op, &len_a);
    op.seed = 43;
    unsigned char *b = run_bytes(&op, &len_b);
    assert_int_equal(len_a, len_b);
    assert_true(memcmp(a, b, len_a) != 0);
    free(a);
    free(b);

    /* Within one pipeline: two uniform nodes (different names) and successive iterations
     * differ too. */
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    sl_graph_add(g, "random.uniform", "u1", NULL);
    sl_graph_add(g, "random.uniform", "u2", NULL);
    sl_graph_output(g, "u1");
    sl_graph_output(g, "u2");
    sl_pipeline *p = tu_make_ok(g, &tu_default_opts);
    tu_run_ok(p);
    size_t nb = sl_batch_nbytes(sl_pipeline_output(p, 0));
    unsigned char *first = malloc(nb);
    assert_non_null(first);
    memcpy(first, sl_batch_data(sl_pipeline_output(p, 0)), nb);
    assert_true(memcmp(first, sl_batch_data(sl_pipeline_output(p, 1)), nb) != 0);
    tu_run_ok(p);
    assert_true(memcmp(first, sl_batch_data(sl_pipeline_output(p, 0)), nb) != 0);
    free(first);
    sl_pipeline_destroy(p);
}

/* No pipeline seed (-1, the default, or any negative value): every pipeline draws a fresh
 * one (DALI's rule), which sl_pipeline_seed reports; given back, it reproduces the run. */
static void test_no_seed_draws_a_fresh_one_per_pipeline(void **state)
{
    (void)state;
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    assert_int_equal(o.seed, -1);
    size_t len_a, len_b, len_c;
    tu_opts op = tu_default_opts;
    op.seed = -1;
    unsigned char *a = run_bytes(&op, &len_a);
    unsigned char *b = run_bytes(&op, &len_b);
    assert_int_equal(len_a, len_b);
    assert_true(memcmp(a, b, len_a) != 0);

    int64_t seeds[3];
    for (int k = 0; k < 3; k++) {
        sl_graph *g = tu_one_node("random.uniform");
        op.seed = k == 2 ? -7 : -1;
        sl_pipeline *p = tu_make_ok(g, &op);
        seeds[k] = sl_pipeline_seed(p);
        assert_true(seeds[k] >= 0);
        sl_pipeline_destroy(p);
    }
    assert_true(seeds[0] != seeds[1] && seeds[1] != seeds[2] && seeds[0] != seeds[2]);
    assert_int_equal(sl_pipeline_seed(NULL), -1);

    /* the seed a pipeline drew, given explicitly, gives the same values */
    sl_graph *g = tu_one_node("random.uniform");
    op.seed = -1;
    sl_pipeline *p = tu_make_ok(g, &op);
    int64_t drawn = sl_pipeline_seed(p);
    tu_run_ok(p);
    size_t nb = sl_batch_nbytes(sl_pipeline_output(p, 0));
    unsigned char *first = malloc(nb);
    assert_non_null(first);
    memcpy(first, sl_batch_data(sl_pipeline_output(p, 0)), nb);
    sl_pipeline_destroy(p);
    g = tu_one_node("random.uniform");
    op.seed = drawn;
    p = tu_make_ok(g, &op);
    assert_int_equal(sl_pipeline_seed(p), drawn);
    tu_run_ok(p);
    assert_memory_equal(sl_batch_data(sl_pipeline_output(p, 0)), first, nb);
    sl_pipeline_destroy(p);
    free(first);

    /* a fixed seed stays fixed */
    op.seed = 42;
    unsigned char *c = run_bytes(&op, &len_c);
    unsigned char *c2 = run_bytes(&op, &len_b);
    assert_memory_equal(c, c2, len_c);
    free(a);
    free(b);
    free(c);
    free(c2);
}

/* An explicit node seed makes the node independent of the pipeline seed. */
static void test_node_seed_overrides_pipeline_seed(void **state)
{
    (void)state;
    unsigned char out[2][20 * sizeof(float)];
    for (int k = 0; k < 2; k++) {
        sl_graph *g = tu_one_node("random.uniform");
        sl_graph_arg_int(g, "r", "seed", 1234);
        tu_opts op = tu_default_opts;
        op.seed = 100 + k;
        sl_pipeline *p = tu_make_ok(g, &op);
        tu_run_ok(p);
        assert_int_equal(sl_batch_nbytes(sl_pipeline_output(p, 0)), sizeof out[k]);
        memcpy(out[k], sl_batch_data(sl_pipeline_output(p, 0)), sizeof out[k]);
        sl_pipeline_destroy(p);
    }
    assert_memory_equal(out[0], out[1], sizeof out[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coin_flip_stats),
        cmocka_unit_test(test_coin_flip_extremes_and_dtypes),
        cmocka_unit_test(test_coin_flip_bad_dtype),
        cmocka_unit_test(test_uniform_stats),
        cmocka_unit_test(test_uniform_default_scalar),
        cmocka_unit_test(test_uniform_narrow_range_stays_half_open),
        cmocka_unit_test(test_uniform_values),
        cmocka_unit_test(test_uniform_values_and_range_exclusive),
        cmocka_unit_test(test_uniform_empty_range_fails),
        cmocka_unit_test(test_same_seed_same_values),
        cmocka_unit_test(test_different_seeds_differ),
        cmocka_unit_test(test_no_seed_draws_a_fresh_one_per_pipeline),
        cmocka_unit_test(test_node_seed_overrides_pipeline_seed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
