/* math.cos: element-wise cosine (radians) (DALI's math.cos).
 *
 * Exports: const sl_op_def sl_op_math_cos. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_COS) and the schema kind; elementwise.h's functions do the
 * rest, exactly as for `arithmetic` with op "cos". Invariant: the family's (state fixed at init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(cos, EW_COS, UNARY,
               "Element-wise cosine (radians) (DALI's math.cos).\n\nInteger inputs give float32 "
               "(converted first); float types keep their type (float16 is computed in float32 "
               "and rounded). bool inputs fail.\n\nDiffers from DALI, where math.cos is a "
               "Python function over the arithmetic operator: here it is a registered operator, "
               "the same as `arithmetic` with op \"cos\". Runs on the CPU and on the GPU.");
