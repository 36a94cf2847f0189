/* test_half: float32 <-> float16 conversion (src/core/half.h) against NumPy.
 *
 * The table below was produced at test-writing time with NumPy 1.24.2
 * (Debian /usr/bin/python3):
 *     x = np.array([v], dtype=np.float32)
 *     bits, half = x.view(np.uint32)[0], x.astype(np.float16).view(np.uint16)[0]
 * over halfway cases, subnormals, the largest half, overflow, infinities and NaN payloads.
 * Then: every one of the 65536 half patterns survives half -> float -> half unchanged, and the
 * float value of each agrees with an independent computation (ldexp of the fields).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/half.h"

static const struct {
    uint32_t f32; /* input float32 bit pattern */
    uint16_t f16; /* np.float16 bit pattern */
} table[] = {
    {0x00000000u, 0x0000u}, /* 0.0 */
    {0x80000000u, 0x8000u}, /* -0.0 */
    {0x3f800000u, 0x3c00u}, /* 1.0 */
    {0xbf800000u, 0xbc00u}, /* -1.0 */
    {0x3dcccccdu, 0x2e66u}, /* 0.10000000149011612 */
    {0x3eaaaaabu, 0x3555u}, /* 0.3333333432674408 */
    {0xc0200000u, 0xc100u}, /* -2.5 */
    {0x437f0000u, 0x5bf8u}, /* 255.0 */
    {0x42f6e979u, 0x57b7u}, /* 123.45600128173828 */
    {0x40490fdbu, 0x4248u}, /* 3.1415927410125732 */
    {0xc49a522bu, 0xe4d3u}, /* -1234.5677490234375 */
    {0x477fe000u, 0x7bffu}, /* 65504.0 */
    {0x477fef00u, 0x7bffu}, /* 65519.0 */
    {0x477fefffu, 0x7bffu}, /* 65519.99609375 */
    {0x477ff000u, 0x7c00u}, /* 65520.0 */
    {0xc77ff000u, 0xfc00u}, /* -65520.0 */
    {0x47800000u, 0x7c00u}, /* 65536.0 */
    {0x501502f9u, 0x7c00u}, /* 10000000000.0 */
    {0x7f800000u, 0x7c00u}, /* inf */
    {0xff800000u, 0xfc00u}, /* -inf */
    {0x38800000u, 0x0400u}, /* 6.103515625e-05 */
    {0x387fe000u, 0x0400u}, /* 6.1005353927612305e-05 */
    {0x387fc000u, 0x03ffu}, /* 6.097555160522461e-05 */
    {0x33800000u, 0x0001u}, /* 5.960464477539063e-08 */
    {0xb3800000u, 0x8001u}, /* -5.960464477539063e-08 */
    {0x33000000u, 0x0000u}, /* 2.9802322387695312e-08 */
    {0x33000001u, 0x0001u}, /* 2.980232594040899e-08 */
    {0x33c00000u, 0x0002u}, /* 8.940696716308594e-08 */
    {0x34200000u, 0x0002u}, /* 1.4901161193847656e-07 */
    {0x35c00000u, 0x0018u}, /* 1.430511474609375e-06 */
    {0x32800000u, 0x0000u}, /* 1.4901161193847656e-08 */
    {0x000116c2u, 0x0000u}, /* 9.99994610111476e-41 */
    {0x80000001u, 0x8000u}, /* -1.401298464324817e-45 */
    {0x3f801000u, 0x3c00u}, /* 1.00048828125 */
    {0x3f803000u, 0x3c02u}, /* 1.00146484375 */
    {0x3f801001u, 0x3c01u}, /* 1.0004884004592896 */
    {0x3f7ff000u, 0x3c00u}, /* 0.999755859375 */
    {0x45001000u, 0x6800u}, /* 2049.0 */
    {0x45003000u, 0x6802u}, /* 2051.0 */
    {0x457ff800u, 0x6c00u}, /* 4095.5 */
    {0x7fc00000u, 0x7e00u}, /* nan */
    {0xffc00000u, 0xfe00u}, /* nan */
    {0x7fc02000u, 0x7e01u}, /* nan */
    {0x7f800001u, 0x7c01u}, /* nan */
    {0x7fffffffu, 0x7fffu}, /* nan */
};

static float from_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t to_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static void test_table_matches_numpy(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        uint16_t got = sl__half_from_float(from_bits(table[i].f32));
        if (got != table[i].f16)
            fail_msg("float 0x%08x -> half 0x%04x, NumPy says 0x%04x", (unsigned)table[i].f32,
                     (unsigned)got, (unsigned)table[i].f16);
    }
}

static void test_known_half_to_float(void **state)
{
    (void)state;
    /* half bits -> float bits, from np.float16(...).astype(np.float32) */
    static const struct {
        uint16_t h;
        uint32_t f;
    } t[] = {{0x0001, 0x33800000u}, {0x03ff, 0x387fc000u}, {0x0400, 0x38800000u},
             {0x7bff, 0x477fe000u}, {0x3555, 0x3eaaa000u}, {0x8001, 0xb3800000u},
             {0x7c00, 0x7f800000u}, {0xfc00, 0xff800000u}, {0x0000, 0x00000000u},
             {0x8000, 0x80000000u}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        assert_int_equal(to_bits(sl__half_to_float(t[i].h)), t[i].f);
}

/* Independent decode of a half pattern with ldexp (no bit tricks). */
static double reference_value(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

static void test_exhaustive_round_trip(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < 65536; i++) {
        uint16_t h = (uint16_t)i;
        float f = sl__half_to_float(h);
        int e = (h >> 10) & 0x1f;
        if (e == 31 && (h & 0x3ff)) {
            if (!isnan(f))
                fail_msg("half 0x%04x is NaN, float is not", (unsigned)h);
            continue;
        }
        if (e == 31) {
            assert_true(isinf(f));
        } else if ((double)f != reference_value(h) || !!signbit(f) != !!(h & 0x8000)) {
            fail_msg("half 0x%04x -> %.10g, expected %.10g", (unsigned)h, (double)f,
                     reference_value(h));
        }
        uint16_t back = sl__half_from_float(f);
        if (back != h)
            fail_msg("half 0x%04x -> float -> half 0x%04x", (unsigned)h, (unsigned)back);
    }
}

/* Between two neighbouring halves a and b (positive, finite), floats below the midpoint go to
 * a, above to b, and the midpoint itself to the even one. */
static void test_midpoints_round_to_even(void **state)
{
    (void)state;
    for (uint32_t a = 0; a < 0x7bff; a++) {
        double lo = reference_value((uint16_t)a), hi = reference_value((uint16_t)(a + 1));
        float mid = (float)((lo + hi) / 2); /* exact: float has 13 more mantissa bits */
        uint16_t even = (a & 1) ? (uint16_t)(a + 1) : (uint16_t)a;
        assert_int_equal(sl__half_from_float(mid), even);
        assert_int_equal(sl__half_from_float(nextafterf(mid, 0.0f)), a);
        assert_int_equal(sl__half_from_float(nextafterf(mid, INFINITY)), a + 1);
        assert_int_equal(sl__half_from_float(-mid), 0x8000 | even);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_matches_numpy),
        cmocka_unit_test(test_known_half_to_float),
        cmocka_unit_test(test_exhaustive_round_trip),
        cmocka_unit_test(test_midpoints_round_to_even),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
