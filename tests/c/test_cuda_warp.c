/* tests/c/test_cuda_warp.c: the gpu runs of rotate and warp_affine (ops/image/affine.cu,
 * affine.cuh) against their CPU operators.
 *
 * Runs on the device, or emulated on the host (the .emulated ctest entry), never skipped
 * silently (gpuutil.h). Each test builds one spec twice ("$GPU" = cpu / gpu) and compares every
 * output element. Tolerance 0 everywhere: the matrices are computed on the host by the CPU
 * operator's own code, and the kernel evaluates the CPU kernel's float32 expressions in the
 * same order without FMA contraction (--fmad=false), so uint8 and float32 outputs agree bit for
 * bit (no transcendental function runs on the device).
 * Covers: rotate with constant and per-sample angles (random.uniform), bounding-box, keep_size
 * and per-sample `size` outputs; warp_affine with a constant matrix, inverse_map true / false,
 * per-sample matrices, `size`; NN and LINEAR; with and without fill_value (one value, one per
 * channel); uint8 and float32 inputs and outputs (dtype); 1, 3, 4 and 5 channels; 1x1 and
 * empty images; batches of differently sized images (the JPEG tree, 40..120 px a side). And the
 * errors: the `mtx` input on the GPU, a singular matrix with inverse_map=false.
 * Data: the JPEG class tree of tests/data/make_tree.py (SLUICE_TEST_TREE).
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

/* The images every spec starts from, as node "img" (on the GPU in the gpu pipeline). */
typedef enum src_kind {
    U8_RGB,   /* decoders.image on $MIX */
    U8_GRAY,  /* decoders.image GRAY on $MIX */
    F32_RGB,  /* decoded on the CPU, cast to float32, copied with $MIX */
    F32_GRAY, /* likewise, GRAY */
    U8_C4,    /* cat(RGB, GRAY) along the channels, copied with $MIX */
    U8_C5,    /* cat(RGB, GRAY, GRAY) */
} src_kind;

static const char *source_nodes(src_kind k)
{
    static char s[2048];
    const char *color = k == U8_GRAY || k == F32_GRAY ? "GRAY" : "RGB";
    if (k == U8_RGB || k == U8_GRAY) {
        snprintf(s, sizeof s,
                 "{\"name\": \"img\", \"op\": \"decoders.image\", \"device\": \"$MIX\","
                 " \"inputs\": [\"reader:0\"], \"args\": {\"output_type\": \"%s\"}}",
                 color);
    } else if (k == F32_RGB || k == F32_GRAY) {
        snprintf(
            s, sizeof s,
            "{\"name\": \"dec\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"],"
            " \"args\": {\"output_type\": \"%s\"}},"
            "{\"name\": \"f32\", \"op\": \"cast\", \"inputs\": [\"dec\"],"
            " \"args\": {\"dtype\": \"float32\"}},"
            "{\"name\": \"img\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"f32\"]}",
            color);
    } else {
        snprintf(s, sizeof s,
                 "{\"name\": \"rgb\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
                 "{\"name\": \"gray\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"],"
                 " \"args\": {\"output_type\": \"GRAY\"}},"
                 "{\"name\": \"c\", \"op\": \"cat\", \"inputs\": [\"rgb\", \"gray\"%s],"
                 " \"args\": {\"axis\": 2}},"
                 "{\"name\": \"img\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"c\"]}",
                 k == U8_C5 ? ", \"gray\"" : "");
    }
    return s;
}

/* reader -> "img" (source_nodes) -> the test's nodes; outputs as given (a JSON list body). */
static const char *make_spec(int batch, src_kind k, const char *nodes, const char *outputs)
{
    return tu_gpu_tree_spec(batch, 11, 3, outputs, "%s, %s", source_nodes(k), nodes);
}

/* Compares and checks that a meaningful number of elements went through. */
static void compare(const char *s, int iterations)
{
    tu_diff d = tu_gpu_compare(s, iterations, 0);
    assert_true(d.elements > 10000);
    assert_true(d.max_abs == 0);
}

/* ---- rotate ---------------------------------------------------------------------------------- */

static void rotate_constant_angle(void **state)
{
    const char *nodes =
        "{\"name\": \"lin\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"args\": {\"angle\": 30}},"
        "{\"name\": \"nn\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"args\": {\"angle\": -117.5, \"interp_type\": \"INTERP_NN\","
        "  \"fill_value\": [10, 200, 30]}},"
        "{\"name\": \"quarter\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"args\": {\"angle\": 90, \"fill_value\": 255}}";
    compare(make_spec(5, U8_RGB, nodes, "\"lin\", \"nn\", \"quarter\""), 2);
}

static void rotate_random_angles(void **state)
{
    const char *nodes =
        "{\"name\": \"a\", \"op\": \"random.uniform\", \"args\": {\"range\": [-180, 180]}},"
        "{\"name\": \"lin\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"arg_inputs\": {\"angle\": \"a\"}, \"args\": {\"fill_value\": 0}},"
        "{\"name\": \"nn\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"arg_inputs\": {\"angle\": \"a\"}, \"args\": {\"interp_type\": \"INTERP_NN\"}}";
    compare(make_spec(6, U8_RGB, nodes, "\"lin\", \"nn\""), 3);
}

static void rotate_keep_size_and_size_gray(void **state)
{
    const char *nodes =
        "{\"name\": \"a\", \"op\": \"random.uniform\", \"args\": {\"range\": [-60, 60]}},"
        "{\"name\": \"hw\", \"op\": \"random.uniform\", \"args\": {\"range\": [17, 95], "
        "\"shape\": [2]}},"
        "{\"name\": \"keep\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"arg_inputs\": {\"angle\": \"a\"}, \"args\": {\"keep_size\": true, \"fill_value\": "
        "128}},"
        "{\"name\": \"sized\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"arg_inputs\": {\"angle\": \"a\", \"size\": \"hw\"},"
        " \"args\": {\"interp_type\": \"INTERP_NN\"}},"
        "{\"name\": \"box\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"arg_inputs\": {\"angle\": \"a\"}}";
    compare(make_spec(5, U8_GRAY, nodes, "\"keep\", \"sized\", \"box\""), 2);
}

static void rotate_float32(void **state)
{
    const char *nodes =
        "{\"name\": \"a\", \"op\": \"random.uniform\", \"args\": {\"range\": [-180, 180]}},"
        "{\"name\": \"f\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"arg_inputs\": {\"angle\": \"a\"}, \"args\": {\"fill_value\": [0.5, -3, 1000]}},"
        "{\"name\": \"u\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"arg_inputs\": {\"angle\": \"a\"}, \"args\": {\"dtype\": \"uint8\", \"fill_value\":"
        " [0.5, -3, 1000]}},"
        "{\"name\": \"nn\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"arg_inputs\": {\"angle\": \"a\"}, \"args\": {\"interp_type\": \"INTERP_NN\","
        "  \"keep_size\": true}}";
    compare(make_spec(4, F32_RGB, nodes, "\"f\", \"u\", \"nn\""), 2);
}

static void rotate_gray_float32_and_uint8_to_float32(void **state)
{
    const char *f32 =
        "{\"name\": \"r\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"args\": {\"angle\": 12.25, \"keep_size\": true}}";
    compare(make_spec(4, F32_GRAY, f32, "\"r\""), 2);
    const char *u8 =
        "{\"name\": \"r\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"args\": {\"angle\": -200, \"dtype\": \"float32\", \"fill_value\": 7}}";
    compare(make_spec(4, U8_RGB, u8, "\"r\""), 2);
}

/* ---- warp_affine -------------------------------------------------------------------------------
 */

static void warp_constant_matrix(void **state)
{
    const char *nodes =
        "{\"name\": \"lin\", \"op\": \"warp_affine\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"args\": {\"matrix\": [0.8, 0.3, -5, -0.25, 1.1, 7.5]}},"
        "{\"name\": \"nn\", \"op\": \"warp_affine\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"args\": {\"matrix\": [0.8, 0.3, -5, -0.25, 1.1, 7.5], \"interp_type\": "
        "\"INTERP_NN\", \"fill_value\": [1, 2, 3]}},"
        "{\"name\": \"fwd\", \"op\": \"warp_affine\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"args\": {\"matrix\": [0.8, 0.3, -5, -0.25, 1.1, 7.5], \"inverse_map\": false,"
        "  \"size\": [50, 61], \"fill_value\": 99}},"
        "{\"name\": \"fwdnn\", \"op\": \"warp_affine\", \"device\": \"$GPU\", \"inputs\": "
        "[\"img\"], \"args\": {\"matrix\": [1.5, 0, 0.25, 0, 2, -3], \"inverse_map\": false,"
        "  \"interp_type\": \"INTERP_NN\", \"size\": [101.4, 33.6]}}";
    compare(make_spec(5, U8_RGB, nodes, "\"lin\", \"nn\", \"fwd\", \"fwdnn\""), 2);
}

static void warp_per_sample_matrices(void **state)
{
    const char *nodes =
        "{\"name\": \"m\", \"op\": \"random.uniform\", \"args\": {\"range\": [-0.5, 1.5], "
        "\"shape\": [6]}},"
        "{\"name\": \"inv\", \"op\": \"warp_affine\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"arg_inputs\": {\"matrix\": \"m\"}, \"args\": {\"fill_value\": 77}},"
        "{\"name\": \"fwd\", \"op\": \"warp_affine\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"arg_inputs\": {\"matrix\": \"m\"}, \"args\": {\"inverse_map\": false, "
        "\"interp_type\": \"INTERP_NN\"}}";
    compare(make_spec(6, U8_RGB, nodes, "\"inv\", \"fwd\""), 3);
}

static void warp_float32_gray_per_sample_size(void **state)
{
    const char *nodes =
        "{\"name\": \"m\", \"op\": \"random.uniform\", \"args\": {\"range\": [-1, 2], "
        "\"shape\": [6]}},"
        "{\"name\": \"hw\", \"op\": \"random.uniform\", \"args\": {\"range\": [1, 70], "
        "\"shape\": [2]}},"
        "{\"name\": \"f\", \"op\": \"warp_affine\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"arg_inputs\": {\"matrix\": \"m\", \"size\": \"hw\"}},"
        "{\"name\": \"u\", \"op\": \"warp_affine\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"arg_inputs\": {\"matrix\": \"m\"}, \"args\": {\"dtype\": \"uint8\", "
        "\"inverse_map\": false, \"fill_value\": -4}}";
    compare(make_spec(5, F32_GRAY, nodes, "\"f\", \"u\""), 2);
}

static void warp_four_and_five_channels(void **state)
{
    const char *nodes =
        "{\"name\": \"a\", \"op\": \"random.uniform\", \"args\": {\"range\": [-180, 180]}},"
        "{\"name\": \"lin\", \"op\": \"warp_affine\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"args\": {\"matrix\": [0.7, -0.7, 20, 0.7, 0.7, -10], \"fill_value\": 250}},"
        "{\"name\": \"nn\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"arg_inputs\": {\"angle\": \"a\"}, \"args\": {\"interp_type\": \"INTERP_NN\"}},"
        "{\"name\": \"rot\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"arg_inputs\": {\"angle\": \"a\"}}";
    compare(make_spec(4, U8_C4, nodes, "\"lin\", \"nn\", \"rot\""), 2);
    compare(make_spec(4, U8_C5, nodes, "\"lin\", \"nn\", \"rot\""), 2);
}

/* 1x1 uint8 inputs (made by a CPU warp of the decoded images) and 1-pixel float32 outputs;
 * empty inputs (a slice of height 0). */
static void tiny_and_empty_images(void **state)
{
    const char *tiny =
        "{\"name\": \"one\", \"op\": \"warp_affine\", \"inputs\": [\"dec\"],"
        " \"args\": {\"matrix\": [40, 0, 0, 0, 40, 0], \"size\": [1, 1]}},"
        "{\"name\": \"g\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"one\"]},"
        "{\"name\": \"rot\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"g\"],"
        " \"args\": {\"angle\": 45}},"
        "{\"name\": \"wl\", \"op\": \"warp_affine\", \"device\": \"$GPU\", \"inputs\": [\"g\"],"
        " \"args\": {\"matrix\": [0.3, 0.1, -0.2, 0, 0.5, 0.1], \"size\": [3, 5]}},"
        "{\"name\": \"wf\", \"op\": \"warp_affine\", \"device\": \"$GPU\", \"inputs\": [\"g\"],"
        " \"args\": {\"matrix\": [0.3, 0.1, -0.2, 0, 0.5, 0.1], \"size\": [3, 5], "
        "\"fill_value\": [9, 8, 7]}},"
        "{\"name\": \"px\", \"op\": \"warp_affine\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"args\": {\"matrix\": [1, 0, 20, 0, 1, 20], \"size\": [1, 1], \"interp_type\": "
        "\"INTERP_NN\"}}";
    tu_gpu_compare(make_spec(4, F32_RGB, tiny, "\"rot\", \"wl\", \"wf\", \"px\""), 2, 0);
    /* a slice of height 0: the outputs are fill_value (rotate's 0-degree box is empty) */
    const char *empty =
        "{\"name\": \"e\", \"op\": \"slice\", \"inputs\": [\"dec\"], \"args\": {\"start\": [0, 0], "
        "\"shape\": [20, 0]}},"
        "{\"name\": \"g\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"e\"]},"
        "{\"name\": \"w\", \"op\": \"warp_affine\", \"device\": \"$GPU\", \"inputs\": [\"g\"],"
        " \"args\": {\"matrix\": [1, 0, 0, 0, 1, 0], \"size\": [4, 6], \"fill_value\": 300}},"
        "{\"name\": \"r\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"g\"],"
        " \"args\": {\"angle\": 0, \"fill_value\": 5}},"
        "{\"name\": \"s\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"g\"],"
        " \"args\": {\"angle\": 33, \"size\": [5, 3], \"fill_value\": [1.5, 2.5, 3.5], "
        "\"dtype\": \"float32\"}}";
    tu_diff d = tu_gpu_compare(make_spec(3, F32_RGB, empty, "\"w\", \"r\", \"s\""), 2, 0);
    assert_true(d.elements == 2 * 3 * (4 * 6 * 3 + 5 * 3 * 3));
}

/* ---- errors ------------------------------------------------------------------------------------
 */

static void errors_name_the_operator(void **state)
{
    const char *mtx =
        "{\"name\": \"m\", \"op\": \"random.uniform\", \"args\": {\"range\": [0.5, 1.5], "
        "\"shape\": [6]}},"
        "{\"name\": \"gm\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"m\"]},"
        "{\"name\": \"w\", \"op\": \"warp_affine\", \"device\": \"$GPU\", \"inputs\": [\"img\", "
        "\"gm\"]}";
    tu_gpu_expect_error(make_spec(2, U8_RGB, mtx, "\"w\""), true, SL_EUNSUPPORTED, "warp_affine",
                        "`mtx` input", "`matrix` argument", NULL);
    const char *singular =
        "{\"name\": \"w\", \"op\": \"warp_affine\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"args\": {\"matrix\": [1, 2, 0, 2, 4, 0], \"inverse_map\": false}}";
    /* the sample and its file are named, as on the CPU (sl_ctx_focus_sample) */
    tu_gpu_expect_error(make_spec(2, U8_RGB, singular, "\"w\""), true, SL_EINVAL, "warp_affine",
                        "iteration 0, sample 0, file", ".jpg", "not invertible", NULL);
    const char *fill =
        "{\"name\": \"r\", \"op\": \"rotate\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"args\": {\"angle\": 10, \"fill_value\": [1, 2]}}";
    tu_gpu_expect_error(make_spec(2, U8_RGB, fill, "\"r\""), true, SL_EINVAL, "rotate", "sample 0",
                        "fill_value has 2 values", NULL);
}

int main(void)
{
    tu_gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rotate_constant_angle),
        cmocka_unit_test(rotate_random_angles),
        cmocka_unit_test(rotate_keep_size_and_size_gray),
        cmocka_unit_test(rotate_float32),
        cmocka_unit_test(rotate_gray_float32_and_uint8_to_float32),
        cmocka_unit_test(warp_constant_matrix),
        cmocka_unit_test(warp_per_sample_matrices),
        cmocka_unit_test(warp_float32_gray_per_sample_size),
        cmocka_unit_test(warp_four_and_five_channels),
        cmocka_unit_test(tiny_and_empty_images),
        cmocka_unit_test(errors_name_the_operator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
