/* normalize.cu: the kernels of normalize's GPU run (normalize_gpu.h; host part in
 * normalize.c).
 *
 * Exports sl__norm_gpu_launch. Up to five launches on the node's stream, none waiting for the
 * host:
 *   partial sums   (when the mean or the variance is computed) one thread per (statistic p,
 *                  partial j) of a sample: the sum, in double, of its reduced elements
 *                  r = j, j + T, j + 2T, ... (x, or (x - mean[p])^2 for the variance), so
 *                  consecutive threads read consecutive elements;
 *   combine        one thread per statistic of a set: its samples' partial sums added in
 *                  order (sample, then j), then mean = sum / N, or factor = sl__norm_factor;
 *   normalise      one thread per output element: (x - mean[p]) * factor[p] + shift in
 *                  float32, converted to the output type with tensor.cuh's ConvertSat.
 * The CPU run adds the reduced elements one after another, so the double sums differ in their
 * last bits (different order); after rounding to float32 statistics this rarely shows, and
 * when it does it moves an output by an ulp of float32 (an integer output by at most 1 where
 * the value sits on a rounding boundary). Everything else is the CPU's arithmetic.
 * Invariant: the partial sums and the statistics live in the node's device scratch and are
 * written before they are read (stream order); given statistics come uploaded from the host.
 */
#include "ops/tensor/normalize_gpu.h"
#include "ops/tensor/tensor.cuh"

/* Element offset of reduced element r of statistic p (C order over the reduced runs and over
 * the kept runs respectively). */
SL_HD int64_t norm_elem(const sl__norm_gsample &g, int64_t p, int64_t r)
{
    int64_t e = 0;
    for (int d = g.n - 1; d >= 0; d--) {
        int64_t i =
            g.pstride[d] == 0 ? sl__gdivmod(r, g.shape[d], &r) : sl__gdivmod(p, g.shape[d], &p);
        e += i * g.estride[d];
    }
    return e;
}

struct norm_partial_k {
    const sl__norm_gsample *s; /* device, one per sample */
    const float *stats;        /* device; NULL: sums of x, else of (x - mean)^2 */
    double *part;              /* device: the partial sums */
    sl_dtype t;                /* input element type */

    SL_HD int64_t count(int i) const
    {
        return s[i].P * s[i].T;
    }

    SL_HD void operator()(int i, int64_t w) const
    {
        const sl__norm_gsample &g = s[i];
        const int64_t p = w / g.T;
        double acc = 0;
        if (stats) {
            const float m = stats[g.stats + p];
            for (int64_t r = w - p * g.T; r < g.N; r += g.T) {
                double x = sl__gload<double>(g.in, norm_elem(g, p, r), t) - m;
                acc += x * x;
            }
        } else {
            for (int64_t r = w - p * g.T; r < g.N; r += g.T)
                acc += sl__gload<double>(g.in, norm_elem(g, p, r), t);
        }
        part[g.part + w] = acc;
    }
};

struct norm_combine_k {
    const sl__norm_gset *sets; /* device, one per statistics set */
    const sl__norm_gsample *s; /* device, one per sample */
    const double *part;        /* device: the partial sums */
    float *stats;              /* device: the statistics, written here */
    bool var;                  /* write the factor (else the mean) */

    SL_HD int64_t count(int k) const
    {
        return sets[k].P;
    }

    SL_HD void operator()(int k, int64_t p) const
    {
        const sl__norm_gset &set = sets[k];
        double acc = 0;
        int64_t N = 0;
        for (int i = set.first; i < set.last; i++) {
            const sl__norm_gsample &g = s[i];
            N += g.N;
            for (int64_t j = 0; j < g.T; j++)
                acc += part[g.part + p * g.T + j];
        }
        if (var)
            stats[set.stats + set.P + p] = sl__norm_factor(acc, N, set.ddof, set.eps, set.scale);
        else
            stats[set.stats + p] = N > 0 ? (float)(acc / (double)N) : 0.0f;
    }
};

template <class O> struct norm_apply_k {
    const sl__norm_gsample *s; /* device, one per sample */
    const float *stats;        /* device: mean[P], factor[P] of each set */
    sl_dtype t;                /* input element type */

    SL_HD int64_t count(int i) const
    {
        return s[i].numel;
    }

    SL_HD void operator()(int i, int64_t e) const
    {
        const sl__norm_gsample &g = s[i];
        int64_t rem = e, p = 0;
        for (int d = g.n - 1; d > 0; d--)
            p += sl__gdivmod(rem, g.shape[d], &rem) * g.pstride[d];
        p += rem * g.pstride[0];
        const float *m = stats + g.stats;
        const float v = (sl__gload<float>(g.in, e, t) - m[p]) * m[g.P + p] + g.shift;
        ((O *)g.out)[e] = sl__gout<O>::from(v);
    }
};

/* The partial sums of every sample, then their combination per set. */
static sl_status reduce(sl_ctx *ctx, const sl__norm_gjob *job, const sl__norm_gsample *s, int n,
                        const sl__norm_gset *sets, double *part, float *stats, bool var)
{
    sl_status st =
        sl_gpu_each(ctx, n, job->max_parts, norm_partial_k{s, var ? stats : NULL, part, job->in},
                    "normalize (partial sums)");
    if (st != SL_OK)
        return st;
    return sl_gpu_each(ctx, job->nsets, job->max_P, norm_combine_k{sets, s, part, stats, var},
                       "normalize (statistics)");
}

extern "C" sl_status sl__norm_gpu_launch(sl_ctx *ctx, const sl__norm_gjob *job,
                                         const sl__norm_gsample *h, int n,
                                         const sl__norm_gset *sets, const float *stats)
{
    if (job->max_numel <= 0)
        return SL_OK;
    const size_t sbytes = sizeof(float) * (size_t)job->nstats;
    const sl__norm_gsample *ds = sl_gpu_params(ctx, 0, h, n);
    const sl__norm_gset *dsets = sl_gpu_params(ctx, 1, sets, job->nsets);
    const void *given = sl_ctx_gpu_upload(ctx, 2, stats, sbytes);
    if (!ds || !dsets || !given)
        return SL_ENOMEM; /* the error is recorded */
    float *st = (float *)sl_ctx_gpu_scratch(ctx, 0, sbytes);
    double *part = (double *)sl_ctx_gpu_scratch(ctx, 1, sizeof(double) * (size_t)job->nparts);
    if (!st || !part)
        return SL_ENOMEM;
    sl_status r = sl_gpu_memcpy(ctx, st, given, sbytes);
    if (r == SL_OK && job->mean)
        r = reduce(ctx, job, ds, n, dsets, part, st, false);
    if (r == SL_OK && job->var)
        r = reduce(ctx, job, ds, n, dsets, part, st, true);
    if (r != SL_OK)
        return r;
    bool known = false;
    SL__GTYPE_SWITCH(
        job->out, O, known = true;
        r = sl_gpu_each(ctx, n, job->max_numel, norm_apply_k<O>{ds, st, job->in}, "normalize"));
    if (!known)
        return sl_fail(ctx, SL_EINTERNAL, "no GPU loop for output type %s",
                       sl_dtype_name(job->out));
    return r;
}
