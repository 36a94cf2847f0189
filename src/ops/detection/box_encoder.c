/* box_encoder: matches boxes to anchors and encodes them, SSD's target assignment (DALI's
 * fn.box_encoder).
 *
 * Exports: const sl_op_def sl_op_box_encoder ("box_encoder", CPU and GPU).
 *
 * Inputs: boxes float32 (N, 4) [l, t, r, b] and labels int32 (N) or (N, 1). `anchors` is a flat
 * list of A [l, t, r, b] boxes. Matching (in float, as DALI, so ties resolve the same way):
 * IoU of every box with every anchor; each box's best anchor (the last of equal ones) gets IoU 2
 * so every box is matched at least once; then each anchor takes its best box (the last of
 * equal ones) when that IoU exceeds `criteria`. Outputs (A, 4) and (A): without `offset`, an
 * unmatched anchor is written as itself and a matched one as its box, both as [cx, cy, w, h],
 * with label 0 when unmatched; with `offset`, unmatched anchors are 0 and matched ones are SSD's
 * offsets ((c_box - c_anchor) / wh_anchor - means[0..1]) / stds[0..1] and
 * (log(wh_box / wh_anchor) - means[2..3]) / stds[2..3], boxes and anchors first multiplied by
 * `scale`.
 * The arithmetic of one box and anchor (IoU, encoding) is box_match.h's, which the GPU run
 * (box_encoder.cu: one thread per box finds its best anchor, then one per anchor its best box)
 * shares, so both devices give the same floats (the device's logf aside, for offsets).
 */
#include <math.h>
#include <string.h>

#include "sluice/op.h"

#include "core/core.h"
#include "ops/detection/box_encoder_gpu.h"
#include "ops/detection/box_match.h"
#include "ops/detection/boxes.h"

enum { A_ANCHORS, A_CRITERIA, A_OFFSET, A_SCALE, A_MEANS, A_STDS, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_ANCHORS] = {.name = "anchors",
                   .type = SL_ARG_FLOATS,
                   .doc = "The anchors (default boxes): a flat list of [l, t, r, b] boxes.",
                   .min_len = 4},
    [A_CRITERIA] = {.name = "criteria",
                    .type = SL_ARG_FLOAT,
                    .def = "0.5",
                    .doc = "IoU above which an anchor is matched with its best box.",
                    .flags = SL_ARG_RANGE,
                    .min = 0.0,
                    .max = 1.0},
    [A_OFFSET] = {.name = "offset",
                  .type = SL_ARG_BOOL,
                  .def = "false",
                  .doc = "Output SSD's normalised offsets from the anchors instead of boxes."},
    [A_SCALE] = {.name = "scale",
                 .type = SL_ARG_FLOAT,
                 .def = "1.0",
                 .doc = "Boxes and anchors are multiplied by this before the offsets are taken."},
    [A_MEANS] = {.name = "means",
                 .type = SL_ARG_FLOATS,
                 .def = "[0.0, 0.0, 0.0, 0.0]",
                 .doc = "[x, y, w, h] means subtracted from the offsets.",
                 .min_len = 4,
                 .max_len = 4},
    [A_STDS] = {.name = "stds",
                .type = SL_ARG_FLOATS,
                .def = "[1.0, 1.0, 1.0, 1.0]",
                .doc = "[x, y, w, h] standard deviations the offsets are divided by.",
                .min_len = 4,
                .max_len = 4},
};

static const sl_io_def inputs[] = {
    {"boxes", "Boxes, float32 (N, 4) [l, t, r, b]."},
    {"labels", "Their labels, int32 (N) or (N, 1)."},
};
static const sl_io_def outputs[] = {
    {"encoded_boxes", "One box per anchor, float32 (A, 4) [cx, cy, w, h] or offsets."},
    {"encoded_labels", "One label per anchor, int32 (A); 0 for the unmatched."},
};

typedef struct state {
    int na;
    sl__box_enc enc;
    float *anchors; /* na x [l, t, r, b] */
} state;

static sl_status be_init(sl_op_init *ini, void **st)
{
    *st = NULL;
    int n;
    const double *a = sl_init_arg_floats(ini, A_ANCHORS, &n);
    if (n % 4)
        return sl_init_fail(ini, SL_EINVAL,
                            "anchors has %d values: give a flat list of [l, t, r, b] boxes", n);
    const double *m = sl_init_arg_floats(ini, A_MEANS, &n);
    const double *s = sl_init_arg_floats(ini, A_STDS, &n);
    for (int k = 0; k < 4; k++)
        if (!(s[k] != 0.0))
            return sl_init_fail(ini, SL_EINVAL, "stds[%d] is 0; offsets are divided by it", k);
    int na;
    sl_init_arg_floats(ini, A_ANCHORS, &na);
    state *S = sl__calloc(1, sizeof *S);
    if (!S || !(S->anchors = sl__malloc((size_t)na * sizeof(float)))) {
        sl__free(S);
        return sl_init_fail(ini, SL_ENOMEM, "out of memory for %d anchors", na / 4);
    }
    S->na = na / 4;
    for (int k = 0; k < na; k++)
        S->anchors[k] = (float)a[k];
    for (int k = 0; k < 4; k++) {
        S->enc.means[k] = (float)m[k];
        S->enc.stds[k] = (float)s[k];
    }
    S->enc.criteria = (float)sl_init_arg_float(ini, A_CRITERIA);
    S->enc.scale = (float)sl_init_arg_float(ini, A_SCALE);
    S->enc.offset = sl_init_arg_bool(ini, A_OFFSET);
    *st = S;
    return SL_OK;
}

static void be_fini(void *st)
{
    state *S = st;
    if (S)
        sl__free(S->anchors);
    sl__free(S);
}

static sl_status be_setup(sl_ctx *ctx)
{
    const state *S = sl_ctx_state(ctx);
    sl_status st = sl__boxes_check(ctx, 0, false);
    if (st != SL_OK)
        return st;
    const sl_batch *lb = sl_ctx_input(ctx, 1);
    if (sl_batch_dtype(lb) != SL_DTYPE_INT32)
        return sl_fail(ctx, SL_EINVAL, "labels (input 1) must be int32, got %s",
                       sl_dtype_name(sl_batch_dtype(lb)));
    sl_ctx_set_output(ctx, 0, SL_DTYPE_FLOAT32, 2, NULL);
    sl_ctx_set_output(ctx, 1, SL_DTYPE_INT32, 1, NULL);
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++) {
        int64_t nb = sl_batch_shape(sl_ctx_input(ctx, 0), i)[0];
        int64_t nl = sl_batch_sample_numel(lb, i);
        if (nl != nb || sl_batch_ndim(lb) > 2) {
            sl_ctx_focus_sample(ctx, i);
            st =
                sl_fail(ctx, SL_EINVAL, "%lld boxes but %lld labels (expected shape (N) or (N, 1))",
                        (long long)nb, (long long)nl);
            sl_ctx_focus_sample(ctx, -1);
            return st;
        }
        int64_t s0[2] = {S->na, 4}, s1[1] = {S->na};
        sl_ctx_set_shape(ctx, 0, i, s0);
        sl_ctx_set_shape(ctx, 1, i, s1);
    }
    return SL_OK;
}

static sl_status be_run_sample(sl_ctx *ctx, int i)
{
    const state *S = sl_ctx_state(ctx);
    const int na = S->na;
    const int64_t nb = sl_batch_shape(sl_ctx_input(ctx, 0), i)[0];
    const float *boxes = sl_batch_sample_data(sl_ctx_input(ctx, 0), i);
    const int32_t *labels = sl_batch_sample_data(sl_ctx_input(ctx, 1), i);
    float *ob = sl_ctx_output_data(ctx, 0, i);
    int32_t *ol = sl_ctx_output_data(ctx, 1, i);
    for (int a = 0; a < na; a++) {
        sl__box_unmatched(&S->enc, S->anchors + 4 * a, ob + 4 * a);
        ol[a] = 0;
    }
    if (nb == 0 || na == 0)
        return SL_OK;
    if ((size_t)nb > SIZE_MAX / sizeof(float) / (size_t)na)
        return sl_fail(ctx, SL_ENOMEM, "%lld boxes x %d anchors is too many", (long long)nb, na);
    float *ious = sl_ctx_scratch(ctx, (size_t)nb * (size_t)na * sizeof(float));
    if (!ious)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %lld x %d IoUs", (long long)nb, na);
    for (int64_t b = 0; b < nb; b++) {
        float *row = ious + b * na, best = -1.0f;
        int best_a = 0;
        for (int a = 0; a < na; a++) {
            row[a] = sl__box_iou(boxes + 4 * b, S->anchors + 4 * a);
            if (row[a] >= best) {
                best = row[a];
                best_a = a;
            }
        }
        row[best_a] = 2.0f; /* every box gets its best anchor */
    }
    for (int a = 0; a < na; a++) {
        int64_t best_b = 0;
        float best = ious[a];
        for (int64_t b = 1; b < nb; b++)
            if (ious[b * na + a] >= best) {
                best = ious[b * na + a];
                best_b = b;
            }
        if (!(best > S->enc.criteria))
            continue;
        ol[a] = labels[best_b];
        sl__box_encode(&S->enc, boxes + 4 * best_b, S->anchors + 4 * a, ob + 4 * a);
    }
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
static sl_status be_run_gpu(sl_ctx *ctx)
{
    const state *S = sl_ctx_state(ctx);
    const int n = sl_ctx_batch_size(ctx);
    sl__gboxenc *s = sl_ctx_scratch(ctx, sizeof(sl__gboxenc) * (size_t)(n > 0 ? n : 1));
    if (!s)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    int64_t best = 0;
    for (int i = 0; i < n; i++) {
        s[i] = (sl__gboxenc){.boxes = sl_batch_sample_data(sl_ctx_input(ctx, 0), i),
                             .labels = sl_batch_sample_data(sl_ctx_input(ctx, 1), i),
                             .out_boxes = sl_ctx_output_data(ctx, 0, i),
                             .out_labels = sl_ctx_output_data(ctx, 1, i),
                             .nb = sl_batch_shape(sl_ctx_input(ctx, 0), i)[0],
                             .best = best};
        best += s[i].nb;
    }
    return sl__gpu_box_encode(ctx, s, n, S->anchors, S->na, &S->enc);
}
#endif

const sl_op_def sl_op_box_encoder = {
    .name = "box_encoder",
    .doc = "Matches boxes with anchors and encodes them, SSD's training targets (DALI's "
           "box_encoder).\n\n"
           "Boxes float32 (N, 4) [l, t, r, b] and int32 labels (N) or (N, 1) become one box "
           "and one label per anchor (`anchors`: a flat [l, t, r, b] list): every box gets its "
           "best anchor, and each anchor whose best IoU exceeds `criteria` gets that box. "
           "Output boxes are [cx, cy, w, h] (unmatched: the anchor itself, label 0); with "
           "`offset=True` SSD's offsets normalised by `means` / `stds` after multiplying by "
           "`scale` (unmatched: 0).\n\n"
           "`device=\"gpu\"` encodes on the GPU (as DALI's gpu backend: the same outputs, "
           "shapes and types; offsets may differ from the CPU's in the last bit of the log).",
    .inputs = inputs,
    .min_inputs = 2,
    .max_inputs = 2,
    .outputs = outputs,
    .num_outputs = 2,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .init = be_init,
    .setup = be_setup,
    .run_sample = be_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = be_run_gpu,
#endif
    .fini = be_fini,
};
