/* math.atan2: element-wise arc tangent of a / b in the right quadrant (DALI's math.atan2).
 *
 * Exports: const sl_op_def sl_op_math_atan2. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_ATAN2) and the schema kind; elementwise.h's functions
 * do the rest, exactly as for `arithmetic` with op "atan2". Invariant: the family's (state fixed
 * at init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(
    atan2, EW_ATAN2, BINARY,
    "Element-wise atan2(a, b): the angle of the point (b, a) in radians, in [-pi, pi] (DALI's "
    "math.atan2, NumPy's arctan2).\n\nOperands: two inputs (broadcast with NumPy's rules), or "
    "one input and a constant (scalar / scalar_int, the second operand unless scalar_left). Two "
    "integer operands give float32; otherwise the promoted float type (see `arithmetic`). Two "
    "bool operands fail.\n\nDiffers from DALI, where math.atan2 is a Python function over the "
    "arithmetic operator: here it is a registered operator, the same as `arithmetic` with op "
    "\"atan2\". Runs on the CPU and on the GPU.");
