/* ops/image/paste.h: what paste.c hands its GPU run (paste.cu), internal.
 *
 * Exports sl__paste_gpu (one sample: the image and its placement, paste.c's setup_sample) and
 * sl__paste_run_gpu.
 * Invariant: the placement is computed once on the host; the GPU only copies and fills.
 */
#ifndef SLUICE_OPS_IMAGE_PASTE_H
#define SLUICE_OPS_IMAGE_PASTE_H

#include <stdint.h>

#include "sluice/op.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl__paste_gpu {
    const uint8_t *in; /* device: h x w x c */
    uint8_t *out;      /* device: out_h x out_w x c */
    int64_t h, w, c, out_h, out_w, y, x;
} sl__paste_gpu;

/* Uploads the samples and the fill color (c values, the same for every sample), then one
 * launch, one thread per output element: the image's value inside it, the color outside. */
sl_status sl__paste_run_gpu(sl_ctx *ctx, const sl__paste_gpu *h, int n, const uint8_t *color,
                            int64_t ncolor);

#ifdef __cplusplus
}
#endif
#endif
