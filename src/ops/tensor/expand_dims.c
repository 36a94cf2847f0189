/* expand_dims: inserts dimensions of extent 1 into every sample (DALI's fn.expand_dims).
 *
 * Exports: const sl_op_def sl_op_expand_dims ("expand_dims", CPU and GPU).
 *
 * `axes` are indices in the OUTPUT (0 .. ndim + len(axes) - 1, none negative, none twice);
 * the input's dimensions fill the other places in order. `new_axis_names` names the new
 * dimensions, in the order of `axes` ("AB" with axes [4, 3] on "XYZ" gives "XYZBA"); it needs
 * an input with a layout (or a 0-d input). Without it the output has no layout, unless no axis
 * is added (the input layout is kept), as DALI does.
 * Invariant: the data is copied unchanged (sluice outputs own their storage; DALI shares the
 * input buffer).
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/tensor_gpu.h"

enum { A_AXES, A_NEW_AXIS_NAMES, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_AXES] = {.name = "axes",
                .type = SL_ARG_INTS,
                .doc = "Indices, in the output, of the new dimensions of extent 1.",
                .flags = SL_ARG_SCALAR_OK,
                .max_len = SL_MAX_NDIM},
    [A_NEW_AXIS_NAMES] = {.name = "new_axis_names",
                          .type = SL_ARG_STRING,
                          .def = "\"\"",
                          .doc = "Layout letters of the new dimensions, one per entry of axes, in "
                                 "the same order. \"\": the output has no layout (unless axes is "
                                 "empty)."},
};

static const sl_io_def inputs[] = {{"data", "Data of any type, shape and layout."}};
static const sl_io_def outputs[] = {{"output", "The same elements with the added dimensions."}};

static sl_status expand_dims_init(sl_op_init *ini, void **state)
{
    int n;
    const int64_t *ax = sl_init_arg_ints(ini, A_AXES, &n);
    const char *names = sl_init_arg_str(ini, A_NEW_AXIS_NAMES);
    *state = NULL;
    for (int k = 0; k < n; k++) {
        if (ax[k] < 0)
            return sl_init_fail(ini, SL_EINVAL, "Axis value can't be negative: axes[%d] is %lld", k,
                                (long long)ax[k]);
        for (int j = 0; j < k; j++)
            if (ax[j] == ax[k])
                return sl_init_fail(ini, SL_EINVAL, "axis %lld is given twice", (long long)ax[k]);
    }
    if (*names && (int)strlen(names) != n)
        return sl_init_fail(ini, SL_EINVAL,
                            "Specified %d new dimensions, but layout contains only %d new "
                            "dimension names (new_axis_names \"%s\")",
                            n, (int)strlen(names), names);
    return SL_OK;
}

static sl_status expand_dims_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in);
    int64_t ax[SL_MAX_NDIM];
    const int n = sl_ctx_arg_ints(ctx, A_AXES, 0, ax, SL_MAX_NDIM);
    const int ond = nd + n;
    const char *layout = sl_batch_layout(in), *names = sl_ctx_arg_str(ctx, A_NEW_AXIS_NAMES);
    const bool has_layout = layout && (int)strlen(layout) == nd && (nd == 0 || *layout);
    if (ond > SL_MAX_NDIM)
        return sl_fail(ctx, SL_EINVAL, "the output would have %d dimensions; at most %d", ond,
                       SL_MAX_NDIM);
    int newpos[SL_MAX_NDIM]; /* output dimension -> index in axes, or -1 */
    for (int d = 0; d < ond; d++)
        newpos[d] = -1;
    for (int k = 0; k < n; k++) {
        if (ax[k] >= ond)
            return sl_fail(ctx, SL_EINVAL,
                           "Data has not enough dimensions to add new axes at specified indices: "
                           "axis %lld with %d-D input and %d new axes",
                           (long long)ax[k], nd, n);
        newpos[ax[k]] = k;
    }
    if (*names && !has_layout)
        return sl_fail(ctx, SL_EINVAL,
                       "Specifying ``new_axis_names`` requires an input with a proper layout; the "
                       "input's is \"%s\"",
                       layout ? layout : "");
    char out_layout[SL_MAX_NDIM + 1] = "";
    const char *ol = n == 0 ? layout : NULL;
    if (n > 0 && *names) {
        for (int d = 0, j = 0; d < ond; d++)
            out_layout[d] = newpos[d] >= 0 ? names[newpos[d]] : layout[j++];
        out_layout[ond] = '\0';
        ol = out_layout;
    }
    sl_ctx_set_output(ctx, 0, sl_batch_dtype(in), ond, ol);
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++) {
        const int64_t *sh = sl_batch_shape(in, i);
        int64_t os[SL_MAX_NDIM];
        for (int d = 0, j = 0; d < ond; d++)
            os[d] = newpos[d] >= 0 ? 1 : sh[j++];
        sl_ctx_set_shape(ctx, 0, i, os);
    }
    return SL_OK;
}

static sl_status expand_dims_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    size_t bytes = (size_t)sl_batch_sample_numel(in, i) * sl_dtype_size(sl_batch_dtype(in));
    if (bytes)
        memcpy(sl_ctx_output_data(ctx, 0, i), sl_batch_sample_data(in, i), bytes);
    return SL_OK;
}

const sl_op_def sl_op_expand_dims = {
    .name = "expand_dims",
    .doc = "Inserts dimensions of extent 1 (DALI's expand_dims).\n\n"
           "`axes` are positions in the output; the input's dimensions keep their order in the "
           "remaining places. `new_axis_names` gives the new dimensions' layout letters (in the "
           "order of `axes`); without it the output has no layout unless no axis is added.\n\n"
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
    .init = expand_dims_init,
    .setup = expand_dims_setup,
    .run_sample = expand_dims_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = sl__copy_run_gpu,
#endif
};
