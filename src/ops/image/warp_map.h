/* ops/image/warp_map.h: per-pixel inverse-mapped warps of HWC images, the family helper of
 * water, sphere and jitter (DALI's warp operators with a mapping function).
 *
 * Coordinates are affine.h's (DALI's): the centre of output pixel (row i, column j) is
 * (x, y) = (j + 0.5, i + 0.5); the mapping gives the source point (sx, sy), sampled with
 * INTERP_NN (the pixel containing it) or INTERP_LINEAR (bilinear between the 4 pixel centres
 * around it); source pixels outside the image read the fill value. float32 arithmetic; uint8
 * outputs rounded (halves up) and saturated.
 *
 * Exports (warp_map.c): sl__warp_map, sl__warp_map_glue (the shared operator steps: argument
 * reading of interp_type / fill_value / mask, mask 0 copying the input) and the arguments the
 * operators share (SL__WARP_ARG_*); with CUDA, sl__warp_map_gpu_sample and (warp_map.cu)
 * sl__warp_map_run_gpu, the GPU run: the same per-pixel code (warp_map_px.h), so results equal
 * the CPU's.
 * Invariant: never reads outside the source, whatever the mapping returns (NaN included).
 */
#ifndef SLUICE_OPS_IMAGE_WARP_MAP_H
#define SLUICE_OPS_IMAGE_WARP_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/op.h"

#include "ops/image/affine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The source point of the output point (x, y); state may be changed (a random stream). */
typedef void (*sl__map_fn)(void *state, float x, float y, float *sx, float *sy);

/* Warps src into dst (same channels; sizes may differ). fill: c values (the fill value). */
void sl__warp_map(const sl__image *src, const sl__image *dst, sl__map_fn fn, void *state,
                  sl__interp interp, const float *fill);

/* Where an operator keeps the shared arguments. */
typedef struct sl__warp_args {
    int interp_type, fill_value, mask;
} sl__warp_args;

/* init: interp_type must be INTERP_NN or INTERP_LINEAR. */
sl_status sl__warp_init_check(sl_op_init *ini, const sl__warp_args *a);

/* run_sample glue: sample i of input 0 into output 0 (same size) through fn, or a copy when
 * mask is 0. */
sl_status sl__warp_map_sample(sl_ctx *ctx, int i, const sl__warp_args *a, sl__map_fn fn,
                              void *state);

#ifdef SLUICE_HAVE_CUDA
/* The GPU run (warp_map.cu) of a mapped warp. */
enum { SL__WARP_WATER, SL__WARP_SPHERE, SL__WARP_JITTER };

/* One sample of a warp launch. */
typedef struct sl__warp_gpu {
    sl__image src, dst; /* device data */
    bool apply;         /* mask: false copies the sample */
    sl__interp interp;
    float fill;
    float p[6];        /* the mapping's parameters (water: 6, sphere: 3) */
    const float *wave; /* water: device table of dst.h x offsets (by row), then dst.w y offsets
                        * (by column), made on the host (sl__wm_water_dx / _dy) */
    sl_rng r;          /* jitter: the sample's stream */
    uint64_t n;        /* jitter: nDegree */
    int64_t half;      /* jitter: nDegree / 2 */
} sl__warp_gpu;

/* The shared part of a sample's parameters: images, mask, interp_type, fill_value (the checks
 * of sl__warp_map_sample, errors recorded). */
sl_status sl__warp_map_gpu_sample(sl_ctx *ctx, int i, const sl__warp_args *a, sl__warp_gpu *g);

/* Fills the mapping's parameters of sample i (p, or r / n / half); errors recorded. */
typedef sl_status (*sl__warp_gpu_fn)(sl_ctx *ctx, int i, sl__warp_gpu *g);

/* run_gpu of a mapped warp of kind SL__WARP_*: per sample sl__warp_map_gpu_sample and fn on the
 * host (errors name the sample), then one launch, one thread per output pixel. */
sl_status sl__warp_map_run_gpu(sl_ctx *ctx, const sl__warp_args *a, int kind, sl__warp_gpu_fn fn);
#endif

#define SL__WARP_ARG_INTERP                                                                        \
    {                                                                                              \
        .name = "interp_type", .type = SL_ARG_STRING, .def = "\"INTERP_NN\"",                      \
        .doc = "Interpolation: INTERP_NN or INTERP_LINEAR.",                                       \
        .choices = "INTERP_NN|INTERP_LINEAR|INTERP_CUBIC|INTERP_LANCZOS3|INTERP_TRIANGULAR|"       \
                   "INTERP_GAUSSIAN"                                                               \
    }
#define SL__WARP_ARG_FILL                                                                          \
    {                                                                                              \
        .name = "fill_value", .type = SL_ARG_FLOAT, .def = "0.0",                                  \
        .doc = "Value of output pixels whose source lies outside the image."                       \
    }
#define SL__WARP_ARG_MASK                                                                          \
    {                                                                                              \
        .name = "mask", .type = SL_ARG_INT, .def = "1",                                            \
        .doc = "1: apply the augmentation to the sample, 0: copy it unchanged.",                   \
        .flags = SL_ARG_TENSOR | SL_ARG_RANGE, .min = 0, .max = 1                                  \
    }

#ifdef __cplusplus
}
#endif
#endif
