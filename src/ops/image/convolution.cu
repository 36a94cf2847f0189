/* ops/image/convolution.cu: the GPU run of the separable convolutions (convolution.h):
 * gaussian_blur and laplacian.
 *
 * Exports sl__conv_run_gpu. On the host, per sample: the operator's filters (its callback, the
 * code its CPU run uses for the kernels) packed into one weight array, and one pass descriptor
 * per (filter, axis, sample); both are uploaded once. Then per filter one launch per spatial
 * axis covers the whole batch (the first reads the input in its type, the others float32
 * scratch, ping-pong), then one launch adds the filter's scaled result into the sum (laplacian),
 * and one launch converts the result to the output type. The float32 expressions are
 * convolution.c's, term by term in the same order (acc = 0; acc += w[t] * x), borders
 * reflect-101 by the same function, and with nvcc --fmad=false nothing is contracted, so each
 * result is bit-identical to the CPU operator's.
 * Invariant: nothing here reads sample data on the host; each functor reads sample s's source
 * and writes its destination, count(s) elements.
 */
#include <string.h>

#include "ops/image/convolution.h"
#include "ops/tensor/tensor.cuh"

/* One pass of one filter over one sample: src (input type for the first axis, else float32)
 * filtered along the middle axis of outer x n x inner into dst (float32). */
typedef struct pass {
    const void *src;
    float *dst;
    int64_t outer, n, inner;
    int64_t koff; /* first weight in the uploaded weights */
    int len;
} pass;

/* One sample: its input, output, offset in the float32 scratch and factors per filter. */
typedef struct sample {
    const void *in;
    void *out;
    int64_t off, numel;
    float scale[SL_MAX_NDIM];
} sample;

/* reflect-101 of index i into [0, n), convolution.c's reflect. */
static SL_HD int64_t reflect(int64_t i, int64_t n)
{
    if (n == 1)
        return 0;
    while (i < 0 || i >= n) {
        if (i < 0)
            i = -i;
        if (i >= n)
            i = 2 * n - 2 - i;
    }
    return i;
}

/* One thread per output element of a pass: acc = sum_t w[t] * src[reflect(x + t - r)]. */
template <class IN> struct axis_k {
    const pass *p; /* device, one per sample */
    const float *w;

    SL_HD int64_t count(int s) const
    {
        return p[s].outer * p[s].n * p[s].inner;
    }
    SL_HD void operator()(int s, int64_t e) const
    {
        const pass &d = p[s];
        int64_t q, o;
        const int64_t i = sl__gdivmod(e, d.inner, &q);
        const int64_t x = sl__gdivmod(q, d.n, &o);
        const IN *src = (const IN *)d.src + o * d.n * d.inner + i;
        const float *k = w + d.koff;
        const int r = d.len / 2;
        float acc = 0.0f;
        for (int t = 0; t < d.len; t++)
            acc += k[t] * sl__gconvert<float>(src[reflect(x + t - r, d.n) * d.inner]);
        d.dst[e] = acc;
    }
};

/* No spatial axis: the input converted to float32 (convolution.c's first step). */
template <class IN> struct to_float_k {
    const sample *s;
    float *dst;

    SL_HD int64_t count(int i) const
    {
        return s[i].numel;
    }
    SL_HD void operator()(int i, int64_t e) const
    {
        dst[s[i].off + e] = sl__gconvert<float>(((const IN *)s[i].in)[e]);
    }
};

/* sum = f * part for the first filter, sum + f * part after (laplacian.c's loop). */
struct accumulate_k {
    const sample *s;
    const float *part;
    float *sum;
    int filter;

    SL_HD int64_t count(int i) const
    {
        return s[i].numel;
    }
    SL_HD void operator()(int i, int64_t e) const
    {
        const int64_t k = s[i].off + e;
        const float f = s[i].scale[filter];
        sum[k] = filter == 0 ? f * part[k] : sum[k] + f * part[k];
    }
};

/* The float32 result converted to the output type (sl__conv_store with scale 1). */
template <class O> struct store_k {
    const sample *s;
    const float *res; /* NULL: zeros (no spatial axis, summed) */

    SL_HD int64_t count(int i) const
    {
        return s[i].numel;
    }
    SL_HD void operator()(int i, int64_t e) const
    {
        ((O *)s[i].out)[e] = sl__gconvert<O>(res ? res[s[i].off + e] : 0.0f);
    }
};

template <class IN>
static sl_status run_pass(sl_ctx *ctx, const pass *p, const float *w, int n, int64_t max_n)
{
    return sl_gpu_each(ctx, n, max_n, axis_k<IN>{p, w}, "convolution");
}

static sl_status first_pass(sl_ctx *ctx, sl_dtype t, const pass *p, const float *w, int n,
                            int64_t max_n)
{
    SL__GTYPE_SWITCH(t, T, return run_pass<T>(ctx, p, w, n, max_n));
    return sl_fail(ctx, SL_EINTERNAL, "convolution: no GPU kernel for dtype %d", (int)t);
}

static sl_status to_float(sl_ctx *ctx, sl_dtype t, const sample *s, float *dst, int n,
                          int64_t max_n)
{
    SL__GTYPE_SWITCH(t, T, return sl_gpu_each(ctx, n, max_n, to_float_k<T>{s, dst}, "convolution"));
    return sl_fail(ctx, SL_EINTERNAL, "convolution: no GPU kernel for dtype %d", (int)t);
}

static sl_status store(sl_ctx *ctx, sl_dtype t, const sample *s, const float *res, int n,
                       int64_t max_n)
{
    SL__GTYPE_SWITCH(t, T, return sl_gpu_each(ctx, n, max_n, store_k<T>{s, res}, "convolution"));
    return sl_fail(ctx, SL_EINTERNAL, "convolution: no GPU kernel for dtype %d", (int)t);
}

extern "C" sl_status sl__conv_run_gpu(sl_ctx *ctx, sl_dtype out_t, int nfilters, bool sum,
                                      int max_window, sl__conv_filters_fn fn)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx), ndim = sl_batch_ndim(in);
    const sl_dtype in_t = sl_batch_dtype(in);
    int axes[SL_MAX_NDIM];
    const int naxes = sl__conv_axes(sl_batch_layout(in), ndim, axes);
    if (n <= 0)
        return SL_OK;
    const int npass = nfilters * naxes;
    const size_t wcap = (size_t)(nfilters > 0 ? nfilters : 1) * (size_t)(naxes > 0 ? naxes : 1) *
                        (size_t)max_window;
    sample *hs = (sample *)sl_ctx_scratch_n(ctx, 0, sizeof(sample) * (size_t)n);
    pass *hp = (pass *)sl_ctx_scratch_n(ctx, 1,
                                        sizeof(pass) * (size_t)(npass > 0 ? npass : 1) * (size_t)n);
    float *hw = (float *)sl_ctx_scratch_n(ctx, 2, sizeof(float) * wcap * (size_t)n);
    float *buf = (float *)sl_ctx_scratch_n(ctx, 3, sizeof(float) * wcap);
    if (!hs || !hp || !hw || !buf)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for the filters of %d samples", n);
    int64_t total = 0, max_n = 0, nw = 0;
    for (int i = 0; i < n; i++) {
        memset(&hs[i], 0, sizeof hs[i]);
        hs[i].in = sl_batch_sample_data(in, i);
        hs[i].out = sl_ctx_output_data(ctx, 0, i);
        hs[i].off = total;
        hs[i].numel = sl_batch_sample_numel(in, i);
        total += hs[i].numel;
        max_n = hs[i].numel > max_n ? hs[i].numel : max_n;
    }
    /* float32 scratch: two ping-pong buffers and the sum */
    float *dev = NULL;
    if (total > 0 && naxes > 0) {
        dev = (float *)sl_ctx_gpu_scratch(ctx, 0, sizeof(float) * (size_t)total * 3);
        if (!dev)
            return SL_ENOMEM; /* the error is recorded */
    } else if (total > 0 && !sum) {
        dev = (float *)sl_ctx_gpu_scratch(ctx, 0, sizeof(float) * (size_t)total);
        if (!dev)
            return SL_ENOMEM;
    }
    float *pp[2] = {dev, dev ? dev + total : NULL}, *acc = dev ? dev + 2 * total : NULL;
    for (int i = 0; i < n; i++) {
        sl_ctx_focus_sample(ctx, i);
        sl__conv_filter f[SL_MAX_NDIM];
        memset(f, 0, sizeof f);
        sl_status st = fn(ctx, i, buf, f);
        if (st != SL_OK)
            return st;
        const int64_t *shape = sl_batch_shape(in, i);
        for (int p = 0; p < nfilters; p++) {
            hs[i].scale[p] = f[p].scale;
            for (int a = 0; a < naxes; a++) {
                pass *d = &hp[(size_t)(p * naxes + a) * n + i];
                int64_t outer = 1, inner = 1;
                for (int k = 0; k < axes[a]; k++)
                    outer *= shape[k];
                for (int k = axes[a] + 1; k < ndim; k++)
                    inner *= shape[k];
                d->outer = outer;
                d->n = shape[axes[a]];
                d->inner = inner;
                d->src = a == 0 || !dev ? hs[i].in : (const void *)(pp[(a - 1) % 2] + hs[i].off);
                d->dst = dev ? pp[a % 2] + hs[i].off : NULL;
                d->koff = nw;
                d->len = f[p].len[a];
                memcpy(hw + nw, f[p].k[a], sizeof(float) * (size_t)d->len);
                nw += d->len;
            }
        }
    }
    sl_ctx_focus_sample(ctx, -1);
    if (max_n == 0)
        return SL_OK;
    const sample *ds = sl_gpu_params(ctx, 0, hs, n);
    const pass *dp = npass > 0 ? sl_gpu_params(ctx, 1, hp, npass * n) : NULL;
    const float *dw = npass > 0 ? sl_gpu_params(ctx, 2, hw, (int)(nw > 0 ? nw : 1)) : NULL;
    if (!ds || (npass > 0 && (!dp || !dw)))
        return SL_ENOMEM; /* the error is recorded */
    sl_status st = SL_OK;
    if (naxes == 0) /* no spatial axis: the input itself is every filter's result */
        return sum ? store(ctx, out_t, ds, NULL, n, max_n)
               : (st = to_float(ctx, in_t, ds, dev, n, max_n)) != SL_OK
                   ? st
                   : store(ctx, out_t, ds, dev, n, max_n);
    for (int p = 0; p < nfilters && st == SL_OK; p++) {
        for (int a = 0; a < naxes && st == SL_OK; a++) {
            const pass *d = dp + (size_t)(p * naxes + a) * n;
            st = a == 0 ? first_pass(ctx, in_t, d, dw, n, max_n)
                        : run_pass<float>(ctx, d, dw, n, max_n);
        }
        if (st == SL_OK && sum)
            st = sl_gpu_each(ctx, n, max_n, accumulate_k{ds, pp[(naxes - 1) % 2], acc, p},
                             "convolution");
    }
    if (st != SL_OK)
        return st;
    return store(ctx, out_t, ds, sum ? acc : pp[(naxes - 1) % 2], n, max_n);
}
