/* peek_image_shape: the shape an encoded image will have once decoded, read from its header
 * (DALI's fn.peek_image_shape and its alias fn.experimental.peek_image_shape).
 *
 * Exports: const sl_op_def sl_op_peek_image_shape ("peek_image_shape", CPU) and
 * sl_op_experimental_peek_image_shape (the same operator under DALI's deprecated experimental
 * name).
 *
 * Output per sample: [H, W, C] as `dtype` (int64 by default), where C is what decoders.image
 * gives for `image_type`: 3 for RGB, BGR and YCbCr, 1 for GRAY, the file's own channel count
 * for ANY_DATA. Only the header is read (sl__image_peek: JPEG and PNG); a file that is neither,
 * or a corrupt header, fails naming the sample and its file.
 * Invariant: stateless; reads only the header bytes.
 */
#include "ops/decoders/codec.h"
#include "ops/tensor/tensor.h"
#include "sluice/op.h"

enum { A_DTYPE, A_IMAGE_TYPE, A_ADJUST_ORIENTATION, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .def = "\"int64\"",
                 .doc = "Type of the output values."},
    [A_IMAGE_TYPE] = {.name = "image_type",
                      .type = SL_ARG_STRING,
                      .def = "\"RGB\"",
                      .doc = "The color format the image would be decoded to: it sets C (3 for "
                             "RGB, BGR and YCbCr, 1 for GRAY, the file's channels for ANY_DATA).",
                      .choices = "RGB|BGR|GRAY|YCbCr|ANY_DATA"},
    [A_ADJUST_ORIENTATION] = {.name = "adjust_orientation",
                              .type = SL_ARG_BOOL,
                              .def = "true",
                              .doc = "Accepted for DALI compatibility; sluice's decoders do not "
                                     "apply EXIF orientation, so neither does this shape."},
};

static const sl_arg_alias aliases[] = {{"type", "dtype", NULL}};

static const sl_io_def inputs[] = {{"input", "Encoded images (JPEG or PNG bytes), 1-D uint8."}};
static const sl_io_def outputs[] = {{"output", "[H, W, C] per sample."}};

static sl_status peek_setup(sl_ctx *ctx)
{
    const sl_dtype t = sl_ctx_arg_dtype(ctx, A_DTYPE);
    if (t == SL_DTYPE_BOOL)
        return sl_fail(ctx, SL_EINVAL, "dtype bool cannot hold a shape");
    sl_ctx_set_output(ctx, 0, t, 1, NULL);
    const int64_t three = 3;
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        sl_ctx_set_shape(ctx, 0, i, &three);
    return SL_OK;
}

static sl_status peek_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const sl_dtype t = sl_ctx_arg_dtype(ctx, A_DTYPE);
    char err[256];
    sl__image_info info;
    sl_status s =
        sl__image_peek(sl_batch_sample_data(in, i),
                       (size_t)sl_batch_sample_numel(in, i) * sl_dtype_size(sl_batch_dtype(in)),
                       &info, err, sizeof err);
    if (s != SL_OK)
        return sl_fail(ctx, s, "%s", err);
    const char *type = sl_ctx_arg_str(ctx, A_IMAGE_TYPE);
    const int c = type[0] == 'G' ? 1 : type[0] == 'A' ? info.channels : 3;
    const double shape[3] = {info.height, info.width, c};
    sl__convert_get(t, SL_DTYPE_FLOAT64)(sl_ctx_output_data(ctx, 0, i), shape, 3);
    return SL_OK;
}

#define PEEK_OP(C_NAME, NAME, DOC)                                                                 \
    const sl_op_def C_NAME = {                                                                     \
        .name = NAME,                                                                              \
        .doc = DOC,                                                                                \
        .inputs = inputs,                                                                          \
        .min_inputs = 1,                                                                           \
        .max_inputs = 1,                                                                           \
        .outputs = outputs,                                                                        \
        .num_outputs = 1,                                                                          \
        .args = args,                                                                              \
        .num_args = NUM_ARGS,                                                                      \
        .aliases = aliases,                                                                        \
        .num_aliases = 1,                                                                          \
        .devices = SL_OP_CPU,                                                                      \
        .flags = SL_OP_SAMPLEWISE,                                                                 \
        .setup = peek_setup,                                                                       \
        .run_sample = peek_run_sample,                                                             \
    }

#define PEEK_DOC                                                                                   \
    "The shape [H, W, C] an encoded image will have once decoded, from its header only (DALI's "   \
    "peek_image_shape).\n\n"                                                                       \
    "C follows image_type as decoders.image's output_type does (3 for RGB, BGR and YCbCr, 1 for "  \
    "GRAY; ANY_DATA: the file's channels). JPEG and PNG; anything else fails naming the sample "   \
    "and its file.\n\n"                                                                            \
    "Differs from DALI: EXIF orientation is not applied (adjust_orientation is accepted), like "   \
    "sluice's decoders."

PEEK_OP(sl_op_peek_image_shape, "peek_image_shape", PEEK_DOC);
PEEK_OP(sl_op_experimental_peek_image_shape, "experimental.peek_image_shape",
        "Alias of peek_image_shape (DALI's deprecated experimental name).\n\n" PEEK_DOC);
