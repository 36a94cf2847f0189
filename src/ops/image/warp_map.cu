/* ops/image/warp_map.cu: the GPU run of the mapped warps (warp_map.h): water, sphere, jitter.
 *
 * Exports sl__warp_map_run_gpu. Per sample on the host: the images, mask, interpolation, fill
 * and the mapping's parameters (the op's function, the code its CPU run uses), uploaded as one
 * array; one launch covers the batch, one thread per output pixel: the mapping and the sampling
 * are warp_map_px.h's, the CPU's code, so results are identical bit for bit. water's offsets
 * come from per-row and per-column tables made on the host with the CPU's functions: CUDA's
 * sinf / cosf may differ from glibc's in the last ulp, which moved a linear sample by one
 * (seen on an H200) and may move a nearest one to its neighbour.
 * Invariant: nothing here reads sample data on the host.
 */
#include <limits.h>
#include <string.h>

#include "cuda/kernel.cuh"
#include "ops/image/warp_map.h"
#include "ops/image/warp_map_px.h"

template <int KIND> struct warp_k {
    const sl__warp_gpu *s;

    SL_HD int64_t count(int i) const
    {
        return s[i].dst.h * s[i].dst.w;
    }
    SL_HD void operator()(int i, int64_t p) const
    {
        const sl__warp_gpu &g = s[i];
        int64_t row;
        const int64_t col = sl__gdivmod(p, g.dst.w, &row);
        if (!g.apply) { /* mask 0: the input */
            const size_t es = g.src.type == SL_DTYPE_UINT8 ? 1 : 4;
            const size_t n = (size_t)g.src.c * es, o = (size_t)p * n;
            memcpy((unsigned char *)g.dst.data + o, (const unsigned char *)g.src.data + o, n);
            return;
        }
        const float x = (float)col + 0.5f, y = (float)row + 0.5f;
        float sx, sy;
        if (KIND == SL__WARP_WATER) {
            sx = x + g.wave[row];
            sy = y + g.wave[g.dst.h + col];
        } else if (KIND == SL__WARP_SPHERE) {
            sl__wm_sphere(g.p, x, y, &sx, &sy);
        } else {
            sl__wm_jitter(g.r, g.n, g.half, p, x, y, &sx, &sy);
        }
        sl__wm_pixel(&g.src, &g.dst, row, col, sx, sy, g.interp, g.fill);
    }
};

/* water: each applied sample's offset tables (see sl__warp_gpu.wave), uploaded as one array. */
static sl_status water_tables(sl_ctx *ctx, sl__warp_gpu *h, int n)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += h[i].apply ? (size_t)(h[i].dst.h + h[i].dst.w) : 0;
    float *t = total > (size_t)INT_MAX
                   ? NULL
                   : (float *)sl_ctx_scratch_n(ctx, 1, sizeof(float) * (total ? total : 1));
    if (!t)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for water's tables of %d samples", n);
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        if (!h[i].apply)
            continue;
        for (int64_t r = 0; r < h[i].dst.h; r++)
            t[at + (size_t)r] = sl__wm_water_dx(h[i].p, (float)r + 0.5f);
        for (int64_t c = 0; c < h[i].dst.w; c++)
            t[at + (size_t)(h[i].dst.h + c)] = sl__wm_water_dy(h[i].p, (float)c + 0.5f);
        at += (size_t)(h[i].dst.h + h[i].dst.w);
    }
    const float *dt = sl_gpu_params(ctx, 1, t, (int)(total > 0 ? total : 1));
    if (!dt)
        return SL_ENOMEM;
    at = 0;
    for (int i = 0; i < n; i++) {
        if (!h[i].apply)
            continue;
        h[i].wave = dt + at;
        at += (size_t)(h[i].dst.h + h[i].dst.w);
    }
    return SL_OK;
}

extern "C" sl_status sl__warp_map_run_gpu(sl_ctx *ctx, const sl__warp_args *a, int kind,
                                          sl__warp_gpu_fn fn)
{
    const int n = sl_ctx_batch_size(ctx);
    if (n <= 0)
        return SL_OK;
    sl__warp_gpu *h = (sl__warp_gpu *)sl_ctx_scratch(ctx, sizeof(*h) * (size_t)n);
    if (!h)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    int64_t max_n = 0;
    for (int i = 0; i < n; i++) {
        memset(&h[i], 0, sizeof h[i]);
        sl_ctx_focus_sample(ctx, i);
        sl_status st = sl__warp_map_gpu_sample(ctx, i, a, &h[i]);
        if (st == SL_OK && h[i].apply)
            st = fn(ctx, i, &h[i]);
        if (st != SL_OK)
            return st;
        const int64_t px = h[i].src.h * h[i].src.w * h[i].src.c > 0 ? h[i].dst.h * h[i].dst.w : 0;
        if (px == 0)
            h[i].dst.h = h[i].dst.w = 0; /* count 0: nothing to do, as on the CPU */
        max_n = px > max_n ? px : max_n;
    }
    sl_ctx_focus_sample(ctx, -1);
    if (max_n == 0)
        return SL_OK;
    if (kind == SL__WARP_WATER && water_tables(ctx, h, n) != SL_OK)
        return SL_ENOMEM; /* the error is recorded */
    const sl__warp_gpu *d = sl_gpu_params(ctx, 0, h, n);
    if (!d)
        return SL_ENOMEM; /* the error is recorded */
    const char *what = "warp";
    if (kind == SL__WARP_WATER)
        return sl_gpu_each(ctx, n, max_n, warp_k<SL__WARP_WATER>{d}, what);
    if (kind == SL__WARP_SPHERE)
        return sl_gpu_each(ctx, n, max_n, warp_k<SL__WARP_SPHERE>{d}, what);
    return sl_gpu_each(ctx, n, max_n, warp_k<SL__WARP_JITTER>{d}, what);
}
