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

#define COORDS(NAME, TYPE, DOC)                                                                    \
    {                                                                                              \
        .name = NAME, .type = TYPE, .doc = DOC, .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR,          \
        .max_len = SL_MAX_NDIM                                                                     \
    }

static const sl_arg_def args[NUM_ARGS] = {
    [A_AXES] = {.name = "axes",
                .type = SL_ARG_INTS,
                .def = "[1, 0]",
                .doc = "Axes (indices, negative from the back) the slice coordinates refer to, "
                       "in order; [] = all axes. Used when axis_names is not given.",
                .max_len = SL_MAX_NDIM},
    [A_AXIS_NAMES] = {.name = "axis_names",
                      .type = SL_ARG_STRING,
                      .def = "\"WH\"",
                      .doc = "Layout letters of the axes the coordinates refer to, in order; "
                             "takes priority over axes. Default \"WH\" (inputs without a layout: "
                             "axes [1, 0])."},
    [A_NORMALIZED_ANCHOR] = {.name = "normalized_anchor",
                             .type = SL_ARG_BOOL,
                             .def = "true",
                             .doc = "A float `anchor` input is a fraction of the extent (false: "
                                    "absolute)."},
    [A_NORMALIZED_SHAPE] = {.name = "normalized_shape",
                            .type = SL_ARG_BOOL,
                            .def = "true",
                            .doc = "A float `shape` input is a fraction of the extent (false: "
                                   "absolute)."},
    [A_START] = COORDS("start", SL_ARG_INTS, "Slice start, absolute; exclusive with rel_start."),
    [A_REL_START] = COORDS("rel_start", SL_ARG_FLOATS, "Slice start as a fraction of the extent."),
    [A_END] = COORDS("end", SL_ARG_INTS,
                     "Slice end (exclusive), absolute; exclusive with rel_end, shape, rel_shape."),
    [A_REL_END] = COORDS("rel_end", SL_ARG_FLOATS, "Slice end as a fraction of the extent."),
    [A_SHAPE] = COORDS("shape", SL_ARG_INTS, "Slice extents, absolute (>= 0)."),
    [A_REL_SHAPE] = COORDS("rel_shape", SL_ARG_FLOATS,
                           "Slice extents as fractions of the input extents (>= 0)."),
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

static bool set(const sl_op_init *ini, int arg)
{
    return sl_init_arg_is_set(ini, arg);
}

static sl_status slice_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    if (set(ini, A_START) && set(ini, A_REL_START))
        return sl_init_fail(ini, SL_EINVAL,
                            "\"start\" and \"rel_start\" arguments are mutually exclusive");
    if (set(ini, A_END) + set(ini, A_REL_END) + set(ini, A_SHAPE) + set(ini, A_REL_SHAPE) > 1)
        return sl_init_fail(ini, SL_EINVAL,
                            "\"end\", \"rel_end\", \"shape\", and \"rel_shape\" arguments are "
                            "mutually exclusive");
    return SL_OK;
}

static bool named(const sl_ctx *ctx)
{
    for (int a = A_START; a <= A_REL_SHAPE; a++)
        if (sl_ctx_arg_is_set(ctx, a))
            return true;
    return false;
}

/* The sliced axes: axis_names when given, else axes when given, else "WH" in the layout (or
 * [1, 0] without a layout); an empty list: all axes. -1 after sl_fail. */
static int slice_axes(sl_ctx *ctx, const sl_batch *in, int *out)
{
    const char *layout = sl_batch_layout(in);
    const int ndim = sl_batch_ndim(in);
    bool names = sl_ctx_arg_is_set(ctx, A_AXIS_NAMES);
    bool axes = !names && sl_ctx_arg_is_set(ctx, A_AXES);
    if (!names && !axes && !layout[0]) {
        if (ndim < 2)
            return sl_fail(ctx, SL_EINVAL,
                           "the default axes [1, 0] need 2 or more dimensions; give axes"),
                   -1;
        out[0] = 1, out[1] = 0;
        return 2;
    }
    int n = names  ? (int)strlen(sl_ctx_arg_str(ctx, A_AXIS_NAMES))
            : axes ? sl_ctx_arg_ints(ctx, A_AXES, 0, NULL, 0)
                   : 2;
    if (n == 0) {
        for (n = 0; n < ndim; n++)
            out[n] = n;
        return n;
    }
    if (names || axes)
        return sl__axes_get(ctx, axes ? A_AXES : -1, names ? A_AXIS_NAMES : -1, ndim, layout, out);
    char err[256]; /* default names "WH" on a layout */
    n = sl__axes_from_names("WH", layout, out, err, sizeof err);
    if (n < 0)
        sl_fail(ctx, SL_EINVAL, "%s (the default axis_names); give axes or axis_names", err);
    return n;
}

static sl_dtype out_type(const sl_ctx *ctx, const sl_batch *in)
{
    return sl_ctx_arg_is_set(ctx, A_DTYPE) ? sl_ctx_arg_dtype(ctx, A_DTYPE) : sl_batch_dtype(in);
}

static sl_status slice_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    int nin = sl_ctx_num_inputs(ctx);
    if (named(ctx) && nin != 1)
        return sl_fail(ctx, SL_EINVAL,
                       "Named arguments start/end/shape are not compatible with "
                       "positional anchor and shape inputs");
    if (!named(ctx) && nin != 3)
        return sl_fail(ctx, SL_EINVAL,
                       "Expected named slice arguments (e.g. start/end, start/shape) or "
                       "positional inputs (anchor, shape). Got %d inputs.",
                       nin);
    if (nin == 3 && sl_batch_dtype(sl_ctx_input(ctx, 1)) != sl_batch_dtype(sl_ctx_input(ctx, 2)))
        return sl_fail(ctx, SL_EINVAL, "Anchor and shape should have the same type. Got: %s and %s",
                       sl_dtype_name(sl_batch_dtype(sl_ctx_input(ctx, 1))),
                       sl_dtype_name(sl_batch_dtype(sl_ctx_input(ctx, 2))));
    sl_ctx_set_output(ctx, 0, out_type(ctx, in), sl_batch_ndim(in), sl_batch_layout(in));
    return SL_OK;
}

/* Reads n coordinates of sample i from positional input k as doubles. */
static sl_status read_input(sl_ctx *ctx, int k, int i, int n, double *v)
{
    const sl_batch *b = sl_ctx_input(ctx, k);
    int64_t m = sl_batch_sample_numel(b, i);
    if (sl_batch_ndim(b) > 1 || m != n)
        return sl_fail(ctx, SL_EINVAL,
                       "Unexpected number of arguments %lld vs %d: the %s input must be a 1-D "
                       "tensor with one value per sliced axis",
                       (long long)m, n, inputs[k].name);
    sl__convert_get(SL_DTYPE_FLOAT64, sl_batch_dtype(b))(v, sl_batch_sample_data(b, i), n);
    return SL_OK;
}

/* Reads named list argument `arg` (n values expected) of sample i; false when unset. */
static bool read_arg(sl_ctx *ctx, int arg, int i, int n, double *v, sl_status *st)
{
    if (!sl_ctx_arg_is_set(ctx, arg))
        return false;
    int m = sl_ctx_arg_floats(ctx, arg, i, v, SL_MAX_NDIM);
    if (m != n)
        *st = sl_fail(ctx, SL_EINVAL, "%s has %d values; expected %d (one per sliced axis)",
                      args[arg].name, m, n);
    return true;
}

/* Start and end coordinates (unrounded) of sample i on n axes from the named arguments. */
static sl_status named_coords(sl_ctx *ctx, int i, int n, const double *ext, double *s, double *e)
{
    double v[SL_MAX_NDIM], rs[SL_MAX_NDIM];
    sl_status st = SL_OK;
    bool rel_start = read_arg(ctx, A_REL_START, i, n, rs, &st);
    for (int k = 0; k < n; k++)
        s[k] = rel_start ? rs[k] * ext[k] : 0, e[k] = ext[k];
    if (read_arg(ctx, A_START, i, n, v, &st))
        for (int k = 0; k < n; k++)
            s[k] = v[k];
    if (read_arg(ctx, A_END, i, n, v, &st))
        for (int k = 0; k < n; k++)
            e[k] = v[k];
    if (read_arg(ctx, A_REL_END, i, n, v, &st))
        for (int k = 0; k < n; k++)
            e[k] = v[k] * ext[k];
    bool shape = read_arg(ctx, A_SHAPE, i, n, v, &st);
    bool rel_shape = !shape && read_arg(ctx, A_REL_SHAPE, i, n, v, &st);
    for (int k = 0; st == SL_OK && (shape || rel_shape) && k < n; k++) {
        if (v[k] < 0)
            return sl_fail(ctx, SL_EINVAL, "negative shapes are not allowed. Got: %g", v[k]);
        e[k] = shape ? s[k] + v[k] : rel_start ? (rs[k] + v[k]) * ext[k] : s[k] + v[k] * ext[k];
    }
    return st;
}

/* The same from the positional anchor and shape inputs. */
static sl_status input_coords(sl_ctx *ctx, int i, int n, const double *ext, double *s, double *e)
{
    double l[SL_MAX_NDIM];
    sl_status st;
    if ((st = read_input(ctx, 1, i, n, s)) != SL_OK || (st = read_input(ctx, 2, i, n, l)) != SL_OK)
        return st;
    bool fp = sl_batch_dtype(sl_ctx_input(ctx, 1)) == SL_DTYPE_FLOAT32 ||
              sl_batch_dtype(sl_ctx_input(ctx, 1)) == SL_DTYPE_FLOAT64 ||
              sl_batch_dtype(sl_ctx_input(ctx, 1)) == SL_DTYPE_FLOAT16;
    bool na = fp && sl_ctx_arg_bool(ctx, A_NORMALIZED_ANCHOR, i);
    bool ns = fp && sl_ctx_arg_bool(ctx, A_NORMALIZED_SHAPE, i);
    for (int k = 0; k < n; k++) {
        if (na && ns) { /* one multiplication after the sum, as DALI */
            e[k] = (s[k] + l[k]) * ext[k];
            s[k] *= ext[k];
        } else {
            s[k] = na ? s[k] * ext[k] : s[k];
            e[k] = s[k] + (ns ? l[k] * ext[k] : l[k]);
        }
    }
    return SL_OK;
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
    int axes[SL_MAX_NDIM];
    double ext[SL_MAX_NDIM], st_[SL_MAX_NDIM], en[SL_MAX_NDIM];
    sl_status st;
    int n = slice_axes(ctx, in, axes);
    if (n < 0)
        return SL_EINVAL;
    for (int k = 0; k < n; k++)
        ext[k] = (double)s[axes[k]];
    st = named(ctx) ? named_coords(ctx, i, n, ext, st_, en) : input_coords(ctx, i, n, ext, st_, en);
    if (st != SL_OK)
        return st;
    memcpy(w->shape, s, sizeof(int64_t) * (size_t)ndim);
    memset(w->anchor, 0, sizeof w->anchor);
    for (int k = 0; k < n; k++) {
        if (!(fabs(st_[k]) < 0x1p62 && fabs(en[k]) < 0x1p62))
            return sl_fail(ctx, SL_EINVAL, "slice coordinates out of range: start %g, end %g",
                           st_[k], en[k]);
        if (en[k] < st_[k])
            return sl_fail(ctx, SL_EINVAL,
                           "end coordinates can't be before start coordinates. Got: start=%g "
                           "end=%g",
                           st_[k], en[k]);
        w->anchor[axes[k]] = llround(st_[k]);
        w->shape[axes[k]] = llround(en[k]) - w->anchor[axes[k]];
    }
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
