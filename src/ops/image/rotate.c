/* rotate: rotates HWC images about their centre (DALI's fn.rotate, 2-D).
 *
 * Exports: const sl_op_def sl_op_rotate ("rotate", CPU, GPU).
 *
 * Per sample, with angle a in degrees (positive = counter-clockwise on screen, y pointing
 * down), input W x H and output W' x H':
 *   size    `size` (H', W') if given; the input's with keep_size; otherwise the bounding box,
 *           as DALI: W' = ceil(W |cos a| + H |sin a| - 0.01), H' = ceil(H |cos a| + W |sin a|
 *           - 0.01), then each extent gets +1 where its parity differs from that of the input
 *           extent it mostly comes from (W for W' and H for H' when |sin a| <= |cos a|, swapped
 *           otherwise), so the centres of input and output stay on the same sub-pixel grid.
 *   mapping output pixel centre p -> input point R(a) (p - (W'/2, H'/2)) + (W/2, H/2) with
 *           R(a) = [[cos a, -sin a], [sin a, cos a]], sampled as warp_affine does (affine.h).
 *   gpu     sizes (setup_sample) and matrices (rotate_matrix) come from the same host code;
 *           affine.cu uploads them and warps on the device, bit-identical to the CPU.
 *
 * Invariant: setup_sample and run_sample derive size and matrix from the same argument values
 * (angle, size, keep_size), so they agree; no state of its own (the node's state is the
 * constant `common`, affine.h's sl__affine_args, which sl__affine_run_sample runs).
 */
#include <math.h>
#include <stdlib.h>

#include "ops/image/affine.h"

enum { A_ANGLE, A_FILL_VALUE, A_KEEP_SIZE, A_SIZE, A_INTERP_TYPE, A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_ANGLE] = {.name = "angle",
                 .type = SL_ARG_FLOAT,
                 .doc = "Rotation angle in degrees; positive rotates counter-clockwise (as seen "
                        "on screen, with the origin at the top-left corner).",
                 .flags = SL_ARG_TENSOR},
    [A_FILL_VALUE] = {.name = "fill_value",
                      .type = SL_ARG_FLOATS,
                      .doc = "Value of the area outside the rotated image (one value, or one "
                             "per channel). Unset: input coordinates are clamped, repeating the "
                             "border pixels.",
                      .flags = SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK},
    [A_KEEP_SIZE] = {.name = "keep_size",
                     .type = SL_ARG_BOOL,
                     .def = "false",
                     .doc = "true: the output keeps the input's size (corners are cut off); "
                            "false: it is enlarged to fit the whole rotated image."},
    [A_SIZE] = {.name = "size",
                .type = SL_ARG_FLOATS,
                .doc = "Output size (H, W) in pixels, each > 0, rounded (at least 1). "
                       "Exclusive with keep_size.",
                .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR | SL_ARG_RANGE,
                .min = 0.0,
                .max = SL__MAX_EXTENT,
                .min_len = 2,
                .max_len = 2},
    [A_INTERP_TYPE] = SL__ARG_WARP_INTERP_DEF,
    [A_DTYPE] = SL__ARG_HWC_DTYPE_DEF,
};

static const sl_io_def inputs[] = {
    {"input", "Images, layout \"HWC\" (or unset), uint8 or float32, any number of channels."},
};
static const sl_io_def outputs[] = {
    {"output", "Rotated images, HWC, of type dtype."},
};

static sl_status rotate_setup(sl_ctx *ctx)
{
    return sl__hwc_setup(ctx, A_DTYPE);
}

/* Adds 1 to *n when its parity differs from that of ref. */
static void match_parity(int64_t *n, int64_t ref)
{
    if ((*n & 1) != (ref & 1))
        (*n)++;
}

/* DALI's canvas of an H x W image rotated by a radians (RotatedCanvasSize). */
static void canvas(int64_t H, int64_t W, double a, int64_t hw[2])
{
    double c = fabs(cos(a)), s = fabs(sin(a));
    int64_t w = (int64_t)ceil(c * (double)W + s * (double)H - 0.01);
    int64_t h = (int64_t)ceil(c * (double)H + s * (double)W - 0.01);
    w = w < 0 ? 0 : w;
    h = h < 0 ? 0 : h;
    if (s <= c) {
        match_parity(&w, W);
        match_parity(&h, H);
    } else {
        match_parity(&h, W);
        match_parity(&w, H);
    }
    hw[0] = h;
    hw[1] = w;
}

/* The sample's angle in radians; fails on a non-finite one. */
static sl_status angle_of(sl_ctx *ctx, int i, double *rad)
{
    double deg = sl_ctx_arg_float(ctx, A_ANGLE, i);
    if (!isfinite(deg))
        return sl_fail(ctx, SL_EINVAL, "angle %g is not a finite number of degrees", deg);
    /* Reduce first so sin and cos of multiples of 90 degrees are as close to 0/1 as they get. */
    *rad = fmod(deg, 360.0) * (M_PI / 180.0);
    return SL_OK;
}

static sl_status rotate_setup_sample(sl_ctx *ctx, int i)
{
    const int64_t *s = sl_batch_shape(sl_ctx_input(ctx, 0), i);
    int64_t shape[3] = {s[0], s[1], s[2]};
    double a;
    sl_status st = angle_of(ctx, i, &a);
    if (st != SL_OK)
        return st;
    if (sl_ctx_arg_is_set(ctx, A_SIZE))
        st = sl__affine_size(ctx, A_SIZE, i, shape);
    else if (!sl_ctx_arg_bool(ctx, A_KEEP_SIZE, i))
        canvas(s[0], s[1], a, shape);
    if (st != SL_OK)
        return st;
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

/* The destination -> source matrix of sample i (input and output shapes, angle). */
static sl_status rotate_matrix(sl_ctx *ctx, int i, double m[6])
{
    const int64_t *is = sl_batch_shape(sl_ctx_input(ctx, 0), i);
    const int64_t *os = sl_ctx_output_shape(ctx, 0, i);
    double a;
    sl_status st = angle_of(ctx, i, &a);
    if (st != SL_OK)
        return st;
    const double c = cos(a), s = sin(a);
    const double icx = 0.5 * (double)is[1], icy = 0.5 * (double)is[0];
    const double ocx = 0.5 * (double)os[1], ocy = 0.5 * (double)os[0];
    /* in = R(a) (out - oc) + ic */
    m[0] = c;
    m[1] = -s;
    m[2] = icx - c * ocx + s * ocy;
    m[3] = s;
    m[4] = c;
    m[5] = icy - s * ocx - c * ocy;
    return SL_OK;
}

static const sl__affine_args common = {A_FILL_VALUE, A_INTERP_TYPE, A_DTYPE, rotate_matrix};

static sl_status rotate_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    if (sl_init_arg_is_set(ini, A_SIZE) && sl_init_arg_bool(ini, A_KEEP_SIZE))
        return sl_init_fail(ini, SL_EINVAL,
                            "size and keep_size are exclusive: give an output size or keep "
                            "the input's");
    return sl__affine_init(ini, state, &common);
}

/* Deprecated names DALI still accepts (DALI 0.24: output_dtype, image_type). */
static const sl_arg_alias aliases[] = {{"output_dtype", "dtype", NULL}};

const sl_op_def sl_op_rotate = {
    .name = "rotate",
    .doc = "Rotates images by `angle` degrees counter-clockwise about their centre (DALI's "
           "rotate).\n\n"
           "Without `size` or `keep_size` the output is the rotated image's bounding box, "
           "W' = ceil(W |cos a| + H |sin a| - 0.01) and H' = ceil(H |cos a| + W |sin a| - 0.01), "
           "each made one larger where needed so its parity matches the input extent it "
           "mostly comes from (W and H, or H and W past 45 degrees): the centres then stay on "
           "the same sub-pixel grid. Each output pixel centre p samples the input at "
           "R(a) (p - out_centre) + in_centre (pixel centres at +0.5, as warp_affine), "
           "nearest-neighbour or bilinear in float32; outside the input it reads "
           "`fill_value`, or without one the nearest border pixel.\n\n"
           "`device=\"gpu\"` computes sizes and matrices on the host as above and warps on the "
           "GPU with the same float32 arithmetic: the results equal the CPU's bit for bit. "
           "Angles given per sample come from CPU nodes (argument inputs), as in DALI.\n\n"
           "Differences from DALI: 2-D HWC images only (no volumes, `axis`, or per-frame "
           "angles); `size` together with `keep_size` is an error (DALI lets `size` win); "
           "`fill_value` may give one value per channel; types are uint8 or float32.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .aliases = aliases,
    .num_aliases = 1,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE | SL_OP_DETERMINISTIC,
    .init = rotate_init,
    .setup = rotate_setup,
    .setup_sample = rotate_setup_sample,
    .run_sample = sl__affine_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = sl__affine_run_gpu,
#endif
};
