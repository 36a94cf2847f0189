/* random.uniform: uniformly distributed values, continuous in [lo, hi) or drawn from a discrete
 * set (DALI's fn.random.uniform).
 *
 * Exports: const sl_op_def sl_op_random_uniform.
 *
 * Each element of sample i is drawn in element order from the sample's own stream
 * r = sl_ctx_rng(ctx, i), so the output depends only on (seed, node, iteration, sample).
 * Continuous: lo + (hi - lo) * u with u uniform in [0, 1) (53 bits), computed in double; a value
 * that rounds up to hi in the output type is replaced by the largest value below hi, so the
 * interval stays half-open. Discrete: values[k] with k uniform in [0, n), unbiased.
 * Without `shape` a sample is one scalar (ndim 0). DALI's positional `shape_like` input is not
 * supported (no inputs).
 */
#include <math.h>
#include <stdint.h>

#include "ops/random/rng_shape.h"
#include "sluice/batch.h"
#include "sluice/op.h"

enum { A_RANGE, A_VALUES, A_SHAPE, A_DTYPE, A_SEED, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_RANGE] = {.name = "range",
                 .type = SL_ARG_FLOATS,
                 .def = "[-1.0, 1.0]",
                 .doc = "Half-open interval [lo, hi) of the values; lo <= hi.",
                 .flags = SL_ARG_TENSOR,
                 .min_len = 2,
                 .max_len = 2},
    [A_VALUES] = {.name = "values",
                  .type = SL_ARG_FLOATS,
                  .doc = "Discrete set to draw from, each member equally likely. Exclusive with "
                         "range.",
                  .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR},
    [A_SHAPE] = SL__RNG_SHAPE_ARG_DEF,
    [A_DTYPE] = SL__RNG_FLOAT_DTYPE_ARG_DEF,
    [A_SEED] = SL_ARG_SEED_DEF,
};

static const sl_io_def outputs[] = {
    {"output", "Random values; a scalar per sample unless `shape` is given."},
};

/* `range` counts as given when connected or different from its default: whether
 * sl_init_arg_is_set() is true for a defaulted argument is not something op.h promises, and an
 * explicit [-1, 1] next to `values` is harmless (values wins). */
static bool range_given(const sl_op_init *ini)
{
    int n = 0;
    if (sl_init_arg_is_input(ini, A_RANGE))
        return true;
    if (!sl_init_arg_is_set(ini, A_RANGE))
        return false;
    const double *v = sl_init_arg_floats(ini, A_RANGE, &n);
    return !(n == 2 && v[0] == -1.0 && v[1] == 1.0);
}

static sl_status uniform_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    sl_status st = sl__rng_float_dtype_check(ini, A_DTYPE);
    if (st != SL_OK)
        return st;
    if (sl_init_arg_is_set(ini, A_VALUES) && range_given(ini))
        return sl_init_fail(ini, SL_EINVAL, "range and values are exclusive: give one of them");
    return SL_OK;
}

static sl_status uniform_setup(sl_ctx *ctx)
{
    return sl__rng_shape_setup(ctx, A_SHAPE, sl_ctx_arg_dtype(ctx, A_DTYPE));
}

/* Sample i's `values` is not empty, or else its `range` is not. */
static sl_status check_values_or_range(sl_ctx *ctx, int i)
{
    if (sl_ctx_arg_is_set(ctx, A_VALUES)) {
        double one[1];
        if (sl_ctx_arg_floats(ctx, A_VALUES, i, one, 1) < 1)
            return sl_fail(ctx, SL_EINVAL, "values is empty; give at least one value");
    } else {
        double r[2] = {0, 0};
        sl_ctx_arg_floats(ctx, A_RANGE, i, r, 2);
        if (!(r[0] <= r[1]))
            return sl_fail(ctx, SL_EINVAL, "range [%g, %g) is empty; need lo <= hi", r[0], r[1]);
    }
    return SL_OK;
}

static sl_status uniform_setup_sample(sl_ctx *ctx, int i)
{
    int64_t dims[SL_MAX_NDIM] = {0};
    sl_status st = sl__rng_shape_sample(ctx, A_SHAPE, i, sl__rng_shape_ndim(ctx, A_SHAPE), dims);
    if (st != SL_OK || (st = check_values_or_range(ctx, i)) != SL_OK)
        return st;
    sl_ctx_set_shape(ctx, 0, i, dims);
    return SL_OK;
}

static sl_status run_values(sl_ctx *ctx, int i, sl_rng *r, int64_t n, bool f64, void *out)
{
    double one[1];
    int nv = sl_ctx_arg_floats(ctx, A_VALUES, i, one, 1);
    double *v = sl_ctx_scratch(ctx, (size_t)nv * sizeof(double));
    if (!v)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d values", nv);
    sl_ctx_arg_floats(ctx, A_VALUES, i, v, nv);
    for (int64_t k = 0; k < n; k++) {
        double x = v[sl_rng_below(r, (uint64_t)nv)];
        if (f64)
            ((double *)out)[k] = x;
        else
            ((float *)out)[k] = (float)x;
    }
    return SL_OK;
}

static sl_status uniform_run_sample(sl_ctx *ctx, int i)
{
    sl_rng r = sl_ctx_rng(ctx, i);
    const bool f64 = sl_ctx_arg_dtype(ctx, A_DTYPE) == SL_DTYPE_FLOAT64;
    const int64_t n = sl__rng_shape_numel(ctx, A_SHAPE, i);
    void *out = sl_ctx_output_data(ctx, 0, i);

    if (sl_ctx_arg_is_set(ctx, A_VALUES))
        return run_values(ctx, i, &r, n, f64, out);

    double rg[2] = {0, 0};
    sl_ctx_arg_floats(ctx, A_RANGE, i, rg, 2);
    const double lo = rg[0], hi = rg[1], w = hi - lo;
    if (f64) {
        double *o = out;
        for (int64_t k = 0; k < n; k++) {
            double x = lo + w * sl_rng_uniform(&r);
            o[k] = x < hi ? x : lo < hi ? nextafter(hi, lo) : lo;
        }
    } else {
        float *o = out;
        const float flo = (float)lo, fhi = (float)hi;
        /* Below hi in float32; lo itself when the interval has no float strictly inside. */
        const float top = flo < fhi ? nextafterf(fhi, flo) : flo;
        for (int64_t k = 0; k < n; k++) {
            float x = (float)(lo + w * sl_rng_uniform(&r));
            o[k] = x < fhi ? x : top;
        }
    }
    return SL_OK;
}

const sl_op_def sl_op_random_uniform = {
    .name = "random.uniform",
    .doc = "Uniformly distributed random values in [lo, hi) or from a discrete set (DALI's "
           "random.uniform).\n\n"
           "`range` = [lo, hi) gives continuous values (half-open even after rounding to "
           "float32); `values` draws members of a set instead. Without `shape` each sample is "
           "one scalar, the usual feed for a per-sample argument such as an angle. Values "
           "depend only on the seed, the node, the iteration and the sample. DALI's positional "
           "`shape_like` input is not supported.",
    .min_inputs = 0,
    .max_inputs = 0,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_RANDOM,
    .init = uniform_init,
    .setup = uniform_setup,
    .setup_sample = uniform_setup_sample,
    .run_sample = uniform_run_sample,
};
