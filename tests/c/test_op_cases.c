/* tests/c/test_op_cases.c: runs every operator reference case under $SLUICE_TEST_CASES.
 *
 * Cases are written by tests/data/make_cases.py (one module per group in tests/data/cases/),
 * which computes the expected outputs with an independent reference (PIL, OpenCV, NumPy or
 * hand-computed values). Each case is a JSON file:
 *   {"op": ..., "args": {...}, "inputs": [[sample .npy, ...], ...], "layouts": [...],
 *    "arg_inputs": {"name": [sample .npy, ...]},
 *    "expect": [{"samples": [...], "max_abs": t, "mean_abs": m, "layout": "HWC"}, ...]
 *    or "expect_error": "text"}
 * The runner feeds the inputs through external_source nodes, runs the operator once (batch =
 * number of samples) and compares shapes, dtypes and values. One cmocka test per case file.
 *
 * Each case that expects outputs also runs inside a conditional ("<case> [if]"): every input
 * and argument input split by a predicate true for every sample, the operator once in the true
 * branch (all the samples) and once in the false branch (an empty batch, which every operator
 * must handle), the two merged. The merge must give the expected outputs: the empty branch ran
 * without failing and declared outputs of the same type. Random operators get the seed the
 * plain node has, and draw for each sample what it draws.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>

#include "core/core.h"
#include "npy.h"
#include "sluice/registry.h"
#include "testutil.h"

typedef struct case_ctx {
    char *path; /* the JSON file */
    char *dir;  /* its folder */
    json_t *j;
    sl_graph *g;
    sl_pipeline *p;
    int batch;
    bool cond; /* the run inside a conditional */
} case_ctx;

static char *join(const char *dir, const char *name)
{
    char *s = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(s, "%s/%s", dir, name);
    return s;
}

/* Loads the .npy samples listed in a JSON array. Returns the count (arrays malloc'ed). */
static int load_samples(const case_ctx *c, json_t *list, npy_array **out)
{
    int n = (int)json_array_size(list);
    *out = calloc((size_t)(n ? n : 1), sizeof(npy_array));
    for (int i = 0; i < n; i++) {
        char err[512], *path = join(c->dir, json_string_value(json_array_get(list, i)));
        if (npy_load(path, &(*out)[i], err, sizeof err) != 0)
            fail_msg("%s: %s", c->path, err);
        free(path);
    }
    return n;
}

static void free_samples(npy_array *a, int n)
{
    for (int i = 0; i < n; i++)
        npy_free(&a[i]);
    free(a);
}

/* Feeds the samples in `list` to external_source node `name`. */
static void feed(case_ctx *c, const char *name, json_t *list, const char *layout)
{
    npy_array *a;
    int n = load_samples(c, list, &a);
    int ndim = n ? a[0].ndim : 0;
    int64_t *shapes = calloc((size_t)(n * ndim + 1), sizeof(int64_t));
    const void **data = calloc((size_t)(n + 1), sizeof(void *));
    for (int i = 0; i < n; i++) {
        if (a[i].ndim != ndim || a[i].dtype != a[0].dtype)
            fail_msg("%s: samples of %s differ in ndim or dtype", c->path, name);
        memcpy(shapes + (size_t)i * ndim, a[i].shape, sizeof(int64_t) * (size_t)ndim);
        data[i] = a[i].data;
    }
    sl_feed f = {.num_samples = n,
                 .ndim = ndim,
                 .dtype = n ? a[0].dtype : SL_DTYPE_UINT8,
                 .layout = layout,
                 .shapes = shapes,
                 .data = data};
    if (sl_pipeline_feed_input(c->p, name, &f) != SL_OK)
        fail_msg("%s: feed %s: %s", c->path, name, sl_pipeline_error(c->p));
    free(shapes);
    free(data);
    free_samples(a, n);
}

static const char *layout_of(const case_ctx *c, int k)
{
    json_t *l = json_array_get(json_object_get(c->j, "layouts"), (size_t)k);
    return l ? json_string_value(l) : "";
}

/* Adds operator node `node` with the case's constant arguments. */
static void add_op(case_ctx *c, const char *node)
{
    json_t *v;
    const char *key;
    assert_int_equal(sl_graph_add(c->g, json_string_value(json_object_get(c->j, "op")), node, NULL),
                     SL_OK);
    json_object_foreach(json_object_get(c->j, "args"), key, v)
    {
        char *text = json_dumps(v, JSON_ENCODE_ANY);
        if (sl_graph_arg_json(c->g, node, key, text) != SL_OK)
            fail_msg("%s: argument %s: %s", c->path, key, sl_last_error());
        free(text);
    }
}

/* The conditional form: sources split by "pred" (true for every sample), the operator as
 * "op_t" on the true branch and "op_f" on the (empty) false one, outputs merged. */
static void make_cond_graph(case_ctx *c)
{
    json_t *inputs = json_object_get(c->j, "inputs"), *v;
    const char *key;
    char name[160], src[96];
    const sl_op_def *def = sl_registry_find(json_string_value(json_object_get(c->j, "op")));
    assert_non_null(def);
    add_op(c, "op_t");
    add_op(c, "op_f");
    assert_int_equal(sl_graph_add(c->g, "external_source", "pred", NULL), SL_OK);
    assert_int_equal(sl_graph_add(c->g, "_conditional.split", "sp", NULL), SL_OK);
    assert_int_equal(sl_graph_input(c->g, "sp", "pred"), SL_OK);
    assert_int_equal(sl_graph_arg_input(c->g, "sp", "predicate", "pred"), SL_OK);
    bool any = false;
    for (size_t k = 0; k < json_array_size(inputs); k++) {
        snprintf(name, sizeof name, "in%zu", k);
        assert_int_equal(sl_graph_add(c->g, "external_source", name, NULL), SL_OK);
        assert_int_equal(sl_graph_arg_str(c->g, name, "layout", layout_of(c, (int)k)), SL_OK);
        snprintf(src, sizeof src, "s_in%zu", k);
        assert_int_equal(sl_graph_add(c->g, "_conditional.split", src, NULL), SL_OK);
        assert_int_equal(sl_graph_input(c->g, src, name), SL_OK);
        assert_int_equal(sl_graph_arg_input(c->g, src, "predicate", "pred"), SL_OK);
        snprintf(name, sizeof name, "%s:0", src);
        assert_int_equal(sl_graph_input(c->g, "op_t", name), SL_OK);
        snprintf(name, sizeof name, "%s:1", src);
        assert_int_equal(sl_graph_input(c->g, "op_f", name), SL_OK);
        any = true;
    }
    json_object_foreach(json_object_get(c->j, "arg_inputs"), key, v)
    {
        snprintf(name, sizeof name, "arg_%s", key);
        assert_int_equal(sl_graph_add(c->g, "external_source", name, NULL), SL_OK);
        snprintf(src, sizeof src, "s_arg_%s", key);
        assert_int_equal(sl_graph_add(c->g, "_conditional.split", src, NULL), SL_OK);
        assert_int_equal(sl_graph_input(c->g, src, name), SL_OK);
        assert_int_equal(sl_graph_arg_input(c->g, src, "predicate", "pred"), SL_OK);
        snprintf(name, sizeof name, "%s:0", src);
        assert_int_equal(sl_graph_arg_input(c->g, "op_t", key, name), SL_OK);
        snprintf(name, sizeof name, "%s:1", src);
        assert_int_equal(sl_graph_arg_input(c->g, "op_f", key, name), SL_OK);
        any = true;
    }
    if (!any) { /* no inputs: tied to the branches */
        assert_int_equal(sl_graph_batch_like(c->g, "op_t", "sp:0"), SL_OK);
        assert_int_equal(sl_graph_batch_like(c->g, "op_f", "sp:1"), SL_OK);
    }
    json_t *args = json_object_get(c->j, "args");
    if ((def->flags & SL_OP_RANDOM) && !json_object_get(args, "seed")) {
        /* the seed the plain node "op" derives from the pipeline seed (42) and its name */
        int64_t seed = (int64_t)sl__mix64(sl__mix64(42) ^ sl__hash_str("op"));
        assert_int_equal(sl_graph_arg_int(c->g, "op_t", "seed", seed), SL_OK);
        assert_int_equal(sl_graph_arg_int(c->g, "op_f", "seed", seed), SL_OK);
    }
    size_t nout = json_array_size(json_object_get(c->j, "expect"));
    for (size_t o = 0; o < nout; o++) {
        snprintf(name, sizeof name, "m%zu", o);
        assert_int_equal(sl_graph_add(c->g, "_conditional.merge", name, NULL), SL_OK);
        snprintf(src, sizeof src, "op_t:%zu", o);
        assert_int_equal(sl_graph_input(c->g, name, src), SL_OK);
        snprintf(src, sizeof src, "op_f:%zu", o);
        assert_int_equal(sl_graph_input(c->g, name, src), SL_OK);
        assert_int_equal(sl_graph_arg_input(c->g, name, "predicate", "pred"), SL_OK);
        assert_int_equal(sl_graph_output(c->g, name), SL_OK);
    }
}

/* Adds the external sources, the operator and the outputs. */
static void make_graph(case_ctx *c)
{
    json_t *inputs = json_object_get(c->j, "inputs"), *v;
    const char *key;
    char name[64];
    assert_int_equal(sl_graph_create(&c->g), SL_OK);
    if (c->cond) {
        make_cond_graph(c);
        return;
    }
    add_op(c, "op");
    for (size_t k = 0; k < json_array_size(inputs); k++) {
        snprintf(name, sizeof name, "in%zu", k);
        assert_int_equal(sl_graph_add(c->g, "external_source", name, NULL), SL_OK);
        assert_int_equal(sl_graph_arg_str(c->g, name, "layout", layout_of(c, (int)k)), SL_OK);
        assert_int_equal(sl_graph_input(c->g, "op", name), SL_OK);
    }
    json_object_foreach(json_object_get(c->j, "arg_inputs"), key, v)
    {
        snprintf(name, sizeof name, "arg_%s", key);
        assert_int_equal(sl_graph_add(c->g, "external_source", name, NULL), SL_OK);
        assert_int_equal(sl_graph_arg_input(c->g, "op", key, name), SL_OK);
    }
    size_t nout = json_array_size(json_object_get(c->j, "expect"));
    for (size_t o = 0; o < (nout ? nout : 1); o++) {
        snprintf(name, sizeof name, "op:%zu", o);
        assert_int_equal(sl_graph_output(c->g, name), SL_OK);
    }
}

static int batch_size(const case_ctx *c)
{
    json_t *inputs = json_object_get(c->j, "inputs"), *v;
    const char *key;
    if (json_array_size(inputs) > 0)
        return (int)json_array_size(json_array_get(inputs, 0));
    json_object_foreach(json_object_get(c->j, "arg_inputs"), key, v) return (int)json_array_size(v);
    json_t *b = json_object_get(c->j, "batch");
    return b ? (int)json_integer_value(b) : 1;
}

/* True when an error was expected and this one matches (the case then passes). */
static bool expected_error(const case_ctx *c, sl_status st, const char *msg)
{
    const char *want = json_string_value(json_object_get(c->j, "expect_error"));
    if (st == SL_OK)
        return false;
    if (!want)
        fail_msg("%s: unexpected failure: %s", c->path, msg);
    if (!strstr(msg, want))
        fail_msg("%s: expected an error containing \"%s\", got: %s", c->path, want, msg);
    return true;
}

static void compare_sample(const case_ctx *c, int o, int i, const sl_batch *b, const npy_array *e,
                           json_t *spec)
{
    if (sl_batch_dtype(b) != e->dtype)
        fail_msg("%s: output %d: dtype %s, expected %s", c->path, o,
                 sl_dtype_name(sl_batch_dtype(b)), sl_dtype_name(e->dtype));
    const int64_t *shape = sl_batch_shape(b, i);
    bool same = sl_batch_ndim(b) == e->ndim;
    for (int d = 0; same && d < e->ndim; d++)
        same = shape[d] == e->shape[d];
    if (!same) {
        char got[128] = "", want[128] = "";
        for (int d = 0; d < sl_batch_ndim(b); d++)
            snprintf(got + strlen(got), sizeof got - strlen(got), " %lld", (long long)shape[d]);
        for (int d = 0; d < e->ndim; d++)
            snprintf(want + strlen(want), sizeof want - strlen(want), " %lld",
                     (long long)e->shape[d]);
        fail_msg("%s: output %d sample %d: shape (%s ) expected (%s )", c->path, o, i, got, want);
    }
    double tol = json_number_value(json_object_get(spec, "max_abs"));
    json_t *mean_tol = json_object_get(spec, "mean_abs");
    double worst = 0, sum = 0;
    int64_t worst_k = 0;
    for (int64_t k = 0; k < e->numel; k++) {
        double a = npy_get(e->dtype, sl_batch_sample_data(b, i), k);
        double x = npy_get(e->dtype, e->data, k);
        double d = (a == x || (isnan(a) && isnan(x))) ? 0 : fabs(a - x); /* inf == inf */
        if (isnan(d) || d > worst)
            worst = isnan(d) ? INFINITY : d, worst_k = k;
        sum += d;
    }
    if (worst > tol)
        fail_msg("%s: output %d sample %d: max |diff| %g > %g at element %lld", c->path, o, i,
                 worst, tol, (long long)worst_k);
    if (mean_tol && e->numel && sum / (double)e->numel > json_number_value(mean_tol))
        fail_msg("%s: output %d sample %d: mean |diff| %g > %g", c->path, o, i,
                 sum / (double)e->numel, json_number_value(mean_tol));
}

static void compare(case_ctx *c)
{
    json_t *expect = json_object_get(c->j, "expect");
    for (size_t o = 0; o < json_array_size(expect); o++) {
        json_t *spec = json_array_get(expect, o);
        const sl_batch *b = sl_pipeline_output(c->p, (int)o);
        const char *layout = json_string_value(json_object_get(spec, "layout"));
        if (layout && strcmp(layout, sl_batch_layout(b)) != 0)
            fail_msg("%s: output %zu: layout \"%s\", expected \"%s\"", c->path, o,
                     sl_batch_layout(b), layout);
        npy_array *e;
        int n = load_samples(c, json_object_get(spec, "samples"), &e);
        assert_int_equal(sl_batch_size(b), n);
        for (int i = 0; i < n; i++)
            compare_sample(c, (int)o, i, b, &e[i], spec);
        free_samples(e, n);
    }
}

static void run_case(void **state)
{
    case_ctx *c = *state;
    json_error_t je;
    c->j = json_load_file(c->path, 0, &je);
    if (!c->j)
        fail_msg("%s: %s", c->path, je.text);
    make_graph(c);
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = c->batch = batch_size(c);
    o.num_threads = 2;
    o.prefetch_queue_depth = 1;
    o.seed = 42;
    assert_int_equal(sl_pipeline_create(c->g, &o, &c->p), SL_OK);
    sl_status st = sl_pipeline_build(c->p);
    if (expected_error(c, st, sl_pipeline_error(c->p)))
        return;
    json_t *inputs = json_object_get(c->j, "inputs"), *v;
    const char *key;
    char name[64];
    for (size_t k = 0; k < json_array_size(inputs); k++) {
        snprintf(name, sizeof name, "in%zu", k);
        feed(c, name, json_array_get(inputs, k), layout_of(c, (int)k));
    }
    json_object_foreach(json_object_get(c->j, "arg_inputs"), key, v)
    {
        snprintf(name, sizeof name, "arg_%s", key);
        feed(c, name, v, "");
    }
    if (c->cond) { /* every sample in the true branch */
        int n = c->batch;
        uint8_t *t = malloc((size_t)n);
        int64_t *shapes = calloc((size_t)n, sizeof(int64_t));
        const void **data = calloc((size_t)n, sizeof(void *));
        for (int i = 0; i < n; i++) {
            t[i] = 1;
            data[i] = &t[i];
        }
        sl_feed f = {
            .num_samples = n, .ndim = 0, .dtype = SL_DTYPE_BOOL, .shapes = shapes, .data = data};
        sl_status fs = sl_pipeline_feed_input(c->p, "pred", &f);
        free(t);
        free(shapes);
        free(data);
        if (fs != SL_OK)
            fail_msg("%s: feed pred: %s", c->path, sl_pipeline_error(c->p));
    }
    st = sl_pipeline_run(c->p);
    if (expected_error(c, st, sl_pipeline_error(c->p)))
        return;
    if (json_object_get(c->j, "expect_error"))
        fail_msg("%s: expected an error containing \"%s\", but the run succeeded", c->path,
                 json_string_value(json_object_get(c->j, "expect_error")));
    compare(c);
}

static int teardown(void **state)
{
    case_ctx *c = *state;
    sl_pipeline_destroy(c->p);
    sl_graph_destroy(c->g);
    json_decref(c->j);
    c->p = NULL;
    c->g = NULL;
    c->j = NULL;
    return 0;
}

/* Whether the case runs inside a conditional too: it expects outputs, and its operator is no
 * source (which makes its own batch) or application callback (which a case cannot hold). */
static bool conditional_applies(const char *path)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j)
        return false; /* the plain run reports it */
    const sl_op_def *def = sl_registry_find(json_string_value(json_object_get(j, "op")));
    bool ok = def && !(def->flags & (SL_OP_SOURCE | SL_OP_CALLBACK)) &&
              !json_object_get(j, "expect_error") &&
              json_array_size(json_object_get(j, "expect")) > 0;
    json_decref(j);
    return ok;
}

/* Collects every cases/<group>/<case>.json as a cmocka test named "<group>/<case>" (and
 * "<group>/<case> [if]", run inside a conditional). */
static int collect(const char *root, struct CMUnitTest **tests)
{
    char **groups;
    int ng = tu_list(root, NULL, &groups), n = 0;
    *tests = NULL;
    for (int g = 0; g < ng; g++) {
        char *dir = join(root, groups[g]), **files;
        int nf = tu_list(dir, ".json", &files);
        *tests = realloc(*tests, sizeof(struct CMUnitTest) * (size_t)(n + 2 * nf + 1));
        for (int f = 0; f < nf; f++) {
            for (int cond = 0; cond < 2; cond++) {
                case_ctx *c = calloc(1, sizeof(*c));
                c->dir = strdup(dir);
                c->path = join(dir, files[f]);
                c->cond = cond;
                if (cond && !conditional_applies(c->path)) {
                    free(c->dir);
                    free(c->path);
                    free(c);
                    continue;
                }
                char *name = join(groups[g], files[f]);
                if (cond) {
                    name = realloc(name, strlen(name) + 6);
                    strcat(name, " [if]");
                }
                (*tests)[n++] = (struct CMUnitTest){.name = name,
                                                    .test_func = run_case,
                                                    .teardown_func = teardown,
                                                    .initial_state = c};
            }
        }
        tu_free_list(files, nf);
        free(dir);
    }
    tu_free_list(groups, ng);
    return n;
}

int main(void)
{
    char *root = strdup(tu_env_dir("SLUICE_TEST_CASES"));
    struct CMUnitTest *tests;
    int n = collect(root, &tests);
    if (n == 0) {
        fprintf(stderr, "no operator cases under %s: tests/data/make_cases.py did not run\n", root);
        return 1;
    }
    int failed = _cmocka_run_group_tests("op_cases", tests, (size_t)n, NULL, NULL);
    for (int i = 0; i < n; i++) {
        case_ctx *c = (case_ctx *)tests[i].initial_state;
        free(c->dir);
        free(c->path);
        free(c);
        free((char *)tests[i].name);
    }
    free(tests);
    free(root);
    return failed;
}
