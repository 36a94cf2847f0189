/* src/ops/decoders/codec.h: decoding JPEG and PNG images into HWC uint8 (internal, not installed).
 *
 * Exports sl__image_peek, sl__image_decode and sl__format_name; jpeg.c and png.c implement the
 * per-format halves (sl__jpeg_*, sl__png_*), codec.c dispatches on the file's magic bytes.
 * Invariant: for the same bytes, peek and decode agree on the size, so `out` sized from peek's
 * width * height * C is exactly what decode writes; decode writes nothing past that, and on
 * failure the contents of `out` are unspecified (partly written) but never past its end.
 * Outputs match Pillow's `np.asarray(Image.open(f).convert("RGB"))` bit for bit (Pillow linked
 * with the same libjpeg-turbo): every JPEG color space (CMYK/YCCK by Pillow's formula) and every
 * PNG of 8 bits or fewer; 16-bit PNG samples are rounded where Pillow truncates (png.c).
 * Memory: `out` and one scratch buffer, plus the working memory libjpeg and libspng malloc for
 * themselves during a call (freed before it returns, also on failure; not seen by sl__malloc's
 * counting or fault injection, and their allocation failures are SL_ENOMEM).
 * Threads: every call is independent (no global state); call from any number of threads.
 */
#ifndef SLUICE_OPS_DECODERS_CODEC_H
#define SLUICE_OPS_DECODERS_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/status.h"

typedef enum sl__color { SL__COLOR_RGB, SL__COLOR_BGR, SL__COLOR_GRAY } sl__color;

typedef enum sl__format { SL__FMT_UNKNOWN, SL__FMT_JPEG, SL__FMT_PNG } sl__format;

typedef struct sl__image_info {
    sl__format format;
    int width, height; /* pixels, each in [1, SL__IMAGE_MAX_DIM] */
    int channels;      /* native: 1 gray, 2 gray+alpha, 3 RGB/YCbCr, 4 RGBA or CMYK/YCCK */
} sl__image_info;

/* A window inside the image, in pixels: columns [x, x + w), rows [y, y + h); w, h >= 1. */
typedef struct sl__roi {
    int x, y, w, h;
    size_t stride; /* bytes from one output row to the next; 0: w pixels (rows packed) */
} sl__roi;

/* Per-worker memory of at least `bytes`; the caller never frees it. NULL on ENOMEM. A decode
 * calls it at most once, so an implementation may hand out the same growing buffer each time. */
typedef void *(*sl__scratch_fn)(void *ctx, size_t bytes);

/* The memory a decode may use besides `out`: the scratch buffer, and `limit`, the bytes of
 * working memory that grows with the image (scratch, and the coefficient buffer libjpeg keeps
 * for a progressive or other multi-scan JPEG) that it may take — a decode that would need more
 * fails with SL_EUNSUPPORTED before allocating it (the pipeline's max_sample_bytes; SIZE_MAX:
 * none). */
typedef struct sl__decode_mem {
    sl__scratch_fn scratch;
    void *scratch_ctx;
    size_t limit;
} sl__decode_mem;

/* sl__image_decode flags */
#define SL__DECODE_FAST_IDCT 0x1u /* JPEG: JDCT_IFAST instead of JDCT_ISLOW (not Pillow-exact) */
/* JPEG: decode at n/8 of the size (n = 1..8) by DCT scaling: the image is then
 * sl__jpeg_scaled(width, n) x sl__jpeg_scaled(height, n) and a roi is in those coordinates.
 * Scaled pixel k covers original pixels [8k/n, 8(k+1)/n). Other formats: SL_EINVAL. */
#define SL__DECODE_SCALE(n) ((unsigned)(n) << 8)
#define SL__DECODE_SCALE_OF(flags) ((int)(((flags) >> 8) & 15u))
/* With a roi: after its last row, read the rest of the image too, without reconstructing it
 * (JPEG: entropy-decoded; PNG: inflated and checked), so that a truncated or corrupt file fails
 * as the whole decode does, wherever the window lies. */
#define SL__DECODE_TO_END 0x2u
/* sl__jpeg_hybrid_coefs only, for tests: a single-scan file's entropy decoding left to
 * libjpeg's own decoder instead of jpeg_huff.c's (which gives the same coefficients). */
#define SL__HYB_LIBJPEG_HUFF 0x4u
/* sl__jpeg_hybrid_plan / _coefs / _stage: a single-scan Huffman file is planned and staged for
 * device entropy decoding (hybrid.h: head huff_off, a sl__hyb_huff_job after the coefficients,
 * which are then not written) when sl__huff_init accepts its scan. Only for a file jpeg_huff.c
 * decoded whole without giving up before (sl__jpeg_hybrid_stage's *clean). */
#define SL__HYB_DEVICE_HUFF 0x8u
/* Extent of a JPEG decoded at n/8 (libjpeg rounds up). */
static inline int sl__jpeg_scaled(int extent, int n)
{
    return (int)(((long long)extent * n + 7) / 8);
}

/* Size limits: a header asking for more is refused with SL_EUNSUPPORTED before any allocation,
 * so a hostile 30-byte file cannot make the pipeline allocate terabytes. 2^28 pixels is 768 MiB
 * of RGB output; JPEG itself cannot exceed 65500 per side. */
#define SL__IMAGE_MAX_DIM 65535
#define SL__IMAGE_MAX_PIXELS ((int64_t)1 << 28)

/* Reads the header of an encoded image. The format is detected by content (magic bytes), never
 * by a file name. Returns: SL_OK and *info filled; SL_EUNSUPPORTED for bytes that are no JPEG or
 * PNG, or an image over the size limits; SL_ECORRUPT for a malformed header; SL_ENOMEM.
 * On failure err (errlen bytes, may be 0) receives the reason, such as
 * "not a JPEG or PNG file (starts with 3c 21 44 4f)". */
sl_status sl__image_peek(const uint8_t *data, size_t size, sl__image_info *info, char *err,
                         size_t errlen);

/* Decodes the whole image (roi NULL) or only the window roi into out: HWC uint8, rows of
 * roi->w (or width) * C bytes with no padding, C = 3 for RGB/BGR, 1 for GRAY. flags:
 * SL__DECODE_*. mem->scratch is called at most once. Without SL__DECODE_TO_END the rows below
 * a roi are never read. Returns: SL_OK; SL_ECORRUPT for corrupt or truncated data (a JPEG's
 * "premature end" warnings included: nothing is half-decoded silently); SL_EUNSUPPORTED for a
 * valid image this decoder cannot handle (12-bit JPEG, a JPEG of more than 256 scans...) or
 * one that needs more working memory than mem->limit; SL_EINVAL for a roi outside the image;
 * SL_ENOMEM. err as for sl__image_peek. */
sl_status sl__image_decode(const uint8_t *data, size_t size, sl__color color, unsigned flags,
                           const sl__roi *roi, uint8_t *out, const sl__decode_mem *mem, char *err,
                           size_t errlen);

/* "JPEG", "PNG" or "unknown": a static string. */
const char *sl__format_name(sl__format f);

/* ---- per-format halves, called by codec.c only (arguments already checked) ---------------- */

sl_status sl__jpeg_peek(const uint8_t *data, size_t size, sl__image_info *info, char *err,
                        size_t errlen);
/* roi may be NULL (whole image); each half checks it with sl__roi_resolve once it knows the
 * size, so the header is parsed once per decode. */
sl_status sl__jpeg_decode(const uint8_t *data, size_t size, sl__color color, unsigned flags,
                          const sl__roi *roi, uint8_t *out, const sl__decode_mem *mem, char *err,
                          size_t errlen);
sl_status sl__png_peek(const uint8_t *data, size_t size, sl__image_info *info, char *err,
                       size_t errlen);
sl_status sl__png_decode(const uint8_t *data, size_t size, sl__color color, unsigned flags,
                         const sl__roi *roi, uint8_t *out, const sl__decode_mem *mem, char *err,
                         size_t errlen);

/* The hybrid decoder's CPU half (hybrid.h; JPEG only). plan: from the header, *head (kind
 * SL__HYB_COEFS when the kernels decode it exactly, else SL__HYB_PIXELS with the reason in
 * *why) and *bytes, the staging it needs. window: the output's part of the image (NULL: all of
 * it); only the blocks its pixels need are kept. coefs: fills the staging `out` (cap bytes):
 * the head and those blocks, given the same color, flags and window as the plan; a
 * single-scan file is read down to the window's last iMCU row, or to its end with
 * SL__DECODE_TO_END (the rest entropy-decoded, nothing kept). A progressive file found
 * incomplete turns the head into SL__HYB_PIXELS (*why set) and the caller decodes its pixels.
 * Errors as sl__image_decode. */
struct sl__hyb_head;
sl_status sl__jpeg_hybrid_plan(const uint8_t *data, size_t size, sl__color color, unsigned flags,
                               const sl__roi *window, const sl__decode_mem *mem,
                               struct sl__hyb_head *head, size_t *bytes, const char **why,
                               char *err, size_t errlen);
sl_status sl__jpeg_hybrid_coefs(const uint8_t *data, size_t size, sl__color color, unsigned flags,
                                const sl__roi *window, const sl__decode_mem *mem, uint8_t *out,
                                size_t cap, const char **why, char *err, size_t errlen);
/* sl__jpeg_hybrid_coefs, and *clean: true when jpeg_huff.c entropy-decoded the file's whole
 * scan (to its last iMCU row: SL__DECODE_TO_END, or a window reaching the image's bottom)
 * without giving up, which makes the file one for device entropy decoding in later epochs. */
sl_status sl__jpeg_hybrid_stage(const uint8_t *data, size_t size, sl__color color, unsigned flags,
                                const sl__roi *window, const sl__decode_mem *mem, uint8_t *out,
                                size_t cap, const char **why, bool *clean, char *err,
                                size_t errlen);

/* Shared helpers (codec.c). */
/* Pillow's ITU-R 601 luma, as ImageMath's L24: (R*19595 + G*38470 + B*7471 + 0x8000) >> 16. */
static inline uint8_t sl__luma(unsigned r, unsigned g, unsigned b)
{
    return (uint8_t)((r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16);
}
/* Writes "fmt" into err (if errlen > 0) and returns code. */
sl_status sl__codec_fail(char *err, size_t errlen, sl_status code, const char *fmt, ...)
    SL_PRINTF(4, 5);
/* SL_OK if w x h is within the size limits, else SL_EUNSUPPORTED (SL_ECORRUPT for 0 pixels)
 * with a message. */
sl_status sl__image_check_size(int64_t w, int64_t h, const char *fmt_name, char *err,
                               size_t errlen);
/* *out = *roi if it lies inside a width x height image, the whole image if roi is NULL;
 * SL_EINVAL with a message otherwise. */
sl_status sl__roi_resolve(const sl__roi *roi, int width, int height, sl__roi *out, char *err,
                          size_t errlen);

#endif
