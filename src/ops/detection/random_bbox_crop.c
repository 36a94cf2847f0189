/* random_bbox_crop: draws a random crop window that keeps bounding boxes (DALI's
 * fn.random_bbox_crop, the SSD sampler), and maps the boxes into it.
 *
 * Exports: const sl_op_def sl_op_random_bbox_crop ("random_bbox_crop", CPU).
 *
 * Boxes are float32 (N, 2 * ndim), ndim 2 or 3, in normalised coordinates, their columns named
 * by `bbox_layout` (x y z: starts, X Y Z: ends, W H D: sizes; default xyXY / xyzXYZ with `ltrb`,
 * else xyWH / xyzWHD). Per sample, from its own random stream:
 *   repeat: pick one of `thresholds` (plus "no crop" when allow_no_crop) uniformly;
 *     no crop: the window is the whole input;
 *     else up to num_attempts times: draw a window (below) and accept it when its metric
 *     (IoU, or with threshold_type "overlap" the share of each box inside it) is >= the
 *     threshold for every box (all_boxes_above_threshold) or for one, and it keeps a box;
 *   until accepted, or `total_num_attempts` windows were drawn (default -1: at most 10000,
 *   where DALI would loop for ever): then the best window drawn so far (the whole input when
 *   none was drawn).
 * A window: without crop_shape, the largest relative extent is drawn from `scaling`, the
 * ratios of extents from `aspect_ratio` (pairs for dims (0,1), (0,2), (1,2), cycling over the
 * pairs given; of absolute extents when input_shape is given, where a draw whose third ratio
 * falls outside its range is a failed attempt), the anchor uniformly where the window fits;
 * with crop_shape (and input_shape, both in shape_layout order, default WH / WHD) the window
 * has that absolute size and a uniform anchor in [0, input_shape - crop_shape]. A sample
 * without boxes accepts the first window.
 * Kept boxes: those whose centre lies in the window (inclusive), or with bbox_prune_threshold
 * those with a non-empty intersection holding at least that share of their area; they are
 * clipped to the window and expressed relative to it, in the input's layout.
 * Outputs: anchor and shape (float32 (ndim,), shape_layout order: relative, or absolute with
 * crop_shape), boxes (float32 (M, 2 * ndim)), labels (when given, the rows of the kept boxes,
 * same type) and bbox_indices (int32 (M,), when output_bbox_indices).
 * Invariant: setup_sample draws the window (into the iteration data) and counts the kept boxes;
 * run_sample recomputes the same selection from it.
 */
#include <math.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/detection/boxes.h"

enum {
    A_THRESHOLDS,
    A_THRESHOLD_TYPE,
    A_ASPECT_RATIO,
    A_SCALING,
    A_BBOX_LAYOUT,
    A_LTRB,
    A_NUM_ATTEMPTS,
    A_TOTAL_NUM_ATTEMPTS,
    A_ALLOW_NO_CROP,
    A_INPUT_SHAPE,
    A_CROP_SHAPE,
    A_SHAPE_LAYOUT,
    A_ALL_BOXES,
    A_OUTPUT_INDICES,
    A_PRUNE,
    A_SEED,
    NUM_ARGS
};

#define MAX_DRAWS 10000 /* windows drawn at most when total_num_attempts is -1 */

static const sl_arg_def args[NUM_ARGS] = {
    [A_THRESHOLDS] = {.name = "thresholds",
                      .type = SL_ARG_FLOATS,
                      .def = "[0.0]",
                      .doc = "Minimum metric (threshold_type) of the boxes against the window; "
                             "each try picks one of these at random.",
                      .flags = SL_ARG_SCALAR_OK | SL_ARG_RANGE,
                      .min = 0.0,
                      .max = 1.0,
                      .min_len = 1},
    [A_THRESHOLD_TYPE] = {.name = "threshold_type",
                          .type = SL_ARG_STRING,
                          .def = "\"iou\"",
                          .doc = "\"iou\": intersection over union of box and window; "
                                 "\"overlap\": the share of the box's area inside the window.",
                          .choices = "iou|overlap"},
    [A_ASPECT_RATIO] = {.name = "aspect_ratio",
                        .type = SL_ARG_FLOATS,
                        .def = "[1.0, 1.0]",
                        .doc = "Ranges [min, max] of the window's extent ratios: one pair (w/h; "
                               "in 3-D used for every pair of dimensions) or, in 3-D, three "
                               "pairs for w/h, w/d, h/d.",
                        .flags = SL_ARG_RANGE,
                        .min = 0.0,
                        .max = 1e30,
                        .min_len = 2,
                        .max_len = 6},
    [A_SCALING] = {.name = "scaling",
                   .type = SL_ARG_FLOATS,
                   .def = "[1.0, 1.0]",
                   .doc = "Range [min, max] of the window's largest extent, relative to the "
                          "input's (0 < min <= max <= 1).",
                   .flags = SL_ARG_RANGE,
                   .min = 0.0,
                   .max = 1.0,
                   .min_len = 2,
                   .max_len = 2},
    [A_BBOX_LAYOUT] = {.name = "bbox_layout",
                       .type = SL_ARG_STRING,
                       .def = "\"\"",
                       .doc = "Columns of the boxes: x, y, z starts; X, Y, Z ends; W, H, D "
                              "sizes (\"xyXY\", \"xyWH\", \"xyzXYZ\", ...). Empty: from ltrb."},
    [A_LTRB] = {.name = "ltrb",
                .type = SL_ARG_BOOL,
                .def = "true",
                .doc = "Without bbox_layout: true for [l, t, r, b] boxes (xyXY), false for [x, y, "
                       "w, h] (xyWH)."},
    [A_NUM_ATTEMPTS] = {.name = "num_attempts",
                        .type = SL_ARG_INT,
                        .def = "1",
                        .doc = "Windows drawn for one picked threshold before picking again.",
                        .flags = SL_ARG_RANGE,
                        .min = 1,
                        .max = 1e9},
    [A_TOTAL_NUM_ATTEMPTS] = {.name = "total_num_attempts",
                              .type = SL_ARG_INT,
                              .def = "-1",
                              .doc = "Most windows drawn in all; then the best so far is used. "
                                     "-1: no limit (sluice stops at 10000).",
                              .flags = SL_ARG_RANGE,
                              .min = -1,
                              .max = 1e9},
    [A_ALLOW_NO_CROP] = {.name = "allow_no_crop",
                         .type = SL_ARG_BOOL,
                         .def = "true",
                         .doc = "\"No crop\" (the whole input) is one of the options picked."},
    [A_INPUT_SHAPE] = {.name = "input_shape",
                       .type = SL_ARG_INTS,
                       .doc = "The input's extents (shape_layout order): aspect ratios then "
                              "apply to absolute extents; required with crop_shape.",
                       .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR,
                       .min_len = 2,
                       .max_len = 3},
    [A_CROP_SHAPE] = {.name = "crop_shape",
                      .type = SL_ARG_INTS,
                      .doc = "A fixed window size (shape_layout order, absolute); anchor and "
                             "shape are then absolute. Needs input_shape.",
                      .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR,
                      .min_len = 2,
                      .max_len = 3},
    [A_SHAPE_LAYOUT] = {.name = "shape_layout",
                        .type = SL_ARG_STRING,
                        .def = "\"\"",
                        .doc = "Order of input_shape, crop_shape and the anchor / shape outputs: "
                               "W, H, D letters. Empty: WH or WHD."},
    [A_ALL_BOXES] = {.name = "all_boxes_above_threshold",
                     .type = SL_ARG_BOOL,
                     .def = "true",
                     .doc = "true: every box must reach the threshold; false: one is enough."},
    [A_OUTPUT_INDICES] = {.name = "output_bbox_indices",
                          .type = SL_ARG_BOOL,
                          .def = "false",
                          .doc = "Add an output with the indices of the kept boxes."},
    [A_PRUNE] = {.name = "bbox_prune_threshold",
                 .type = SL_ARG_FLOAT,
                 .doc = "Keep a box when at least this share of its area is in the window "
                        "(and some is); unset: when its centre is in the window.",
                 .flags = SL_ARG_OPTIONAL | SL_ARG_RANGE,
                 .min = 0.0,
                 .max = 1.0},
    [A_SEED] = SL_ARG_SEED_DEF,
};

static const sl_io_def inputs[] = {
    {"boxes", "Boxes, float32 (N, 4) or (N, 6), normalised, in bbox_layout."},
    {"labels", "Optional per-box data (labels), N rows of any type."},
};
static const sl_io_def outputs[] = {
    {"anchor", "The window's start, float32 (ndim,)."},
    {"shape", "The window's extents, float32 (ndim,)."},
    {"bboxes", "The kept boxes relative to the window, float32 (M, 2 * ndim)."},
    {"labels", "The rows of the kept boxes' labels (with a labels input)."},
    {"bbox_indices", "Indices of the kept boxes, int32 (M,) (with output_bbox_indices)."},
};
static const sl_output_when output_when[] = {
    {.inputs = 0}, {.inputs = 0}, {.inputs = 0}, {.inputs = 2}, {.arg = "output_bbox_indices"}};

/* Column roles of a box layout: per dimension, the column of its start and of its end or
 * size. */
typedef struct layout {
    int ndim;
    int start[3], end[3]; /* columns */
    bool size[3];         /* end[d] holds a size (W H D), not an end */
} layout;

/* The drawn window of one sample (iteration data). */
typedef struct window {
    double a[3], s[3];         /* relative anchor and extent, per dimension (x y z) */
    double abs_a[3], abs_s[3]; /* absolute (with crop_shape) */
    int kept;                  /* boxes kept */
} window;

static bool parse_layout(const char *l, layout *out)
{
    static const char starts[] = "xyz", ends[] = "XYZ", sizes[] = "WHD";
    int n = (int)strlen(l);
    if (n != 4 && n != 6)
        return false;
    out->ndim = n / 2;
    for (int d = 0; d < out->ndim; d++) {
        const char *s = strchr(l, starts[d]), *e = strchr(l, ends[d]), *z = strchr(l, sizes[d]);
        if (!s || (!e) == (!z))
            return false;
        out->start[d] = (int)(s - l);
        out->end[d] = (int)((e ? e : z) - l);
        out->size[d] = z != NULL;
    }
    return true;
}

/* Dimension (0 x, 1 y, 2 z) of each position of a shape layout. */
static bool parse_shape_layout(const char *l, int ndim, int *dim)
{
    if ((int)strlen(l) != ndim)
        return false;
    for (int k = 0; k < ndim; k++) {
        const char *p = strchr("WHD", l[k]);
        if (!l[k] || !p || p - "WHD" >= ndim || strchr(l + k + 1, l[k]))
            return false;
        dim[k] = (int)(p - "WHD");
    }
    return true;
}

typedef struct state {
    char bbox_layout[8], shape_layout[4];
} state;

static sl_status rbc_init(sl_op_init *ini, void **st)
{
    *st = NULL;
    int n;
    const double *sc = sl_init_arg_floats(ini, A_SCALING, &n);
    if (!(sc[0] > 0 && sc[0] <= sc[1]))
        return sl_init_fail(ini, SL_EINVAL, "scaling [%g, %g] must have 0 < min <= max", sc[0],
                            sc[1]);
    const double *ar = sl_init_arg_floats(ini, A_ASPECT_RATIO, &n);
    if (n % 2)
        return sl_init_fail(ini, SL_EINVAL, "aspect_ratio has %d values: give [min, max] pairs", n);
    for (int k = 0; k < n; k += 2)
        if (!(ar[k] > 0 && ar[k] <= ar[k + 1]))
            return sl_init_fail(ini, SL_EINVAL,
                                "aspect_ratio pair [%g, %g] must have 0 < min <= max", ar[k],
                                ar[k + 1]);
    const char *bl = sl_init_arg_str(ini, A_BBOX_LAYOUT);
    layout lay;
    if (bl[0] && !parse_layout(bl, &lay))
        return sl_init_fail(ini, SL_EINVAL,
                            "bbox_layout \"%s\": expected 4 or 6 letters naming, for each of x, y "
                            "(, z), its start (x y z) and its end (X Y Z) or size (W H D)",
                            bl);
    const char *sl = sl_init_arg_str(ini, A_SHAPE_LAYOUT);
    int dims[3];
    if (sl[0] && !parse_shape_layout(sl, (int)strlen(sl), dims))
        return sl_init_fail(ini, SL_EINVAL,
                            "shape_layout \"%s\": expected a permutation of WH or WHD", sl);
    if (bl[0] && sl[0] && (int)strlen(sl) != lay.ndim)
        return sl_init_fail(ini, SL_EINVAL,
                            "shape_layout \"%s\" and bbox_layout \"%s\" differ "
                            "in their number of dimensions",
                            sl, bl);
    if (sl_init_arg_is_set(ini, A_CROP_SHAPE) && !sl_init_arg_is_set(ini, A_INPUT_SHAPE))
        return sl_init_fail(ini, SL_EINVAL, "crop_shape needs input_shape");
    return SL_OK;
}

/* The box layout of the batch (bbox_layout, or the default for its columns). */
static sl_status batch_layout(sl_ctx *ctx, layout *lay, int *shape_dim)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    int cols = sl_batch_size(in) > 0 ? (int)sl_batch_shape(in, 0)[1] : 4;
    const char *bl = sl_ctx_arg_str(ctx, A_BBOX_LAYOUT);
    if (!bl[0]) {
        bool ltrb = sl_ctx_arg_bool(ctx, A_LTRB, 0);
        bl = cols == 6 ? (ltrb ? "xyzXYZ" : "xyzWHD") : (ltrb ? "xyXY" : "xyWH");
    }
    parse_layout(bl, lay); /* checked at init, or a default */
    for (int i = 0; i < sl_batch_size(in); i++)
        if (sl_batch_shape(in, i)[1] != 2 * lay->ndim) {
            sl_ctx_focus_sample(ctx, i);
            sl_status st =
                sl_fail(ctx, SL_EINVAL, "boxes have %lld columns, but the layout \"%s\" has %d",
                        (long long)sl_batch_shape(in, i)[1], bl, 2 * lay->ndim);
            sl_ctx_focus_sample(ctx, -1);
            return st;
        }
    const char *sl = sl_ctx_arg_str(ctx, A_SHAPE_LAYOUT);
    if (!parse_shape_layout(sl[0] ? sl : lay->ndim == 3 ? "WHD" : "WH", lay->ndim, shape_dim))
        return sl_fail(ctx, SL_EINVAL, "shape_layout \"%s\" does not fit %d-D boxes", sl,
                       lay->ndim);
    return SL_OK;
}

/* Box k of sample i as starts lo[] and ends hi[]. */
static void read_box(const float *b, const layout *lay, double *lo, double *hi)
{
    for (int d = 0; d < lay->ndim; d++) {
        lo[d] = b[lay->start[d]];
        hi[d] = lay->size[d] ? lo[d] + b[lay->end[d]] : b[lay->end[d]];
    }
}

static double inter(int nd, const double *lo, const double *hi, const window *w)
{
    double v = 1.0;
    for (int d = 0; d < nd; d++) {
        double a = fmax(lo[d], w->a[d]), b = fmin(hi[d], w->a[d] + w->s[d]);
        if (b <= a)
            return 0.0;
        v *= b - a;
    }
    return v;
}

static double volume(int nd, const double *lo, const double *hi)
{
    double v = 1.0;
    for (int d = 0; d < nd; d++)
        v *= fmax(hi[d] - lo[d], 0.0);
    return v;
}

/* Whether box (lo, hi) is kept in window w. */
static bool keep(sl_ctx *ctx, int nd, const double *lo, const double *hi, const window *w)
{
    if (sl_ctx_arg_is_set(ctx, A_PRUNE)) {
        double in = inter(nd, lo, hi, w), vol = volume(nd, lo, hi);
        return in > 0 && vol > 0 && in / vol >= sl_ctx_arg_float(ctx, A_PRUNE, 0);
    }
    for (int d = 0; d < nd; d++) {
        double c = 0.5 * (lo[d] + hi[d]);
        if (c < w->a[d] || c > w->a[d] + w->s[d])
            return false;
    }
    return true;
}

/* The window's metric over the sample's boxes (min over boxes when all must pass, else max)
 * and the number of boxes it keeps. */
static double evaluate(sl_ctx *ctx, int i, const layout *lay, window *w)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t n = sl_batch_shape(in, i)[0];
    const float *b = sl_batch_sample_data(in, i);
    const bool all = sl_ctx_arg_bool(ctx, A_ALL_BOXES, 0);
    const bool iou = strcmp(sl_ctx_arg_str(ctx, A_THRESHOLD_TYPE), "iou") == 0;
    const int nd = lay->ndim;
    double wv = 1.0, m = all ? INFINITY : -INFINITY;
    for (int d = 0; d < nd; d++)
        wv *= w->s[d];
    w->kept = 0;
    for (int64_t k = 0; k < n; k++) {
        double lo[3], hi[3];
        read_box(b + k * 2 * nd, lay, lo, hi);
        double it = inter(nd, lo, hi, w), bv = volume(nd, lo, hi);
        double denom = iou ? wv + bv - it : bv;
        double v = denom > 0 ? it / denom : 0.0;
        m = all ? fmin(m, v) : fmax(m, v);
        w->kept += keep(ctx, nd, lo, hi, w);
    }
    return m;
}

/* Draws a window into w; false: the drawn ratios do not fit (a failed attempt). */
static bool draw(sl_ctx *ctx, int i, const layout *lay, const int *sdim, sl_rng *r, window *w)
{
    const int nd = lay->ndim;
    int64_t ishape[3] = {1, 1, 1}, cshape[3];
    double unit[3] = {1, 1, 1};
    if (sl_ctx_arg_is_set(ctx, A_INPUT_SHAPE)) {
        sl_ctx_arg_ints(ctx, A_INPUT_SHAPE, i, ishape, 3);
        for (int k = 0; k < nd; k++)
            unit[sdim[k]] = (double)ishape[k];
    }
    if (sl_ctx_arg_is_set(ctx, A_CROP_SHAPE)) {
        sl_ctx_arg_ints(ctx, A_CROP_SHAPE, i, cshape, 3);
        for (int k = 0; k < nd; k++) {
            int d = sdim[k];
            double span = unit[d] - (double)cshape[k];
            double a = span >= 0 ? span * sl_rng_uniform(r) : span * (1.0 - sl_rng_uniform(r));
            w->abs_a[d] = a;
            w->abs_s[d] = (double)cshape[k];
            w->a[d] = a / unit[d];
            w->s[d] = (double)cshape[k] / unit[d];
        }
        return true;
    }
    double sc[2], ar[6];
    sl_ctx_arg_floats(ctx, A_SCALING, i, sc, 2);
    int nar = sl_ctx_arg_floats(ctx, A_ASPECT_RATIO, i, ar, 6) / 2;
    const double s = sc[0] + (sc[1] - sc[0]) * sl_rng_uniform(r);
    /* absolute extents e[d] from ratios e0/e1 (pair 0), e0/e2 (pair 1), checked e1/e2 (pair 2) */
    double e[3] = {1.0, 1.0, 1.0};
    const double *p0 = ar, *p1 = ar + 2 * (1 % nar), *p2 = ar + 2 * (2 % nar);
    double r01 = p0[0] + (p0[1] - p0[0]) * sl_rng_uniform(r);
    e[1] = 1.0 / r01;
    if (nd == 3) {
        double r02 = p1[0] + (p1[1] - p1[0]) * sl_rng_uniform(r);
        e[2] = 1.0 / r02;
        double r12 = e[1] / e[2];
        if (r12 < p2[0] * (1 - 1e-6) || r12 > p2[1] * (1 + 1e-6))
            return false;
    }
    double mx = 0.0;
    for (int d = 0; d < nd; d++) {
        e[d] /= unit[d]; /* relative */
        mx = fmax(mx, e[d]);
    }
    for (int d = 0; d < nd; d++) {
        w->s[d] = fmin(e[d] / mx * s, 1.0);
        w->a[d] = (1.0 - w->s[d]) * sl_rng_uniform(r);
    }
    return true;
}

static void whole(const layout *lay, const int *sdim, sl_ctx *ctx, int i, window *w)
{
    int64_t ishape[3] = {1, 1, 1};
    bool abs = sl_ctx_arg_is_set(ctx, A_CROP_SHAPE);
    if (abs)
        sl_ctx_arg_ints(ctx, A_INPUT_SHAPE, i, ishape, 3);
    for (int k = 0; k < lay->ndim; k++) {
        int d = sdim[k];
        w->a[d] = 0.0;
        w->s[d] = 1.0;
        w->abs_a[d] = 0.0;
        w->abs_s[d] = abs ? (double)ishape[k] : 1.0;
    }
}

static sl_status rbc_setup(sl_ctx *ctx)
{
    layout lay;
    int sdim[3];
    sl_status st = sl__boxes_check(ctx, 0, true);
    if (st != SL_OK || (st = batch_layout(ctx, &lay, sdim)) != SL_OK)
        return st;
    const int nin = sl_ctx_num_inputs(ctx);
    sl_ctx_set_output(ctx, 0, SL_DTYPE_FLOAT32, 1, NULL);
    sl_ctx_set_output(ctx, 1, SL_DTYPE_FLOAT32, 1, NULL);
    sl_ctx_set_output(ctx, 2, SL_DTYPE_FLOAT32, 2, NULL);
    int o = 3;
    if (nin == 2) {
        const sl_batch *lb = sl_ctx_input(ctx, 1);
        if (sl_batch_ndim(lb) < 1)
            return sl_fail(ctx, SL_EINVAL, "labels (input 1) need one row per box; got scalars");
        sl_ctx_set_output(ctx, o++, sl_batch_dtype(lb), sl_batch_ndim(lb), sl_batch_layout(lb));
    }
    if (sl_ctx_arg_bool(ctx, A_OUTPUT_INDICES, 0))
        sl_ctx_set_output(ctx, o, SL_DTYPE_INT32, 1, NULL);
    return SL_OK;
}

static sl_status check_shapes(sl_ctx *ctx, int i, int nd)
{
    for (int a = A_INPUT_SHAPE; a <= A_CROP_SHAPE; a++) {
        if (!sl_ctx_arg_is_set(ctx, a))
            continue;
        int64_t v[3];
        int n = sl_ctx_arg_ints(ctx, a, i, v, 3);
        if (n != nd)
            return sl_fail(ctx, SL_EINVAL, "%s has %d values for %d-D boxes",
                           a == A_INPUT_SHAPE ? "input_shape" : "crop_shape", n, nd);
        for (int k = 0; k < n; k++)
            if (v[k] <= 0)
                return sl_fail(ctx, SL_EINVAL, "%s[%d] is %lld; extents must be positive",
                               a == A_INPUT_SHAPE ? "input_shape" : "crop_shape", k,
                               (long long)v[k]);
    }
    return SL_OK;
}

static sl_status rbc_setup_sample(sl_ctx *ctx, int i)
{
    layout lay;
    int sdim[3];
    batch_layout(ctx, &lay, sdim); /* checked in setup */
    const int nd = lay.ndim;
    sl_status st = check_shapes(ctx, i, nd);
    if (st != SL_OK)
        return st;
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t n = sl_batch_shape(in, i)[0];
    if (sl_ctx_num_inputs(ctx) == 2) {
        const sl_batch *lb = sl_ctx_input(ctx, 1);
        if (sl_batch_shape(lb, i)[0] != n)
            return sl_fail(ctx, SL_EINVAL, "%lld boxes but %lld labels", (long long)n,
                           (long long)sl_batch_shape(lb, i)[0]);
    }
    window *res = (window *)sl_ctx_iter_data(ctx) + i;
    sl_rng r = sl_ctx_rng(ctx, i);
    double th[64];
    int nth = sl_ctx_arg_floats(ctx, A_THRESHOLDS, i, th, 64);
    if (nth > 64)
        nth = 64;
    const bool no_crop = sl_ctx_arg_bool(ctx, A_ALLOW_NO_CROP, i);
    const int64_t per = sl_ctx_arg_int(ctx, A_NUM_ATTEMPTS, i);
    const int64_t total = sl_ctx_arg_int(ctx, A_TOTAL_NUM_ATTEMPTS, i);
    const int64_t limit = total > 0 ? total : MAX_DRAWS;
    window best, w;
    double best_m = -INFINITY;
    bool have_best = false, done = false;
    int64_t drawn = 0;
    memset(&w, 0, sizeof w);
    while (!done && drawn < limit) {
        uint64_t pick = sl_rng_below(&r, (uint64_t)(nth + no_crop));
        if ((int)pick == nth) {
            whole(&lay, sdim, ctx, i, &w);
            evaluate(ctx, i, &lay, &w);
            best = w;
            done = have_best = true;
            break;
        }
        for (int64_t k = 0; k < per && drawn < limit; k++) {
            drawn++;
            if (!draw(ctx, i, &lay, sdim, &r, &w))
                continue;
            double m = evaluate(ctx, i, &lay, &w);
            if (n == 0 || (m >= th[pick] && w.kept > 0)) {
                best = w;
                done = have_best = true;
                break;
            }
            if (!have_best || m > best_m) {
                best = w;
                best_m = m;
                have_best = true;
            }
        }
    }
    if (!have_best) {
        whole(&lay, sdim, ctx, i, &best);
        evaluate(ctx, i, &lay, &best);
    }
    *res = best;
    int64_t s1[1] = {nd}, s2[2] = {best.kept, 2 * nd};
    sl_ctx_set_shape(ctx, 0, i, s1);
    sl_ctx_set_shape(ctx, 1, i, s1);
    sl_ctx_set_shape(ctx, 2, i, s2);
    int o = 3;
    if (sl_ctx_num_inputs(ctx) == 2) {
        const sl_batch *lb = sl_ctx_input(ctx, 1);
        int64_t ls[SL_MAX_NDIM];
        memcpy(ls, sl_batch_shape(lb, i), (size_t)sl_batch_ndim(lb) * sizeof *ls);
        ls[0] = best.kept;
        sl_ctx_set_shape(ctx, o++, i, ls);
    }
    if (sl_ctx_arg_bool(ctx, A_OUTPUT_INDICES, 0)) {
        int64_t is[1] = {best.kept};
        sl_ctx_set_shape(ctx, o, i, is);
    }
    return SL_OK;
}

static sl_status rbc_run_sample(sl_ctx *ctx, int i)
{
    layout lay;
    int sdim[3];
    batch_layout(ctx, &lay, sdim);
    const int nd = lay.ndim;
    const window *w = (const window *)sl_ctx_iter_data(ctx) + i;
    const bool abs = sl_ctx_arg_is_set(ctx, A_CROP_SHAPE);
    float *anchor = sl_ctx_output_data(ctx, 0, i), *shape = sl_ctx_output_data(ctx, 1, i);
    for (int k = 0; k < nd; k++) {
        int d = sdim[k];
        anchor[k] = (float)(abs ? w->abs_a[d] : w->a[d]);
        shape[k] = (float)(abs ? w->abs_s[d] : w->s[d]);
    }
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t n = sl_batch_shape(in, i)[0];
    const float *b = sl_batch_sample_data(in, i);
    float *ob = sl_ctx_output_data(ctx, 2, i);
    int o = 3;
    const sl_batch *lb = NULL;
    unsigned char *ol = NULL;
    size_t row = 0;
    if (sl_ctx_num_inputs(ctx) == 2) {
        lb = sl_ctx_input(ctx, 1);
        row =
            n ? (size_t)(sl_batch_sample_numel(lb, i) / n) * sl_dtype_size(sl_batch_dtype(lb)) : 0;
        ol = sl_ctx_output_data(ctx, o++, i);
    }
    int32_t *oi = sl_ctx_arg_bool(ctx, A_OUTPUT_INDICES, 0) ? sl_ctx_output_data(ctx, o, i) : NULL;
    int64_t m = 0;
    for (int64_t k = 0; k < n && m < w->kept; k++) {
        double lo[3], hi[3];
        read_box(b + k * 2 * nd, &lay, lo, hi);
        if (!keep(ctx, nd, lo, hi, w))
            continue;
        float *dst = ob + m * 2 * nd;
        for (int d = 0; d < nd; d++) {
            double e = w->a[d] + w->s[d];
            double s0 = (fmax(lo[d], w->a[d]) - w->a[d]) / w->s[d];
            double s1 = (fmin(hi[d], e) - w->a[d]) / w->s[d];
            s0 = fmin(fmax(s0, 0.0), 1.0);
            s1 = fmin(fmax(s1, 0.0), 1.0);
            dst[lay.start[d]] = (float)s0;
            dst[lay.end[d]] = (float)(lay.size[d] ? s1 - s0 : s1);
        }
        if (ol)
            memcpy(ol + (size_t)m * row,
                   (const unsigned char *)sl_batch_sample_data(lb, i) + k * row, row);
        if (oi)
            oi[m] = (int32_t)k;
        m++;
    }
    return SL_OK;
}

const sl_op_def sl_op_random_bbox_crop = {
    .name = "random_bbox_crop",
    .doc = "Draws a random crop window that keeps bounding boxes, and maps the boxes into it "
           "(DALI's random_bbox_crop, SSD's sampler).\n\n"
           "Outputs the window's anchor and shape (feed them to slice), the kept boxes relative "
           "to the window, then the kept boxes' labels when a labels input is given and their "
           "indices when `output_bbox_indices=True`. A window is accepted when every box (or, "
           "with `all_boxes_above_threshold=False`, one) reaches the picked threshold "
           "(`threshold_type` iou or overlap) and a box is kept (its centre inside, or "
           "`bbox_prune_threshold` of its area). Windows follow `scaling` and `aspect_ratio`, "
           "or `crop_shape` within `input_shape`.\n\n"
           "Differs from DALI: with total_num_attempts=-1 it stops after 10000 windows and uses "
           "the best one (DALI may loop for ever), and prints no warning on that fallback.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 2,
    .outputs = outputs,
    .num_outputs = 5,
    .output_when = output_when,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_RANDOM,
    .iter_bytes_per_sample = sizeof(window),
    .init = rbc_init,
    .setup = rbc_setup,
    .setup_sample = rbc_setup_sample,
    .run_sample = rbc_run_sample,
};
