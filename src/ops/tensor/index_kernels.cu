/* ops/tensor/index_kernels.cu: the kernels of one_hot's and lookup_table's GPU runs
 * (index_gpu.h).
 *
 * Exports sl__gpu_one_hot, sl__gpu_lookup and sl__gpu_blocks (host code over copy_kernels.cu's
 * gather). One thread per output element, consecutive
 * threads writing consecutive elements; element types are read with tensor.cuh's sl__gload (the
 * conversions convert.c applies on the CPU) and written with sl__gconvert (ConvertSat), so the
 * outputs are the CPU operators' bit for bit.
 * Invariant: the tables are uploaded per iteration (upload buffers 1 and 2), the jobs in buffer
 * 0; nothing is read outside them and the samples.
 */
#include <math.h>

#include "ops/tensor/index_gpu.h"
#include "ops/tensor/tensor.cuh"

/* ---- one_hot ---------------------------------------------------------------------------- */

template <class O> struct one_hot_k {
    const sl__gonehot *s; /* device, one per sample */
    int64_t nc;
    sl_dtype t;

    SL_HD int64_t count(int i) const
    {
        return s[i].count;
    }
    SL_HD void operator()(int i, int64_t e) const
    {
        const sl__gonehot &j = s[i];
        int64_t oc, o;
        const int64_t r = sl__gdivmod(e, j.inner, &oc);
        const int64_t c = sl__gdivmod(oc, nc, &o);
        const double id = trunc(sl__gload<double>(j.in, o * j.inner + r, t));
        /* an id outside [0, nc) (NaN included) matches no class */
        const uint64_t v = id >= 0 && id < (double)nc && (int64_t)id == c ? j.on : j.off;
        O x;
        memcpy(&x, &v, sizeof x); /* the low bytes: the value in the output type */
        ((O *)j.out)[e] = x;
    }
};

extern "C" sl_status sl__gpu_one_hot(sl_ctx *ctx, const sl__gonehot *s, int n, int64_t nc,
                                     sl_dtype in_type, sl_dtype out_type)
{
    int64_t max_count = 0;
    for (int i = 0; i < n; i++)
        max_count = s[i].count > max_count ? s[i].count : max_count;
    if (n <= 0 || max_count == 0)
        return SL_OK;
    const sl__gonehot *ds = sl_gpu_params(ctx, 0, s, n);
    if (!ds)
        return SL_ENOMEM; /* recorded by the upload */
    switch (sl_dtype_size(out_type)) {
    case 1: return sl_gpu_each(ctx, n, max_count, one_hot_k<uint8_t>{ds, nc, in_type}, "one_hot");
    case 2: return sl_gpu_each(ctx, n, max_count, one_hot_k<uint16_t>{ds, nc, in_type}, "one_hot");
    case 4: return sl_gpu_each(ctx, n, max_count, one_hot_k<uint32_t>{ds, nc, in_type}, "one_hot");
    default: return sl_gpu_each(ctx, n, max_count, one_hot_k<uint64_t>{ds, nc, in_type}, "one_hot");
    }
}

/* ---- lookup_table ----------------------------------------------------------------------- */

template <class O> struct lookup_k {
    const sl__glut *s; /* device, one per sample */
    const int64_t *keys;
    const double *values;
    int nkeys;
    double def;
    sl_dtype t;

    SL_HD int64_t count(int i) const
    {
        return s[i].count;
    }
    SL_HD void operator()(int i, int64_t e) const
    {
        const sl__glut &j = s[i];
        double v = def;
        int64_t key;
        bool none = false;
        if (t == SL_DTYPE_UINT64) { /* a uint64 past INT64_MAX is no key */
            const uint64_t u = ((const uint64_t *)j.in)[e];
            none = u > (uint64_t)INT64_MAX;
            key = (int64_t)u;
        } else {
            key = sl__gload<int64_t>(j.in, e, t);
        }
        int a = 0, b = none ? -1 : nkeys - 1;
        while (a <= b) {
            const int m = a + (b - a) / 2;
            if (keys[m] == key) {
                v = values[m];
                break;
            }
            if (keys[m] < key)
                a = m + 1;
            else
                b = m - 1;
        }
        ((O *)j.out)[e] = sl__gconvert<O>(v);
    }
};

extern "C" sl_status sl__gpu_lookup(sl_ctx *ctx, const sl__glut *s, int n, const int64_t *keys,
                                    const double *values, int nkeys, double def, sl_dtype in_type,
                                    sl_dtype out_type)
{
    int64_t max_count = 0;
    for (int i = 0; i < n; i++)
        max_count = s[i].count > max_count ? s[i].count : max_count;
    if (n <= 0 || max_count == 0)
        return SL_OK;
    const sl__glut *ds = sl_gpu_params(ctx, 0, s, n);
    const int64_t *dk = ds ? sl_gpu_params(ctx, 1, keys, nkeys) : NULL;
    const double *dv = dk ? sl_gpu_params(ctx, 2, values, nkeys) : NULL;
    if (!dv)
        return SL_ENOMEM; /* recorded by the upload */
    SL__GTYPE_SWITCH(out_type, O,
                     return sl_gpu_each(ctx, n, max_count,
                                        lookup_k<O>{ds, dk, dv, nkeys, def, in_type},
                                        "lookup_table"));
    return sl_fail(ctx, SL_EINTERNAL, "lookup_table: no GPU conversion to dtype %d", (int)out_type);
}

/* ---- block copies ----------------------------------------------------------------------- */

extern "C" sl_status sl__gpu_blocks(sl_ctx *ctx, const sl__gblock *b, int n, size_t esize)
{
    if (n <= 0)
        return SL_OK;
    /* host scratch buffer 3: callers plan their blocks in buffer 0 */
    sl__ggather *g = (sl__ggather *)sl_ctx_scratch_n(ctx, 3, sizeof(sl__ggather) * (size_t)n);
    if (!g)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d copies' parameters", n);
    for (int k = 0; k < n; k++) {
        const int64_t shape = b[k].count, stride = 1;
        sl__ggather_plan(&g[k], b[k].src, b[k].dst, 1, &shape, &stride);
    }
    return sl__gpu_gather(ctx, g, n, esize);
}
