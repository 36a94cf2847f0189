/* cast_like: converts every element of the first input to the type of the second (DALI's
 * fn.cast_like).
 *
 * Exports: const sl_op_def sl_op_cast_like ("cast_like", CPU and GPU).
 *
 * Output = the first input's shape and layout, elements converted with cast's rules (DALI's
 * ConvertSat, ops/tensor/convert.c). The second input gives only its element type; its shape,
 * data and batch size do not matter.
 * Invariant: one converter call per sample; no state.
 */
#include "sluice/op.h"

#include "ops/tensor/tensor_gpu.h"

#include "ops/tensor/tensor.h"

static const sl_io_def inputs[] = {{"data", "Data of any type, shape and layout."},
                                   {"like", "Data whose element type the output takes."}};
static const sl_io_def outputs[] = {{"output", "data converted to the type of like."}};

static sl_status cast_like_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const sl_dtype to = sl_batch_dtype(sl_ctx_input(ctx, 1));
    if (!sl__convert_get(to, sl_batch_dtype(in)))
        return sl_fail(ctx, SL_EUNSUPPORTED, "cannot convert %s to %s",
                       sl_dtype_name(sl_batch_dtype(in)), sl_dtype_name(to));
    sl_ctx_set_output(ctx, 0, to, sl_batch_ndim(in), sl_batch_layout(in));
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(in, i));
    return SL_OK;
}

static sl_status cast_like_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    sl__convert_fn cv = sl__convert_get(sl_batch_dtype(sl_ctx_input(ctx, 1)), sl_batch_dtype(in));
    cv(sl_ctx_output_data(ctx, 0, i), sl_batch_sample_data(in, i), sl_batch_sample_numel(in, i));
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* The batch's samples lie back to back on both sides: one conversion of all elements. */
static sl_status cast_like_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    int64_t total = 0;
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        total += sl_batch_sample_numel(in, i);
    if (total == 0)
        return SL_OK;
    return sl__gpu_convert(ctx, sl_ctx_output_data(ctx, 0, 0), sl_batch_dtype(sl_ctx_input(ctx, 1)),
                           sl_batch_data(in), sl_batch_dtype(in), total);
}
#endif

const sl_op_def sl_op_cast_like = {
    .name = "cast_like",
    .doc = "Converts the elements of the first input to the type of the second (DALI's "
           "cast_like).\n\n"
           "Shape and layout of the first input are kept; conversions follow `cast` (DALI's "
           "saturating rules). Only the second input's type is used.\n\n"
           "`device=\"gpu\"` converts on the GPU with the same rules and results (as cast).",
    .inputs = inputs,
    .min_inputs = 2,
    .max_inputs = 2,
    .outputs = outputs,
    .num_outputs = 1,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .setup = cast_like_setup,
    .run_sample = cast_like_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = cast_like_run_gpu,
#endif
};
