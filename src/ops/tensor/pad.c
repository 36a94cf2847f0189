/* pad: pads samples at the end of chosen axes with a fill value, to the largest extent in the
 * batch, to a minimum shape and/or to a multiple of an alignment (DALI's fn.pad).
 *
 * Exports: const sl_op_def sl_op_pad ("pad", CPU and GPU).
 *
 * For each padded axis a (the i-th of `axes` / `axis_names`, default all axes) of sample s:
 *   extent = max(in[a], shape[i])           when shape[i] > 0
 *          = max(in[a], largest[a])         otherwise (largest over the batch, before aligning)
 *   extent = ceil(extent / align[i]) * align[i]   (align: one value for all axes, or per axis)
 * Other axes keep their extent. The data sits at the start of every axis; the rest is
 * fill_value (per sample), converted to the input type. Any type and dimensionality.
 * On the GPU the same window copy runs as one kernel for the batch (copy_kernels.cu).
 * Invariant: setup (serial) computes every output shape, since extents depend on the whole
 * batch; run copies with the window kernel (ops/tensor/copy_kernels.c), anchor 0.
 */
#include "sluice/op.h"

#include "ops/tensor/tensor.h"
#include "ops/tensor/tensor_gpu.h"

enum { A_FILL_VALUE, A_AXES, A_AXIS_NAMES, A_ALIGN, A_SHAPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_FILL_VALUE] = {.name = "fill_value",
                      .type = SL_ARG_FLOAT,
                      .def = "0.0",
                      .doc = "Value of the padding, converted to the input type.",
                      .flags = SL_ARG_TENSOR},
    [A_AXES] = {.name = "axes",
                .type = SL_ARG_INTS,
                .doc = "Indices of the padded axes (negative: from the back). Exclusive with "
                       "axis_names. Unset or empty (and no axis_names): all axes.",
                .flags = SL_ARG_OPTIONAL,
                .max_len = SL_MAX_NDIM},
    [A_AXIS_NAMES] = {.name = "axis_names",
                      .type = SL_ARG_STRING,
                      .doc = "Letters of the padded axes in the input layout (\"HW\"). Exclusive "
                             "with axes.",
                      .flags = SL_ARG_OPTIONAL},
    [A_ALIGN] = {.name = "align",
                 .type = SL_ARG_INTS,
                 .doc = "Padded extents are rounded up to a multiple of this: one value for all "
                        "padded axes or one per axis; values > 0.",
                 .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR | SL_ARG_SCALAR_OK,
                 .max_len = SL_MAX_NDIM},
    [A_SHAPE] = {.name = "shape",
                 .type = SL_ARG_INTS,
                 .doc = "Minimum extents of the padded axes, one per axis; -1 (or 0): pad to the "
                        "largest extent in the batch. A larger sample is not cropped. Use 1 with "
                        "align to only align.",
                 .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR,
                 .max_len = SL_MAX_NDIM},
};

static const sl_io_def inputs[] = {{"input", "Data of any type, shape and layout."}};
static const sl_io_def outputs[] = {{"output", "The padded data, same type and layout."}};

static sl_status pad_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    if (sl_init_arg_is_set(ini, A_AXES) && sl_init_arg_is_set(ini, A_AXIS_NAMES))
        return sl_init_fail(ini, SL_EINVAL, "axes and axis_names are exclusive: give one of them");
    return SL_OK;
}

/* Reads sample i's `shape` and `align` for n axes (shape -1 and align 1 when unset). */
static sl_status read_req(sl_ctx *ctx, int i, int n, int64_t *shape, int64_t *align)
{
    for (int k = 0; k < n; k++)
        shape[k] = -1, align[k] = 1;
    if (sl_ctx_arg_is_set(ctx, A_SHAPE)) {
        int m = sl_ctx_arg_ints(ctx, A_SHAPE, i, shape, n);
        if (m != n)
            return sl_fail(ctx, SL_EINVAL, "shape has %d values; expected %d (one per padded axis)",
                           m, n);
    }
    if (sl_ctx_arg_is_set(ctx, A_ALIGN)) {
        int m = sl_ctx_arg_ints(ctx, A_ALIGN, i, align, n);
        if (m != 1 && m != n)
            return sl_fail(ctx, SL_EINVAL,
                           "align has %d values; expected 1 or %d (one per padded axis)", m, n);
        for (int k = 0; k < n; k++) {
            align[k] = align[m == 1 ? 0 : k];
            if (align[k] <= 0)
                return sl_fail(ctx, SL_EINVAL,
                               "Values of `align` argument must be positive, got "
                               "%lld",
                               (long long)align[k]);
        }
    }
    return SL_OK;
}

static sl_status pad_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int ndim = sl_batch_ndim(in), nb = sl_ctx_batch_size(ctx);
    int axes[SL_MAX_NDIM];
    int n = sl__axes_get(ctx, A_AXES, A_AXIS_NAMES, ndim, sl_batch_layout(in), axes);
    if (n < 0)
        return SL_EINVAL;

    int64_t largest[SL_MAX_NDIM] = {0};
    for (int i = 0; i < nb; i++)
        for (int d = 0; d < ndim; d++)
            if (sl_batch_shape(in, i)[d] > largest[d])
                largest[d] = sl_batch_shape(in, i)[d];

    sl_ctx_set_output(ctx, 0, sl_batch_dtype(in), ndim, sl_batch_layout(in));
    for (int i = 0; i < nb; i++) {
        int64_t shape[SL_MAX_NDIM], req[SL_MAX_NDIM], align[SL_MAX_NDIM];
        sl_status st = read_req(ctx, i, n, req, align);
        if (st != SL_OK)
            return st;
        for (int d = 0; d < ndim; d++)
            shape[d] = sl_batch_shape(in, i)[d];
        for (int k = 0; k < n; k++) {
            int64_t *e = &shape[axes[k]];
            int64_t want = req[k] > 0 ? req[k] : largest[axes[k]];
            *e = want > *e ? want : *e;
            if (*e % align[k])
                *e += align[k] - *e % align[k];
        }
        sl_ctx_set_shape(ctx, 0, i, shape);
    }
    return SL_OK;
}

static sl_status pad_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t anchor[SL_MAX_NDIM] = {0};
    sl__window_job job = {.ndim = sl_batch_ndim(in),
                          .in_shape = sl_batch_shape(in, i),
                          .anchor = anchor,
                          .out_shape = sl_ctx_output_shape(ctx, 0, i),
                          .in = sl_batch_sample_data(in, i),
                          .in_type = sl_batch_dtype(in),
                          .out = sl_ctx_output_data(ctx, 0, i),
                          .out_type = sl_batch_dtype(in),
                          .nfill = 1,
                          .fill_axis = -1};
    unsigned char *scratch = sl_ctx_scratch(ctx, 64 + sl__window_scratch_bytes(&job));
    if (!scratch)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for a padded row");
    sl__convert_scalar(job.out_type, sl_ctx_arg_float(ctx, A_FILL_VALUE, i), scratch);
    job.fill = scratch;
    sl__window_copy(&job, scratch + 64);
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* Every sample a window at anchor 0 of its output shape; fill value i is sample i's. */
static sl_status pad_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx), ndim = sl_batch_ndim(in);
    const sl_dtype t = sl_batch_dtype(in);
    const int64_t anchor[SL_MAX_NDIM] = {0};
    sl__gwin *w = sl_ctx_scratch_n(ctx, 0, sizeof(sl__gwin) * (size_t)(n > 0 ? n : 1));
    unsigned char *fill = sl_ctx_scratch_n(ctx, 1, 8 * (size_t)(n > 0 ? n : 1));
    if (!w || !fill)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    for (int i = 0; i < n; i++) {
        sl__gwin_plan(&w[i], ndim, sl_batch_shape(in, i), anchor, sl_ctx_output_shape(ctx, 0, i),
                      -1);
        w[i].in = sl_batch_sample_data(in, i);
        w[i].out = sl_ctx_output_data(ctx, 0, i);
        w[i].fill = i;
        sl__convert_scalar(t, sl_ctx_arg_float(ctx, A_FILL_VALUE, i),
                           fill + (size_t)i * sl_dtype_size(t));
    }
    return sl__gpu_window(ctx, w, n, t, t, fill, (size_t)(n > 0 ? n : 1) * sl_dtype_size(t));
}
#endif

const sl_op_def sl_op_pad = {
    .name = "pad",
    .doc = "Pads samples with a fill value to the largest extent in the batch, a minimum shape "
           "or an alignment (DALI's pad).\n\n"
           "On each padded axis (`axes` or `axis_names`; default: all) the extent becomes the "
           "largest extent of that axis in the batch, or `shape[i]` when that is positive (never "
           "smaller than the sample: pad does not crop), then is rounded up to a multiple of "
           "`align` (one value or one per axis). Data stays at the start; the rest is "
           "`fill_value` converted to the input type. Any type and number of dimensions.\n\n"
           "`device=\"gpu\"` pads on the GPU (one kernel per batch) with the same results.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = pad_init,
    .setup = pad_setup,
    .run_sample = pad_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = pad_run_gpu,
#endif
};
