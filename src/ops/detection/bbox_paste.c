/* bbox_paste: moves bounding boxes as paste does to their image (DALI's fn.bbox_paste).
 *
 * Exports: const sl_op_def sl_op_bbox_paste ("bbox_paste", CPU).
 *
 * paste puts an image into a canvas `ratio` times larger, its top-left corner at
 * ((ratio - 1) * paste_x, (ratio - 1) * paste_y) in image sizes. In normalised canvas
 * coordinates a box [x, y, w, h] becomes [x / ratio + (1 - 1 / ratio) * paste_x, y / ratio +
 * (1 - 1 / ratio) * paste_y, w / ratio, h / ratio] (ltrb: both corners are moved).
 */
#include "sluice/op.h"

#include "ops/detection/boxes.h"

enum { A_LTRB, A_RATIO, A_PASTE_X, A_PASTE_Y, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_LTRB] = {.name = "ltrb",
                .type = SL_ARG_BOOL,
                .def = "false",
                .doc = "true: boxes are [l, t, r, b]; false: [x, y, w, h]."},
    [A_RATIO] = {.name = "ratio",
                 .type = SL_ARG_FLOAT,
                 .doc = "How many times larger than the image the canvas is; at least 1.",
                 .flags = SL_ARG_TENSOR | SL_ARG_RANGE,
                 .min = 1.0,
                 .max = 1e30},
    [A_PASTE_X] = {.name = "paste_x",
                   .type = SL_ARG_FLOAT,
                   .def = "0.5",
                   .doc = "Horizontal position of the paste: 0 left, 1 right.",
                   .flags = SL_ARG_TENSOR | SL_ARG_RANGE,
                   .min = 0.0,
                   .max = 1.0},
    [A_PASTE_Y] = {.name = "paste_y",
                   .type = SL_ARG_FLOAT,
                   .def = "0.5",
                   .doc = "Vertical position of the paste: 0 top, 1 bottom.",
                   .flags = SL_ARG_TENSOR | SL_ARG_RANGE,
                   .min = 0.0,
                   .max = 1.0},
};

static const sl_io_def inputs[] = {{"input", "Boxes, float32 (N, 4), normalised."}};
static const sl_io_def outputs[] = {{"output", "The boxes in the canvas' coordinates."}};

static sl_status bp_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    sl_status st = sl__boxes_check(ctx, 0, false);
    if (st != SL_OK)
        return st;
    sl_ctx_set_output(ctx, 0, SL_DTYPE_FLOAT32, 2, sl_batch_layout(in));
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(in, i));
    return SL_OK;
}

static sl_status bp_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t n = sl_batch_shape(in, i)[0];
    const bool ltrb = sl_ctx_arg_bool(ctx, A_LTRB, i);
    const double ratio = sl_ctx_arg_float(ctx, A_RATIO, i);
    if (!(ratio >= 1.0))
        return sl_fail(ctx, SL_EINVAL, "ratio is %g; it must be at least 1", ratio);
    const float scale = (float)(1.0 / ratio), margin = 1.0f - scale;
    const float px = margin * (float)sl_ctx_arg_float(ctx, A_PASTE_X, i);
    const float py = margin * (float)sl_ctx_arg_float(ctx, A_PASTE_Y, i);
    const float *s = sl_batch_sample_data(in, i);
    float *o = sl_ctx_output_data(ctx, 0, i);
    for (int64_t b = 0; b < n; b++, s += 4, o += 4) {
        o[0] = s[0] * scale + px;
        o[1] = s[1] * scale + py;
        o[2] = ltrb ? s[2] * scale + px : s[2] * scale;
        o[3] = ltrb ? s[3] * scale + py : s[3] * scale;
    }
    return SL_OK;
}

const sl_op_def sl_op_bbox_paste = {
    .name = "bbox_paste",
    .doc = "Transforms bounding boxes the way paste moves their image (DALI's bbox_paste).\n\n"
           "The image is pasted into a canvas `ratio` (>= 1) times larger at relative position "
           "(`paste_x`, `paste_y`) (0.5, 0.5: centred); boxes, float32 (N, 4) normalised, [x, y, "
           "w, h] or with `ltrb=True` [l, t, r, b], are mapped into the canvas' normalised "
           "coordinates: scaled by 1 / ratio and shifted by (1 - 1 / ratio) * paste_x/y.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_SAMPLEWISE,
    .setup = bp_setup,
    .run_sample = bp_run_sample,
};
