/* math.exp: element-wise natural exponential e^x (DALI's math.exp).
 *
 * Exports: const sl_op_def sl_op_math_exp. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_EXP) and the schema kind; elementwise.h's functions do the
 * rest, exactly as for `arithmetic` with op "exp". Invariant: the family's (state fixed at init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(
    exp, EW_EXP, UNARY,
    "Element-wise natural exponential e^x (DALI's math.exp).\n\nInteger inputs give "
    "float32 (converted first); float types keep their type (float16 is computed in "
    "float32 and rounded); overflow gives inf. bool inputs fail.\n\nDiffers from "
    "DALI, where math.exp is a Python function over the arithmetic operator: here it "
    "is a registered operator, the same as `arithmetic` with op \"exp\". Runs on the CPU "
    "and on the GPU (see `arithmetic` for the GPU run).");
