/* math.asin: element-wise arc sine (radians) (DALI's math.asin).
 *
 * Exports: const sl_op_def sl_op_math_asin. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_ASIN) and the schema kind; elementwise.h's functions do
 * the rest, exactly as for `arithmetic` with op "asin". Invariant: the family's (state fixed at
 * init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(asin, EW_ASIN, UNARY,
               "Element-wise arc sine (radians) (DALI's math.asin).\n\nInteger inputs give float32 "
               "(converted first); float types keep their type (float16 is computed in float32 "
               "and rounded). Values outside [-1, 1] give NaN. bool inputs fail.\n\nDiffers from "
               "DALI, where math.asin is a "
               "Python function over the arithmetic operator: here it is a registered operator, "
               "the same as `arithmetic` with op \"asin\". Runs on the CPU and on the GPU.");
