/* ops/tensor/tensor_gpu.h: the GPU runs of the tensor family's copy and conversion kernels
 * (internal; C and CUDA C++; only in builds with CUDA, SLUICE_HAVE_CUDA).
 *
 * Exports:
 *   copy_kernels.cu  sl__gwin, sl__gwin_plan, sl__gpu_window: N-d window copies padded with fill
 *                    values and converted (crop, pad) — the GPU twin of sl__window_copy;
 *                    sl__ggather, sl__gpu_gather: N-d strided gathers (flip, transpose) — the
 *                    twin of sl__gather, whose dimension merge plans them (sl__ggather_plan,
 *                    copy_kernels.c).
 *   cast.cu          sl__gpu_convert: n elements converted with DALI's ConvertSat (cast).
 *   copy.cu          sl__copy_run_gpu: a run_gpu that copies input 0's batch into output 0
 *                    unchanged (copy, and the operators that change only shapes, types or
 *                    layouts: expand_dims, squeeze, reinterpret, per_frame).
 * An operator's run_gpu stays in its .c, next to its arguments: it computes each sample's job
 * on the host from shapes and argument values (never from data), then calls one of these, which
 * uploads the jobs (sl_gpu_params) and launches one kernel for the whole batch on the node's
 * stream. The device code (functors, conversions) is tensor.cuh.
 * Invariant: a job holds only device pointers and extents; the kernels write every output
 * element exactly once and read input elements only inside the input.
 */
#ifndef SLUICE_OPS_TENSOR_GPU_H
#define SLUICE_OPS_TENSOR_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "sluice/batch.h"
#include "sluice/dtype.h"
#include "sluice/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One sample of a window copy: output element o (a multi-index over out) is the input element
 * o + anchor when that lies inside `in`, converted, else fill value fill + o[fa] (fa >= 0) or
 * fill (fa = -1) of the fill array. Adjacent dimensions are merged where the copy allows. */
typedef struct sl__gwin {
    const void *in; /* device: the sample's input */
    void *out;      /* device: its output (dense, C order) */
    int64_t count;  /* output elements */
    int64_t fill;   /* index of the sample's first fill value (output type) in the fill array */
    int32_t n;      /* merged dimensions, 1..SL_MAX_NDIM */
    int32_t fa;     /* merged dimension indexing per-channel fill values, -1: one value */
    int64_t out_shape[SL_MAX_NDIM], anchor[SL_MAX_NDIM];
    int64_t in_shape[SL_MAX_NDIM], in_stride[SL_MAX_NDIM]; /* strides in elements */
} sl__gwin;

/* Plans w for a window of ndim dimensions (anchor may be negative or reach past the input);
 * fill_axis: the axis that indexes per-channel fill values, -1 for one value. Sets every field
 * but in, out and fill. */
void sl__gwin_plan(sl__gwin *w, int ndim, const int64_t *in_shape, const int64_t *anchor,
                   const int64_t *out_shape, int fill_axis);

/* Runs the window copies of n samples (host array w). fill: the fill values of all samples,
 * already of out_type (fill_bytes bytes). Returns SL_OK, or the error recorded with sl_fail
 * (upload or launch failure). */
sl_status sl__gpu_window(sl_ctx *ctx, const sl__gwin *w, int n, sl_dtype in_type, sl_dtype out_type,
                         const void *fill, size_t fill_bytes);

/* One sample of a strided gather: out is dense with `shape` (C order); its element at
 * multi-index k is in[sum k[d] * stride[d]] (strides in elements, any sign). */
typedef struct sl__ggather {
    const void *in; /* device: the input element of multi-index 0 */
    void *out;      /* device */
    int64_t count;  /* elements */
    int32_t n;      /* merged dimensions, 1..SL_MAX_NDIM */
    int64_t shape[SL_MAX_NDIM], stride[SL_MAX_NDIM];
} sl__ggather;

/* Plans g as sl__gather would copy (extent-1 dimensions dropped, contiguous ones merged). */
void sl__ggather_plan(sl__ggather *g, const void *in, void *out, int ndim, const int64_t *shape,
                      const int64_t *stride);

/* Runs the gathers of n samples (host array g) of esize-byte elements (1, 2, 4 or 8). */
sl_status sl__gpu_gather(sl_ctx *ctx, const sl__ggather *g, int n, size_t esize);

/* out[k] = in[k] converted from in_type to out_type for k < n (device pointers), with the
 * semantics of sl__convert_get (same-type: a byte copy). */
sl_status sl__gpu_convert(sl_ctx *ctx, void *out, sl_dtype out_type, const void *in,
                          sl_dtype in_type, int64_t n);

/* run_gpu of an operator whose output 0 is input 0's bytes unchanged: one device-to-device
 * copy of the batch (samples back to back on both sides). */
sl_status sl__copy_run_gpu(sl_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
