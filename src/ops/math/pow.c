/* math.pow: element-wise power a ** b (DALI's math.pow).
 *
 * Exports: const sl_op_def sl_op_math_pow. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_POW) and the schema kind; elementwise.h's functions do the
 * rest, exactly as for `arithmetic` with op "pow". Invariant: the family's (state fixed at init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(
    pow, EW_POW, BINARY,
    "Element-wise power a ** b (DALI's math.pow).\n\nOperands: two inputs (broadcast "
    "with NumPy's rules), or one input and a constant (scalar / scalar_int, the "
    "exponent unless scalar_left). The result has the promoted type (see "
    "`arithmetic`): integers raise by repeated squaring, wrapping on overflow, and a "
    "negative integer exponent gives 0 (DALI's rule); floats use pow. Two bool "
    "operands fail.\n\nDiffers from DALI, where math.pow is a Python function over "
    "the arithmetic operator: here it is a registered operator, the same as "
    "`arithmetic` with op \"pow\". Runs on the CPU and on the GPU (see `arithmetic` for the "
    "GPU run).");
