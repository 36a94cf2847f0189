/* tests/c/test_op_python_function.c: the C side of python_function — the node that runs the
 * application's function (sl_pipeline_set_callback) — driven by C callbacks, without Python.
 *
 * - A node without a function (a JSON spec, a C graph) fails at build, naming the node; so do
 *   output_layouts longer than the outputs, and a pipeline output past num_outputs.
 * - sl_pipeline_set_callback refuses unknown nodes, nodes of other operators, a NULL function
 *   and a built pipeline, each with its message.
 * - Outputs: what the callback hands back is copied whatever its strides (reversed, every other
 *   element, 0-D), two outputs of different dtypes, with the declared layouts; the callback sees
 *   every iteration once, in order, never two at a time, with several iterations in flight.
 * - num_outputs=0: the node is kept (side effects) and called once per iteration.
 * - A failed call (SL_ECALLBACK) and outputs the node refuses (mixed dtypes or dimensions, a
 *   layout of the wrong length) fail their own iteration with the node's context; the next
 *   iterations go on. Every call's views are released exactly once: after the copy, on
 *   failure, or when the pipeline is destroyed with an iteration in flight.
 * Runs under ASan+UBSan in CI (label ops).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "sluice/sluice.h"
#include "testutil.h"

#define BATCH 4
#define LEN 5 /* elements of each fed sample */

/* ---- graphs ------------------------------------------------------------------------------- */

static sl_pipeline *make(sl_graph *g, int prefetch)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = BATCH;
    o.num_threads = 4;
    o.prefetch_queue_depth = prefetch;
    o.seed = 1;
    sl_pipeline *p = NULL;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    sl_graph_destroy(g);
    return p;
}

/* external_source "in" -> python_function "f" (num_outputs n), outputs f:0 .. f:n-1 (or "in"
 * when n is 0). */
static sl_graph *graph_fn(int n, const char *layouts_json)
{
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "external_source", "in", NULL), SL_OK);
    assert_int_equal(sl_graph_add(g, "python_function", "f", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "f", "in"), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "f", "num_outputs", n), SL_OK);
    if (layouts_json)
        assert_int_equal(sl_graph_arg_json(g, "f", "output_layouts", layouts_json), SL_OK);
    for (int o = 0; o < n; o++) {
        char ref[16];
        snprintf(ref, sizeof ref, "f:%d", o);
        assert_int_equal(sl_graph_output(g, ref), SL_OK);
    }
    if (n == 0)
        assert_int_equal(sl_graph_output(g, "in"), SL_OK);
    return g;
}

/* Feeds iteration `it`'s batch: sample i is [it*100 + i*10 + k for k < LEN] as uint8. */
static void feed(sl_pipeline *p, int it)
{
    static uint8_t data[BATCH][LEN];
    const void *ptrs[BATCH];
    int64_t shapes[BATCH];
    for (int i = 0; i < BATCH; i++) {
        for (int k = 0; k < LEN; k++)
            data[i][k] = (uint8_t)(it * 100 + i * 10 + k);
        ptrs[i] = data[i];
        shapes[i] = LEN;
    }
    sl_feed f = {.num_samples = BATCH,
                 .ndim = 1,
                 .dtype = SL_DTYPE_UINT8,
                 .shapes = shapes,
                 .data = (const void *const *)ptrs};
    assert_int_equal(sl_pipeline_feed_input(p, "in", &f), SL_OK);
}

/* ---- the callback --------------------------------------------------------------------------- */

typedef enum { MODE_GOOD, MODE_FAIL_AT_2, MODE_MIXED_DTYPE, MODE_MIXED_NDIM } mode;

/* One call's results, kept until the node releases them. */
typedef struct result {
    uint8_t rev[BATCH][LEN]; /* output 0: a copy of the input, read backwards (stride -1) */
    int64_t rev_shape[BATCH][1], rev_strides[BATCH][1];
    int32_t every[BATCH][8]; /* output 1 source: 2*LEN values, read every other one */
    int64_t every_shape[BATCH][1], every_strides[BATCH][1];
    float scalar[BATCH]; /* output 2: 0-D */
    atomic_int released; /* times the node released it: must end at exactly 1 */
} result;

typedef struct fixture {
    mode mode;
    atomic_int in_call; /* calls running now (must never exceed 1) */
    int max_in_call;
    int64_t next_iteration; /* the iteration the next call must be for */
    int calls, releases, order_errors;
    result results[16];
} fixture;

static void release_result(void *ctx)
{
    result *r = ctx;
    atomic_fetch_add(&r->released, 1);
}

static void count_release(void *ctx)
{
    fixture *fx = ctx;
    fx->releases++;
}

static sl_status callback(void *user, sl_callback_call *call)
{
    fixture *fx = user;
    int now = atomic_fetch_add(&fx->in_call, 1) + 1;
    fx->max_in_call = now > fx->max_in_call ? now : fx->max_in_call;
    if (call->iteration != fx->next_iteration)
        fx->order_errors++;
    fx->next_iteration = call->iteration + 1;
    fx->calls++;
    int n = call->batch_size, it = (int)call->iteration;
    assert_int_equal(n, BATCH);
    assert_int_equal(call->num_inputs, 1);
    assert_string_equal(call->err, "");
    result *r = &fx->results[it % 16];
    memset(r, 0, sizeof *r);
    call->release = release_result;
    call->release_ctx = r;
    if (fx->mode == MODE_FAIL_AT_2 && it == 2) {
        snprintf(call->err, call->errlen, "ValueError: boom at iteration %d", it);
        atomic_fetch_sub(&fx->in_call, 1);
        return SL_ECALLBACK;
    }
    for (int i = 0; i < n; i++) {
        const uint8_t *in = sl_batch_sample_data(call->inputs[0], i);
        memcpy(r->rev[i], in, LEN);
        r->rev_shape[i][0] = LEN;
        r->rev_strides[i][0] = -1;
        call->outputs[i] = (sl_sample_view){.dtype = SL_DTYPE_UINT8,
                                            .ndim = 1,
                                            .shape = r->rev_shape[i],
                                            .strides = r->rev_strides[i],
                                            .data = &r->rev[i][LEN - 1]};
        if (call->num_outputs < 2)
            continue;
        for (int k = 0; k < 8; k++)
            r->every[i][k] = it * 1000 + i * 10 + k;
        r->every_shape[i][0] = 4;
        r->every_strides[i][0] = 2 * (int64_t)sizeof(int32_t);
        bool odd = fx->mode == MODE_MIXED_NDIM && i == 1; /* sample 1 as a 2-D [1, 4] */
        static const int64_t shape_2d[2] = {1, 4}, strides_2d[2] = {32, 8};
        call->outputs[n + i] = (sl_sample_view){.dtype = SL_DTYPE_INT32,
                                                .ndim = odd ? 2 : 1,
                                                .shape = odd ? shape_2d : r->every_shape[i],
                                                .strides = odd ? strides_2d : r->every_strides[i],
                                                .data = r->every[i]};
        if (fx->mode == MODE_MIXED_DTYPE && i == 1)
            call->outputs[n + i].dtype = SL_DTYPE_UINT32;
        if (call->num_outputs < 3)
            continue;
        r->scalar[i] = (float)it + 0.5f * (float)i;
        call->outputs[2 * n + i] =
            (sl_sample_view){.dtype = SL_DTYPE_FLOAT32, .ndim = 0, .data = &r->scalar[i]};
    }
    atomic_fetch_sub(&fx->in_call, 1);
    return SL_OK;
}

/* A callback that hands back nothing (num_outputs 0) and counts its calls and releases. */
static sl_status side_effect(void *user, sl_callback_call *call)
{
    fixture *fx = user;
    fx->calls++;
    assert_int_equal(call->num_outputs, 0);
    call->release = count_release;
    call->release_ctx = fx;
    return SL_OK;
}

/* Checks iteration it's outputs of a MODE_GOOD callback with n outputs. */
static void check_outputs(sl_pipeline *p, int it, int n)
{
    assert_int_equal(sl_pipeline_iteration(p), it);
    const sl_batch *b0 = sl_pipeline_output(p, 0);
    assert_int_equal(sl_batch_dtype(b0), SL_DTYPE_UINT8);
    for (int i = 0; i < BATCH; i++) {
        assert_int_equal(sl_batch_shape(b0, i)[0], LEN);
        const uint8_t *s = sl_batch_sample_data(b0, i);
        for (int k = 0; k < LEN; k++)
            assert_int_equal(s[k], (uint8_t)(it * 100 + i * 10 + (LEN - 1 - k)));
    }
    if (n < 2)
        return;
    const sl_batch *b1 = sl_pipeline_output(p, 1);
    assert_int_equal(sl_batch_dtype(b1), SL_DTYPE_INT32);
    assert_string_equal(sl_batch_layout(b1), "X");
    for (int i = 0; i < BATCH; i++) {
        const int32_t *s = sl_batch_sample_data(b1, i);
        assert_int_equal(sl_batch_shape(b1, i)[0], 4);
        for (int k = 0; k < 4; k++)
            assert_int_equal(s[k], it * 1000 + i * 10 + 2 * k);
    }
    if (n < 3)
        return;
    const sl_batch *b2 = sl_pipeline_output(p, 2);
    assert_int_equal(sl_batch_ndim(b2), 0);
    assert_string_equal(sl_batch_layout(b2), "");
    for (int i = 0; i < BATCH; i++)
        assert_true(*(const float *)sl_batch_sample_data(b2, i) == (float)it + 0.5f * (float)i);
}

static int released_count(const fixture *fx, int iterations)
{
    int k = 0;
    for (int it = 0; it < iterations && it < 16; it++)
        k += atomic_load(&fx->results[it].released) == 1;
    return k;
}

/* ---- tests -------------------------------------------------------------------------------- */

static void without_a_function_the_build_fails(void **state)
{
    (void)state;
    static const char *const want =
        "python_function (node \"f\"): needs a Python callable: build it from Python "
        "(fn.python_function registers its `function`); a JSON spec cannot hold one, and a C "
        "program registers one with sl_pipeline_set_callback";
    sl_pipeline *p = make(graph_fn(1, NULL), 2);
    assert_int_equal(sl_pipeline_build(p), SL_EUNSUPPORTED);
    assert_string_equal(sl_pipeline_error(p), want);
    sl_pipeline_destroy(p);

    sl_graph *g = NULL; /* the same from a JSON spec */
    assert_int_equal(sl_graph_from_json("{\"nodes\": [{\"name\": \"f\", \"op\": "
                                        "\"python_function\", \"args\": {\"num_outputs\": 1}}], "
                                        "\"outputs\": [\"f\"]}",
                                        &g),
                     SL_OK);
    p = make(g, 1);
    assert_int_equal(sl_pipeline_build(p), SL_EUNSUPPORTED);
    assert_string_equal(sl_pipeline_error(p), want);
    sl_pipeline_destroy(p);
}

static void graph_errors_name_the_node(void **state)
{
    (void)state;
    fixture fx = {0};
    /* output_layouts longer than the outputs: DALI's words, at build */
    sl_pipeline *p = make(graph_fn(1, "[\"AB\", \"C\"]"), 2);
    assert_int_equal(sl_pipeline_set_callback(p, "f", callback, &fx), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_EINVAL);
    assert_string_equal(sl_pipeline_error(p),
                        "python_function (node \"f\"): the length of output_layouts (2) is "
                        "greater than the number of outputs (1)");
    sl_pipeline_destroy(p);
    /* an output past num_outputs (here: none at all) */
    sl_graph *g = graph_fn(0, NULL);
    assert_int_equal(sl_graph_output(g, "f:0"), SL_OK);
    p = make(g, 2);
    assert_int_equal(sl_pipeline_set_callback(p, "f", side_effect, &fx), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_EINVAL);
    assert_string_equal(sl_pipeline_error(p), "python_function (node \"f\"): pipeline output 1 "
                                              "asks for output 0; the node has 0");
    sl_pipeline_destroy(p);
    /* num_outputs out of range, named as any argument is */
    p = make(graph_fn(65, NULL), 2);
    assert_int_equal(sl_pipeline_build(p), SL_EINVAL);
    assert_non_null(strstr(sl_pipeline_error(p), "argument \"num_outputs\""));
    sl_pipeline_destroy(p);
}

static void set_callback_refuses_misuse(void **state)
{
    (void)state;
    fixture fx = {0};
    sl_pipeline *p = make(graph_fn(1, NULL), 2);
    assert_int_equal(sl_pipeline_set_callback(p, "nope", callback, &fx), SL_ENOTFOUND);
    assert_string_equal(sl_pipeline_error(p), "sl_pipeline_set_callback: no node named \"nope\"");
    assert_int_equal(sl_pipeline_set_callback(p, "in", callback, &fx), SL_EINVAL);
    assert_string_equal(sl_pipeline_error(p),
                        "sl_pipeline_set_callback: node \"in\" (external_source) runs no "
                        "function of the application: its operator takes no callback");
    assert_int_equal(sl_pipeline_set_callback(p, "f", NULL, &fx), SL_EMISUSE);
    assert_int_equal(sl_pipeline_set_callback(NULL, "f", callback, &fx), SL_EMISUSE);
    assert_int_equal(sl_pipeline_set_callback(p, "f", side_effect, &fx), SL_OK);
    assert_int_equal(sl_pipeline_set_callback(p, "f", callback, &fx), SL_OK); /* replaces */
    assert_int_equal(sl_pipeline_build(p), SL_OK);
    assert_int_equal(sl_pipeline_set_callback(p, "f", callback, &fx), SL_EMISUSE);
    assert_string_equal(sl_pipeline_error(p),
                        "sl_pipeline_set_callback: the pipeline is built already; register the "
                        "function of node \"f\" before sl_pipeline_build");
    sl_pipeline_destroy(p);
    assert_int_equal(fx.calls, 0);
}

/* Strided views copied, dtypes and layouts per output, every iteration once and in order with
 * 1 to 3 iterations in flight, one call at a time; every call's views released once. */
static void outputs_in_order(void **state)
{
    (void)state;
    enum { ITERS = 12 };
    for (int prefetch = 1; prefetch <= 3; prefetch++) {
        fixture fx = {.mode = MODE_GOOD};
        sl_pipeline *p = make(graph_fn(3, "[\"W\", \"X\"]"), prefetch);
        assert_int_equal(sl_pipeline_set_callback(p, "f", callback, &fx), SL_OK);
        assert_int_equal(sl_pipeline_build(p), SL_OK);
        for (int it = 0; it < ITERS + prefetch; it++)
            feed(p, it);
        for (int it = 0; it < ITERS; it++) {
            assert_int_equal(sl_pipeline_run(p), SL_OK);
            check_outputs(p, it, 3);
            assert_string_equal(sl_batch_layout(sl_pipeline_output(p, 0)), "W");
        }
        sl_pipeline_destroy(p);
        assert_int_equal(fx.order_errors, 0);
        assert_int_equal(fx.max_in_call, 1);
        assert_true(fx.calls >= ITERS && fx.calls <= ITERS + prefetch);
        assert_int_equal(released_count(&fx, fx.calls), fx.calls);
    }
}

static void no_outputs_is_kept(void **state)
{
    (void)state;
    fixture fx = {0};
    sl_pipeline *p = make(graph_fn(0, NULL), 1);
    assert_int_equal(sl_pipeline_set_callback(p, "f", side_effect, &fx), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_OK);
    for (int it = 0; it < 3; it++) {
        feed(p, it);
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        assert_int_equal(fx.calls, it + 1);
        assert_int_equal(fx.releases, it + 1); /* nothing to copy: released at once */
    }
    sl_pipeline_destroy(p);
}

/* A failed call fails its own iteration, in the node's words; the pipeline goes on. */
static void a_failed_call_fails_its_iteration(void **state)
{
    (void)state;
    fixture fx = {.mode = MODE_FAIL_AT_2};
    sl_pipeline *p = make(graph_fn(1, NULL), 2);
    assert_int_equal(sl_pipeline_set_callback(p, "f", callback, &fx), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_OK);
    for (int it = 0; it < 7; it++)
        feed(p, it);
    for (int it = 0; it < 5; it++) {
        sl_status st = sl_pipeline_run(p);
        if (it != 2) {
            assert_int_equal(st, SL_OK);
            check_outputs(p, it, 1);
            continue;
        }
        assert_int_equal(st, SL_ECALLBACK);
        assert_string_equal(sl_pipeline_error(p), "python_function (node \"f\"): iteration 2: "
                                                  "ValueError: boom at iteration 2");
        sl_error_detail d;
        sl_pipeline_error_detail(p, &d);
        assert_int_equal(d.iteration, 2);
        assert_string_equal(d.node, "f");
    }
    sl_pipeline_destroy(p);
    assert_int_equal(released_count(&fx, fx.calls), fx.calls); /* the failed call's too */
}

static void expect_refused(mode m, const char *layouts, const char *want)
{
    fixture fx = {.mode = m};
    sl_pipeline *p = make(graph_fn(2, layouts), 1);
    assert_int_equal(sl_pipeline_set_callback(p, "f", callback, &fx), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_OK);
    for (int it = 0; it < 2; it++)
        feed(p, it);
    assert_int_equal(sl_pipeline_run(p), SL_EINVAL);
    assert_string_equal(sl_pipeline_error(p), want);
    sl_pipeline_destroy(p);
    assert_int_equal(released_count(&fx, fx.calls), fx.calls);
}

static void outputs_the_node_refuses(void **state)
{
    (void)state;
    expect_refused(MODE_MIXED_DTYPE, NULL,
                   "python_function (node \"f\"): iteration 0, sample 1: output 1 is uint32, "
                   "but int32 in sample 0: the samples of an output must share one element "
                   "type");
    expect_refused(MODE_MIXED_NDIM, NULL,
                   "python_function (node \"f\"): iteration 0, sample 1: output 1 has 2 "
                   "dimensions, but 1 in sample 0: the samples of an output must have the same "
                   "number of dimensions");
    expect_refused(MODE_GOOD, "[\"W\", \"XY\"]",
                   "python_function (node \"f\"): iteration 0: output_layouts[1] \"XY\" has 2 "
                   "dimensions, but output 1 has 1");
}

/* Destroyed with iterations in flight: every call's views are still released. */
static void destroy_in_flight_releases(void **state)
{
    (void)state;
    fixture fx = {.mode = MODE_GOOD};
    sl_pipeline *p = make(graph_fn(2, "[\"W\", \"X\"]"), 3);
    assert_int_equal(sl_pipeline_set_callback(p, "f", callback, &fx), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_OK);
    for (int it = 0; it < 3; it++)
        feed(p, it);
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    check_outputs(p, 0, 2);
    sl_pipeline_destroy(p);
    assert_int_equal(released_count(&fx, fx.calls), fx.calls);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(without_a_function_the_build_fails),
        cmocka_unit_test(graph_errors_name_the_node),
        cmocka_unit_test(set_callback_refuses_misuse),
        cmocka_unit_test(outputs_in_order),
        cmocka_unit_test(no_outputs_is_kept),
        cmocka_unit_test(a_failed_call_fails_its_iteration),
        cmocka_unit_test(outputs_the_node_refuses),
        cmocka_unit_test(destroy_in_flight_releases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
