/* tests/c/test_cuda_resize.c: resize and random_resized_crop on device "gpu" (resample.cu,
 * resample.cuh) against the same operators on "cpu".
 *
 * Runs on the device, or emulated on the host (the .emulated ctest entry), never skipped
 * silently (gpuutil.h). Each test builds one spec twice (tu_gpu_compare): images decoded on
 * $MIX (or made on the CPU and moved with copy on $MIX) go through many resize /
 * random_resized_crop nodes on $GPU, every node an output. Covered: every interpolation type,
 * antialias on and off, downscaling, upscaling and one axis of each, min_filter / mag_filter,
 * uint8 and float32 inputs with uint8 and float32 outputs (all four pass types, both pass
 * orders), RGB, GRAY, 4 channels, 1-pixel and empty images, every sizing argument (resize_x / _y,
 * size, resize_shorter / _longer, max_size, the four modes, ROIs absolute, relative, reversed,
 * degenerate and reaching outside the image, negative sizes, subpixel_scale off, identity and
 * one-axis resizes), per-sample argument inputs from random.uniform, and random_resized_crop
 * with a seed (its windows are drawn on the CPU, so both pipelines resample the same ones).
 *
 * Tolerance: 0 everywhere. The GPU passes use the CPU's plans and coefficient tables (computed
 * by the same host functions), its pass order and intermediate type, and per element the same
 * integer (uint8 -> uint8) or float32 operations in the same order; kernels are built with
 * --fmad=false, so no product is fused into an FMA and float32 outputs round identically.
 * Data: the JPEG class tree of tests/data/make_tree.py (SLUICE_TEST_TREE), 40..120 px a side.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "gpuutil.h"
#include "ops/image/resample.h"
#include "testutil.h"

/* ---- spec builder ---------------------------------------------------------------------- */

static char spec[1 << 17];
static char outs[1 << 13];
static size_t spec_len, outs_len;

static void put(char *buf, size_t cap, size_t *len, const char *fmt, va_list ap)
{
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    assert_true(n >= 0 && (size_t)n < cap - *len);
    *len += (size_t)n;
}

static void add(const char *fmt, ...) SL_PRINTF(1, 2);
static void add(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    put(spec, sizeof spec, &spec_len, fmt, ap);
    va_end(ap);
}

static void add_out(const char *fmt, ...) SL_PRINTF(1, 2);
static void add_out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    put(outs, sizeof outs, &outs_len, fmt, ap);
    va_end(ap);
}

/* Input images of the nodes added next, named "img". */
enum source {
    U8_RGB,  /* decoders.image RGB on $MIX */
    U8_GRAY, /* decoders.image GRAY on $MIX */
    F32_RGB, /* decoded RGB, cast to float32 on the CPU, copy on $MIX */
    U8_RGBA, /* RGB and GRAY joined along C (4 channels) on the CPU, copy on $MIX */
    U8_TINY, /* RGB cropped to 1 x 1 on the CPU, copy on $MIX */
    U8_EMPTY /* RGB sliced to 0 x 7 on the CPU, copy on $MIX */
};

static void begin(int batch, enum source src)
{
    spec_len = outs_len = 0;
    add("{\"pipeline\": {\"batch_size\": %d, \"num_threads\": 2, \"prefetch_queue_depth\": 2,"
        " \"seed\": 11}, \"nodes\": ["
        "{\"name\": \"reader\", \"op\": \"readers.file\", \"args\": {\"file_root\": \"%s\","
        " \"random_shuffle\": true, \"seed\": 5}}",
        batch, tu_env_dir("SLUICE_TEST_TREE"));
    const char *dec = ", {\"name\": \"%s\", \"op\": \"decoders.image\", \"device\": \"%s\","
                      " \"inputs\": [\"reader:0\"], \"args\": {\"output_type\": \"%s\"}}";
    switch (src) {
    case U8_RGB: add(dec, "img", "$MIX", "RGB"); break;
    case U8_GRAY: add(dec, "img", "$MIX", "GRAY"); break;
    case F32_RGB:
        add(dec, "dec", "cpu", "RGB");
        add(", {\"name\": \"f\", \"op\": \"cast\", \"inputs\": [\"dec\"],"
            " \"args\": {\"dtype\": \"float32\"}}"
            ", {\"name\": \"img\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"f\"]}");
        break;
    case U8_RGBA:
        add(dec, "dec", "cpu", "RGB");
        add(dec, "gray", "cpu", "GRAY");
        add(", {\"name\": \"rgba\", \"op\": \"cat\", \"inputs\": [\"dec\", \"gray\"],"
            " \"args\": {\"axis\": 2}}"
            ", {\"name\": \"img\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": "
            "[\"rgba\"]}");
        break;
    case U8_TINY:
        add(dec, "dec", "cpu", "RGB");
        add(", {\"name\": \"tiny\", \"op\": \"crop\", \"inputs\": [\"dec\"],"
            " \"args\": {\"crop\": [1, 1], \"crop_pos_x\": 0.3}}"
            ", {\"name\": \"img\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": "
            "[\"tiny\"]}");
        break;
    case U8_EMPTY:
        add(dec, "dec", "cpu", "RGB");
        add(", {\"name\": \"empty\", \"op\": \"slice\", \"inputs\": [\"dec\"],"
            " \"args\": {\"start\": [2, 3], \"shape\": [7, 0]}}"
            ", {\"name\": \"img\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": "
            "[\"empty\"]}");
        break;
    }
}

/* A node of `op` on $GPU reading "img", with args (JSON members) and optional arg_inputs; it
 * becomes an output. */
static void gpu_node(const char *op, const char *args, const char *arg_inputs)
{
    static int k;
    k++;
    add(", {\"name\": \"n%d\", \"op\": \"%s\", \"device\": \"$GPU\", \"inputs\": [\"img\"],"
        " \"args\": {%s}%s%s%s}",
        k, op, args, arg_inputs ? ", \"arg_inputs\": {" : "", arg_inputs ? arg_inputs : "",
        arg_inputs ? "}" : "");
    add_out("%s\"n%d\"", outs_len ? ", " : "", k);
}

static void resize(const char *fmt, ...) SL_PRINTF(1, 2);
static void resize(const char *fmt, ...)
{
    char args[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    gpu_node("resize", args, NULL);
}

static const char *end(void)
{
    add("], \"outputs\": [%s]}", outs);
    return spec;
}

static const char *const interps[] = {"INTERP_NN",       "INTERP_LINEAR",     "INTERP_CUBIC",
                                      "INTERP_LANCZOS3", "INTERP_TRIANGULAR", "INTERP_GAUSSIAN"};
#define NINTERP (int)(sizeof interps / sizeof interps[0])

/* Sizes (resize_y, resize_x) of the filter tests: down, up, and y down with x up. */
static const int sizes[][2] = {{27, 33}, {150, 131}, {23, 140}};

/* Every filter, antialias on and off, every size; dtype: "" or ", \"dtype\": \"...\"". */
static void all_filters(const char *dtype)
{
    for (int f = 0; f < NINTERP; f++)
        for (int aa = 0; aa < 2; aa++)
            for (int s = 0; s < 3; s++)
                resize("\"interp_type\": \"%s\", \"antialias\": %s, \"resize_y\": %d, "
                       "\"resize_x\": %d%s",
                       interps[f], aa ? "true" : "false", sizes[s][0], sizes[s][1], dtype);
}

static void check(const char *json, int iterations)
{
    tu_diff d = tu_gpu_compare(json, iterations, 0);
    assert_true(d.elements > 0);
    assert_true(d.max_abs == 0);
}

/* ---- tests ----------------------------------------------------------------------------- */

/* The float32 sizes above exercise both pass orders of resample.c's cost model (and uint8 ->
 * uint8 always goes horizontal first), so both orders of the GPU passes are compared. */
static void sizes_cover_both_pass_orders(void **state)
{
    bool seen[2] = {false, false};
    for (int s = 0; s < 3; s++) {
        sl__resample_plan p = {.y = {.in = 100,
                                     .out = sizes[s][0],
                                     .lo = 0,
                                     .hi = 100,
                                     .filter = SL__FILTER_LINEAR,
                                     .antialias = true},
                               .x = {.in = 100,
                                     .out = sizes[s][1],
                                     .lo = 0,
                                     .hi = 100,
                                     .filter = SL__FILTER_LINEAR,
                                     .antialias = true},
                               .c = 3,
                               .in_type = SL_DTYPE_FLOAT32,
                               .out_type = SL_DTYPE_FLOAT32};
        sl__resample_plan_init(&p);
        seen[p.vertical_first] = true;
    }
    assert_true(seen[0] && seen[1]);
}

static void filters_uint8_rgb(void **state)
{
    begin(4, U8_RGB);
    all_filters("");
    check(end(), 2);
}

static void filters_uint8_gray(void **state)
{
    begin(4, U8_GRAY);
    all_filters("");
    check(end(), 2);
}

static void filters_float32(void **state)
{
    begin(3, F32_RGB);
    all_filters("");
    check(end(), 2);
}

/* float32 -> uint8 (rounded, clamped: CUBIC / LANCZOS3 overshoot) and uint8 -> float32. */
static void filters_type_changes(void **state)
{
    begin(3, F32_RGB);
    all_filters(", \"dtype\": \"uint8\"");
    check(end(), 2);
    begin(3, U8_RGB);
    all_filters(", \"dtype\": \"float32\"");
    check(end(), 2);
}

static void four_channels_single_pixels_empty_images(void **state)
{
    begin(3, U8_RGBA);
    for (int f = 0; f < NINTERP; f++)
        for (int s = 0; s < 3; s++)
            resize("\"interp_type\": \"%s\", \"resize_y\": %d, \"resize_x\": %d", interps[f],
                   sizes[s][0], sizes[s][1]);
    check(end(), 2);
    begin(3, U8_TINY);
    for (int f = 0; f < NINTERP; f++) {
        resize("\"interp_type\": \"%s\", \"resize_y\": 5, \"resize_x\": 7", interps[f]);
        resize("\"interp_type\": \"%s\", \"resize_y\": 1, \"resize_x\": 1", interps[f]);
        resize("\"interp_type\": \"%s\", \"resize_y\": 3, \"resize_x\": 1, \"dtype\": "
               "\"float32\"",
               interps[f]);
    }
    check(end(), 2);
    /* empty in, empty out (as the CPU op: not_larger gives an empty output, stretch keeps) */
    begin(3, U8_EMPTY);
    resize("\"size\": [20, 30], \"mode\": \"not_larger\"");
    resize("\"resize_x\": 0, \"mode\": \"stretch\", \"dtype\": \"float32\"");
    resize("\"resize_shorter\": 9, \"interp_type\": \"INTERP_NN\"");
    tu_diff d = tu_gpu_compare(end(), 2, 0);
    assert_true(d.elements == 0);
}

/* Every sizing argument and ROI path, for one input type; dtype as in all_filters. */
static void sizing_nodes(const char *dtype)
{
    static const char *const cases[] = {
        "\"size\": 45",
        "\"size\": [61, 29], \"interp_type\": \"INTERP_CUBIC\"",
        "\"resize_shorter\": 50, \"interp_type\": \"INTERP_LANCZOS3\"",
        "\"resize_shorter\": 90, \"max_size\": 100",
        "\"resize_longer\": 64.4, \"interp_type\": \"INTERP_GAUSSIAN\"",
        "\"resize_longer\": 64.4, \"subpixel_scale\": false",
        "\"size\": [40, 200], \"mode\": \"not_larger\"",
        "\"size\": [40, 90], \"mode\": \"not_smaller\", \"max_size\": [0, 150]",
        "\"resize_y\": 57, \"mode\": \"stretch\"", /* x unchanged: skipped */
        "\"resize_x\": 57, \"mode\": \"stretch\"", /* y skipped */
        "\"resize_x\": 0, \"mode\": \"stretch\"",  /* identity: a copy */
        "\"resize_x\": 0, \"mode\": \"stretch\", \"interp_type\": \"INTERP_NN\"",
        "\"resize_x\": 33.7",                  /* y by the aspect ratio */
        "\"resize_y\": -41, \"resize_x\": 52", /* mirrored vertically */
        "\"resize_y\": 60, \"resize_x\": -30, \"interp_type\": \"INTERP_NN\"",
        "\"size\": [64, 48], \"roi_start\": [10.5, 3.25], \"roi_end\": [30, 38.5]",
        "\"size\": [64, 48], \"roi_start\": [0.1, 0.9], \"roi_end\": [0.8, 0.2], "
        "\"roi_relative\": true, \"interp_type\": \"INTERP_CUBIC\"",
        "\"size\": [32, 30], \"roi_start\": [-20, -15], \"roi_end\": [150, 40]",
        "\"size\": [16, 24], \"roi_start\": [-90, 200], \"roi_end\": [-60, 260], "
        "\"interp_type\": \"INTERP_LANCZOS3\"", /* wholly outside: nearest edge pixels */
        "\"size\": [20, 20], \"roi_start\": [12, 7], \"roi_end\": [12, 7.0001]", /* degenerate */
        "\"size\": [70, 20], \"min_filter\": \"INTERP_LANCZOS3\", \"mag_filter\": "
        "\"INTERP_NN\"",
        "\"size\": [70, 20], \"min_filter\": \"INTERP_NN\", \"mag_filter\": \"INTERP_CUBIC\", "
        "\"antialias\": false",
    };
    for (int k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++)
        resize("%s%s", cases[k], dtype);
}

static void sizing_arguments_uint8(void **state)
{
    begin(4, U8_RGB);
    sizing_nodes("");
    check(end(), 2);
}

static void sizing_arguments_float32(void **state)
{
    begin(3, F32_RGB);
    sizing_nodes("");
    sizing_nodes(", \"dtype\": \"uint8\"");
    check(end(), 2);
}

/* Sizes and ROIs given per sample by random.uniform nodes (CPU) as argument inputs. */
static void argument_inputs(void **state)
{
    for (int src = 0; src < 2; src++) {
        begin(5, src ? F32_RGB : U8_RGB);
        add(", {\"name\": \"rx\", \"op\": \"random.uniform\", \"args\": {\"range\": [8, 150]}}"
            ", {\"name\": \"ry\", \"op\": \"random.uniform\", \"args\": {\"range\": [-60, 140]}}"
            ", {\"name\": \"hw\", \"op\": \"random.uniform\", \"args\": {\"range\": [5, 130],"
            " \"shape\": [2]}}"
            ", {\"name\": \"r0\", \"op\": \"random.uniform\", \"args\": {\"range\": [-0.2, 0.5],"
            " \"shape\": [2]}}"
            ", {\"name\": \"r1\", \"op\": \"random.uniform\", \"args\": {\"range\": [0.4, 1.2],"
            " \"shape\": [2]}}");
        gpu_node("resize", "\"interp_type\": \"INTERP_CUBIC\"",
                 "\"resize_x\": \"rx\", \"resize_y\": \"ry\"");
        gpu_node("resize", "\"interp_type\": \"INTERP_LINEAR\", \"antialias\": false",
                 "\"size\": \"hw\"");
        gpu_node("resize", "\"interp_type\": \"INTERP_NN\"", "\"size\": \"hw\"");
        gpu_node("resize", "\"resize_x\": 40, \"interp_type\": \"INTERP_LANCZOS3\"",
                 "\"resize_y\": \"rx\"");
        gpu_node("resize", "\"size\": [50, 45], \"roi_relative\": true",
                 "\"roi_start\": \"r0\", \"roi_end\": \"r1\"");
        gpu_node("resize", "\"roi_relative\": true, \"interp_type\": \"INTERP_GAUSSIAN\"",
                 "\"size\": \"hw\", \"roi_start\": \"r1\", \"roi_end\": \"r0\"");
        gpu_node("resize", "\"mode\": \"not_smaller\", \"max_size\": 120",
                 "\"resize_y\": \"rx\", \"resize_x\": \"rx\"");
        check(end(), 3);
    }
}

/* Windows drawn on the CPU from the seed (the same in both pipelines), resampled on the GPU. */
static void random_resized_crop(void **state)
{
    static const enum source srcs[] = {U8_RGB, U8_GRAY, F32_RGB};
    for (int k = 0; k < 3; k++) {
        begin(4, srcs[k]);
        for (int f = 0; f < NINTERP; f++) {
            char a[256];
            snprintf(a, sizeof a, "\"size\": [37, 53], \"interp_type\": \"%s\", \"seed\": %d",
                     interps[f], 100 + f);
            gpu_node("random_resized_crop", a, NULL);
            snprintf(a, sizeof a,
                     "\"size\": [150, 131], \"interp_type\": \"%s\", \"antialias\": false, "
                     "\"random_area\": [0.02, 0.5], \"seed\": %d%s",
                     interps[f], 200 + f, k == 2 ? ", \"dtype\": \"uint8\"" : "");
            gpu_node("random_resized_crop", a, NULL);
        }
        gpu_node("random_resized_crop", "\"size\": 64, \"dtype\": \"float32\"", NULL);
        check(end(), 2);
    }
}

int main(void)
{
    tu_gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes_cover_both_pass_orders),
        cmocka_unit_test(filters_uint8_rgb),
        cmocka_unit_test(filters_uint8_gray),
        cmocka_unit_test(filters_float32),
        cmocka_unit_test(filters_type_changes),
        cmocka_unit_test(four_channels_single_pixels_empty_images),
        cmocka_unit_test(sizing_arguments_uint8),
        cmocka_unit_test(sizing_arguments_float32),
        cmocka_unit_test(argument_inputs),
        cmocka_unit_test(random_resized_crop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
