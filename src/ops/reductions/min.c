/* reductions.min: the minimum of the elements along the given axes (DALI's fn.reductions.min).
 *
 * Exports: const sl_op_def sl_op_reductions_min. One SL__RED_OP line of the reduction family
 * (reduce.h); reduce.c does the work for all eight reductions. Invariant: stateless.
 */
#include "ops/reductions/reduce.h"

SL__RED_OP(min, SL__RED_MIN, BASIC,
           "Minimum of the elements along the given axes (DALI's reductions.min).\n\n"
           "The output has the input's type. `axes` (or `axis_names`) picks the reduced axes, all "
           "when neither is given, none for an empty list; `keep_dims` keeps them as extents of "
           "1. NaN propagates (as NumPy's min). Reducing an empty set (an extent of 0 along a "
           "reduced axis) is an error naming the sample, as in NumPy.\n\n"
           "`device=\"gpu\"` reduces on the GPU with the same results.");
