/* ops/image/window.c: crop window placement for crop and crop_mirror_normalize.
 *
 * Exports sl__crop_init_check, sl__crop_window_get and sl__crop_window_roi (ops/image/window.h).
 * Invariant: the same arguments and image extents always give the same window.
 */
#include <math.h>
#include <string.h>

#include "ops/image/window.h"

/* crop_h / crop_w count as given when connected or non-zero (0 is their "not given"). */
static bool extent_given(const sl_op_init *ini, int arg)
{
    return sl_init_arg_is_input(ini, arg) ||
           (sl_init_arg_is_set(ini, arg) && sl_init_arg_float(ini, arg) != 0.0);
}

sl_status sl__crop_init_check(sl_op_init *ini)
{
    return sl__crop_init_check_at(ini, 0);
}

sl_status sl__crop_init_check_at(sl_op_init *ini, int base)
{
    if (sl_init_arg_is_set(ini, base + SL__A_CROP) &&
        (extent_given(ini, base + SL__A_CROP_H) || extent_given(ini, base + SL__A_CROP_W)))
        return sl_init_fail(ini, SL_EINVAL,
                            "crop and crop_h/crop_w are exclusive: give either crop=(H, W) or "
                            "crop_h and crop_w");
    return SL_OK;
}

/* Window along one axis of extent n: crop extent `crop` (< 1: whole), position pos. Anchor
 * computed in float32 as DALI (std::roundf / truncation of pos * (n - crop)). */
static void place(int64_t n, double crop_arg, double pos, bool truncate, int64_t *a, int64_t *len)
{
    /* Truncated toward zero like DALI's int cast; below 1 (or NaN) means "no crop"; a huge value
     * is capped (it cannot fit any image, so it fails or pads as the policy says). */
    int64_t c = crop_arg >= 1.0 ? (crop_arg < 0x1p40 ? (int64_t)crop_arg : (int64_t)1 << 40) : 0;
    if (c <= 0) {
        *a = 0;
        *len = n;
        return;
    }
    float f = (float)pos * (float)(n - c);
    *a = (int64_t)(truncate ? truncf(f) : roundf(f));
    *len = c;
}

sl_status sl__crop_window_get(sl_ctx *ctx, const sl__crop_args *a, int i, int64_t H, int64_t W,
                              sl__crop_window *win)
{
    double crop_h, crop_w;
    if (sl_ctx_arg_is_set(ctx, a->base + SL__A_CROP)) {
        double v[2] = {0, 0};
        sl_ctx_arg_floats(ctx, a->base + SL__A_CROP, i, v, 2);
        crop_h = v[0];
        crop_w = v[1];
    } else {
        crop_h = sl_ctx_arg_float(ctx, a->base + SL__A_CROP_H, i);
        crop_w = sl_ctx_arg_float(ctx, a->base + SL__A_CROP_W, i);
    }
    bool truncate = !strcmp(sl_ctx_arg_str(ctx, a->rounding), "truncate");
    place(H, crop_h, sl_ctx_arg_float(ctx, a->base + SL__A_CROP_POS_Y, i), truncate, &win->y0,
          &win->h);
    place(W, crop_w, sl_ctx_arg_float(ctx, a->base + SL__A_CROP_POS_X, i), truncate, &win->x0,
          &win->w);

    int64_t in[2] = {H, W}, anchor[2] = {win->y0, win->x0}, shape[2] = {win->h, win->w};
    sl__oob policy = a->policy < 0 ? SL__OOB_ERROR : sl__oob_parse(sl_ctx_arg_str(ctx, a->policy));
    if (!sl__oob_apply(policy, 2, in, anchor, shape))
        return sl_fail(ctx, SL_EINVAL,
                       "Slice can't be placed out of bounds with current policy. Got: window "
                       "anchor (y %lld, x %lld), shape (%lld, %lld) on an image of %lld x %lld "
                       "(H x W)%s",
                       (long long)win->y0, (long long)win->x0, (long long)win->h, (long long)win->w,
                       (long long)H, (long long)W,
                       a->policy < 0 ? ""
                                     : "; out_of_bounds_policy \"pad\" or \"trim_to_shape\" "
                                       "allow it");
    win->y0 = anchor[0], win->x0 = anchor[1];
    win->h = shape[0], win->w = shape[1];
    return SL_OK;
}

sl_status sl__crop_window_roi(sl_ctx *ctx, int i, bool chw)
{
    const sl__crop_window *win = (const sl__crop_window *)sl_ctx_iter_data(ctx) + i;
    const int64_t *s = sl_batch_shape(sl_ctx_input(ctx, 0), i);
    int64_t lo[3] = {0, 0, 0}, hi[3] = {s[0], s[1], s[2]};
    lo[chw] = win->y0, hi[chw] = win->y0 + win->h; /* clipped to the image by the executor */
    lo[chw + 1] = win->x0, hi[chw + 1] = win->x0 + win->w;
    sl_ctx_input_roi(ctx, 0, i, lo, hi);
    return SL_OK;
}
