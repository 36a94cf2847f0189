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
 * - Output windows (sl__resample_plan_window): random configurations (up to 300 px, 1 / 3 / 4
 *   channels, every filter, antialias on and off, every type pair, intervals inside, outside,
 *   mirrored; windows whole, one pixel, random, empty, reaching outside the output), at every
 *   instruction set: the window's pixels equal the whole plan's byte for byte, every other byte
 *   of the output keeps its sentinel, the window reads nothing outside its y0..y1 x x0..x1 (the
 *   rest of the input poisoned, then the region alone in an exactly-sized buffer) and needs no
 *   more scratch or input than the whole plan.
 * - Plans are pure functions of their axes although each thread keeps its last whole-axis scans
 *   (resample.c's memo): planned on a fresh thread (nothing kept) and on one that has just
 *   planned axes differing in one field each (one pixel, the next double, another filter,
 *   antialias flipped), every field of the plan is the same.
 * The pixel values themselves are compared with PIL / OpenCV / NumPy in
 * tests/data/cases/resize.py.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
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

/* ---- output windows ---------------------------------------------------------------------- */

/* A window request along an axis of n outputs: the whole axis, one pixel, a random part, one
 * reaching outside [0, n) or an empty one. */
static void out_window(int64_t n, int64_t *w0, int64_t *w1)
{
    switch (rnd(12)) {
    case 0:
    case 1: *w0 = 0, *w1 = n; break;
    case 2:
    case 3: *w0 = rnd((uint32_t)n), *w1 = *w0 + 1; break;
    case 4: *w0 = (int64_t)rnd((uint32_t)n + 1) - 3, *w1 = *w0 + 1 + rnd((uint32_t)n + 6); break;
    case 5: *w0 = rnd((uint32_t)n + 1), *w1 = *w0 - (int64_t)rnd(3); break;
    default: *w0 = rnd((uint32_t)n), *w1 = *w0 + 1 + rnd((uint32_t)(n - *w0)); break;
    }
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static void describe(const sl__resample_plan *p, char *buf, size_t n)
{
    snprintf(buf, n,
             "filters %d/%d aa %d, %lldx%lld -> %lldx%lld x %lld, y [%.17g, %.17g) x [%.17g, "
             "%.17g), types %d -> %d, stride %lld, window y [%lld, %lld) x [%lld, %lld), isa %d",
             p->y.filter, p->x.filter, p->x.antialias, (long long)p->y.in, (long long)p->x.in,
             (long long)p->y.out, (long long)p->x.out, (long long)p->c, p->y.lo, p->y.hi, p->x.lo,
             p->x.hi, p->in_type, p->out_type, (long long)p->stride, (long long)p->wy0,
             (long long)p->wy1, (long long)p->wx0, (long long)p->wx1, (int)sl__rs_isa_get());
}

/* Input element k of the poisoned copy: a different value (uint8) or NaN (float: any read, even
 * with weight 0, shows in the output). */
static void poison(unsigned char *buf, size_t k, bool u8)
{
    if (u8)
        buf[k] = (uint8_t)(buf[k] ^ (1 + rnd(255)));
    else
        ((float *)buf)[k] = NAN;
}

/* One random configuration: the whole plan and a windowed one on the same input, at every
 * instruction set up to `top`. */
static void window_case(sl__rs_isa top)
{
    static const int64_t chans[] = {1, 3, 4};
    char what[512];
    sl__resample_plan p;
    memset(&p, 0, sizeof p);
    const uint32_t big = rnd(3) ? 300 : 24;
    p.y.in = 1 + rnd(big), p.x.in = 1 + rnd(big);
    p.y.out = rnd(6) ? 1 + rnd(big) : p.y.in; /* same size: identity axes (skip_*) */
    p.x.out = rnd(6) ? 1 + rnd(big) : p.x.in;
    p.c = chans[rnd(3)];
    if (rnd(3))
        p.y.lo = 0, p.y.hi = (double)p.y.in, p.x.lo = 0, p.x.hi = (double)p.x.in;
    else
        interval(p.y.in, &p.y.lo, &p.y.hi), interval(p.x.in, &p.x.lo, &p.x.hi);
    p.y.filter = (sl__filter)rnd(6), p.x.filter = rnd(4) ? p.y.filter : (sl__filter)rnd(6);
    p.y.antialias = p.x.antialias = rnd(2);
    for (int d = 0; d < 2 && rnd(4) == 0; d++) { /* 2 -> 3 upscaling: NN positions at exact ties */
        sl__resample_axis *a = rnd(2) ? &p.x : &p.y;
        const int64_t m = 1 + rnd(100);
        a->in = 2 * m, a->out = 3 * m, a->lo = 0, a->hi = (double)a->in;
        a->filter = rnd(2) ? SL__FILTER_NN : a->filter;
    }
    p.in_type = rnd(2) ? SL_DTYPE_UINT8 : SL_DTYPE_FLOAT32;
    p.out_type = rnd(2) ? SL_DTYPE_UINT8 : SL_DTYPE_FLOAT32;
    p.stride = rnd(3) ? 0 : p.x.in * p.c + rnd(7);
    const bool in_u8 = p.in_type == SL_DTYPE_UINT8;
    const int64_t C = p.c, stride = p.stride ? p.stride : p.x.in * C;
    const size_t ies = in_u8 ? 1 : 4, oes = p.out_type == SL_DTYPE_UINT8 ? 1 : 4;
    const size_t in_elems = (size_t)((p.y.in - 1) * stride + p.x.in * C);
    const size_t px = (size_t)C * oes, out_size = (size_t)(p.y.out * p.x.out) * px;
    unsigned char *src = exact_alloc(in_elems * ies), *bad = exact_alloc(in_elems * ies);
    unsigned char *ref = exact_alloc(out_size), *dst = exact_alloc(out_size);
    unsigned char *dst2 = exact_alloc(out_size);
    const bool edges = rnd(2); /* black and white: the clamping of CUBIC / LANCZOS3 overshoot */
    for (size_t k = 0; k < in_elems; k++) {
        if (in_u8)
            src[k] = edges ? (uint8_t)(rnd(2) * 255) : (uint8_t)rnd(256);
        else
            ((float *)src)[k] = edges ? (float)(rnd(2) * 255) : (float)rndf(-40, 300);
    }

    sl__resample_plan full = p, w = p;
    int64_t wy0, wy1, wx0, wx1;
    out_window(p.y.out, &wy0, &wy1);
    out_window(p.x.out, &wx0, &wx1);
    sl__resample_plan_init(&full);
    sl__resample_plan_init(&w);
    if (rnd(4) == 0) /* a window asked before the last one counts for nothing */
        sl__resample_plan_window(&w, (int64_t)rnd(9) - 4, rnd(9), (int64_t)rnd(9) - 4, rnd(9));
    sl__resample_plan_window(&w, wy0, wy1, wx0, wx1);
    describe(&w, what, sizeof what);

    /* the plan: the clamped window, the whole plan's taps and order, no more input nor scratch */
    const int64_t cy0 = clamp64(wy0, 0, p.y.out), cx0 = clamp64(wx0, 0, p.x.out);
    const int64_t cy1 = clamp64(wy1, cy0, p.y.out), cx1 = clamp64(wx1, cx0, p.x.out);
    const bool whole = cy0 == 0 && cy1 == p.y.out && cx0 == 0 && cx1 == p.x.out;
    const bool empty = cy0 == cy1 || cx0 == cx1;
    if (w.wy0 != cy0 || w.wy1 != cy1 || w.wx0 != cx0 || w.wx1 != cx1 || w.window == whole)
        fail_msg("%s: window not clamped as asked (%lld..%lld x %lld..%lld)", what, (long long)wy0,
                 (long long)wy1, (long long)wx0, (long long)wx1);
    if (w.scratch > full.scratch || w.ky != full.ky || w.kx != full.kx || w.nn != full.nn ||
        w.vertical_first != full.vertical_first || w.skip_x != full.skip_x ||
        w.skip_y != full.skip_y)
        fail_msg("%s: scratch %zu (whole %zu), taps %d/%d (%d/%d), order %d (%d)", what, w.scratch,
                 full.scratch, w.ky, w.kx, full.ky, full.kx, w.vertical_first, full.vertical_first);
    if (whole && (w.scratch != full.scratch || w.y0 != full.y0 || w.y1 != full.y1 ||
                  w.x0 != full.x0 || w.x1 != full.x1))
        fail_msg("%s: the whole window is not the whole plan", what);
    if (empty && w.scratch != 0)
        fail_msg("%s: an empty window needs scratch", what);
    if (!empty && (w.y0 < full.y0 || w.y1 > full.y1 || w.x0 < full.x0 || w.x1 > full.x1 ||
                   w.y0 >= w.y1 || w.x0 >= w.x1))
        fail_msg("%s: reads rows [%lld, %lld) x columns [%lld, %lld), the whole plan [%lld, "
                 "%lld) x [%lld, %lld)",
                 what, (long long)w.y0, (long long)w.y1, (long long)w.x0, (long long)w.x1,
                 (long long)full.y0, (long long)full.y1, (long long)full.x0, (long long)full.x1);

    /* the input outside the window's region, poisoned */
    memcpy(bad, src, in_elems * ies);
    for (int64_t y = 0; y < p.y.in; y++)
        for (int64_t x = 0; x < p.x.in; x++)
            if (empty || y < w.y0 || y >= w.y1 || x < w.x0 || x >= w.x1)
                for (int64_t c = 0; c < C; c++)
                    poison(bad, (size_t)(y * stride + x * C + c), in_u8);
    /* the region alone, rows packed, in an exactly-sized buffer (ASan builds: any access
     * outside it fails); src is formed as an address, not by pointer arithmetic */
    const int64_t rw = (w.x1 - w.x0) * C, rh = w.y1 - w.y0;
    unsigned char *region = exact_alloc(empty ? 0 : (size_t)(rh * rw) * ies);
    for (int64_t y = 0; y < rh && !empty; y++)
        memcpy(region + (size_t)(y * rw) * ies,
               src + (size_t)((w.y0 + y) * stride + w.x0 * C) * ies, (size_t)rw * ies);
    sl__resample_plan r = w;
    r.stride = empty ? 0 : rw;
    const void *rsrc =
        (const void *)((uintptr_t)region - (uintptr_t)((w.y0 * rw + w.x0 * C) * (int64_t)ies));

    void *scratch = exact_alloc(full.scratch), *wscratch = exact_alloc(w.scratch);
    sl__rs_isa prev = sl__rs_isa_limit(SL__RS_SCALAR);
    for (int isa = SL__RS_SCALAR; isa <= (int)top; isa++) {
        sl__rs_isa_limit((sl__rs_isa)isa);
        describe(&w, what, sizeof what);
        memset(ref, 0x5A, out_size);
        sl__resample_run(&full, src, ref, scratch);
        memset(dst, 0xA5, out_size);
        sl__resample_run(&w, src, dst, wscratch);
        for (int64_t y = 0; y < p.y.out; y++)
            for (int64_t x = 0; x < p.x.out; x++) {
                const size_t at = (size_t)(y * p.x.out + x) * px;
                const bool in = y >= w.wy0 && y < w.wy1 && x >= w.wx0 && x < w.wx1;
                for (size_t b = 0; b < px; b++)
                    if (in ? dst[at + b] != ref[at + b] : dst[at + b] != 0xA5)
                        fail_msg("%s: pixel (%lld, %lld) byte %zu = %d, %s %d", what, (long long)y,
                                 (long long)x, b, dst[at + b],
                                 in ? "the whole plan's" : "outside the window: sentinel",
                                 in ? ref[at + b] : 0xA5);
            }
        memset(dst2, 0xA5, out_size);
        sl__resample_run(&w, bad, dst2, wscratch);
        if (memcmp(dst2, dst, out_size) != 0)
            fail_msg("%s: reads input outside rows [%lld, %lld) x columns [%lld, %lld)", what,
                     (long long)w.y0, (long long)w.y1, (long long)w.x0, (long long)w.x1);
        memset(dst2, 0xA5, out_size);
        sl__resample_run(&r, rsrc, dst2, wscratch);
        if (memcmp(dst2, dst, out_size) != 0)
            fail_msg("%s: differs on the region alone", what);
    }
    sl__rs_isa_limit(prev);
    free(wscratch);
    free(scratch);
    free(region);
    free(dst2);
    free(dst);
    free(ref);
    free(bad);
    free(src);
}

static void test_output_window(void **state)
{
    (void)state;
    g_state = 0x5EEDC0FFEE123457ull; /* its own seed: the cases do not depend on other tests */
    for (int k = 0; k < 400; k++)
        window_case(sl__rs_isa_get());
}

/* ---- the per-thread scan memo -------------------------------------------------------------- */

static void *plan_on_thread(void *arg)
{
    sl__resample_plan_init(arg);
    return NULL;
}

/* p planned on a new thread, whose memo is empty. */
static void plan_fresh(sl__resample_plan *p)
{
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, plan_on_thread, p), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

static void assert_same_plan(const sl__resample_plan *a, const sl__resample_plan *b, int variant)
{
    if (a->ky != b->ky || a->kx != b->kx || a->y0 != b->y0 || a->y1 != b->y1 || a->x0 != b->x0 ||
        a->x1 != b->x1 || a->vertical_first != b->vertical_first || a->scratch != b->scratch)
        fail_msg("variant %d, %lldx%lld -> %lldx%lld, y [%.17g, %.17g) x [%.17g, %.17g), filters "
                 "%d/%d aa %d: ky %d/%d kx %d/%d y [%lld, %lld)/[%lld, %lld) x [%lld, %lld)/[%lld, "
                 "%lld) scratch %zu/%zu",
                 variant, (long long)a->y.in, (long long)a->x.in, (long long)a->y.out,
                 (long long)a->x.out, a->y.lo, a->y.hi, a->x.lo, a->x.hi, a->y.filter, a->x.filter,
                 a->x.antialias, a->ky, b->ky, a->kx, b->kx, (long long)a->y0, (long long)a->y1,
                 (long long)b->y0, (long long)b->y1, (long long)a->x0, (long long)a->x1,
                 (long long)b->x0, (long long)b->x1, a->scratch, b->scratch);
}

/* Axis a changed in one field (variant 0: unchanged). */
static void vary(sl__resample_axis *a, int variant)
{
    switch (variant) {
    case 1: a->in += 1; break;
    case 2: a->out += 1; break;
    case 3: a->lo = nextafter(a->lo, INFINITY); break;
    case 4: a->hi = nextafter(a->hi, -INFINITY); break;
    case 5: a->filter = (sl__filter)((a->filter + 1) % 6); break;
    case 6: a->antialias = !a->antialias; break;
    default: break;
    }
}

static void test_scan_memo(void **state)
{
    (void)state;
    g_state = 0xC0FFEE5EED000021ull;
    for (int k = 0; k < 150; k++) {
        sl__resample_plan base;
        memset(&base, 0, sizeof base);
        base.y.in = 1 + rnd(300), base.x.in = 1 + rnd(300);
        base.y.out = 1 + rnd(250), base.x.out = 1 + rnd(250);
        base.c = 3;
        interval(base.y.in, &base.y.lo, &base.y.hi);
        interval(base.x.in, &base.x.lo, &base.x.hi);
        base.y.filter = base.x.filter = (sl__filter)rnd(6);
        base.y.antialias = base.x.antialias = rnd(2);
        base.in_type = base.out_type = SL_DTYPE_UINT8;
        for (int v = 0; v <= 6; v++) {
            sl__resample_plan want = base, got = base, warm = base;
            vary(&want.y, v), vary(&want.x, 6 - v); /* the two axes varied differently */
            got = want;
            plan_fresh(&want);
            /* this thread: the base plan, then the variant, then the variant again (a hit) */
            sl__resample_plan_init(&warm);
            sl__resample_plan_init(&got);
            assert_same_plan(&got, &want, v);
            sl__resample_plan_init(&got);
            assert_same_plan(&got, &want, v);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_configurations),
        cmocka_unit_test(test_identity_and_mirror),
        cmocka_unit_test(test_simd_equals_scalar),
        cmocka_unit_test(test_output_window),
        cmocka_unit_test(test_scan_memo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
