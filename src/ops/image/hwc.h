/* ops/image/hwc.h: what the image families share about their images and element types: the
 * affine warps (warp_affine, rotate), the colour ops (color.h), the resamplers (resize,
 * random_resized_crop) and crop_mirror_normalize, so they check and word it alike.
 *
 * Exports (hwc.c): sl__hwc_dtype_check (init: the optional `dtype` is uint8 or float32),
 * sl__hwc_out_type (`dtype` when set, else the input's type), sl__hwc_check (setup: input 0 is a
 * batch of HWC uint8 or float32 images), sl__hwc_setup (that check, then output 0 declared HWC
 * of sl__hwc_out_type), and SL__ARG_HWC_DTYPE_DEF, the `dtype` argument of the affine and
 * colour ops.
 * Invariant: reads arguments and input metadata only, never sample data.
 */
#ifndef SLUICE_OPS_IMAGE_HWC_H
#define SLUICE_OPS_IMAGE_HWC_H

#include "sluice/op.h"

/* The longest side (pixels) a size argument of an image operator may ask for (crop, resize,
 * random_resized_crop, warp_affine, rotate): a typo such as 434323333 is refused when the
 * pipeline is built, naming the argument. Memory is bounded separately, per sample, by
 * max_sample_bytes. */
#define SL__MAX_EXTENT 1048576.0

#ifdef __cplusplus
extern "C" { /* affine.cu, color.cu */
#endif

/* init: when argument dtype_arg is set it must be uint8 or float32; fails the init otherwise. */
sl_status sl__hwc_dtype_check(sl_op_init *ini, int dtype_arg);

/* The output type: argument dtype_arg when set (dtype_arg >= 0), else input 0's type. */
sl_dtype sl__hwc_out_type(const sl_ctx *ctx, int dtype_arg);

/* setup: input 0 must be 3-D, of layout "HWC" or none, uint8 or float32. Returns SL_OK, or the
 * error recorded with sl_fail. */
sl_status sl__hwc_check(sl_ctx *ctx);

/* setup: sl__hwc_check, then output 0 declared 3-D "HWC" of type sl__hwc_out_type. */
sl_status sl__hwc_setup(sl_ctx *ctx, int dtype_arg);

#ifdef __cplusplus
}
#endif

#define SL__ARG_HWC_DTYPE_DEF                                                                      \
    {                                                                                              \
        .name = "dtype", .type = SL_ARG_DTYPE,                                                     \
        .doc = "Output type, uint8 or float32 (uint8 outputs are rounded and saturated). Unset: "  \
               "the input type.",                                                                  \
        .flags = SL_ARG_OPTIONAL                                                                   \
    }

#endif
