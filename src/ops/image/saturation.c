/* saturation: scales the colour saturation of RGB / BGR images (DALI's
 * fn.saturation).
 *
 * Exports: const sl_op_def sl_op_saturation ("saturation", CPU, GPU).
 *
 * Per sample: color_twist with only `saturation` (color.h's YIQ model): the (I,
 * Q) chroma plane is scaled by `saturation`; one 3x3 matrix per sample, no
 * offset.
 *
 * Invariant: no state.
 */
#include <string.h>

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

static const sl_io_def inputs[] = {
    {"input", "3-channel images, HWC (or FHWC / DHWC), uint8 or float32."},
};
static const sl_io_def outputs[] = {
    {"output", "Images with scaled saturation, same shape and layout, of type dtype."},
};

static sl_status saturation_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    return sl__hwc_dtype_check(ini, A_DTYPE);
}

static sl_status saturation_setup(sl_ctx *ctx)
{
    return sl__color_setup(ctx, A_DTYPE);
}

static sl_status saturation_setup_sample(sl_ctx *ctx, int i)
{
    return sl__color_setup_sample(ctx, i, 3, 0, "RGB or BGR images");
}

static void saturation_params(const sl_ctx *ctx, int i, sl__color_params *p)
{
    sl__color_yiq_params(ctx, 0.0, sl_ctx_arg_float(ctx, A_SATURATION, i), 1.0, 1.0, 1.0,
                         strcmp(sl_ctx_arg_str(ctx, A_IMAGE_TYPE), "BGR") == 0, p);
}

static sl_status saturation_run_sample(sl_ctx *ctx, int i)
{
    return sl__color_run(ctx, i, A_DTYPE, saturation_params);
}

#ifdef SLUICE_HAVE_CUDA
static sl_status saturation_run_gpu(sl_ctx *ctx)
{
    return sl__color_run_gpu(ctx, A_DTYPE, saturation_params);
}
#endif

const sl_op_def sl_op_saturation = {
    .name = "saturation",
    .doc = "Changes the colour saturation of RGB or BGR images (DALI's saturation).\n\n"
           "The same linear YIQ model as color_twist with only `saturation` set: the chroma plane "
           "(I, Q) is scaled by `saturation`, in float32; uint8 outputs are rounded and "
           "saturated, float32 outputs are not clamped.\n\n"
           "On `device=\"gpu\"` the per-sample matrix is computed on the host as on the CPU and "
           "one kernel applies it to the whole batch; the results are identical to the CPU's.\n\n"
           "Differences from DALI: the YIQ -> RGB matrix is the exact inverse (DALI's is rounded "
           "to 3 decimals); 3-channel uint8 / float32 input only; no per-frame arguments.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = saturation_init,
    .setup = saturation_setup,
    .setup_sample = saturation_setup_sample,
    .run_sample = saturation_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = saturation_run_gpu,
#endif
};
