/* brightness: scales and shifts image brightness, element-wise (DALI's
 * fn.brightness).
 *
 * Exports: const sl_op_def sl_op_brightness ("brightness", CPU, GPU).
 *
 * Per element: out = brightness_shift * R + brightness * in, R the output
 * type's range (255 for uint8, 1 for float32): brightness_contrast with
 * contrast 1 (color.h's sl__color_bc_params).
 *
 * Invariant: no state.
 */
#include "ops/image/color.h"

enum { A_BRIGHTNESS, A_BRIGHTNESS_SHIFT, A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_BRIGHTNESS] = SL__ARG_BRIGHTNESS_DEF,
    [A_BRIGHTNESS_SHIFT] = SL__ARG_BRIGHTNESS_SHIFT_DEF,
    [A_DTYPE] = SL__ARG_HWC_DTYPE_DEF,
};

static sl_status brightness_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    return sl__hwc_dtype_check(ini, A_DTYPE);
}

static sl_status brightness_setup(sl_ctx *ctx)
{
    return sl__color_setup(ctx, A_DTYPE);
}

static sl_status brightness_setup_sample(sl_ctx *ctx, int i)
{
    return sl__color_setup_sample(ctx, i, 0, 0, NULL);
}

static void brightness_params(const sl_ctx *ctx, int i, sl__color_params *p)
{
    sl__color_bc_params(ctx, i, A_DTYPE, sl_ctx_arg_float(ctx, A_BRIGHTNESS, i),
                        sl_ctx_arg_float(ctx, A_BRIGHTNESS_SHIFT, i), 1.0, -1, p);
}

static sl_status brightness_run_sample(sl_ctx *ctx, int i)
{
    return sl__color_run(ctx, i, A_DTYPE, brightness_params);
}

#ifdef SLUICE_HAVE_CUDA
static sl_status brightness_run_gpu(sl_ctx *ctx)
{
    return sl__color_run_gpu(ctx, A_DTYPE, brightness_params);
}
#endif

const sl_op_def sl_op_brightness = {
    .name = "brightness",
    .doc = "Adjusts the brightness of images (DALI's brightness).\n\n"
           "out = brightness_shift * R + brightness * in, element-wise, with R the output type's "
           "range (255 for uint8, 1 for float32); computed in float32, uint8 outputs rounded and "
           "saturated, float32 outputs not clamped. Any number of channels.\n\n"
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
    .init = brightness_init,
    .setup = brightness_setup,
    .setup_sample = brightness_setup_sample,
    .run_sample = brightness_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = brightness_run_gpu,
#endif
};
