/* src/ops/decoders/decoder.h: what the decoder operators share (the family helper of
 * decoders.image and decoders.image_random_crop): the common arguments, which open each op's
 * table (SL__A_OUTPUT_TYPE, SL__A_USE_FAST_IDCT), the whole setup (input check, output
 * declaration), the output_type parsing, the header peek, the decode with the op's error
 * context, the op state (init / fini): the files known to be whole, and on device "mixed" the
 * hybrid decoder's CPU half (sl__decoder_setup_staged / sl__decoder_run_staged, hybrid.h).
 *
 * Verdicts: a window decode reads the rest of the file too (SL__DECODE_TO_END), so a damaged
 * file fails whichever window an epoch picks — but that costs the entropy decoding of the rows
 * below the window (~10 % of a random-resized-crop pipeline). So the op remembers the files that
 * were read whole without error (a hash of the file name from the reader and of the size) and
 * decodes only the window of those in later epochs: the verdict is the whole decode's every
 * time, and only the first epoch pays. Samples without a file name (external_source) are always
 * read whole. The set is the op's state, shared by the workers under one mutex held for a
 * lookup or an insertion; it grows to one 8-byte key (and a byte of properties) per good file,
 * then allocates nothing. On "mixed" a second property is kept, for whole-image decodes too:
 * the file's whole scan was entropy-decoded by jpeg_huff.c without giving up ("clean"), which
 * sends it to device entropy decoding in later epochs (hybrid.h; SLUICE_HYBRID_DEVICE_HUFF=0
 * turns that off).
 */
#ifndef SLUICE_OPS_DECODERS_DECODER_H
#define SLUICE_OPS_DECODERS_DECODER_H

#include <stdbool.h>

#include "ops/decoders/codec.h"
#include "sluice/op.h"

#define SL__DOC_OUTPUT_TYPE                                                                        \
    "Color of the output: \"RGB\" or \"BGR\" (3 channels), or \"GRAY\" (1 channel)."
#define SL__DOC_FAST_IDCT                                                                          \
    "JPEG: use libjpeg's fast integer IDCT (JDCT_IFAST) instead of the accurate one: faster, "     \
    "slightly less accurate, and no longer identical to PIL."

/* The common arguments open the table of every decoder op, in this order (SL__DECODER_ARG_DEFS);
 * the op's own arguments follow from SL__DECODER_NUM_ARGS on. The SL__A_TUNE_* ones are DALI's
 * nvJPEG and memory tuning arguments, accepted so that DALI's pipelines (its ResNet-50 example
 * passes device_memory_padding and host_memory_padding) build unchanged; they do not change a
 * pixel and sluice has nothing they would tune, so their values are not read. */
enum {
    SL__A_OUTPUT_TYPE,
    SL__A_USE_FAST_IDCT,
    SL__A_TUNE_DEVICE_PADDING,
    SL__A_TUNE_HOST_PADDING,
    SL__A_TUNE_DEVICE_PADDING_J2K,
    SL__A_TUNE_HOST_PADDING_J2K,
    SL__A_TUNE_HW_LOAD,
    SL__A_TUNE_HUFFMAN_THRESHOLD,
    SL__A_TUNE_WIDTH_HINT,
    SL__A_TUNE_HEIGHT_HINT,
    SL__A_TUNE_AFFINE,
    SL__A_TUNE_FANCY_UPSAMPLING,
    SL__A_ON_BAD_SAMPLE,
    SL__DECODER_NUM_ARGS
};

#define SL__DOC_TUNE(what)                                                                         \
    "DALI's " what "; accepted for compatibility and not used: sluice's decoders have nothing it " \
    "would tune, and it changes no output."
#define SL__ARG_TUNE_INT_DEF(n, d, what)                                                           \
    {                                                                                              \
        .name = n, .type = SL_ARG_INT, .def = d, .flags = SL_ARG_RANGE, .min = 0, .max = 9.0e15,   \
        .doc = SL__DOC_TUNE(what)                                                                  \
    }

/* The argument definitions, for an op's table. */
#define SL__ARG_OUTPUT_TYPE_DEF                                                                    \
    {                                                                                              \
        .name = "output_type", .type = SL_ARG_STRING, .def = "\"RGB\"", .choices = "RGB|BGR|GRAY", \
        .doc = SL__DOC_OUTPUT_TYPE                                                                 \
    }
#define SL__ARG_USE_FAST_IDCT_DEF                                                                  \
    {                                                                                              \
        .name = "use_fast_idct", .type = SL_ARG_BOOL, .def = "false", .doc = SL__DOC_FAST_IDCT     \
    }

/* `hybrid`, of the decoders that have a "mixed" half finished by kernels (hybrid.h). */
#define SL__ARG_HYBRID_DEF                                                                         \
    {                                                                                              \
        .name = "hybrid", .type = SL_ARG_BOOL, .def = "true",                                      \
        .doc = "Device \"mixed\": decode JPEGs in two halves, the entropy decoding on the CPU "    \
               "and the rest (dequantisation, IDCT, chroma upsampling, color conversion) on the "  \
               "GPU, identical to the CPU decoder; what the GPU half cannot do exactly is "        \
               "decoded on the CPU (counted in the node's statistics as fallbacks). false: "       \
               "every image is decoded on the CPU and copied. No effect on \"cpu\"."               \
    }

#define SL__DECODER_ARG_DEFS                                                                       \
    [SL__A_OUTPUT_TYPE] = SL__ARG_OUTPUT_TYPE_DEF,                                                 \
    [SL__A_USE_FAST_IDCT] = SL__ARG_USE_FAST_IDCT_DEF,                                             \
    [SL__A_TUNE_DEVICE_PADDING] = SL__ARG_TUNE_INT_DEF("device_memory_padding", "16777216",        \
                                                       "nvJPEG device buffer padding (bytes)"),    \
    [SL__A_TUNE_HOST_PADDING] = SL__ARG_TUNE_INT_DEF("host_memory_padding", "8388608",             \
                                                     "nvJPEG pinned buffer padding (bytes)"),      \
    [SL__A_TUNE_DEVICE_PADDING_J2K] = SL__ARG_TUNE_INT_DEF(                                        \
        "device_memory_padding_jpeg2k", "0", "nvJPEG2000 device buffer padding (bytes)"),          \
    [SL__A_TUNE_HOST_PADDING_J2K] = SL__ARG_TUNE_INT_DEF(                                          \
        "host_memory_padding_jpeg2k", "0", "nvJPEG2000 pinned buffer padding (bytes)"),            \
    [SL__A_TUNE_HW_LOAD] = {.name = "hw_decoder_load",                                             \
                            .type = SL_ARG_FLOAT,                                                  \
                            .def = "0.65",                                                         \
                            .flags = SL_ARG_RANGE,                                                 \
                            .min = 0,                                                              \
                            .max = 1,                                                              \
                            .doc = SL__DOC_TUNE("share of images for the A100's hardware JPEG "    \
                                                "decoder")},                                       \
    [SL__A_TUNE_HUFFMAN_THRESHOLD] =                                                               \
        SL__ARG_TUNE_INT_DEF("hybrid_huffman_threshold", "1000000",                                \
                             "pixel count above which nvJPEG decodes Huffman on "                  \
                             "the GPU"),                                                           \
    [SL__A_TUNE_WIDTH_HINT] = SL__ARG_TUNE_INT_DEF("preallocate_width_hint", "0",                  \
                                                   "width to preallocate nvJPEG buffers for"),     \
    [SL__A_TUNE_HEIGHT_HINT] = SL__ARG_TUNE_INT_DEF("preallocate_height_hint", "0",                \
                                                    "height to preallocate nvJPEG buffers for"),   \
    [SL__A_TUNE_AFFINE] = {.name = "affine",                                                       \
                           .type = SL_ARG_BOOL,                                                    \
                           .def = "true",                                                          \
                           .doc = SL__DOC_TUNE("thread affinity of nvJPEG's host threads")},       \
    [SL__A_TUNE_FANCY_UPSAMPLING] =                                                                \
        {.name = "jpeg_fancy_upsampling",                                                          \
         .type = SL_ARG_BOOL,                                                                      \
         .def = "false",                                                                           \
         .doc =                                                                                    \
             "DALI's switch making its mixed decoder upsample chroma as libjpeg does; accepted "   \
             "for compatibility and not used: sluice decodes on every device with libjpeg's "      \
             "fancy upsampling (the CPU decoder's bytes), as DALI does with true."},               \
    [SL__A_ON_BAD_SAMPLE] = {                                                                      \
        .name = "on_bad_sample",                                                                   \
        .type = SL_ARG_STRING,                                                                     \
        .def = "\"raise\"",                                                                        \
        .choices = "raise|skip|replace",                                                           \
        .doc = "sluice's addition: what a file this decoder cannot decode does to its batch, "     \
               "overriding the pipeline's on_bad_sample for this node: \"raise\" (the batch "      \
               "fails), \"skip\" (the batch is delivered without the sample) or \"replace\" (the " \
               "next good sample of the batch takes its place). Unset: the pipeline's."}

/* The deprecated names every decoder op accepts and ignores, as DALI does (it deprecated them in
 * 1.0 and 1.36 and does nothing with them), with DALI's words. */
#define SL__DECODER_DEPRECATED(name)                                                               \
    {                                                                                              \
        name, NULL, "The argument ``" name "`` is now deprecated and its usage is discouraged."    \
    }
#define SL__DECODER_ALIASES                                                                        \
    SL__DECODER_DEPRECATED("split_stages"), SL__DECODER_DEPRECATED("use_chunk_allocator"),         \
        SL__DECODER_DEPRECATED("memory_stats")

extern const sl_io_def sl__decoder_inputs[1];

/* setup of every decoder op: input 0 must be 1-D uint8 bytes per sample and output_type valid
 * (fails the node with a message otherwise); declares output 0, HWC uint8. */
sl_status sl__decoder_setup(sl_ctx *ctx);
/* setup_sample: output_type as a codec color, and sample i's header. */
sl_status sl__decoder_header(sl_ctx *ctx, int i, sl__color *color, sl__image_info *info);
/* run_sample: output_type as a codec color, and sample i's decode flags (use_fast_idct). */
sl_status sl__decoder_options(sl_ctx *ctx, int i, sl__color *color, unsigned *flags);
/* init / fini of every decoder op: the state is the set of files known to be whole. */
sl_status sl__decoder_init(sl_op_init *ini, void **state);
void sl__decoder_fini(void *state);
/* Decodes sample i (flags, roi as sl__image_decode) into out, scratch from the context, working
 * memory bounded by max_sample_bytes. With a roi the rows below it are read too
 * (SL__DECODE_TO_END) unless the file is known to be whole: a damaged file fails whatever
 * window is decoded. */
sl_status sl__decoder_decode(sl_ctx *ctx, int i, sl__color color, unsigned flags,
                             const sl__roi *roi, uint8_t *out);
/* The codec's scratch buffer (sl_ctx_scratch_n index): buffer 0 stays free for the operator,
 * which may hold it across a decode. */
#define SL__DECODER_SCRATCH 1
/* A codec scratch function over sl_ctx_scratch_n(ctx, SL__DECODER_SCRATCH, ...). */
void *sl__decoder_scratch(void *ctx, size_t bytes);

/* Device "mixed" (sl_ctx_staged): the hybrid decoder's CPU half (hybrid.h), shared by the
 * decoder ops. Per sample, kept from setup_sample to run_sample in the op's iteration data. */
typedef struct sl__staged {
    size_t bytes;     /* the sample's staging */
    bool coefs;       /* planned as coefficients */
    bool device_huff; /* and for device entropy decoding (hybrid.h): the file is known clean */
} sl__staged;
/* Samples the CPU half staged for device entropy decoding (hybrid.h) since the process
 * started, over all pipelines: for tests (SLUICE_HYBRID_DEVICE_HUFF=0 keeps it at 0). */
uint64_t sl__decoder_device_huff_samples(void);
/* setup_sample: plans sample i's staging — its JPEG coefficients when `hybrid` and the kernels
 * decode it exactly, else room for its pixels (out_shape, the output's HWC) — and sizes it.
 * window: the part of the image the output is (NULL: all of it). */
sl_status sl__decoder_setup_staged(sl_ctx *ctx, int i, bool hybrid, const sl__roi *window,
                                   const int64_t out_shape[3], sl__staged *st);
/* run_sample: fills sample i's staging with its coefficients; *pixels = NULL then. Otherwise
 * (a fallback, counted when `hybrid`) the head says pixels and *pixels is where the caller
 * decodes them on the CPU (out_shape bytes), which the kernel copies. */
sl_status sl__decoder_run_staged(sl_ctx *ctx, int i, bool hybrid, const sl__roi *window,
                                 const sl__staged *st, uint8_t **pixels);

static inline int sl__color_channels(sl__color c)
{
    return c == SL__COLOR_GRAY ? 1 : 3;
}

#endif
