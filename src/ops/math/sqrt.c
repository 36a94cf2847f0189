/* math.sqrt: element-wise square root (DALI's math.sqrt).
 *
 * Exports: const sl_op_def sl_op_math_sqrt. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_SQRT) and the schema kind; elementwise.h's functions do
 * the rest, exactly as for `arithmetic` with op "sqrt". Invariant: the family's (state fixed at
 * init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(
    sqrt, EW_SQRT, UNARY,
    "Element-wise square root (DALI's math.sqrt).\n\nInteger inputs give float32 "
    "(converted first); float types keep their type (float16 is computed in float32 "
    "and rounded). Negative values give NaN. bool inputs fail.\n\nDiffers from DALI, "
    "where math.sqrt is a Python function over the arithmetic operator: here it is a "
    "registered operator, the same as `arithmetic` with op \"sqrt\". Runs on the CPU and on "
    "the GPU (see `arithmetic` for the GPU run).");
