/* math.acosh: element-wise inverse hyperbolic cosine (DALI's math.acosh).
 *
 * Exports: const sl_op_def sl_op_math_acosh. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_ACOSH) and the schema kind; elementwise.h's functions do
 * the rest, exactly as for `arithmetic` with op "acosh". Invariant: the family's (state fixed at
 * init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(
    acosh, EW_ACOSH, UNARY,
    "Element-wise inverse hyperbolic cosine (DALI's math.acosh).\n\nInteger inputs give float32 "
    "(converted first); float types keep their type (float16 is computed in float32 "
    "and rounded). Values below 1 give NaN. bool inputs fail.\n\nDiffers from DALI, where "
    "math.acosh is a "
    "Python function over the arithmetic operator: here it is a registered operator, "
    "the same as `arithmetic` with op \"acosh\". Runs on the CPU and on the GPU.");
