/* random_resized_crop: crops a random window of random area and aspect ratio from each image
 * and resizes it to a fixed size (DALI's fn.random_resized_crop, CPU and GPU).
 *
 * Exports: const sl_op_def sl_op_random_resized_crop.
 *
 * Per sample i, setup_sample draws the window from the sample's own stream sl_ctx_rng(ctx, i)
 * with torchvision's RandomResizedCrop.get_params algorithm (crop_window.h) and keeps it in
 * the iteration data; run_sample resamples the window [x, x + w) x [y, y + h) to size (H, W)
 * with the family helper (resample.h), treating the window as the whole image (crop, then
 * resize, as torchvision's resized_crop), so the output equals `resize` of the cropped image
 * (resize_x = W, resize_y = H, same filters). Results depend only on (seed, node, iteration,
 * sample). run_gpu (device "gpu") resamples the same windows with the same plans on the GPU
 * (resample.cu), giving the same bytes.
 *
 * Invariant: the window is drawn exactly once per sample and iteration (in setup_sample), and
 * always lies inside the image.
 */
#include <math.h>
#include <stdint.h>

#include "sluice/op.h"

#include "ops/image/crop_window.h"
#include "ops/image/resample.h"

enum {
    A_SIZE,
    A_AREA,
    A_RATIO,
    A_ATTEMPTS,
    A_INTERP,
    A_MAG,
    A_MIN,
    A_ANTIALIAS,
    A_DTYPE,
    A_SEED,
    NUM_ARGS
};

static const sl_arg_def args[NUM_ARGS] = {
    [A_SIZE] = {.name = "size",
                .type = SL_ARG_FLOATS,
                .doc = "Output size (H, W), or one value for a square; rounded to whole pixels "
                       "(at least 1).",
                .flags = SL_ARG_SCALAR_OK | SL_ARG_RANGE,
                .min = 0.0,
                .max = SL__MAX_EXTENT,
                .min_len = 1,
                .max_len = 2},
    [A_AREA] = {.name = "random_area",
                .type = SL_ARG_FLOATS,
                .def = "[0.08, 1.0]",
                .doc = "Range [lo, hi] of the window's area as a fraction of the image's, drawn "
                       "uniformly; one value fixes it. 0 < lo <= hi <= 1.",
                .flags = SL_ARG_SCALAR_OK,
                .min_len = 1,
                .max_len = 2},
    [A_RATIO] = {.name = "random_aspect_ratio",
                 .type = SL_ARG_FLOATS,
                 .def = "[0.75, 1.333333]",
                 .doc = "Range [lo, hi] of the window's aspect ratio w / h, drawn log-uniformly; "
                        "one value fixes it. 0 < lo <= hi.",
                 .flags = SL_ARG_SCALAR_OK,
                 .min_len = 1,
                 .max_len = 2},
    [A_ATTEMPTS] = {.name = "num_attempts",
                    .type = SL_ARG_INT,
                    .def = "10",
                    .doc = "Draws before falling back to a central crop of the clamped aspect "
                           "ratio.",
                    .flags = SL_ARG_RANGE,
                    .min = 1,
                    .max = 1e6},
    [A_INTERP] = SL__ARG_INTERP_TYPE_DEF,
    [A_MAG] = SL__ARG_MAG_FILTER_DEF,
    [A_MIN] = SL__ARG_MIN_FILTER_DEF,
    [A_ANTIALIAS] = SL__ARG_ANTIALIAS_DEF,
    [A_DTYPE] = SL__ARG_RESAMPLE_DTYPE_DEF,
    [A_SEED] = SL_ARG_SEED_DEF,
};

static const sl__resample_args rargs = {A_INTERP, A_MAG, A_MIN, A_ANTIALIAS, A_DTYPE};

static const sl_io_def inputs[] = {
    {"input", "Images, layout \"HWC\" (or unset), any channel count, uint8 or float32."},
};
static const sl_io_def outputs[] = {
    {"output", "Resized random crops, HWC, size (H, W), of type dtype (default: the input's)."},
};

/* ---- arguments --------------------------------------------------------------------------- */

/* A range argument of 1 or 2 values as [lo, hi]. */
static void range_of(const double *v, int n, double r[2])
{
    r[0] = v[0];
    r[1] = n > 1 ? v[1] : v[0];
}

static sl_status check_range(sl_op_init *ini, int arg, double max)
{
    int n = 0;
    double r[2];
    const double *v = sl_init_arg_floats(ini, arg, &n);
    range_of(v, n, r);
    if (!(r[0] > 0 && r[0] <= r[1] && r[1] <= max))
        return sl_init_fail(ini, SL_EINVAL, "%s [%g, %g] is not a valid range: need 0 < lo <= hi%s",
                            args[arg].name, r[0], r[1], max < INFINITY ? " <= 1" : "");
    return SL_OK;
}

static sl_status rrc_init(sl_op_init *ini, void **state)
{
    int n = 0;
    sl_status st;
    *state = NULL;
    const double *v = sl_init_arg_floats(ini, A_SIZE, &n);
    for (int k = 0; k < n; k++)
        if (!(v[k] >= 0.5 && v[k] < 0x1p30))
            return sl_init_fail(ini, SL_EINVAL,
                                "size[%d] is %g; expected an extent of at least 1 pixel", k, v[k]);
    if ((st = check_range(ini, A_AREA, 1.0)) != SL_OK ||
        (st = check_range(ini, A_RATIO, INFINITY)) != SL_OK)
        return st;
    return sl__hwc_dtype_check(ini, A_DTYPE);
}

/* Output extents (H, W). */
static void out_size(const sl_ctx *ctx, int64_t out[2])
{
    double v[2] = {1, 1};
    int n = sl_ctx_arg_floats(ctx, A_SIZE, 0, v, 2);
    out[0] = (int64_t)llround(v[0]);
    out[1] = (int64_t)llround(n > 1 ? v[1] : v[0]);
}

/* ---- setup and run ----------------------------------------------------------------------- */

static sl_status rrc_setup(sl_ctx *ctx)
{
    return sl__hwc_setup(ctx, A_DTYPE);
}

static sl_status rrc_setup_sample(sl_ctx *ctx, int i)
{
    const int64_t *s = sl_batch_shape(sl_ctx_input(ctx, 0), i);
    sl__window *win = (sl__window *)sl_ctx_iter_data(ctx) + i;
    double v[2], area[2], ratio[2];
    int64_t out[2];
    int n;

    if (s[0] <= 0 || s[1] <= 0)
        return sl_fail(ctx, SL_EINVAL, "cannot crop a window from an empty image (%lld x %lld)",
                       (long long)s[0], (long long)s[1]);
    if (s[0] > INT32_MAX || s[1] > INT32_MAX)
        return sl_fail(ctx, SL_EUNSUPPORTED, "image of %lld x %lld is too large", (long long)s[0],
                       (long long)s[1]);
    n = sl_ctx_arg_floats(ctx, A_AREA, i, v, 2);
    range_of(v, n, area);
    n = sl_ctx_arg_floats(ctx, A_RATIO, i, v, 2);
    range_of(v, n, ratio);
    sl_rng r = sl_ctx_rng(ctx, i);
    sl__random_window(&r, (int)s[1], (int)s[0], area, ratio,
                      (int)sl_ctx_arg_int(ctx, A_ATTEMPTS, i), win);
    out_size(ctx, out);
    int64_t shape[3] = {out[0], out[1], s[2]};
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

/* The resampling of sample i's window as an image of its own (crop, then resize, as
 * torchvision's resized_crop); *offset: elements from the sample's start to the window's
 * corner. Shared by the CPU and GPU runs. */
static void rrc_plan(sl_ctx *ctx, int i, sl__resample_plan *p, int64_t *offset)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t *s = sl_batch_shape(in, i);
    const sl__window *win = (const sl__window *)sl_ctx_iter_data(ctx) + i;
    sl__resample_cfg cf;
    int64_t out[2];

    sl__resample_cfg_get(ctx, &rargs, i, &cf);
    out_size(ctx, out);
    p->y = (sl__resample_axis){.in = win->h, .out = out[0], .lo = 0, .hi = win->h};
    p->x = (sl__resample_axis){.in = win->w, .out = out[1], .lo = 0, .hi = win->w};
    p->y.filter = sl__resample_pick(cf.min_filter, cf.mag_filter, win->h, out[0]);
    p->x.filter = sl__resample_pick(cf.min_filter, cf.mag_filter, win->w, out[1]);
    p->y.antialias = p->x.antialias = cf.antialias;
    p->c = s[2];
    p->stride = s[1] * s[2];
    p->in_type = sl_batch_dtype(in);
    p->out_type = cf.out_type;
    *offset = ((int64_t)win->y * s[1] + win->x) * s[2];
}

/* Only the rows and columns of the window that the resampling reads (a decoder fused before
 * it then decodes just those: ROI decoding without a dedicated decoder operator). */
static sl_status rrc_roi_sample(sl_ctx *ctx, int i)
{
    const sl__window *win = (const sl__window *)sl_ctx_iter_data(ctx) + i;
    sl__resample_plan p;
    int64_t offset;
    rrc_plan(ctx, i, &p, &offset);
    sl__resample_plan_init(&p);
    sl__resample_input_roi(ctx, i, &p, win->y, win->x);
    return SL_OK;
}

static sl_status rrc_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    sl__resample_plan p;
    int64_t offset;

    rrc_plan(ctx, i, &p, &offset);
    sl__resample_plan_init(&p);
    const char *src =
        (const char *)sl_batch_sample_data(in, i) + (size_t)offset * sl_dtype_size(p.in_type);
    return sl__resample_sample(ctx, i, &p, src);
}

#ifdef SLUICE_HAVE_CUDA
/* The window drawn by setup_sample, the plan and tables of the CPU run, the passes on the GPU
 * (resample.cu). */
static sl_status rrc_run_gpu(sl_ctx *ctx)
{
    return sl__resample_gpu(ctx, rrc_plan);
}
#endif

const sl_op_def sl_op_random_resized_crop = {
    .name = "random_resized_crop",
    .doc = "Crops a random window of random area and aspect ratio and resizes it to `size` "
           "(DALI's random_resized_crop; torchvision's RandomResizedCrop).\n\n"
           "Per sample, up to num_attempts draws of area A = U(random_area) * H * W and aspect "
           "ratio r = exp(U(log random_aspect_ratio)) give w = round(sqrt(A r)), h = "
           "round(sqrt(A / r)); the first that fits the image is placed uniformly at random. "
           "When none fits, the central crop with the image's aspect ratio clamped into "
           "random_aspect_ratio is used. The cropped window is then resized to size (H, W) "
           "exactly as `resize` would resize it as an image of its own (same filters, "
           "antialiasing and precision; pixels outside the window are never read). Windows "
           "depend only on the seed, the node, the iteration and the sample.\n\n"
           "On device \"gpu\" the windows are still drawn on the CPU (the same windows as "
           "device \"cpu\") and the resampling runs on the GPU, with the same bytes as the "
           "CPU's (uint8 and float32).\n\n"
           "Differences from DALI: the window follows torchvision's get_params (DALI's fallback "
           "shrinks the whole image to random_area's upper bound instead of the central crop); "
           "filter taps stop at the window's edges (DALI samples the window as an ROI of the "
           "whole image, so its edge pixels also weigh neighbours outside the window); HWC "
           "images only (no sequences, CHW layouts, minibatch_size, temp_buffer_hint).",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE | SL_OP_RANDOM,
    .iter_bytes_per_sample = sizeof(sl__window),
    .init = rrc_init,
    .setup = rrc_setup,
    .setup_sample = rrc_setup_sample,
    .run_sample = rrc_run_sample,
    .roi_sample = rrc_roi_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = rrc_run_gpu,
#endif
};
