/* tests/c/test_build.c: every build-time validation error names the node and the problem;
 * pruning, topological order and placement of what builds; the placement rule itself
 * (src/graph/place.c: a node without a device runs where its inputs are, as DALI documents).
 * Pipelines that run mixed or gpu nodes are in test_cuda_exec.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "graph/graph.h"
#include "testutil.h"

/* reader -> dec -> cmn (mirror from coin), outputs cmn and reader:1. */
static sl_graph *base_graph(void)
{
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "readers.file", "reader", NULL), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", tu_env_dir("SLUICE_TEST_TREE")),
                     SL_OK);
    assert_int_equal(sl_graph_add(g, "decoders.image", "dec", "cpu"), SL_OK);
    assert_int_equal(sl_graph_input(g, "dec", "reader"), SL_OK);
    assert_int_equal(sl_graph_add(g, "random.coin_flip", "coin", NULL), SL_OK);
    assert_int_equal(sl_graph_add(g, "crop_mirror_normalize", "cmn", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "cmn", "dec:0"), SL_OK);
    assert_int_equal(sl_graph_arg_input(g, "cmn", "mirror", "coin"), SL_OK);
    assert_int_equal(sl_graph_output(g, "cmn"), SL_OK);
    assert_int_equal(sl_graph_output(g, "reader:1"), SL_OK);
    return g;
}

/* Builds g and expects failure `code` with every one of the NULL-terminated words in the
 * message. */
static void expect_build_error(sl_graph *g, sl_status code, ...)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 2;
    o.num_threads = 1;
    sl_pipeline *p = NULL;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    sl_status st = sl_pipeline_build(p);
    const char *msg = sl_pipeline_error(p);
    if (st != code)
        fail_msg("expected %s, got %s: %s", sl_status_name(code), sl_status_name(st), msg);
    va_list ap;
    va_start(ap, code);
    for (const char *w; (w = va_arg(ap, const char *));) {
        if (!strstr(msg, w))
            fail_msg("message lacks \"%s\": %s", w, msg);
    }
    va_end(ap);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

static void test_unknown_operator(void **state)
{
    sl_graph *g = base_graph();
    sl_graph_add(g, "decoders.imagez", "bad", NULL);
    expect_build_error(g, SL_ENOTFOUND, "node \"bad\"", "unknown operator \"decoders.imagez\"",
                       NULL);
}

static void test_unknown_argument(void **state)
{
    sl_graph *g = base_graph();
    sl_graph_arg_str(g, "dec", "output_typ", "RGB");
    expect_build_error(g, SL_EINVAL, "decoders.image", "node \"dec\"",
                       "unknown argument \"output_typ\"", NULL);
}

static void test_wrong_argument_type(void **state)
{
    sl_graph *g = base_graph();
    sl_graph_arg_int(g, "dec", "output_type", 3);
    expect_build_error(g, SL_EINVAL, "node \"dec\"", "argument \"output_type\"",
                       "expected string, got int", NULL);
    g = base_graph();
    sl_graph_arg_float(g, "reader", "shard_id", 0.5);
    expect_build_error(g, SL_EINVAL, "node \"reader\"", "\"shard_id\"", "expected int", NULL);
}

static void test_wrong_argument_value(void **state)
{
    sl_graph *g = base_graph();
    sl_graph_arg_float(g, "coin", "probability", 1.5);
    expect_build_error(g, SL_EINVAL, "random.coin_flip", "node \"coin\"", "\"probability\"",
                       "out of range [0, 1]", NULL);
    g = base_graph();
    sl_graph_arg_str(g, "dec", "output_type", "CMYK");
    expect_build_error(g, SL_EINVAL, "node \"dec\"", "\"CMYK\" is not one of RGB|BGR|GRAY", NULL);
    g = base_graph();
    double crop[3] = {1, 2, 3};
    sl_graph_arg_floats(g, "cmn", "crop", crop, 3);
    expect_build_error(g, SL_EINVAL, "node \"cmn\"", "\"crop\"", "got 3", NULL);
}

static void test_wrong_input_count(void **state)
{
    sl_graph *g = base_graph();
    sl_graph_input(g, "dec", "reader:1");
    expect_build_error(g, SL_EINVAL, "node \"dec\"", "expects 1 input, got 2", NULL);
    g = base_graph();
    sl_graph_input(g, "coin", "reader");
    expect_build_error(g, SL_EINVAL, "node \"coin\"", "expects 0 inputs, got 1", NULL);
}

static void test_bad_references(void **state)
{
    sl_graph *g = base_graph();
    sl_graph_output(g, "nowhere");
    expect_build_error(g, SL_ENOTFOUND, "output 2", "\"nowhere\"", NULL);
    g = base_graph();
    sl_graph_output(g, "dec:3");
    expect_build_error(g, SL_EINVAL, "node \"dec\"", "output 3", NULL);
    g = base_graph();
    sl_graph_add(g, "decoders.image", "dec2", NULL);
    sl_graph_input(g, "dec2", "ghost:0");
    expect_build_error(g, SL_ENOTFOUND, "node \"dec2\"", "unknown node \"ghost:0\"", NULL);
    g = base_graph();
    sl_graph_arg_input(g, "cmn", "crop_pos_x", "ghost");
    expect_build_error(g, SL_ENOTFOUND, "node \"cmn\"", "argument input \"crop_pos_x\"", NULL);
}

static void test_argument_input_rules(void **state)
{
    sl_graph *g = base_graph();
    sl_graph_arg_input(g, "cmn", "output_layout", "coin");
    expect_build_error(g, SL_EINVAL, "node \"cmn\"", "\"output_layout\"",
                       "does not accept per-sample argument inputs", NULL);
    g = base_graph();
    sl_graph_add(g, "random.coin_flip", "gcoin", "gpu");
    sl_graph_arg_input(g, "cmn", "mirror", "gcoin");
    expect_build_error(g, SL_EINVAL, "node \"cmn\"", "comes from node \"gcoin\" on gpu",
                       "must come from CPU nodes", NULL);
}

static void test_unsupported_device(void **state)
{
    sl_graph *g = base_graph();
    sl_graph_add(g, "readers.file", "r2", "gpu");
    expect_build_error(g, SL_EUNSUPPORTED, "node \"r2\"", "no gpu implementation", NULL);
    g = base_graph();
    sl_graph_add(g, "readers.file", "r3", "tpu");
    expect_build_error(g, SL_EINVAL, "node \"r3\"", "unknown device \"tpu\"", NULL);
}

static void test_cycle(void **state)
{
    sl_graph *g = base_graph();
    sl_graph_add(g, "crop_mirror_normalize", "a", NULL);
    sl_graph_add(g, "crop_mirror_normalize", "b", NULL);
    sl_graph_input(g, "a", "b");
    sl_graph_input(g, "b", "a");
    sl_graph_output(g, "b");
    expect_build_error(g, SL_EINVAL, "node \"a\"", "cycle", NULL);
}

static void test_no_outputs_and_init_errors(void **state)
{
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    sl_graph_add(g, "random.coin_flip", "coin", NULL);
    expect_build_error(g, SL_EINVAL, "no outputs", NULL);
    g = base_graph();
    sl_graph_arg_str(g, "reader", "file_root", "/nonexistent/sluice-data");
    expect_build_error(g, SL_ENOTFOUND, "readers.file", "node \"reader\"",
                       "/nonexistent/sluice-data", NULL);
}

static void test_graph_misuse(void **state)
{
    sl_graph *g = base_graph();
    assert_int_equal(sl_graph_add(g, "decoders.image", "dec", NULL), SL_EINVAL);
    assert_non_null(strstr(sl_last_error(), "\"dec\" already exists"));
    assert_int_equal(sl_graph_input(g, "ghost", "dec"), SL_ENOTFOUND);
    assert_int_equal(sl_graph_arg_json(g, "dec", "output_type", "{bad"), SL_EINVAL);
    assert_non_null(strstr(sl_last_error(), "output_type"));
    assert_int_equal(sl_graph_add(NULL, "x", NULL, NULL), SL_EMISUSE);
    sl_graph_destroy(g);
}

/* Nodes that reach no output are pruned unless preserved; the rest run producers first. */
static void test_prune_and_order(void **state)
{
    sl_graph *g = base_graph();
    sl_graph_add(g, "random.uniform", "unused", NULL);
    sl_graph_add(g, "random.uniform", "kept", NULL);
    sl_graph_arg_bool(g, "kept", "preserve", true);
    sl_pipeline *p = NULL;
    assert_int_equal(sl_pipeline_create(g, NULL, &p), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_OK);
    int n = sl_pipeline_num_nodes(p);
    assert_int_equal(n, 5);
    int pos_reader = -1, pos_dec = -1, pos_cmn = -1, pos_coin = -1;
    for (int i = 0; i < n; i++) {
        sl_node_stats s;
        assert_int_equal(sl_pipeline_node_stats(p, i, &s), SL_OK);
        assert_string_not_equal(s.name, "unused");
        assert_string_equal(s.device, "cpu");
        pos_reader = strcmp(s.name, "reader") == 0 ? i : pos_reader;
        pos_dec = strcmp(s.name, "dec") == 0 ? i : pos_dec;
        pos_cmn = strcmp(s.name, "cmn") == 0 ? i : pos_cmn;
        pos_coin = strcmp(s.name, "coin") == 0 ? i : pos_coin;
    }
    assert_true(pos_reader < pos_dec && pos_dec < pos_cmn && pos_coin < pos_cmn);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* DALI: "If the device parameter is not specified, it is selected automatically based on the
 * placement of the inputs. If there is at least one GPU input, the device='gpu' is assumed,
 * otherwise 'cpu' is used." Only regular inputs are passed to the rule. */
static void test_placement_rule(void **state)
{
    const sl__stage none[1] = {SL__STAGE_CPU};
    const sl__stage cpu2[] = {SL__STAGE_CPU, SL__STAGE_CPU};
    const sl__stage cpu_mixed[] = {SL__STAGE_CPU, SL__STAGE_MIXED, SL__STAGE_GPU};
    const sl__stage gpu1[] = {SL__STAGE_GPU};
    sl__placement pl;
    assert_true(sl__stage_place(NULL, none, 0, &pl)); /* a source */
    assert_int_equal(pl.stage, SL__STAGE_CPU);
    assert_false(pl.given);
    assert_int_equal(pl.from, -1);
    assert_true(sl__stage_place(NULL, cpu2, 2, &pl));
    assert_int_equal(pl.stage, SL__STAGE_CPU);
    assert_int_equal(pl.from, -1);
    assert_true(sl__stage_place(NULL, cpu_mixed, 3, &pl)); /* the first GPU input decides */
    assert_int_equal(pl.stage, SL__STAGE_GPU);
    assert_int_equal(pl.from, 1);
    assert_int_equal(pl.from_stage, SL__STAGE_MIXED);
    assert_true(sl__stage_place(NULL, gpu1, 1, &pl));
    assert_int_equal(pl.stage, SL__STAGE_GPU);
    assert_int_equal(pl.from_stage, SL__STAGE_GPU);
    /* a given device wins, whatever the inputs (a wrong one is the build's input error) */
    assert_true(sl__stage_place("cpu", gpu1, 1, &pl));
    assert_int_equal(pl.stage, SL__STAGE_CPU);
    assert_true(pl.given);
    assert_int_equal(pl.from, -1);
    assert_true(sl__stage_place("mixed", cpu2, 2, &pl));
    assert_int_equal(pl.stage, SL__STAGE_MIXED);
    assert_false(sl__stage_place("tpu", cpu2, 2, &pl));
}

/* Whether an operator can run where it lands: an inferred gpu placement of an operator
 * without a gpu implementation is an error naming the input that implied it. */
static void test_placement_check(void **state)
{
    char err[512];
    const sl__stage mixed[] = {SL__STAGE_MIXED};
    sl__placement pl;
    assert_true(sl__stage_place(NULL, mixed, 1, &pl));
    assert_int_equal(sl__stage_check(sl_registry_find("decoders.image"), &pl, "m", err, sizeof err),
                     SL_EUNSUPPORTED);
    assert_non_null(strstr(err, "operator has no gpu implementation"));
    assert_non_null(strstr(err, "no device was given: input 0 comes from node \"m\" on mixed"));
    assert_non_null(strstr(err, ".cpu()"));
    assert_true(sl__stage_place("gpu", mixed, 1, &pl)); /* given: the plain words */
    assert_int_equal(sl__stage_check(sl_registry_find("readers.file"), &pl, NULL, err, sizeof err),
                     SL_EUNSUPPORTED);
    assert_string_equal(err, "operator has no gpu implementation");
    assert_true(sl__stage_place(NULL, mixed, 1, &pl));
    sl_status st = sl__stage_check(sl_registry_find("flip"), &pl, "m", err, sizeof err);
#ifdef SLUICE_HAVE_CUDA
    assert_int_equal(st, SL_OK);
#else
    assert_int_equal(st, SL_EUNSUPPORTED);
    assert_non_null(strstr(err, "needs CUDA"));
#endif
}

/* sl__graph_place: the same rule over an unbuilt graph (what Python's DataNode.device reports
 * before the build), nodes added in any order, the stages it meets cached. */
static void test_graph_place(void **state)
{
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    /* the consumer first: the C API and JSON specs need no order */
    assert_int_equal(sl_graph_add(g, "arithmetic", "scaled", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "scaled", "flipped"), SL_OK);
    assert_int_equal(sl_graph_add(g, "flip", "flipped", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "flipped", "dec"), SL_OK);
    assert_int_equal(sl_graph_add(g, "decoders.image", "dec", "mixed"), SL_OK);
    assert_int_equal(sl_graph_input(g, "dec", "reader:0"), SL_OK);
    assert_int_equal(sl_graph_add(g, "readers.file", "reader", NULL), SL_OK);
    assert_int_equal(sl_graph_add(g, "random.coin_flip", "coin", NULL), SL_OK);
    signed char placed[8];
    memset(placed, SL__PLACED_UNKNOWN, sizeof placed);
    sl__placement pl;
    int from = -2;
    char err[256];
    char *scaled[] = {"scaled"}, *labels[] = {"reader:1"}, *mixed_and_cpu[] = {"coin", "dec"};
    assert_int_equal(sl__graph_place(g, NULL, scaled, 1, placed, &pl, &from, err, sizeof err),
                     SL_OK);
    assert_int_equal(pl.stage, SL__STAGE_GPU); /* a chain below a mixed node stays on the GPU */
    assert_int_equal(from, 0);                 /* node 0, "scaled" */
    assert_int_equal(placed[0], SL__STAGE_GPU);
    assert_int_equal(placed[1], SL__STAGE_GPU);
    assert_int_equal(placed[2], SL__STAGE_MIXED);
    assert_int_equal(placed[3], SL__PLACED_UNKNOWN); /* dec's device is given: its input is */
    assert_int_equal(placed[4], SL__PLACED_UNKNOWN); /* not looked at, nor what is not on the way */
    assert_int_equal(sl__graph_place(g, NULL, labels, 1, placed, &pl, &from, err, sizeof err),
                     SL_OK);
    assert_int_equal(pl.stage, SL__STAGE_CPU); /* a source's output */
    assert_int_equal(from, -1);
    assert_int_equal(placed[3], SL__STAGE_CPU);
    assert_int_equal(
        sl__graph_place(g, NULL, mixed_and_cpu, 2, placed, &pl, &from, err, sizeof err), SL_OK);
    assert_int_equal(pl.stage, SL__STAGE_GPU);
    assert_int_equal(pl.from, 1);
    assert_int_equal(from, 2); /* "dec" */
    assert_int_equal(
        sl__graph_place(g, "cpu", mixed_and_cpu, 2, placed, &pl, &from, err, sizeof err), SL_OK);
    assert_int_equal(pl.stage, SL__STAGE_CPU);
    /* what it cannot place: a reference to no node, a cycle, an unknown device */
    char *ghost[] = {"ghost:0"};
    assert_int_equal(sl__graph_place(g, NULL, ghost, 1, placed, &pl, &from, err, sizeof err),
                     SL_ENOTFOUND);
    assert_non_null(strstr(err, "input 0 refers to unknown node \"ghost:0\""));
    assert_int_equal(sl_graph_add(g, "flip", "a", NULL), SL_OK);
    assert_int_equal(sl_graph_add(g, "flip", "b", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "a", "b"), SL_OK);
    assert_int_equal(sl_graph_input(g, "b", "a"), SL_OK);
    char *a[] = {"a"};
    assert_int_equal(sl__graph_place(g, NULL, a, 1, placed, &pl, &from, err, sizeof err),
                     SL_EINVAL);
    assert_non_null(strstr(err, "cycle"));
    assert_int_equal(sl__graph_place(g, "tpu", a, 1, placed, &pl, &from, err, sizeof err),
                     SL_EINVAL);
    assert_non_null(strstr(err, "unknown device \"tpu\""));
    sl_graph_destroy(g);
}

/* Placement errors a CPU build reports too: argument inputs do not count toward the device
 * and stay CPU data; an operator placed where it has no implementation names itself. */
static void test_inferred_placement_errors(void **state)
{
    /* GPU data as an argument input of a node without a device: the node stays on cpu (its
     * one regular input is CPU data) and the argument input is refused, before any device
     * check (so in every build, CUDA or not, CPU-only or not) */
    sl_graph *g = base_graph();
    sl_graph_add(g, "copy", "mcoin", "mixed");
    sl_graph_input(g, "mcoin", "coin");
    sl_graph_arg_input(g, "cmn", "mirror", "mcoin");
    expect_build_error(g, SL_EINVAL, "crop_mirror_normalize (node \"cmn\")",
                       "argument input \"mirror\" comes from node \"mcoin\" on mixed",
                       "argument inputs must come from CPU nodes", NULL);
    /* a node without a device whose only input is a source runs on cpu: builds and runs */
    g = base_graph();
    sl_graph_add(g, "cast", "label_f", NULL);
    sl_graph_input(g, "label_f", "reader:1");
    sl_graph_arg_str(g, "label_f", "dtype", "float32");
    sl_graph_output(g, "label_f");
    sl_pipeline *p = NULL;
    assert_int_equal(sl_pipeline_create(g, NULL, &p), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_OK);
    for (int i = 0; i < sl_pipeline_num_nodes(p); i++) {
        sl_node_stats s;
        assert_int_equal(sl_pipeline_node_stats(p, i, &s), SL_OK);
        assert_string_equal(s.device, "cpu");
    }
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_operator),
        cmocka_unit_test(test_unknown_argument),
        cmocka_unit_test(test_wrong_argument_type),
        cmocka_unit_test(test_wrong_argument_value),
        cmocka_unit_test(test_wrong_input_count),
        cmocka_unit_test(test_bad_references),
        cmocka_unit_test(test_argument_input_rules),
        cmocka_unit_test(test_unsupported_device),
        cmocka_unit_test(test_cycle),
        cmocka_unit_test(test_no_outputs_and_init_errors),
        cmocka_unit_test(test_graph_misuse),
        cmocka_unit_test(test_prune_and_order),
        cmocka_unit_test(test_placement_rule),
        cmocka_unit_test(test_placement_check),
        cmocka_unit_test(test_graph_place),
        cmocka_unit_test(test_inferred_placement_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
