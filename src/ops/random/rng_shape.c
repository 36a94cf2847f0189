/* src/ops/random/rng_shape.c: the `shape` argument of the random family (see rng_shape.h).
 *
 * Exports sl__rng_shape_ndim, sl__rng_shape_sample. Stateless; reads arguments only.
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
