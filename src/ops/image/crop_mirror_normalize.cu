/* crop_mirror_normalize.cu: the GPU run of crop_mirror_normalize (crop_mirror_normalize.c):
 * crop, mirror, normalisation, channel padding, layout and cast fused into one kernel.
 *
 * Exports (crop_mirror_normalize.h): sl__cmn_gpu.
 *
 * One thread per output pixel: it reads the pixel's C input channels once and writes all OC
 * output channels, so in CHW consecutive threads write consecutive addresses of each plane and
 * in HWC consecutive runs of OC values; CHW output of 3 channels, rows a multiple of 4 wide,
 * 4 pixels per thread with vector loads and stores in a kernel of its own (cmn_k4). Instantiated
 * per input type (uint8, float32), output type (float32, float16, uint8, int8) and for C = 3 (the
 * loops unrolled) or any C. Arithmetic: the CPU's row kernels' (x - mean) * mul + shift in float32,
 * each operation rounded (built with --fmad=false), then the CPU's conversions (cv_f16 / cv_i8 of
 * crop_mirror_normalize.c written for host and device, and convert.h's sl__cv_u8 itself): so every
 * output equals the CPU's.
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

/* Loops unrolled on the device (cmn_k4: 32 registers for uint8 input with, 40 and a stack
 * frame without); the host's compiler does not know the pragma. */
#ifdef __CUDA_ARCH__
#define CMN_UNROLL _Pragma("unroll")
#else
#define CMN_UNROLL
#endif

/* The 4 pixels' 12 input values (3 channels each, the first pixel in memory first): uint8
 * kept packed in 3 words and converted where used (12 floats would hold 9 more registers
 * through all the stores), read with three 4-byte loads when aligned; float as they are.
 * load: from 12 contiguous values; clear, then set: value by value (at the image's edge). */
template <class I> struct cmn_in12;
template <> struct cmn_in12<uint8_t> {
    uint32_t w[3];
    SL_HD void clear()
    {
        w[0] = w[1] = w[2] = 0;
    }
    SL_HD void set(int j, uint8_t v)
    {
        w[j >> 2] |= (uint32_t)v << (8 * (j & 3));
    }
    SL_HD void load(const uint8_t *src)
    {
#ifdef __CUDA_ARCH__
        if (((uintptr_t)src & 3) == 0) { /* the device is little-endian: byte j at 8 * (j & 3) */
            const uint32_t *q = (const uint32_t *)(const void *)src;
            w[0] = q[0];
            w[1] = q[1];
            w[2] = q[2];
            return;
        }
#endif
        clear();
        for (int j = 0; j < 12; j++)
            set(j, src[j]);
    }
    SL_HD float at(int j) const
    {
        return (float)((w[j >> 2] >> (8 * (j & 3))) & 0xffu);
    }
};
template <> struct cmn_in12<float> {
    float v[12];
    SL_HD void clear()
    {
        for (int j = 0; j < 12; j++)
            v[j] = 0.0f;
    }
    SL_HD void set(int j, float x)
    {
        v[j] = x;
    }
    SL_HD void load(const float *src)
    {
        for (int j = 0; j < 12; j++)
            v[j] = src[j];
    }
    SL_HD float at(int j) const
    {
        return v[j];
    }
};

/* Whether a sample runs 4 pixels per element (cmn_k4 below): CHW output of 3-channel input (c3:
 * all the batch's samples have 3), rows a multiple of 4 wide, at most 4 output channels. Both
 * kernels' count() and their grids' sizes on the host ask this. */
static SL_HD bool cmn_quad(bool c3, bool chw, const sl__cmn_gsample &p)
{
    /* and every index of cmn_k4's 32-bit arithmetic within int32 */
    const int64_t big = (int64_t)1 << 30;
    return c3 && chw && (p.ow & 3) == 0 && p.OC <= 4 && p.H < big && p.W < big && p.oh < big &&
           p.ow < big && p.y0 > -big && p.y0 < big && p.x0 > -big && p.x0 < big && p.coef < big &&
           p.H * p.W * 3 < big && p.oh * p.ow * p.OC < big;
}

/* One output pixel per element, for the samples cmn_quad leaves (any layout, channel count
 * and width; the ImageNet crops go to cmn_k4 below). NC: the channel count when known at
 * compile time (3), else 0 (read from the sample). */
template <class I, class O, int NC> struct cmn_k {
    const sl__cmn_gsample *s; /* device */
    const float *coef;        /* device */
    bool chw;

    SL_HD int64_t count(int i) const
    {
        return s[i].OC > 0 && !cmn_quad(NC == 3, chw, s[i]) ? s[i].oh * s[i].ow : 0;
    }
    SL_HD void operator()(int si, int64_t i) const
    {
        /* a copy: in registers, where a reference would be read again from global memory after
         * every store (the stores could alias it, for all the compiler knows) */
        const sl__cmn_gsample p = s[si];
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
};

/* The samples cmn_quad takes, 4 consecutive pixels of a row per element: their 12 input values
 * read at once (4-byte loads of uint8) and each output plane written with one 16-byte
 * (float32), 8-byte (float16) or 4-byte (8-bit) store, so that a warp reads 384 contiguous
 * bytes and writes 512 contiguous bytes per plane. A kernel of its own, in 32-bit arithmetic
 * (cmn_quad checked that every index fits), with the sample's fields read once into 32-bit
 * locals before the first store: a kernel's registers bound how many threads an SM holds,
 * and with them the loads and stores in flight. With the one-pixel path in the same kernel,
 * the sample copied whole and 64-bit indices, it took 56 registers: 4 blocks of 256 threads
 * per SM, and 54-69 % of the copy's bandwidth on the lent H100s (two runs of 4 per thread took
 * more and ran slower). The values are the one-pixel path's expressions. */
template <class I, class O> struct cmn_k4 {
    const sl__cmn_gsample *s; /* device */
    const float *coef;        /* device */
    bool chw;                 /* launched only where every sample has C = 3 (c3) */

    SL_HD int64_t count(int i) const
    {
        return s[i].OC > 0 && cmn_quad(true, chw, s[i]) ? s[i].oh * (s[i].ow / 4) : 0;
    }
    /* Pixels x .. x + 3 of row y (element q = y * ow / 4 + x / 4), CHW, C = 3, OC 3 or 4. */
    SL_HD void operator()(int si, int64_t q) const
    {
        const sl__cmn_gsample &sp = s[si];
        const int32_t H = (int32_t)sp.H, W = (int32_t)sp.W, oh = (int32_t)sp.oh;
        const int32_t ow = (int32_t)sp.ow, OC = (int32_t)sp.OC, cf = (int32_t)sp.coef;
        const int32_t y0 = (int32_t)sp.y0, x0 = (int32_t)sp.x0;
        const bool mirror = sp.mirror != 0;
        const float shift = sp.shift;
        const I *src = (const I *)sp.in;
        O *out = (O *)sp.out;
        const uint32_t runs = (uint32_t)ow / 4, uq = (uint32_t)q;
        const int32_t y = (int32_t)(uq / runs), x = 4 * (int32_t)(uq - (uint32_t)y * runs);
        const int32_t iy = y0 + y;
        /* input column of output pixel x + k: ix0 + k, or ix0 - k mirrored */
        const int32_t ix0 = mirror ? x0 + ow - 1 - x : x0 + x;
        const int32_t lo = mirror ? ix0 - 3 : ix0; /* the 4 columns [lo, lo + 3] */
        const bool row = (uint32_t)iy < (uint32_t)H;
        cmn_in12<I> in;
        bool inside[4];
        if (row && lo >= 0 && lo + 3 < W) {
            in.load(src + (iy * W + lo) * 3);
            for (int k = 0; k < 4; k++)
                inside[k] = true;
        } else { /* at the image's edge or outside it: pixel by pixel */
            in.clear();
            for (int k = 0; k < 4; k++) {
                const int32_t ix = lo + k;
                inside[k] = row && (uint32_t)ix < (uint32_t)W;
                for (int c = 0; c < 3 && inside[k]; c++)
                    in.set(k * 3 + c, src[(iy * W + ix) * 3 + c]);
            }
        }
        O *o = out + (y * ow + x);
        if (mirror)
            planes<true>(o, oh * ow, OC, cf, shift, in, inside);
        else
            planes<false>(o, oh * ow, OC, cf, shift, in, inside);
    }
    /* The output planes of the 4 pixels at o (plane stride cs). Each plane's coefficients are
     * read where it needs them (one value each), and MIRROR a constant, so that every index
     * into `in` and `inside` is one too (registers, not local memory). */
    template <bool MIRROR>
    SL_HD void planes(O *o, int32_t cs, int32_t OC, int32_t cf, float shift, const cmn_in12<I> &in,
                      const bool inside[4]) const
    {
        CMN_UNROLL
        for (int c = 0; c < 4; c++) {
            if (c >= OC)
                break;
            const float mean = c < 3 ? coef[cf + c] : 0.0f, mul = c < 3 ? coef[cf + 3 + c] : 0.0f;
            const float fill = coef[cf + 6 + c];
            float v[4];
            CMN_UNROLL
            for (int k = 0; k < 4; k++) {
                const int m = MIRROR ? 3 - k : k; /* output pixel k is input column lo + m */
                v[k] = c < 3 && inside[m] ? (in.at(m * 3 + c) - mean) * mul + shift : fill;
            }
            cmn_store4(o + c * cs, v);
        }
    }
};

/* max_count[0]: the largest count() of the one-pixel kernel, [1]: of cmn_k4 (0: not run). */
template <class I, class O>
static sl_status cmn_launch(sl_ctx *ctx, const sl__cmn_gsample *ds, int n,
                            const int64_t max_count[2], const float *dc, bool chw, bool c3)
{
    if (!c3) {
        cmn_k<I, O, 0> k = {ds, dc, chw};
        return sl_gpu_each(ctx, n, max_count[0], k, "crop_mirror_normalize");
    }
    cmn_k4<I, O> k4 = {ds, dc, chw};
    sl_status st = sl_gpu_each(ctx, n, max_count[1], k4, "crop_mirror_normalize");
    cmn_k<I, O, 3> k = {ds, dc, chw};
    return st == SL_OK ? sl_gpu_each(ctx, n, max_count[0], k, "crop_mirror_normalize") : st;
}

template <class I>
static sl_status cmn_out(sl_ctx *ctx, const sl__cmn_gsample *ds, int n, const int64_t max_count[2],
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
    /* each kernel's largest count() of a sample, which sizes its grid: the one-pixel kernel's
     * pixels, cmn_k4's runs of 4 (a grid sized by pixels would launch 4x the blocks a batch of
     * ImageNet crops needs, three quarters of them idle) */
    int64_t max_count[2] = {0, 0};
    for (int i = 0; i < n; i++) {
        const bool q = cmn_quad(c3, chw, s[i]);
        const int64_t c = s[i].OC > 0 ? s[i].oh * (q ? s[i].ow / 4 : s[i].ow) : 0;
        max_count[q] = c > max_count[q] ? c : max_count[q];
    }
    if (n <= 0 || (max_count[0] == 0 && max_count[1] == 0))
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
