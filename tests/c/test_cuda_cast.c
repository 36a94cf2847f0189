/* tests/c/test_cuda_cast.c: the GPU run of cast (ops/tensor/cast.cu) against the CPU operator
 * on the same inputs (gpuutil.h), for all 144 (input, output) pairs of the 12 dtypes.
 *
 * Runs on the device, or emulated on the host (the .emulated ctest entry), never skipped
 * silently. Inputs: a float64 tensor drawn from a list of edge values (halves to round away
 * from zero, type bounds and just past them, float16's largest finite value and the rounding
 * boundary above it, values past 2^63 and 2^64, huge and tiny values, infinities) plus uniform
 * values; NaN and -inf made on the CPU by math.log of non-positive values; decoded images
 * (uint8) halved into exact .5 values. Each is cast on the GPU to every dtype, and each of those
 * again to every dtype, so every pair sees values of every range.
 * Exact: the GPU applies the functions convert.c calls (convert.h, through tensor.cuh), so every
 * element has the CPU's bits, except that a NaN only has to be a NaN (its payload is not
 * compared). The comparison is this file's own (bits_equal), as tu_gpu_compare's |cpu - gpu|
 * cannot compare infinities, which most of these casts produce.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuutil.h"
#include "testutil.h"

static const char *const types[] = {"uint8", "uint16", "uint32",  "uint64",  "int8",    "int16",
                                    "int32", "int64",  "float16", "float32", "float64", "bool"};
enum { NTYPES = sizeof types / sizeof types[0] };

/* Appends printf-formatted text to the growing buffer *s (length *n). */
static void append(char **s, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    *s = realloc(*s, *n + (size_t)k + 1);
    assert_non_null(*s);
    va_start(ap, fmt);
    vsnprintf(*s + *n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    *n += (size_t)k;
}

/* A pipeline with the CPU nodes `src` (ending in node "src0", moved to the GPU as "in"), then
 * "t<a>" = cast(in) for each type a and "t<a>_<b>" = cast(t<a>) for each type b, all on $GPU;
 * every cast is an output. free() the result. */
static char *all_pairs_spec(int batch, const char *src)
{
    char *s = NULL;
    size_t n = 0;
    append(&s, &n,
           "{\"pipeline\": {\"batch_size\": %d, \"num_threads\": 2, \"prefetch_queue_depth\": 2, "
           "\"seed\": 13}, \"nodes\": [%s,"
           "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"src0\"]}",
           batch, src);
    for (int a = 0; a < NTYPES; a++) {
        append(&s, &n,
               ", {\"name\": \"t%d\", \"op\": \"cast\", \"device\": \"$GPU\", \"inputs\": "
               "[\"in\"], \"args\": {\"dtype\": \"%s\"}}",
               a, types[a]);
        for (int b = 0; b < NTYPES; b++)
            append(&s, &n,
                   ", {\"name\": \"t%d_%d\", \"op\": \"cast\", \"device\": \"$GPU\", \"inputs\": "
                   "[\"t%d\"], \"args\": {\"dtype\": \"%s\"}}",
                   a, b, a, types[b]);
    }
    append(&s, &n, "], \"outputs\": [");
    for (int a = 0; a < NTYPES; a++) {
        append(&s, &n, "%s\"t%d\"", a ? ", " : "", a);
        for (int b = 0; b < NTYPES; b++)
            append(&s, &n, ", \"t%d_%d\"", a, b);
    }
    append(&s, &n, "]}");
    return s;
}

static bool is_nan(const unsigned char *p, sl_dtype t)
{
    uint64_t b = 0;
    switch (t) {
    case SL_DTYPE_FLOAT16: memcpy(&b, p, 2); return (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu);
    case SL_DTYPE_FLOAT32:
        memcpy(&b, p, 4);
        return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu);
    case SL_DTYPE_FLOAT64:
        memcpy(&b, p, 8);
        return (b & 0x7ff0000000000000u) == 0x7ff0000000000000u && (b & 0xfffffffffffffu);
    default: return false;
    }
}

/* Runs the spec's cpu and gpu pipelines and checks that every output has the same dtype,
 * shapes and element bits (NaN: any NaN). Returns the number of elements compared. */
static long long bits_equal(const char *spec, int iterations)
{
    long long elements = 0;
    sl_pipeline *pc = tu_gpu_build(spec, false), *pg = tu_gpu_build(spec, true);
    for (int it = 0; it < iterations; it++) {
        assert_int_equal(sl_pipeline_run(pc), SL_OK);
        assert_int_equal(sl_pipeline_run(pg), SL_OK);
        for (int o = 0; o < sl_pipeline_num_outputs(pc); o++) {
            const sl_batch *c = sl_pipeline_output(pc, o), *g = sl_pipeline_output(pg, o);
            sl_dtype t = sl_batch_dtype(c);
            size_t es = sl_dtype_size(t);
            assert_int_equal(t, sl_batch_dtype(g));
            assert_int_equal(sl_batch_size(c), sl_batch_size(g));
            for (int i = 0; i < sl_batch_size(c); i++) {
                assert_int_equal(sl_batch_ndim(c), sl_batch_ndim(g));
                for (int k = 0; k < sl_batch_ndim(c); k++)
                    assert_int_equal(sl_batch_shape(c, i)[k], sl_batch_shape(g, i)[k]);
            }
            unsigned char *gh = tu_batch_to_host(g);
            const unsigned char *ch = sl_batch_data(c);
            for (size_t e = 0; e < sl_batch_nbytes(c) / es; e++, elements++) {
                const unsigned char *a = ch + e * es, *b = gh + e * es;
                if (memcmp(a, b, es) && !(is_nan(a, t) && is_nan(b, t))) {
                    uint64_t x = 0, y = 0;
                    memcpy(&x, a, es);
                    memcpy(&y, b, es);
                    fail_msg("iteration %d output %d (%s) element %zu: cpu bits %#llx, gpu bits "
                             "%#llx",
                             it, o, sl_dtype_name(t), e, (unsigned long long)x,
                             (unsigned long long)y);
                }
            }
            free(gh);
        }
    }
    sl_pipeline_destroy(pc);
    sl_pipeline_destroy(pg);
    print_message("compared %lld elements bit for bit\n", elements);
    return elements;
}

static void compare_all_pairs(int batch, const char *src, int iterations)
{
    char *spec = all_pairs_spec(batch, src);
    assert_true(bits_equal(spec, iterations) > 0);
    free(spec);
}

/* Edge values in float64: every pair of dtypes sees them through its first cast. */
static void edge_values_all_pairs(void **state)
{
    const char *src =
        "{\"name\": \"src0\", \"op\": \"random.uniform\", \"args\": {\"dtype\": \"float64\", "
        "\"shape\": [300], \"values\": [0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, "
        "0.49999997019767761, -0.49999997019767761, 0.49999999999999994, 1, -1, 127, 127.5, "
        "128, 128.5, -128, -128.5, -129, 254.5, 255, 255.49, 255.5, 256, 32767.5, -32768.5, "
        "65504, 65519, 65519.99, 65520, 65535, 65535.5, 65536, 70000.5, 2147483647, "
        "2147483647.5, 2147483648, -2147483648, -2147483648.5, -2147483649, 4294967295, "
        "4294967295.5, 4294967296, 1e10, -1e10, 9007199254740993, 9.2233720368547758e18, "
        "9.3e18, -9.2233720368547758e18, -9.3e18, 1.8446744073709552e19, 2e19, 1e300, -1e300, "
        "3.4028234663852886e38, 3.5e38, -3.5e38, 5.9604644775390625e-08, 2.98023223876953e-08, "
        "1e-40, 6.1e-05, 0.1]}}";
    compare_all_pairs(3, src, 2);
    const char *uniform = "{\"name\": \"src0\", \"op\": \"random.uniform\", \"args\": {\"dtype\": "
                          "\"float64\", \"shape\": [100], \"range\": [-70000, 70000]}}";
    compare_all_pairs(2, uniform, 1);
}

/* NaN, -inf and 0 from the CPU's log of -1, 0, 0.5 and 1 (float32), through every pair. */
static void nan_and_infinity_all_pairs(void **state)
{
    const char *src =
        "{\"name\": \"s_u\", \"op\": \"random.uniform\", \"args\": {\"shape\": [40], \"values\": "
        "[-1, 0, 0.5, 1, 3]}},"
        "{\"name\": \"src0\", \"op\": \"math.log\", \"inputs\": [\"s_u\"]}";
    compare_all_pairs(2, src, 1);
}

/* Images halved: uint8 -> float32 x.5 values -> uint8 / int8 / float16 on the GPU. */
static void image_halves_round_away_from_zero(void **state)
{
    static char spec[4096];
    snprintf(spec, sizeof spec,
             "{\"pipeline\": {\"batch_size\": 3, \"num_threads\": 2, \"seed\": 5},"
             " \"nodes\": ["
             "  {\"name\": \"reader\", \"op\": \"readers.file\", \"args\": {\"file_root\": "
             "\"%s\", \"random_shuffle\": true, \"seed\": 3}},"
             "  {\"name\": \"dec\", \"op\": \"decoders.image\", \"device\": \"$MIX\","
             "   \"inputs\": [\"reader:0\"]},"
             "  {\"name\": \"f\", \"op\": \"cast\", \"device\": \"$GPU\", \"inputs\": [\"dec\"],"
             "   \"args\": {\"dtype\": \"float32\"}},"
             "  {\"name\": \"r\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
             "  {\"name\": \"fh\", \"op\": \"arithmetic\", \"inputs\": [\"r\"],"
             "   \"args\": {\"op\": \"fdiv\", \"scalar\": 2.0}},"
             "  {\"name\": \"h\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"fh\"]},"
             "  {\"name\": \"u8\", \"op\": \"cast\", \"device\": \"$GPU\", \"inputs\": [\"h\"],"
             "   \"args\": {\"dtype\": \"uint8\"}},"
             "  {\"name\": \"i8\", \"op\": \"cast\", \"device\": \"$GPU\", \"inputs\": [\"h\"],"
             "   \"args\": {\"dtype\": \"int8\"}},"
             "  {\"name\": \"f16\", \"op\": \"cast\", \"device\": \"$GPU\", \"inputs\": [\"h\"],"
             "   \"args\": {\"dtype\": \"float16\"}},"
             "  {\"name\": \"same\", \"op\": \"cast\", \"device\": \"$GPU\", \"inputs\": [\"f\"],"
             "   \"args\": {\"dtype\": \"float32\"}}],"
             " \"outputs\": [\"f\", \"u8\", \"i8\", \"f16\", \"same\"]}",
             tu_env_dir("SLUICE_TEST_TREE"));
    assert_true(bits_equal(spec, 2) > 100000);
}

int main(void)
{
    tu_gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(edge_values_all_pairs),
        cmocka_unit_test(nan_and_infinity_all_pairs),
        cmocka_unit_test(image_halves_round_away_from_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
