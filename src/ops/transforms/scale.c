/* transforms.scale: the affine matrix of a scaling (DALI's fn.transforms.scale).
 *
 * Exports: const sl_op_def sl_op_transforms_scale ("transforms.scale", CPU).
 *
 * diag(scale) about `center` (default the origin): [S | c - S c]. The number of dimensions is
 * the length of `scale`; a single value is broadcast, ndim then comes from `center`, `ndim`
 * or the input transform.
 */
#include "ops/transforms/transforms.h"

enum { A_SCALE, A_CENTER, A_NDIM, A_REVERSE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_SCALE] = {.name = "scale",
                 .type = SL_ARG_FLOATS,
                 .doc = "The scale factor of each dimension, or one for all.",
                 .flags = SL_ARG_TENSOR | SL_ARG_SCALAR_OK,
                 .min_len = 1,
                 .max_len = SL__XF_MAX_NDIM},
    [A_CENTER] = {.name = "center",
                  .type = SL_ARG_FLOATS,
                  .doc = "The point the scaling is about (ndim values); unset: the origin.",
                  .flags = SL_ARG_TENSOR | SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK,
                  .min_len = 1,
                  .max_len = SL__XF_MAX_NDIM},
    [A_NDIM] = {.name = "ndim",
                .type = SL_ARG_INT,
                .doc = "Number of dimensions, for when neither scale, center nor an input "
                       "transform tell it (a scalar scale).",
                .flags = SL_ARG_OPTIONAL | SL_ARG_RANGE,
                .min = 1,
                .max = SL__XF_MAX_NDIM},
    [A_REVERSE] = {.name = "reverse_order",
                   .type = SL_ARG_BOOL,
                   .def = "false",
                   .doc = "With an input transform: false applies this scaling after the "
                          "input's (out = S · in), true before it (out = in · S)."},
};

static const sl_io_def inputs[] = {
    {"input", "Optional transform to compose with, (ndim, ndim+1)."}};
static const sl_io_def outputs[] = {{"output", "The affine matrix, float32 (ndim, ndim + 1)."}};

static int arg_ndim(sl_ctx *ctx, int i)
{
    int ns = sl__xform_arg_len(ctx, A_SCALE, i), nc = sl__xform_arg_len(ctx, A_CENTER, i);
    int n = ns > 1 ? ns : nc;
    if (sl_ctx_arg_is_set(ctx, A_NDIM)) {
        int nd = (int)sl_ctx_arg_int(ctx, A_NDIM, i);
        if (n && n != nd) {
            sl_fail(ctx, SL_EINVAL, "ndim is %d, but %s has %d values", nd,
                    ns > 1 ? "scale" : "center", n);
            return -1;
        }
        n = nd;
    }
    if (ns > 1 && nc && nc != ns) {
        sl_fail(ctx, SL_EINVAL, "scale has %d values but center has %d: give one per dimension", ns,
                nc);
        return -1;
    }
    return n;
}

static sl_status matrix(sl_ctx *ctx, int i, int ndim, double *m)
{
    double s[SL__XF_MAX_NDIM], c[SL__XF_MAX_NDIM];
    sl_status st = sl__xform_check_len(ctx, A_SCALE, "scale", i, ndim, true);
    if (st != SL_OK)
        return st;
    int ns = sl_ctx_arg_floats(ctx, A_SCALE, i, s, ndim);
    for (int d = 0; d < ndim; d++)
        m[d * SL__XF_MAT + d] = s[ns == 1 ? 0 : d];
    if (sl_ctx_arg_is_set(ctx, A_CENTER)) {
        if ((st = sl__xform_check_len(ctx, A_CENTER, "center", i, ndim, false)) != SL_OK)
            return st;
        sl_ctx_arg_floats(ctx, A_CENTER, i, c, ndim);
        sl__xform_center(ndim, m, c);
    }
    return SL_OK;
}

static const sl__xform xf = {
    .arg_ndim = arg_ndim,
    .matrix = matrix,
    .arg_reverse = A_REVERSE,
    .ndim_hint = "scale is a single value; give ndim, a center or an input transform",
};

static sl_status setup_sample(sl_ctx *ctx, int i)
{
    return sl__xform_setup_sample(ctx, i, &xf);
}

static sl_status run_sample(sl_ctx *ctx, int i)
{
    return sl__xform_run_sample(ctx, i, &xf);
}

const sl_op_def sl_op_transforms_scale = {
    .name = "transforms.scale",
    .doc = "Produces a scaling affine matrix (DALI's transforms.scale).\n\n"
           "float32 (ndim, ndim + 1): diag(scale) about `center` (default the origin). A single "
           "scale value is used for every dimension; the number of dimensions then comes from "
           "`center`, `ndim` or the input transform. With an input transform the scaling is "
           "applied after it (`reverse_order=True`: before it).",
    .inputs = inputs,
    .min_inputs = 0,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .setup = sl__xform_setup,
    .setup_sample = setup_sample,
    .run_sample = run_sample,
};
