/* src/ops/decoders/png.c: PNG decoding with libspng.
 *
 * Exports sl__png_peek and sl__png_decode (declared in codec.h). Invariant: a header over the
 * size limits is refused before anything the size of the image is allocated, and every chunk
 * that is read has its CRC checked, ancillary ones included (a mismatch is SL_ECORRUPT, as in
 * Pillow). Chunks after the last row needed are never read: not the last IDAT's CRC nor IEND,
 * so, as in Pillow, a file cut right after its image data still decodes.
 *
 * Every color type and bit depth is decoded, interlaced or not. libspng expands to RGB8 (8-bit
 * and lower depths, palettes included) or RGBA16 (16-bit), and `put_row` converts to the
 * requested color:
 * - alpha and tRNS are dropped, never composited (Pillow's convert("RGB") of RGBA does the same);
 *   gAMA, sBIT and iCCP are ignored, as Pillow does;
 * - 16-bit samples become round(v * 255 / 65535). Pillow differs here: it keeps the high byte
 *   (v >> 8) of 16-bit RGB(A), so results differ from Pillow by at most 1; for 16-bit gray it
 *   opens mode "I" and clips to 255, which is no image at all, so we do not follow it;
 * - GRAY of a color image is Pillow's convert("L") luma (sl__luma) of the 8-bit RGB; of a gray
 *   image it is the gray value itself (the luma of (v, v, v) is v).
 * Non-interlaced images are decoded row by row and decoding stops after the last row of the
 * window (with SL__DECODE_TO_END it goes on to the image's last row through one scratch row, so
 * that damaged data below the window fails as in a whole decode); interlaced ones are decoded
 * whole into scratch, then the window is copied out: that scratch (RGBA16 for 16-bit images, 8
 * bytes a pixel) counts against the memory limit.
 */
#include <stdbool.h>
#include <string.h>

#include <spng.h>

#include "ops/decoders/codec.h"

/* Ancillary chunks (text, ICC profiles, EXIF) that libspng keeps in memory: per chunk (a
 * compressed one once inflated: libspng doubles its buffer, so it stops short of this), in all,
 * and how many (text and unknown chunks). IDAT is streamed and not subject to these. */
#define CHUNK_MAX ((size_t)16 << 20)
#define CHUNK_CACHE_MAX ((size_t)64 << 20)
/* libspng's own, SPNG_MAX_CHUNK_COUNT, named here for the message: spng_set_option of 0.7.3
 * refuses any SPNG_CHUNK_COUNT_LIMIT above the chunks counted so far, so it stays as it is */
#define CHUNK_COUNT_MAX 1000

/* One decode: what was asked, and libspng's state. */
typedef struct job {
    spng_ctx *ctx;
    struct spng_ihdr ihdr;
    sl__roi r; /* resolved window */
    sl__color color;
    unsigned flags; /* SL__DECODE_* */
    int fmt;        /* SPNG_FMT_RGB8 or SPNG_FMT_RGBA16 */
    size_t px;      /* bytes per pixel of fmt: 3 or 8 */
    uint8_t *out;
    size_t out_row;    /* bytes per output row */
    size_t out_stride; /* bytes from one output row to the next (>= out_row) */
    const sl__decode_mem *mem;
    char *err;
    size_t errlen;
} job;

static sl_status fail_spng(char *err, size_t errlen, int rc)
{
    switch (rc) {
    case SPNG_EMEM: return sl__codec_fail(err, errlen, SL_ENOMEM, "PNG: out of memory");
    case SPNG_EUSER_WIDTH:
    case SPNG_EUSER_HEIGHT:
        return sl__codec_fail(err, errlen, SL_EUNSUPPORTED,
                              "PNG: image over the size limit (%d pixels per side)",
                              SL__IMAGE_MAX_DIM);
    case SPNG_ECHUNK_LIMITS: /* libspng does not say which limit */
        return sl__codec_fail(err, errlen, SL_EUNSUPPORTED,
                              "PNG: metadata over the limits (%zu MiB a chunk, also once "
                              "inflated; %zu MiB and %d chunks in all)",
                              CHUNK_MAX >> 20, CHUNK_CACHE_MAX >> 20, CHUNK_COUNT_MAX);
    default: return sl__codec_fail(err, errlen, SL_ECORRUPT, "PNG: %s", spng_strerror(rc));
    }
}

static int configure(spng_ctx *ctx, const uint8_t *data, size_t size)
{
    int rc = spng_set_crc_action(ctx, SPNG_CRC_ERROR, SPNG_CRC_ERROR);
    if (rc == 0)
        rc = spng_set_image_limits(ctx, SL__IMAGE_MAX_DIM, SL__IMAGE_MAX_DIM);
    if (rc == 0)
        rc = spng_set_chunk_limits(ctx, CHUNK_MAX, CHUNK_CACHE_MAX);
    if (rc == 0)
        rc = spng_set_png_buffer(ctx, data, size);
    return rc;
}

/* A context with the header read and checked. On failure nothing is left to free. */
static sl_status open_png(const uint8_t *data, size_t size, spng_ctx **pctx, struct spng_ihdr *ihdr,
                          char *err, size_t errlen)
{
    spng_ctx *ctx = spng_ctx_new(0);
    if (ctx == NULL)
        return sl__codec_fail(err, errlen, SL_ENOMEM, "PNG: out of memory");
    int rc = configure(ctx, data, size);
    if (rc == 0)
        rc = spng_get_ihdr(ctx, ihdr);
    sl_status s = rc ? fail_spng(err, errlen, rc)
                     : sl__image_check_size(ihdr->width, ihdr->height, "PNG", err, errlen);
    if (s != SL_OK) {
        spng_ctx_free(ctx);
        return s;
    }
    *pctx = ctx;
    return SL_OK;
}

static int native_channels(uint8_t color_type)
{
    switch (color_type) {
    case SPNG_COLOR_TYPE_GRAYSCALE: return 1;
    case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA: return 2;
    case SPNG_COLOR_TYPE_TRUECOLOR_ALPHA: return 4;
    default: /* truecolor; indexed, whose palette is RGB */ return 3;
    }
}

sl_status sl__png_peek(const uint8_t *data, size_t size, sl__image_info *info, char *err,
                       size_t errlen)
{
    spng_ctx *ctx;
    struct spng_ihdr ihdr;
    sl_status s = open_png(data, size, &ctx, &ihdr, err, errlen);
    if (s != SL_OK)
        return s;
    *info = (sl__image_info){.format = SL__FMT_PNG,
                             .width = (int)ihdr.width,
                             .height = (int)ihdr.height,
                             .channels = native_channels(ihdr.color_type)};
    spng_ctx_free(ctx);
    return SL_OK;
}

/* round(v * 255 / 65535): v / 257 rounded; never exactly half since 257 is odd. */
static inline uint8_t to8(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v); /* host-endian; p may be unaligned */
    return (uint8_t)((v + 128u) / 257u);
}

static void put_pixel(sl__color color, uint8_t r, uint8_t g, uint8_t b, uint8_t *dst)
{
    if (color == SL__COLOR_GRAY) {
        dst[0] = sl__luma(r, g, b);
    } else if (color == SL__COLOR_BGR) {
        dst[0] = b, dst[1] = g, dst[2] = r;
    } else {
        dst[0] = r, dst[1] = g, dst[2] = b;
    }
}

/* Converts the window's columns of one full-width row in j->fmt into dst. */
static void put_row(const job *j, const uint8_t *src, uint8_t *dst)
{
    size_t step = j->color == SL__COLOR_GRAY ? 1 : 3;
    src += (size_t)j->r.x * j->px;
    if (j->fmt == SPNG_FMT_RGB8 && j->color == SL__COLOR_RGB) {
        memcpy(dst, src, j->out_row);
        return;
    }
    for (int x = 0; x < j->r.w; x++, src += j->px, dst += step) {
        if (j->fmt == SPNG_FMT_RGB8)
            put_pixel(j->color, src[0], src[1], src[2], dst);
        else
            put_pixel(j->color, to8(src), to8(src + 2), to8(src + 4), dst);
    }
}

/* True when libspng's RGB8 rows are exactly the output rows. */
static bool direct(const job *j)
{
    return j->fmt == SPNG_FMT_RGB8 && j->color == SL__COLOR_RGB && j->r.x == 0 &&
           (uint32_t)j->r.w == j->ihdr.width;
}

static uint8_t *get_scratch(job *j, size_t bytes)
{
    uint8_t *p = j->mem->scratch(j->mem->scratch_ctx, bytes);
    if (p == NULL)
        sl__codec_fail(j->err, j->errlen, SL_ENOMEM, "PNG: out of memory for %zu bytes", bytes);
    return p;
}

/* Non-interlaced: row by row through one scratch row (or straight into out), up to the last row
 * of the window. spng_decode_row returns SPNG_EOI with the image's last row. */
static sl_status decode_rows(job *j)
{
    size_t row_len = (size_t)j->ihdr.width * j->px;
    uint8_t *buf = NULL;
    int rc = spng_decode_image(j->ctx, NULL, 0, j->fmt, SPNG_DECODE_PROGRESSIVE);
    if (rc != 0)
        return fail_spng(j->err, j->errlen, rc);
    bool to_end = (j->flags & SL__DECODE_TO_END) != 0;
    if ((!direct(j) || to_end) && (buf = get_scratch(j, row_len)) == NULL)
        return SL_ENOMEM;
    int last = to_end ? (int)j->ihdr.height : j->r.y + j->r.h;
    for (int y = 0; y < last; y++) {
        /* Rows above the window land in the first output row and are overwritten. */
        /* Rows below it (to_end) go through buf and are dropped. */
        bool inside = y < j->r.y + j->r.h;
        uint8_t *dst = j->out + (y > j->r.y ? (size_t)(y - j->r.y) * j->out_stride : 0);
        rc = spng_decode_row(j->ctx, buf && (!direct(j) || !inside) ? buf : dst, row_len);
        if (rc != 0 && !(rc == SPNG_EOI && (uint32_t)y + 1 == j->ihdr.height))
            return fail_spng(j->err, j->errlen, rc);
        if (buf != NULL && !direct(j) && y >= j->r.y && inside)
            put_row(j, buf, dst);
    }
    return SL_OK;
}

/* Interlaced: the whole image into scratch (straight into out when it is the output). */
static sl_status decode_whole(job *j)
{
    size_t len, row_len = (size_t)j->ihdr.width * j->px;
    int rc = spng_decoded_image_size(j->ctx, j->fmt, &len);
    if (rc != 0)
        return fail_spng(j->err, j->errlen, rc);
    bool into_out = direct(j) && j->r.y == 0 && (uint32_t)j->r.h == j->ihdr.height &&
                    j->out_stride == j->out_row;
    if (!into_out && len > j->mem->limit)
        return sl__codec_fail(j->err, j->errlen, SL_EUNSUPPORTED,
                              "PNG: decoding this %ux%u interlaced image needs %zu bytes of "
                              "scratch, more than max_sample_bytes (%zu)",
                              j->ihdr.width, j->ihdr.height, len, j->mem->limit);
    uint8_t *buf = into_out ? j->out : get_scratch(j, len);
    if (buf == NULL)
        return SL_ENOMEM;
    rc = spng_decode_image(j->ctx, buf, len, j->fmt, 0);
    if (rc != 0)
        return fail_spng(j->err, j->errlen, rc);
    for (int y = 0; y < j->r.h && !into_out; y++)
        put_row(j, buf + (size_t)(j->r.y + y) * row_len, j->out + (size_t)y * j->out_stride);
    return SL_OK;
}

sl_status sl__png_decode(const uint8_t *data, size_t size, sl__color color, unsigned flags,
                         const sl__roi *roi, uint8_t *out, const sl__decode_mem *mem, char *err,
                         size_t errlen)
{
    job j = {.color = color, .flags = flags, .out = out, .mem = mem, .err = err, .errlen = errlen};
    sl_status s = open_png(data, size, &j.ctx, &j.ihdr, err, errlen);
    if (s != SL_OK)
        return s;
    s = sl__roi_resolve(roi, (int)j.ihdr.width, (int)j.ihdr.height, &j.r, err, errlen);
    if (s == SL_OK) {
        j.fmt = j.ihdr.bit_depth == 16 ? SPNG_FMT_RGBA16 : SPNG_FMT_RGB8;
        j.px = j.ihdr.bit_depth == 16 ? 8 : 3;
        j.out_row = (size_t)j.r.w * (color == SL__COLOR_GRAY ? 1 : 3);
        j.out_stride = j.r.stride ? j.r.stride : j.out_row;
        s = j.ihdr.interlace_method ? decode_whole(&j) : decode_rows(&j);
    }
    spng_ctx_free(j.ctx);
    return s;
}
