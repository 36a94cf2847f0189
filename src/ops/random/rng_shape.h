/* src/ops/random/rng_shape.h: the `shape` argument of the random family (internal).
 *
 * A random operator's `shape` (SL_ARG_INTS, optional, per sample) gives each sample's shape;
 * the number of dimensions is that of sample 0 and must be the same for the whole batch.
 * Exports sl__rng_shape_ndim and sl__rng_shape_sample (rng_shape.c).
 */
#ifndef SLUICE_OPS_RANDOM_RNG_SHAPE_H
#define SLUICE_OPS_RANDOM_RNG_SHAPE_H

#include <stdint.h>

#include "sluice/op.h"

/* The number of dimensions `shape` (argument `arg`) gives: the length of sample 0's value, 0
 * when the argument is unset or the batch is empty. May exceed SL_MAX_NDIM (the caller
 * fails then). */
int sl__rng_shape_ndim(sl_ctx *ctx, int arg);

/* Reads sample i's `shape` into dims[0..ndim); fails (sl_fail) when its length differs from
 * ndim or an extent is negative. ndim 0 reads nothing. */
sl_status sl__rng_shape_sample(sl_ctx *ctx, int arg, int i, int ndim, int64_t *dims);

#endif
