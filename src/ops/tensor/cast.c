/* cast: converts every element to another dtype (DALI's fn.cast).
 *
 * Exports: const sl_op_def sl_op_cast ("cast", CPU and GPU).
 *
 * Output = input shape and layout, elements converted with DALI's ConvertSat rules (the
 * generated converter table of ops/tensor/convert.c): float -> integer rounds to nearest, halves
 * away from zero, and saturates; integer -> integer saturates; any -> bool is x != 0;
 * float -> float and integer -> float are IEEE casts (round to nearest even). All 12 dtypes, both
 * ways. Where DALI leaves NaN -> integer undefined, sluice gives 0.
 * On the GPU (cast.cu) one kernel converts the whole batch, which is contiguous on both sides,
 * with the same rules (tensor.cuh): the values equal the CPU's (a NaN stays a NaN; its payload
 * may differ).
 * Invariant: one converter call per sample over its contiguous elements; no state.
 */
#include "sluice/op.h"

#include "ops/tensor/tensor.h"
#include "ops/tensor/tensor_gpu.h"

enum { A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .doc = "Output type: any of uint8..uint64, int8..int64, float16, float32, "
                        "float64, bool."},
};

static const sl_io_def inputs[] = {{"input", "Data of any type, any shape and layout."}};
static const sl_io_def outputs[] = {{"output", "The input converted to dtype."}};

static sl_status cast_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    if (!sl__convert_get(sl_ctx_arg_dtype(ctx, A_DTYPE), sl_batch_dtype(in)))
        return sl_fail(ctx, SL_EUNSUPPORTED, "cannot convert %s to %s",
                       sl_dtype_name(sl_batch_dtype(in)),
                       sl_dtype_name(sl_ctx_arg_dtype(ctx, A_DTYPE)));
    sl_ctx_set_output(ctx, 0, sl_ctx_arg_dtype(ctx, A_DTYPE), sl_batch_ndim(in),
                      sl_batch_layout(in));
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(in, i));
    return SL_OK;
}

static sl_status cast_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    sl__convert_fn cv = sl__convert_get(sl_ctx_arg_dtype(ctx, A_DTYPE), sl_batch_dtype(in));
    cv(sl_ctx_output_data(ctx, 0, i), sl_batch_sample_data(in, i), sl_batch_sample_numel(in, i));
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* The batch's samples lie back to back on both sides, so it is one conversion of all
 * elements. */
static sl_status cast_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx);
    int64_t total = 0;
    for (int i = 0; i < n; i++)
        total += sl_batch_sample_numel(in, i);
    if (total == 0)
        return SL_OK;
    return sl__gpu_convert(ctx, sl_ctx_output_data(ctx, 0, 0), sl_ctx_arg_dtype(ctx, A_DTYPE),
                           sl_batch_data(in), sl_batch_dtype(in), total);
}
#endif

const sl_op_def sl_op_cast = {
    .name = "cast",
    .doc = "Converts the elements of each sample to another type (DALI's cast).\n\n"
           "Shape and layout are kept. Conversions follow DALI's saturating rules: floating "
           "point to integer rounds to nearest with halves away from zero, then clamps to the "
           "type's range; integer to integer clamps; any type to bool gives x != 0; to a "
           "floating type the value is rounded to nearest even. All 12 types are supported "
           "both ways.\n\n"
           "Differs from DALI: NaN converted to an integer type gives 0 (undefined in DALI).\n\n"
           "`device=\"gpu\"` converts on the GPU with the same rules and results (NaN payloads "
           "aside).",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE | SL_OP_DETERMINISTIC,
    .setup = cast_setup,
    .run_sample = cast_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = cast_run_gpu,
#endif
};
