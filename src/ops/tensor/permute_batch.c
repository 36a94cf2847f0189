/* permute_batch: reorders the samples of a batch (DALI's fn.permute_batch).
 *
 * Exports: const sl_op_def sl_op_permute_batch ("permute_batch", CPU and GPU).
 *
 * Output sample i is input sample indices[i] (a per-sample argument, or a constant list with
 * one index per sample); an index may repeat or be left out. Shapes follow the samples; type
 * and layout are the input's. An index outside [0, batch size) fails naming the sample.
 * Invariant: run_sample(i) copies one input sample; no state.
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/index_gpu.h"

enum { A_INDICES, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_INDICES] = {.name = "indices",
                   .type = SL_ARG_INTS,
                   .doc = "For each output sample, the index of the input sample it copies: a "
                          "list with one index per sample, or one index per sample as an "
                          "argument input (fn.batch_permutation's output).",
                   .flags = SL_ARG_TENSOR | SL_ARG_SCALAR_OK},
};

static const sl_io_def inputs[] = {{"input", "Data of any type, shape and layout."}};
static const sl_io_def outputs[] = {{"output", "The samples in the new order."}};

/* The input sample that output sample i copies, or -1 after sl_fail. */
static int source_of(sl_ctx *ctx, int i)
{
    const int n = sl_ctx_batch_size(ctx);
    int64_t v[1];
    int k = sl_ctx_arg_ints(ctx, A_INDICES, i, NULL, 0);
    int64_t idx;
    if (k == 1) { /* a per-sample scalar (or a one-element list) */
        sl_ctx_arg_ints(ctx, A_INDICES, i, v, 1);
        idx = v[0];
    } else {
        if (k != n || i >= k)
            return sl_fail(ctx, SL_EINVAL,
                           "indices has %d values for a batch of %d samples; give one per "
                           "sample",
                           k, n),
                   -1;
        int64_t all[4096];
        if (k > 4096)
            return sl_fail(ctx, SL_EINVAL, "indices has %d values; at most 4096", k), -1;
        sl_ctx_arg_ints(ctx, A_INDICES, i, all, k);
        idx = all[i];
    }
    if (idx < 0 || idx >= n)
        return sl_fail(ctx, SL_EINVAL,
                       "sample %d: index %lld is out of range for a batch of %d samples", i,
                       (long long)idx, n),
               -1;
    return (int)idx;
}

static sl_status permute_batch_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    int *src = sl_ctx_iter_data(ctx);
    sl_ctx_set_output(ctx, 0, sl_batch_dtype(in), sl_batch_ndim(in), sl_batch_layout(in));
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++) {
        if ((src[i] = source_of(ctx, i)) < 0)
            return SL_EINVAL;
        sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(in, src[i]));
        sl_ctx_set_source(ctx, 0, i, sl_batch_source(in, src[i])); /* as long as the default */
    }
    return SL_OK;
}

static sl_status permute_batch_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int j = ((const int *)sl_ctx_iter_data(ctx))[i];
    size_t bytes = (size_t)sl_batch_sample_numel(in, j) * sl_dtype_size(sl_batch_dtype(in));
    if (bytes)
        memcpy(sl_ctx_output_data(ctx, 0, i), sl_batch_sample_data(in, j), bytes);
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* One block copy per sample, all in one launch. */
static sl_status permute_batch_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx);
    const int *src = sl_ctx_iter_data(ctx);
    sl__gblock *b = sl_ctx_scratch(ctx, sizeof(sl__gblock) * (size_t)(n > 0 ? n : 1));
    if (!b)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    for (int i = 0; i < n; i++)
        b[i] = (sl__gblock){sl_batch_sample_data(in, src[i]), sl_ctx_output_data(ctx, 0, i),
                            sl_batch_sample_numel(in, src[i])};
    return sl__gpu_blocks(ctx, b, n, sl_dtype_size(sl_batch_dtype(in)));
}
#endif

const sl_op_def sl_op_permute_batch = {
    .name = "permute_batch",
    .doc = "Reorders the samples of a batch (DALI's permute_batch).\n\n"
           "Output sample i is input sample indices[i]; indices may repeat or skip samples. "
           "`indices` is usually fn.batch_permutation's output (one index per sample), or a "
           "constant list with one index per sample.\n\n"
           "`device=\"gpu\"` moves the samples on the GPU (one launch per batch).",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .iter_bytes_per_sample = sizeof(int),
    .setup = permute_batch_setup,
    .run_sample = permute_batch_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = permute_batch_run_gpu,
#endif
};
