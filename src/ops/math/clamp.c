/* math.clamp: clamps each element to [lo, hi] (DALI's math.clamp).
 *
 * Exports: const sl_op_def sl_op_math_clamp. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_CLAMP) and the schema kind; elementwise.h's functions do
 * the rest, exactly as for `arithmetic` with op "clamp". Invariant: the family's (state fixed at
 * init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(
    clamp, EW_CLAMP, CLAMP,
    "Clamps each element to [lo, hi] (DALI's math.clamp).\n\nThe result type promotes "
    "the input type with the bounds' type, DALI's rule for math.clamp(x, lo, hi): the "
    "bounds are float32 unless scalar_dtype says otherwise (what DALI gives Python "
    "floats), so a uint8 image clamped to [0.0, 255.0] becomes float32; scalar_dtype "
    "\"uint8\" keeps uint8, \"int32\" matches DALI's int bounds. Each element is `x < "
    "lo ? lo : x`, then `> hi ? hi`: NaN stays NaN and hi < lo gives hi (as NumPy's "
    "clip). The bounds may be per-sample argument inputs; they must fit their "
    "type.\n\nDiffers from DALI, where math.clamp is a Python function over the "
    "arithmetic operator: here it is a registered operator, the same as `arithmetic` "
    "with op \"clamp\". Runs on the CPU and on the GPU (see `arithmetic` for the GPU run).");
