/* crop: cuts a window out of each image, padding or trimming where it reaches outside, with an
 * optional cast (DALI's fn.crop).
 *
 * Exports: const sl_op_def sl_op_crop ("crop", CPU and GPU).
 *
 * Per sample i, with an H x W image of C channels (layout HWC, CHW, or none = HWC):
 *   window  the crop window of ops/image/window.h (shared with crop_mirror_normalize): crop
 *           extents truncated to int (< 1: the whole extent), anchor = round(pos * (in - crop))
 *           in float32 ("round": halves away from zero; "truncate": toward zero), then
 *           out_of_bounds_policy ("error" fails, "pad" fills with fill_values, "trim_to_shape"
 *           clips)
 *   copy    the window copied channel-complete in the input layout (copy_kernels.c), each
 *           element converted to `dtype` when given (DALI's saturating cast)
 * fill_values: one value for every channel, or one per channel (at least C), written as output
 * values converted to the output type.
 * On the GPU each window is the tensor family's window copy (copy_kernels.cu), one kernel for
 * the batch, planned on the host from the same windows and fill values.
 * Invariant: setup_sample computes each window once into the iteration data and run_sample only
 * reads it, so shapes and pixels agree; the op keeps no state.
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/image/window.h"
#include "ops/tensor/tensor.h"
#include "ops/tensor/tensor_gpu.h"

enum { A_DTYPE = SL__CROP_NUM_ARGS, A_FILL_VALUES, A_OOB_POLICY, A_ROUNDING, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    SL__CROP_ARG_DEFS,
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .doc = "Output type; unset: the input type. Values are converted with DALI's "
                        "saturating cast (floats to integers round, halves away from zero).",
                 .flags = SL_ARG_OPTIONAL},
    [A_FILL_VALUES] = {.name = "fill_values",
                       .type = SL_ARG_FLOATS,
                       .def = "[0.0]",
                       .doc = "Values of pixels outside the image (out_of_bounds_policy "
                              "\"pad\"): one for all channels, or one per channel.",
                       .flags = SL_ARG_SCALAR_OK},
    [A_OOB_POLICY] = SL__ARG_OOB_POLICY,
    [A_ROUNDING] = SL__ARG_ROUNDING,
};

static const sl_io_def inputs[] = {
    {"input", "Images of any type, layout \"HWC\" or \"CHW\" (unset: HWC)."},
};
static const sl_io_def outputs[] = {{"output", "The windows, in the input layout."}};

static const sl__crop_args crop_args = {.rounding = A_ROUNDING, .policy = A_OOB_POLICY};

static sl_status crop_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    return sl__crop_init_check(ini);
}

static bool is_chw(const sl_batch *in)
{
    return !strcmp(sl_batch_layout(in), "CHW");
}

static sl_dtype out_type(const sl_ctx *ctx, const sl_batch *in)
{
    return sl_ctx_arg_is_set(ctx, A_DTYPE) ? sl_ctx_arg_dtype(ctx, A_DTYPE) : sl_batch_dtype(in);
}

static sl_status crop_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const char *layout = sl_batch_layout(in);
    if (layout[0] && strcmp(layout, "HWC") != 0 && strcmp(layout, "CHW") != 0)
        return sl_fail(ctx, SL_EUNSUPPORTED,
                       "The layout \"%s\" does not match any of the allowed layouts: \"HWC\", "
                       "\"CHW\" (or none, taken as HWC)",
                       layout);
    if (sl_batch_ndim(in) != 3)
        return sl_fail(ctx, SL_EINVAL,
                       "expected images with 3 dimensions (HWC or CHW), got %d dimensions",
                       sl_batch_ndim(in));
    sl_ctx_set_output(ctx, 0, out_type(ctx, in), 3, layout);
    return SL_OK;
}

static sl_status crop_roi_sample(sl_ctx *ctx, int i)
{
    return sl__crop_window_roi(ctx, i, is_chw(sl_ctx_input(ctx, 0)));
}

static sl_status crop_setup_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t *s = sl_batch_shape(in, i);
    const bool chw = is_chw(in);
    const int64_t H = s[chw], W = s[chw + 1], C = s[chw ? 0 : 2];
    sl__crop_window *win = (sl__crop_window *)sl_ctx_iter_data(ctx) + i;

    if (sl__oob_parse(sl_ctx_arg_str(ctx, A_OOB_POLICY)) == SL__OOB_PAD) {
        int n = sl_ctx_arg_floats(ctx, A_FILL_VALUES, i, NULL, 0);
        if (n != 1 && n < C)
            return sl_fail(ctx, SL_EINVAL,
                           "fill_values has %d values; expected 1 or one per channel (%lld)", n,
                           (long long)C);
        if (n != 1 && C > SL__MAX_FILL)
            return sl_fail(ctx, SL_EUNSUPPORTED,
                           "per-channel fill_values support at most %d channels, got %lld",
                           SL__MAX_FILL, (long long)C);
    }
    sl_status st = sl__crop_window_get(ctx, &crop_args, i, H, W, win);
    if (st != SL_OK)
        return st;
    int64_t shape[3] = {win->h, win->w, C};
    if (chw)
        shape[0] = C, shape[1] = win->h, shape[2] = win->w;
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

static sl_status crop_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const sl__crop_window *win = (const sl__crop_window *)sl_ctx_iter_data(ctx) + i;
    const bool chw = is_chw(in);
    const int64_t *in_shape = sl_batch_shape(in, i);
    const int64_t C = in_shape[chw ? 0 : 2];
    int64_t anchor[3] = {win->y0, win->x0, 0};
    if (chw)
        anchor[0] = 0, anchor[1] = win->y0, anchor[2] = win->x0;
    sl__window_job job = {.ndim = 3,
                          .in_shape = in_shape,
                          .anchor = anchor,
                          .out_shape = sl_ctx_output_shape(ctx, 0, i),
                          .in = sl_batch_sample_data(in, i),
                          .in_type = sl_batch_dtype(in),
                          .out = sl_ctx_output_data(ctx, 0, i),
                          .out_type = out_type(ctx, in),
                          .fill_axis = chw ? 0 : 2};

    /* Scratch: the fill values (at most SL__MAX_FILL of <= 8 bytes), then the kernel's row. */
    size_t fill_bytes = SL__MAX_FILL * 8;
    unsigned char *scratch = sl_ctx_scratch(ctx, fill_bytes + sl__window_scratch_bytes(&job));
    if (!scratch)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for a crop row");
    int n = sl__fill_read(ctx, A_FILL_VALUES, i, job.out_type, scratch, SL__MAX_FILL);
    job.fill = scratch;
    job.nfill = n == 1 || C == 0 ? 1 : (int)C;
    sl__window_copy(&job, scratch + fill_bytes);
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
static sl_status crop_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const sl__crop_window *win = sl_ctx_iter_data(ctx);
    const int n = sl_ctx_batch_size(ctx);
    const bool chw = is_chw(in);
    const sl_dtype ot = out_type(ctx, in);
    const size_t es = sl_dtype_size(ot), nn = (size_t)(n > 0 ? n : 1);
    sl__gwin *w = sl_ctx_scratch_n(ctx, 0, sizeof(sl__gwin) * nn);
    unsigned char *fill = sl_ctx_scratch_n(ctx, 1, SL__MAX_FILL * es * nn);
    if (!w || !fill)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    int64_t nfill = 0; /* fill values so far; sample i's start there */
    for (int i = 0; i < n; i++) {
        const int64_t *in_shape = sl_batch_shape(in, i);
        const int64_t C = in_shape[chw ? 0 : 2];
        int64_t anchor[3] = {win[i].y0, win[i].x0, 0};
        if (chw)
            anchor[0] = 0, anchor[1] = win[i].y0, anchor[2] = win[i].x0;
        int k = sl__fill_read(ctx, A_FILL_VALUES, i, ot, fill + (size_t)nfill * es, SL__MAX_FILL);
        /* per channel as run_sample; more than SL__MAX_FILL channels only get one value, which
         * no pixel uses: padding with per-channel values is refused for them at setup */
        bool per_channel = k != 1 && C > 1 && C <= SL__MAX_FILL;
        sl__gwin_plan(&w[i], 3, in_shape, anchor, sl_ctx_output_shape(ctx, 0, i),
                      per_channel ? (chw ? 0 : 2) : -1);
        w[i].in = sl_batch_sample_data(in, i);
        w[i].out = sl_ctx_output_data(ctx, 0, i);
        w[i].fill = nfill;
        nfill += per_channel ? C : 1;
    }
    return sl__gpu_window(ctx, w, n, sl_batch_dtype(in), ot, fill, (size_t)nfill * es);
}
#endif

/* Deprecated names DALI still accepts (DALI 0.24: output_dtype, image_type). */
static const sl_arg_alias aliases[] = {{"output_dtype", "dtype", NULL}, {"image_type", NULL, NULL}};

const sl_op_def sl_op_crop = {
    .name = "crop",
    .doc = "Crops a window out of each image, with optional padding and cast (DALI's crop).\n\n"
           "The window is `crop` = (H, W) (or `crop_h` x `crop_w`; fractions truncated, 0: the "
           "whole extent) placed at `crop_pos_x/y` (anchor = pos * (in - crop), rounded per "
           "`rounding`). A window reaching outside the image fails the sample, is padded with "
           "`fill_values` (one value, or one per channel) or is trimmed, per "
           "`out_of_bounds_policy`. Layouts HWC and CHW (unset: HWC), any element type; "
           "`dtype` converts the output with DALI's saturating cast.\n\n"
           "`device=\"gpu\"` crops on the GPU (one kernel per batch) with the same results.\n\n"
           "Differs from DALI: volumes and sequences (crop_d, DHWC, FHWC ...) are not "
           "supported; an empty window at the image edge is allowed under \"error\".",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .aliases = aliases,
    .num_aliases = 2,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE | SL_OP_DETERMINISTIC,
    .iter_bytes_per_sample = sizeof(sl__crop_window),
    .init = crop_init,
    .setup = crop_setup,
    .setup_sample = crop_setup_sample,
    .run_sample = crop_run_sample,
    .roi_sample = crop_roi_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = crop_run_gpu,
#endif
};
