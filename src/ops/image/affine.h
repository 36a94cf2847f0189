/* ops/image/affine.h: inverse-mapped affine warps of HWC images, the family helper behind
 * `warp_affine` and `rotate`.
 *
 * Coordinates (DALI's convention): pixel (row i, column j) covers the unit square
 * [j, j+1) x [i, i+1), so its centre is (j + 0.5, i + 0.5); the image spans [0, W) x [0, H).
 * A warp maps the centre of each output pixel through a destination -> source matrix
 *     sx = m[0] x + m[1] y + m[2],   sy = m[3] x + m[4] y + m[5],   (x, y) = (j + 0.5, i + 0.5)
 * and samples the source there:
 *   INTERP_NN      the pixel containing (sx, sy): (floor(sx), floor(sy))
 *   INTERP_LINEAR  bilinear between the 4 pixel centres around (sx, sy): with fx = sx - 0.5,
 *                  x0 = floor(fx), qx = fx - x0 (same for y):
 *                  top = v(x0,y0) + (v(x0+1,y0) - v(x0,y0)) qx, bottom likewise on row y0+1,
 *                  out = top + (bottom - top) qy
 * Pixels outside the source read `fill[c]` (constant border) or, with no fill, the nearest edge
 * pixel (coordinates clamped: "replicate"). Arithmetic is float32, as DALI's.
 *
 * OpenCV's warpAffine uses integer pixel-centre coordinates (centre of pixel j is j), so the
 * same warp is cv2.warpAffine(src, M', (W', H'), flags=... | WARP_INVERSE_MAP) with
 * M'[:, :2] = M[:, :2] and M'[:, 2] = M @ (0.5, 0.5, 1) - 0.5 (BORDER_CONSTANT with the fill,
 * or BORDER_REPLICATE). OpenCV quantises source coordinates to 1/32 pixel for INTER_LINEAR;
 * sluice does not, so sharp edges may differ by a few levels.
 *
 * Exports: sl__affine_warp (the kernel), sl__affine_scratch_bytes, sl__affine_invert, and the
 * operator glue shared by the two ops: an op describes itself in a constant sl__affine_args
 * (argument indices, matrix function) that sl__affine_init keeps as the node's state, and
 * sl__affine_run_sample and, with CUDA, sl__affine_run_gpu (affine.cu; its kernel in
 * affine.cuh computes the same pixels) run it; sl__affine_size and sl__affine_prepare are the
 * steps they share. Their setup is hwc.h's sl__hwc_setup.
 * Invariant: the kernel never reads outside the source, whatever the matrix (NaN and huge
 * coordinates included): interior spans are clamped, border pixels go through checked taps.
 */
#ifndef SLUICE_OPS_IMAGE_AFFINE_H
#define SLUICE_OPS_IMAGE_AFFINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/op.h"

#include "ops/image/hwc.h"

#ifdef __cplusplus
extern "C" { /* affine.cu (the GPU path) includes this header */
#endif

typedef enum sl__interp { SL__INTERP_NN, SL__INTERP_LINEAR } sl__interp;

/* An HWC image: h x w pixels of c channels, row-major, uint8 or float32. Borrowed. */
typedef struct sl__image {
    void *data;
    sl_dtype type;
    int64_t h, w, c;
} sl__image;

typedef struct sl__affine {
    float m[6]; /* destination -> source in pixel-centre coordinates (see above) */
    sl__interp interp;
    const float *fill; /* c values used as source values outside the image; NULL: clamp */
} sl__affine;

/* Scratch bytes sl__affine_warp needs for an output `out_w` pixels wide with c channels. */
size_t sl__affine_scratch_bytes(int64_t out_w, int64_t c);

/* Warps src into dst (same channel count, both non-empty). uint8 outputs are rounded (halves
 * up) and saturated; float32 outputs are the interpolated values. scratch: at least
 * sl__affine_scratch_bytes(dst->w, dst->c) bytes, 16-byte aligned. Threads: reentrant. */
void sl__affine_warp(const sl__image *src, const sl__image *dst, const sl__affine *a,
                     void *scratch);

/* Inverse of the affine map m (2x3, row-major). Returns: false when m is singular or the
 * inverse is not finite (out is then unchanged). */
bool sl__affine_invert(const double m[6], double out[6]);

/* ---- operator glue (warp_affine, rotate) ------------------------------------------------- */

/* An op's destination -> source matrix of sample i (host values: arguments and shapes). Returns
 * SL_OK, or fails the sample (sl_fail). */
typedef sl_status (*sl__affine_matrix_fn)(sl_ctx *ctx, int i, double m[6]);

/* What an op tells the family: the indices of the arguments both ops have, and its matrix. */
typedef struct sl__affine_args {
    int fill_value, interp_type, dtype;
    sl__affine_matrix_fn matrix;
} sl__affine_args;

/* init: checks interp_type (NN or LINEAR, as DALI's warps) and dtype (uint8 or float32), and
 * keeps a (a constant of the op's file; nothing to free) as the node's state. */
sl_status sl__affine_init(sl_op_init *ini, void **state, const sl__affine_args *a);

/* setup_sample: when the `size` argument (index size_arg) is set, writes its (H, W), rounded
 * to the nearest integer and at least 1, into hw and returns SL_OK; fails the sample when a
 * value is not positive (or absurdly large). Leaves hw alone when `size` is unset. */
sl_status sl__affine_size(sl_ctx *ctx, int size_arg, int i, int64_t hw[2]);

/* run_sample of both ops: warps sample i of input 0 into output 0 (shape already set) with the
 * state's matrix. Fails the sample where the matrix function does, on a non-finite matrix, a
 * fill_value of the wrong length, or an empty input with a non-empty output and no fill_value. */
sl_status sl__affine_run_sample(sl_ctx *ctx, int i);

/* What sl__affine_run_sample does with a sample: nothing (empty output), fill the output with
 * fill_value (empty input), or warp. */
typedef enum sl__affine_kind { SL__AFFINE_SKIP, SL__AFFINE_FILL, SL__AFFINE_WARP } sl__affine_kind;

typedef struct sl__affine_sample {
    sl__image src, dst; /* sample i of input 0 / output 0 (device pointers on the gpu stage) */
    sl__affine aff;     /* float32 matrix, interpolation, fill (the caller's buffer or NULL) */
    sl__affine_kind kind;
} sl__affine_sample;

/* The checks and per-sample values of sl__affine_run_sample, from shapes and arguments only
 * (never the samples' data), so the GPU path shares them: fails (as sl__affine_run_sample) on a
 * non-finite matrix m, a fill_value of the wrong length, or an empty input without fill_value.
 * tmp and fill: room for the output's channel count of doubles and floats (unused when kind is
 * SKIP). */
sl_status sl__affine_prepare(sl_ctx *ctx, int i, const sl__affine_args *a, const double m[6],
                             double *tmp, float *fill, sl__affine_sample *out);

#ifdef SLUICE_HAVE_CUDA
/* run_gpu of warp_affine and rotate (affine.cu): per sample, the state's matrix and
 * sl__affine_prepare on the host, the parameters uploaded, then one kernel over every output
 * pixel of the batch (affine.cuh) computing what sl__affine_warp computes, bit for bit. */
sl_status sl__affine_run_gpu(sl_ctx *ctx);
#endif

/* Argument definitions shared by warp_affine and rotate (and hwc.h's SL__ARG_HWC_DTYPE_DEF). */
#define SL__ARG_WARP_INTERP_DEF                                                                    \
    {                                                                                              \
        .name = "interp_type", .type = SL_ARG_STRING, .def = "\"INTERP_LINEAR\"",                  \
        .doc = "Interpolation: INTERP_NN or INTERP_LINEAR (the other types are rejected, as in "   \
               "DALI).",                                                                           \
        .choices = "INTERP_NN|INTERP_LINEAR|INTERP_CUBIC|INTERP_LANCZOS3|INTERP_TRIANGULAR|"       \
                   "INTERP_GAUSSIAN"                                                               \
    }

#ifdef __cplusplus
}
#endif
#endif
