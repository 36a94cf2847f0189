/* element_extract: takes frames out of each sequence, one output per frame index (DALI's
 * fn.element_extract).
 *
 * Exports: const sl_op_def sl_op_element_extract ("element_extract", CPU and GPU).
 *
 * Output k is frame element_map[k] (the outermost dimension) of every sample: the sample's
 * shape without its first extent, the layout without its leading 'F'. The node has as many
 * outputs as element_map has values (num_outputs_arg: the list's length). The input must be at
 * least 2-D with a layout starting with 'F' (or none); an index at or past a sample's frame
 * count fails naming the sample, in DALI's words.
 * Invariant: run_sample copies whole frames; no state.
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/index_gpu.h"

enum { A_ELEMENT_MAP, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_ELEMENT_MAP] = {.name = "element_map",
                       .type = SL_ARG_INTS,
                       .doc = "Indices of the frames to extract, one output each (in this "
                              "order); an index may repeat.",
                       .flags = SL_ARG_SCALAR_OK,
                       .min_len = 1,
                       .max_len = 256},
};

static const sl_io_def inputs[] = {
    {"input", "Sequences: the outermost dimension is the frames (layout starting with 'F')."}};
static const sl_io_def outputs[] = {{"output", "One output per entry of element_map: that frame "
                                               "of every sequence."}};

static sl_status element_extract_init(sl_op_init *ini, void **state)
{
    int n;
    const int64_t *map = sl_init_arg_ints(ini, A_ELEMENT_MAP, &n);
    *state = NULL;
    for (int k = 0; k < n; k++)
        if (map[k] < 0)
            return sl_init_fail(ini, SL_EINVAL,
                                "Negative indices in `element_map` are not allowed, found: %lld",
                                (long long)map[k]);
    return SL_OK;
}

static sl_status element_extract_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in), nout = sl_ctx_num_outputs(ctx);
    const char *layout = sl_batch_layout(in);
    int64_t map[256];
    sl_ctx_arg_ints(ctx, A_ELEMENT_MAP, 0, map, 256);
    if (nd < 2)
        return sl_fail(ctx, SL_EINVAL,
                       "Input must have at least two dimensions - outermost for sequence and at "
                       "least one for data elements; it is %d-D",
                       nd);
    if (layout && *layout && layout[0] != 'F')
        return sl_fail(ctx, SL_EINVAL,
                       "Input layout must describe a sequence - it must start with 'F', got '%s' "
                       "instead",
                       layout);
    for (int o = 0; o < nout; o++)
        sl_ctx_set_output(ctx, o, sl_batch_dtype(in), nd - 1,
                          layout && *layout ? layout + 1 : NULL);
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++) {
        const int64_t *sh = sl_batch_shape(in, i);
        for (int o = 0; o < nout; o++) {
            if (map[o] >= sh[0])
                return sl_fail(ctx, SL_EINVAL,
                               "Index `%lld` from `element_map` is out of bounds for sample with "
                               "sequence length equal `%lld` (sample %d)",
                               (long long)map[o], (long long)sh[0], i);
            sl_ctx_set_shape(ctx, o, i, sh + 1);
        }
    }
    return SL_OK;
}

static sl_status element_extract_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t frames = sl_batch_shape(in, i)[0];
    const size_t frame = (size_t)(sl_batch_sample_numel(in, i) / frames) *
                         sl_dtype_size(sl_batch_dtype(in)); /* frames > 0: setup checked */
    int64_t map[256];
    sl_ctx_arg_ints(ctx, A_ELEMENT_MAP, 0, map, 256);
    const unsigned char *src = sl_batch_sample_data(in, i);
    for (int o = 0; o < sl_ctx_num_outputs(ctx); o++)
        if (frame)
            memcpy(sl_ctx_output_data(ctx, o, i), src + (size_t)map[o] * frame, frame);
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* One block copy per (output, sample), all in one launch. */
static sl_status element_extract_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx), nout = sl_ctx_num_outputs(ctx);
    const size_t es = sl_dtype_size(sl_batch_dtype(in));
    int64_t map[256];
    sl_ctx_arg_ints(ctx, A_ELEMENT_MAP, 0, map, 256);
    sl__gblock *b = sl_ctx_scratch(ctx, sizeof(sl__gblock) * (size_t)(n * nout > 0 ? n * nout : 1));
    if (!b)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    for (int o = 0; o < nout; o++) {
        for (int i = 0; i < n; i++) {
            const int64_t frame = sl_batch_sample_numel(in, i) / sl_batch_shape(in, i)[0];
            const char *src = sl_batch_sample_data(in, i); /* device: not read here */
            b[o * n + i] = (sl__gblock){src + (size_t)(map[o] * frame) * es,
                                        sl_ctx_output_data(ctx, o, i), frame};
        }
    }
    return sl__gpu_blocks(ctx, b, n * nout, es);
}
#endif

const sl_op_def sl_op_element_extract = {
    .name = "element_extract",
    .doc = "Extracts frames of each sequence, one output per entry of element_map (DALI's "
           "element_extract).\n\n"
           "Output k is frame element_map[k] of every sample (the outermost dimension), with the "
           "layout's leading 'F' removed. The input must be at least 2-D, its layout (if any) "
           "starting with 'F'.\n\n"
           "`device=\"gpu\"` copies the frames on the GPU (one launch per batch).",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .num_outputs_arg = "element_map",
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .init = element_extract_init,
    .setup = element_extract_setup,
    .run_sample = element_extract_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = element_extract_run_gpu,
#endif
};
