/* ops/image/noise_rng.h: the noise operators' random draws as inline code that compiles both as
 * C (the CPU operators) and as CUDA C++ (noise.cu, host and device), so both backends draw the
 * same numbers from the same Philox streams.
 *
 * Exports (static inline; __host__ __device__ under nvcc):
 *   sl__nr_u32 / sl__nr_uniform / sl__nr_normal   sluice/rng.h's sl_rng_u32 / sl_rng_uniform /
 *                      sl_rng_normal, the same arithmetic on the same sl_rng state (its Philox
 *                      4x32-10 is core/rng.c's, checked against it by the GPU tests)
 *   sl__nr_seek(r, w)  positions a fresh stream at its w-th 32-bit word, which is where a draw
 *                      in element order would find it when every earlier element used a fixed
 *                      number of words: the GPU's way to start element e of noise.gaussian (4
 *                      words each) or pixel p of noise.salt_and_pepper (2 words each) without
 *                      drawing the ones before
 *   sl__nr_element(r, e)  the stream of element e of a sample (its key mixed with e): for draws
 *                      of varying length (noise.shot's Poisson rejection sampling), so each
 *                      element draws from its own stream on either backend
 *   sl__nr_poisson(r, lambda)  a Poisson draw (noise.h's sl__rng_poisson)
 * Invariant: pure functions of the state passed in.
 */
#ifndef SLUICE_OPS_IMAGE_NOISE_RNG_H
#define SLUICE_OPS_IMAGE_NOISE_RNG_H

#include <math.h>
#include <stdint.h>

#include "sluice/rng.h"

#ifdef __CUDACC__
#define SL__NR static __host__ __device__ __forceinline__
#else
#define SL__NR static inline
#endif

/* One Philox4x32-10 block (core/rng.c's sl__philox4x32). */
SL__NR void sl__nr_block(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    uint32_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c[0];
        uint64_t p1 = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c[0] = hi1 ^ c[1] ^ k0;
        c[1] = lo1;
        c[2] = hi0 ^ c[3] ^ k1;
        c[3] = lo0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    for (int i = 0; i < 4; i++)
        out[i] = c[i];
}

SL__NR uint32_t sl__nr_u32(sl_rng *r)
{
    if (r->used == 4) {
        sl__nr_block(r->ctr, r->key, r->out);
        r->ctr[0]++;
        r->used = 0;
    }
    return r->out[r->used++];
}

SL__NR double sl__nr_uniform(sl_rng *r)
{
    uint64_t hi = sl__nr_u32(r);
    uint64_t x = (hi << 32) | sl__nr_u32(r);
    return (double)(x >> 11) * 0x1.0p-53;
}

SL__NR double sl__nr_normal(sl_rng *r)
{
    double u1 = sl__nr_uniform(r), u2 = sl__nr_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* r (fresh from sl_ctx_rng) moved to its word w: block w / 4 (the block counter is 32 bits and
 * wraps, as sl_rng_u32's does), word w % 4 of it. */
SL__NR void sl__nr_seek(sl_rng *r, uint64_t w)
{
    r->ctr[0] = (uint32_t)(w >> 2);
    r->used = 4;
    if (w & 3) {
        sl__nr_block(r->ctr, r->key, r->out);
        r->ctr[0]++;
        r->used = (int)(w & 3);
    }
}

/* r (fresh from sl_ctx_rng) made the stream of element e: the key xor-ed with a bijective
 * mix of e (splitmix64's finaliser), so the elements of a sample have distinct streams. */
SL__NR void sl__nr_element(sl_rng *r, uint64_t e)
{
    uint64_t x = e + 0x9E3779B97F4A7C15ull;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    r->key[0] ^= (uint32_t)x;
    r->key[1] ^= (uint32_t)(x >> 32);
    r->ctr[0] = 0;
    r->used = 4;
}

/* Poisson(lambda), lambda >= 0 (NaN: 0): multiplication of uniforms below 10, Hormann's PTRS
 * transformed rejection above (NumPy's algorithm). */
SL__NR double sl__nr_poisson(sl_rng *r, double lam)
{
    if (!(lam > 0))
        return 0;
    if (lam < 10) {
        double l = exp(-lam), p = 1.0;
        double k = 0;
        for (;;) {
            p *= sl__nr_uniform(r);
            if (p <= l)
                return k;
            k += 1;
        }
    }
    double slam = sqrt(lam), loglam = log(lam);
    double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
        double u = sl__nr_uniform(r) - 0.5, v = sl__nr_uniform(r);
        double us = 0.5 - fabs(u);
        double k = floor((2 * a / us + b) * u + lam + 0.43);
        if (us >= 0.07 && v <= vr)
            return k;
        if (k < 0 || (us < 0.013 && v > us))
            continue;
        if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -lam + k * loglam - lgamma(k + 1))
            return k;
    }
}

#endif
