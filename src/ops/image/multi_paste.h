/* ops/image/multi_paste.h: what multi_paste.c hands its GPU run (multi_paste.cu), internal.
 *
 * Exports sl__mp_region (one pasted region, checked and placed on the host by multi_paste.c's
 * plan()), sl__mp_gpu (one output sample) and sl__multi_paste_run_gpu.
 * Invariant: the GPU only applies the planned regions; later regions win, as on the CPU.
 */
#ifndef SLUICE_OPS_IMAGE_MULTI_PASTE_H
#define SLUICE_OPS_IMAGE_MULTI_PASTE_H

#include <stdint.h>

#include "sluice/op.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl__mp_region {
    const void *src;             /* the source sample (device on the GPU) */
    int64_t sw;                  /* its width */
    int64_t ia[2], sh[2], oa[2]; /* source anchor, extent, canvas anchor: (y, x) */
} sl__mp_region;

typedef struct sl__mp_gpu {
    void *out; /* device: h x w x c */
    int64_t h, w, c;
    int64_t first; /* its regions: first .. first + n - 1 of the uploaded regions */
    int n;
} sl__mp_gpu;

/* Uploads the samples and regions, then one launch, one thread per output element: the value
 * of the last region covering it, converted from in_t to out_t, or 0. */
sl_status sl__multi_paste_run_gpu(sl_ctx *ctx, const sl__mp_gpu *h, int n,
                                  const sl__mp_region *regions, int64_t nregions, sl_dtype out_t,
                                  sl_dtype in_t);

#ifdef __cplusplus
}
#endif
#endif
