/* test_resize: the resampling helper behind resize / random_resized_crop (ops/image/resample.h),
 * called directly, on cases the reference files cannot enumerate.
 *
 * - Random configurations (sizes 1..40 -> 1..50, 1-5 channels, every filter, antialias on and
 *   off, every type pair, intervals inside, outside, mirrored, degenerate, padded row strides):
 *   buffers are allocated at their exact size (so ASan catches any read or write outside), and
 *   a constant image must stay constant: exactly for uint8 -> uint8 (normalised 22-bit
 *   coefficients), within 1e-3 relative for float32.
 * - Identity: out = in when the interval is [0, n) and the size unchanged, for every filter;
 *   a mirrored interval gives the mirror image exactly (every filter is 0 at non-zero
 *   integer offsets, so both are copies).
 * - SIMD kernels (resample_simd.h): uint8 -> uint8 on random images, random configurations
 *   (up to 300 px, 1-5 channels, every filter, intervals, strides), every instruction set the
 *   CPU has gives exactly the scalar kernels' bytes, reading and writing only inside the
 *   exactly-sized buffers.
 * The pixel values themselves are compared with PIL / OpenCV / NumPy in
 * tests/data/cases/resize.py.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/image/resample.h"
#include "ops/image/resample_simd.h"

static uint64_t g_state = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(uint32_t n) /* splitmix64, uniform enough for choosing cases */
{
    uint64_t z = (g_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)((z ^ (z >> 31)) % n);
}

static double rndf(double lo, double hi)
{
    return lo + (hi - lo) * rnd(1u << 20) / (double)(1u << 20);
}

/* An interval over an axis of n pixels: the whole axis, a part, one reaching outside, a
 * mirrored one or a degenerate one. */
static void interval(int64_t n, double *lo, double *hi)
{
    switch (rnd(5)) {
    case 0: *lo = 0, *hi = (double)n; break;
    case 1: *lo = rndf(0, (double)n), *hi = rndf(*lo, (double)n); break;
    case 2: *lo = rndf(-2.0 * n, (double)n), *hi = rndf(0, 3.0 * n); break;
    case 3: *lo = (double)n, *hi = rndf(-1, (double)n); break;
    default: *lo = *hi = rndf(-1, n + 1.0); break;
    }
}

static void *exact_alloc(size_t n)
{
    return malloc(n ? n : 1);
}

static void check_constant(const sl__resample_plan *p, const void *dst, const double *v)
{
    const int64_t n = p->y.out * p->x.out;
    for (int64_t k = 0; k < n; k++)
        for (int64_t c = 0; c < p->c; c++) {
            double want = v[c], got;
            if (p->out_type == SL_DTYPE_UINT8) {
                want = want < 0 ? 0 : want > 255 ? 255 : rint(want);
                got = ((const uint8_t *)dst)[k * p->c + c];
            } else {
                got = ((const float *)dst)[k * p->c + c];
            }
            double tol = p->out_type == SL_DTYPE_UINT8 ? 0 : 1e-3 * fmax(1, fabs(want));
            if (!(fabs(got - want) <= tol))
                fail_msg("filters %d/%d aa %d, %lldx%lld -> %lldx%lld x %lld, y [%g, %g) x [%g, "
                         "%g), types %d -> %d: pixel %lld ch %lld = %g, expected %g",
                         p->y.filter, p->x.filter, p->x.antialias, (long long)p->y.in,
                         (long long)p->x.in, (long long)p->y.out, (long long)p->x.out,
                         (long long)p->c, p->y.lo, p->y.hi, p->x.lo, p->x.hi, p->in_type,
                         p->out_type, (long long)k, (long long)c, got, want);
        }
}

static void random_case(void)
{
    sl__resample_plan p;
    memset(&p, 0, sizeof p);
    p.y.in = 1 + rnd(40), p.x.in = 1 + rnd(40);
    p.y.out = rnd(4) ? 1 + rnd(50) : p.y.in; /* same size: the single-pass paths */
    p.x.out = rnd(4) ? 1 + rnd(50) : p.x.in;
    p.c = 1 + rnd(5);
    interval(p.y.in, &p.y.lo, &p.y.hi);
    interval(p.x.in, &p.x.lo, &p.x.hi);
    p.y.filter = (sl__filter)rnd(6), p.x.filter = rnd(4) ? p.y.filter : (sl__filter)rnd(6);
    p.y.antialias = p.x.antialias = rnd(2);
    p.in_type = rnd(2) ? SL_DTYPE_UINT8 : SL_DTYPE_FLOAT32;
    p.out_type = rnd(2) ? SL_DTYPE_UINT8 : SL_DTYPE_FLOAT32;
    p.stride = rnd(3) ? 0 : p.x.in * p.c + rnd(7);
    const int64_t stride = p.stride ? p.stride : p.x.in * p.c;
    const size_t ies = p.in_type == SL_DTYPE_UINT8 ? 1 : 4;
    const size_t oes = p.out_type == SL_DTYPE_UINT8 ? 1 : 4;
    unsigned char *src = exact_alloc((size_t)((p.y.in - 1) * stride + p.x.in * p.c) * ies);
    unsigned char *dst = exact_alloc((size_t)(p.y.out * p.x.out * p.c) * oes);
    double v[5];
    for (int64_t c = 0; c < p.c; c++)
        v[c] = p.in_type == SL_DTYPE_UINT8 ? rnd(256) : rndf(-300, 600);
    for (int64_t y = 0; y < p.y.in; y++)
        for (int64_t k = 0; k < p.x.in * p.c; k++) {
            if (p.in_type == SL_DTYPE_UINT8)
                src[y * stride + k] = (uint8_t)v[k % p.c];
            else
                ((float *)src)[y * stride + k] = (float)v[k % p.c];
        }
    sl__resample_plan_init(&p);
    void *scratch = exact_alloc(p.scratch);
    sl__resample_run(&p, src, dst, scratch);
    check_constant(&p, dst, v);
    free(scratch);
    free(dst);
    free(src);
}

static void test_random_configurations(void **state)
{
    (void)state;
    for (int k = 0; k < 4000; k++)
        random_case();
}

/* Runs a uint8 plan on src (h x w x 3) into a new buffer. */
static uint8_t *run_u8(sl__resample_plan *p, const uint8_t *src)
{
    p->c = 3;
    p->in_type = p->out_type = SL_DTYPE_UINT8;
    sl__resample_plan_init(p);
    uint8_t *dst = exact_alloc((size_t)(p->y.out * p->x.out * 3));
    void *scratch = exact_alloc(p->scratch);
    sl__resample_run(p, src, dst, scratch);
    free(scratch);
    return dst;
}

static void test_identity_and_mirror(void **state)
{
    (void)state;
    enum { H = 13, W = 17 };
    uint8_t src[H * W * 3];
    for (int k = 0; k < H * W * 3; k++)
        src[k] = (uint8_t)rnd(256);
    for (int f = 0; f < 6; f++) {
        sl__resample_plan p;
        memset(&p, 0, sizeof p);
        p.y = (sl__resample_axis){H, H, 0, H, (sl__filter)f, true};
        p.x = (sl__resample_axis){W, W, 0, W, (sl__filter)f, true};
        uint8_t *same = run_u8(&p, src);
        if (memcmp(same, src, sizeof src) != 0)
            fail_msg("filter %d: same size is not the identity", f);
        p.x.lo = W, p.x.hi = 0;
        uint8_t *mir = run_u8(&p, src);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                if (memcmp(mir + (y * W + x) * 3, src + (y * W + W - 1 - x) * 3, 3) != 0)
                    fail_msg("filter %d: mirrored interval is not the mirror image", f);
        free(same);
        free(mir);
    }
}

/* One random uint8 -> uint8 configuration, run with each instruction set up to `top`: the
 * output must equal the scalar kernels' byte for byte. */
static void simd_case(sl__rs_isa top)
{
    sl__resample_plan p;
    memset(&p, 0, sizeof p);
    const uint32_t big = rnd(3) ? 40 : 300;
    p.y.in = 1 + rnd(big), p.x.in = 1 + rnd(big);
    p.y.out = rnd(6) ? 1 + rnd(big) : p.y.in;
    p.x.out = rnd(6) ? 1 + rnd(big) : p.x.in;
    p.c = rnd(2) ? 3 : 1 + rnd(5);
    if (rnd(3))
        p.y.lo = 0, p.y.hi = (double)p.y.in, p.x.lo = 0, p.x.hi = (double)p.x.in;
    else
        interval(p.y.in, &p.y.lo, &p.y.hi), interval(p.x.in, &p.x.lo, &p.x.hi);
    p.y.filter = (sl__filter)rnd(6), p.x.filter = rnd(4) ? p.y.filter : (sl__filter)rnd(6);
    p.y.antialias = p.x.antialias = rnd(4) != 0;
    p.in_type = p.out_type = SL_DTYPE_UINT8;
    p.stride = rnd(3) ? 0 : p.x.in * p.c + rnd(7);
    const int64_t stride = p.stride ? p.stride : p.x.in * p.c;
    const size_t in_size = (size_t)((p.y.in - 1) * stride + p.x.in * p.c);
    const size_t out_size = (size_t)(p.y.out * p.x.out * p.c);
    uint8_t *src = exact_alloc(in_size), *ref = exact_alloc(out_size);
    uint8_t *dst = exact_alloc(out_size);
    const bool edges = rnd(2); /* black and white: the clamping of CUBIC / LANCZOS3 overshoot */
    for (size_t k = 0; k < in_size; k++)
        src[k] = edges ? (uint8_t)(rnd(2) * 255) : (uint8_t)rnd(256);
    sl__resample_plan_init(&p);
    void *scratch = exact_alloc(p.scratch);
    sl__rs_isa prev = sl__rs_isa_limit(SL__RS_SCALAR);
    sl__resample_run(&p, src, ref, scratch);
    for (int isa = SL__RS_SSE41; isa <= (int)top; isa++) {
        sl__rs_isa_limit((sl__rs_isa)isa);
        memset(dst, 0xA5, out_size);
        sl__resample_run(&p, src, dst, scratch);
        for (size_t k = 0; k < out_size; k++)
            if (dst[k] != ref[k])
                fail_msg("isa %d, filters %d/%d aa %d, %lldx%lld -> %lldx%lld x %lld, y [%g, %g) "
                         "x [%g, %g), stride %lld: byte %zu = %d, scalar %d",
                         isa, p.y.filter, p.x.filter, p.x.antialias, (long long)p.y.in,
                         (long long)p.x.in, (long long)p.y.out, (long long)p.x.out, (long long)p.c,
                         p.y.lo, p.y.hi, p.x.lo, p.x.hi, (long long)p.stride, k, dst[k], ref[k]);
    }
    sl__rs_isa_limit(prev);
    free(scratch);
    free(dst);
    free(ref);
    free(src);
}

static void test_simd_equals_scalar(void **state)
{
    (void)state;
    sl__rs_isa top = sl__rs_isa_get();
    if (top == SL__RS_SCALAR) {
        print_message("no SIMD kernels on this CPU: nothing to compare\n");
        return;
    }
    for (int k = 0; k < 1500; k++)
        simd_case(top);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_configurations),
        cmocka_unit_test(test_identity_and_mirror),
        cmocka_unit_test(test_simd_equals_scalar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
