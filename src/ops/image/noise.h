/* ops/image/noise.h: what the noise operators (noise.gaussian, noise.shot,
 * noise.salt_and_pepper) share: the element loop that converts a sample to float64 in chunks,
 * lets the operator change the values, and converts them back to the sample's type with DALI's
 * saturating conversion (rounding to nearest for integers); a Poisson sampler.
 *
 * Exports (noise.c): sl__noise_setup, sl__noise_setup_sample, sl__noise_map, sl__rng_poisson;
 * (noise.cu, builds with CUDA) sl__noise_run_gpu.
 * Invariant: every draw comes from the sample's stream (sl_ctx_rng) — in element order, or
 * (noise.shot) from element e's own stream derived from it (noise_rng.h) — so the output
 * depends only on (seed, node, iteration, sample), not on the backend.
 */
#ifndef SLUICE_OPS_IMAGE_NOISE_H
#define SLUICE_OPS_IMAGE_NOISE_H

#include <stdint.h>

#include "sluice/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* setup: output 0 of the input's type, shape and layout (bool input fails). */
sl_status sl__noise_setup(sl_ctx *ctx);
sl_status sl__noise_setup_sample(sl_ctx *ctx, int i);

/* Changes n values in place (float64), elements first .. first + n - 1 of the sample, drawing
 * from r (the sample's stream, shared by the chunks in order). */
typedef void (*sl__noise_fn)(double *v, int64_t n, int64_t first, sl_rng *r, const void *params);

/* run_sample: output = fn(input) for sample i, chunk by chunk. */
sl_status sl__noise_map(sl_ctx *ctx, int i, sl__noise_fn fn, const void *params);

/* A Poisson(lambda) draw, lambda >= 0 (NaN: 0): multiplication of uniforms below 10,
 * Hormann's PTRS transformed rejection above (NumPy's algorithm); noise_rng.h's
 * sl__nr_poisson. */
double sl__rng_poisson(sl_rng *r, double lambda);

#ifdef SLUICE_HAVE_CUDA
/* The GPU run (noise.cu) of the noise operators: one launch for the batch, drawing what the CPU
 * run draws (noise_rng.h), so the results do not depend on the backend. */
enum { SL__NOISE_GAUSSIAN, SL__NOISE_SHOT, SL__NOISE_SALT_AND_PEPPER };

/* One sample of a noise launch. sl__noise_run_gpu fills in, out, numel and r (the sample's
 * stream); the op's function the rest. */
typedef struct sl__noise_gpu {
    const void *in; /* device */
    void *out;      /* device */
    int64_t numel;
    sl_rng r;
    double a, b; /* gaussian: mean, stddev; shot: factor; salt_and_pepper: prob, salt_vs_pepper */
    int64_t outer, ch, inner;         /* salt_and_pepper: pixels around the channel axis */
    unsigned char salt[8], pepper[8]; /* salt_and_pepper: values in the input's type */
} sl__noise_gpu;

/* Fills sample i's parameters (a, b, ...); SL_OK or the error recorded with sl_fail. */
typedef sl_status (*sl__noise_gpu_fn)(sl_ctx *ctx, int i, sl__noise_gpu *p);

/* run_gpu of noise operator `kind`: fn for each sample on the host (errors name the sample),
 * then one launch. */
sl_status sl__noise_run_gpu(sl_ctx *ctx, int kind, sl__noise_gpu_fn fn);
#endif

#ifdef __cplusplus
}
#endif
#endif
