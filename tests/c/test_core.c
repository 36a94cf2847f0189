/* test_core: the core module (src/core) — dtypes, batch storage, Philox and the RNG streams,
 * the thread pool, error records and status names — and the argument values of src/graph
 * (JSON parsing and coercion to a schema).
 *
 * Every expected value names its source in a comment: hand-computed, the Random123
 * distribution's known-answer vectors, an independent Python implementation run once (the
 * script is quoted where used), or a published statistical table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "graph/graph.h"
#include "sluice/sluice.h"

/* ---- dtype ------------------------------------------------------------------------------ */

static void test_dtype_sizes_and_names(void **state)
{
    (void)state;
    /* Hand-written table: element sizes of the C types each dtype stands for. */
    static const struct {
        sl_dtype t;
        size_t size;
        const char *name;
    } cases[] = {
        {SL_DTYPE_UINT8, 1, "uint8"},     {SL_DTYPE_UINT16, 2, "uint16"},
        {SL_DTYPE_UINT32, 4, "uint32"},   {SL_DTYPE_UINT64, 8, "uint64"},
        {SL_DTYPE_INT8, 1, "int8"},       {SL_DTYPE_INT16, 2, "int16"},
        {SL_DTYPE_INT32, 4, "int32"},     {SL_DTYPE_INT64, 8, "int64"},
        {SL_DTYPE_FLOAT16, 2, "float16"}, {SL_DTYPE_FLOAT32, 4, "float32"},
        {SL_DTYPE_FLOAT64, 8, "float64"}, {SL_DTYPE_BOOL, 1, "bool"},
    };
    assert_int_equal(sizeof cases / sizeof cases[0], SL_DTYPE_COUNT - 1);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        assert_int_equal(sl_dtype_size(cases[k].t), cases[k].size);
        assert_string_equal(sl_dtype_name(cases[k].t), cases[k].name);
        /* Every name round-trips. */
        assert_int_equal(sl_dtype_from_name(cases[k].name), cases[k].t);
    }
    assert_int_equal(sl_dtype_size(SL_DTYPE_INVALID), 0);
    assert_int_equal(sl_dtype_size(SL_DTYPE_COUNT), 0);
    assert_int_equal(sl_dtype_size((sl_dtype)-1), 0);
    assert_string_equal(sl_dtype_name(SL_DTYPE_INVALID), "invalid");
    assert_string_equal(sl_dtype_name(SL_DTYPE_COUNT), "invalid");
    assert_string_equal(sl_dtype_name((sl_dtype)1000), "invalid");
}

static void test_dtype_from_name(void **state)
{
    (void)state;
    /* DALI's types.* names (nvidia.dali.types.DALIDataType): FLOAT is float32. */
    assert_int_equal(sl_dtype_from_name("FLOAT"), SL_DTYPE_FLOAT32);
    assert_int_equal(sl_dtype_from_name("FLOAT16"), SL_DTYPE_FLOAT16);
    assert_int_equal(sl_dtype_from_name("FLOAT64"), SL_DTYPE_FLOAT64);
    assert_int_equal(sl_dtype_from_name("UINT8"), SL_DTYPE_UINT8);
    assert_int_equal(sl_dtype_from_name("INT32"), SL_DTYPE_INT32);
    assert_int_equal(sl_dtype_from_name("INT64"), SL_DTYPE_INT64);
    assert_int_equal(sl_dtype_from_name("BOOL"), SL_DTYPE_BOOL);
    assert_int_equal(sl_dtype_from_name("float32"), SL_DTYPE_FLOAT32);
    /* Names match case-insensitively, so Python's "float" is DALI's FLOAT, float32. */
    assert_int_equal(sl_dtype_from_name("float"), SL_DTYPE_FLOAT32);
    assert_int_equal(sl_dtype_from_name("Uint8"), SL_DTYPE_UINT8);
    /* Unknown names, the "invalid" placeholder itself, empty and NULL. */
    assert_int_equal(sl_dtype_from_name("float8"), SL_DTYPE_INVALID);
    assert_int_equal(sl_dtype_from_name("float33"), SL_DTYPE_INVALID);
    assert_int_equal(sl_dtype_from_name("invalid"), SL_DTYPE_INVALID);
    assert_int_equal(sl_dtype_from_name("NO_TYPE"), SL_DTYPE_INVALID);
    assert_int_equal(sl_dtype_from_name(""), SL_DTYPE_INVALID);
    assert_int_equal(sl_dtype_from_name(NULL), SL_DTYPE_INVALID);
}

/* ---- batch ------------------------------------------------------------------------------ */

static void set_shape(sl_batch *b, int i, int64_t d0, int64_t d1, int64_t d2)
{
    int64_t *s = sl__batch_shape_mut(b, i);
    s[0] = d0, s[1] = d1, s[2] = d2;
}

static void test_batch_ragged(void **state)
{
    (void)state;
    sl_batch b;
    sl__batch_init(&b);
    assert_int_equal(sl__batch_begin(&b, 3, SL_DTYPE_FLOAT32, 3, "HWC"), SL_OK);
    set_shape(&b, 0, 2, 3, 3); /* 18 elements,  72 bytes */
    set_shape(&b, 1, 4, 1, 3); /* 12 elements,  48 bytes */
    set_shape(&b, 2, 5, 5, 1); /* 25 elements, 100 bytes */
    assert_int_equal(sl__batch_alloc(&b), SL_OK);

    assert_int_equal(sl_batch_size(&b), 3);
    assert_int_equal(sl_batch_ndim(&b), 3);
    assert_int_equal(sl_batch_dtype(&b), SL_DTYPE_FLOAT32);
    assert_string_equal(sl_batch_layout(&b), "HWC");
    assert_int_equal(sl_batch_device(&b), SL_DEVICE_CPU);
    assert_false(sl_batch_is_uniform(&b));
    /* Hand-computed: numel = product of the extents, offsets = running sum of numel * 4. */
    assert_int_equal(sl_batch_sample_numel(&b, 0), 18);
    assert_int_equal(sl_batch_sample_numel(&b, 1), 12);
    assert_int_equal(sl_batch_sample_numel(&b, 2), 25);
    assert_int_equal(sl_batch_sample_offset(&b, 0), 0);
    assert_int_equal(sl_batch_sample_offset(&b, 1), 72);
    assert_int_equal(sl_batch_sample_offset(&b, 2), 120);
    assert_int_equal(sl_batch_sample_offset(&b, 3), 220); /* one past the end = total */
    assert_int_equal(sl_batch_nbytes(&b), 220);
    const uint8_t *base = sl_batch_data(&b);
    assert_non_null(base);
    assert_int_equal((uintptr_t)base % 64, 0);
    for (int i = 0; i < 3; i++)
        assert_ptr_equal(sl_batch_sample_data(&b, i), base + sl_batch_sample_offset(&b, i));
    const int64_t *s1 = sl_batch_shape(&b, 1);
    assert_non_null(s1);
    assert_int_equal(s1[0], 4);
    assert_int_equal(s1[1], 1);
    assert_int_equal(s1[2], 3);
    /* Out of range: NULL / 0, never a read past the arrays. */
    assert_null(sl_batch_shape(&b, 3));
    assert_null(sl_batch_shape(&b, -1));
    assert_null(sl_batch_sample_data(&b, 3));
    assert_int_equal(sl_batch_sample_numel(&b, 3), 0);
    assert_null(sl_batch_source(&b, 0));
    assert_null(sl_batch_source(&b, 3));
    /* The whole storage is writable (ASan checks the bounds). */
    memset(b.data, 0xab, sl_batch_nbytes(&b));
    sl__batch_fini(&b);
}

static void test_batch_uniform_and_sources(void **state)
{
    (void)state;
    sl_batch b;
    sl__batch_init(&b);
    assert_int_equal(sl__batch_begin(&b, 4, SL_DTYPE_UINT8, 3, "HWC"), SL_OK);
    for (int i = 0; i < 4; i++)
        set_shape(&b, i, 7, 5, 3);
    b.sources[2] = "c/x.jpg";
    assert_int_equal(sl__batch_alloc(&b), SL_OK);
    assert_true(sl_batch_is_uniform(&b));
    /* Uniform: a dense [4, 7, 5, 3] uint8 tensor, sample i at i * 105 bytes. */
    for (int i = 0; i <= 4; i++)
        assert_int_equal(sl_batch_sample_offset(&b, i), (size_t)i * 105);
    assert_string_equal(sl_batch_source(&b, 2), "c/x.jpg");
    assert_null(sl_batch_source(&b, 1));

    /* One differing extent, in the last dimension, of the last sample, breaks uniformity. */
    sl__batch_shape_mut(&b, 3)[2] = 1;
    assert_false(sl_batch_is_uniform(&b));

    /* begin() resets shapes and sources; fewer samples reuse the metadata arrays. */
    int64_t *shapes = b.shapes;
    assert_int_equal(sl__batch_begin(&b, 2, SL_DTYPE_INT16, 1, NULL), SL_OK);
    assert_ptr_equal(b.shapes, shapes);
    assert_int_equal(b.capacity, 4);
    assert_string_equal(sl_batch_layout(&b), "");
    assert_null(sl_batch_source(&b, 0));
    assert_int_equal(sl_batch_shape(&b, 1)[0], 0);
    sl__batch_fini(&b);
    /* fini leaves an empty batch that can be used again. */
    assert_int_equal(sl_batch_size(&b), 0);
    assert_null(sl_batch_data(&b));
    sl__batch_fini(&b);
}

static void test_batch_scalars(void **state)
{
    (void)state;
    sl_batch b;
    sl__batch_init(&b);
    assert_int_equal(sl__batch_begin(&b, 5, SL_DTYPE_INT64, 0, ""), SL_OK);
    assert_int_equal(sl__batch_alloc(&b), SL_OK);
    /* ndim 0: the empty product, numel 1; five 8-byte scalars back to back. */
    for (int i = 0; i < 5; i++) {
        assert_int_equal(sl_batch_sample_numel(&b, i), 1);
        assert_int_equal(sl_batch_sample_offset(&b, i), (size_t)i * 8);
    }
    assert_int_equal(sl_batch_nbytes(&b), 40);
    assert_true(sl_batch_is_uniform(&b));
    int64_t *v = (int64_t *)b.data;
    for (int i = 0; i < 5; i++)
        v[i] = i;
    sl__batch_fini(&b);
}

static void test_batch_zero_sized(void **state)
{
    (void)state;
    sl_batch b;
    sl__batch_init(&b);
    /* Samples with a zero extent occupy no bytes (hand-computed: 0, 0+0, 0+0+6*2). */
    assert_int_equal(sl__batch_begin(&b, 3, SL_DTYPE_UINT16, 2, "HW"), SL_OK);
    sl__batch_shape_mut(&b, 0)[0] = 0, sl__batch_shape_mut(&b, 0)[1] = 9;
    sl__batch_shape_mut(&b, 1)[0] = 4, sl__batch_shape_mut(&b, 1)[1] = 0;
    sl__batch_shape_mut(&b, 2)[0] = 2, sl__batch_shape_mut(&b, 2)[1] = 3;
    assert_int_equal(sl__batch_alloc(&b), SL_OK);
    assert_int_equal(sl_batch_sample_numel(&b, 0), 0);
    assert_int_equal(sl_batch_sample_offset(&b, 1), 0);
    assert_int_equal(sl_batch_sample_offset(&b, 2), 0);
    assert_int_equal(sl_batch_nbytes(&b), 12);
    sl__batch_fini(&b);

    /* A batch of no samples: nothing to lay out, nothing to crash on. */
    sl__batch_init(&b);
    assert_int_equal(sl__batch_begin(&b, 0, SL_DTYPE_FLOAT32, 1, NULL), SL_OK);
    assert_int_equal(sl__batch_alloc(&b), SL_OK);
    assert_int_equal(sl_batch_size(&b), 0);
    assert_int_equal(sl_batch_nbytes(&b), 0);
    assert_true(sl_batch_is_uniform(&b));
    sl__batch_fini(&b);
}

/* Sets all n samples of a 1-d uint8 batch to `bytes` elements each and allocates. */
static void alloc_bytes(sl_batch *b, int n, int64_t bytes)
{
    assert_int_equal(sl__batch_begin(b, n, SL_DTYPE_UINT8, 1, NULL), SL_OK);
    for (int i = 0; i < n; i++)
        sl__batch_shape_mut(b, i)[0] = bytes;
    assert_int_equal(sl__batch_alloc(b), SL_OK);
}

static void test_batch_storage_reuse(void **state)
{
    (void)state;
    sl_batch b;
    sl__batch_init(&b);
    alloc_bytes(&b, 4, 250); /* 1000 bytes */
    uint8_t *data = b.data;
    size_t cap = b.bytes_cap;
    assert_true(cap >= 1000);
    uint64_t allocs = sl__alloc_count();

    /* Equal or smaller totals, in any split over the samples, keep the storage: no allocation. */
    alloc_bytes(&b, 4, 250);
    assert_ptr_equal(b.data, data);
    alloc_bytes(&b, 2, 10);
    assert_ptr_equal(b.data, data);
    alloc_bytes(&b, 1, 1000);
    assert_ptr_equal(b.data, data);
    alloc_bytes(&b, 4, (int64_t)cap / 4); /* exactly the capacity */
    assert_ptr_equal(b.data, data);
    assert_int_equal(sl__alloc_count(), allocs);

    /* Growth is geometric: one byte past the capacity gives at least 1.5x (so sizes that creep
     * up by a little settle after O(log) reallocations, not one per iteration). */
    alloc_bytes(&b, 1, (int64_t)cap + 1);
    assert_true(b.bytes_cap >= cap + cap / 2);
    assert_int_equal(b.bytes_cap % 64, 0);
    assert_int_equal((uintptr_t)b.data % 64, 0);
    memset(b.data, 1, cap + 1);

    /* Creeping up by 1% per iteration from 1000 bytes to ~2x. Hand-computed for 1.5x growth:
     * the first allocation gives 1024 (1000 rounded up to 64); 1000 * 1.01^3 = 1030 > 1024
     * grows to 1536; 1000 * 1.01^44 = 1550 > 1536 grows to 2304; 1000 * 1.01^69 = 1986 fits.
     * So 2 reallocations over 69 iterations (fewer with a larger factor, never one each). */
    sl_batch c;
    sl__batch_init(&c);
    alloc_bytes(&c, 1, 1000);
    uint64_t before = sl__alloc_count();
    double size = 1000;
    for (int it = 1; it < 70; it++) {
        size *= 1.01;
        alloc_bytes(&c, 1, (int64_t)size);
    }
    assert_true(sl__alloc_count() - before <= 2);
    sl__batch_fini(&c);
    sl__batch_fini(&b);
}

/* The live and peak counters follow every block in and out: hand-counted sizes. A block's
 * usable size is at least what was asked, and at most a page (plus alignment) more: glibc
 * rounds the blocks it maps (from 128 KiB) to pages. */
#define SLACK (4096 + 64)
static void test_alloc_live_and_peak_bytes(void **state)
{
    (void)state;
    uint64_t blocks = sl__alloc_live_count(), bytes = sl__alloc_live_bytes();
    sl__alloc_peak_reset();
    assert_int_equal(sl__alloc_peak_bytes(), bytes);
    uint8_t *a = sl__malloc(100000), *b = sl__aligned_alloc(300000);
    char *s = sl__strdup("twelve bytes");
    assert_true(a && b && s);
    assert_int_equal(sl__alloc_live_count(), blocks + 3);
    uint64_t grown = sl__alloc_live_bytes() - bytes;
    assert_true(grown >= 400013 && grown < 400013 + 3 * SLACK);
    sl__free(b);
    assert_true(sl__alloc_live_bytes() - bytes < 100013 + 2 * SLACK);
    assert_true(sl__alloc_peak_bytes() - bytes >= 400013); /* the peak stays */
    a = sl__realloc(a, 500000);                            /* moves, or grows in place */
    assert_non_null(a);
    assert_int_equal(sl__alloc_live_count(), blocks + 2);
    grown = sl__alloc_live_bytes() - bytes;
    assert_true(grown >= 500013 && grown < 500013 + 2 * SLACK);
    sl__alloc_fail_after(1); /* a failed realloc keeps the block, and its count */
    assert_null(sl__realloc(a, 1 << 20));
    sl__alloc_fail_after(0);
    assert_int_equal(sl__alloc_live_bytes() - bytes, grown);
    sl__free(a);
    sl__free(s);
    sl__free(NULL);
    assert_int_equal(sl__alloc_live_count(), blocks);
    assert_int_equal(sl__alloc_live_bytes(), bytes);
    assert_true(sl__alloc_peak_bytes() - bytes >= 500013);
    sl__alloc_peak_reset();
    assert_int_equal(sl__alloc_peak_bytes(), bytes);
}
#undef SLACK

/* ---- Philox and the RNG ----------------------------------------------------------------- */

static void test_philox_kat(void **state)
{
    (void)state;
    /* Known-answer vectors for philox4x32 with 10 rounds from the Random123 distribution
     * (Random123-1.09/examples/kat_vectors). */
    static const struct {
        uint32_t ctr[4], key[2], out[4];
    } kat[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
        {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
         {0xffffffffu, 0xffffffffu},
         {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
        {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
         {0xa4093822u, 0x299f31d0u},
         {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
    };
    for (size_t k = 0; k < sizeof kat / sizeof kat[0]; k++) {
        uint32_t out[4];
        sl__philox4x32(kat[k].ctr, kat[k].key, out);
        for (int w = 0; w < 4; w++)
            assert_int_equal(out[w], kat[k].out[w]);
    }
}

static void test_rng_stream_layout(void **state)
{
    (void)state;
    /* The stream of (seed, a, b) is Philox blocks at ctr = (block, 0, a, b), key = seed, words
     * in order; u64 = (first u32 << 32) | second; uniform = (u64 >> 11) * 2^-53. Expected
     * values from an independent Python Philox (checked against the same KAT vectors):
     *   /usr/bin/python3: philox([blk, 0, 7, 3], [0x89ABCDEF, 0x01234567]) for blk = 0, 1
     * Every random operator's output depends on this layout: a change here breaks restoring
     * checkpoints taken by an earlier version, so it is pinned. */
    static const uint32_t u32[8] = {0x776b54beu, 0x50c9fe93u, 0xd304eaa1u, 0xc4122e8fu,
                                    0x17512d21u, 0xe3de0126u, 0x323d073eu, 0xdf3b7d4du};
    static const uint64_t u64[4] = {0x776b54be50c9fe93ull, 0xd304eaa1c4122e8full,
                                    0x17512d21e3de0126ull, 0x323d073edf3b7d4dull};
    static const double uni[4] = {0x1.ddad52f94327ep-2, 0x1.a609d54388245p-1, 0x1.7512d21e3de00p-4,
                                  0x1.91e839f6f9dbcp-3};
    const uint64_t seed = 0x0123456789ABCDEFull;
    sl_rng r;
    sl_rng_init(&r, seed, 7, 3);
    for (int k = 0; k < 8; k++)
        assert_int_equal(sl_rng_u32(&r), u32[k]);
    sl_rng_init(&r, seed, 7, 3);
    for (int k = 0; k < 4; k++)
        assert_int_equal(sl_rng_u64(&r), u64[k]);
    sl_rng_init(&r, seed, 7, 3);
    for (int k = 0; k < 4; k++)
        assert_true(sl_rng_uniform(&r) == uni[k]);
    /* Re-initialising gives the same stream (determinism). */
    sl_rng r2;
    sl_rng_init(&r, 42, 1, 2);
    sl_rng_init(&r2, 42, 1, 2);
    for (int k = 0; k < 1000; k++)
        assert_int_equal(sl_rng_u32(&r), sl_rng_u32(&r2));
}

static void test_rng_uniform_moments(void **state)
{
    (void)state;
    const int n = 1000000;
    sl_rng r;
    sl_rng_init(&r, 12345, 0, 0);
    double sum = 0, sum2 = 0, lo = 1, hi = 0;
    for (int k = 0; k < n; k++) {
        double u = sl_rng_uniform(&r);
        assert_true(u >= 0.0 && u < 1.0);
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
        sum += u;
        sum2 += u * u;
    }
    double mean = sum / n, var = sum2 / n - mean * mean;
    /* U(0,1): mean 1/2, variance 1/12. Standard error of the mean sqrt(1/12/n) = 2.89e-4;
     * of the variance sqrt((mu4 - sigma^4)/n) with mu4 = 1/80: sqrt(1/180/n) = 7.45e-5.
     * Tolerances are 5 of those. */
    assert_true(fabs(mean - 0.5) < 5 * sqrt(1.0 / 12 / n));
    assert_true(fabs(var - 1.0 / 12) < 5 * sqrt(1.0 / 180 / n));
    /* The extremes of 1e6 draws lie within ~1e-5 of the ends (P(miss) = (1-1e-5)^1e6 ~ e^-10). */
    assert_true(lo < 1e-5 && hi > 1 - 1e-5);
}

static void test_rng_below_chi_square(void **state)
{
    (void)state;
    const int n = 7, draws = 700000;
    long count[7] = {0};
    sl_rng r;
    sl_rng_init(&r, 987654321, 3, 4);
    for (int k = 0; k < draws; k++) {
        uint64_t x = sl_rng_below(&r, n);
        assert_true(x < (uint64_t)n);
        count[x]++;
    }
    double expect = (double)draws / n, chi2 = 0;
    for (int v = 0; v < n; v++)
        chi2 += (count[v] - expect) * (count[v] - expect) / expect;
    /* 6 degrees of freedom; upper 0.1% critical value 22.458 (NIST/SEMATECH e-Handbook of
     * Statistical Methods, section 1.3.6.7.4, "Critical values of the chi-square
     * distribution"). The stream is fixed, so this is deterministic, not flaky. */
    print_message("sl_rng_below(7): chi-square %.3f over %d draws\n", chi2, draws);
    assert_true(chi2 < 22.458);

    /* n = 1 always gives 0. n = 3 * 2^62 is where a plain x % n would be visibly biased:
     * 2^64 = n + 2^62, so values below 2^62 would come up twice as often (P = 1/2 instead of
     * the unbiased 1/3). 10000 draws: expected 3333, binomial sd sqrt(10000 * 2/9) = 47. */
    for (int k = 0; k < 100; k++)
        assert_int_equal(sl_rng_below(&r, 1), 0);
    const uint64_t big = 3ull << 62;
    int low = 0;
    for (int k = 0; k < 10000; k++) {
        uint64_t x = sl_rng_below(&r, big);
        assert_true(x < big);
        low += x < (1ull << 62);
    }
    print_message("sl_rng_below(3 * 2^62): %d of 10000 below 2^62 (expected 3333)\n", low);
    assert_true(abs(low - 3333) < 5 * 47);
}

static void test_rng_normal_moments(void **state)
{
    (void)state;
    const int n = 1000000;
    sl_rng r;
    sl_rng_init(&r, 777, 5, 6);
    double sum = 0, sum2 = 0;
    int beyond3 = 0;
    for (int k = 0; k < n; k++) {
        double z = sl_rng_normal(&r);
        assert_true(isfinite(z));
        sum += z;
        sum2 += z * z;
        beyond3 += fabs(z) > 3;
    }
    double mean = sum / n, var = sum2 / n - mean * mean;
    /* N(0,1): standard error of the mean 1/sqrt(n) = 1e-3; of the variance sqrt(2/n) =
     * 1.41e-3 (mu4 = 3). 5 sigma each. */
    assert_true(fabs(mean) < 5 * sqrt(1.0 / n));
    assert_true(fabs(var - 1) < 5 * sqrt(2.0 / n));
    /* P(|z| > 3) = 0.0026998 (standard normal table): 2700 of 1e6, binomial sd ~ 52. */
    assert_true(abs(beyond3 - 2700) < 5 * 52);
}

static void test_rng_streams_differ(void **state)
{
    (void)state;
    /* Streams of different (seed, a, b) share no leading block: (iteration, sample) pairs a
     * pipeline uses, their swaps, and the pipeline's neighbouring seeds. */
    static const uint64_t ab[][3] = {
        {1, 0, 0}, {1, 0, 1},          {1, 1, 0},          {1, 1, 1},          {1, 2, 0},
        {1, 0, 2}, {2, 0, 0},          {1, 1ull << 32, 0}, {1, 0, 1ull << 32}, {1, 5, 3},
        {1, 3, 5}, {1ull << 32, 0, 0}, {0, 0, 0},          {1, 1000000, 255},
    };
    enum { NS = sizeof ab / sizeof ab[0] };
    uint32_t first[NS][4];
    for (int s = 0; s < NS; s++) {
        sl_rng r;
        sl_rng_init(&r, ab[s][0], ab[s][1], ab[s][2]);
        for (int w = 0; w < 4; w++)
            first[s][w] = sl_rng_u32(&r);
    }
    for (int s = 0; s < NS; s++)
        for (int t = s + 1; t < NS; t++)
            assert_true(memcmp(first[s], first[t], sizeof first[s]) != 0);

    /* Neighbouring samples of one iteration are uncorrelated: the means of 1000 uniforms of
     * streams b and b+1 differ, and agreement of their u32 is at chance (~0 of 1000). */
    sl_rng r0, r1;
    sl_rng_init(&r0, 99, 10, 0);
    sl_rng_init(&r1, 99, 10, 1);
    int same = 0;
    for (int k = 0; k < 1000; k++)
        same += sl_rng_u32(&r0) == sl_rng_u32(&r1);
    assert_int_equal(same, 0);
}

/* ---- thread pool ------------------------------------------------------------------------ */

#define MANY 10000

typedef struct many_ctx {
    atomic_int runs[MANY];
    atomic_int done;
    atomic_int bad_worker;
    int nthreads;
} many_ctx;

static void many_task(void *arg, int64_t i, int worker)
{
    many_ctx *c = arg;
    if (worker < 0 || worker >= c->nthreads)
        atomic_fetch_add(&c->bad_worker, 1);
    atomic_fetch_add(&c->runs[i], 1);
    atomic_fetch_add(&c->done, 1);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_tpool_many_tasks(void **state)
{
    (void)state;
    many_ctx *c = calloc(1, sizeof(*c));
    assert_non_null(c);
    c->nthreads = 4;
    sl__tpool *p;
    assert_int_equal(sl__tpool_create(4, &p), SL_OK);
    assert_int_equal(sl__tpool_threads(p), 4);
    /* Submitted in groups of 1..37 tasks (one lock each), from the test thread while the
     * workers run, so the heap grows past its initial 256 entries and shrinks repeatedly. */
    sl__task tasks[37];
    int next = 0, group = 1;
    while (next < MANY) {
        int n = group < MANY - next ? group : MANY - next;
        for (int k = 0; k < n; k++)
            tasks[k] =
                (sl__task){.fn = many_task, .arg = c, .i = next + k, .prio = (uint64_t)(k % 3)};
        assert_int_equal(sl__tpool_submit(p, tasks, n), SL_OK);
        next += n;
        group = group % 37 + 1;
    }
    for (int waited = 0; atomic_load(&c->done) < MANY; waited++) {
        assert_true(waited < 60000); /* 60 s: a lost task fails here, not by ctest's timeout */
        sleep_ms(1);
    }
    sl__tpool_destroy(p);
    for (int i = 0; i < MANY; i++)
        assert_int_equal(atomic_load(&c->runs[i]), 1);
    assert_int_equal(atomic_load(&c->done), MANY);
    assert_int_equal(atomic_load(&c->bad_worker), 0);
    free(c);

    sl__tpool_destroy(NULL);
}

static void order_task(void *arg, int64_t i, int worker)
{
    int *log = arg;
    log[log[0]++ + 1] = (int)i * 10 + worker;
}

/* Zero threads: the pool only queues; sl__tpool_take hands the tasks out in (prio, FIFO)
 * order, tasks submitted meanwhile included, and nothing after destroy began. */
static void test_tpool_zero_threads(void **state)
{
    (void)state;
    sl__tpool *p;
    assert_int_equal(sl__tpool_create(0, &p), SL_OK);
    assert_int_equal(sl__tpool_threads(p), 0);
    int log[16] = {0};
    sl__task t;
    assert_false(sl__tpool_take(p, &t));
    sl__task in[4] = {{order_task, log, 1, 5, 0},
                      {order_task, log, 2, 3, 0},
                      {order_task, log, 3, 5, 0},
                      {order_task, log, 4, 3, 0}};
    assert_int_equal(sl__tpool_submit(p, in, 4), SL_OK);
    assert_true(sl__tpool_take(p, &t)); /* prio 3, first submitted */
    t.fn(t.arg, t.i, 0);
    sl__task late = {order_task, log, 5, 4, 0};
    assert_int_equal(sl__tpool_submit(p, &late, 1), SL_OK);
    while (sl__tpool_take(p, &t))
        t.fn(t.arg, t.i, 0);
    assert_int_equal(log[0], 5);
    const int want[5] = {20, 40, 50, 10, 30};
    for (int k = 0; k < 5; k++)
        assert_int_equal(log[k + 1], want[k]);
    assert_int_equal(sl__tpool_submit(p, in, 2), SL_OK);
    sl__tpool_destroy(p); /* drops the two queued tasks (LeakSanitizer: nothing kept) */
    assert_int_equal(log[0], 5);
}

/* A gate: tasks that wait on it hold their worker until the test opens it. */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool open;
    int entered; /* gate tasks that are waiting (or have waited) */
} gate;

static void gate_init(gate *g)
{
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->open = false;
    g->entered = 0;
}

static void gate_fini(gate *g)
{
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
}

static void gate_task(void *arg, int64_t i, int worker)
{
    (void)i, (void)worker;
    gate *g = arg;
    pthread_mutex_lock(&g->mu);
    g->entered++;
    pthread_cond_broadcast(&g->cv);
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

static void gate_wait_entered(gate *g, int n)
{
    pthread_mutex_lock(&g->mu);
    while (g->entered < n)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

static void gate_open(gate *g)
{
    pthread_mutex_lock(&g->mu);
    g->open = true;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

typedef struct order_log {
    pthread_mutex_t mu;
    int ids[64];
    int n;
} order_log;

static void log_task(void *arg, int64_t i, int worker)
{
    (void)worker;
    order_log *l = arg;
    pthread_mutex_lock(&l->mu);
    l->ids[l->n++] = (int)i;
    pthread_mutex_unlock(&l->mu);
}

static void test_tpool_priority_order(void **state)
{
    (void)state;
    gate g;
    order_log log = {.n = 0};
    gate_init(&g);
    pthread_mutex_init(&log.mu, NULL);
    sl__tpool *p;
    assert_int_equal(sl__tpool_create(1, &p), SL_OK);
    sl__task blocker = {.fn = gate_task, .arg = &g, .prio = 0};
    assert_int_equal(sl__tpool_submit(p, &blocker, 1), SL_OK);
    gate_wait_entered(&g, 1); /* the only worker is now held */

    /* Task i has priority prio[i]; submitted singly and in groups, all before any can run. */
    static const uint64_t prio[12] = {5, 3, 3, 1, 5, 0, 3, 1000000, 1, 0, 5, 3};
    sl__task t[12];
    for (int i = 0; i < 12; i++)
        t[i] = (sl__task){.fn = log_task, .arg = &log, .i = i, .prio = prio[i]};
    assert_int_equal(sl__tpool_submit(p, &t[0], 1), SL_OK);
    assert_int_equal(sl__tpool_submit(p, &t[1], 5), SL_OK);
    assert_int_equal(sl__tpool_submit(p, &t[6], 1), SL_OK);
    assert_int_equal(sl__tpool_submit(p, &t[7], 5), SL_OK);
    gate_open(&g);
    for (int waited = 0;; waited++) {
        pthread_mutex_lock(&log.mu);
        int n = log.n;
        pthread_mutex_unlock(&log.mu);
        if (n == 12)
            break;
        assert_true(waited < 60000);
        sleep_ms(1);
    }
    sl__tpool_destroy(p);
    /* Hand-sorted by (priority, submission order): prio 0: 5, 9; 1: 3, 8; 3: 1, 2, 6, 11;
     * 5: 0, 4, 10; 1000000: 7. */
    static const int expect[12] = {5, 9, 3, 8, 1, 2, 6, 11, 0, 4, 10, 7};
    for (int k = 0; k < 12; k++)
        assert_int_equal(log.ids[k], expect[k]);
    pthread_mutex_destroy(&log.mu);
    gate_fini(&g);
}

typedef struct drop_ctx {
    atomic_int ran;
} drop_ctx;

static void slow_task(void *arg, int64_t i, int worker)
{
    (void)i, (void)worker;
    drop_ctx *d = arg;
    atomic_fetch_add(&d->ran, 1);
    sleep_ms(1);
}

static void *destroy_thread(void *arg)
{
    sl__tpool_destroy(arg);
    return NULL;
}

static int64_t now_ms(void)
{
    return sl__now_ns() / 1000000;
}

static void test_tpool_destroy_drops_queued(void **state)
{
    (void)state;
    gate g;
    drop_ctx d = {0};
    gate_init(&g);
    sl__tpool *p;
    assert_int_equal(sl__tpool_create(2, &p), SL_OK);
    sl__task blockers[2] = {{.fn = gate_task, .arg = &g}, {.fn = gate_task, .arg = &g}};
    assert_int_equal(sl__tpool_submit(p, blockers, 2), SL_OK);
    gate_wait_entered(&g, 2); /* both workers held */
    /* 5000 queued tasks of 1 ms each: running them would take >= 2.5 s on two workers. */
    static sl__task slow[5000];
    for (int k = 0; k < 5000; k++)
        slow[k] = (sl__task){.fn = slow_task, .arg = &d, .i = k, .prio = 1};
    assert_int_equal(sl__tpool_submit(p, slow, 5000), SL_OK);

    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, destroy_thread, p), 0);
    /* The pool stays alive while its workers are held, so polling submit is safe: once it says
     * SL_ECANCELED, destroy has stopped the pool and dropped the queue. Tasks queued by the
     * poll before that are dropped too. */
    sl__task probe = {.fn = slow_task, .arg = &d, .prio = 1};
    sl_status st;
    while ((st = sl__tpool_submit(p, &probe, 1)) == SL_OK)
        sleep_ms(1);
    assert_int_equal(st, SL_ECANCELED);
    int64_t t0 = now_ms();
    gate_open(&g);
    assert_int_equal(pthread_join(th, NULL), 0);
    int64_t took = now_ms() - t0;
    /* Returned promptly (the running gate tasks finish at once; 2 s is generous for
     * sanitizers) and ran none of the dropped tasks, then or later. */
    print_message("destroy returned %lld ms after the workers were released\n", (long long)took);
    assert_true(took < 2000);
    assert_int_equal(atomic_load(&d.ran), 0);
    sleep_ms(20);
    assert_int_equal(atomic_load(&d.ran), 0);
    gate_fini(&g);
}

/* ---- errors and status names ------------------------------------------------------------ */

static void test_error_format(void **state)
{
    (void)state;
    sl__error e;
    sl__error_clear(&e);
    assert_int_equal(e.iteration, -1);
    assert_int_equal(e.sample, -1);
    assert_string_equal(e.message, "");

    /* The format of STYLE.md ("Errors"), all parts present. */
    assert_int_equal(
        sl__error_set(&e, SL_ECORRUPT, "decoders.image", "dec", 7, 3, "a/b.jpg", "%s", "corrupt"),
        SL_ECORRUPT);
    assert_string_equal(e.message,
                        "decoders.image (node \"dec\"): iteration 7, sample 3, file \"a/b.jpg\": "
                        "corrupt");
    assert_int_equal(e.code, SL_ECORRUPT);
    assert_string_equal(e.op, "decoders.image");
    assert_string_equal(e.node, "dec");
    assert_int_equal(e.iteration, 7);
    assert_int_equal(e.sample, 3);
    assert_string_equal(e.source, "a/b.jpg");
    assert_string_equal(e.detail, "corrupt");

    /* Without parts: each one left out, its separator with it (hand-written expectations). */
    static const struct {
        const char *op, *node;
        int64_t it;
        int sample;
        const char *src, *expect;
    } v[] = {
        {"decoders.image", "dec", 7, 3, NULL,
         "decoders.image (node \"dec\"): iteration 7, sample 3: corrupt"},
        {"decoders.image", "dec", 7, -1, "a/b.jpg",
         "decoders.image (node \"dec\"): iteration 7, file \"a/b.jpg\": corrupt"},
        {"decoders.image", "dec", -1, 3, "a/b.jpg",
         "decoders.image (node \"dec\"): sample 3, file \"a/b.jpg\": corrupt"},
        {"decoders.image", "dec", 7, -1, NULL,
         "decoders.image (node \"dec\"): iteration 7: corrupt"},
        {"decoders.image", "dec", -1, -1, NULL, "decoders.image (node \"dec\"): corrupt"},
        {"decoders.image", NULL, -1, -1, NULL, "decoders.image: corrupt"},
        {"decoders.image", NULL, 0, 0, NULL, "decoders.image: iteration 0, sample 0: corrupt"},
        {NULL, NULL, 7, 3, "a/b.jpg", "iteration 7, sample 3, file \"a/b.jpg\": corrupt"},
        {NULL, NULL, -1, -1, "a/b.jpg", "file \"a/b.jpg\": corrupt"},
        {NULL, NULL, 12345678901LL, -1, NULL, "iteration 12345678901: corrupt"},
        {NULL, NULL, -1, -1, NULL, "corrupt"},
        {"", "", -1, -1, "", "corrupt"},
    };
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        sl__error_set(&e, SL_EIO, v[k].op, v[k].node, v[k].it, v[k].sample, v[k].src, "corrupt");
        assert_string_equal(e.message, v[k].expect);
        assert_string_equal(e.detail, "corrupt");
    }

    /* printf-style detail. */
    sl__error_set(&e, SL_EINVAL, "op", NULL, -1, -1, NULL, "expected %d, got %s", 3, "x");
    assert_string_equal(e.message, "op: expected 3, got x");

    /* Overlong parts are cut to their fields, the message to SL__MSG_MAX - 1: no overflow. */
    char big[4096];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    sl__error_set(&e, SL_EIO, big, big, 1, 2, big, "%s", big);
    assert_int_equal(strlen(e.op), sizeof e.op - 1);
    assert_int_equal(strlen(e.node), sizeof e.node - 1);
    assert_int_equal(strlen(e.source), sizeof e.source - 1);
    assert_int_equal(strlen(e.detail), sizeof e.detail - 1);
    assert_true(strlen(e.message) <= SL__MSG_MAX - 1);
    assert_memory_equal(e.message, big, 10); /* starts with the op */
}

static void *other_thread_error(void *arg)
{
    (void)arg;
    /* Thread-local: a thread that failed nothing sees "". */
    return (void *)(uintptr_t)(sl_last_error()[0] == '\0');
}

static void test_last_error(void **state)
{
    (void)state;
    assert_int_equal(sl__last_error_set(SL_ENOTFOUND, "no node named \"%s\"", "x"), SL_ENOTFOUND);
    assert_string_equal(sl_last_error(), "no node named \"x\"");
    pthread_t th;
    void *ret;
    assert_int_equal(pthread_create(&th, NULL, other_thread_error, NULL), 0);
    assert_int_equal(pthread_join(th, &ret), 0);
    assert_true((uintptr_t)ret == 1);
    assert_string_equal(sl_last_error(), "no node named \"x\"");
    sl__last_error_clear();
    assert_string_equal(sl_last_error(), "");
}

static void test_status_names(void **state)
{
    (void)state;
    /* Copied from include/sluice/status.h and STYLE.md: the stable set of codes. */
    assert_string_equal(sl_status_name(SL_OK), "SL_OK");
    assert_string_equal(sl_status_name(SL_EINVAL), "SL_EINVAL");
    assert_string_equal(sl_status_name(SL_ENOTFOUND), "SL_ENOTFOUND");
    assert_string_equal(sl_status_name(SL_EIO), "SL_EIO");
    assert_string_equal(sl_status_name(SL_ECORRUPT), "SL_ECORRUPT");
    assert_string_equal(sl_status_name(SL_EUNSUPPORTED), "SL_EUNSUPPORTED");
    assert_string_equal(sl_status_name(SL_ENOMEM), "SL_ENOMEM");
    assert_string_equal(sl_status_name(SL_ECANCELED), "SL_ECANCELED");
    assert_string_equal(sl_status_name(SL_EMISUSE), "SL_EMISUSE");
    assert_string_equal(sl_status_name(SL_ECALLBACK), "SL_ECALLBACK");
    assert_string_equal(sl_status_name(SL_EWORKER), "SL_EWORKER");
    assert_string_equal(sl_status_name(SL_EINTERNAL), "SL_EINTERNAL");
    assert_int_equal(SL_EINTERNAL, 11); /* codes are stable: 0..11 in this order */
    assert_string_equal(sl_status_name((sl_status)12), "SL_E?");
    assert_string_equal(sl_status_name((sl_status)-1), "SL_E?");
}

/* ---- values: JSON parsing --------------------------------------------------------------- */

static void test_value_parse_json(void **state)
{
    (void)state;
    sl__value v;
    char err[256];

    assert_int_equal(sl__value_parse_json("true", &v, err, sizeof err), SL_OK);
    assert_int_equal(v.kind, SL__V_BOOL);
    assert_true(v.b);
    sl__value_fini(&v);

    assert_int_equal(sl__value_parse_json("-3", &v, err, sizeof err), SL_OK);
    assert_int_equal(v.kind, SL__V_INT);
    assert_int_equal(v.i, -3);
    sl__value_fini(&v);

    /* 9007199254740993 = 2^53 + 1: kept exactly as an integer (a double would round it). */
    assert_int_equal(sl__value_parse_json("9007199254740993", &v, err, sizeof err), SL_OK);
    assert_int_equal(v.kind, SL__V_INT);
    assert_true(v.i == 9007199254740993LL);
    sl__value_fini(&v);

    assert_int_equal(sl__value_parse_json("0.5", &v, err, sizeof err), SL_OK);
    assert_int_equal(v.kind, SL__V_FLOAT);
    assert_true(v.f == 0.5);
    sl__value_fini(&v);

    assert_int_equal(sl__value_parse_json("\"RGB\"", &v, err, sizeof err), SL_OK);
    assert_int_equal(v.kind, SL__V_STRING);
    assert_string_equal(v.s, "RGB");
    sl__value_fini(&v);

    assert_int_equal(sl__value_parse_json("[224, 256]", &v, err, sizeof err), SL_OK);
    assert_int_equal(v.kind, SL__V_INTS);
    assert_int_equal(v.n, 2);
    assert_int_equal(v.ints[0], 224);
    assert_int_equal(v.ints[1], 256);
    sl__value_fini(&v);

    /* A mix of ints and floats is a list of float. */
    assert_int_equal(sl__value_parse_json("[0.25, 1, -2]", &v, err, sizeof err), SL_OK);
    assert_int_equal(v.kind, SL__V_FLOATS);
    assert_int_equal(v.n, 3);
    assert_true(v.floats[0] == 0.25 && v.floats[1] == 1.0 && v.floats[2] == -2.0);
    sl__value_fini(&v);

    assert_int_equal(sl__value_parse_json("[\"a\", \"bc\"]", &v, err, sizeof err), SL_OK);
    assert_int_equal(v.kind, SL__V_STRINGS);
    assert_int_equal(v.n, 2);
    assert_string_equal(v.strs[0], "a");
    assert_string_equal(v.strs[1], "bc");
    sl__value_fini(&v);

    assert_int_equal(sl__value_parse_json("[]", &v, err, sizeof err), SL_OK);
    assert_int_equal(v.n, 0);
    sl__value_fini(&v);

    /* Errors, with the reason. */
    assert_int_equal(sl__value_parse_json("[1, \"a\"]", &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "a list must hold only numbers or only strings");
    assert_int_equal(v.kind, SL__V_NONE);
    assert_int_equal(sl__value_parse_json("[[1]]", &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "a list must hold only numbers or only strings");
    assert_int_equal(sl__value_parse_json("{\"a\": 1}", &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected a bool, number, string or list");
    assert_int_equal(sl__value_parse_json("null", &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected a bool, number, string or list");
    assert_int_equal(sl__value_parse_json("[1, 2", &v, err, sizeof err), SL_EINVAL);
    assert_true(strncmp(err, "not valid JSON", 14) == 0);
    assert_non_null(strstr(err, "[1, 2"));
    assert_int_equal(sl__value_parse_json("", &v, err, sizeof err), SL_EINVAL);
    assert_int_equal(v.kind, SL__V_NONE);
    sl__value_fini(&v); /* fini of an empty value is harmless */
}

/* ---- values: coercion ------------------------------------------------------------------- */

/* Parses json and coerces it to def; returns the status, err holds the reason. */
static sl_status coerce(const char *json, const sl_arg_def *def, sl__value *out, char *err,
                        size_t errlen)
{
    sl__value in;
    char perr[256];
    assert_int_equal(sl__value_parse_json(json, &in, perr, sizeof perr), SL_OK);
    err[0] = '\0';
    sl_status st = sl__value_coerce(&in, def, out, err, errlen);
    sl__value_fini(&in);
    if (st != SL_OK)
        assert_int_equal(out->kind, SL__V_NONE);
    return st;
}

static void test_value_coerce_scalars(void **state)
{
    (void)state;
    sl__value v;
    char err[256];
    const sl_arg_def f = {.name = "f", .type = SL_ARG_FLOAT, .doc = "x"};
    const sl_arg_def i = {.name = "i", .type = SL_ARG_INT, .doc = "x"};
    const sl_arg_def b = {.name = "b", .type = SL_ARG_BOOL, .doc = "x"};
    const sl_arg_def s = {.name = "s", .type = SL_ARG_STRING, .doc = "x"};

    /* int -> float */
    assert_int_equal(coerce("3", &f, &v, err, sizeof err), SL_OK);
    assert_int_equal(v.kind, SL__V_FLOAT);
    assert_true(v.f == 3.0);
    sl__value_fini(&v);
    /* integral float -> int */
    assert_int_equal(coerce("4.0", &i, &v, err, sizeof err), SL_OK);
    assert_int_equal(v.kind, SL__V_INT);
    assert_int_equal(v.i, 4);
    sl__value_fini(&v);
    assert_int_equal(coerce("-0.0", &i, &v, err, sizeof err), SL_OK);
    assert_int_equal(v.i, 0);
    sl__value_fini(&v);
    /* a fraction is not an int: the error says what was given */
    assert_int_equal(coerce("2.5", &i, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected int, got 2.5");
    /* wrong kinds: "expected <schema type>, got <value kind>" */
    assert_int_equal(coerce("\"x\"", &f, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected float, got string");
    assert_int_equal(coerce("[1, 2]", &i, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected int, got list of int");
    assert_int_equal(coerce("3", &s, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected string, got int");
    assert_int_equal(coerce("\"true\"", &b, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected bool, got string");
    /* bool: true/false, and 0/1 */
    assert_int_equal(coerce("false", &b, &v, err, sizeof err), SL_OK);
    assert_int_equal(v.kind, SL__V_BOOL);
    assert_false(v.b);
    assert_int_equal(coerce("1", &b, &v, err, sizeof err), SL_OK);
    assert_true(v.b);
    assert_int_equal(coerce("2", &b, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected bool, got int");
    /* string */
    assert_int_equal(coerce("\"RGB\"", &s, &v, err, sizeof err), SL_OK);
    assert_int_equal(v.kind, SL__V_STRING);
    assert_string_equal(v.s, "RGB");
    sl__value_fini(&v);
}

static void test_value_coerce_range_choices(void **state)
{
    (void)state;
    sl__value v;
    char err[256];
    const sl_arg_def i = {
        .name = "i", .type = SL_ARG_INT, .doc = "x", .flags = SL_ARG_RANGE, .min = 0, .max = 10};
    const sl_arg_def f = {.name = "f",
                          .type = SL_ARG_FLOAT,
                          .doc = "x",
                          .flags = SL_ARG_RANGE,
                          .min = 0.0,
                          .max = 1.0};
    const sl_arg_def fl = {.name = "fl",
                           .type = SL_ARG_FLOATS,
                           .doc = "x",
                           .flags = SL_ARG_RANGE,
                           .min = -1,
                           .max = 1};
    const sl_arg_def s = {
        .name = "s", .type = SL_ARG_STRING, .doc = "x", .choices = "RGB|BGR|GRAY"};
    const sl_arg_def ss = {.name = "ss", .type = SL_ARG_STRINGS, .doc = "x", .choices = "a|bb"};

    /* Bounds are inclusive. */
    assert_int_equal(coerce("0", &i, &v, err, sizeof err), SL_OK);
    assert_int_equal(coerce("10", &i, &v, err, sizeof err), SL_OK);
    assert_int_equal(coerce("11", &i, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "value 11 is out of range [0, 10]");
    assert_int_equal(coerce("-1", &i, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "value -1 is out of range [0, 10]");
    assert_int_equal(coerce("1.0", &f, &v, err, sizeof err), SL_OK);
    assert_int_equal(coerce("1.5", &f, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "value 1.5 is out of range [0, 1]");
    /* Each list element is checked. */
    assert_int_equal(coerce("[0.5, -1, 2]", &fl, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "value 2 is out of range [-1, 1]");

    /* Choices: whole words only (no prefix, no case folding). */
    assert_int_equal(coerce("\"BGR\"", &s, &v, err, sizeof err), SL_OK);
    sl__value_fini(&v);
    assert_int_equal(coerce("\"GRAY\"", &s, &v, err, sizeof err), SL_OK);
    sl__value_fini(&v);
    assert_int_equal(coerce("\"XYZ\"", &s, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "\"XYZ\" is not one of RGB|BGR|GRAY");
    assert_int_equal(coerce("\"RG\"", &s, &v, err, sizeof err), SL_EINVAL);
    assert_int_equal(coerce("\"rgb\"", &s, &v, err, sizeof err), SL_EINVAL);
    assert_int_equal(coerce("\"RGB|BGR\"", &s, &v, err, sizeof err), SL_EINVAL);
    assert_int_equal(coerce("\"\"", &s, &v, err, sizeof err), SL_EINVAL);
    assert_int_equal(coerce("[\"bb\", \"a\"]", &ss, &v, err, sizeof err), SL_OK);
    sl__value_fini(&v);
    assert_int_equal(coerce("[\"a\", \"b\"]", &ss, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "\"b\" is not one of a|bb");
}

static void test_value_coerce_lists(void **state)
{
    (void)state;
    sl__value v;
    char err[256];
    const sl_arg_def two = {
        .name = "crop", .type = SL_ARG_FLOATS, .doc = "x", .min_len = 2, .max_len = 2};
    const sl_arg_def some = {
        .name = "s", .type = SL_ARG_INTS, .doc = "x", .min_len = 2, .max_len = 4};
    const sl_arg_def atleast = {.name = "a", .type = SL_ARG_FLOATS, .doc = "x", .min_len = 2};
    const sl_arg_def atmost = {.name = "m", .type = SL_ARG_INTS, .doc = "x", .max_len = 3};
    const sl_arg_def ints = {.name = "ints", .type = SL_ARG_INTS, .doc = "x"};
    const sl_arg_def sc = {
        .name = "mean", .type = SL_ARG_FLOATS, .doc = "x", .flags = SL_ARG_SCALAR_OK};
    const sl_arg_def scs = {
        .name = "files", .type = SL_ARG_STRINGS, .doc = "x", .flags = SL_ARG_SCALAR_OK};
    const sl_arg_def strs = {.name = "strs", .type = SL_ARG_STRINGS, .doc = "x"};
    const sl_arg_def floats = {.name = "floats", .type = SL_ARG_FLOATS, .doc = "x"};

    /* Lengths: exact, a range, only a minimum, only a maximum (hand-written wording). */
    assert_int_equal(coerce("[1, 2]", &two, &v, err, sizeof err), SL_OK);
    assert_int_equal(v.kind, SL__V_FLOATS); /* ints become floats */
    assert_true(v.floats[0] == 1.0 && v.floats[1] == 2.0);
    sl__value_fini(&v);
    assert_int_equal(coerce("[1, 2, 3]", &two, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected 2 values, got 3");
    assert_int_equal(coerce("[1]", &some, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected 2 to 4 values, got 1");
    assert_int_equal(coerce("[1, 2, 3, 4]", &some, &v, err, sizeof err), SL_OK);
    sl__value_fini(&v);
    assert_int_equal(coerce("[1]", &atleast, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected at least 2 values, got 1");
    assert_int_equal(coerce("[1, 2, 3, 4, 5, 6, 7]", &atleast, &v, err, sizeof err), SL_OK);
    sl__value_fini(&v);
    assert_int_equal(coerce("[1, 2, 3, 4]", &atmost, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected at most 3 values, got 4");

    /* Integral floats are ints, fractions are not. */
    assert_int_equal(coerce("[1.0, -2.0]", &ints, &v, err, sizeof err), SL_OK);
    assert_int_equal(v.kind, SL__V_INTS);
    assert_int_equal(v.ints[0], 1);
    assert_int_equal(v.ints[1], -2);
    sl__value_fini(&v);
    assert_int_equal(coerce("[1, 1.5]", &ints, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected integers, got 1.5");

    /* A scalar where a list is wanted: only with SL_ARG_SCALAR_OK, as a list of one. */
    assert_int_equal(coerce("0.5", &sc, &v, err, sizeof err), SL_OK);
    assert_int_equal(v.kind, SL__V_FLOATS);
    assert_int_equal(v.n, 1);
    assert_true(v.floats[0] == 0.5);
    sl__value_fini(&v);
    assert_int_equal(coerce("7", &sc, &v, err, sizeof err), SL_OK);
    assert_true(v.n == 1 && v.floats[0] == 7.0);
    sl__value_fini(&v);
    assert_int_equal(coerce("0.5", &floats, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected list of float, got float");
    assert_int_equal(coerce("\"a.jpg\"", &scs, &v, err, sizeof err), SL_OK);
    assert_int_equal(v.kind, SL__V_STRINGS);
    assert_int_equal(v.n, 1);
    assert_string_equal(v.strs[0], "a.jpg");
    sl__value_fini(&v);
    assert_int_equal(coerce("\"a.jpg\"", &strs, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected list of string, got string");
    assert_int_equal(coerce("[1, 2]", &strs, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected list of string, got list of int");
    assert_int_equal(coerce("[\"a\"]", &floats, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected list of float, got list of string");

    /* The empty list fits every list type (JSON cannot tell its element type). */
    const sl_arg_def *lists[] = {&ints, &floats, &strs, &sc, &scs};
    const sl__vkind kinds[] = {SL__V_INTS, SL__V_FLOATS, SL__V_STRINGS, SL__V_FLOATS,
                               SL__V_STRINGS};
    for (int k = 0; k < 5; k++) {
        assert_int_equal(coerce("[]", lists[k], &v, err, sizeof err), SL_OK);
        assert_int_equal(v.kind, kinds[k]);
        assert_int_equal(v.n, 0);
        sl__value_fini(&v);
    }
    /* ... unless a minimum length says otherwise. */
    assert_int_equal(coerce("[]", &two, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected 2 values, got 0");
}

static void test_value_coerce_dtype(void **state)
{
    (void)state;
    sl__value v;
    char err[256];
    const sl_arg_def d = {.name = "dtype", .type = SL_ARG_DTYPE, .doc = "x"};
    static const struct {
        const char *json;
        sl_dtype t;
    } ok[] = {{"\"float32\"", SL_DTYPE_FLOAT32}, {"\"FLOAT\"", SL_DTYPE_FLOAT32},
              {"\"UINT8\"", SL_DTYPE_UINT8},     {"\"FLOAT16\"", SL_DTYPE_FLOAT16},
              {"\"int64\"", SL_DTYPE_INT64},     {"\"BOOL\"", SL_DTYPE_BOOL}};
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        assert_int_equal(coerce(ok[k].json, &d, &v, err, sizeof err), SL_OK);
        assert_int_equal(v.kind, SL__V_INT); /* stored as the sl_dtype value in i */
        assert_int_equal(v.i, ok[k].t);
        sl__value_fini(&v);
    }
    assert_int_equal(coerce("\"bogus\"", &d, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "unknown data type \"bogus\"");
    assert_int_equal(coerce("4", &d, &v, err, sizeof err), SL_EINVAL);
    assert_string_equal(err, "expected dtype, got int");
}

static void test_value_copy_and_json(void **state)
{
    (void)state;
    sl__value v, c;
    char err[256], buf[256];
    static const char *const texts[] = {"true",      "-7",         "0.25",          "\"HWC\"",
                                        "[1, 2, 3]", "[0.5, 1.5]", "[\"a\", \"b\"]"};
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        assert_int_equal(sl__value_parse_json(texts[k], &v, err, sizeof err), SL_OK);
        assert_int_equal(sl__value_copy(&c, &v), SL_OK);
        sl__value_fini(&v); /* the copy owns its own arrays */
        sl__value_to_json(&c, buf, sizeof buf);
        /* Hand-checked: the canonical JSON of each is the input text itself. */
        assert_string_equal(buf, texts[k]);
        sl__value_fini(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_sizes_and_names),
        cmocka_unit_test(test_dtype_from_name),
        cmocka_unit_test(test_batch_ragged),
        cmocka_unit_test(test_batch_uniform_and_sources),
        cmocka_unit_test(test_batch_scalars),
        cmocka_unit_test(test_batch_zero_sized),
        cmocka_unit_test(test_batch_storage_reuse),
        cmocka_unit_test(test_alloc_live_and_peak_bytes),
        cmocka_unit_test(test_philox_kat),
        cmocka_unit_test(test_rng_stream_layout),
        cmocka_unit_test(test_rng_uniform_moments),
        cmocka_unit_test(test_rng_below_chi_square),
        cmocka_unit_test(test_rng_normal_moments),
        cmocka_unit_test(test_rng_streams_differ),
        cmocka_unit_test(test_tpool_many_tasks),
        cmocka_unit_test(test_tpool_zero_threads),
        cmocka_unit_test(test_tpool_priority_order),
        cmocka_unit_test(test_tpool_destroy_drops_queued),
        cmocka_unit_test(test_error_format),
        cmocka_unit_test(test_last_error),
        cmocka_unit_test(test_status_names),
        cmocka_unit_test(test_value_parse_json),
        cmocka_unit_test(test_value_coerce_scalars),
        cmocka_unit_test(test_value_coerce_range_choices),
        cmocka_unit_test(test_value_coerce_lists),
        cmocka_unit_test(test_value_coerce_dtype),
        cmocka_unit_test(test_value_copy_and_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
