/* reductions.max: the maximum of the elements along the given axes (DALI's fn.reductions.max).
 *
 * Exports: const sl_op_def sl_op_reductions_max. One SL__RED_OP line of the reduction family
 * (reduce.h); reduce.c does the work for all eight reductions. Invariant: stateless.
 */
#include "ops/reductions/reduce.h"

SL__RED_OP(max, SL__RED_MAX, BASIC,
           "Maximum of the elements along the given axes (DALI's reductions.max).\n\n"
           "The output has the input's type. `axes` (or `axis_names`) picks the reduced axes, all "
           "when neither is given, none for an empty list; `keep_dims` keeps them as extents of "
           "1. NaN propagates (as NumPy's max). Reducing an empty set (an extent of 0 along a "
           "reduced axis) is an error naming the sample, as in NumPy.\n\n"
           "`device=\"gpu\"` reduces on the GPU with the same results.");
