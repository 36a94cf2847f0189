/* src/ops/decoders/codec.c: format detection and dispatch for the image codecs.
 *
 * Exports sl__image_peek, sl__image_decode, sl__format_name and the helpers shared by jpeg.c and
 * png.c (sl__codec_fail, sl__image_check_size, sl__roi_resolve). Invariant: the format is
 * decided here from the first bytes only, so a file named cat.png that holds a JPEG decodes as a
 * JPEG, and bytes that are neither fail here with what they start with.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ops/decoders/codec.h"

static const uint8_t png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

const char *sl__format_name(sl__format f)
{
    switch (f) {
    case SL__FMT_JPEG: return "JPEG";
    case SL__FMT_PNG: return "PNG";
    default: return "unknown";
    }
}

sl_status sl__codec_fail(char *err, size_t errlen, sl_status code, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

sl_status sl__image_check_size(int64_t w, int64_t h, const char *fmt_name, char *err, size_t errlen)
{
    if (w < 1 || h < 1)
        return sl__codec_fail(err, errlen, SL_ECORRUPT, "%s: empty image (%" PRId64 "x%" PRId64 ")",
                              fmt_name, w, h);
    if (w > SL__IMAGE_MAX_DIM || h > SL__IMAGE_MAX_DIM || w * h > SL__IMAGE_MAX_PIXELS)
        return sl__codec_fail(err, errlen, SL_EUNSUPPORTED,
                              "%s: image of %" PRId64 "x%" PRId64 " pixels is over the limit "
                              "(%d per side, %" PRId64 " pixels)",
                              fmt_name, w, h, SL__IMAGE_MAX_DIM, SL__IMAGE_MAX_PIXELS);
    return SL_OK;
}

sl_status sl__roi_resolve(const sl__roi *roi, int width, int height, sl__roi *out, char *err,
                          size_t errlen)
{
    if (roi == NULL) {
        *out = (sl__roi){.x = 0, .y = 0, .w = width, .h = height};
        return SL_OK;
    }
    /* Compared in int64_t: x + w must not overflow on a hostile roi. */
    if (roi->x < 0 || roi->y < 0 || roi->w < 1 || roi->h < 1 || (int64_t)roi->x + roi->w > width ||
        (int64_t)roi->y + roi->h > height)
        return sl__codec_fail(err, errlen, SL_EINVAL,
                              "region of interest x=%d y=%d w=%d h=%d is not inside the %dx%d "
                              "image (w and h must be >= 1)",
                              roi->x, roi->y, roi->w, roi->h, width, height);
    *out = *roi;
    return SL_OK;
}

static sl__format detect(const uint8_t *data, size_t size)
{
    if (size >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff)
        return SL__FMT_JPEG;
    if (size >= sizeof png_magic && memcmp(data, png_magic, sizeof png_magic) == 0)
        return SL__FMT_PNG;
    return SL__FMT_UNKNOWN;
}

/* Names formats we recognise but do not decode, so the user reads "GIF" rather than bytes. */
static const char *known_other(const uint8_t *d, size_t n)
{
    if (n >= 6 && (memcmp(d, "GIF87a", 6) == 0 || memcmp(d, "GIF89a", 6) == 0))
        return "GIF";
    if (n >= 12 && memcmp(d, "RIFF", 4) == 0 && memcmp(d + 8, "WEBP", 4) == 0)
        return "WebP";
    if (n >= 4 && (memcmp(d, "II*\0", 4) == 0 || memcmp(d, "MM\0*", 4) == 0))
        return "TIFF";
    if (n >= 2 && d[0] == 'B' && d[1] == 'M')
        return "BMP";
    if (n >= 12 && memcmp(d + 4, "ftyp", 4) == 0)
        return "HEIF/AVIF";
    if (n >= 12 && memcmp(d, "\0\0\0\x0cjP  ", 8) == 0)
        return "JPEG 2000";
    return NULL;
}

/* Unknown bytes: SL_EUNSUPPORTED for a format we recognise, SL_ECORRUPT for anything else
 * (an HTML error page saved as .jpg, a truncated download, random bytes). */
static sl_status unknown_format(const uint8_t *data, size_t size, char *err, size_t errlen)
{
    const char *other = known_other(data, size);
    if (other != NULL)
        return sl__codec_fail(err, errlen, SL_EUNSUPPORTED,
                              "%s images are not supported (only JPEG and PNG)", other);
    if (size == 0)
        return sl__codec_fail(err, errlen, SL_ECORRUPT, "not a JPEG or PNG file (0 bytes)");
    char hex[3 * 4] = "";
    for (size_t i = 0, at = 0; i < size && i < 4; i++)
        at += (size_t)snprintf(hex + at, sizeof hex - at, "%s%02x", i ? " " : "", data[i]);
    return sl__codec_fail(err, errlen, SL_ECORRUPT, "not a JPEG or PNG file (starts with %s)", hex);
}

sl_status sl__image_peek(const uint8_t *data, size_t size, sl__image_info *info, char *err,
                         size_t errlen)
{
    if (data == NULL && size > 0)
        return sl__codec_fail(err, errlen, SL_EINVAL, "no data");
    switch (detect(data, size)) {
    case SL__FMT_JPEG: return sl__jpeg_peek(data, size, info, err, errlen);
    case SL__FMT_PNG: return sl__png_peek(data, size, info, err, errlen);
    default: return unknown_format(data, size, err, errlen);
    }
}

sl_status sl__image_decode(const uint8_t *data, size_t size, sl__color color, unsigned flags,
                           const sl__roi *roi, uint8_t *out, const sl__decode_mem *mem, char *err,
                           size_t errlen)
{
    if ((data == NULL && size > 0) || out == NULL || mem == NULL || mem->scratch == NULL)
        return sl__codec_fail(err, errlen, SL_EINVAL, "no data, output or scratch");
    if (color != SL__COLOR_RGB && color != SL__COLOR_BGR && color != SL__COLOR_GRAY)
        return sl__codec_fail(err, errlen, SL_EINVAL, "unknown color %d", (int)color);
    switch (detect(data, size)) {
    case SL__FMT_JPEG: return sl__jpeg_decode(data, size, color, flags, roi, out, mem, err, errlen);
    case SL__FMT_PNG:
        if (SL__DECODE_SCALE_OF(flags) != 0 && SL__DECODE_SCALE_OF(flags) != 8)
            return sl__codec_fail(err, errlen, SL_EINVAL, "DCT scaling applies to JPEG only");
        return sl__png_decode(data, size, color, flags, roi, out, mem, err, errlen);
    default: return unknown_format(data, size, err, errlen);
    }
}
