/* math.log: element-wise natural logarithm (DALI's math.log).
 *
 * Exports: const sl_op_def sl_op_math_log. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_LOG) and the schema kind; elementwise.h's functions do the
 * rest, exactly as for `arithmetic` with op "log". Invariant: the family's (state fixed at init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(
    log, EW_LOG, UNARY,
    "Element-wise natural logarithm (DALI's math.log).\n\nInteger inputs give float32 "
    "(converted first); float types keep their type (float16 is computed in float32 "
    "and rounded); log(0) is -inf, negative values give NaN. bool inputs "
    "fail.\n\nDiffers from DALI, where math.log is a Python function over the "
    "arithmetic operator: here it is a registered operator, the same as `arithmetic` "
    "with op \"log\". Runs on the CPU and on the GPU (see `arithmetic` for the GPU run).");
