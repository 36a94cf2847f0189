/* ops/image/warp_map_px.h: the per-pixel code of the mapped warps (warp_map.h) — sampling and
 * the mapping functions of water, sphere and jitter — as inline code that compiles both as C
 * (warp_map.c and the operators) and as CUDA C++ (warp_map.cu, host and device), so both
 * backends compute every output pixel with the same float32 operations.
 *
 * Exports (static inline; __host__ __device__ under nvcc):
 *   sl__wm_pixel   output pixel (row i, column j) of dst from source point (sx, sy) of src:
 *                  INTERP_NN or INTERP_LINEAR, fill outside (warp_map.h's rules)
 *   sl__wm_water / sl__wm_sphere / sl__wm_jitter   the operators' mappings (water's offsets
 *                  alone: sl__wm_water_dx / _dy); jitter's offsets of
 *                  pixel p come from words 4p .. 4p + 3 of the sample's stream (noise_rng.h's
 *                  seek: two sl_rng_below draws, each one 64-bit word pair, rejection aside)
 * Invariant: never reads outside the source, whatever the mapping returns (NaN included).
 */
#ifndef SLUICE_OPS_IMAGE_WARP_MAP_PX_H
#define SLUICE_OPS_IMAGE_WARP_MAP_PX_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/image/affine.h"
#include "ops/image/noise_rng.h"

/* Channel c of pixel (x, y) as float, or the fill outside the image. */
SL__NR float sl__wm_px(const sl__image *s, int64_t x, int64_t y, int64_t c, float fill)
{
    if (x < 0 || y < 0 || x >= s->w || y >= s->h)
        return fill;
    size_t k = (size_t)((y * s->w + x) * s->c + c);
    return s->type == SL_DTYPE_UINT8 ? (float)((const uint8_t *)s->data)[k]
                                     : ((const float *)s->data)[k];
}

SL__NR void sl__wm_store(const sl__image *d, size_t k, float v)
{
    if (d->type == SL_DTYPE_UINT8) {
        float r = floorf(v + 0.5f);
        ((uint8_t *)d->data)[k] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
    } else {
        ((float *)d->data)[k] = v;
    }
}

/* floor of a float as int64, clamped far outside any image (NaN: far outside). */
SL__NR int64_t sl__wm_ifloor(float v)
{
    if (!(v > -1e9f && v < 1e9f))
        return INT64_MIN / 4;
    return (int64_t)floorf(v);
}

SL__NR void sl__wm_pixel(const sl__image *src, const sl__image *dst, int64_t i, int64_t j, float sx,
                         float sy, sl__interp interp, float fill)
{
    const int64_t c = dst->c;
    size_t o = (size_t)((i * dst->w + j) * c);
    if (interp == SL__INTERP_NN) {
        int64_t x = sl__wm_ifloor(sx), y = sl__wm_ifloor(sy);
        for (int64_t k = 0; k < c; k++)
            sl__wm_store(dst, o + (size_t)k, sl__wm_px(src, x, y, k, fill));
        return;
    }
    float fx = sx - 0.5f, fy = sy - 0.5f;
    int64_t x0 = sl__wm_ifloor(fx), y0 = sl__wm_ifloor(fy);
    float qx = fx - floorf(fx), qy = fy - floorf(fy);
    if (!(qx >= 0 && qx <= 1))
        qx = 0;
    if (!(qy >= 0 && qy <= 1))
        qy = 0;
    for (int64_t k = 0; k < c; k++) {
        float a = sl__wm_px(src, x0, y0, k, fill), b = sl__wm_px(src, x0 + 1, y0, k, fill);
        float e = sl__wm_px(src, x0, y0 + 1, k, fill), f = sl__wm_px(src, x0 + 1, y0 + 1, k, fill);
        float top = a + (b - a) * qx, bot = e + (f - e) * qx;
        sl__wm_store(dst, o + (size_t)k, top + (bot - top) * qy);
    }
}

/* water: p = ampl_x, ampl_y, freq_x, freq_y, phase_x, phase_y (DALI's wave). The x offset
 * depends on y alone and the y offset on x alone, so the device run takes them from tables
 * that the host fills with these functions (glibc's sinf / cosf, not CUDA's). */
SL__NR float sl__wm_water_dx(const float *p, float y)
{
    return p[0] * sinf(p[2] * y + p[4]);
}
SL__NR float sl__wm_water_dy(const float *p, float x)
{
    return p[1] * cosf(p[3] * x + p[5]);
}
SL__NR void sl__wm_water(const float *p, float x, float y, float *sx, float *sy)
{
    *sx = x + sl__wm_water_dx(p, y);
    *sy = y + sl__wm_water_dy(p, x);
}

/* sphere: p = centre x, centre y, scale. */
SL__NR void sl__wm_sphere(const float *p, float x, float y, float *sx, float *sy)
{
    float dx = x - p[0], dy = y - p[1];
    float d = sqrtf(dx * p[2] * dx * p[2] + dy * p[2] * dy * p[2]);
    *sx = dx * d + p[0];
    *sy = dy * d + p[1];
}

/* sluice/rng.h's sl_rng_below on sl__nr_u32. */
SL__NR uint64_t sl__wm_below(sl_rng *r, uint64_t n)
{
    uint64_t threshold = (0 - n) % n;
    for (;;) {
        uint64_t hi = sl__nr_u32(r);
        uint64_t x = (hi << 32) | sl__nr_u32(r);
        if (x >= threshold)
            return x % n;
    }
}

/* jitter: pixel `pixel`'s offsets (dx, then dy, uniform integers in [-half, n - 1 - half]) from
 * the sample's stream r (fresh, by value) at word 4 * pixel. */
SL__NR void sl__wm_jitter(sl_rng r, uint64_t n, int64_t half, int64_t pixel, float x, float y,
                          float *sx, float *sy)
{
    sl__nr_seek(&r, (uint64_t)pixel * 4);
    int64_t dx = (int64_t)sl__wm_below(&r, n) - half;
    int64_t dy = (int64_t)sl__wm_below(&r, n) - half;
    *sx = x + (float)dx;
    *sy = y + (float)dy;
}

#endif
