/* src/ops/random/rng_shape.h: the `shape` argument of the random family (internal), and the
 * float32 / float64 `dtype` of the ops that draw real numbers.
 *
 * A random operator's `shape` (SL_ARG_INTS, optional, per sample) gives each sample's shape;
 * the number of dimensions is that of sample 0 and must be the same for the whole batch.
 * Exports (rng_shape.c) sl__rng_shape_ndim, sl__rng_shape_sample, sl__rng_shape_setup,
 * sl__rng_shape_numel and sl__rng_float_dtype_check; the argument definitions
 * SL__RNG_SHAPE_ARG_DEF and SL__RNG_FLOAT_DTYPE_ARG_DEF.
 */
#ifndef SLUICE_OPS_RANDOM_RNG_SHAPE_H
#define SLUICE_OPS_RANDOM_RNG_SHAPE_H

#include <stdint.h>

#include "sluice/op.h"

/* The `shape` argument of an op whose samples are `shape` draws (one scalar without it). */
#define SL__RNG_SHAPE_ARG_DEF                                                                      \
    {                                                                                              \
        .name = "shape", .type = SL_ARG_INTS,                                                      \
        .doc = "Shape of each sample. Unset: one scalar per sample.",                              \
        .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR, .max_len = SL_MAX_NDIM                           \
    }

/* The `dtype` argument of an op that draws real numbers; check it with
 * sl__rng_float_dtype_check in init. */
#define SL__RNG_FLOAT_DTYPE_ARG_DEF                                                                \
    {                                                                                              \
        .name = "dtype", .type = SL_ARG_DTYPE, .def = "\"float32\"",                               \
        .doc = "Output type: float32 or float64."                                                  \
    }

/* The number of dimensions `shape` (argument `arg`) gives: the length of sample 0's value, 0
 * when the argument is unset or the batch is empty. May exceed SL_MAX_NDIM (the caller
 * fails then). */
int sl__rng_shape_ndim(sl_ctx *ctx, int arg);

/* Reads sample i's `shape` into dims[0..ndim); fails (sl_fail) when its length differs from
 * ndim or an extent is negative. ndim 0 reads nothing. */
sl_status sl__rng_shape_sample(sl_ctx *ctx, int arg, int i, int ndim, int64_t *dims);

/* setup of an op whose output 0 has exactly `shape`'s dimensions: fails (sl_fail) past
 * SL_MAX_NDIM, else declares output 0 of type t, without layout. */
sl_status sl__rng_shape_setup(sl_ctx *ctx, int arg, sl_dtype t);

/* The number of draws in sample i: the product of output 0's first ndim extents, ndim that of
 * `shape` (1 without it). Call after setup_sample has set the shape. */
int64_t sl__rng_shape_numel(sl_ctx *ctx, int arg, int i);

/* init check of SL__RNG_FLOAT_DTYPE_ARG_DEF (argument `arg`): SL_EUNSUPPORTED (sl_init_fail)
 * unless float32 or float64. */
sl_status sl__rng_float_dtype_check(sl_op_init *ini, int arg);

#endif
