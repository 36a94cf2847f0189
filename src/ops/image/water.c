/* water: a wave distortion that makes images look under water (DALI's fn.water).
 *
 * Exports: const sl_op_def sl_op_water ("water", CPU and GPU).
 *
 * The source of output point (x, y) (pixel centres, ops/image/warp_map.h) is DALI's
 *   sx = x + ampl_x * sin(freq_x * y + phase_x),   sy = y + ampl_y * cos(freq_y * x + phase_y)
 * sampled with interp_type (default INTERP_NN); outside the image: fill_value. mask 0 copies
 * the sample. HWC uint8 or float32 images. The GPU run (warp_map.cu) uses the same per-pixel
 * code (warp_map_px.h).
 */
#include <math.h>

#include "sluice/op.h"

#include "ops/image/hwc.h"
#include "ops/image/warp_map.h"
#include "ops/image/warp_map_px.h"

enum {
    A_AMPL_X,
    A_AMPL_Y,
    A_FREQ_X,
    A_FREQ_Y,
    A_PHASE_X,
    A_PHASE_Y,
    A_FILL,
    A_INTERP,
    A_MASK,
    A_SEED,
    NUM_ARGS
};

#define FLOAT_ARG(NAME, DEF, DOC)                                                                  \
    {                                                                                              \
        .name = NAME, .type = SL_ARG_FLOAT, .def = DEF, .doc = DOC                                 \
    }

static const sl_arg_def args[NUM_ARGS] = {
    [A_AMPL_X] = FLOAT_ARG("ampl_x", "10.0", "Amplitude of the wave in the x direction."),
    [A_AMPL_Y] = FLOAT_ARG("ampl_y", "10.0", "Amplitude of the wave in the y direction."),
    [A_FREQ_X] = FLOAT_ARG("freq_x", "0.049087", "Frequency of the wave in the x direction."),
    [A_FREQ_Y] = FLOAT_ARG("freq_y", "0.049087", "Frequency of the wave in the y direction."),
    [A_PHASE_X] = FLOAT_ARG("phase_x", "0.0", "Phase of the wave in the x direction."),
    [A_PHASE_Y] = FLOAT_ARG("phase_y", "0.0", "Phase of the wave in the y direction."),
    [A_FILL] = SL__WARP_ARG_FILL,
    [A_INTERP] = SL__WARP_ARG_INTERP,
    [A_MASK] = SL__WARP_ARG_MASK,
    [A_SEED] = {.name = "seed",
                .type = SL_ARG_INT,
                .def = "-1",
                .doc = "Accepted for DALI compatibility; the operator draws nothing."},
};

static const sl_io_def inputs[] = {{"input", "Images, HWC uint8 or float32."}};
static const sl_io_def outputs[] = {{"output", "The distorted images."}};

static const sl__warp_args wargs = {.interp_type = A_INTERP, .fill_value = A_FILL, .mask = A_MASK};

/* p: ampl_x, ampl_y, freq_x, freq_y, phase_x, phase_y (warp_map_px.h's sl__wm_water). */
static void map(void *state, float x, float y, float *sx, float *sy)
{
    sl__wm_water(state, x, y, sx, sy);
}

static void wave(sl_ctx *ctx, int i, float *p)
{
    static const int a[6] = {A_AMPL_X, A_AMPL_Y, A_FREQ_X, A_FREQ_Y, A_PHASE_X, A_PHASE_Y};
    for (int k = 0; k < 6; k++)
        p[k] = (float)sl_ctx_arg_float(ctx, a[k], i);
}

static sl_status water_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    return sl__warp_init_check(ini, &wargs);
}

static sl_status water_setup(sl_ctx *ctx)
{
    return sl__hwc_setup(ctx, -1);
}

static sl_status water_setup_sample(sl_ctx *ctx, int i)
{
    sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(sl_ctx_input(ctx, 0), i));
    return SL_OK;
}

static sl_status water_run_sample(sl_ctx *ctx, int i)
{
    float p[6];
    wave(ctx, i, p);
    return sl__warp_map_sample(ctx, i, &wargs, map, p);
}

#ifdef SLUICE_HAVE_CUDA
static sl_status gpu_params(sl_ctx *ctx, int i, sl__warp_gpu *g)
{
    wave(ctx, i, g->p);
    return SL_OK;
}

/* One launch for the batch, one thread per pixel (warp_map.cu). */
static sl_status water_run_gpu(sl_ctx *ctx)
{
    return sl__warp_map_run_gpu(ctx, &wargs, SL__WARP_WATER, gpu_params);
}
#endif

const sl_op_def sl_op_water = {
    .name = "water",
    .doc = "Distorts images with a water-like wave (DALI's water).\n\n"
           "Output pixel centre (x, y) samples the input at (x + ampl_x * sin(freq_x * y + "
           "phase_x), y + ampl_y * cos(freq_y * x + phase_y)) with interp_type (INTERP_NN or "
           "INTERP_LINEAR); points outside the image take fill_value. mask = 0 leaves a sample "
           "unchanged.\n\n"
           "`device=\"gpu\"` warps the whole batch in one launch with the CPU's per-pixel "
           "arithmetic.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = water_init,
    .setup = water_setup,
    .setup_sample = water_setup_sample,
    .run_sample = water_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = water_run_gpu,
#endif
};
