/* brightness_contrast: adjusts brightness and contrast of images, element-wise (DALI's
 * fn.brightness_contrast).
 *
 * Exports: const sl_op_def sl_op_brightness_contrast ("brightness_contrast", CPU, GPU).
 *
 * Per element, with every argument possibly per sample:
 *   out = brightness_shift * R + brightness * (contrast_center + contrast * (in - contrast_center))
 * where R is the output type's range (255 for uint8, 1 for float32) and contrast_center
 * defaults to half the input type's range (128 for uint8, 0.5 for float32). Computed as
 * in * mul + add with mul and add formed in float32, as DALI does; any channel count.
 *
 * Invariant: no state of its own: the node's state is the constant description `op`
 * (color.h's sl__color_op) that the family's functions run it from.
 */
#include "ops/image/color.h"

enum { A_BRIGHTNESS, A_BRIGHTNESS_SHIFT, A_CONTRAST, A_CONTRAST_CENTER, A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_BRIGHTNESS] = SL__ARG_BRIGHTNESS_DEF, [A_BRIGHTNESS_SHIFT] = SL__ARG_BRIGHTNESS_SHIFT_DEF,
    [A_CONTRAST] = SL__ARG_CONTRAST_DEF,     [A_CONTRAST_CENTER] = SL__ARG_CONTRAST_CENTER_DEF,
    [A_DTYPE] = SL__ARG_HWC_DTYPE_DEF,
};

static void bc_params(const sl_ctx *ctx, int i, sl__color_params *p)
{
    sl__color_bc_params(ctx, i, A_DTYPE, sl_ctx_arg_float(ctx, A_BRIGHTNESS, i),
                        sl_ctx_arg_float(ctx, A_BRIGHTNESS_SHIFT, i),
                        sl_ctx_arg_float(ctx, A_CONTRAST, i), A_CONTRAST_CENTER, p);
}

static const sl__color_op op = {.dtype_arg = A_DTYPE, .params = bc_params};

static sl_status bc_init(sl_op_init *ini, void **state)
{
    return sl__color_op_init(ini, state, &op);
}

const sl_op_def sl_op_brightness_contrast = {
    .name = "brightness_contrast",
    .doc = "Adjusts brightness and contrast of images (DALI's brightness_contrast).\n\n"
           "out = brightness_shift * R + brightness * (contrast_center + contrast * (in - "
           "contrast_center)), element-wise, with R the output type's range (255 for uint8, 1 "
           "for float32) and contrast_center by default half the input type's range (128 for "
           "uint8, 0.5 for float32). Computed in float32 as in * (brightness * contrast) + "
           "(brightness_shift * R + brightness * (contrast_center - contrast * "
           "contrast_center)); uint8 outputs are rounded and saturated, float32 outputs are "
           "not clamped. Any number of channels.\n\n" SL__DOC_BC_TAIL,
    .inputs = sl__color_inputs,
    .outputs = sl__color_outputs,
    .args = args,
    .num_args = NUM_ARGS,
    .init = bc_init,
    SL__COLOR_OP_FIELDS,
};
