/* ops/image/convolution.h: separable convolution of N-d samples along their spatial axes, the
 * family helper of gaussian_blur and laplacian.
 *
 * Exports (convolution.c): sl__conv_axes (which axes are spatial), sl__conv_run (a separable
 * filter, one 1-D kernel per spatial axis, optionally accumulated into a float32 sum) and
 * sl__conv_store (the float32 sum converted to the output type).
 * Border: reflect-101 (OpenCV's BORDER_REFLECT_101, DALI's convolution border): index -1 reads
 * 1, index n reads n - 2; a 1-pixel axis reads its only pixel. Arithmetic: float32, the input
 * converted once, each axis filtered in turn (the first spatial axis first).
 * GPU (convolution.cu, builds with CUDA): sl__conv_run_gpu runs the same filters over a whole
 * batch — one launch per axis pass for every sample — with the same float32 operations in the
 * same order, so its results are bit-identical to sl__conv_run + sl__conv_store.
 * Invariant: no allocation; the caller passes scratch.
 */
#ifndef SLUICE_OPS_IMAGE_CONVOLUTION_H
#define SLUICE_OPS_IMAGE_CONVOLUTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The spatial axes of a sample of `ndim` dimensions and `layout`: every axis but the channel
 * axis 'C' and the frame axis 'F' (no layout: every axis). Returns their count; out[] gets the
 * axis indices in order. */
int sl__conv_axes(const char *layout, int ndim, int *out);

/* Filters `in` (dense, `shape`, type in_t) with kernels[k] (odd length len[k], centred) along
 * axis axes[k] for k < naxes, and writes (acc false) or adds (acc true) the float32 result
 * into sum (numel floats). scratch: 2 * numel floats. */
void sl__conv_run(const void *in, sl_dtype in_t, int ndim, const int64_t *shape, int naxes,
                  const int *axes, const float *const *kernels, const int *len, float *sum,
                  bool acc, float *scratch);

/* Writes scale * sum (numel floats, scaled in place) to out as type t (DALI's saturating
 * conversion: rounding to nearest for integers). */
void sl__conv_store(float *sum, int64_t numel, float scale, sl_dtype t, void *out);

/* One separable filter of a sample: kernel k[a] (odd length len[a]) along the a-th
 * spatial axis, and the factor of its result when the filters are summed. */
typedef struct sl__conv_filter {
    const float *k[SL_MAX_NDIM];
    int len[SL_MAX_NDIM];
    float scale;
} sl__conv_filter;

#ifdef SLUICE_HAVE_CUDA
/* Fills f[0..nfilters) for sample i (kernels may point into buf, room for nfilters * naxes *
 * max_window floats); SL_OK, or the error recorded with sl_fail. */
typedef sl_status (*sl__conv_filters_fn)(sl_ctx *ctx, int i, float *buf, sl__conv_filter *f);

/* run_gpu of a convolution operator: output 0 (type out_t, the input's shape) of every sample
 * = its input filtered by each of its nfilters filters (fn) along the spatial axes
 * (sl__conv_axes); with sum, sum_p scale_p * filter_p (sl__conv_run with acc, laplacian),
 * else the one filter's result (gaussian_blur). No spatial axis: the input converted (one
 * filter without sum) or zeros (sum). Errors name the sample (sl_ctx_focus_sample). */
sl_status sl__conv_run_gpu(sl_ctx *ctx, sl_dtype out_t, int nfilters, bool sum, int max_window,
                           sl__conv_filters_fn fn);
#endif

#ifdef __cplusplus
}
#endif
#endif
