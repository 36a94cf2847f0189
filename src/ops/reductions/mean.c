/* reductions.mean: the mean of the elements along the given axes (DALI's fn.reductions.mean).
 *
 * Exports: const sl_op_def sl_op_reductions_mean. One SL__RED_OP line of the reduction family
 * (reduce.h); reduce.c does the work for all eight reductions. Invariant: stateless.
 */
#include "ops/reductions/reduce.h"

SL__RED_OP(mean, SL__RED_MEAN, DTYPE,
           "Mean of the elements along the given axes (DALI's reductions.mean).\n\n"
           "Output type: `dtype`, else float32; an integer dtype gets the mean rounded to nearest "
           "(halves away from zero) and saturated. Accumulates in double. The mean of an empty "
           "set is NaN (NumPy's).\n\n"
           "`device=\"gpu\"` reduces on the GPU with the same results (float data: up to the last "
           "bit, the order of the sum differing).");
