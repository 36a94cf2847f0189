/* math.tanh: element-wise hyperbolic tangent (DALI's math.tanh).
 *
 * Exports: const sl_op_def sl_op_math_tanh. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_TANH) and the schema kind; elementwise.h's functions do
 * the rest, exactly as for `arithmetic` with op "tanh". Invariant: the family's (state fixed at
 * init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(tanh, EW_TANH, UNARY,
               "Element-wise hyperbolic tangent (DALI's math.tanh).\n\nInteger inputs give float32 "
               "(converted first); float types keep their type (float16 is computed in float32 "
               "and rounded). bool inputs fail.\n\nDiffers from DALI, where math.tanh is a "
               "Python function over the arithmetic operator: here it is a registered operator, "
               "the same as `arithmetic` with op \"tanh\". Runs on the CPU and on the GPU.");
