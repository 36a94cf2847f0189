/* ops/detection/box_encoder_gpu.h: box_encoder's GPU run (internal; C and CUDA C++; only in
 * builds with CUDA, SLUICE_HAVE_CUDA). Kernels in box_encoder.cu.
 *
 * Exports sl__gpu_box_encode. box_encoder.c's run_gpu plans one job per sample (device pointers
 * and the box count); this uploads the jobs and the anchors and runs two launches for the
 * batch: one thread per box finds the box's best anchor (the last of equal IoUs), then one
 * thread per anchor finds its best box among the IoUs, the boxes' own best anchors counting 2,
 * and writes the anchor's encoded box and label — box_encoder.c's algorithm, in box_match.h's
 * arithmetic.
 */
#ifndef SLUICE_OPS_DETECTION_BOX_ENCODER_GPU_H
#define SLUICE_OPS_DETECTION_BOX_ENCODER_GPU_H

#include <stdint.h>

#include "ops/detection/box_match.h"
#include "sluice/op.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl__gboxenc {
    const float *boxes;    /* device: nb x [l, t, r, b] */
    const int32_t *labels; /* device: nb */
    float *out_boxes;      /* device: na x 4 */
    int32_t *out_labels;   /* device: na */
    int64_t nb;
    int64_t best; /* index of its boxes' first best-anchor slot in the scratch array */
} sl__gboxenc;

/* Runs n samples against na anchors (host, na x 4 floats) with parameters e. */
sl_status sl__gpu_box_encode(sl_ctx *ctx, const sl__gboxenc *s, int n, const float *anchors, int na,
                             const sl__box_enc *e);

#ifdef __cplusplus
}
#endif
#endif
