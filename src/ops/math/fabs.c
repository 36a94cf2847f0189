/* math.fabs: element-wise absolute value as a float (NumPy's fabs) (DALI's math.fabs).
 *
 * Exports: const sl_op_def sl_op_math_fabs. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_FABS) and the schema kind; elementwise.h's functions do
 * the rest, exactly as for `arithmetic` with op "fabs". Invariant: the family's (state fixed at
 * init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(fabs, EW_FABS, UNARY,
               "Element-wise absolute value as a float (NumPy's fabs) (DALI's "
               "math.fabs).\n\nInteger inputs give float32 "
               "(converted first); float types keep their type (float16 is computed in float32 "
               "and rounded). bool inputs fail.\n\nDiffers from DALI, where math.fabs is a "
               "Python function over the arithmetic operator: here it is a registered operator, "
               "the same as `arithmetic` with op \"fabs\". Runs on the CPU and on the GPU.");
