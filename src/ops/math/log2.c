/* math.log2: element-wise base-2 logarithm (DALI's math.log2).
 *
 * Exports: const sl_op_def sl_op_math_log2. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_LOG2) and the schema kind; elementwise.h's functions do
 * the rest, exactly as for `arithmetic` with op "log2". Invariant: the family's (state fixed at
 * init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(log2, EW_LOG2, UNARY,
               "Element-wise base-2 logarithm (DALI's math.log2).\n\nInteger inputs give float32 "
               "(converted first); float types keep their type (float16 is computed in float32 "
               "and rounded). 0 gives -inf, negative values NaN. bool inputs fail.\n\nDiffers from "
               "DALI, where math.log2 is a "
               "Python function over the arithmetic operator: here it is a registered operator, "
               "the same as `arithmetic` with op \"log2\". Runs on the CPU and on the GPU.");
