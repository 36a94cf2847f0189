/* reductions.sum: the sum of the elements along the given axes (DALI's fn.reductions.sum).
 *
 * Exports: const sl_op_def sl_op_reductions_sum. One SL__RED_OP line of the reduction family
 * (reduce.h); reduce.c does the work for all eight reductions. Invariant: stateless.
 */
#include "ops/reductions/reduce.h"

SL__RED_OP(sum, SL__RED_SUM, DTYPE,
           "Sum of the elements along the given axes (DALI's reductions.sum).\n\n"
           "Output type: `dtype`, else uint64 for uint8..uint32 (and bool), int64 for int8..int32, "
           "the input type otherwise (DALI's defaults). Integer sums wrap in the output type; "
           "float sums accumulate in double. An empty set sums to 0.\n\n"
           "`device=\"gpu\"` reduces on the GPU with the same results (float data: up to the last "
           "bit, the order of the sum differing).");
