/* ops/image/warp_map.c: per-pixel mapped warps (see warp_map.h). */
#include <math.h>
#include <string.h>

#include "ops/image/warp_map.h"

#define MAX_C 64 /* channels handled with a stack accumulator */

/* Reads channel values of pixel (x, y) or the fill outside, as float. */
static inline float px(const sl__image *s, int64_t x, int64_t y, int64_t c, const float *fill)
{
    if (x < 0 || y < 0 || x >= s->w || y >= s->h)
        return fill[c];
    size_t k = (size_t)((y * s->w + x) * s->c + c);
    return s->type == SL_DTYPE_UINT8 ? (float)((const uint8_t *)s->data)[k]
                                     : ((const float *)s->data)[k];
}

static inline void store(const sl__image *d, size_t k, float v)
{
    if (d->type == SL_DTYPE_UINT8) {
        float r = floorf(v + 0.5f);
        ((uint8_t *)d->data)[k] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
    } else {
        ((float *)d->data)[k] = v;
    }
}

/* floor of a float as int64, clamped far outside any image (NaN: far outside). */
static inline int64_t ifloor(float v)
{
    if (!(v > -1e9f && v < 1e9f))
        return INT64_MIN / 4;
    return (int64_t)floorf(v);
}

void sl__warp_map(const sl__image *src, const sl__image *dst, sl__map_fn fn, void *state,
                  sl__interp interp, const float *fill)
{
    const int64_t c = dst->c;
    for (int64_t i = 0; i < dst->h; i++) {
        for (int64_t j = 0; j < dst->w; j++) {
            float sx, sy;
            fn(state, (float)j + 0.5f, (float)i + 0.5f, &sx, &sy);
            size_t o = (size_t)((i * dst->w + j) * c);
            if (interp == SL__INTERP_NN) {
                int64_t x = ifloor(sx), y = ifloor(sy);
                for (int64_t k = 0; k < c; k++)
                    store(dst, o + (size_t)k, px(src, x, y, k, fill));
                continue;
            }
            float fx = sx - 0.5f, fy = sy - 0.5f;
            int64_t x0 = ifloor(fx), y0 = ifloor(fy);
            float qx = fx - floorf(fx), qy = fy - floorf(fy);
            if (!(qx >= 0 && qx <= 1))
                qx = 0;
            if (!(qy >= 0 && qy <= 1))
                qy = 0;
            for (int64_t k = 0; k < c; k++) {
                float a = px(src, x0, y0, k, fill), b = px(src, x0 + 1, y0, k, fill);
                float e = px(src, x0, y0 + 1, k, fill), f = px(src, x0 + 1, y0 + 1, k, fill);
                float top = a + (b - a) * qx, bot = e + (f - e) * qx;
                store(dst, o + (size_t)k, top + (bot - top) * qy);
            }
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
