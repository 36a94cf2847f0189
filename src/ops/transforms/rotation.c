/* transforms.rotation: the affine matrix of a rotation (DALI's fn.transforms.rotation).
 *
 * Exports: const sl_op_def sl_op_transforms_rotation ("transforms.rotation", CPU).
 *
 * 2-D (no `axis`): [[cos a, -sin a], [sin a, cos a]], counter-clockwise for a positive `angle`
 * in degrees (with y down, as in images, it turns clockwise on screen). 3-D (`axis` given,
 * normalised here): Rodrigues' formula R = cos a I + sin a [k]x + (1 - cos a) k k^T. About
 * `center` when given: [R | c - R c].
 */
#include <math.h>

#include "ops/transforms/transforms.h"

enum { A_ANGLE, A_AXIS, A_CENTER, A_REVERSE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_ANGLE] = {.name = "angle",
                 .type = SL_ARG_FLOAT,
                 .doc = "Angle of the rotation, in degrees.",
                 .flags = SL_ARG_TENSOR},
    [A_AXIS] = {.name = "axis",
                .type = SL_ARG_FLOATS,
                .doc = "Axis of a 3-D rotation (3 values, any length but 0); unset: a 2-D "
                       "rotation.",
                .flags = SL_ARG_TENSOR | SL_ARG_OPTIONAL,
                .min_len = 3,
                .max_len = 3},
    [A_CENTER] = {.name = "center",
                  .type = SL_ARG_FLOATS,
                  .doc = "The point the rotation is about (2 or 3 values); unset: the origin.",
                  .flags = SL_ARG_TENSOR | SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK,
                  .min_len = 1,
                  .max_len = 3},
    [A_REVERSE] = {.name = "reverse_order",
                   .type = SL_ARG_BOOL,
                   .def = "false",
                   .doc = "With an input transform: false applies this rotation after the "
                          "input's (out = R · in), true before it (out = in · R)."},
};

static const sl_io_def inputs[] = {
    {"input", "Optional transform to compose with, (ndim, ndim+1)."}};
static const sl_io_def outputs[] = {{"output", "The affine matrix, float32 (ndim, ndim + 1)."}};

static int arg_ndim(sl_ctx *ctx, int i)
{
    (void)i;
    return sl_ctx_arg_is_set(ctx, A_AXIS) ? 3 : 2;
}

static sl_status matrix(sl_ctx *ctx, int i, int ndim, double *m)
{
    const double a = sl_ctx_arg_float(ctx, A_ANGLE, i) * (M_PI / 180.0);
    const double c = cos(a), s = sin(a);
    if (ndim == 2) {
        m[0] = c;
        m[1] = -s;
        m[SL__XF_MAT] = s;
        m[SL__XF_MAT + 1] = c;
    } else {
        double k[3];
        sl_ctx_arg_floats(ctx, A_AXIS, i, k, 3);
        double norm = sqrt(k[0] * k[0] + k[1] * k[1] + k[2] * k[2]);
        if (!(norm > 0) || !isfinite(norm))
            return sl_fail(ctx, SL_EINVAL, "axis (%g, %g, %g) has no direction", k[0], k[1], k[2]);
        for (int d = 0; d < 3; d++)
            k[d] /= norm;
        const double cross[3][3] = {{0, -k[2], k[1]}, {k[2], 0, -k[0]}, {-k[1], k[0], 0}};
        for (int r = 0; r < 3; r++)
            for (int q = 0; q < 3; q++)
                m[r * SL__XF_MAT + q] =
                    (r == q ? c : 0.0) + s * cross[r][q] + (1 - c) * k[r] * k[q];
    }
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

const sl_op_def sl_op_transforms_rotation = {
    .name = "transforms.rotation",
    .doc = "Produces a rotation affine matrix (DALI's transforms.rotation).\n\n"
           "`angle` in degrees; 2-D unless `axis` is given (3-D, about that axis, right-handed). "
           "About `center` when given. float32 (ndim, ndim + 1). With an input transform the "
           "rotation is applied after it (`reverse_order=True`: before it).",
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
