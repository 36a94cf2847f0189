/* math.max: element-wise maximum of two operands (DALI's math.max).
 *
 * Exports: const sl_op_def sl_op_math_max. A thin operator of the element-wise family: it
 * fixes the operation (EW_MAX) and the schema; elementwise.h's functions do the rest, exactly
 * as for `arithmetic` with op "max". Invariant: the family's (state fixed at init).
 */
#include "ops/math/elementwise.h"

static sl_status max_init(sl_op_init *ini, void **state)
{
    return sl__ew_init(ini, state, EW_MAX, &sl__ew_binary_map);
}

const sl_op_def sl_op_math_max = {
    .name = "math.max",
    .doc = "Element-wise maximum of two operands (DALI's math.max).\n\nOperands: two inputs "
           "(broadcast with NumPy's rules), or one input and a constant (scalar / "
           "scalar_int). The result has the promoted type (see `arithmetic`); each element "
           "is `a > b ? a : b` as in DALI, so a NaN in a gives b and a NaN in b gives NaN. "
           "Two bool operands fail.\n\nDiffers from DALI, where math.max is a Python "
           "function over the arithmetic operator: here it is a registered operator, the "
           "same as `arithmetic` with op \"max\". Runs on the CPU and on the GPU (see `arithmetic` "
           "for the GPU run).",
    .inputs = sl__ew_binary_inputs,
    .min_inputs = 1,
    .max_inputs = 2,
    .outputs = sl__ew_outputs,
    .num_outputs = 1,
    .args = sl__ew_binary_args,
    .num_args = SL__EW_BINARY_NARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = max_init,
    .fini = sl__ew_fini,
    .setup = sl__ew_setup,
    .setup_sample = sl__ew_setup_sample,
    .run_sample = sl__ew_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = sl__ew_run_gpu,
#endif
};
