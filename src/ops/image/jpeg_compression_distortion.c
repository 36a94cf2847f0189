/* jpeg_compression_distortion: JPEG-encodes and decodes each image at a quality, introducing
 * JPEG's compression artefacts (DALI's fn.jpeg_compression_distortion).
 *
 * Exports: const sl_op_def sl_op_jpeg_compression_distortion (CPU).
 *
 * Per sample (HWC uint8, 3 channels RGB or 1 gray): libjpeg-turbo compresses with
 * jpeg_set_defaults and jpeg_set_quality(quality, force_baseline) — baseline, 4:2:0 chroma,
 * standard tables scaled by the quality, as cv2.imencode(IMWRITE_JPEG_QUALITY) does — into a
 * scratch buffer, then decompresses it with the accurate integer IDCT and fancy upsampling (as
 * cv2.imdecode). A libjpeg error longjmps back and fails the sample with libjpeg's message.
 * Invariant: the encoded bytes live in scratch buffer 0 sized from the image (no growth).
 */
#include <setjmp.h>
#include <stdio.h> /* jpeglib.h needs FILE */
#include <string.h>

#include <jpeglib.h>

#include "sluice/op.h"

enum { A_QUALITY, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_QUALITY] = {.name = "quality",
                   .type = SL_ARG_INT,
                   .def = "50",
                   .doc = "JPEG quality, 1 (lowest) to 100 (highest).",
                   .flags = SL_ARG_TENSOR | SL_ARG_RANGE,
                   .min = 1,
                   .max = 100},
};

static const sl_io_def inputs[] = {
    {"input", "Images, HWC uint8 with 3 (RGB) or 1 (gray) channels; layout \"HWC\" or none."}};
static const sl_io_def outputs[] = {{"output", "The images after JPEG encoding and decoding."}};

/* Everything read after setjmp lives here (not in locals clobbered by longjmp). */
typedef struct job {
    struct jpeg_error_mgr mgr; /* first: cinfo->err points here */
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
    struct jpeg_compress_struct c;
    struct jpeg_decompress_struct d;
    struct jpeg_destination_mgr dest;
    unsigned char *buf;
    size_t cap, len;
    bool c_live, d_live;
} job;

static void on_error(j_common_ptr cinfo)
{
    job *j = (job *)cinfo->err;
    cinfo->err->format_message(cinfo, j->msg);
    longjmp(j->jump, 1);
}

static void on_message(j_common_ptr cinfo)
{
    (void)cinfo; /* warnings are not errors here: the data is our own encoding */
}

static void dest_init(j_compress_ptr c)
{
    (void)c;
}

/* The buffer is sized for any image; running out is an error, not a reallocation. */
static boolean dest_empty(j_compress_ptr c)
{
    job *j = (job *)c->err;
    snprintf(j->msg, sizeof j->msg, "the encoded image exceeds %zu bytes", j->cap);
    longjmp(j->jump, 1);
}

static void dest_term(j_compress_ptr c)
{
    job *j = (job *)c->err;
    j->len = j->cap - c->dest->free_in_buffer;
}

static sl_status jcd_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const char *layout = sl_batch_layout(in);
    if (sl_batch_ndim(in) != 3 || sl_batch_dtype(in) != SL_DTYPE_UINT8 ||
        (layout[0] && strcmp(layout, "HWC") != 0))
        return sl_fail(ctx, SL_EINVAL,
                       "input must be HWC uint8 images (layout \"HWC\" or none); got %d-D %s, "
                       "layout \"%s\"",
                       sl_batch_ndim(in), sl_dtype_name(sl_batch_dtype(in)), layout);
    sl_ctx_set_output(ctx, 0, SL_DTYPE_UINT8, 3, "HWC");
    return SL_OK;
}

static sl_status jcd_setup_sample(sl_ctx *ctx, int i)
{
    const int64_t *s = sl_batch_shape(sl_ctx_input(ctx, 0), i);
    if (s[2] != 3 && s[2] != 1 && s[0] * s[1] > 0)
        return sl_fail(ctx, SL_EINVAL, "images must have 3 (RGB) or 1 channels; got %lld",
                       (long long)s[2]);
    if (s[0] > 65500 || s[1] > 65500)
        return sl_fail(ctx, SL_EUNSUPPORTED, "a %lld x %lld image is too large for JPEG",
                       (long long)s[1], (long long)s[0]);
    sl_ctx_set_shape(ctx, 0, i, s);
    return SL_OK;
}

static sl_status jcd_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t *s = sl_batch_shape(in, i);
    const int h = (int)s[0], w = (int)s[1], ch = (int)s[2];
    if ((int64_t)h * w * ch == 0)
        return SL_OK;
    const int quality = (int)sl_ctx_arg_int(ctx, A_QUALITY, i);
    size_t cap = (size_t)h * (size_t)w * (size_t)ch * 2 + 65536;
    job *j = sl_ctx_scratch(ctx, sizeof(job) + cap);
    if (!j)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for a %d x %d image", w, h);
    memset(j, 0, sizeof(*j));
    j->buf = (unsigned char *)(j + 1);
    j->cap = cap;
    const unsigned char *src = sl_batch_sample_data(in, i);
    unsigned char *dst = sl_ctx_output_data(ctx, 0, i);
    if (setjmp(j->jump)) {
        if (j->c_live)
            jpeg_destroy_compress(&j->c);
        if (j->d_live)
            jpeg_destroy_decompress(&j->d);
        return sl_fail(ctx, SL_EINVAL, "libjpeg: %s", j->msg);
    }
    j->c.err = jpeg_std_error(&j->mgr);
    j->mgr.error_exit = on_error;
    j->mgr.output_message = on_message;
    jpeg_create_compress(&j->c);
    j->c_live = true;
    j->dest.next_output_byte = j->buf;
    j->dest.free_in_buffer = j->cap;
    j->dest.init_destination = dest_init;
    j->dest.empty_output_buffer = dest_empty;
    j->dest.term_destination = dest_term;
    j->c.dest = &j->dest;
    j->c.image_width = (JDIMENSION)w;
    j->c.image_height = (JDIMENSION)h;
    j->c.input_components = ch;
    j->c.in_color_space = ch == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(&j->c);
    jpeg_set_quality(&j->c, quality, TRUE);
    jpeg_start_compress(&j->c, TRUE);
    while (j->c.next_scanline < j->c.image_height) {
        JSAMPROW row = (JSAMPROW)(src + (size_t)j->c.next_scanline * (size_t)w * (size_t)ch);
        jpeg_write_scanlines(&j->c, &row, 1);
    }
    jpeg_finish_compress(&j->c);
    jpeg_destroy_compress(&j->c);
    j->c_live = false;

    j->d.err = &j->mgr;
    jpeg_create_decompress(&j->d);
    j->d_live = true;
    jpeg_mem_src(&j->d, j->buf, (unsigned long)j->len);
    jpeg_read_header(&j->d, TRUE);
    j->d.out_color_space = ch == 3 ? JCS_RGB : JCS_GRAYSCALE;
    j->d.dct_method = JDCT_ISLOW;
    j->d.do_fancy_upsampling = TRUE;
    jpeg_start_decompress(&j->d);
    while (j->d.output_scanline < j->d.output_height) {
        JSAMPROW row = dst + (size_t)j->d.output_scanline * (size_t)w * (size_t)ch;
        jpeg_read_scanlines(&j->d, &row, 1);
    }
    jpeg_finish_decompress(&j->d);
    jpeg_destroy_decompress(&j->d);
    j->d_live = false;
    return SL_OK;
}

const sl_op_def sl_op_jpeg_compression_distortion = {
    .name = "jpeg_compression_distortion",
    .doc = "Introduces JPEG compression artefacts: encodes each image at `quality` and decodes "
           "it again (DALI's jpeg_compression_distortion).\n\n"
           "libjpeg-turbo with its default settings (baseline, 4:2:0 chroma subsampling, the "
           "standard quantisation tables scaled by quality) and the accurate IDCT with fancy "
           "upsampling, which is what cv2.imencode / cv2.imdecode do. HWC uint8 images with 3 "
           "(RGB) or 1 (gray) channels.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_SAMPLEWISE,
    .setup = jcd_setup,
    .setup_sample = jcd_setup_sample,
    .run_sample = jcd_run_sample,
};
