/* ops/tensor/slice_window.h: the slice window of DALI's slice-family operators (slice,
 * decoders.image_slice), shared so both read the same arguments the same way.
 *
 * Exports (slice_window.c): sl__slice_init_check, sl__slice_named, sl__slice_inputs_check,
 * sl__slice_axes, sl__slice_window; the argument definitions the operators share
 * (SL__SLICE_ARG_* below, so names, defaults and docs agree); sl__slice_args, where an
 * operator's table keeps them.
 *
 * The window is given on a list of axes (`axis_names`, default "WH", or `axes`, default
 * [1, 0]; an input without a layout uses [1, 0]; an explicitly empty list means all axes) either
 *   - by named arguments: start | rel_start, and end | rel_end | shape | rel_shape (relative
 *     values are fractions of the extent), or
 *   - by two positional inputs `anchor` and `shape` (one value per axis; float values are
 *     fractions of the extent unless normalized_anchor / normalized_shape are false; integer
 *     inputs are absolute).
 * Per axis, start and end are computed in double (relative start + shape as (s + l) * extent,
 * as DALI, to round once) and rounded half away from zero; end < start fails. The other axes
 * are kept whole.
 * Invariant: a pure function of the sample's arguments, inputs and extents.
 */
#ifndef SLUICE_OPS_TENSOR_SLICE_WINDOW_H
#define SLUICE_OPS_TENSOR_SLICE_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/op.h"

/* Where an operator's table keeps the slice arguments, and its anchor input (the shape input
 * follows it). */
typedef struct sl__slice_args {
    int axes, axis_names, normalized_anchor, normalized_shape;
    int start, rel_start, end, rel_end, shape, rel_shape;
    int anchor_input;
    bool all_axes_default; /* neither axes nor axis_names given: all axes (readers.numpy) */
} sl__slice_args;

/* init: start / rel_start, and end / rel_end / shape / rel_shape, are exclusive. */
sl_status sl__slice_init_check(sl_op_init *ini, const sl__slice_args *a);
/* True when any named coordinate argument is given. */
bool sl__slice_named(const sl_ctx *ctx, const sl__slice_args *a);
/* setup: named arguments xor the two positional inputs (of one type). Fails the node. */
sl_status sl__slice_inputs_check(sl_ctx *ctx, const sl__slice_args *a);
/* The sliced axes of an ndim-D sample with `layout` into out[]; the count, or -1 after sl_fail. */
int sl__slice_axes(sl_ctx *ctx, const sl__slice_args *a, int ndim, const char *layout, int *out);
/* Sample i's window on a sample of `shape` (ndim extents, `layout`): anchor and extent per axis
 * (other axes: 0 and the whole extent), before any out-of-bounds policy. Fails the sample. */
sl_status sl__slice_window(sl_ctx *ctx, const sl__slice_args *a, int i, int ndim,
                           const int64_t *shape, const char *layout, int64_t *anchor,
                           int64_t *extent);

/* ---- shared argument definitions --------------------------------------------------------- */

#define SL__SLICE_COORDS(NAME, TYPE, DOC)                                                          \
    {                                                                                              \
        .name = NAME, .type = TYPE, .doc = DOC, .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR,          \
        .max_len = SL_MAX_NDIM                                                                     \
    }
#define SL__SLICE_ARG_AXES                                                                         \
    {                                                                                              \
        .name = "axes", .type = SL_ARG_INTS, .def = "[1, 0]",                                      \
        .doc = "Axes (indices, negative from the back) the slice coordinates refer to, in "        \
               "order; [] = all axes. Used when axis_names is not given.",                         \
        .max_len = SL_MAX_NDIM                                                                     \
    }
#define SL__SLICE_ARG_AXIS_NAMES                                                                   \
    {                                                                                              \
        .name = "axis_names", .type = SL_ARG_STRING, .def = "\"WH\"",                              \
        .doc = "Layout letters of the axes the coordinates refer to, in order; takes priority "    \
               "over axes. Default \"WH\" (inputs without a layout: axes [1, 0])."                 \
    }
#define SL__SLICE_ARG_NORMALIZED_ANCHOR                                                            \
    {                                                                                              \
        .name = "normalized_anchor", .type = SL_ARG_BOOL, .def = "true",                           \
        .doc = "A float `anchor` input is a fraction of the extent (false: absolute)."             \
    }
#define SL__SLICE_ARG_NORMALIZED_SHAPE                                                             \
    {                                                                                              \
        .name = "normalized_shape", .type = SL_ARG_BOOL, .def = "true",                            \
        .doc = "A float `shape` input is a fraction of the extent (false: absolute)."              \
    }
#define SL__SLICE_ARG_START                                                                        \
    SL__SLICE_COORDS("start", SL_ARG_INTS, "Slice start, absolute; exclusive with rel_start.")
#define SL__SLICE_ARG_REL_START                                                                    \
    SL__SLICE_COORDS("rel_start", SL_ARG_FLOATS, "Slice start as a fraction of the extent.")
#define SL__SLICE_ARG_END                                                                          \
    SL__SLICE_COORDS("end", SL_ARG_INTS,                                                           \
                     "Slice end (exclusive), absolute; exclusive with rel_end, shape, rel_shape.")
#define SL__SLICE_ARG_REL_END                                                                      \
    SL__SLICE_COORDS("rel_end", SL_ARG_FLOATS, "Slice end as a fraction of the extent.")
#define SL__SLICE_ARG_SHAPE                                                                        \
    SL__SLICE_COORDS("shape", SL_ARG_INTS, "Slice extents, absolute (>= 0).")
#define SL__SLICE_ARG_REL_SHAPE                                                                    \
    SL__SLICE_COORDS("rel_shape", SL_ARG_FLOATS,                                                   \
                     "Slice extents as fractions of the input extents (>= 0).")

#endif
