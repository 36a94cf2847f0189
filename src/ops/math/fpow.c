/* math.fpow: element-wise power a ** b computed in floating point (DALI's math.fpow).
 *
 * Exports: const sl_op_def sl_op_math_fpow. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_FPOW) and the schema kind; elementwise.h's functions do
 * the rest, exactly as for `arithmetic` with op "fpow". Invariant: the family's (state fixed at
 * init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(
    fpow, EW_FPOW, BINARY,
    "Element-wise power a ** b in floating point (DALI's math.fpow).\n\nOperands: two inputs "
    "(broadcast with NumPy's rules), or one input and a constant (scalar / scalar_int, the "
    "exponent unless scalar_left). Two integer operands give float32; otherwise the promoted "
    "float type (see `arithmetic`). Computed with pow. Two bool operands fail.\n\nDiffers from "
    "DALI, where math.fpow is a Python function over the arithmetic operator: here it is a "
    "registered operator, the same as `arithmetic` with op \"fpow\". Runs on the CPU and on the "
    "GPU.");
