/* noise.shot: Poisson (shot) noise (DALI's fn.noise.shot).
 *
 * Exports: const sl_op_def sl_op_noise_shot ("noise.shot", CPU).
 *
 * Each element x of sample i becomes Poisson(max(0, x / factor)) * factor, drawn from the
 * sample's stream in element order (ops/image/noise.h's sampler), converted back to the input
 * type with rounding and saturation; factor 0 leaves the data unchanged.
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/image/noise.h"

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

static void shot(double *v, int64_t n, sl_rng *r, const void *p)
{
    double f = *(const double *)p;
    for (int64_t k = 0; k < n; k++) {
        double lam = v[k] / f;
        v[k] = sl__rng_poisson(r, lam > 0 ? lam : 0) * f;
    }
}

static sl_status run_sample(sl_ctx *ctx, int i)
{
    double f = sl_ctx_arg_float(ctx, A_FACTOR, i);
    if (!(f >= 0))
        return sl_fail(ctx, SL_EINVAL, "factor must be >= 0, got %g", f);
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
           "input. Each sample draws from its own stream of the node's seed.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_RANDOM | SL_OP_SAMPLEWISE,
    .setup = sl__noise_setup,
    .setup_sample = sl__noise_setup_sample,
    .run_sample = run_sample,
};
