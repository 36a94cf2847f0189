/* ops/geometry/points.cu: the kernels of coord_flip's, bb_flip's and coord_transform's GPU runs
 * (points_gpu.h).
 *
 * Exports sl__gpu_coord_flip, sl__gpu_bb_flip, sl__gpu_coord_transform. One thread per output
 * element, consecutive threads writing consecutive elements. Each computes what the CPU
 * operator computes for that element, with the same types and the same order of operations
 * (nvcc --fmad=false: no contraction), so the outputs are the CPU's bit for bit; elements are
 * read and written with tensor.cuh's conversions (convert.c's, ConvertSat).
 * Invariant: jobs are upload buffer 0, coord_transform's matrices buffer 1.
 */
#include "ops/geometry/points_gpu.h"
#include "ops/tensor/tensor.cuh"

template <class J> static int64_t max_count_of(const J *s, int n)
{
    int64_t m = 0;
    for (int i = 0; i < n; i++)
        m = s[i].count > m ? s[i].count : m;
    return m;
}

/* ---- coord_flip --------------------------------------------------------------------------- */

struct cflip_k {
    const sl__gcflip *s;
    SL_HD int64_t count(int i) const
    {
        return s[i].count;
    }
    SL_HD void operator()(int i, int64_t e) const
    {
        const sl__gcflip &j = s[i];
        int64_t p;
        const int k = (int)sl__gdivmod(e, j.d, &p);
        const float v = j.in[e];
        j.out[e] = j.flip[k] ? (float)(j.c2[k] - v) : v;
    }
};

extern "C" sl_status sl__gpu_coord_flip(sl_ctx *ctx, const sl__gcflip *s, int n)
{
    const int64_t m = max_count_of(s, n);
    if (n <= 0 || m == 0)
        return SL_OK;
    const sl__gcflip *ds = sl_gpu_params(ctx, 0, s, n);
    if (!ds)
        return SL_ENOMEM; /* recorded by the upload */
    return sl_gpu_each(ctx, n, m, cflip_k{ds}, "coord_flip");
}

/* ---- bb_flip ------------------------------------------------------------------------------ */

struct bbflip_k {
    const sl__gbbflip *s;
    SL_HD int64_t count(int i) const
    {
        return s[i].count;
    }
    SL_HD void operator()(int i, int64_t e) const
    {
        const sl__gbbflip &j = s[i];
        const int dims = j.c / 2;
        int64_t b;
        const int k = (int)sl__gdivmod(e, j.c, &b), d = k % dims;
        const float *box = j.in + b * j.c;
        const float lo = box[d], hi = box[d + dims]; /* l and r, or x and w */
        float v;
        if (!j.flip[d])
            v = k < dims ? lo : hi;
        else if (j.ltrb)
            v = k < dims ? 1.0f - hi : 1.0f - lo;
        else
            v = k < dims ? 1.0f - (lo + hi) : hi;
        j.out[e] = v;
    }
};

extern "C" sl_status sl__gpu_bb_flip(sl_ctx *ctx, const sl__gbbflip *s, int n)
{
    const int64_t m = max_count_of(s, n);
    if (n <= 0 || m == 0)
        return SL_OK;
    const sl__gbbflip *ds = sl_gpu_params(ctx, 0, s, n);
    if (!ds)
        return SL_ENOMEM;
    return sl_gpu_each(ctx, n, m, bbflip_k{ds}, "bb_flip");
}

/* ---- coord_transform ---------------------------------------------------------------------- */

template <class O> struct ctrans_k {
    const sl__gctrans *s;
    const double *mts;
    sl_dtype t;
    SL_HD int64_t count(int i) const
    {
        return s[i].count;
    }
    SL_HD void operator()(int i, int64_t e) const
    {
        const sl__gctrans &j = s[i];
        int64_t p;
        const int r = (int)sl__gdivmod(e, j.od, &p);
        const double *row = mts + j.mt + (int64_t)r * (j.id + 1);
        double acc = row[j.id];
        for (int c = 0; c < j.id; c++)
            acc += row[c] * sl__gload<double>(j.in, p * j.id + c, t);
        ((O *)j.out)[e] = sl__gconvert<O>(acc);
    }
};

extern "C" sl_status sl__gpu_coord_transform(sl_ctx *ctx, const sl__gctrans *s, int n,
                                             const double *mts, int64_t nmt, sl_dtype in_type,
                                             sl_dtype out_type)
{
    const int64_t m = max_count_of(s, n);
    if (n <= 0 || m == 0)
        return SL_OK;
    const sl__gctrans *ds = sl_gpu_params(ctx, 0, s, n);
    const double *dm = ds ? sl_gpu_params(ctx, 1, mts, (int)nmt) : NULL;
    if (!dm)
        return SL_ENOMEM;
    SL__GTYPE_SWITCH(
        out_type, O,
        return sl_gpu_each(ctx, n, m, ctrans_k<O>{ds, dm, in_type}, "coord_transform"));
    return sl_fail(ctx, SL_EINTERNAL, "coord_transform: no GPU conversion to dtype %d",
                   (int)out_type);
}
