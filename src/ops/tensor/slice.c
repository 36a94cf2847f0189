/* slice: extracts a sub-tensor (window) of each sample, padding or trimming where it reaches
 * outside (DALI's fn.slice).
 *
 * Exports: const sl_op_def sl_op_slice ("slice", CPU).
 *
 * The window is given on a list of axes (`axis_names`, default "WH", or `axes`, default
 * [1, 0]; an input without a layout uses [1, 0]; an explicitly empty list means all axes) either
 *   - by named arguments: start | rel_start, and end | rel_end | shape | rel_shape (relative
 *     values are fractions of the extent), or
 *   - by two positional inputs `anchor` and `shape` (one value per axis; float values are
 *     fractions of the extent unless normalized_anchor / normalized_shape are false; integer
 *     inputs are absolute).
 * Per axis, start and end are computed in double (relative start + shape as (s + l) * extent,
 * as DALI, to round once) and rounded half away from zero; end < start fails. The other axes are
 * kept whole. out_of_bounds_policy then fails, pads with fill_values (one value, or one per
 * channel along the layout's C axis) or trims; `dtype` converts the output.
 * Invariant: setup_sample computes each window once into the iteration data; run only copies
 * with the window kernel of ops/tensor/copy_kernels.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/slice_window.h"
#include "ops/tensor/tensor.h"

enum {
    A_AXES,
    A_AXIS_NAMES,
    A_NORMALIZED_ANCHOR,
    A_NORMALIZED_SHAPE,
    A_START,
    A_REL_START,
    A_END,
    A_REL_END,
    A_SHAPE,
    A_REL_SHAPE,
    A_OOB_POLICY,
    A_FILL_VALUES,
    A_DTYPE,
    NUM_ARGS
};

static const sl_arg_def args[NUM_ARGS] = {
    [A_AXES] = SL__SLICE_ARG_AXES,
    [A_AXIS_NAMES] = SL__SLICE_ARG_AXIS_NAMES,
    [A_NORMALIZED_ANCHOR] = SL__SLICE_ARG_NORMALIZED_ANCHOR,
    [A_NORMALIZED_SHAPE] = SL__SLICE_ARG_NORMALIZED_SHAPE,
    [A_START] = SL__SLICE_ARG_START,
    [A_REL_START] = SL__SLICE_ARG_REL_START,
    [A_END] = SL__SLICE_ARG_END,
    [A_REL_END] = SL__SLICE_ARG_REL_END,
    [A_SHAPE] = SL__SLICE_ARG_SHAPE,
    [A_REL_SHAPE] = SL__SLICE_ARG_REL_SHAPE,
    [A_OOB_POLICY] = {.name = "out_of_bounds_policy",
                      .type = SL_ARG_STRING,
                      .def = "\"error\"",
                      .doc = "A slice reaching outside the input: \"error\" fails the sample, "
                             "\"pad\" fills the outside with fill_values, \"trim_to_shape\" "
                             "clips the slice to the input.",
                      .choices = "error|pad|trim_to_shape"},
    [A_FILL_VALUES] = {.name = "fill_values",
                       .type = SL_ARG_FLOATS,
                       .def = "[0.0]",
                       .doc = "Values of elements outside the input (policy \"pad\"): one value, "
                              "or one per output channel along the layout's C axis.",
                       .flags = SL_ARG_SCALAR_OK},
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .doc = "Output type; unset: the input type (DALI's saturating cast).",
                 .flags = SL_ARG_OPTIONAL},
};

static const sl_io_def inputs[] = {
    {"data", "Data of any type and layout."},
    {"anchor", "Optional: slice start per axis (1-D, int32, int64 or float32)."},
    {"shape", "Optional (with anchor): slice extent per axis, same type as anchor."},
};
static const sl_io_def outputs[] = {{"output", "The slices."}};

/* Per-sample iteration data. */
typedef struct window {
    int64_t anchor[SL_MAX_NDIM], shape[SL_MAX_NDIM];
} window;

static const sl__slice_args slice_args = {
    .axes = A_AXES,
    .axis_names = A_AXIS_NAMES,
    .normalized_anchor = A_NORMALIZED_ANCHOR,
    .normalized_shape = A_NORMALIZED_SHAPE,
    .start = A_START,
    .rel_start = A_REL_START,
    .end = A_END,
    .rel_end = A_REL_END,
    .shape = A_SHAPE,
    .rel_shape = A_REL_SHAPE,
    .anchor_input = 1,
};

static sl_status slice_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    return sl__slice_init_check(ini, &slice_args);
}

static sl_dtype out_type(const sl_ctx *ctx, const sl_batch *in)
{
    return sl_ctx_arg_is_set(ctx, A_DTYPE) ? sl_ctx_arg_dtype(ctx, A_DTYPE) : sl_batch_dtype(in);
}

static sl_status slice_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    sl_status st = sl__slice_inputs_check(ctx, &slice_args);
    if (st == SL_OK)
        sl_ctx_set_output(ctx, 0, out_type(ctx, in), sl_batch_ndim(in), sl_batch_layout(in));
    return st;
}

static sl_status check_fill(sl_ctx *ctx, int i, const sl_batch *in, const window *w)
{
    int n = sl_ctx_arg_floats(ctx, A_FILL_VALUES, i, NULL, 0);
    int c = sl__layout_find(sl_batch_layout(in), 'C');
    if (n == 1)
        return SL_OK;
    if (c < 0)
        return sl_fail(ctx, SL_EINVAL,
                       "fill_values has %d values; one per channel needs a C axis in the layout "
                       "(\"%s\")",
                       n, sl_batch_layout(in));
    if (n < w->shape[c] || w->shape[c] > SL__MAX_FILL)
        return sl_fail(ctx, SL_EINVAL,
                       "fill_values has %d values; expected 1 or one per output channel (%lld)", n,
                       (long long)w->shape[c]);
    return SL_OK;
}

static sl_status slice_setup_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int ndim = sl_batch_ndim(in);
    const int64_t *s = sl_batch_shape(in, i);
    window *w = (window *)sl_ctx_iter_data(ctx) + i;
    sl_status st =
        sl__slice_window(ctx, &slice_args, i, ndim, s, sl_batch_layout(in), w->anchor, w->shape);
    if (st != SL_OK)
        return st;
    sl__oob policy = sl__oob_parse(sl_ctx_arg_str(ctx, A_OOB_POLICY));
    if (!sl__oob_apply(policy, ndim, s, w->anchor, w->shape)) {
        char a[160], b[160], c[160];
        return sl_fail(ctx, SL_EINVAL,
                       "Slice can't be placed out of bounds with current policy. Got: "
                       "input_shape=%s, slice_anchor=%s, slice_shape=%s",
                       sl__shape_str(a, sizeof a, s, ndim),
                       sl__shape_str(b, sizeof b, w->anchor, ndim),
                       sl__shape_str(c, sizeof c, w->shape, ndim));
    }
    if (policy == SL__OOB_PAD && (st = check_fill(ctx, i, in, w)) != SL_OK)
        return st;
    sl_ctx_set_shape(ctx, 0, i, w->shape);
    return SL_OK;
}

static sl_status slice_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const window *w = (const window *)sl_ctx_iter_data(ctx) + i;
    int c = sl__layout_find(sl_batch_layout(in), 'C');
    sl__window_job job = {.ndim = sl_batch_ndim(in),
                          .in_shape = sl_batch_shape(in, i),
                          .anchor = w->anchor,
                          .out_shape = w->shape,
                          .in = sl_batch_sample_data(in, i),
                          .in_type = sl_batch_dtype(in),
                          .out = sl_ctx_output_data(ctx, 0, i),
                          .out_type = out_type(ctx, in)};
    size_t fill_bytes = SL__MAX_FILL * 8;
    unsigned char *scratch = sl_ctx_scratch(ctx, fill_bytes + sl__window_scratch_bytes(&job));
    if (!scratch)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for a slice row");
    int n = sl__fill_read(ctx, A_FILL_VALUES, i, job.out_type, scratch, SL__MAX_FILL);
    job.fill = scratch;
    job.nfill = n == 1 || c < 0 ? 1 : (int)w->shape[c];
    job.fill_axis = job.nfill > 1 ? c : -1;
    if (job.nfill == 0) /* no channels: nothing to fill */
        job.nfill = 1;
    sl__window_copy(&job, scratch + fill_bytes);
    return SL_OK;
}

/* Deprecated names DALI still accepts (DALI 0.24: output_dtype, image_type). */
static const sl_arg_alias aliases[] = {{"output_dtype", "dtype", NULL}, {"image_type", NULL, NULL}};

const sl_op_def sl_op_slice = {
    .name = "slice",
    .doc = "Extracts a window (slice) of each sample, with padding or trimming where it reaches "
           "outside (DALI's slice).\n\n"
           "The slice is given on `axis_names` (default \"WH\") or `axes` (default [1, 0]) either "
           "by named arguments (start or rel_start; end, rel_end, shape or rel_shape; absolute "
           "or as fractions of the extent) or by two positional inputs, anchor and shape (float "
           "values are fractions unless normalized_anchor / normalized_shape are false). "
           "Coordinates are rounded half away from zero; other axes are kept whole. "
           "`out_of_bounds_policy` fails, pads with `fill_values` (one, or per channel along C) "
           "or trims; `dtype` converts the output.\n\n"
           "Differs from DALI: an input without a layout uses axes [1, 0] by default (DALI "
           "needs the W and H letters); an empty slice at the input's end is allowed under "
           "\"error\".",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 3,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .aliases = aliases,
    .num_aliases = 2,
    .devices = SL_OP_CPU,
    .iter_bytes_per_sample = sizeof(window),
    .init = slice_init,
    .setup = slice_setup,
    .setup_sample = slice_setup_sample,
    .run_sample = slice_run_sample,
};
