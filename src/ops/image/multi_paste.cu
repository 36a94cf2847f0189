/* ops/image/multi_paste.cu: the GPU run of multi_paste (multi_paste.h): one thread per output
 * element of the batch looks for the last of its sample's regions that covers it and converts
 * that source element (tensor.cuh's conversions, convert.c's rules), or writes 0 — what the
 * CPU's zeroed canvas and region copies in order produce.
 *
 * Exports sl__multi_paste_run_gpu.
 * Invariant: nothing here reads sample data on the host.
 */
#include <string.h>

#include "ops/image/multi_paste.h"
#include "ops/tensor/tensor.cuh"

template <class O> struct mp_k {
    const sl__mp_gpu *s;
    const sl__mp_region *r;
    sl_dtype in_t;

    SL_HD int64_t count(int i) const
    {
        return s[i].h * s[i].w * s[i].c;
    }
    SL_HD void operator()(int i, int64_t e) const
    {
        const sl__mp_gpu &p = s[i];
        int64_t q, y;
        const int64_t k = sl__gdivmod(e, p.c, &q);
        const int64_t x = sl__gdivmod(q, p.w, &y);
        for (int j = p.n - 1; j >= 0; j--) {
            const sl__mp_region &g = r[p.first + j];
            const int64_t dy = y - g.oa[0], dx = x - g.oa[1];
            if (dy >= 0 && dy < g.sh[0] && dx >= 0 && dx < g.sh[1]) {
                ((O *)p.out)[e] =
                    sl__gload<O>(g.src, ((g.ia[0] + dy) * g.sw + g.ia[1] + dx) * p.c + k, in_t);
                return;
            }
        }
        O z;
        memset(&z, 0, sizeof z); /* the CPU's zeroed canvas: all-zero bytes */
        ((O *)p.out)[e] = z;
    }
};

extern "C" sl_status sl__multi_paste_run_gpu(sl_ctx *ctx, const sl__mp_gpu *h, int n,
                                             const sl__mp_region *regions, int64_t nregions,
                                             sl_dtype out_t, sl_dtype in_t)
{
    int64_t max_n = 0;
    for (int i = 0; i < n; i++) {
        const int64_t m = h[i].h * h[i].w * h[i].c;
        max_n = m > max_n ? m : max_n;
    }
    if (max_n == 0)
        return SL_OK;
    const sl__mp_gpu *d = sl_gpu_params(ctx, 0, h, n);
    const sl__mp_region *dr = sl_gpu_params(ctx, 1, regions, (int)(nregions > 0 ? nregions : 1));
    if (!d || !dr)
        return SL_ENOMEM; /* the error is recorded */
    SL__GTYPE_SWITCH(out_t, O,
                     return sl_gpu_each(ctx, n, max_n, mp_k<O>{d, dr, in_t}, "multi_paste"));
    return sl_fail(ctx, SL_EINTERNAL, "multi_paste: no GPU kernel for dtype %d", (int)out_t);
}
