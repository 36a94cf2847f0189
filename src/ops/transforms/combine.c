/* transforms.combine: the composition of several affine matrices (DALI's
 * fn.transforms.combine).
 *
 * Exports: const sl_op_def sl_op_transforms_combine ("transforms.combine", CPU).
 *
 * Inputs T0, T1, ..., Tn (each (ndim, ndim + 1), the same ndim per sample) give
 * Tn · ... · T1 · T0: T0 is applied first. `reverse_order` gives T0 · T1 · ... · Tn.
 */
#include <string.h>

#include "ops/transforms/transforms.h"

enum { A_REVERSE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_REVERSE] = {.name = "reverse_order",
                   .type = SL_ARG_BOOL,
                   .def = "false",
                   .doc = "false: the first input is applied first (out = Tn ... T1 T0); true: "
                          "the last one is (out = T0 T1 ... Tn)."},
};

static const sl_io_def inputs[] = {
    {"input0", "The transform applied first (without reverse_order), (ndim, ndim + 1)."},
    {"input1", "The next transforms, each (ndim, ndim + 1), the same ndim."},
};
static const sl_io_def outputs[] = {{"output", "The affine matrix, float32 (ndim, ndim + 1)."}};

static sl_status setup_sample(sl_ctx *ctx, int i)
{
    int ndim = 0;
    for (int k = 0; k < sl_ctx_num_inputs(ctx); k++) {
        int n = sl__xform_input_ndim(ctx, k, i);
        if (n < 0)
            return SL_EINVAL;
        if (k && n != ndim)
            return sl_fail(ctx, SL_EINVAL,
                           "input %d is a %d-D transform, but input 0 is %d-D: all must have "
                           "the same number of dimensions",
                           k, n, ndim);
        ndim = n;
    }
    int64_t shape[2] = {ndim, ndim + 1};
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

static sl_status run_sample(sl_ctx *ctx, int i)
{
    const int ndim = (int)sl_ctx_output_shape(ctx, 0, i)[0];
    const bool reverse = sl_ctx_arg_bool(ctx, A_REVERSE, i);
    double acc[SL__XF_MAT * SL__XF_MAT], m[SL__XF_MAT * SL__XF_MAT], t[SL__XF_MAT * SL__XF_MAT];
    sl__xform_read(sl_ctx_input(ctx, 0), i, ndim, acc);
    for (int k = 1; k < sl_ctx_num_inputs(ctx); k++) {
        sl__xform_read(sl_ctx_input(ctx, k), i, ndim, m);
        if (reverse)
            sl__xform_mul(ndim, acc, m, t);
        else
            sl__xform_mul(ndim, m, acc, t);
        memcpy(acc, t, sizeof t);
    }
    sl__xform_write(ndim, acc, sl_ctx_output_data(ctx, 0, i));
    return SL_OK;
}

const sl_op_def sl_op_transforms_combine = {
    .name = "transforms.combine",
    .doc = "Combines affine transform matrices into one (DALI's transforms.combine).\n\n"
           "Inputs T0, T1, ... (two or more, each float (ndim, ndim + 1)) give Tn ... T1 T0: the "
           "first input's transform is applied first; `reverse_order=True` gives T0 T1 ... Tn. "
           "float32 (ndim, ndim + 1).",
    .inputs = inputs,
    .min_inputs = 2,
    .max_inputs = SL_INPUTS_ANY,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .setup = sl__xform_setup,
    .setup_sample = setup_sample,
    .run_sample = run_sample,
};
