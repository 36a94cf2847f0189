/* ops/image/resize.h: the geometry of DALI's resize, shared by resize and the fused
 * resize_crop_mirror / fast_resize_crop_mirror (one rule for the output size, in resize.c).
 *
 * Exports (resize.c): sl__resize_init_check, sl__resize_geom_get, sl__resize_plan_of; the
 * resize arguments (SL__RESIZE_ARG_DEFS), which open the table of each of these operators in
 * this order (indices SL__RZ_*), their own arguments following from SL__RESIZE_NUM_ARGS on.
 * Invariant: the geometry is a pure function of the sample's arguments and input extents.
 */
#ifndef SLUICE_OPS_IMAGE_RESIZE_H
#define SLUICE_OPS_IMAGE_RESIZE_H

#include <stdint.h>

#include "sluice/op.h"

#include "ops/image/resample.h"

enum {
    SL__RZ_RESIZE_X,
    SL__RZ_RESIZE_Y,
    SL__RZ_RESIZE_SHORTER,
    SL__RZ_RESIZE_LONGER,
    SL__RZ_SIZE,
    SL__RZ_MODE,
    SL__RZ_MAX_SIZE,
    SL__RZ_INTERP,
    SL__RZ_MAG,
    SL__RZ_MIN,
    SL__RZ_ANTIALIAS,
    SL__RZ_ROI_START,
    SL__RZ_ROI_END,
    SL__RZ_ROI_RELATIVE,
    SL__RZ_SUBPIXEL,
    SL__RZ_DTYPE,
    SL__RESIZE_NUM_ARGS
};

/* The argument table entries; ANTIALIAS_DEF: the definition of `antialias` (its default
 * differs between operators). */
#define SL__RESIZE_ARG_DEFS(ANTIALIAS_DEF)                                                         \
    [SL__RZ_RESIZE_X] = {.name = "resize_x",                                                       \
                         .type = SL_ARG_FLOAT,                                                     \
                         .def = "0.0",                                                             \
                         .doc = "Output width. 0 (or unset) with resize_y given: keep the aspect " \
                                "ratio. Negative: mirror horizontally. Exclusive with size, "      \
                                "resize_shorter, resize_longer.",                                  \
                         .flags = SL_ARG_TENSOR | SL_ARG_RANGE,                                    \
                         .min = -SL__MAX_EXTENT,                                                   \
                         .max = SL__MAX_EXTENT},                                                   \
    [SL__RZ_RESIZE_Y] = {.name = "resize_y",                                                       \
                         .type = SL_ARG_FLOAT,                                                     \
                         .def = "0.0",                                                             \
                         .doc =                                                                    \
                             "Output height. 0 (or unset) with resize_x given: keep the aspect "   \
                             "ratio. Negative: mirror vertically. Exclusive with size, "           \
                             "resize_shorter, resize_longer.",                                     \
                         .flags = SL_ARG_TENSOR | SL_ARG_RANGE,                                    \
                         .min = -SL__MAX_EXTENT,                                                   \
                         .max = SL__MAX_EXTENT},                                                   \
    [SL__RZ_RESIZE_SHORTER] =                                                                      \
        {.name = "resize_shorter",                                                                 \
         .type = SL_ARG_FLOAT,                                                                     \
         .def = "0.0",                                                                             \
         .doc = "Length of the shorter side; the aspect ratio is kept "                            \
                "(= size [L, L] with mode \"not_smaller\"); max_size bounds the "                  \
                "longer side.",                                                                    \
         .flags = SL_ARG_TENSOR | SL_ARG_RANGE,                                                    \
         .min = 0.0,                                                                               \
         .max = SL__MAX_EXTENT},                                                                   \
    [SL__RZ_RESIZE_LONGER] = {.name = "resize_longer",                                             \
                              .type = SL_ARG_FLOAT,                                                \
                              .def = "0.0",                                                        \
                              .doc =                                                               \
                                  "Length of the longer side; the aspect ratio is kept (= size "   \
                                  "[L, L] with mode \"not_larger\").",                             \
                              .flags = SL_ARG_TENSOR | SL_ARG_RANGE,                               \
                              .min = 0.0,                                                          \
                              .max = SL__MAX_EXTENT},                                              \
    [SL__RZ_SIZE] = {.name = "size",                                                               \
                     .type = SL_ARG_FLOATS,                                                        \
                     .doc =                                                                        \
                         "Output size (H, W); one value sets both. 0 = unspecified (see mode), "   \
                         "negative mirrors that axis.",                                            \
                     .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR | SL_ARG_SCALAR_OK | SL_ARG_RANGE,   \
                     .min = -SL__MAX_EXTENT,                                                       \
                     .max = SL__MAX_EXTENT,                                                        \
                     .min_len = 1,                                                                 \
                     .max_len = 2},                                                                \
    [SL__RZ_MODE] =                                                                                \
        {.name = "mode",                                                                           \
         .type = SL_ARG_STRING,                                                                    \
         .def = "\"default\"",                                                                     \
         .doc = "\"default\": missing extents scaled by the geometric mean of the given "          \
                "scales; \"stretch\": missing extents unchanged; \"not_larger\": aspect "          \
                "kept, no extent above the size; \"not_smaller\": aspect kept, no extent "         \
                "below the size. Exclusive with resize_shorter / resize_longer.",                  \
         .choices = "default|stretch|not_larger|not_smaller"},                                     \
    [SL__RZ_MAX_SIZE] = {.name = "max_size",                                                       \
                         .type = SL_ARG_FLOATS,                                                    \
                         .doc = "Limit of the output size (H, W), or one value for both; 0 = no "  \
                                "limit on that axis. With not_smaller / resize_shorter it takes "  \
                                "precedence and the aspect ratio is kept.",                        \
                         .flags = SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK | SL_ARG_RANGE,               \
                         .min = 0.0,                                                               \
                         .max = SL__MAX_EXTENT,                                                    \
                         .min_len = 1,                                                             \
                         .max_len = 2},                                                            \
    [SL__RZ_INTERP] = SL__ARG_INTERP_TYPE_DEF, [SL__RZ_MAG] = SL__ARG_MAG_FILTER_DEF,              \
    [SL__RZ_MIN] = SL__ARG_MIN_FILTER_DEF, [SL__RZ_ANTIALIAS] = ANTIALIAS_DEF,                     \
    [SL__RZ_ROI_START] = {.name = "roi_start",                                                     \
                          .type = SL_ARG_FLOATS,                                                   \
                          .doc = "Origin (y, x) of the input region to resize; with roi_end. A "   \
                                 "start beyond the end mirrors that axis.",                        \
                          .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR,                                \
                          .min_len = 2,                                                            \
                          .max_len = 2},                                                           \
    [SL__RZ_ROI_END] = {.name = "roi_end",                                                         \
                        .type = SL_ARG_FLOATS,                                                     \
                        .doc = "End (y, x) of the input region to resize; with roi_start.",        \
                        .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR,                                  \
                        .min_len = 2,                                                              \
                        .max_len = 2},                                                             \
    [SL__RZ_ROI_RELATIVE] = {.name = "roi_relative",                                               \
                             .type = SL_ARG_BOOL,                                                  \
                             .def = "false",                                                       \
                             .doc =                                                                \
                                 "ROI coordinates relative to the input size (0..1) instead of "   \
                                 "pixels."},                                                       \
    [SL__RZ_SUBPIXEL] =                                                                            \
        {.name = "subpixel_scale",                                                                 \
         .type = SL_ARG_BOOL,                                                                      \
         .def = "true",                                                                            \
         .doc = "When the rounded output size differs from the computed fractional "               \
                "one, adjust the input ROI about its centre so the scale factor is "               \
                "kept (e.g. 640 -> 100.4 px samples 100 px with scale 6.375). false: "             \
                "the ROI maps exactly onto the rounded size, as PIL and OpenCV do."},              \
    [SL__RZ_DTYPE] = SL__ARG_RESAMPLE_DTYPE_DEF

/* Sample i's resize geometry: axis 0 is y (H), axis 1 is x (W). */
typedef struct sl__resize_geom {
    int64_t out[2];      /* output extents */
    double lo[2], hi[2]; /* input interval per axis; hi < lo mirrors */
} sl__resize_geom;

/* init: exactly one way of giving the size, mode / resize_shorter / resize_longer exclusive,
 * roi_start with roi_end, max_size finite, dtype uint8 or float32. Fails the init. */
sl_status sl__resize_init_check(sl_op_init *ini);
/* setup_sample: sample i's geometry on its input (HWC, input 0), DALI's ResizeAttr rules. Fails
 * the sample. */
sl_status sl__resize_geom_get(sl_ctx *ctx, int i, sl__resize_geom *g);
/* The resampling of sample i from geometry g (axes, c, types; not yet initialised). */
void sl__resize_plan_of(sl_ctx *ctx, int i, const sl__resize_geom *g, sl__resample_plan *p);

#endif
