/* bb_flip: flips bounding boxes in normalised coordinates (DALI's fn.bb_flip).
 *
 * Exports: const sl_op_def sl_op_bb_flip ("bb_flip", CPU and GPU).
 *
 * Boxes are float32 (N, 4), [x, y, w, h] or with `ltrb` [l, t, r, b], or 3-D (N, 6), [x, y, z,
 * w, h, d] or [l, t, f, r, b, k] (front/back). A horizontal flip maps x to 1 - x - w (ltrb: l,
 * r to 1 - r, 1 - l); vertical does the same to y, depthwise to z. The switches may be given
 * per sample (random.coin_flip).
 */
#include "sluice/op.h"

#include "ops/geometry/points_gpu.h"

#include "ops/detection/boxes.h"

enum { A_LTRB, A_HORIZONTAL, A_VERTICAL, A_DEPTHWISE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_LTRB] = {.name = "ltrb",
                .type = SL_ARG_BOOL,
                .def = "false",
                .doc = "true: boxes are [l, t, r, b] (3-D: [l, t, f, r, b, k]); false: [x, y, w, "
                       "h] (3-D: [x, y, z, w, h, d])."},
    [A_HORIZONTAL] = {.name = "horizontal",
                      .type = SL_ARG_INT,
                      .def = "1",
                      .doc = "Non-zero: flip along x.",
                      .flags = SL_ARG_TENSOR},
    [A_VERTICAL] = {.name = "vertical",
                    .type = SL_ARG_INT,
                    .def = "0",
                    .doc = "Non-zero: flip along y.",
                    .flags = SL_ARG_TENSOR},
    [A_DEPTHWISE] = {.name = "depthwise",
                     .type = SL_ARG_INT,
                     .def = "0",
                     .doc = "Non-zero: flip along z (3-D boxes only).",
                     .flags = SL_ARG_TENSOR},
};

static const sl_io_def inputs[] = {{"input", "Boxes, float32 (N, 4) or (N, 6), in [0, 1]."}};
static const sl_io_def outputs[] = {{"output", "The flipped boxes, same shape and format."}};

static sl_status bbf_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    sl_status st = sl__boxes_check(ctx, 0, true);
    if (st != SL_OK)
        return st;
    sl_ctx_set_output(ctx, 0, SL_DTYPE_FLOAT32, 2, sl_batch_layout(in));
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(in, i));
    return SL_OK;
}

static sl_status bbf_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t n = sl_batch_shape(in, i)[0];
    const int c = (int)sl_batch_shape(in, i)[1], dims = c / 2;
    const bool ltrb = sl_ctx_arg_bool(ctx, A_LTRB, i);
    bool flip[3] = {sl_ctx_arg_int(ctx, A_HORIZONTAL, i) != 0,
                    sl_ctx_arg_int(ctx, A_VERTICAL, i) != 0,
                    dims == 3 && sl_ctx_arg_int(ctx, A_DEPTHWISE, i) != 0};
    const float *src = sl_batch_sample_data(in, i);
    float *dst = sl_ctx_output_data(ctx, 0, i);
    for (int64_t b = 0; b < n; b++) {
        const float *s = src + b * c;
        float *o = dst + b * c;
        for (int d = 0; d < dims; d++) {
            float lo = s[d], hi = s[d + dims]; /* l and r, or x and w */
            if (!flip[d]) {
                o[d] = lo;
                o[d + dims] = hi;
            } else if (ltrb) {
                o[d] = 1.0f - hi;
                o[d + dims] = 1.0f - lo;
            } else {
                o[d] = 1.0f - (lo + hi);
                o[d + dims] = hi;
            }
        }
    }
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* One kernel for the batch; each sample's switches are resolved here. */
static sl_status bbf_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx);
    sl__gbbflip *s = sl_ctx_scratch(ctx, sizeof(sl__gbbflip) * (size_t)(n > 0 ? n : 1));
    if (!s)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    for (int i = 0; i < n; i++) {
        const int64_t *sh = sl_batch_shape(in, i);
        const int c = (int)sh[1];
        s[i] = (sl__gbbflip){.in = sl_batch_sample_data(in, i),
                             .out = sl_ctx_output_data(ctx, 0, i),
                             .count = sh[0] * c,
                             .c = c > 0 ? c : 4,
                             .ltrb = sl_ctx_arg_bool(ctx, A_LTRB, i)};
        s[i].flip[0] = sl_ctx_arg_int(ctx, A_HORIZONTAL, i) != 0;
        s[i].flip[1] = sl_ctx_arg_int(ctx, A_VERTICAL, i) != 0;
        s[i].flip[2] = c == 6 && sl_ctx_arg_int(ctx, A_DEPTHWISE, i) != 0;
    }
    return sl__gpu_bb_flip(ctx, s, n);
}
#endif

const sl_op_def sl_op_bb_flip = {
    .name = "bb_flip",
    .doc = "Flips bounding boxes horizontally, vertically or depthwise (DALI's bb_flip).\n\n"
           "Boxes are float32 (N, 4) in normalised [0, 1] coordinates, [x, y, w, h] or with "
           "`ltrb=True` [l, t, r, b]; 3-D boxes are (N, 6), [x, y, z, w, h, d] or [l, t, f, r, "
           "b, k]. `horizontal` (default 1), `vertical` and `depthwise` may be per sample, fed "
           "by the same random.coin_flip as the image's flip.\n\n"
           "`device=\"gpu\"` flips on the GPU with the same results.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .setup = bbf_setup,
    .run_sample = bbf_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = bbf_run_gpu,
#endif
};
