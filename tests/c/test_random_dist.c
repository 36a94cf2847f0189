/* test_random_dist: random.normal and random.choice through the public C API.
 *
 * Statistics use fixed seeds, so a run always passes or always fails; each bound is wide enough
 * that a correct generator fails it with probability ~1e-4 or less:
 * - normal: mean, variance, skewness, kurtosis and the fractions below -2, -1, 0, 1, 2 over
 *   40,000 draws within 4 standard errors (SE of the mean 1/sqrt(n), of the variance
 *   sqrt(2/n), of the skewness sqrt(6/n), of the kurtosis sqrt(24/n), of a fraction
 *   sqrt(P(1-P)/n)); per-sample mean / stddev argument inputs per sample within 4 SE.
 * - choice: Pearson's chi-square of the pick counts against n * p below the upper 0.1% point of
 *   the chi-square distribution with k-1 degrees of freedom (13.816 for 2, 16.266 for 3,
 *   27.877 for 9: NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.4, "Critical values
 *   of the chi-square distribution"); elements with p = 0 never picked; picks only from `a`.
 * - determinism: same seed, same bytes for num_threads 1, 2, 4 and prefetch depths 1..3;
 *   another seed, other values.
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

/* ---- helpers ----------------------------------------------------------------------------- */

/* Adds external_source `name` feeding input or argument input `arg` (NULL: input) of "r". */
static void add_source(sl_graph *g, const char *name, const char *arg)
{
    assert_int_equal(sl_graph_add(g, "external_source", name, NULL), SL_OK);
    if (arg)
        assert_int_equal(sl_graph_arg_input(g, "r", arg, name), SL_OK);
    else
        assert_int_equal(sl_graph_input(g, "r", name), SL_OK);
}

static double value_at(const sl_batch *b, int i, int64_t k)
{
    const void *d = sl_batch_sample_data(b, i);
    switch (sl_batch_dtype(b)) {
    case SL_DTYPE_UINT8: return ((const uint8_t *)d)[k];
    case SL_DTYPE_INT16: return ((const int16_t *)d)[k];
    case SL_DTYPE_INT32: return ((const int32_t *)d)[k];
    case SL_DTYPE_INT64: return (double)((const int64_t *)d)[k];
    case SL_DTYPE_FLOAT32: return ((const float *)d)[k];
    case SL_DTYPE_FLOAT64: return ((const double *)d)[k];
    default: fail_msg("unexpected dtype %s", sl_dtype_name(sl_batch_dtype(b)));
    }
    return 0;
}

/* Batches fed to external sources before each iteration: the same data every time. With
 * prefetch depth D the first run needs D batches queued, every later run one more. */
typedef struct feeder {
    int n;
    const char *name[3];
    sl_feed feed[3];
    int depth;
    bool started;
} feeder;

static void feed_once(sl_pipeline *p, const feeder *f)
{
    for (int k = 0; k < f->n; k++)
        if (sl_pipeline_feed_input(p, f->name[k], &f->feed[k]) != SL_OK)
            fail_msg("feed %s: %s", f->name[k], sl_pipeline_error(p));
}

static void run_fed(sl_pipeline *p, feeder *f)
{
    const int times = f->started ? 1 : f->depth;
    for (int k = 0; k < times; k++)
        feed_once(p, f);
    f->started = true;
    tu_run_ok(p);
}

/* Runs until n values of output 0 are collected (feeding with f when not NULL). */
static double *collect(sl_pipeline *p, feeder *f, int64_t n)
{
    double *v = malloc(sizeof(double) * (size_t)n);
    int64_t got = 0;
    assert_non_null(v);
    while (got < n) {
        if (f)
            run_fed(p, f);
        else
            tu_run_ok(p);
        const sl_batch *b = sl_pipeline_output(p, 0);
        for (int i = 0; i < sl_batch_size(b) && got < n; i++)
            for (int64_t k = 0; k < sl_batch_sample_numel(b, i) && got < n; k++)
                v[got++] = value_at(b, i, k);
    }
    return v;
}

typedef struct moments {
    double mean, var, skew, kurt;
} moments;

static moments moments_of(const double *v, int64_t n)
{
    moments m = {0, 0, 0, 0};
    for (int64_t k = 0; k < n; k++)
        m.mean += v[k];
    m.mean /= (double)n;
    double m2 = 0, m3 = 0, m4 = 0;
    for (int64_t k = 0; k < n; k++) {
        double d = v[k] - m.mean;
        m2 += d * d;
        m3 += d * d * d;
        m4 += d * d * d * d;
    }
    m2 /= (double)n;
    m.var = m2 * (double)n / (double)(n - 1);
    m.skew = m3 / (double)n / pow(m2, 1.5);
    m.kurt = m4 / (double)n / (m2 * m2);
    return m;
}

static void check_within(const char *what, double got, double want, double se)
{
    if (!(fabs(got - want) <= 4 * se))
        fail_msg("%s = %.6g, expected %.6g +- %.3g (4 standard errors)", what, got, want, 4 * se);
}

/* ---- random.normal ----------------------------------------------------------------------- */

#define NDRAWS 40000

/* The moments and quantiles of n draws against N(mu, sigma^2). */
static void check_normal(const double *v, int64_t n, double mu, double sigma)
{
    moments m = moments_of(v, n);
    const double rn = sqrt((double)n);
    check_within("mean", m.mean, mu, sigma / rn);
    check_within("variance", m.var, sigma * sigma, sigma * sigma * sqrt(2.0) / rn);
    check_within("skewness", m.skew, 0, sqrt(6.0) / rn);
    check_within("kurtosis", m.kurt, 3, sqrt(24.0) / rn);
    static const double z[] = {-2, -1, 0, 1, 2};
    for (size_t q = 0; q < sizeof z / sizeof z[0]; q++) {
        int64_t below = 0;
        for (int64_t k = 0; k < n; k++)
            below += v[k] < mu + z[q] * sigma;
        double P = 0.5 * erfc(-z[q] / sqrt(2.0));
        char what[64];
        snprintf(what, sizeof what, "fraction below mu %+g sigma", z[q]);
        check_within(what, (double)below / (double)n, P, sqrt(P * (1 - P) / (double)n));
    }
}

static void test_normal_default(void **state)
{
    (void)state;
    sl_graph *g = tu_one_node("random.normal");
    int64_t shape[] = {4, 25};
    assert_int_equal(sl_graph_arg_ints(g, "r", "shape", shape, 2), SL_OK);
    sl_pipeline *p = tu_make_ok(g, &tu_default_opts);
    double *v = collect(p, NULL, NDRAWS);
    const sl_batch *b = sl_pipeline_output(p, 0);
    assert_int_equal(sl_batch_dtype(b), SL_DTYPE_FLOAT32);
    assert_int_equal(sl_batch_ndim(b), 2);
    assert_int_equal(sl_batch_shape(b, 5)[1], 25);
    check_normal(v, NDRAWS, 0.0, 1.0);
    free(v);
    sl_pipeline_destroy(p);
}

static void test_normal_mean_stddev_float64(void **state)
{
    (void)state;
    sl_graph *g = tu_one_node("random.normal");
    sl_graph_arg_float(g, "r", "mean", 3.0);
    sl_graph_arg_float(g, "r", "stddev", 2.0);
    sl_graph_arg_str(g, "r", "dtype", "float64");
    sl_pipeline *p = tu_make_ok(g, &tu_default_opts);
    double *v = collect(p, NULL, NDRAWS);
    assert_int_equal(sl_batch_dtype(sl_pipeline_output(p, 0)), SL_DTYPE_FLOAT64);
    assert_int_equal(sl_batch_ndim(sl_pipeline_output(p, 0)), 0);
    check_normal(v, NDRAWS, 3.0, 2.0);
    free(v);
    sl_pipeline_destroy(p);
}

/* mean and stddev as argument inputs: sample i draws from N(10 i - 20, (0.5 (i + 1))^2). */
static void test_normal_per_sample_args(void **state)
{
    (void)state;
    enum { BATCH = 6, N = 5000 };
    sl_graph *g = tu_one_node("random.normal");
    int64_t shape[] = {N};
    sl_graph_arg_ints(g, "r", "shape", shape, 1);
    add_source(g, "m", "mean");
    add_source(g, "s", "stddev");
    tu_opts o = tu_default_opts;
    o.batch_size = BATCH;
    sl_pipeline *p = tu_make_ok(g, &o);
    float mean[BATCH], sd[BATCH];
    const void *pm[BATCH], *ps[BATCH];
    int64_t none[BATCH] = {0};
    for (int i = 0; i < BATCH; i++) {
        mean[i] = 10.0f * (float)i - 20.0f;
        sd[i] = 0.5f * (float)(i + 1);
        pm[i] = &mean[i];
        ps[i] = &sd[i];
    }
    feeder f = {.n = 2, .name = {"m", "s"}, .depth = o.prefetch};
    f.feed[0] = (sl_feed){.num_samples = BATCH,
                          .ndim = 0,
                          .dtype = SL_DTYPE_FLOAT32,
                          .layout = NULL,
                          .shapes = none,
                          .data = pm};
    f.feed[1] = (sl_feed){.num_samples = BATCH,
                          .ndim = 0,
                          .dtype = SL_DTYPE_FLOAT32,
                          .layout = NULL,
                          .shapes = none,
                          .data = ps};
    run_fed(p, &f);
    const sl_batch *b = sl_pipeline_output(p, 0);
    for (int i = 0; i < BATCH; i++) {
        double *v = malloc(sizeof(double) * N);
        for (int k = 0; k < N; k++)
            v[k] = value_at(b, i, k);
        moments m = moments_of(v, N);
        check_within("per-sample mean", m.mean, mean[i], sd[i] / sqrt((double)N));
        check_within("per-sample variance", m.var, (double)sd[i] * sd[i],
                     (double)sd[i] * sd[i] * sqrt(2.0 / N));
        free(v);
    }
    sl_pipeline_destroy(p);
}

static void test_normal_zero_and_negative_stddev(void **state)
{
    (void)state;
    sl_graph *g = tu_one_node("random.normal");
    int64_t shape[] = {10};
    sl_graph_arg_float(g, "r", "mean", 1.5);
    sl_graph_arg_float(g, "r", "stddev", 0.0);
    sl_graph_arg_ints(g, "r", "shape", shape, 1);
    sl_pipeline *p = tu_make_ok(g, &tu_default_opts);
    tu_run_ok(p);
    const sl_batch *b = sl_pipeline_output(p, 0);
    for (int i = 0; i < sl_batch_size(b); i++)
        for (int k = 0; k < 10; k++)
            assert_true(value_at(b, i, k) == 1.5);
    sl_pipeline_destroy(p);

    sl_status st;
    g = tu_one_node("random.normal");
    sl_graph_arg_float(g, "r", "stddev", -1.0);
    p = tu_make(g, &tu_default_opts, &st);
    assert_int_equal(st, SL_EINVAL);
    assert_non_null(strstr(sl_pipeline_error(p), "stddev"));
    sl_pipeline_destroy(p);

    g = tu_one_node("random.normal");
    sl_graph_arg_str(g, "r", "dtype", "int32");
    p = tu_make(g, &tu_default_opts, &st);
    assert_int_not_equal(st, SL_OK);
    assert_non_null(strstr(sl_pipeline_error(p), "dtype"));
    sl_pipeline_destroy(p);
}

/* ---- random.choice ----------------------------------------------------------------------- */

/* Pearson's chi-square of counts[0..k) against n * p[0..k) (p > 0). */
static double chi_square(const int64_t *counts, const double *p, int k, int64_t n)
{
    double x = 0;
    for (int c = 0; c < k; c++) {
        double e = (double)n * p[c];
        x += ((double)counts[c] - e) * ((double)counts[c] - e) / e;
    }
    return x;
}

/* Scalar a = 5 per sample (int32) with p = [0.1, 0.2, 0.3, 0.4, 0]: picks in [0, 4), never 4,
 * frequencies by chi-square (3 degrees of freedom: 16.266). */
static void test_choice_scalar_with_p(void **state)
{
    (void)state;
    static const double p[] = {0.1, 0.2, 0.3, 0.4, 0.0};
    sl_graph *g = tu_one_node("random.choice");
    int64_t shape[] = {100};
    add_source(g, "a", NULL);
    sl_graph_arg_floats(g, "r", "p", p, 5);
    sl_graph_arg_ints(g, "r", "shape", shape, 1);
    sl_pipeline *pl = tu_make_ok(g, &tu_default_opts);
    int32_t five[1] = {5};
    const void *data[20];
    int64_t none[20] = {0};
    for (int i = 0; i < 20; i++)
        data[i] = five;
    feeder f = {.n = 1, .name = {"a"}, .depth = tu_default_opts.prefetch};
    f.feed[0] = (sl_feed){.num_samples = 20,
                          .ndim = 0,
                          .dtype = SL_DTYPE_INT32,
                          .layout = NULL,
                          .shapes = none,
                          .data = data};
    double *v = collect(pl, &f, NDRAWS);
    const sl_batch *b = sl_pipeline_output(pl, 0);
    assert_int_equal(sl_batch_dtype(b), SL_DTYPE_INT32);
    assert_int_equal(sl_batch_ndim(b), 1);
    int64_t counts[5] = {0};
    for (int k = 0; k < NDRAWS; k++) {
        if (!(v[k] >= 0 && v[k] < 5 && v[k] == floor(v[k])))
            fail_msg("pick %d is %g, not in 0..4", k, v[k]);
        counts[(int)v[k]]++;
    }
    assert_int_equal(counts[4], 0); /* p = 0: never */
    double x = chi_square(counts, p, 4, NDRAWS);
    if (x > 16.266)
        fail_msg("chi-square %.3f > 16.266 (df 3, alpha 0.001): counts %lld %lld %lld %lld", x,
                 (long long)counts[0], (long long)counts[1], (long long)counts[2],
                 (long long)counts[3]);
    free(v);
    sl_pipeline_destroy(pl);
}

/* 1-D float32 a of 10 values, no p: uniform over the values (9 degrees of freedom: 27.877). */
static void test_choice_values_uniform(void **state)
{
    (void)state;
    static const float a[10] = {1.5f, -2.0f, 7.0f, 100.0f, 0.25f, 3.0f, 9.0f, 11.0f, 13.0f, 17.0f};
    sl_graph *g = tu_one_node("random.choice");
    int64_t shape[] = {50};
    add_source(g, "a", NULL);
    sl_graph_arg_ints(g, "r", "shape", shape, 1);
    sl_pipeline *pl = tu_make_ok(g, &tu_default_opts);
    const void *data[20];
    int64_t shapes[20];
    for (int i = 0; i < 20; i++) {
        data[i] = a;
        shapes[i] = 10;
    }
    feeder f = {.n = 1, .name = {"a"}, .depth = tu_default_opts.prefetch};
    f.feed[0] = (sl_feed){.num_samples = 20,
                          .ndim = 1,
                          .dtype = SL_DTYPE_FLOAT32,
                          .layout = NULL,
                          .shapes = shapes,
                          .data = data};
    double *v = collect(pl, &f, NDRAWS);
    assert_int_equal(sl_batch_dtype(sl_pipeline_output(pl, 0)), SL_DTYPE_FLOAT32);
    int64_t counts[10] = {0};
    double p[10];
    for (int k = 0; k < NDRAWS; k++) {
        int c = 0;
        while (c < 10 && (double)a[c] != v[k])
            c++;
        if (c == 10)
            fail_msg("pick %d = %g is not a value of a", k, v[k]);
        counts[c]++;
    }
    for (int c = 0; c < 10; c++)
        p[c] = 0.1;
    double x = chi_square(counts, p, 10, NDRAWS);
    if (x > 27.877)
        fail_msg("chi-square %.3f > 27.877 (df 9, alpha 0.001)", x);
    free(v);
    sl_pipeline_destroy(pl);
}

/* uint8 a = [10, 20, 30], p = [0.5, 0.25, 0.25], one pick per sample (2 degrees of freedom:
 * 13.816); the output keeps uint8 and is a scalar. */
static void test_choice_values_with_p_scalar_out(void **state)
{
    (void)state;
    static const uint8_t a[3] = {10, 20, 30};
    static const double p[3] = {0.5, 0.25, 0.25};
    sl_graph *g = tu_one_node("random.choice");
    add_source(g, "a", NULL);
    sl_graph_arg_floats(g, "r", "p", p, 3);
    tu_opts o = tu_default_opts;
    o.batch_size = 50;
    sl_pipeline *pl = tu_make_ok(g, &o);
    const void *data[50];
    int64_t shapes[50];
    for (int i = 0; i < 50; i++) {
        data[i] = a;
        shapes[i] = 3;
    }
    feeder f = {.n = 1, .name = {"a"}, .depth = o.prefetch};
    f.feed[0] = (sl_feed){.num_samples = 50,
                          .ndim = 1,
                          .dtype = SL_DTYPE_UINT8,
                          .layout = NULL,
                          .shapes = shapes,
                          .data = data};
    enum { N = 20000 };
    double *v = collect(pl, &f, N);
    const sl_batch *b = sl_pipeline_output(pl, 0);
    assert_int_equal(sl_batch_dtype(b), SL_DTYPE_UINT8);
    assert_int_equal(sl_batch_ndim(b), 0);
    int64_t counts[3] = {0};
    for (int k = 0; k < N; k++) {
        int c = v[k] == 10 ? 0 : v[k] == 20 ? 1 : v[k] == 30 ? 2 : -1;
        if (c < 0)
            fail_msg("pick %d = %g is not 10, 20 or 30", k, v[k]);
        counts[c]++;
    }
    double x = chi_square(counts, p, 3, N);
    if (x > 13.816)
        fail_msg("chi-square %.3f > 13.816 (df 2, alpha 0.001)", x);
    free(v);
    sl_pipeline_destroy(pl);
}

/* A 2-D a picks whole rows; the layout is kept when the number of dimensions is; per-sample p
 * (argument input) that puts all weight on one row picks only that row. */
static void test_choice_rows_and_per_sample_p(void **state)
{
    (void)state;
    static const int16_t a[4][3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}};
    static const float p0[4] = {0, 0, 1, 0}, p1[4] = {0.5f, 0.5f, 0, 0};
    sl_graph *g = tu_one_node("random.choice");
    int64_t shape[] = {7};
    add_source(g, "a", NULL);
    add_source(g, "p", "p");
    sl_graph_arg_ints(g, "r", "shape", shape, 1);
    tu_opts o = tu_default_opts;
    o.batch_size = 2;
    sl_pipeline *pl = tu_make_ok(g, &o);
    const void *data[2] = {a, a}, *pd[2] = {p0, p1};
    int64_t shapes[4] = {4, 3, 4, 3}, pshapes[2] = {4, 4};
    feeder f = {.n = 2, .name = {"a", "p"}, .depth = o.prefetch};
    f.feed[0] = (sl_feed){.num_samples = 2,
                          .ndim = 2,
                          .dtype = SL_DTYPE_INT16,
                          .layout = "NC",
                          .shapes = shapes,
                          .data = data};
    f.feed[1] = (sl_feed){.num_samples = 2,
                          .ndim = 1,
                          .dtype = SL_DTYPE_FLOAT32,
                          .layout = NULL,
                          .shapes = pshapes,
                          .data = pd};
    for (int it = 0; it < 20; it++) {
        run_fed(pl, &f);
        const sl_batch *b = sl_pipeline_output(pl, 0);
        assert_int_equal(sl_batch_dtype(b), SL_DTYPE_INT16);
        assert_int_equal(sl_batch_ndim(b), 2);
        assert_string_equal(sl_batch_layout(b), "NC");
        for (int i = 0; i < 2; i++) {
            assert_int_equal(sl_batch_shape(b, i)[0], 7);
            assert_int_equal(sl_batch_shape(b, i)[1], 3);
            const int16_t *row_of = sl_batch_sample_data(b, i);
            for (int j = 0; j < 7; j++) {
                int row = (row_of[3 * j] - 1) / 3;
                assert_true(row >= 0 && row < 4);
                assert_memory_equal(row_of + 3 * j, a[row], sizeof a[row]);
                if (i == 0)
                    assert_int_equal(row, 2);
                else
                    assert_true(row == 0 || row == 1);
            }
        }
    }
    sl_pipeline_destroy(pl);
}

/* Runs a choice pipeline over a (fed as given) with p (NULL: none); returns the run status and
 * checks that the message contains `text`. */
static void check_choice_error(sl_dtype t, int ndim, const int64_t *shape, const void *a,
                               const double *p, int np, const char *text)
{
    sl_graph *g = tu_one_node("random.choice");
    add_source(g, "a", NULL);
    if (p)
        sl_graph_arg_floats(g, "r", "p", p, np);
    tu_opts o = tu_default_opts;
    o.batch_size = 1;
    o.prefetch = 1;
    sl_pipeline *pl = tu_make_ok(g, &o);
    const void *data[1] = {a};
    int64_t none[1] = {0};
    sl_feed fd = {.num_samples = 1,
                  .ndim = ndim,
                  .dtype = t,
                  .layout = NULL,
                  .shapes = ndim ? shape : none,
                  .data = data};
    assert_int_equal(sl_pipeline_feed_input(pl, "a", &fd), SL_OK);
    sl_status st = sl_pipeline_run(pl);
    assert_int_not_equal(st, SL_OK);
    if (!strstr(sl_pipeline_error(pl), text))
        fail_msg("expected an error containing \"%s\", got: %s", text, sl_pipeline_error(pl));
    sl_pipeline_destroy(pl);
}

static void test_choice_errors(void **state)
{
    (void)state;
    static const int32_t five = 5, zero = 0;
    static const float fscalar = 3.0f;
    static const double p_short[3] = {0.2, 0.3, 0.5}, p_sum[5] = {0.1, 0.2, 0.3, 0.2, 0.1};
    static const double p_neg[5] = {-0.1, 0.3, 0.3, 0.3, 0.2};
    check_choice_error(SL_DTYPE_INT32, 0, NULL, &five, p_short, 3, "p has 3 values");
    check_choice_error(SL_DTYPE_INT32, 0, NULL, &five, p_sum, 5, "sum to");
    check_choice_error(SL_DTYPE_INT32, 0, NULL, &five, p_neg, 5, "[0, 1]");
    check_choice_error(SL_DTYPE_INT32, 0, NULL, &zero, NULL, 0, "at least 1");
    check_choice_error(SL_DTYPE_FLOAT32, 0, NULL, &fscalar, NULL, 0, "integer type");
    static const int64_t empty_shape[1] = {0};
    check_choice_error(SL_DTYPE_FLOAT32, 1, empty_shape, &fscalar, NULL, 0, "at least 1");
}

/* An int16 scalar a keeps int16; picks stay in [0, a) and reach a - 1. */
static void test_choice_scalar_dtype_kept(void **state)
{
    (void)state;
    sl_graph *g = tu_one_node("random.choice");
    int64_t shape[] = {2, 500};
    add_source(g, "a", NULL);
    sl_graph_arg_ints(g, "r", "shape", shape, 2);
    tu_opts o = tu_default_opts;
    o.batch_size = 3;
    sl_pipeline *pl = tu_make_ok(g, &o);
    static const int16_t n[3] = {1000, 1, 7};
    const void *data[3] = {&n[0], &n[1], &n[2]};
    int64_t none[3] = {0};
    feeder f = {.n = 1, .name = {"a"}, .depth = o.prefetch};
    f.feed[0] = (sl_feed){.num_samples = 3,
                          .ndim = 0,
                          .dtype = SL_DTYPE_INT16,
                          .layout = NULL,
                          .shapes = none,
                          .data = data};
    run_fed(pl, &f);
    const sl_batch *b = sl_pipeline_output(pl, 0);
    assert_int_equal(sl_batch_dtype(b), SL_DTYPE_INT16);
    for (int i = 0; i < 3; i++) {
        bool seen_top = false;
        for (int k = 0; k < 1000; k++) {
            double x = value_at(b, i, k);
            assert_true(x >= 0 && x < n[i]);
            seen_top |= x == n[i] - 1;
        }
        if (n[i] <= 7)
            assert_true(seen_top); /* 1000 picks of 7 values miss one with p ~ 1e-67 */
    }
    sl_pipeline_destroy(pl);
}

/* ---- determinism ------------------------------------------------------------------------- */

#define DET_ITERS 5

/* A normal node and a choice node (a fed, weighted p), both outputs; every output byte of
 * DET_ITERS iterations (allocated), *len its size. */
static unsigned char *run_bytes(const tu_opts *op, size_t *len)
{
    static const double p[4] = {0.1, 0.2, 0.3, 0.4};
    static const int64_t a[4] = {-5, 6, 700, 8000};
    sl_graph *g = NULL;
    int64_t shape[] = {9};
    assert_int_equal(sl_graph_create(&g), SL_OK);
    sl_graph_add(g, "random.normal", "n", NULL);
    sl_graph_arg_ints(g, "n", "shape", shape, 1);
    sl_graph_add(g, "external_source", "a", NULL);
    sl_graph_add(g, "random.choice", "c", NULL);
    sl_graph_input(g, "c", "a");
    sl_graph_arg_floats(g, "c", "p", p, 4);
    sl_graph_arg_ints(g, "c", "shape", shape, 1);
    sl_graph_output(g, "n");
    sl_graph_output(g, "c");
    sl_pipeline *pl = tu_make_ok(g, op);
    const void *data[64];
    int64_t shapes[64];
    for (int i = 0; i < op->batch_size; i++) {
        data[i] = a;
        shapes[i] = 4;
    }
    feeder f = {.n = 1, .name = {"a"}, .depth = op->prefetch};
    f.feed[0] = (sl_feed){.num_samples = op->batch_size,
                          .ndim = 1,
                          .dtype = SL_DTYPE_INT64,
                          .layout = NULL,
                          .shapes = shapes,
                          .data = data};
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    assert_non_null(buf);
    for (int it = 0; it < DET_ITERS; it++) {
        run_fed(pl, &f);
        for (int o = 0; o < sl_pipeline_num_outputs(pl); o++) {
            const sl_batch *b = sl_pipeline_output(pl, o);
            size_t nb = sl_batch_nbytes(b);
            assert_true(n + nb <= cap);
            memcpy(buf + n, sl_batch_data(b), nb);
            n += nb;
        }
    }
    sl_pipeline_destroy(pl);
    *len = n;
    return buf;
}

static void test_same_seed_same_values(void **state)
{
    (void)state;
    size_t len0, len;
    unsigned char *ref = run_bytes(&tu_default_opts, &len0);
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
    /* samples and iterations draw from different streams: the first sample's normals differ
     * from the second's and from the next iteration's */
    const size_t per_iter = len0 / DET_ITERS;
    assert_memory_not_equal(ref, ref + 9 * sizeof(float), 9 * sizeof(float));
    assert_memory_not_equal(ref, ref + per_iter, 9 * sizeof(float));
    tu_opts other = tu_default_opts;
    other.seed = 43;
    unsigned char *b = run_bytes(&other, &len);
    assert_int_equal(len, len0);
    assert_memory_not_equal(b, ref, 9 * sizeof(float)); /* the normals */
    assert_true(memcmp(b, ref, len0) != 0);
    free(b);
    free(ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normal_default),
        cmocka_unit_test(test_normal_mean_stddev_float64),
        cmocka_unit_test(test_normal_per_sample_args),
        cmocka_unit_test(test_normal_zero_and_negative_stddev),
        cmocka_unit_test(test_choice_scalar_with_p),
        cmocka_unit_test(test_choice_values_uniform),
        cmocka_unit_test(test_choice_values_with_p_scalar_out),
        cmocka_unit_test(test_choice_rows_and_per_sample_p),
        cmocka_unit_test(test_choice_errors),
        cmocka_unit_test(test_choice_scalar_dtype_kept),
        cmocka_unit_test(test_same_seed_same_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
