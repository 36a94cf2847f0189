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
 * Invariant: no state.
 */
#include "ops/image/color.h"

enum { A_BRIGHTNESS, A_BRIGHTNESS_SHIFT, A_CONTRAST, A_CONTRAST_CENTER, A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_BRIGHTNESS] = SL__ARG_BRIGHTNESS_DEF, [A_BRIGHTNESS_SHIFT] = SL__ARG_BRIGHTNESS_SHIFT_DEF,
    [A_CONTRAST] = SL__ARG_CONTRAST_DEF,     [A_CONTRAST_CENTER] = SL__ARG_CONTRAST_CENTER_DEF,
    [A_DTYPE] = SL__ARG_HWC_DTYPE_DEF,
};

static sl_status bc_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    return sl__hwc_dtype_check(ini, A_DTYPE);
}

static sl_status bc_setup(sl_ctx *ctx)
{
    return sl__color_setup(ctx, A_DTYPE);
}

static sl_status bc_setup_sample(sl_ctx *ctx, int i)
{
    return sl__color_setup_sample(ctx, i, 0, 0, NULL);
}

static void bc_params(const sl_ctx *ctx, int i, sl__color_params *p)
{
    sl__color_bc_params(ctx, i, A_DTYPE, sl_ctx_arg_float(ctx, A_BRIGHTNESS, i),
                        sl_ctx_arg_float(ctx, A_BRIGHTNESS_SHIFT, i),
                        sl_ctx_arg_float(ctx, A_CONTRAST, i), A_CONTRAST_CENTER, p);
}

static sl_status bc_run_sample(sl_ctx *ctx, int i)
{
    return sl__color_run(ctx, i, A_DTYPE, bc_params);
}

#ifdef SLUICE_HAVE_CUDA
static sl_status bc_run_gpu(sl_ctx *ctx)
{
    return sl__color_run_gpu(ctx, A_DTYPE, bc_params);
}
#endif

const sl_op_def sl_op_brightness_contrast = {
    .name = "brightness_contrast",
    .doc = "Adjusts brightness and contrast of images (DALI's brightness_contrast).\n\n"
           "out = brightness_shift * R + brightness * (contrast_center + contrast * (in - "
           "contrast_center)), element-wise, with R the output type's range (255 for uint8, 1 "
           "for float32) and contrast_center by default half the input type's range (128 for "
           "uint8, 0.5 for float32). Computed in float32 as in * (brightness * contrast) + "
           "(brightness_shift * R + brightness * (contrast_center - contrast * "
           "contrast_center)); uint8 outputs are rounded and saturated, float32 outputs are "
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
    .init = bc_init,
    .setup = bc_setup,
    .setup_sample = bc_setup_sample,
    .run_sample = bc_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = bc_run_gpu,
#endif
};
