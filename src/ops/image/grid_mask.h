/* ops/image/grid_mask.h: grid_mask's per-pixel test, shared by its CPU run (grid_mask.c) and its
 * GPU run (grid_mask.cu), internal.
 *
 * Exports sl__gm_params (one sample: its grid, computed on the host), sl__gm_keep (whether pixel
 * (x, y) keeps its values: static inline, __host__ __device__ under nvcc) and, with CUDA,
 * sl__grid_mask_run_gpu.
 * Invariant: float64 arithmetic, the same operations in the same order on both backends (nvcc
 * --fmad=false), so both keep the same pixels.
 */
#ifndef SLUICE_OPS_IMAGE_GRID_MASK_H
#define SLUICE_OPS_IMAGE_GRID_MASK_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "sluice/op.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl__gm_params {
    double ca, sa; /* cos(angle) / tile, sin(angle) / tile */
    double sx, sy; /* shift_x, shift_y */
    double ratio;
} sl__gm_params;

#ifdef __CUDACC__
#define SL__GM_INLINE static __host__ __device__ __forceinline__
#else
#define SL__GM_INLINE static inline
#endif

SL__GM_INLINE bool sl__gm_keep(const sl__gm_params *p, int64_t x, int64_t y)
{
    double u = (double)x - p->sx, v = (double)y - p->sy;
    double fx = u * p->ca - v * p->sa, fy = u * p->sa + v * p->ca;
    return fx - floor(fx) >= p->ratio || fy - floor(fy) >= p->ratio;
}

#ifdef SLUICE_HAVE_CUDA
/* One sample of a GPU launch. */
typedef struct sl__gm_gpu {
    const void *in; /* device */
    void *out;      /* device */
    int64_t h, w, pixel_bytes;
    sl__gm_params p;
} sl__gm_gpu;

/* Uploads the n samples and masks them in one launch, one thread per pixel. */
sl_status sl__grid_mask_run_gpu(sl_ctx *ctx, const sl__gm_gpu *h, int n);
#endif

#ifdef __cplusplus
}
#endif
#endif
