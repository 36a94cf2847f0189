/* math.log: element-wise natural logarithm (DALI's math.log).
 *
 * Exports: const sl_op_def sl_op_math_log. A thin operator of the element-wise family: it
 * fixes the operation (EW_LOG) and the schema; elementwise.h's functions do the rest, exactly
 * as for `arithmetic` with op "log". Invariant: the family's (state fixed at init).
 */
#include "ops/math/elementwise.h"

static sl_status log_init(sl_op_init *ini, void **state)
{
    return sl__ew_init(ini, state, EW_LOG, &sl__ew_unary_map);
}

const sl_op_def sl_op_math_log = {
    .name = "math.log",
    .doc = "Element-wise natural logarithm (DALI's math.log).\n\nInteger inputs give float32 "
           "(converted first); float types keep their type (float16 is computed in float32 "
           "and rounded); log(0) is -inf, negative values give NaN. bool inputs "
           "fail.\n\nDiffers from DALI, where math.log is a Python function over the "
           "arithmetic operator: here it is a registered operator, the same as `arithmetic` "
           "with op \"log\". Runs on the CPU and on the GPU (see `arithmetic` for the GPU run).",
    .inputs = sl__ew_unary_inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = sl__ew_outputs,
    .num_outputs = 1,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = log_init,
    .fini = sl__ew_fini,
    .setup = sl__ew_setup,
    .setup_sample = sl__ew_setup_sample,
    .run_sample = sl__ew_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = sl__ew_run_gpu,
#endif
};
