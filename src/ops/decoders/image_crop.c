/* src/ops/decoders/image_crop.c: decoders.image_crop, decoding only a fixed window of each image
 * (DALI's fn.decoders.image_crop), and its alias experimental.decoders.image_crop.
 *
 * Exports sl_op_decoders_image_crop and sl_op_experimental_decoders_image_crop (the same
 * operator under DALI's newer name). The window is crop's (ops/image/window.h: crop or
 * crop_h / crop_w, crop_pos_x / crop_pos_y, `rounding`), placed on the image size the header
 * gives; a window reaching outside the image fails the sample (DALI's decoders have no
 * out_of_bounds_policy). setup_sample reads the header and keeps the window in the iteration
 * data; run_sample decodes exactly it (decoder.h: rows and columns of the window only, the rest
 * of the file still checked until it is known whole).
 * Invariant: the output equals decoders.image followed by crop with the same arguments.
 */
#include "ops/decoders/decoder.h"
#include "ops/image/window.h"

enum {
    A_CROP = SL__DECODER_NUM_ARGS,
    A_CROP_H,
    A_CROP_W,
    A_CROP_POS_X,
    A_CROP_POS_Y,
    A_ROUNDING,
    NUM_ARGS
};

static const sl_arg_def args[NUM_ARGS] = {
    SL__DECODER_ARG_DEFS,
    [A_CROP] = SL__ARG_CROP,
    [A_CROP_H] = SL__ARG_CROP_H,
    [A_CROP_W] = SL__ARG_CROP_W,
    [A_CROP_POS_X] = SL__ARG_CROP_POS_X,
    [A_CROP_POS_Y] = SL__ARG_CROP_POS_Y,
    [A_ROUNDING] = SL__ARG_ROUNDING,
};

static const sl_io_def outputs[] = {
    {"images", "The windows, HWC uint8, layout \"HWC\"."},
};

static const sl__crop_args crop_args = {.rounding = A_ROUNDING, .policy = -1, .base = A_CROP};

static sl_status crop_init(sl_op_init *ini, void **state)
{
    sl_status s = sl__crop_init_check_at(ini, A_CROP);
    return s == SL_OK ? sl__decoder_init(ini, state) : s;
}

static sl_status setup_sample(sl_ctx *ctx, int i)
{
    sl__image_info info;
    sl__color color;
    sl_status s = sl__decoder_header(ctx, i, &color, &info);
    if (s != SL_OK)
        return s;
    sl__crop_window *win = (sl__crop_window *)sl_ctx_iter_data(ctx) + i;
    s = sl__crop_window_get(ctx, &crop_args, i, info.height, info.width, win);
    if (s != SL_OK)
        return s;
    int64_t shape[3] = {win->h, win->w, sl__color_channels(color)};
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

static sl_status run_sample(sl_ctx *ctx, int i)
{
    const sl__crop_window *win = (const sl__crop_window *)sl_ctx_iter_data(ctx) + i;
    sl__color color;
    unsigned flags;
    sl_status s = sl__decoder_options(ctx, i, &color, &flags);
    if (s != SL_OK)
        return s;
    if (win->h == 0 || win->w == 0)
        return SL_OK;
    sl__roi roi = {.x = (int)win->x0, .y = (int)win->y0, .w = (int)win->w, .h = (int)win->h};
    return sl__decoder_decode(ctx, i, color, flags, &roi, sl_ctx_output_data(ctx, 0, i));
}

#define DOC_BODY                                                                                   \
    "The window is crop's: `crop` = (H, W) or `crop_h` / `crop_w` in pixels (fractions "           \
    "truncated; unset or 0: the whole extent), placed at anchor = round(crop_pos * (extent - "     \
    "crop)) per `rounding`. A window reaching outside the image fails the sample. JPEGs are "      \
    "decoded only inside the window (columns through libjpeg-turbo's `jpeg_crop_scanline`, "       \
    "rows above and below skipped; the rest of a file is still read until it is known to be "      \
    "whole, so a damaged file fails as decoders.image would). The result equals decoders.image "   \
    "followed by crop with the same arguments."

/* DALI's deprecated decoder arguments (no effect there either). */
static const sl_arg_alias aliases[] = {SL__DECODER_ALIASES};

#define IMAGE_CROP_DEF(NAME, DOC)                                                                  \
    {                                                                                              \
        .name = NAME, .doc = DOC, .inputs = sl__decoder_inputs, .min_inputs = 1, .max_inputs = 1,  \
        .outputs = outputs, .num_outputs = 1, .args = args, .num_args = NUM_ARGS,                  \
        .aliases = aliases, .num_aliases = (int)(sizeof aliases / sizeof aliases[0]),              \
        .devices = SL_OP_CPU | SL_OP_MIXED, .flags = SL_OP_DETERMINISTIC,                          \
        .iter_bytes_per_sample = sizeof(sl__crop_window), .init = crop_init,                       \
        .fini = sl__decoder_fini, .setup = sl__decoder_setup, .setup_sample = setup_sample,        \
        .run_sample = run_sample,                                                                  \
    }

const sl_op_def sl_op_decoders_image_crop =
    IMAGE_CROP_DEF("decoders.image_crop",
                   "Decodes a fixed window of each image (JPEG, PNG) into HWC uint8.\n\n" DOC_BODY);

const sl_op_def sl_op_experimental_decoders_image_crop = IMAGE_CROP_DEF(
    "experimental.decoders.image_crop", "Alias of decoders.image_crop (DALI's experimental name, "
                                        "kept for its pipelines).\n\n" DOC_BODY);
