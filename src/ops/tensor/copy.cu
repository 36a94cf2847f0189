/* copy.cu: the gpu run of the copy operator (ops/tensor/copy.c): one device-to-device copy
 * of the contiguous batch on the node's stream.
 *
 * Exports sl__copy_run_gpu.
 */
#include "cuda/kernel.cuh"

extern "C" sl_status sl__copy_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    if (sl_batch_size(in) == 0)
        return SL_OK;
    return sl_gpu_memcpy(ctx, sl_ctx_output_data(ctx, 0, 0), sl_batch_data(in),
                         sl_batch_nbytes(in));
}
