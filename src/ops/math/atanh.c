/* math.atanh: element-wise inverse hyperbolic tangent (DALI's math.atanh).
 *
 * Exports: const sl_op_def sl_op_math_atanh. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_ATANH) and the schema kind; elementwise.h's functions do
 * the rest, exactly as for `arithmetic` with op "atanh". Invariant: the family's (state fixed at
 * init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(
    atanh, EW_ATANH, UNARY,
    "Element-wise inverse hyperbolic tangent (DALI's math.atanh).\n\nInteger inputs give float32 "
    "(converted first); float types keep their type (float16 is computed in float32 "
    "and rounded). -1 and 1 give -inf and inf, values outside NaN. bool inputs fail.\n\nDiffers "
    "from DALI, where math.atanh is a "
    "Python function over the arithmetic operator: here it is a registered operator, "
    "the same as `arithmetic` with op \"atanh\". Runs on the CPU and on the GPU.");
