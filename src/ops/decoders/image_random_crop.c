/* src/ops/decoders/image_random_crop.c: decoders.image_random_crop, decoding only a random
 * window of each image — and, given `size`, resampling it there, at a reduced JPEG DCT scale
 * when the window is large: the fast path of training pipelines.
 *
 * Exports sl_op_decoders_image_random_crop. Per sample, setup_sample reads the header, draws
 * the window (crop_window.h: torchvision's RandomResizedCrop algorithm, from the sample's RNG
 * stream) and plans the decode into the iteration data; run_sample decodes exactly that plan.
 * Invariant: the plan fixes the output shape, so run_sample writes what the executor allocated.
 */
#include <math.h>
#include <string.h>

#include "ops/decoders/decoder.h"
#include "ops/image/crop_window.h"
#include "ops/image/resample.h"

enum {
    A_RANDOM_AREA = SL__DECODER_NUM_ARGS,
    A_RANDOM_ASPECT_RATIO,
    A_NUM_ATTEMPTS,
    A_SEED,
    A_SIZE,
    A_INTERP_TYPE,
    A_ANTIALIAS,
    NUM_ARGS
};

static const sl_arg_def args[NUM_ARGS] = {
    SL__DECODER_ARG_DEFS,
    [A_RANDOM_AREA] = {.name = "random_area",
                       .type = SL_ARG_FLOATS,
                       .def = "[0.08, 1.0]",
                       .flags = SL_ARG_RANGE,
                       .min = 1e-9,
                       .max = 1.0,
                       .min_len = 2,
                       .max_len = 2,
                       .doc =
                           "Range [min, max] of the window's area as a fraction of the image's."},
    [A_RANDOM_ASPECT_RATIO] = {.name = "random_aspect_ratio",
                               .type = SL_ARG_FLOATS,
                               .def = "[0.75, 1.333333]",
                               .flags = SL_ARG_RANGE,
                               .min = 1e-6,
                               .max = 1e6,
                               .min_len = 2,
                               .max_len = 2,
                               .doc = "Range [min, max] of the window's width / height, drawn "
                                      "log-uniformly."},
    [A_NUM_ATTEMPTS] = {.name = "num_attempts",
                        .type = SL_ARG_INT,
                        .def = "10",
                        .flags = SL_ARG_RANGE,
                        .min = 1,
                        .max = 1e6,
                        .doc = "Windows drawn before falling back to the central crop."},
    [A_SEED] = SL_ARG_SEED_DEF,
    [A_SIZE] = {.name = "size",
                .type = SL_ARG_FLOATS,
                .flags = SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK | SL_ARG_RANGE,
                .min = 1,
                .max = 65535,
                .min_len = 1,
                .max_len = 2,
                .doc = "sluice extension: output [height, width] (one value: square). The "
                       "window is then resampled to it, decoding JPEGs at the smallest DCT "
                       "scale of 1/2, 1/4, 1/8 that keeps the window at least twice as large. "
                       "Unset: the window at its own resolution (DALI's behaviour)."},
    [A_INTERP_TYPE] = {.name = "interp_type",
                       .type = SL_ARG_STRING,
                       .def = "\"INTERP_LINEAR\"",
                       .choices = SL__INTERP_CHOICES,
                       .doc = "With `size`: the resampling filter (see resize)."},
    [A_ANTIALIAS] = {.name = "antialias",
                     .type = SL_ARG_BOOL,
                     .def = "true",
                     .doc = "With `size`: widen the filter when downscaling (see resize)."},
};

static const sl_io_def outputs[] = {
    {"images", "The windows, HWC uint8, layout \"HWC\": each window's own size, or `size`."},
};

/* Per-sample plan, kept in the iteration data between setup_sample and run_sample. */
typedef struct plan {
    sl__roi roi;         /* decoded rows/columns, in the (scaled) image */
    int scale;           /* JPEG DCT scale n/8; 8 = full size */
    double lo[2], hi[2]; /* y, x: the window inside roi (fractional with scaling) */
    int out_h, out_w;    /* output extent */
    bool resample;       /* size given: resample roi -> out */
} plan;

/* The output size from `size`, or 0 x 0 when unset. */
static void target_size(sl_ctx *ctx, int i, int *h, int *w)
{
    double v[2] = {0, 0};
    int n = sl_ctx_arg_is_set(ctx, A_SIZE) ? sl_ctx_arg_floats(ctx, A_SIZE, i, v, 2) : 0;
    *h = n ? (int)lround(v[0]) : 0;
    *w = n ? (int)lround(n > 1 ? v[1] : v[0]) : 0;
}

/* DCT scaling is used only when the scaled window stays at least this many times the output
 * in both extents: the resampling after it then still averages >= 2 pixels per output pixel,
 * and the result stays close to full-resolution decode + resize. Measured on the test images
 * (test_image_random_crop, size 28 x 24, scales 1/2 ... 1/8): worst mean |diff| 0.70 at margin
 * 2, 2.19 at 1.5 and 2.18 at 1 (4:4:0 chroma, where the IDCT's implicit box filter differs most
 * from the resampling filter), against the test's bound of 2.0. On the benchmark photos
 * (shorter side 300-500 px, size 224) margin 1 would make the operator ~4 % faster (a window
 * >= 448 px then decodes at 1/2); margin 2 needs >= 896 px, so there it never scales. */
#define DCT_MARGIN 2

/* Smallest scale n/8 of 1/8, 1/4 and 1/2 at which the window is still DCT_MARGIN times
 * out_w x out_h; 8 (full size) when none is, or for formats other than JPEG. Only these: they
 * are the reduced sizes libjpeg-turbo (2.1) has SIMD IDCTs for; 3/8 ... 7/8 run plain C and
 * cost more than the pixels they save (docs/performance.md, "DCT-scaled decoding"). */
static int pick_scale(const sl__image_info *info, const sl__window *win, int out_h, int out_w)
{
    if (info->format != SL__FMT_JPEG)
        return 8;
    for (int n = 1; n < 8; n *= 2) {
        if ((long long)win->w * n >= 8LL * DCT_MARGIN * out_w &&
            (long long)win->h * n >= 8LL * DCT_MARGIN * out_h)
            return n;
    }
    return 8;
}

/* The window [a, a + len) of an axis of `extent` pixels at scale n/8: the whole pixels to
 * decode, [*first, *first + *count), and the window's interval inside them. */
static void scale_axis(int a, int len, int extent, int n, int *first, int *count, double *lo,
                       double *hi)
{
    double s = n / 8.0, a0 = a * s, a1 = (a + len) * s;
    int scaled = sl__jpeg_scaled(extent, n);
    int f = (int)floor(a0), l = (int)ceil(a1);
    if (l > scaled)
        l = scaled;
    if (l <= f)
        l = f + 1;
    *first = f;
    *count = l - f;
    *lo = a0 - f;
    *hi = a1 - f;
}

static void make_plan(const sl__image_info *info, const sl__window *win, int out_h, int out_w,
                      plan *pl)
{
    memset(pl, 0, sizeof(*pl));
    pl->resample = out_h > 0;
    pl->out_h = pl->resample ? out_h : win->h;
    pl->out_w = pl->resample ? out_w : win->w;
    pl->scale = pl->resample ? pick_scale(info, win, out_h, out_w) : 8;
    scale_axis(win->y, win->h, info->height, pl->scale, &pl->roi.y, &pl->roi.h, &pl->lo[0],
               &pl->hi[0]);
    scale_axis(win->x, win->w, info->width, pl->scale, &pl->roi.x, &pl->roi.w, &pl->lo[1],
               &pl->hi[1]);
}

static sl_status setup_sample(sl_ctx *ctx, int i)
{
    sl__image_info info;
    sl__color color;
    sl_status s = sl__decoder_header(ctx, i, &color, &info);
    if (s != SL_OK)
        return s;
    double area[2], ratio[2];
    sl_ctx_arg_floats(ctx, A_RANDOM_AREA, i, area, 2);
    sl_ctx_arg_floats(ctx, A_RANDOM_ASPECT_RATIO, i, ratio, 2);
    if (area[0] > area[1] || ratio[0] > ratio[1])
        return sl_fail(ctx, SL_EINVAL, "random_area and random_aspect_ratio must be [min, max]");
    sl_rng r = sl_ctx_rng(ctx, i);
    sl__window win;
    sl__random_window(&r, info.width, info.height, area, ratio,
                      (int)sl_ctx_arg_int(ctx, A_NUM_ATTEMPTS, i), &win);
    int out_h, out_w;
    target_size(ctx, i, &out_h, &out_w);
    plan *pl = (plan *)sl_ctx_iter_data(ctx) + i;
    make_plan(&info, &win, out_h, out_w, pl);
    int64_t shape[3] = {pl->out_h, pl->out_w, sl__color_channels(color)};
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

/* Decodes the plan's roi into scratch buffer 0 and resamples it into the output. */
static sl_status decode_resampled(sl_ctx *ctx, int i, const plan *pl, sl__color color,
                                  unsigned flags)
{
    int c = sl__color_channels(color);
    sl__filter f = sl__filter_parse(sl_ctx_arg_str(ctx, A_INTERP_TYPE));
    bool aa = sl_ctx_arg_bool(ctx, A_ANTIALIAS, i);
    sl__resample_plan rp = {
        .y = {pl->roi.h, pl->out_h, pl->lo[0], pl->hi[0], f, aa},
        .x = {pl->roi.w, pl->out_w, pl->lo[1], pl->hi[1], f, aa},
        .c = c,
        .in_type = SL_DTYPE_UINT8,
        .out_type = SL_DTYPE_UINT8,
    };
    sl__resample_plan_init(&rp);
    size_t window = ((size_t)pl->roi.h * (size_t)pl->roi.w * (size_t)c + 63) & ~(size_t)63;
    if (window + rp.scratch > sl_ctx_max_sample_bytes(ctx))
        return sl_fail(ctx, SL_EUNSUPPORTED,
                       "resampling a %d x %d window needs %zu bytes, more than max_sample_bytes "
                       "(%zu)",
                       pl->roi.w, pl->roi.h, window + rp.scratch, sl_ctx_max_sample_bytes(ctx));
    uint8_t *buf = sl_ctx_scratch(ctx, window + rp.scratch);
    if (!buf)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for a %d x %d window", pl->roi.w, pl->roi.h);
    sl_status s =
        sl__decoder_decode(ctx, i, color, flags | SL__DECODE_SCALE(pl->scale), &pl->roi, buf);
    if (s == SL_OK)
        sl__resample_run(&rp, buf, sl_ctx_output_data(ctx, 0, i), buf + window);
    return s;
}

static sl_status run_sample(sl_ctx *ctx, int i)
{
    const plan *pl = (const plan *)sl_ctx_iter_data(ctx) + i;
    sl__color color;
    unsigned flags;
    sl_status s = sl__decoder_options(ctx, i, &color, &flags);
    if (s != SL_OK)
        return s;
    if (pl->resample)
        return decode_resampled(ctx, i, pl, color, flags);
    return sl__decoder_decode(ctx, i, color, flags, &pl->roi, sl_ctx_output_data(ctx, 0, i));
}

static const char doc[] =
    "Decodes a random window of each image (JPEG, PNG), optionally resampled to `size`.\n"
    "\n"
    "The window follows torchvision's `RandomResizedCrop.get_params`: up to `num_attempts` "
    "draws of an area fraction uniform in `random_area` and an aspect ratio (width / height) "
    "log-uniform in `random_aspect_ratio`, accepted when the window fits, positioned uniformly; "
    "after that the central crop with the aspect ratio clamped into range. Each sample draws "
    "from its own stream of the node's seed, so windows do not depend on threads and equal "
    "those of random_resized_crop with the same seed.\n"
    "\n"
    "JPEGs are decoded only inside the window: columns through libjpeg-turbo's "
    "`jpeg_crop_scanline`, rows above and below skipped. A damaged file fails in every epoch "
    "exactly when decoding it whole would, whatever its window: the skipped rows are still "
    "entropy-decoded (PNG: inflated and checked) until a file read by name has once been read "
    "whole without error, and only its window is decoded after that. Without `size` the "
    "output is the window at its own resolution, identical to decoding the whole image and "
    "cropping (DALI's behaviour: a `resize` follows). With `size` (a sluice extension) the "
    "window is resampled to size like resize does (`interp_type`, `antialias`), and a JPEG is "
    "decoded at the smallest DCT scale of 1/2, 1/4 and 1/8 that keeps the window at least "
    "twice `size` in both extents: most of the downscaling then happens inside the IDCT, "
    "which is much cheaper. The result differs slightly from full-resolution decode + resize "
    "(tests bound the difference).";

/* DALI's deprecated decoder arguments (no effect there either). */
static const sl_arg_alias aliases[] = {SL__DECODER_ALIASES};

#define OP_DEF(NAME, DOC)                                                                          \
    {                                                                                              \
        .name = NAME, .doc = DOC, .inputs = sl__decoder_inputs, .min_inputs = 1, .max_inputs = 1,  \
        .outputs = outputs, .num_outputs = 1, .args = args, .num_args = NUM_ARGS,                  \
        .aliases = aliases, .num_aliases = (int)(sizeof aliases / sizeof aliases[0]),              \
        .devices = SL_OP_CPU | SL_OP_MIXED, .flags = SL_OP_RANDOM,                                 \
        .iter_bytes_per_sample = sizeof(plan), .init = sl__decoder_init, .fini = sl__decoder_fini, \
        .setup = sl__decoder_setup, .setup_sample = setup_sample, .run_sample = run_sample,        \
    }

const sl_op_def sl_op_decoders_image_random_crop = OP_DEF("decoders.image_random_crop", doc);

/* DALI's newer name of the same operator (fn.experimental.decoders.*), kept as an alias. */
const sl_op_def sl_op_experimental_decoders_image_random_crop =
    OP_DEF("experimental.decoders.image_random_crop",
           "Alias of decoders.image_random_crop (DALI's experimental name, kept for its "
           "pipelines).\n\nIdentical to decoders.image_random_crop: same arguments, outputs and "
           "behaviour.");
