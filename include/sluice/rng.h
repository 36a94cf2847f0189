/* sluice/rng.h: counter-based random numbers (Philox 4x32-10).
 *
 * A stream is a key (a 64-bit seed) and a 128-bit counter (block, 0, a, b): independent streams
 * per (seed, a, b) with nothing shared, so what an operator draws for (node seed, iteration,
 * sample) does not depend on threads or scheduling. Operators get their streams from
 * sl_ctx_rng (sluice/op.h); applications may use the same generator.
 * Threads: an sl_rng is a value; use one per thread.
 */
#ifndef SLUICE_RNG_H
#define SLUICE_RNG_H

#include <stdint.h>

#include "sluice/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_rng {
    uint32_t key[2];
    uint32_t ctr[4];
    uint32_t out[4];
    int used; /* words of out[] consumed */
} sl_rng;

/* A stream keyed by (seed) with counter (a, b): a stream per (node seed, iteration, sample). */
SL_API void sl_rng_init(sl_rng *r, uint64_t seed, uint64_t a, uint64_t b);
SL_API uint32_t sl_rng_u32(sl_rng *r);
SL_API uint64_t sl_rng_u64(sl_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
SL_API double sl_rng_uniform(sl_rng *r);
/* Uniform integer in [0, n), unbiased; n > 0. */
SL_API uint64_t sl_rng_below(sl_rng *r, uint64_t n);
/* Standard normal (Box-Muller). */
SL_API double sl_rng_normal(sl_rng *r);

#ifdef __cplusplus
}
#endif
#endif
