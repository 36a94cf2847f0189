/* ops/image/affine.cuh: the affine warp of warp_affine and rotate as a GPU kernel (CUDA C++,
 * included by affine.cu only).
 *
 * Exports sl__affine_job (one sample's parameters, computed on the host and uploaded) and the
 * functor sl__affine_kernel<Tin, Tout, Linear> for sl_gpu_each: element p of sample s is output
 * pixel p (row-major), all of its channels, so consecutive threads write consecutive pixels.
 *
 * Invariant: the result is what sl__affine_warp (affine.c) computes, bit for bit. The CPU
 * kernel's row loop computes sx = m0 x + (m1 y + m2) per pixel (not incrementally), so the same
 * float32 expressions are evaluated here per pixel, in the same order (the build compiles .cu
 * files with --fmad=false: no contraction into FMA). Its interior spans and its border sampler
 * agree on every pixel whose taps all lie inside (truncation = floor there, the clamps are
 * no-ops), so one per-pixel formula, the border sampler's, covers both. Reads stay inside the
 * source whatever the matrix: coordinates are clamped before they become integers, and taps
 * outside read fill_value or the clamped edge pixel.
 */
#ifndef SLUICE_OPS_IMAGE_AFFINE_CUH
#define SLUICE_OPS_IMAGE_AFFINE_CUH

#include <math.h>
#include <stdint.h>

#include "cuda/kernel.cuh"
#include "ops/image/store_u8.h"

/* One sample of the batch; device pointers. */
typedef struct sl__affine_job {
    const void *src;   /* sh x sw x c, HWC, the input type (unused when fill_only) */
    void *dst;         /* npx pixels of c channels, HWC, the output type */
    const float *fill; /* c values read outside the source; NULL: clamp to the edge */
    float m[6];        /* destination -> source, pixel centres at +0.5 (affine.h) */
    int64_t sh, sw, c; /* source height, width; channels of source and output */
    int64_t dw;        /* output width */
    int64_t npx;       /* output pixels to write: dh * dw, or 0 (nothing to do) */
    int fill_only;     /* empty source: every output pixel is fill */
} sl__affine_job;

static SL_HD float sl__aff_clampf(float v, float lo, float hi)
{
    v = fmaxf(v, lo); /* fmaxf(NaN, lo) = lo, as in affine.c */
    return fminf(v, hi);
}

/* float32 -> output element: store_u8.h's sl__cv_u8 for uint8 (saturated, NaN -> 0, halves
 * up), as affine.c; unchanged for float32. */
static SL_HD void sl__aff_store(uint8_t *d, float v)
{
    *d = sl__cv_u8(v);
}
static SL_HD void sl__aff_store(float *d, float v)
{
    *d = v;
}

/* Element offset of tap (x, y), or -1 where it reads fill (outside, with a fill); outside
 * without a fill reads the clamped edge pixel (affine.c's tap()). */
static SL_HD int64_t sl__aff_tap(const sl__affine_job &j, int64_t x, int64_t y)
{
    if (x < 0 || y < 0 || x >= j.sw || y >= j.sh) {
        if (j.fill)
            return -1;
        x = x < 0 ? 0 : x >= j.sw ? j.sw - 1 : x;
        y = y < 0 ? 0 : y >= j.sh ? j.sh - 1 : y;
    }
    return (y * j.sw + x) * j.c;
}

template <class T>
static SL_HD float sl__aff_val(const T *s, const float *fill, int64_t o, int64_t c)
{
    return o >= 0 ? (float)s[o + c] : fill[c];
}

template <class Tin, class Tout, bool Linear> struct sl__affine_kernel {
    const sl__affine_job *jobs;

    SL_HD int64_t count(int s) const
    {
        return jobs[s].npx;
    }

    SL_HD void operator()(int s, int64_t p) const
    {
        const sl__affine_job &j = jobs[s];
        Tout *out = (Tout *)j.dst + p * j.c;
        if (j.fill_only) {
            for (int64_t c = 0; c < j.c; c++)
                sl__aff_store(out + c, j.fill[c]);
            return;
        }
        int64_t row;
        const int64_t col = sl__gdivmod(p, j.dw, &row);
        /* affine.c, sl__affine_warp: the row's part first, then the column's */
        const float *m = j.m;
        const float y = (float)row + 0.5f;
        const float bx = m[1] * y + m[2], by = m[4] * y + m[5];
        const float x = (float)col + 0.5f;
        const float sx = m[0] * x + bx, sy = m[3] * x + by;
        const Tin *src = (const Tin *)j.src;
        if (!Linear) { /* border_nn */
            const int64_t o =
                sl__aff_tap(j, (int64_t)floorf(sl__aff_clampf(sx, -1.0f, (float)j.sw)),
                            (int64_t)floorf(sl__aff_clampf(sy, -1.0f, (float)j.sh)));
            for (int64_t c = 0; c < j.c; c++)
                sl__aff_store(out + c, sl__aff_val(src, j.fill, o, c));
            return;
        }
        /* border_linear */
        const float fx = sl__aff_clampf(sx - 0.5f, -2.0f, (float)j.sw + 1.0f);
        const float fy = sl__aff_clampf(sy - 0.5f, -2.0f, (float)j.sh + 1.0f);
        if (j.fill && (fx < -1.0f || fy < -1.0f || fx >= (float)j.sw || fy >= (float)j.sh)) {
            for (int64_t c = 0; c < j.c; c++) /* all four taps outside */
                sl__aff_store(out + c, j.fill[c]);
            return;
        }
        const float x0f = floorf(fx), y0f = floorf(fy);
        const float qx = fx - x0f, qy = fy - y0f;
        const int64_t x0 = (int64_t)x0f, y0 = (int64_t)y0f;
        const int64_t o00 = sl__aff_tap(j, x0, y0), o01 = sl__aff_tap(j, x0 + 1, y0);
        const int64_t o10 = sl__aff_tap(j, x0, y0 + 1), o11 = sl__aff_tap(j, x0 + 1, y0 + 1);
        for (int64_t c = 0; c < j.c; c++) {
            const float v00 = sl__aff_val(src, j.fill, o00, c);
            const float v01 = sl__aff_val(src, j.fill, o01, c);
            const float v10 = sl__aff_val(src, j.fill, o10, c);
            const float v11 = sl__aff_val(src, j.fill, o11, c);
            const float top = v00 + (v01 - v00) * qx;
            const float bot = v10 + (v11 - v10) * qx;
            sl__aff_store(out + c, top + (bot - top) * qy);
        }
    }
};

#endif
