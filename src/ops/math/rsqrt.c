/* math.rsqrt: element-wise reciprocal square root 1 / sqrt(x) (DALI's math.rsqrt).
 *
 * Exports: const sl_op_def sl_op_math_rsqrt. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_RSQRT) and the schema kind; elementwise.h's functions do
 * the rest, exactly as for `arithmetic` with op "rsqrt". Invariant: the family's (state fixed at
 * init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(rsqrt, EW_RSQRT, UNARY,
               "Element-wise reciprocal square root 1 / sqrt(x) (DALI's math.rsqrt).\n\nInteger "
               "inputs give float32 "
               "(converted first); float types keep their type (float16 is computed in float32 "
               "and rounded). 0 gives inf, negative values NaN. bool inputs fail.\n\nDiffers from "
               "DALI, where math.rsqrt is a "
               "Python function over the arithmetic operator: here it is a registered operator, "
               "the same as `arithmetic` with op \"rsqrt\". Runs on the CPU and on the GPU.");
