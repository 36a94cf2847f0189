/* src/core/rng.c: Philox 4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
 * 3", SC'11), the counter-based generator behind every random operator.
 *
 * A stream is a key (64-bit seed) and a 128-bit counter: ctr = (block, 0, a, b) with `a`, `b`
 * chosen by the caller (iteration, sample). Streams are independent functions of (seed, a, b),
 * so results do not depend on threads, scheduling or prefetch depth. Also the hashes that
 * derive per-node keys, and sl__seed_fresh: the seed of a pipeline created without one.
 */
#include <math.h>
#include <stdatomic.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static void philox_round(uint32_t c[4], const uint32_t k[2])
{
    uint64_t p0 = (uint64_t)PHILOX_M0 * c[0];
    uint64_t p1 = (uint64_t)PHILOX_M1 * c[2];
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    c[0] = hi1 ^ c[1] ^ k[0];
    c[1] = lo1;
    c[2] = hi0 ^ c[3] ^ k[1];
    c[3] = lo0;
}

/* One Philox4x32-10 block: out = F(key, ctr). */
void sl__philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int r = 0; r < 10; r++) {
        philox_round(c, k);
        k[0] += PHILOX_W0;
        k[1] += PHILOX_W1;
    }
    for (int i = 0; i < 4; i++)
        out[i] = c[i];
}

void sl_rng_init(sl_rng *r, uint64_t seed, uint64_t a, uint64_t b)
{
    r->key[0] = (uint32_t)seed;
    r->key[1] = (uint32_t)(seed >> 32);
    r->ctr[0] = 0; /* block counter: 2^32 blocks (2^34 words) per stream */
    r->ctr[1] = (uint32_t)(a >> 32) ^ (uint32_t)(b >> 32) * 0x9E3779B9u;
    r->ctr[2] = (uint32_t)a;
    r->ctr[3] = (uint32_t)b;
    r->used = 4;
}

uint32_t sl_rng_u32(sl_rng *r)
{
    if (r->used == 4) {
        sl__philox4x32(r->ctr, r->key, r->out);
        r->ctr[0]++;
        r->used = 0;
    }
    return r->out[r->used++];
}

uint64_t sl_rng_u64(sl_rng *r)
{
    uint64_t hi = sl_rng_u32(r);
    return (hi << 32) | sl_rng_u32(r);
}

double sl_rng_uniform(sl_rng *r)
{
    return (double)(sl_rng_u64(r) >> 11) * 0x1.0p-53;
}

uint64_t sl_rng_below(sl_rng *r, uint64_t n)
{
    /* Lemire's rejection on 64 bits would need 128-bit products; a threshold rejection on the
     * plain modulo is simple and unbiased. */
    uint64_t threshold = (0 - n) % n;
    for (;;) {
        uint64_t x = sl_rng_u64(r);
        if (x >= threshold)
            return x % n;
    }
}

double sl_rng_normal(sl_rng *r)
{
    double u1 = sl_rng_uniform(r), u2 = sl_rng_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

uint64_t sl__mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

uint64_t sl__hash_str(const char *s)
{
    uint64_t h = 0xCBF29CE484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001B3ull;
    }
    return sl__mix64(h);
}

int64_t sl__seed_fresh(void)
{
    static atomic_uint_fast64_t calls;
    uint64_t v;
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        v = sl__mix64((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
        v = sl__mix64(v ^ ((uint64_t)getpid() << 32) ^ atomic_fetch_add(&calls, 1));
    }
    return (int64_t)(v >> 1);
}
