/* segmentation.random_object_bbox: the bounding box of a randomly chosen object of a label
 * mask (DALI's fn.segmentation.random_object_bbox).
 *
 * Exports: const sl_op_def sl_op_segmentation_random_object_bbox
 * ("segmentation.random_object_bbox", CPU).
 *
 * The input is an N-D integer label mask. Per sample, from its own random stream: with
 * probability `foreground_prob` a foreground object is chosen: a class is drawn among the
 * classes present (those of `classes`, or every label but the background), weighted by
 * `class_weights` (aligned with `classes`, or with labels 1, 2, ...; default equal); its
 * objects are the face-connected components of the pixels of that class (with `ignore_class`,
 * of all non-background pixels); those with a box extent below `threshold` in some dimension
 * are dropped, `k_largest` keeps the k largest by box volume; one is drawn uniformly. Otherwise,
 * or when nothing qualifies, the box is the whole input and the class the background
 * (`background`, default 0, or min(classes) - 1 when classes holds 0).
 * Outputs by `format`: "anchor_shape" (anchor, shape), "start_end" (start, end) or "box" (one
 * [start..., end...]), int32; with `output_class` also the class, int32 scalar.
 */
#include <stdlib.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/tensor.h"

enum {
    A_FORMAT,
    A_BACKGROUND,
    A_CLASSES,
    A_CLASS_WEIGHTS,
    A_FOREGROUND_PROB,
    A_IGNORE_CLASS,
    A_K_LARGEST,
    A_THRESHOLD,
    A_OUTPUT_CLASS,
    A_CACHE_OBJECTS,
    A_SEED,
    NUM_ARGS
};

#define MAX_CLASSES 256

static const sl_arg_def args[NUM_ARGS] = {
    [A_FORMAT] = {.name = "format",
                  .type = SL_ARG_STRING,
                  .def = "\"anchor_shape\"",
                  .doc = "\"anchor_shape\": outputs anchor and shape; \"start_end\": start and "
                         "end; \"box\": one [start..., end...].",
                  .choices = "anchor_shape|start_end|box"},
    [A_BACKGROUND] = {.name = "background",
                      .type = SL_ARG_INT,
                      .doc = "The background label. Default 0, or min(classes) - 1 when classes "
                             "contains 0.",
                      .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR},
    [A_CLASSES] = {.name = "classes",
                   .type = SL_ARG_INTS,
                   .doc = "The foreground classes. Default: every label but the background.",
                   .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR | SL_ARG_SCALAR_OK,
                   .max_len = MAX_CLASSES},
    [A_CLASS_WEIGHTS] = {.name = "class_weights",
                         .type = SL_ARG_FLOATS,
                         .doc = "Relative probabilities of the classes (aligned with classes, "
                                "or with labels 1, 2, ...). Default: equal.",
                         .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR | SL_ARG_SCALAR_OK,
                         .max_len = MAX_CLASSES},
    [A_FOREGROUND_PROB] = {.name = "foreground_prob",
                           .type = SL_ARG_FLOAT,
                           .def = "1.0",
                           .doc = "Probability of choosing a foreground object.",
                           .flags = SL_ARG_TENSOR | SL_ARG_RANGE,
                           .min = 0,
                           .max = 1},
    [A_IGNORE_CLASS] = {.name = "ignore_class",
                        .type = SL_ARG_BOOL,
                        .def = "false",
                        .doc = "Objects are the connected components of all non-background "
                               "pixels, whatever their labels."},
    [A_K_LARGEST] = {.name = "k_largest",
                     .type = SL_ARG_INT,
                     .doc = "Choose among the k largest objects (by box volume) only.",
                     .flags = SL_ARG_OPTIONAL | SL_ARG_RANGE,
                     .min = 1,
                     .max = 1e9},
    [A_THRESHOLD] = {.name = "threshold",
                     .type = SL_ARG_INTS,
                     .doc = "Smallest box extent per dimension (or one for all) of an object.",
                     .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR | SL_ARG_SCALAR_OK},
    [A_OUTPUT_CLASS] = {.name = "output_class",
                        .type = SL_ARG_BOOL,
                        .def = "false",
                        .doc = "Add an output with the chosen object's class."},
    [A_CACHE_OBJECTS] = {.name = "cache_objects",
                         .type = SL_ARG_BOOL,
                         .def = "false",
                         .doc = "Accepted for DALI compatibility; objects are found anew each "
                                "time (the results are the same)."},
    [A_SEED] = SL_ARG_SEED_DEF,
};

static const sl_io_def inputs[] = {{"input", "A label mask: integers, any dimensionality."}};
static const sl_io_def outputs[] = {
    {"anchor", "The box's anchor / start / [start..., end...] (by format), int32."},
    {"shape", "The box's shape / end (formats anchor_shape, start_end), int32 (ndim,)."},
    {"class", "The chosen object's class (output_class), int32 scalar."},
};
static const sl_output_when output_when[] = {
    {.inputs = 0}, {.arg = "format", .unless = "box"}, {.arg = "output_class"}};

static sl_status rob_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    sl_dtype t = sl_batch_dtype(in);
    if (t == SL_DTYPE_FLOAT16 || t == SL_DTYPE_FLOAT32 || t == SL_DTYPE_FLOAT64)
        return sl_fail(ctx, SL_EINVAL, "the mask must hold integer labels, got %s",
                       sl_dtype_name(t));
    const int nd = sl_batch_ndim(in);
    const bool box = strcmp(sl_ctx_arg_str(ctx, A_FORMAT), "box") == 0;
    int o = 0;
    sl_ctx_set_output(ctx, o++, SL_DTYPE_INT32, 1, NULL);
    if (!box)
        sl_ctx_set_output(ctx, o++, SL_DTYPE_INT32, 1, NULL);
    if (sl_ctx_arg_bool(ctx, A_OUTPUT_CLASS, 0))
        sl_ctx_set_output(ctx, o, SL_DTYPE_INT32, 0, NULL);
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++) {
        int64_t s = box ? 2 * nd : nd;
        sl_ctx_set_shape(ctx, 0, i, &s);
        if (!box)
            sl_ctx_set_shape(ctx, 1, i, &s);
        static const int64_t scalar[1] = {0}; /* 0-d: no extents */
        if (sl_ctx_arg_bool(ctx, A_OUTPUT_CLASS, 0))
            sl_ctx_set_shape(ctx, o, i, scalar);
    }
    return SL_OK;
}

/* Labels the face-connected components of the pixels that belong (label cls, or with ignore
 * any label but bg) in comp (1-based ids; 0: not an object pixel). stack: n entries of scratch.
 * Returns the number of components. */
static int64_t components(const int64_t *lab, int64_t n, int nd, const int64_t *shape, bool ignore,
                          int64_t cls, int64_t bg, int32_t *comp, int64_t *stack)
{
    int64_t stride[SL_MAX_NDIM], s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        stride[d] = s;
        s *= shape[d];
    }
    memset(comp, 0, (size_t)n * sizeof *comp);
    int64_t count = 0;
    for (int64_t p = 0; p < n; p++) {
        bool in = ignore ? lab[p] != bg : lab[p] == cls;
        if (!in || comp[p])
            continue;
        count++;
        int64_t top = 0;
        stack[top++] = p;
        comp[p] = (int32_t)count;
        while (top) {
            int64_t q = stack[--top], rem = q;
            for (int d = 0; d < nd; d++) {
                int64_t c = rem / stride[d];
                rem %= stride[d];
                for (int dir = -1; dir <= 1; dir += 2) {
                    if (c + dir < 0 || c + dir >= shape[d])
                        continue;
                    int64_t r = q + dir * stride[d];
                    bool rin = ignore ? lab[r] != bg : lab[r] == cls;
                    if (rin && !comp[r]) {
                        comp[r] = (int32_t)count;
                        stack[top++] = r;
                    }
                }
            }
        }
    }
    return count;
}

/* Sorting objects: largest box volume first, then by index (stable). */
typedef struct ranked {
    double volume;
    int64_t index;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->volume != y->volume)
        return x->volume < y->volume ? 1 : -1;
    return (x->index > y->index) - (x->index < y->index);
}

static sl_status rob_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in);
    const int64_t *shape = sl_batch_shape(in, i), n = sl_batch_sample_numel(in, i);
    sl_rng r = sl_ctx_rng(ctx, i);
    int64_t cls[MAX_CLASSES];
    double w[MAX_CLASSES];
    int ncls = sl_ctx_arg_is_set(ctx, A_CLASSES)
                   ? sl_ctx_arg_ints(ctx, A_CLASSES, i, cls, MAX_CLASSES)
                   : -1;
    int nw = sl_ctx_arg_is_set(ctx, A_CLASS_WEIGHTS)
                 ? sl_ctx_arg_floats(ctx, A_CLASS_WEIGHTS, i, w, MAX_CLASSES)
                 : -1;
    if (ncls > MAX_CLASSES || nw > MAX_CLASSES)
        return sl_fail(ctx, SL_EINVAL, "at most %d classes and weights", MAX_CLASSES);
    if (ncls >= 0 && nw >= 0 && nw != ncls)
        return sl_fail(ctx, SL_EINVAL, "class_weights has %d values but classes has %d", nw, ncls);
    int64_t bg = 0;
    if (sl_ctx_arg_is_set(ctx, A_BACKGROUND))
        bg = sl_ctx_arg_int(ctx, A_BACKGROUND, i);
    else if (ncls > 0) {
        int64_t mn = cls[0];
        bool has0 = false;
        for (int k = 0; k < ncls; k++) {
            mn = cls[k] < mn ? cls[k] : mn;
            has0 |= cls[k] == 0;
        }
        bg = has0 ? mn - 1 : 0;
    }
    for (int k = 0; k < ncls; k++)
        if (cls[k] == bg)
            return sl_fail(ctx, SL_EINVAL, "classes contains the background label %lld",
                           (long long)bg);
    int64_t lo[SL_MAX_NDIM] = {0}, hi[SL_MAX_NDIM];
    memcpy(hi, shape, (size_t)nd * sizeof *hi);
    int64_t out_cls = bg;
    const bool fg = sl_rng_uniform(&r) < sl_ctx_arg_float(ctx, A_FOREGROUND_PROB, i);
    if (fg && n > 0) {
        /* scratch: labels (int64), components (int32), stack (int64) */
        int64_t *lab = sl_ctx_scratch_n(ctx, 0, (size_t)n * sizeof *lab);
        int32_t *comp = sl_ctx_scratch_n(ctx, 1, (size_t)n * sizeof *comp);
        /* n + 1 entries: later reused for up to ceil(n / 2) ranked objects of 16 bytes (a
         * face-connected checkerboard has that many) */
        int64_t *stack = sl_ctx_scratch_n(ctx, 2, ((size_t)n + 1) * sizeof *stack);
        if (!lab || !comp || !stack)
            return sl_fail(ctx, SL_ENOMEM, "out of memory for a mask of %lld pixels", (long long)n);
        sl__convert_get(SL_DTYPE_INT64, sl_batch_dtype(in))(lab, sl_batch_sample_data(in, i), n);
        const bool ignore = sl_ctx_arg_bool(ctx, A_IGNORE_CLASS, i);
        /* candidate classes present in the mask, with their weights */
        int64_t cand[MAX_CLASSES];
        double cw[MAX_CLASSES], total = 0;
        int nc = 0;
        if (ignore) {
            for (int64_t p = 0; p < n && !nc; p++)
                if (lab[p] != bg) {
                    cand[nc] = lab[p];
                    cw[nc++] = 1;
                }
        } else if (ncls >= 0) {
            for (int k = 0; k < ncls; k++) {
                double wk = nw >= 0 ? w[k] : 1.0;
                bool present = false;
                for (int64_t p = 0; p < n && !present; p++)
                    present = lab[p] == cls[k];
                if (present && wk > 0) {
                    cand[nc] = cls[k];
                    cw[nc++] = wk;
                }
            }
        } else {
            for (int64_t p = 0; p < n; p++) { /* distinct labels, sorted */
                int64_t v = lab[p];
                if (v == bg)
                    continue;
                int k = 0;
                while (k < nc && cand[k] < v)
                    k++;
                if (k < nc && cand[k] == v)
                    continue;
                if (nc == MAX_CLASSES)
                    return sl_fail(ctx, SL_EINVAL, "the mask has more than %d labels", MAX_CLASSES);
                memmove(cand + k + 1, cand + k, (size_t)(nc - k) * sizeof *cand);
                cand[k] = v;
                nc++;
            }
            int m = 0;
            for (int k = 0; k < nc; k++) {
                double wk = nw < 0 ? 1.0 : (cand[k] >= 1 && cand[k] <= nw ? w[cand[k] - 1] : 0);
                if (wk > 0) {
                    cand[m] = cand[k];
                    cw[m++] = wk;
                }
            }
            nc = m;
        }
        for (int k = 0; k < nc; k++)
            total += cw[k];
        if (nc > 0 && total > 0) {
            double u = sl_rng_uniform(&r) * total;
            int pick = 0;
            while (pick < nc - 1 && u >= cw[pick]) {
                u -= cw[pick];
                pick++;
            }
            int64_t no = components(lab, n, nd, shape, ignore, cand[pick], bg, comp, stack);
            /* boxes: [lo..., hi...) per object, then a label; in scratch 3 */
            const size_t per = (size_t)(2 * nd + 1);
            int64_t *bx = sl_ctx_scratch_n(ctx, 3, (size_t)no * per * sizeof *bx);
            if (!bx)
                return sl_fail(ctx, SL_ENOMEM, "out of memory for %lld objects", (long long)no);
            for (int64_t k = 0; k < no; k++)
                for (int d = 0; d < nd; d++) {
                    bx[k * per + d] = INT64_MAX;
                    bx[k * per + nd + d] = INT64_MIN;
                }
            int64_t stride[SL_MAX_NDIM], st = 1;
            for (int d = nd - 1; d >= 0; d--) {
                stride[d] = st;
                st *= shape[d];
            }
            for (int64_t p = 0; p < n; p++) {
                if (!comp[p])
                    continue;
                int64_t *b = bx + (size_t)(comp[p] - 1) * per, rem = p;
                for (int d = 0; d < nd; d++) {
                    int64_t c = rem / stride[d];
                    rem %= stride[d];
                    b[d] = c < b[d] ? c : b[d];
                    b[nd + d] = c + 1 > b[nd + d] ? c + 1 : b[nd + d];
                }
                b[2 * nd] = lab[p];
            }
            /* threshold, then k largest (by box volume; ties in order) */
            int64_t thr[SL_MAX_NDIM] = {0};
            if (sl_ctx_arg_is_set(ctx, A_THRESHOLD)) {
                int nt = sl_ctx_arg_ints(ctx, A_THRESHOLD, i, thr, SL_MAX_NDIM);
                if (nt != 1 && nt != nd)
                    return sl_fail(ctx, SL_EINVAL, "threshold has %d values for a %d-D mask", nt,
                                   nd);
                for (int d = 1; d < nd && nt == 1; d++)
                    thr[d] = thr[0];
            }
            ranked *rk = (ranked *)(void *)stack; /* the flood fill is done: reuse its scratch */
            int64_t m = 0;
            for (int64_t k = 0; k < no; k++) {
                const int64_t *b = bx + (size_t)k * per;
                bool ok = true;
                double v = 1;
                for (int d = 0; d < nd; d++) {
                    ok &= b[nd + d] - b[d] >= thr[d];
                    v *= (double)(b[nd + d] - b[d]);
                }
                if (ok)
                    rk[m++] = (ranked){v, k};
            }
            if (sl_ctx_arg_is_set(ctx, A_K_LARGEST)) {
                int64_t kl = sl_ctx_arg_int(ctx, A_K_LARGEST, i);
                qsort(rk, (size_t)m, sizeof *rk, cmp_ranked);
                if (m > kl)
                    m = kl;
            }
            if (m > 0) {
                const int64_t *b = bx + (size_t)rk[sl_rng_below(&r, (uint64_t)m)].index * per;
                memcpy(lo, b, (size_t)nd * sizeof *lo);
                memcpy(hi, b + nd, (size_t)nd * sizeof *hi);
                out_cls = b[2 * nd];
            }
        }
    }
    const bool box = strcmp(sl_ctx_arg_str(ctx, A_FORMAT), "box") == 0;
    const bool anchor_shape = strcmp(sl_ctx_arg_str(ctx, A_FORMAT), "anchor_shape") == 0;
    int32_t *o0 = sl_ctx_output_data(ctx, 0, i);
    int32_t *o1 = box ? o0 + nd : sl_ctx_output_data(ctx, 1, i);
    for (int d = 0; d < nd; d++) {
        o0[d] = (int32_t)lo[d];
        o1[d] = (int32_t)(anchor_shape ? hi[d] - lo[d] : hi[d]);
    }
    if (sl_ctx_arg_bool(ctx, A_OUTPUT_CLASS, i))
        *(int32_t *)sl_ctx_output_data(ctx, box ? 1 : 2, i) = (int32_t)out_cls;
    return SL_OK;
}

const sl_op_def sl_op_segmentation_random_object_bbox = {
    .name = "segmentation.random_object_bbox",
    .doc = "The bounding box of a randomly chosen object of a label mask (DALI's "
           "segmentation.random_object_bbox).\n\n"
           "With probability `foreground_prob` a class present in the mask is drawn (from "
           "`classes`, weighted by `class_weights`; with `ignore_class` all non-background "
           "pixels form the objects), then one of its face-connected components (optionally "
           "only those at least `threshold` wide, among the `k_largest`); otherwise, or when "
           "none qualifies, the whole input and the background class. `format` chooses the "
           "outputs: anchor_shape, start_end or box (int32); `output_class` adds the class.\n\n"
           "Differs from DALI: the random sequence is sluice's (same distributions).",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 3,
    .output_when = output_when,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_RANDOM | SL_OP_SAMPLEWISE,
    .setup = rob_setup,
    .run_sample = rob_run_sample,
};
