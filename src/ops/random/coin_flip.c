/* random.coin_flip: Bernoulli samples, exactly 0 or 1 (DALI's fn.random.coin_flip).
 *
 * Exports: const sl_op_def sl_op_random_coin_flip.
 *
 * Each element of sample i is (sl_rng_uniform(&r) < probability_i), drawn in element order
 * from the sample's own stream r = sl_ctx_rng(ctx, i): the output depends only on (seed, node,
 * iteration, sample), never on threads or prefetch depth. Without `shape` a sample is one
 * scalar (ndim 0); with it every sample has that shape (per sample when `shape` is an argument
 * input, but one number of dimensions for the batch).
 * DALI's optional positional `shape_like` input is not supported (no inputs).
 */
#include <stdint.h>

#include "ops/random/rng_shape.h"
#include "sluice/batch.h"
#include "sluice/op.h"

enum { A_PROBABILITY, A_SHAPE, A_DTYPE, A_SEED, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_PROBABILITY] = {.name = "probability",
                       .type = SL_ARG_FLOAT,
                       .def = "0.5",
                       .doc = "Probability of a 1.",
                       .flags = SL_ARG_TENSOR | SL_ARG_RANGE,
                       .min = 0.0,
                       .max = 1.0},
    [A_SHAPE] = SL__RNG_SHAPE_ARG_DEF,
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .def = "\"int32\"",
                 .doc = "Output type: int32, uint8 or bool."},
    [A_SEED] = SL_ARG_SEED_DEF,
};

static const sl_io_def outputs[] = {
    {"output", "0 or 1 per element; a scalar per sample unless `shape` is given."},
};

static sl_status coin_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    sl_dtype t = sl_init_arg_dtype(ini, A_DTYPE);
    if (t != SL_DTYPE_INT32 && t != SL_DTYPE_UINT8 && t != SL_DTYPE_BOOL)
        return sl_init_fail(ini, SL_EUNSUPPORTED,
                            "dtype %s is not supported; use int32, uint8 or bool",
                            sl_dtype_name(t));
    return SL_OK;
}

static sl_status coin_setup(sl_ctx *ctx)
{
    return sl__rng_shape_setup(ctx, A_SHAPE, sl_ctx_arg_dtype(ctx, A_DTYPE));
}

static sl_status coin_setup_sample(sl_ctx *ctx, int i)
{
    int64_t dims[SL_MAX_NDIM] = {0};
    sl_status st = sl__rng_shape_sample(ctx, A_SHAPE, i, sl__rng_shape_ndim(ctx, A_SHAPE), dims);
    if (st != SL_OK)
        return st;
    sl_ctx_set_shape(ctx, 0, i, dims);
    return SL_OK;
}

static sl_status coin_run_sample(sl_ctx *ctx, int i)
{
    sl_rng r = sl_ctx_rng(ctx, i);
    const double p = sl_ctx_arg_float(ctx, A_PROBABILITY, i);
    const sl_dtype t = sl_ctx_arg_dtype(ctx, A_DTYPE);
    const int64_t n = sl__rng_shape_numel(ctx, A_SHAPE, i);
    void *out = sl_ctx_output_data(ctx, 0, i);

    if (t == SL_DTYPE_INT32) {
        int32_t *o = out;
        for (int64_t k = 0; k < n; k++)
            o[k] = sl_rng_uniform(&r) < p;
    } else if (t == SL_DTYPE_UINT8) {
        uint8_t *o = out;
        for (int64_t k = 0; k < n; k++)
            o[k] = sl_rng_uniform(&r) < p;
    } else {
        bool *o = out;
        for (int64_t k = 0; k < n; k++)
            o[k] = sl_rng_uniform(&r) < p;
    }
    return SL_OK;
}

const sl_op_def sl_op_random_coin_flip = {
    .name = "random.coin_flip",
    .doc = "Random 0/1 values: 1 with probability `probability` (DALI's random.coin_flip).\n\n"
           "Without `shape` each sample is one scalar, the usual feed for a per-sample `mirror` "
           "or `horizontal` argument. Values depend only on the seed, the node, the iteration "
           "and the sample. DALI's positional `shape_like` input is not supported.",
    .min_inputs = 0,
    .max_inputs = 0,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_RANDOM,
    .init = coin_init,
    .setup = coin_setup,
    .setup_sample = coin_setup_sample,
    .run_sample = coin_run_sample,
};
