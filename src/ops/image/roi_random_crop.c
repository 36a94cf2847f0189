/* roi_random_crop: a fixed-size crop window randomly placed around a region of interest
 * (DALI's fn.roi_random_crop).
 *
 * Exports: const sl_op_def sl_op_roi_random_crop ("roi_random_crop", CPU).
 *
 * Per sample and axis d (DALI's rule), with ROI [s, s + r) (roi_end or roi_shape) and crop
 * extent c: r == c gives start s; otherwise the start is uniform over the integers between s
 * and s + r - c (either order: a ROI larger than the crop holds the window, a smaller one is
 * held by it), narrowed to [0, extent - c] when the input's shape is known (in_shape, or the
 * optional input's own shape). Draws come from the sample's stream, axis after axis. Output:
 * the window's start, int64, one value per axis.
 */
#include "sluice/op.h"

enum { A_CROP_SHAPE, A_ROI_START, A_ROI_END, A_ROI_SHAPE, A_IN_SHAPE, A_SEED, NUM_ARGS };

#define COORDS(NAME, FLAGS, DOC)                                                                   \
    {                                                                                              \
        .name = NAME, .type = SL_ARG_INTS, .doc = DOC, .flags = SL_ARG_TENSOR | (FLAGS),           \
        .min_len = 1, .max_len = SL_MAX_NDIM                                                       \
    }

static const sl_arg_def args[NUM_ARGS] = {
    [A_CROP_SHAPE] = COORDS("crop_shape", 0, "Extents of the cropping window."),
    [A_ROI_START] = COORDS("roi_start", 0, "Start coordinates of the region of interest."),
    [A_ROI_END] =
        COORDS("roi_end", SL_ARG_OPTIONAL, "End coordinates of the ROI; exclusive with roi_shape."),
    [A_ROI_SHAPE] =
        COORDS("roi_shape", SL_ARG_OPTIONAL, "Extents of the ROI; exclusive with roi_end."),
    [A_IN_SHAPE] = COORDS("in_shape", SL_ARG_OPTIONAL,
                          "Shape of the data to crop: the window then stays inside it. "
                          "Incompatible with the positional input."),
    [A_SEED] = SL_ARG_SEED_DEF,
};

static const sl_io_def inputs[] = {
    {"input", "Optional: the data to crop; only its shape is read (as in_shape)."}};
static const sl_io_def outputs[] = {{"crop_start", "The window's start, int64, one per axis."}};

static sl_status rrc_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    if (sl_init_arg_is_set(ini, A_ROI_END) + sl_init_arg_is_set(ini, A_ROI_SHAPE) != 1)
        return sl_init_fail(ini, SL_EINVAL,
                            "Either ROI end or ROI shape should be defined, but not both");
    return SL_OK;
}

static sl_status rrc_setup(sl_ctx *ctx)
{
    if (sl_ctx_num_inputs(ctx) == 1 && sl_ctx_arg_is_set(ctx, A_IN_SHAPE))
        return sl_fail(ctx, SL_EINVAL,
                       "``in_shape`` argument is incompatible with providing an input.");
    sl_ctx_set_output(ctx, 0, SL_DTYPE_INT64, 1, NULL);
    return SL_OK;
}

/* Reads list argument arg of sample i: n values expected (n < 0: any; returns the count). */
static int read(sl_ctx *ctx, int arg, int i, int64_t *v, int n, sl_status *st)
{
    int m = sl_ctx_arg_ints(ctx, arg, i, v, SL_MAX_NDIM);
    if (n >= 0 && m != n && *st == SL_OK)
        *st = sl_fail(ctx, SL_EINVAL, "%s has %d values; expected %d (one per axis)",
                      args[arg].name, m, n);
    return m;
}

typedef struct window {
    int64_t crop[SL_MAX_NDIM], start[SL_MAX_NDIM], extent[SL_MAX_NDIM], shape[SL_MAX_NDIM];
    int ndim;
    bool bounded;
} window;

static sl_status rrc_setup_sample(sl_ctx *ctx, int i)
{
    window *w = (window *)sl_ctx_iter_data(ctx) + i;
    sl_status st = SL_OK;
    int n = read(ctx, A_CROP_SHAPE, i, w->crop, -1, &st);
    read(ctx, A_ROI_START, i, w->start, n, &st);
    bool end = sl_ctx_arg_is_set(ctx, A_ROI_END);
    read(ctx, end ? A_ROI_END : A_ROI_SHAPE, i, w->extent, n, &st);
    if (st != SL_OK)
        return st;
    for (int d = 0; end && d < n; d++)
        w->extent[d] -= w->start[d];
    w->ndim = n;
    w->bounded = sl_ctx_num_inputs(ctx) == 1 || sl_ctx_arg_is_set(ctx, A_IN_SHAPE);
    if (sl_ctx_num_inputs(ctx) == 1) {
        const sl_batch *in = sl_ctx_input(ctx, 0);
        if (sl_batch_ndim(in) != n)
            return sl_fail(ctx, SL_EINVAL, "crop_shape has %d values; the input has %d dimensions",
                           n, sl_batch_ndim(in));
        for (int d = 0; d < n; d++)
            w->shape[d] = sl_batch_shape(in, i)[d];
    } else if (w->bounded) {
        read(ctx, A_IN_SHAPE, i, w->shape, n, &st);
        if (st != SL_OK)
            return st;
    }
    for (int d = 0; w->bounded && d < n; d++) {
        if (w->shape[d] < 0 || w->crop[d] < 0)
            return sl_fail(ctx, SL_EINVAL, "shapes can't be negative (axis %d)", d);
        if (w->shape[d] < w->crop[d])
            return sl_fail(ctx, SL_EINVAL,
                           "Cropping shape can't be bigger than the input shape. Got: "
                           "crop_shape[%lld] and sample_shape[%lld] for d=%d",
                           (long long)w->crop[d], (long long)w->shape[d], d);
        if (w->start[d] < 0 || w->start[d] + w->extent[d] > w->shape[d])
            return sl_fail(ctx, SL_EINVAL,
                           "ROI can't be out of bounds. Got roi_start[%lld], roi_end[%lld], "
                           "sample_shape[%lld], for d=%d",
                           (long long)w->start[d], (long long)(w->start[d] + w->extent[d]),
                           (long long)w->shape[d], d);
    }
    int64_t shape[1] = {n};
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

static sl_status rrc_run_sample(sl_ctx *ctx, int i)
{
    const window *w = (const window *)sl_ctx_iter_data(ctx) + i;
    int64_t *out = sl_ctx_output_data(ctx, 0, i);
    sl_rng r = sl_ctx_rng(ctx, i);
    for (int d = 0; d < w->ndim; d++) {
        int64_t s = w->start[d], e = w->extent[d], c = w->crop[d];
        if (e == c) {
            out[d] = s;
            continue;
        }
        int64_t lo = s, hi = s + e - c;
        if (lo > hi) {
            int64_t t = lo;
            lo = hi;
            hi = t;
        }
        if (w->bounded) {
            lo = lo > 0 ? lo : 0;
            hi = hi < w->shape[d] - c ? hi : w->shape[d] - c;
        }
        if (hi < lo)
            return sl_fail(ctx, SL_EINVAL, "no window start fits along axis %d", d);
        out[d] = lo + (int64_t)sl_rng_below(&r, (uint64_t)(hi - lo) + 1);
    }
    return SL_OK;
}

const sl_op_def sl_op_roi_random_crop = {
    .name = "roi_random_crop",
    .doc = "Produces a fixed-size cropping window randomly placed so that as much of a region "
           "of interest as possible is inside it (DALI's roi_random_crop).\n\n"
           "A ROI larger than `crop_shape` holds the window; a smaller one is held by it. With "
           "`in_shape` (or the data as the optional input) the window also stays inside the "
           "data. The ROI is roi_start with roi_end or roi_shape. Output: the window's start "
           "(int64, one value per axis), e.g. for slice's `start`.",
    .inputs = inputs,
    .min_inputs = 0,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_RANDOM,
    .iter_bytes_per_sample = sizeof(window),
    .init = rrc_init,
    .setup = rrc_setup,
    .setup_sample = rrc_setup_sample,
    .run_sample = rrc_run_sample,
};
