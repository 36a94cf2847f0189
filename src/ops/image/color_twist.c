/* color_twist: adjusts hue, saturation, brightness and contrast of RGB / BGR images in one
 * linear pass (DALI's fn.color_twist).
 *
 * Exports: const sl_op_def sl_op_color_twist ("color_twist", CPU, GPU).
 *
 * Per sample (every argument may be per sample), in the YIQ model of color.h:
 *   out = brightness * (contrast * (Y2R * HS * R2Y) in + (1 - contrast) * grey)
 * i.e. ((HS in - grey) * contrast + grey) * brightness, where HS rotates the (I, Q) plane by
 * `hue` degrees and scales it by `saturation`, and grey = 128 for uint8 input, 0.5 for float32.
 * One 3x3 matrix + offset per sample (sl__color_yiq_params), float32 arithmetic; on the GPU
 * the same matrices, computed on the host, applied by one kernel (color.cu).
 *
 * Invariant: no state of its own (the node's state is the constant description `op`, color.h's
 * sl__color_op); the matrix is rebuilt per sample from that sample's arguments.
 */
#include "ops/image/color.h"

enum { A_BRIGHTNESS, A_CONTRAST, A_HUE, A_SATURATION, A_IMAGE_TYPE, A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_BRIGHTNESS] = {.name = "brightness",
                      .type = SL_ARG_FLOAT,
                      .def = "1.0",
                      .doc = "Multiplies the result: 0 gives black, 1 leaves it unchanged.",
                      .flags = SL_ARG_TENSOR},
    [A_CONTRAST] = {.name = "contrast",
                    .type = SL_ARG_FLOAT,
                    .def = "1.0",
                    .doc = "Stretches values away from grey (128 for uint8 input, 0.5 for "
                           "float): 0 gives uniform grey, 1 leaves them unchanged.",
                    .flags = SL_ARG_TENSOR},
    [A_HUE] = SL__ARG_HUE_DEF,
    [A_SATURATION] = SL__ARG_SATURATION_DEF,
    [A_IMAGE_TYPE] = SL__ARG_IMAGE_TYPE_DEF,
    [A_DTYPE] = SL__ARG_HWC_DTYPE_DEF,
};

static void ct_params(const sl_ctx *ctx, int i, sl__color_params *p)
{
    sl__color_yiq_params(ctx, sl_ctx_arg_float(ctx, A_HUE, i),
                         sl_ctx_arg_float(ctx, A_SATURATION, i), 1.0,
                         sl_ctx_arg_float(ctx, A_BRIGHTNESS, i),
                         sl_ctx_arg_float(ctx, A_CONTRAST, i), sl__color_bgr(ctx, A_IMAGE_TYPE), p);
}

static const sl__color_op op = {
    .dtype_arg = A_DTYPE, .need_c = 3, .what = "RGB or BGR images", .params = ct_params};

static sl_status ct_init(sl_op_init *ini, void **state)
{
    return sl__color_op_init(ini, state, &op);
}

const sl_op_def sl_op_color_twist = {
    .name = "color_twist",
    .doc = "Adjusts hue, saturation, brightness and contrast of RGB or BGR images (DALI's "
           "color_twist).\n\n"
           "The pixel is converted to YIQ (rows [0.299, 0.587, 0.114], [0.596, -0.274, "
           "-0.321], [0.211, -0.523, 0.311]), its (I, Q) plane rotated by `hue` degrees and "
           "scaled by `saturation`, converted back, then contrast and brightness are applied: "
           "out = ((v - grey) * contrast + grey) * brightness with grey = 128 for uint8 input "
           "and 0.5 for float32. All of it is one 3x3 matrix and offset per sample, in "
           "float32; uint8 outputs are rounded and saturated, float32 outputs are not "
           "clamped.\n\n" SL__DOC_COLOR_GPU_MATRIX
           "Differences from DALI: the YIQ -> RGB matrix is the exact inverse (DALI rounds it "
           "to 3 decimals, so its neutral settings shift values by up to 0.72 on uint8); 3-channel "
           "uint8 / float32 input only (grayscale is rejected); no per-frame arguments.",
    .inputs = sl__color_inputs3,
    .outputs = sl__color_outputs,
    .args = args,
    .num_args = NUM_ARGS,
    .init = ct_init,
    SL__COLOR_OP_FIELDS,
};
