/* math.min: element-wise minimum of two operands (DALI's math.min).
 *
 * Exports: const sl_op_def sl_op_math_min. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_MIN) and the schema kind; elementwise.h's functions do the
 * rest, exactly as for `arithmetic` with op "min". Invariant: the family's (state fixed at init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(
    min, EW_MIN, BINARY,
    "Element-wise minimum of two operands (DALI's math.min).\n\nOperands: two inputs "
    "(broadcast with NumPy's rules), or one input and a constant (scalar / "
    "scalar_int). The result has the promoted type (see `arithmetic`); each element "
    "is `a < b ? a : b` as in DALI, so a NaN in a gives b and a NaN in b gives NaN. "
    "Two bool operands fail.\n\nDiffers from DALI, where math.min is a Python "
    "function over the arithmetic operator: here it is a registered operator, the "
    "same as `arithmetic` with op \"min\". Runs on the CPU and on the GPU (see `arithmetic` "
    "for the GPU run).");
