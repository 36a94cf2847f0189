/* ops/image/window.h: the crop window of DALI's crop-family operators (crop,
 * crop_mirror_normalize), shared so both place windows identically.
 *
 * Exports (window.c): sl__crop_init_check, sl__crop_window_get, sl__crop_window_roi; the
 * argument definitions the operators share (SL__ARG_CROP ... SL__ARG_ROUNDING), so names,
 * defaults and docs agree, and the indices of the five that open their tables (SL__A_CROP ...,
 * SL__CROP_ARG_DEFS).
 *
 * Window along one axis of extent n: crop extent c = the argument truncated toward zero (below
 * 1, NaN or unset: the whole extent), anchor = pos * (n - c) computed in float32 and rounded per
 * `rounding` ("round": nearest, halves away from zero; "truncate": toward zero), as DALI. Then
 * `out_of_bounds_policy`: "error" rejects a window reaching outside the image, "pad" keeps it,
 * "trim_to_shape" intersects it with the image.
 * Invariant: a pure function of the sample's arguments and the image extents.
 */
#ifndef SLUICE_OPS_IMAGE_WINDOW_H
#define SLUICE_OPS_IMAGE_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/op.h"

#include "ops/image/hwc.h" /* SL__MAX_EXTENT */
#include "ops/tensor/tensor.h"

/* The crop arguments open the table of every crop operator, in this order (SL__CROP_ARG_DEFS);
 * the op's own arguments follow from SL__CROP_NUM_ARGS on. */
enum {
    SL__A_CROP,
    SL__A_CROP_H,
    SL__A_CROP_W,
    SL__A_CROP_POS_X,
    SL__A_CROP_POS_Y,
    SL__CROP_NUM_ARGS
};

/* Where an operator's table keeps the other two window arguments (SL__ARG_ROUNDING and
 * SL__ARG_OOB_POLICY; they come last in the docs). policy -1: an operator without
 * out_of_bounds_policy (the decoders), always "error". */
typedef struct sl__crop_args {
    int rounding, policy;
    int base; /* index of `crop` in the table (the five follow in order); 0: they open it */
} sl__crop_args;

/* A window on an H x W image, in input pixels. */
typedef struct sl__crop_window {
    int64_t y0, x0; /* anchor; negative or past the edge only with policy "pad" */
    int64_t h, w;   /* extents of the output */
} sl__crop_window;

/* init: crop=(H, W) and crop_h / crop_w are exclusive. Returns SL_OK or fails the init. */
sl_status sl__crop_init_check(sl_op_init *ini);
/* The same for a table whose five crop arguments start at index `base` (the decoders). */
sl_status sl__crop_init_check_at(sl_op_init *ini, int base);

/* Sample i's window on an H x W image after the policy. Returns SL_OK, or fails the sample
 * (sl_fail, DALI's message with the untrimmed window) when the window reaches outside the image
 * under policy "error". */
sl_status sl__crop_window_get(sl_ctx *ctx, const sl__crop_args *a, int i, int64_t H, int64_t W,
                              sl__crop_window *win);

/* roi_sample of operators that keep sample i's window (sl__crop_window at iteration data i)
 * of an HWC (or CHW, chw true) image: they read only the window's rows and columns of it. */
sl_status sl__crop_window_roi(sl_ctx *ctx, int i, bool chw);

/* ---- shared argument definitions --------------------------------------------------------- */

#define SL__ARG_CROP                                                                               \
    {                                                                                              \
        .name = "crop", .type = SL_ARG_FLOATS,                                                     \
        .doc = "Crop window (H, W) in pixels; fractions are truncated. Exclusive with "            \
               "crop_h / crop_w. Unset: no crop.",                                                 \
        .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR | SL_ARG_RANGE, .min_len = 2, .max_len = 2,       \
        .min = 0.0, .max = SL__MAX_EXTENT                                                          \
    }
#define SL__ARG_CROP_H                                                                             \
    {                                                                                              \
        .name = "crop_h", .type = SL_ARG_FLOAT, .def = "0.0",                                      \
        .doc = "Crop window height in pixels (truncated); 0: the whole height.",                   \
        .flags = SL_ARG_TENSOR | SL_ARG_RANGE, .min = 0.0, .max = SL__MAX_EXTENT                   \
    }
#define SL__ARG_CROP_W                                                                             \
    {                                                                                              \
        .name = "crop_w", .type = SL_ARG_FLOAT, .def = "0.0",                                      \
        .doc = "Crop window width in pixels (truncated); 0: the whole width.",                     \
        .flags = SL_ARG_TENSOR | SL_ARG_RANGE, .min = 0.0, .max = SL__MAX_EXTENT                   \
    }
#define SL__ARG_CROP_POS_X                                                                         \
    {                                                                                              \
        .name = "crop_pos_x", .type = SL_ARG_FLOAT, .def = "0.5",                                  \
        .doc = "Normalised horizontal position of the window: anchor_x = crop_pos_x * (W - "       \
               "crop_w), rounded per `rounding`. 0 = left, 1 = right-aligned.",                    \
        .flags = SL_ARG_TENSOR | SL_ARG_RANGE, .min = 0.0, .max = 1.0                              \
    }
#define SL__ARG_CROP_POS_Y                                                                         \
    {                                                                                              \
        .name = "crop_pos_y", .type = SL_ARG_FLOAT, .def = "0.5",                                  \
        .doc = "Normalised vertical position of the window: anchor_y = crop_pos_y * (H - "         \
               "crop_h), rounded per `rounding`. 0 = top, 1 = bottom-aligned.",                    \
        .flags = SL_ARG_TENSOR | SL_ARG_RANGE, .min = 0.0, .max = 1.0                              \
    }
/* The table entries of the five arguments that open it (see SL__A_CROP). */
#define SL__CROP_ARG_DEFS                                                                          \
    [SL__A_CROP] = SL__ARG_CROP, [SL__A_CROP_H] = SL__ARG_CROP_H, [SL__A_CROP_W] = SL__ARG_CROP_W, \
    [SL__A_CROP_POS_X] = SL__ARG_CROP_POS_X, [SL__A_CROP_POS_Y] = SL__ARG_CROP_POS_Y
#define SL__ARG_OOB_POLICY                                                                         \
    {                                                                                              \
        .name = "out_of_bounds_policy", .type = SL_ARG_STRING, .def = "\"error\"",                 \
        .doc =                                                                                     \
            "A window reaching outside the image: \"error\" fails the sample, \"pad\" fills the "  \
            "outside with fill_values, \"trim_to_shape\" clips the window to the image.",          \
        .choices = "error|pad|trim_to_shape"                                                       \
    }
#define SL__ARG_ROUNDING                                                                           \
    {                                                                                              \
        .name = "rounding", .type = SL_ARG_STRING, .def = "\"round\"",                             \
        .doc = "Rounding of the window anchor: \"round\" (nearest, halves away from zero) or "     \
               "\"truncate\" (toward zero).",                                                      \
        .choices = "round|truncate"                                                                \
    }

#endif
