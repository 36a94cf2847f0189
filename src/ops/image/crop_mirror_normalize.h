/* ops/image/crop_mirror_normalize.h: the GPU run of crop_mirror_normalize (internal; C and CUDA
 * C++; only in builds with CUDA).
 *
 * Exports (crop_mirror_normalize.cu): sl__cmn_gsample, sl__cmn_gpu. The operator's run_gpu
 * (crop_mirror_normalize.c) fills one sl__cmn_gsample per sample on the host from the window of
 * setup_sample and the arguments, and the per-channel coefficients it computes for the CPU
 * path; sl__cmn_gpu uploads them and runs one kernel for the batch.
 */
#ifndef SLUICE_OPS_IMAGE_CROP_MIRROR_NORMALIZE_H
#define SLUICE_OPS_IMAGE_CROP_MIRROR_NORMALIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One image. Output pixel (y, x) < (oh, ow) is input pixel (y0 + y, x0 + x), or
 * (y0 + y, x0 + ow - 1 - x) when mirrored; channel c < C of a pixel inside the image is
 * (in - mean[c]) * mul[c] + shift converted to the output type, every other value fill[c]
 * converted (channels C..OC-1, and all of a pixel outside). */
typedef struct sl__cmn_gsample {
    const void *in;         /* device: H x W x C, uint8 or float32 */
    void *out;              /* device: OC x oh x ow (CHW) or oh x ow x OC (HWC) */
    int64_t H, W, C, OC;    /* input extents, output channels (>= C) */
    int64_t y0, x0, oh, ow; /* window anchor (any sign) and output extents, in pixels */
    int64_t coef;           /* index of mean[C], mul[C], fill[OC] in the coefficient array */
    float shift;
    int32_t mirror; /* 0 or 1 */
} sl__cmn_gsample;

/* Runs n samples (host array s); coef: ncoef floats (host), uploaded with them. chw: output
 * layout CHW (else HWC). Returns SL_OK, or the error recorded with sl_fail. */
sl_status sl__cmn_gpu(sl_ctx *ctx, const sl__cmn_gsample *s, int n, const float *coef, size_t ncoef,
                      sl_dtype in_type, sl_dtype out_type, bool chw);

#ifdef __cplusplus
}
#endif
#endif
