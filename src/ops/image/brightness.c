/* brightness: scales and shifts image brightness, element-wise (DALI's
 * fn.brightness).
 *
 * Exports: const sl_op_def sl_op_brightness ("brightness", CPU, GPU).
 *
 * Per element: out = brightness_shift * R + brightness * in, R the output
 * type's range (255 for uint8, 1 for float32): brightness_contrast with
 * contrast 1 (color.h's sl__color_bc_params).
 *
 * Invariant: no state of its own: the node's state is the constant description `op`
 * (color.h's sl__color_op) that the family's functions run it from.
 */
#include "ops/image/color.h"

enum { A_BRIGHTNESS, A_BRIGHTNESS_SHIFT, A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_BRIGHTNESS] = SL__ARG_BRIGHTNESS_DEF,
    [A_BRIGHTNESS_SHIFT] = SL__ARG_BRIGHTNESS_SHIFT_DEF,
    [A_DTYPE] = SL__ARG_HWC_DTYPE_DEF,
};

static void brightness_params(const sl_ctx *ctx, int i, sl__color_params *p)
{
    sl__color_bc_params(ctx, i, A_DTYPE, sl_ctx_arg_float(ctx, A_BRIGHTNESS, i),
                        sl_ctx_arg_float(ctx, A_BRIGHTNESS_SHIFT, i), 1.0, -1, p);
}

static const sl__color_op op = {.dtype_arg = A_DTYPE, .params = brightness_params};

static sl_status brightness_init(sl_op_init *ini, void **state)
{
    return sl__color_op_init(ini, state, &op);
}

const sl_op_def sl_op_brightness = {
    .name = "brightness",
    .doc = "Adjusts the brightness of images (DALI's brightness).\n\n"
           "out = brightness_shift * R + brightness * in, element-wise, with R the output type's "
           "range (255 for uint8, 1 for float32); computed in float32, uint8 outputs rounded and "
           "saturated, float32 outputs not clamped. Any number of channels.\n\n" SL__DOC_BC_TAIL,
    .inputs = sl__color_inputs,
    .outputs = sl__color_outputs,
    .args = args,
    .num_args = NUM_ARGS,
    .init = brightness_init,
    SL__COLOR_OP_FIELDS,
};
