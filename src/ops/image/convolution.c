/* ops/image/convolution.c: separable convolution with reflect-101 borders (see convolution.h). */
#include <string.h>

#include "ops/image/convolution.h"
#include "ops/tensor/tensor.h"

int sl__conv_axes(const char *layout, int ndim, int *out)
{
    int n = 0;
    bool named = layout && (int)strlen(layout) == ndim;
    for (int d = 0; d < ndim; d++)
        if (!named || (layout[d] != 'C' && layout[d] != 'F'))
            out[n++] = d;
    return n;
}

/* reflect-101 of index i into [0, n). */
static int64_t reflect(int64_t i, int64_t n)
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

/* out = in filtered along one axis: outer x n x inner, kernel of length len. */
static void conv_axis(const float *in, float *out, int64_t outer, int64_t n, int64_t inner,
                      const float *k, int len)
{
    int r = len / 2;
    for (int64_t o = 0; o < outer; o++) {
        const float *src = in + o * n * inner;
        float *dst = out + o * n * inner;
        for (int64_t x = 0; x < n; x++) {
            float *d = dst + x * inner;
            for (int64_t i = 0; i < inner; i++)
                d[i] = 0.0f;
            for (int t = 0; t < len; t++) {
                const float *s = src + reflect(x + t - r, n) * inner;
                float w = k[t];
                for (int64_t i = 0; i < inner; i++)
                    d[i] += w * s[i];
            }
        }
    }
}

void sl__conv_run(const void *in, sl_dtype in_t, int ndim, const int64_t *shape, int naxes,
                  const int *axes, const float *const *kernels, const int *len, float *sum,
                  bool acc, float *scratch)
{
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++)
        numel *= shape[d];
    if (numel == 0)
        return;
    float *a = scratch, *b = scratch + numel;
    sl__convert_get(SL_DTYPE_FLOAT32, in_t)(a, in, numel);
    for (int k = 0; k < naxes; k++) {
        int64_t outer = 1, inner = 1;
        for (int d = 0; d < axes[k]; d++)
            outer *= shape[d];
        for (int d = axes[k] + 1; d < ndim; d++)
            inner *= shape[d];
        conv_axis(a, b, outer, shape[axes[k]], inner, kernels[k], len[k]);
        float *t = a;
        a = b;
        b = t;
    }
    if (acc)
        for (int64_t i = 0; i < numel; i++)
            sum[i] += a[i];
    else
        memcpy(sum, a, (size_t)numel * sizeof(float));
}

void sl__conv_store(float *sum, int64_t numel, float scale, sl_dtype t, void *out)
{
    float *s = sum;
    if (scale != 1.0f)
        for (int64_t i = 0; i < numel; i++)
            s[i] *= scale;
    sl__convert_get(t, SL_DTYPE_FLOAT32)(out, s, numel);
}
