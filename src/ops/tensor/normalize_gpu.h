/* ops/tensor/normalize_gpu.h: the GPU run of normalize (internal; C and CUDA C++).
 *
 * Exports sl__norm_factor (the factor of a computed variance, shared by the CPU run and the
 * device so both compute it with the same double operations), and, in builds with CUDA, the
 * job description normalize.c's run_gpu hands to normalize.cu's sl__norm_gpu_launch:
 *   sl__norm_gsample  per sample: pointers, the dimensions merged into runs of reduced / kept
 *                     axes (normalize.c's pwalk), where its partial sums and statistics go
 *   sl__norm_gset     per set of statistics (one per sample, or one for the batch): mean[P]
 *                     then factor[P] at `stats` in the statistics array, which samples feed it
 * Statistics that are given (mean / stddev arguments) are computed on the host, as the CPU run
 * computes them, and uploaded; the others are reduced on the device: partial sums in double,
 * then combined per statistic in a fixed order.
 * Invariant: everything here is a pure function of shapes and arguments (never of data).
 */
#ifndef SLUICE_OPS_TENSOR_NORMALIZE_GPU_H
#define SLUICE_OPS_TENSOR_NORMALIZE_GPU_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "ops/hd.h"
#include "sluice/batch.h"
#include "sluice/op.h"

/* The factor for a variance over N elements (DALI's SumSquare2InvStdDev): scale / sqrt(var +
 * eps) with var = sumsq / (N - ddof); 0 when var + eps is 0, or N <= ddof without epsilon. */
SL__HD float sl__norm_factor(double sumsq, int64_t N, int64_t ddof, double eps, double scale)
{
    double var = N > ddof ? sumsq / (double)(N - ddof) : 0;
    if (N <= ddof && eps == 0)
        return 0;
    return var + eps > 0 ? (float)(scale / sqrt(var + eps)) : 0.0f;
}

#ifdef SLUICE_HAVE_CUDA
#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl__norm_gsample {
    const void *in; /* device: the sample's data */
    void *out;      /* device: its output */
    int64_t numel;  /* elements (0: nothing to do) */
    int32_t n;      /* merged dimensions, outermost first */
    int64_t shape[SL_MAX_NDIM], estride[SL_MAX_NDIM];
    int64_t pstride[SL_MAX_NDIM]; /* statistic index stride; 0 along reduced runs */
    int64_t P, N;                 /* statistics; reduced elements per statistic */
    int64_t T;     /* partial sums per statistic (0: the sample adds nothing to its set) */
    int64_t part;  /* its first partial sum in the partials array (P * T of them) */
    int64_t stats; /* mean[0] of its statistics set in the statistics array */
    float shift;
} sl__norm_gsample;

typedef struct sl__norm_gset {
    int64_t P;           /* statistics */
    int64_t stats;       /* mean[P] at stats, factor[P] at stats + P */
    int32_t first, last; /* samples [first, last) feed it */
    int64_t ddof;
    double eps, scale;
} sl__norm_gset;

typedef struct sl__norm_gjob {
    sl_dtype in, out;
    bool mean, var; /* compute the mean / the factor from the data (else given, uploaded) */
    int nsets;      /* statistics sets */
    int64_t nstats; /* floats in the statistics array */
    int64_t nparts; /* doubles in the partial sums array */
    int64_t max_numel, max_parts, max_P; /* largest numel, P * T and P (grid sizes) */
} sl__norm_gjob;

/* Uploads the n samples, the sets and the statistics array (host; given values in place,
 * computed ones are overwritten) and enqueues the reductions and the normalisation. Returns
 * SL_OK or the error recorded with sl_fail. */
sl_status sl__norm_gpu_launch(sl_ctx *ctx, const sl__norm_gjob *job, const sl__norm_gsample *h,
                              int n, const sl__norm_gset *sets, const float *stats);

#ifdef __cplusplus
}
#endif
#endif
#endif
