/* math.abs: element-wise absolute value, keeping the element type (DALI's math.abs).
 *
 * Exports: const sl_op_def sl_op_math_abs. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_ABS) and the schema kind; elementwise.h's functions do the
 * rest, exactly as for `arithmetic` with op "abs". Invariant: the family's (state fixed at init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(
    abs, EW_ABS, UNARY,
    "Element-wise absolute value, keeping the element type (DALI's "
    "math.abs).\n\nSigned integers wrap (abs of the minimum is the minimum), unsigned "
    "values pass unchanged, float types use fabs (abs(-0.0) is +0.0). bool inputs "
    "fail.\n\nDiffers from DALI, where math.abs is a Python function over the "
    "arithmetic operator: here it is a registered operator, the same as `arithmetic` "
    "with op \"abs\". Runs on the CPU and on the GPU (see `arithmetic` for the GPU run).");
