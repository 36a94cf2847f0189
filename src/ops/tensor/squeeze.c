/* squeeze: removes dimensions of extent 1 from every sample (DALI's fn.squeeze).
 *
 * Exports: const sl_op_def sl_op_squeeze ("squeeze", CPU and GPU).
 *
 * The removed dimensions are `axes` (indices, negative from the back; per sample allowed, the
 * same count for every sample) or `axis_names` (letters of the input layout). Each must have
 * extent 1, unless the sample's volume is 0 and stays 0 without it (DALI's rule). The output
 * layout is the input's without the removed letters.
 * Invariant: the data is copied unchanged (DALI passes the input buffer through).
 */
#include <stdio.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/tensor_gpu.h"

#include "ops/tensor/tensor.h"

enum { A_AXES, A_AXIS_NAMES, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_AXES] = {.name = "axes",
                .type = SL_ARG_INTS,
                .def = "[]",
                .doc = "Indices of the dimensions to remove (negative: from the back). Each must "
                       "have extent 1, unless the volume is 0 with and without it.",
                .flags = SL_ARG_SCALAR_OK | SL_ARG_TENSOR,
                .max_len = SL_MAX_NDIM},
    [A_AXIS_NAMES] = {.name = "axis_names",
                      .type = SL_ARG_STRING,
                      .def = "\"\"",
                      .doc = "Layout letters of the dimensions to remove. Exclusive with axes."},
};

static const sl_io_def inputs[] = {{"data", "Data of any type, shape and layout."}};
static const sl_io_def outputs[] = {
    {"output", "The same elements without the removed dimensions."}};

static sl_status squeeze_init(sl_op_init *ini, void **state)
{
    int n;
    sl_init_arg_ints(ini, A_AXES, &n);
    *state = NULL;
    if ((n > 0 || sl_init_arg_is_input(ini, A_AXES)) && *sl_init_arg_str(ini, A_AXIS_NAMES))
        return sl_init_fail(ini, SL_EINVAL, "axes and axis_names are exclusive: give one");
    return SL_OK;
}

/* removed[d] for sample i; returns the count or -1 after sl_fail. */
static int removed_axes(sl_ctx *ctx, int i, bool *removed)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in);
    const char *names = sl_ctx_arg_str(ctx, A_AXIS_NAMES);
    int ax[SL_MAX_NDIM], n;
    char err[256];
    if (*names) {
        n = sl__axes_from_names(names, sl_batch_layout(in), ax, err, sizeof err);
    } else {
        int64_t v[SL_MAX_NDIM + 1];
        n = sl_ctx_arg_ints(ctx, A_AXES, i, v, SL_MAX_NDIM + 1);
        n = n > nd ? (snprintf(err, sizeof err, "%d axes given for %d-D input", n, nd), -1)
                   : sl__axes_from_ints(v, n, nd, ax, err, sizeof err);
    }
    if (n < 0)
        return sl_fail(ctx, SL_EINVAL, "sample %d: %s", i, err), -1;
    memset(removed, 0, sizeof(bool) * SL_MAX_NDIM);
    const int64_t *sh = sl_batch_shape(in, i);
    int64_t vol_after = 1;
    for (int k = 0; k < n; k++)
        removed[ax[k]] = true;
    for (int d = 0; d < nd; d++)
        vol_after *= removed[d] ? 1 : sh[d];
    for (int k = 0; k < n; k++)
        if (sh[ax[k]] != 1 && !(sh[ax[k]] == 0 && vol_after == 0))
            return sl_fail(ctx, SL_EINVAL,
                           "sample %d: cannot squeeze dimension %d of extent %lld (only extents "
                           "of 1 can be removed)",
                           i, ax[k], (long long)sh[ax[k]]),
                   -1;
    return n;
}

static sl_status squeeze_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in), bs = sl_ctx_batch_size(ctx);
    const char *layout = sl_batch_layout(in);
    bool rm[SL_MAX_NDIM] = {false};
    int n0 = -1;
    for (int i = 0; i < bs; i++) { /* pass 1: check every sample, the count must agree */
        int n = removed_axes(ctx, i, rm);
        if (n < 0)
            return SL_EINVAL;
        if (n0 >= 0 && n != n0)
            return sl_fail(ctx, SL_EINVAL,
                           "sample %d removes %d dimensions, sample 0 %d; the samples of a batch "
                           "must keep the same number",
                           i, n, n0);
        n0 = n;
    }
    if (n0 < 0) { /* an empty batch: the constant axes say the dimensionality */
        int64_t v[SL_MAX_NDIM + 1];
        const char *names = sl_ctx_arg_str(ctx, A_AXIS_NAMES);
        n0 = *names ? (int)strlen(names) : sl_ctx_arg_ints(ctx, A_AXES, 0, v, SL_MAX_NDIM + 1);
        n0 = n0 > nd ? nd : n0;
    }
    /* the layout loses the removed letters (those of the last sample: names remove the same
     * axes everywhere; per-sample axes that differ make the letters ambiguous anyway) */
    char out_layout[SL_MAX_NDIM + 1];
    int k = 0;
    const bool has_layout = layout && (int)strlen(layout) == nd && *layout && bs > 0;
    for (int d = 0; d < nd && has_layout; d++)
        if (!rm[d])
            out_layout[k++] = layout[d];
    out_layout[k] = '\0';
    sl_ctx_set_output(ctx, 0, sl_batch_dtype(in), nd - n0, has_layout ? out_layout : NULL);
    for (int i = 0; i < bs; i++) { /* pass 2: the shapes */
        removed_axes(ctx, i, rm);
        const int64_t *sh = sl_batch_shape(in, i);
        int64_t os[SL_MAX_NDIM];
        k = 0;
        for (int d = 0; d < nd; d++)
            if (!rm[d])
                os[k++] = sh[d];
        sl_ctx_set_shape(ctx, 0, i, os);
    }
    return SL_OK;
}

static sl_status squeeze_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    size_t bytes = (size_t)sl_batch_sample_numel(in, i) * sl_dtype_size(sl_batch_dtype(in));
    if (bytes)
        memcpy(sl_ctx_output_data(ctx, 0, i), sl_batch_sample_data(in, i), bytes);
    return SL_OK;
}

const sl_op_def sl_op_squeeze = {
    .name = "squeeze",
    .doc = "Removes dimensions of extent 1 (DALI's squeeze).\n\n"
           "The dimensions are `axes` (indices, negative from the back, per sample allowed) or "
           "`axis_names` (layout letters). Removing a dimension whose extent is not 1 is an error "
           "naming the sample, unless the volume is 0 before and after. The layout loses the "
           "removed letters.\n\n"
           "Differs from DALI: the data is copied (DALI passes the input buffer through).\n\n"
           "`device=\"gpu\"` copies the data on the GPU (one device-to-device copy per batch).",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = squeeze_init,
    .setup = squeeze_setup,
    .run_sample = squeeze_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = sl__copy_run_gpu,
#endif
};
