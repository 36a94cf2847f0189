/* ops/image/color.cuh: device code of the colour family (color.h), CUDA C++, internal.
 *
 * Exports sl__color_sample (one sample of a colour launch: device pointers and the sample's
 * sl__color_params, computed on the host) and the two functors of the family, run with
 * sl_gpu_each:
 *   sl__color_apply_k<IN, OUT, CIN, COUT>   one thread per pixel: out[k] = sum_j m[k][j] in[j]
 *                                           + off[k] for CIN -> COUT channels (1 or 3 each)
 *   sl__color_linear_k<IN, OUT>             one thread per element: out = in * mul + add
 * The float32 expressions are color.c's, term by term in the same order, and uint8 outputs go
 * through store_u8.h's sl__cv_u8, as on the CPU; with nvcc's --fmad=false nothing is contracted,
 * so each result is bit-identical to the CPU operator's.
 * Invariant: a functor reads sample s's src and writes its dst, count(s) pixels (or elements),
 * nothing else; it holds only a device pointer to the uploaded sample array.
 */
#ifndef SLUICE_OPS_IMAGE_COLOR_CUH
#define SLUICE_OPS_IMAGE_COLOR_CUH

#include <stdint.h>

#include "cuda/kernel.cuh"
#include "ops/image/color.h"
#include "ops/image/store_u8.h"

/* One sample of a colour launch (uploaded with sl_gpu_params). */
typedef struct sl__color_sample {
    const void *src; /* device: the input sample */
    void *dst;       /* device: the output sample */
    int64_t n;       /* pixels (transform) or elements (linear) */
    sl__color_params p;
} sl__color_sample;

SL_HD void sl__color_store(float *d, float v)
{
    *d = v;
}

SL_HD void sl__color_store(uint8_t *d, float v)
{
    *d = sl__cv_u8(v); /* saturated to [0, 255] (NaN -> 0), halves up */
}

template <class IN, class OUT, int CIN, int COUT> struct sl__color_apply_k {
    const sl__color_sample *s; /* device, one per sample */

    SL_HD int64_t count(int i) const
    {
        return s[i].n;
    }

    SL_HD void operator()(int i, int64_t p) const
    {
        const IN *src = (const IN *)s[i].src + p * CIN;
        OUT *dst = (OUT *)s[i].dst + p * COUT;
        const sl__color_xform &x = s[i].p.x;
        if (CIN == 3) {
            const float a = src[0], b = src[1], c = src[2];
            for (int k = 0; k < COUT; k++)
                sl__color_store(dst + k, x.m[k][0] * a + x.m[k][1] * b + x.m[k][2] * c + x.off[k]);
        } else {
            const float a = src[0];
            for (int k = 0; k < COUT; k++)
                sl__color_store(dst + k, x.m[k][0] * a + x.off[k]);
        }
    }
};

template <class IN, class OUT> struct sl__color_linear_k {
    const sl__color_sample *s; /* device, one per sample */

    SL_HD int64_t count(int i) const
    {
        return s[i].n;
    }

    SL_HD void operator()(int i, int64_t k) const
    {
        const float v = (float)((const IN *)s[i].src)[k];
        sl__color_store((OUT *)s[i].dst + k, v * s[i].p.mul + s[i].p.add);
    }
};

#endif
