/* test_op_tensor: what the reference cases (tests/data/cases/tensor.py) cannot express, through
 * the public C API.
 *
 * - 0-d samples (scalars; the case files store every array with at least one dimension):
 *   cast rounds 2.5 -> 3 and -2.5 -> -3, stack joins scalars into 1-D (with axis_name: that
 *   layout), pad, reshape and transpose (no perm, or perm []) pass them through, shapes gives
 *   an empty 1-D tensor, flip rejects them with a message naming the layout.
 * - cat and stack of 40 inputs (any number, as in DALI).
 * - normalize with batch=True over several iterations in flight (prefetch depth 3): the batch
 *   statistics live in per-iteration data, so each iteration must be normalised with its own
 *   batch's mean and standard deviation. The reference is computed here in double.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sluice/sluice.h"

static sl_pipeline *make(sl_graph *g, int batch, int depth)
{
    sl_pipeline_options o;
    sl_pipeline *p = NULL;
    sl_pipeline_options_init(&o);
    o.batch_size = batch;
    o.num_threads = 3;
    o.prefetch_queue_depth = depth;
    if (sl_pipeline_create(g, &o, &p) != SL_OK)
        fail_msg("create: %s", sl_last_error());
    sl_graph_destroy(g);
    if (sl_pipeline_build(p) != SL_OK)
        fail_msg("build: %s", sl_pipeline_error(p));
    return p;
}

/* Feeds `n` samples of one dtype; shapes holds n * ndim extents. */
static void feed(sl_pipeline *p, const char *name, int n, int ndim, sl_dtype t,
                 const int64_t *shapes, const void *const *data, const char *layout)
{
    static const int64_t none[1] = {0}; /* 0-d samples: no extents, but not NULL */
    sl_feed f = {.num_samples = n,
                 .ndim = ndim,
                 .dtype = t,
                 .layout = layout,
                 .shapes = shapes ? shapes : none,
                 .data = data};
    if (sl_pipeline_feed_input(p, name, &f) != SL_OK)
        fail_msg("feed %s: %s", name, sl_pipeline_error(p));
}

/* es -> op (one argument as JSON) -> output; the op reads external source "a" (and "b"). */
static sl_graph *graph1(const char *op, const char *arg, const char *json, bool two)
{
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "external_source", "a", NULL), SL_OK);
    assert_int_equal(sl_graph_add(g, op, "op", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "op", "a"), SL_OK);
    if (two) {
        assert_int_equal(sl_graph_add(g, "external_source", "b", NULL), SL_OK);
        assert_int_equal(sl_graph_input(g, "op", "b"), SL_OK);
    }
    if (arg)
        assert_int_equal(sl_graph_arg_json(g, "op", arg, json), SL_OK);
    assert_int_equal(sl_graph_output(g, "op"), SL_OK);
    return g;
}

static void test_scalar_cast(void **state)
{
    (void)state;
    sl_pipeline *p = make(graph1("cast", "dtype", "\"int32\"", false), 2, 1);
    float v[2] = {2.5f, -2.5f};
    const void *data[2] = {&v[0], &v[1]};
    feed(p, "a", 2, 0, SL_DTYPE_FLOAT32, NULL, data, "");
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    const sl_batch *b = sl_pipeline_output(p, 0);
    assert_int_equal(sl_batch_ndim(b), 0);
    assert_int_equal(*(const int32_t *)sl_batch_sample_data(b, 0), 3);
    assert_int_equal(*(const int32_t *)sl_batch_sample_data(b, 1), -3);
    sl_pipeline_destroy(p);
}

static void test_scalar_stack(void **state)
{
    (void)state;
    sl_pipeline *p = make(graph1("stack", NULL, NULL, true), 1, 1);
    int16_t x = -7, y = 300;
    const void *dx[1] = {&x}, *dy[1] = {&y};
    feed(p, "a", 1, 0, SL_DTYPE_INT16, NULL, dx, "");
    feed(p, "b", 1, 0, SL_DTYPE_INT16, NULL, dy, "");
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    const sl_batch *b = sl_pipeline_output(p, 0);
    assert_int_equal(sl_batch_ndim(b), 1);
    assert_int_equal(sl_batch_shape(b, 0)[0], 2);
    const int16_t *o = sl_batch_sample_data(b, 0);
    assert_int_equal(o[0], -7);
    assert_int_equal(o[1], 300);
    sl_pipeline_destroy(p);
}

/* cat and stack take any number of inputs (DALI has no limit; sluice had 16): 40 sources of
 * 2x1 int32 samples, sample value 100 * t + row for source t. cat along axis 1 gives a 2x40
 * sample with out[r][t] = 100 * t + r; stack at axis 0 gives 40x2x1 with out[t][r][0] the
 * same value. */
static void test_many_inputs(void **state)
{
    (void)state;
    enum { N = 40 };
    for (int op = 0; op < 2; op++) {
        sl_graph *g = NULL;
        assert_int_equal(sl_graph_create(&g), SL_OK);
        assert_int_equal(sl_graph_add(g, op ? "stack" : "cat", "join", NULL), SL_OK);
        for (int t = 0; t < N; t++) {
            char name[16];
            snprintf(name, sizeof name, "s%d", t);
            assert_int_equal(sl_graph_add(g, "external_source", name, NULL), SL_OK);
            assert_int_equal(sl_graph_input(g, "join", name), SL_OK);
        }
        assert_int_equal(sl_graph_arg_int(g, "join", "axis", op ? 0 : 1), SL_OK);
        assert_int_equal(sl_graph_output(g, "join"), SL_OK);
        sl_pipeline *p = make(g, 1, 1);
        int32_t v[N][2];
        const int64_t shape[2] = {2, 1};
        for (int t = 0; t < N; t++) {
            char name[16];
            snprintf(name, sizeof name, "s%d", t);
            v[t][0] = 100 * t, v[t][1] = 100 * t + 1;
            const void *data[1] = {v[t]};
            feed(p, name, 1, 2, SL_DTYPE_INT32, shape, data, "");
        }
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        const sl_batch *b = sl_pipeline_output(p, 0);
        const int32_t *o = sl_batch_sample_data(b, 0);
        const int64_t *s = sl_batch_shape(b, 0);
        if (op == 0) {
            assert_int_equal(sl_batch_ndim(b), 2);
            assert_true(s[0] == 2 && s[1] == N);
            for (int r = 0; r < 2; r++)
                for (int t = 0; t < N; t++)
                    assert_int_equal(o[r * N + t], 100 * t + r);
        } else {
            assert_int_equal(sl_batch_ndim(b), 3);
            assert_true(s[0] == N && s[1] == 2 && s[2] == 1);
            for (int t = 0; t < N; t++)
                for (int r = 0; r < 2; r++)
                    assert_int_equal(o[t * 2 + r], 100 * t + r);
        }
        sl_pipeline_destroy(p);
    }
}

/* stack of 0-d samples with axis_name: the output is 1-D with that one-letter layout. */
static void test_scalar_stack_axis_name(void **state)
{
    (void)state;
    sl_pipeline *p = make(graph1("stack", "axis_name", "\"X\"", true), 1, 1);
    float x = 1.5f, y = -2.0f;
    const void *dx[1] = {&x}, *dy[1] = {&y};
    feed(p, "a", 1, 0, SL_DTYPE_FLOAT32, NULL, dx, "");
    feed(p, "b", 1, 0, SL_DTYPE_FLOAT32, NULL, dy, "");
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    const sl_batch *b = sl_pipeline_output(p, 0);
    assert_string_equal(sl_batch_layout(b), "X");
    assert_int_equal(sl_batch_shape(b, 0)[0], 2);
    const float *o = sl_batch_sample_data(b, 0);
    assert_true(o[0] == 1.5f && o[1] == -2.0f);
    sl_pipeline_destroy(p);
}

/* transpose of 0-d samples: without perm (reversed: nothing to do) and with perm [] (DALI's
 * test_transpose_default does both), the value passes through. */
static void test_scalar_transpose(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        sl_pipeline *p = make(graph1("transpose", k ? "perm" : NULL, k ? "[]" : NULL, false), 1, 1);
        int64_t v = -123456789012LL;
        const void *data[1] = {&v};
        feed(p, "a", 1, 0, SL_DTYPE_INT64, NULL, data, "");
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        const sl_batch *b = sl_pipeline_output(p, 0);
        assert_int_equal(sl_batch_ndim(b), 0);
        assert_true(*(const int64_t *)sl_batch_sample_data(b, 0) == v);
        sl_pipeline_destroy(p);
    }
}

/* shapes of 0-d samples: an empty 1-D tensor each. */
static void test_scalar_shapes(void **state)
{
    (void)state;
    sl_pipeline *p = make(graph1("shapes", NULL, NULL, false), 2, 1);
    uint8_t v[2] = {1, 2};
    const void *data[2] = {&v[0], &v[1]};
    feed(p, "a", 2, 0, SL_DTYPE_UINT8, NULL, data, "");
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    const sl_batch *b = sl_pipeline_output(p, 0);
    assert_int_equal(sl_batch_dtype(b), SL_DTYPE_INT64);
    assert_int_equal(sl_batch_ndim(b), 1);
    assert_int_equal(sl_batch_shape(b, 0)[0], 0);
    assert_int_equal(sl_batch_shape(b, 1)[0], 0);
    sl_pipeline_destroy(p);
}

static void test_scalar_pad_reshape(void **state)
{
    (void)state;
    const char *ops[2][3] = {{"pad", "fill_value", "1.0"}, {"reshape", "shape", "[1, 1]"}};
    for (int k = 0; k < 2; k++) {
        sl_pipeline *p = make(graph1(ops[k][0], ops[k][1], ops[k][2], false), 1, 1);
        double v = 4.25;
        const void *data[1] = {&v};
        feed(p, "a", 1, 0, SL_DTYPE_FLOAT64, NULL, data, "");
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        const sl_batch *b = sl_pipeline_output(p, 0);
        assert_int_equal(sl_batch_ndim(b), k == 0 ? 0 : 2);
        assert_true(*(const double *)sl_batch_sample_data(b, 0) == 4.25);
        sl_pipeline_destroy(p);
    }
}

static void test_scalar_flip_fails(void **state)
{
    (void)state;
    sl_pipeline *p = make(graph1("flip", NULL, NULL, false), 1, 1);
    uint8_t v = 1;
    const void *data[1] = {&v};
    feed(p, "a", 1, 0, SL_DTYPE_UINT8, NULL, data, "");
    assert_int_not_equal(sl_pipeline_run(p), SL_OK);
    assert_non_null(strstr(sl_pipeline_error(p), "does not match any of the allowed layouts"));
    sl_pipeline_destroy(p);
}

/* ---- normalize, batch statistics, iterations in flight ------------------------------------ */

#define NB 3     /* samples per batch */
#define NIT 8    /* iterations */
#define C 3      /* channels */
#define ROWS 60  /* sample s has ROWS + s rows of COLS pixels: large enough for iterations to */
#define COLS 300 /* overlap in time */

/* Sample s of iteration it: (ROWS + s) x COLS x C uint8 with iteration-dependent values. */
static void sample_data(int it, int s, uint8_t *buf, int64_t *shape)
{
    shape[0] = ROWS + s, shape[1] = COLS, shape[2] = C;
    for (int64_t k = 0; k < shape[0] * shape[1] * C; k++)
        buf[k] = (uint8_t)((k * (7 + it) + s * 31 + it * it * 13) % 251);
}

static void test_normalize_batch_iterations(void **state)
{
    (void)state;
    sl_graph *g = graph1("normalize", "axis_names", "\"HW\"", false);
    assert_int_equal(sl_graph_arg_json(g, "op", "batch", "true"), SL_OK);
    sl_pipeline *p = make(g, NB, 3);
    static uint8_t data[NIT][NB][(ROWS + NB) * COLS * C];
    int64_t shapes[NIT][NB * 3];
    for (int it = 0; it < NIT; it++) {
        const void *ptr[NB];
        for (int s = 0; s < NB; s++) {
            sample_data(it, s, data[it][s], &shapes[it][s * 3]);
            ptr[s] = data[it][s];
        }
        feed(p, "a", NB, 3, SL_DTYPE_UINT8, shapes[it], ptr, "HWC");
    }
    for (int it = 0; it < NIT; it++) {
        if (sl_pipeline_run(p) != SL_OK)
            fail_msg("run %d: %s", it, sl_pipeline_error(p));
        double sum[C] = {0}, sq[C] = {0}, n = 0;
        for (int s = 0; s < NB; s++)
            for (int64_t k = 0; k < shapes[it][s * 3] * COLS * C; k++)
                sum[k % C] += data[it][s][k], n += (k % C == 0);
        for (int s = 0; s < NB; s++)
            for (int64_t k = 0; k < shapes[it][s * 3] * COLS * C; k++)
                sq[k % C] += pow(data[it][s][k] - sum[k % C] / n, 2);
        const sl_batch *b = sl_pipeline_output(p, 0);
        for (int s = 0; s < NB; s++) {
            const float *o = sl_batch_sample_data(b, s);
            for (int64_t k = 0; k < shapes[it][s * 3] * COLS * C; k++) {
                double m = sum[k % C] / n, sd = sqrt(sq[k % C] / n);
                double want = (data[it][s][k] - m) / sd;
                if (fabs(o[k] - want) > 2e-5)
                    fail_msg("iteration %d sample %d element %lld: %g, expected %g", it, s,
                             (long long)k, o[k], want);
            }
        }
    }
    sl_pipeline_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_cast),
        cmocka_unit_test(test_scalar_stack),
        cmocka_unit_test(test_scalar_stack_axis_name),
        cmocka_unit_test(test_many_inputs),
        cmocka_unit_test(test_scalar_transpose),
        cmocka_unit_test(test_scalar_shapes),
        cmocka_unit_test(test_scalar_pad_reshape),
        cmocka_unit_test(test_scalar_flip_fails),
        cmocka_unit_test(test_normalize_batch_iterations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
