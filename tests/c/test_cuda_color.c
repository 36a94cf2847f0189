/* tests/c/test_cuda_color.c: the GPU runs of the colour operators (ops/image/color.cu):
 * color_twist, hsv, hue, saturation, brightness, contrast, brightness_contrast and
 * color_space_conversion, each against the CPU operator on the same inputs (gpuutil.h).
 *
 * Runs on the device, or emulated on the host (the .emulated ctest entry), never skipped
 * silently. Inputs: JPEGs of the class tree (SLUICE_TEST_TREE, 40..120 px a side, odd sizes,
 * batches of differently shaped samples) decoded on "mixed" (uint8 RGB / BGR / GRAY) or on the
 * CPU and moved with copy: float32 in [0, 1] (arithmetic fdiv 255), 1x1 images (resize),
 * 4-channel images (cat of RGB and GRAY), YCbCr images (color_space_conversion), batches with
 * empty samples (slice to 0..3 columns). Per-sample
 * arguments come from random.uniform nodes, which stay on the CPU as in DALI.
 * Tolerance 0 everywhere: the GPU applies the CPU's per-sample matrix / mul + add (computed on
 * the host by the same code, hue's cos / sin included) with the same float32 operations in the
 * same order and nvcc --fmad=false, so uint8 and float32 outputs are bit-identical.
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

enum { BATCH = 4, ITERS = 3 };

/* The nodes producing GPU node "in" from the reader's output "reader:0", per input kind: these
 * and gpuutil's common ones (rgb, gray, tiny, rgba). */
static const char *source(const char *kind)
{
    static const tu_gpu_source src[] = {
        {"bgr", "{\"name\": \"in\", \"op\": \"decoders.image\", \"device\": \"$MIX\", \"inputs\": "
                "[\"reader:0\"], \"args\": {\"output_type\": \"BGR\"}}"},
        {"frgb",
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
         "{\"name\": \"s_f\", \"op\": \"arithmetic\", \"inputs\": [\"s_d\"], \"args\": "
         "{\"op\": \"fdiv\", \"scalar\": 255.0}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_f\"]}"},
        {"fgray",
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"], "
         "\"args\": {\"output_type\": \"GRAY\"}},"
         "{\"name\": \"s_f\", \"op\": \"arithmetic\", \"inputs\": [\"s_d\"], \"args\": "
         "{\"op\": \"fdiv\", \"scalar\": 255.0}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_f\"]}"},
        {"part", /* 0..3 columns of each image (random.uniform rel_shape): some are empty */
         "{\"name\": \"s_z\", \"op\": \"random.uniform\", \"args\": {\"range\": [0, 0.03], "
         "\"shape\": [2]}},"
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
         "{\"name\": \"s_s\", \"op\": \"slice\", \"inputs\": [\"s_d\"], \"args\": "
         "{\"axis_names\": \"WH\"}, \"arg_inputs\": {\"rel_shape\": \"s_z\"}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_s\"]}"},
        {"ycc",
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
         "{\"name\": \"s_y\", \"op\": \"color_space_conversion\", \"inputs\": [\"s_d\"], "
         "\"args\": {\"image_type\": \"RGB\", \"output_type\": \"YCbCr\"}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_y\"]}"},
    };
    return tu_gpu_source_json(src, sizeof src / sizeof src[0], kind);
}

/* A per-sample float argument input: random.uniform node `name` over [lo, hi]. */
static char *uniform(char *buf, size_t n, const char *name, double lo, double hi)
{
    snprintf(buf, n,
             "{\"name\": \"%s\", \"op\": \"random.uniform\", \"args\": {\"range\": [%g, %g]}},",
             name, lo, hi);
    return buf;
}

/* reader -> source(kind) -> `extra` nodes (each ending with a comma) -> node "op" on $GPU with
 * input "in" and the given "op", "args" and "arg_inputs" members (op_json); output "op". */
static const char *spec_of(const char *kind, const char *extra, const char *op_json)
{
    return tu_gpu_tree_spec(
        BATCH, 7, 3, "\"op\"",
        "%s, %s{\"name\": \"op\", \"device\": \"$GPU\", \"inputs\": [\"in\"], %s}", source(kind),
        extra ? extra : "", op_json);
}

/* Compares the gpu run of op_json on `kind` inputs with the CPU's: bit-identical. */
static void same(const char *kind, const char *extra, const char *op_json)
{
    print_message("%s: %s\n", kind, op_json);
    tu_diff d = tu_gpu_compare(spec_of(kind, extra, op_json), ITERS, 0);
    assert_true(d.elements > 0);
    assert_true(d.max_abs == 0);
}

/* hue, saturation, brightness, contrast as per-sample argument inputs */
static char args4[1024];
static const char *yiq_args(void)
{
    char a[4][200];
    snprintf(args4, sizeof args4, "%s%s%s%s", uniform(a[0], 200, "h", -180, 180),
             uniform(a[1], 200, "s", 0, 2), uniform(a[2], 200, "b", 0.5, 1.5),
             uniform(a[3], 200, "c", 0.5, 1.5));
    return args4;
}

static void color_twist_gpu(void **state)
{
    same("rgb", yiq_args(),
         "\"op\": \"color_twist\", \"arg_inputs\": {\"hue\": \"h\", \"saturation\": \"s\", "
         "\"brightness\": \"b\", \"contrast\": \"c\"}");
    same("bgr", yiq_args(),
         "\"op\": \"color_twist\", \"args\": {\"image_type\": \"BGR\", \"dtype\": \"float32\"}, "
         "\"arg_inputs\": {\"hue\": \"h\", \"saturation\": \"s\", \"contrast\": \"c\"}");
    same("frgb", NULL,
         "\"op\": \"color_twist\", \"args\": {\"hue\": 33.0, \"saturation\": 1.7, \"brightness\": "
         "1.2, \"contrast\": 1.4, \"dtype\": \"uint8\"}");
    same("frgb", yiq_args(),
         "\"op\": \"color_twist\", \"arg_inputs\": {\"hue\": \"h\", \"saturation\": \"s\", "
         "\"brightness\": \"b\", \"contrast\": \"c\"}");
    same("tiny", NULL, "\"op\": \"color_twist\", \"args\": {\"hue\": -120.0, \"contrast\": 2.0}");
    same("part", NULL, "\"op\": \"color_twist\", \"args\": {\"hue\": 10.0}");
}

static void hsv_hue_saturation_gpu(void **state)
{
    char a[3][200], extra[600];
    snprintf(extra, sizeof extra, "%s%s%s", uniform(a[0], 200, "h", -360, 360),
             uniform(a[1], 200, "s", 0, 3), uniform(a[2], 200, "v", 0.5, 1.5));
    same("rgb", extra,
         "\"op\": \"hsv\", \"arg_inputs\": {\"hue\": \"h\", \"saturation\": \"s\", \"value\": "
         "\"v\"}");
    same("frgb", extra,
         "\"op\": \"hsv\", \"args\": {\"dtype\": \"uint8\"}, \"arg_inputs\": {\"hue\": \"h\", "
         "\"saturation\": \"s\", \"value\": \"v\"}");
    same("bgr", extra,
         "\"op\": \"hue\", \"args\": {\"image_type\": \"BGR\", \"dtype\": \"float32\"}, "
         "\"arg_inputs\": {\"hue\": \"h\"}");
    same("frgb", extra, "\"op\": \"hue\", \"arg_inputs\": {\"hue\": \"h\"}");
    same("rgb", extra, "\"op\": \"saturation\", \"arg_inputs\": {\"saturation\": \"s\"}");
    same("frgb", extra,
         "\"op\": \"saturation\", \"args\": {\"dtype\": \"uint8\"}, \"arg_inputs\": "
         "{\"saturation\": \"s\"}");
}

static void brightness_contrast_gpu(void **state)
{
    char a[4][200], extra[800];
    snprintf(extra, sizeof extra, "%s%s%s%s", uniform(a[0], 200, "b", 0, 2),
             uniform(a[1], 200, "sh", -0.2, 0.2), uniform(a[2], 200, "c", 0, 2.5),
             uniform(a[3], 200, "cc", 0, 255));
    const char *all = "\"op\": \"brightness_contrast\", \"arg_inputs\": {\"brightness\": \"b\", "
                      "\"brightness_shift\": \"sh\", \"contrast\": \"c\", \"contrast_center\": "
                      "\"cc\"}";
    same("rgb", extra, all);
    same("gray", extra, all);
    same("rgba", extra, all);
    same("tiny", extra, all);
    same("part", extra, all);
    same("fgray", extra,
         "\"op\": \"brightness_contrast\", \"args\": {\"dtype\": \"uint8\"}, \"arg_inputs\": "
         "{\"brightness\": \"b\", \"brightness_shift\": \"sh\", \"contrast\": \"c\"}");
    same("frgb", extra,
         "\"op\": \"brightness_contrast\", \"args\": {\"contrast_center\": 0.25}, "
         "\"arg_inputs\": {\"brightness\": \"b\", \"contrast\": \"c\"}");
    same("gray", extra,
         "\"op\": \"brightness\", \"args\": {\"dtype\": \"float32\"}, \"arg_inputs\": "
         "{\"brightness\": \"b\", \"brightness_shift\": \"sh\"}");
    same("frgb", extra, "\"op\": \"brightness\", \"arg_inputs\": {\"brightness\": \"b\"}");
    same("rgb", extra,
         "\"op\": \"contrast\", \"args\": {\"contrast_center\": 100.0}, \"arg_inputs\": "
         "{\"contrast\": \"c\"}");
    same("fgray", extra, "\"op\": \"contrast\", \"arg_inputs\": {\"contrast\": \"c\"}");
}

static void color_space_conversion_gpu(void **state)
{
    static const char *const cases[][3] = {
        {"rgb", "RGB", "YCbCr"},   {"rgb", "RGB", "GRAY"},   {"rgb", "RGB", "BGR"},
        {"bgr", "BGR", "YCbCr"},   {"bgr", "BGR", "GRAY"},   {"gray", "GRAY", "RGB"},
        {"gray", "GRAY", "YCbCr"}, {"ycc", "YCbCr", "RGB"},  {"ycc", "YCbCr", "GRAY"},
        {"ycc", "YCbCr", "BGR"},   {"frgb", "RGB", "YCbCr"}, {"frgb", "RGB", "GRAY"},
        {"fgray", "GRAY", "BGR"},  {"tiny", "RGB", "YCbCr"}, {"part", "RGB", "GRAY"},
        {"gray", "GRAY", "GRAY"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char op[256];
        snprintf(op, sizeof op,
                 "\"op\": \"color_space_conversion\", \"args\": {\"image_type\": \"%s\", "
                 "\"output_type\": \"%s\"}",
                 cases[k][1], cases[k][2]);
        same(cases[k][0], NULL, op);
    }
}

/* A YIQ operator on grayscale images fails on the GPU as on the CPU, naming itself. */
static void gray_rejected_like_the_cpu(void **state)
{
    tu_gpu_expect_error(spec_of("gray", NULL, "\"op\": \"color_twist\""), true, TU_ANY_FAILURE,
                        "color_twist", "expected RGB or BGR images (3 channels), got 1 channel",
                        NULL);
}

int main(void)
{
    tu_gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(color_twist_gpu),
        cmocka_unit_test(hsv_hue_saturation_gpu),
        cmocka_unit_test(brightness_contrast_gpu),
        cmocka_unit_test(color_space_conversion_gpu),
        cmocka_unit_test(gray_rejected_like_the_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
