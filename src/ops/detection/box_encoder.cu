/* ops/detection/box_encoder.cu: the kernels of box_encoder's GPU run (box_encoder_gpu.h).
 *
 * Exports sl__gpu_box_encode. Two launches on the node's stream:
 *   best anchor   one thread per box: the IoU with every anchor in order, the last of the
 *                 largest kept (box_encoder.c's `>=`), into the node's device scratch;
 *   match         one thread per anchor: the IoU with every box in order (2 for the boxes whose
 *                 best anchor it is), the last of the largest kept; above criteria the anchor
 *                 gets that box's encoding and label, else the unmatched output.
 * The CPU keeps the IoU matrix; here each IoU is computed again where it is needed, with the
 * same function (box_match.h) on the same floats, so the choices are the same. Consecutive
 * threads read the same box (first launch) or consecutive anchors; the boxes of a sample are
 * few (tens), the anchors thousands.
 * Exactness: IoUs, choices, labels and [cx, cy, w, h] outputs are the CPU's bit for bit (nvcc
 * --fmad=false); offsets use logf, the device's within 1 ulp of glibc's (the host's when the
 * GPU is emulated).
 * Invariant: jobs are upload buffer 0, anchors buffer 1; best anchors live in device scratch 0.
 */
#include "ops/detection/box_encoder_gpu.h"
#include "cuda/kernel.cuh"

struct best_anchor_k {
    const sl__gboxenc *s;
    const float *anchors;
    int na;
    int32_t *best; /* device scratch */

    SL_HD int64_t count(int i) const
    {
        return s[i].nb;
    }
    SL_HD void operator()(int i, int64_t b) const
    {
        const sl__gboxenc &j = s[i];
        float top = -1.0f;
        int32_t top_a = 0;
        for (int a = 0; a < na; a++) {
            const float v = sl__box_iou(j.boxes + 4 * b, anchors + 4 * a);
            if (v >= top) {
                top = v;
                top_a = a;
            }
        }
        best[j.best + b] = top_a;
    }
};

struct match_k {
    const sl__gboxenc *s;
    const float *anchors;
    const int32_t *best;
    sl__box_enc e;
    int na;

    SL_HD int64_t count(int i) const
    {
        return s[i].nb > 0 ? na : 0;
    }
    SL_HD void operator()(int i, int64_t a) const
    {
        const sl__gboxenc &j = s[i];
        const float *anchor = anchors + 4 * a;
        float top = 0.0f;
        int64_t top_b = 0;
        for (int64_t b = 0; b < j.nb; b++) {
            const float v = best[j.best + b] == a ? 2.0f : sl__box_iou(j.boxes + 4 * b, anchor);
            if (b == 0 || v >= top) {
                top = v;
                top_b = b;
            }
        }
        if (top > e.criteria) {
            sl__box_encode(&e, j.boxes + 4 * top_b, anchor, j.out_boxes + 4 * a);
            j.out_labels[a] = j.labels[top_b];
        } else {
            sl__box_unmatched(&e, anchor, j.out_boxes + 4 * a);
            j.out_labels[a] = 0;
        }
    }
};

/* Samples without boxes: every anchor unmatched. */
struct unmatched_k {
    const sl__gboxenc *s;
    const float *anchors;
    sl__box_enc e;
    int na;

    SL_HD int64_t count(int i) const
    {
        return s[i].nb > 0 ? 0 : na;
    }
    SL_HD void operator()(int i, int64_t a) const
    {
        sl__box_unmatched(&e, anchors + 4 * a, s[i].out_boxes + 4 * a);
        s[i].out_labels[a] = 0;
    }
};

extern "C" sl_status sl__gpu_box_encode(sl_ctx *ctx, const sl__gboxenc *s, int n,
                                        const float *anchors, int na, const sl__box_enc *e)
{
    if (n <= 0 || na <= 0)
        return SL_OK;
    int64_t nbest = 0, max_nb = 0;
    bool empty = false;
    for (int i = 0; i < n; i++) {
        nbest += s[i].nb;
        max_nb = s[i].nb > max_nb ? s[i].nb : max_nb;
        empty |= s[i].nb == 0;
    }
    const sl__gboxenc *ds = sl_gpu_params(ctx, 0, s, n);
    const float *da = ds ? sl_gpu_params(ctx, 1, anchors, 4 * na) : NULL;
    if (!da)
        return SL_ENOMEM; /* recorded by the upload */
    sl_status st = SL_OK;
    if (empty)
        st = sl_gpu_each(ctx, n, na, unmatched_k{ds, da, *e, na}, "box_encoder");
    if (st != SL_OK || max_nb == 0)
        return st;
    int32_t *best = (int32_t *)sl_ctx_gpu_scratch(ctx, 0, sizeof(int32_t) * (size_t)nbest);
    if (!best)
        return SL_ENOMEM; /* recorded */
    st = sl_gpu_each(ctx, n, max_nb, best_anchor_k{ds, da, na, best}, "box_encoder (boxes)");
    if (st != SL_OK)
        return st;
    match_k m = {ds, da, best, *e, na};
    return sl_gpu_each(ctx, n, na, m, "box_encoder (anchors)");
}
