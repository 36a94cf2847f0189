/* src/ops/math/ew_kernels.c: the typed loops of the element-wise family (see elementwise.h).
 *
 * Exports sl__ew_bin, sl__ew_un, sl__ew_clamp, sl__ew_cmp_mixed, sl__ew_conv, sl__ew_round_f16:
 * lookups into tables of loops that X-macros generate, one per (operation, compute type) and
 * one per (source type, target type) for conversions.
 *
 * Semantics (DALI's, with C's undefined corners defined):
 * - Integer add, sub, mul, minus, abs and pow wrap modulo 2^bits: they are computed in unsigned
 *   arithmetic (at least unsigned int wide, so uint16 * uint16 cannot overflow a signed int).
 * - Integer div truncates toward zero, mod has the sign of the dividend (C), floordiv rounds
 *   down (NumPy); MIN / -1 wraps to MIN and MIN % -1 is 0 instead of trapping. A zero divisor
 *   makes the loop return non-zero (the driver fails the sample) and never traps.
 * - Integer pow: exponentiation by squaring, wrapping; a negative exponent gives 0 (DALI's ipow).
 * - Float div, mod (fmod), pow and the functions follow IEEE / libm; floordiv is NumPy's.
 * - min / max are DALI's `a < b ? a : b` / `a > b ? a : b` (a NaN operand yields b unless it
 *   is a), clamp is `a < lo ? lo : a` then `> hi ? hi`, so a NaN input stays NaN.
 * - bool values are uint8 0/1; conversions from bool normalise any non-zero byte to 1.
 * Integer pow, floor division and the int64 / uint64 comparison are elementwise.h's SL__HD
 * functions, which the GPU kernel (elementwise.cu) runs too.
 * Invariant: no loop branches on a type per element; the driver picks loops once per chunk.
 */
#include <math.h>
#include <stdint.h>

#include "core/half.h"
#include "ops/math/elementwise.h"

/* (short name, C type, unsigned type for wrapping arithmetic, dtype) */
#define SINT_TYPES(X)                                                                              \
    X(i8, int8_t, uint32_t, SL_DTYPE_INT8)                                                         \
    X(i16, int16_t, uint32_t, SL_DTYPE_INT16)                                                      \
    X(i32, int32_t, uint32_t, SL_DTYPE_INT32)                                                      \
    X(i64, int64_t, uint64_t, SL_DTYPE_INT64)
#define UINT_TYPES(X)                                                                              \
    X(u8, uint8_t, uint32_t, SL_DTYPE_UINT8)                                                       \
    X(u16, uint16_t, uint32_t, SL_DTYPE_UINT16)                                                    \
    X(u32, uint32_t, uint32_t, SL_DTYPE_UINT32)                                                    \
    X(u64, uint64_t, uint64_t, SL_DTYPE_UINT64)
#define FLOAT_TYPES(X)                                                                             \
    X(f32, float, float, SL_DTYPE_FLOAT32)                                                         \
    X(f64, double, double, SL_DTYPE_FLOAT64)
#define INT_TYPES(X) SINT_TYPES(X) UINT_TYPES(X)
#define NUM_TYPES(X) INT_TYPES(X) FLOAT_TYPES(X)

/* ---- loop templates --------------------------------------------------------------------- */

/* GCC's -O2 vectorizer (the "very cheap" cost model) only vectorizes a loop whose trip count is
 * a known multiple of the vector width, so the bulk runs in multiples of 32 and a scalar loop
 * does the rest. BODY uses the index k. */
#define LOOP(n, BODY)                                                                              \
    do {                                                                                           \
        const int64_t bulk_ = (n) & ~(int64_t)31;                                                  \
        for (int64_t k = 0; k < bulk_; k++) {                                                      \
            BODY                                                                                   \
        }                                                                                          \
        for (int64_t k = bulk_; k < (n); k++) {                                                    \
            BODY                                                                                   \
        }                                                                                          \
    } while (0)

#define BIN_LOOP(FN, T, R, EXPR)                                                                   \
    static int FN(const void *restrict pa, const void *restrict pb, void *restrict po, int64_t n)  \
    {                                                                                              \
        const T *restrict a = pa;                                                                  \
        const T *restrict b = pb;                                                                  \
        R *restrict o = po;                                                                        \
        LOOP(n, const T x = a[k]; const T y = b[k]; o[k] = (R)(EXPR););                            \
        return 0;                                                                                  \
    }

#define UN_LOOP(FN, T, R, EXPR)                                                                    \
    static int FN(const void *restrict pa, void *restrict po, int64_t n)                           \
    {                                                                                              \
        const T *restrict a = pa;                                                                  \
        R *restrict o = po;                                                                        \
        LOOP(n, const T x = a[k]; o[k] = (R)(EXPR););                                              \
        return 0;                                                                                  \
    }

/* Integer division family: the divisor d is never 0 (a 0 counts as an error and divides by 1)
 * and d == -1 is handled by the caller's expression, so nothing traps. */
#define DIV_LOOP(FN, T, EXPR)                                                                      \
    static int FN(const void *restrict pa, const void *restrict pb, void *restrict po, int64_t n)  \
    {                                                                                              \
        const T *restrict a = pa;                                                                  \
        const T *restrict b = pb;                                                                  \
        T *restrict o = po;                                                                        \
        int bad = 0;                                                                               \
        for (int64_t k = 0; k < n; k++) {                                                          \
            const T x = a[k], y = b[k];                                                            \
            bad |= y == 0;                                                                         \
            const T d = y == 0 ? (T)1 : y;                                                         \
            o[k] = (T)(EXPR);                                                                      \
        }                                                                                          \
        return bad;                                                                                \
    }

/* ---- binary arithmetic ------------------------------------------------------------------ */

#define WRAP(UT, x, OP, y) ((UT)(x)OP(UT)(y))

#define INT_ARITH(N, T, UT, DT)                                                                    \
    BIN_LOOP(add_##N, T, T, WRAP(UT, x, +, y))                                                     \
    BIN_LOOP(sub_##N, T, T, WRAP(UT, x, -, y))                                                     \
    BIN_LOOP(mul_##N, T, T, WRAP(UT, x, *, y))                                                     \
    BIN_LOOP(min_##N, T, T, x < y ? x : y)                                                         \
    BIN_LOOP(max_##N, T, T, x > y ? x : y)                                                         \
    BIN_LOOP(and_##N, T, T, x &y)                                                                  \
    BIN_LOOP(or_##N, T, T, x | y)                                                                  \
    BIN_LOOP(xor_##N, T, T, x ^ y)
#define FLOAT_ARITH(N, T, UT, DT)                                                                  \
    BIN_LOOP(add_##N, T, T, x + y)                                                                 \
    BIN_LOOP(sub_##N, T, T, x - y)                                                                 \
    BIN_LOOP(mul_##N, T, T, x *y)                                                                  \
    BIN_LOOP(min_##N, T, T, x < y ? x : y)                                                         \
    BIN_LOOP(max_##N, T, T, x > y ? x : y)                                                         \
    BIN_LOOP(div_##N, T, T, x / y)                                                                 \
    BIN_LOOP(mod_##N, T, T, fmod_##N(x, y))                                                        \
    BIN_LOOP(pow_##N, T, T, pow_##N##_fn(x, y))                                                    \
    BIN_LOOP(atan2_##N, T, T, atan2_##N##_fn(x, y))                                                \
    BIN_LOOP(floordiv_##N, T, T, sl__ew_floordiv_##N(x, y))

#define fmod_f32 fmodf
#define fmod_f64 fmod
#define pow_f32_fn powf
#define pow_f64_fn pow
#define atan2_f32_fn atan2f
#define atan2_f64_fn atan2

INT_TYPES(INT_ARITH)
FLOAT_TYPES(FLOAT_ARITH)

#define SINT_POW(N, T, UT, DT)                                                                     \
    BIN_LOOP(pow_##N, T, T, y < 0 ? 0 : sl__ew_ipow((uint64_t)x, (uint64_t)y))
#define UINT_POW(N, T, UT, DT) BIN_LOOP(pow_##N, T, T, sl__ew_ipow(x, y))
SINT_TYPES(SINT_POW)
UINT_TYPES(UINT_POW)

/* Integer division, floor division and remainder; NEG(x) = -x wrapping. */
#define NEG(UT, T, x) ((T)(0 - (UT)(x)))
#define SINT_DIV(N, T, UT, DT)                                                                     \
    DIV_LOOP(div_##N, T, d == -1 ? NEG(UT, T, x) : x / d)                                          \
    DIV_LOOP(mod_##N, T, d == -1 ? 0 : x % d)                                                      \
    DIV_LOOP(floordiv_##N, T, d == -1 ? NEG(UT, T, x) : (T)SL__EW_IFLOORDIV(x, d))
#define UINT_DIV(N, T, UT, DT)                                                                     \
    DIV_LOOP(div_##N, T, x / d)                                                                    \
    DIV_LOOP(mod_##N, T, x % d)                                                                    \
    DIV_LOOP(floordiv_##N, T, x / d)
SINT_TYPES(SINT_DIV)
UINT_TYPES(UINT_DIV)

/* bool (uint8 0/1): multiplication is logical and. */
BIN_LOOP(mul_b, uint8_t, uint8_t, x &y)
BIN_LOOP(and_b, uint8_t, uint8_t, x &y)
BIN_LOOP(or_b, uint8_t, uint8_t, x | y)
BIN_LOOP(xor_b, uint8_t, uint8_t, x ^ y)

/* ---- comparisons ------------------------------------------------------------------------ */

#define CMP_LOOPS(N, T, UT, DT)                                                                    \
    BIN_LOOP(eq_##N, T, uint8_t, x == y)                                                           \
    BIN_LOOP(neq_##N, T, uint8_t, x != y)                                                          \
    BIN_LOOP(lt_##N, T, uint8_t, x < y)                                                            \
    BIN_LOOP(leq_##N, T, uint8_t, x <= y)                                                          \
    BIN_LOOP(gt_##N, T, uint8_t, x > y)                                                            \
    BIN_LOOP(geq_##N, T, uint8_t, x >= y)
NUM_TYPES(CMP_LOOPS)
CMP_LOOPS(b, uint8_t, uint8_t, SL_DTYPE_BOOL)

/* int64 x against uint64 y (sl__ew_cmp_i64_u64, shared with the kernel). */
#define MIXED(FN, OP)                                                                              \
    static int FN(const void *restrict pa, const void *restrict pb, void *restrict po, int64_t n)  \
    {                                                                                              \
        const int64_t *restrict a = pa;                                                            \
        const uint64_t *restrict b = pb;                                                           \
        uint8_t *restrict o = po;                                                                  \
        LOOP(n, o[k] = sl__ew_cmp_i64_u64(OP, a[k], b[k]););                                       \
        return 0;                                                                                  \
    }
MIXED(eq_mixed, EW_EQ)
MIXED(neq_mixed, EW_NEQ)
MIXED(lt_mixed, EW_LT)
MIXED(leq_mixed, EW_LEQ)
MIXED(gt_mixed, EW_GT)
MIXED(geq_mixed, EW_GEQ)

/* ---- unary ------------------------------------------------------------------------------ */

#define SINT_UNARY(N, T, UT, DT)                                                                   \
    UN_LOOP(minus_##N, T, T, NEG(UT, T, x))                                                        \
    UN_LOOP(abs_##N, T, T, x < 0 ? NEG(UT, T, x) : x)                                              \
    UN_LOOP(bitnot_##N, T, T, ~(UT)x)
#define UINT_UNARY(N, T, UT, DT)                                                                   \
    UN_LOOP(minus_##N, T, T, NEG(UT, T, x))                                                        \
    UN_LOOP(abs_##N, T, T, x)                                                                      \
    UN_LOOP(bitnot_##N, T, T, ~(UT)x)
SINT_TYPES(SINT_UNARY)
UINT_TYPES(UINT_UNARY)
UN_LOOP(bitnot_b, uint8_t, uint8_t, x ^ 1u)

static inline float rsqrtf_fn(float x)
{
    return 1.0f / sqrtf(x);
}
static inline double rsqrt_fn(double x)
{
    return 1.0 / sqrt(x);
}

/* Functions of float types: (operation, float32 function, float64 function) */
#define FUNCS(X)                                                                                   \
    X(minus, -, -)                                                                                 \
    X(abs, fabsf, fabs)                                                                            \
    X(fabs, fabsf, fabs)                                                                           \
    X(sqrt, sqrtf, sqrt)                                                                           \
    X(rsqrt, rsqrtf_fn, rsqrt_fn)                                                                  \
    X(cbrt, cbrtf, cbrt)                                                                           \
    X(exp, expf, exp)                                                                              \
    X(log, logf, log)                                                                              \
    X(log2, log2f, log2)                                                                           \
    X(log10, log10f, log10)                                                                        \
    X(sin, sinf, sin)                                                                              \
    X(cos, cosf, cos)                                                                              \
    X(tan, tanf, tan)                                                                              \
    X(asin, asinf, asin)                                                                           \
    X(acos, acosf, acos)                                                                           \
    X(atan, atanf, atan)                                                                           \
    X(sinh, sinhf, sinh)                                                                           \
    X(cosh, coshf, cosh)                                                                           \
    X(tanh, tanhf, tanh)                                                                           \
    X(asinh, asinhf, asinh)                                                                        \
    X(acosh, acoshf, acosh)                                                                        \
    X(atanh, atanhf, atanh)                                                                        \
    X(floor, floorf, floor)                                                                        \
    X(ceil, ceilf, ceil)
#define FUNC_LOOPS(NAME, F32, F64)                                                                 \
    UN_LOOP(NAME##_f32, float, float, F32(x))                                                      \
    UN_LOOP(NAME##_f64, double, double, F64(x))
FUNCS(FUNC_LOOPS)

/* ---- clamp ------------------------------------------------------------------------------ */

#define CLAMP_LOOP(N, T, UT, DT)                                                                   \
    static void clamp_##N(const void *restrict pa, const void *plo, const void *phi,               \
                          void *restrict po, int64_t n)                                            \
    {                                                                                              \
        const T *restrict a = pa;                                                                  \
        T *restrict o = po;                                                                        \
        const T lo = *(const T *)plo, hi = *(const T *)phi;                                        \
        LOOP(n, const T x = a[k] < lo ? lo : a[k]; o[k] = x > hi ? hi : x;);                       \
    }
NUM_TYPES(CLAMP_LOOP)

/* ---- tables ----------------------------------------------------------------------------- */

#define TE(OP, N, DT) [DT] = OP##_##N,
#define ROW_INT(OP)                                                                                \
    TE(OP, i8, SL_DTYPE_INT8)                                                                      \
    TE(OP, i16, SL_DTYPE_INT16)                                                                    \
    TE(OP, i32, SL_DTYPE_INT32)                                                                    \
    TE(OP, i64, SL_DTYPE_INT64)                                                                    \
    TE(OP, u8, SL_DTYPE_UINT8)                                                                     \
    TE(OP, u16, SL_DTYPE_UINT16) TE(OP, u32, SL_DTYPE_UINT32) TE(OP, u64, SL_DTYPE_UINT64)
#define ROW_FLT(OP) TE(OP, f32, SL_DTYPE_FLOAT32) TE(OP, f64, SL_DTYPE_FLOAT64)
#define ROW_NUM(OP) ROW_INT(OP) ROW_FLT(OP)
#define ROW_BOOL(OP) TE(OP, b, SL_DTYPE_BOOL)

static const sl__ew_bin_fn bin_table[EW_COUNT][SL_DTYPE_COUNT] = {
    [EW_ADD] = {ROW_NUM(add)},
    [EW_SUB] = {ROW_NUM(sub)},
    [EW_MUL] = {ROW_NUM(mul) ROW_BOOL(mul)},
    [EW_DIV] = {ROW_NUM(div)},
    [EW_FLOORDIV] = {ROW_NUM(floordiv)},
    [EW_MOD] = {ROW_NUM(mod)},
    [EW_POW] = {ROW_NUM(pow)},
    [EW_MIN] = {ROW_NUM(min)},
    [EW_MAX] = {ROW_NUM(max)},
    [EW_FDIV] = {ROW_FLT(div)},
    [EW_FPOW] = {ROW_FLT(pow)},
    [EW_ATAN2] = {ROW_FLT(atan2)},
    [EW_EQ] = {ROW_NUM(eq) ROW_BOOL(eq)},
    [EW_NEQ] = {ROW_NUM(neq) ROW_BOOL(neq)},
    [EW_LT] = {ROW_NUM(lt) ROW_BOOL(lt)},
    [EW_LEQ] = {ROW_NUM(leq) ROW_BOOL(leq)},
    [EW_GT] = {ROW_NUM(gt) ROW_BOOL(gt)},
    [EW_GEQ] = {ROW_NUM(geq) ROW_BOOL(geq)},
    [EW_BITAND] = {ROW_INT(and) ROW_BOOL(and)},
    [EW_BITOR] = {ROW_INT(or) ROW_BOOL(or)},
    [EW_BITXOR] = {ROW_INT(xor) ROW_BOOL(xor)},
};

static const sl__ew_un_fn un_table[EW_COUNT][SL_DTYPE_COUNT] = {
    [EW_MINUS] = {ROW_NUM(minus)},
    [EW_ABS] = {ROW_NUM(abs)},
    [EW_BITNOT] = {ROW_INT(bitnot) ROW_BOOL(bitnot)},
    [EW_FABS] = {ROW_FLT(fabs)},
    [EW_SQRT] = {ROW_FLT(sqrt)},
    [EW_RSQRT] = {ROW_FLT(rsqrt)},
    [EW_CBRT] = {ROW_FLT(cbrt)},
    [EW_EXP] = {ROW_FLT(exp)},
    [EW_LOG] = {ROW_FLT(log)},
    [EW_LOG2] = {ROW_FLT(log2)},
    [EW_LOG10] = {ROW_FLT(log10)},
    [EW_SIN] = {ROW_FLT(sin)},
    [EW_COS] = {ROW_FLT(cos)},
    [EW_TAN] = {ROW_FLT(tan)},
    [EW_ASIN] = {ROW_FLT(asin)},
    [EW_ACOS] = {ROW_FLT(acos)},
    [EW_ATAN] = {ROW_FLT(atan)},
    [EW_SINH] = {ROW_FLT(sinh)},
    [EW_COSH] = {ROW_FLT(cosh)},
    [EW_TANH] = {ROW_FLT(tanh)},
    [EW_ASINH] = {ROW_FLT(asinh)},
    [EW_ACOSH] = {ROW_FLT(acosh)},
    [EW_ATANH] = {ROW_FLT(atanh)},
    [EW_FLOOR] = {ROW_FLT(floor)},
    [EW_CEIL] = {ROW_FLT(ceil)},
};

static const sl__ew_clamp_fn clamp_table[SL_DTYPE_COUNT] = {ROW_NUM(clamp)};

static const sl__ew_bin_fn mixed_table[EW_COUNT] = {
    [EW_EQ] = eq_mixed,   [EW_NEQ] = neq_mixed, [EW_LT] = lt_mixed,
    [EW_LEQ] = leq_mixed, [EW_GT] = gt_mixed,   [EW_GEQ] = geq_mixed,
};

static bool valid(sl_dtype t)
{
    return t > SL_DTYPE_INVALID && t < SL_DTYPE_COUNT;
}

sl__ew_bin_fn sl__ew_bin(ew_op op, sl_dtype ct)
{
    return op < EW_COUNT && valid(ct) ? bin_table[op][ct] : NULL;
}

sl__ew_un_fn sl__ew_un(ew_op op, sl_dtype ct)
{
    return op < EW_COUNT && valid(ct) ? un_table[op][ct] : NULL;
}

sl__ew_clamp_fn sl__ew_clamp(sl_dtype ct)
{
    return valid(ct) ? clamp_table[ct] : NULL;
}

sl__ew_bin_fn sl__ew_cmp_mixed(ew_op op)
{
    return op < EW_COUNT ? mixed_table[op] : NULL;
}

/* ---- conversions ------------------------------------------------------------------------ */

/* (short name, C type, load expression of a stored value v, dtype) */
#define CONV_TYPES_A(X)                                                                            \
    X(i8, int8_t, v, SL_DTYPE_INT8)                                                                \
    X(i16, int16_t, v, SL_DTYPE_INT16)                                                             \
    X(i32, int32_t, v, SL_DTYPE_INT32)                                                             \
    X(i64, int64_t, v, SL_DTYPE_INT64)                                                             \
    X(u8, uint8_t, v, SL_DTYPE_UINT8)                                                              \
    X(u16, uint16_t, v, SL_DTYPE_UINT16)                                                           \
    X(u32, uint32_t, v, SL_DTYPE_UINT32)                                                           \
    X(u64, uint64_t, v, SL_DTYPE_UINT64)                                                           \
    X(f32, float, v, SL_DTYPE_FLOAT32)                                                             \
    X(f64, double, v, SL_DTYPE_FLOAT64)                                                            \
    X(b, uint8_t, (v != 0), SL_DTYPE_BOOL)
/* (X, outer arguments..., short name, C type, dtype): X gets the outer arguments first. */
#define CONV_TYPES_B(X, ...)                                                                       \
    X(__VA_ARGS__, i8, int8_t, SL_DTYPE_INT8)                                                      \
    X(__VA_ARGS__, i16, int16_t, SL_DTYPE_INT16)                                                   \
    X(__VA_ARGS__, i32, int32_t, SL_DTYPE_INT32)                                                   \
    X(__VA_ARGS__, i64, int64_t, SL_DTYPE_INT64)                                                   \
    X(__VA_ARGS__, u8, uint8_t, SL_DTYPE_UINT8)                                                    \
    X(__VA_ARGS__, u16, uint16_t, SL_DTYPE_UINT16)                                                 \
    X(__VA_ARGS__, u32, uint32_t, SL_DTYPE_UINT32)                                                 \
    X(__VA_ARGS__, u64, uint64_t, SL_DTYPE_UINT64)                                                 \
    X(__VA_ARGS__, f32, float, SL_DTYPE_FLOAT32)                                                   \
    X(__VA_ARGS__, f64, double, SL_DTYPE_FLOAT64)                                                  \
    X(__VA_ARGS__, b, uint8_t, SL_DTYPE_BOOL)

/* The driver converts only towards wider or equal compute types (promotion never narrows, and
 * float never converts to an integer), so every generated cast is defined for the values it
 * meets; the other pairs exist only to fill the table. */
#define CONV_ONE(SN, ST, LOAD, SDT, DN, DT, DDT)                                                   \
    static void conv_##SN##_##DN(const void *restrict ps, void *restrict pd, int64_t n)            \
    {                                                                                              \
        const ST *restrict s = ps;                                                                 \
        DT *restrict d = pd;                                                                       \
        LOOP(n, const ST v = s[k]; d[k] = (DT)(LOAD););                                            \
    }
#define CONV_FROM(SN, ST, LOAD, SDT) CONV_TYPES_B(CONV_ONE, SN, ST, LOAD, SDT)
CONV_TYPES_A(CONV_FROM)

#define CONV_ENTRY(SN, DN, DT, DDT) [DDT] = conv_##SN##_##DN,
#define CONV_TROW(SN, ST, LOAD, SDT) [SDT] = {CONV_TYPES_B(CONV_ENTRY, SN)},
static const sl__ew_conv_fn conv_table[SL_DTYPE_COUNT][SL_DTYPE_COUNT] = {CONV_TYPES_A(CONV_TROW)};

static void conv_f16_f32(const void *restrict ps, void *restrict pd, int64_t n)
{
    const uint16_t *restrict s = ps;
    float *restrict d = pd;
    for (int64_t k = 0; k < n; k++)
        d[k] = sl__half_to_float(s[k]);
}

static void conv_f16_f64(const void *restrict ps, void *restrict pd, int64_t n)
{
    const uint16_t *restrict s = ps;
    double *restrict d = pd;
    for (int64_t k = 0; k < n; k++)
        d[k] = sl__half_to_float(s[k]);
}

static void conv_f32_f16(const void *restrict ps, void *restrict pd, int64_t n)
{
    const float *restrict s = ps;
    uint16_t *restrict d = pd;
    for (int64_t k = 0; k < n; k++)
        d[k] = sl__half_from_float(s[k]);
}

sl__ew_conv_fn sl__ew_conv(sl_dtype from, sl_dtype to)
{
    if (!valid(from) || !valid(to))
        return NULL;
    if (from == SL_DTYPE_FLOAT16)
        return to == SL_DTYPE_FLOAT32 ? conv_f16_f32 : to == SL_DTYPE_FLOAT64 ? conv_f16_f64 : NULL;
    if (to == SL_DTYPE_FLOAT16)
        return from == SL_DTYPE_FLOAT32 ? conv_f32_f16 : NULL;
    if (from == to && from != SL_DTYPE_BOOL)
        return NULL;
    return conv_table[from][to];
}

void sl__ew_round_f16(float *v, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        v[k] = sl__half_to_float(sl__half_from_float(v[k]));
}
