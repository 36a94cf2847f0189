/* tests/c/test_cuda_image_ops.c: the GPU runs of issue 19's image operators — gaussian_blur and
 * laplacian (ops/image/convolution.cu), erase (erase.cu), noise.gaussian, noise.shot and
 * noise.salt_and_pepper (noise.cu), water, sphere and jitter (warp_map.cu), grid_mask
 * (grid_mask.cu), paste (paste.cu) and multi_paste (multi_paste.cu) — each against the CPU operator
 * on the same inputs (gpuutil.h).
 *
 * Runs on the device, or emulated on the host (the .emulated ctest entry), never skipped
 * silently. Inputs: JPEGs of the class tree (batches of differently shaped samples) as uint8
 * HWC RGB / GRAY / RGBA, CHW (transpose), FHWC sequences (stack), no layout (reshape), float32
 * in [0, 1], int16 and float16 (cast), 1x1 images and batches with empty samples; per-sample
 * arguments from random.uniform nodes on the CPU.
 * Tolerance 0 for the convolutions, erase, sphere, jitter, grid_mask, paste and multi_paste
 * everywhere (same float32
 * operations in the same order, --fmad=false; erase moves values; jitter's offsets are integers
 * drawn as the CPU draws them). water is exact emulated; on a device its sinf / cosf are
 * CUDA's (1 ulp apart from glibc's at most), which could move a source point across a pixel
 * boundary — not seen, but not excluded, so a failure there names the op. The noise operators draw
 * the CPU's numbers from the same Philox streams: emulated they are bit-identical too (tolerance
 * 0); on a device CUDA's float64 log / cos / lgamma may differ from glibc's in the last ulp, so a
 * rounded value may move by 1 in rare elements (gaussian) and a Poisson rejection test may rarely
 * flip (shot): there the tolerance is 1 and, for shot, the mean difference is bounded instead.
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

static const char *source(const char *kind)
{
    static const tu_gpu_source src[] = {
        {"chw", "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
                "{\"name\": \"s_t\", \"op\": \"transpose\", \"inputs\": [\"s_d\"], \"args\": "
                "{\"perm\": [2, 0, 1]}},"
                "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": "
                "[\"s_t\"]}"},
        {"f32", "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
                "{\"name\": \"s_f\", \"op\": \"arithmetic\", \"inputs\": [\"s_d\"], \"args\": "
                "{\"op\": \"fdiv\", \"scalar\": 255.0}},"
                "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": "
                "[\"s_f\"]}"},
        {"i16", "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
                "{\"name\": \"s_c\", \"op\": \"cast\", \"inputs\": [\"s_d\"], \"args\": "
                "{\"dtype\": \"int16\"}},"
                "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": "
                "[\"s_c\"]}"},
        {"f16", "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
                "{\"name\": \"s_c\", \"op\": \"cast\", \"inputs\": [\"s_d\"], \"args\": "
                "{\"dtype\": \"float16\"}},"
                "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": "
                "[\"s_c\"]}"},
        {"seq", "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
                "{\"name\": \"s_b\", \"op\": \"brightness\", \"inputs\": [\"s_d\"], \"args\": "
                "{\"brightness\": 0.5}},"
                "{\"name\": \"s_s\", \"op\": \"stack\", \"inputs\": [\"s_d\", \"s_b\"], "
                "\"args\": {\"axis\": 0, \"axis_name\": \"F\"}},"
                "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": "
                "[\"s_s\"]}"},
        {"flat", "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"], "
                 "\"args\": {\"output_type\": \"GRAY\"}},"
                 "{\"name\": \"s_r\", \"op\": \"reshape\", \"inputs\": [\"s_d\"], \"args\": "
                 "{\"rel_shape\": [1, 1, 1], \"layout\": \"\"}},"
                 "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": "
                 "[\"s_r\"]}"},
        {"part", /* 0..3 columns of each image (random.uniform rel_shape): some are empty */
         "{\"name\": \"s_z\", \"op\": \"random.uniform\", \"args\": {\"range\": [0, 0.03], "
         "\"shape\": [2]}},"
         "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
         "{\"name\": \"s_s\", \"op\": \"slice\", \"inputs\": [\"s_d\"], \"args\": "
         "{\"axis_names\": \"WH\"}, \"arg_inputs\": {\"rel_shape\": \"s_z\"}},"
         "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"s_s\"]}"},
    };
    return tu_gpu_source_json(src, sizeof src / sizeof src[0], kind);
}

/* A per-sample argument input: random.uniform node `name` over [lo, hi], `n` values (0: a
 * scalar). Returns buf. */
static char *uniform(char *buf, size_t len, const char *name, double lo, double hi, int n)
{
    if (n > 0)
        snprintf(buf, len,
                 "{\"name\": \"%s\", \"op\": \"random.uniform\", \"args\": {\"range\": [%g, %g], "
                 "\"shape\": [%d]}},",
                 name, lo, hi, n);
    else
        snprintf(buf, len,
                 "{\"name\": \"%s\", \"op\": \"random.uniform\", \"args\": {\"range\": [%g, "
                 "%g]}},",
                 name, lo, hi);
    return buf;
}

static const char *spec_of(const char *kind, const char *extra, const char *op_json)
{
    return tu_gpu_tree_spec(
        BATCH, 11, 5, "\"op\"",
        "%s, %s{\"name\": \"op\", \"device\": \"$GPU\", \"inputs\": [\"in\"], %s}", source(kind),
        extra ? extra : "", op_json);
}

/* The gpu run of op_json on `kind` inputs equals the CPU's (within tol); returns the diff. */
static tu_diff compare(const char *kind, const char *extra, const char *op_json, double tol)
{
    print_message("%s: %s\n", kind, op_json);
    tu_diff d = tu_gpu_compare(spec_of(kind, extra, op_json), ITERS, tol);
    assert_true(d.elements > 0);
    return d;
}

static void same(const char *kind, const char *extra, const char *op_json)
{
    tu_diff d = compare(kind, extra, op_json, 0);
    assert_true(d.max_abs == 0);
}

/* A random operator: bit-identical emulated, within 1 on a device (see the header). */
static void same_draws(const char *kind, const char *extra, const char *op_json)
{
    tu_diff d = compare(kind, extra, op_json, tu_gpu_emulated() ? 0 : 1);
    assert_true(d.max_abs <= (tu_gpu_emulated() ? 0 : 1));
}

static void gaussian_blur_gpu(void **state)
{
    char a[200];
    const char *sg = uniform(a, sizeof a, "sg", 0.3, 3.0, 0);
    same("rgb", NULL, "\"op\": \"gaussian_blur\", \"args\": {\"sigma\": 1.5}");
    same("gray", NULL, "\"op\": \"gaussian_blur\", \"args\": {\"window_size\": 5}");
    same("gray", NULL, "\"op\": \"gaussian_blur\", \"args\": {\"sigma\": 9.0}");
    same("rgba", NULL,
         "\"op\": \"gaussian_blur\", \"args\": {\"sigma\": [0.7, 2.0], \"window_size\": [3, 0]}");
    same("chw", NULL, "\"op\": \"gaussian_blur\", \"args\": {\"sigma\": [1.0, 2.5]}");
    same("rgb", sg, "\"op\": \"gaussian_blur\", \"arg_inputs\": {\"sigma\": \"sg\"}");
    same("rgb", sg,
         "\"op\": \"gaussian_blur\", \"args\": {\"dtype\": \"float32\"}, \"arg_inputs\": "
         "{\"sigma\": \"sg\"}");
    same("f32", sg, "\"op\": \"gaussian_blur\", \"arg_inputs\": {\"sigma\": \"sg\"}");
    same("f32", NULL,
         "\"op\": \"gaussian_blur\", \"args\": {\"sigma\": 2.0, \"dtype\": \"uint8\"}");
    same("i16", NULL, "\"op\": \"gaussian_blur\", \"args\": {\"window_size\": 7}");
    same("f16", NULL, "\"op\": \"gaussian_blur\", \"args\": {\"sigma\": 1.2}");
    same("seq", NULL, "\"op\": \"gaussian_blur\", \"args\": {\"sigma\": 1.0}");
    same("flat", NULL, "\"op\": \"gaussian_blur\", \"args\": {\"sigma\": [1.0, 2.0, 0.5]}");
    same("tiny", NULL, "\"op\": \"gaussian_blur\", \"args\": {\"sigma\": 2.0}");
    same("part", NULL, "\"op\": \"gaussian_blur\", \"args\": {\"sigma\": 1.0}");
}

static void laplacian_gpu(void **state)
{
    char a[200];
    const char *sc = uniform(a, sizeof a, "sc", 0.1, 2.0, 2);
    same("rgb", NULL, "\"op\": \"laplacian\"");
    same("gray", NULL, "\"op\": \"laplacian\", \"args\": {\"window_size\": 5}");
    same("gray", NULL,
         "\"op\": \"laplacian\", \"args\": {\"window_size\": 7, \"dtype\": \"float32\"}");
    same("rgb", NULL,
         "\"op\": \"laplacian\", \"args\": {\"window_size\": [3, 9], \"smoothing_size\": [1, "
         "5], \"dtype\": \"int16\"}");
    same("chw", NULL,
         "\"op\": \"laplacian\", \"args\": {\"window_size\": 5, \"normalized_kernel\": true}");
    same("f32", sc, "\"op\": \"laplacian\", \"arg_inputs\": {\"scale\": \"sc\"}");
    same("i16", sc, "\"op\": \"laplacian\", \"arg_inputs\": {\"scale\": \"sc\"}");
    same("f16", NULL, "\"op\": \"laplacian\", \"args\": {\"window_size\": 3}");
    same("seq", NULL, "\"op\": \"laplacian\", \"args\": {\"dtype\": \"float32\"}");
    same("flat", NULL, "\"op\": \"laplacian\", \"args\": {\"dtype\": \"float32\"}");
    same("tiny", NULL, "\"op\": \"laplacian\", \"args\": {\"window_size\": 5}");
    same("part", NULL, "\"op\": \"laplacian\"");
}

static void erase_gpu(void **state)
{
    char a[2][200], extra[400];
    snprintf(extra, sizeof extra, "%s%s", uniform(a[0], 200, "an", 0.0, 0.8, 4),
             uniform(a[1], 200, "sh", 0.05, 0.5, 4));
    same("rgb", NULL,
         "\"op\": \"erase\", \"args\": {\"anchor\": [10, 5], \"shape\": [20, 30], "
         "\"fill_value\": 100}");
    same("rgb", NULL,
         "\"op\": \"erase\", \"args\": {\"anchor\": [10, 5, 30, 40, -5, -5], \"shape\": [20, 30, "
         "15, 100, 12, 12], \"fill_value\": [255, 0, 7]}");
    same("rgb", extra,
         "\"op\": \"erase\", \"args\": {\"normalized\": true, \"fill_value\": [1, 2, 3]}, "
         "\"arg_inputs\": {\"anchor\": \"an\", \"shape\": \"sh\"}");
    same("chw", extra,
         "\"op\": \"erase\", \"args\": {\"normalized\": true, \"centered_anchor\": true, "
         "\"fill_value\": [9, 99, 199]}, \"arg_inputs\": {\"anchor\": \"an\", \"shape\": "
         "\"sh\"}");
    same("gray", NULL,
         "\"op\": \"erase\", \"args\": {\"anchor\": [0.25], \"shape\": [0.5], \"axis_names\": "
         "\"W\", \"normalized_anchor\": true, \"normalized_shape\": true}");
    same("f32", extra,
         "\"op\": \"erase\", \"args\": {\"normalized\": true, \"fill_value\": -0.5}, "
         "\"arg_inputs\": {\"anchor\": \"an\", \"shape\": \"sh\"}");
    same("i16", NULL,
         "\"op\": \"erase\", \"args\": {\"anchor\": [3, 3], \"shape\": [1000, 7], "
         "\"fill_value\": -300}");
    same("f16", NULL,
         "\"op\": \"erase\", \"args\": {\"anchor\": [3, 3], \"shape\": [9, 9], \"fill_value\": "
         "0.25}");
    same("seq", NULL,
         "\"op\": \"erase\", \"args\": {\"anchor\": [1, 2], \"shape\": [30, 20], \"axis_names\": "
         "\"FW\", \"fill_value\": 50}");
    same("flat", NULL,
         "\"op\": \"erase\", \"args\": {\"anchor\": [4, 4], \"shape\": [10, 10], \"axes\": [0, "
         "1]}");
    same("tiny", NULL, "\"op\": \"erase\", \"args\": {\"anchor\": [0, 0], \"shape\": [1, 1]}");
    same("part", NULL, "\"op\": \"erase\", \"args\": {\"anchor\": [0, 0], \"shape\": [5, 1]}");
}

static void noise_gaussian_gpu(void **state)
{
    char a[2][200], extra[400];
    snprintf(extra, sizeof extra, "%s%s", uniform(a[0], 200, "m", -10, 10, 0),
             uniform(a[1], 200, "sd", 0, 30, 0));
    same_draws("rgb", NULL, "\"op\": \"noise.gaussian\", \"args\": {\"stddev\": 20.0}");
    same_draws("rgb", extra,
               "\"op\": \"noise.gaussian\", \"arg_inputs\": {\"mean\": \"m\", \"stddev\": \"sd\"}");
    same_draws("f32", NULL, "\"op\": \"noise.gaussian\", \"args\": {\"stddev\": 0.1}");
    same_draws("i16", extra,
               "\"op\": \"noise.gaussian\", \"arg_inputs\": {\"mean\": \"m\", \"stddev\": \"sd\"}");
    same_draws("f16", NULL, "\"op\": \"noise.gaussian\", \"args\": {\"stddev\": 3.0}");
    same_draws("chw", NULL,
               "\"op\": \"noise.gaussian\", \"args\": {\"mean\": 5.0, \"stddev\": 0.0}");
    same_draws("part", NULL, "\"op\": \"noise.gaussian\"");
}

static void noise_shot_gpu(void **state)
{
    char a[200];
    const char *fx = uniform(a, sizeof a, "fx", 0.5, 60, 0);
    /* factors from 0.5 (lambda up to 510: the rejection sampler) to 60 (multiplication) */
    const char *ops[][2] = {
        {"rgb", "\"op\": \"noise.shot\""},
        {"rgb", "\"op\": \"noise.shot\", \"arg_inputs\": {\"factor\": \"fx\"}"},
        {"gray", "\"op\": \"noise.shot\", \"args\": {\"factor\": 0.0}"},
        {"f32", "\"op\": \"noise.shot\", \"args\": {\"factor\": 0.01}"},
        {"i16", "\"op\": \"noise.shot\", \"arg_inputs\": {\"factor\": \"fx\"}"},
        {"part", "\"op\": \"noise.shot\", \"args\": {\"factor\": 3.0}"},
    };
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        if (tu_gpu_emulated()) {
            same(ops[k][0], fx, ops[k][1]);
            continue;
        }
        tu_diff d = compare(ops[k][0], fx, ops[k][1], 1e9);
        assert_true(d.mean_abs <= 0.01); /* rare flips only (see the header) */
    }
}

static void noise_salt_and_pepper_gpu(void **state)
{
    char a[2][200], extra[400];
    snprintf(extra, sizeof extra, "%s%s", uniform(a[0], 200, "p", 0, 0.5, 0),
             uniform(a[1], 200, "sv", 0, 1, 0));
    same("rgb", NULL, "\"op\": \"noise.salt_and_pepper\"");
    same("rgb", extra,
         "\"op\": \"noise.salt_and_pepper\", \"args\": {\"per_channel\": true}, \"arg_inputs\": "
         "{\"prob\": \"p\", \"salt_vs_pepper\": \"sv\"}");
    same("chw", extra,
         "\"op\": \"noise.salt_and_pepper\", \"args\": {\"salt_val\": 200, \"pepper_val\": 20}, "
         "\"arg_inputs\": {\"prob\": \"p\"}");
    same("gray", NULL, "\"op\": \"noise.salt_and_pepper\", \"args\": {\"prob\": 0.3}");
    same("f32", extra,
         "\"op\": \"noise.salt_and_pepper\", \"arg_inputs\": {\"prob\": \"p\", "
         "\"salt_vs_pepper\": \"sv\"}");
    same("i16", NULL, "\"op\": \"noise.salt_and_pepper\", \"args\": {\"prob\": 0.2}");
    same("f16", NULL,
         "\"op\": \"noise.salt_and_pepper\", \"args\": {\"prob\": 0.2, \"salt_val\": 0.5}");
    same("seq", NULL, "\"op\": \"noise.salt_and_pepper\", \"args\": {\"prob\": 0.2}");
    same("flat", NULL, "\"op\": \"noise.salt_and_pepper\", \"args\": {\"prob\": 0.2}");
    same("part", NULL, "\"op\": \"noise.salt_and_pepper\", \"args\": {\"prob\": 0.5}");
}

static void water_sphere_jitter_gpu(void **state)
{
    /* mask per sample: 0 or 1 (random.uniform over [0, 1.4] rounded by cast) */
    char a[200], extra2[600];
    snprintf(extra2, sizeof extra2,
             "%s{\"name\": \"m\", \"op\": \"cast\", \"inputs\": [\"mk\"], \"args\": "
             "{\"dtype\": \"int32\"}},",
             uniform(a, sizeof a, "mk", 0, 1.4, 0));
    same("rgb", NULL, "\"op\": \"water\"");
    same("rgb", NULL,
         "\"op\": \"water\", \"args\": {\"interp_type\": \"INTERP_LINEAR\", \"fill_value\": "
         "42.0, \"ampl_x\": 17.0, \"phase_y\": 1.3}");
    same("f32", extra2,
         "\"op\": \"water\", \"args\": {\"freq_x\": 0.2, \"interp_type\": \"INTERP_LINEAR\"}, "
         "\"arg_inputs\": {\"mask\": \"m\"}");
    same("gray", NULL, "\"op\": \"sphere\"");
    same("rgba", NULL, "\"op\": \"sphere\", \"args\": {\"interp_type\": \"INTERP_LINEAR\"}");
    same("f32", extra2,
         "\"op\": \"sphere\", \"args\": {\"fill_value\": 0.5}, \"arg_inputs\": {\"mask\": "
         "\"m\"}");
    same("tiny", NULL, "\"op\": \"sphere\"");
    same("part", NULL, "\"op\": \"water\"");
    same("rgb", NULL, "\"op\": \"jitter\"");
    same("gray", NULL, "\"op\": \"jitter\", \"args\": {\"nDegree\": 7, \"fill_value\": 9.0}");
    same("f32", extra2,
         "\"op\": \"jitter\", \"args\": {\"nDegree\": 4, \"interp_type\": "
         "\"INTERP_LINEAR\"}, \"arg_inputs\": {\"mask\": \"m\"}");
    same("part", NULL, "\"op\": \"jitter\", \"args\": {\"nDegree\": 3}");
}

static void grid_mask_gpu(void **state)
{
    char a[3][200], extra[600];
    snprintf(extra, sizeof extra, "%s%s%s", uniform(a[0], 200, "an", -3.2, 3.2, 0),
             uniform(a[1], 200, "ra", 0, 1, 0), uniform(a[2], 200, "sx", -20, 20, 0));
    same("rgb", NULL, "\"op\": \"grid_mask\", \"args\": {\"tile\": 16}");
    same("rgb", extra,
         "\"op\": \"grid_mask\", \"args\": {\"tile\": 23}, \"arg_inputs\": {\"angle\": "
         "\"an\", \"ratio\": \"ra\", \"shift_x\": \"sx\", \"shift_y\": \"sx\"}");
    same("gray", extra,
         "\"op\": \"grid_mask\", \"args\": {\"tile\": 7, \"ratio\": 0.3}, \"arg_inputs\": "
         "{\"angle\": \"an\"}");
    same("f32", extra, "\"op\": \"grid_mask\", \"arg_inputs\": {\"angle\": \"an\"}");
    same("rgba", NULL, "\"op\": \"grid_mask\", \"args\": {\"tile\": 5, \"angle\": 0.5}");
    same("tiny", NULL, "\"op\": \"grid_mask\", \"args\": {\"tile\": 1}");
    same("part", NULL, "\"op\": \"grid_mask\", \"args\": {\"tile\": 2}");
}

static void paste_gpu(void **state)
{
    char a[3][200], extra[600];
    snprintf(extra, sizeof extra, "%s%s%s", uniform(a[0], 200, "ra", 1, 3, 0),
             uniform(a[1], 200, "px", 0, 1, 0), uniform(a[2], 200, "py", 0, 1, 0));
    same("rgb", NULL, "\"op\": \"paste\", \"args\": {\"ratio\": 2.0, \"fill_value\": 7}");
    same("rgb", extra,
         "\"op\": \"paste\", \"args\": {\"fill_value\": [10, 200, 30], \"min_canvas_size\": "
         "150.0}, \"arg_inputs\": {\"ratio\": \"ra\", \"paste_x\": \"px\", \"paste_y\": "
         "\"py\"}");
    same("gray", extra,
         "\"op\": \"paste\", \"args\": {\"n_channels\": 1, \"fill_value\": 255}, "
         "\"arg_inputs\": {\"ratio\": \"ra\", \"paste_x\": \"px\"}");
    same("rgba", NULL,
         "\"op\": \"paste\", \"args\": {\"n_channels\": 4, \"ratio\": 1.0, \"fill_value\": "
         "[1, 2, 3, 4]}");
    same("tiny", NULL, "\"op\": \"paste\", \"args\": {\"ratio\": 5.0, \"fill_value\": 0}");
    same("part", NULL,
         "\"op\": \"paste\", \"args\": {\"ratio\": 1.5, \"fill_value\": 3, "
         "\"min_canvas_size\": 4.0}");
}

static void multi_paste_gpu(void **state)
{
    char a[200];
    const char *rel = uniform(a, sizeof a, "rel", 0, 0.3, 4);
    same("rgb", NULL,
         "\"op\": \"multi_paste\", \"args\": {\"in_ids\": [1, 0, 3], \"in_anchors\": [0, 0, "
         "5, 2, 1, 1], \"shapes\": [10, 12, 20, 20, 30, 9], \"out_anchors\": [3, 3, 0, 0, 10, "
         "8], \"output_size\": [50, 60]}");
    same("gray", rel,
         "\"op\": \"multi_paste\", \"args\": {\"in_ids\": [2, 2], \"shapes\": [8, 8, 9, 9], "
         "\"output_size\": [40, 40], \"dtype\": \"float32\"}, \"arg_inputs\": "
         "{\"out_anchors_rel\": \"rel\", \"in_anchors_rel\": \"rel\"}");
    same("f32", NULL,
         "\"op\": \"multi_paste\", \"args\": {\"in_ids\": [3, 1], \"in_anchors\": [2, 2, 0, "
         "0], \"output_size\": [200, 200], \"dtype\": \"uint8\"}");
    same("i16", NULL,
         "\"op\": \"multi_paste\", \"args\": {\"in_ids\": [0], \"shapes\": [0, 3], "
         "\"output_size\": [4, 4]}");
    /* two inputs, no in_ids: sample i of each, in input order (the second one a flipped copy) */
    const char *spec = tu_gpu_tree_spec(
        BATCH, 11, 5, "\"op\"",
        "%s, {\"name\": \"fl\", \"op\": \"flip\", \"device\": \"$GPU\", \"inputs\": "
        "[\"in\"], \"args\": {\"horizontal\": 1}}, {\"name\": \"op\", \"op\": "
        "\"multi_paste\", \"device\": \"$GPU\", \"inputs\": [\"in\", \"fl\"], \"args\": "
        "{\"shapes\": [20, 20, 15, 30], \"out_anchors\": [0, 0, 10, 10], \"output_size\": "
        "[64, 64]}}",
        source("rgb"));
    tu_diff d = tu_gpu_compare(spec, ITERS, 0);
    assert_true(d.elements > 0 && d.max_abs == 0);
}

/* Bad per-sample arguments fail on the GPU as on the CPU, naming the operator. */
static void errors_like_the_cpu(void **state)
{
    tu_gpu_expect_error(
        spec_of("rgb", NULL, "\"op\": \"gaussian_blur\", \"args\": {\"window_size\": 4}"), true,
        SL_EINVAL, "gaussian_blur", "window_size must be odd", NULL);
    tu_gpu_expect_error(spec_of("rgb", NULL,
                                "\"op\": \"erase\", \"args\": {\"anchor\": [1, 2, 3], "
                                "\"shape\": [1, 2, 3]}"),
                        true, SL_EINVAL, "erase", "regions of 2 values", NULL);
    tu_gpu_expect_error(spec_of("rgb", NULL,
                                "\"op\": \"erase\", \"args\": {\"anchor\": [1, 2], \"shape\": "
                                "[1, 2], \"fill_value\": [1, 2]}"),
                        true, SL_EINVAL, "erase", "one per channel (3)", NULL);
    tu_gpu_expect_error(
        spec_of("rgb", NULL, "\"op\": \"noise.gaussian\", \"args\": {\"stddev\": -1.0}"), true,
        SL_EINVAL, "noise.gaussian", "stddev must be >= 0", "sample 0", NULL);
    tu_gpu_expect_error(spec_of("rgb", NULL,
                                "\"op\": \"multi_paste\", \"args\": {\"in_ids\": [0], "
                                "\"in_anchors\": [5000, 0], \"output_size\": [9, 9]}"),
                        true, SL_EINVAL, "multi_paste", "out of bounds", NULL);
    tu_gpu_expect_error(
        spec_of("rgb", NULL, "\"op\": \"laplacian\", \"args\": {\"scale\": [1, 2, 3]}"), true,
        SL_EINVAL, "laplacian", "scale has 3 values", NULL);
}

int main(void)
{
    tu_gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gaussian_blur_gpu),
        cmocka_unit_test(laplacian_gpu),
        cmocka_unit_test(erase_gpu),
        cmocka_unit_test(noise_gaussian_gpu),
        cmocka_unit_test(noise_shot_gpu),
        cmocka_unit_test(noise_salt_and_pepper_gpu),
        cmocka_unit_test(water_sphere_jitter_gpu),
        cmocka_unit_test(grid_mask_gpu),
        cmocka_unit_test(paste_gpu),
        cmocka_unit_test(multi_paste_gpu),
        cmocka_unit_test(errors_like_the_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
