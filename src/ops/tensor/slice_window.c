/* ops/tensor/slice_window.c: the slice window of slice and decoders.image_slice (see
 * slice_window.h). */
#include <math.h>
#include <string.h>

#include "ops/tensor/slice_window.h"
#include "ops/tensor/tensor.h"

static const char *const input_names[2] = {"anchor", "shape"};

sl_status sl__slice_init_check(sl_op_init *ini, const sl__slice_args *a)
{
    if (sl_init_arg_is_set(ini, a->start) && sl_init_arg_is_set(ini, a->rel_start))
        return sl_init_fail(ini, SL_EINVAL,
                            "\"start\" and \"rel_start\" arguments are mutually exclusive");
    if (sl_init_arg_is_set(ini, a->end) + sl_init_arg_is_set(ini, a->rel_end) +
            sl_init_arg_is_set(ini, a->shape) + sl_init_arg_is_set(ini, a->rel_shape) >
        1)
        return sl_init_fail(ini, SL_EINVAL,
                            "\"end\", \"rel_end\", \"shape\", and \"rel_shape\" arguments are "
                            "mutually exclusive");
    return SL_OK;
}

bool sl__slice_named(const sl_ctx *ctx, const sl__slice_args *a)
{
    const int named[] = {a->start, a->rel_start, a->end, a->rel_end, a->shape, a->rel_shape};
    for (int k = 0; k < 6; k++)
        if (sl_ctx_arg_is_set(ctx, named[k]))
            return true;
    return false;
}

sl_status sl__slice_inputs_check(sl_ctx *ctx, const sl__slice_args *a)
{
    int nin = sl_ctx_num_inputs(ctx), k = a->anchor_input;
    bool named = sl__slice_named(ctx, a);
    if (named && nin != k)
        return sl_fail(ctx, SL_EINVAL,
                       "Named arguments start/end/shape are not compatible with "
                       "positional anchor and shape inputs");
    if (!named && nin != k + 2)
        return sl_fail(ctx, SL_EINVAL,
                       "Expected named slice arguments (e.g. start/end, start/shape) or "
                       "positional inputs (anchor, shape). Got %d inputs.",
                       nin);
    if (nin == k + 2 &&
        sl_batch_dtype(sl_ctx_input(ctx, k)) != sl_batch_dtype(sl_ctx_input(ctx, k + 1)))
        return sl_fail(ctx, SL_EINVAL, "Anchor and shape should have the same type. Got: %s and %s",
                       sl_dtype_name(sl_batch_dtype(sl_ctx_input(ctx, k))),
                       sl_dtype_name(sl_batch_dtype(sl_ctx_input(ctx, k + 1))));
    return SL_OK;
}

int sl__slice_axes(sl_ctx *ctx, const sl__slice_args *a, int ndim, const char *layout, int *out)
{
    bool names = a->axis_names >= 0 && sl_ctx_arg_is_set(ctx, a->axis_names);
    bool axes = !names && sl_ctx_arg_is_set(ctx, a->axes);
    if (!names && !axes && a->all_axes_default) {
        for (int d = 0; d < ndim; d++)
            out[d] = d;
        return ndim;
    }
    if (!names && !axes && !layout[0]) {
        if (ndim < 2)
            return sl_fail(ctx, SL_EINVAL,
                           "the default axes [1, 0] need 2 or more dimensions; give axes"),
                   -1;
        out[0] = 1, out[1] = 0;
        return 2;
    }
    int n = names  ? (int)strlen(sl_ctx_arg_str(ctx, a->axis_names))
            : axes ? sl_ctx_arg_ints(ctx, a->axes, 0, NULL, 0)
                   : 2;
    if (n == 0) {
        for (n = 0; n < ndim; n++)
            out[n] = n;
        return n;
    }
    if (names || axes)
        return sl__axes_get(ctx, axes ? a->axes : -1, names ? a->axis_names : -1, ndim, layout,
                            out);
    char err[256]; /* default names "WH" on a layout */
    n = sl__axes_from_names("WH", layout, out, err, sizeof err);
    if (n < 0)
        sl_fail(ctx, SL_EINVAL, "%s (the default axis_names); give axes or axis_names", err);
    return n;
}

/* Reads n coordinates of sample i from positional input k (0 anchor, 1 shape) as doubles. */
static sl_status read_input(sl_ctx *ctx, const sl__slice_args *a, int k, int i, int n, double *v)
{
    const sl_batch *b = sl_ctx_input(ctx, a->anchor_input + k);
    int64_t m = sl_batch_sample_numel(b, i);
    if (sl_batch_ndim(b) > 1 || m != n)
        return sl_fail(ctx, SL_EINVAL,
                       "Unexpected number of arguments %lld vs %d: the %s input must be a 1-D "
                       "tensor with one value per sliced axis",
                       (long long)m, n, input_names[k]);
    sl__convert_get(SL_DTYPE_FLOAT64, sl_batch_dtype(b))(v, sl_batch_sample_data(b, i), n);
    return SL_OK;
}

/* Reads named list argument `arg` (n values expected) of sample i; false when unset. */
static bool read_arg(sl_ctx *ctx, int arg, const char *name, int i, int n, double *v, sl_status *st)
{
    if (!sl_ctx_arg_is_set(ctx, arg))
        return false;
    int m = sl_ctx_arg_floats(ctx, arg, i, v, SL_MAX_NDIM);
    if (m != n)
        *st = sl_fail(ctx, SL_EINVAL, "%s has %d values; expected %d (one per sliced axis)", name,
                      m, n);
    return true;
}

/* Start and end coordinates (unrounded) of sample i on n axes from the named arguments. */
static sl_status named_coords(sl_ctx *ctx, const sl__slice_args *a, int i, int n, const double *ext,
                              double *s, double *e)
{
    double v[SL_MAX_NDIM], rs[SL_MAX_NDIM];
    sl_status st = SL_OK;
    bool rel_start = read_arg(ctx, a->rel_start, "rel_start", i, n, rs, &st);
    for (int k = 0; k < n; k++)
        s[k] = rel_start ? rs[k] * ext[k] : 0, e[k] = ext[k];
    if (read_arg(ctx, a->start, "start", i, n, v, &st))
        for (int k = 0; k < n; k++)
            s[k] = v[k];
    if (read_arg(ctx, a->end, "end", i, n, v, &st))
        for (int k = 0; k < n; k++)
            e[k] = v[k];
    if (read_arg(ctx, a->rel_end, "rel_end", i, n, v, &st))
        for (int k = 0; k < n; k++)
            e[k] = v[k] * ext[k];
    bool shape = read_arg(ctx, a->shape, "shape", i, n, v, &st);
    bool rel_shape = !shape && read_arg(ctx, a->rel_shape, "rel_shape", i, n, v, &st);
    for (int k = 0; st == SL_OK && (shape || rel_shape) && k < n; k++) {
        if (v[k] < 0)
            return sl_fail(ctx, SL_EINVAL, "negative shapes are not allowed. Got: %g", v[k]);
        e[k] = shape ? s[k] + v[k] : rel_start ? (rs[k] + v[k]) * ext[k] : s[k] + v[k] * ext[k];
    }
    return st;
}

/* The same from the positional anchor and shape inputs. */
static sl_status input_coords(sl_ctx *ctx, const sl__slice_args *a, int i, int n, const double *ext,
                              double *s, double *e)
{
    double l[SL_MAX_NDIM];
    sl_status st;
    if ((st = read_input(ctx, a, 0, i, n, s)) != SL_OK ||
        (st = read_input(ctx, a, 1, i, n, l)) != SL_OK)
        return st;
    sl_dtype t = sl_batch_dtype(sl_ctx_input(ctx, a->anchor_input));
    bool fp = t == SL_DTYPE_FLOAT32 || t == SL_DTYPE_FLOAT64 || t == SL_DTYPE_FLOAT16;
    bool na = fp && sl_ctx_arg_bool(ctx, a->normalized_anchor, i);
    bool ns = fp && sl_ctx_arg_bool(ctx, a->normalized_shape, i);
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

sl_status sl__slice_window(sl_ctx *ctx, const sl__slice_args *a, int i, int ndim,
                           const int64_t *shape, const char *layout, int64_t *anchor,
                           int64_t *extent)
{
    int axes[SL_MAX_NDIM];
    double ext[SL_MAX_NDIM], st_[SL_MAX_NDIM], en[SL_MAX_NDIM];
    int n = sl__slice_axes(ctx, a, ndim, layout, axes);
    if (n < 0)
        return SL_EINVAL;
    for (int k = 0; k < n; k++)
        ext[k] = (double)shape[axes[k]];
    sl_status st = sl__slice_named(ctx, a) ? named_coords(ctx, a, i, n, ext, st_, en)
                                           : input_coords(ctx, a, i, n, ext, st_, en);
    if (st != SL_OK)
        return st;
    for (int d = 0; d < ndim; d++)
        anchor[d] = 0, extent[d] = shape[d];
    for (int k = 0; k < n; k++) {
        if (!(fabs(st_[k]) < 0x1p62 && fabs(en[k]) < 0x1p62))
            return sl_fail(ctx, SL_EINVAL, "slice coordinates out of range: start %g, end %g",
                           st_[k], en[k]);
        if (en[k] < st_[k])
            return sl_fail(ctx, SL_EINVAL,
                           "end coordinates can't be before start coordinates. Got: start=%g "
                           "end=%g",
                           st_[k], en[k]);
        anchor[axes[k]] = llround(st_[k]);
        extent[axes[k]] = llround(en[k]) - anchor[axes[k]];
    }
    return SL_OK;
}
