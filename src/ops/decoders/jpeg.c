/* src/ops/decoders/jpeg.c: JPEG decoding with libjpeg-turbo.
 *
 * Exports sl__jpeg_peek and sl__jpeg_decode (declared in codec.h), and the hybrid decoder's CPU
 * half, sl__jpeg_hybrid_plan and sl__jpeg_hybrid_coefs (codec.h; the layout in hybrid.h).
 * Invariant: libjpeg never prints, exits or returns a half-decoded image: its errors and the
 * warnings that mean lost pixel data (premature end of file, premature end of data segment, bad
 * Huffman/arithmetic code, lost restart marker) longjmp back to `guarded`, which destroys the
 * decompressor and returns the code with libjpeg's own message. Other warnings (extraneous bytes
 * between markers, an unknown Adobe transform or JFIF version, a bad ICC marker) are tolerated, as
 * Pillow does.
 *
 * Matching Pillow (which links the same libjpeg-turbo): JDCT_ISLOW, fancy upsampling and block
 * smoothing on (libjpeg's defaults, which Pillow keeps), so YCbCr, RGB and grayscale JPEGs are
 * bit-identical to `Image.open(f).convert("RGB")`. GRAY asks libjpeg for JCS_GRAYSCALE: the Y
 * channel of a YCbCr JPEG, as Pillow's `im.draft("L", im.size)` gives. CMYK and YCCK JPEGs are
 * decoded to CMYK by libjpeg and converted with Pillow's formula (Adobe inverted CMYK, see
 * `ink`), so they are bit-identical too; their GRAY is Pillow's luma of that RGB.
 * A JPEG whose EOI marker is missing counts as truncated when the last row needs the bytes.
 * A file of more than MAX_SCANS scans is refused (SL_EUNSUPPORTED) as soon as the scan after
 * the last allowed one begins: libjpeg decodes every scan over the blocks of its components, so
 * a small progressive file that repeats cheap scans could otherwise take minutes.
 */
#include <ctype.h>
#include <limits.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h> /* jpeglib.h needs FILE */
#include <string.h>

#include <jpeglib.h>

#include <jerror.h> /* after jpeglib.h: the JERR_ and JWRN_ codes */
/* struct jpeg_entropy_decoder, whose decode_mcu the hybrid decoder drives (see
 * hybrid_single_scan): part of the libjpeg ABI since jpeg 6b, installed with the headers */
#include <jpegint.h>

#include "ops/decoders/codec.h"
#include "ops/decoders/hybrid.h"
#include "ops/decoders/jpeg_huff.h"

/* One peek or decode. The error manager is embedded so the callbacks find the job from
 * cinfo->err; everything the code after setjmp reads lives here, not in locals, so nothing is
 * clobbered by longjmp. */
typedef struct job {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr mgr;
    struct jpeg_progress_mgr progress; /* decode only: counts the scans (on_progress) */
    jmp_buf jump;
    sl_status code; /* set by the callbacks before longjmp */
    char *err;
    size_t errlen;
    sl__image_info *info; /* peek: filled on success */
    sl__color color;      /* decode request, copied from the arguments */
    unsigned flags;
    const sl__roi *roi;
    uint8_t *out;
    const sl__decode_mem *mem;
    uint8_t *row; /* one scratch row of output_width pixels, taken once (scratch_row) */
    /* the hybrid decoder's (hybrid.h) */
    sl__hyb_head *head;
    const char *why;           /* why the kernels cannot decode it: SL__HYB_PIXELS */
    size_t bytes;              /* the staging's size */
    size_t cap;                /* the staging's room (out) */
    const sl__roi *window;     /* the hybrid decoder's window (NULL: the image) */
    int first_imcu, last_imcu; /* the iMCU rows holding the window's blocks */
    bool huff_clean;           /* jpeg_huff.c decoded the whole scan without giving up */
    const uint8_t *job_from;   /* a device entropy decoding job's data as the plan found it: */
    size_t job_data;           /* from there, job_data_bytes (write_job's, if it starts there) */
} job;

static job *job_of(j_common_ptr cinfo)
{
    return (job *)(void *)((char *)cinfo->err - offsetof(job, mgr));
}

static sl_status classify(int msg_code)
{
    switch (msg_code) {
    case JERR_OUT_OF_MEMORY: return SL_ENOMEM;
    case JERR_BAD_PRECISION:   /* 12-bit JPEG */
    case JERR_SOF_UNSUPPORTED: /* lossless, hierarchical */
#if JPEG_LIB_VERSION < 70      /* jpeg7/8 APIs: no such code, arithmetic decoding is built in */
    case JERR_ARITH_NOTIMPL:
#endif
    case JERR_CONVERSION_NOTIMPL:
    case JERR_NOTIMPL:
    case JERR_NOT_COMPILED:
    case JERR_IMAGE_TOO_BIG:
    case JERR_WIDTH_OVERFLOW:
    case JERR_EMPTY_IMAGE: /* height given by a DNL marker */
    case JERR_FRACT_SAMPLE_NOTIMPL:
    case JERR_CCIR601_NOTIMPL: return SL_EUNSUPPORTED;
    case JERR_BAD_STATE:
    case JERR_BAD_STRUCT_SIZE:
    case JERR_BAD_LIB_VERSION:
    case JERR_BAD_BUFFER_MODE:
    case JERR_BAD_CROP_SPEC: return SL_EINTERNAL; /* we called libjpeg wrongly */
    default: return SL_ECORRUPT;
    }
}

/* Warnings after which the image is missing data that libjpeg replaced with gray. */
static bool fatal_warning(int msg_code)
{
    switch (msg_code) {
    case JWRN_JPEG_EOF:
    case JWRN_HIT_MARKER:
    case JWRN_HUFF_BAD_CODE:
    case JWRN_ARITH_BAD_CODE:
    case JWRN_MUST_RESYNC: return true;
    default: return false;
    }
}

/* Stores libjpeg's message ("Corrupt JPEG data: ...") with its first letter lowered, since ours
 * follows a colon ("...: corrupt JPEG data: premature end of data segment"). */
static void record(j_common_ptr cinfo, sl_status code)
{
    job *j = job_of(cinfo);
    char msg[JMSG_LENGTH_MAX];
    cinfo->err->format_message(cinfo, msg);
    if (isupper((unsigned char)msg[0]) && islower((unsigned char)msg[1]))
        msg[0] = (char)tolower((unsigned char)msg[0]);
    j->code = sl__codec_fail(j->err, j->errlen, code, "%s", msg);
}

/* error_exit: must not return. */
static void on_error(j_common_ptr cinfo)
{
    job *j = job_of(cinfo);
    if (cinfo->err->msg_code == JERR_NO_BACKING_STORE) /* max_memory_to_use reached */
        j->code = sl__codec_fail(j->err, j->errlen, SL_EUNSUPPORTED,
                                 "JPEG: decoding needs more working memory than "
                                 "max_sample_bytes (%zu bytes)",
                                 j->mem ? j->mem->limit : (size_t)0);
    else
        record(cinfo, classify(cinfo->err->msg_code));
    longjmp(job_of(cinfo)->jump, 1);
}

/* emit_message: level -1 is a warning, >= 0 a trace message; neither is ever printed. */
static void on_message(j_common_ptr cinfo, int level)
{
    if (level >= 0)
        return;
    cinfo->err->num_warnings++;
    if (fatal_warning(cinfo->err->msg_code)) {
        record(cinfo, SL_ECORRUPT);
        longjmp(job_of(cinfo)->jump, 1);
    }
}

static void no_output(j_common_ptr cinfo)
{
    (void)cinfo;
}

/* Scans a file may have. Encoders write about 10 (libjpeg's progressive script: 10 for YCbCr,
 * 6 for gray); 256 is what DALI's decoder (nvImageCodec, NVIMGCODEC_MAX_JPEG_SCANS) allows. A
 * scan costs a pass over the blocks of its components: a 1 MiB file of 44,872 scans, each
 * covering a 2896x2896 image with a few end-of-band runs, took 46 s to decode without this
 * limit; 256 such scans over the largest image max_sample_bytes allows by default (8 Mi blocks
 * of coefficients) take seconds. */
#define MAX_SCANS 256

/* progress_monitor: libjpeg calls it before each row of blocks it reads while it absorbs a
 * multi-scan file in jpeg_start_decompress, and input_scan_number counts the SOS markers read
 * so far. Must not return past the limit. */
static void on_progress(j_common_ptr cinfo)
{
    struct jpeg_decompress_struct *c = (struct jpeg_decompress_struct *)(void *)cinfo;
    if (c->input_scan_number <= MAX_SCANS)
        return;
    job *j = job_of(cinfo);
    j->code = sl__codec_fail(j->err, j->errlen, SL_EUNSUPPORTED,
                             "JPEG: more than %d scans (each one is decoded over the whole "
                             "image, so a file that repeats its scans could take minutes)",
                             MAX_SCANS);
    longjmp(j->jump, 1);
}

/* Creates the decompressor, reads the header and runs body; any libjpeg error or fatal warning
 * in between lands at setjmp. Returns: body's status, or the code the callbacks recorded. */
static sl_status guarded(job *j, const uint8_t *data, size_t size, sl_status (*body)(job *))
{
    j->cinfo.err = jpeg_std_error(&j->mgr);
    j->mgr.error_exit = on_error;
    j->mgr.emit_message = on_message;
    j->mgr.output_message = no_output;
    if (setjmp(j->jump)) {
        jpeg_destroy_decompress(&j->cinfo); /* safe on a half-created one: cinfo was zeroed */
        return j->code;
    }
    jpeg_create_decompress(&j->cinfo);
    jpeg_mem_src(&j->cinfo, data, (unsigned long)size);
    jpeg_read_header(&j->cinfo, TRUE); /* TRUE: a tables-only file is an error */
    sl_status s = body(j);
    jpeg_destroy_decompress(&j->cinfo);
    return s;
}

/* What libjpeg should produce; *cmyk when we convert CMYK to the requested color after. */
static sl_status choose_space(job *j, J_COLOR_SPACE *space, bool *cmyk)
{
    static const J_COLOR_SPACE direct[] = {
        [SL__COLOR_RGB] = JCS_RGB, [SL__COLOR_BGR] = JCS_EXT_BGR, [SL__COLOR_GRAY] = JCS_GRAYSCALE};
    switch (j->cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE:
    case JCS_YCbCr:
    case JCS_RGB:
        *space = direct[j->color];
        *cmyk = false;
        return SL_OK;
    case JCS_CMYK:
    case JCS_YCCK:
        *space = JCS_CMYK; /* libjpeg converts YCCK to CMYK */
        *cmyk = true;
        return SL_OK;
    default:
        return sl__codec_fail(j->err, j->errlen, SL_EUNSUPPORTED,
                              "JPEG with %d components in an unknown color space is not "
                              "supported",
                              j->cinfo.num_components);
    }
}

static sl_status peek_body(job *j)
{
    struct jpeg_decompress_struct *c = &j->cinfo;
    J_COLOR_SPACE space;
    bool cmyk;
    sl_status s = sl__image_check_size(c->image_width, c->image_height, "JPEG", j->err, j->errlen);
    if (s == SL_OK)
        s = choose_space(j, &space, &cmyk);
    if (s != SL_OK)
        return s;
    *j->info = (sl__image_info){.format = SL__FMT_JPEG,
                                .width = (int)c->image_width,
                                .height = (int)c->image_height,
                                .channels = c->num_components};
    return SL_OK;
}

sl_status sl__jpeg_peek(const uint8_t *data, size_t size, sl__image_info *info, char *err,
                        size_t errlen)
{
    job j;
    memset(&j, 0, sizeof j);
    j.err = err;
    j.errlen = errlen;
    j.info = info;
    return guarded(&j, data, size, peek_body);
}

/* Pillow's CMYK to RGB for one channel. Pillow reads Adobe JPEGs as inverted CMYK ("CMYK;I":
 * C = 255 - c, K = 255 - k for libjpeg's c, k), then computes nk - nk * C / 255 with
 * nk = 255 - K = k and MULDIV255(a, b) = (t + (t >> 8)) >> 8, t = a * b + 128. */
static inline uint8_t ink(unsigned c, unsigned k)
{
    unsigned t = (255u - c) * k + 128u;
    return (uint8_t)(k - (((t >> 8) + t) >> 8));
}

static void cmyk_row(const uint8_t *in, int w, sl__color color, uint8_t *out)
{
    for (int x = 0; x < w; x++, in += 4) {
        uint8_t r = ink(in[0], in[3]), g = ink(in[1], in[3]), b = ink(in[2], in[3]);
        if (color == SL__COLOR_GRAY) {
            *out++ = sl__luma(r, g, b);
            continue;
        }
        out[0] = color == SL__COLOR_BGR ? b : r;
        out[1] = g;
        out[2] = color == SL__COLOR_BGR ? r : b;
        out += 3;
    }
}

/* The decode's one scratch row (output_width pixels of libjpeg's color space), NULL with the
 * error recorded when out of memory. */
static uint8_t *scratch_row(job *j)
{
    size_t bytes = (size_t)j->cinfo.output_width * (size_t)j->cinfo.output_components;
    if (j->row == NULL && (j->row = j->mem->scratch(j->mem->scratch_ctx, bytes)) == NULL)
        sl__codec_fail(j->err, j->errlen, SL_ENOMEM, "out of memory for a %zu-byte JPEG row",
                       bytes);
    return j->row;
}

/* Rows straight into out, `stride` bytes apart, several per call (libjpeg returns as many as
 * it has ready). */
static sl_status read_direct(job *j, int h, size_t stride)
{
    JSAMPROW rows[16];
    for (int y = 0; y < h;) {
        int n = h - y < 16 ? h - y : 16;
        for (int i = 0; i < n; i++)
            rows[i] = j->out + (size_t)(y + i) * stride;
        JDIMENSION got = jpeg_read_scanlines(&j->cinfo, rows, (JDIMENSION)n);
        if (got == 0) /* only a suspending source returns 0; ours never suspends */
            return sl__codec_fail(j->err, j->errlen, SL_EINTERNAL, "JPEG: decoder suspended");
        y += (int)got;
    }
    return SL_OK;
}

/* Rows through one scratch row: for CMYK conversion, or to cut the roi's columns out of the
 * iMCU-aligned window jpeg_crop_scanline decoded (dx = roi x - window x). */
static sl_status read_buffered(job *j, const sl__roi *r, int dx, bool cmyk, size_t row_bytes)
{
    struct jpeg_decompress_struct *c = &j->cinfo;
    uint8_t *buf = scratch_row(j);
    if (buf == NULL)
        return SL_ENOMEM;
    for (int y = 0; y < r->h; y++) {
        uint8_t *dst = j->out + (size_t)y * (r->stride ? r->stride : row_bytes);
        if (jpeg_read_scanlines(c, &buf, 1) != 1)
            return sl__codec_fail(j->err, j->errlen, SL_EINTERNAL, "JPEG: decoder suspended");
        if (cmyk)
            cmyk_row(buf + (size_t)dx * 4, r->w, j->color, dst);
        else
            memcpy(dst, buf + (size_t)dx * (size_t)c->output_components, row_bytes);
    }
    return SL_OK;
}

/* Bytes on each side of a row that read_shifted saves and puts back; a wider context (a big
 * smoothing margin) goes through read_buffered. */
#define SHIFT_SAVE 256

/* The window's rows straight into out, shifted: row y of the iMCU-aligned window that
 * jpeg_crop_scanline decoded goes to out + y * stride - dx * comps, so that its roi columns land
 * in place. Its context pixels left and right of the roi fall on bytes that are not the row's
 * (the previous row's last ones and the next row's first, or, with a stride, what lies between
 * the rows): those are saved before the row is decoded and put back after, so every byte outside
 * the roi is left as it was, as read_buffered leaves it. The rows whose window would reach
 * outside out's extent (the first, and the last when the window extends right of the roi) go
 * through the scratch row. This saves read_buffered's copy of every row: about a tenth of a
 * window decode's CPU time, for the same bytes. */
static sl_status read_shifted(job *j, const sl__roi *r, int dx, size_t row_bytes, size_t stride)
{
    struct jpeg_decompress_struct *c = &j->cinfo;
    size_t lead = (size_t)dx * (size_t)c->output_components;
    size_t span = (size_t)c->output_width * (size_t)c->output_components;
    size_t tail = span - lead - row_bytes; /* the window's bytes right of the roi */
    size_t extent = (size_t)(r->h - 1) * stride + row_bytes;
    uint8_t left[SHIFT_SAVE], right[SHIFT_SAVE];
    for (int y = 0; y < r->h; y++) {
        size_t at = (size_t)y * stride;
        uint8_t *dst = j->out + at;
        if (at < lead || at - lead + span > extent) { /* outside out: through the scratch row */
            uint8_t *buf = scratch_row(j);
            if (buf == NULL)
                return SL_ENOMEM;
            if (jpeg_read_scanlines(c, &buf, 1) != 1)
                return sl__codec_fail(j->err, j->errlen, SL_EINTERNAL, "JPEG: decoder suspended");
            memcpy(dst, buf + lead, row_bytes);
            continue;
        }
        /* Rows back to back (no stride): the right context falls on the next row's first
         * bytes, which that row's decode rewrites whole (tail <= row_bytes), so it needs no
         * saving — except after the last row. */
        bool keep_right = stride != row_bytes || tail > row_bytes || y == r->h - 1;
        JSAMPROW row = dst - lead;
        memcpy(left, row, lead);
        if (keep_right)
            memcpy(right, dst + row_bytes, tail);
        if (jpeg_read_scanlines(c, &row, 1) != 1)
            return sl__codec_fail(j->err, j->errlen, SL_EINTERNAL, "JPEG: decoder suspended");
        memcpy(row, left, lead);
        if (keep_right)
            memcpy(dst + row_bytes, right, tail);
    }
    return SL_OK;
}

/* Columns of context kept on each side of a cropped window. libjpeg treats the edges of a
 * cropped window as image edges, so fancy (triangle) upsampling of subsampled chroma replicates
 * the edge sample there instead of reading its neighbour, and the outermost 1-2 columns differ
 * from a full decode. With this margin those columns fall outside the roi. */
#define CROP_MARGIN 4

/* The same for block smoothing, which libjpeg applies to a progressive JPEG whose later scans
 * are missing (a truncated download): each block's missing coefficients are estimated from the
 * blocks up to two to each side (jdcoefct.c, decompress_smooth_data), and at a cropped window's
 * edge there are none, so up to two blocks of each component near the edge differ — and the
 * upsampled chroma reaches one block further. Three iMCUs (the unit jpeg_crop_scanline aligns
 * to; an iMCU holds one block of the most subsampled component) on each side keep them out of
 * the roi. Complete progressive files are not smoothed; the margin costs them a few blocks. */
static int smoothing_margin(const struct jpeg_decompress_struct *c)
{
    if (!c->progressive_mode || !c->do_block_smoothing)
        return 0;
#if JPEG_LIB_VERSION >= 70
    int block = c->min_DCT_h_scaled_size;
#else
    int block = c->min_DCT_scaled_size;
#endif
    return 3 * c->max_h_samp_factor * block;
}

/* SL__DECODE_TO_END: the rows below the window, entropy-decoded so that corrupt or missing data
 * there fails as in a whole decode, without being reconstructed. jpeg_skip_scanlines decodes
 * the entropy data of the rows it skips, except when asked to skip to the very end, which it
 * does without reading anything: so all rows but the last are skipped, and the last is read. */
static sl_status read_rest(job *j)
{
    struct jpeg_decompress_struct *c = &j->cinfo;
    JDIMENSION left = c->output_height - c->output_scanline;
    if (left == 0)
        return SL_OK;
    if (left > 1 && jpeg_skip_scanlines(c, left - 1) != left - 1)
        return sl__codec_fail(j->err, j->errlen, SL_ECORRUPT, "JPEG: fewer rows than the header");
    uint8_t *row = scratch_row(j);
    if (row == NULL)
        return SL_ENOMEM;
    if (jpeg_read_scanlines(c, &row, 1) != 1)
        return sl__codec_fail(j->err, j->errlen, SL_EINTERNAL, "JPEG: decoder suspended");
    return SL_OK;
}

/* Window: jpeg_crop_scanline widens [x - margin, x + w + margin) to iMCU boundaries,
 * jpeg_skip_scanlines skips the rows above (decoding the context rows upsampling needs); the
 * rows below are entropy-decoded with SL__DECODE_TO_END (read_rest), else never read
 * (jpeg_abort_decompress). */
static sl_status decode_rows(job *j, const sl__roi *r, bool cmyk)
{
    struct jpeg_decompress_struct *c = &j->cinfo;
    int margin = CROP_MARGIN + smoothing_margin(c);
    int left = r->x < margin ? 0 : r->x - margin;
    int right =
        (int)c->output_width - (r->x + r->w) < margin ? (int)c->output_width : r->x + r->w + margin;
    JDIMENSION x0 = (JDIMENSION)left, cw = (JDIMENSION)(right - left);
    if (cw != c->output_width)
        jpeg_crop_scanline(c, &x0, &cw);
    if (r->y > 0 && jpeg_skip_scanlines(c, (JDIMENSION)r->y) != (JDIMENSION)r->y)
        return sl__codec_fail(j->err, j->errlen, SL_ECORRUPT, "JPEG: fewer rows than the header");
    size_t row_bytes = (size_t)r->w * (j->color == SL__COLOR_GRAY ? 1 : 3);
    int dx = r->x - (int)x0;
    size_t comps = (size_t)c->output_components, stride = r->stride ? r->stride : row_bytes;
    sl_status s;
    if (!cmyk && dx == 0 && c->output_width == (JDIMENSION)r->w)
        s = read_direct(j, r->h, stride);
    else if (!cmyk && (size_t)dx * comps <= SHIFT_SAVE &&
             ((size_t)c->output_width - (size_t)dx - (size_t)r->w) * comps <= SHIFT_SAVE)
        s = read_shifted(j, r, dx, row_bytes, stride);
    else
        s = read_buffered(j, r, dx, cmyk, row_bytes);
    return s == SL_OK && (j->flags & SL__DECODE_TO_END) ? read_rest(j) : s;
}

/* Bytes of the coefficient buffer jpeg_start_decompress allocates for a multi-scan
 * (progressive) file: one 128-byte block for each 8x8 block of every component of the whole
 * image (jdcoefct.c; about 6 bytes per pixel at 4:4:4), whatever window is decoded. 0 for a
 * single-scan file, decoded a row of blocks at a time. */
static size_t coefficient_bytes(struct jpeg_decompress_struct *c)
{
    if (!jpeg_has_multiple_scans(c))
        return 0;
    size_t total = 0;
    for (int k = 0; k < c->num_components; k++) {
        const jpeg_component_info *ci = &c->comp_info[k];
        size_t w = (ci->width_in_blocks + (unsigned)ci->h_samp_factor - 1) /
                   (unsigned)ci->h_samp_factor * (unsigned)ci->h_samp_factor;
        size_t h = (ci->height_in_blocks + (unsigned)ci->v_samp_factor - 1) /
                   (unsigned)ci->v_samp_factor * (unsigned)ci->v_samp_factor;
        total += w * h * sizeof(JBLOCK);
    }
    return total;
}

static sl_status decode_body(job *j)
{
    struct jpeg_decompress_struct *c = &j->cinfo;
    J_COLOR_SPACE space;
    bool cmyk;
    sl__roi r;
    int n = SL__DECODE_SCALE_OF(j->flags);
    if (n < 0 || n > 8)
        return sl__codec_fail(j->err, j->errlen, SL_EINVAL, "JPEG: scale %d/8 is not 1..8", n);
    sl_status s = sl__image_check_size(c->image_width, c->image_height, "JPEG", j->err, j->errlen);
    if (s == SL_OK)
        s = choose_space(j, &space, &cmyk);
    if (s != SL_OK)
        return s;
    c->out_color_space = space;
    c->dct_method = (j->flags & SL__DECODE_FAST_IDCT) ? JDCT_IFAST : JDCT_ISLOW;
    c->do_fancy_upsampling = TRUE; /* the defaults, stated: Pillow's output depends on them */
    c->do_block_smoothing = TRUE;
    c->scale_num = n ? (unsigned)n : 8;
    c->scale_denom = 8;
    jpeg_calc_output_dimensions(c);
    s = sl__roi_resolve(j->roi, (int)c->output_width, (int)c->output_height, &r, j->err, j->errlen);
    if (s != SL_OK)
        return s;
    size_t coef = coefficient_bytes(c);
    if (coef > j->mem->limit)
        return sl__codec_fail(j->err, j->errlen, SL_EUNSUPPORTED,
                              "JPEG: decoding this %ux%u progressive (multi-scan) image needs %zu "
                              "bytes for its coefficients, more than max_sample_bytes (%zu)",
                              c->image_width, c->image_height, coef, j->mem->limit);
    /* a backstop for libjpeg's other buffers: past it, libjpeg fails (it has no backing store) */
    c->mem->max_memory_to_use = j->mem->limit > (size_t)LONG_MAX ? LONG_MAX : (long)j->mem->limit;
    j->progress.progress_monitor = on_progress;
    c->progress = &j->progress;
    jpeg_start_decompress(c); /* a progressive file is read whole here */
    s = decode_rows(j, &r, cmyk);
    jpeg_abort_decompress(c); /* rows below the window and the EOI are never read */
    return s;
}

sl_status sl__jpeg_decode(const uint8_t *data, size_t size, sl__color color, unsigned flags,
                          const sl__roi *roi, uint8_t *out, const sl__decode_mem *mem, char *err,
                          size_t errlen)
{
    job j;
    memset(&j, 0, sizeof j);
    j.err = err;
    j.errlen = errlen;
    j.color = color;
    j.flags = flags;
    j.roi = roi;
    j.out = out;
    j.mem = mem;
    return guarded(&j, data, size, decode_body);
}

/* ---- the hybrid decoder's CPU half (hybrid.h) ---------------------------------------------- */

/* The blocks of a component that the pixels of the window [x0, x1) x [y0, y1) read, as the
 * kernels upsample them (hybrid.cu's `upsampled`): the samples under the window, one more on
 * each side for the fancy (triangle) filters, clamped into the real samples; first block and
 * count along one axis. f: output pixels per sample (max / own sampling factor). */
static void window_axis(int a0, int a1, int f, bool fancy, int samples, int32_t *first,
                        int32_t *count)
{
    int s0 = a0 / f - (fancy ? 1 : 0), s1 = (a1 - 1) / f + (fancy ? 1 : 0);
    s0 = s0 < 0 ? 0 : s0;
    s1 = s1 > samples - 1 ? samples - 1 : s1;
    *first = (int32_t)(s0 / DCTSIZE);
    *count = (int32_t)(s1 / DCTSIZE - s0 / DCTSIZE + 1);
}

/* The Huffman tables the scan uses, numbered in the order its components first use them:
 * dmap / amap (may be NULL) map libjpeg's table number to that (-1: unused), *nd / *na count
 * them. */
static void scan_tables(const struct jpeg_decompress_struct *c, int dmap[NUM_HUFF_TBLS],
                        int amap[NUM_HUFF_TBLS], int *nd, int *na)
{
    int dm[NUM_HUFF_TBLS], am[NUM_HUFF_TBLS];
    for (int t = 0; t < NUM_HUFF_TBLS; t++)
        dm[t] = am[t] = -1;
    *nd = *na = 0;
    for (int ci = 0; ci < c->comps_in_scan && ci < MAX_COMPS_IN_SCAN; ci++) {
        int d = c->cur_comp_info[ci]->dc_tbl_no, a = c->cur_comp_info[ci]->ac_tbl_no;
        if (d >= 0 && d < NUM_HUFF_TBLS && dm[d] < 0)
            dm[d] = (*nd)++;
        if (a >= 0 && a < NUM_HUFF_TBLS && am[a] < 0)
            am[a] = (*na)++;
    }
    for (int t = 0; t < NUM_HUFF_TBLS; t++) {
        if (dmap)
            dmap[t] = dm[t];
        if (amap)
            amap[t] = am[t];
    }
}

/* The bytes of a device entropy decoding job's data (hybrid.h) from the scan's first byte p, n
 * to the file's end: up to the first marker that is not a restart marker, its code included
 * (the fill bytes before it too), or all n. No reader of the job advances past that marker
 * (its refills stop there; sl__huff_tail, the end rule of sl__huff_core_finish and of
 * hybrid_job.h's chunked decode, looks no further), so the rest of the file (an appended
 * preview image, a motion photo's video) is neither staged nor decoded, and every decode of
 * the job gives what it gives over the whole rest of the file. */
static size_t job_data_bytes(const uint8_t *p, size_t n)
{
    for (const uint8_t *q = p, *end = p + n; (q = memchr(q, 0xFF, (size_t)(end - q))) != NULL;) {
        while (++q < end && *q == 0xFF) /* fill bytes */
            ;
        if (q >= end)
            break;
        if (*q != 0 && (*q < 0xD0 || *q > 0xD7))
            return (size_t)(q + 1 - p);
    }
    return n;
}

/* A sl__hyb_huff_job's bytes: its header, nd DC and na AC tables, data bytes of scan. */
static size_t job_bytes(int nd, int na, size_t data)
{
    return SL__HYB_JOB_BYTES + (size_t)nd * sizeof(sl__huff_dc) + (size_t)na * sizeof(sl__huff_ac) +
           data;
}

/* Fills j->head from the header (after jpeg_calc_output_dimensions at full scale, fancy
 * upsampling on): kind SL__HYB_COEFS with the layout when the kernels reproduce libjpeg's
 * decode exactly, else SL__HYB_PIXELS with the reason in *why. The layout holds only the
 * blocks the window's pixels need (j->window; NULL: the whole image), packed per component,
 * and j->first_imcu / last_imcu the iMCU rows that hold them. Sets *bytes to the staging's
 * size: the head and the larger of the blocks and the window's pixels, so that a sample found
 * incomplete only once its coefficients are read still fits its pixels. */
static void hybrid_layout(job *j, sl__hyb_head *h, const char **why, size_t *bytes)
{
    struct jpeg_decompress_struct *c = &j->cinfo;
    memset(h, 0, sizeof(*h));
    h->magic = SL__HYB_MAGIC;
    h->kind = SL__HYB_PIXELS;
    const sl__roi image = {0, 0, (int)c->output_width, (int)c->output_height, 0};
    const sl__roi *w = j->window ? j->window : &image;
    h->x0 = w->x;
    h->y0 = w->y;
    h->width = w->w;
    h->height = w->h;
    h->out_c = j->color == SL__COLOR_GRAY ? 1 : 3;
    h->bgr = j->color == SL__COLOR_BGR;
    size_t pixels = (size_t)h->width * (size_t)h->height * (size_t)h->out_c;
    *bytes = SL__HYB_HEAD_BYTES + pixels;
    switch (c->jpeg_color_space) {
    case JCS_GRAYSCALE: h->space = SL__HYB_GRAY; break;
    case JCS_YCbCr: h->space = SL__HYB_YCC; break;
    case JCS_RGB: h->space = SL__HYB_RGB; break;
    default: *why = "CMYK, YCCK or another color space"; return;
    }
    if (c->num_components != (h->space == SL__HYB_GRAY ? 1 : 3)) {
        *why = "an unusual number of components";
        return;
    }
    if (j->flags & (SL__DECODE_FAST_IDCT | 0xf00u)) {
        *why = "the fast IDCT or DCT scaling";
        return;
    }
    if (w->w <= 0 || w->h <= 0 || w->x < 0 || w->y < 0 || w->x + w->w > (int)c->output_width ||
        w->y + w->h > (int)c->output_height) {
        *why = "a window outside the image";
        return;
    }
    size_t off = SL__HYB_HEAD_BYTES, planes = 0;
    h->ncomp = c->num_components;
    j->first_imcu = INT_MAX;
    j->last_imcu = -1;
    for (int k = 0; k < c->num_components; k++) {
        const jpeg_component_info *ci = &c->comp_info[k];
        sl__hyb_comp *q = &h->comp[k];
        int hs = ci->h_samp_factor, vs = ci->v_samp_factor;
        int mh = c->max_h_samp_factor, mv = c->max_v_samp_factor;
        q->dw = (int32_t)ci->downsampled_width;
        q->dh = (int32_t)ci->downsampled_height;
        q->needed = !(k > 0 && h->space == SL__HYB_YCC && h->out_c == 1);
        q->hexp = q->vexp = 1;
        /* jinit_upsampler's choice, at DCT_scaled_size 8 (do_fancy holds) */
        if (hs == mh && vs == mv)
            q->method = SL__UP_FULL;
        else if (2 * hs == mh && vs == mv)
            q->method = q->dw > 2 ? SL__UP_H2V1 : SL__UP_INT;
        else if (hs == mh && 2 * vs == mv)
            q->method = SL__UP_H1V2;
        else if (2 * hs == mh && 2 * vs == mv)
            q->method = q->dw > 2 ? SL__UP_H2V2 : SL__UP_INT;
        else if (mh % hs == 0 && mv % vs == 0)
            q->method = SL__UP_INT;
        else {
            *why = "fractional chroma sampling factors";
            return;
        }
        if (q->method == SL__UP_INT) {
            q->hexp = mh / hs;
            q->vexp = mv / vs;
        }
        if (q->needed) {
            window_axis(w->x, w->x + w->w, mh / hs,
                        q->method == SL__UP_H2V1 || q->method == SL__UP_H2V2, q->dw, &q->bx0,
                        &q->bw);
            window_axis(w->y, w->y + w->h, mv / vs,
                        q->method == SL__UP_H1V2 || q->method == SL__UP_H2V2, q->dh, &q->by0,
                        &q->bh);
            int first = q->by0 / vs, last = (q->by0 + q->bh - 1) / vs;
            j->first_imcu = first < j->first_imcu ? first : j->first_imcu;
            j->last_imcu = last > j->last_imcu ? last : j->last_imcu;
        } /* else no block: bw = bh = 0 */
        q->coef_off = off;
        q->plane_off = planes;
        off += (size_t)q->bw * (size_t)q->bh * sizeof(JBLOCK);
        planes += ((size_t)q->bw * 8 * (size_t)q->bh * 8 + 255) & ~(size_t)255;
        h->nblocks += (uint64_t)q->bw * (uint64_t)q->bh;
    }
    /* jpeg_read_coefficients keeps every block of the image, whatever the file */
    size_t whole = 0;
    for (int k = 0; k < c->num_components; k++) {
        const jpeg_component_info *ci = &c->comp_info[k];
        size_t bw = (ci->width_in_blocks + (unsigned)ci->h_samp_factor - 1) /
                    (unsigned)ci->h_samp_factor * (unsigned)ci->h_samp_factor;
        size_t bh = (ci->height_in_blocks + (unsigned)ci->v_samp_factor - 1) /
                    (unsigned)ci->v_samp_factor * (unsigned)ci->v_samp_factor;
        whole += bw * bh * sizeof(JBLOCK);
    }
    if (whole > j->mem->limit || off - SL__HYB_HEAD_BYTES > j->mem->limit) {
        *why = "more working memory than max_sample_bytes";
        return;
    }
    h->kind = SL__HYB_COEFS;
    h->plane_bytes = planes;
    if ((j->flags & SL__HYB_DEVICE_HUFF) && !(j->flags & SL__HYB_LIBJPEG_HUFF) &&
        !jpeg_has_multiple_scans(c) && !c->arith_code && !c->progressive_mode && c->src) {
        /* device entropy decoding (hybrid.h): the job in place of the coefficient area (which
         * is then on the device only), its data from the scan's first byte (where
         * jpeg_read_header left the source) to the marker after the scan (job_data_bytes) */
        int nd, na;
        scan_tables(c, NULL, NULL, &nd, &na);
        h->huff_off = SL__HYB_HEAD_BYTES;
        /* no room for the pixels: such a file never falls back (decoder.c) */
        j->job_from = c->src->next_input_byte;
        j->job_data = job_data_bytes(j->job_from, c->src->bytes_in_buffer);
        *bytes = SL__HYB_HEAD_BYTES + job_bytes(nd, na, j->job_data);
        return;
    }
    if (off > *bytes)
        *bytes = off;
}

/* The header's part: the head and the staging size. */
static sl_status hybrid_plan_body(job *j)
{
    struct jpeg_decompress_struct *c = &j->cinfo;
    sl_status s = sl__image_check_size(c->image_width, c->image_height, "JPEG", j->err, j->errlen);
    if (s != SL_OK)
        return s;
    c->do_fancy_upsampling = TRUE;
    c->scale_num = c->scale_denom = 8;
    jpeg_calc_output_dimensions(c);
    hybrid_layout(j, j->head, &j->why, &j->bytes);
    return SL_OK;
}

sl_status sl__jpeg_hybrid_plan(const uint8_t *data, size_t size, sl__color color, unsigned flags,
                               const sl__roi *window, const sl__decode_mem *mem, sl__hyb_head *head,
                               size_t *bytes, const char **why, char *err, size_t errlen)
{
    job j;
    memset(&j, 0, sizeof j);
    j.window = window;
    j.err = err;
    j.errlen = errlen;
    j.color = color;
    j.flags = flags;
    j.mem = mem;
    j.head = head;
    j.why = NULL;
    sl_status s = guarded(&j, data, size, hybrid_plan_body);
    *bytes = j.bytes;
    *why = j.why;
    return s;
}

/* The MCU columns [*x0, *x1] holding a block the window keeps (*x1 < *x0: none). */
static void window_mcu_cols(const struct jpeg_decompress_struct *c, const sl__hyb_head *h, int *x0,
                            int *x1)
{
    *x0 = INT_MAX;
    *x1 = -1;
    for (int ci = 0; ci < c->comps_in_scan; ci++) {
        const jpeg_component_info *cp = c->cur_comp_info[ci];
        const sl__hyb_comp *q = &h->comp[cp->component_index];
        if (q->bw == 0 || q->bh == 0)
            continue;
        int a = q->bx0 / cp->MCU_width, b = (q->bx0 + q->bw - 1) / cp->MCU_width;
        *x0 = a < *x0 ? a : *x0;
        *x1 = b > *x1 ? b : *x1;
    }
}

/* Points mcu[] at the staging's block for each block of the MCU at column x, MCU row y of
 * iMCU row `row` that the window keeps, and at a block of `dummy` for the others (outside the
 * window, or padding past the image's edge): the entropy decoder then writes the coefficients
 * in place. The layout of an MCU's blocks is jdcoefct.c's decompress_onepass's. */
static void point_mcu(const job *j, int row, int y, int x, JBLOCKROW *mcu, JBLOCK *dummy)
{
    const struct jpeg_decompress_struct *c = &j->cinfo;
    int n = 0;
    for (int ci = 0; ci < c->comps_in_scan; ci++) {
        const jpeg_component_info *cp = c->cur_comp_info[ci];
        const sl__hyb_comp *q = &j->head->comp[cp->component_index];
        JBLOCK *base = (JBLOCK *)(void *)(j->out + q->coef_off);
        for (int yi = 0; yi < cp->MCU_height; yi++) {
            long by = (long)row * cp->v_samp_factor + (long)y * cp->MCU_height + yi - q->by0;
            for (int xi = 0; xi < cp->MCU_width; xi++, n++) {
                long bx = (long)x * cp->MCU_width + xi - q->bx0;
                mcu[n] = bx >= 0 && bx < q->bw && by >= 0 && by < q->bh ? base + by * q->bw + bx
                                                                        : dummy + n;
            }
        }
    }
}

/* The MCUs of a single-scan file down to iMCU row `rows` (exclusive), each block the window
 * keeps decoded straight into the staging (zeroed first: the decoders write only the nonzero
 * coefficients, in natural order), the MCUs with no such block decoded into nothing. With huff,
 * jpeg_huff.c's decoder, and *gave_up set when it gives up (nothing was read from libjpeg's
 * source, so libjpeg's decoder can start the scan again); without, libjpeg's own decode_mcu
 * (as jdcoefct.c's decompress_onepass and jpeg_skip_scanlines drive it). */
static sl_status single_scan_rows(job *j, sl__huff *huff, int rows, bool *gave_up)
{
    struct jpeg_decompress_struct *c = &j->cinfo;
    const sl__hyb_head *h = j->head;
    memset(j->out + SL__HYB_HEAD_BYTES, 0, (size_t)h->nblocks * sizeof(JBLOCK));
    JBLOCK dummy[D_MAX_BLOCKS_IN_MCU];
    JBLOCKROW mcu[D_MAX_BLOCKS_IN_MCU], dummies[D_MAX_BLOCKS_IN_MCU];
    for (int n = 0; n < D_MAX_BLOCKS_IN_MCU; n++)
        dummies[n] = dummy + n;
    int x0, x1;
    window_mcu_cols(c, h, &x0, &x1);
    const int total = (int)c->total_iMCU_rows;
    const jpeg_component_info *only = c->cur_comp_info[0];
    for (int row = 0; row < rows; row++) {
        bool inside = row >= j->first_imcu && row <= j->last_imcu;
        /* jdcoefct.c's start_iMCU_row: MCU rows in this iMCU row */
        int mcu_rows = c->comps_in_scan > 1 ? 1
                       : row < total - 1    ? only->v_samp_factor
                                            : only->last_row_height;
        for (int y = 0; y < mcu_rows; y++) {
            for (int x = 0; x < (int)c->MCUs_per_row; x++) {
                JBLOCKROW *buf = c->arith_code && !huff ? dummies : NULL;
                if (inside && x >= x0 && x <= x1) {
                    point_mcu(j, row, y, x, mcu, dummy);
                    buf = mcu;
                }
                if (huff) {
                    if (sl__huff_mcu(huff, buf) != SL__HUFF_OK) {
                        *gave_up = true;
                        return SL_OK;
                    }
                } else if (!(*c->entropy->decode_mcu)(c, buf)) { /* only a suspending source */
                    return sl__codec_fail(j->err, j->errlen, SL_EINTERNAL,
                                          "JPEG: decoder suspended");
                }
            }
        }
    }
    *gave_up = huff && sl__huff_finish(huff) != SL__HUFF_OK;
    return SL_OK;
}

/* Device entropy decoding (hybrid.h): writes the sl__hyb_huff_job at the head's huff_off —
 * huff's state and tables (only the scan's, renumbered), the MCU geometry single_scan_rows and
 * point_mcu use, the entropy-coded bytes to the marker after them (job_data_bytes) — and no
 * coefficients (the coefficient area is on the device only). False when it does not fit the
 * staging (the plan's data ended elsewhere): the caller then decodes on the CPU. */
static bool write_job(job *j, const sl__huff *huff, int rows)
{
    const struct jpeg_decompress_struct *c = &j->cinfo;
    sl__hyb_head *h = j->head;
    int dmap[NUM_HUFF_TBLS], amap[NUM_HUFF_TBLS], nd, na;
    scan_tables(c, dmap, amap, &nd, &na);
    const size_t left = (size_t)(huff->b.end - huff->b.p);
    const size_t data = huff->b.p == j->job_from && j->job_data <= left
                            ? j->job_data /* the plan's (hybrid_plan_body), not found again */
                            : job_data_bytes(huff->b.p, left);
    if (c->comps_in_scan > SL__HUFF_MAX_COMPS || h->huff_off > j->cap ||
        job_bytes(nd, na, data) > j->cap - (size_t)h->huff_off)
        return false;
    uint8_t *at = j->out + h->huff_off;
    sl__hyb_huff_job *jb = (sl__hyb_huff_job *)(void *)at;
    memset(jb, 0, sizeof *jb);
    jb->bits = huff->b;
    jb->bits.p = jb->bits.end = NULL;
    for (int b = 0; b < huff->b.blocks; b++) {
        jb->bits.dc_of[b] = (uint8_t)dmap[huff->b.dc_of[b]];
        jb->bits.ac_of[b] = (uint8_t)amap[huff->b.ac_of[b]];
    }
    jb->dc_off = SL__HYB_JOB_BYTES;
    jb->ac_off = jb->dc_off + (size_t)nd * sizeof(sl__huff_dc);
    jb->data_off = jb->ac_off + (size_t)na * sizeof(sl__huff_ac);
    jb->data_len = data;
    for (int t = 0; t < NUM_HUFF_TBLS; t++) {
        if (dmap[t] >= 0)
            memcpy(at + jb->dc_off + (size_t)dmap[t] * sizeof(sl__huff_dc), &huff->dc[t],
                   sizeof(sl__huff_dc));
        if (amap[t] >= 0)
            memcpy(at + jb->ac_off + (size_t)amap[t] * sizeof(sl__huff_ac), &huff->ac[t],
                   sizeof(sl__huff_ac));
    }
    memcpy(at + jb->data_off, huff->b.p, data);
    jb->rows = rows;
    jb->total_imcu_rows = (int32_t)c->total_iMCU_rows;
    jb->to_end = rows == jb->total_imcu_rows;
    jb->first_imcu = j->first_imcu;
    jb->last_imcu = j->last_imcu;
    window_mcu_cols(c, h, &jb->x0, &jb->x1);
    jb->mcus_per_row = (int32_t)c->MCUs_per_row;
    jb->comps_in_scan = c->comps_in_scan;
    for (int ci = 0; ci < c->comps_in_scan; ci++) {
        const jpeg_component_info *cp = c->cur_comp_info[ci];
        jb->comp[ci] = cp->component_index;
        jb->mcu_width[ci] = cp->MCU_width;
        jb->mcu_height[ci] = cp->MCU_height;
        jb->v_samp[ci] = cp->v_samp_factor;
        jb->last_row_height[ci] = cp->last_row_height;
    }
    return true;
}

/* A single-scan file: after jpeg_start_decompress in raw-data mode has read the tables and set
 * the scan up, its entropy-coded data decoded MCU by MCU (single_scan_rows): by jpeg_huff.c's
 * decoder, faster than libjpeg's, or, where that one gives up (a scan it does not decode,
 * anything odd in the data: jpeg_huff.h) or SL__HYB_LIBJPEG_HUFF asks, by libjpeg's own,
 * whose verdict then stands. Nothing is upsampled, converted or kept for the whole image. The
 * iMCU rows below the window are not read at all unless SL__DECODE_TO_END asks for them (the
 * file not yet known whole: decoded, nothing stored). */
static sl_status hybrid_single_scan(job *j)
{
    struct jpeg_decompress_struct *c = &j->cinfo;
    sl__hyb_head *h = j->head;
    c->raw_data_out = TRUE;
    c->out_color_space = c->jpeg_color_space; /* no conversion: raw data */
    jpeg_start_decompress(c);
    if (c->blocks_in_MCU > D_MAX_BLOCKS_IN_MCU || c->comps_in_scan < 1)
        return sl__codec_fail(j->err, j->errlen, SL_ECORRUPT,
                              "JPEG: bad MCU"); /* libjpeg's check */
    const int total = (int)c->total_iMCU_rows;
    const int rows =
        (j->flags & SL__DECODE_TO_END) || j->last_imcu >= total ? total : j->last_imcu + 1;
    sl__huff huff;
    bool gave_up = true;
    bool init = !(j->flags & SL__HYB_LIBJPEG_HUFF) && sl__huff_init(&huff, c) == SL__HUFF_OK;
    if (h->huff_off && !(init && write_job(j, &huff, rows))) {
        /* not for the device after all: decoded here if its coefficients fit the staging
         * (planned for the job), else by the CPU decoder (the head's SL__HYB_PIXELS) */
        h->huff_off = 0;
        if (SL__HYB_HEAD_BYTES + (size_t)h->nblocks * sizeof(JBLOCK) > j->cap) {
            h->kind = SL__HYB_PIXELS;
            j->why = "jpeg_huff.c does not take its scan now";
            jpeg_abort_decompress(c);
            return SL_OK;
        }
    }
    if (h->huff_off == 0 && init) {
        single_scan_rows(j, &huff, rows, &gave_up); /* SL_OK */
        j->huff_clean = !gave_up && rows == total;
    }
    if (h->huff_off == 0 && gave_up) {
        sl_status s = single_scan_rows(j, NULL, rows, &gave_up);
        if (s != SL_OK)
            return s;
    }
    /* the tables libjpeg latched for the scan (freed by the abort) */
    for (int k = 0; k < c->num_components; k++)
        for (int t = 0; t < DCTSIZE2; t++)
            h->comp[k].quant[t] = c->comp_info[k].quant_table->quantval[t];
    jpeg_abort_decompress(c);
    return SL_OK;
}

/* Reads the window's coefficients into j->out after the head. A single-scan file is decoded
 * down to the window's last iMCU row only (hybrid_single_scan); a multi-scan (progressive) one
 * needs every scan, so its whole image is entropy-decoded (jpeg_read_coefficients) and the
 * window's blocks copied out — the rule for progressive files, whatever the window. One whose
 * coefficients are incomplete turns the head into SL__HYB_PIXELS (why set). */
static sl_status hybrid_coefs_body(job *j)
{
    struct jpeg_decompress_struct *c = &j->cinfo;
    sl_status s = hybrid_plan_body(j);
    if (s != SL_OK || j->head->kind != SL__HYB_COEFS)
        return s;
    if (j->bytes > j->cap)
        return sl__codec_fail(j->err, j->errlen, SL_EINTERNAL,
                              "JPEG: the staging (%zu bytes) is smaller than the layout (%zu)",
                              j->cap, j->bytes);
    c->mem->max_memory_to_use = j->mem->limit > (size_t)LONG_MAX ? LONG_MAX : (long)j->mem->limit;
    j->progress.progress_monitor = on_progress;
    c->progress = &j->progress;
    for (int k = 0; k < c->num_components; k++) {
        const jpeg_component_info *ci = &c->comp_info[k];
        if (ci->v_samp_factor > 4 || ci->h_samp_factor > 4)
            return sl__codec_fail(j->err, j->errlen, SL_ECORRUPT,
                                  "JPEG: sampling factor over 4"); /* libjpeg refuses it too */
    }
    if (!jpeg_has_multiple_scans(c))
        return hybrid_single_scan(j);
    jvirt_barray_ptr *arrays = jpeg_read_coefficients(c);
    if (c->progressive_mode && c->coef_bits != NULL) {
        for (int k = 0; k < c->num_components; k++) {
            for (int q = 0; q < DCTSIZE2; q++) {
                if (c->coef_bits[k][q] != 0) { /* libjpeg would smooth the blocks */
                    j->head->kind = SL__HYB_PIXELS;
                    j->why = "a progressive file with incomplete coefficients";
                    return SL_OK;
                }
            }
        }
    }
    for (int k = 0; k < c->num_components; k++) {
        const jpeg_component_info *ci = &c->comp_info[k];
        sl__hyb_comp *q = &j->head->comp[k];
        if (ci->quant_table == NULL)
            return sl__codec_fail(j->err, j->errlen, SL_ECORRUPT,
                                  "JPEG: component %d has no quantization table", k);
        for (int t = 0; t < DCTSIZE2; t++)
            q->quant[t] = ci->quant_table->quantval[t];
        JBLOCK *dst = (JBLOCK *)(void *)(j->out + q->coef_off);
        size_t row = (size_t)q->bw * sizeof(JBLOCK);
        for (int by = 0; by < q->bh; by++) { /* the window's blocks */
            JBLOCKARRAY rows = c->mem->access_virt_barray((j_common_ptr)c, arrays[k],
                                                          (JDIMENSION)(q->by0 + by), 1, FALSE);
            memcpy(dst + (size_t)by * (size_t)q->bw, rows[0] + q->bx0, row);
        }
    }
    return SL_OK;
}

sl_status sl__jpeg_hybrid_coefs(const uint8_t *data, size_t size, sl__color color, unsigned flags,
                                const sl__roi *window, const sl__decode_mem *mem, uint8_t *out,
                                size_t cap, const char **why, char *err, size_t errlen)
{
    bool clean;
    return sl__jpeg_hybrid_stage(data, size, color, flags, window, mem, out, cap, why, &clean, err,
                                 errlen);
}

sl_status sl__jpeg_hybrid_stage(const uint8_t *data, size_t size, sl__color color, unsigned flags,
                                const sl__roi *window, const sl__decode_mem *mem, uint8_t *out,
                                size_t cap, const char **why, bool *clean, char *err, size_t errlen)
{
    job j;
    memset(&j, 0, sizeof j);
    j.window = window;
    j.err = err;
    j.errlen = errlen;
    j.color = color;
    j.flags = flags;
    j.mem = mem;
    j.out = out;
    j.cap = cap;
    j.head = (sl__hyb_head *)(void *)out;
    sl_status s = guarded(&j, data, size, hybrid_coefs_body);
    *why = j.why;
    *clean = s == SL_OK && j.huff_clean;
    return s;
}
