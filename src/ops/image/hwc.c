/* ops/image/hwc.c: the image families' checks of element types and HWC inputs (see hwc.h). */
#include <string.h>

#include "ops/image/hwc.h"

sl_status sl__hwc_dtype_check(sl_op_init *ini, int dtype_arg)
{
    if (!sl_init_arg_is_set(ini, dtype_arg))
        return SL_OK;
    sl_dtype t = sl_init_arg_dtype(ini, dtype_arg);
    if (t != SL_DTYPE_UINT8 && t != SL_DTYPE_FLOAT32)
        return sl_init_fail(ini, SL_EUNSUPPORTED, "dtype %s is not supported; use uint8 or float32",
                            sl_dtype_name(t));
    return SL_OK;
}

sl_dtype sl__hwc_out_type(const sl_ctx *ctx, int dtype_arg)
{
    if (dtype_arg >= 0 && sl_ctx_arg_is_set(ctx, dtype_arg))
        return sl_ctx_arg_dtype(ctx, dtype_arg);
    return sl_batch_dtype(sl_ctx_input(ctx, 0));
}

sl_status sl__hwc_check(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const char *layout = sl_batch_layout(in);
    sl_dtype t = sl_batch_dtype(in);
    if (sl_batch_ndim(in) != 3)
        return sl_fail(ctx, SL_EINVAL, "expected HWC images (3 dimensions), got %d dimensions",
                       sl_batch_ndim(in));
    if (layout[0] && strcmp(layout, "HWC") != 0)
        return sl_fail(ctx, SL_EUNSUPPORTED,
                       "input layout \"%s\" is not supported; expected \"HWC\"", layout);
    if (t != SL_DTYPE_UINT8 && t != SL_DTYPE_FLOAT32)
        return sl_fail(ctx, SL_EUNSUPPORTED,
                       "input type %s is not supported; expected uint8 or float32",
                       sl_dtype_name(t));
    return SL_OK;
}

sl_status sl__hwc_setup(sl_ctx *ctx, int dtype_arg)
{
    sl_status st = sl__hwc_check(ctx);
    if (st == SL_OK)
        sl_ctx_set_output(ctx, 0, sl__hwc_out_type(ctx, dtype_arg), 3, "HWC");
    return st;
}
