/* copy: the samples unchanged, on another device (DALI's fn.copy; what .gpu() inserts).
 *
 * Exports: const sl_op_def sl_op_copy ("copy", CPU, mixed, GPU).
 *
 * Output = input (shape, dtype, layout, sources). On "cpu" each sample is copied by a task; on
 * "mixed" the same copy lands in pinned memory and the executor moves the batch to the GPU in
 * one asynchronous transfer (this is DataNode.gpu()); on "gpu" one device-to-device copy of the
 * contiguous batch (copy.cu); on "cpu" with GPU input (SL_OP_TRANSFER: DataNode.cpu()) the
 * executor copies the batch back from the device.
 * Invariant: the output's bytes equal the input's; no state.
 */
#include <string.h>

#include "sluice/op.h"

static const sl_io_def inputs[] = {{"input", "Data of any type, shape and layout."}};
static const sl_io_def outputs[] = {{"output", "The same data, on the node's device."}};

#ifdef SLUICE_HAVE_CUDA
sl_status sl__copy_run_gpu(sl_ctx *ctx); /* copy.cu */
#endif

static sl_status copy_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    sl_ctx_set_output(ctx, 0, sl_batch_dtype(in), sl_batch_ndim(in), sl_batch_layout(in));
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(in, i));
    return SL_OK;
}

static sl_status copy_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    size_t n = (size_t)sl_batch_sample_numel(in, i) * sl_dtype_size(sl_batch_dtype(in));
    if (n)
        memcpy(sl_ctx_output_data(ctx, 0, i), sl_batch_sample_data(in, i), n);
    return SL_OK;
}

const sl_op_def sl_op_copy = {
    .name = "copy",
    .doc = "Copies the data unchanged, onto the node's device (DALI's copy).\n\n"
           "`device=\"mixed\"` moves CPU data to the GPU (this is what `DataNode.gpu()` "
           "inserts): the samples are gathered into pinned host memory and sent in one "
           "asynchronous transfer. `device=\"gpu\"` copies GPU data on the device; "
           "`device=\"cpu\"` copies CPU data, or brings GPU data back to the host (this is what "
           "`DataNode.cpu()` inserts: CPU operators can then read it).",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .devices = SL_OP_CPU | SL_OP_MIXED | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE | SL_OP_TRANSFER,
    .setup = copy_setup,
    .run_sample = copy_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = sl__copy_run_gpu,
#endif
};
