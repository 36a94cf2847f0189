/* boxes.c: checks of box tensors shared by the detection operators (boxes.h). */
#include "ops/detection/boxes.h"

sl_status sl__boxes_check(sl_ctx *ctx, int input, bool allow6)
{
    const sl_batch *in = sl_ctx_input(ctx, input);
    if (sl_batch_dtype(in) != SL_DTYPE_FLOAT32)
        return sl_fail(ctx, SL_EINVAL, "boxes (input %d) must be float32, got %s", input,
                       sl_dtype_name(sl_batch_dtype(in)));
    if (sl_batch_ndim(in) != 2)
        return sl_fail(ctx, SL_EINVAL, "boxes (input %d) must be a 2-D tensor (N, %s), got %d-D",
                       input, allow6 ? "4 or 6" : "4", sl_batch_ndim(in));
    for (int i = 0; i < sl_batch_size(in); i++) {
        int64_t c = sl_batch_shape(in, i)[1];
        if (c != 4 && !(allow6 && c == 6)) {
            sl_ctx_focus_sample(ctx, i);
            sl_status st = sl_fail(ctx, SL_EINVAL,
                                   "boxes (input %d) must have shape (N, %s): sample %d has %lld "
                                   "coordinates per box",
                                   input, allow6 ? "4 or 6" : "4", i, (long long)c);
            sl_ctx_focus_sample(ctx, -1);
            return st;
        }
    }
    return SL_OK;
}
