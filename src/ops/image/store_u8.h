/* ops/image/store_u8.h: float32 -> uint8 conversion of a value and of a run of values, shared
 * by the image family helpers (affine.c, color.c) and their GPU kernels (affine.cuh, color.cuh).
 *
 * Exports sl__cv_u8 (SL__HD: C and CUDA C++; defined in ops/tensor/convert.h, the one source of
 * the rule) and, in C only, the static inline sl__store_u8. Values are saturated to [0, 255]
 * (NaN -> 0) and rounded halves up (see sl__cv_u8). On x86 an SSE2 loop converts 16 values per
 * step with the same arithmetic (GCC does not vectorise the scalar form); elsewhere, and for the
 * tail, sl__cv_u8.
 */
#ifndef SLUICE_OPS_IMAGE_STORE_U8_H
#define SLUICE_OPS_IMAGE_STORE_U8_H

#include <stdint.h>

#include "ops/tensor/convert.h"

#ifndef __CUDACC__
#if defined(__SSE2__)
#include <emmintrin.h>

/* 4 values -> 4 int32 in [0, 255]; MAXPS returns its second operand for NaN, so NaN -> 0. */
static inline __m128i sl__cv4_u8(const float *v)
{
    __m128 x = _mm_max_ps(_mm_loadu_ps(v), _mm_setzero_ps());
    x = _mm_min_ps(x, _mm_set1_ps(255.0f));
    return _mm_cvttps_epi32(_mm_add_ps(x, _mm_set1_ps(0.49999997f)));
}
#endif

/* out[k] = sl__cv_u8(v[k]) for k < n. */
static inline void sl__store_u8(const float *restrict v, uint8_t *restrict out, int64_t n)
{
    int64_t k = 0;
#if defined(__SSE2__)
    for (; k + 16 <= n; k += 16) {
        __m128i ab = _mm_packs_epi32(sl__cv4_u8(v + k), sl__cv4_u8(v + k + 4));
        __m128i cd = _mm_packs_epi32(sl__cv4_u8(v + k + 8), sl__cv4_u8(v + k + 12));
        _mm_storeu_si128((__m128i *)(out + k), _mm_packus_epi16(ab, cd));
    }
#endif
    for (; k < n; k++)
        out[k] = sl__cv_u8(v[k]);
}
#endif /* __CUDACC__ */

#endif
