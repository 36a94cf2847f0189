/* ops/image/resample_simd.c: SSE4.1, AVX2 and AVX-512 kernels of the uint8 -> uint8 passes of
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
 * multiplied by the tap's weight:
 *   AVX2: two source rows at once (r in the low 128 bits, r + 1 in the high ones) for one
 *        output pixel, in blocks of 32 rows so that a pixel's weights are broadcast into
 *        registers once per block; one 16-byte load per row covers 16 / c taps, spread into
 *        lanes by a constant shuffle per tap (no horizontal sums, any number of taps); the
 *        column walk prefetches each row two cache lines ahead;
 *   SSE4.1: per output pixel, one 4-byte load per tap, weights expanded by sl__rs_expand (the
 *        tap's weight in the channel lanes, 0 in the others);
 *   AVX-512 (F, BW, VL, VBMI): a row at a time, 5 output pixels of 3 channels (4 of 4) per
 *        int32 vector, their source bytes for each tap put in place by one byte permutation
 *        of a 64-byte load (tables from sl__rs_expand; where a group's taps span more than 64
 *        bytes, the AVX2 kernel runs instead).
 * Those loads read up to 16 bytes past a chunk's start, so a pixel whose loads would pass the
 * row's `readable` elements goes through the scalar loop instead (1-3 pixels at the right
 * edge of a row).
 * Vertical: 64 (AVX-512), 32 (AVX2) or 16 (SSE4.1) elements of an output row at a time, the
 * last block of a row shifted back to end at the row's end (recomputing some elements, same
 * values).
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

static atomic_int isa_limit = SL__RS_AVX512;

static sl__rs_isa isa_cpu(void)
{
#if HAVE_X86
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi"))
        return SL__RS_AVX512;
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

/* The AVX-512 kernel's groups (h_avx512): G = 16 / c output pixels of a row (5 of 3 channels,
 * 4 of 4), one int32 lane per channel of each (lane 15 of 3 channels unused), computed from
 * one 64-byte load at the group's lowest first pixel. wv holds each group's lowest first pixel
 * (`groups` int32, rounded up to 16), then per group 16 int32 of byte indices (lane l's source
 * byte for tap 0 in byte 4 l, relative to the load; tap j's is c j further) and k vectors of
 * 16 int32 weights (lane l: its pixel's weight of tap j; 0 in unused lanes). Only where every
 * group's taps lie within the 64 bytes: (span of first pixels + k) * c <= 64. */
#define GROUP_BYTES 64
static int64_t group_px(int64_t c)
{
    return 16 / c;
}

static size_t round16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

static size_t groups_size(int64_t c, int64_t out, int k)
{
    if (k > GROUP_BYTES / c)
        return 0; /* a group's taps never fit */
    const size_t groups = (size_t)((out + group_px(c) - 1) / group_px(c));
    return round16(groups) + groups * 16 * (size_t)(k + 1);
}

size_t sl__rs_expand_size(int64_t c, int64_t out, int k)
{
    if (!HAVE_X86 || (c != 3 && c != 4) || out <= 0 || k <= 0)
        return 0;
    const size_t sse = (size_t)out * (size_t)((k + 1) & ~1) * 4, grp = groups_size(c, out, k);
    return sse > grp ? sse : grp;
}

/* Fills wv with the AVX-512 kernel's groups; false when a group's taps do not fit its load
 * (what it wrote of wv then is not used). */
static bool groups_fill(int64_t c, int64_t out, int k, const int32_t *first, const int32_t *w,
                        int32_t *wv)
{
    const int64_t G = group_px(c), groups = (out + G - 1) / G;
    if (!groups_size(c, out, k))
        return false;
    for (int64_t g = 0; g < groups; g++) { /* first is not monotonic for mirrored intervals */
        int32_t lo = first[g * G], hi = lo;
        for (int64_t o = g * G; o < out && o < (g + 1) * G; o++) {
            lo = first[o] < lo ? first[o] : lo;
            hi = first[o] > hi ? first[o] : hi;
        }
        if (((int64_t)hi - lo + k) * c > GROUP_BYTES)
            return false;
        wv[g] = lo;
    }
    int32_t *tab = wv + round16((size_t)groups);
    for (int64_t g = 0; g < groups; g++, tab += 16 * (k + 1)) {
        uint8_t idx[64] = {0};
        const int64_t px = out - g * G < G ? out - g * G : G;
        if (px * c < 16) /* the unused lanes' weights: 0 */
            for (int j = 0; j < k; j++)
                memset(tab + 16 * (j + 1) + px * c, 0, (size_t)(16 - px * c) * sizeof(int32_t));
        for (int64_t i = 0, l = 0; i < px; i++) {
            const int64_t o = g * G + i;
            const int32_t *wo = w + o * k;
            for (int64_t ch = 0; ch < c; ch++, l++) {
                idx[4 * l] = (uint8_t)((first[o] - wv[g]) * c + ch);
                for (int j = 0; j < k; j++)
                    tab[16 * (j + 1) + l] = wo[j];
            }
        }
        memcpy(tab, idx, sizeof idx);
    }
    return true;
}

sl__rs_wv sl__rs_expand(int64_t c, int64_t out, int k, const int32_t *first, const int32_t *w,
                        int32_t *wv)
{
    const sl__rs_isa isa = sl__rs_isa_get();
    if (isa >= SL__RS_AVX512 && groups_fill(c, out, k, first, w, wv))
        return SL__RS_WV_GROUPS;
    if (isa >= SL__RS_AVX2)
        return SL__RS_WV_NONE; /* the AVX2 kernel broadcasts w itself */
    const int kp = (k + 1) & ~1;
    for (int64_t o = 0; o < out; o++, w += k)
        for (int j = 0; j < kp; j++, wv += 4)
            for (int ch = 0; ch < 4; ch++)
                wv[ch] = j < k && ch < c ? w[j] : 0;
    return SL__RS_WV_SSE41;
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

/* Largest first[o] whose loads stay inside the `readable` elements of the row (the SSE4.1
 * kernel's 4-byte loads of kp taps; bounded as for 8 bytes from tap kp - 2, which is looser
 * than needed); may be negative (no pixel qualifies). */
static int64_t safe_first(const sl__rs_pass *p, int kp)
{
    int64_t c = p->c, lim = p->readable - 8 - (int64_t)(kp - 2) * c;
    return lim < 0 ? -1 : lim / c;
}

/* Stores the low c bytes of v at d: 4 bytes at once unless that would pass the row's end. */
static inline __attribute__((always_inline)) void put_pixel(uint8_t *d, __m128i v, int c, bool last)
{
    if (c == 4 || !last) {
        _mm_storeu_si32(d, v);
    } else {
        uint32_t b = (uint32_t)_mm_cvtsi128_si32(v);
        memcpy(d, &b, 2);
        d[2] = (uint8_t)(b >> 16);
    }
}

/* A vertical pass: each output row in blocks of WIDTH elements by BLOCK(s, stride, w, k, d),
 * the last block of a row shifted back to end at the row's end (recomputing some elements,
 * same values). TARGET: its instruction-set attribute. */
#define DEFINE_V_PASS(NAME, TARGET, WIDTH, BLOCK)                                                  \
    TARGET static void NAME(const sl__rs_pass *p)                                                  \
    {                                                                                              \
        const int64_t n = p->n;                                                                    \
        for (int64_t o = 0; o < p->rows; o++) {                                                    \
            const int32_t *w = (const int32_t *)p->w + o * p->k;                                   \
            const uint8_t *s = (const uint8_t *)p->src + (ptrdiff_t)p->first[o] * p->sstride;      \
            uint8_t *d = (uint8_t *)p->dst + o * p->dstride;                                       \
            for (int64_t e = 0; e < n; e += (WIDTH)) {                                             \
                int64_t e0 = e + (WIDTH) <= n ? e : n - (WIDTH);                                   \
                BLOCK(s + e0, p->sstride, w, p->k, d + e0);                                        \
            }                                                                                      \
        }                                                                                          \
    }

/* ---- AVX2 ---------------------------------------------------------------------------------- */

/* Source rows per block of the horizontal pass: for each output pixel the kernel walks the
 * block's rows, touching a cache line or two per row (the block's source and destination stay in
 * L1). */
#define ROW_BLOCK 32
/* Bytes ahead of a row's current load that the kernel prefetches (prefetches never fault, so
 * past the row's end is harmless). A column walk defeats the hardware's sequential prefetch,
 * and in a pipeline the source, a decoded window of 100-600 KB, is not in L1 and often not in
 * L2 (libjpeg-turbo writes rows that start 32-byte aligned with non-temporal stores; other work
 * runs between the decode and the resize). Measured in the train pipeline, without it the kernel
 * took ~1.4x the time of the row-wise one it replaced despite half the instructions
 * (docs/performance.md, issue 21). */
#define PREFETCH_AHEAD 128

/* One output pixel of rows r and r + 1 at once, r in the low 128 bits and r + 1 in the high
 * ones, K taps from T = 16 / c taps per 16-byte chunk: chunk q holds taps qT .. qT + T - 1 of
 * both rows (a load per row), tap j is spread into the int32 lanes 0..c-1 by the constant
 * shuffle spread[j % T] (lane 3 of 3 channels gets 0) and multiplied by w[j] broadcast. Both
 * halves use the same masks and weights, so a pixel's weights are loaded once per block. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) __m256i
h_avx2_rows(const uint8_t *s0, const uint8_t *s1, const __m256i *wj, const int32_t *wo, const int K,
            const int KC, const int T, const int c, const __m256i *spread)
{
    __m256i acc = _mm256_set1_epi32(HALF), x = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int j = 0; j < K; j++) {
        if (j % T == 0)
            x = _mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(s0 + j * c))),
                _mm_loadu_si128((const __m128i *)(s1 + j * c)), 1);
        __m256i wt = KC ? wj[j] : _mm256_set1_epi32(wo[j]);
        acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(_mm256_shuffle_epi8(x, spread[j % T]), wt));
    }
    __m256i v = _mm256_srai_epi32(acc, PREC);
    return _mm256_packus_epi16(_mm256_packs_epi32(v, v), v);
}

/* Output pixel o (source bytes from s, destination d) of `rows` rows with strides ss, ds, the
 * rows in pairs (an odd last row pairs with itself); the weights broadcast once. LAST: o is
 * the row's last pixel (a constant, so the stores carry no branch). */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
h_avx2_col(const uint8_t *s, uint8_t *d, int64_t rows, ptrdiff_t ss, ptrdiff_t ds,
           const int32_t *wo, const int K, const int KC, const int T, const int c,
           const __m256i *spread, const bool LAST)
{
    __m256i wj[8]; /* KC <= 8 (BY_K) */
#pragma GCC unroll 8
    for (int j = 0; j < KC; j++)
        wj[j] = _mm256_set1_epi32(wo[j]);
    for (int64_t r = 0; r + 1 < rows; r += 2, s += 2 * ss, d += 2 * ds) {
        _mm_prefetch((const char *)s + PREFETCH_AHEAD, _MM_HINT_T0);
        _mm_prefetch((const char *)s + ss + PREFETCH_AHEAD, _MM_HINT_T0);
        __m256i v = h_avx2_rows(s, s + ss, wj, wo, K, KC, T, c, spread);
        put_pixel(d, _mm256_castsi256_si128(v), c, LAST);
        put_pixel(d + ds, _mm256_extracti128_si256(v, 1), c, LAST);
    }
    if (rows & 1)
        put_pixel(d, _mm256_castsi256_si128(h_avx2_rows(s, s, wj, wo, K, KC, T, c, spread)), c,
                  LAST);
}

/* The horizontal pass over c channels (3 or 4) with KC taps (a constant, the weights held in
 * registers; 0: p->k at run time, each weight broadcast from memory per use). Rows in blocks
 * of ROW_BLOCK; per block, each output pixel in turn over the block's rows (h_avx2_col). A
 * pixel whose last chunk load would pass the row's `readable` elements goes through the scalar
 * loop (near the right edge; first[o] is not monotonic for mirrored intervals, so it is
 * checked per pixel). */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
h_avx2_c(const sl__rs_pass *p, const int c, const int KC)
{
    const int K = KC ? KC : p->k, T = 16 / c, nch = (K + T - 1) / T;
    const int64_t n = p->n, rows = p->rows, lim = p->readable - 16 - (int64_t)(nch - 1) * T * c;
    const int64_t safe = lim < 0 ? -1 : lim / c;
    const ptrdiff_t ss = p->sstride, ds = p->dstride;
    const int32_t *first = p->first, *w = p->w;
    __m256i spread[5];
    for (int t = 0; t < T; t++) {
        int8_t m[16];
        for (int b = 0; b < 16; b++)
            m[b] = b % 4 == 0 && b / 4 < c ? (int8_t)(t * c + b / 4) : -1;
        __m128i h = _mm_loadu_si128((const __m128i *)m);
        spread[t] = _mm256_inserti128_si256(_mm256_castsi128_si256(h), h, 1);
    }
    for (int64_t r0 = 0; r0 < rows; r0 += ROW_BLOCK) {
        const int64_t nr = r0 + ROW_BLOCK < rows ? ROW_BLOCK : rows - r0;
        const uint8_t *sb = (const uint8_t *)p->src + r0 * ss;
        uint8_t *db = (uint8_t *)p->dst + r0 * ds;
        for (int64_t o = 0; o < n; o++) {
            const int32_t *wo = w + o * K;
            const ptrdiff_t f = (ptrdiff_t)first[o] * c, at = o * c;
            if (first[o] > safe) {
                for (int64_t r = 0; r < nr; r++)
                    h_pixel(sb + r * ss + f, db + r * ds + at, K, c, wo);
            } else if (o + 1 < n) {
                h_avx2_col(sb + f, db + at, nr, ss, ds, wo, K, KC, T, c, spread, false);
            } else {
                h_avx2_col(sb + f, db + at, nr, ss, ds, wo, K, KC, T, c, spread, true);
            }
        }
    }
}

/* Taps as constants for the common filter widths (2-3: upscaling LINEAR, 3-8: downscaling). */
#define BY_K(FN, p, c)                                                                             \
    switch ((p)->k) {                                                                              \
    case 1: FN(p, c, 1); break;                                                                    \
    case 2: FN(p, c, 2); break;                                                                    \
    case 3: FN(p, c, 3); break;                                                                    \
    case 4: FN(p, c, 4); break;                                                                    \
    case 5: FN(p, c, 5); break;                                                                    \
    case 6: FN(p, c, 6); break;                                                                    \
    case 7: FN(p, c, 7); break;                                                                    \
    case 8: FN(p, c, 8); break;                                                                    \
    default: FN(p, c, 0); break;                                                                   \
    }

__attribute__((target("avx2"))) static void h_avx2(const sl__rs_pass *p)
{
    if (p->c == 3) {
        BY_K(h_avx2_c, p, 3)
    } else {
        BY_K(h_avx2_c, p, 4)
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

DEFINE_V_PASS(v_avx2, __attribute__((target("avx2"))), 32, v_avx2_block)

/* ---- AVX-512 (F, BW, VL, VBMI) --------------------------------------------------------------- */

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))

/* The horizontal pass by groups (groups_fill): per row and group, one 64-byte load, then per
 * tap one byte permutation that puts each lane's source byte in its int32 lane (the other
 * bytes zeroed), a multiply by the lanes' weights and an add; the group's G * c bytes stored
 * with one 16-byte store (the byte past them is the next group's first, written after). The
 * load is masked to the row's readable bytes and the store to the row's end only where they
 * would pass them: masked on every group, they made the kernel ~40 % slower than the AVX2 one
 * on the AMD EPYC this was measured on, unmasked ~40 % faster (bench_ops, resize to 224x224). */
AVX512 static void h_avx512(const sl__rs_pass *p)
{
    const int64_t c = p->c, G = group_px(c), n = p->n, groups = (n + G - 1) / G;
    const int k = p->k;
    const int32_t *lo = p->wv, *tab0 = p->wv + round16((size_t)groups);
    const __mmask64 low_bytes = 0x1111111111111111ull; /* byte 0 of each int32 lane */
    const __m512i half = _mm512_set1_epi32(HALF), zero = _mm512_setzero_si512();
    for (int64_t r = 0; r < p->rows; r++) {
        const uint8_t *s = (const uint8_t *)p->src + r * p->sstride;
        uint8_t *d = (uint8_t *)p->dst + r * p->dstride;
        const int32_t *tab = tab0;
        for (int64_t g = 0; g < groups; g++, tab += 16 * (k + 1)) {
            const int64_t at = (int64_t)lo[g] * c, avail = p->readable - at; /* >= k c */
            const __m512i x = avail >= GROUP_BYTES
                                  ? _mm512_loadu_si512(s + at)
                                  : _mm512_maskz_loadu_epi8((1ull << avail) - 1, s + at);
            const __m512i idx = _mm512_loadu_si512(tab);
            __m512i acc = half;
#pragma GCC unroll 8
            for (int j = 0; j < k; j++) {
                const __m512i ij = _mm512_add_epi8(idx, _mm512_set1_epi8((char)(c * j)));
                const __m512i v = _mm512_maskz_permutexvar_epi8(low_bytes, ij, x);
                acc = _mm512_add_epi32(
                    acc, _mm512_mullo_epi32(v, _mm512_loadu_si512(tab + 16 * (j + 1))));
            }
            const __m128i b =
                _mm512_cvtusepi32_epi8(_mm512_max_epi32(_mm512_srai_epi32(acc, PREC), zero));
            if (g + 1 < groups) { /* the byte past the group's is the next group's first */
                _mm_storeu_si128((__m128i *)(d + g * G * c), b);
            } else {
                const int64_t px = n - g * G;
                _mm_mask_storeu_epi8(d + g * G * c, (__mmask16)((1u << (px * c)) - 1), b);
            }
        }
    }
}

/* 64 elements of an output row from k source rows s, s + stride, ... The four accumulators
 * are written out: as a loop over an array of them the resize ran ~18 % slower (GCC 12,
 * bench_ops). */
AVX512 static inline __attribute__((always_inline)) void
v_avx512_block(const uint8_t *s, ptrdiff_t stride, const int32_t *w, int k, uint8_t *d)
{
    __m512i a0 = _mm512_set1_epi32(HALF), a1 = a0, a2 = a0, a3 = a0;
    for (int j = 0; j < k; j++, s += stride) {
        const __m512i wj = _mm512_set1_epi32(w[j]);
        a0 = _mm512_add_epi32(
            a0, _mm512_mullo_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)s)), wj));
        a1 = _mm512_add_epi32(
            a1, _mm512_mullo_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(s + 16))),
                                   wj));
        a2 = _mm512_add_epi32(
            a2, _mm512_mullo_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(s + 32))),
                                   wj));
        a3 = _mm512_add_epi32(
            a3, _mm512_mullo_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(s + 48))),
                                   wj));
    }
    const __m512i zero = _mm512_setzero_si512();
    _mm_storeu_si128((__m128i *)d,
                     _mm512_cvtusepi32_epi8(_mm512_max_epi32(_mm512_srai_epi32(a0, PREC), zero)));
    _mm_storeu_si128((__m128i *)(d + 16),
                     _mm512_cvtusepi32_epi8(_mm512_max_epi32(_mm512_srai_epi32(a1, PREC), zero)));
    _mm_storeu_si128((__m128i *)(d + 32),
                     _mm512_cvtusepi32_epi8(_mm512_max_epi32(_mm512_srai_epi32(a2, PREC), zero)));
    _mm_storeu_si128((__m128i *)(d + 48),
                     _mm512_cvtusepi32_epi8(_mm512_max_epi32(_mm512_srai_epi32(a3, PREC), zero)));
}

DEFINE_V_PASS(v_avx512, AVX512, 64, v_avx512_block)

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

DEFINE_V_PASS(v_sse41, __attribute__((target("sse4.1"))), 16, v_sse41_block)

bool sl__rs_h_fixed_simd(const sl__rs_pass *p)
{
    if (!p->wv || (p->c != 3 && p->c != 4))
        return false;
    /* a table expanded for another kernel than the limit now allows: tests only */
    switch (sl__rs_isa_get()) {
    case SL__RS_AVX512:
        if (p->wv_kind == SL__RS_WV_GROUPS) {
            h_avx512(p);
            return true;
        }
        h_avx2(p); /* not every group fits: AVX2, which needs no table */
        return true;
    case SL__RS_AVX2: h_avx2(p); return true;
    case SL__RS_SSE41:
        if (p->wv_kind != SL__RS_WV_SSE41)
            return false;
        h_sse41(p);
        return true;
    default: return false;
    }
}

bool sl__rs_v_fixed_simd(const sl__rs_pass *p)
{
    sl__rs_isa isa = sl__rs_isa_get();
    if (isa == SL__RS_AVX512 && p->n >= 64)
        v_avx512(p);
    else if (isa >= SL__RS_AVX2 && p->n >= 32)
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
