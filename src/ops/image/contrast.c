/* contrast: stretches image values away from a centre, element-wise (DALI's
 * fn.contrast).
 *
 * Exports: const sl_op_def sl_op_contrast ("contrast", CPU, GPU).
 *
 * Per element: out = contrast_center + contrast * (in - contrast_center),
 * contrast_center by default half the input type's range (128 for uint8, 0.5
 * for float32): brightness_contrast with brightness 1 (color.h's
 * sl__color_bc_params).
 *
 * Invariant: no state of its own: the node's state is the constant description `op`
 * (color.h's sl__color_op) that the family's functions run it from.
 */
#include "ops/image/color.h"

enum { A_CONTRAST, A_CONTRAST_CENTER, A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_CONTRAST] = SL__ARG_CONTRAST_DEF,
    [A_CONTRAST_CENTER] = SL__ARG_CONTRAST_CENTER_DEF,
    [A_DTYPE] = SL__ARG_HWC_DTYPE_DEF,
};

static void contrast_params(const sl_ctx *ctx, int i, sl__color_params *p)
{
    sl__color_bc_params(ctx, i, A_DTYPE, 1.0, 0.0, sl_ctx_arg_float(ctx, A_CONTRAST, i),
                        A_CONTRAST_CENTER, p);
}

static const sl__color_op op = {.dtype_arg = A_DTYPE, .params = contrast_params};

static sl_status contrast_init(sl_op_init *ini, void **state)
{
    return sl__color_op_init(ini, state, &op);
}

const sl_op_def sl_op_contrast = {
    .name = "contrast",
    .doc = "Adjusts the contrast of images (DALI's contrast).\n\n"
           "out = contrast_center + contrast * (in - contrast_center), element-wise, with "
           "contrast_center by default half the input type's range (128 for uint8, 0.5 for "
           "float32); computed in float32, uint8 outputs rounded and saturated, float32 outputs "
           "not clamped. Any number of channels.\n\n" SL__DOC_BC_TAIL,
    .inputs = sl__color_inputs,
    .outputs = sl__color_outputs,
    .args = args,
    .num_args = NUM_ARGS,
    .init = contrast_init,
    SL__COLOR_OP_FIELDS,
};
