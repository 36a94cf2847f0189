/* ops/image/resample.cuh: the GPU passes of the image family's separable resampling
 * (resample.h), shared device code (CUDA C++, internal).
 *
 * Exports sl__rsg_pass (one pass of one sample, uploaded per sample), sl__rsg_kernel (the
 * functor sl_gpu_each runs over the passes of a batch) and the element stores.
 *
 * A sample's resampling is at most two passes, exactly those sl__resample_run makes on the
 * CPU (resample.c): the same pass order, the same coefficient tables (computed on the host by
 * sl__resample_tables and uploaded), the same intermediate type (uint8 for uint8 -> uint8,
 * else float32) and, per output element, the same arithmetic in the same order: int32 sums
 * of 22-bit fixed-point products rounded with HALF and clamped (uint8 -> uint8), or float32
 * products accumulated tap by tap from 0 (built with --fmad=false, so nothing is contracted
 * into an FMA), uint8 outputs clamped and rounded by the CPU's own sl__rs_clip8 / sl__rs_cvt8
 * (resample_simd.h). So the GPU's bytes equal the CPU's for every type. One thread per output
 * element (consecutive threads write consecutive addresses), except the horizontal pass of up to
 * 4 channels: one thread per pixel, its table row read once for all channels; a pass reads only
 * its source and its tables. Invariant (from resample.c): every tap first[o] + j lies inside the
 * pass's source.
 */
#ifndef SLUICE_OPS_IMAGE_RESAMPLE_CUH
#define SLUICE_OPS_IMAGE_RESAMPLE_CUH

#include <stdint.h>

#include "cuda/kernel.cuh"
extern "C" {
#include "ops/image/resample_simd.h" /* SL__RS_HALF, sl__rs_clip8, sl__rs_cvt8 */
}

/* sl__rsg_pass.kind */
enum { SL__RSG_NONE, SL__RSG_H, SL__RSG_V, SL__RSG_GATHER };
/* sl__rsg_pass.types: source -> destination element types (and arithmetic) */
enum { SL__RSG_FIXED, SL__RSG_U8_F32, SL__RSG_F32_F32, SL__RSG_F32_U8, SL__RSG_U8_U8 };

/* One pass of one sample. Strides and extents in elements.
 *   H:      rows x n output pixels of c channels; pixel o of row r is the sum over j < k of
 *           src[r * sstride + (first[o] + j) * c + ch] * w[o * k + j]
 *   V:      rows x n elements; element e of row o is the sum over j < k of
 *           src[(first[o] + j) * sstride + e] * w[o * k + j]
 *   GATHER: rows x n pixels of c channels (NN); pixel (y, x) is the source pixel
 *           (first[y], col[x]) of a source with rows sstride elements apart
 * types: FIXED (uint8 -> uint8, int32 weights) or the float32 paths; GATHER also U8_U8 and
 * F32_F32 (copies). Types and kind are the same for the whole sample, so a block (one sample)
 * never diverges on them. */
typedef struct sl__rsg_pass {
    int kind, types, k;
    const void *src; /* device */
    int64_t sstride;
    void *dst; /* device */
    int64_t dstride;
    int64_t rows, n, c;
    int64_t count;        /* work items: rows * n (* c for GATHER, and for H when c >
                             SL__RSG_PIXEL_C: else a pixel's c channels per item); 0: none */
    const int32_t *first; /* device: per output pixel (H), row (V, GATHER) */
    const void *w;        /* device: k weights per output pixel / row (int32 or float) */
    const int32_t *col;   /* device, GATHER: source column per output column */
} sl__rsg_pass;

static SL_HD void sl__rsg_st(float *p, float v)
{
    *p = v;
}
static SL_HD void sl__rsg_st(uint8_t *p, float v)
{
    *p = sl__rs_cvt8(v);
}

/* Output element *d of table row o: the p.k taps of s, step elements apart, weighted by row o
 * of p.w. FIXED: uint8 -> uint8, int32 sums of the 22-bit weights rounded and clamped; else
 * float32 accumulated tap by tap from 0 (the CPU's order). */
template <class TI, class TO, bool FIXED>
static SL_HD void sl__rsg_taps(const sl__rsg_pass &p, int64_t o, const TI *s, int64_t step, TO *d)
{
    if constexpr (FIXED) {
        const int32_t *w = (const int32_t *)p.w + o * p.k;
        int32_t a = SL__RS_HALF;
        for (int j = 0; j < p.k; j++)
            a += (int32_t)s[j * step] * w[j];
        *d = sl__rs_clip8(a);
    } else {
        const float *w = (const float *)p.w + o * p.k;
        float a = 0.0f;
        for (int j = 0; j < p.k; j++)
            a += (float)s[j * step] * w[j];
        sl__rsg_st(d, a);
    }
}

/* Horizontal, element i = ((r * n) + o) * c + ch. FIXED: uint8 -> uint8 with int32 weights. */
template <class TI, class TO, bool FIXED>
static SL_HD void sl__rsg_h(const sl__rsg_pass &p, int64_t i)
{
    int64_t t, r;
    const int64_t ch = sl__gdivmod(i, p.c, &t);
    const int64_t o = sl__gdivmod(t, p.n, &r);
    const TI *s = (const TI *)p.src + r * p.sstride + (int64_t)p.first[o] * p.c + ch;
    sl__rsg_taps<TI, TO, FIXED>(p, o, s, p.c, (TO *)p.dst + r * p.dstride + o * p.c + ch);
}

/* Horizontal, pixel i = r * n + o, all its c <= SL__RSG_PIXEL_C channels in one thread: the
 * table row (first[o], k weights) read once for them, the taps' channels contiguous, each
 * channel accumulated tap by tap from the same start as sl__rsg_taps (the same values). */
#define SL__RSG_PIXEL_C 4
template <class TI, class TO, bool FIXED>
static SL_HD void sl__rsg_h_pixel(const sl__rsg_pass &p, int64_t i)
{
    int64_t r;
    const int64_t o = sl__gdivmod(i, p.n, &r);
    const int c = (int)p.c;
    const TI *s = (const TI *)p.src + r * p.sstride + (int64_t)p.first[o] * c;
    TO *d = (TO *)p.dst + r * p.dstride + o * c;
    if constexpr (FIXED) {
        const int32_t *w = (const int32_t *)p.w + o * p.k;
        int32_t a[SL__RSG_PIXEL_C] = {SL__RS_HALF, SL__RS_HALF, SL__RS_HALF, SL__RS_HALF};
        for (int j = 0; j < p.k; j++, s += c) {
            const int32_t wj = w[j];
            for (int ch = 0; ch < c; ch++)
                a[ch] += (int32_t)s[ch] * wj;
        }
        for (int ch = 0; ch < c; ch++)
            d[ch] = sl__rs_clip8(a[ch]);
    } else {
        const float *w = (const float *)p.w + o * p.k;
        float a[SL__RSG_PIXEL_C] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int j = 0; j < p.k; j++, s += c) {
            const float wj = w[j];
            for (int ch = 0; ch < c; ch++)
                a[ch] += (float)s[ch] * wj;
        }
        for (int ch = 0; ch < c; ch++)
            sl__rsg_st(d + ch, a[ch]);
    }
}

/* Vertical, element i = o * n + e. */
template <class TI, class TO, bool FIXED>
static SL_HD void sl__rsg_v(const sl__rsg_pass &p, int64_t i)
{
    int64_t o;
    const int64_t e = sl__gdivmod(i, p.n, &o);
    const TI *s = (const TI *)p.src + (int64_t)p.first[o] * p.sstride + e;
    sl__rsg_taps<TI, TO, FIXED>(p, o, s, p.sstride, (TO *)p.dst + o * p.dstride + e);
}

/* NN gather, element i = ((y * n) + x) * c + ch; same types copy the bits (as memcpy). */
static SL_HD void sl__rsg_gather(const sl__rsg_pass &p, int64_t i)
{
    int64_t t, y;
    const int64_t ch = sl__gdivmod(i, p.c, &t);
    const int64_t x = sl__gdivmod(t, p.n, &y);
    const int64_t si = (int64_t)p.first[y] * p.sstride + (int64_t)p.col[x] * p.c + ch;
    switch (p.types) {
    case SL__RSG_U8_U8: ((uint8_t *)p.dst)[i] = ((const uint8_t *)p.src)[si]; break;
    case SL__RSG_F32_F32: ((uint32_t *)p.dst)[i] = ((const uint32_t *)p.src)[si]; break;
    case SL__RSG_U8_F32: ((float *)p.dst)[i] = (float)((const uint8_t *)p.src)[si]; break;
    default: ((uint8_t *)p.dst)[i] = sl__rs_cvt8(((const float *)p.src)[si]); break;
    }
}

/* Runs pass `which` (0: first, 1: second) of every sample: passes[2 * sample + which]. */
struct sl__rsg_kernel {
    const sl__rsg_pass *passes; /* device, 2 per sample */
    int which;

    SL_HD int64_t count(int s) const
    {
        return passes[2 * s + which].count;
    }
    SL_HD void operator()(int s, int64_t i) const
    {
        const sl__rsg_pass &p = passes[2 * s + which];
        if (p.kind == SL__RSG_GATHER) {
            sl__rsg_gather(p, i);
            return;
        }
        const bool h = p.kind == SL__RSG_H;
        if (h && p.c <= SL__RSG_PIXEL_C) { /* a pixel per element (count: rows * n) */
            switch (p.types) {
            case SL__RSG_FIXED: sl__rsg_h_pixel<uint8_t, uint8_t, true>(p, i); break;
            case SL__RSG_U8_F32: sl__rsg_h_pixel<uint8_t, float, false>(p, i); break;
            case SL__RSG_F32_U8: sl__rsg_h_pixel<float, uint8_t, false>(p, i); break;
            default: sl__rsg_h_pixel<float, float, false>(p, i); break;
            }
            return;
        }
        switch (p.types) {
        case SL__RSG_FIXED:
            h ? sl__rsg_h<uint8_t, uint8_t, true>(p, i) : sl__rsg_v<uint8_t, uint8_t, true>(p, i);
            break;
        case SL__RSG_U8_F32:
            h ? sl__rsg_h<uint8_t, float, false>(p, i) : sl__rsg_v<uint8_t, float, false>(p, i);
            break;
        case SL__RSG_F32_U8:
            h ? sl__rsg_h<float, uint8_t, false>(p, i) : sl__rsg_v<float, uint8_t, false>(p, i);
            break;
        default:
            h ? sl__rsg_h<float, float, false>(p, i) : sl__rsg_v<float, float, false>(p, i);
            break;
        }
    }
};

#endif
