/* ops/image/grid_mask.cu: the GPU run of grid_mask (grid_mask.h): one thread per pixel of the
 * batch tests it with the CPU's sl__gm_keep and copies its channels or zeroes them.
 *
 * Exports sl__grid_mask_run_gpu.
 * Invariant: nothing here reads sample data on the host.
 */
#include <string.h>

#include "cuda/kernel.cuh"
#include "ops/image/grid_mask.h"

struct gm_k {
    const sl__gm_gpu *s;

    SL_HD int64_t count(int i) const
    {
        return s[i].h * s[i].w;
    }
    SL_HD void operator()(int i, int64_t px) const
    {
        const sl__gm_gpu &g = s[i];
        int64_t y;
        const int64_t x = sl__gdivmod(px, g.w, &y);
        const size_t o = (size_t)(px * g.pixel_bytes);
        unsigned char *dst = (unsigned char *)g.out + o;
        if (sl__gm_keep(&g.p, x, y))
            memcpy(dst, (const unsigned char *)g.in + o, (size_t)g.pixel_bytes);
        else
            memset(dst, 0, (size_t)g.pixel_bytes); /* 0 is all-zero bytes in every type */
    }
};

extern "C" sl_status sl__grid_mask_run_gpu(sl_ctx *ctx, const sl__gm_gpu *h, int n)
{
    int64_t max_n = 0;
    for (int i = 0; i < n; i++)
        max_n = h[i].h * h[i].w > max_n ? h[i].h * h[i].w : max_n;
    if (max_n == 0)
        return SL_OK;
    const sl__gm_gpu *d = sl_gpu_params(ctx, 0, h, n);
    if (!d)
        return SL_ENOMEM; /* the error is recorded */
    return sl_gpu_each(ctx, n, max_n, gm_k{d}, "grid_mask");
}
