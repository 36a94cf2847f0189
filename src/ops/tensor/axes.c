/* ops/tensor/axes.c: axis lists, layouts, out-of-bounds policies and fill values shared by the
 * tensor and image operators.
 *
 * Exports (ops/tensor/tensor.h): sl__axes_from_ints, sl__axes_from_names, sl__axes_get,
 * sl__layout_find,
 * sl__oob_parse, sl__oob_apply, sl__shape_str, sl__fill_read.
 * Invariant: pure functions of their arguments (sl__axes_get and sl__fill_read read the op's
 * arguments); only sl__axes_get reports through the context (sl_fail).
 */
#include <stdio.h>
#include <string.h>

#include "ops/tensor/tensor.h"

int sl__axes_from_ints(const int64_t *axes, int n, int ndim, int *out, char *err, size_t errlen)
{
    for (int k = 0; k < n; k++) {
        int64_t a = axes[k];
        if (a < -ndim || a >= ndim) {
            snprintf(err, errlen, "axis %lld is out of range for %d-D input (valid: %d..%d)",
                     (long long)a, ndim, -ndim, ndim - 1);
            return -1;
        }
        out[k] = (int)(a < 0 ? a + ndim : a);
        for (int j = 0; j < k; j++) {
            if (out[j] == out[k]) {
                snprintf(err, errlen, "axis %d is given twice", out[k]);
                return -1;
            }
        }
    }
    return n;
}

int sl__layout_find(const char *layout, char c)
{
    const char *p = layout ? strchr(layout, c) : NULL;
    return p && c ? (int)(p - layout) : -1;
}

int sl__axes_from_names(const char *names, const char *layout, int *out, char *err, size_t errlen)
{
    int n = (int)strlen(names);
    if (n > SL_MAX_NDIM) {
        snprintf(err, errlen, "axis_names \"%s\" names more than %d axes", names, SL_MAX_NDIM);
        return -1;
    }
    for (int k = 0; k < n; k++) {
        int a = sl__layout_find(layout, names[k]);
        if (a < 0) {
            snprintf(err, errlen,
                     "axis '%c' of axis_names \"%s\" is not in the input layout \"%s\"", names[k],
                     names, layout ? layout : "");
            return -1;
        }
        out[k] = a;
        for (int j = 0; j < k; j++) {
            if (out[j] == a) {
                snprintf(err, errlen, "axis '%c' is named twice in axis_names \"%s\"", names[k],
                         names);
                return -1;
            }
        }
    }
    return n;
}

int sl__axes_get(sl_ctx *ctx, int axes_arg, int names_arg, int ndim, const char *layout, int *out)
{
    char err[256];
    int n = 0;
    if (names_arg >= 0 && sl_ctx_arg_is_set(ctx, names_arg)) {
        n = sl__axes_from_names(sl_ctx_arg_str(ctx, names_arg), layout, out, err, sizeof err);
    } else if (axes_arg >= 0 && sl_ctx_arg_is_set(ctx, axes_arg)) {
        int64_t v[SL_MAX_NDIM];
        n = sl_ctx_arg_ints(ctx, axes_arg, 0, v, SL_MAX_NDIM);
        if (n > ndim) {
            snprintf(err, sizeof err, "axes has %d values but the input has %d dimensions", n,
                     ndim);
            n = -1;
        } else {
            n = sl__axes_from_ints(v, n, ndim, out, err, sizeof err);
        }
    }
    if (n < 0)
        return sl_fail(ctx, SL_EINVAL, "%s", err), -1;
    if (n == 0) /* none given, or an empty list: all axes (DALI) */
        for (n = 0; n < ndim; n++)
            out[n] = n;
    return n;
}

sl__oob sl__oob_parse(const char *s)
{
    if (s && !strcmp(s, "pad"))
        return SL__OOB_PAD;
    if (s && !strcmp(s, "trim_to_shape"))
        return SL__OOB_TRIM;
    return SL__OOB_ERROR;
}

bool sl__oob_apply(sl__oob policy, int ndim, const int64_t *in_shape, int64_t *anchor,
                   int64_t *shape)
{
    bool inside = true;
    for (int d = 0; d < ndim; d++)
        inside &= anchor[d] >= 0 && anchor[d] + shape[d] <= in_shape[d];
    if (inside || policy == SL__OOB_PAD)
        return true;
    if (policy == SL__OOB_ERROR)
        return false;
    for (int d = 0; d < ndim; d++) {
        int64_t a = anchor[d], e = anchor[d] + shape[d];
        a = a < 0 ? 0 : a > in_shape[d] ? in_shape[d] : a;
        e = e < a ? a : e > in_shape[d] ? in_shape[d] : e;
        anchor[d] = a;
        shape[d] = e - a;
    }
    return true;
}

char *sl__shape_str(char *buf, size_t len, const int64_t *shape, int ndim)
{
    size_t n = 0;
    buf[0] = '\0';
    n += (size_t)snprintf(buf, len, "(");
    for (int d = 0; d < ndim && n < len; d++)
        n += (size_t)snprintf(buf + n, len - n, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (n < len)
        snprintf(buf + n, len - n, ")");
    return buf;
}

int sl__fill_read(sl_ctx *ctx, int arg, int i, sl_dtype t, void *out, int max)
{
    double v[SL__MAX_FILL];
    int n = sl_ctx_arg_floats(ctx, arg, i, v, SL__MAX_FILL);
    size_t es = sl_dtype_size(t);
    for (int k = 0; k < n && k < max && k < SL__MAX_FILL; k++)
        sl__convert_scalar(t, v[k], (unsigned char *)out + (size_t)k * es);
    return n;
}
