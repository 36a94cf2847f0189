/* warp_affine: applies an affine transform to HWC images (DALI's fn.warp_affine, 2-D).
 *
 * Exports: const sl_op_def sl_op_warp_affine ("warp_affine", CPU, GPU).
 *
 * Per sample: the 2x3 matrix (M11, M12, M13, M21, M22, M23) comes from `matrix` (a constant or
 * a per-sample argument input) or from the optional second input `mtx`; with inverse_map=true
 * (default) it maps output to input coordinates, otherwise it is inverted first. Every output
 * pixel samples the input at M (x + 0.5, y + 0.5) (pixel-centre convention, affine.h), with
 * INTERP_NN or INTERP_LINEAR; outside the input it reads fill_value, or without one the nearest
 * edge pixel. The output is `size` = (H, W) (rounded, at least 1) or the input's size.
 * On the gpu stage the matrices are computed on the host (sample_matrix) and the warp runs in
 * affine.cu; the `mtx` input (device data there) is refused.
 *
 * Invariant: setup_sample sets each output shape from `size` or the input; run_sample only
 * reads it (through sl__affine_run_sample), so shapes and pixels written agree. No state of its
 * own (the node's state is the constant `common`, affine.h's sl__affine_args).
 */
#include <math.h>
#include <string.h>

#include "ops/image/affine.h"

enum { A_MATRIX, A_SIZE, A_INVERSE_MAP, A_FILL_VALUE, A_INTERP_TYPE, A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_MATRIX] = {.name = "matrix",
                  .type = SL_ARG_FLOATS,
                  .doc = "Transform matrix (M11, M12, M13, M21, M22, M23), row-major 2x3: with "
                         "inverse_map (default) out(x, y) = in(M11 x + M12 y + M13, M21 x + "
                         "M22 y + M23), x and y being pixel-centre coordinates (column + 0.5, "
                         "row + 0.5). Exclusive with the `mtx` input; one of them is required.",
                  .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR,
                  .min_len = 6,
                  .max_len = 6},
    [A_SIZE] = {.name = "size",
                .type = SL_ARG_FLOATS,
                .doc = "Output size (H, W) in pixels, each > 0, rounded to the nearest integer "
                       "(at least 1). Unset: the input's size.",
                .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR | SL_ARG_RANGE,
                .min = 0.0,
                .max = SL__MAX_EXTENT,
                .min_len = 2,
                .max_len = 2},
    [A_INVERSE_MAP] = {.name = "inverse_map",
                       .type = SL_ARG_BOOL,
                       .def = "true",
                       .doc = "true: the matrix maps output (destination) coordinates to input "
                              "(source) ones; false: it maps input to output and is inverted "
                              "(a singular matrix then fails the sample)."},
    [A_FILL_VALUE] = {.name = "fill_value",
                      .type = SL_ARG_FLOATS,
                      .doc = "Value of the area outside the input (one value, or one per "
                             "channel). Unset: input coordinates are clamped, repeating the "
                             "border pixels.",
                      .flags = SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK},
    [A_INTERP_TYPE] = SL__ARG_WARP_INTERP_DEF,
    [A_DTYPE] = SL__ARG_HWC_DTYPE_DEF,
};

static const sl_io_def inputs[] = {
    {"data", "Images, layout \"HWC\" (or unset), uint8 or float32, any number of channels."},
    {"mtx", "Optional: per-sample transform matrices (6 float32 values each, e.g. 2x3), used "
            "like `matrix`."},
};
static const sl_io_def outputs[] = {
    {"output", "Warped images, HWC, of type dtype."},
};

static sl_status wa_setup(sl_ctx *ctx)
{
    bool has_input = sl_ctx_num_inputs(ctx) >= 2;
    if (has_input && sl_ctx_arg_is_set(ctx, A_MATRIX))
        return sl_fail(ctx, SL_EINVAL,
                       "`matrix` and the `mtx` input are exclusive: give the transform once");
    if (!has_input && !sl_ctx_arg_is_set(ctx, A_MATRIX))
        return sl_fail(ctx, SL_EINVAL,
                       "`matrix` argument must be provided when transforms are not passed as a "
                       "regular input");
    if (has_input) {
        sl_dtype t = sl_batch_dtype(sl_ctx_input(ctx, 1));
        if (t != SL_DTYPE_FLOAT32 && t != SL_DTYPE_FLOAT64)
            return sl_fail(ctx, SL_EINVAL, "the `mtx` input must be float32 (or float64), got %s",
                           sl_dtype_name(t));
    }
    return sl__hwc_setup(ctx, A_DTYPE);
}

static sl_status wa_setup_sample(sl_ctx *ctx, int i)
{
    const int64_t *s = sl_batch_shape(sl_ctx_input(ctx, 0), i);
    int64_t shape[3] = {s[0], s[1], s[2]};
    sl_status st = sl__affine_size(ctx, A_SIZE, i, shape);
    if (st != SL_OK)
        return st;
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

/* The destination -> source matrix of sample i (host values only on the gpu stage, where
 * wa_run_gpu has refused the `mtx` input). */
static sl_status sample_matrix(sl_ctx *ctx, int i, double m[6])
{
    if (sl_ctx_num_inputs(ctx) >= 2) {
        const sl_batch *b = sl_ctx_input(ctx, 1);
        if (sl_batch_sample_numel(b, i) != 6)
            return sl_fail(ctx, SL_EINVAL, "the `mtx` input has %lld values; expected 6 (2x3)",
                           (long long)sl_batch_sample_numel(b, i));
        const void *d = sl_batch_sample_data(b, i);
        for (int k = 0; k < 6; k++)
            m[k] = sl_batch_dtype(b) == SL_DTYPE_FLOAT32 ? ((const float *)d)[k]
                                                         : ((const double *)d)[k];
    } else {
        sl_ctx_arg_floats(ctx, A_MATRIX, i, m, 6);
    }
    if (!sl_ctx_arg_bool(ctx, A_INVERSE_MAP, i) && !sl__affine_invert(m, m))
        return sl_fail(ctx, SL_EINVAL,
                       "the matrix (%g, %g, %g, %g, %g, %g) is not invertible, which "
                       "inverse_map=false needs",
                       m[0], m[1], m[2], m[3], m[4], m[5]);
    return SL_OK;
}

static const sl__affine_args common = {A_FILL_VALUE, A_INTERP_TYPE, A_DTYPE, sample_matrix};

static sl_status wa_init(sl_op_init *ini, void **state)
{
    return sl__affine_init(ini, state, &common);
}

#ifdef SLUICE_HAVE_CUDA
/* The matrices are computed on the host, so they must be host values: the `matrix` argument
 * (constant, or an argument input from a CPU node). The `mtx` input of a gpu node is device
 * data, which setup and run_gpu never read. */
static sl_status wa_run_gpu(sl_ctx *ctx)
{
    if (sl_ctx_num_inputs(ctx) >= 2)
        return sl_fail(ctx, SL_EUNSUPPORTED,
                       "the `mtx` input is not supported on device \"gpu\" (the matrices "
                       "would be GPU data); pass them as the `matrix` argument instead: a "
                       "constant or an argument input from a CPU node");
    return sl__affine_run_gpu(ctx);
}
#endif

/* Deprecated names DALI still accepts (DALI 0.24: output_dtype, image_type). */
static const sl_arg_alias aliases[] = {{"output_dtype", "dtype", NULL}};

const sl_op_def sl_op_warp_affine = {
    .name = "warp_affine",
    .doc = "Applies an affine transform to images (DALI's warp_affine).\n\n"
           "Each output pixel (row i, column j) samples the input at (sx, sy) = M (j + 0.5, "
           "i + 0.5, 1): the pixel centre of a pixel is at +0.5, so M = identity copies the "
           "image. M is the 2x3 `matrix` (or the `mtx` input), taken as an output -> input "
           "mapping when `inverse_map` is true (default) and inverted otherwise. Sampling is "
           "nearest-neighbour (the pixel containing the point) or bilinear between pixel "
           "centres, in float32; outside the input it reads `fill_value`, or without one the "
           "nearest border pixel. The output has `size` = (H, W) or the input's size.\n\n"
           "To reproduce with OpenCV: cv2.warpAffine(img, M2, (W, H), flags=INTER_LINEAR | "
           "WARP_INVERSE_MAP) with M2 = M except M2[:, 2] = M @ (0.5, 0.5, 1) - 0.5; OpenCV "
           "quantises coordinates to 1/32 pixel, sluice does not.\n\n"
           "`device=\"gpu\"` warps on the GPU with the same float32 arithmetic: the results "
           "equal the CPU's bit for bit. There the matrices must be host values, computed per "
           "sample on the host: give them as `matrix` (a constant or an argument input from a "
           "CPU node); the `mtx` input is not supported on the GPU (an error says so).\n\n"
           "Differences from DALI: 2-D HWC images only (no volumes or sequences); "
           "`fill_value` may also give one value per channel; input and output types are "
           "uint8 or float32.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 2,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .aliases = aliases,
    .num_aliases = 1,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .init = wa_init,
    .setup = wa_setup,
    .setup_sample = wa_setup_sample,
    .run_sample = sl__affine_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = wa_run_gpu,
#endif
};
