/* transforms.translation: the affine matrix of a translation (DALI's fn.transforms.translation).
 *
 * Exports: const sl_op_def sl_op_transforms_translation ("transforms.translation", CPU).
 *
 * `offset` (ndim values, per sample allowed) becomes [I | offset], shape (ndim, ndim + 1),
 * float32; with an input transform the two are composed (transforms.h).
 */
#include "ops/transforms/transforms.h"

enum { A_OFFSET, A_REVERSE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_OFFSET] = {.name = "offset",
                  .type = SL_ARG_FLOATS,
                  .doc = "The translation vector; its length is the number of dimensions.",
                  .flags = SL_ARG_TENSOR | SL_ARG_SCALAR_OK,
                  .min_len = 1,
                  .max_len = SL__XF_MAX_NDIM},
    [A_REVERSE] = {.name = "reverse_order",
                   .type = SL_ARG_BOOL,
                   .def = "false",
                   .doc = "With an input transform: false applies this translation after the "
                          "input's (out = T · in), true before it (out = in · T)."},
};

static const sl_io_def inputs[] = {
    {"input", "Optional transform to compose with, (ndim, ndim+1)."}};
static const sl_io_def outputs[] = {{"output", "The affine matrix, float32 (ndim, ndim + 1)."}};

static int arg_ndim(sl_ctx *ctx, int i)
{
    return sl__xform_arg_len(ctx, A_OFFSET, i);
}

static sl_status matrix(sl_ctx *ctx, int i, int ndim, double *m)
{
    double off[SL__XF_MAX_NDIM];
    sl_status st = sl__xform_check_len(ctx, A_OFFSET, "offset", i, ndim, false);
    if (st != SL_OK)
        return st;
    sl_ctx_arg_floats(ctx, A_OFFSET, i, off, ndim);
    for (int d = 0; d < ndim; d++)
        m[d * SL__XF_MAT + ndim] = off[d];
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

const sl_op_def sl_op_transforms_translation = {
    .name = "transforms.translation",
    .doc = "Produces a translation affine matrix (DALI's transforms.translation).\n\n"
           "The output, float32 of shape (ndim, ndim + 1), is [I | offset]; feed it to "
           "coord_transform (MT) or warp_affine. With an input transform the translation is "
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
