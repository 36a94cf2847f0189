/* ops/image/noise.c: the noise operators' shared element loop and Poisson sampler (noise.h). */
#include <math.h>

#include "ops/image/noise.h"
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
        fn(buf, n, &r, params);
        from(dst + (size_t)e * es, buf, n);
    }
    return SL_OK;
}

double sl__rng_poisson(sl_rng *r, double lam)
{
    if (!(lam > 0))
        return 0;
    if (lam < 10) {
        double l = exp(-lam), p = 1.0;
        double k = 0;
        for (;;) {
            p *= sl_rng_uniform(r);
            if (p <= l)
                return k;
            k += 1;
        }
    }
    double slam = sqrt(lam), loglam = log(lam);
    double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
        double u = sl_rng_uniform(r) - 0.5, v = sl_rng_uniform(r);
        double us = 0.5 - fabs(u);
        double k = floor((2 * a / us + b) * u + lam + 0.43);
        if (us >= 0.07 && v <= vr)
            return k;
        if (k < 0 || (us < 0.013 && v > us))
            continue;
        if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -lam + k * loglam - lgamma(k + 1))
            return k;
    }
}
