/* src/ops/decoders/image_slice.c: decoders.image_slice, decoding only a slice of each image
 * (DALI's fn.decoders.image_slice), and its alias experimental.decoders.image_slice.
 *
 * Exports sl_op_decoders_image_slice and sl_op_experimental_decoders_image_slice. The slice is
 * slice's (ops/tensor/slice_window.h: named start / end / shape arguments, absolute or
 * relative, or the positional anchor and shape inputs; axes "WH" by default) on the decoded
 * image's extents (H, W, C), layout "HWC", read from the header. Channels are kept whole; a
 * slice reaching outside the image fails the sample (DALI's decoders have no
 * out_of_bounds_policy). setup_sample keeps the window in the iteration data; run_sample
 * decodes exactly it.
 * Invariant: the output equals decoders.image followed by slice with the same arguments.
 */
#include <string.h>

#include "ops/decoders/decoder.h"
#include "ops/tensor/slice_window.h"
#include "ops/tensor/tensor.h"

enum {
    A_AXES = SL__DECODER_NUM_ARGS,
    A_AXIS_NAMES,
    A_NORMALIZED_ANCHOR,
    A_NORMALIZED_SHAPE,
    A_START,
    A_REL_START,
    A_END,
    A_REL_END,
    A_SHAPE,
    A_REL_SHAPE,
    NUM_ARGS
};

static const sl_arg_def args[NUM_ARGS] = {
    SL__DECODER_ARG_DEFS,
    [A_AXES] = SL__SLICE_ARG_AXES,
    [A_AXIS_NAMES] = SL__SLICE_ARG_AXIS_NAMES,
    [A_NORMALIZED_ANCHOR] = SL__SLICE_ARG_NORMALIZED_ANCHOR,
    [A_NORMALIZED_SHAPE] = SL__SLICE_ARG_NORMALIZED_SHAPE,
    [A_START] = SL__SLICE_ARG_START,
    [A_REL_START] = SL__SLICE_ARG_REL_START,
    [A_END] = SL__SLICE_ARG_END,
    [A_REL_END] = SL__SLICE_ARG_REL_END,
    [A_SHAPE] = SL__SLICE_ARG_SHAPE,
    [A_REL_SHAPE] = SL__SLICE_ARG_REL_SHAPE,
};

static const sl_io_def inputs[] = {
    {"encoded", "Encoded image files: a 1-D uint8 tensor of bytes per sample, such as "
                "readers.file produces."},
    {"anchor", "Optional: slice start per axis (1-D, int32, int64 or float32)."},
    {"shape", "Optional (with anchor): slice extent per axis, same type as anchor."},
};
static const sl_io_def outputs[] = {
    {"images", "The slices, HWC uint8, layout \"HWC\"."},
};

static const sl__slice_args slice_args = {
    .axes = A_AXES,
    .axis_names = A_AXIS_NAMES,
    .normalized_anchor = A_NORMALIZED_ANCHOR,
    .normalized_shape = A_NORMALIZED_SHAPE,
    .start = A_START,
    .rel_start = A_REL_START,
    .end = A_END,
    .rel_end = A_REL_END,
    .shape = A_SHAPE,
    .rel_shape = A_REL_SHAPE,
    .anchor_input = 1,
};

typedef struct window {
    int64_t anchor[3], shape[3];
} window;

static sl_status slice_init(sl_op_init *ini, void **state)
{
    sl_status s = sl__slice_init_check(ini, &slice_args);
    return s == SL_OK ? sl__decoder_init(ini, state) : s;
}

static sl_status setup(sl_ctx *ctx)
{
    sl_status s = sl__slice_inputs_check(ctx, &slice_args);
    return s == SL_OK ? sl__decoder_setup(ctx) : s;
}

static sl_status setup_sample(sl_ctx *ctx, int i)
{
    sl__image_info info;
    sl__color color;
    sl_status s = sl__decoder_header(ctx, i, &color, &info);
    if (s != SL_OK)
        return s;
    window *w = (window *)sl_ctx_iter_data(ctx) + i;
    const int64_t ext[3] = {info.height, info.width, sl__color_channels(color)};
    s = sl__slice_window(ctx, &slice_args, i, 3, ext, "HWC", w->anchor, w->shape);
    if (s != SL_OK)
        return s;
    if (w->anchor[2] != 0 || w->shape[2] != ext[2])
        return sl_fail(ctx, SL_EINVAL,
                       "a decoder slices only the H and W axes; channels must be kept whole "
                       "(got start %lld, extent %lld of %lld)",
                       (long long)w->anchor[2], (long long)w->shape[2], (long long)ext[2]);
    int64_t a[3], sh[3];
    memcpy(a, w->anchor, sizeof a);
    memcpy(sh, w->shape, sizeof sh);
    if (!sl__oob_apply(SL__OOB_ERROR, 3, ext, a, sh)) {
        char b1[96], b2[96], b3[96];
        return sl_fail(ctx, SL_EINVAL,
                       "Slice can't be placed out of bounds with current policy. Got: "
                       "input_shape=%s, slice_anchor=%s, slice_shape=%s",
                       sl__shape_str(b1, sizeof b1, ext, 3),
                       sl__shape_str(b2, sizeof b2, w->anchor, 3),
                       sl__shape_str(b3, sizeof b3, w->shape, 3));
    }
    sl_ctx_set_shape(ctx, 0, i, w->shape);
    return SL_OK;
}

static sl_status run_sample(sl_ctx *ctx, int i)
{
    const window *w = (const window *)sl_ctx_iter_data(ctx) + i;
    sl__color color;
    unsigned flags;
    sl_status s = sl__decoder_options(ctx, i, &color, &flags);
    if (s != SL_OK)
        return s;
    if (w->shape[0] == 0 || w->shape[1] == 0)
        return SL_OK;
    sl__roi roi = {.x = (int)w->anchor[1],
                   .y = (int)w->anchor[0],
                   .w = (int)w->shape[1],
                   .h = (int)w->shape[0]};
    return sl__decoder_decode(ctx, i, color, flags, &roi, sl_ctx_output_data(ctx, 0, i));
}

#define DOC_BODY                                                                                   \
    "The slice is slice's: named arguments (start or rel_start; end, rel_end, shape or "           \
    "rel_shape) or the positional inputs anchor and shape (float values are fractions of the "     \
    "extent unless normalized_anchor / normalized_shape are false), on `axis_names` (default "     \
    "\"WH\") or `axes` of the decoded image (H, W, C), rounded half away from zero. Channels are " \
    "kept whole; a slice reaching outside the image fails the sample. Only the slice is "          \
    "decoded (see decoders.image_crop); the result equals decoders.image followed by slice."

/* DALI's deprecated decoder arguments (no effect there either). */
static const sl_arg_alias aliases[] = {SL__DECODER_ALIASES};

#define IMAGE_SLICE_DEF(NAME, DOC)                                                                 \
    {                                                                                              \
        .name = NAME, .doc = DOC, .inputs = inputs, .min_inputs = 1, .max_inputs = 3,              \
        .outputs = outputs, .num_outputs = 1, .args = args, .num_args = NUM_ARGS,                  \
        .aliases = aliases, .num_aliases = (int)(sizeof aliases / sizeof aliases[0]),              \
        .devices = SL_OP_CPU | SL_OP_MIXED, .iter_bytes_per_sample = sizeof(window),               \
        .init = slice_init, .fini = sl__decoder_fini, .setup = setup,                              \
        .setup_sample = setup_sample, .run_sample = run_sample,                                    \
    }

const sl_op_def sl_op_decoders_image_slice =
    IMAGE_SLICE_DEF("decoders.image_slice",
                    "Decodes a slice of each image (JPEG, PNG) into HWC uint8.\n\n" DOC_BODY);

const sl_op_def sl_op_experimental_decoders_image_slice = IMAGE_SLICE_DEF(
    "experimental.decoders.image_slice", "Alias of decoders.image_slice (DALI's experimental name, "
                                         "kept for its pipelines).\n\n" DOC_BODY);
