/* sequence_rearrange: reorders the frames of each sequence (DALI's fn.sequence_rearrange).
 *
 * Exports: const sl_op_def sl_op_sequence_rearrange ("sequence_rearrange", CPU and GPU).
 *
 * The outermost dimension is the frames (layout "F..." or none; at least 2-D, as DALI). Output
 * frame k is input frame new_order[k]; frames may repeat or be dropped, and the output has
 * len(new_order) frames. new_order may be given per sample. An empty new_order, or an index outside
 * [0, frames), fails naming the sample. Invariant: run_sample copies whole frames; no state.
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/index_gpu.h"

enum { A_NEW_ORDER, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_NEW_ORDER] = {.name = "new_order",
                     .type = SL_ARG_INTS,
                     .doc = "For each output frame, the index of the input frame it copies.",
                     .flags = SL_ARG_TENSOR | SL_ARG_SCALAR_OK,
                     .min_len = 1},
};

static const sl_io_def inputs[] = {
    {"input", "Sequences: the outermost dimension is the frames (layout starting with 'F')."}};
static const sl_io_def outputs[] = {{"output", "The frames in the new order."}};

#define MAX_FRAMES 65536

static sl_status sequence_rearrange_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in);
    const char *layout = sl_batch_layout(in);
    if (nd < 2)
        return sl_fail(ctx, SL_EINVAL,
                       "Sequence elements must have at least 1 dim: the input is %d-D (frames "
                       "and at least one dimension per frame needed)",
                       nd);
    if (layout && *layout && layout[0] != 'F')
        return sl_fail(ctx, SL_EINVAL,
                       "Expected sequence as the input, where outermost dimension represents "
                       "frames dimension `F`, got data with layout = \"%s\" (per_frame marks "
                       "it)",
                       layout);
    sl_ctx_set_output(ctx, 0, sl_batch_dtype(in), nd, layout);
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++) {
        const int64_t *sh = sl_batch_shape(in, i);
        int64_t os[SL_MAX_NDIM], order[64];
        int n = sl_ctx_arg_ints(ctx, A_NEW_ORDER, i, order, 64);
        if (n < 1 || n > MAX_FRAMES)
            return sl_fail(ctx, SL_EINVAL, "sample %d: new_order has %d values (1..%d allowed)", i,
                           n, MAX_FRAMES);
        memcpy(os, sh, sizeof(int64_t) * (size_t)nd);
        os[0] = n;
        sl_ctx_set_shape(ctx, 0, i, os);
    }
    return SL_OK;
}

static sl_status sequence_rearrange_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t frames = sl_batch_shape(in, i)[0];
    const int64_t n = sl_ctx_output_shape(ctx, 0, i)[0];
    const size_t frame =
        frames ? (size_t)(sl_batch_sample_numel(in, i) / frames) * sl_dtype_size(sl_batch_dtype(in))
               : 0;
    int64_t *order = sl_ctx_scratch(ctx, sizeof(int64_t) * (size_t)n);
    if (!order)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for new_order");
    sl_ctx_arg_ints(ctx, A_NEW_ORDER, i, order, (int)n);
    const unsigned char *src = sl_batch_sample_data(in, i);
    unsigned char *dst = sl_ctx_output_data(ctx, 0, i);
    for (int64_t k = 0; k < n; k++) {
        if (order[k] < 0 || order[k] >= frames)
            return sl_fail(ctx, SL_EINVAL,
                           "new_order[%lld] = %lld is not a frame of a sequence of %lld frames",
                           (long long)k, (long long)order[k], (long long)frames);
        if (frame)
            memcpy(dst + (size_t)k * frame, src + (size_t)order[k] * frame, frame);
    }
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* One block copy per output frame of every sample, all in one launch; new_order is checked on
 * the host first, as run_sample checks it. */
static sl_status sequence_rearrange_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx);
    const size_t es = sl_dtype_size(sl_batch_dtype(in));
    int64_t total = 0;
    for (int i = 0; i < n; i++)
        total += sl_ctx_output_shape(ctx, 0, i)[0];
    sl__gblock *b = sl_ctx_scratch(ctx, sizeof(sl__gblock) * (size_t)(total > 0 ? total : 1));
    int64_t *order = sl_ctx_scratch_n(ctx, 1, sizeof(int64_t) * MAX_FRAMES);
    if (!b || !order)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %lld frames' parameters",
                       (long long)total);
    int64_t k = 0;
    for (int i = 0; i < n; i++) {
        const int64_t frames = sl_batch_shape(in, i)[0];
        const int64_t m = sl_ctx_output_shape(ctx, 0, i)[0];
        const int64_t frame = frames ? sl_batch_sample_numel(in, i) / frames : 0;
        const char *src = sl_batch_sample_data(in, i); /* device: not read here */
        char *dst = sl_ctx_output_data(ctx, 0, i);
        sl_ctx_arg_ints(ctx, A_NEW_ORDER, i, order, (int)m);
        for (int64_t f = 0; f < m; f++) {
            if (order[f] < 0 || order[f] >= frames) {
                sl_ctx_focus_sample(ctx, i);
                return sl_fail(ctx, SL_EINVAL,
                               "new_order[%lld] = %lld is not a frame of a sequence of %lld frames",
                               (long long)f, (long long)order[f], (long long)frames);
            }
            b[k++] = (sl__gblock){src + (size_t)(order[f] * frame) * es,
                                  dst + (size_t)(f * frame) * es, frame};
        }
    }
    return sl__gpu_blocks(ctx, b, (int)k, es);
}
#endif

const sl_op_def sl_op_sequence_rearrange = {
    .name = "sequence_rearrange",
    .doc = "Reorders the frames of each sequence (DALI's sequence_rearrange).\n\n"
           "Output frame k is input frame new_order[k] (the outermost dimension); frames may "
           "repeat or be dropped. new_order may be given per sample.\n\n"
           "`device=\"gpu\"` copies the frames on the GPU (one launch per batch).",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .setup = sequence_rearrange_setup,
    .run_sample = sequence_rearrange_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = sequence_rearrange_run_gpu,
#endif
};
