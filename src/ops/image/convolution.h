/* ops/image/convolution.h: separable convolution of N-d samples along their spatial axes, the
 * family helper of gaussian_blur and laplacian.
 *
 * Exports (convolution.c): sl__conv_axes (which axes are spatial), sl__conv_run (a separable
 * filter, one 1-D kernel per spatial axis, optionally accumulated into a float32 sum) and
 * sl__conv_store (the float32 sum converted to the output type).
 * Border: reflect-101 (OpenCV's BORDER_REFLECT_101, DALI's convolution border): index -1 reads
 * 1, index n reads n - 2; a 1-pixel axis reads its only pixel. Arithmetic: float32, the input
 * converted once, each axis filtered in turn (the first spatial axis first).
 * Invariant: no allocation; the caller passes scratch.
 */
#ifndef SLUICE_OPS_IMAGE_CONVOLUTION_H
#define SLUICE_OPS_IMAGE_CONVOLUTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/op.h"

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

#endif
