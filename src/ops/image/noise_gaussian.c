/* noise.gaussian: adds normally distributed noise (DALI's fn.noise.gaussian).
 *
 * Exports: const sl_op_def sl_op_noise_gaussian ("noise.gaussian", CPU and GPU).
 *
 * Each element x of sample i becomes x + mean + stddev * z, z a standard normal from the
 * sample's stream (sluice/rng.h, element order), computed in float64 and converted back to the
 * input type with rounding and saturation (ops/image/noise.h). Each element takes one
 * Philox block (two uniforms), so the GPU run (noise.cu) starts element e at block e and draws
 * the same numbers.
 */
#include "sluice/op.h"

#include "ops/image/noise.h"

enum { A_MEAN, A_STDDEV, A_SEED, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_MEAN] = {.name = "mean",
                .type = SL_ARG_FLOAT,
                .def = "0.0",
                .doc = "Mean of the noise.",
                .flags = SL_ARG_TENSOR},
    [A_STDDEV] = {.name = "stddev",
                  .type = SL_ARG_FLOAT,
                  .def = "1.0",
                  .doc = "Standard deviation of the noise (>= 0).",
                  .flags = SL_ARG_TENSOR},
    [A_SEED] = SL_ARG_SEED_DEF,
};

static const sl_io_def inputs[] = {{"input", "Data of any numeric type and layout."}};
static const sl_io_def outputs[] = {{"output", "The noisy data, of the input's type and shape."}};

typedef struct params {
    double mean, stddev;
} params;

static void add_normal(double *v, int64_t n, int64_t first, sl_rng *r, const void *p_)
{
    const params *p = p_;
    (void)first; /* one stream per sample, in element order */
    for (int64_t k = 0; k < n; k++)
        v[k] += p->mean + p->stddev * sl_rng_normal(r);
}

static sl_status read_params(sl_ctx *ctx, int i, params *p)
{
    p->mean = sl_ctx_arg_float(ctx, A_MEAN, i);
    p->stddev = sl_ctx_arg_float(ctx, A_STDDEV, i);
    if (!(p->stddev >= 0))
        return sl_fail(ctx, SL_EINVAL, "stddev must be >= 0, got %g", p->stddev);
    return SL_OK;
}

static sl_status run_sample(sl_ctx *ctx, int i)
{
    params p;
    sl_status st = read_params(ctx, i, &p);
    return st != SL_OK ? st : sl__noise_map(ctx, i, add_normal, &p);
}

#ifdef SLUICE_HAVE_CUDA
static sl_status gpu_params(sl_ctx *ctx, int i, sl__noise_gpu *g)
{
    params p;
    sl_status st = read_params(ctx, i, &p);
    g->a = p.mean;
    g->b = p.stddev;
    return st;
}

/* Element e draws its normal from words 4e .. 4e + 3 of the sample's stream, as the CPU's
 * element loop does (noise.cu). */
static sl_status run_gpu(sl_ctx *ctx)
{
    return sl__noise_run_gpu(ctx, SL__NOISE_GAUSSIAN, gpu_params);
}
#endif

const sl_op_def sl_op_noise_gaussian = {
    .name = "noise.gaussian",
    .doc = "Adds Gaussian noise: x + N(mean, stddev) per element (DALI's noise.gaussian).\n\n"
           "Computed in float64 and converted to the input type with rounding and saturation. "
           "Each sample draws from its own stream of the node's seed, so results do not depend "
           "on threads or prefetching — nor on the backend: `device=\"gpu\"` draws the same "
           "numbers.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_RANDOM | SL_OP_SAMPLEWISE,
    .setup = sl__noise_setup,
    .setup_sample = sl__noise_setup_sample,
    .run_sample = run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = run_gpu,
#endif
};
