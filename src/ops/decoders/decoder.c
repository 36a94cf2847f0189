/* src/ops/decoders/decoder.c: the decoder family helper (see decoder.h). */
#include <string.h>

#include "ops/decoders/decoder.h"

const sl_io_def sl__decoder_inputs[1] = {
    {"encoded", "Encoded image files: a 1-D uint8 tensor of bytes per sample, such as "
                "readers.file produces."},
};

/* output_type as a codec color. */
static sl_status color_of(sl_ctx *ctx, sl__color *color)
{
    const char *s = sl_ctx_arg_str(ctx, SL__A_OUTPUT_TYPE);
    if (s != NULL && strcmp(s, "RGB") == 0)
        *color = SL__COLOR_RGB;
    else if (s != NULL && strcmp(s, "BGR") == 0)
        *color = SL__COLOR_BGR;
    else if (s != NULL && strcmp(s, "GRAY") == 0)
        *color = SL__COLOR_GRAY;
    else /* the executor checks choices first; this guards a caller that did not */
        return sl_fail(ctx, SL_EINVAL,
                       "output_type must be \"RGB\", \"BGR\" or \"GRAY\", got \"%s\"",
                       s ? s : "(null)");
    return SL_OK;
}

sl_status sl__decoder_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    sl__color color;
    if (sl_batch_dtype(in) != SL_DTYPE_UINT8 || sl_batch_ndim(in) != 1)
        return sl_fail(ctx, SL_EINVAL,
                       "input 0 must be encoded image bytes, a 1-D uint8 tensor per sample; got "
                       "%d-D %s",
                       sl_batch_ndim(in), sl_dtype_name(sl_batch_dtype(in)));
    sl_status s = color_of(ctx, &color);
    if (s == SL_OK)
        sl_ctx_set_output(ctx, 0, SL_DTYPE_UINT8, 3, "HWC");
    return s;
}

sl_status sl__decoder_header(sl_ctx *ctx, int i, sl__color *color, sl__image_info *info)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    char err[256];
    sl_status s = color_of(ctx, color);
    if (s != SL_OK)
        return s;
    s = sl__image_peek(sl_batch_sample_data(in, i), (size_t)sl_batch_sample_numel(in, i), info, err,
                       sizeof err);
    return s == SL_OK ? SL_OK : sl_fail(ctx, s, "%s", err);
}

sl_status sl__decoder_options(sl_ctx *ctx, int i, sl__color *color, unsigned *flags)
{
    sl_status s = color_of(ctx, color);
    *flags = sl_ctx_arg_bool(ctx, SL__A_USE_FAST_IDCT, i) ? SL__DECODE_FAST_IDCT : 0;
    return s;
}

void *sl__decoder_scratch(void *ctx, size_t bytes)
{
    return sl_ctx_scratch_n(ctx, SL__DECODER_SCRATCH, bytes);
}

sl_status sl__decoder_decode(sl_ctx *ctx, int i, sl__color color, unsigned flags,
                             const sl__roi *roi, uint8_t *out)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    char err[256];
    sl_status s =
        sl__image_decode(sl_batch_sample_data(in, i), (size_t)sl_batch_sample_numel(in, i), color,
                         flags, roi, out, sl__decoder_scratch, ctx, err, sizeof err);
    return s == SL_OK ? SL_OK : sl_fail(ctx, s, "%s", err);
}
