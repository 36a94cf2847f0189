/* ops/image/warp_map.c: per-pixel mapped warps (see warp_map.h); the per-pixel code is
 * warp_map_px.h's, shared with the GPU run (warp_map.cu). */
#include <math.h>
#include <string.h>

#include "ops/image/warp_map.h"
#include "ops/image/warp_map_px.h"

#define MAX_C 64 /* channels handled with a stack accumulator */

void sl__warp_map(const sl__image *src, const sl__image *dst, sl__map_fn fn, void *state,
                  sl__interp interp, const float *fill)
{
    for (int64_t i = 0; i < dst->h; i++) {
        for (int64_t j = 0; j < dst->w; j++) {
            float sx, sy;
            fn(state, (float)j + 0.5f, (float)i + 0.5f, &sx, &sy);
            sl__wm_pixel(src, dst, i, j, sx, sy, interp, fill[0]);
        }
    }
}

sl_status sl__warp_init_check(sl_op_init *ini, const sl__warp_args *a)
{
    const char *s = sl_init_arg_str(ini, a->interp_type);
    if (strcmp(s, "INTERP_NN") != 0 && strcmp(s, "INTERP_LINEAR") != 0)
        return sl_init_fail(ini, SL_EUNSUPPORTED,
                            "interp_type %s is not supported: only INTERP_NN and INTERP_LINEAR", s);
    return SL_OK;
}

sl_status sl__warp_map_sample(sl_ctx *ctx, int i, const sl__warp_args *a, sl__map_fn fn,
                              void *state)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t *s = sl_batch_shape(in, i);
    sl_dtype t = sl_batch_dtype(in);
    size_t bytes = (size_t)(s[0] * s[1] * s[2]) * sl_dtype_size(t);
    if (bytes == 0)
        return SL_OK;
    if (!sl_ctx_arg_int(ctx, a->mask, i)) {
        memcpy(sl_ctx_output_data(ctx, 0, i), sl_batch_sample_data(in, i), bytes);
        return SL_OK;
    }
    if (s[2] > MAX_C)
        return sl_fail(ctx, SL_EUNSUPPORTED, "images of more than %d channels are not supported",
                       MAX_C);
    float fill[MAX_C];
    float f = (float)sl_ctx_arg_float(ctx, a->fill_value, i);
    for (int k = 0; k < MAX_C; k++)
        fill[k] = f;
    sl__image src = {(void *)sl_batch_sample_data(in, i), t, s[0], s[1], s[2]};
    sl__image dst = {sl_ctx_output_data(ctx, 0, i), t, s[0], s[1], s[2]};
    sl__interp interp = strcmp(sl_ctx_arg_str(ctx, a->interp_type), "INTERP_NN") == 0
                            ? SL__INTERP_NN
                            : SL__INTERP_LINEAR;
    sl__warp_map(&src, &dst, fn, state, interp, fill);
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
sl_status sl__warp_map_gpu_sample(sl_ctx *ctx, int i, const sl__warp_args *a, sl__warp_gpu *g)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t *s = sl_batch_shape(in, i);
    sl_dtype t = sl_batch_dtype(in);
    g->src = (sl__image){(void *)sl_batch_sample_data(in, i), t, s[0], s[1], s[2]};
    g->dst = (sl__image){sl_ctx_output_data(ctx, 0, i), t, s[0], s[1], s[2]};
    if (s[0] * s[1] * s[2] == 0)
        return SL_OK;
    g->apply = sl_ctx_arg_int(ctx, a->mask, i) != 0;
    if (!g->apply)
        return SL_OK;
    if (s[2] > MAX_C)
        return sl_fail(ctx, SL_EUNSUPPORTED, "images of more than %d channels are not supported",
                       MAX_C);
    g->fill = (float)sl_ctx_arg_float(ctx, a->fill_value, i);
    g->interp = strcmp(sl_ctx_arg_str(ctx, a->interp_type), "INTERP_NN") == 0 ? SL__INTERP_NN
                                                                              : SL__INTERP_LINEAR;
    return SL_OK;
}
#endif
