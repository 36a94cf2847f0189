/* core/half.h: IEEE 754 binary16 <-> binary32 conversion, header-only.
 *
 * Exports (static inline, internal): sl__half_from_float, sl__half_to_float.
 * Invariant: results are bit-identical to NumPy's float32 <-> float16 casts (which implement
 * IEEE round-to-nearest-even): subnormals are produced and read exactly, values from 65520 up
 * round to infinity, NaN keeps its sign and the top 10 bits of its payload (a payload that would
 * vanish becomes 1 so the value stays NaN). Half -> float is exact, so
 * half_from_float(half_to_float(h)) == h for every pattern h.
 *
 * Plain integer code, no F16C/_Float16, so it builds anywhere. The common case (a normal half)
 * takes one predictable branch and rounds without branching, so data with random low bits (any
 * normalised image) costs no mispredictions.
 */
#ifndef SLUICE_CORE_HALF_H
#define SLUICE_CORE_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint16_t sl__half_from_float(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;

    /* Normal half range [2^-14, 65536), the common case: one well-predicted branch, then a
     * branch-free round to nearest even (adding 0xfff + the kept LSB carries exactly when the
     * dropped 13 bits are above half, or at half with an odd LSB). A carry into the exponent is
     * the correct result, up to 0x7c00 = inf for 65520 <= |f| < 65536. */
    if (ax - 0x38800000u < 0x47800000u - 0x38800000u) {
        uint32_t r = ax - 0x38000000u; /* rebias the exponent 127 -> 15 */
        return (uint16_t)(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
    }
    if (ax >= 0x7f800000u) { /* inf or NaN */
        if (ax == 0x7f800000u)
            return (uint16_t)(sign | 0x7c00u);
        uint16_t h = (uint16_t)(0x7c00u | ((ax & 0x7fffffu) >> 13));
        if (h == 0x7c00u) /* payload only in the dropped bits: keep it a NaN */
            h = 0x7c01u;
        return (uint16_t)(sign | h);
    }
    if (ax >= 0x47800000u) /* >= 65536: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (ax <= 0x33000000u) /* <= 2^-25: rounds to zero (2^-25 is a tie, zero is even) */
        return sign;
    /* Subnormal half: value = m * 2^(e-150) = (m >> s) units of 2^-24 with s = 126 - e. */
    uint32_t e = ax >> 23; /* 102 .. 112 */
    uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    uint32_t s = 126u - e; /* 14 .. 24 */
    uint32_t h = m >> s;
    uint32_t rem = m & ((1u << s) - 1u);
    uint32_t halfway = 1u << (s - 1u);
    if (rem > halfway || (rem == halfway && (h & 1u)))
        h++; /* may become 0x400, the smallest normal: still the right encoding */
    return (uint16_t)(sign | h);
}

static inline float sl__half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu;
    uint32_t m = h & 0x3ffu;
    uint32_t x;
    if (e == 0) {
        if (m == 0) {
            x = sign;
        } else { /* subnormal: normalise m so its leading 1 becomes the implicit bit */
            uint32_t shift = 0;
            while (!(m & 0x400u)) {
                m <<= 1;
                shift++;
            }
            x = sign | ((113u - shift) << 23) | ((m & 0x3ffu) << 13);
        }
    } else if (e == 31) {
        x = sign | 0x7f800000u | (m << 13);
    } else {
        x = sign | ((e + 112u) << 23) | (m << 13);
    }
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

#endif
