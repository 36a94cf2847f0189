/* src/ops/random/rng_shape.c: the `shape` argument of the random family, and the float `dtype`
 * check (see rng_shape.h).
 *
 * Exports sl__rng_shape_ndim, sl__rng_shape_sample, sl__rng_shape_setup, sl__rng_shape_numel,
 * sl__rng_float_dtype_check. Stateless; reads arguments and declares output 0 only.
 */
#include "ops/random/rng_shape.h"

int sl__rng_shape_ndim(sl_ctx *ctx, int arg)
{
    if (!sl_ctx_arg_is_set(ctx, arg) || sl_ctx_batch_size(ctx) == 0)
        return 0;
    return sl_ctx_arg_ints(ctx, arg, 0, NULL, 0);
}

sl_status sl__rng_shape_sample(sl_ctx *ctx, int arg, int i, int ndim, int64_t *dims)
{
    if (ndim == 0)
        return SL_OK;
    int n = sl_ctx_arg_ints(ctx, arg, i, dims, ndim);
    if (n != ndim)
        return sl_fail(ctx, SL_EINVAL,
                       "shape has %d dimensions here but %d in sample 0; all samples need the "
                       "same number",
                       n, ndim);
    for (int d = 0; d < ndim; d++)
        if (dims[d] < 0)
            return sl_fail(ctx, SL_EINVAL, "shape[%d] is %lld; extents must be >= 0", d,
                           (long long)dims[d]);
    return SL_OK;
}

sl_status sl__rng_shape_setup(sl_ctx *ctx, int arg, sl_dtype t)
{
    int ndim = sl__rng_shape_ndim(ctx, arg);
    if (ndim > SL_MAX_NDIM)
        return sl_fail(ctx, SL_EINVAL, "shape has %d dimensions; at most %d are supported", ndim,
                       SL_MAX_NDIM);
    sl_ctx_set_output(ctx, 0, t, ndim, NULL);
    return SL_OK;
}

int64_t sl__rng_shape_numel(sl_ctx *ctx, int arg, int i)
{
    const int ndim = sl__rng_shape_ndim(ctx, arg);
    const int64_t *shape = sl_ctx_output_shape(ctx, 0, i);
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    return n;
}

sl_status sl__rng_float_dtype_check(sl_op_init *ini, int arg)
{
    sl_dtype t = sl_init_arg_dtype(ini, arg);
    if (t != SL_DTYPE_FLOAT32 && t != SL_DTYPE_FLOAT64)
        return sl_init_fail(ini, SL_EUNSUPPORTED,
                            "dtype %s is not supported; use float32 or float64", sl_dtype_name(t));
    return SL_OK;
}
