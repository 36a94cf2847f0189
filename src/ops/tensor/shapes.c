/* shapes: the shape of each sample as data (DALI's fn.shapes, and what DataNode.shape() records).
 *
 * Exports: const sl_op_def sl_op_shapes ("shapes", CPU and GPU).
 *
 * Sample i of the output is a 1-D tensor of ndim values, the extents of input sample i
 * (outermost first), converted to `dtype` (int64 by default) with cast's rules (a float16
 * extent past 2048 rounds; an integer type too small saturates). A 0-d sample gives an empty
 * tensor. It reads its input's metadata only (SL_OP_METADATA), so on the CPU it also takes GPU
 * data without copying it to the host: `images.shape()` after a mixed decoder costs nothing.
 * On device "gpu" (DALI's gpu backend: fn.shapes of GPU data without a device) the output is
 * GPU data: the extents are converted on the host, uploaded and copied into the output batch.
 * DALI's older name of dtype, `type`, is accepted (a deprecated alias).
 * Invariant: setup declares ndim-long outputs; run_sample converts the ndim extents and cannot
 * fail.
 */
#include "sluice/op.h"

#include "ops/tensor/tensor.h"
#ifdef SLUICE_HAVE_CUDA
#include "ops/tensor/tensor_gpu.h"
#endif

enum { A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .def = "\"int64\"",
                 .doc = "Type of the output values: any numeric type (int64 by default, as DALI)."},
};

/* DALI renamed `type` to `dtype` (0.27) and still takes the old name. */
static const sl_arg_alias aliases[] = {{"type", "dtype", NULL}};

static const sl_io_def inputs[] = {{"input", "Data of any type, shape, layout and device; only its "
                                             "shape is read."}};
static const sl_io_def outputs[] = {{"output", "Per sample, a 1-D tensor of the input's extents."}};

static sl_status shapes_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    sl_dtype t = sl_ctx_arg_dtype(ctx, A_DTYPE);
    if (t == SL_DTYPE_BOOL || !sl__convert_get(t, SL_DTYPE_INT64))
        return sl_fail(ctx, SL_EINVAL, "dtype %s: the extents need a numeric type",
                       sl_dtype_name(t));
    const int64_t ndim = sl_batch_ndim(in);
    sl_ctx_set_output(ctx, 0, t, 1, "");
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        sl_ctx_set_shape(ctx, 0, i, &ndim);
    return SL_OK;
}

static sl_status shapes_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    sl__convert_fn cv = sl__convert_get(sl_ctx_arg_dtype(ctx, A_DTYPE), SL_DTYPE_INT64);
    cv(sl_ctx_output_data(ctx, 0, i), sl_batch_shape(in, i), sl_batch_ndim(in));
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* The extents of every sample, converted on the host (run_sample's conversion) into one upload,
 * then one device copy: the output's samples lie back to back, ndim values each. */
static sl_status shapes_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx), nd = sl_batch_ndim(in);
    const sl_dtype t = sl_ctx_arg_dtype(ctx, A_DTYPE);
    const size_t bytes = (size_t)n * (size_t)nd * sl_dtype_size(t);
    if (bytes == 0)
        return SL_OK;
    unsigned char *host = sl_ctx_scratch(ctx, bytes);
    if (!host)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' shapes", n);
    sl__convert_fn cv = sl__convert_get(t, SL_DTYPE_INT64);
    for (int i = 0; i < n; i++)
        cv(host + (size_t)i * (size_t)nd * sl_dtype_size(t), sl_batch_shape(in, i), nd);
    const void *dev = sl_ctx_gpu_upload(ctx, 0, host, bytes);
    if (!dev)
        return SL_ENOMEM; /* recorded by the upload */
    return sl__gpu_convert(ctx, sl_ctx_output_data(ctx, 0, 0), t, dev, t, n * (int64_t)nd);
}
#endif

const sl_op_def sl_op_shapes = {
    .name = "shapes",
    .doc = "Returns the shape of each input sample as a 1-D tensor (DALI's shapes).\n\n"
           "Sample i of the output holds the extents of input sample i, outermost first, as "
           "`dtype` (int64 by default): an HWC image of 480 x 640 gives [480, 640, 3], a 0-d "
           "sample an empty tensor. Only the input's metadata is read: on the CPU the input may "
           "be GPU data, which is not copied. `DataNode.shape()` records this operator. DALI's "
           "older name of dtype, `type`, is accepted with a deprecation warning.\n\n"
           "`device=\"gpu\"` (what a node without a device given gets for GPU data, as in "
           "DALI) gives the shapes as GPU data; `DataNode.shape()` stays on the CPU unless "
           "asked.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .aliases = aliases,
    .num_aliases = 1,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_METADATA,
    .setup = shapes_setup,
    .run_sample = shapes_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = shapes_run_gpu,
#endif
};
