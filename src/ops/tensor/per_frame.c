/* per_frame: marks the data as a sequence by its layout (DALI's fn.per_frame).
 *
 * Exports: const sl_op_def sl_op_per_frame ("per_frame", CPU and GPU).
 *
 * Only the layout changes: its first letter becomes 'F' (frames). An input without layout gets
 * "F" followed by '*' for its other dimensions; one whose layout starts with 'F' keeps it; any
 * other layout needs replace=True (then its first letter is replaced), else the node fails, as
 * in DALI. 0-d samples cannot be sequences.
 * Invariant: the data is copied unchanged (DALI passes the input buffer through).
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/tensor_gpu.h"

enum { A_REPLACE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_REPLACE] = {.name = "replace",
                   .type = SL_ARG_BOOL,
                   .def = "false",
                   .doc = "Replace the first letter of a layout that does not start with 'F' "
                          "(otherwise such a layout is an error)."},
};

static const sl_io_def inputs[] = {{"input", "Data of any type with at least one dimension."}};
static const sl_io_def outputs[] = {{"output", "The same data, its layout starting with 'F'."}};

static sl_status per_frame_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in);
    const char *layout = sl_batch_layout(in);
    char out[SL_MAX_NDIM + 1];
    if (nd < 1)
        return sl_fail(ctx, SL_EINVAL,
                       "a sequence needs at least one dimension (the frames); "
                       "the input is 0-d");
    if (!layout || !*layout) {
        memset(out, '*', (size_t)nd);
        out[nd] = '\0';
    } else {
        if (layout[0] != 'F' && !sl_ctx_arg_bool(ctx, A_REPLACE, 0))
            return sl_fail(ctx, SL_EINVAL,
                           "the input layout \"%s\" does not start with 'F'; set replace=True to "
                           "replace its first letter",
                           layout);
        strncpy(out, layout, SL_MAX_NDIM);
        out[SL_MAX_NDIM] = '\0';
    }
    out[0] = 'F';
    sl_ctx_set_output(ctx, 0, sl_batch_dtype(in), nd, out);
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(in, i));
    return SL_OK;
}

static sl_status per_frame_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    size_t bytes = (size_t)sl_batch_sample_numel(in, i) * sl_dtype_size(sl_batch_dtype(in));
    if (bytes)
        memcpy(sl_ctx_output_data(ctx, 0, i), sl_batch_sample_data(in, i), bytes);
    return SL_OK;
}

const sl_op_def sl_op_per_frame = {
    .name = "per_frame",
    .doc = "Marks the data as a sequence: its layout starts with 'F' (DALI's per_frame), so "
           "that it can be a per-frame argument.\n\n"
           "No layout: \"F\" and '*' for the other dimensions. A layout starting with 'F' is "
           "kept; another one needs replace=True, which replaces its first letter.\n\n"
           "Differs from DALI: the data is copied (DALI passes the input buffer through); "
           "sluice's operators do not take per-frame arguments yet.\n\n"
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
    .setup = per_frame_setup,
    .run_sample = per_frame_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = sl__copy_run_gpu,
#endif
};
