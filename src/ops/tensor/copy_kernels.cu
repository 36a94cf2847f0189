/* ops/tensor/copy_kernels.cu: the GPU window copy and strided gather behind crop, pad, flip and
 * transpose — the GPU twin of copy_kernels.c.
 *
 * Exports (tensor_gpu.h): sl__gwin_plan, sl__gpu_window, sl__gpu_gather.
 *
 * Planning (host) merges dimensions the way copy_kernels.c does (the gather's plan,
 * sl__ggather_plan, is copy_kernels.c's own merge), so a crop of full HWC rows or a vertical
 * flip is a short loop of divisions per element; the kernels (tensor.cuh) run one
 * thread per output element, consecutive threads writing consecutive elements. Element types:
 * a copy without conversion moves elements of 1, 2, 4 or 8 bytes unchanged (bit-exact for every
 * type, NaN payloads included); a converting window copy (crop with dtype) is instantiated per
 * output type and reads the input type at run time.
 * Invariant: plans depend only on shapes and anchors; kernels read only uploaded plans, fill
 * values and the samples' device memory.
 */
#include "ops/tensor/tensor.cuh"

/* The largest count of n host jobs (sl__gwin, sl__ggather): it sizes the grid; 0: nothing to do. */
template <class J> static int64_t max_count_of(const J *jobs, int n)
{
    int64_t m = 0;
    for (int i = 0; i < n; i++)
        m = jobs[i].count > m ? jobs[i].count : m;
    return m;
}

/* ---- window copy ----------------------------------------------------------------------------- */

extern "C" void sl__gwin_plan(sl__gwin *w, int ndim, const int64_t *in_shape, const int64_t *anchor,
                              const int64_t *out_shape, int fill_axis)
{
    /* Groups fill the arrays from the back. Dimension d joins the group inside it when that
     * group is full (anchor 0, out == in: its merged index maps to the input exactly as the
     * separate ones did) and neither holds the per-channel fill axis, which stays apart so its
     * index is known. */
    int64_t out[SL_MAX_NDIM], in[SL_MAX_NDIM], a[SL_MAX_NDIM];
    int g = SL_MAX_NDIM, fa = -1;
    w->count = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        bool full = g < SL_MAX_NDIM && a[g] == 0 && out[g] == in[g];
        if (full && d != fill_axis && g != fa) {
            a[g] = anchor[d] * in[g];
            out[g] *= out_shape[d];
            in[g] *= in_shape[d];
        } else {
            g--;
            a[g] = anchor[d];
            out[g] = out_shape[d];
            in[g] = in_shape[d];
        }
        if (d == fill_axis)
            fa = g;
        w->count *= out_shape[d];
    }
    if (g == SL_MAX_NDIM) { /* a scalar: one element, always inside */
        g--;
        a[g] = 0;
        out[g] = in[g] = 1;
    }
    w->n = SL_MAX_NDIM - g;
    w->fa = fa >= 0 ? fa - g : -1;
    for (int d = 0; d < w->n; d++) {
        w->out_shape[d] = out[g + d];
        w->in_shape[d] = in[g + d];
        w->anchor[d] = a[g + d];
    }
    w->in_stride[w->n - 1] = 1;
    for (int d = w->n - 2; d >= 0; d--)
        w->in_stride[d] = w->in_stride[d + 1] * w->in_shape[d + 1];
}

template <class O, class L>
static sl_status window_launch(sl_ctx *ctx, const sl__gwin *dw, int n, int64_t max_count,
                               const void *fill, L load)
{
    sl__gwindow_k<O, L> k = {dw, (const O *)fill, load};
    return sl_gpu_each(ctx, n, max_count, k, "window copy");
}

extern "C" sl_status sl__gpu_window(sl_ctx *ctx, const sl__gwin *w, int n, sl_dtype in_type,
                                    sl_dtype out_type, const void *fill, size_t fill_bytes)
{
    const int64_t max_count = max_count_of(w, n);
    if (n <= 0 || max_count == 0)
        return SL_OK;
    const sl__gwin *dw = sl_gpu_params(ctx, 0, w, n);
    const void *df = dw ? sl_ctx_gpu_upload(ctx, 1, fill, fill_bytes) : NULL;
    if (!df)
        return SL_ENOMEM; /* recorded by the upload */
    if (in_type == out_type) {
        switch (sl_dtype_size(in_type)) {
        case 1: return window_launch<uint8_t>(ctx, dw, n, max_count, df, sl__gload_same<uint8_t>());
        case 2:
            return window_launch<uint16_t>(ctx, dw, n, max_count, df, sl__gload_same<uint16_t>());
        case 4:
            return window_launch<uint32_t>(ctx, dw, n, max_count, df, sl__gload_same<uint32_t>());
        default:
            return window_launch<uint64_t>(ctx, dw, n, max_count, df, sl__gload_same<uint64_t>());
        }
    }
    SL__GTYPE_SWITCH(out_type, O,
                     return window_launch<O>(ctx, dw, n, max_count, df, sl__gload_cv<O>{in_type}));
    return sl_fail(ctx, SL_EINTERNAL, "no GPU window copy to dtype %d", (int)out_type);
}

/* ---- strided gather -------------------------------------------------------------------------- */

template <class T>
static sl_status gather_launch(sl_ctx *ctx, const sl__ggather *dg, int n, int64_t max_count)
{
    sl__ggather_k<T> k = {dg};
    return sl_gpu_each(ctx, n, max_count, k, "gather");
}

extern "C" sl_status sl__gpu_gather(sl_ctx *ctx, const sl__ggather *g, int n, size_t esize)
{
    const int64_t max_count = max_count_of(g, n);
    if (n <= 0 || max_count == 0)
        return SL_OK;
    const sl__ggather *dg = sl_gpu_params(ctx, 0, g, n);
    if (!dg)
        return SL_ENOMEM;
    switch (esize) {
    case 1: return gather_launch<uint8_t>(ctx, dg, n, max_count);
    case 2: return gather_launch<uint16_t>(ctx, dg, n, max_count);
    case 4: return gather_launch<uint32_t>(ctx, dg, n, max_count);
    default: return gather_launch<uint64_t>(ctx, dg, n, max_count);
    }
}
