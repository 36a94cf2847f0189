/* hue: rotates the hue of RGB / BGR images (DALI's fn.hue).
 *
 * Exports: const sl_op_def sl_op_hue ("hue", CPU, GPU).
 *
 * Per sample: color_twist with only `hue` (color.h's YIQ model): the (I, Q)
 * chroma plane is rotated by `hue` degrees; one 3x3 matrix per sample, no
 * offset.
 *
 * Invariant: no state of its own: the node's state is the constant description `op`
 * (color.h's sl__color_op) that the family's functions run it from.
 */
#include "ops/image/color.h"

enum { A_HUE, A_IMAGE_TYPE, A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_HUE] = SL__ARG_HUE_DEF,
    [A_IMAGE_TYPE] = SL__ARG_IMAGE_TYPE_DEF,
    [A_DTYPE] = SL__ARG_HWC_DTYPE_DEF,
};

static const sl_io_def outputs[] = {
    {"output", "Images with rotated hue, same shape and layout, of type dtype."},
};

static void hue_params(const sl_ctx *ctx, int i, sl__color_params *p)
{
    sl__color_yiq_params(ctx, sl_ctx_arg_float(ctx, A_HUE, i), 1.0, 1.0, 1.0, 1.0,
                         sl__color_bgr(ctx, A_IMAGE_TYPE), p);
}

static const sl__color_op op = {
    .dtype_arg = A_DTYPE, .need_c = 3, .what = "RGB or BGR images", .params = hue_params};

static sl_status hue_init(sl_op_init *ini, void **state)
{
    return sl__color_op_init(ini, state, &op);
}

const sl_op_def sl_op_hue = {
    .name = "hue",
    .doc = "Changes the hue of RGB or BGR images (DALI's hue).\n\n"
           "The same linear YIQ model as color_twist with only `hue` set: the chroma plane (I, Q) "
           "is rotated by `hue` degrees, in float32; uint8 outputs are rounded and saturated, "
           "float32 outputs are not clamped.\n\n" SL__DOC_YIQ_TAIL,
    .inputs = sl__color_inputs3,
    .outputs = outputs,
    .args = args,
    .num_args = NUM_ARGS,
    .init = hue_init,
    SL__COLOR_OP_FIELDS,
};
