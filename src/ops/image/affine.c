/* ops/image/affine.c: the affine warp kernel and the operator glue of warp_affine and rotate
 * (conventions in affine.h). The GPU kernel (affine.cuh) reproduces this file's arithmetic per
 * pixel: a change to the sampling here must be made there too (test_cuda_warp compares them).
 *
 * Per output row: the source coordinates of every pixel centre are computed into two float
 * arrays (one vectorisable loop); the pixels whose every tap lies inside the source form one
 * contiguous span (each coordinate is a monotonic function of the column, so the set is an
 * interval), sampled by a branch-free loop specialised for 1, 3 and 4 channels; the pixels left
 * and right of it go through the checked border sampler. Samples are float32 in a row buffer
 * (or straight in a float32 output row) and then converted to the output type.
 *
 * Invariant: no read outside the source. The span loops clamp their tap indices (cheap, and it
 * keeps them safe even if the span test and the loop disagreed by one rounding); the border
 * sampler clamps coordinates before converting them to integers, so NaN or huge coordinates
 * become "outside" (constant border) or the edge (clamp).
 */
#include <math.h>
#include <string.h>

#include "ops/image/affine.h"
#include "ops/image/store_u8.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* ---- per-row state ----------------------------------------------------------------------- */

typedef struct row {
    const sl__image *src;
    const sl__affine *a;
    const float *sx, *sy; /* source coordinates of each output pixel centre */
    float *val;           /* out_w * c interpolated values */
    int64_t w;            /* output pixels in the row */
} row;

static float clampf(float v, float lo, float hi)
{
    v = fmaxf(v, lo); /* fmaxf(NaN, lo) = lo */
    return fminf(v, hi);
}

static float px(const sl__image *s, int64_t x, int64_t y, int64_t c)
{
    size_t k = (size_t)((y * s->w + x) * s->c + c);
    return s->type == SL_DTYPE_UINT8 ? (float)((const uint8_t *)s->data)[k]
                                     : ((const float *)s->data)[k];
}

/* Source value at integer pixel (x, y), channel c, with the border rule. */
static float tap(const sl__image *s, const float *fill, int64_t x, int64_t y, int64_t c)
{
    if (x < 0 || y < 0 || x >= s->w || y >= s->h) {
        if (fill)
            return fill[c];
        x = x < 0 ? 0 : x >= s->w ? s->w - 1 : x;
        y = y < 0 ? 0 : y >= s->h ? s->h - 1 : y;
    }
    return px(s, x, y, c);
}

/* ---- border sampler (checked, per pixel) --------------------------------------------------- */

static void border_nn(const row *r, int64_t j)
{
    const sl__image *s = r->src;
    const float *fill = r->a->fill;
    /* Beyond one pixel outside, every coordinate behaves like that one (fill or edge). */
    int64_t x = (int64_t)floorf(clampf(r->sx[j], -1.0f, (float)s->w));
    int64_t y = (int64_t)floorf(clampf(r->sy[j], -1.0f, (float)s->h));
    float *o = r->val + j * s->c;
    for (int64_t c = 0; c < s->c; c++)
        o[c] = tap(s, fill, x, y, c);
}

static void border_linear(const row *r, int64_t j)
{
    const sl__image *s = r->src;
    const float *fill = r->a->fill;
    float fx = clampf(r->sx[j] - 0.5f, -2.0f, (float)s->w + 1.0f);
    float fy = clampf(r->sy[j] - 0.5f, -2.0f, (float)s->h + 1.0f);
    float *o = r->val + j * s->c;
    if (fill && (fx < -1.0f || fy < -1.0f || fx >= (float)s->w || fy >= (float)s->h)) {
        memcpy(o, fill, sizeof(float) * (size_t)s->c); /* all four taps outside */
        return;
    }
    float x0f = floorf(fx), y0f = floorf(fy);
    float qx = fx - x0f, qy = fy - y0f;
    int64_t x0 = (int64_t)x0f, y0 = (int64_t)y0f;
    for (int64_t c = 0; c < s->c; c++) {
        float v00 = tap(s, fill, x0, y0, c), v01 = tap(s, fill, x0 + 1, y0, c);
        float v10 = tap(s, fill, x0, y0 + 1, c), v11 = tap(s, fill, x0 + 1, y0 + 1, c);
        float top = v00 + (v01 - v00) * qx;
        float bot = v10 + (v11 - v10) * qx;
        o[c] = top + (bot - top) * qy;
    }
}

/* ---- interior spans (every tap inside; branch-free) --------------------------------------- */

/* NN: pixel (floor(sx), floor(sy)), with sx in [0, W), sy in [0, H) so truncation = floor. */
#define DEFINE_NN_SPAN(NAME, T)                                                                    \
    static ALWAYS_INLINE void NAME(const T *restrict src, int W, int H, int C,                     \
                                   const float *restrict sx, const float *restrict sy, int64_t j0, \
                                   int64_t j1, float *restrict out)                                \
    {                                                                                              \
        for (int64_t j = j0; j < j1; j++) {                                                        \
            int x = (int)sx[j], y = (int)sy[j];                                                    \
            x = x < 0 ? 0 : x > W - 1 ? W - 1 : x;                                                 \
            y = y < 0 ? 0 : y > H - 1 ? H - 1 : y;                                                 \
            const T *p = src + ((size_t)y * (size_t)W + (size_t)x) * (size_t)C;                    \
            for (int c = 0; c < C; c++)                                                            \
                out[j * C + c] = (float)p[c];                                                      \
        }                                                                                          \
    }

/* LINEAR: fx = sx - 0.5 in [0, W - 1), fy in [0, H - 1): taps x0, x0 + 1, y0, y0 + 1 inside. */
#define DEFINE_LINEAR_SPAN(NAME, T)                                                                \
    static ALWAYS_INLINE void NAME(const T *restrict src, int W, int H, int C,                     \
                                   const float *restrict sx, const float *restrict sy, int64_t j0, \
                                   int64_t j1, float *restrict out)                                \
    {                                                                                              \
        const size_t stride = (size_t)W * (size_t)C;                                               \
        for (int64_t j = j0; j < j1; j++) {                                                        \
            float fx = sx[j] - 0.5f, fy = sy[j] - 0.5f;                                            \
            int x0 = (int)fx, y0 = (int)fy;                                                        \
            x0 = x0 < 0 ? 0 : x0 > W - 2 ? W - 2 : x0;                                             \
            y0 = y0 < 0 ? 0 : y0 > H - 2 ? H - 2 : y0;                                             \
            float qx = fx - (float)x0, qy = fy - (float)y0;                                        \
            const T *p = src + (size_t)y0 * stride + (size_t)x0 * (size_t)C;                       \
            for (int c = 0; c < C; c++) {                                                          \
                float v00 = p[c], v01 = p[c + C], v10 = p[c + stride], v11 = p[c + stride + C];    \
                float top = v00 + (v01 - v00) * qx;                                                \
                float bot = v10 + (v11 - v10) * qx;                                                \
                out[j * C + c] = top + (bot - top) * qy;                                           \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_NN_SPAN(nn_u8, uint8_t)
DEFINE_NN_SPAN(nn_f32, float)
DEFINE_LINEAR_SPAN(lin_u8, uint8_t)
DEFINE_LINEAR_SPAN(lin_f32, float)

/* Calls SPAN with a compile-time channel count for the common 1, 3, 4 (so the channel loop
 * unrolls), a run-time one otherwise. */
#define DISPATCH_C(SPAN, T, r, j0, j1)                                                             \
    do {                                                                                           \
        const T *s_ = (const T *)(r)->src->data;                                                   \
        int W_ = (int)(r)->src->w, H_ = (int)(r)->src->h, C_ = (int)(r)->src->c;                   \
        switch (C_) {                                                                              \
        case 1: SPAN(s_, W_, H_, 1, (r)->sx, (r)->sy, j0, j1, (r)->val); break;                    \
        case 3: SPAN(s_, W_, H_, 3, (r)->sx, (r)->sy, j0, j1, (r)->val); break;                    \
        case 4: SPAN(s_, W_, H_, 4, (r)->sx, (r)->sy, j0, j1, (r)->val); break;                    \
        default: SPAN(s_, W_, H_, C_, (r)->sx, (r)->sy, j0, j1, (r)->val); break;                  \
        }                                                                                          \
    } while (0)

static void interior(const row *r, int64_t j0, int64_t j1)
{
    bool u8 = r->src->type == SL_DTYPE_UINT8;
    if (r->a->interp == SL__INTERP_NN) {
        if (u8)
            DISPATCH_C(nn_u8, uint8_t, r, j0, j1);
        else
            DISPATCH_C(nn_f32, float, r, j0, j1);
    } else {
        if (u8)
            DISPATCH_C(lin_u8, uint8_t, r, j0, j1);
        else
            DISPATCH_C(lin_f32, float, r, j0, j1);
    }
}

/* ---- one row ------------------------------------------------------------------------------ */

/* Whether every tap of output pixel j lies inside the source. */
static bool inside(const row *r, int64_t j)
{
    float x = r->sx[j], y = r->sy[j];
    float W = (float)r->src->w, H = (float)r->src->h;
    if (r->a->interp == SL__INTERP_NN)
        return x >= 0.0f && x < W && y >= 0.0f && y < H;
    x -= 0.5f;
    y -= 0.5f;
    return x >= 0.0f && x < W - 1.0f && y >= 0.0f && y < H - 1.0f;
}

static void sample_row(const row *r)
{
    int64_t ja = 0, jb = r->w;
    while (ja < jb && !inside(r, ja))
        ja++;
    while (jb > ja && !inside(r, jb - 1))
        jb--;
    void (*border)(const row *, int64_t) =
        r->a->interp == SL__INTERP_NN ? border_nn : border_linear;
    for (int64_t j = 0; j < ja; j++)
        border(r, j);
    if (jb > ja)
        interior(r, ja, jb);
    for (int64_t j = jb; j < r->w; j++)
        border(r, j);
}

size_t sl__affine_scratch_bytes(int64_t out_w, int64_t c)
{
    return (size_t)out_w * (size_t)(2 + c) * sizeof(float) + 64;
}

void sl__affine_warp(const sl__image *src, const sl__image *dst, const sl__affine *a, void *scratch)
{
    float *sx = scratch, *sy = sx + dst->w;
    float *buf = sy + dst->w;
    const float *m = a->m;
    const size_t row_elems = (size_t)(dst->w * dst->c);
    const bool f32 = dst->type == SL_DTYPE_FLOAT32;
    row r = {.src = src, .a = a, .sx = sx, .sy = sy, .w = dst->w};

    for (int64_t i = 0; i < dst->h; i++) {
        const float y = (float)i + 0.5f;
        const float bx = m[1] * y + m[2], by = m[4] * y + m[5];
        for (int64_t j = 0; j < dst->w; j++) {
            const float x = (float)j + 0.5f;
            sx[j] = m[0] * x + bx;
            sy[j] = m[3] * x + by;
        }
        r.val = f32 ? (float *)dst->data + (size_t)i * row_elems : buf;
        sample_row(&r);
        if (!f32)
            sl__store_u8(buf, (uint8_t *)dst->data + (size_t)i * row_elems, (int64_t)row_elems);
    }
}

bool sl__affine_invert(const double m[6], double out[6])
{
    double det = m[0] * m[4] - m[1] * m[3];
    if (det == 0.0 || !isfinite(det))
        return false;
    double r[6];
    r[0] = m[4] / det;
    r[1] = -m[1] / det;
    r[3] = -m[3] / det;
    r[4] = m[0] / det;
    r[2] = -(r[0] * m[2] + r[1] * m[5]);
    r[5] = -(r[3] * m[2] + r[4] * m[5]);
    for (int k = 0; k < 6; k++)
        if (!isfinite(r[k]))
            return false;
    memcpy(out, r, sizeof r);
    return true;
}

/* ---- operator glue ------------------------------------------------------------------------ */

sl_status sl__affine_init(sl_op_init *ini, void **state, const sl__affine_args *a)
{
    *state = (void *)a; /* read-only: taken back as const by the run functions */
    const char *interp = sl_init_arg_str(ini, a->interp_type);
    if (strcmp(interp, "INTERP_NN") != 0 && strcmp(interp, "INTERP_LINEAR") != 0)
        return sl_init_fail(ini, SL_EUNSUPPORTED,
                            "interp_type %s is not supported: only INTERP_NN and INTERP_LINEAR "
                            "(as DALI's warps)",
                            interp);
    return sl__hwc_dtype_check(ini, a->dtype);
}

sl_status sl__affine_size(sl_ctx *ctx, int size_arg, int i, int64_t hw[2])
{
    double v[2] = {0, 0};
    if (!sl_ctx_arg_is_set(ctx, size_arg))
        return SL_OK;
    sl_ctx_arg_floats(ctx, size_arg, i, v, 2);
    for (int d = 0; d < 2; d++) {
        if (!(v[d] > 0) || v[d] > 0x1p30)
            return sl_fail(ctx, SL_EINVAL,
                           "size (%g, %g) is invalid: output sizes must be positive (and below "
                           "2^30)",
                           v[0], v[1]);
        double r = round(v[d]);
        hw[d] = r < 1 ? 1 : (int64_t)r;
    }
    return SL_OK;
}

/* Reads fill_value of sample i into fill[0..C) (one value broadcast, or exactly C). */
static sl_status read_fill(sl_ctx *ctx, int arg, int i, int64_t C, double *tmp, float *fill)
{
    int n = sl_ctx_arg_floats(ctx, arg, i, tmp, (int)C);
    if (n != 1 && n != C)
        return sl_fail(ctx, SL_EINVAL,
                       "fill_value has %d values; expected 1 or %lld (one per channel)", n,
                       (long long)C);
    for (int64_t c = 0; c < C; c++)
        fill[c] = (float)tmp[n == 1 ? 0 : c];
    return SL_OK;
}

static void fill_output(const sl__image *dst, const float *fill)
{
    size_t npx = (size_t)(dst->h * dst->w);
    for (size_t p = 0; p < npx; p++)
        for (int64_t c = 0; c < dst->c; c++) {
            size_t k = p * (size_t)dst->c + (size_t)c;
            if (dst->type == SL_DTYPE_UINT8)
                ((uint8_t *)dst->data)[k] = sl__cv_u8(fill[c]);
            else
                ((float *)dst->data)[k] = fill[c];
        }
}

static bool empty_image(const sl__image *im)
{
    return im->h == 0 || im->w == 0 || im->c == 0;
}

sl_status sl__affine_prepare(sl_ctx *ctx, int i, const sl__affine_args *a, const double m[6],
                             double *tmp, float *fill, sl__affine_sample *out)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t *is = sl_batch_shape(in, i), *os = sl_ctx_output_shape(ctx, 0, i);
    sl__image src = {(void *)sl_batch_sample_data(in, i), sl_batch_dtype(in), is[0], is[1], is[2]};
    sl__image dst = {sl_ctx_output_data(ctx, 0, i), sl__hwc_out_type(ctx, a->dtype), os[0], os[1],
                     os[2]};
    memset(out, 0, sizeof *out);
    out->src = src;
    out->dst = dst;
    out->kind = SL__AFFINE_SKIP;
    if (empty_image(&dst))
        return SL_OK;
    for (int k = 0; k < 6; k++)
        if (!isfinite(m[k]))
            return sl_fail(ctx, SL_EINVAL, "the transform matrix has a non-finite value (%g)",
                           m[k]);
    if (sl_ctx_arg_is_set(ctx, a->fill_value)) {
        sl_status st = read_fill(ctx, a->fill_value, i, dst.c, tmp, fill);
        if (st != SL_OK)
            return st;
        out->aff.fill = fill;
    }
    out->aff.interp = strcmp(sl_ctx_arg_str(ctx, a->interp_type), "INTERP_NN") == 0
                          ? SL__INTERP_NN
                          : SL__INTERP_LINEAR;
    for (int k = 0; k < 6; k++)
        out->aff.m[k] = (float)m[k];
    if (src.h == 0 || src.w == 0) {
        if (!out->aff.fill)
            return sl_fail(ctx, SL_EINVAL,
                           "cannot fill a %lld x %lld output from an empty %lld x %lld image "
                           "without fill_value (the clamped border needs a pixel)",
                           (long long)dst.h, (long long)dst.w, (long long)src.h, (long long)src.w);
        out->kind = SL__AFFINE_FILL;
        return SL_OK;
    }
    out->kind = SL__AFFINE_WARP;
    return SL_OK;
}

sl_status sl__affine_run_sample(sl_ctx *ctx, int i)
{
    const sl__affine_args *a = sl_ctx_state(ctx);
    const int64_t *os = sl_ctx_output_shape(ctx, 0, i);
    double m[6];
    sl_status st = a->matrix(ctx, i, m);
    if (st != SL_OK || os[0] == 0 || os[1] == 0 || os[2] == 0)
        return st;
    size_t nc = (size_t)os[2];
    size_t bytes = nc * (sizeof(double) + sizeof(float)) + sl__affine_scratch_bytes(os[1], os[2]);
    double *tmp = sl_ctx_scratch(ctx, bytes);
    if (!tmp)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for a %lld-pixel row", (long long)os[1]);
    float *fill = (float *)(tmp + nc), *rows = fill + nc;
    rows = (float *)(((uintptr_t)rows + 15) & ~(uintptr_t)15);
    sl__affine_sample smp;
    st = sl__affine_prepare(ctx, i, a, m, tmp, fill, &smp);
    if (st != SL_OK)
        return st;
    if (smp.kind == SL__AFFINE_FILL)
        fill_output(&smp.dst, smp.aff.fill);
    else if (smp.kind == SL__AFFINE_WARP)
        sl__affine_warp(&smp.src, &smp.dst, &smp.aff, rows);
    return SL_OK;
}
