/* math.abs: element-wise absolute value, keeping the element type (DALI's math.abs).
 *
 * Exports: const sl_op_def sl_op_math_abs. A thin operator of the element-wise family: it
 * fixes the operation (EW_ABS) and the schema; elementwise.h's functions do the rest, exactly
 * as for `arithmetic` with op "abs". Invariant: the family's (state fixed at init).
 */
#include "ops/math/elementwise.h"

static sl_status abs_init(sl_op_init *ini, void **state)
{
    return sl__ew_init(ini, state, EW_ABS, &sl__ew_unary_map);
}

const sl_op_def sl_op_math_abs = {
    .name = "math.abs",
    .doc = "Element-wise absolute value, keeping the element type (DALI's "
           "math.abs).\n\nSigned integers wrap (abs of the minimum is the minimum), unsigned "
           "values pass unchanged, float types use fabs (abs(-0.0) is +0.0). bool inputs "
           "fail.\n\nDiffers from DALI, where math.abs is a Python function over the "
           "arithmetic operator: here it is a registered operator, the same as `arithmetic` "
           "with op \"abs\". Runs on the CPU and on the GPU (see `arithmetic` for the GPU run).",
    .inputs = sl__ew_unary_inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = sl__ew_outputs,
    .num_outputs = 1,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = abs_init,
    .fini = sl__ew_fini,
    .setup = sl__ew_setup,
    .setup_sample = sl__ew_setup_sample,
    .run_sample = sl__ew_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = sl__ew_run_gpu,
#endif
};
