/* elementwise.cu: the kernels of the element-wise family's GPU run (elementwise.h): arithmetic
 * and every math.* operator.
 *
 * Exports sl__ew_gpu_launch. elementwise.c's sl__ew_run_gpu does the host work of the CPU run
 * (plan, type promotion, broadcasting with merged dimensions, constants converted to their
 * compute type) and hands one sl__ew_gpu_sample per sample to this file, which uploads them and
 * runs one functor over every output element of the batch: one thread per output element,
 * consecutive threads writing consecutive elements.
 *
 * The functor ew_k<KIND, CT> is chosen once per launch (kind of operation x compute type); the
 * operation within a kind and the operands' source types are switches whose outcome is the same for
 * every thread (no divergence). Integer pow, floor division and the int64 / uint64 comparison are
 * elementwise.h's SL__HD functions, the ones ew_kernels.c calls; every other expression is
 * ew_kernels.c's, written again for the device with the same casts, so integer results and
 * IEEE-exact float operations (+ - * /, sqrt, rsqrt, fmod, floor, ceil, abs, min / max,
 * comparisons, clamp) match the CPU bit for bit (nvcc --fmad=false); libm functions (exp, log, pow,
 * sin, ...) use CUDA's, which differ from glibc's by a few ulp on the device (on the host, when the
 * GPU is emulated, they are glibc's).
 * Float16 results: float32 results rounded with __float2half_rn (nearest even, as core/half.h;
 * a NaN becomes CUDA's canonical NaN instead of keeping its payload).
 * An integer divisor of 0 in a tensor gives 0 in that element and sets the node's device error
 * flag (sl_ctx_gpu_error_flag), so the iteration fails naming the sample, as on the CPU; a
 * constant divisor of 0 fails in sl__ew_run_gpu.
 * Invariant: a thread reads its element's operands and writes its one output element.
 */
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cuda/kernel.cuh"

#define restrict __restrict__ /* elementwise.h declares C99 prototypes */
#include "ops/math/elementwise.h"
#undef restrict

/* ---- types ---------------------------------------------------------------------------------- */

/* C type T of a compute type and the unsigned type U its integer arithmetic wraps in. */
template <int DT> struct ew_type;
#define EW_TYPE(DT, TT, UU)                                                                        \
    template <> struct ew_type<DT> {                                                               \
        typedef TT T;                                                                              \
        typedef UU U;                                                                              \
    };
EW_TYPE(SL_DTYPE_INT8, int8_t, uint32_t)
EW_TYPE(SL_DTYPE_INT16, int16_t, uint32_t)
EW_TYPE(SL_DTYPE_INT32, int32_t, uint32_t)
EW_TYPE(SL_DTYPE_INT64, int64_t, uint64_t)
EW_TYPE(SL_DTYPE_UINT8, uint8_t, uint32_t)
EW_TYPE(SL_DTYPE_UINT16, uint16_t, uint32_t)
EW_TYPE(SL_DTYPE_UINT32, uint32_t, uint32_t)
EW_TYPE(SL_DTYPE_UINT64, uint64_t, uint64_t)
EW_TYPE(SL_DTYPE_FLOAT32, float, float)
EW_TYPE(SL_DTYPE_FLOAT64, double, double)
EW_TYPE(SL_DTYPE_BOOL, uint8_t, uint32_t)

/* Element i of a tensor of type t as T: C casts (sl__ew_conv), bool sources read as 0 / 1,
 * float16 through float. */
template <class T> SL_HD T ew_load(const void *p, int64_t i, sl_dtype t)
{
    switch (t) {
    case SL_DTYPE_UINT8: return (T)((const uint8_t *)p)[i];
    case SL_DTYPE_UINT16: return (T)((const uint16_t *)p)[i];
    case SL_DTYPE_UINT32: return (T)((const uint32_t *)p)[i];
    case SL_DTYPE_UINT64: return (T)((const uint64_t *)p)[i];
    case SL_DTYPE_INT8: return (T)((const int8_t *)p)[i];
    case SL_DTYPE_INT16: return (T)((const int16_t *)p)[i];
    case SL_DTYPE_INT32: return (T)((const int32_t *)p)[i];
    case SL_DTYPE_INT64: return (T)((const int64_t *)p)[i];
    case SL_DTYPE_FLOAT16: return (T)__half2float(((const __half *)p)[i]);
    case SL_DTYPE_FLOAT32: return (T)((const float *)p)[i];
    case SL_DTYPE_FLOAT64: return (T)((const double *)p)[i];
    default: return (T)(((const uint8_t *)p)[i] != 0); /* bool */
    }
}

/* ---- float functions: the float32 and float64 libm names, overloaded --------------------------
 */

#define EW_F1(NAME, F32, F64)                                                                      \
    SL_HD float NAME(float x)                                                                      \
    {                                                                                              \
        return F32(x);                                                                             \
    }                                                                                              \
    SL_HD double NAME(double x)                                                                    \
    {                                                                                              \
        return F64(x);                                                                             \
    }
#define EW_F2(NAME, F32, F64)                                                                      \
    SL_HD float NAME(float x, float y)                                                             \
    {                                                                                              \
        return F32(x, y);                                                                          \
    }                                                                                              \
    SL_HD double NAME(double x, double y)                                                          \
    {                                                                                              \
        return F64(x, y);                                                                          \
    }
EW_F1(ew_fabs, fabsf, fabs)
EW_F1(ew_sqrt, sqrtf, sqrt)
EW_F1(ew_cbrt, cbrtf, cbrt)
EW_F1(ew_exp, expf, exp)
EW_F1(ew_log, logf, log)
EW_F1(ew_log2, log2f, log2)
EW_F1(ew_log10, log10f, log10)
EW_F1(ew_sin, sinf, sin)
EW_F1(ew_cos, cosf, cos)
EW_F1(ew_tan, tanf, tan)
EW_F1(ew_asin, asinf, asin)
EW_F1(ew_acos, acosf, acos)
EW_F1(ew_atan, atanf, atan)
EW_F1(ew_sinh, sinhf, sinh)
EW_F1(ew_cosh, coshf, cosh)
EW_F1(ew_tanh, tanhf, tanh)
EW_F1(ew_asinh, asinhf, asinh)
EW_F1(ew_acosh, acoshf, acosh)
EW_F1(ew_atanh, atanhf, atanh)
EW_F1(ew_floor, floorf, floor)
EW_F1(ew_ceil, ceilf, ceil)
EW_F2(ew_fmod, fmodf, fmod)
EW_F2(ew_pow, powf, pow)
EW_F2(ew_atan2, atan2f, atan2)
EW_F2(ew_floordiv, sl__ew_floordiv_f32, sl__ew_floordiv_f64) /* elementwise.h, as the CPU's */

/* ---- operations per compute type ------------------------------------------------------------ */

template <int CT> struct ew_ops {
    typedef typename ew_type<CT>::T T;
    typedef typename ew_type<CT>::U U;
    static constexpr bool is_float = CT == SL_DTYPE_FLOAT32 || CT == SL_DTYPE_FLOAT64;
    static constexpr bool is_bool = CT == SL_DTYPE_BOOL;
    static constexpr bool is_signed = (T)-1 < (T)0 && !is_float;

    static SL_HD T neg(T x)
    {
        return (T)((U)0 - (U)x);
    }

    /* Integer division family; a zero divisor gives 0 (see the file comment). */
    static SL_HD T divide(ew_op op, T x, T y)
    {
        if (y == 0)
            return 0;
        if constexpr (is_signed) {
            if (y == (T)-1)
                return op == EW_MOD ? (T)0 : neg(x);
            if (op == EW_FLOORDIV)
                return (T)SL__EW_IFLOORDIV(x, y);
        }
        return op == EW_MOD ? (T)(x % y) : (T)(x / y);
    }

    static SL_HD T arith(ew_op op, T x, T y)
    {
        if constexpr (is_bool) {
            switch (op) {
            case EW_BITOR: return x | y;
            case EW_BITXOR: return x ^ y;
            default: return x & y; /* mul (logical and), bitand */
            }
        } else if constexpr (is_float) {
            switch (op) {
            case EW_ADD: return x + y;
            case EW_SUB: return x - y;
            case EW_MUL: return x * y;
            case EW_MIN: return x < y ? x : y;
            case EW_MAX: return x > y ? x : y;
            case EW_MOD: return ew_fmod(x, y);
            case EW_POW:
            case EW_FPOW: return ew_pow(x, y);
            case EW_ATAN2: return ew_atan2(x, y);
            case EW_FLOORDIV: return ew_floordiv(x, y);
            default: return x / y; /* div, fdiv */
            }
        } else {
            switch (op) {
            case EW_ADD: return (T)((U)x + (U)y);
            case EW_SUB: return (T)((U)x - (U)y);
            case EW_MUL: return (T)((U)x * (U)y);
            case EW_MIN: return x < y ? x : y;
            case EW_MAX: return x > y ? x : y;
            case EW_BITAND: return (T)(x & y);
            case EW_BITOR: return (T)(x | y);
            case EW_BITXOR: return (T)(x ^ y);
            case EW_POW:
                if constexpr (is_signed)
                    return y < 0 ? (T)0 : (T)sl__ew_ipow((uint64_t)x, (uint64_t)y);
                else
                    return (T)sl__ew_ipow(x, y);
            default: return divide(op, x, y); /* div, floordiv, mod */
            }
        }
    }

    static SL_HD uint8_t compare(ew_op op, T x, T y)
    {
        switch (op) {
        case EW_EQ: return x == y;
        case EW_NEQ: return x != y;
        case EW_LT: return x < y;
        case EW_LEQ: return x <= y;
        case EW_GT: return x > y;
        default: return x >= y;
        }
    }

    static SL_HD T unary(ew_op op, T x)
    {
        if constexpr (is_bool) {
            return (T)(x ^ 1u); /* bitnot */
        } else if constexpr (is_float) {
            switch (op) {
            case EW_MINUS: return -x;
            case EW_ABS:
            case EW_FABS: return ew_fabs(x);
            case EW_SQRT: return ew_sqrt(x);
            case EW_RSQRT: return (T)1 / ew_sqrt(x);
            case EW_CBRT: return ew_cbrt(x);
            case EW_EXP: return ew_exp(x);
            case EW_LOG: return ew_log(x);
            case EW_LOG2: return ew_log2(x);
            case EW_LOG10: return ew_log10(x);
            case EW_SIN: return ew_sin(x);
            case EW_COS: return ew_cos(x);
            case EW_TAN: return ew_tan(x);
            case EW_ASIN: return ew_asin(x);
            case EW_ACOS: return ew_acos(x);
            case EW_ATAN: return ew_atan(x);
            case EW_SINH: return ew_sinh(x);
            case EW_COSH: return ew_cosh(x);
            case EW_TANH: return ew_tanh(x);
            case EW_ASINH: return ew_asinh(x);
            case EW_ACOSH: return ew_acosh(x);
            case EW_ATANH: return ew_atanh(x);
            case EW_FLOOR: return ew_floor(x);
            default: return ew_ceil(x);
            }
        } else {
            switch (op) {
            case EW_MINUS: return neg(x);
            case EW_ABS:
                if constexpr (is_signed)
                    return x < 0 ? neg(x) : x;
                else
                    return x;
            default: return (T) ~(U)x; /* bitnot */
            }
        }
    }
};

/* ---- the functor ---------------------------------------------------------------------------- */

template <int KIND, int CT> struct ew_k {
    typedef typename ew_type<CT>::T T;
    const sl__ew_gpu_sample *s; /* device, one per sample */
    sl__ew_gpu_job job;

    SL_HD int64_t count(int i) const
    {
        return s[i].numel;
    }

    /* Kernel argument j at element offset off, in compute type V. */
    template <class V> SL_HD V arg(const sl__ew_gpu_sample &g, int j, int64_t off) const
    {
        V v;
        if (!g.arg[j]) {
            memcpy(&v, &g.c[j], sizeof v);
            return v;
        }
        v = ew_load<V>(g.arg[j], off, job.src[j]);
        if (job.round16[j]) /* an integer operand of a float16 result (float V only) */
            v = (V)__half2float(__float2half_rn((float)v));
        return v;
    }

    SL_HD void store(void *out, int64_t e, T v) const
    {
        if (job.out == SL_DTYPE_FLOAT16)
            ((__half *)out)[e] = __float2half_rn((float)v);
        else
            ((T *)out)[e] = v;
    }

    SL_HD void operator()(int i, int64_t e) const
    {
        const sl__ew_gpu_sample &g = s[i];
        int64_t off0 = 0, off1 = 0, r = e;
        for (int d = g.m - 1; d > 0; d--) { /* the output index over the merged dimensions */
            const int64_t x = sl__gdivmod(r, g.ext[d], &r);
            off0 += x * g.stride[0][d];
            off1 += x * g.stride[1][d];
        }
        off0 += r * g.stride[0][0];
        off1 += r * g.stride[1][0];
        if constexpr (KIND == SL__EW_GPU_ARITH) {
            const T y = arg<T>(g, 1, off1);
            if constexpr (!ew_ops<CT>::is_float && !ew_ops<CT>::is_bool) {
                if (y == 0 &&
                    job.flag) /* div, floordiv, mod: the sample fails (exec/stage_phases.c) */
                    sl_gpu_flag_sample(job.flag, i);
            }
            store(g.out, e, ew_ops<CT>::arith(job.op, arg<T>(g, 0, off0), y));
        } else if constexpr (KIND == SL__EW_GPU_CMP) {
            ((uint8_t *)g.out)[e] =
                ew_ops<CT>::compare(job.op, arg<T>(g, 0, off0), arg<T>(g, 1, off1));
        } else if constexpr (KIND == SL__EW_GPU_MIXED) {
            ((uint8_t *)g.out)[e] =
                sl__ew_cmp_i64_u64(job.op, arg<int64_t>(g, 0, off0), arg<uint64_t>(g, 1, off1));
        } else if constexpr (KIND == SL__EW_GPU_UNARY) {
            store(g.out, e, ew_ops<CT>::unary(job.op, arg<T>(g, 0, off0)));
        } else { /* clamp: a < lo ? lo : a, then > hi ? hi */
            T lo, hi, x = arg<T>(g, 0, off0);
            memcpy(&lo, &g.c[0], sizeof lo);
            memcpy(&hi, &g.c[1], sizeof hi);
            x = x < lo ? lo : x;
            store(g.out, e, x > hi ? hi : x);
        }
    }
};

/* ---- launch --------------------------------------------------------------------------------- */

template <int KIND, int CT>
static sl_status go(sl_ctx *ctx, const sl__ew_gpu_job *job, const sl__ew_gpu_sample *d, int n,
                    int64_t max_numel)
{
    return sl_gpu_each(ctx, n, max_numel, ew_k<KIND, CT>{d, *job}, "element-wise kernel");
}

template <int KIND>
static sl_status by_type(sl_ctx *ctx, const sl__ew_gpu_job *job, const sl__ew_gpu_sample *d, int n,
                         int64_t max_numel)
{
    switch (job->ct) {
    case SL_DTYPE_UINT8: return go<KIND, SL_DTYPE_UINT8>(ctx, job, d, n, max_numel);
    case SL_DTYPE_UINT16: return go<KIND, SL_DTYPE_UINT16>(ctx, job, d, n, max_numel);
    case SL_DTYPE_UINT32: return go<KIND, SL_DTYPE_UINT32>(ctx, job, d, n, max_numel);
    case SL_DTYPE_UINT64: return go<KIND, SL_DTYPE_UINT64>(ctx, job, d, n, max_numel);
    case SL_DTYPE_INT8: return go<KIND, SL_DTYPE_INT8>(ctx, job, d, n, max_numel);
    case SL_DTYPE_INT16: return go<KIND, SL_DTYPE_INT16>(ctx, job, d, n, max_numel);
    case SL_DTYPE_INT32: return go<KIND, SL_DTYPE_INT32>(ctx, job, d, n, max_numel);
    case SL_DTYPE_INT64: return go<KIND, SL_DTYPE_INT64>(ctx, job, d, n, max_numel);
    case SL_DTYPE_FLOAT32: return go<KIND, SL_DTYPE_FLOAT32>(ctx, job, d, n, max_numel);
    case SL_DTYPE_FLOAT64: return go<KIND, SL_DTYPE_FLOAT64>(ctx, job, d, n, max_numel);
    case SL_DTYPE_BOOL: return go<KIND, SL_DTYPE_BOOL>(ctx, job, d, n, max_numel);
    default: return sl_fail(ctx, SL_EINTERNAL, "no GPU loop for %s", sl_dtype_name(job->ct));
    }
}

extern "C" sl_status sl__ew_gpu_launch(sl_ctx *ctx, const sl__ew_gpu_job *job,
                                       const sl__ew_gpu_sample *h, int n, int64_t max_numel)
{
    if (max_numel <= 0)
        return SL_OK;
    const sl__ew_gpu_sample *d = sl_gpu_params(ctx, 0, h, n);
    if (!d)
        return SL_ENOMEM; /* the error is recorded */
    switch (job->kind) {
    case SL__EW_GPU_ARITH: return by_type<SL__EW_GPU_ARITH>(ctx, job, d, n, max_numel);
    case SL__EW_GPU_CMP: return by_type<SL__EW_GPU_CMP>(ctx, job, d, n, max_numel);
    case SL__EW_GPU_MIXED: return go<SL__EW_GPU_MIXED, SL_DTYPE_INT64>(ctx, job, d, n, max_numel);
    case SL__EW_GPU_UNARY: return by_type<SL__EW_GPU_UNARY>(ctx, job, d, n, max_numel);
    default: return by_type<SL__EW_GPU_CLAMP>(ctx, job, d, n, max_numel);
    }
}
