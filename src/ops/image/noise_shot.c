/* noise.shot: Poisson (shot) noise (DALI's fn.noise.shot).
 *
 * Exports: const sl_op_def sl_op_noise_shot ("noise.shot", CPU and GPU).
 *
 * Each element x of sample i becomes Poisson(max(0, x / factor)) * factor (noise_rng.h's
 * sampler), drawn from element e's own stream (the sample's stream keyed with e,
 * sl__nr_element), converted back to the input type with rounding and saturation; factor 0
 * leaves the data unchanged. The GPU run (noise.cu) draws each element the same way.
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/image/noise.h"
#include "ops/image/noise_rng.h"

enum { A_FACTOR, A_SEED, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_FACTOR] = {.name = "factor",
                  .type = SL_ARG_FLOAT,
                  .def = "20.0",
                  .doc = "Factor: the value of one photon. Larger gives more noise; 0 none.",
                  .flags = SL_ARG_TENSOR},
    [A_SEED] = SL_ARG_SEED_DEF,
};

static const sl_io_def inputs[] = {{"input", "Data of any numeric type and layout."}};
static const sl_io_def outputs[] = {{"output", "The noisy data, of the input's type and shape."}};

/* Element first + k draws from its own stream (noise_rng.h's sl__nr_element of the sample's):
 * a Poisson draw takes a varying number of uniforms, and per-element streams let the GPU draw
 * every element independently and still equal the CPU. */
static void shot(double *v, int64_t n, int64_t first, sl_rng *r, const void *p)
{
    double f = *(const double *)p;
    for (int64_t k = 0; k < n; k++) {
        sl_rng re = *r;
        sl__nr_element(&re, (uint64_t)(first + k));
        double lam = v[k] / f;
        v[k] = sl__nr_poisson(&re, lam > 0 ? lam : 0) * f;
    }
}

static sl_status read_factor(sl_ctx *ctx, int i, double *f)
{
    *f = sl_ctx_arg_float(ctx, A_FACTOR, i);
    if (!(*f >= 0))
        return sl_fail(ctx, SL_EINVAL, "factor must be >= 0, got %g", *f);
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
static sl_status gpu_params(sl_ctx *ctx, int i, sl__noise_gpu *g)
{
    return read_factor(ctx, i, &g->a);
}

/* One thread per element, each on its own stream (noise.cu). */
static sl_status run_gpu(sl_ctx *ctx)
{
    return sl__noise_run_gpu(ctx, SL__NOISE_SHOT, gpu_params);
}
#endif

static sl_status run_sample(sl_ctx *ctx, int i)
{
    double f;
    sl_status st = read_factor(ctx, i, &f);
    if (st != SL_OK)
        return st;
    if (f == 0) {
        const sl_batch *in = sl_ctx_input(ctx, 0);
        size_t n = (size_t)sl_batch_sample_numel(in, i) * sl_dtype_size(sl_batch_dtype(in));
        if (n)
            memcpy(sl_ctx_output_data(ctx, 0, i), sl_batch_sample_data(in, i), n);
        return SL_OK;
    }
    return sl__noise_map(ctx, i, shot, &f);
}

const sl_op_def sl_op_noise_shot = {
    .name = "noise.shot",
    .doc = "Applies shot (Poisson) noise: Poisson(max(0, x / factor)) * factor per element "
           "(DALI's noise.shot).\n\n"
           "Converted to the input type with rounding and saturation; factor 0 returns the "
           "input. Each element draws from its own stream, derived from the node's seed, the "
           "iteration, the sample and the element, so `device=\"gpu\"` draws the same numbers.",
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
