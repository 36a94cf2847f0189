/* ops/image/resample_simd.h: the passes of resample.c and their SIMD (SSE4.1 / AVX2 / AVX-512)
 * kernels for uint8 -> uint8 (22-bit fixed point), chosen at run time (private to ops/image).
 *
 * Exports the pass description shared by resample.c and resample_simd.c, the kernels, the
 * instruction-set knob the tests use to compare every kernel with the scalar one, and the
 * uint8 output conversions sl__rs_clip8 / sl__rs_cvt8 (SL__HD: the GPU passes use them too).
 * Invariant: a SIMD kernel gives bit-identical results to the scalar one (the same int32
 * products and sums; integer addition in another order gives the same total) and reads and
 * writes no byte the scalar kernel would not, except inside the source row (see `readable`).
 */
#ifndef SLUICE_OPS_IMAGE_RESAMPLE_SIMD_H
#define SLUICE_OPS_IMAGE_RESAMPLE_SIMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/hd.h"

#define SL__RS_PREC 22 /* fixed-point bits of uint8 coefficients (PIL's PRECISION_BITS) */
#define SL__RS_HALF (1 << (SL__RS_PREC - 1))

/* uint8 outputs of the passes, on the CPU (resample.c, the scalar tails here) and the GPU
 * (resample.cuh) alike. sl__rs_clip8: a fixed-point sum (HALF added) to uint8, clamped. */
SL__HD uint8_t sl__rs_clip8(int32_t v)
{
    v >>= SL__RS_PREC;
    v = v > 0 ? v : 0;
    return (uint8_t)(v < 255 ? v : 255);
}

/* Float to uint8: clamped (NaN -> 0), rounded to nearest, ties to even (exact below 2^22). */
SL__HD uint8_t sl__rs_cvt8(float v)
{
    v = v > 0.0f ? v : 0.0f;
    v = v < 255.0f ? v : 255.0f;
    return (uint8_t)(int32_t)((v + 12582912.0f) - 12582912.0f);
}

/* One pass. Horizontal: `rows` rows of `n` output pixels, each a weighted sum of k source
 * pixels from first[o]. Vertical: `rows` output rows of `n` elements, each a weighted sum of k
 * source rows from first[o]. Strides in elements. */
typedef struct sl__rs_pass {
    const void *src;
    ptrdiff_t sstride;
    void *dst;
    ptrdiff_t dstride;
    int64_t rows, n, c;
    int k;
    const int32_t *first;
    const void *w;
    /* Horizontal uint8 passes only: */
    int64_t readable;  /* elements readable from the start of every source row (>= the row) */
    const int32_t *wv; /* NULL, or the weights expanded for the SIMD kernel (sl__rs_expand) */
    int wv_kind;       /* what sl__rs_expand wrote there (sl__rs_wv) */
} sl__rs_pass;

/* Instruction sets of the kernels, narrowest first. AVX512: AVX-512 F, BW, VL and VBMI (Ice Lake,
 * Zen 4 and later). */
typedef enum sl__rs_isa { SL__RS_SCALAR, SL__RS_SSE41, SL__RS_AVX2, SL__RS_AVX512 } sl__rs_isa;

/* What sl__rs_expand wrote into wv: nothing (the AVX2 kernel broadcasts the plain weights
 * itself), the SSE4.1 kernel's expanded weights, or the AVX-512 kernel's groups. */
typedef enum sl__rs_wv { SL__RS_WV_NONE, SL__RS_WV_SSE41, SL__RS_WV_GROUPS } sl__rs_wv;

/* The widest instruction set the CPU has and the kernels may use (see sl__rs_isa_limit). */
sl__rs_isa sl__rs_isa_get(void);
/* Limits the kernels to `max` (for tests: every kernel against the scalar one); returns the
 * previous limit. Threads: takes effect for passes started afterwards. */
sl__rs_isa sl__rs_isa_limit(sl__rs_isa max);

/* Whether a horizontal uint8 pass over c channels has a SIMD kernel, and the int32 elements of
 * its expanded weight table for `out` pixels of k taps (0: none): room for any kernel's. */
size_t sl__rs_expand_size(int64_t c, int64_t out, int k);
/* Expands the weights (k int32 per output pixel, the first source pixel of each in first) for
 * the widest kernel allowed that takes them: the AVX-512 kernel's groups (when every group of
 * 5 (3 channels) or 4 (4 channels) output pixels reads within 64 bytes), else nothing for AVX2,
 * else the SSE4.1 kernel's (per pixel, k rounded up to even taps, each tap's weight in int32
 * lanes 0..c-1 of a group of 4, 0 in the others). Returns the layout wv holds (sl__rs_wv). */
sl__rs_wv sl__rs_expand(int64_t c, int64_t out, int k, const int32_t *first, const int32_t *w,
                        int32_t *wv);

/* The uint8 -> uint8 passes with the widest kernel allowed; false when none applies (the
 * caller runs the scalar pass). The horizontal one needs p->wv. */
bool sl__rs_h_fixed_simd(const sl__rs_pass *p);
bool sl__rs_v_fixed_simd(const sl__rs_pass *p);

#endif
