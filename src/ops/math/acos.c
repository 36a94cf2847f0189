/* math.acos: element-wise arc cosine (radians) (DALI's math.acos).
 *
 * Exports: const sl_op_def sl_op_math_acos. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_ACOS) and the schema kind; elementwise.h's functions do
 * the rest, exactly as for `arithmetic` with op "acos". Invariant: the family's (state fixed at
 * init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(
    acos, EW_ACOS, UNARY,
    "Element-wise arc cosine (radians) (DALI's math.acos).\n\nInteger inputs give float32 "
    "(converted first); float types keep their type (float16 is computed in float32 "
    "and rounded). Values outside [-1, 1] give NaN. bool inputs fail.\n\nDiffers from DALI, where "
    "math.acos is a "
    "Python function over the arithmetic operator: here it is a registered operator, "
    "the same as `arithmetic` with op \"acos\". Runs on the CPU and on the GPU.");
