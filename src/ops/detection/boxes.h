/* boxes.h: the family helper of the detection operators: checks of box tensors.
 *
 * A batch of boxes is float32 (N, 4) ([x, y, w, h] or [l, t, r, b]) or, for 3-D boxes, (N, 6);
 * these checks name the operator's expectation in the error.
 */
#ifndef SLUICE_OPS_DETECTION_BOXES_H
#define SLUICE_OPS_DETECTION_BOXES_H

#include "sluice/op.h"

/* Input `input` must be float32 with shape (N, 4) (allow6: or (N, 6)) in every sample; an
 * empty batch passes. Returns SL_OK or an error naming the sample. */
sl_status sl__boxes_check(sl_ctx *ctx, int input, bool allow6);

#endif
