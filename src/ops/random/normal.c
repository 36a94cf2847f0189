/* random.normal: normally distributed random values (DALI's fn.random.normal).
 *
 * Exports: const sl_op_def sl_op_random_normal.
 *
 * Each element of sample i is mean_i + stddev_i * z, z a standard normal drawn in element order
 * from the sample's own stream r = sl_ctx_rng(ctx, i) (Box-Muller on two 53-bit uniforms,
 * computed in double and rounded once to the output type), so the output depends only on (seed,
 * node, iteration, sample), never on threads or prefetch depth. Without `shape` a sample is one
 * scalar (ndim 0). DALI's positional `shape_like` input is not supported (no inputs).
 */
#include <stdbool.h>
#include <stdint.h>

#include "ops/random/rng_shape.h"
#include "sluice/batch.h"
#include "sluice/op.h"

enum { A_MEAN, A_STDDEV, A_SHAPE, A_DTYPE, A_SEED, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_MEAN] = {.name = "mean",
                .type = SL_ARG_FLOAT,
                .def = "0.0",
                .doc = "Mean of the distribution.",
                .flags = SL_ARG_TENSOR},
    [A_STDDEV] = {.name = "stddev",
                  .type = SL_ARG_FLOAT,
                  .def = "1.0",
                  .doc = "Standard deviation of the distribution; >= 0 (0 gives `mean`).",
                  .flags = SL_ARG_TENSOR},
    [A_SHAPE] = SL__RNG_SHAPE_ARG_DEF,
    [A_DTYPE] = SL__RNG_FLOAT_DTYPE_ARG_DEF,
    [A_SEED] = SL_ARG_SEED_DEF,
};

static const sl_io_def outputs[] = {
    {"output", "Random values; a scalar per sample unless `shape` is given."},
};

static bool stddev_ok(double s)
{
    return s >= 0; /* NaN fails too */
}

static sl_status normal_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    sl_status st = sl__rng_float_dtype_check(ini, A_DTYPE);
    if (st != SL_OK)
        return st;
    if (!sl_init_arg_is_input(ini, A_STDDEV) && !stddev_ok(sl_init_arg_float(ini, A_STDDEV)))
        return sl_init_fail(ini, SL_EINVAL, "stddev is %g; it must be >= 0",
                            sl_init_arg_float(ini, A_STDDEV));
    return SL_OK;
}

static sl_status normal_setup(sl_ctx *ctx)
{
    return sl__rng_shape_setup(ctx, A_SHAPE, sl_ctx_arg_dtype(ctx, A_DTYPE));
}

static sl_status normal_setup_sample(sl_ctx *ctx, int i)
{
    int64_t dims[SL_MAX_NDIM] = {0};
    double sd = sl_ctx_arg_float(ctx, A_STDDEV, i);
    sl_status st = sl__rng_shape_sample(ctx, A_SHAPE, i, sl__rng_shape_ndim(ctx, A_SHAPE), dims);
    if (st != SL_OK)
        return st;
    if (!stddev_ok(sd))
        return sl_fail(ctx, SL_EINVAL, "stddev is %g; it must be >= 0", sd);
    sl_ctx_set_shape(ctx, 0, i, dims);
    return SL_OK;
}

static sl_status normal_run_sample(sl_ctx *ctx, int i)
{
    sl_rng r = sl_ctx_rng(ctx, i);
    const double mean = sl_ctx_arg_float(ctx, A_MEAN, i);
    const double sd = sl_ctx_arg_float(ctx, A_STDDEV, i);
    const int64_t n = sl__rng_shape_numel(ctx, A_SHAPE, i);
    void *out = sl_ctx_output_data(ctx, 0, i);
    if (sl_ctx_arg_dtype(ctx, A_DTYPE) == SL_DTYPE_FLOAT64) {
        double *o = out;
        for (int64_t k = 0; k < n; k++)
            o[k] = mean + sd * sl_rng_normal(&r);
    } else {
        float *o = out;
        for (int64_t k = 0; k < n; k++)
            o[k] = (float)(mean + sd * sl_rng_normal(&r));
    }
    return SL_OK;
}

const sl_op_def sl_op_random_normal = {
    .name = "random.normal",
    .doc = "Normally distributed random values (DALI's random.normal).\n\n"
           "Each element is `mean + stddev * z` with z standard normal; `mean` and `stddev` may "
           "be per-sample argument inputs. Without `shape` each sample is one scalar. Values "
           "depend only on the seed, the node, the iteration and the sample. Differs from DALI: "
           "dtype is float32 or float64 only (DALI also rounds to integer types), and the "
           "positional `shape_like` input is not supported.",
    .min_inputs = 0,
    .max_inputs = 0,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_RANDOM,
    .init = normal_init,
    .setup = normal_setup,
    .setup_sample = normal_setup_sample,
    .run_sample = normal_run_sample,
};
