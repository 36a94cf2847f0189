/* ops/image/paste.cu: the GPU run of paste (paste.h): one thread per output element of the
 * batch, the image's element where the placement covers it, the fill color elsewhere — what
 * paste.c's row copies and fills produce.
 *
 * Exports sl__paste_run_gpu.
 * Invariant: nothing here reads sample data on the host.
 */
#include "cuda/kernel.cuh"
#include "ops/image/paste.h"

struct paste_k {
    const sl__paste_gpu *s;
    const uint8_t *color;

    SL_HD int64_t count(int i) const
    {
        return s[i].out_h * s[i].out_w * s[i].c;
    }
    SL_HD void operator()(int i, int64_t e) const
    {
        const sl__paste_gpu &p = s[i];
        int64_t q, oy;
        const int64_t k = sl__gdivmod(e, p.c, &q);
        const int64_t ox = sl__gdivmod(q, p.out_w, &oy);
        const int64_t y = oy - p.y, x = ox - p.x;
        p.out[e] =
            y >= 0 && y < p.h && x >= 0 && x < p.w ? p.in[(y * p.w + x) * p.c + k] : color[k];
    }
};

extern "C" sl_status sl__paste_run_gpu(sl_ctx *ctx, const sl__paste_gpu *h, int n,
                                       const uint8_t *color, int64_t ncolor)
{
    int64_t max_n = 0;
    for (int i = 0; i < n; i++) {
        const int64_t m = h[i].out_h * h[i].out_w * h[i].c;
        max_n = m > max_n ? m : max_n;
    }
    if (max_n == 0)
        return SL_OK;
    const sl__paste_gpu *d = sl_gpu_params(ctx, 0, h, n);
    const uint8_t *dc = sl_gpu_params(ctx, 1, color, (int)(ncolor > 0 ? ncolor : 1));
    if (!d || !dc)
        return SL_ENOMEM; /* the error is recorded */
    return sl_gpu_each(ctx, n, max_n, paste_k{d, dc}, "paste");
}
