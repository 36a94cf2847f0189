/* hsv: adjusts hue, saturation and value of RGB images with a linear approximation (DALI's
 * fn.hsv).
 *
 * Exports: const sl_op_def sl_op_hsv ("hsv", CPU, GPU).
 *
 * Per sample: out = value * Y2R * HS * R2Y * in, the YIQ model of color.h (HS rotates the
 * (I, Q) chroma plane by `hue` degrees and scales it by `saturation`; `value` scales all of
 * it), so not an exact HSV round trip: DALI's own approximation. One 3x3 matrix per sample,
 * no offset, computed on the host for the CPU and the GPU run (color.cu) alike.
 *
 * Invariant: no state of its own (the node's state is the constant description `op`, color.h's
 * sl__color_op); the matrix is rebuilt per sample from that sample's arguments.
 */
#include "ops/image/color.h"

enum { A_HUE, A_SATURATION, A_VALUE, A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_HUE] = {.name = "hue",
               .type = SL_ARG_FLOAT,
               .def = "0.0",
               .doc = "Hue delta in degrees (additive; wraps around at 360).",
               .flags = SL_ARG_TENSOR},
    [A_SATURATION] = {.name = "saturation",
                      .type = SL_ARG_FLOAT,
                      .def = "1.0",
                      .doc = "Saturation multiplier: 0 gives greyscale, 1 leaves it unchanged.",
                      .flags = SL_ARG_TENSOR},
    [A_VALUE] = {.name = "value",
                 .type = SL_ARG_FLOAT,
                 .def = "1.0",
                 .doc = "Value (brightness) multiplier.",
                 .flags = SL_ARG_TENSOR},
    [A_DTYPE] = SL__ARG_HWC_DTYPE_DEF,
};

static const sl_io_def inputs[] = {
    {"input", "RGB images, HWC (or FHWC / DHWC), uint8 or float32."},
};

static void hsv_params(const sl_ctx *ctx, int i, sl__color_params *p)
{
    sl__color_yiq_params(ctx, sl_ctx_arg_float(ctx, A_HUE, i),
                         sl_ctx_arg_float(ctx, A_SATURATION, i), sl_ctx_arg_float(ctx, A_VALUE, i),
                         1.0, 1.0, false, p);
}

static const sl__color_op op = {
    .dtype_arg = A_DTYPE, .need_c = 3, .what = "RGB images", .params = hsv_params};

static sl_status hsv_init(sl_op_init *ini, void **state)
{
    return sl__color_op_init(ini, state, &op);
}

const sl_op_def sl_op_hsv = {
    .name = "hsv",
    .doc = "Adjusts hue, saturation and value of RGB images (DALI's hsv).\n\n"
           "`hue` is an additive delta in degrees, `saturation` and `value` are multipliers. "
           "As in DALI the operation is a linear approximation in RGB space, not an exact HSV "
           "round trip: the pixel is converted to YIQ, its chroma plane (I, Q) rotated by "
           "`hue` and scaled by `saturation`, all three components scaled by `value`, and "
           "converted back; one 3x3 matrix per sample, in float32. uint8 outputs are rounded "
           "and saturated, float32 outputs are not clamped.\n\n" SL__DOC_COLOR_GPU_MATRIX
           "Differences from DALI: unset `dtype` means the input type (DALI's signature "
           "defaults to uint8 even for float input, while its text says the input type); the "
           "YIQ -> RGB matrix is the exact inverse (DALI's is rounded to 3 decimals); "
           "3-channel input only; no per-frame arguments.",
    .inputs = inputs,
    .outputs = sl__color_outputs,
    .args = args,
    .num_args = NUM_ARGS,
    .init = hsv_init,
    SL__COLOR_OP_FIELDS,
};
