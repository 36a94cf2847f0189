/* tests/c/test_cuda_tensor_util.c: the GPU runs of the tensor utilities (expand_dims, squeeze,
 * reinterpret, reshape, per_frame, cast_like, element_extract, sequence_rearrange, permute_batch,
 * one_hot, lookup_table, shapes) and of the point and box operators (coord_transform,
 * coord_flip, bb_flip, box_encoder), each against the CPU operator on the same inputs
 * (gpuutil.h).
 *
 * Runs on the device, or emulated on the host (the .emulated ctest entry), never skipped
 * silently. Inputs: JPEGs of the class tree (batches of differently shaped HWC images) decoded
 * on "mixed" or on the CPU and moved with copy, made into sequences (stack of an image and its
 * flips), class ids (the reader's labels, images modulo a small number), points (float images
 * reshaped to (N, D)), boxes (random [l, t] and [r, b] halves). Per-sample arguments come from
 * random nodes on the CPU (coin flips, uniform draws cast to int32), as in DALI.
 * Tolerance 0 everywhere (bit for bit): these GPU runs copy bytes, or compute each element
 * with the CPU's functions in the same order (--fmad=false), except box_encoder's offsets,
 * whose logf on the device may differ from glibc's by an ulp (1e-6 on values of order 1; on
 * the host, when emulated, it is glibc's).
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

/* Nodes making GPU node "in" from "reader:0": these and gpuutil's (rgb, gray, tiny, rgba). */
static const char *source(const char *kind)
{
    static const tu_gpu_source src[] = {
        {"f32",
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
         "{\"name\": \"s_f\", \"op\": \"arithmetic\", \"inputs\": [\"s_d\"], \"args\": "
         "{\"op\": \"fdiv\", \"scalar\": 255.0}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_f\"]}"},
        {"seq", /* (3, H, W, 3) "FHWC": the image, its horizontal and its vertical flip */
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
         "{\"name\": \"s_h\", \"op\": \"flip\", \"inputs\": [\"s_d\"]},"
         "{\"name\": \"s_v\", \"op\": \"flip\", \"inputs\": [\"s_d\"], \"args\": "
         "{\"horizontal\": 0, \"vertical\": 1}},"
         "{\"name\": \"s_s\", \"op\": \"stack\", \"inputs\": [\"s_d\", \"s_h\", \"s_v\"], "
         "\"args\": {\"axis\": 0, \"axis_name\": \"F\"}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_s\"]}"},
        {"ids", /* class ids 0..6 of a gray image, uint8 (H, W, 1) */
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"], "
         "\"args\": {\"output_type\": \"GRAY\"}},"
         "{\"name\": \"s_m\", \"op\": \"arithmetic\", \"inputs\": [\"s_d\"], \"args\": "
         "{\"op\": \"mod\", \"scalar_int\": 7, \"scalar_dtype\": \"uint8\"}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_m\"]}"},
        {"fids", /* float ids in [-1, 9): truncated, some out of range */
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"], "
         "\"args\": {\"output_type\": \"GRAY\"}},"
         "{\"name\": \"s_f\", \"op\": \"arithmetic\", \"inputs\": [\"s_d\"], \"args\": "
         "{\"op\": \"fdiv\", \"scalar\": 25.5}},"
         "{\"name\": \"s_g\", \"op\": \"arithmetic\", \"inputs\": [\"s_f\"], \"args\": "
         "{\"op\": \"sub\", \"scalar\": 1.0}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_g\"]}"},
        {"labels", /* the reader's int32 labels, one per sample */
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"reader:1\"]}"},
        {"i16", /* int16 in [-640, 635] */
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
         "{\"name\": \"s_c\", \"op\": \"cast\", \"inputs\": [\"s_d\"], \"args\": {\"dtype\": "
         "\"int16\"}},"
         "{\"name\": \"s_s\", \"op\": \"arithmetic\", \"inputs\": [\"s_c\"], \"args\": "
         "{\"op\": \"sub\", \"scalar_int\": 128, \"scalar_dtype\": \"int16\"}},"
         "{\"name\": \"s_m\", \"op\": \"arithmetic\", \"inputs\": [\"s_s\"], \"args\": "
         "{\"op\": \"mul\", \"scalar_int\": 5, \"scalar_dtype\": \"int16\"}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_m\"]}"},
        {"pts3", /* (H * W, 3) float32 points in [0, 1] */
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
         "{\"name\": \"s_f\", \"op\": \"arithmetic\", \"inputs\": [\"s_d\"], \"args\": "
         "{\"op\": \"fdiv\", \"scalar\": 255.0}},"
         "{\"name\": \"s_r\", \"op\": \"reshape\", \"inputs\": [\"s_f\"], \"args\": "
         "{\"shape\": [-1, 3], \"layout\": \"\"}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_r\"]}"},
        {"pts1", /* (H * W, 1) */
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"], "
         "\"args\": {\"output_type\": \"GRAY\"}},"
         "{\"name\": \"s_f\", \"op\": \"arithmetic\", \"inputs\": [\"s_d\"], \"args\": "
         "{\"op\": \"fdiv\", \"scalar\": 255.0}},"
         "{\"name\": \"s_r\", \"op\": \"reshape\", \"inputs\": [\"s_f\"], \"args\": "
         "{\"shape\": [-1, 1], \"layout\": \"\"}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_r\"]}"},
        {"boxes4", /* (H * W, 4) values in [0, 1] */
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
         "{\"name\": \"s_g\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"], "
         "\"args\": {\"output_type\": \"GRAY\"}},"
         "{\"name\": \"s_c\", \"op\": \"cat\", \"inputs\": [\"s_d\", \"s_g\"], \"args\": "
         "{\"axis\": 2}},"
         "{\"name\": \"s_f\", \"op\": \"arithmetic\", \"inputs\": [\"s_c\"], \"args\": "
         "{\"op\": \"fdiv\", \"scalar\": 255.0}},"
         "{\"name\": \"s_r\", \"op\": \"reshape\", \"inputs\": [\"s_f\"], \"args\": "
         "{\"shape\": [-1, 4], \"layout\": \"\"}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_r\"]}"},
        {"boxes6", /* (5, 6) draws in [0, 0.5] */
         "{\"name\": \"s_u\", \"op\": \"random.uniform\", \"args\": {\"range\": [0, 0.5], "
         "\"shape\": [5, 6]}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_u\"]}"},
    };
    return tu_gpu_source_json(src, sizeof src / sizeof src[0], kind);
}

/* reader -> source(src) -> `extra` (nodes, each followed by a comma, or "") -> `node` (the GPU
 * nodes); outputs `outs`; every output compared within tol. */
static void cmp_as(bool rel, const char *src, const char *extra, const char *outs, double tol,
                   const char *node)
{
    print_message("%s: %s\n", src, node);
    const char *spec = tu_gpu_tree_spec(BATCH, 7, 3, outs, "%s, %s%s", source(src), extra, node);
    tu_diff d = rel ? tu_gpu_compare_rel(spec, ITERS, tol) : tu_gpu_compare(spec, ITERS, tol);
    assert_true(d.elements > 0);
}

static void cmp(const char *src, const char *extra, const char *outs, double tol, const char *node)
{
    cmp_as(false, src, extra, outs, tol, node);
}

/* One GPU node "op" of operator `op` on "in" with the args/arg_inputs members `members`. */
static void one(const char *src, const char *extra, const char *op, const char *members)
{
    char node[1024];
    snprintf(node, sizeof node,
             "{\"name\": \"op\", \"op\": \"%s\", \"device\": \"$GPU\", \"inputs\": [\"in\"]%s%s}",
             op, members[0] ? ", " : "", members);
    cmp(src, extra, "\"op\"", 0, node);
}

static void shape_only_ops(void **state)
{
    (void)state;
    one("rgb", "", "expand_dims", "\"args\": {\"axes\": [0, 2], \"new_axis_names\": \"FX\"}");
    one("f32", "", "expand_dims", "\"args\": {\"axes\": 3}");
    /* squeeze after expand_dims, both on the GPU */
    cmp("rgb", "", "\"op\", \"e\"", 0,
        "{\"name\": \"e\", \"op\": \"expand_dims\", \"device\": \"$GPU\", \"inputs\": [\"in\"], "
        "\"args\": {\"axes\": [0, 3], \"new_axis_names\": \"FX\"}},"
        "{\"name\": \"op\", \"op\": \"squeeze\", \"device\": \"$GPU\", \"inputs\": [\"e\"], "
        "\"args\": {\"axes\": [0, 3]}}");
    one("gray", "", "squeeze", "\"args\": {\"axis_names\": \"C\"}");
    one("f32", "", "reinterpret", "\"args\": {\"dtype\": \"int32\"}");
    one("rgb", "", "reinterpret", "\"args\": {\"shape\": [-1], \"layout\": \"\"}");
    one("f32", "", "reinterpret", "\"args\": {\"dtype\": \"uint16\"}"); /* innermost x 2 */
    one("rgb", "", "per_frame", "\"args\": {\"replace\": true}");
    one("rgb", "", "reshape", "\"args\": {\"shape\": [-1, 3], \"layout\": \"XC\"}");
    one("f32", "", "reshape", "\"args\": {\"shape\": [-1], \"layout\": \"\"}");
    one("seq", "", "per_frame", "");
}

static void cast_like_and_shapes(void **state)
{
    (void)state;
    static const char *const like[][2] = {
        {"rgb", "f32"}, {"f32", "rgb"}, {"i16", "rgb"}, {"f32", "i16"}, {"i16", "f32"}};
    char extra[1100], node[512];
    for (size_t k = 0; k < sizeof like / sizeof like[0]; k++) {
        /* "like" made from its own source, renamed: only its type matters */
        const char *ls = source(like[k][1]);
        char renamed[1024];
        snprintf(renamed, sizeof renamed, "%s", ls);
        for (char *p = renamed; (p = strstr(p, "\"in\"")); p += 4)
            memcpy(p, "\"lk\"", 4);
        for (char *p = renamed; (p = strstr(p, "\"s_")); p += 3)
            p[2] = 'l'; /* its nodes s_x -> l_x */
        snprintf(extra, sizeof extra, "%s,", renamed);
        snprintf(node, sizeof node,
                 "{\"name\": \"op\", \"op\": \"cast_like\", \"device\": \"$GPU\", \"inputs\": "
                 "[\"in\", \"lk\"]}");
        cmp(like[k][0], extra, "\"op\"", 0, node);
    }
    one("rgb", "", "shapes", "");
    one("seq", "", "shapes", "\"args\": {\"dtype\": \"int32\"}");
    one("f32", "", "shapes", "\"args\": {\"dtype\": \"float16\"}");
    one("labels", "", "shapes", "\"args\": {\"dtype\": \"uint8\"}");
}

static void frames_and_samples(void **state)
{
    (void)state;
    cmp("seq", "", "\"op:0\", \"op:1\", \"op:2\"", 0,
        "{\"name\": \"op\", \"op\": \"element_extract\", \"device\": \"$GPU\", \"inputs\": "
        "[\"in\"], \"args\": {\"element_map\": [2, 0, 2]}}");
    one("seq", "", "element_extract", "\"args\": {\"element_map\": 1}");
    one("seq", "", "sequence_rearrange", "\"args\": {\"new_order\": [2, 0, 0, 1, 2]}");
    one("seq", "", "sequence_rearrange", "\"args\": {\"new_order\": [1]}");
    /* per-sample new_order: 4 draws in [0, 2.49], cast (rounded) to int32 */
    one("seq",
        "{\"name\": \"u\", \"op\": \"random.uniform\", \"args\": {\"range\": [0, 2.49], "
        "\"shape\": [4]}},"
        "{\"name\": \"o\", \"op\": \"cast\", \"inputs\": [\"u\"], \"args\": {\"dtype\": "
        "\"int32\"}},",
        "sequence_rearrange", "\"arg_inputs\": {\"new_order\": \"o\"}");
    one("rgb", "", "permute_batch", "\"args\": {\"indices\": [3, 0, 0, 2]}");
    one("seq",
        "{\"name\": \"u\", \"op\": \"random.uniform\", \"args\": {\"range\": [0, 3.49]}},"
        "{\"name\": \"o\", \"op\": \"cast\", \"inputs\": [\"u\"], \"args\": {\"dtype\": "
        "\"int32\"}},",
        "permute_batch", "\"arg_inputs\": {\"indices\": \"o\"}");
    /* a bad new_order fails on the GPU as on the CPU */
    const char *spec = tu_gpu_tree_spec(
        BATCH, 7, 3, "\"op\"",
        "%s, {\"name\": \"op\", \"op\": \"sequence_rearrange\", \"device\": \"$GPU\", "
        "\"inputs\": [\"in\"], \"args\": {\"new_order\": [0, 3]}}",
        source("seq"));
    tu_gpu_expect_error(spec, true, SL_EINVAL, "new_order[1] = 3", "3 frames", NULL);
}

static void one_hot_and_lookup(void **state)
{
    (void)state;
    one("labels", "", "one_hot", "\"args\": {\"num_classes\": 3}");
    one("labels", "", "one_hot", "\"args\": {\"num_classes\": 5, \"dtype\": \"uint8\"}");
    one("ids", "", "one_hot", "\"args\": {\"num_classes\": 6}");
    one("ids", "", "one_hot",
        "\"args\": {\"num_classes\": 7, \"axis\": 1, \"dtype\": \"int16\", \"on_value\": 3, "
        "\"off_value\": -1, \"axis_name\": \"K\"}");
    one("ids", "", "one_hot",
        "\"args\": {\"num_classes\": 4, \"axis\": 0, \"dtype\": \"float16\", \"on_value\": "
        "0.9, \"off_value\": 0.025}");
    one("fids", "", "one_hot", "\"args\": {\"num_classes\": 8, \"dtype\": \"float64\"}");
    one("rgb", "", "lookup_table",
        "\"args\": {\"keys\": [0, 1, 7, 100, 200, 255], \"values\": [0.5, -1, 2, 3.25, 7, 9], "
        "\"default_value\": -0.75}");
    one("rgb", "", "lookup_table",
        "\"args\": {\"keys\": [3, 9, 250], \"values\": [300, -5, 17.5], \"dtype\": \"uint8\"}");
    one("i16", "", "lookup_table",
        "\"args\": {\"keys\": [-640, -5, 0, 5, 100000], \"values\": [1, 2, 3, 4, 5], "
        "\"default_value\": 9, \"dtype\": \"int64\"}");
    one("ids", "", "lookup_table", "\"args\": {\"dtype\": \"int32\", \"default_value\": 4}");
    one("labels", "", "lookup_table",
        "\"args\": {\"keys\": [0, 1], \"values\": [10, 20], \"dtype\": \"float64\"}");
}

static void points_and_boxes(void **state)
{
    (void)state;
    one("pts3", "", "coord_transform",
        "\"args\": {\"M\": [0.5, 1, -2, 3, 0.25, 1], \"T\": [0.125, -3]}");
    one("pts3", "", "coord_transform", "\"args\": {\"M\": 2.5, \"T\": 1, \"dtype\": \"uint8\"}");
    one("rgb", "", "coord_transform",
        "\"args\": {\"MT\": [1, 0, 0, 10, 0, -1, 0, 255, 0, 0, 2, -300, 1, 1, 1, 0], "
        "\"dtype\": \"int16\"}");
    /* per-sample MT (2 x 4) from random draws */
    one("pts3",
        "{\"name\": \"mt\", \"op\": \"random.uniform\", \"args\": {\"range\": [-2, 2], "
        "\"shape\": [8]}},",
        "coord_transform", "\"arg_inputs\": {\"MT\": \"mt\"}");
    one("pts3", "", "coord_flip", "\"args\": {\"layout\": \"xyz\", \"flip_y\": 1}");
    one("pts1", "", "coord_flip", "");
    one("pts3",
        "{\"name\": \"fx\", \"op\": \"random.coin_flip\"},"
        "{\"name\": \"fz\", \"op\": \"random.coin_flip\", \"args\": {\"seed\": 99}},"
        "{\"name\": \"cy\", \"op\": \"random.uniform\", \"args\": {\"range\": [0, 1]}},",
        "coord_flip",
        "\"args\": {\"layout\": \"zxy\", \"flip_y\": 1}, \"arg_inputs\": {\"flip_x\": \"fx\", "
        "\"flip_z\": \"fz\", \"center_y\": \"cy\"}");
    one("boxes4", "", "bb_flip", "");
    one("boxes4", "", "bb_flip", "\"args\": {\"ltrb\": true, \"vertical\": 1}");
    one("boxes4",
        "{\"name\": \"h\", \"op\": \"random.coin_flip\"},"
        "{\"name\": \"v\", \"op\": \"random.coin_flip\", \"args\": {\"seed\": 5}},",
        "bb_flip", "\"arg_inputs\": {\"horizontal\": \"h\", \"vertical\": \"v\"}");
    one("boxes6", "", "bb_flip", "\"args\": {\"depthwise\": 1, \"vertical\": 1}");
    one("boxes6", "", "bb_flip", "\"args\": {\"ltrb\": true, \"depthwise\": 1}");
}

/* Anchors: a g x g grid of cells in [0, 1]^2, each with a square and a wide box, as JSON. */
static void anchors_json(char *buf, size_t n, int g)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int y = 0; y < g; y++)
        for (int x = 0; x < g; x++) {
            double cx = (x + 0.5) / g, cy = (y + 0.5) / g, s = 1.0 / g;
            k += (size_t)snprintf(buf + k, n - k, "%s%g, %g, %g, %g, %g, %g, %g, %g",
                                  x || y ? ", " : "", cx - s / 2, cy - s / 2, cx + s / 2,
                                  cy + s / 2, cx - s, cy - s / 4, cx + s, cy + s / 4);
        }
    snprintf(buf + k, n - k, "]");
}

static void box_encoder(void **state)
{
    (void)state;
    static char anchors[8192];
    anchors_json(anchors, sizeof anchors, 8); /* 128 anchors */
    /* boxes: [l, t] in [0, 0.5], [r, b] in [0.5, 1] (6 per sample); labels 1..9 */
    static const char *const extra =
        "{\"name\": \"lt\", \"op\": \"random.uniform\", \"args\": {\"range\": [0, 0.5], "
        "\"shape\": [6, 2]}},"
        "{\"name\": \"rb\", \"op\": \"random.uniform\", \"args\": {\"range\": [0.5, 1], "
        "\"shape\": [6, 2], \"seed\": 11}},"
        "{\"name\": \"bx\", \"op\": \"cat\", \"inputs\": [\"lt\", \"rb\"], \"args\": {\"axis\": "
        "1}},"
        "{\"name\": \"lu\", \"op\": \"random.uniform\", \"args\": {\"range\": [1, 9.99], "
        "\"shape\": [6], \"seed\": 12}},"
        "{\"name\": \"lb\", \"op\": \"cast\", \"inputs\": [\"lu\"], \"args\": {\"dtype\": "
        "\"int32\"}},"
        "{\"name\": \"gb\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"bx\"]},"
        "{\"name\": \"gl\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"lb\"]},";
    static const char *const variants[] = {
        "",
        ", \"criteria\": 0.2",
        ", \"offset\": true, \"scale\": 300, \"means\": [0.1, 0.2, 0.3, 0.4], \"stds\": [0.1, "
        "0.1, 0.2, 0.2]",
        ", \"offset\": true, \"criteria\": 0.05",
    };
    static char node[12288];
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        snprintf(node, sizeof node,
                 "%s{\"name\": \"op\", \"op\": \"box_encoder\", \"device\": \"$GPU\", \"inputs\": "
                 "[\"gb\", \"gl\"], \"args\": {\"anchors\": %s%s}}",
                 extra, anchors, variants[v]);
        const bool offset = strstr(variants[v], "offset") != NULL;
        print_message("box_encoder%s\n", variants[v]);
        tu_diff d = tu_gpu_compare(tu_gpu_tree_spec(BATCH, 7, 3, "\"op:0\", \"op:1\"", "%s", node),
                                   ITERS, offset ? 1e-5 : 0);
        assert_true(d.elements > 0);
    }
}

/* Every math.* operator (the registered names of issue 19; their arithmetic is
 * test_cuda_math.c's) on the GPU, on float32 data in [0, 1] and on uint8 (DALI's type rules:
 * integer inputs of the functions give float32). libm functions: CUDA's differ from glibc's by
 * a few ulp on a device (2e-6 on these values, relative where results exceed 1); emulated,
 * they are glibc's. */
static void math_operators(void **state)
{
    (void)state;
    static const char *const unary[] = {
        "abs", "fabs", "floor", "ceil", "sqrt", "rsqrt", "cbrt", "exp",  "log",  "log2",  "log10",
        "sin", "cos",  "tan",   "asin", "acos", "atan",  "sinh", "cosh", "tanh", "asinh", "atanh"};
    static const char *const binary[] = {"pow", "fpow", "min", "max", "atan2"};
    char node[512];
    for (size_t k = 0; k < sizeof unary / sizeof unary[0]; k++) {
        snprintf(node, sizeof node,
                 "{\"name\": \"op\", \"op\": \"math.%s\", \"device\": \"$GPU\", \"inputs\": "
                 "[\"in\"]}",
                 unary[k]);
        cmp("f32", "", "\"op\"", 2e-6, node);
        if (strcmp(unary[k], "atanh") && strcmp(unary[k], "asin") && strcmp(unary[k], "acos"))
            cmp_as(true, "rgb", "", "\"op\"", 2e-6, node); /* exp(22) is 3.6e9: a relative
                                                            * tolerance (an H200 gave 1 ulp) */
    }
    one("f32", "", "math.acosh", ""); /* NaN below 1 on both */
    for (size_t k = 0; k < sizeof binary / sizeof binary[0]; k++) {
        snprintf(node, sizeof node,
                 "{\"name\": \"op\", \"op\": \"math.%s\", \"device\": \"$GPU\", \"inputs\": "
                 "[\"in\", \"in\"]}",
                 binary[k]);
        cmp("f32", "", "\"op\"", 2e-6, node);
    }
    one("f32", "", "math.clamp", "\"args\": {\"lo\": 0.25, \"hi\": 0.75}");
    one("rgb", "", "math.clamp", "\"args\": {\"lo\": 20, \"hi\": 200}");
}

int main(void)
{
    tu_gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shape_only_ops),     cmocka_unit_test(cast_like_and_shapes),
        cmocka_unit_test(frames_and_samples), cmocka_unit_test(one_hot_and_lookup),
        cmocka_unit_test(points_and_boxes),   cmocka_unit_test(box_encoder),
        cmocka_unit_test(math_operators),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
