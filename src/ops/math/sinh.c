/* math.sinh: element-wise hyperbolic sine (DALI's math.sinh).
 *
 * Exports: const sl_op_def sl_op_math_sinh. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_SINH) and the schema kind; elementwise.h's functions do
 * the rest, exactly as for `arithmetic` with op "sinh". Invariant: the family's (state fixed at
 * init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(sinh, EW_SINH, UNARY,
               "Element-wise hyperbolic sine (DALI's math.sinh).\n\nInteger inputs give float32 "
               "(converted first); float types keep their type (float16 is computed in float32 "
               "and rounded). bool inputs fail.\n\nDiffers from DALI, where math.sinh is a "
               "Python function over the arithmetic operator: here it is a registered operator, "
               "the same as `arithmetic` with op \"sinh\". Runs on the CPU and on the GPU.");
