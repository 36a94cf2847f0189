/* test_spec: the JSON spec (src/graph/spec.c): sl_graph_from_json, sl_graph_to_json,
 * sl_pipeline_options_from_json and sl__spec_write.
 *
 * Errors: each bad spec gets the expected code and a message naming the place (line/column,
 * node index and name, key). Writing: the exact text for a small graph; a round trip
 * to_json -> from_json -> to_json gives the same text and an equal graph; floats keep their
 * value and stay floats. Options: keys read, others kept, bad types rejected leaving *o alone.
 * Fault injection: every allocation of reading and writing fails in turn without a crash.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

static const char *const demo =
    "{\n"
    "  \"pipeline\": {\"batch_size\": 64, \"num_threads\": 2, \"seed\": 42},\n"
    "  \"nodes\": [\n"
    "    {\"name\": \"reader\", \"op\": \"readers.file\",\n"
    "     \"args\": {\"file_root\": \"/data\", \"random_shuffle\": true}},\n"
    "    {\"name\": \"dec\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"],\n"
    "     \"args\": {\"output_type\": \"RGB\"}},\n"
    "    {\"name\": \"coin\", \"op\": \"random.coin_flip\", \"args\": {\"probability\": 0.5}},\n"
    "    {\"name\": \"cmn\", \"op\": \"crop_mirror_normalize\", \"device\": \"cpu\",\n"
    "     \"inputs\": [\"dec\"],\n"
    "     \"args\": {\"crop\": [224, 224], \"mean\": [123.675, 116.28, 103.53],\n"
    "              \"std\": [58.395, 57.12, 57.375], \"dtype\": \"float32\", \"scale\": 1.0,\n"
    "              \"file_filters\": [\"*.jpg\", \"a \\\"q\\\" \\\\ b\\n\"], \"empty\": []},\n"
    "     \"arg_inputs\": {\"mirror\": \"coin\"}}\n"
    "  ],\n"
    "  \"outputs\": [\"cmn\", \"reader:1\"]\n"
    "}\n";

/* Parses `json`, expects status `code` and every NULL-terminated word in the message. */
static void expect_error(const char *json, sl_status code, ...)
{
    sl_graph *g = (sl_graph *)1;
    sl_status st = sl_graph_from_json(json, &g);
    const char *msg = sl_last_error();
    if (st != code)
        fail_msg("expected %s, got %s (%s) for %s", sl_status_name(code), sl_status_name(st), msg,
                 json);
    assert_null(g);
    va_list ap;
    va_start(ap, code);
    for (const char *w; (w = va_arg(ap, const char *)) != NULL;) {
        if (!strstr(msg, w))
            fail_msg("message \"%s\" lacks \"%s\"", msg, w);
    }
    va_end(ap);
    assert_non_null(strstr(msg, "spec: "));
}

/* ---- errors ------------------------------------------------------------------------------- */

static void test_syntax_error_line_column(void **state)
{
    (void)state;
    expect_error("{\n  \"nodes\": [\n    {\"name\": \"a\",, \"op\": \"x\"}\n  ]\n}", SL_ECORRUPT,
                 "line 3, column", NULL);
    expect_error("", SL_ECORRUPT, "line 1", NULL);
    expect_error("{\"nodes\": [], \"nodes\": []}", SL_ECORRUPT, "duplicate", NULL);
}

static void test_unknown_keys(void **state)
{
    (void)state;
    expect_error("{\"nodes\": [], \"outptus\": []}", SL_EINVAL, "unknown key \"outptus\"",
                 "\"outputs\"", NULL);
    expect_error("{\"nodes\": [{\"name\": \"x\", \"op\": \"a\"},\n"
                 "{\"name\": \"dec\", \"op\": \"decoders.image\", \"arg\": {}}]}",
                 SL_EINVAL, "nodes[1] (\"dec\")", "unknown key \"arg\"", "\"args\"", NULL);
    expect_error("{\"nodes\": [{\"op\": \"a\", \"input\": []}]}", SL_EINVAL, "nodes[0]",
                 "unknown key \"input\"", NULL);
}

static void test_missing_parts(void **state)
{
    (void)state;
    expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": \"readers.file\"}, {\"name\": \"b\"}]}",
                 SL_EINVAL, "nodes[1] (\"b\")", "\"op\" is missing", NULL);
    expect_error("{\"outputs\": []}", SL_EINVAL, "\"nodes\" is missing", NULL);
}

static void test_wrong_types(void **state)
{
    (void)state;
    expect_error("[1, 2]", SL_EINVAL, "top level must be an object", NULL);
    expect_error("{\"nodes\": {}}", SL_EINVAL, "\"nodes\" must be a list", NULL);
    expect_error("{\"nodes\": [3]}", SL_EINVAL, "nodes[0]", "must be an object", NULL);
    expect_error("{\"nodes\": [{\"name\": 5, \"op\": \"a\"}]}", SL_EINVAL, "nodes[0]",
                 "\"name\" must be a non-empty string", NULL);
    expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": [\"x\"]}]}", SL_EINVAL, "nodes[0] (\"a\")",
                 "\"op\" must be a non-empty string, got a list", NULL);
    expect_error("{\"nodes\": [{\"name\": \"r\", \"op\": \"a\"},\n"
                 "{\"name\": \"s\", \"op\": \"a\"},\n"
                 "{\"name\": \"dec\", \"op\": \"decoders.image\", \"inputs\": \"r\"}]}",
                 SL_EINVAL, "spec: nodes[2] (\"dec\"): \"inputs\" must be a list of strings", NULL);
    expect_error("{\"nodes\": [{\"name\": \"d\", \"op\": \"a\", \"inputs\": [\"r\", 1]}]}",
                 SL_EINVAL, "nodes[0] (\"d\")", "\"inputs\" must be a list of strings", NULL);
    expect_error("{\"nodes\": [{\"name\": \"d\", \"op\": \"a\", \"args\": [1]}]}", SL_EINVAL,
                 "nodes[0] (\"d\")", "\"args\" must be an object", NULL);
    expect_error("{\"nodes\": [{\"name\": \"d\", \"op\": \"a\", \"args\": {\"x\": null}}]}",
                 SL_EINVAL, "nodes[0] (\"d\")", "args \"x\"", NULL);
    expect_error("{\"nodes\": [{\"name\": \"d\", \"op\": \"a\", \"args\": {\"x\": [1, \"a\"]}}]}",
                 SL_EINVAL, "args \"x\"", "only numbers or only strings", NULL);
    expect_error("{\"nodes\": [{\"name\": \"d\", \"op\": \"a\", \"arg_inputs\": {\"m\": 1}}]}",
                 SL_EINVAL, "nodes[0] (\"d\")", "arg_inputs \"m\" must be a string", NULL);
    expect_error("{\"nodes\": [], \"outputs\": \"cmn\"}", SL_EINVAL,
                 "\"outputs\" must be a list of strings", NULL);
}

static void test_conflicts(void **state)
{
    (void)state;
    expect_error(
        "{\"nodes\": [{\"name\": \"d\", \"op\": \"a\"}, {\"name\": \"d\", \"op\": \"b\"}]}",
        SL_EINVAL, "nodes[1] (\"d\")", "already exists", NULL);
    expect_error("{\"nodes\": [{\"name\": \"d\", \"op\": \"a\", \"args\": {\"m\": 1},\n"
                 "\"arg_inputs\": {\"m\": \"c\"}}]}",
                 SL_EINVAL, "nodes[0] (\"d\")", "\"m\" is given in both", NULL);
}

static void test_misuse(void **state)
{
    (void)state;
    sl_graph *g;
    char *text;
    sl_pipeline_options o;
    assert_int_equal(sl_graph_from_json(NULL, &g), SL_EMISUSE);
    assert_int_equal(sl_graph_from_json("{}", NULL), SL_EMISUSE);
    assert_int_equal(sl_graph_to_json(NULL, &text), SL_EMISUSE);
    assert_int_equal(sl_pipeline_options_from_json(NULL, &o), SL_EMISUSE);
}

/* ---- reading and writing ------------------------------------------------------------------ */

static const sl__garg *find_arg(const sl__gnode *n, const char *name)
{
    for (int i = 0; i < n->nargs; i++) {
        if (strcmp(n->args[i].name, name) == 0)
            return &n->args[i];
    }
    return NULL;
}

static void test_reads_graph(void **state)
{
    (void)state;
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_from_json(demo, &g), SL_OK);
    assert_int_equal(g->n, 4);
    const sl__gnode *cmn = sl__graph_find(g, "cmn");
    assert_non_null(cmn);
    assert_string_equal(cmn->op, "crop_mirror_normalize");
    assert_int_equal(cmn->ninputs, 1);
    assert_string_equal(cmn->inputs[0], "dec");
    const sl__garg *a = find_arg(cmn, "crop");
    assert_int_equal(a->value.kind, SL__V_INTS);
    assert_int_equal(a->value.n, 2);
    assert_int_equal(a->value.ints[1], 224);
    a = find_arg(cmn, "mean");
    assert_int_equal(a->value.kind, SL__V_FLOATS);
    assert_true(a->value.floats[0] == 123.675);
    assert_int_equal(find_arg(cmn, "scale")->value.kind, SL__V_FLOAT);
    assert_string_equal(find_arg(cmn, "file_filters")->value.strs[1], "a \"q\" \\ b\n");
    a = find_arg(cmn, "mirror");
    assert_string_equal(a->source, "coin");
    assert_null(sl__graph_find(g, "reader")->device); /* not given: the build places it */
    assert_string_equal(sl__graph_find(g, "cmn")->device, "cpu");
    assert_true(find_arg(sl__graph_find(g, "reader"), "random_shuffle")->value.b);
    assert_int_equal(g->noutputs, 2);
    assert_string_equal(g->outputs[1], "reader:1");
    sl_graph_destroy(g);
}

static const char *const small_expected = "{\n"
                                          "  \"nodes\": [\n"
                                          "    {\n"
                                          "      \"name\": \"r\",\n"
                                          "      \"op\": \"readers.file\",\n"
                                          "      \"args\": {\n"
                                          "        \"file_root\": \"/d\",\n"
                                          "        \"random_shuffle\": true\n"
                                          "      }\n"
                                          "    },\n"
                                          "    {\n"
                                          "      \"name\": \"c\",\n"
                                          "      \"op\": \"crop_mirror_normalize\",\n"
                                          "      \"device\": \"cpu\",\n"
                                          "      \"inputs\": [\"r\"],\n"
                                          "      \"args\": {\n"
                                          "        \"crop\": [2, 3],\n"
                                          "        \"mean\": [0.1, 1.0, -2.5e-300],\n"
                                          "        \"scale\": 2.0\n"
                                          "      },\n"
                                          "      \"arg_inputs\": {\n"
                                          "        \"mirror\": \"k:0\"\n"
                                          "      }\n"
                                          "    }\n"
                                          "  ],\n"
                                          "  \"outputs\": [\"c\", \"r:1\"]\n"
                                          "}\n";

/* A graph made with the API (arguments set out of name order) is written in the fixed
 * layout; a node added without a device is written without one. */
static void test_writes_fixed_layout(void **state)
{
    (void)state;
    sl_graph *g;
    char *text = NULL;
    const int64_t crop[] = {2, 3};
    const double mean[] = {0.1, 1.0, -2.5e-300};
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "readers.file", "r", NULL), SL_OK);
    assert_int_equal(sl_graph_arg_bool(g, "r", "random_shuffle", true), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "r", "file_root", "/d"), SL_OK);
    assert_int_equal(sl_graph_add(g, "crop_mirror_normalize", "c", "cpu"), SL_OK);
    assert_int_equal(sl_graph_input(g, "c", "r"), SL_OK);
    assert_int_equal(sl_graph_arg_float(g, "c", "scale", 2.0), SL_OK);
    assert_int_equal(sl_graph_arg_input(g, "c", "mirror", "k:0"), SL_OK);
    assert_int_equal(sl_graph_arg_floats(g, "c", "mean", mean, 3), SL_OK);
    assert_int_equal(sl_graph_arg_ints(g, "c", "crop", crop, 2), SL_OK);
    assert_int_equal(sl_graph_output(g, "c"), SL_OK);
    assert_int_equal(sl_graph_output(g, "r:1"), SL_OK);
    assert_int_equal(sl_graph_to_json(g, &text), SL_OK);
    assert_string_equal(text, small_expected);
    free(text); /* the header promises free() */
    sl_graph_destroy(g);
}

/* Deep comparison of two graphs (arguments matched by name). */
static void assert_graphs_equal(const sl_graph *a, const sl_graph *b)
{
    assert_int_equal(a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        const sl__gnode *x = &a->nodes[i], *y = &b->nodes[i];
        assert_string_equal(x->name, y->name);
        assert_string_equal(x->op, y->op);
        assert_int_equal(x->device == NULL, y->device == NULL); /* not given stays not given */
        if (x->device)
            assert_string_equal(x->device, y->device);
        assert_int_equal(x->ninputs, y->ninputs);
        for (int k = 0; k < x->ninputs; k++)
            assert_string_equal(x->inputs[k], y->inputs[k]);
        assert_int_equal(x->nargs, y->nargs);
        for (int k = 0; k < x->nargs; k++) {
            const sl__garg *p = &x->args[k], *q = find_arg(y, p->name);
            assert_non_null(q);
            assert_int_equal(p->source == NULL, q->source == NULL);
            if (p->source) {
                assert_string_equal(p->source, q->source);
                continue;
            }
            char t1[4096], t2[4096];
            assert_int_equal(p->value.kind, q->value.kind);
            sl__value_to_json(&p->value, t1, sizeof t1);
            sl__value_to_json(&q->value, t2, sizeof t2);
            assert_string_equal(t1, t2); /* %.17g: exact for doubles */
        }
    }
    assert_int_equal(a->noutputs, b->noutputs);
    for (int i = 0; i < a->noutputs; i++)
        assert_string_equal(a->outputs[i], b->outputs[i]);
}

static void test_round_trip(void **state)
{
    (void)state;
    sl_graph *g1 = NULL, *g2 = NULL;
    char *t1 = NULL, *t2 = NULL;
    assert_int_equal(sl_graph_from_json(demo, &g1), SL_OK);
    assert_int_equal(sl_graph_to_json(g1, &t1), SL_OK);
    assert_int_equal(sl_graph_from_json(t1, &g2), SL_OK);
    assert_int_equal(sl_graph_to_json(g2, &t2), SL_OK);
    assert_string_equal(t1, t2);
    assert_graphs_equal(g1, g2);
    free(t1);
    free(t2);
    sl_graph_destroy(g1);
    sl_graph_destroy(g2);
}

/* A node without "device" is written without it and read back without it, so the spec gives
 * the same pipeline: the build places it from its inputs again (here on gpu, below a mixed
 * node), while given devices stay as they were. */
static void test_device_as_given_round_trips(void **state)
{
    (void)state;
    static const char *const spec =
        "{\"nodes\": [{\"name\": \"r\", \"op\": \"readers.file\", \"args\": {\"file_root\": "
        "\"/d\"}},"
        " {\"name\": \"dec\", \"op\": \"decoders.image\", \"device\": \"mixed\", \"inputs\": "
        "[\"r\"]},"
        " {\"name\": \"f\", \"op\": \"flip\", \"inputs\": [\"dec\"]},"
        " {\"name\": \"back\", \"op\": \"copy\", \"device\": \"cpu\", \"inputs\": [\"f\"]}],"
        " \"outputs\": [\"f\", \"back\"]}";
    sl_graph *g1 = NULL, *g2 = NULL;
    char *t1 = NULL;
    assert_int_equal(sl_graph_from_json(spec, &g1), SL_OK);
    assert_null(sl__graph_find(g1, "f")->device);
    assert_int_equal(sl_graph_to_json(g1, &t1), SL_OK);
    assert_non_null(strstr(t1, "\"name\": \"f\",\n      \"op\": \"flip\",\n      \"inputs\""));
    assert_non_null(strstr(t1, "\"op\": \"copy\",\n      \"device\": \"cpu\""));
    assert_int_equal(sl_graph_from_json(t1, &g2), SL_OK);
    assert_graphs_equal(g1, g2);
    const sl_graph *gs[] = {g1, g2};
    for (int k = 0; k < 2; k++) {
        signed char placed[4] = {SL__PLACED_UNKNOWN, SL__PLACED_UNKNOWN, SL__PLACED_UNKNOWN,
                                 SL__PLACED_UNKNOWN};
        char *f[] = {"f"}, *back[] = {"back"}, err[256];
        sl__placement pl;
        int from;
        assert_int_equal(sl__graph_place(gs[k], NULL, f, 1, placed, &pl, &from, err, sizeof err),
                         SL_OK);
        assert_int_equal(placed[2], SL__STAGE_GPU); /* f */
        assert_int_equal(sl__graph_place(gs[k], NULL, back, 1, placed, &pl, &from, err, sizeof err),
                         SL_OK);
        assert_int_equal(placed[3], SL__STAGE_CPU); /* back: given */
    }
    free(t1);
    sl_graph_destroy(g1);
    sl_graph_destroy(g2);
}

/* Floats that print short with %.15g but are not exact, integral floats, tiny and huge ones,
 * and an unnamed node all come back unchanged. */
static void test_round_trip_values(void **state)
{
    (void)state;
    const double vals[] = {0.1 + 0.2, 1.0, -0.0, 5e-324, 1.7976931348623157e308, 1e21, 3.0e-5};
    sl_graph *g1, *g2 = NULL;
    char *t1 = NULL, *t2 = NULL;
    assert_int_equal(sl_graph_create(&g1), SL_OK);
    assert_int_equal(sl_graph_add(g1, "random.uniform", NULL, NULL), SL_OK);
    const char *name = g1->nodes[0].name;
    assert_int_equal(sl_graph_arg_floats(g1, name, "values", vals, 7), SL_OK);
    assert_int_equal(sl_graph_arg_float(g1, name, "one", 1.0), SL_OK);
    assert_int_equal(sl_graph_arg_int(g1, name, "big", INT64_MIN), SL_OK);
    assert_int_equal(sl_graph_arg_strs(g1, name, "none", NULL, 0), SL_OK);
    assert_int_equal(sl_graph_arg_str(g1, name, "ctl", "tab\there \x01 \xc3\xa9"), SL_OK);
    assert_int_equal(sl_graph_to_json(g1, &t1), SL_OK);
    assert_int_equal(sl_graph_from_json(t1, &g2), SL_OK);
    assert_int_equal(sl_graph_to_json(g2, &t2), SL_OK);
    assert_string_equal(t1, t2);
    const sl__gnode *n = &g2->nodes[0];
    const sl__garg *a = find_arg(n, "values");
    assert_int_equal(a->value.kind, SL__V_FLOATS);
    for (int i = 0; i < 7; i++)
        assert_memory_equal(&a->value.floats[i], &vals[i], sizeof(double));
    assert_int_equal(find_arg(n, "one")->value.kind, SL__V_FLOAT);
    assert_true(find_arg(n, "big")->value.i == INT64_MIN);
    assert_string_equal(find_arg(n, "ctl")->value.s, "tab\there \x01 \xc3\xa9");
    free(t1);
    free(t2);
    sl_graph_destroy(g1);
    sl_graph_destroy(g2);
}

static void test_non_finite_rejected(void **state)
{
    (void)state;
    sl_graph *g;
    char *text = (char *)1;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "random.uniform", "u", NULL), SL_OK);
    assert_int_equal(sl_graph_arg_float(g, "u", "x", INFINITY), SL_OK);
    assert_int_equal(sl_graph_to_json(g, &text), SL_EINVAL);
    assert_null(text);
    assert_non_null(strstr(sl_last_error(), "node \"u\", argument \"x\""));
    sl_graph_destroy(g);
}

/* ---- options ------------------------------------------------------------------------------ */

static void test_options(void **state)
{
    (void)state;
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    int threads = o.num_threads;
    assert_int_equal(sl_pipeline_options_from_json(demo, &o), SL_OK);
    assert_int_equal(o.batch_size, 64);
    assert_int_equal(o.num_threads, 2);
    assert_int_equal(o.prefetch_queue_depth, SL_PREFETCH_AUTO); /* not given: kept */
    assert_int_equal(o.seed, 42);
    assert_int_equal(o.device_id, -1);

    sl_pipeline_options_init(&o);
    assert_int_equal(sl_pipeline_options_from_json("{\"nodes\": []}", &o), SL_OK);
    assert_int_equal(o.num_threads, threads);
    assert_int_equal(sl_pipeline_options_from_json(
                         "{\"pipeline\": {\"prefetch_queue_depth\": 5, \"device_id\": 0, "
                         "\"seed\": 9007199254740993}}",
                         &o),
                     SL_OK);
    assert_int_equal(o.prefetch_queue_depth, 5);
    assert_int_equal(o.device_id, 0);
    assert_true(o.seed == 9007199254740993LL);
}

static void assert_options_equal(const sl_pipeline_options *a, const sl_pipeline_options *b)
{
    assert_int_equal(a->batch_size, b->batch_size);
    assert_int_equal(a->num_threads, b->num_threads);
    assert_int_equal(a->prefetch_queue_depth, b->prefetch_queue_depth);
    assert_true(a->seed == b->seed);
    assert_int_equal(a->device_id, b->device_id);
    assert_int_equal(a->fuse_samples, b->fuse_samples);
    assert_int_equal(a->cpu_queue_depth, b->cpu_queue_depth);
    assert_int_equal(a->gpu_queue_depth, b->gpu_queue_depth);
    assert_int_equal(a->on_bad_sample, b->on_bad_sample);
    assert_int_equal(a->max_bad_samples, b->max_bad_samples);
}

static void expect_options_error(const char *json, sl_status code, const char *w1, const char *w2)
{
    sl_pipeline_options o, before;
    sl_pipeline_options_init(&o);
    before = o;
    assert_int_equal(sl_pipeline_options_from_json(json, &o), code);
    assert_options_equal(&o, &before); /* nothing changed */
    const char *msg = sl_last_error();
    if (!strstr(msg, w1) || (w2 && !strstr(msg, w2)))
        fail_msg("message \"%s\" lacks \"%s\" / \"%s\"", msg, w1, w2 ? w2 : "");
}

static void test_options_errors(void **state)
{
    (void)state;
    expect_options_error("{\"pipeline\": {\"batch_size\": 8, \"num_threads\": \"2\"}}", SL_EINVAL,
                         "\"num_threads\" must be an integer", "got a string");
    expect_options_error("{\"pipeline\": {\"batch_size\": 8.5}}", SL_EINVAL, "\"batch_size\"",
                         "integer");
    expect_options_error("{\"pipeline\": {\"batchsize\": 8}}", SL_EINVAL,
                         "unknown key \"batchsize\"", "\"batch_size\"");
    expect_options_error("{\"pipeline\": {\"batch_size\": 4294967296}}", SL_EINVAL,
                         "\"batch_size\" is out of range", NULL);
    expect_options_error("{\"pipeline\": [1]}", SL_EINVAL, "\"pipeline\" must be an object", NULL);
    expect_options_error("{\"pipeline\": {\"on_bad_sample\": \"drop\"}}", SL_EINVAL,
                         "\"on_bad_sample\" must be one of \"raise\", \"skip\", \"replace\"",
                         "got \"drop\"");
    expect_options_error("{\"pipeline\": {\"on_bad_sample\": 1}}", SL_EINVAL,
                         "\"on_bad_sample\" must be a string", "got an integer");
    expect_options_error("{\"pipeline\": {\n\"seed\": }}", SL_ECORRUPT, "line 2, column", NULL);
}

/* sl__spec_write: a whole spec that both readers take back. */
static void test_spec_write(void **state)
{
    (void)state;
    sl_graph *g = NULL, *g2 = NULL;
    sl_pipeline_options o, o2;
    char *text = NULL;
    assert_int_equal(sl_graph_from_json(demo, &g), SL_OK);
    sl_pipeline_options_init(&o);
    o.batch_size = 7;
    o.seed = -3;
    assert_int_equal(sl__spec_write(g, &o, &text), SL_OK);
    assert_non_null(strstr(text, "\"pipeline\": {\n    \"batch_size\": 7,"));
    sl_pipeline_options_init(&o2);
    o2.num_threads = 99;
    assert_int_equal(sl_pipeline_options_from_json(text, &o2), SL_OK);
    assert_options_equal(&o, &o2);
    assert_int_equal(sl_graph_from_json(text, &g2), SL_OK);
    assert_graphs_equal(g, g2);
    sl__free(text);
    /* options not at their defaults are written too, and read back */
    o.fuse_samples = 0;
    o.cpu_queue_depth = 3;
    o.gpu_queue_depth = 1;
    assert_int_equal(sl__spec_write(g, &o, &text), SL_OK);
    assert_non_null(strstr(text, "\"cpu_queue_depth\": 3,\n    \"gpu_queue_depth\": 1"));
    assert_null(strstr(text, "on_bad_sample")); /* "raise", the default: not written */
    sl_pipeline_options_init(&o2);
    assert_int_equal(sl_pipeline_options_from_json(text, &o2), SL_OK);
    assert_options_equal(&o, &o2);
    sl__free(text);
    /* the bad-sample policy by name, and its limit */
    for (int policy = SL_BAD_SAMPLE_SKIP; policy <= SL_BAD_SAMPLE_REPLACE; policy++) {
        o.on_bad_sample = policy;
        o.max_bad_samples = 5;
        assert_int_equal(sl__spec_write(g, &o, &text), SL_OK);
        assert_non_null(
            strstr(text, policy == SL_BAD_SAMPLE_SKIP
                             ? "\"on_bad_sample\": \"skip\",\n    \"max_bad_samples\": 5"
                             : "\"on_bad_sample\": \"replace\""));
        sl_pipeline_options_init(&o2);
        assert_int_equal(sl_pipeline_options_from_json(text, &o2), SL_OK);
        assert_options_equal(&o, &o2);
        sl__free(text);
    }
    sl_graph_destroy(g);
    sl_graph_destroy(g2);
}

/* ---- fault injection ---------------------------------------------------------------------- */

static void test_alloc_failures(void **state)
{
    (void)state;
    for (uint64_t k = 1;; k++) {
        sl_graph *g = NULL;
        char *text = NULL;
        sl__alloc_fail_after(k);
        sl_status st = sl_graph_from_json(demo, &g);
        if (st == SL_OK)
            st = sl_graph_to_json(g, &text);
        bool fired = sl__alloc_fail_fired();
        sl__alloc_fail_after(0);
        sl_graph_destroy(g);
        free(text);
        if (!fired) {
            assert_int_equal(st, SL_OK);
            break;
        }
        if (st != SL_ENOMEM)
            fail_msg("allocation %llu: expected SL_ENOMEM, got %s (%s)", (unsigned long long)k,
                     sl_status_name(st), sl_last_error());
        assert_true(k < 100000);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syntax_error_line_column),
        cmocka_unit_test(test_unknown_keys),
        cmocka_unit_test(test_missing_parts),
        cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_conflicts),
        cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_reads_graph),
        cmocka_unit_test(test_writes_fixed_layout),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_round_trip_values),
        cmocka_unit_test(test_device_as_given_round_trips),
        cmocka_unit_test(test_non_finite_rejected),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_options_errors),
        cmocka_unit_test(test_spec_write),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
