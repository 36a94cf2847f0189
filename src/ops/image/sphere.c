/* sphere: a spherical ("fish-eye") distortion of images (DALI's fn.sphere).
 *
 * Exports: const sl_op_def sl_op_sphere ("sphere", CPU and GPU).
 *
 * With the image centre c = (W / 2, H / 2) and r = min(W, H) / 2, the source of output point
 * p (pixel centres, ops/image/warp_map.h) is DALI's c + (p - c) * |p - c| / r: the centre is
 * magnified, the corners pulled in from outside (fill_value). interp_type default INTERP_NN;
 * mask 0 copies the sample. HWC uint8 or float32 images.
 */
#include <math.h>

#include "sluice/op.h"

#include "ops/image/hwc.h"
#include "ops/image/warp_map.h"
#include "ops/image/warp_map_px.h"

enum { A_FILL, A_INTERP, A_MASK, A_SEED, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
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

/* p: centre x, centre y, scale (warp_map_px.h's sl__wm_sphere). */
static void map(void *state, float x, float y, float *sx, float *sy)
{
    sl__wm_sphere(state, x, y, sx, sy);
}

static void centre(sl_ctx *ctx, int i, float *p)
{
    const int64_t *s = sl_batch_shape(sl_ctx_input(ctx, 0), i);
    p[0] = (float)s[1] * 0.5f;
    p[1] = (float)s[0] * 0.5f;
    float m = p[0] < p[1] ? p[0] : p[1];
    p[2] = m > 0 ? 1.0f / m : 0.0f;
}

static sl_status sphere_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    return sl__warp_init_check(ini, &wargs);
}

static sl_status sphere_setup(sl_ctx *ctx)
{
    return sl__hwc_setup(ctx, -1);
}

static sl_status sphere_setup_sample(sl_ctx *ctx, int i)
{
    sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(sl_ctx_input(ctx, 0), i));
    return SL_OK;
}

static sl_status sphere_run_sample(sl_ctx *ctx, int i)
{
    float p[3];
    centre(ctx, i, p);
    return sl__warp_map_sample(ctx, i, &wargs, map, p);
}

#ifdef SLUICE_HAVE_CUDA
static sl_status gpu_params(sl_ctx *ctx, int i, sl__warp_gpu *g)
{
    centre(ctx, i, g->p);
    return SL_OK;
}

/* One launch for the batch, one thread per pixel (warp_map.cu). */
static sl_status sphere_run_gpu(sl_ctx *ctx)
{
    return sl__warp_map_run_gpu(ctx, &wargs, SL__WARP_SPHERE, gpu_params);
}
#endif

const sl_op_def sl_op_sphere = {
    .name = "sphere",
    .doc = "Applies a spherical (fish-eye) distortion to images (DALI's sphere).\n\n"
           "With centre c = (W / 2, H / 2) and r = min(W, H) / 2, output pixel centre p samples "
           "the input at c + (p - c) * |p - c| / r with interp_type (INTERP_NN or "
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
    .init = sphere_init,
    .setup = sphere_setup,
    .setup_sample = sphere_setup_sample,
    .run_sample = sphere_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = sphere_run_gpu,
#endif
};
