/* math.pow: element-wise power a ** b (DALI's math.pow).
 *
 * Exports: const sl_op_def sl_op_math_pow. A thin operator of the element-wise family: it
 * fixes the operation (EW_POW) and the schema; elementwise.h's functions do the rest, exactly
 * as for `arithmetic` with op "pow". Invariant: the family's (state fixed at init).
 */
#include "ops/math/elementwise.h"

static sl_status pow_init(sl_op_init *ini, void **state)
{
    return sl__ew_init(ini, state, EW_POW, &sl__ew_binary_map);
}

const sl_op_def sl_op_math_pow = {
    .name = "math.pow",
    .doc = "Element-wise power a ** b (DALI's math.pow).\n\nOperands: two inputs (broadcast "
           "with NumPy's rules), or one input and a constant (scalar / scalar_int, the "
           "exponent unless scalar_left). The result has the promoted type (see "
           "`arithmetic`): integers raise by repeated squaring, wrapping on overflow, and a "
           "negative integer exponent gives 0 (DALI's rule); floats use pow. Two bool "
           "operands fail.\n\nDiffers from DALI, where math.pow is a Python function over "
           "the arithmetic operator: here it is a registered operator, the same as "
           "`arithmetic` with op \"pow\". Runs on the CPU and on the GPU (see `arithmetic` for the "
           "GPU run).",
    .inputs = sl__ew_binary_inputs,
    .min_inputs = 1,
    .max_inputs = 2,
    .outputs = sl__ew_outputs,
    .num_outputs = 1,
    .args = sl__ew_binary_args,
    .num_args = SL__EW_BINARY_NARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = pow_init,
    .fini = sl__ew_fini,
    .setup = sl__ew_setup,
    .setup_sample = sl__ew_setup_sample,
    .run_sample = sl__ew_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = sl__ew_run_gpu,
#endif
};
