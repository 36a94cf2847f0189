/* ops/image/erase.cu: the GPU run of erase (erase.h).
 *
 * Exports sl__erase_run_gpu: one thread per output element of the batch. The element's index
 * along each erased axis is tested against the sample's regions (erase.c's plan(), clipped and
 * non-empty); inside any, it takes the fill value (per channel: along the C axis), else the
 * input's value: the CPU's copy-then-fill, element by element, so the result is identical.
 * The element type only matters by its size (1, 2, 4 or 8 bytes are moved as such).
 * Invariant: nothing here reads sample data on the host.
 */
#include "cuda/kernel.cuh"
#include "ops/image/erase.h"

template <class T> struct erase_k {
    const sl__erase_gpu *s;
    const int64_t *boxes;
    const T *fills;

    SL_HD int64_t count(int i) const
    {
        return s[i].numel;
    }
    SL_HD void operator()(int i, int64_t e) const
    {
        const sl__erase_gpu &p = s[i];
        int64_t idx[SL_MAX_NDIM], q;
        for (int k = 0; k < p.naxes; k++)
            idx[k] = sl__gdivmod(e / p.stride[k], p.extent[k], &q);
        const int64_t *b = boxes + p.box_off * 2;
        bool in = false;
        for (int r = 0; r < p.nbox && !in; r++, b += 2 * p.naxes) {
            in = true;
            for (int k = 0; k < p.naxes && in; k++)
                in = idx[k] >= b[2 * k] && idx[k] < b[2 * k + 1];
        }
        if (!in) {
            ((T *)p.out)[e] = ((const T *)p.in)[e];
            return;
        }
        int64_t f = 0;
        if (p.nfill > 1)
            f = sl__gdivmod(e / p.cstride, p.cextent, &q);
        ((T *)p.out)[e] = fills[p.fill_off + f];
    }
};

template <class T>
static sl_status launch(sl_ctx *ctx, const sl__erase_gpu *d, int n, int64_t max_n,
                        const int64_t *boxes, const void *fills)
{
    return sl_gpu_each(ctx, n, max_n, erase_k<T>{d, boxes, (const T *)fills}, "erase");
}

extern "C" sl_status sl__erase_run_gpu(sl_ctx *ctx, const sl__erase_gpu *h, int n,
                                       const int64_t *boxes, int64_t nboxv, const void *fills,
                                       size_t nfillv)
{
    const size_t es = sl_dtype_size(sl_batch_dtype(sl_ctx_input(ctx, 0)));
    int64_t max_n = 0;
    for (int i = 0; i < n; i++)
        max_n = h[i].numel > max_n ? h[i].numel : max_n;
    if (max_n == 0)
        return SL_OK;
    const sl__erase_gpu *d = sl_gpu_params(ctx, 0, h, n);
    const int64_t *db = (const int64_t *)sl_ctx_gpu_upload(
        ctx, 1, boxes, sizeof(int64_t) * 2 * (size_t)(nboxv > 0 ? nboxv : 1));
    const void *df = sl_ctx_gpu_upload(ctx, 2, fills, es * nfillv);
    if (!d || !db || !df)
        return SL_ENOMEM; /* the error is recorded */
    switch (es) {
    case 1: return launch<uint8_t>(ctx, d, n, max_n, db, df);
    case 2: return launch<uint16_t>(ctx, d, n, max_n, db, df);
    case 4: return launch<uint32_t>(ctx, d, n, max_n, db, df);
    case 8: return launch<uint64_t>(ctx, d, n, max_n, db, df);
    }
    return sl_fail(ctx, SL_EINTERNAL, "erase: no GPU kernel for %zu-byte elements", es);
}
