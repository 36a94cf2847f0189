/* ops/image/noise.c: the noise operators' shared element loop and Poisson sampler (noise.h). */
#include <math.h>

#include "ops/image/noise.h"
#include "ops/image/noise_rng.h"
#include "ops/tensor/tensor.h"

#define CHUNK 1024

sl_status sl__noise_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    if (sl_batch_dtype(in) == SL_DTYPE_BOOL)
        return sl_fail(ctx, SL_EINVAL, "bool input is not supported");
    sl_ctx_set_output(ctx, 0, sl_batch_dtype(in), sl_batch_ndim(in), sl_batch_layout(in));
    return SL_OK;
}

sl_status sl__noise_setup_sample(sl_ctx *ctx, int i)
{
    sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(sl_ctx_input(ctx, 0), i));
    return SL_OK;
}

sl_status sl__noise_map(sl_ctx *ctx, int i, sl__noise_fn fn, const void *params)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    sl_dtype t = sl_batch_dtype(in);
    size_t es = sl_dtype_size(t);
    int64_t numel = sl_batch_sample_numel(in, i);
    const unsigned char *src = sl_batch_sample_data(in, i);
    unsigned char *dst = sl_ctx_output_data(ctx, 0, i);
    sl__convert_fn to = sl__convert_get(SL_DTYPE_FLOAT64, t),
                   from = sl__convert_get(t, SL_DTYPE_FLOAT64);
    double buf[CHUNK];
    sl_rng r = sl_ctx_rng(ctx, i);
    for (int64_t e = 0; e < numel; e += CHUNK) {
        int64_t n = numel - e < CHUNK ? numel - e : CHUNK;
        to(buf, src + (size_t)e * es, n);
        fn(buf, n, e, &r, params);
        from(dst + (size_t)e * es, buf, n);
    }
    return SL_OK;
}

double sl__rng_poisson(sl_rng *r, double lam)
{
    return sl__nr_poisson(r, lam);
}
