/* grid_mask: zeroes pixels in a rotated grid of squares (DALI's fn.grid_mask, GridMask
 * augmentation).
 *
 * Exports: const sl_op_def sl_op_grid_mask ("grid_mask", CPU and GPU).
 *
 * Pixel (column x, row y) of an HWC image, with u = x - shift_x, v = y - shift_y:
 *   fx = (u cos(angle) - v sin(angle)) / tile,  fy = (u sin(angle) + v cos(angle)) / tile
 * is kept when frac(fx) >= ratio or frac(fy) >= ratio, else all its channels become 0 (DALI's
 * kernel: black squares of side ratio * tile, repeating every tile pixels, rotated by angle).
 * Computed in double per pixel (grid_mask.h's sl__gm_keep, which the GPU run, grid_mask.cu,
 * shares: the same pixels are masked on both backends).
 */
#include <math.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/image/grid_mask.h"

enum { A_TILE, A_RATIO, A_ANGLE, A_SHIFT_X, A_SHIFT_Y, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_TILE] = {.name = "tile",
                .type = SL_ARG_INT,
                .def = "100",
                .doc = "Length of a tile: the width of a black square plus the spacing.",
                .flags = SL_ARG_TENSOR | SL_ARG_RANGE,
                .min = 1,
                .max = 1e9},
    [A_RATIO] = {.name = "ratio",
                 .type = SL_ARG_FLOAT,
                 .def = "0.5",
                 .doc = "Width of a black square as a fraction of the tile.",
                 .flags = SL_ARG_TENSOR | SL_ARG_RANGE,
                 .min = 0,
                 .max = 1},
    [A_ANGLE] = {.name = "angle",
                 .type = SL_ARG_FLOAT,
                 .def = "0.0",
                 .doc = "Rotation of the grid, in radians.",
                 .flags = SL_ARG_TENSOR},
    [A_SHIFT_X] = {.name = "shift_x",
                   .type = SL_ARG_FLOAT,
                   .def = "0.0",
                   .doc = "x component of the grid's translation (pixels), after rotation.",
                   .flags = SL_ARG_TENSOR},
    [A_SHIFT_Y] = {.name = "shift_y",
                   .type = SL_ARG_FLOAT,
                   .def = "0.0",
                   .doc = "y component of the grid's translation (pixels), after rotation.",
                   .flags = SL_ARG_TENSOR},
};

static const sl_io_def inputs[] = {
    {"input", "Images, HWC (layout \"HWC\" or none), uint8, int16, int32 or float32."}};
static const sl_io_def outputs[] = {{"output", "The masked images."}};

static sl_status gm_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const char *layout = sl_batch_layout(in);
    sl_dtype t = sl_batch_dtype(in);
    if (sl_batch_ndim(in) != 3 || (layout[0] && strcmp(layout, "HWC") != 0) ||
        (t != SL_DTYPE_UINT8 && t != SL_DTYPE_INT16 && t != SL_DTYPE_INT32 &&
         t != SL_DTYPE_FLOAT32))
        return sl_fail(ctx, SL_EINVAL,
                       "input must be HWC images (layout \"HWC\" or none) of uint8, int16, int32 "
                       "or float32; got %d-D %s, layout \"%s\"",
                       sl_batch_ndim(in), sl_dtype_name(t), layout);
    sl_ctx_set_output(ctx, 0, t, 3, "HWC");
    return SL_OK;
}

static sl_status gm_setup_sample(sl_ctx *ctx, int i)
{
    sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(sl_ctx_input(ctx, 0), i));
    return SL_OK;
}

/* Sample i's grid; error recorded when tile < 1. */
static sl_status grid(sl_ctx *ctx, int i, sl__gm_params *p)
{
    double tile = (double)sl_ctx_arg_int(ctx, A_TILE, i);
    double angle = sl_ctx_arg_float(ctx, A_ANGLE, i);
    p->ratio = sl_ctx_arg_float(ctx, A_RATIO, i);
    p->sx = sl_ctx_arg_float(ctx, A_SHIFT_X, i);
    p->sy = sl_ctx_arg_float(ctx, A_SHIFT_Y, i);
    if (!(tile >= 1))
        return sl_fail(ctx, SL_EINVAL, "tile must be at least 1, got %g", tile);
    p->ca = cos(angle) / tile;
    p->sa = sin(angle) / tile;
    return SL_OK;
}

static sl_status gm_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t *s = sl_batch_shape(in, i);
    size_t es = sl_dtype_size(sl_batch_dtype(in));
    size_t pixel = (size_t)s[2] * es;
    const unsigned char *src = sl_batch_sample_data(in, i);
    unsigned char *dst = sl_ctx_output_data(ctx, 0, i);
    sl__gm_params p;
    sl_status st = grid(ctx, i, &p);
    if (st != SL_OK)
        return st;
    for (int64_t y = 0; y < s[0]; y++) {
        for (int64_t x = 0; x < s[1]; x++) {
            size_t o = (size_t)(y * s[1] + x) * pixel;
            if (sl__gm_keep(&p, x, y))
                memcpy(dst + o, src + o, pixel);
            else
                memset(dst + o, 0, pixel); /* 0 is all-zero bytes in every supported type */
        }
    }
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* Every sample's grid on the host (errors name the sample), then one launch (grid_mask.cu). */
static sl_status gm_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx);
    const size_t es = sl_dtype_size(sl_batch_dtype(in));
    if (n <= 0)
        return SL_OK;
    sl__gm_gpu *h = sl_ctx_scratch(ctx, sizeof(*h) * (size_t)n);
    if (!h)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    for (int i = 0; i < n; i++) {
        const int64_t *s = sl_batch_shape(in, i);
        memset(&h[i], 0, sizeof h[i]);
        h[i].in = sl_batch_sample_data(in, i);
        h[i].out = sl_ctx_output_data(ctx, 0, i);
        h[i].pixel_bytes = s[2] * (int64_t)es;
        h[i].h = s[2] > 0 ? s[0] : 0;
        h[i].w = s[1];
        sl_ctx_focus_sample(ctx, i);
        sl_status st = grid(ctx, i, &h[i].p);
        if (st != SL_OK)
            return st;
    }
    sl_ctx_focus_sample(ctx, -1);
    return sl__grid_mask_run_gpu(ctx, h, n);
}
#endif

const sl_op_def sl_op_grid_mask = {
    .name = "grid_mask",
    .doc = "Performs the GridMask augmentation: zeroes pixels in a grid of squares (DALI's "
           "grid_mask).\n\n"
           "Black squares of side ratio * tile repeat every `tile` pixels in both directions; "
           "the grid is rotated by `angle` (radians) about the origin, then moved by (shift_x, "
           "shift_y). Pixel (x, y) is zeroed when both frac(((x - shift_x) cos a - (y - "
           "shift_y) sin a) / tile) and frac(((x - shift_x) sin a + (y - shift_y) cos a) / "
           "tile) are below ratio.\n\n"
           "`device=\"gpu\"` masks the whole batch in one launch; the same pixels as on the "
           "CPU.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .setup = gm_setup,
    .setup_sample = gm_setup_sample,
    .run_sample = gm_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = gm_run_gpu,
#endif
};
