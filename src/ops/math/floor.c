/* math.floor: element-wise floor (rounding toward minus infinity) (DALI's math.floor).
 *
 * Exports: const sl_op_def sl_op_math_floor. A thin operator of the element-wise family: one
 * SL__EW_MATH_OP fixes the operation (EW_FLOOR) and the schema kind; elementwise.h's functions do
 * the rest, exactly as for `arithmetic` with op "floor". Invariant: the family's (state fixed at
 * init).
 */
#include "ops/math/elementwise.h"

SL__EW_MATH_OP(floor, EW_FLOOR, UNARY,
               "Element-wise floor (rounding toward minus infinity) (DALI's "
               "math.floor).\n\nInteger inputs give float32 "
               "(converted first); float types keep their type (float16 is computed in float32 "
               "and rounded). bool inputs fail.\n\nDiffers from DALI, where math.floor is a "
               "Python function over the arithmetic operator: here it is a registered operator, "
               "the same as `arithmetic` with op \"floor\". Runs on the CPU and on the GPU.");
