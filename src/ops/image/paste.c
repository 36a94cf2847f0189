/* paste: places each image on a larger canvas filled with a color (DALI's fn.paste).
 *
 * Exports: const sl_op_def sl_op_paste ("paste", CPU and GPU).
 *
 * Per sample, with an H x W x C uint8 image (layout HWC or none), DALI's geometry in float32
 * with truncation toward zero:
 *   canvas   H' = max(int(ratio * H), int(min_canvas_size)), W' likewise
 *   anchor   y = int(paste_y * (H' - H)), x = int(paste_x * (W' - W))
 * The canvas is fill_value (one value for every channel, or n_channels values, one per
 * channel) outside the image. The image's channel count must equal n_channels.
 * GPU (paste.cu, builds with CUDA): the same placements, one thread per output element.
 * Invariant: setup_sample computes the placement once into the iteration data.
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/image/hwc.h"
#include "ops/image/paste.h"

enum { A_RATIO, A_FILL_VALUE, A_N_CHANNELS, A_PASTE_X, A_PASTE_Y, A_MIN_CANVAS, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_RATIO] = {.name = "ratio",
                 .type = SL_ARG_FLOAT,
                 .doc = "Ratio of the canvas size to the input size; at least 1.",
                 .flags = SL_ARG_TENSOR},
    [A_FILL_VALUE] = {.name = "fill_value",
                      .type = SL_ARG_INTS,
                      .doc = "Color of the canvas: one value for every channel, or n_channels "
                             "values (0..255).",
                      .flags = SL_ARG_SCALAR_OK | SL_ARG_RANGE,
                      .min = 0,
                      .max = 255,
                      .min_len = 1,
                      .max_len = 1024},
    [A_N_CHANNELS] = {.name = "n_channels",
                      .type = SL_ARG_INT,
                      .def = "3",
                      .doc = "Number of channels of the images (at most 1024).",
                      .flags = SL_ARG_RANGE,
                      .min = 1,
                      .max = 1024},
    [A_PASTE_X] = {.name = "paste_x",
                   .type = SL_ARG_FLOAT,
                   .def = "0.5",
                   .doc = "Horizontal position of the image on the canvas: 0 left, 1 right.",
                   .flags = SL_ARG_TENSOR | SL_ARG_RANGE,
                   .min = 0,
                   .max = 1},
    [A_PASTE_Y] = {.name = "paste_y",
                   .type = SL_ARG_FLOAT,
                   .def = "0.5",
                   .doc = "Vertical position of the image on the canvas: 0 top, 1 bottom.",
                   .flags = SL_ARG_TENSOR | SL_ARG_RANGE,
                   .min = 0,
                   .max = 1},
    [A_MIN_CANVAS] = {.name = "min_canvas_size",
                      .type = SL_ARG_FLOAT,
                      .def = "0.0",
                      .doc = "Smallest canvas extent (both axes) after scaling by ratio.",
                      .flags = SL_ARG_TENSOR | SL_ARG_RANGE,
                      .min = 0,
                      .max = SL__MAX_EXTENT},
};

static const sl_io_def inputs[] = {{"input", "Images, HWC uint8 (layout \"HWC\" or none)."}};
static const sl_io_def outputs[] = {{"output", "The canvases, HWC uint8."}};

typedef struct place {
    int64_t out_h, out_w, y, x;
} place;

static sl_status paste_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    int n = 0;
    sl_init_arg_ints(ini, A_FILL_VALUE, &n);
    int64_t c = sl_init_arg_int(ini, A_N_CHANNELS);
    if (n != 1 && n != c)
        return sl_init_fail(ini, SL_EINVAL,
                            "fill_value has %d values; expected 1 or n_channels (%lld)", n,
                            (long long)c);
    return SL_OK;
}

static sl_status paste_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const char *layout = sl_batch_layout(in);
    if (sl_batch_ndim(in) != 3 || (layout[0] && strcmp(layout, "HWC") != 0) ||
        sl_batch_dtype(in) != SL_DTYPE_UINT8)
        return sl_fail(ctx, SL_EINVAL,
                       "input must be HWC uint8 images (3-D, layout \"HWC\" or none); got %d-D "
                       "%s, layout \"%s\"",
                       sl_batch_ndim(in), sl_dtype_name(sl_batch_dtype(in)), layout);
    sl_ctx_set_output(ctx, 0, SL_DTYPE_UINT8, 3, "HWC");
    return SL_OK;
}

static sl_status paste_setup_sample(sl_ctx *ctx, int i)
{
    const int64_t *s = sl_batch_shape(sl_ctx_input(ctx, 0), i);
    place *p = (place *)sl_ctx_iter_data(ctx) + i;
    float ratio = (float)sl_ctx_arg_float(ctx, A_RATIO, i);
    float min_canvas = (float)sl_ctx_arg_float(ctx, A_MIN_CANVAS, i);
    float px = (float)sl_ctx_arg_float(ctx, A_PASTE_X, i);
    float py = (float)sl_ctx_arg_float(ctx, A_PASTE_Y, i);
    if (s[2] != sl_ctx_arg_int(ctx, A_N_CHANNELS, i))
        return sl_fail(ctx, SL_EINVAL, "the image has %lld channels; n_channels is %lld",
                       (long long)s[2], (long long)sl_ctx_arg_int(ctx, A_N_CHANNELS, i));
    if (!(ratio >= 1.0f))
        return sl_fail(ctx, SL_EINVAL, "ratio of less than 1 is not supported (got %g)",
                       (double)ratio);
    if (!(ratio * (float)(s[0] > s[1] ? s[0] : s[1]) <= (float)SL__MAX_EXTENT) ||
        !(px >= 0 && px <= 1 && py >= 0 && py <= 1 && min_canvas >= 0))
        return sl_fail(ctx, SL_EINVAL,
                       "canvas of ratio %g on a %lld x %lld image is too large, or paste_x / "
                       "paste_y / min_canvas_size out of range",
                       (double)ratio, (long long)s[0], (long long)s[1]);
    int64_t mc = (int64_t)min_canvas;
    p->out_h = (int64_t)(ratio * (float)s[0]);
    p->out_w = (int64_t)(ratio * (float)s[1]);
    p->out_h = p->out_h > mc ? p->out_h : mc;
    p->out_w = p->out_w > mc ? p->out_w : mc;
    p->out_h = p->out_h < s[0] ? s[0] : p->out_h; /* float rounding never shrinks the canvas */
    p->out_w = p->out_w < s[1] ? s[1] : p->out_w;
    p->y = (int64_t)(py * (float)(p->out_h - s[0]));
    p->x = (int64_t)(px * (float)(p->out_w - s[1]));
    int64_t shape[3] = {p->out_h, p->out_w, s[2]};
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

/* Fills n pixels of C channels at dst with the fill color. */
static void fill(uint8_t *dst, int64_t n, const uint8_t *color, int64_t c)
{
    for (int64_t k = 0; k < n; k++)
        memcpy(dst + k * c, color, (size_t)c);
}

static sl_status paste_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t *s = sl_batch_shape(in, i);
    const place *p = (const place *)sl_ctx_iter_data(ctx) + i;
    const uint8_t *src = sl_batch_sample_data(in, i);
    uint8_t *dst = sl_ctx_output_data(ctx, 0, i);
    const int64_t h = s[0], w = s[1], c = s[2];
    uint8_t color[1024];
    int64_t vals[1024];
    int n = sl_ctx_arg_ints(ctx, A_FILL_VALUE, i, vals, 1024);
    for (int64_t k = 0; k < c && k < 1024; k++)
        color[k] = (uint8_t)vals[n == 1 ? 0 : k];
    const int64_t row = p->out_w * c;
    for (int64_t y = 0; y < p->out_h; y++) {
        uint8_t *d = dst + y * row;
        if (y < p->y || y >= p->y + h) {
            fill(d, p->out_w, color, c);
            continue;
        }
        fill(d, p->x, color, c);
        memcpy(d + p->x * c, src + (y - p->y) * w * c, (size_t)(w * c));
        fill(d + (p->x + w) * c, p->out_w - p->x - w, color, c);
    }
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* The placements of setup_sample and the fill color, then one launch (paste.cu). */
static sl_status paste_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx);
    if (n <= 0)
        return SL_OK;
    sl__paste_gpu *h = sl_ctx_scratch(ctx, sizeof(*h) * (size_t)n);
    if (!h)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    const int64_t c = sl_ctx_arg_int(ctx, A_N_CHANNELS, 0);
    uint8_t color[1024];
    int64_t vals[1024];
    int nv = sl_ctx_arg_ints(ctx, A_FILL_VALUE, 0, vals, 1024);
    for (int64_t k = 0; k < c && k < 1024; k++)
        color[k] = (uint8_t)vals[nv == 1 ? 0 : k];
    for (int i = 0; i < n; i++) {
        const int64_t *s = sl_batch_shape(in, i);
        const place *p = (const place *)sl_ctx_iter_data(ctx) + i;
        h[i] = (sl__paste_gpu){sl_batch_sample_data(in, i),
                               sl_ctx_output_data(ctx, 0, i),
                               s[0],
                               s[1],
                               s[2],
                               p->out_h,
                               p->out_w,
                               p->y,
                               p->x};
    }
    return sl__paste_run_gpu(ctx, h, n, color, c < 1024 ? c : 1024);
}
#endif

const sl_op_def sl_op_paste = {
    .name = "paste",
    .doc = "Pastes each image on a larger canvas filled with a color (DALI's paste).\n\n"
           "The canvas is max(int(ratio * H), int(min_canvas_size)) x max(int(ratio * W), "
           "int(min_canvas_size)) (float32, truncated), the image's top-left corner at "
           "(int(paste_y * (H' - H)), int(paste_x * (W' - W))); the rest is `fill_value` (one "
           "value, or one per channel). uint8 HWC images with n_channels channels.\n\n"
           "`device=\"gpu\"` pastes the whole batch in one launch, with the same placement.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .iter_bytes_per_sample = sizeof(place),
    .init = paste_init,
    .setup = paste_setup,
    .setup_sample = paste_setup_sample,
    .run_sample = paste_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = paste_run_gpu,
#endif
};
