/* reductions.std_dev: the standard deviation of the elements along the given axes (DALI's
 * fn.reductions.std_dev).
 *
 * Exports: const sl_op_def sl_op_reductions_std_dev. One SL__RED_OP line of the reduction family
 * (reduce.h); reduce.c does the work for all eight reductions. Invariant: stateless.
 */
#include "ops/reductions/reduce.h"

SL__RED_OP(std_dev, SL__RED_STD_DEV, MEAN_IN,
           "Standard deviation of the elements along the given axes, around a given mean (DALI's "
           "reductions.std_dev).\n\n"
           "Inputs: the data and its mean (usually fn.reductions.mean of the data with the same "
           "axes; one value per output element, or one value for all). Output: float32, "
           "sqrt(sum((x - mean)^2) / (N - ddof)) over the N reduced elements, as NumPy's std "
           "with the same mean.\n\n"
           "`device=\"gpu\"` reduces on the GPU with the same results (float data: up to the last "
           "bit, the order of the sum differing).");
