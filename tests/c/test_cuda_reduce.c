/* tests/c/test_cuda_reduce.c: the GPU run of the eight reductions (ops/reductions/reduce.cu)
 * against the CPU operators on the same inputs (gpuutil.h).
 *
 * Runs on the device, or emulated on the host (the .emulated ctest entry), never skipped
 * silently. Inputs: JPEGs of the class tree (batches of differently shaped HWC images) decoded
 * on "mixed" (uint8) or on the CPU and moved with copy: float32 in [0, 1] and in [-0.5, 0.5],
 * float16, float64, int16 with negative values, and images sliced to 0..3 columns (empty
 * samples). Axes: all, per channel (axes [0, 1] and axis_names "HW"), one axis (the last, the
 * middle, negative), none (an empty list), with and without keep_dims; every dtype default and
 * several given ones (wrapping integer sums, float16 and float64 results). std_dev and variance
 * take their mean from reductions.mean on the GPU (per output value) or one constant, with ddof
 * 0 and 1.
 * Tolerances: 0 (bit for bit) for min, max, integer sums and every reduction of integer data
 * (sums of integers in double are exact in any order); for float data the GPU sums in another
 * order (reduce.cu), so results may differ by an ulp of the output type: 1e-6 for values
 * around 1, 4e-3 for float32 sums over a whole image (~2e4), 1e-6 for float64 ones, 1e-4 for
 * std_dev / variance of uint8 data (values up to ~1e4 in float32).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "gpuutil.h"
#include "testutil.h"

enum { BATCH = 4, ITERS = 2 };

/* Nodes producing GPU node "in" from "reader:0": these and gpuutil's (rgb, gray, tiny, rgba). */
static const char *source(const char *kind)
{
    static const tu_gpu_source src[] = {
        {"f32",
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
         "{\"name\": \"s_f\", \"op\": \"arithmetic\", \"inputs\": [\"s_d\"], \"args\": "
         "{\"op\": \"fdiv\", \"scalar\": 255.0}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_f\"]}"},
        {"fneg",
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
         "{\"name\": \"s_f\", \"op\": \"arithmetic\", \"inputs\": [\"s_d\"], \"args\": "
         "{\"op\": \"fdiv\", \"scalar\": 255.0}},"
         "{\"name\": \"s_g\", \"op\": \"arithmetic\", \"inputs\": [\"s_f\"], \"args\": "
         "{\"op\": \"sub\", \"scalar\": 0.5}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_g\"]}"},
        {"f16",
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
         "{\"name\": \"s_f\", \"op\": \"arithmetic\", \"inputs\": [\"s_d\"], \"args\": "
         "{\"op\": \"fdiv\", \"scalar\": 255.0}},"
         "{\"name\": \"s_h\", \"op\": \"cast\", \"inputs\": [\"s_f\"], \"args\": {\"dtype\": "
         "\"float16\"}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_h\"]}"},
        {"f64",
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
         "{\"name\": \"s_c\", \"op\": \"cast\", \"inputs\": [\"s_d\"], \"args\": {\"dtype\": "
         "\"float64\"}},"
         "{\"name\": \"s_f\", \"op\": \"arithmetic\", \"inputs\": [\"s_c\"], \"args\": "
         "{\"op\": \"fdiv\", \"scalar\": 255.0}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_f\"]}"},
        {"i16",
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
         "{\"name\": \"s_c\", \"op\": \"cast\", \"inputs\": [\"s_d\"], \"args\": {\"dtype\": "
         "\"int16\"}},"
         "{\"name\": \"s_s\", \"op\": \"arithmetic\", \"inputs\": [\"s_c\"], \"args\": "
         "{\"op\": \"mul\", \"scalar_int\": -100, \"scalar_dtype\": \"int16\"}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_s\"]}"},
        {"part", /* 0..3 columns of each image: some samples are empty */
         "{\"name\": \"s_z\", \"op\": \"random.uniform\", \"args\": {\"range\": [0, 0.03], "
         "\"shape\": [2]}},"
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
         "{\"name\": \"s_s\", \"op\": \"slice\", \"inputs\": [\"s_d\"], \"args\": "
         "{\"axis_names\": \"WH\"}, \"arg_inputs\": {\"rel_shape\": \"s_z\"}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_s\"]}"},
    };
    return tu_gpu_source_json(src, sizeof src / sizeof src[0], kind);
}

static const char *const kinds[] = {"min", "max", "sum", "mean", "mean_square", "rms"};
/* axes members of "args" (without braces), with and without keep_dims */
static const char *const axes[] = {
    "",
    "\"axes\": [0, 1]",
    "\"axis_names\": \"HW\", \"keep_dims\": true",
    "\"axes\": 2",
    "\"axes\": [-2], \"keep_dims\": true",
    "\"axes\": []",
    "\"axis_names\": \"WC\"",
    "\"axes\": [0, 2], \"keep_dims\": true",
};
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* GPU node "op" = reductions.<kind>(in) with args {args}; output "op". */
static void compare(const char *src, const char *kind, const char *args, double tol)
{
    char node[512];
    snprintf(node, sizeof node,
             "{\"name\": \"op\", \"op\": \"reductions.%s\", \"device\": \"$GPU\", \"inputs\": "
             "[\"in\"], \"args\": {%s}}",
             kind, args);
    print_message("reductions.%s(%s) {%s}, tol %g\n", kind, src, args, tol);
    tu_diff d = tu_gpu_compare(tu_gpu_tree_spec(BATCH, 7, 3, "\"op\"", "%s, %s", source(src), node),
                               ITERS, tol);
    assert_true(d.elements > 0);
}

/* Every kind over every axes choice of uint8 images: exact. */
static void uint8_all_axes(void **state)
{
    (void)state;
    for (size_t k = 0; k < N(kinds); k++)
        for (size_t a = 0; a < N(axes); a++)
            compare("rgb", kinds[k], axes[a], 0);
}

static void integer_types_and_dtypes(void **state)
{
    (void)state;
    for (size_t k = 0; k < N(kinds); k++) {
        compare("i16", kinds[k], "", 0);
        compare("i16", kinds[k], "\"axes\": [0, 1]", 0);
        compare("gray", kinds[k], "\"axes\": 1", 0);
    }
    /* wrapping integer sums in the given type, and float results */
    static const char *const dts[] = {"uint8", "int8",    "uint16",  "int32",  "uint32",
                                      "int64", "float16", "float32", "float64"};
    char args[128];
    for (size_t t = 0; t < N(dts); t++) {
        snprintf(args, sizeof args, "\"axes\": [0, 1], \"dtype\": \"%s\"", dts[t]);
        compare("rgb", "sum", args, 0);
        compare("i16", "sum", args, 0);
        snprintf(args, sizeof args, "\"dtype\": \"%s\"", dts[t]);
        compare("rgb", "sum", args, 0);
    }
    static const char *const fdts[] = {"float16", "float64", "uint8", "int16"};
    for (size_t t = 0; t < N(fdts); t++) {
        snprintf(args, sizeof args, "\"axis_names\": \"HW\", \"dtype\": \"%s\"", fdts[t]);
        compare("rgb", "mean", args, 0);
        compare("rgb", "rms", args, 0);
        compare("i16", "mean_square", args, 0);
    }
}

static void float_inputs(void **state)
{
    (void)state;
    for (size_t k = 0; k < N(kinds); k++) {
        const bool exact = k < 2; /* min, max */
        for (size_t a = 0; a < N(axes); a++) {
            /* sums over whole images (~2e4) carry float32 ulps of ~2e-3 */
            const bool big = !strcmp(kinds[k], "sum") && (a == 0 || a == 1 || a == 2 || a == 6);
            compare("f32", kinds[k], axes[a], exact ? 0 : big ? 4e-3 : 1e-6);
            compare("fneg", kinds[k], axes[a], exact ? 0 : big ? 4e-3 : 1e-6);
        }
        compare("f16", kinds[k], "\"axes\": [0, 1]", exact ? 0 : 2e-2);
        /* a float64 sum of a whole image (~2e4) in another order: ~1e-11 apart */
        compare("f64", kinds[k], "", exact ? 0 : !strcmp(kinds[k], "sum") ? 1e-6 : 1e-12);
        compare("f64", kinds[k], "\"axes\": 2", exact ? 0 : 1e-12);
    }
    compare("f32", "sum", "\"axes\": [0, 1], \"dtype\": \"float64\"", 1e-6);
    compare("f64", "mean", "\"dtype\": \"float64\"", 1e-12);
    compare("f32", "mean", "\"axes\": [0, 1], \"dtype\": \"float16\"", 0);
}

static void empty_samples(void **state)
{
    (void)state;
    /* some samples have 0 columns: sums of nothing are 0, means NaN, shapes keep the 0 */
    for (size_t k = 2; k < N(kinds); k++) {
        compare("part", kinds[k], "", 0);
        compare("part", kinds[k], "\"axes\": [0, 1]", 0);
        compare("part", kinds[k], "\"axes\": 2", 0);
    }
    /* min / max of an empty set fail on the GPU as on the CPU, naming the sample */
    char node[256];
    snprintf(node, sizeof node,
             "{\"name\": \"op\", \"op\": \"reductions.max\", \"device\": \"$GPU\", \"inputs\": "
             "[\"in\"], \"args\": {\"axes\": 1}}");
    const char *spec = tu_gpu_tree_spec(16, 7, 3, "\"op\"", "%s, %s", source("part"), node);
    tu_gpu_expect_error(spec, true, SL_EINVAL, "max of an empty set", "sample", NULL);
}

/* std_dev / variance of `src` with the mean from reductions.mean (same axes, on the GPU) or a
 * constant (one value for all). */
static void deviation(const char *src, const char *kind, const char *axes_args, bool keep_mean,
                      bool const_mean, int ddof, double tol)
{
    char nodes[1024];
    if (const_mean)
        snprintf(nodes, sizeof nodes,
                 "%s, {\"name\": \"m\", \"op\": \"constant\", \"device\": \"$GPU\", \"args\": "
                 "{\"fdata\": [0.375]}},",
                 source(src));
    else
        snprintf(nodes, sizeof nodes,
                 "%s, {\"name\": \"m\", \"op\": \"reductions.mean\", \"device\": \"$GPU\", "
                 "\"inputs\": [\"in\"], \"args\": {%s%s\"keep_dims\": %s}},",
                 source(src), axes_args, axes_args[0] ? ", " : "", keep_mean ? "true" : "false");
    char node[512];
    snprintf(node, sizeof node,
             "{\"name\": \"op\", \"op\": \"reductions.%s\", \"device\": \"$GPU\", \"inputs\": "
             "[\"in\", \"m\"], \"args\": {%s%s\"ddof\": %d}}",
             kind, axes_args, axes_args[0] ? ", " : "", ddof);
    print_message("reductions.%s(%s) {%s} mean %s, ddof %d, tol %g\n", kind, src, axes_args,
                  const_mean  ? "constant"
                  : keep_mean ? "kept dims"
                              : "reduced",
                  ddof, tol);
    tu_diff d = tu_gpu_compare(tu_gpu_tree_spec(BATCH, 7, 3, "\"op\", \"m\"", "%s %s", nodes, node),
                               ITERS, tol);
    assert_true(d.elements > 0);
}

static void std_dev_and_variance(void **state)
{
    (void)state;
    static const char *const ax[] = {"", "\"axes\": [0, 1]", "\"axis_names\": \"C\"",
                                     "\"axes\": [1]"};
    static const char *const dev[] = {"std_dev", "variance"};
    for (size_t k = 0; k < N(dev); k++) {
        for (size_t a = 0; a < N(ax); a++) {
            deviation("rgb", dev[k], ax[a], a % 2 == 0, false, (int)a % 2, 1e-4);
            deviation("f32", dev[k], ax[a], a % 2 == 1, false, 0, 1e-6);
            deviation("fneg", dev[k], ax[a], false, false, 1, 1e-6);
        }
        deviation("f32", dev[k], "\"axes\": [0, 1]", false, true, 0, 1e-6);
        deviation("f64", dev[k], "", false, true, 1, 1e-9);
        deviation("i16", dev[k], "\"axes\": 2", false, false, 0, 1e-2);
        deviation("part", dev[k], "\"axes\": [0, 1]", false, false, 0, 1e-4);
        deviation("part", dev[k], "\"axes\": 2", true, false, 3, 1e-4);
    }
}

static void mean_mismatch_fails(void **state)
{
    (void)state;
    /* a mean of the wrong size: the same message as on the CPU, naming the sample */
    const char *spec = tu_gpu_tree_spec(
        BATCH, 7, 3, "\"op\"",
        "%s, {\"name\": \"m\", \"op\": \"reductions.mean\", \"device\": \"$GPU\", \"inputs\": "
        "[\"in\"], \"args\": {\"axes\": 2}}, {\"name\": \"op\", \"op\": \"reductions.std_dev\", "
        "\"device\": \"$GPU\", \"inputs\": [\"in\", \"m\"], \"args\": {\"axes\": [0, 1]}}",
        source("rgb"));
    tu_gpu_expect_error(spec, true, SL_EINVAL, "reductions.std_dev", "the mean of sample 0 has",
                        NULL);
}

int main(void)
{
    tu_gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uint8_all_axes),       cmocka_unit_test(integer_types_and_dtypes),
        cmocka_unit_test(float_inputs),         cmocka_unit_test(empty_samples),
        cmocka_unit_test(std_dev_and_variance), cmocka_unit_test(mean_mismatch_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
