/* ops/tensor/tensor.cuh: device code shared by the GPU runs of the tensor and image-window
 * operators (cast, crop, pad, flip, transpose, crop_mirror_normalize); CUDA C++, internal.
 *
 * Exports:
 *   sl__gf16, sl__gbool     storage types of float16 and bool elements (distinct C++ types)
 *   sl__gconvert<O>(x)      DALI's ConvertSat from any element type to O: convert.h's
 *                           rules, the functions ops/tensor/convert.c calls (see tensor.h)
 *   sl__gload<O>(p, k, t)   element k of a t-typed array, converted to O (t known at run time)
 *   sl__gwindow_k, sl__ggather_k   the functors of sl__gpu_window / sl__gpu_gather
 *                           (tensor_gpu.h), one thread per output element
 *   SL__GTYPE_SWITCH        instantiates code for each of the 12 element types
 * Index division (sl__gdivmod) is cuda/kernel.cuh's. Everything is SL_HD: the same code runs on the
 * device and in the host emulation (SLUICE_GPU_EMULATE=1), where the tests compare it with the CPU
 * operators.
 *
 * Exactness: every conversion but to float16 is convert.h's function, the one convert.c calls.
 * float16 goes through cuda_fp16's round-to-nearest-even conversions (NaN payloads may differ
 * from core/half.h's; a NaN stays a NaN). Built with --fmad=false, so nothing is contracted
 * into an FMA.
 */
#ifndef SLUICE_OPS_TENSOR_CUH
#define SLUICE_OPS_TENSOR_CUH

#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>

#include "cuda/kernel.cuh"
#include "ops/tensor/convert.h"
#include "ops/tensor/tensor_gpu.h"

typedef struct sl__gf16 {
    uint16_t bits; /* IEEE binary16 */
} sl__gf16;

typedef struct sl__gbool {
    uint8_t v; /* 0 or 1 */
} sl__gbool;

/* ---- element conversion ------------------------------------------------------------------
 * As in convert.c, an input is first read into its family (uint64_t, int64_t, float, double;
 * float16 reads as float, bool as 0 / 1), and each output type converts from each family. */

static SL_HD uint64_t sl__gfam(uint8_t x)
{
    return x;
}
static SL_HD uint64_t sl__gfam(uint16_t x)
{
    return x;
}
static SL_HD uint64_t sl__gfam(uint32_t x)
{
    return x;
}
static SL_HD uint64_t sl__gfam(uint64_t x)
{
    return x;
}
static SL_HD int64_t sl__gfam(int8_t x)
{
    return x;
}
static SL_HD int64_t sl__gfam(int16_t x)
{
    return x;
}
static SL_HD int64_t sl__gfam(int32_t x)
{
    return x;
}
static SL_HD int64_t sl__gfam(int64_t x)
{
    return x;
}
static SL_HD float sl__gfam(float x)
{
    return x;
}
static SL_HD double sl__gfam(double x)
{
    return x;
}
static SL_HD float sl__gfam(sl__gf16 x)
{
    return __half2float(__ushort_as_half(x.bits));
}
static SL_HD uint64_t sl__gfam(sl__gbool x)
{
    return x.v != 0;
}

/* Every output type but float16 converts by convert.h's rules, the functions convert.c calls:
 * sl__gout<T>::from(x) = sl__conv_<tag of T>_from_<family of x>(x). */
template <class T> struct sl__gout;

#define SL__GOUT(T, TAG)                                                                           \
    template <> struct sl__gout<T> {                                                               \
        static SL_HD T from(uint64_t u)                                                            \
        {                                                                                          \
            T r = {sl__conv_##TAG##_from_U(u)};                                                    \
            return r;                                                                              \
        }                                                                                          \
        static SL_HD T from(int64_t s)                                                             \
        {                                                                                          \
            T r = {sl__conv_##TAG##_from_S(s)};                                                    \
            return r;                                                                              \
        }                                                                                          \
        static SL_HD T from(float f)                                                               \
        {                                                                                          \
            T r = {sl__conv_##TAG##_from_F(f)};                                                    \
            return r;                                                                              \
        }                                                                                          \
        static SL_HD T from(double d)                                                              \
        {                                                                                          \
            T r = {sl__conv_##TAG##_from_D(d)};                                                    \
            return r;                                                                              \
        }                                                                                          \
    };
SL__GOUT(uint8_t, u8)
SL__GOUT(uint16_t, u16)
SL__GOUT(uint32_t, u32)
SL__GOUT(uint64_t, u64)
SL__GOUT(int8_t, i8)
SL__GOUT(int16_t, i16)
SL__GOUT(int32_t, i32)
SL__GOUT(int64_t, i64)
SL__GOUT(float, f32)
SL__GOUT(double, f64)
SL__GOUT(sl__gbool, b)

/* float16: one correctly rounded conversion from float or double (convert.c's half_from_double
 * rounds once too); integers go through double, exact below 2^53 (above, the result is
 * infinity either way). */
template <> struct sl__gout<sl__gf16> {
    static SL_HD sl__gf16 from(uint64_t u)
    {
        return from((double)u);
    }
    static SL_HD sl__gf16 from(int64_t s)
    {
        return from((double)s);
    }
    static SL_HD sl__gf16 from(float f)
    {
        sl__gf16 h = {__half_as_ushort(__float2half_rn(f))};
        return h;
    }
    static SL_HD sl__gf16 from(double d)
    {
        sl__gf16 h = {__half_as_ushort(__double2half(d))};
        return h;
    }
};

template <class O, class I> static SL_HD O sl__gconvert(I x)
{
    return sl__gout<O>::from(sl__gfam(x));
}

/* Calls BODY with T typedef'd to the storage type of dtype t (nothing for an invalid t). */
#define SL__GTYPE_SWITCH(t, T, ...)                                                                \
    switch (t) {                                                                                   \
    case SL_DTYPE_UINT8: {                                                                         \
        typedef uint8_t T;                                                                         \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case SL_DTYPE_UINT16: {                                                                        \
        typedef uint16_t T;                                                                        \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case SL_DTYPE_UINT32: {                                                                        \
        typedef uint32_t T;                                                                        \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case SL_DTYPE_UINT64: {                                                                        \
        typedef uint64_t T;                                                                        \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case SL_DTYPE_INT8: {                                                                          \
        typedef int8_t T;                                                                          \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case SL_DTYPE_INT16: {                                                                         \
        typedef int16_t T;                                                                         \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case SL_DTYPE_INT32: {                                                                         \
        typedef int32_t T;                                                                         \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case SL_DTYPE_INT64: {                                                                         \
        typedef int64_t T;                                                                         \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case SL_DTYPE_FLOAT16: {                                                                       \
        typedef sl__gf16 T;                                                                        \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case SL_DTYPE_FLOAT32: {                                                                       \
        typedef float T;                                                                           \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case SL_DTYPE_FLOAT64: {                                                                       \
        typedef double T;                                                                          \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case SL_DTYPE_BOOL: {                                                                          \
        typedef sl__gbool T;                                                                       \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    default: break;                                                                                \
    }

/* Element k of array p of dtype t, converted to O. t is the same for a whole launch, so the
 * switch never diverges within a warp. */
template <class O> static SL_HD O sl__gload(const void *p, int64_t k, sl_dtype t)
{
    switch (t) {
    case SL_DTYPE_UINT8: return sl__gconvert<O>(((const uint8_t *)p)[k]);
    case SL_DTYPE_UINT16: return sl__gconvert<O>(((const uint16_t *)p)[k]);
    case SL_DTYPE_UINT32: return sl__gconvert<O>(((const uint32_t *)p)[k]);
    case SL_DTYPE_UINT64: return sl__gconvert<O>(((const uint64_t *)p)[k]);
    case SL_DTYPE_INT8: return sl__gconvert<O>(((const int8_t *)p)[k]);
    case SL_DTYPE_INT16: return sl__gconvert<O>(((const int16_t *)p)[k]);
    case SL_DTYPE_INT32: return sl__gconvert<O>(((const int32_t *)p)[k]);
    case SL_DTYPE_INT64: return sl__gconvert<O>(((const int64_t *)p)[k]);
    case SL_DTYPE_FLOAT16: return sl__gconvert<O>(((const sl__gf16 *)p)[k]);
    case SL_DTYPE_FLOAT32: return sl__gconvert<O>(((const float *)p)[k]);
    case SL_DTYPE_FLOAT64: return sl__gconvert<O>(((const double *)p)[k]);
    default: return sl__gconvert<O>(((const sl__gbool *)p)[k]);
    }
}

/* ---- window copy and gather functors ---------------------------------------------------- */

/* Loads input element k unchanged (same input and output type; T of the element's size). */
template <class T> struct sl__gload_same {
    SL_HD T operator()(const void *in, int64_t k) const
    {
        return ((const T *)in)[k];
    }
};

/* Loads input element k of type t converted to O. */
template <class O> struct sl__gload_cv {
    sl_dtype t;
    SL_HD O operator()(const void *in, int64_t k) const
    {
        return sl__gload<O>(in, k, t);
    }
};

/* sl__gpu_window's kernel: output element i of sample s (tensor_gpu.h's sl__gwin). */
template <class O, class L> struct sl__gwindow_k {
    const sl__gwin *w; /* device, one per sample */
    const O *fill;     /* device, the fill values of all samples */
    L load;

    SL_HD int64_t count(int s) const
    {
        return w[s].count;
    }
    SL_HD void operator()(int s, int64_t i) const
    {
        const sl__gwin &p = w[s];
        int64_t rem = i, src = 0, ch = 0;
        bool inside = true;
        for (int d = p.n - 1; d >= 0; d--) {
            int64_t o = rem;
            if (d > 0)
                o = sl__gdivmod(rem, p.out_shape[d], &rem);
            if (d == p.fa)
                ch = o;
            int64_t x = o + p.anchor[d];
            inside = inside && (uint64_t)x < (uint64_t)p.in_shape[d];
            src += x * p.in_stride[d];
        }
        ((O *)p.out)[i] = inside ? load(p.in, src) : fill[p.fill + ch];
    }
};

/* sl__gpu_gather's kernel: output element i of sample s (tensor_gpu.h's sl__ggather). */
template <class T> struct sl__ggather_k {
    const sl__ggather *g; /* device, one per sample */

    SL_HD int64_t count(int s) const
    {
        return g[s].count;
    }
    SL_HD void operator()(int s, int64_t i) const
    {
        const sl__ggather &p = g[s];
        int64_t rem = i, src = 0;
        for (int d = p.n - 1; d > 0; d--) {
            int64_t o = sl__gdivmod(rem, p.shape[d], &rem);
            src += o * p.stride[d];
        }
        src += rem * p.stride[0];
        ((T *)p.out)[i] = ((const T *)p.in)[src];
    }
};

#endif
