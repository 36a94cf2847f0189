/* ops/image/noise.h: what the noise operators (noise.gaussian, noise.shot,
 * noise.salt_and_pepper) share: the element loop that converts a sample to float64 in chunks,
 * lets the operator change the values, and converts them back to the sample's type with DALI's
 * saturating conversion (rounding to nearest for integers); a Poisson sampler.
 *
 * Exports (noise.c): sl__noise_setup, sl__noise_setup_sample, sl__noise_map, sl__rng_poisson.
 * Invariant: every draw comes from the sample's stream (sl_ctx_rng), in element order, so the
 * output depends only on (seed, node, iteration, sample).
 */
#ifndef SLUICE_OPS_IMAGE_NOISE_H
#define SLUICE_OPS_IMAGE_NOISE_H

#include <stdint.h>

#include "sluice/op.h"

/* setup: output 0 of the input's type, shape and layout (bool input fails). */
sl_status sl__noise_setup(sl_ctx *ctx);
sl_status sl__noise_setup_sample(sl_ctx *ctx, int i);

/* Changes n values in place (float64), drawing from r. */
typedef void (*sl__noise_fn)(double *v, int64_t n, sl_rng *r, const void *params);

/* run_sample: output = fn(input) for sample i, chunk by chunk. */
sl_status sl__noise_map(sl_ctx *ctx, int i, sl__noise_fn fn, const void *params);

/* A Poisson(lambda) draw, lambda >= 0 (NaN: 0): multiplication of uniforms below 10,
 * Hormann's PTRS transformed rejection above (NumPy's algorithm). */
double sl__rng_poisson(sl_rng *r, double lambda);

#endif
