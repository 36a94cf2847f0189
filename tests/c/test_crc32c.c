/* test_crc32c: the CRC-32C behind TFRecord's record checks (src/ops/readers/tfrecord_parse.c),
 * both paths — the crc32 instruction where the CPU has SSE4.2 and the slicing-by-8 tables — against
 * the bitwise definition (reflected polynomial 0x82F63B78) and the standard check value, over
 * every length 0..600 at every alignment 0..7, so the 8-byte steps and the byte tails are all hit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ops/readers/tfrecord_parse.h"

static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

static void test_check_value(void **state)
{
    (void)state;
    const uint8_t *s = (const uint8_t *)"123456789";
    assert_int_equal(sl__crc32c(s, 9), 0xE3069283u); /* CRC-32C's published check value */
    assert_int_equal(sl__crc32c_sliced(s, 9), 0xE3069283u);
    assert_int_equal(sl__crc32c(s, 0), 0u);
    /* TFRecord's mask: rotate right by 15, add 0xa282ead8 */
    uint32_t c = 0xE3069283u;
    assert_int_equal(sl__tfr_masked_crc(s, 9), ((c >> 15) | (c << 17)) + 0xa282ead8u);
}

static void test_every_length_and_alignment(void **state)
{
    (void)state;
    static uint8_t buf[608];
    uint32_t x = 12345u;
    for (size_t i = 0; i < sizeof buf; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (uint8_t)(x >> 16);
    }
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n + off <= 600; n++) {
            uint32_t want = crc_bitwise(buf + off, n);
            assert_int_equal(sl__crc32c(buf + off, n), want);
            assert_int_equal(sl__crc32c_sliced(buf + off, n), want);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_value),
        cmocka_unit_test(test_every_length_and_alignment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
