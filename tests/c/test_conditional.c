/* tests/c/test_conditional.c: conditional execution (split / merge, issue 17) through the C API.
 *
 * Every pipeline here is checked against a model that processes one sample at a time: for
 * sample i with predicates p_i (and q_i for a nested conditional), the value each branch would
 * compute for it alone. Random operators inside branches must draw what the same node (same
 * seed) draws unconditionally for the same sample of the whole batch, so their reference is an
 * unconditional pipeline. Covered: random predicates, every sample in one branch (the other
 * branch empty), nested conditionals, argument inputs split with their samples, a node without
 * inputs tied to a branch (batch_like), 1 vs 4 threads and depth 1 vs 3, sample identity (the
 * source files) through split and merge, errors naming the branch and the sample's index in the
 * whole batch, build errors, pruning of unused branches, no allocation in steady state, and the
 * JSON spec round trip. GPU split/merge: test_cuda_cond.c. DOT clusters: test_dot.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "core/core.h"
#include "exec/exec.h"
#include "testutil.h"

#define B 8     /* batch size */
#define ITERS 8 /* iterations per run */

static sl_graph *new_graph(void)
{
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    return g;
}

static void add(sl_graph *g, const char *op, const char *name)
{
    if (sl_graph_add(g, op, name, NULL) != SL_OK)
        fail_msg("add %s: %s", name, sl_last_error());
}

static void in(sl_graph *g, const char *node, const char *src)
{
    assert_int_equal(sl_graph_input(g, node, src), SL_OK);
}

static void arg_in(sl_graph *g, const char *node, const char *arg, const char *src)
{
    assert_int_equal(sl_graph_arg_input(g, node, arg, src), SL_OK);
}

/* node = _conditional.split(input) on predicate pred */
static void split(sl_graph *g, const char *node, const char *input, const char *pred)
{
    add(g, "_conditional.split", node);
    in(g, node, input);
    arg_in(g, node, "predicate", pred);
}

static void merge(sl_graph *g, const char *node, const char *t, const char *f, const char *pred)
{
    add(g, "_conditional.merge", node);
    in(g, node, t);
    in(g, node, f);
    arg_in(g, node, "predicate", pred);
}

/* node = input <op> scalar (arithmetic) */
static void arith(sl_graph *g, const char *node, const char *input, const char *op, double s)
{
    add(g, "arithmetic", node);
    in(g, node, input);
    assert_int_equal(sl_graph_arg_str(g, node, "op", op), SL_OK);
    assert_int_equal(sl_graph_arg_float(g, node, "scalar", s), SL_OK);
}

static sl_pipeline *build(const sl_graph *g, int batch, int threads, int depth)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = batch;
    o.num_threads = threads;
    o.prefetch_queue_depth = depth;
    o.seed = 77;
    sl_pipeline *p = NULL;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    if (sl_pipeline_build(p) != SL_OK)
        fail_msg("build: %s", sl_pipeline_error(p));
    return p;
}

/* ---- the data of iteration k -------------------------------------------------------------- */

/* x: sample i has shape [1 + (i + k) % 3], element e = 100 k + 10 i + e (exact in float). */
static int x_len(int k, int i)
{
    return 1 + (i + k) % 3;
}

static float x_val(int k, int i, int e)
{
    return (float)(100 * k + 10 * i + e);
}

/* The predicate patterns: random, all true, all false, random, ... */
static bool pred_c(int k, int i)
{
    if (k % 4 == 1)
        return true;
    if (k % 4 == 2)
        return false;
    return ((uint32_t)(k * 2654435761u + (uint32_t)i * 40503u) >> 7) & 1;
}

static bool pred_d(int k, int i)
{
    return ((uint32_t)(k * 97u + (uint32_t)i * 2246822519u) >> 9) & 1;
}

static void feed(sl_pipeline *p, const char *name, sl_dtype dt, int ndim, const int64_t *shapes,
                 const void *const *data)
{
    sl_feed f = {.num_samples = B, .ndim = ndim, .dtype = dt, .shapes = shapes, .data = data};
    if (sl_pipeline_feed_input(p, name, &f) != SL_OK)
        fail_msg("feed %s: %s", name, sl_pipeline_error(p));
}

/* Feeds iteration k: "x", "c" (bool, 0-d), "d" (int32 [1]) and "r" (float [2]: [i, i + 0.5]),
 * each only where the graph has it. */
static void feed_iteration(sl_pipeline *p, int k, bool with_d, bool with_r)
{
    float xs[B][3], rs[B][2];
    uint8_t cs[B];
    int32_t ds[B];
    int64_t xshape[B], one[B], two[B];
    const void *xp[B], *cp[B], *dp[B], *rp[B];
    for (int i = 0; i < B; i++) {
        xshape[i] = x_len(k, i);
        for (int e = 0; e < x_len(k, i); e++)
            xs[i][e] = x_val(k, i, e);
        cs[i] = pred_c(k, i);
        ds[i] = pred_d(k, i) ? 5 : 0; /* any nonzero integer is true */
        rs[i][0] = (float)i;
        rs[i][1] = (float)i + 0.5f;
        one[i] = 1;
        two[i] = 2;
        xp[i] = xs[i];
        cp[i] = &cs[i];
        dp[i] = &ds[i];
        rp[i] = rs[i];
    }
    feed(p, "x", SL_DTYPE_FLOAT32, 1, xshape, xp);
    feed(p, "c", SL_DTYPE_BOOL, 0, one, cp);
    if (with_d)
        feed(p, "d", SL_DTYPE_INT32, 1, one, dp);
    if (with_r)
        feed(p, "r", SL_DTYPE_FLOAT32, 1, two, rp);
}

/* ---- the pipelines ------------------------------------------------------------------------- */

/* if c:  y = x * 2; u = uniform(range=r) (seed 7);  if d: z = y * 3 else z = y
 * else:  y = x + 1; u = uniform([-1, 0]) (seed 9, no inputs: batch_like);    z = y
 * outputs y, u, z. */
static sl_graph *cond_graph(void)
{
    sl_graph *g = new_graph();
    add(g, "external_source", "x");
    add(g, "external_source", "c");
    add(g, "external_source", "d");
    add(g, "external_source", "r");
    split(g, "sx", "x", "c");
    split(g, "sr", "r", "c");
    split(g, "sd", "d", "c");
    arith(g, "t1", "sx:0", "mul", 2);
    add(g, "random.uniform", "ut");
    arg_in(g, "ut", "range", "sr:0");
    assert_int_equal(sl_graph_arg_int(g, "ut", "seed", 7), SL_OK);
    arith(g, "f1", "sx:1", "add", 1);
    add(g, "random.uniform", "uf");
    double range[2] = {-1, 0};
    assert_int_equal(sl_graph_arg_floats(g, "uf", "range", range, 2), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "uf", "seed", 9), SL_OK);
    assert_int_equal(sl_graph_batch_like(g, "uf", "sx:1"), SL_OK);
    merge(g, "y", "t1", "f1", "c");
    merge(g, "u", "ut", "uf", "c");
    /* nested, inside the true branch: its predicate split first */
    split(g, "st", "t1", "sd:0");
    arith(g, "t3", "st:0", "mul", 3);
    merge(g, "nt", "t3", "st:1", "sd:0");
    merge(g, "z", "nt", "f1", "c");
    sl_graph_output(g, "y");
    sl_graph_output(g, "u");
    sl_graph_output(g, "z");
    return g;
}

/* The random nodes unconditionally: ut (range r, seed 7) and uf ([-1, 0], seed 9). */
static sl_graph *random_reference_graph(void)
{
    sl_graph *g = new_graph();
    add(g, "external_source", "x");
    add(g, "external_source", "c");
    add(g, "external_source", "r");
    add(g, "random.uniform", "ut");
    arg_in(g, "ut", "range", "r");
    assert_int_equal(sl_graph_arg_int(g, "ut", "seed", 7), SL_OK);
    add(g, "random.uniform", "uf");
    double range[2] = {-1, 0};
    assert_int_equal(sl_graph_arg_floats(g, "uf", "range", range, 2), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "uf", "seed", 9), SL_OK);
    add(g, "copy", "keep_x"); /* x and c must be read: copy them out */
    in(g, "keep_x", "x");
    add(g, "copy", "keep_c");
    in(g, "keep_c", "c");
    sl_graph_output(g, "ut");
    sl_graph_output(g, "uf");
    sl_graph_output(g, "keep_x");
    sl_graph_output(g, "keep_c");
    return g;
}

/* Checks one iteration's y, u, z against the per-sample model (ref: the unconditional ut, uf). */
static void check_model(int k, const sl_batch *y, const sl_batch *u, const sl_batch *z,
                        const sl_batch *ut, const sl_batch *uf)
{
    assert_int_equal(sl_batch_size(y), B);
    assert_int_equal(sl_batch_size(u), B);
    assert_int_equal(sl_batch_size(z), B);
    assert_int_equal(sl_batch_dtype(y), SL_DTYPE_FLOAT32);
    for (int i = 0; i < B; i++) {
        bool p = pred_c(k, i), q = pred_d(k, i);
        assert_int_equal(sl_batch_shape(y, i)[0], x_len(k, i));
        assert_int_equal(sl_batch_shape(z, i)[0], x_len(k, i));
        const float *yv = sl_batch_sample_data(y, i), *zv = sl_batch_sample_data(z, i);
        for (int e = 0; e < x_len(k, i); e++) {
            float x = x_val(k, i, e);
            float want_y = p ? 2 * x : x + 1;
            float want_z = p ? (q ? 6 * x : 2 * x) : x + 1;
            if (yv[e] != want_y || zv[e] != want_z)
                fail_msg("iteration %d sample %d element %d: y %g z %g, want %g %g (p %d q %d)", k,
                         i, e, yv[e], zv[e], want_y, want_z, p, q);
        }
        float want_u = *(const float *)sl_batch_sample_data(p ? ut : uf, i);
        float got_u = *(const float *)sl_batch_sample_data(u, i);
        if (got_u != want_u)
            fail_msg("iteration %d sample %d: u %g, want %g (drawn unconditionally)", k, i, got_u,
                     want_u);
        if (p)
            assert_true(got_u >= (float)i && got_u < (float)i + 0.5f);
        else
            assert_true(got_u >= -1 && got_u < 0);
    }
}

/* Random predicates, all-true and all-false iterations, nesting, argument inputs, batch_like:
 * 1 thread depth 1 and 4 threads depth 3 give the model's values. */
static void test_model(void **state)
{
    (void)state;
    sl_graph *rg = random_reference_graph();
    sl_pipeline *rp = build(rg, B, 1, 1);
    sl_batch *ref[ITERS][2];
    for (int k = 0; k < ITERS; k++) {
        feed_iteration(rp, k, false, true);
        assert_int_equal(sl_pipeline_run(rp), SL_OK);
        for (int o = 0; o < 2; o++) { /* keep copies: the pipeline reuses its batches */
            const sl_batch *b = sl_pipeline_output(rp, o);
            sl_batch *c = calloc(1, sizeof(sl_batch));
            sl__batch_init(c);
            assert_int_equal(sl__batch_mirror(c, b), SL_OK);
            memcpy(c->data, b->data, sl_batch_nbytes(b));
            ref[k][o] = c;
        }
    }
    int configs[2][2] = {{1, 1}, {4, 3}};
    for (int cfg = 0; cfg < 2; cfg++) {
        sl_graph *g = cond_graph();
        sl_pipeline *p = build(g, B, configs[cfg][0], configs[cfg][1]);
        for (int k = 0; k < ITERS; k++)
            feed_iteration(p, k, true, true);
        for (int k = 0; k < ITERS; k++) {
            assert_int_equal(sl_pipeline_run(p), SL_OK);
            check_model(k, sl_pipeline_output(p, 0), sl_pipeline_output(p, 1),
                        sl_pipeline_output(p, 2), ref[k][0], ref[k][1]);
        }
        sl_pipeline_destroy(p);
        sl_graph_destroy(g);
    }
    for (int k = 0; k < ITERS; k++)
        for (int o = 0; o < 2; o++) {
            sl__batch_fini(ref[k][o]);
            free(ref[k][o]);
        }
    sl_pipeline_destroy(rp);
    sl_graph_destroy(rg);
}

/* The whole conditional's batch sizes and identities, white-box: the scopes record which
 * samples of the whole batch each branch holds. */
static void test_scopes(void **state)
{
    (void)state;
    sl_graph *g = cond_graph();
    sl_pipeline *p = build(g, B, 2, 1);
    const sl__plan *plan = p->plan;
    assert_int_equal(plan->nscopes, 5); /* whole, c true, c false, d true, d false (in c) */
    int sx = -1, sd = -1, st = -1, sr = -1, uf = -1;
    for (int j = 0; j < plan->n; j++) {
        const char *n = plan->nodes[j].name;
        sx = !strcmp(n, "sx") ? j : sx;
        sr = !strcmp(n, "sr") ? j : sr;
        sd = !strcmp(n, "sd") ? j : sd;
        st = !strcmp(n, "st") ? j : st;
        uf = !strcmp(n, "uf") ? j : uf;
    }
    /* one scope per (parent, predicate, branch): the splits on c share theirs */
    assert_int_equal(plan->nodes[sx].branch[0], plan->nodes[sr].branch[0]);
    assert_int_equal(plan->nodes[sx].branch[1], plan->nodes[sd].branch[1]);
    assert_int_equal(plan->nodes[uf].scope, plan->nodes[sx].branch[1]);
    assert_int_equal(plan->scopes[plan->nodes[st].branch[0]].parent, plan->nodes[sx].branch[0]);
    assert_int_equal(plan->scopes[plan->nodes[st].branch[0]].depth, 2);
    feed_iteration(p, 0, true, true);
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    const sl__slot *slot = &p->slots[0];
    int t = plan->nodes[sx].branch[0], f = plan->nodes[sx].branch[1];
    int tt = plan->nodes[st].branch[0];
    int nt = 0, nf = 0, ntt = 0;
    for (int i = 0; i < B; i++) {
        if (pred_c(0, i)) {
            assert_int_equal(sl__slot_scope_idx(slot, t)[nt++], i);
            if (pred_d(0, i))
                assert_int_equal(sl__slot_scope_idx(slot, tt)[ntt++], i);
        } else {
            assert_int_equal(sl__slot_scope_idx(slot, f)[nf++], i);
        }
    }
    assert_int_equal(slot->scope_n[t], nt);
    assert_int_equal(slot->scope_n[f], nf);
    assert_int_equal(slot->scope_n[tt], ntt);
    assert_true(nt > 0 && nf > 0);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* ---- identity, errors ------------------------------------------------------------------------ */

/* Files of the tree through split and merge keep their source names; the predicate comes from
 * the labels (label 0: true). */
static void test_sources(void **state)
{
    (void)state;
    const char *root = tu_env_dir("SLUICE_TEST_TREE");
    sl_graph *g = new_graph();
    add(g, "readers.file", "reader");
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", root), SL_OK);
    add(g, "arithmetic", "is0");
    in(g, "is0", "reader:1");
    assert_int_equal(sl_graph_arg_str(g, "is0", "op", "eq"), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "is0", "scalar_int", 0), SL_OK);
    split(g, "s", "reader:0", "is0");
    add(g, "copy", "ct");
    in(g, "ct", "s:0");
    merge(g, "m", "ct", "s:1", "is0");
    sl_graph_output(g, "m");
    sl_graph_output(g, "reader:0");
    sl_graph_output(g, "reader:1");
    sl_pipeline *p = build(g, 6, 2, 2);
    int seen_true = 0, seen_false = 0;
    for (int k = 0; k < 6; k++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        const sl_batch *m = sl_pipeline_output(p, 0), *r = sl_pipeline_output(p, 1),
                       *l = sl_pipeline_output(p, 2);
        assert_int_equal(sl_batch_size(m), 6);
        for (int i = 0; i < 6; i++) {
            assert_non_null(sl_batch_source(r, i));
            assert_string_equal(sl_batch_source(m, i), sl_batch_source(r, i));
            assert_int_equal(sl_batch_shape(m, i)[0], sl_batch_shape(r, i)[0]);
            assert_memory_equal(sl_batch_sample_data(m, i), sl_batch_sample_data(r, i),
                                (size_t)sl_batch_shape(r, i)[0]);
            bool is0 = *(const int32_t *)sl_batch_sample_data(l, i) == 0;
            seen_true += is0;
            seen_false += !is0;
        }
    }
    assert_true(seen_true > 0 && seen_false > 0);
    /* a predicate that is no scalar (the label twice: 2 elements) fails naming the file */
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    char first[4096];
    snprintf(first, sizeof first, "%s", sl_batch_source(sl_pipeline_output(p, 1), 0));
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);

    g = new_graph();
    add(g, "readers.file", "reader");
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", root), SL_OK);
    add(g, "cat", "bad");
    in(g, "bad", "reader:1");
    in(g, "bad", "reader:1");
    split(g, "s", "reader:0", "bad");
    merge(g, "m", "s:0", "s:1", "bad");
    sl_graph_output(g, "m");
    p = build(g, 6, 2, 1);
    for (int k = 0; k < 6; k++) /* iteration 6 starts where the loop above left off */
        assert_int_equal(sl_pipeline_run(p), SL_EINVAL);
    assert_int_equal(sl_pipeline_run(p), SL_EINVAL);
    sl_error_detail d;
    sl_pipeline_error_detail(p, &d);
    assert_int_equal(d.sample, 0);
    assert_string_equal(d.node, "s");
    assert_non_null(d.source);
    assert_string_equal(d.source, first);
    assert_non_null(strstr(sl_pipeline_error(p), "Got a 1-d input"));
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* Feeds n int32 [1] samples. */
static void feed_i32(sl_pipeline *p, const char *name, const int32_t *v, int n)
{
    int64_t shapes[B];
    const void *data[B];
    for (int i = 0; i < n; i++) {
        shapes[i] = 1;
        data[i] = &v[i];
    }
    sl_feed f = {
        .num_samples = n, .ndim = 1, .dtype = SL_DTYPE_INT32, .shapes = shapes, .data = data};
    assert_int_equal(sl_pipeline_feed_input(p, name, &f), SL_OK);
}

/* An error inside a branch names the node, the branch and the sample's index in the whole
 * batch; it belongs to its iteration, and the next one runs. */
static void test_branch_error(void **state)
{
    (void)state;
    sl_graph *g = new_graph();
    add(g, "external_source", "a");
    add(g, "external_source", "den");
    add(g, "external_source", "c");
    split(g, "sa", "a", "c");
    split(g, "sden", "den", "c");
    add(g, "arithmetic", "q");
    in(g, "q", "sa:1");
    in(g, "q", "sden:1");
    assert_int_equal(sl_graph_arg_str(g, "q", "op", "div"), SL_OK);
    merge(g, "m", "sa:0", "q", "c");
    sl_graph_output(g, "m");
    sl_pipeline *p = build(g, B, 2, 2);
    int32_t a[B] = {10, 20, 30, 40, 50, 60, 70, 80};
    int32_t den1[B] = {0, 2, 0, 2, 2, 0, 2, 2}; /* zero at 0, 2 (true: not divided) and 5 */
    int32_t den2[B] = {1, 2, 3, 4, 5, 6, 7, 8};
    int32_t c[B] = {1, 0, 1, 0, 0, 0, 0, 0};
    feed_i32(p, "a", a, B);
    feed_i32(p, "den", den1, B);
    feed_i32(p, "c", c, B);
    feed_i32(p, "a", a, B);
    feed_i32(p, "den", den2, B);
    feed_i32(p, "c", c, B);
    assert_int_equal(sl_pipeline_run(p), SL_EINVAL);
    const char *msg = sl_pipeline_error(p);
    sl_error_detail d;
    sl_pipeline_error_detail(p, &d);
    assert_int_equal(d.sample, 5); /* the false branch's sample 3 */
    assert_int_equal(d.iteration, 0);
    assert_non_null(strstr(msg, "node \"q\""));
    assert_non_null(strstr(msg, "false branch of the conditional on \"c\""));
    assert_non_null(strstr(msg, "sample 5"));
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    const sl_batch *m = sl_pipeline_output(p, 0);
    for (int i = 0; i < B; i++)
        assert_int_equal(*(const int32_t *)sl_batch_sample_data(m, i),
                         c[i] ? a[i] : a[i] / den2[i]);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* Builds g and expects the build to fail with a message holding `want`. */
static void expect_build_error(sl_graph *g, const char *want)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = B;
    o.num_threads = 1;
    sl_pipeline *p = NULL;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    assert_int_not_equal(sl_pipeline_build(p), SL_OK);
    if (!strstr(sl_pipeline_error(p), want))
        fail_msg("expected \"%s\" in: %s", want, sl_pipeline_error(p));
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

static sl_graph *xc_graph(void)
{
    sl_graph *g = new_graph();
    add(g, "external_source", "x");
    add(g, "external_source", "c");
    split(g, "sx", "x", "c");
    return g;
}

static void test_build_errors(void **state)
{
    (void)state;
    sl_graph *g = xc_graph(); /* a node reading a branch and the whole batch */
    add(g, "arithmetic", "bad");
    in(g, "bad", "sx:0");
    in(g, "bad", "x");
    assert_int_equal(sl_graph_arg_str(g, "bad", "op", "add"), SL_OK);
    sl_graph_output(g, "bad");
    expect_build_error(g, "input 1 comes from the whole batch");

    g = xc_graph(); /* branches swapped */
    merge(g, "m", "sx:1", "sx:0", "c");
    sl_graph_output(g, "m");
    expect_build_error(g, "input 0 (\"sx\") must come from the true branch");

    g = xc_graph(); /* a pipeline output inside a branch */
    sl_graph_output(g, "sx:0");
    expect_build_error(g, "pipeline output 0 is inside the true branch of the conditional on "
                          "\"c\"");

    g = xc_graph(); /* merge on another predicate */
    add(g, "external_source", "c2");
    merge(g, "m", "sx:0", "sx:1", "c2");
    sl_graph_output(g, "m");
    expect_build_error(g, "must be the predicate of the split");

    g = xc_graph(); /* a source inside a branch */
    add(g, "external_source", "inner");
    assert_int_equal(sl_graph_batch_like(g, "inner", "sx:1"), SL_OK);
    merge(g, "m", "sx:0", "inner", "c");
    sl_graph_output(g, "m");
    expect_build_error(g, "cannot run inside the false branch of the conditional on \"c\"");

    g = xc_graph(); /* batch_like naming no node */
    add(g, "random.uniform", "u");
    assert_int_equal(sl_graph_batch_like(g, "u", "nothere"), SL_OK);
    sl_graph_output(g, "u");
    expect_build_error(g, "batch_like refers to unknown node");
}

/* A predicate of any numeric type works (DALI: nonzero is true, float16 too); one of more than
 * one element fails naming the node and the sample in DALI's words; branches giving
 * different types merge into the promoted type. */
static void test_run_errors(void **state)
{
    (void)state;
    sl_graph *g = xc_graph();
    merge(g, "m", "sx:0", "sx:1", "c");
    sl_graph_output(g, "m");
    sl_pipeline *p = build(g, 2, 1, 1);
    float xv[2] = {1, 2}, cv[2] = {0.5f, 0}, c2[3] = {1, 0, 1};
    int64_t one[2] = {1, 1}, bad[2] = {1, 2};
    const void *xp[2] = {&xv[0], &xv[1]}, *cp[2] = {&cv[0], &cv[1]}, *c2p[2] = {&c2[0], &c2[1]};
    sl_feed fx = {
        .num_samples = 2, .ndim = 1, .dtype = SL_DTYPE_FLOAT32, .shapes = one, .data = xp};
    sl_feed fc = {
        .num_samples = 2, .ndim = 1, .dtype = SL_DTYPE_FLOAT32, .shapes = one, .data = cp};
    sl_feed fc2 = {
        .num_samples = 2, .ndim = 1, .dtype = SL_DTYPE_FLOAT32, .shapes = bad, .data = c2p};
    assert_int_equal(sl_pipeline_feed_input(p, "x", &fx), SL_OK);
    assert_int_equal(sl_pipeline_feed_input(p, "c", &fc), SL_OK);
    assert_int_equal(sl_pipeline_feed_input(p, "x", &fx), SL_OK);
    assert_int_equal(sl_pipeline_feed_input(p, "c", &fc2), SL_OK);
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    const sl_batch *m = sl_pipeline_output(p, 0);
    for (int i = 0; i < 2; i++)
        assert_true(*(const float *)sl_batch_sample_data(m, i) == xv[i]);
    assert_int_equal(sl_pipeline_run(p), SL_EINVAL);
    assert_non_null(strstr(sl_pipeline_error(p), "node \"sx\""));
    assert_non_null(strstr(sl_pipeline_error(p), "sample 1"));
    assert_non_null(strstr(sl_pipeline_error(p),
                           "Conditions inside `if` statements are restricted to scalar (0-d "
                           "tensors) inputs, that are placed on CPU. Got a 1-d input as a "
                           "condition of the `if` statement"));
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);

    g = xc_graph();
    add(g, "cast", "ct");
    in(g, "ct", "sx:0");
    assert_int_equal(sl_graph_arg_str(g, "ct", "dtype", "float64"), SL_OK);
    merge(g, "m", "ct", "sx:1", "c");
    sl_graph_output(g, "m");
    p = build(g, 2, 1, 1);
    uint8_t cb[2] = {1, 0};
    const void *cbp[2] = {&cb[0], &cb[1]};
    sl_feed fb = {.num_samples = 2, .ndim = 0, .dtype = SL_DTYPE_BOOL, .shapes = one, .data = cbp};
    assert_int_equal(sl_pipeline_feed_input(p, "x", &fx), SL_OK);
    assert_int_equal(sl_pipeline_feed_input(p, "c", &fb), SL_OK);
    /* branches of different types merge into the promoted type (float64 here), the false
     * branch's float32 converted */
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    const sl_batch *mb = sl_pipeline_output(p, 0);
    assert_int_equal(sl_batch_dtype(mb), SL_DTYPE_FLOAT64);
    for (int i = 0; i < 2; i++)
        assert_true(((const double *)sl_batch_sample_data(mb, i))[0] == (double)xv[i]);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* not_ and validate_logical: per sample, against the model; DALI's operand rules: `not` takes a
 * scalar of any numeric type, `and`/`or` a bool scalar; a failure names the expression, the
 * side and the sample. */
static void test_logical(void **state)
{
    (void)state;
    sl_graph *g = new_graph();
    add(g, "external_source", "c");
    add(g, "_conditional.validate_logical", "v");
    in(g, "v", "c");
    assert_int_equal(sl_graph_arg_str(g, "v", "expression_name", "not"), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "v", "expression_side", "only"), SL_OK);
    add(g, "_conditional.not_", "n");
    in(g, "n", "v");
    sl_graph_output(g, "v");
    sl_graph_output(g, "n");
    sl_pipeline *p = build(g, 4, 1, 1);
    int32_t c[4] = {0, 1, -3, 0};
    feed_i32(p, "c", c, 4);
    int32_t two[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int64_t shapes[4] = {1, 2, 1, 1};
    const void *data[4] = {&two[0], &two[2], &two[4], &two[6]};
    sl_feed bad = {
        .num_samples = 4, .ndim = 1, .dtype = SL_DTYPE_INT32, .shapes = shapes, .data = data};
    assert_int_equal(sl_pipeline_feed_input(p, "c", &bad), SL_OK);
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    const sl_batch *v = sl_pipeline_output(p, 0), *n = sl_pipeline_output(p, 1);
    assert_int_equal(sl_batch_dtype(n), SL_DTYPE_BOOL);
    assert_int_equal(sl_batch_dtype(v), SL_DTYPE_INT32);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(*(const int32_t *)sl_batch_sample_data(v, i), c[i]);
        assert_int_equal(*(const uint8_t *)sl_batch_sample_data(n, i), c[i] == 0);
    }
    assert_int_equal(sl_pipeline_run(p), SL_EINVAL);
    const char *msg = sl_pipeline_error(p);
    assert_non_null(strstr(msg, "Logical expression `not` is restricted to scalar (0-d tensors) "
                                "inputs, that are placed on CPU. Got a 1-d input of 2 elements"));
    assert_non_null(strstr(msg, "sample 1"));
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);

    /* `or`: an int32 operand is refused for its type (bool only) */
    g = new_graph();
    add(g, "external_source", "c");
    add(g, "_conditional.validate_logical", "v");
    in(g, "v", "c");
    assert_int_equal(sl_graph_arg_str(g, "v", "expression_name", "or"), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "v", "expression_side", "right"), SL_OK);
    sl_graph_output(g, "v");
    p = build(g, 4, 1, 1);
    feed_i32(p, "c", c, 4);
    assert_int_equal(sl_pipeline_run(p), SL_EINVAL);
    msg = sl_pipeline_error(p);
    assert_non_null(strstr(msg, "Logical expression `or` is restricted to scalar (0-d tensors) "
                                "inputs of `bool` type, that are placed on CPU. Got an input of "
                                "type `int32` as the right argument in logical expression."));
    assert_non_null(strstr(msg, "sample 0"));
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* ---- plan, spec, memory ---------------------------------------------------------------------- */

/* A conditional whose merge nobody reads is pruned whole; a split used only for one branch
 * keeps that branch alone. */
static void test_pruning(void **state)
{
    (void)state;
    sl_graph *g = cond_graph();
    split(g, "s2", "x", "c");
    arith(g, "dead_t", "s2:0", "mul", 5);
    arith(g, "dead_f", "s2:1", "mul", 7);
    merge(g, "dead", "dead_t", "dead_f", "c");
    sl_pipeline *p = build(g, B, 1, 1);
    sl_graph *g0 = cond_graph();
    sl_pipeline *p0 = build(g0, B, 1, 1);
    assert_int_equal(sl_pipeline_num_nodes(p), sl_pipeline_num_nodes(p0));
    for (int j = 0; j < p->plan->n; j++)
        assert_null(strstr(p->plan->nodes[j].name, "dead"));
    sl_pipeline_destroy(p);
    sl_pipeline_destroy(p0);
    sl_graph_destroy(g);
    sl_graph_destroy(g0);
}

/* The operators the case files (test_op_cases' "[if]" runs) do not cover on an empty batch:
 * the decoders, copy and the random operators, each once per branch with every sample on one
 * side (pred_op "geq": all true; "lt": all false), merged, equal to the node run
 * unconditionally with the same seed. */
static void empty_branches(const char *pred_op)
{
    const char *root = tu_env_dir("SLUICE_TEST_TREE");
    sl_graph *g = new_graph();
    add(g, "readers.file", "reader");
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", root), SL_OK);
    add(g, "arithmetic", "p");
    in(g, "p", "reader:1");
    assert_int_equal(sl_graph_arg_str(g, "p", "op", pred_op), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "p", "scalar_int", 0), SL_OK);
    add(g, "arithmetic", "n"); /* 3 .. : the choices' sizes */
    in(g, "n", "reader:1");
    assert_int_equal(sl_graph_arg_str(g, "n", "op", "add"), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "n", "scalar_int", 3), SL_OK);
    split(g, "s", "reader:0", "p");
    split(g, "sn", "n", "p");
    const char *ops[][3] = {
        /* op, input (none: batch_like), seed */
        {"decoders.image", "reader:0", NULL}, {"decoders.image_random_crop", "reader:0", "5"},
        {"copy", "reader:0", NULL},           {"random.coin_flip", NULL, "6"},
        {"random.normal", NULL, "8"},         {"random.uniform", NULL, "10"},
        {"random.choice", "n", "9"}};
    int nops = (int)(sizeof ops / sizeof ops[0]);
    char name[64], ref[64], src[64];
    for (int k = 0; k < nops; k++) {
        const char *sp = ops[k][1] && !strcmp(ops[k][1], "n") ? "sn" : "s";
        for (int b = 0; b < 3; b++) { /* true branch, false branch, unconditional */
            snprintf(name, sizeof name, "op%d_%d", k, b);
            add(g, ops[k][0], name);
            if (ops[k][2])
                assert_int_equal(sl_graph_arg_int(g, name, "seed", atoi(ops[k][2])), SL_OK);
            snprintf(src, sizeof src, "%s:%d", sp, b);
            if (ops[k][1])
                in(g, name, b < 2 ? src : ops[k][1]);
            else if (b < 2)
                assert_int_equal(sl_graph_batch_like(g, name, src), SL_OK);
        }
        snprintf(name, sizeof name, "m%d", k);
        snprintf(src, sizeof src, "op%d_0", k);
        snprintf(ref, sizeof ref, "op%d_1", k);
        merge(g, name, src, ref, "p");
        sl_graph_output(g, name);
        snprintf(ref, sizeof ref, "op%d_2", k);
        sl_graph_output(g, ref);
    }
    sl_pipeline *p = build(g, 4, 2, 2);
    for (int it = 0; it < 3; it++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        for (int k = 0; k < nops; k++) {
            const sl_batch *m = sl_pipeline_output(p, 2 * k), *r = sl_pipeline_output(p, 2 * k + 1);
            assert_int_equal(sl_batch_size(m), 4);
            assert_int_equal(sl_batch_dtype(m), sl_batch_dtype(r));
            assert_int_equal(sl_batch_ndim(m), sl_batch_ndim(r));
            assert_string_equal(sl_batch_layout(m), sl_batch_layout(r));
            if (sl_batch_nbytes(m) != sl_batch_nbytes(r) ||
                memcmp(sl_batch_data(m), sl_batch_data(r), sl_batch_nbytes(r)) != 0)
                fail_msg("%s (%s): the merged branches differ from the node run unconditionally",
                         ops[k][0], pred_op);
        }
    }
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

static void test_empty_branches(void **state)
{
    (void)state;
    empty_branches("geq"); /* every label >= 0: the false branch is empty */
    empty_branches("lt");  /* none < 0: the true branch is empty */
}

/* Sample fusion inside a branch, never across a split or merge: a1 -> a2 in the true branch
 * fuse; the merge does not fuse into its consumer b, nor x's producer into the split. The
 * values stay the model's. */
static void test_fusion(void **state)
{
    (void)state;
    sl_graph *g = new_graph();
    add(g, "external_source", "x");
    add(g, "external_source", "c");
    arith(g, "pre", "x", "add", 0);
    split(g, "sx", "pre", "c");
    arith(g, "a1", "sx:0", "mul", 2);
    arith(g, "a2", "a1", "add", 3);
    merge(g, "m", "a2", "sx:1", "c");
    arith(g, "b", "m", "mul", 10);
    sl_graph_output(g, "b");
    sl_pipeline *p = build(g, B, 2, 2);
    const sl__plan *plan = p->plan;
    for (int j = 0; j < plan->n; j++) {
        const sl__pnode *pn = &plan->nodes[j];
        bool fused = pn->fuse_into >= 0;
        if (!strcmp(pn->name, "a1"))
            assert_string_equal(plan->nodes[pn->fuse_into].name, "a2");
        else
            assert_false(fused); /* pre (into the split), a2 (into the merge), m (into b) */
    }
    for (int k = 0; k < 2; k++)
        feed_iteration(p, k, false, false);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        const sl_batch *b = sl_pipeline_output(p, 0);
        for (int i = 0; i < B; i++)
            for (int e = 0; e < x_len(k, i); e++) {
                float x = x_val(k, i, e);
                float want = 10 * (pred_c(k, i) ? 2 * x + 3 : x);
                assert_true(((const float *)sl_batch_sample_data(b, i))[e] == want);
            }
    }
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* The spec writes batch_like as {"node", "output"}; reading it back gives the same text and a
 * pipeline with the same results. */
static void test_spec_round_trip(void **state)
{
    (void)state;
    sl_graph *g = cond_graph();
    char *json = NULL, *json2 = NULL;
    assert_int_equal(sl_graph_to_json(g, &json), SL_OK);
    assert_non_null(strstr(json, "\"batch_like\": {\"node\": \"sx\", \"output\": 1}"));
    sl_graph *g2 = NULL;
    assert_int_equal(sl_graph_from_json(json, &g2), SL_OK);
    assert_int_equal(sl_graph_to_json(g2, &json2), SL_OK);
    assert_string_equal(json, json2);
    /* the string form "name:k" reads the same */
    char *alt = strdup(json);
    char *at = strstr(alt, "{\"node\": \"sx\", \"output\": 1}");
    const char *repl = "\"sx:1\"";
    memmove(at + strlen(repl), at + strlen("{\"node\": \"sx\", \"output\": 1}"),
            strlen(at + strlen("{\"node\": \"sx\", \"output\": 1}")) + 1);
    memcpy(at, repl, strlen(repl));
    sl_graph *g3 = NULL;
    assert_int_equal(sl_graph_from_json(alt, &g3), SL_OK);
    char *json3 = NULL;
    assert_int_equal(sl_graph_to_json(g3, &json3), SL_OK);
    assert_string_equal(json, json3);
    sl_graph *bad = NULL;
    assert_int_equal(
        sl_graph_from_json("{\"nodes\": [{\"name\": \"u\", \"op\": \"random.uniform\", "
                           "\"batch_like\": {\"node\": 3}}], \"outputs\": [\"u\"]}",
                           &bad),
        SL_EINVAL);
    assert_non_null(strstr(sl_last_error(), "\"batch_like\" must be"));
    sl_pipeline *p1 = build(g, B, 2, 2), *p2 = build(g2, B, 2, 2);
    for (int k = 0; k < 3; k++) {
        feed_iteration(p1, k, true, true);
        feed_iteration(p2, k, true, true);
    }
    for (int k = 0; k < 3; k++) {
        if (sl_pipeline_run(p1) != SL_OK)
            fail_msg("%s", sl_pipeline_error(p1));
        if (sl_pipeline_run(p2) != SL_OK)
            fail_msg("%s", sl_pipeline_error(p2));
        for (int o = 0; o < 3; o++) {
            const sl_batch *a = sl_pipeline_output(p1, o), *b = sl_pipeline_output(p2, o);
            assert_int_equal(sl_batch_nbytes(a), sl_batch_nbytes(b));
            assert_memory_equal(sl_batch_data(a), sl_batch_data(b), sl_batch_nbytes(a));
        }
    }
    sl_pipeline_destroy(p1);
    sl_pipeline_destroy(p2);
    free(json);
    free(json2);
    free(json3);
    free(alt);
    sl_graph_destroy(g);
    sl_graph_destroy(g2);
    sl_graph_destroy(g3);
}

/* Decoded images routed by label (label 0: flipped, others: resized to 20 x 20), merged: after
 * two epochs nothing is allocated; the values match the unconditional nodes per sample. */
static void test_steady_state(void **state)
{
    (void)state;
    const char *root = tu_env_dir("SLUICE_TEST_TREE");
    sl_graph *g = new_graph();
    add(g, "readers.file", "reader");
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", root), SL_OK);
    add(g, "decoders.image", "dec");
    in(g, "dec", "reader:0");
    add(g, "arithmetic", "is0");
    in(g, "is0", "reader:1");
    assert_int_equal(sl_graph_arg_str(g, "is0", "op", "eq"), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "is0", "scalar_int", 0), SL_OK);
    split(g, "s", "dec", "is0");
    add(g, "flip", "fl");
    in(g, "fl", "s:0");
    add(g, "resize", "rs");
    in(g, "rs", "s:1");
    double size[2] = {20, 20};
    assert_int_equal(sl_graph_arg_floats(g, "rs", "size", size, 2), SL_OK);
    merge(g, "m", "fl", "rs", "is0");
    sl_graph_output(g, "m");
    sl_graph_output(g, "reader:1");
    /* the same nodes on every sample */
    add(g, "flip", "fl_all");
    in(g, "fl_all", "dec");
    add(g, "resize", "rs_all");
    in(g, "rs_all", "dec");
    assert_int_equal(sl_graph_arg_floats(g, "rs_all", "size", size, 2), SL_OK);
    sl_graph_output(g, "fl_all");
    sl_graph_output(g, "rs_all");
    sl_pipeline *p = build(g, 5, 2, 3);
    int64_t per_epoch = sl_pipeline_epoch_size(p, "reader");
    assert_true(per_epoch >= 10);
    int iters = (int)((per_epoch + 4) / 5);
    for (int it = 0; it < 2 * iters; it++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        const sl_batch *m = sl_pipeline_output(p, 0), *l = sl_pipeline_output(p, 1);
        for (int i = 0; i < 5; i++) {
            bool is0 = *(const int32_t *)sl_batch_sample_data(l, i) == 0;
            const sl_batch *want = sl_pipeline_output(p, is0 ? 2 : 3);
            assert_int_equal(sl_batch_shape(m, i)[0], sl_batch_shape(want, i)[0]);
            assert_int_equal(sl_batch_shape(m, i)[1], sl_batch_shape(want, i)[1]);
            assert_memory_equal(sl_batch_sample_data(m, i), sl_batch_sample_data(want, i),
                                (size_t)sl_batch_sample_numel(want, i));
        }
    }
    uint64_t before = sl__alloc_count();
    for (int it = 0; it < 2 * iters; it++)
        assert_int_equal(sl_pipeline_run(p), SL_OK);
    assert_int_equal(sl__alloc_count() - before, 0);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model),           cmocka_unit_test(test_scopes),
        cmocka_unit_test(test_sources),         cmocka_unit_test(test_branch_error),
        cmocka_unit_test(test_build_errors),    cmocka_unit_test(test_run_errors),
        cmocka_unit_test(test_logical),         cmocka_unit_test(test_pruning),
        cmocka_unit_test(test_spec_round_trip), cmocka_unit_test(test_steady_state),
        cmocka_unit_test(test_fusion),          cmocka_unit_test(test_empty_branches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
