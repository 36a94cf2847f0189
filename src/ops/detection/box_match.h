/* ops/detection/box_match.h: box_encoder's per-box arithmetic, shared by its CPU run
 * (box_encoder.c) and its GPU kernels (box_encoder.cu) so both compute the same floats
 * (internal; C and CUDA C++).
 *
 * Exports sl__box_iou, sl__box_center_wh, sl__box_encode (static inline; __host__ __device__
 * under nvcc). Boxes are float [l, t, r, b].
 */
#ifndef SLUICE_OPS_DETECTION_BOX_MATCH_H
#define SLUICE_OPS_DETECTION_BOX_MATCH_H

#include <math.h>
#include <stdbool.h>
#include <string.h>

#ifdef __CUDACC__
#define SL__BOX_HD __host__ __device__ __forceinline__
#else
#define SL__BOX_HD inline
#endif

/* The encoding parameters (box_encoder's arguments, as float). */
typedef struct sl__box_enc {
    float criteria, scale, means[4], stds[4];
    bool offset;
} sl__box_enc;

static SL__BOX_HD float sl__box_area(const float *b)
{
    return (b[2] - b[0]) * (b[3] - b[1]);
}

/* Intersection over union of a and b; 0 when they do not overlap. */
static SL__BOX_HD float sl__box_iou(const float *a, const float *b)
{
    float l = fmaxf(a[0], b[0]), t = fmaxf(a[1], b[1]);
    float r = fminf(a[2], b[2]), btm = fminf(a[3], b[3]);
    if (r <= l || btm <= t)
        return 0.0f;
    float in = (r - l) * (btm - t);
    return in / (sl__box_area(a) + sl__box_area(b) - in);
}

/* [l, t, r, b] -> [cx, cy, w, h]. */
static SL__BOX_HD void sl__box_center_wh(const float *b, float *out)
{
    out[0] = 0.5f * (b[0] + b[2]);
    out[1] = 0.5f * (b[1] + b[3]);
    out[2] = b[2] - b[0];
    out[3] = b[3] - b[1];
}

/* The encoded output o[4] of an anchor matched with box (both [l, t, r, b]): the box as
 * [cx, cy, w, h], or with e->offset SSD's normalised offsets from the anchor. */
static SL__BOX_HD void sl__box_encode(const sl__box_enc *e, const float *box_ltrb,
                                      const float *anchor_ltrb, float *o)
{
    float box[4], anc[4];
    sl__box_center_wh(box_ltrb, box);
    if (!e->offset) {
        for (int k = 0; k < 4; k++)
            o[k] = box[k];
        return;
    }
    sl__box_center_wh(anchor_ltrb, anc);
    for (int k = 0; k < 4; k++) {
        box[k] *= e->scale;
        anc[k] *= e->scale;
    }
    o[0] = ((box[0] - anc[0]) / anc[2] - e->means[0]) / e->stds[0];
    o[1] = ((box[1] - anc[1]) / anc[3] - e->means[1]) / e->stds[1];
    o[2] = (logf(box[2] / anc[2]) - e->means[2]) / e->stds[2];
    o[3] = (logf(box[3] / anc[3]) - e->means[3]) / e->stds[3];
}

/* An unmatched anchor's output: 0 with offsets, else the anchor as [cx, cy, w, h]. */
static SL__BOX_HD void sl__box_unmatched(const sl__box_enc *e, const float *anchor_ltrb, float *o)
{
    if (e->offset) {
        for (int k = 0; k < 4; k++)
            o[k] = 0.0f;
    } else {
        sl__box_center_wh(anchor_ltrb, o);
    }
}

#endif
