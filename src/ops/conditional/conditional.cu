/* conditional.cu: the gpu runs of split and merge (ops/conditional/conditional.c): one
 * device-to-device copy per sample on the node's stream, as their setup placed the samples.
 *
 * Exports sl__cond_split_run_gpu, sl__cond_merge_run_gpu.
 */
#include "cuda/kernel.cuh"

static inline int branch_of(int pos)
{
    return pos >= 0 ? 0 : 1;
}

static inline int index_in(int pos)
{
    return pos >= 0 ? pos : -pos - 1;
}

extern "C" sl_status sl__cond_split_run_gpu(sl_ctx *ctx)
{
    const int *pos = (const int *)sl_ctx_iter_data(ctx);
    const sl_batch *in = sl_ctx_input(ctx, 0);
    size_t esz = sl_dtype_size(sl_batch_dtype(in));
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++) {
        size_t bytes = (size_t)sl_batch_sample_numel(in, i) * esz;
        sl_status st =
            sl_gpu_memcpy(ctx, sl_ctx_output_data(ctx, branch_of(pos[i]), index_in(pos[i])),
                          sl_batch_sample_data(in, i), bytes);
        if (st != SL_OK)
            return st;
    }
    return SL_OK;
}

extern "C" sl_status sl__cond_merge_run_gpu(sl_ctx *ctx)
{
    const int *pos = (const int *)sl_ctx_iter_data(ctx);
    sl_dtype t0 = sl_batch_dtype(sl_ctx_input(ctx, 0)), t1 = sl_batch_dtype(sl_ctx_input(ctx, 1));
    if (t0 != t1) /* the CPU merge converts to the promoted type; the device copies bytes */
        return sl_fail(ctx, SL_EINVAL,
                       "Divergent data found in different branches of conditional operation: "
                       "on the GPU the branches must give the same type (the true branch %s, "
                       "the false branch %s); cast one of them (fn.cast)",
                       sl_dtype_name(t0), sl_dtype_name(t1));
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++) {
        const sl_batch *b = sl_ctx_input(ctx, branch_of(pos[i]));
        int j = index_in(pos[i]);
        size_t bytes = (size_t)sl_batch_sample_numel(b, j) * sl_dtype_size(sl_batch_dtype(b));
        sl_status st =
            sl_gpu_memcpy(ctx, sl_ctx_output_data(ctx, 0, i), sl_batch_sample_data(b, j), bytes);
        if (st != SL_OK)
            return st;
    }
    return SL_OK;
}
