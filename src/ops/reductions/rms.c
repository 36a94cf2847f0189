/* reductions.rms: the root mean square of the elements along the given axes (DALI's
 * fn.reductions.rms).
 *
 * Exports: const sl_op_def sl_op_reductions_rms. One SL__RED_OP line of the reduction family
 * (reduce.h); reduce.c does the work for all eight reductions. Invariant: stateless.
 */
#include "ops/reductions/reduce.h"

SL__RED_OP(rms, SL__RED_RMS, DTYPE,
           "Root mean square of the elements along the given axes (DALI's reductions.rms).\n\n"
           "sqrt(mean(x * x)); output type `dtype`, else float32. Computed in double.\n\n"
           "`device=\"gpu\"` reduces on the GPU with the same results (float data: up to the last "
           "bit, the order of the sum differing).");
