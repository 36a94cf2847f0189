/* ops/image/erase.h: what erase.c hands its GPU run (erase.cu), internal.
 *
 * Exports sl__erase_gpu (one sample's planned regions) and sl__erase_run_gpu.
 * Invariant: the regions are erase.c's plan(), computed on the host; the GPU only applies them.
 */
#ifndef SLUICE_OPS_IMAGE_ERASE_H
#define SLUICE_OPS_IMAGE_ERASE_H

#include <stddef.h>
#include <stdint.h>

#include "sluice/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One sample of an erase launch. */
typedef struct sl__erase_gpu {
    const void *in; /* device */
    void *out;      /* device */
    int64_t numel;
    int naxes, nbox, nfill;
    int64_t stride[SL_MAX_NDIM], extent[SL_MAX_NDIM]; /* of the erased axes, in their order */
    int64_t cstride, cextent;                         /* of the C axis (when nfill > 1) */
    int64_t box_off;  /* first value in boxes: nbox regions of naxes (start, end) pairs */
    int64_t fill_off; /* first fill value in fills */
} sl__erase_gpu;

/* Uploads the samples, the regions (nboxv (start, end) pairs) and the fill values (nfillv of
 * the input type), then one launch: every element in a region gets its fill value, every other
 * one the input's. */
sl_status sl__erase_run_gpu(sl_ctx *ctx, const sl__erase_gpu *h, int n, const int64_t *boxes,
                            int64_t nboxv, const void *fills, size_t nfillv);

#ifdef __cplusplus
}
#endif
#endif
