/* src/ops/reductions/reduce.cu: the kernels of the reductions' GPU run (reduce.h; the host part,
 * sl__red_run_gpu, is in reduce.c next to the CPU run whose rules it shares).
 *
 * Exports sl__red_gpu_launch. Two launches on the node's stream, none waiting for the host:
 *   partials   one thread per (chunk c, output p) of a sample, p fastest: the reduced elements
 *              r = c, c + C, ... of output p folded in order into one accumulator;
 *   finish     one thread per output p: its C partials folded in order c = 0..C-1, then the
 *              CPU's finish (/ div, sqrt for rms and std_dev) and its conversion to the output.
 * Accumulators are the CPU's (reduce.c): int64 / uint64 for min, max and integer sums (wrapping:
 * unsigned arithmetic), double for the rest; elements are read with tensor.cuh's sl__gload, the
 * conversions convert.c applies, and results are written with sl__gconvert (DALI's ConvertSat)
 * or, for integer sums, truncated as the CPU's store_wrapped.
 * Exactness: min, max and integer sums are exact (associative), and so is every sum of integer
 * inputs in double below 2^53 (means of images: bit for bit the CPU's). Float inputs summed in
 * double in another order than the CPU's row walk (C > 1) can differ in the last bits of the
 * double, which rounds to the same float32 but for values on a rounding boundary (an ulp). With
 * C = 1 (few reduced elements per output) the order is the CPU's and results are identical. A
 * NaN anywhere in an output's elements makes min / max NaN on both; min / max of +0 and -0 may
 * keep the other zero than the CPU (equal values, first one seen wins).
 * Invariant: partials live in the node's device scratch, written by the first launch and read
 * by the second (stream order); jobs come uploaded.
 */
#include <math.h>

#include "ops/reductions/reduce.h"
#include "ops/tensor/tensor.cuh"

/* Input element offset of (output p, reduced element r) of job j. */
static SL_HD int64_t red_offset(const sl__red_gjob &j, int64_t p, int64_t r)
{
    int64_t e = 0;
    for (int d = j.nk - 1; d > 0; d--)
        e += sl__gdivmod(p, j.kext[d], &p) * j.kstride[d];
    if (j.nk > 0)
        e += p * j.kstride[0];
    for (int d = j.nr - 1; d > 0; d--)
        e += sl__gdivmod(r, j.rext[d], &r) * j.rstride[d];
    if (j.nr > 0)
        e += r * j.rstride[0];
    return e;
}

static SL_HD bool red_isnan(int64_t)
{
    return false;
}
static SL_HD bool red_isnan(uint64_t)
{
    return false;
}
static SL_HD bool red_isnan(double x)
{
    return x != x;
}

/* The CPU's fold of one value x into accumulator a (min / max: NaN sticks). */
template <class A> static SL_HD void red_fold_minmax(A &a, A x, bool mx)
{
    if (mx ? (x > a || red_isnan(x)) : (x < a || red_isnan(x)))
        if (!red_isnan(a))
            a = x;
}

template <class A> static SL_HD A red_init(int kind);
template <> SL_HD int64_t red_init<int64_t>(int kind)
{
    return kind == SL__RED_MAX ? INT64_MIN : kind == SL__RED_MIN ? INT64_MAX : 0;
}
template <> SL_HD uint64_t red_init<uint64_t>(int kind)
{
    return kind == SL__RED_MIN ? UINT64_MAX : 0;
}
template <> SL_HD double red_init<double>(int kind)
{
    return kind == SL__RED_MAX ? -INFINITY : kind == SL__RED_MIN ? INFINITY : 0.0;
}

/* Adds x into a: integers wrap (in uint64), doubles add. */
static SL_HD void red_add(int64_t &a, int64_t x)
{
    a = (int64_t)((uint64_t)a + (uint64_t)x);
}
static SL_HD void red_add(uint64_t &a, uint64_t x)
{
    a += x;
}
static SL_HD void red_add(double &a, double x)
{
    a += x;
}

template <class A> struct red_partial_k {
    const sl__red_gjob *jobs; /* device, one per sample */
    A *part;                  /* device: the partials of all samples */
    int kind;
    sl_dtype in_type, mean_type;

    SL_HD int64_t count(int s) const
    {
        return jobs[s].P * jobs[s].C;
    }
    SL_HD void operator()(int s, int64_t w) const
    {
        const sl__red_gjob &j = jobs[s];
        int64_t c;
        const int64_t p = sl__gdivmod(w, j.P, &c);
        A a = red_init<A>(kind);
        if (kind == SL__RED_MIN || kind == SL__RED_MAX) {
            for (int64_t r = c; r < j.N; r += j.C)
                red_fold_minmax(a, sl__gload<A>(j.in, red_offset(j, p, r), in_type),
                                kind == SL__RED_MAX);
        } else if (kind == SL__RED_SUM || kind == SL__RED_MEAN) {
            for (int64_t r = c; r < j.N; r += j.C)
                red_add(a, sl__gload<A>(j.in, red_offset(j, p, r), in_type));
        } else if (kind == SL__RED_MEAN_SQUARE || kind == SL__RED_RMS) {
            for (int64_t r = c; r < j.N; r += j.C) {
                A x = sl__gload<A>(j.in, red_offset(j, p, r), in_type);
                red_add(a, x * x);
            }
        } else { /* std_dev, variance: accumulators are double (reduce.c) */
            const A mu = sl__gload<A>(j.mean, p * j.mean_step, mean_type);
            for (int64_t r = c; r < j.N; r += j.C) {
                A d = sl__gload<A>(j.in, red_offset(j, p, r), in_type) - mu;
                red_add(a, d * d);
            }
        }
        part[j.part + c * j.P + p] = a;
    }
};

/* Result v of output element p in dtype t: ConvertSat (sl__gconvert), or, for an integer sum
 * (wrap), the low bits as the CPU's store_wrapped. */
template <class A> static SL_HD void red_store(void *out, int64_t p, sl_dtype t, A v, bool wrap)
{
    if (wrap) {
        const uint64_t u = (uint64_t)v;
        switch (t) {
        case SL_DTYPE_UINT8: ((uint8_t *)out)[p] = (uint8_t)u; return;
        case SL_DTYPE_UINT16: ((uint16_t *)out)[p] = (uint16_t)u; return;
        case SL_DTYPE_UINT32: ((uint32_t *)out)[p] = (uint32_t)u; return;
        case SL_DTYPE_INT8: ((int8_t *)out)[p] = (int8_t)(uint8_t)u; return;
        case SL_DTYPE_INT16: ((int16_t *)out)[p] = (int16_t)(uint16_t)u; return;
        case SL_DTYPE_INT32: ((int32_t *)out)[p] = (int32_t)(uint32_t)u; return;
        default: ((uint64_t *)out)[p] = u; return; /* uint64, int64: the same bits */
        }
    }
    SL__GTYPE_SWITCH(t, O, ((O *)out)[p] = sl__gconvert<O>(v); return );
}

template <class A> struct red_finish_k {
    const sl__red_gjob *jobs;
    const A *part;
    int kind;
    sl_dtype out_type;

    SL_HD int64_t count(int s) const
    {
        return jobs[s].P;
    }
    SL_HD void operator()(int s, int64_t p) const
    {
        const sl__red_gjob &j = jobs[s];
        const bool minmax = kind == SL__RED_MIN || kind == SL__RED_MAX;
        A a = part[j.part + p];
        for (int64_t c = 1; c < j.C; c++) {
            const A x = part[j.part + c * j.P + p];
            if (minmax)
                red_fold_minmax(a, x, kind == SL__RED_MAX);
            else
                red_add(a, x);
        }
        red_result(j, p, a);
    }
    /* integer accumulators: min, max and integer sums, stored as they are */
    template <class T> SL_HD void red_result(const sl__red_gjob &j, int64_t p, T a) const
    {
        red_store(j.out, p, out_type, a, kind == SL__RED_SUM);
    }
    SL_HD void red_result(const sl__red_gjob &j, int64_t p, double a) const
    {
        if (kind != SL__RED_MIN && kind != SL__RED_MAX && kind != SL__RED_SUM) {
            a = a / j.div; /* 0 / 0: NaN, x / 0: inf, as the CPU */
            if (kind == SL__RED_RMS || kind == SL__RED_STD_DEV)
                a = sqrt(a);
        }
        red_store(j.out, p, out_type, a, false);
    }
};

template <class A>
static sl_status red_launch(sl_ctx *ctx, const sl__red_gjob *jobs, const sl__red_gjob *dj, int n,
                            int kind, sl_dtype in, sl_dtype out, sl_dtype mean, int64_t nparts)
{
    int64_t max_parts = 0, max_p = 0;
    for (int i = 0; i < n; i++) {
        max_parts = jobs[i].P * jobs[i].C > max_parts ? jobs[i].P * jobs[i].C : max_parts;
        max_p = jobs[i].P > max_p ? jobs[i].P : max_p;
    }
    if (max_p == 0)
        return SL_OK;
    A *part = (A *)sl_ctx_gpu_scratch(ctx, 0, sizeof(A) * (size_t)nparts);
    if (!part)
        return SL_ENOMEM; /* recorded */
    red_partial_k<A> k1 = {dj, part, kind, in, mean};
    sl_status st = sl_gpu_each(ctx, n, max_parts, k1, "reduction (partials)");
    if (st != SL_OK)
        return st;
    red_finish_k<A> k2 = {dj, part, kind, out};
    return sl_gpu_each(ctx, n, max_p, k2, "reduction (finish)");
}

extern "C" sl_status sl__red_gpu_launch(sl_ctx *ctx, const sl__red_gjob *jobs, int n, int kind,
                                        int acc, sl_dtype in, sl_dtype out, sl_dtype mean,
                                        int64_t nparts)
{
    if (n <= 0 || nparts == 0)
        return SL_OK;
    const sl__red_gjob *dj = sl_gpu_params(ctx, 0, jobs, n);
    if (!dj)
        return SL_ENOMEM; /* recorded by the upload */
    switch (acc) {
    case SL__RED_ACC_I64: return red_launch<int64_t>(ctx, jobs, dj, n, kind, in, out, mean, nparts);
    case SL__RED_ACC_U64:
        return red_launch<uint64_t>(ctx, jobs, dj, n, kind, in, out, mean, nparts);
    default: return red_launch<double>(ctx, jobs, dj, n, kind, in, out, mean, nparts);
    }
}
