/* transforms.c: the shared part of the transforms.* operators (see transforms.h): the number
 * of dimensions, the optional input transform, composition and the float32 output. */
#include <string.h>

#include "ops/transforms/transforms.h"

int sl__xform_arg_len(sl_ctx *ctx, int arg, int i)
{
    return sl_ctx_arg_is_set(ctx, arg) ? sl_ctx_arg_floats(ctx, arg, i, NULL, 0) : 0;
}

sl_status sl__xform_check_len(sl_ctx *ctx, int arg, const char *name, int i, int ndim,
                              bool scalar_ok)
{
    int n = sl_ctx_arg_floats(ctx, arg, i, NULL, 0); /* its value or its default */
    if (n == ndim || (scalar_ok && n == 1))
        return SL_OK;
    return sl_fail(ctx, SL_EINVAL,
                   "%s has %d values, expected %s%d (the number of "
                   "dimensions of the transform)",
                   name, n, scalar_ok ? "1 or " : "", ndim);
}

int sl__xform_input_ndim(sl_ctx *ctx, int input, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, input);
    sl_dtype dt = sl_batch_dtype(in);
    if (dt != SL_DTYPE_FLOAT32 && dt != SL_DTYPE_FLOAT64) {
        sl_fail(ctx, SL_EINVAL, "input %d: a transform matrix must be float32 (or float64), got %s",
                input, sl_dtype_name(dt));
        return -1;
    }
    const int64_t *s = sl_batch_shape(in, i);
    if (sl_batch_ndim(in) != 2 || s[0] < 1 || s[0] > SL__XF_MAX_NDIM ||
        (s[1] != s[0] + 1 && s[1] != s[0])) {
        int64_t rows = sl_batch_ndim(in) >= 1 ? s[0] : 0;
        sl_fail(ctx, SL_EINVAL,
                "input %d: a transform matrix must have shape (ndim, ndim + 1) (or "
                "(ndim + 1, ndim + 1)) with 1 <= ndim <= %d; got a %d-D tensor with %lld rows",
                input, SL__XF_MAX_NDIM, sl_batch_ndim(in), (long long)rows);
        return -1;
    }
    /* (n + 1, n + 1): a full homogeneous matrix of n dimensions */
    return s[1] == s[0] ? (int)s[0] - 1 : (int)s[0];
}

void sl__xform_read(const sl_batch *in, int i, int ndim, double *m)
{
    const int64_t *s = sl_batch_shape(in, i);
    const int64_t cols = s[1];
    const void *d = sl_batch_sample_data(in, i);
    bool f64 = sl_batch_dtype(in) == SL_DTYPE_FLOAT64;
    for (int r = 0; r <= ndim; r++)
        for (int c = 0; c <= ndim; c++)
            m[r * SL__XF_MAT + c] = r == c ? 1.0 : 0.0;
    for (int r = 0; r < ndim; r++)
        for (int c = 0; c <= ndim; c++) {
            int64_t k = r * cols + c;
            m[r * SL__XF_MAT + c] = f64 ? ((const double *)d)[k] : ((const float *)d)[k];
        }
}

void sl__xform_mul(int ndim, const double *a, const double *b, double *c)
{
    for (int r = 0; r <= ndim; r++)
        for (int k = 0; k <= ndim; k++) {
            double acc = 0;
            for (int j = 0; j <= ndim; j++)
                acc += a[r * SL__XF_MAT + j] * b[j * SL__XF_MAT + k];
            c[r * SL__XF_MAT + k] = acc;
        }
}

void sl__xform_write(int ndim, const double *m, float *out)
{
    for (int r = 0; r < ndim; r++)
        for (int c = 0; c <= ndim; c++)
            out[r * (ndim + 1) + c] = (float)m[r * SL__XF_MAT + c];
}

void sl__xform_center(int ndim, double *m, const double *center)
{
    /* T(c) · [A 0] · T(-c) = [A, c - A c] */
    for (int r = 0; r < ndim; r++) {
        double ac = 0;
        for (int c = 0; c < ndim; c++)
            ac += m[r * SL__XF_MAT + c] * center[c];
        m[r * SL__XF_MAT + ndim] += center[r] - ac;
    }
}

sl_status sl__xform_setup(sl_ctx *ctx)
{
    sl_ctx_set_output(ctx, 0, SL_DTYPE_FLOAT32, 2, NULL);
    return SL_OK;
}

/* Sample i's number of dimensions; negative after sl_fail. */
static int sample_ndim(sl_ctx *ctx, int i, const sl__xform *x)
{
    int an = x->arg_ndim(ctx, i);
    if (an < 0)
        return -1;
    if (an > SL__XF_MAX_NDIM) {
        sl_fail(ctx, SL_EINVAL, "the arguments ask for a %d-D transform; at most %d", an,
                SL__XF_MAX_NDIM);
        return -1;
    }
    if (sl_ctx_num_inputs(ctx) > 0) {
        int in = sl__xform_input_ndim(ctx, 0, i);
        if (in < 0)
            return -1;
        if (an && an != in) {
            sl_fail(ctx, SL_EINVAL,
                    "the input transform has %d dimensions, but the arguments describe a "
                    "%d-D transform",
                    in, an);
            return -1;
        }
        return in;
    }
    if (an)
        return an;
    if (!x->default_ndim)
        sl_fail(ctx, SL_EINVAL, "the number of dimensions is not known: %s", x->ndim_hint);
    return x->default_ndim ? x->default_ndim : -1;
}

sl_status sl__xform_setup_sample(sl_ctx *ctx, int i, const sl__xform *x)
{
    int ndim = sample_ndim(ctx, i, x);
    if (ndim < 0)
        return SL_EINVAL;
    int64_t shape[2] = {ndim, ndim + 1};
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

sl_status sl__xform_run_sample(sl_ctx *ctx, int i, const sl__xform *x)
{
    const int ndim = (int)sl_ctx_output_shape(ctx, 0, i)[0];
    double own[SL__XF_MAT * SL__XF_MAT], in[SL__XF_MAT * SL__XF_MAT], out[SL__XF_MAT * SL__XF_MAT];
    for (int r = 0; r <= ndim; r++)
        for (int c = 0; c <= ndim; c++)
            own[r * SL__XF_MAT + c] = r == c ? 1.0 : 0.0;
    sl_status st = x->matrix(ctx, i, ndim, own);
    if (st != SL_OK)
        return st;
    const double *res = own;
    if (sl_ctx_num_inputs(ctx) > 0) {
        sl__xform_read(sl_ctx_input(ctx, 0), i, ndim, in);
        if (sl_ctx_arg_bool(ctx, x->arg_reverse, i))
            sl__xform_mul(ndim, in, own, out);
        else
            sl__xform_mul(ndim, own, in, out);
        res = out;
    }
    sl__xform_write(ndim, res, sl_ctx_output_data(ctx, 0, i));
    return SL_OK;
}
