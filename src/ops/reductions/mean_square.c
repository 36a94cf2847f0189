/* reductions.mean_square: the mean of the squares of the elements along the given axes (DALI's
 * fn.reductions.mean_square).
 *
 * Exports: const sl_op_def sl_op_reductions_mean_square. One SL__RED_OP line of the reduction
 * family (reduce.h); reduce.c does the work for all eight reductions. Invariant: stateless.
 */
#include "ops/reductions/reduce.h"

SL__RED_OP(mean_square, SL__RED_MEAN_SQUARE, DTYPE,
           "Mean of the squared elements along the given axes (DALI's reductions.mean_square).\n\n"
           "Output type: `dtype`, else float32. Squares and sums in double, so integer inputs do "
           "not overflow.\n\n"
           "`device=\"gpu\"` reduces on the GPU with the same results (float data: up to the last "
           "bit, the order of the sum differing).");
