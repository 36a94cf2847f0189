/* jitter: moves every pixel by a small random offset (DALI's fn.jitter).
 *
 * Exports: const sl_op_def sl_op_jitter ("jitter", CPU and GPU).
 *
 * The source of output pixel (x, y) is (x + dx, y + dy), dx and dy independent integers uniform
 * in [-floor(nDegree / 2), nDegree - 1 - floor(nDegree / 2)] (nDegree values), drawn from the
 * sample's stream (pixel p, row-major, from its words 4p ..; dx first); sampled with interp_type
 * (default INTERP_NN), outside the image: fill_value. mask 0 copies the sample. HWC uint8 or
 * float32 images.
 */
#include "sluice/op.h"

#include "ops/image/hwc.h"
#include "ops/image/warp_map.h"
#include "ops/image/warp_map_px.h"

enum { A_NDEGREE, A_FILL, A_INTERP, A_MASK, A_SEED, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_NDEGREE] = {.name = "nDegree",
                   .type = SL_ARG_INT,
                   .def = "2",
                   .doc = "Each pixel moves by a random offset within an nDegree x nDegree "
                          "neighbourhood.",
                   .flags = SL_ARG_RANGE,
                   .min = 1,
                   .max = 1024},
    [A_FILL] = SL__WARP_ARG_FILL,
    [A_INTERP] = SL__WARP_ARG_INTERP,
    [A_MASK] = SL__WARP_ARG_MASK,
    [A_SEED] = SL_ARG_SEED_DEF,
};

static const sl_io_def inputs[] = {{"input", "Images, HWC uint8 or float32."}};
static const sl_io_def outputs[] = {{"output", "The jittered images."}};

static const sl__warp_args wargs = {.interp_type = A_INTERP, .fill_value = A_FILL, .mask = A_MASK};

typedef struct jit {
    sl_rng r; /* the sample's stream, fresh */
    uint64_t n;
    int64_t half, w;
} jit;

/* Pixel (row y - 0.5, column x - 0.5) draws from words 4p .. of the stream, p its index: what
 * a row-by-row loop drawing two sl_rng_below each would draw (rejection aside), and what the
 * GPU's thread for pixel p draws (warp_map_px.h's sl__wm_jitter). */
static void map(void *state, float x, float y, float *sx, float *sy)
{
    const jit *j = state;
    int64_t p = (int64_t)(y - 0.5f) * j->w + (int64_t)(x - 0.5f);
    sl__wm_jitter(j->r, j->n, j->half, p, x, y, sx, sy);
}

static sl_status jitter_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    return sl__warp_init_check(ini, &wargs);
}

static sl_status jitter_setup(sl_ctx *ctx)
{
    return sl__hwc_setup(ctx, -1);
}

static sl_status jitter_setup_sample(sl_ctx *ctx, int i)
{
    sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(sl_ctx_input(ctx, 0), i));
    return SL_OK;
}

static sl_status jitter_run_sample(sl_ctx *ctx, int i)
{
    int64_t n = sl_ctx_arg_int(ctx, A_NDEGREE, i);
    jit j = {sl_ctx_rng(ctx, i), (uint64_t)n, n / 2, sl_batch_shape(sl_ctx_input(ctx, 0), i)[1]};
    return sl__warp_map_sample(ctx, i, &wargs, map, &j);
}

#ifdef SLUICE_HAVE_CUDA
static sl_status gpu_params(sl_ctx *ctx, int i, sl__warp_gpu *g)
{
    int64_t n = sl_ctx_arg_int(ctx, A_NDEGREE, i);
    g->r = sl_ctx_rng(ctx, i);
    g->n = (uint64_t)n;
    g->half = n / 2;
    return SL_OK;
}

/* One launch for the batch, one thread per pixel drawing its own offsets (warp_map.cu). */
static sl_status jitter_run_gpu(sl_ctx *ctx)
{
    return sl__warp_map_run_gpu(ctx, &wargs, SL__WARP_JITTER, gpu_params);
}
#endif

const sl_op_def sl_op_jitter = {
    .name = "jitter",
    .doc = "Moves each pixel by a random offset within an nDegree x nDegree neighbourhood "
           "(DALI's jitter).\n\n"
           "Offsets are integers uniform in [-floor(nDegree / 2), nDegree - 1 - floor(nDegree / "
           "2)] per axis, from the sample's own stream of the node's seed; sources outside the "
           "image take fill_value. mask = 0 leaves a sample unchanged.\n\n"
           "`device=\"gpu\"` (DALI's only backend) draws the same offsets as the CPU: pixel p "
           "takes them from its own place in the sample's stream.\n\n"
           "Differs from DALI: sluice also runs jitter on the CPU (DALI has it on the GPU "
           "only).",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_RANDOM | SL_OP_SAMPLEWISE,
    .init = jitter_init,
    .setup = jitter_setup,
    .setup_sample = jitter_setup_sample,
    .run_sample = jitter_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = jitter_run_gpu,
#endif
};
