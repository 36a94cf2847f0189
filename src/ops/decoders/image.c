/* src/ops/decoders/image.c: the decoders.image operator: JPEG and PNG bytes to HWC uint8 images.
 *
 * Exports `const sl_op_def sl_op_decoders_image`. Invariant: setup_sample sets each sample's
 * shape from the header that run_sample decodes (codec.h: peek and decode agree on the size),
 * so run_sample fills exactly the output the executor allocated. All decoding work is in
 * codec.c, jpeg.c and png.c; this file is the operator's schema and its glue.
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/decoders/decoder.h"
#include "ops/decoders/hybrid.h"

enum { A_HYBRID = SL__DECODER_NUM_ARGS, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    SL__DECODER_ARG_DEFS,
    [A_HYBRID] = SL__ARG_HYBRID_DEF,
};

static const sl_io_def outputs[] = {
    {"images", "Decoded images, HWC uint8, layout \"HWC\"; C = 3 for RGB and BGR, 1 for GRAY."},
};

static const char doc[] =
    "Decodes JPEG and PNG images into HWC uint8 tensors (on the CPU, or on \"mixed\" to GPU "
    "memory).\n"
    "\n"
    "The format is detected from each file's first bytes, never from its name; a sample that is "
    "neither JPEG nor PNG, or is corrupt or truncated, fails the iteration with an error naming "
    "the sample and its file (a truncated JPEG is an error, not a gray bottom).\n"
    "\n"
    "- **JPEG** (libjpeg-turbo): baseline, progressive, arithmetic-coded; grayscale, YCbCr with "
    "any chroma subsampling, RGB, CMYK and YCCK (Adobe). Decoded with the accurate integer IDCT "
    "and fancy upsampling, so the output is identical to PIL's "
    "`Image.open(f).convert(\"RGB\")`; CMYK is converted to RGB with PIL's formula. 12-bit and "
    "lossless JPEGs are not supported.\n"
    "- **PNG** (libspng): gray, gray+alpha, palette, RGB and RGBA at every bit depth, "
    "interlaced or not. Chunk checksums are checked.\n"
    "\n"
    "`output_type` picks the channels: `\"RGB\"`, `\"BGR\"` (the same, reversed) or `\"GRAY\"`: "
    "for a YCbCr or RGB JPEG libjpeg's grayscale output, the Y channel (as PIL's "
    "`draft(\"L\", size)` gives); for a CMYK JPEG or a color PNG PIL's luma "
    "`(19595 R + 38470 G + 7471 B + 32768) >> 16` (as `convert(\"L\")`); a gray image is "
    "returned as is.\n"
    "\n"
    "Alpha (an alpha channel or a tRNS chunk) is dropped, never composited, as PIL's "
    "`convert(\"RGB\")` does. 16-bit PNG samples become `round(v * 255 / 65535)` (PIL keeps "
    "the high byte, so results may differ from PIL by 1). Gamma, ICC profiles and EXIF "
    "orientation are not applied.\n"
    "\n"
    "Memory is bounded per sample by the pipeline's `max_sample_bytes` (default 1 GiB): the "
    "output, and the working memory that grows with the image (the coefficients libjpeg keeps "
    "for a whole progressive JPEG, the 16-bit scratch of an interlaced PNG); an image that "
    "needs more fails its iteration before anything is allocated for it. Images are also at "
    "most 65535 pixels a side and 2^28 pixels in all, and JPEGs at most 256 scans (DALI's "
    "limit too): a progressive file may repeat its scans, and each one is decoded over the "
    "whole image.\n"
    "\n"
    "On `device=\"mixed\"` (with `hybrid`, the default) JPEGs are decoded in two halves: the "
    "CPU threads only entropy-decode them (libjpeg-turbo's coefficient reader), and kernels "
    "on the GPU dequantise, run libjpeg's accurate integer IDCT, upsample the chroma as "
    "libjpeg's fancy upsampler does and convert the color, so the output is byte-identical to "
    "the CPU decoder's. Samples the kernels cannot decode exactly — PNG, CMYK/YCCK JPEGs, "
    "`use_fast_idct`, a progressive file with missing scans, coefficients over "
    "`max_sample_bytes`, a file the coefficient reader rejects — are decoded whole on the CPU "
    "(same bytes, same errors) and counted in the node's `fallbacks` statistic.";

/* Reads the header only: cheap, and it lets the executor allocate the whole batch at once. */
static sl_status setup_sample(sl_ctx *ctx, int i)
{
    sl__image_info info;
    sl__color color;
    sl_status s = sl__decoder_header(ctx, i, &color, &info);
    if (s != SL_OK)
        return s;
    int64_t shape[3] = {info.height, info.width, sl__color_channels(color)};
    sl_ctx_set_shape(ctx, 0, i, shape);
    if (!sl_ctx_staged(ctx))
        return SL_OK;
    return sl__decoder_setup_staged(ctx, i, sl_ctx_arg_bool(ctx, A_HYBRID, i), NULL, shape,
                                    (sl__staged *)sl_ctx_iter_data(ctx) + i);
}

static sl_status run_staged(sl_ctx *ctx, int i)
{
    uint8_t *pixels;
    sl_status s = sl__decoder_run_staged(ctx, i, sl_ctx_arg_bool(ctx, A_HYBRID, i), NULL,
                                         (const sl__staged *)sl_ctx_iter_data(ctx) + i, &pixels);
    if (s != SL_OK || pixels == NULL)
        return s;
    sl__color color;
    unsigned flags;
    s = sl__decoder_options(ctx, i, &color, &flags);
    return s == SL_OK ? sl__decoder_decode(ctx, i, color, flags, NULL, pixels) : s;
}

static sl_status run_sample(sl_ctx *ctx, int i)
{
    if (sl_ctx_staged(ctx))
        return run_staged(ctx, i);
    sl__color color;
    unsigned flags;
    sl_status s = sl__decoder_options(ctx, i, &color, &flags);
    if (s != SL_OK)
        return s;
    uint8_t *out = sl_ctx_output_data(ctx, 0, i);
    const int64_t *shape = sl_ctx_output_shape(ctx, 0, i);
    int64_t lo[3], hi[3];
    /* Fused into a consumer that reads only part of the image (a crop, a resize that computes
     * only a crop's pixels): decode only its rows and columns (jpeg_crop_scanline), into the
     * image's place in the full-size layout; the rest is never read. Rows above and below are
     * still entropy-decoded (jpeg_skip_scanlines; SL__DECODE_TO_END), so a truncated or corrupt
     * file fails exactly as a full decode does. */
    if (sl_ctx_output_roi(ctx, 0, i, lo, hi) && hi[0] > lo[0] && hi[1] > lo[1] &&
        (lo[0] > 0 || hi[0] < shape[0] || hi[1] - lo[1] < shape[1])) {
        sl__roi r = {.x = (int)lo[1],
                     .y = (int)lo[0],
                     .w = (int)(hi[1] - lo[1]),
                     .h = (int)(hi[0] - lo[0]),
                     .stride = (size_t)(shape[1] * shape[2])};
        out += (size_t)((lo[0] * shape[1] + lo[1]) * shape[2]);
        return sl__decoder_decode(ctx, i, color, flags, &r, out);
    }
    return sl__decoder_decode(ctx, i, color, flags, NULL, out);
}

/* DALI's deprecated decoder arguments (no effect there either). */
static const sl_arg_alias aliases[] = {SL__DECODER_ALIASES};

#define OP_DEF(NAME, DOC)                                                                          \
    {                                                                                              \
        .name = NAME, .doc = DOC, .inputs = sl__decoder_inputs, .min_inputs = 1, .max_inputs = 1,  \
        .outputs = outputs, .num_outputs = 1, .args = args, .num_args = NUM_ARGS,                  \
        .aliases = aliases, .num_aliases = (int)(sizeof aliases / sizeof aliases[0]),              \
        .devices = SL_OP_CPU | SL_OP_MIXED, .flags = SL_OP_MIXED_GPU | SL_OP_DETERMINISTIC,        \
        .iter_bytes_per_sample = sizeof(sl__staged), .init = sl__decoder_init,                     \
        .fini = sl__decoder_fini, .setup = sl__decoder_setup, .setup_sample = setup_sample,        \
        .run_sample = run_sample, SL__HYBRID_RUN_GPU                                               \
    }

const sl_op_def sl_op_decoders_image = OP_DEF("decoders.image", doc);

/* DALI's newer name of the same operator (fn.experimental.decoders.*), kept as an alias. */
const sl_op_def sl_op_experimental_decoders_image =
    OP_DEF("experimental.decoders.image",
           "Alias of decoders.image (DALI's experimental name, kept for its "
           "pipelines).\n\nIdentical to decoders.image: same arguments, outputs and behaviour.");
