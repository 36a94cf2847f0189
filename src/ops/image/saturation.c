/* saturation: scales the colour saturation of RGB / BGR images (DALI's
 * fn.saturation).
 *
 * Exports: const sl_op_def sl_op_saturation ("saturation", CPU, GPU).
 *
 * Per sample: color_twist with only `saturation` (color.h's YIQ model): the (I,
 * Q) chroma plane is scaled by `saturation`; one 3x3 matrix per sample, no
 * offset.
 *
 * Invariant: no state of its own: the node's state is the constant description `op`
 * (color.h's sl__color_op) that the family's functions run it from.
 */
#include "ops/image/color.h"

enum { A_SATURATION, A_IMAGE_TYPE, A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_SATURATION] = {.name = "saturation",
                      .type = SL_ARG_FLOAT,
                      .def = "1.0",
                      .doc = "Saturation multiplier: scales the (I, Q) chroma plane of YIQ; 0 "
                             "gives greyscale, 1 leaves it unchanged.",
                      .flags = SL_ARG_TENSOR},
    [A_IMAGE_TYPE] = SL__ARG_IMAGE_TYPE_DEF,
    [A_DTYPE] = SL__ARG_HWC_DTYPE_DEF,
};

static const sl_io_def outputs[] = {
    {"output", "Images with scaled saturation, same shape and layout, of type dtype."},
};

static void saturation_params(const sl_ctx *ctx, int i, sl__color_params *p)
{
    sl__color_yiq_params(ctx, 0.0, sl_ctx_arg_float(ctx, A_SATURATION, i), 1.0, 1.0, 1.0,
                         sl__color_bgr(ctx, A_IMAGE_TYPE), p);
}

static const sl__color_op op = {
    .dtype_arg = A_DTYPE, .need_c = 3, .what = "RGB or BGR images", .params = saturation_params};

static sl_status saturation_init(sl_op_init *ini, void **state)
{
    return sl__color_op_init(ini, state, &op);
}

const sl_op_def sl_op_saturation = {
    .name = "saturation",
    .doc = "Changes the colour saturation of RGB or BGR images (DALI's saturation).\n\n"
           "The same linear YIQ model as color_twist with only `saturation` set: the chroma plane "
           "(I, Q) is scaled by `saturation`, in float32; uint8 outputs are rounded and "
           "saturated, float32 outputs are not clamped.\n\n" SL__DOC_YIQ_TAIL,
    .inputs = sl__color_inputs3,
    .outputs = outputs,
    .args = args,
    .num_args = NUM_ARGS,
    .init = saturation_init,
    SL__COLOR_OP_FIELDS,
};
