/* ssd_random_crop: SSD's random crop of an image with its boxes and labels (DALI's
 * fn.ssd_random_crop, deprecated there in favour of random_bbox_crop + slice).
 *
 * Exports: const sl_op_def sl_op_ssd_random_crop ("ssd_random_crop", CPU).
 *
 * Inputs: an HWC image (any type), boxes float32 (N, 4) [l, t, r, b] normalised, labels (N rows,
 * any type). Per sample, from its own random stream: pick one of the options {no crop, min IoU
 * 0.1, 0.3, 0.5, 0.7, 0.9, any} uniformly; no crop returns the three inputs unchanged; else up to
 * num_attempts times draw w, h uniform in [0.3, 1] (rejecting w / h outside [0.5, 2]), then
 * left in [0, 1 - w] and top in [0, 1 - h]; the window is accepted when no box has an IoU with
 * it below the minimum and at least one box's centre lies inside it (inclusive). Then pick
 * again (after 10000 picks: no crop, where DALI would loop for ever). The image is cropped to
 * columns [round(left W), round((left + w) W)) and rows likewise; kept boxes become
 * ((l - left) / w, (t - top) / h, ...) clipped to [0, 1], with their labels.
 */
#include <math.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/detection/boxes.h"

enum { A_NUM_ATTEMPTS, A_SEED, NUM_ARGS };

#define MAX_PICKS 10000

static const sl_arg_def args[NUM_ARGS] = {
    [A_NUM_ATTEMPTS] = {.name = "num_attempts",
                        .type = SL_ARG_INT,
                        .def = "1",
                        .doc = "Windows drawn for one picked IoU threshold before picking again.",
                        .flags = SL_ARG_RANGE,
                        .min = 1,
                        .max = 1e9},
    [A_SEED] = SL_ARG_SEED_DEF,
};

static const sl_io_def inputs[] = {
    {"images", "HWC images, any type."},
    {"boxes", "Boxes, float32 (N, 4) [l, t, r, b], normalised."},
    {"labels", "Labels, N rows (int32 (N) in DALI)."},
};
static const sl_io_def outputs[] = {
    {"images", "The cropped images, HWC."},
    {"boxes", "The kept boxes relative to the crop, float32 (M, 4)."},
    {"labels", "The kept boxes' labels."},
};

typedef struct window {
    bool crop;
    double l, t, w, h;
    int64_t x0, y0, x1, y1; /* pixel bounds, [x0, x1) x [y0, y1) */
    int64_t kept;
} window;

static sl_status src_setup(sl_ctx *ctx)
{
    const sl_batch *img = sl_ctx_input(ctx, 0), *lb = sl_ctx_input(ctx, 2);
    if (sl_batch_ndim(img) != 3)
        return sl_fail(ctx, SL_EINVAL, "images must be HWC (3-D), got %d-D", sl_batch_ndim(img));
    const char *l = sl_batch_layout(img);
    if (l[0] && strcmp(l, "HWC") != 0)
        return sl_fail(ctx, SL_EINVAL, "images must have layout HWC, got \"%s\"", l);
    sl_status st = sl__boxes_check(ctx, 1, false);
    if (st != SL_OK)
        return st;
    if (sl_batch_ndim(lb) < 1)
        return sl_fail(ctx, SL_EINVAL, "labels (input 2) need one row per box; got scalars");
    sl_ctx_set_output(ctx, 0, sl_batch_dtype(img), 3, sl_batch_layout(img));
    sl_ctx_set_output(ctx, 1, SL_DTYPE_FLOAT32, 2, sl_batch_layout(sl_ctx_input(ctx, 1)));
    sl_ctx_set_output(ctx, 2, sl_batch_dtype(lb), sl_batch_ndim(lb), sl_batch_layout(lb));
    return SL_OK;
}

static bool inside(const float *b, const window *w)
{
    double xc = 0.5 * (b[0] + b[2]), yc = 0.5 * (b[1] + b[3]);
    return xc >= w->l && xc <= w->l + w->w && yc >= w->t && yc <= w->t + w->h;
}

/* Draws sample i's window. */
static void choose(sl_ctx *ctx, int i, window *win)
{
    static const double min_iou[] = {0.1, 0.3, 0.5, 0.7, 0.9, -INFINITY};
    const sl_batch *bb = sl_ctx_input(ctx, 1);
    const int64_t n = sl_batch_shape(bb, i)[0];
    const float *boxes = sl_batch_sample_data(bb, i);
    const int64_t attempts = sl_ctx_arg_int(ctx, A_NUM_ATTEMPTS, i);
    sl_rng r = sl_ctx_rng(ctx, i);
    memset(win, 0, sizeof *win);
    for (int pick = 0; pick < MAX_PICKS; pick++) {
        uint64_t opt = sl_rng_below(&r, 7);
        if (opt == 0)
            return; /* no crop */
        const double th = min_iou[opt - 1];
        for (int64_t a = 0; a < attempts; a++) {
            window w = {.crop = true};
            w.w = 0.3 + 0.7 * sl_rng_uniform(&r);
            w.h = 0.3 + 0.7 * sl_rng_uniform(&r);
            if (w.w / w.h < 0.5 || w.w / w.h > 2.0)
                continue;
            w.l = (1.0 - w.w) * sl_rng_uniform(&r);
            w.t = (1.0 - w.h) * sl_rng_uniform(&r);
            const float c[4] = {(float)w.l, (float)w.t, (float)(w.l + w.w), (float)(w.t + w.h)};
            bool fail = false;
            for (int64_t k = 0; k < n && !fail; k++) {
                const float *b = boxes + 4 * k;
                float iw = fminf(b[2], c[2]) - fmaxf(b[0], c[0]);
                float ih = fminf(b[3], c[3]) - fmaxf(b[1], c[1]);
                float in = (iw < 0 ? 0 : iw) * (ih < 0 ? 0 : ih);
                float a1 = (b[3] - b[1]) * (b[2] - b[0]), a2 = (c[3] - c[1]) * (c[2] - c[0]);
                fail = in / (a1 + a2 - in) < th;
            }
            if (fail)
                continue;
            for (int64_t k = 0; k < n; k++)
                w.kept += inside(boxes + 4 * k, &w);
            if (!w.kept)
                continue;
            *win = w;
            return;
        }
    }
}

static sl_status src_setup_sample(sl_ctx *ctx, int i)
{
    const sl_batch *img = sl_ctx_input(ctx, 0), *lb = sl_ctx_input(ctx, 2);
    const int64_t n = sl_batch_shape(sl_ctx_input(ctx, 1), i)[0];
    if (sl_batch_shape(lb, i)[0] != n)
        return sl_fail(ctx, SL_EINVAL, "%lld boxes but %lld labels", (long long)n,
                       (long long)sl_batch_shape(lb, i)[0]);
    window *w = (window *)sl_ctx_iter_data(ctx) + i;
    choose(ctx, i, w);
    const int64_t *is = sl_batch_shape(img, i);
    int64_t shape[3] = {is[0], is[1], is[2]};
    if (w->crop) {
        const int64_t H = is[0], W = is[1];
        w->x0 = llround(w->l * (double)W);
        w->y0 = llround(w->t * (double)H);
        w->x1 = llround((w->l + w->w) * (double)W);
        w->y1 = llround((w->t + w->h) * (double)H);
        w->x1 = w->x1 > W ? W : w->x1;
        w->y1 = w->y1 > H ? H : w->y1;
        shape[0] = w->y1 - w->y0;
        shape[1] = w->x1 - w->x0;
    } else {
        w->kept = n;
    }
    sl_ctx_set_shape(ctx, 0, i, shape);
    int64_t bs[2] = {w->kept, 4};
    sl_ctx_set_shape(ctx, 1, i, bs);
    int64_t ls[SL_MAX_NDIM];
    memcpy(ls, sl_batch_shape(lb, i), (size_t)sl_batch_ndim(lb) * sizeof *ls);
    ls[0] = w->kept;
    sl_ctx_set_shape(ctx, 2, i, ls);
    return SL_OK;
}

static sl_status src_run_sample(sl_ctx *ctx, int i)
{
    const window *w = (const window *)sl_ctx_iter_data(ctx) + i;
    const sl_batch *img = sl_ctx_input(ctx, 0), *bb = sl_ctx_input(ctx, 1),
                   *lb = sl_ctx_input(ctx, 2);
    const int64_t n = sl_batch_shape(bb, i)[0];
    const size_t es = sl_dtype_size(sl_batch_dtype(img));
    const int64_t *is = sl_batch_shape(img, i);
    const unsigned char *src = sl_batch_sample_data(img, i);
    unsigned char *dst = sl_ctx_output_data(ctx, 0, i);
    const float *boxes = sl_batch_sample_data(bb, i);
    float *ob = sl_ctx_output_data(ctx, 1, i);
    const unsigned char *lab = sl_batch_sample_data(lb, i);
    unsigned char *ol = sl_ctx_output_data(ctx, 2, i);
    const size_t row =
        n ? (size_t)(sl_batch_sample_numel(lb, i) / n) * sl_dtype_size(sl_batch_dtype(lb)) : 0;
    if (!w->crop) {
        if (sl_batch_sample_numel(img, i)) /* empty tensors may have no storage */
            memcpy(dst, src, (size_t)sl_batch_sample_numel(img, i) * es);
        if (n) {
            memcpy(ob, boxes, (size_t)n * 4 * sizeof *ob);
            memcpy(ol, lab, (size_t)n * row);
        }
        return SL_OK;
    }
    const size_t px = (size_t)is[2] * es, in_row = (size_t)is[1] * px;
    const size_t out_row = (size_t)(w->x1 - w->x0) * px;
    for (int64_t y = w->y0; y < w->y1; y++)
        memcpy(dst + (size_t)(y - w->y0) * out_row, src + (size_t)y * in_row + (size_t)w->x0 * px,
               out_row);
    int64_t m = 0;
    const double minus[4] = {w->l, w->t, w->l, w->t}, scale[4] = {w->w, w->h, w->w, w->h};
    for (int64_t k = 0; k < n; k++) {
        const float *b = boxes + 4 * k;
        if (!inside(b, w))
            continue;
        for (int c = 0; c < 4; c++)
            ob[4 * m + c] = (float)fmin(fmax((b[c] - minus[c]) / scale[c], 0.0), 1.0);
        memcpy(ol + (size_t)m * row, lab + (size_t)k * row, row);
        m++;
    }
    return SL_OK;
}

const sl_op_def sl_op_ssd_random_crop = {
    .name = "ssd_random_crop",
    .doc = "Crops an image at random the way SSD's training does, with its boxes and labels "
           "(DALI's ssd_random_crop).\n\n"
           "Per sample one of {no crop, minimum IoU 0.1, 0.3, 0.5, 0.7, 0.9, any} is picked; a "
           "window of relative size in [0.3, 1] (aspect 0.5 to 2) is accepted when every box "
           "reaches the IoU and a box's centre lies inside, within `num_attempts` tries, or "
           "another option is picked. Outputs the cropped HWC image, the kept boxes relative "
           "to it (float32 (M, 4) [l, t, r, b]) and their labels. DALI deprecates it for "
           "random_bbox_crop + slice.\n\n"
           "Differs from DALI: after 10000 picks without a window it returns the inputs "
           "uncropped (DALI loops for ever); any image type, not only uint8.",
    .inputs = inputs,
    .min_inputs = 3,
    .max_inputs = 3,
    .outputs = outputs,
    .num_outputs = 3,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_RANDOM,
    .iter_bytes_per_sample = sizeof(window),
    .setup = src_setup,
    .setup_sample = src_setup_sample,
    .run_sample = src_run_sample,
};
