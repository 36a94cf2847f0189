/* ops/tensor/join.c: what cat and stack share (DALI's TensorJoin): checking the inputs,
 * resolving the axis and the output layout, computing the joined shapes, and the copy.
 *
 * Exports (ops/tensor/tensor.h): sl__join_setup, sl__join_run.
 *
 * Both ops copy, for each index over the dimensions before `axis`, one contiguous block of
 * every input in turn: cat's block is the input's slab from its axis on (extents may differ
 * along the axis), stack's is the whole inner part (the new axis goes before it). Any number of
 * inputs (DALI has no limit either): the copy goes input by input, so nothing is sized by it.
 * Invariant: setup validates everything; run recomputes the axis the same way and cannot fail.
 */
#include <stdio.h>
#include <string.h>

#include "ops/tensor/tensor.h"

/* The common non-empty layout of the inputs, or "" (fails when two differ). */
static sl_status common_layout(sl_ctx *ctx, const char **out)
{
    *out = "";
    for (int t = 0; t < sl_ctx_num_inputs(ctx); t++) {
        const char *l = sl_batch_layout(sl_ctx_input(ctx, t));
        if (!l[0])
            continue;
        if ((*out)[0] && strcmp(*out, l) != 0)
            return sl_fail(ctx, SL_EINVAL,
                           "All non-empty input layouts must match. Offending values: \"%s\" and "
                           "\"%s\"",
                           *out, l);
        *out = l;
    }
    return SL_OK;
}

/* The join axis in [0, ndim) (cat) or [0, ndim] (stack: an axis of the output, so negative
 * values from -(ndim + 1), as NumPy's stack); -1 after sl_fail (when `report`). */
static int join_axis(sl_ctx *ctx, const sl__join_args *a, int ndim, const char *layout, bool report)
{
    int max_axis = a->new_axis ? ndim : ndim - 1, min_axis = -(max_axis + 1);
    int64_t axis;
    if (!a->new_axis && sl_ctx_arg_is_set(ctx, a->axis_name)) {
        const char *name = sl_ctx_arg_str(ctx, a->axis_name);
        axis = strlen(name) == 1 ? sl__layout_find(layout, name[0]) : -1;
        if (axis < 0 && report)
            sl_fail(ctx, SL_EINVAL,
                    "``axis_name`` specifies an undefined axis '%s' for layout "
                    "\"%s\"",
                    name, layout);
        return (int)axis;
    }
    axis = sl_ctx_arg_int(ctx, a->axis, 0);
    if (axis < min_axis || axis > max_axis) {
        if (report)
            sl_fail(ctx, SL_EINVAL,
                    "Invalid axis argument, %lld for %d-D tensors. Accepted range is [%d, %d], "
                    "with negative indices being counted from the back.",
                    (long long)axis, ndim, min_axis, max_axis);
        return -1;
    }
    return (int)(axis < 0 ? axis + max_axis + 1 : axis);
}

/* Cat skips inputs whose whole batch is empty (as DALI); stack uses every input. */
static bool used(const sl__join_args *a, const sl_batch *b)
{
    return a->new_axis || sl_batch_nbytes(b) > 0;
}

/* Bytes input b contributes to each row of sample i's output: its extents from `axis` on (the
 * whole sample for axis 0), 0 when it takes no part. */
static size_t block_bytes(const sl__join_args *a, const sl_batch *b, int i, int axis)
{
    if (!used(a, b))
        return 0;
    const int64_t *s = sl_batch_shape(b, i);
    size_t bytes = sl_dtype_size(sl_batch_dtype(b));
    for (int d = axis; d < sl_batch_ndim(b); d++)
        bytes *= (size_t)s[d];
    return bytes;
}

static sl_status check_inputs(sl_ctx *ctx, const sl_batch *in0)
{
    for (int t = 1; t < sl_ctx_num_inputs(ctx); t++) {
        const sl_batch *b = sl_ctx_input(ctx, t);
        if (sl_batch_dtype(b) != sl_batch_dtype(in0) || sl_batch_ndim(b) != sl_batch_ndim(in0))
            return sl_fail(ctx, SL_EINVAL,
                           "All inputs must have the same type and number of dimensions. input "
                           "#0: %s, %d-D; input #%d: %s, %d-D",
                           sl_dtype_name(sl_batch_dtype(in0)), sl_batch_ndim(in0), t,
                           sl_dtype_name(sl_batch_dtype(b)), sl_batch_ndim(b));
    }
    return SL_OK;
}

/* Sample i's joined shape into out (ndim + new_axis extents). */
static sl_status joined_shape(sl_ctx *ctx, const sl__join_args *a, int i, int axis, int64_t *out)
{
    const sl_batch *ref = NULL;
    int ndim = sl_batch_ndim(sl_ctx_input(ctx, 0)), ref_t = 0;
    char s0[128], s1[128];
    int64_t along = 0;
    for (int t = 0; t < sl_ctx_num_inputs(ctx); t++) {
        const sl_batch *b = sl_ctx_input(ctx, t);
        if (!used(a, b))
            continue;
        const int64_t *s = sl_batch_shape(b, i);
        along += a->new_axis ? 1 : s[axis];
        if (!ref) {
            ref = b, ref_t = t;
            continue;
        }
        const int64_t *r = sl_batch_shape(ref, i);
        for (int d = 0; d < ndim; d++)
            if (s[d] != r[d] && (a->new_axis || d != axis))
                return sl_fail(ctx, SL_EINVAL, "%s: input #%d has shape %s but input #%d has %s",
                               a->new_axis ? "stack needs inputs of equal shapes"
                                           : "cat needs inputs of equal extents except along the "
                                             "axis",
                               t, sl__shape_str(s1, sizeof s1, s, ndim), ref_t,
                               sl__shape_str(s0, sizeof s0, r, ndim));
    }
    if (!ref) { /* every input is empty: the shape of input 0 */
        ref = sl_ctx_input(ctx, 0);
        along = a->new_axis ? 1 : sl_batch_shape(ref, i)[axis];
    }
    const int64_t *r = sl_batch_shape(ref, i);
    if (a->new_axis) {
        for (int d = 0, k = 0; d <= ndim; d++)
            out[d] = d == axis ? along : r[k++];
    } else {
        for (int d = 0; d < ndim; d++)
            out[d] = d == axis ? along : r[d];
    }
    return SL_OK;
}

sl_status sl__join_setup(sl_ctx *ctx, const sl__join_args *a)
{
    const sl_batch *in0 = sl_ctx_input(ctx, 0);
    const int ndim = sl_batch_ndim(in0);
    const char *layout;
    char out_layout[SL_MAX_NDIM + 2] = "";
    sl_status st;
    if ((st = check_inputs(ctx, in0)) != SL_OK || (st = common_layout(ctx, &layout)) != SL_OK)
        return st;
    if (a->new_axis && ndim + 1 > SL_MAX_NDIM)
        return sl_fail(ctx, SL_EUNSUPPORTED, "stacking %d-D inputs gives more than %d dimensions",
                       ndim, SL_MAX_NDIM);
    int axis = join_axis(ctx, a, ndim, layout, true);
    if (axis < 0)
        return SL_EINVAL;
    if (!a->new_axis) {
        snprintf(out_layout, sizeof out_layout, "%s", layout);
    } else if (sl_ctx_arg_is_set(ctx, a->axis_name)) {
        const char *name = sl_ctx_arg_str(ctx, a->axis_name);
        if (strlen(name) != 1)
            return sl_fail(ctx, SL_EINVAL, "axis_name \"%s\" must be one letter", name);
        if (!layout[0] && ndim > 0)
            return sl_fail(ctx, SL_EINVAL,
                           "Specifying the new axis name with ``axis_name`` with non-scalar "
                           "input requires a non-empty input layout.");
        snprintf(out_layout, sizeof out_layout, "%.*s%s%s", axis, layout, name, layout + axis);
    }
    sl_ctx_set_output(ctx, 0, sl_batch_dtype(in0), ndim + a->new_axis, out_layout);
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++) {
        int64_t shape[SL_MAX_NDIM];
        if ((st = joined_shape(ctx, a, i, axis, shape)) != SL_OK)
            return st;
        sl_ctx_set_shape(ctx, 0, i, shape);
    }
    return SL_OK;
}

sl_status sl__join_run(sl_ctx *ctx, const sl__join_args *a, int i)
{
    const sl_batch *in0 = sl_ctx_input(ctx, 0);
    const int ndim = sl_batch_ndim(in0), n = sl_ctx_num_inputs(ctx);
    const char *layout;
    common_layout(ctx, &layout); /* checked in setup */
    int axis = join_axis(ctx, a, ndim, layout, false);
    const sl_batch *ref = in0; /* the first input taking part: its outer extents */
    for (int t = 0; t < n; t++) {
        if (used(a, sl_ctx_input(ctx, t))) {
            ref = sl_ctx_input(ctx, t);
            break;
        }
    }
    int64_t outer = 1;
    for (int d = 0; d < axis && d < ndim; d++)
        outer *= sl_batch_shape(ref, i)[d];
    if (outer == 0)
        return SL_OK;
    /* a row of the output is one block of every input taking part, in order */
    size_t row = 0;
    for (int t = 0; t < n; t++)
        row += block_bytes(a, sl_ctx_input(ctx, t), i, axis);
    unsigned char *out = sl_ctx_output_data(ctx, 0, i);
    for (int t = 0; t < n; t++) {
        const sl_batch *b = sl_ctx_input(ctx, t);
        size_t block = block_bytes(a, b, i, axis);
        sl__join_copy(out, row, sl_batch_sample_data(b, i), block, outer);
        out += block;
    }
    return SL_OK;
}
