/* ops/tensor/convert.h: the scalar rules of element conversion (DALI's ConvertSat, see
 * tensor.h), one source for the CPU's converters (convert.c) and the GPU's (tensor.cuh)
 * (internal; C and CUDA C++).
 *
 * Every input is first read into one of four families (U: uint64_t, S: int64_t, F: float,
 * D: double; float16 reads as F, bool as U 0 / 1); for each output tag (u8 u16 u32 u64 i8 i16
 * i32 i64 f32 f64 b) and family this exports the SL__HD function
 *     sl__conv_<tag>_from_<family>(x)
 * and sl__cv_u8, the float -> uint8 rule (sl__conv_u8_from_F is it) that the image operators'
 * uint8 stores share (store_u8.h, crop_mirror_normalize and their GPU kernels).
 * Integer outputs round half away from zero and saturate, NaN -> 0 (DALI's is undefined);
 * floating outputs are IEEE casts; bool is x != 0 (NaN -> 1, as C++'s bool(NaN) and NumPy).
 * float16 outputs are not here: the CPU rounds with core/half.h, the GPU with cuda_fp16.
 * Invariant: every function is exact integer or IEEE arithmetic with no FMA to contract, so the
 * CPU and the GPU (built with --fmad=false) give the same bits.
 */
#ifndef SLUICE_OPS_TENSOR_CONVERT_H
#define SLUICE_OPS_TENSOR_CONVERT_H

#include <math.h>
#include <stdint.h>

#if defined(__SSE2__) && !defined(__CUDACC__)
#include <emmintrin.h>
#endif

#include "ops/hd.h"

/* Rounds half away from zero and saturates into [lo, hi]; NaN -> 0. lo and hi are exact in
 * double (integers of at most 32 bits). */
SL__HD double sl__conv_round_sat(double d, double lo, double hi)
{
    if (d != d)
        return 0;
    d = round(d);
    return d < lo ? lo : d > hi ? hi : d;
}

/* float to uint8, the rule of every uint8 store of the library (the converters here, the image
 * ops' stores of store_u8.h, crop_mirror_normalize and their GPU kernels): saturated to [0,
 * 255] (NaN -> 0), then rounded halves up, which on [0, 255] is also halves away from zero.
 * Adding 0.49999997f (0.5 - 2^-25) and truncating equals floor(v + 0.5) for every float in
 * [0, 255] (checked exhaustively), where adding 0.5f would round 0.49999997f up. In C on x86
 * the clamps are MAXSS / MINSS (MAXSS returns its second operand for NaN, so NaN -> 0): GCC
 * turns the ternaries into branches, which mispredict on values of random sign; nvcc never
 * compiles that form, so the device and the emulation run the plain arithmetic below. */
SL__HD uint8_t sl__cv_u8(float v)
{
#if defined(__SSE2__) && !defined(__CUDACC__)
    __m128 x = _mm_max_ss(_mm_set_ss(v), _mm_setzero_ps());
    v = _mm_cvtss_f32(_mm_min_ss(x, _mm_set_ss(255.0f)));
#else
    v = v > 0.0f ? v : 0.0f; /* NaN -> 0 */
    v = v < 255.0f ? v : 255.0f;
#endif
    return (uint8_t)(int)(v + 0.49999997f);
}

/* float to an integer of at most 16 bits ([lo, hi]): clamped (NaN -> 0), then rounded half
 * away from zero in float only (double is slow on most GPUs; on the CPU this is also the
 * fastest form): adding 0.49999997f (0.5 - 2^-25) with f's sign and truncating equals C's
 * round(f) for every float (checked exhaustively for the four 8- and 16-bit ranges), where
 * adding 0.5f would round 0.49999997f away from zero. */
SL__HD int32_t sl__conv_round16_F(float f, float lo, float hi)
{
    f = f == f ? f : 0.0f;
    f = f < lo ? lo : f;
    f = f > hi ? hi : f;
    return (int32_t)(f + copysignf(0.49999997f, f));
}

/* float to a 32-bit integer ([lo, hi]): clamped in double (NaN -> 0), where d + copysign(0.5,
 * d) is exact for any float d (24 significant bits); the caller's truncating conversion of the
 * result rounds half away from zero. */
SL__HD double sl__conv_round32_F(float f, double lo, double hi)
{
    double d = f == f ? (double)f : 0.0;
    d = d < lo ? lo : d;
    d = d > hi ? hi : d;
    return d + copysign(0.5, d);
}

/* Integer outputs of at most 32 bits (every value exact in double); FROM_F rounds a float f. */
#define SL__CONV_INT(TAG, T, LO, HI, FROM_F)                                                       \
    SL__HD T sl__conv_##TAG##_from_U(uint64_t u)                                                   \
    {                                                                                              \
        return u > (uint64_t)(HI) ? (T)(HI) : (T)u;                                                \
    }                                                                                              \
    SL__HD T sl__conv_##TAG##_from_S(int64_t s)                                                    \
    {                                                                                              \
        return s < (int64_t)(LO) ? (T)(LO) : s > (int64_t)(HI) ? (T)(HI) : (T)s;                   \
    }                                                                                              \
    SL__HD T sl__conv_##TAG##_from_D(double d)                                                     \
    {                                                                                              \
        return (T)sl__conv_round_sat(d, (double)(LO), (double)(HI));                               \
    }                                                                                              \
    SL__HD T sl__conv_##TAG##_from_F(float f)                                                      \
    {                                                                                              \
        return (T)(FROM_F);                                                                        \
    }
#define SL__CONV_INT16(TAG, T, LO, HI)                                                             \
    SL__CONV_INT(TAG, T, LO, HI, sl__conv_round16_F(f, (float)(LO), (float)(HI)))
/* CVT: an integer type that holds every output value (the truncating conversion). */
#define SL__CONV_INT32(TAG, T, LO, HI, CVT)                                                        \
    SL__CONV_INT(TAG, T, LO, HI, (CVT)sl__conv_round32_F(f, (double)(LO), (double)(HI)))

SL__CONV_INT(u8, uint8_t, 0, UINT8_MAX, sl__cv_u8(f))
SL__CONV_INT16(u16, uint16_t, 0, UINT16_MAX)
SL__CONV_INT16(i8, int8_t, INT8_MIN, INT8_MAX)
SL__CONV_INT16(i16, int16_t, INT16_MIN, INT16_MAX)
SL__CONV_INT32(u32, uint32_t, 0, UINT32_MAX, int64_t)
SL__CONV_INT32(i32, int32_t, INT32_MIN, INT32_MAX, int32_t)

/* 64-bit integer outputs: the bounds are compared as powers of two, exact in double. */
SL__HD int64_t sl__conv_i64_from_U(uint64_t u)
{
    return u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
}
SL__HD int64_t sl__conv_i64_from_S(int64_t s)
{
    return s;
}
SL__HD int64_t sl__conv_i64_from_D(double d)
{
    if (d != d)
        return 0;
    d = round(d);
    return d >= 0x1p63 ? INT64_MAX : d < -0x1p63 ? INT64_MIN : (int64_t)d;
}
SL__HD int64_t sl__conv_i64_from_F(float f)
{
    return sl__conv_i64_from_D((double)f);
}
SL__HD uint64_t sl__conv_u64_from_U(uint64_t u)
{
    return u;
}
SL__HD uint64_t sl__conv_u64_from_S(int64_t s)
{
    return s < 0 ? 0 : (uint64_t)s;
}
SL__HD uint64_t sl__conv_u64_from_D(double d)
{
    if (d != d)
        return 0;
    d = round(d);
    return d >= 0x1p64 ? UINT64_MAX : d <= 0 ? 0 : (uint64_t)d;
}
SL__HD uint64_t sl__conv_u64_from_F(float f)
{
    return sl__conv_u64_from_D((double)f);
}

/* Floating and bool outputs, from any family X. */
#define SL__CONV_CAST(TAG, T, X, XT)                                                               \
    SL__HD T sl__conv_##TAG##_from_##X(XT x)                                                       \
    {                                                                                              \
        return (T)x;                                                                               \
    }
#define SL__CONV_BOOL(X, XT)                                                                       \
    SL__HD uint8_t sl__conv_b_from_##X(XT x)                                                       \
    {                                                                                              \
        return x != 0;                                                                             \
    }

SL__CONV_CAST(f32, float, U, uint64_t)
SL__CONV_CAST(f32, float, S, int64_t)
SL__CONV_CAST(f32, float, F, float)
SL__CONV_CAST(f32, float, D, double)
SL__CONV_CAST(f64, double, U, uint64_t)
SL__CONV_CAST(f64, double, S, int64_t)
SL__CONV_CAST(f64, double, F, float)
SL__CONV_CAST(f64, double, D, double)
SL__CONV_BOOL(U, uint64_t)
SL__CONV_BOOL(S, int64_t)
SL__CONV_BOOL(F, float)
SL__CONV_BOOL(D, double)

#endif
