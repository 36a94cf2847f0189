/* crop_mirror_normalize.cu: the GPU run of crop_mirror_normalize (crop_mirror_normalize.c):
 * crop, mirror, normalisation, channel padding, layout and cast fused into one kernel.
 *
 * Exports (crop_mirror_normalize.h): sl__cmn_gpu.
 *
 * One thread per output pixel: it reads the pixel's C input channels once and writes all OC
 * output channels, so in CHW consecutive threads write consecutive addresses of each plane and
 * in HWC consecutive runs of OC values; CHW output of 3 channels, rows a multiple of 4 wide,
 * 4 pixels per thread with vector loads and stores (cmn_k). Instantiated per input type (uint8,
 * float32), output type (float32, float16, uint8, int8) and for C = 3 (the loops unrolled) or any
 * C. Arithmetic: the CPU's row kernels' (x - mean) * mul + shift in float32, each operation rounded
 * (built with --fmad=false), then the CPU's conversions (cv_f16 / cv_i8 of crop_mirror_normalize.c
 * written for host and device, and convert.h's sl__cv_u8 itself): so every output equals the CPU's.
 */
#include <cuda_fp16.h>

#include "ops/image/crop_mirror_normalize.h"
#include "ops/tensor/tensor.cuh"

/* The CPU's conversions of a normalised value (crop_mirror_normalize.c). */
static SL_HD void cmn_store(float *p, float v)
{
    *p = v;
}

/* float16: saturated to +-65504 (NaN stays NaN), then rounded to nearest even. */
static SL_HD void cmn_store(sl__gf16 *p, float v)
{
    v = v < -65504.0f ? -65504.0f : v > 65504.0f ? 65504.0f : v;
    p->bits = __half_as_ushort(__float2half_rn(v));
}

/* uint8: clamped (NaN -> 0), halves up: convert.h's sl__cv_u8, as on the CPU. */
static SL_HD void cmn_store(uint8_t *p, float v)
{
    *p = sl__cv_u8(v);
}

/* int8: clamped (NaN -> -128, as the CPU's max(v, lo)), halves away from zero. */
static SL_HD void cmn_store(int8_t *p, float v)
{
    v = v > -128.0f ? v : -128.0f;
    v = v < 127.0f ? v : 127.0f;
    float t = truncf(v);
    *p = (int8_t)(int32_t)(fabsf(v - t) >= 0.5f ? t + copysignf(1.0f, v) : t);
}

/* A vector of 4 elements of O for one store: 16, 8 or 4 bytes. */
template <int BYTES> struct cmn_vec;
template <> struct cmn_vec<16> {
    typedef uint4 type;
};
template <> struct cmn_vec<8> {
    typedef uint2 type;
};
template <> struct cmn_vec<4> {
    typedef uint32_t type;
};

/* Stores 4 consecutive outputs: one vector store on the device when p is aligned to it (it is
 * in CHW with ow % 4 == 0: every run of 4 starts at a multiple of 4 elements of the sample),
 * else element by element; the values are converted exactly as cmn_store does one. */
template <class O> static SL_HD void cmn_store4(O *p, const float v[4])
{
    O t[4];
    for (int k = 0; k < 4; k++)
        cmn_store(t + k, v[k]);
#ifdef __CUDA_ARCH__
    typedef typename cmn_vec<(int)sizeof(O) * 4>::type V;
    if (((uintptr_t)p & (sizeof(V) - 1)) == 0) {
        V w;
        memcpy(&w, t, sizeof w);
        *(V *)(void *)p = w;
        return;
    }
#endif
    memcpy(p, t, sizeof t);
}

/* The 4 pixels' 3 channels from 12 contiguous input values at src (the first pixel in memory
 * first): one to three 4-byte loads for uint8 when aligned, else element by element. */
static SL_HD void cmn_load12(const uint8_t *src, float v[12])
{
    uint8_t b[12];
#ifdef __CUDA_ARCH__
    if (((uintptr_t)src & 3) == 0) {
        const uint32_t *w = (const uint32_t *)(const void *)src;
        uint32_t w3[3] = {w[0], w[1], w[2]};
        memcpy(b, w3, sizeof b);
    } else
#endif
        memcpy(b, src, sizeof b);
    for (int k = 0; k < 12; k++)
        v[k] = (float)b[k];
}

static SL_HD void cmn_load12(const float *src, float v[12])
{
    for (int k = 0; k < 12; k++)
        v[k] = src[k];
}

/* Whether a sample runs 4 pixels per element (cmn_k below): CHW output of 3-channel input (c3:
 * the kernel instantiated with NC = 3), rows a multiple of 4 wide, at most 4 output channels.
 * The kernel's count() and the grid's size on the host both ask this. */
static SL_HD bool cmn_quad(bool c3, bool chw, const sl__cmn_gsample &p)
{
    return c3 && chw && (p.ow & 3) == 0 && p.OC <= 4;
}

/* NC: the channel count when known at compile time (3), else 0 (read from the sample).
 * Two shapes of work per sample: one output pixel per element (all outputs), or, for CHW
 * output of 3-channel input (NC = 3) whose rows are a multiple of 4 pixels wide (ow % 4 ==
 * 0: the ImageNet crops), 4 consecutive pixels of a row per element (`quad`): their 12 input
 * values read at once (4-byte loads of uint8) and each output plane written with one 16-byte
 * (float32), 8-byte (float16) or 4-byte (8-bit) store, so that a warp reads 384 contiguous
 * bytes and writes 512 contiguous bytes per plane. The values are the same expressions either
 * way. */
template <class I, class O, int NC> struct cmn_k {
    const sl__cmn_gsample *s; /* device */
    const float *coef;        /* device */
    bool chw;

    SL_HD bool quad(const sl__cmn_gsample &p) const
    {
        return cmn_quad(NC == 3, chw, p);
    }
    SL_HD int64_t count(int i) const
    {
        return s[i].OC > 0 ? s[i].oh * (quad(s[i]) ? s[i].ow / 4 : s[i].ow) : 0;
    }
    SL_HD void operator()(int si, int64_t i) const
    {
        /* a copy: in registers, where a reference would be read again from global memory after
         * every store (the stores could alias it, for all the compiler knows) */
        const sl__cmn_gsample p = s[si];
        if (quad(p)) {
            run4(p, i);
            return;
        }
        const int64_t C = NC ? NC : p.C, OC = p.OC;
        int64_t y, x = sl__gdivmod(i, p.ow, &y);
        const int64_t iy = p.y0 + y, ix = p.mirror ? p.x0 + p.ow - 1 - x : p.x0 + x;
        const float *mean = coef + p.coef, *mul = mean + C, *fill = mul + C;
        const int64_t cs = chw ? p.oh * p.ow : 1; /* output channel stride */
        O *o = (O *)p.out + (chw ? i : i * OC);
        int64_t c = 0;
        if ((uint64_t)iy < (uint64_t)p.H && (uint64_t)ix < (uint64_t)p.W) {
            const I *px = (const I *)p.in + (iy * p.W + ix) * C;
            for (; c < C; c++)
                cmn_store(o + c * cs, ((float)px[c] - mean[c]) * mul[c] + p.shift);
        }
        for (; c < OC; c++)
            cmn_store(o + c * cs, fill[c]);
    }
    /* Pixels x .. x + 3 of row y (element q = y * ow / 4 + x / 4), CHW, C = 3, OC 3 or 4. */
    SL_HD void run4(const sl__cmn_gsample &p, int64_t q) const
    {
        int64_t y, x = 4 * sl__gdivmod(q, p.ow / 4, &y);
        const int64_t iy = p.y0 + y;
        /* input column of output pixel x + k: ix0 + k, or ix0 - k mirrored */
        const int64_t ix0 = p.mirror ? p.x0 + p.ow - 1 - x : p.x0 + x;
        const int64_t lo = p.mirror ? ix0 - 3 : ix0; /* the 4 columns [lo, lo + 3] */
        /* the coefficients in registers before the first store (as p above) */
        float mean[3], mul[3], fill[4];
        for (int c = 0; c < 3; c++) {
            mean[c] = coef[p.coef + c];
            mul[c] = coef[p.coef + 3 + c];
        }
        for (int c = 0; c < (int)p.OC; c++)
            fill[c] = coef[p.coef + 6 + c];
        const int64_t cs = p.oh * p.ow;
        O *o = (O *)p.out + y * p.ow + x;
        const bool row = (uint64_t)iy < (uint64_t)p.H;
        float in[12];
        bool inside[4];
        if (row && lo >= 0 && lo + 3 < p.W) {
            cmn_load12((const I *)p.in + (iy * p.W + lo) * 3, in);
            for (int k = 0; k < 4; k++)
                inside[k] = true;
        } else { /* at the image's edge or outside it: pixel by pixel */
            for (int k = 0; k < 4; k++) {
                const int64_t ix = lo + k;
                inside[k] = row && (uint64_t)ix < (uint64_t)p.W;
                for (int c = 0; c < 3; c++)
                    in[k * 3 + c] =
                        inside[k] ? (float)((const I *)p.in)[(iy * p.W + ix) * 3 + c] : 0.0f;
            }
        }
        for (int c = 0; c < (int)p.OC; c++) {
            float v[4];
            for (int k = 0; k < 4; k++) {
                const int m = p.mirror ? 3 - k : k; /* output pixel k is input column lo + m */
                v[k] = c < 3 && inside[m] ? (in[m * 3 + c] - mean[c]) * mul[c] + p.shift : fill[c];
            }
            cmn_store4(o + c * cs, v);
        }
    }
};

template <class I, class O>
static sl_status cmn_launch(sl_ctx *ctx, const sl__cmn_gsample *ds, int n, int64_t max_count,
                            const float *dc, bool chw, bool c3)
{
    if (c3) {
        cmn_k<I, O, 3> k = {ds, dc, chw};
        return sl_gpu_each(ctx, n, max_count, k, "crop_mirror_normalize");
    }
    cmn_k<I, O, 0> k = {ds, dc, chw};
    return sl_gpu_each(ctx, n, max_count, k, "crop_mirror_normalize");
}

template <class I>
static sl_status cmn_out(sl_ctx *ctx, const sl__cmn_gsample *ds, int n, int64_t max_count,
                         const float *dc, sl_dtype out_type, bool chw, bool c3)
{
    switch (out_type) {
    case SL_DTYPE_FLOAT32: return cmn_launch<I, float>(ctx, ds, n, max_count, dc, chw, c3);
    case SL_DTYPE_FLOAT16: return cmn_launch<I, sl__gf16>(ctx, ds, n, max_count, dc, chw, c3);
    case SL_DTYPE_UINT8: return cmn_launch<I, uint8_t>(ctx, ds, n, max_count, dc, chw, c3);
    case SL_DTYPE_INT8: return cmn_launch<I, int8_t>(ctx, ds, n, max_count, dc, chw, c3);
    default:
        return sl_fail(ctx, SL_EUNSUPPORTED, "output type %s has no GPU kernel",
                       sl_dtype_name(out_type));
    }
}

extern "C" sl_status sl__cmn_gpu(sl_ctx *ctx, const sl__cmn_gsample *s, int n, const float *coef,
                                 size_t ncoef, sl_dtype in_type, sl_dtype out_type, bool chw)
{
    bool c3 = true;
    for (int i = 0; i < n; i++)
        c3 = c3 && s[i].C == 3;
    /* the largest count() of a sample, which sizes the grid: 4 pixels per element where the
     * kernel does them so (cmn_quad), else 1 (a grid sized by pixels would launch 4x the
     * blocks a batch of ImageNet crops needs, three quarters of them idle) */
    int64_t max_count = 0;
    for (int i = 0; i < n; i++) {
        int64_t c = s[i].OC > 0 ? s[i].oh * (cmn_quad(c3, chw, s[i]) ? s[i].ow / 4 : s[i].ow) : 0;
        max_count = c > max_count ? c : max_count;
    }
    if (n <= 0 || max_count == 0)
        return SL_OK;
    const sl__cmn_gsample *ds = sl_gpu_params(ctx, 0, s, n);
    const float *dc = ds ? sl_gpu_params(ctx, 1, coef, (int)ncoef) : NULL;
    if (!dc)
        return SL_ENOMEM; /* recorded by the upload */
    if (in_type == SL_DTYPE_UINT8)
        return cmn_out<uint8_t>(ctx, ds, n, max_count, dc, out_type, chw, c3);
    if (in_type == SL_DTYPE_FLOAT32)
        return cmn_out<float>(ctx, ds, n, max_count, dc, out_type, chw, c3);
    return sl_fail(ctx, SL_EUNSUPPORTED, "input type %s has no GPU kernel", sl_dtype_name(in_type));
}
