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
 * Invariant: no state.
 */
#include "ops/image/color.h"

enum { A_CONTRAST, A_CONTRAST_CENTER, A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_CONTRAST] = SL__ARG_CONTRAST_DEF,
    [A_CONTRAST_CENTER] = SL__ARG_CONTRAST_CENTER_DEF,
    [A_DTYPE] = SL__ARG_HWC_DTYPE_DEF,
};

static sl_status contrast_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    return sl__hwc_dtype_check(ini, A_DTYPE);
}

static sl_status contrast_setup(sl_ctx *ctx)
{
    return sl__color_setup(ctx, A_DTYPE);
}

static sl_status contrast_setup_sample(sl_ctx *ctx, int i)
{
    return sl__color_setup_sample(ctx, i, 0, 0, NULL);
}

static void contrast_params(const sl_ctx *ctx, int i, sl__color_params *p)
{
    sl__color_bc_params(ctx, i, A_DTYPE, 1.0, 0.0, sl_ctx_arg_float(ctx, A_CONTRAST, i),
                        A_CONTRAST_CENTER, p);
}

static sl_status contrast_run_sample(sl_ctx *ctx, int i)
{
    return sl__color_run(ctx, i, A_DTYPE, contrast_params);
}

#ifdef SLUICE_HAVE_CUDA
static sl_status contrast_run_gpu(sl_ctx *ctx)
{
    return sl__color_run_gpu(ctx, A_DTYPE, contrast_params);
}
#endif

const sl_op_def sl_op_contrast = {
    .name = "contrast",
    .doc = "Adjusts the contrast of images (DALI's contrast).\n\n"
           "out = contrast_center + contrast * (in - contrast_center), element-wise, with "
           "contrast_center by default half the input type's range (128 for uint8, 0.5 for "
           "float32); computed in float32, uint8 outputs rounded and saturated, float32 outputs "
           "not clamped. Any number of channels.\n\n"
           "On `device=\"gpu\"` the per-sample factors are computed on the host as on the CPU and "
           "one kernel applies them to the whole batch; the results are identical to the CPU's.\n\n"
           "Differences from DALI: uint8 / float32 only; no per-frame arguments.",
    .inputs = sl__bc_inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = sl__bc_outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = contrast_init,
    .setup = contrast_setup,
    .setup_sample = contrast_setup_sample,
    .run_sample = contrast_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = contrast_run_gpu,
#endif
};
