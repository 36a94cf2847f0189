/* transforms.shear: the affine matrix of a shear (DALI's fn.transforms.shear).
 *
 * Exports: const sl_op_def sl_op_transforms_shear ("transforms.shear", CPU).
 *
 * `shear` (or `angles`, whose tangents are the factors) gives the off-diagonal entries: 2-D
 * [sxy, syx] -> [[1, sxy], [syx, 1]]; 3-D [sxy, sxz, syx, syz, szx, szy] -> [[1, sxy, sxz],
 * [syx, 1, syz], [szx, szy, 1]]. About `center` when given.
 */
#include <math.h>

#include "ops/transforms/transforms.h"

enum { A_SHEAR, A_ANGLES, A_CENTER, A_REVERSE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_SHEAR] = {.name = "shear",
                 .type = SL_ARG_FLOATS,
                 .doc = "Shear factors: [sxy, syx] (2-D) or [sxy, sxz, syx, syz, szx, szy] "
                        "(3-D). Exclusive with angles.",
                 .flags = SL_ARG_TENSOR | SL_ARG_OPTIONAL,
                 .min_len = 2,
                 .max_len = 6},
    [A_ANGLES] = {.name = "angles",
                  .type = SL_ARG_FLOATS,
                  .doc = "Shear angles in degrees, in (-90, 90), in the order of shear; the "
                         "factors are their tangents. Exclusive with shear.",
                  .flags = SL_ARG_TENSOR | SL_ARG_OPTIONAL,
                  .min_len = 2,
                  .max_len = 6},
    [A_CENTER] = {.name = "center",
                  .type = SL_ARG_FLOATS,
                  .doc = "The point the shear is about (2 or 3 values); unset: the origin.",
                  .flags = SL_ARG_TENSOR | SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK,
                  .min_len = 1,
                  .max_len = 3},
    [A_REVERSE] = {.name = "reverse_order",
                   .type = SL_ARG_BOOL,
                   .def = "false",
                   .doc = "With an input transform: false applies this shear after the "
                          "input's (out = S · in), true before it (out = in · S)."},
};

static const sl_io_def inputs[] = {
    {"input", "Optional transform to compose with, (ndim, ndim+1)."}};
static const sl_io_def outputs[] = {{"output", "The affine matrix, float32 (ndim, ndim + 1)."}};

static int arg_ndim(sl_ctx *ctx, int i)
{
    bool sh = sl_ctx_arg_is_set(ctx, A_SHEAR), an = sl_ctx_arg_is_set(ctx, A_ANGLES);
    if (sh == an) {
        sl_fail(ctx, SL_EINVAL,
                sh ? "shear and angles are exclusive: give one of them"
                   : "give either shear or angles");
        return -1;
    }
    int n = sl__xform_arg_len(ctx, sh ? A_SHEAR : A_ANGLES, i);
    if (n != 2 && n != 6) {
        sl_fail(ctx, SL_EINVAL, "%s has %d values: give 2 (2-D) or 6 (3-D)",
                sh ? "shear" : "angles", n);
        return -1;
    }
    return n == 2 ? 2 : 3;
}

static sl_status matrix(sl_ctx *ctx, int i, int ndim, double *m)
{
    double v[6];
    bool angles = sl_ctx_arg_is_set(ctx, A_ANGLES);
    int n = sl_ctx_arg_floats(ctx, angles ? A_ANGLES : A_SHEAR, i, v, 6);
    if (n != ndim * (ndim - 1))
        return sl_fail(ctx, SL_EINVAL, "%s has %d values, but the transform is %d-D (needs %d)",
                       angles ? "angles" : "shear", n, ndim, ndim * (ndim - 1));
    for (int k = 0; k < n && angles; k++) {
        if (!(v[k] > -90 && v[k] < 90))
            return sl_fail(ctx, SL_EINVAL, "angles[%d] is %g: shear angles must be in (-90, 90)", k,
                           v[k]);
        v[k] = tan(v[k] * (M_PI / 180.0));
    }
    int k = 0;
    for (int r = 0; r < ndim; r++)
        for (int c = 0; c < ndim; c++)
            if (r != c)
                m[r * SL__XF_MAT + c] = v[k++];
    if (sl_ctx_arg_is_set(ctx, A_CENTER)) {
        double ctr[3];
        sl_status st = sl__xform_check_len(ctx, A_CENTER, "center", i, ndim, false);
        if (st != SL_OK)
            return st;
        sl_ctx_arg_floats(ctx, A_CENTER, i, ctr, ndim);
        sl__xform_center(ndim, m, ctr);
    }
    return SL_OK;
}

static const sl__xform xf = {.arg_ndim = arg_ndim, .matrix = matrix, .arg_reverse = A_REVERSE};

static sl_status setup_sample(sl_ctx *ctx, int i)
{
    return sl__xform_setup_sample(ctx, i, &xf);
}

static sl_status run_sample(sl_ctx *ctx, int i)
{
    return sl__xform_run_sample(ctx, i, &xf);
}

const sl_op_def sl_op_transforms_shear = {
    .name = "transforms.shear",
    .doc = "Produces a shear affine matrix (DALI's transforms.shear).\n\n"
           "`shear` factors, or `angles` in degrees (factors = tan(angles)): 2 values for 2-D, 6 "
           "for 3-D (sxy, sxz, syx, syz, szx, szy). About `center` when given. float32 (ndim, "
           "ndim + 1). With an input transform the shear is applied after it "
           "(`reverse_order=True`: before it).",
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
