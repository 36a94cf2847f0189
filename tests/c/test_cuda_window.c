/* tests/c/test_cuda_window.c: the GPU runs of the window and layout operators —
 * crop_mirror_normalize (ops/image/crop_mirror_normalize.cu), crop, pad, flip, transpose and
 * constant (ops/tensor/copy_kernels.cu) — each against the CPU operator on the same inputs
 * (gpuutil.h).
 *
 * Runs on the device, or emulated on the host (the .emulated ctest entry), never skipped
 * silently. Inputs: JPEGs of the class tree (SLUICE_TEST_TREE, 40..120 px a side, odd sizes,
 * batches of differently shaped samples) decoded on "mixed" (uint8 RGB / GRAY), made CHW by a
 * gpu transpose, or made on the CPU and moved with copy: float32 with fractions (arithmetic),
 * float16, 1x1 images (resize), 4-channel images (cat), and ragged float64 / float32 tensors of
 * 3 and 4 dimensions with empty samples (random.uniform with per-sample shapes). Per-sample
 * arguments (mirror, flips, crop positions and sizes, mean, std, fill values) come from
 * random.* nodes, which stay on the CPU as in DALI.
 * Tolerance 0 everywhere: the copies move elements unchanged or with the CPU's conversions
 * (tensor.cuh, checked against convert.c), and crop_mirror_normalize computes the CPU's
 * (x - mean) * mul + shift in float32 with the same operations in the same order (nvcc
 * --fmad=false) followed by the CPU's rounding and saturation, so outputs are bit-identical.
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

enum { BATCH = 5, ITERS = 2 };

/* The nodes producing GPU node "in" from the reader's output "reader:0", per input kind: these
 * and gpuutil's common ones (rgb, gray, tiny, rgba). */
static const char *source(const char *kind)
{
    static const tu_gpu_source src[] = {
        /* CHW uint8, made by a gpu transpose */
        {"chw", "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"device\": \"$MIX\", "
                "\"inputs\": [\"reader:0\"]},"
                "{\"name\": \"in\", \"op\": \"transpose\", \"device\": \"$GPU\", \"inputs\": "
                "[\"s_d\"], \"args\": {\"perm\": [2, 0, 1]}}"},
        /* float32 0 .. 689 with fractions */
        {"frgb", "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
                 "{\"name\": \"s_f\", \"op\": \"arithmetic\", \"inputs\": [\"s_d\"], \"args\": "
                 "{\"op\": \"fdiv\", \"scalar\": 0.37}},"
                 "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": "
                 "[\"s_f\"]}"},
        /* the same in float16 */
        {"f16", "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
                "{\"name\": \"s_f\", \"op\": \"arithmetic\", \"inputs\": [\"s_d\"], \"args\": "
                "{\"op\": \"fdiv\", \"scalar\": 0.37}},"
                "{\"name\": \"s_h\", \"op\": \"cast\", \"inputs\": [\"s_f\"], \"args\": "
                "{\"dtype\": \"float16\"}},"
                "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": "
                "[\"s_h\"]}"},
        /* float64, 4-D (DHWC by default), extents 1, 2, 3 or 5 per sample */
        {"vol", "{\"name\": \"s_s\", \"op\": \"random.uniform\", \"args\": {\"values\": [1, 2, 3, "
                "5], \"shape\": [4]}},"
                "{\"name\": \"s_v\", \"op\": \"random.uniform\", \"args\": {\"range\": [-9, 9], "
                "\"dtype\": \"float64\"}, \"arg_inputs\": {\"shape\": \"s_s\"}},"
                "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": "
                "[\"s_v\"]}"},
        /* float32, 3-D (HWC by default), extents 0, 1, 3 or 4: some samples empty */
        {"ragged", "{\"name\": \"s_s\", \"op\": \"random.uniform\", \"args\": {\"values\": [0, 1, "
                   "3, 4], \"shape\": [3]}},"
                   "{\"name\": \"s_v\", \"op\": \"random.uniform\", \"args\": {\"range\": [-9, "
                   "9]}, \"arg_inputs\": {\"shape\": \"s_s\"}},"
                   "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": "
                   "[\"s_v\"]}"},
    };
    return tu_gpu_source_json(src, sizeof src / sizeof src[0], kind);
}

/* Argument-input nodes (CPU) the specs may name: coin flips, positions, sizes, values. */
static const char *const arg_nodes =
    "{\"name\": \"coin\", \"op\": \"random.coin_flip\"},"
    "{\"name\": \"coin2\", \"op\": \"random.coin_flip\", \"args\": {\"probability\": 0.3}},"
    "{\"name\": \"coin3\", \"op\": \"random.coin_flip\", \"args\": {\"probability\": 0.6}},"
    "{\"name\": \"px\", \"op\": \"random.uniform\", \"args\": {\"range\": [0, 1]}},"
    "{\"name\": \"py\", \"op\": \"random.uniform\", \"args\": {\"range\": [0, 1]}},"
    "{\"name\": \"ch\", \"op\": \"random.uniform\", \"args\": {\"range\": [1, 150]}},"
    "{\"name\": \"cw\", \"op\": \"random.uniform\", \"args\": {\"range\": [1, 150]}},"
    "{\"name\": \"mean3\", \"op\": \"random.uniform\", \"args\": {\"range\": [0, 255], "
    "\"shape\": [3]}},"
    "{\"name\": \"std1\", \"op\": \"random.uniform\", \"args\": {\"range\": [20, 80]}},"
    "{\"name\": \"fv\", \"op\": \"random.uniform\", \"args\": {\"range\": [-20, 300]}},";

/* reader -> source(kind) -> argument nodes -> node "op" on $GPU with input "in" and the given
 * "op", "args" and "arg_inputs" members (op_json); output "op". */
static const char *spec_of(const char *kind, const char *op_json)
{
    return tu_gpu_tree_spec(
        BATCH, 11, 5, "\"op\"",
        "%s, %s{\"name\": \"op\", \"device\": \"$GPU\", \"inputs\": [\"in\"], %s}", source(kind),
        arg_nodes, op_json);
}

/* Compares the gpu run of op_json on `kind` inputs with the CPU's: bit-identical. Returns the
 * number of elements compared. */
static long long same(const char *kind, const char *op_json)
{
    print_message("%s: %s\n", kind, op_json);
    tu_diff d = tu_gpu_compare(spec_of(kind, op_json), ITERS, 0);
    assert_true(d.max_abs == 0);
    return d.elements;
}

/* ---- crop_mirror_normalize ---------------------------------------------------------------- */

static void cmn_chw_float32_mirror(void **state)
{
    /* the ImageNet case: RGB uint8 -> CHW float32, random mirror and position */
    assert_true(same("rgb", "\"op\": \"crop_mirror_normalize\", \"args\": {\"crop\": [31, 37], "
                            "\"mean\": [123.675, 116.28, 103.53], \"std\": [58.395, 57.12, "
                            "57.375]}, \"arg_inputs\": {\"mirror\": \"coin\", \"crop_pos_x\": "
                            "\"px\", \"crop_pos_y\": \"py\"}") > 0);
    /* whole images (no crop), per-sample mean and std, truncated anchors */
    assert_true(same("rgb", "\"op\": \"crop_mirror_normalize\", \"args\": {\"rounding\": "
                            "\"truncate\"}, \"arg_inputs\": {\"mirror\": \"coin\", \"mean\": "
                            "\"mean3\", \"std\": \"std1\"}") > 0);
}

static void cmn_chw_rows_of_4(void **state)
{
    /* rows a multiple of 4 pixels wide: 4 pixels per thread, vector loads and stores (the
     * ImageNet case), mirrored or not, inside the images */
    assert_true(same("rgb", "\"op\": \"crop_mirror_normalize\", \"args\": {\"crop\": [31, 36], "
                            "\"mean\": [123.675, 116.28, 103.53], \"std\": [58.395, 57.12, "
                            "57.375]}, \"arg_inputs\": {\"mirror\": \"coin\", \"crop_pos_x\": "
                            "\"px\", \"crop_pos_y\": \"py\"}") > 0);
    /* float16, windows reaching out of the images (the 4 pixels straddle the edge), 4 output
     * channels (pad_output) */
    assert_true(same("rgb", "\"op\": \"crop_mirror_normalize\", \"args\": {\"crop\": [130, 84], "
                            "\"dtype\": \"float16\", \"pad_output\": true, "
                            "\"out_of_bounds_policy\": \"pad\", \"fill_values\": [1.5, -2, 3.25, "
                            "70000], \"mean\": [128], \"std\": [0.37]}, \"arg_inputs\": "
                            "{\"mirror\": \"coin\", \"crop_pos_x\": \"px\", \"crop_pos_y\": "
                            "\"py\"}") > 0);
    /* rows a multiple of 8 wide (as 224), inside the images and straddling their edges */
    assert_true(same("rgb", "\"op\": \"crop_mirror_normalize\", \"args\": {\"crop\": [27, 40], "
                            "\"mean\": [123.675, 116.28, 103.53], \"std\": [58.395, 57.12, "
                            "57.375]}, \"arg_inputs\": {\"mirror\": \"coin\", \"crop_pos_x\": "
                            "\"px\", \"crop_pos_y\": \"py\"}") > 0);
    assert_true(same("rgb", "\"op\": \"crop_mirror_normalize\", \"args\": {\"crop\": [130, 96], "
                            "\"dtype\": \"float16\", \"pad_output\": true, "
                            "\"out_of_bounds_policy\": \"pad\", \"fill_values\": [0.5, -1, 2, "
                            "9], \"mean\": [100], \"std\": [3]}, \"arg_inputs\": "
                            "{\"mirror\": \"coin\", \"crop_pos_x\": \"px\", \"crop_pos_y\": "
                            "\"py\"}") > 0);
    /* uint8 and int8 CHW, float32 input */
    assert_true(same("rgb", "\"op\": \"crop_mirror_normalize\", \"args\": {\"crop\": [33, 44], "
                            "\"dtype\": \"uint8\", \"out_of_bounds_policy\": \"pad\", \"mean\": "
                            "[64], \"std\": [0.5], "
                            "\"shift\": 0.5}, \"arg_inputs\": {\"mirror\": \"coin3\", "
                            "\"crop_pos_x\": \"px\", \"crop_pos_y\": \"py\"}") > 0);
    assert_true(same("frgb", "\"op\": \"crop_mirror_normalize\", \"args\": {\"crop\": [29, 40], "
                             "\"dtype\": \"int8\", \"mean\": [300], \"std\": [2.5], "
                             "\"out_of_bounds_policy\": \"pad\"}, \"arg_inputs\": {\"mirror\": "
                             "\"coin\", \"crop_pos_x\": \"px\", \"crop_pos_y\": \"py\"}") > 0);
}

static void cmn_float16_pad_outside(void **state)
{
    /* windows larger than the images: padded with per-channel fill values (70000 saturates to
     * 65504 in float16), 3 -> 4 channels, HWC */
    assert_true(same("rgb", "\"op\": \"crop_mirror_normalize\", \"args\": {\"crop\": [130, 75], "
                            "\"dtype\": \"float16\", \"output_layout\": \"HWC\", \"pad_output\": "
                            "true, \"out_of_bounds_policy\": \"pad\", \"fill_values\": [1.5, -2, "
                            "3.25, 70000], \"mean\": [128], \"std\": [0.37], \"scale\": 0.5, "
                            "\"shift\": 3}, \"arg_inputs\": {\"mirror\": \"coin\", \"crop_pos_x\": "
                            "\"px\", \"crop_pos_y\": \"py\"}") > 0);
    /* CHW float16, window sizes per sample (some inside, some reaching out), one fill value */
    assert_true(same("rgb", "\"op\": \"crop_mirror_normalize\", \"args\": {\"dtype\": "
                            "\"float16\", \"pad_output\": true, \"out_of_bounds_policy\": "
                            "\"pad\", \"fill_values\": [-7.125], \"mean\": [10, 20, 30]}, "
                            "\"arg_inputs\": {\"mirror\": \"coin2\", \"crop_h\": \"ch\", "
                            "\"crop_w\": \"cw\", \"crop_pos_x\": \"px\"}") > 0);
    /* float32 CHW with padding, and 1x1 images */
    assert_true(same("tiny", "\"op\": \"crop_mirror_normalize\", \"args\": {\"crop\": [3, 4], "
                             "\"out_of_bounds_policy\": \"pad\", \"fill_values\": [9, 8, 7], "
                             "\"mean\": [100]}, \"arg_inputs\": {\"mirror\": \"coin\", "
                             "\"crop_pos_x\": \"px\"}") > 0);
}

static void cmn_integer_outputs_gray(void **state)
{
    /* GRAY -> uint8 with large scale: rounding of halves and saturation at both ends */
    assert_true(same("gray", "\"op\": \"crop_mirror_normalize\", \"args\": {\"crop\": [33, 33], "
                             "\"dtype\": \"uint8\", \"mean\": [100], \"std\": [0.8], \"scale\": "
                             "0.5, \"shift\": 128}, \"arg_inputs\": {\"mirror\": \"coin\", "
                             "\"crop_pos_x\": \"px\", \"crop_pos_y\": \"py\"}") > 0);
    /* GRAY -> int8, HWC, pad_output (1 channel stays 1), window trimmed to the image */
    assert_true(same("gray", "\"op\": \"crop_mirror_normalize\", \"args\": {\"crop\": [150, 60], "
                             "\"dtype\": \"int8\", \"output_layout\": \"HWC\", \"pad_output\": "
                             "true, \"out_of_bounds_policy\": \"trim_to_shape\", \"mean\": "
                             "[127.5], \"std\": [0.5]}, \"arg_inputs\": {\"mirror\": "
                             "\"coin\"}") > 0);
    /* RGB -> uint8 padded with fill values that saturate */
    assert_true(same("rgb", "\"op\": \"crop_mirror_normalize\", \"args\": {\"crop\": [125, 41], "
                            "\"dtype\": \"uint8\", \"out_of_bounds_policy\": \"pad\", "
                            "\"fill_values\": [-3, 127.5, 300], \"mean\": [64], \"std\": [0.5], "
                            "\"shift\": 0.5}, \"arg_inputs\": {\"mirror\": \"coin\", "
                            "\"crop_pos_y\": \"py\"}") > 0);
}

static void cmn_float_and_4_channel_inputs(void **state)
{
    /* float32 input -> int8 HWC, and -> float32 CHW */
    assert_true(same("frgb", "\"op\": \"crop_mirror_normalize\", \"args\": {\"crop\": [29, 39], "
                             "\"dtype\": \"int8\", \"output_layout\": \"HWC\", \"mean\": [300], "
                             "\"std\": [2.5]}, \"arg_inputs\": {\"mirror\": \"coin\", "
                             "\"crop_pos_x\": \"px\", \"crop_pos_y\": \"py\"}") > 0);
    assert_true(same("frgb", "\"op\": \"crop_mirror_normalize\", \"args\": {\"crop\": [140, 90], "
                             "\"out_of_bounds_policy\": \"pad\", \"pad_output\": true, "
                             "\"fill_values\": [0.25]}, \"arg_inputs\": {\"mirror\": "
                             "\"coin\"}") > 0);
    /* 4 channels (no padding needed), float16 CHW */
    assert_true(same("rgba", "\"op\": \"crop_mirror_normalize\", \"args\": {\"crop\": [27, 35], "
                             "\"dtype\": \"float16\", \"pad_output\": true, \"mean\": [1, 2, 3, "
                             "4], \"std\": [5, 6, 7, 8]}, \"arg_inputs\": {\"mirror\": \"coin\", "
                             "\"crop_pos_x\": \"px\"}") > 0);
}

/* ---- crop --------------------------------------------------------------------------------- */

static void crop_positions_and_policies(void **state)
{
    /* crop_pos_x / crop_pos_y argument inputs, windows inside (policy "error") */
    assert_true(same("rgb", "\"op\": \"crop\", \"args\": {\"crop\": [31, 37]}, \"arg_inputs\": "
                            "{\"crop_pos_x\": \"px\", \"crop_pos_y\": \"py\"}") > 0);
    assert_true(same("gray", "\"op\": \"crop\", \"args\": {\"crop\": [39, 23], \"rounding\": "
                             "\"truncate\"}, \"arg_inputs\": {\"crop_pos_x\": \"px\", "
                             "\"crop_pos_y\": \"py\"}") > 0);
    /* partly outside, padded with per-channel values, converted to float16 */
    assert_true(same("rgb", "\"op\": \"crop\", \"args\": {\"crop\": [130, 90], "
                            "\"out_of_bounds_policy\": \"pad\", \"fill_values\": [7, 8.5, -9], "
                            "\"dtype\": \"float16\"}, \"arg_inputs\": {\"crop_pos_x\": \"px\", "
                            "\"crop_pos_y\": \"py\"}") > 0);
    /* per-sample window sizes, trimmed to the image */
    assert_true(same("rgb", "\"op\": \"crop\", \"args\": {\"out_of_bounds_policy\": "
                            "\"trim_to_shape\"}, \"arg_inputs\": {\"crop_h\": \"ch\", \"crop_w\": "
                            "\"cw\", \"crop_pos_x\": \"px\"}") > 0);
    /* 1x1 images padded with one fill value */
    assert_true(same("tiny", "\"op\": \"crop\", \"args\": {\"crop\": [2, 3], "
                             "\"out_of_bounds_policy\": \"pad\", \"fill_values\": [200]}, "
                             "\"arg_inputs\": {\"crop_pos_x\": \"px\"}") > 0);
}

static void crop_chw_and_conversions(void **state)
{
    /* CHW (from a gpu transpose), padded per channel, uint8 -> int16 keeps -1 and 300 */
    assert_true(same("chw", "\"op\": \"crop\", \"args\": {\"out_of_bounds_policy\": \"pad\", "
                            "\"fill_values\": [-1, 300, 5], \"dtype\": \"int16\"}, "
                            "\"arg_inputs\": {\"crop_h\": \"ch\", \"crop_w\": \"cw\", "
                            "\"crop_pos_x\": \"px\", \"crop_pos_y\": \"py\"}") > 0);
    /* CHW uint8 -> uint8 padded (fill values saturate: -1 -> 0, 300 -> 255) */
    assert_true(same("chw", "\"op\": \"crop\", \"args\": {\"crop\": [100, 125], "
                            "\"out_of_bounds_policy\": \"pad\", \"fill_values\": [-1, 300, "
                            "5]}, \"arg_inputs\": {\"crop_pos_y\": \"py\"}") > 0);
    /* float16 -> uint8 (rounding halves away from zero, saturation), float32 -> int8 */
    assert_true(same("f16", "\"op\": \"crop\", \"args\": {\"crop\": [21, 23], \"dtype\": "
                            "\"uint8\"}, \"arg_inputs\": {\"crop_pos_x\": \"px\"}") > 0);
    assert_true(same("frgb", "\"op\": \"crop\", \"args\": {\"crop\": [120, 45], "
                             "\"out_of_bounds_policy\": \"pad\", \"fill_values\": [-300], "
                             "\"dtype\": \"int8\"}, \"arg_inputs\": {\"crop_pos_y\": \"py\"}") > 0);
    /* 4 channels, per-channel fill, float32 -> float64 */
    assert_true(same("rgba", "\"op\": \"crop\", \"args\": {\"crop\": [77, 133], "
                             "\"out_of_bounds_policy\": \"pad\", \"fill_values\": [1, 2, 3, 4], "
                             "\"dtype\": \"float64\"}, \"arg_inputs\": {\"crop_pos_x\": \"px\", "
                             "\"crop_pos_y\": \"py\"}") > 0);
}

/* ---- flip --------------------------------------------------------------------------------- */

static void flip_axes(void **state)
{
    assert_true(same("rgb", "\"op\": \"flip\", \"arg_inputs\": {\"horizontal\": \"coin\", "
                            "\"vertical\": \"coin2\"}") > 0);
    assert_true(same("chw", "\"op\": \"flip\", \"arg_inputs\": {\"vertical\": \"coin\"}") > 0);
    assert_true(same("gray", "\"op\": \"flip\", \"args\": {\"horizontal\": 0, \"vertical\": 1}") >
                0);
    assert_true(same("f16", "\"op\": \"flip\", \"arg_inputs\": {\"horizontal\": \"coin\", "
                            "\"vertical\": \"coin3\"}") > 0);
    assert_true(same("tiny", "\"op\": \"flip\", \"args\": {\"vertical\": 1}") > 0);
    /* volumes (DHWC, float64): depthwise with the other two */
    assert_true(same("vol", "\"op\": \"flip\", \"arg_inputs\": {\"depthwise\": \"coin\", "
                            "\"horizontal\": \"coin2\", \"vertical\": \"coin3\"}") > 0);
    /* empty samples among others */
    same("ragged", "\"op\": \"flip\", \"args\": {\"vertical\": 1}");
}

/* ---- pad ---------------------------------------------------------------------------------- */

static void pad_fill_and_axes(void **state)
{
    /* all axes to the batch's largest extents */
    assert_true(same("rgb", "\"op\": \"pad\", \"args\": {\"fill_value\": 7}") > 0);
    /* H and W aligned per axis, fill value per sample (300 saturates to 255 in uint8) */
    assert_true(same("rgb", "\"op\": \"pad\", \"args\": {\"axis_names\": \"HW\", \"align\": [8, "
                            "16]}, \"arg_inputs\": {\"fill_value\": \"fv\"}") > 0);
    /* minimum shape on axes 0 and 1 (-1: the batch's largest), negative fill saturates to 0 */
    assert_true(same("gray", "\"op\": \"pad\", \"args\": {\"axes\": [0, 1], \"shape\": [130, -1], "
                             "\"fill_value\": -5}") > 0);
    assert_true(same("f16", "\"op\": \"pad\", \"args\": {\"axes\": [-2], \"align\": [32], "
                            "\"fill_value\": 65519}") > 0);
    assert_true(same("vol", "\"op\": \"pad\", \"args\": {\"axes\": [0, 2], \"fill_value\": "
                            "1.25}") > 0);
    assert_true(same("ragged", "\"op\": \"pad\", \"arg_inputs\": {\"fill_value\": \"fv\"}") > 0);
    assert_true(same("chw", "\"op\": \"pad\", \"args\": {\"axis_names\": \"C\", \"shape\": [5], "
                            "\"fill_value\": 99}") > 0);
}

/* ---- transpose ---------------------------------------------------------------------------- */

static void transpose_perms(void **state)
{
    assert_true(same("rgb", "\"op\": \"transpose\", \"args\": {\"perm\": [2, 0, 1]}") > 0);
    assert_true(same("rgb", "\"op\": \"transpose\", \"args\": {\"perm\": [1, 0, 2]}") > 0);
    assert_true(same("gray", "\"op\": \"transpose\", \"args\": {\"perm\": [2, 1, 0]}") > 0);
    assert_true(same("f16", "\"op\": \"transpose\", \"args\": {\"perm\": [1, 2, 0], "
                            "\"output_layout\": \"abc\"}") > 0);
    assert_true(same("chw", "\"op\": \"transpose\", \"args\": {\"perm\": [1, 2, 0]}") > 0);
    assert_true(same("vol", "\"op\": \"transpose\", \"args\": {\"perm\": [3, 1, 0, 2]}") > 0);
    same("ragged", "\"op\": \"transpose\", \"args\": {\"perm\": [2, 0, 1], \"transpose_layout\": "
                   "false}");
}

/* ---- constant ----------------------------------------------------------------------------- */

/* No input: the values are uploaded and gathered into each sample (strides 0 for one value
 * filling the shape); every dtype family, a scalar, an empty shape. */
static void constant_values(void **state)
{
    static const char *const args[] = {
        "\"fdata\": [1.5, -2.5, 3.25, 1e9], \"shape\": [2, 2], \"dtype\": \"int16\"",
        "\"idata\": [300], \"shape\": [3, 4, 5], \"dtype\": \"uint8\", \"layout\": \"HWC\"",
        "\"fdata\": [0.1, 0.2, 0.3], \"dtype\": \"float16\"",
        "\"fdata\": [0.1, 0.2, 0.3], \"dtype\": \"float64\", \"shape\": [3, 1]",
        "\"idata\": [-7], \"shape\": []",
        "\"idata\": [1, 0, 2], \"dtype\": \"bool\"",
        "\"idata\": [1099511627777], \"dtype\": \"int64\", \"shape\": [2]",
        "\"fdata\": [2.0], \"shape\": [0, 3]",
    };
    for (size_t k = 0; k < sizeof args / sizeof args[0]; k++) {
        print_message("constant: %s\n", args[k]);
        tu_diff d = tu_gpu_compare(tu_gpu_tree_spec(BATCH, 11, 5, "\"op\"",
                                                    "{\"name\": \"op\", \"device\": \"$GPU\", "
                                                    "\"op\": \"constant\", \"args\": {%s}}",
                                                    args[k]),
                                   ITERS, 0);
        assert_true(d.max_abs == 0);
        assert_true(d.elements > 0 || strstr(args[k], "[0, 3]"));
    }
}

int main(void)
{
    tu_gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cmn_chw_float32_mirror),
        cmocka_unit_test(cmn_chw_rows_of_4),
        cmocka_unit_test(cmn_float16_pad_outside),
        cmocka_unit_test(cmn_integer_outputs_gray),
        cmocka_unit_test(cmn_float_and_4_channel_inputs),
        cmocka_unit_test(crop_positions_and_policies),
        cmocka_unit_test(crop_chw_and_conversions),
        cmocka_unit_test(flip_axes),
        cmocka_unit_test(pad_fill_and_axes),
        cmocka_unit_test(transpose_perms),
        cmocka_unit_test(constant_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
