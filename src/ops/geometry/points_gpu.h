/* ops/geometry/points_gpu.h: the GPU runs of the point and box operators coord_flip,
 * coord_transform (geometry) and bb_flip (detection) (internal; C and CUDA C++; only in builds
 * with CUDA, SLUICE_HAVE_CUDA). Kernels in points.cu.
 *
 * Exports sl__gpu_coord_flip, sl__gpu_bb_flip, sl__gpu_coord_transform. As tensor_gpu.h's: the
 * operator's run_gpu (in its .c) computes each sample's job on the host from shapes and
 * argument values, these upload the jobs and launch one kernel for the whole batch.
 * Invariant: one thread per output element, which it writes once; reads stay inside the
 * sample and the uploaded parameters.
 */
#ifndef SLUICE_OPS_GEOMETRY_POINTS_GPU_H
#define SLUICE_OPS_GEOMETRY_POINTS_GPU_H

#include <stdint.h>

#include "sluice/dtype.h"
#include "sluice/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* coord_flip of one sample: count float32 coordinates, d per point; coordinate k of a point
 * becomes (float)(c2[k] - x) where flip[k], else stays. */
typedef struct sl__gcflip {
    const float *in;
    float *out;
    int64_t count;
    int32_t d;
    uint8_t flip[3];
    double c2[3]; /* 2 * center */
} sl__gcflip;
sl_status sl__gpu_coord_flip(sl_ctx *ctx, const sl__gcflip *s, int n);

/* bb_flip of one sample: count float32 values, c (4 or 6) per box, dims = c / 2 axes. */
typedef struct sl__gbbflip {
    const float *in;
    float *out;
    int64_t count;
    int32_t c;
    uint8_t ltrb;
    uint8_t flip[3];
} sl__gbbflip;
sl_status sl__gpu_bb_flip(sl_ctx *ctx, const sl__gbbflip *s, int n);

/* coord_transform of one sample: count = points * od outputs; point p's output r is
 * mt[r * (id + 1) + id] + sum_c mt[r * (id + 1) + c] * x[c] in double (c ascending), converted
 * to the output type. mt: the sample's first value in the matrices array. */
typedef struct sl__gctrans {
    const void *in;
    void *out;
    int64_t count;
    int64_t mt;
    int32_t id, od;
} sl__gctrans;
/* mts: nmt doubles, every sample's [M | T] (host; uploaded here). */
sl_status sl__gpu_coord_transform(sl_ctx *ctx, const sl__gctrans *s, int n, const double *mts,
                                  int64_t nmt, sl_dtype in_type, sl_dtype out_type);

#ifdef __cplusplus
}
#endif
#endif
