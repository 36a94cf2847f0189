/* math.log10: element-wise base-10 logarithm (DALI's math.log10).
 *
 * Exports: const sl_op_def sl_op_math_log10. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_LOG10) and the schema kind; elementwise.h's functions do
 * the rest, exactly as for `arithmetic` with op "log10". Invariant: the family's (state fixed at
 * init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(log10, EW_LOG10, UNARY,
               "Element-wise base-10 logarithm (DALI's math.log10).\n\nInteger inputs give float32 "
               "(converted first); float types keep their type (float16 is computed in float32 "
               "and rounded). 0 gives -inf, negative values NaN. bool inputs fail.\n\nDiffers from "
               "DALI, where math.log10 is a "
               "Python function over the arithmetic operator: here it is a registered operator, "
               "the same as `arithmetic` with op \"log10\". Runs on the CPU and on the GPU.");
