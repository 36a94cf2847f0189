/* math.tan: element-wise tangent (radians) (DALI's math.tan).
 *
 * Exports: const sl_op_def sl_op_math_tan. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_TAN) and the schema kind; elementwise.h's functions do the
 * rest, exactly as for `arithmetic` with op "tan". Invariant: the family's (state fixed at init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(tan, EW_TAN, UNARY,
               "Element-wise tangent (radians) (DALI's math.tan).\n\nInteger inputs give float32 "
               "(converted first); float types keep their type (float16 is computed in float32 "
               "and rounded). bool inputs fail.\n\nDiffers from DALI, where math.tan is a "
               "Python function over the arithmetic operator: here it is a registered operator, "
               "the same as `arithmetic` with op \"tan\". Runs on the CPU and on the GPU.");
