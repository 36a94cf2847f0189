/* math.clamp: clamps each element to [lo, hi] (DALI's math.clamp).
 *
 * Exports: const sl_op_def sl_op_math_clamp. A thin operator of the element-wise family: it
 * fixes the operation (EW_CLAMP) and the schema; elementwise.h's functions do the rest, exactly
 * as for `arithmetic` with op "clamp". Invariant: the family's (state fixed at init).
 */
#include "ops/math/elementwise.h"

static sl_status clamp_init(sl_op_init *ini, void **state)
{
    return sl__ew_init(ini, state, EW_CLAMP, &sl__ew_clamp_map);
}

const sl_op_def sl_op_math_clamp = {
    .name = "math.clamp",
    .doc = "Clamps each element to [lo, hi] (DALI's math.clamp).\n\nThe result type promotes "
           "the input type with the bounds' type, DALI's rule for math.clamp(x, lo, hi): the "
           "bounds are float32 unless scalar_dtype says otherwise (what DALI gives Python "
           "floats), so a uint8 image clamped to [0.0, 255.0] becomes float32; scalar_dtype "
           "\"uint8\" keeps uint8, \"int32\" matches DALI's int bounds. Each element is `x < "
           "lo ? lo : x`, then `> hi ? hi`: NaN stays NaN and hi < lo gives hi (as NumPy's "
           "clip). The bounds may be per-sample argument inputs; they must fit their "
           "type.\n\nDiffers from DALI, where math.clamp is a Python function over the "
           "arithmetic operator: here it is a registered operator, the same as `arithmetic` "
           "with op \"clamp\". Runs on the CPU and on the GPU (see `arithmetic` for the GPU run).",
    .inputs = sl__ew_unary_inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = sl__ew_outputs,
    .num_outputs = 1,
    .args = sl__ew_clamp_args,
    .num_args = SL__EW_CLAMP_NARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = clamp_init,
    .fini = sl__ew_fini,
    .setup = sl__ew_setup,
    .setup_sample = sl__ew_setup_sample,
    .run_sample = sl__ew_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = sl__ew_run_gpu,
#endif
};
