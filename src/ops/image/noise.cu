/* ops/image/noise.cu: the GPU run of the noise operators (noise.h): noise.gaussian, noise.shot
 * and noise.salt_and_pepper.
 *
 * Exports sl__noise_run_gpu. Per sample on the host: its stream (sl_ctx_rng, as the CPU run)
 * and the op's parameters, uploaded as one array; then one launch covers the batch, each thread
 * positioning its stream where the CPU's element loop would be (noise_rng.h):
 *   gaussian          one thread per element e: the normal from words 4e .. 4e + 3
 *   shot              one thread per element e: element e's own stream (sl__nr_element)
 *   salt_and_pepper   one thread per pixel p: the uniform from words 2p, 2p + 1; writes the
 *                     pixel's channels (salt, pepper or the input)
 * Values go through float64 and tensor.cuh's conversions, convert.c's rules, as on the CPU. The
 * draws are the CPU's bit for bit; emulated, the float64 libm calls are the host's, so results
 * are identical; on a device, CUDA's log / cos / lgamma may differ from glibc's in the last
 * ulp, which can move a rounded value by one (or, for shot, flip a rejection test) in rare
 * elements.
 * Invariant: nothing here reads sample data on the host.
 */
#include <string.h>

#include "ops/image/noise.h"
#include "ops/image/noise_rng.h"
#include "ops/tensor/tensor.cuh"

template <class T> struct gaussian_k {
    const sl__noise_gpu *s;

    SL_HD int64_t count(int i) const
    {
        return s[i].numel;
    }
    SL_HD void operator()(int i, int64_t e) const
    {
        const sl__noise_gpu &p = s[i];
        sl_rng r = p.r;
        sl__nr_seek(&r, (uint64_t)e * 4);
        double v = sl__gconvert<double>(((const T *)p.in)[e]);
        v += p.a + p.b * sl__nr_normal(&r);
        ((T *)p.out)[e] = sl__gconvert<T>(v);
    }
};

template <class T> struct shot_k {
    const sl__noise_gpu *s;

    SL_HD int64_t count(int i) const
    {
        return s[i].numel;
    }
    SL_HD void operator()(int i, int64_t e) const
    {
        const sl__noise_gpu &p = s[i];
        const T x = ((const T *)p.in)[e];
        if (p.a == 0) { /* factor 0: the input, as the CPU's copy */
            ((T *)p.out)[e] = x;
            return;
        }
        sl_rng r = p.r;
        sl__nr_element(&r, (uint64_t)e);
        const double lam = sl__gconvert<double>(x) / p.a;
        ((T *)p.out)[e] = sl__gconvert<T>(sl__nr_poisson(&r, lam > 0 ? lam : 0) * p.a);
    }
};

template <class T> struct salt_pepper_k {
    const sl__noise_gpu *s;

    SL_HD int64_t count(int i) const
    {
        return s[i].numel > 0 ? s[i].outer * s[i].inner : 0;
    }
    SL_HD void operator()(int i, int64_t px) const
    {
        const sl__noise_gpu &p = s[i];
        sl_rng r = p.r;
        sl__nr_seek(&r, (uint64_t)px * 2);
        const double u = sl__nr_uniform(&r);
        int64_t o;
        const int64_t j = sl__gdivmod(px, p.inner, &o);
        const T *src = (const T *)p.in + o * p.ch * p.inner + j;
        T *dst = (T *)p.out + o * p.ch * p.inner + j;
        if (u >= p.a) {
            for (int64_t k = 0; k < p.ch; k++)
                dst[k * p.inner] = src[k * p.inner];
            return;
        }
        T v;
        memcpy(&v, u < p.a * p.b ? p.salt : p.pepper, sizeof v);
        for (int64_t k = 0; k < p.ch; k++)
            dst[k * p.inner] = v;
    }
};

template <class T>
static sl_status launch(sl_ctx *ctx, int kind, const sl__noise_gpu *d, int n, int64_t max_n)
{
    const char *what = "noise";
    if (kind == SL__NOISE_GAUSSIAN)
        return sl_gpu_each(ctx, n, max_n, gaussian_k<T>{d}, what);
    if (kind == SL__NOISE_SHOT)
        return sl_gpu_each(ctx, n, max_n, shot_k<T>{d}, what);
    return sl_gpu_each(ctx, n, max_n, salt_pepper_k<T>{d}, what);
}

extern "C" sl_status sl__noise_run_gpu(sl_ctx *ctx, int kind, sl__noise_gpu_fn fn)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx);
    const sl_dtype t = sl_batch_dtype(in);
    if (n <= 0)
        return SL_OK;
    sl__noise_gpu *h = (sl__noise_gpu *)sl_ctx_scratch(ctx, sizeof(*h) * (size_t)n);
    if (!h)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    int64_t max_n = 0;
    for (int i = 0; i < n; i++) {
        memset(&h[i], 0, sizeof h[i]);
        h[i].in = sl_batch_sample_data(in, i);
        h[i].out = sl_ctx_output_data(ctx, 0, i);
        h[i].numel = sl_batch_sample_numel(in, i);
        h[i].r = sl_ctx_rng(ctx, i);
        h[i].outer = h[i].ch = h[i].inner = 1;
        sl_ctx_focus_sample(ctx, i);
        sl_status st = fn(ctx, i, &h[i]);
        if (st != SL_OK)
            return st;
        max_n = h[i].numel > max_n ? h[i].numel : max_n;
    }
    sl_ctx_focus_sample(ctx, -1);
    if (max_n == 0)
        return SL_OK;
    const sl__noise_gpu *d = sl_gpu_params(ctx, 0, h, n);
    if (!d)
        return SL_ENOMEM; /* the error is recorded */
    SL__GTYPE_SWITCH(t, T, return launch<T>(ctx, kind, d, n, max_n));
    return sl_fail(ctx, SL_EINTERNAL, "noise: no GPU kernel for dtype %d", (int)t);
}
