/* ops/image/resample.c: separable resampling of HWC images (see resample.h for the
 * coordinate convention, the filters and the precision).
 *
 * A sample is resampled in two passes over the input rows / columns it actually reads: one
 * along x, one along y, in the cheaper order (uint8 -> uint8: x first, as PIL); an axis that
 * keeps its size and interval is skipped, and NN on both axes is a plain gather. Each axis has a
 * coefficient table with a fixed number of taps K per output pixel (the widest window of that axis;
 * narrower windows are zero-padded and shifted so that first + K never passes the image edge), so
 * the inner loops have no branches and read only inside the image. The vertical pass walks whole
 * rows in fixed-size blocks of elements so GCC vectorises it at -O2; the horizontal pass has
 * unrolled kernels for 1 and 3 channels. uint8 -> uint8 (the val and train hot path) runs the
 * SSE4.1 / AVX2 / AVX-512 kernels of resample_simd.c where the CPU has them (3-4.5x faster
 * with AVX2, the same bytes); these scalar passes are their reference and the fallback.
 *
 * An output window (sl__resample_plan_window) keeps the whole plan's K per axis and pass order
 * and computes the rows of the whole tables for its pixels only (the same formulas with the same
 * o), over the input rows / columns those rows need, so its pixels are the whole run's bytes.
 *
 * Invariant: every tap index first[o] + k lies in [0, extent) of its source, so no kernel can
 * read outside the input or the intermediate image.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ops/image/resample.h"
#include "ops/image/resample_simd.h"

#define PREC SL__RS_PREC /* fixed-point bits of uint8 coefficients (PIL's PRECISION_BITS) */
#define HALF SL__RS_HALF
#define BLK 64 /* elements per block of the vertical pass (a multiple of any vector width) */

/* ---- filters ----------------------------------------------------------------------------- */

static double f_linear(double x)
{
    x = fabs(x);
    return x < 1.0 ? 1.0 - x : 0.0;
}

static double f_cubic(double x) /* Keys, a = -0.5 */
{
    const double a = -0.5;
    x = fabs(x);
    if (x < 1.0)
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
    if (x < 2.0)
        return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
    return 0.0;
}

static double sinc(double x)
{
    if (x == 0.0)
        return 1.0;
    x *= M_PI;
    return sin(x) / x;
}

static double f_lanczos3(double x)
{
    return (x >= -3.0 && x < 3.0) ? sinc(x) * sinc(x / 3.0) : 0.0;
}

static double f_gaussian(double x)
{
    return fabs(x) < 1.0 ? exp(-4.0 * x * x) : 0.0;
}

typedef struct filter_def {
    double (*fn)(double);
    double support;
} filter_def;

static filter_def filter_of(sl__filter f)
{
    switch (f) {
    case SL__FILTER_CUBIC: return (filter_def){f_cubic, 2.0};
    case SL__FILTER_LANCZOS3: return (filter_def){f_lanczos3, 3.0};
    case SL__FILTER_GAUSSIAN: return (filter_def){f_gaussian, 1.0};
    default: return (filter_def){f_linear, 1.0};
    }
}

sl__filter sl__filter_parse(const char *name)
{
    static const char *const names[] = {"INTERP_NN",       "INTERP_LINEAR",     "INTERP_CUBIC",
                                        "INTERP_LANCZOS3", "INTERP_TRIANGULAR", "INTERP_GAUSSIAN"};
    for (int k = 0; k < (int)(sizeof names / sizeof names[0]); k++)
        if (name && !strcmp(name, names[k]))
            return (sl__filter)k;
    return SL__FILTER_LINEAR;
}

sl__filter sl__resample_pick(sl__filter min_filter, sl__filter mag_filter, double in_extent,
                             int64_t out)
{
    return (double)out < fabs(in_extent) ? min_filter : mag_filter;
}

/* ---- windows ----------------------------------------------------------------------------- */

/* What an axis needs to place output pixel o. */
typedef struct axis_geo {
    const sl__resample_axis *a;
    filter_def f;
    double scale;   /* signed input pixels per output pixel */
    double inv_fs;  /* 1 / filter scale */
    double support; /* half-width of the window in input pixels */
    bool nn;
} axis_geo;

static void geo_init(axis_geo *g, const sl__resample_axis *a)
{
    g->a = a;
    g->nn = a->filter == SL__FILTER_NN;
    g->f = filter_of(a->filter);
    g->scale = a->out > 0 ? (a->hi - a->lo) / (double)a->out : 0.0;
    double fs = fabs(g->scale);
    bool aa = a->filter == SL__FILTER_TRIANGULAR || (a->antialias && !g->nn);
    if (!aa || !(fs > 1.0))
        fs = 1.0;
    g->inv_fs = 1.0 / fs;
    g->support = g->f.support * fs;
}

static int64_t clamp_i(double v, int64_t lo, int64_t hi)
{
    if (!(v > (double)lo)) /* NaN too */
        return lo;
    return v < (double)hi ? (int64_t)v : hi;
}

/* Centre of output pixel o and its window [*b, *e) of input pixels, clipped to the image; a
 * window wholly outside the image gives the nearest pixel. Not for NN axes. */
static inline __attribute__((always_inline)) double window(const axis_geo *g, int64_t o, int64_t *b,
                                                           int64_t *e)
{
    const int64_t n = g->a->in;
    double c = g->a->lo + ((double)o + 0.5) * g->scale;
    *b = clamp_i(floor(c - g->support + 0.5), 0, n);
    *e = clamp_i(floor(c + g->support + 0.5), 0, n);
    if (*e <= *b) {
        *b = clamp_i(floor(c), 0, n - 1);
        *e = *b + 1;
    }
    return c;
}

/* NN source indices, in output order: the position lo + s / 2 + o * s is accumulated in double
 * as PIL's ImagingScaleAffine does, so exact ties (e.g. 400 -> 600 px) fall the same way, then
 * truncated and clamped to the image. */
typedef struct nn_walk {
    double x, step;
    int64_t n;
} nn_walk;

static void nn_begin(nn_walk *w, const axis_geo *g)
{
    w->step = g->scale;
    w->x = g->a->lo + g->scale * 0.5;
    w->n = g->a->in;
}

static int64_t nn_next(nn_walk *w)
{
    int64_t i = clamp_i(w->x, 0, w->n - 1);
    w->x += w->step;
    return i;
}

/* Taps K of an axis (its widest window over all outputs) and the input range [lo, hi) the
 * windows of outputs [o0, o1) read (o0 < o1), in one walk over the outputs. *k > 0 on entry: K
 * is known (the whole plan's, for a window of it) and only [o0, o1) is walked. Planning runs
 * for every sample, twice in a fused chain (its input roi, its run): walking each axis once
 * instead of up to four times keeps it well under a percent of a crop decode. */
static void axis_scan_walk(const sl__resample_axis *a, int64_t o0, int64_t o1, int *k, int64_t *lo,
                           int64_t *hi)
{
    axis_geo g;
    nn_walk w;
    int64_t b, e = 0, kmax = *k > 0 ? *k : 1, bmin = INT64_MAX, bmax = INT64_MIN;
    geo_init(&g, a);
    nn_begin(&w, &g);
    bool search = *k <= 0 && !g.nn;
    int64_t s0 = search || g.nn ? 0 : o0, s1 = search ? a->out : o1; /* NN: positions accumulate */
    for (int64_t o = s0; o < s1; o++) {
        if (g.nn)
            b = nn_next(&w);
        else
            window(&g, o, &b, &e);
        if (search)
            kmax = e - b > kmax ? e - b : kmax;
        if (o >= o0 && o < o1) {
            bmin = b < bmin ? b : bmin;
            bmax = b > bmax ? b : bmax;
        }
    }
    /* each window starts at min(b, in - K) (axis_coeffs): the range of those starts, + K */
    *lo = bmin < a->in - kmax ? bmin : a->in - kmax;
    *hi = (bmax < a->in - kmax ? bmax : a->in - kmax) + kmax;
    *k = (int)kmax;
}

/* The whole-axis scans (K searched, all outputs) this thread did last, one per axis of a plan:
 * a fused chain plans each sample twice on the same thread (its input roi, then its run), and
 * the scan is a pure function of the axis, so the second plan takes the first one's result. */
typedef struct scan_memo {
    sl__resample_axis a;
    int k;
    int64_t lo, hi;
    bool valid;
} scan_memo;
static _Thread_local scan_memo scan_last[2];
static _Thread_local int scan_next;

static bool same_axis(const sl__resample_axis *a, const sl__resample_axis *b)
{
    return a->in == b->in && a->out == b->out && !memcmp(&a->lo, &b->lo, sizeof a->lo) &&
           !memcmp(&a->hi, &b->hi, sizeof a->hi) && a->filter == b->filter &&
           a->antialias == b->antialias;
}

static void axis_scan(const sl__resample_axis *a, int64_t o0, int64_t o1, int *k, int64_t *lo,
                      int64_t *hi)
{
    if (*k > 0 || o0 != 0 || o1 != a->out) { /* a window of a planned axis: not kept */
        axis_scan_walk(a, o0, o1, k, lo, hi);
        return;
    }
    for (int j = 0; j < 2; j++) {
        const scan_memo *m = &scan_last[j];
        if (m->valid && same_axis(&m->a, a)) {
            *k = m->k, *lo = m->lo, *hi = m->hi;
            return;
        }
    }
    axis_scan_walk(a, o0, o1, k, lo, hi);
    scan_last[scan_next] = (scan_memo){*a, *k, *lo, *hi, true};
    scan_next ^= 1;
}

/* axis_coeffs' body for one filter function fn. */
static inline __attribute__((always_inline)) void
coeffs_of(const sl__resample_axis *a, int k, int64_t origin, int64_t o0, int64_t o1, bool fixed,
          int32_t *first, void *weights, double *tmp, double (*fn)(double))
{
    axis_geo g;
    nn_walk nw;
    int64_t b, e;
    geo_init(&g, a);
    g.f.fn = fn; /* the same function, a constant here: inlined */
    nn_begin(&nw, &g);
    for (int64_t o = 0; o < o0 && g.nn; o++) /* NN positions accumulate from o = 0 */
        nn_next(&nw);
    first -= o0;
    for (int64_t o = o0; o < o1; o++) {
        double c = 0.0, sum = 0.0, sum_abs = 0.0;
        if (g.nn)
            b = e = nn_next(&nw);
        else
            c = window(&g, o, &b, &e);
        int64_t f = b < a->in - k ? b : a->in - k;
        for (int j = 0; j < k; j++)
            tmp[j] = 0.0;
        for (int64_t x = b; x < e && !g.nn; x++) {
            double w = g.f.fn(((double)x - c + 0.5) * g.inv_fs); /* PIL's order */
            tmp[x - f] = w;
            sum += w;
            sum_abs += fabs(w);
        }
        /* No usable weight (a centre outside the image, where only tails or negative lobes
         * remain): the nearest pixel. Inside the image the normalised |weights| sum to < 1.6,
         * so this never fires there, and it bounds the fixed-point sums (no int32 overflow). */
        if (g.nn || !(fabs(sum) > 1e-9) || sum_abs > 1.9 * fabs(sum)) {
            for (int j = 0; j < k; j++)
                tmp[j] = 0.0;
            b = g.nn ? b : clamp_i(floor(c), 0, a->in - 1);
            tmp[b - f] = 1.0;
            sum = 1.0;
        }
        first[o] = (int32_t)(f - origin);
        for (int j = 0; j < k; j++) {
            double w = tmp[j] / sum;
            if (fixed)
                ((int32_t *)weights)[(o - o0) * k + j] =
                    (int32_t)(w * (1 << PREC) + (w < 0 ? -0.5 : 0.5));
            else
                ((float *)weights)[(o - o0) * k + j] = (float)w;
        }
    }
}

/* Fills first[o - o0] (relative to `origin`) and k weights per output pixel o of [o0, o1),
 * normalised to sum 1; fixed: as 22-bit fixed point (rounded halves away from zero, as PIL),
 * else float. Each row is the one the whole axis has for o. tmp: k doubles. The linear filter
 * (the val and train pipelines' antialiased resize) gets its own copy with the filter inlined. */
static void axis_coeffs(const sl__resample_axis *a, int k, int64_t origin, int64_t o0, int64_t o1,
                        bool fixed, int32_t *first, void *weights, double *tmp)
{
    double (*fn)(double) = filter_of(a->filter).fn;
    if (fn == f_linear)
        coeffs_of(a, k, origin, o0, o1, fixed, first, weights, tmp, f_linear);
    else
        coeffs_of(a, k, origin, o0, o1, fixed, first, weights, tmp, fn);
}

/* NN source indices of output pixels [o0, o1) of an axis (o0 < o1): into idx[0 .. o1 - o0)
 * unless idx is NULL, and their range [*lo, *hi) unless lo is NULL. */
static void nn_walk_axis(const sl__resample_axis *a, int64_t o0, int64_t o1, int32_t *idx,
                         int64_t *lo, int64_t *hi)
{
    axis_geo g;
    nn_walk w;
    int64_t l = a->in, h = 0;
    geo_init(&g, a);
    nn_begin(&w, &g);
    for (int64_t o = 0; o < o1; o++) {
        int64_t i = nn_next(&w);
        if (o < o0)
            continue;
        if (idx)
            idx[o - o0] = (int32_t)i;
        l = i < l ? i : l;
        h = i + 1 > h ? i + 1 : h;
    }
    if (lo) {
        *lo = l;
        *hi = h;
    }
}

static void nn_index(const sl__resample_axis *a, int64_t o0, int64_t o1, int32_t *idx)
{
    nn_walk_axis(a, o0, o1, idx, NULL, NULL);
}

/* ---- passes ------------------------------------------------------------------------------ */

typedef sl__rs_pass pass;

static inline __attribute__((always_inline)) float ld(const void *p, ptrdiff_t i, bool u8)
{
    return u8 ? (float)((const uint8_t *)p)[i] : ((const float *)p)[i];
}

static inline __attribute__((always_inline)) void st(void *p, ptrdiff_t i, float v, bool u8)
{
    if (u8)
        ((uint8_t *)p)[i] = sl__rs_cvt8(v);
    else
        ((float *)p)[i] = v;
}

/* Horizontal, uint8 -> uint8, fixed point, one row of n output pixels. The fields of the pass
 * are copied into restrict locals: stores through a uint8_t pointer may alias anything, and
 * the compiler would otherwise reload them for every pixel. */
static inline __attribute__((always_inline)) void
h_fixed_row(const uint8_t *restrict s, uint8_t *restrict d, int64_t n, int k, int64_t C,
            const int32_t *restrict first, const int32_t *restrict w)
{
    for (int64_t o = 0; o < n; o++, w += k) {
        const uint8_t *restrict sp = s + (ptrdiff_t)first[o] * C;
        if (C == 3) {
            int32_t a0 = HALF, a1 = HALF, a2 = HALF;
            for (int j = 0; j < k; j++) {
                a0 += sp[3 * j] * w[j];
                a1 += sp[3 * j + 1] * w[j];
                a2 += sp[3 * j + 2] * w[j];
            }
            d[3 * o] = sl__rs_clip8(a0);
            d[3 * o + 1] = sl__rs_clip8(a1);
            d[3 * o + 2] = sl__rs_clip8(a2);
        } else {
            for (int64_t ch = 0; ch < C; ch++) {
                int32_t a = HALF;
                for (int j = 0; j < k; j++)
                    a += sp[j * C + ch] * w[j];
                d[o * C + ch] = sl__rs_clip8(a);
            }
        }
    }
}

static void h_fixed(const pass *p)
{
    if (sl__rs_h_fixed_simd(p))
        return;
    const int k = p->k;
    const int64_t C = p->c, n = p->n;
    const int32_t *first = p->first, *w = p->w;
    for (int64_t r = 0; r < p->rows; r++) {
        const uint8_t *s = (const uint8_t *)p->src + r * p->sstride;
        uint8_t *d = (uint8_t *)p->dst + r * p->dstride;
        if (C == 3) /* constant channel counts: unrolled */
            h_fixed_row(s, d, n, k, 3, first, w);
        else if (C == 1)
            h_fixed_row(s, d, n, k, 1, first, w);
        else
            h_fixed_row(s, d, n, k, C, first, w);
    }
}

/* Horizontal, float arithmetic, one row; in_u8 / out_u8 are constants in each instantiation. */
static inline __attribute__((always_inline)) void
h_float_row(const void *restrict s, void *restrict d, int64_t n, int k, int64_t C,
            const int32_t *restrict first, const float *restrict w, bool in_u8, bool out_u8)
{
    for (int64_t o = 0; o < n; o++, w += k) {
        ptrdiff_t i0 = (ptrdiff_t)first[o] * C;
        for (int64_t ch = 0; ch < C; ch++) {
            float a = 0;
            for (int j = 0; j < k; j++)
                a += ld(s, i0 + j * C + ch, in_u8) * w[j];
            st(d, o * C + ch, a, out_u8);
        }
    }
}

static inline __attribute__((always_inline)) void h_float(const pass *p, bool in_u8, bool out_u8)
{
    const int k = p->k;
    const int64_t C = p->c, n = p->n;
    const int32_t *first = p->first;
    const float *w = p->w;
    for (int64_t r = 0; r < p->rows; r++) {
        const void *s = (const char *)p->src + r * p->sstride * (in_u8 ? 1 : 4);
        void *d = (char *)p->dst + r * p->dstride * (out_u8 ? 1 : 4);
        if (C == 3) /* constant channel counts: unrolled */
            h_float_row(s, d, n, k, 3, first, w, in_u8, out_u8);
        else if (C == 1)
            h_float_row(s, d, n, k, 1, first, w, in_u8, out_u8);
        else
            h_float_row(s, d, n, k, C, first, w, in_u8, out_u8);
    }
}

static void h_u8_f32(const pass *p)
{
    h_float(p, true, false);
}

static void h_f32_f32(const pass *p)
{
    h_float(p, false, false);
}

static void h_f32_u8(const pass *p)
{
    h_float(p, false, true);
}

/* Vertical, uint8 -> uint8, fixed point: BLK elements [e0, e0 + BLK) of output row o. */
static void v_fixed_block(const pass *p, int64_t o, int64_t e0, int64_t m)
{
    int32_t acc[BLK];
    const int32_t *w = (const int32_t *)p->w + o * p->k;
    const uint8_t *s = (const uint8_t *)p->src + (ptrdiff_t)p->first[o] * p->sstride + e0;
    uint8_t *restrict d = (uint8_t *)p->dst + o * p->dstride + e0;
    if (m == BLK) { /* constant trip counts: vectorised */
        for (int e = 0; e < BLK; e++)
            acc[e] = HALF;
        for (int j = 0; j < p->k; j++, s += p->sstride)
            for (int e = 0; e < BLK; e++)
                acc[e] += s[e] * w[j];
        for (int e = 0; e < BLK; e++)
            d[e] = sl__rs_clip8(acc[e]);
        return;
    }
    for (int64_t e = 0; e < m; e++) {
        int32_t a = HALF;
        for (int j = 0; j < p->k; j++)
            a += s[j * p->sstride + e] * w[j];
        d[e] = sl__rs_clip8(a);
    }
}

static inline __attribute__((always_inline)) void
v_float_block(const pass *p, int64_t o, int64_t e0, int64_t m, bool in_u8, bool out_u8)
{
    float acc[BLK];
    const float *w = (const float *)p->w + o * p->k;
    const char *s =
        (const char *)p->src + ((ptrdiff_t)p->first[o] * p->sstride + e0) * (in_u8 ? 1 : 4);
    void *d = (char *)p->dst + (o * p->dstride + e0) * (out_u8 ? 1 : 4);
    const ptrdiff_t step = p->sstride * (in_u8 ? 1 : 4);
    if (m == BLK) {
        for (int e = 0; e < BLK; e++)
            acc[e] = 0.0f;
        for (int j = 0; j < p->k; j++, s += step)
            for (int e = 0; e < BLK; e++)
                acc[e] += ld(s, e, in_u8) * w[j];
        for (int e = 0; e < BLK; e++)
            st(d, e, acc[e], out_u8);
        return;
    }
    for (int64_t e = 0; e < m; e++) {
        float a = 0.0f;
        for (int j = 0; j < p->k; j++)
            a += ld(s, j * p->sstride + e, in_u8) * w[j];
        st(d, e, a, out_u8);
    }
}

/* Blocks of a vertical pass: full blocks, then the last BLK elements again (overlapping,
 * same results) so the tail also runs the vectorised loop; rows shorter than BLK go scalar. */
#define V_PASS(NAME, BLOCK_CALL)                                                                   \
    static void NAME(const pass *p)                                                                \
    {                                                                                              \
        for (int64_t o = 0; o < p->rows; o++) {                                                    \
            int64_t e0 = 0;                                                                        \
            for (; e0 + BLK <= p->n; e0 += BLK)                                                    \
                BLOCK_CALL(p, o, e0, BLK);                                                         \
            if (e0 < p->n)                                                                         \
                BLOCK_CALL(p, o, p->n >= BLK ? p->n - BLK : 0, p->n >= BLK ? BLK : p->n);          \
        }                                                                                          \
    }

#define VB_U8_F32(p, o, e0, m) v_float_block(p, o, e0, m, true, false)
#define VB_F32_F32(p, o, e0, m) v_float_block(p, o, e0, m, false, false)
#define VB_F32_U8(p, o, e0, m) v_float_block(p, o, e0, m, false, true)
V_PASS(v_fixed_scalar, v_fixed_block)
V_PASS(v_u8_f32, VB_U8_F32)
V_PASS(v_f32_f32, VB_F32_F32)
V_PASS(v_f32_u8, VB_F32_U8)

static void v_fixed(const pass *p)
{
    if (!sl__rs_v_fixed_simd(p))
        v_fixed_scalar(p);
}

typedef void (*pass_fn)(const pass *p);

/* The pass for (source, destination) types; fixed: the uint8 -> uint8 path. */
static pass_fn pick_pass(bool horizontal, bool fixed, bool in_u8, bool out_u8)
{
    if (fixed)
        return horizontal ? h_fixed : v_fixed;
    if (in_u8)
        return horizontal ? h_u8_f32 : v_u8_f32;
    if (out_u8)
        return horizontal ? h_f32_u8 : v_f32_u8;
    return horizontal ? h_f32_f32 : v_f32_f32;
}

/* ---- NN gather --------------------------------------------------------------------------- */

/* out[wy0 + y][wx0 + x] = in[iy[y]][ix[x]] over the window, converting the type when it
 * changes. */
static void nn_gather(const sl__resample_plan *p, const void *src, void *dst, const int32_t *iy,
                      const int32_t *ix)
{
    const int64_t C = p->c, nx = p->wx1 - p->wx0, stride = p->stride ? p->stride : p->x.in * C;
    const bool in_u8 = p->in_type == SL_DTYPE_UINT8, out_u8 = p->out_type == SL_DTYPE_UINT8;
    const size_t es = in_u8 ? 1 : 4;
    for (int64_t y = 0; y < p->wy1 - p->wy0; y++) {
        const char *s = (const char *)src + (size_t)(iy[y] * stride) * es;
        char *d = (char *)dst + (size_t)(((p->wy0 + y) * p->x.out + p->wx0) * C) * (out_u8 ? 1 : 4);
        if (in_u8 == out_u8 && C == 3 && in_u8) {
            for (int64_t x = 0; x < nx; x++)
                memcpy(d + 3 * x, s + 3 * (ptrdiff_t)ix[x], 3);
        } else if (in_u8 == out_u8) {
            for (int64_t x = 0; x < nx; x++)
                memcpy(d + (size_t)(x * C) * es, s + (size_t)(ix[x] * C) * es, (size_t)C * es);
        } else {
            for (int64_t x = 0; x < nx; x++)
                for (int64_t c = 0; c < C; c++) {
                    float v = in_u8 ? (float)((const uint8_t *)s)[ix[x] * C + c]
                                    : ((const float *)s)[ix[x] * C + c];
                    if (out_u8)
                        ((uint8_t *)d)[x * C + c] = sl__rs_cvt8(v);
                    else
                        ((float *)d)[x * C + c] = v;
                }
        }
    }
}

/* ---- plan and run ------------------------------------------------------------------------ */

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Scratch layout: y table (first, weights), x table, then the intermediate image. */
typedef struct scratch_map {
    size_t first_y, w_y, first_x, w_x, wv_x, tmp, total;
} scratch_map;

/* int32 elements of the expanded x weights for the SIMD horizontal pass (0: none). */
static size_t expand_size(const sl__resample_plan *p)
{
    const bool fixed = p->in_type == SL_DTYPE_UINT8 && p->out_type == SL_DTYPE_UINT8;
    return fixed && !p->skip_x ? sl__rs_expand_size(p->c, p->wx1 - p->wx0, p->kx) : 0;
}

void sl__resample_passes_of(const sl__resample_plan *p, sl__resample_passes *ps)
{
    const bool in_u8 = p->in_type == SL_DTYPE_UINT8, out_u8 = p->out_type == SL_DTYPE_UINT8;
    const bool fixed = in_u8 && out_u8; /* the intermediate is uint8 only then */
    const int64_t oy = p->wy1 - p->wy0, ox = p->wx1 - p->wx0, C = p->c; /* the window */
    sl__resample_pass_plan *a = &ps->pass[0], *b = &ps->pass[1];
    *ps = (sl__resample_passes){.count = 1};
    if (p->skip_x || p->skip_y) { /* the other axis only: input -> output */
        *a = (sl__resample_pass_plan){p->skip_y, in_u8, out_u8, oy, p->skip_x ? ox * C : ox};
        return;
    }
    ps->count = 2;
    if (p->vertical_first) { /* y: input -> tmp (oy x (x1-x0)); x: tmp -> output */
        ps->tmp_stride = (p->x1 - p->x0) * C;
        *a = (sl__resample_pass_plan){false, in_u8, fixed, oy, ps->tmp_stride};
        *b = (sl__resample_pass_plan){true, fixed, out_u8, oy, ox};
    } else { /* x: input rows [y0, y1) -> tmp ((y1-y0) x ox); y: tmp -> output */
        ps->tmp_stride = ox * C;
        *a = (sl__resample_pass_plan){true, in_u8, fixed, p->y1 - p->y0, ox};
        *b = (sl__resample_pass_plan){false, fixed, out_u8, oy, ox * C};
    }
    ps->tmp_bytes = (size_t)(a->rows * ps->tmp_stride) * (fixed ? 1 : 4);
}

static void layout_of(const sl__resample_plan *p, scratch_map *l)
{
    sl__resample_passes ps;
    sl__resample_passes_of(p, &ps);
    const size_t oy = (size_t)(p->wy1 - p->wy0), ox = (size_t)(p->wx1 - p->wx0); /* the window */
    size_t kmax = (size_t)(p->ky > p->kx ? p->ky : p->kx);
    l->first_y = 0;
    l->w_y = l->first_y + align64(oy * 4);
    l->first_x = l->w_y + align64(oy * (size_t)p->ky * 4);
    l->w_x = l->first_x + align64(ox * 4);
    l->wv_x = l->w_x + align64(ox * (size_t)p->kx * 4);
    l->tmp = l->wv_x + align64(expand_size(p) * 4);
    /* axis_coeffs' k doubles borrow the intermediate's space before the passes run */
    size_t t = ps.tmp_bytes > kmax * sizeof(double) ? ps.tmp_bytes : kmax * sizeof(double);
    l->total = l->tmp + align64(t);
}

static bool identity(const sl__resample_axis *a)
{
    return a->out == a->in && a->lo == 0.0 && a->hi == (double)a->in;
}

/* Relative cost of the two orders (float passes only: uint8 -> uint8 keeps PIL's): the
 * horizontal pass is scalar per output pixel, the vertical one vectorised over whole rows
 * (weight measured on x86-64, SSE2). */
static bool choose_vertical_first(const sl__resample_plan *p)
{
    /* uint8 -> uint8 keeps PIL's order: its uint8 intermediate clips the overshoot of CUBIC and
     * LANCZOS3, so the other order could differ from PIL by more than 1 at sharp edges. */
    if (p->in_type == SL_DTYPE_UINT8 && p->out_type == SL_DTYPE_UINT8)
        return false;
    const double hw = 1.0, vw = 0.35;
    double C = (double)p->c, ox = (double)p->x.out, oy = (double)p->y.out;
    double hv = hw * (double)(p->y1 - p->y0) * ox * C * p->kx + vw * oy * ox * C * p->ky;
    double vh = vw * oy * (double)(p->x1 - p->x0) * C * p->ky + hw * oy * ox * C * p->kx;
    return vh < hv;
}

/* Whether the plan has anything to compute at all (whatever the window). */
static bool plan_empty(const sl__resample_plan *p)
{
    return p->y.out <= 0 || p->x.out <= 0 || p->c <= 0 || p->y.in <= 0 || p->x.in <= 0;
}

void sl__resample_plan_init(sl__resample_plan *p)
{
    scratch_map l;
    p->skip_x = identity(&p->x);
    p->skip_y = identity(&p->y);
    p->nn =
        (p->skip_y || p->y.filter == SL__FILTER_NN) && (p->skip_x || p->x.filter == SL__FILTER_NN);
    p->scratch = 0;
    p->kx = p->ky = 1;
    p->y0 = p->x0 = 0;
    p->y1 = p->y.in;
    p->x1 = p->x.in;
    p->vertical_first = false;
    p->window = false;
    p->wy0 = p->wx0 = 0;
    p->wy1 = p->y.out > 0 ? p->y.out : 0;
    p->wx1 = p->x.out > 0 ? p->x.out : 0;
    if (plan_empty(p))
        return;
    if (p->nn) {
        p->scratch = align64((size_t)p->y.out * 4) + align64((size_t)p->x.out * 4);
        return;
    }
    p->kx = p->ky = 0; /* searched for */
    if (!p->skip_y)
        axis_scan(&p->y, 0, p->y.out, &p->ky, &p->y0, &p->y1);
    if (!p->skip_x)
        axis_scan(&p->x, 0, p->x.out, &p->kx, &p->x0, &p->x1);
    p->ky = p->ky ? p->ky : 1;
    p->kx = p->kx ? p->kx : 1;
    p->vertical_first = p->skip_x || (!p->skip_y && choose_vertical_first(p));
    layout_of(p, &l);
    p->scratch = l.total;
}

static int64_t clamp_out(int64_t v, int64_t out)
{
    return v < 0 ? 0 : v < out ? v : out;
}

void sl__resample_plan_window(sl__resample_plan *p, int64_t wy0, int64_t wy1, int64_t wx0,
                              int64_t wx1)
{
    scratch_map l;
    const int64_t oy = p->y.out > 0 ? p->y.out : 0, ox = p->x.out > 0 ? p->x.out : 0;
    wy0 = clamp_out(wy0, oy), wy1 = clamp_out(wy1, oy);
    wx0 = clamp_out(wx0, ox), wx1 = clamp_out(wx1, ox);
    wy1 = wy1 > wy0 ? wy1 : wy0;
    wx1 = wx1 > wx0 ? wx1 : wx0;
    if (wy0 == 0 && wy1 == oy && wx0 == 0 && wx1 == ox) {
        sl__resample_plan_init(p); /* the whole output (a window asked before is dropped) */
        return;
    }
    p->window = true;
    p->wy0 = wy0, p->wy1 = wy1, p->wx0 = wx0, p->wx1 = wx1;
    if (plan_empty(p)) /* init left nothing to do */
        return;
    if (wy0 == wy1 || wx0 == wx1) { /* nothing to compute, nothing read */
        p->y0 = p->y1 = p->x0 = p->x1 = 0;
        p->scratch = 0;
        return;
    }
    /* ky, kx, vertical_first, skip_* and nn stay the whole plan's (axis_scan keeps K) */
    if (p->nn) {
        nn_walk_axis(&p->y, wy0, wy1, NULL, &p->y0, &p->y1);
        nn_walk_axis(&p->x, wx0, wx1, NULL, &p->x0, &p->x1);
        p->scratch = align64((size_t)(wy1 - wy0) * 4) + align64((size_t)(wx1 - wx0) * 4);
        return;
    }
    if (p->skip_y) /* an identity axis reads what it writes */
        p->y0 = wy0, p->y1 = wy1;
    else
        axis_scan(&p->y, wy0, wy1, &p->ky, &p->y0, &p->y1);
    if (p->skip_x)
        p->x0 = wx0, p->x1 = wx1;
    else
        axis_scan(&p->x, wx0, wx1, &p->kx, &p->x0, &p->x1);
    layout_of(p, &l);
    p->scratch = l.total;
}

/* The tables of the window's pixels (rows of the whole tables). */
static void window_tables(const sl__resample_plan *p, int32_t *first_y, void *w_y, int32_t *first_x,
                          void *w_x, double *tmp)
{
    const bool fixed = p->in_type == SL_DTYPE_UINT8 && p->out_type == SL_DTYPE_UINT8;
    if (!p->skip_y)
        axis_coeffs(&p->y, p->ky, p->y0, p->wy0, p->wy1, fixed, first_y, w_y, tmp);
    if (!p->skip_x)
        axis_coeffs(&p->x, p->kx, p->x0, p->wx0, p->wx1, fixed, first_x, w_x, tmp);
}

void sl__resample_tables(const sl__resample_plan *p, int32_t *first_y, void *w_y, int32_t *first_x,
                         void *w_x, double *tmp)
{
    assert(!p->window); /* whole-output tables: callers that run them elsewhere set no window */
    window_tables(p, first_y, w_y, first_x, w_x, tmp);
}

void sl__resample_nn_tables(const sl__resample_plan *p, int32_t *iy, int32_t *ix)
{
    nn_index(&p->y, 0, p->y.out, iy);
    nn_index(&p->x, 0, p->x.out, ix);
}

void sl__resample_run(const sl__resample_plan *p, const void *src, void *dst, void *scratch)
{
    scratch_map l;
    if (!p->scratch)
        return;
    char *base = scratch;
    const int64_t oy = p->wy1 - p->wy0, ox = p->wx1 - p->wx0; /* the window */
    if (p->nn) {
        int32_t *iy = (int32_t *)base, *ix = (int32_t *)(base + align64((size_t)oy * 4));
        nn_index(&p->y, p->wy0, p->wy1, iy);
        nn_index(&p->x, p->wx0, p->wx1, ix);
        nn_gather(p, src, dst, iy, ix);
        return;
    }
    layout_of(p, &l);
    const bool in_u8 = p->in_type == SL_DTYPE_UINT8, out_u8 = p->out_type == SL_DTYPE_UINT8;
    const size_t es = in_u8 ? 1 : 4;
    int32_t *fy = (int32_t *)(base + l.first_y), *fx = (int32_t *)(base + l.first_x);
    void *wy = base + l.w_y, *wx = base + l.w_x, *tmp = base + l.tmp;
    window_tables(p, fy, wy, fx, wx, tmp);
    int32_t *wv = expand_size(p) ? (int32_t *)(base + l.wv_x) : NULL;
    const int wv_kind = wv ? (int)sl__rs_expand(p->c, ox, p->kx, fx, wx, wv) : SL__RS_WV_NONE;

    const int64_t C = p->c, ow = p->x.out, stride = p->stride ? p->stride : p->x.in * C;
    const char *s0 = (const char *)src + (size_t)(p->y0 * stride + p->x0 * C) * es;
    char *d0 = (char *)dst + (size_t)((p->wy0 * ow + p->wx0) * C) * (out_u8 ? 1 : 4);
    sl__resample_passes ps;
    sl__resample_passes_of(p, &ps);
    const bool two = ps.count == 2;
    /* the horizontal pass reads input rows from x0 (uint8: always the first pass), no further
     * than x1 (the SIMD kernels' wide loads included) */
    pass q[2] = {{.src = s0,
                  .sstride = (ptrdiff_t)stride,
                  .dst = two ? tmp : d0,
                  .dstride = (ptrdiff_t)(two ? ps.tmp_stride : ow * C),
                  .c = C,
                  .wv = wv,
                  .wv_kind = wv_kind,
                  .readable = (p->x1 - p->x0) * C},
                 {.src = tmp,
                  .sstride = (ptrdiff_t)ps.tmp_stride,
                  .dst = d0,
                  .dstride = (ptrdiff_t)(ow * C),
                  .c = C}};
    for (int j = 0; j < ps.count; j++) {
        const sl__resample_pass_plan *s = &ps.pass[j];
        q[j].rows = s->rows, q[j].n = s->n;
        q[j].k = s->horizontal ? p->kx : p->ky;
        q[j].first = s->horizontal ? fx : fy;
        q[j].w = s->horizontal ? wx : wy;
        pick_pass(s->horizontal, s->src_u8 && s->dst_u8, s->src_u8, s->dst_u8)(&q[j]);
    }
}

/* ---- argument glue ----------------------------------------------------------------------- */

void sl__resample_cfg_get(const sl_ctx *ctx, const sl__resample_args *a, int sample,
                          sl__resample_cfg *cf)
{
    sl__filter interp = sl__filter_parse(sl_ctx_arg_str(ctx, a->interp_type));
    cf->mag_filter = sl_ctx_arg_is_set(ctx, a->mag_filter)
                         ? sl__filter_parse(sl_ctx_arg_str(ctx, a->mag_filter))
                         : interp;
    cf->min_filter = sl_ctx_arg_is_set(ctx, a->min_filter)
                         ? sl__filter_parse(sl_ctx_arg_str(ctx, a->min_filter))
                         : interp;
    cf->antialias = sl_ctx_arg_bool(ctx, a->antialias, sample);
    cf->out_type = sl__hwc_out_type(ctx, a->dtype);
}

sl_status sl__resample_sample(sl_ctx *ctx, int i, const sl__resample_plan *p, const void *src)
{
    if (!p->scratch)
        return SL_OK;
    void *scratch = sl_ctx_scratch(ctx, p->scratch);
    if (!scratch)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %zu bytes of resampling scratch",
                       p->scratch);
    sl__resample_run(p, src, sl_ctx_output_data(ctx, 0, i), scratch);
    return SL_OK;
}

void sl__resample_input_roi(sl_ctx *ctx, int i, const sl__resample_plan *p, int64_t y, int64_t x)
{
    if (!p->scratch)
        return; /* nothing to compute: nothing to declare */
    int64_t lo[3] = {y + p->y0, x + p->x0, 0}, hi[3] = {y + p->y1, x + p->x1, p->c};
    sl_ctx_input_roi(ctx, 0, i, lo, hi);
}
