/* ops/image/resample_simd.c: SSE4.1 and AVX2 kernels of the uint8 -> uint8 passes of
 * resample.c (22-bit fixed point, as PIL), chosen at run time with __builtin_cpu_supports;
 * elsewhere than x86 every entry point answers "no kernel" and the scalar passes run.
 *
 * Exports the kernels and the instruction-set knob of resample_simd.h.
 *
 * Exactness: each output is HALF + sum of (uint8 pixel * int32 weight) in int32, >> 22 and
 * clamped to 0..255 (packs with signed, then unsigned saturation), exactly as the scalar
 * kernels compute it, only summed in another order: the totals are the same integers (no sum
 * overflows: the weights' absolute values add up to < 1.9 * 2^22, see axis_coeffs). So results
 * are bit-identical to the scalar kernels and to PIL, whatever the instruction set.
 *
 * Horizontal (3 or 4 channels), uint8 pixels widened to int32 lanes (one pixel per 4 lanes) and
 * multiplied by expanded weights (sl__rs_expand: the tap's weight in the channel lanes, 0 in
 * the others):
 *   AVX2, window <= 16 bytes (LINEAR up to ~2.5x downscaling): two output pixels per step, each
 *        128-bit half loading its window at once, one shuffle per tap; no horizontal sums;
 *   AVX2, wider windows: per output pixel, one 8-byte load per pair of taps (pixel j in the
 *        low half, j + 1 in the high one), the halves added at the end;
 *   SSE4.1: per output pixel, one 4-byte load per tap.
 * Those loads read up to 16 bytes past the window's start, so a pixel whose loads would pass
 * the row's `readable` elements goes through the scalar loop instead (1-3 pixels at the right
 * edge of a row).
 * Vertical: 32 (AVX2) or 16 (SSE4.1) elements of an output row at a time, the last block of a
 * row shifted back to end at the row's end (recomputing some elements, same values).
 */
#include <stdatomic.h>
#include <string.h>

#include "ops/image/resample_simd.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif

#define PREC SL__RS_PREC
#define HALF SL__RS_HALF

static atomic_int isa_limit = SL__RS_AVX2;

static sl__rs_isa isa_cpu(void)
{
#if HAVE_X86
    if (__builtin_cpu_supports("avx2"))
        return SL__RS_AVX2;
    if (__builtin_cpu_supports("sse4.1"))
        return SL__RS_SSE41;
#endif
    return SL__RS_SCALAR;
}

sl__rs_isa sl__rs_isa_get(void)
{
    sl__rs_isa cpu = isa_cpu(),
               lim = (sl__rs_isa)atomic_load_explicit(&isa_limit, memory_order_relaxed);
    return cpu < lim ? cpu : lim;
}

sl__rs_isa sl__rs_isa_limit(sl__rs_isa max)
{
    return (sl__rs_isa)atomic_exchange(&isa_limit, (int)max);
}

/* The pair layout: AVX2 and a window that one 16-byte load covers. */
static bool use_pairs(int64_t c, int k)
{
    return k * c <= 16 && sl__rs_isa_get() == SL__RS_AVX2;
}

size_t sl__rs_expand_size(int64_t c, int64_t out, int k)
{
    if (!HAVE_X86 || (c != 3 && c != 4) || out <= 0 || k <= 0)
        return 0;
    size_t single = (size_t)out * (size_t)((k + 1) & ~1) * 4;
    size_t pairs = (size_t)((out + 1) / 2) * (size_t)k * 8;
    return single > pairs ? single : pairs;
}

bool sl__rs_expand(int64_t c, int64_t out, int k, const int32_t *w, int32_t *wv)
{
    if (use_pairs(c, k)) {
        memset(wv, 0, (size_t)((out + 1) / 2) * (size_t)k * 8 * sizeof(int32_t));
        for (int64_t o = 0; o < out; o++, w += k)
            for (int j = 0; j < k; j++)
                for (int ch = 0; ch < c; ch++)
                    wv[((o / 2) * k + j) * 8 + (o % 2) * 4 + ch] = w[j];
        return true;
    }
    const int kp = (k + 1) & ~1;
    for (int64_t o = 0; o < out; o++, w += k)
        for (int j = 0; j < kp; j++, wv += 4)
            for (int ch = 0; ch < 4; ch++)
                wv[ch] = j < k && ch < c ? w[j] : 0;
    return false;
}

#if HAVE_X86

/* One output pixel the scalar way (near the end of the readable row). */
static void h_pixel(const uint8_t *sp, uint8_t *d, int k, int c, const int32_t *w)
{
    for (int ch = 0; ch < c; ch++) {
        int32_t a = HALF;
        for (int j = 0; j < k; j++)
            a += sp[j * c + ch] * w[j];
        d[ch] = sl__rs_clip8(a);
    }
}

/* Largest first[o] whose loads (kp taps, 8 bytes from the last pair's first pixel) stay
 * inside the `readable` elements of the row; may be negative (no pixel qualifies). */
static int64_t safe_first(const sl__rs_pass *p, int kp)
{
    int64_t c = p->c, lim = p->readable - 8 - (int64_t)(kp - 2) * c;
    return lim < 0 ? -1 : lim / c;
}

/* Stores the low c bytes of v at d: 4 bytes at once unless that would pass the row's end. */
static inline __attribute__((always_inline)) void put_pixel(uint8_t *d, __m128i v, int c, bool last)
{
    uint32_t b = (uint32_t)_mm_cvtsi128_si32(v);
    if (c == 4 || !last) {
        memcpy(d, &b, 4);
    } else {
        memcpy(d, &b, 2);
        d[2] = (uint8_t)(b >> 16);
    }
}

/* ---- AVX2 ---------------------------------------------------------------------------------- */

/* One output pixel from kp taps (kp even; KP: kp as a constant, 0 when it is not one). */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) __m128i
h_avx2_pixel(const uint8_t *sp, const int32_t *wv, int kp, const int KP, int c, __m256i spread)
{
    const int n = KP ? KP : kp;
    __m256i acc = _mm256_setr_epi32(HALF, HALF, HALF, HALF, 0, 0, 0, 0);
    for (int j = 0; j < n; j += 2) {
        int64_t pair;
        memcpy(&pair, sp + j * c, 8);
        __m256i px = _mm256_shuffle_epi8(_mm256_set1_epi64x(pair), spread);
        __m256i wj = _mm256_loadu_si256((const __m256i *)(wv + j * 4));
        acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(px, wj));
    }
    __m128i v = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    v = _mm_srai_epi32(v, PREC);
    return _mm_packus_epi16(_mm_packs_epi32(v, v), v);
}

__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
h_avx2_c(const sl__rs_pass *p, const int c, const int KP)
{
    const int k = p->k, kp = KP ? KP : (k + 1) & ~1;
    const int64_t n = p->n, safe = safe_first(p, kp);
    const int32_t *first = p->first, *w = p->w;
    /* low 128 bits: pixel 0 of the pair, bytes 0..c-1 -> int32 lanes; high: pixel 1 */
    const __m256i spread =
        c == 3 ? _mm256_setr_epi8(0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1, -1, -1, -1, -1, 3,
                                  -1, -1, -1, 4, -1, -1, -1, 5, -1, -1, -1, -1, -1, -1, -1)
               : _mm256_setr_epi8(0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1, 3, -1, -1, -1, 4, -1,
                                  -1, -1, 5, -1, -1, -1, 6, -1, -1, -1, 7, -1, -1, -1);
    for (int64_t r = 0; r < p->rows; r++) {
        const uint8_t *s = (const uint8_t *)p->src + r * p->sstride;
        uint8_t *d = (uint8_t *)p->dst + r * p->dstride;
        for (int64_t o = 0; o < n; o++) {
            const uint8_t *sp = s + (ptrdiff_t)first[o] * c;
            if (first[o] > safe)
                h_pixel(sp, d + o * c, k, c, w + o * k);
            else
                put_pixel(d + o * c, h_avx2_pixel(sp, p->wv + o * kp * 4, kp, KP, c, spread), c,
                          o + 1 == n);
        }
    }
}

/* Two output pixels per step, o in the low 128 bits and o + 1 in the high ones, K taps with
 * K * c <= 16: each half loads the 16 bytes from its window's first pixel and spreads tap j's
 * pixel into its int32 lanes with a constant shuffle, so the sums need no reduction across
 * lanes. Pixels whose 16-byte load would pass the readable row, and an odd last one, go
 * through the scalar loop. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
h_avx2_pairs(const sl__rs_pass *p, const int c, const int K)
{
    const int64_t n = p->n, safe = p->readable < 16 ? -1 : (p->readable - 16) / c;
    const int32_t *first = p->first, *w = p->w, *wv0 = p->wv;
    __m256i spread[5];
    for (int j = 0; j < K; j++) {
        int8_t m[16];
        for (int b = 0; b < 16; b++)
            m[b] = b % 4 == 0 && b / 4 < c ? (int8_t)(j * c + b / 4) : -1;
        __m128i h = _mm_loadu_si128((const __m128i *)m);
        spread[j] = _mm256_inserti128_si256(_mm256_castsi128_si256(h), h, 1);
    }
    const __m256i half = _mm256_set1_epi32(HALF);
    for (int64_t r = 0; r < p->rows; r++) {
        const uint8_t *s = (const uint8_t *)p->src + r * p->sstride;
        uint8_t *d = (uint8_t *)p->dst + r * p->dstride;
        const int32_t *wv = wv0;
        int64_t o = 0;
        for (; o + 1 < n; o += 2, wv += K * 8) {
            const int64_t f0 = first[o], f1 = first[o + 1];
            if (f0 > safe || f1 > safe) {
                h_pixel(s + f0 * c, d + o * c, K, c, w + o * K);
                h_pixel(s + f1 * c, d + (o + 1) * c, K, c, w + (o + 1) * K);
                continue;
            }
            __m256i x = _mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(s + f0 * c))),
                _mm_loadu_si128((const __m128i *)(s + f1 * c)), 1);
            __m256i acc = half;
            for (int j = 0; j < K; j++) {
                __m256i wj = _mm256_loadu_si256((const __m256i *)(wv + j * 8));
                acc = _mm256_add_epi32(acc,
                                       _mm256_mullo_epi32(_mm256_shuffle_epi8(x, spread[j]), wj));
            }
            __m256i v = _mm256_srai_epi32(acc, PREC);
            v = _mm256_packus_epi16(_mm256_packs_epi32(v, v), v);
            put_pixel(d + o * c, _mm256_castsi256_si128(v), c, false);
            put_pixel(d + (o + 1) * c, _mm256_extracti128_si256(v, 1), c, o + 2 == n);
        }
        if (o < n)
            h_pixel(s + (ptrdiff_t)first[o] * c, d + o * c, K, c, w + o * K);
    }
}

#define BY_K(FN, p, c)                                                                             \
    switch ((p)->k) {                                                                              \
    case 1: FN(p, c, 1); break;                                                                    \
    case 2: FN(p, c, 2); break;                                                                    \
    case 3: FN(p, c, 3); break;                                                                    \
    case 4: FN(p, c, 4); break;                                                                    \
    default: FN(p, c, 5); break;                                                                   \
    }

/* Taps as constants for the common filter widths (2: upscaling LINEAR, 4-8: downscaling). */
#define BY_KP(FN, p, c)                                                                            \
    switch (((p)->k + 1) & ~1) {                                                                   \
    case 2: FN(p, c, 2); break;                                                                    \
    case 4: FN(p, c, 4); break;                                                                    \
    case 6: FN(p, c, 6); break;                                                                    \
    case 8: FN(p, c, 8); break;                                                                    \
    default: FN(p, c, 0); break;                                                                   \
    }

__attribute__((target("avx2"))) static void h_avx2(const sl__rs_pass *p)
{
    if (p->wv_pairs && p->c == 3) {
        BY_K(h_avx2_pairs, p, 3)
    } else if (p->wv_pairs) {
        BY_K(h_avx2_pairs, p, 4)
    } else if (p->c == 3) {
        BY_KP(h_avx2_c, p, 3)
    } else {
        BY_KP(h_avx2_c, p, 4)
    }
}

/* 32 elements of an output row from k source rows s, s + stride, ... */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
v_avx2_block(const uint8_t *s, ptrdiff_t stride, const int32_t *w, int k, uint8_t *d)
{
    __m256i a0 = _mm256_set1_epi32(HALF), a1 = a0, a2 = a0, a3 = a0;
    for (int j = 0; j < k; j++, s += stride) {
        __m256i wj = _mm256_set1_epi32(w[j]);
        a0 = _mm256_add_epi32(
            a0, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)s)), wj));
        a1 = _mm256_add_epi32(
            a1, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(s + 8))),
                                   wj));
        a2 = _mm256_add_epi32(
            a2, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(s + 16))),
                                   wj));
        a3 = _mm256_add_epi32(
            a3, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(s + 24))),
                                   wj));
    }
    __m256i lo = _mm256_packs_epi32(_mm256_srai_epi32(a0, PREC), _mm256_srai_epi32(a1, PREC));
    __m256i hi = _mm256_packs_epi32(_mm256_srai_epi32(a2, PREC), _mm256_srai_epi32(a3, PREC));
    /* packs work per 128-bit half: dwords come out as a0 a1 a2 a3 (low halves) then the high
     * halves; put each run of 8 elements back together */
    __m256i b = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(lo, hi),
                                            _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *)d, b);
}

__attribute__((target("avx2"))) static void v_avx2(const sl__rs_pass *p)
{
    const int64_t n = p->n;
    for (int64_t o = 0; o < p->rows; o++) {
        const int32_t *w = (const int32_t *)p->w + o * p->k;
        const uint8_t *s = (const uint8_t *)p->src + (ptrdiff_t)p->first[o] * p->sstride;
        uint8_t *d = (uint8_t *)p->dst + o * p->dstride;
        for (int64_t e = 0; e < n; e += 32) {
            int64_t e0 = e + 32 <= n ? e : n - 32;
            v_avx2_block(s + e0, p->sstride, w, p->k, d + e0);
        }
    }
}

/* ---- SSE4.1 -------------------------------------------------------------------------------- */

__attribute__((target("sse4.1"))) static inline __attribute__((always_inline)) void
h_sse41_c(const sl__rs_pass *p, const int c)
{
    const int k = p->k, kp = (k + 1) & ~1;
    const int64_t n = p->n, safe = safe_first(p, kp);
    const int32_t *first = p->first, *w = p->w;
    const __m128i half = _mm_set1_epi32(HALF);
    for (int64_t r = 0; r < p->rows; r++) {
        const uint8_t *s = (const uint8_t *)p->src + r * p->sstride;
        uint8_t *d = (uint8_t *)p->dst + r * p->dstride;
        const int32_t *wv = p->wv;
        for (int64_t o = 0; o < n; o++, wv += kp * 4) {
            const uint8_t *sp = s + (ptrdiff_t)first[o] * c;
            if (first[o] > safe) {
                h_pixel(sp, d + o * c, k, c, w + o * k);
                continue;
            }
            __m128i acc = half;
            for (int j = 0; j < k; j++, sp += c) {
                int32_t px;
                memcpy(&px, sp, 4);
                __m128i wj = _mm_loadu_si128((const __m128i *)(wv + j * 4));
                acc = _mm_add_epi32(acc,
                                    _mm_mullo_epi32(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(px)), wj));
            }
            __m128i v = _mm_srai_epi32(acc, PREC);
            v = _mm_packus_epi16(_mm_packs_epi32(v, v), v);
            put_pixel(d + o * c, v, c, o + 1 == n);
        }
    }
}

__attribute__((target("sse4.1"))) static void h_sse41(const sl__rs_pass *p)
{
    if (p->c == 3)
        h_sse41_c(p, 3);
    else
        h_sse41_c(p, 4);
}

__attribute__((target("sse4.1"))) static inline __attribute__((always_inline)) void
v_sse41_block(const uint8_t *s, ptrdiff_t stride, const int32_t *w, int k, uint8_t *d)
{
    __m128i a0 = _mm_set1_epi32(HALF), a1 = a0, a2 = a0, a3 = a0;
    for (int j = 0; j < k; j++, s += stride) {
        __m128i wj = _mm_set1_epi32(w[j]);
        __m128i x = _mm_loadu_si128((const __m128i *)s);
        a0 = _mm_add_epi32(a0, _mm_mullo_epi32(_mm_cvtepu8_epi32(x), wj));
        a1 = _mm_add_epi32(a1, _mm_mullo_epi32(_mm_cvtepu8_epi32(_mm_srli_si128(x, 4)), wj));
        a2 = _mm_add_epi32(a2, _mm_mullo_epi32(_mm_cvtepu8_epi32(_mm_srli_si128(x, 8)), wj));
        a3 = _mm_add_epi32(a3, _mm_mullo_epi32(_mm_cvtepu8_epi32(_mm_srli_si128(x, 12)), wj));
    }
    __m128i lo = _mm_packs_epi32(_mm_srai_epi32(a0, PREC), _mm_srai_epi32(a1, PREC));
    __m128i hi = _mm_packs_epi32(_mm_srai_epi32(a2, PREC), _mm_srai_epi32(a3, PREC));
    _mm_storeu_si128((__m128i *)d, _mm_packus_epi16(lo, hi));
}

__attribute__((target("sse4.1"))) static void v_sse41(const sl__rs_pass *p)
{
    const int64_t n = p->n;
    for (int64_t o = 0; o < p->rows; o++) {
        const int32_t *w = (const int32_t *)p->w + o * p->k;
        const uint8_t *s = (const uint8_t *)p->src + (ptrdiff_t)p->first[o] * p->sstride;
        uint8_t *d = (uint8_t *)p->dst + o * p->dstride;
        for (int64_t e = 0; e < n; e += 16) {
            int64_t e0 = e + 16 <= n ? e : n - 16;
            v_sse41_block(s + e0, p->sstride, w, p->k, d + e0);
        }
    }
}

bool sl__rs_h_fixed_simd(const sl__rs_pass *p)
{
    if (!p->wv || (p->c != 3 && p->c != 4))
        return false;
    switch (sl__rs_isa_get()) {
    case SL__RS_AVX2: h_avx2(p); return true;
    case SL__RS_SSE41:
        if (p->wv_pairs) /* laid out for AVX2 (the limit changed in between: tests only) */
            return false;
        h_sse41(p);
        return true;
    default: return false;
    }
}

bool sl__rs_v_fixed_simd(const sl__rs_pass *p)
{
    sl__rs_isa isa = sl__rs_isa_get();
    if (isa == SL__RS_AVX2 && p->n >= 32)
        v_avx2(p);
    else if (isa >= SL__RS_SSE41 && p->n >= 16)
        v_sse41(p);
    else
        return false;
    return true;
}

#else /* not x86: the scalar passes */

bool sl__rs_h_fixed_simd(const sl__rs_pass *p)
{
    (void)p;
    return false;
}

bool sl__rs_v_fixed_simd(const sl__rs_pass *p)
{
    (void)p;
    return false;
}

#endif
