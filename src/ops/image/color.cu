/* color.cu: the GPU run of the colour family (color.h): color_twist, hsv, hue, saturation,
 * brightness, contrast, brightness_contrast and color_space_conversion.
 *
 * Exports sl__color_run_gpu. The op's parameter function (the same one its CPU run uses) gives
 * every sample's transform or mul / add on the host; they are uploaded as one sl__color_sample
 * array and one launch (color.cuh's functors) covers the batch. Setup is the CPU op's: it reads
 * shapes and arguments only.
 * Invariant: all samples of a launch share one kernel variant: input / output type and the
 * transform's channel counts, which depend on the node's arguments and input type only.
 */
#include "ops/image/color.cuh"

template <class IN, class OUT>
static sl_status launch(sl_ctx *ctx, const sl__color_sample *d, int n, int64_t max_n, int cin,
                        int cout)
{
    const char *what = "colour kernel";
    if (cin == 0)
        return sl_gpu_each(ctx, n, max_n, sl__color_linear_k<IN, OUT>{d}, what);
    if (cin == 3 && cout == 3)
        return sl_gpu_each(ctx, n, max_n, sl__color_apply_k<IN, OUT, 3, 3>{d}, what);
    if (cin == 3)
        return sl_gpu_each(ctx, n, max_n, sl__color_apply_k<IN, OUT, 3, 1>{d}, what);
    if (cout == 3)
        return sl_gpu_each(ctx, n, max_n, sl__color_apply_k<IN, OUT, 1, 3>{d}, what);
    return sl_gpu_each(ctx, n, max_n, sl__color_apply_k<IN, OUT, 1, 1>{d}, what);
}

extern "C" sl_status sl__color_run_gpu(sl_ctx *ctx, int dtype_arg, sl__color_params_fn params)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx);
    const sl_dtype st = sl_batch_dtype(in), dt = sl__hwc_out_type(ctx, dtype_arg);
    if (n <= 0)
        return SL_OK;
    sl__color_sample *h = (sl__color_sample *)sl_ctx_scratch(ctx, sizeof(*h) * (size_t)n);
    if (!h)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    int64_t max_n = 0;
    int cin = -1, cout = 0;
    for (int i = 0; i < n; i++) {
        const int64_t numel = sl_batch_sample_numel(in, i);
        memset(&h[i], 0, sizeof h[i]);
        h[i].src = sl_batch_sample_data(in, i);
        h[i].dst = sl_ctx_output_data(ctx, 0, i);
        if (numel == 0)
            continue; /* count 0: the kernel skips it, as the CPU run does */
        params(ctx, i, &h[i].p);
        h[i].n = h[i].p.x.cin > 0 ? numel / h[i].p.x.cin : numel;
        max_n = h[i].n > max_n ? h[i].n : max_n;
        if (cin < 0)
            cin = h[i].p.x.cin, cout = h[i].p.x.cout;
        if (h[i].p.x.cin != cin || h[i].p.x.cout != cout)
            return sl_fail(ctx, SL_EINTERNAL,
                           "sample %d: colour transform %d -> %d channels in a "
                           "batch of %d -> %d",
                           i, h[i].p.x.cin, h[i].p.x.cout, cin, cout);
    }
    if (max_n == 0)
        return SL_OK;
    const sl__color_sample *d = sl_gpu_params(ctx, 0, h, n);
    if (!d)
        return SL_ENOMEM; /* the error is recorded */
    const bool u8_in = st == SL_DTYPE_UINT8, u8_out = dt == SL_DTYPE_UINT8;
    if (u8_in)
        return u8_out ? launch<uint8_t, uint8_t>(ctx, d, n, max_n, cin, cout)
                      : launch<uint8_t, float>(ctx, d, n, max_n, cin, cout);
    return u8_out ? launch<float, uint8_t>(ctx, d, n, max_n, cin, cout)
                  : launch<float, float>(ctx, d, n, max_n, cin, cout);
}
