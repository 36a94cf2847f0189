/* resize_crop_mirror: resize, then crop, then horizontal flip, fused into one resampling (DALI's
 * fn.resize_crop_mirror), and its legacy twin fast_resize_crop_mirror.
 *
 * Exports: const sl_op_def sl_op_resize_crop_mirror and sl_op_fast_resize_crop_mirror (the same
 * operator with antialias off by default, as DALI's legacy alias).
 *
 * Per sample, setup_sample computes resize's geometry (ops/image/resize.h: the output size R and
 * the input interval [lo, hi) per axis, DALI's rules), then crop's window on the R_h x R_w
 * resized image (ops/image/window.h: crop / crop_h / crop_w, crop_pos_x / crop_pos_y,
 * `rounding`; a window reaching outside the resized image fails the sample). The window is
 * back-projected onto the input: along an axis with scale s = (hi - lo) / R, output rows
 * [a, a + c) of the resize are the resampling of [lo + a s, lo + (a + c) s) onto c pixels, with
 * the same pixel centres and filter widths as the whole resize, so only the window's pixels are
 * computed. `mirror` (per sample, 0 or 1) swaps the x interval, which flips the window
 * horizontally. The result equals resize followed by crop and flip(horizontal=mirror) up to
 * floating-point rounding of the interval ends (tests bound it by 1 for uint8).
 * Invariant: the geometry is computed once in setup_sample and kept in the iteration data.
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/image/resize.h"
#include "ops/image/window.h"

enum {
    A_CROP = SL__RESIZE_NUM_ARGS,
    A_CROP_H,
    A_CROP_W,
    A_CROP_POS_X,
    A_CROP_POS_Y,
    A_ROUNDING,
    A_MIRROR,
    NUM_ARGS
};

#define ARG_MIRROR                                                                                 \
    {                                                                                              \
        .name = "mirror", .type = SL_ARG_INT, .def = "0",                                          \
        .doc = "Flip the window horizontally: 0 no, 1 yes (per sample).",                          \
        .flags = SL_ARG_TENSOR | SL_ARG_RANGE, .min = 0, .max = 1                                  \
    }

#define CROP_ARGS                                                                                  \
    [A_CROP] = SL__ARG_CROP, [A_CROP_H] = SL__ARG_CROP_H, [A_CROP_W] = SL__ARG_CROP_W,             \
    [A_CROP_POS_X] = SL__ARG_CROP_POS_X, [A_CROP_POS_Y] = SL__ARG_CROP_POS_Y,                      \
    [A_ROUNDING] = SL__ARG_ROUNDING, [A_MIRROR] = ARG_MIRROR

static const sl_arg_def args[NUM_ARGS] = {SL__RESIZE_ARG_DEFS(SL__ARG_ANTIALIAS_DEF), CROP_ARGS};

/* antialias off by default (DALI's legacy operator). */
#define FAST_ANTIALIAS_DEF                                                                         \
    {                                                                                              \
        .name = "antialias", .type = SL_ARG_BOOL, .def = "false",                                  \
        .doc = SL__DOC_ANTIALIAS " Off by default here (DALI's legacy operator)."                  \
    }

static const sl_arg_def fast_args[NUM_ARGS] = {SL__RESIZE_ARG_DEFS(FAST_ANTIALIAS_DEF), CROP_ARGS};

static const sl_io_def inputs[] = {
    {"input", "Images, layout \"HWC\" (or unset), any channel count, uint8 or float32."},
};
static const sl_io_def outputs[] = {
    {"output", "The windows of the resized images, HWC, of type dtype (default: the input's)."},
};

static const sl__crop_args crop_args = {.rounding = A_ROUNDING, .policy = -1, .base = A_CROP};

/* Per-sample iteration data: the resize's geometry narrowed to the window (and mirrored). */
typedef sl__resize_geom geom;

static sl_status rcm_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    sl_status s = sl__crop_init_check_at(ini, A_CROP);
    return s == SL_OK ? sl__resize_init_check(ini) : s;
}

static sl_status rcm_setup(sl_ctx *ctx)
{
    return sl__hwc_setup(ctx, SL__RZ_DTYPE);
}

static sl_status rcm_setup_sample(sl_ctx *ctx, int i)
{
    const int64_t *s = sl_batch_shape(sl_ctx_input(ctx, 0), i);
    geom *g = (geom *)sl_ctx_iter_data(ctx) + i;
    sl_status st = sl__resize_geom_get(ctx, i, g);
    if (st != SL_OK)
        return st;
    sl__crop_window win;
    st = sl__crop_window_get(ctx, &crop_args, i, g->out[0], g->out[1], &win);
    if (st != SL_OK)
        return st;
    const int64_t a[2] = {win.y0, win.x0}, c[2] = {win.h, win.w};
    for (int d = 0; d < 2; d++) {
        double step = g->out[d] > 0 ? (g->hi[d] - g->lo[d]) / (double)g->out[d] : 0.0;
        double lo = g->lo[d] + (double)a[d] * step, hi = g->lo[d] + (double)(a[d] + c[d]) * step;
        g->lo[d] = lo;
        g->hi[d] = hi;
        g->out[d] = c[d];
    }
    if (sl_ctx_arg_int(ctx, A_MIRROR, i)) {
        double t = g->lo[1];
        g->lo[1] = g->hi[1];
        g->hi[1] = t;
    }
    int64_t shape[3] = {g->out[0], g->out[1], s[2]};
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

static void rcm_plan(sl_ctx *ctx, int i, sl__resample_plan *p)
{
    sl__resize_plan_of(ctx, i, (const geom *)sl_ctx_iter_data(ctx) + i, p);
    sl__resample_plan_init(p);
}

/* The input rows and columns the window reads: a decoder fused before it decodes only those. */
static sl_status rcm_roi_sample(sl_ctx *ctx, int i)
{
    sl__resample_plan p;
    rcm_plan(ctx, i, &p);
    sl__resample_input_roi(ctx, i, &p, 0, 0);
    return SL_OK;
}

static sl_status rcm_run_sample(sl_ctx *ctx, int i)
{
    sl__resample_plan p;
    rcm_plan(ctx, i, &p);
    return sl__resample_sample(ctx, i, &p, sl_batch_sample_data(sl_ctx_input(ctx, 0), i));
}

#define DOC_BODY                                                                                   \
    "The result equals resize (the same size arguments and filters), then crop of the resized "    \
    "image (crop or crop_h / crop_w, crop_pos_x / crop_pos_y, rounding; a window reaching "        \
    "outside the resized image fails the sample), then a horizontal flip where `mirror` is 1. "    \
    "Only the window's pixels are computed: the window is back-projected onto the input and "      \
    "resampled once, with the same pixel centres and filter widths as the whole resize (uint8 "    \
    "results may differ from the unfused chain by 1 where an interval end rounds differently)."

#define RCM_DEF(NAME, ARGS, DOC)                                                                   \
    {                                                                                              \
        .name = NAME, .doc = DOC, .inputs = inputs, .min_inputs = 1, .max_inputs = 1,              \
        .outputs = outputs, .num_outputs = 1, .args = ARGS, .num_args = NUM_ARGS,                  \
        .devices = SL_OP_CPU, .flags = SL_OP_SAMPLEWISE | SL_OP_DETERMINISTIC,                     \
        .iter_bytes_per_sample = sizeof(geom), .init = rcm_init, .setup = rcm_setup,               \
        .setup_sample = rcm_setup_sample, .run_sample = rcm_run_sample,                            \
        .roi_sample = rcm_roi_sample,                                                              \
    }

const sl_op_def sl_op_resize_crop_mirror =
    RCM_DEF("resize_crop_mirror", args,
            "Resizes, crops and mirrors images in one resampling (DALI's resize_crop_mirror).\n"
            "\n" DOC_BODY);

const sl_op_def sl_op_fast_resize_crop_mirror =
    RCM_DEF("fast_resize_crop_mirror", fast_args,
            "Legacy name of resize_crop_mirror with antialias off by default (DALI's "
            "fast_resize_crop_mirror).\n"
            "\n" DOC_BODY);
