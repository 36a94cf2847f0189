/* test_codec: the JPEG/PNG codec layer (src/ops/decoders/codec.h) against PIL, without the
 * executor.
 *
 * Test data: the directory given as argv[1], else $SLUICE_TEST_DATA: the output of
 * tests/data/make_images.py. Its manifest.txt lists one image a line, "<file> exact|tol1|corrupt";
 * every good image <file> has PIL's reference decodes beside it, <file>.rgb.ppm (P6) and
 * <file>.gray.pgm (P5). exact: the decode equals the reference bit for bit; tol1: within 1;
 * corrupt: peek or decode fails with SL_ECORRUPT and a message.
 * Besides the references: BGR is RGB reversed, a window (roi) decodes to exactly the crop of the
 * full decode, truncated and garbage input fail with the library's words, bad windows are
 * SL_EINVAL, a failing scratch allocator is SL_ENOMEM, headers over the size limits are refused,
 * PNG metadata past libspng's limits is refused naming them, and no decode writes past the size
 * peek announced.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h> /* crc32, for hand-made PNG headers */

#include "ops/decoders/codec.h"

#define MAX_FILES 256
#define GUARD 64 /* canary bytes after every output buffer */
#define GUARD_BYTE 0xa5

typedef enum { CLS_EXACT, CLS_TOL1, CLS_CORRUPT } cls;

typedef struct entry {
    char file[128];
    cls cls;
} entry;

static const char *g_dir;
static entry g_files[MAX_FILES];
static int g_nfiles;

/* ---- files ------------------------------------------------------------------------------ */

static uint8_t *read_path(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(size > 0 ? (size_t)size : 1);
    if (buf != NULL && fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *n = (size_t)size;
    return buf;
}

/* A file of the test-data directory; fails the test when missing. */
static uint8_t *read_data(const char *name, size_t *n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    uint8_t *buf = read_path(path, n);
    if (buf == NULL)
        fail_msg("cannot read %s", path);
    return buf;
}

typedef struct pnm {
    int w, h, c;
    uint8_t *px; /* malloc'ed, h * w * c */
} pnm;

static bool pnm_int(const uint8_t *d, size_t n, size_t *at, int *v)
{
    while (*at < n && (d[*at] == ' ' || d[*at] == '\n' || d[*at] == '\r' || d[*at] == '\t'))
        ++*at;
    if (*at >= n || d[*at] < '0' || d[*at] > '9')
        return false;
    for (*v = 0; *at < n && d[*at] >= '0' && d[*at] <= '9'; ++*at)
        *v = *v * 10 + (d[*at] - '0');
    return true;
}

/* P6 or P5 with maxval 255, as make_images.py writes them (no comments). */
static pnm load_pnm(const char *name)
{
    size_t n, at = 2;
    uint8_t *d = read_data(name, &n);
    pnm p = {0};
    int maxval;
    assert_true(n > 2 && d[0] == 'P' && (d[1] == '6' || d[1] == '5'));
    p.c = d[1] == '6' ? 3 : 1;
    assert_true(pnm_int(d, n, &at, &p.w) && pnm_int(d, n, &at, &p.h) &&
                pnm_int(d, n, &at, &maxval));
    assert_int_equal(maxval, 255);
    at++; /* the single whitespace before the pixels */
    size_t bytes = (size_t)p.w * (size_t)p.h * (size_t)p.c;
    assert_int_equal(n - at, bytes);
    p.px = malloc(bytes);
    memcpy(p.px, d + at, bytes);
    free(d);
    return p;
}

/* Group setup: reads manifest.txt into g_files. Returns: 0, or fails every test. */
static int load_manifest(void **state)
{
    (void)state;
    char path[1024], line[512], file[256], kind[32];
    snprintf(path, sizeof path, "%s/manifest.txt", g_dir);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        fail_msg("no %s: run tests/data/make_images.py into that directory", path);
    for (g_nfiles = 0; fgets(line, sizeof line, f) != NULL;) {
        if (sscanf(line, "%255s %31s", file, kind) != 2)
            continue;
        assert_true(g_nfiles < MAX_FILES && strlen(file) < sizeof g_files[0].file);
        entry *e = &g_files[g_nfiles++];
        strcpy(e->file, file);
        if (strcmp(kind, "exact") == 0)
            e->cls = CLS_EXACT;
        else if (strcmp(kind, "tol1") == 0)
            e->cls = CLS_TOL1;
        else if (strcmp(kind, "corrupt") == 0)
            e->cls = CLS_CORRUPT;
        else
            fail_msg("manifest: unknown class \"%s\" for %s", kind, file);
    }
    fclose(f);
    return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* ---- decoding helpers ------------------------------------------------------------------- */

/* The scratch the codec gets: one growing buffer, like a worker's; `fail` makes it run dry. */
typedef struct scratch {
    void *p;
    size_t cap;
    int calls;
    bool fail;
} scratch;

static void *scratch_get(void *ctx, size_t bytes)
{
    scratch *s = ctx;
    s->calls++;
    if (s->fail)
        return NULL;
    if (bytes > s->cap) {
        free(s->p);
        s->p = malloc(bytes);
        s->cap = s->p ? bytes : 0;
    }
    return s->p;
}

typedef struct image {
    int w, h, c;
    uint8_t *px; /* malloc'ed, h * w * c, or NULL after a failure */
    sl_status status;
    char err[256];
} image;

static int channels(sl__color color)
{
    return color == SL__COLOR_GRAY ? 1 : 3;
}

/* Peeks, then decodes (the window roi, or all) into a buffer of exactly the announced size
 * followed by GUARD canary bytes, and checks the canary and the scratch contract. */
static image decode(const uint8_t *d, size_t n, sl__color color, unsigned flags, const sl__roi *roi)
{
    image im = {0};
    sl__image_info info;
    scratch s = {0};
    const sl__decode_mem mem = {scratch_get, &s, SIZE_MAX};
    im.status = sl__image_peek(d, n, &info, im.err, sizeof im.err);
    if (im.status != SL_OK)
        return im;
    im.w = roi ? roi->w : info.width;
    im.h = roi ? roi->h : info.height;
    im.c = channels(color);
    size_t bytes = roi && (roi->w < 1 || roi->h < 1) ? 0 : (size_t)im.w * im.h * im.c;
    im.px = malloc(bytes + GUARD);
    memset(im.px, GUARD_BYTE, bytes + GUARD);
    im.status = sl__image_decode(d, n, color, flags, roi, im.px, &mem, im.err, sizeof im.err);
    for (size_t i = bytes; i < bytes + GUARD; i++)
        assert_int_equal(im.px[i], GUARD_BYTE);
    assert_true(s.calls <= 1);
    free(s.p);
    if (im.status != SL_OK) {
        free(im.px);
        im.px = NULL;
    }
    return im;
}

static image decode_file(const char *name, sl__color color, const sl__roi *roi)
{
    size_t n;
    uint8_t *d = read_data(name, &n);
    image im = decode(d, n, color, 0, roi);
    free(d);
    return im;
}

static int max_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    int m = 0;
    for (size_t i = 0; i < n; i++) {
        int d = abs((int)a[i] - (int)b[i]);
        m = d > m ? d : m;
    }
    return m;
}

/* ---- against PIL ------------------------------------------------------------------------ */

/* Returns the max difference to the reference, or -1 (and prints why) when it cannot compare. */
static int compare_ref(const entry *e, sl__color color, const char *ref_suffix)
{
    char ref_name[256];
    snprintf(ref_name, sizeof ref_name, "%s%s", e->file, ref_suffix);
    pnm ref = load_pnm(ref_name);
    image im = decode_file(e->file, color, NULL);
    int m = -1;
    if (im.status != SL_OK)
        print_error("%s: decode failed: %s: %s\n", e->file, sl_status_name(im.status), im.err);
    else if (im.w != ref.w || im.h != ref.h || im.c != ref.c)
        print_error("%s: %dx%dx%d, PIL %dx%dx%d\n", e->file, im.w, im.h, im.c, ref.w, ref.h, ref.c);
    else
        m = max_diff(im.px, ref.px, (size_t)ref.w * ref.h * ref.c);
    free(im.px);
    free(ref.px);
    return m;
}

/* BGR must be the RGB decode with each pixel's bytes reversed, exactly. */
static bool bgr_is_reversed_rgb(const char *file)
{
    image rgb = decode_file(file, SL__COLOR_RGB, NULL),
          bgr = decode_file(file, SL__COLOR_BGR, NULL);
    bool ok = rgb.status == SL_OK && bgr.status == SL_OK;
    for (size_t i = 0; ok && i < (size_t)rgb.w * rgb.h; i++)
        ok = bgr.px[3 * i] == rgb.px[3 * i + 2] && bgr.px[3 * i + 1] == rgb.px[3 * i + 1] &&
             bgr.px[3 * i + 2] == rgb.px[3 * i];
    free(rgb.px);
    free(bgr.px);
    return ok;
}

static bool check_good(const entry *e)
{
    int tol = e->cls == CLS_EXACT ? 0 : 1;
    int rgb = compare_ref(e, SL__COLOR_RGB, ".rgb.ppm");
    int gray = compare_ref(e, SL__COLOR_GRAY, ".gray.pgm");
    bool bgr = bgr_is_reversed_rgb(e->file);
    bool ok = rgb >= 0 && rgb <= tol && gray >= 0 && gray <= tol && bgr;
    if (!ok)
        print_error("%s (%s): max diff RGB %d, GRAY %d (allowed %d)%s\n", e->file,
                    tol ? "tol1" : "exact", rgb, gray, tol, bgr ? "" : "; BGR != RGB reversed");
    return ok;
}

static bool check_corrupt(const entry *e)
{
    image im = decode_file(e->file, SL__COLOR_RGB, NULL);
    free(im.px);
    if (im.status == SL_ECORRUPT && im.err[0] != '\0')
        return true;
    print_error("%s: expected SL_ECORRUPT with a message, got %s \"%s\"\n", e->file,
                sl_status_name(im.status), im.err);
    return false;
}

static void test_against_pil(void **state)
{
    (void)state;
    int failed = 0, jpeg = 0, png = 0, corrupt = 0;
    for (int i = 0; i < g_nfiles; i++) {
        const entry *e = &g_files[i];
        if (e->cls == CLS_CORRUPT) {
            failed += !check_corrupt(e);
            corrupt++;
            continue;
        }
        failed += !check_good(e);
        jpeg += ends_with(e->file, ".jpg");
        png += ends_with(e->file, ".png");
    }
    print_message("test_codec: %d JPEG, %d PNG, %d corrupt files from %s\n", jpeg, png, corrupt,
                  g_dir);
    assert_int_equal(failed, 0);
    assert_true(jpeg > 0 && png > 0 && corrupt > 0); /* an empty manifest proves nothing */
}

/* peek's numbers agree with PIL's image size and the native channel counts. */
static void test_peek(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        sl__format format;
        int channels;
    } known[] = {
        {"jpeg_gray.jpg", SL__FMT_JPEG, 1},     {"jpeg_420_q90.jpg", SL__FMT_JPEG, 3},
        {"jpeg_cmyk.jpg", SL__FMT_JPEG, 4},     {"png_gray.png", SL__FMT_PNG, 1},
        {"png_gray_alpha.png", SL__FMT_PNG, 2}, {"png_rgb.png", SL__FMT_PNG, 3},
        {"png_palette.png", SL__FMT_PNG, 3},    {"png_rgba.png", SL__FMT_PNG, 4},
    };
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        size_t n;
        char err[256];
        sl__image_info info;
        uint8_t *d = read_data(known[k].file, &n);
        assert_int_equal(sl__image_peek(d, n, &info, err, sizeof err), SL_OK);
        assert_int_equal(info.format, known[k].format);
        assert_int_equal(info.channels, known[k].channels);
        free(d);
    }
    assert_string_equal(sl__format_name(SL__FMT_JPEG), "JPEG");
    assert_string_equal(sl__format_name(SL__FMT_PNG), "PNG");
}

/* ---- windows ---------------------------------------------------------------------------- */

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* Edges, corners, single pixels, odd offsets (never iMCU-aligned) and random windows. */
static int make_rois(int w, int h, uint32_t seed, sl__roi *r)
{
    int n = 0;
    r[n++] = (sl__roi){.x = 0, .y = 0, .w = w, .h = h};
    r[n++] = (sl__roi){.x = w - 1, .y = h - 1, .w = 1, .h = 1};
    r[n++] = (sl__roi){.x = 0, .y = h - 1, .w = w, .h = 1};
    r[n++] = (sl__roi){.x = w / 2, .y = 0, .w = w - w / 2, .h = h};
    r[n++] = (sl__roi){.x = w / 3, .y = h / 3, .w = (w + 2) / 3, .h = (h + 2) / 3};
    if (w > 2 && h > 2)
        r[n++] = (sl__roi){.x = 1, .y = 1, .w = w - 2, .h = h - 2};
    for (int i = 0; i < 12; i++) {
        int x = (int)(lcg(&seed) % (uint32_t)w), y = (int)(lcg(&seed) % (uint32_t)h);
        r[n++] = (sl__roi){.x = x,
                           .y = y,
                           .w = 1 + (int)(lcg(&seed) % (uint32_t)(w - x)),
                           .h = 1 + (int)(lcg(&seed) % (uint32_t)(h - y))};
    }
    return n;
}

static bool roi_matches(const uint8_t *d, size_t n, const image *full, sl__color color,
                        const sl__roi *r, const char *file)
{
    image win = decode(d, n, color, 0, r);
    bool ok = win.status == SL_OK;
    size_t row = (size_t)r->w * full->c;
    for (int y = 0; ok && y < r->h; y++)
        ok = memcmp(win.px + y * row, full->px + ((size_t)(r->y + y) * full->w + r->x) * full->c,
                    row) == 0;
    if (!ok)
        print_error("%s color %d roi x=%d y=%d w=%d h=%d: %s\n", file, (int)color, r->x, r->y, r->w,
                    r->h, win.status ? win.err : "differs from the crop of the full decode");
    free(win.px);
    if (!ok)
        return false;
    /* The same window with rows a full image row apart (stride), written in its place in a
     * full-size buffer: the window's bytes are the full decode's, every other byte untouched. */
    size_t bytes = (size_t)full->w * full->h * full->c, stride = (size_t)full->w * full->c;
    uint8_t *buf = malloc(bytes);
    memset(buf, GUARD_BYTE, bytes);
    sl__roi rs = *r;
    rs.stride = stride;
    scratch s = {0};
    char err[256];
    size_t at = ((size_t)r->y * full->w + r->x) * full->c;
    const sl__decode_mem mem = {scratch_get, &s, SIZE_MAX};
    ok = sl__image_decode(d, n, color, 0, &rs, buf + at, &mem, err, sizeof err) == SL_OK;
    for (size_t i = 0; ok && i < bytes; i++) {
        size_t y = i / stride, x = i % stride / full->c;
        bool inside = y >= (size_t)r->y && y < (size_t)(r->y + r->h) && x >= (size_t)r->x &&
                      x < (size_t)(r->x + r->w);
        ok = inside ? buf[i] == full->px[i] : buf[i] == GUARD_BYTE;
    }
    if (!ok)
        print_error("%s color %d roi x=%d y=%d w=%d h=%d with a stride: differs\n", file,
                    (int)color, r->x, r->y, r->w, r->h);
    free(s.p);
    free(buf);
    return ok;
}

/* Every good image (all JPEG subsamplings, progressive, CMYK; PNG of every kind, interlaced),
 * in every color: each window equals the crop of the full decode, byte for byte. */
static void test_roi_equals_crop(void **state)
{
    (void)state;
    int failed = 0, checked = 0;
    for (int i = 0; i < g_nfiles; i++) {
        if (g_files[i].cls == CLS_CORRUPT)
            continue;
        size_t n;
        uint8_t *d = read_data(g_files[i].file, &n);
        for (int c = SL__COLOR_RGB; c <= SL__COLOR_GRAY; c++) {
            image full = decode(d, n, (sl__color)c, 0, NULL);
            assert_int_equal(full.status, SL_OK);
            sl__roi rois[32];
            int nr = make_rois(full.w, full.h, 1234u + (uint32_t)i, rois);
            for (int k = 0; k < nr; k++, checked++)
                failed += !roi_matches(d, n, &full, (sl__color)c, &rois[k], g_files[i].file);
            free(full.px);
        }
        free(d);
    }
    print_message("test_codec: %d windows checked\n", checked);
    assert_int_equal(failed, 0);
}

static void test_roi_invalid(void **state)
{
    (void)state;
    size_t nj, np;
    uint8_t *jpg = read_data("jpeg_420_q90.jpg", &nj), *png = read_data("png_rgb.png", &np);
    sl__image_info ij, ip;
    char err[256];
    assert_int_equal(sl__image_peek(jpg, nj, &ij, err, sizeof err), SL_OK);
    assert_int_equal(sl__image_peek(png, np, &ip, err, sizeof err), SL_OK);
    int w = ij.width < ip.width ? ij.width : ip.width;
    int h = ij.height < ip.height ? ij.height : ip.height;
    const sl__roi bad[] = {
        {-1, 0, 4, 4, 0},       {0, -1, 4, 4, 0},
        {0, 0, 0, 4, 0},        {0, 0, 4, 0, 0},
        {0, 0, -4, 4, 0},       {w + 1000, 0, 1, 1, 0},
        {0, h + 1000, 1, 1, 0}, {1, 0, 65535, 1, 0},
        {0, 1, 1, 65535, 0},    {2147483600, 0, 100, 1, 0},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        image a = decode(jpg, nj, SL__COLOR_RGB, 0, &bad[k]);
        image b = decode(png, np, SL__COLOR_GRAY, 0, &bad[k]);
        assert_int_equal(a.status, SL_EINVAL);
        assert_int_equal(b.status, SL_EINVAL);
        assert_non_null(strstr(a.err, "region of interest"));
    }
    free(jpg);
    free(png);
}

/* ---- bad input -------------------------------------------------------------------------- */

static sl_status decode_bytes(const uint8_t *d, size_t n, char *err, size_t errlen)
{
    image im = decode(d, n, SL__COLOR_RGB, 0, NULL);
    free(im.px);
    snprintf(err, errlen, "%s", im.err);
    return im.status;
}

/* The first 60% of every good image: SL_ECORRUPT with a message (never a gray bottom half). */
static void test_truncated(void **state)
{
    (void)state;
    int failed = 0;
    char err[256];
    for (int i = 0; i < g_nfiles; i++) {
        if (g_files[i].cls == CLS_CORRUPT)
            continue;
        size_t n;
        uint8_t *d = read_data(g_files[i].file, &n);
        sl_status s = decode_bytes(d, n * 6 / 10, err, sizeof err);
        if (s != SL_ECORRUPT || err[0] == '\0') {
            print_error("%s cut to 60%%: %s \"%s\"\n", g_files[i].file, sl_status_name(s), err);
            failed++;
        }
        free(d);
    }
    assert_int_equal(failed, 0);
    /* libjpeg's own words reach the caller, first letter lowered */
    size_t n;
    uint8_t *d = read_data("jpeg_420_q90.jpg", &n);
    assert_int_equal(decode_bytes(d, n * 6 / 10, err, sizeof err), SL_ECORRUPT);
    assert_string_equal(err, "premature end of JPEG file");
    assert_int_equal(decode_bytes(d, n - 2, err, sizeof err), SL_ECORRUPT); /* no EOI */
    free(d);
}

static void test_garbage(void **state)
{
    (void)state;
    char err[256];
    const char *html = "<!DOCTYPE html><html>404</html>";
    assert_int_equal(decode_bytes((const uint8_t *)html, strlen(html), err, sizeof err),
                     SL_ECORRUPT);
    assert_string_equal(err, "not a JPEG or PNG file (starts with 3c 21 44 4f)");
    assert_int_equal(decode_bytes((const uint8_t *)"", 0, err, sizeof err), SL_ECORRUPT);
    assert_int_equal(decode_bytes((const uint8_t *)"\xff", 1, err, sizeof err), SL_ECORRUPT);
    assert_string_equal(err, "not a JPEG or PNG file (starts with ff)");
    assert_int_equal(decode_bytes((const uint8_t *)"GIF89a\1\0\1\0\0\0\0", 13, err, sizeof err),
                     SL_EUNSUPPORTED);
    assert_non_null(strstr(err, "GIF"));

    uint8_t junk[4096];
    uint32_t seed = 7;
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)lcg(&seed);
    memcpy(junk, "\xff\xd8\xff", 3); /* JPEG magic, then noise */
    assert_int_equal(decode_bytes(junk, sizeof junk, err, sizeof err), SL_ECORRUPT);
    assert_true(err[0] != '\0');
    memcpy(junk, "\x89PNG\r\n\x1a\n", 8); /* PNG signature, then noise */
    assert_int_equal(decode_bytes(junk, sizeof junk, err, sizeof err), SL_ECORRUPT);
    assert_non_null(strstr(err, "PNG: "));
}

static size_t put_png_chunk(uint8_t *out, const char *tag, const uint8_t *data, uint32_t len)
{
    uint8_t be[4] = {(uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len};
    memcpy(out, be, 4);
    memcpy(out + 4, tag, 4);
    if (len > 0)
        memcpy(out + 8, data, len);
    uint32_t crc = (uint32_t)crc32(0, out + 4, 4 + len);
    uint8_t c[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16), (uint8_t)(crc >> 8), (uint8_t)crc};
    memcpy(out + 8 + len, c, 4);
    return 12 + len;
}

static sl_status peek_png_header(uint32_t w, uint32_t h, char *err, size_t errlen)
{
    uint8_t png[64], ihdr[13] = {(uint8_t)(w >> 24),
                                 (uint8_t)(w >> 16),
                                 (uint8_t)(w >> 8),
                                 (uint8_t)w,
                                 (uint8_t)(h >> 24),
                                 (uint8_t)(h >> 16),
                                 (uint8_t)(h >> 8),
                                 (uint8_t)h,
                                 8,
                                 2,
                                 0,
                                 0,
                                 0};
    memcpy(png, "\x89PNG\r\n\x1a\n", 8);
    size_t n = 8 + put_png_chunk(png + 8, "IHDR", ihdr, sizeof ihdr);
    sl__image_info info;
    return sl__image_peek(png, n, &info, err, errlen);
}

/* A 30-byte header cannot ask for gigabytes: refused by peek, before any allocation. */
static void test_size_limits(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(peek_png_header(100000, 100000, err, sizeof err), SL_EUNSUPPORTED);
    assert_int_equal(peek_png_header(60000, 60000, err, sizeof err), SL_EUNSUPPORTED);
    assert_non_null(strstr(err, "over the limit"));
    assert_int_equal(peek_png_header(16384, 16384, err, sizeof err), SL_OK);

    size_t n;
    uint8_t *d = read_data("jpeg_420_q90.jpg", &n);
    for (size_t i = 0; i + 9 < n; i++) {
        if (d[i] == 0xff && d[i + 1] == 0xc0) { /* SOF0: length(2) precision(1) h(2) w(2) */
            d[i + 5] = d[i + 7] = 0xff;
            d[i + 6] = d[i + 8] = 0xdc; /* 65500 x 65500 */
            break;
        }
    }
    sl__image_info info;
    assert_int_equal(sl__image_peek(d, n, &info, err, sizeof err), SL_EUNSUPPORTED);
    assert_non_null(strstr(err, "65500x65500"));
    free(d);
}

/* png_rgb.png with `count` copies of one ancillary chunk after IHDR (CRCs right). */
static uint8_t *png_with_chunks(const char *tag, const uint8_t *data, uint32_t len, int count,
                                size_t *n)
{
    size_t good_n;
    uint8_t *good = read_data("png_rgb.png", &good_n);
    uint8_t *png = malloc(good_n + (size_t)count * (12 + len));
    memcpy(png, good, 33); /* signature and IHDR */
    *n = 33;
    for (int i = 0; i < count; i++)
        *n += put_png_chunk(png + *n, tag, data, len);
    memcpy(png + *n, good + 33, good_n - 33);
    *n += good_n - 33;
    free(good);
    return png;
}

/* Metadata past libspng's limits is refused with a message naming them all (it used to name
 * only the 16 MiB a chunk, also for 1,001 small text chunks); up to them it decodes. */
static void test_metadata_limits(void **state)
{
    (void)state;
    char err[256];
    size_t n;
    for (int count = 1000; count <= 1001; count++) {
        uint8_t *png = png_with_chunks("tEXt", (const uint8_t *)"key\0value", 9, count, &n);
        assert_int_equal(decode_bytes(png, n, err, sizeof err),
                         count <= 1000 ? SL_OK : SL_EUNSUPPORTED);
        if (count > 1000)
            assert_string_equal(err, "PNG: metadata over the limits (16 MiB a chunk, also once "
                                     "inflated; 64 MiB and 1000 chunks in all)");
        free(png);
    }
    /* a zTXt of 32 MiB of zeros (32 KiB compressed) */
    uLong raw = 32u << 20;
    uint8_t *zeros = calloc(raw, 1), *z = malloc(compressBound(raw) + 16);
    uLongf zn = compressBound(raw);
    memcpy(z, "Comment\0\0", 9);
    assert_int_equal(compress(z + 9, &zn, zeros, raw), Z_OK);
    uint8_t *png = png_with_chunks("zTXt", z, (uint32_t)zn + 9, 1, &n);
    assert_int_equal(decode_bytes(png, n, err, sizeof err), SL_EUNSUPPORTED);
    assert_non_null(strstr(err, "16 MiB a chunk, also once inflated"));
    free(png);
    free(z);
    free(zeros);
}

/* A 16-bit PNG, one row of `w` pixels of `ch` channels (0: gray, 2: RGB color type). */
static size_t make_png16(uint8_t *png, const uint16_t *v, int w, int color_type, int ch)
{
    uint8_t raw[1 + 64 * 3 * 2], z[512];
    uLongf zn = sizeof z;
    raw[0] = 0; /* filter: none */
    for (int i = 0; i < w * ch; i++) {
        raw[1 + 2 * i] = (uint8_t)(v[i] >> 8);
        raw[2 + 2 * i] = (uint8_t)v[i];
    }
    assert_int_equal(compress(z, &zn, raw, (uLong)(1 + 2 * w * ch)), Z_OK);
    uint8_t ihdr[13] = {0, 0, 0, (uint8_t)w, 0, 0, 0, 1, 16, (uint8_t)color_type, 0, 0, 0};
    memcpy(png, "\x89PNG\r\n\x1a\n", 8);
    size_t n = 8 + put_png_chunk(png + 8, "IHDR", ihdr, sizeof ihdr);
    n += put_png_chunk(png + n, "IDAT", z, (uint32_t)zn);
    return n + put_png_chunk(png + n, "IEND", NULL, 0);
}

/* 16-bit samples become round(v * 255 / 65535), by hand-computed values around the rounding
 * edges (Pillow's v >> 8 would give 0 for 129 and 254 for 65407). */
static void test_png16_rounding(void **state)
{
    (void)state;
    static const uint16_t v[] = {0, 128, 129, 385, 386, 32767, 32768, 65406, 65407, 65535};
    static const uint8_t want[] = {0, 0, 1, 1, 2, 127, 128, 254, 255, 255};
    enum { W = sizeof v / sizeof v[0] };
    uint8_t png[1024];
    size_t n = make_png16(png, v, W, 0, 1);
    image g = decode(png, n, SL__COLOR_GRAY, 0, NULL);
    assert_int_equal(g.status, SL_OK);
    assert_memory_equal(g.px, want, W);
    free(g.px);

    uint16_t rgb[3 * W]; /* R = v, G = v reversed, B = v */
    for (int i = 0; i < W; i++)
        rgb[3 * i] = rgb[3 * i + 2] = v[i], rgb[3 * i + 1] = v[W - 1 - i];
    n = make_png16(png, rgb, W, 2, 3);
    image c = decode(png, n, SL__COLOR_RGB, 0, NULL);
    assert_int_equal(c.status, SL_OK);
    for (int i = 0; i < W; i++) {
        assert_int_equal(c.px[3 * i], want[i]);
        assert_int_equal(c.px[3 * i + 1], want[W - 1 - i]);
        assert_int_equal(c.px[3 * i + 2], want[i]);
    }
    free(c.px);
}

/* ---- options and resources -------------------------------------------------------------- */

/* Each file needs scratch on some path (CMYK rows, a cropped window, 16-bit or non-RGB PNG
 * rows): with none to be had, SL_ENOMEM, never a crash. */
static void test_scratch_enomem(void **state)
{
    (void)state;
    static const char *const files[] = {"jpeg_cmyk.jpg", "jpeg_420_q90.jpg", "png_rgb16.png",
                                        "png_interlaced_gray.png", "png_palette.png"};
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        size_t n;
        char err[256];
        sl__image_info info;
        uint8_t *d = read_data(files[k], &n);
        assert_int_equal(sl__image_peek(d, n, &info, err, sizeof err), SL_OK);
        sl__roi r = {.x = 1, .y = 1, .w = info.width - 2, .h = info.height - 2};
        uint8_t *out = malloc((size_t)info.width * info.height * 3);
        scratch s = {.fail = true};
        const sl__decode_mem mem = {scratch_get, &s, SIZE_MAX};
        assert_int_equal(sl__image_decode(d, n, SL__COLOR_GRAY, 0, &r, out, &mem, err, sizeof err),
                         SL_ENOMEM);
        assert_int_equal(s.calls, 1);
        free(out);
        free(d);
    }
}

/* use_fast_idct reaches libjpeg: the output changes, a little. */
static void test_fast_idct(void **state)
{
    (void)state;
    int changed = 0;
    for (int i = 0; i < g_nfiles; i++) {
        if (g_files[i].cls == CLS_CORRUPT || !ends_with(g_files[i].file, ".jpg"))
            continue;
        size_t n;
        uint8_t *d = read_data(g_files[i].file, &n);
        image a = decode(d, n, SL__COLOR_RGB, 0, NULL);
        image b = decode(d, n, SL__COLOR_RGB, SL__DECODE_FAST_IDCT, NULL);
        assert_int_equal(b.status, SL_OK);
        size_t bytes = (size_t)a.w * a.h * 3;
        int m = max_diff(a.px, b.px, bytes);
        assert_true(m <= 32);
        changed += m > 0;
        free(a.px);
        free(b.px);
        free(d);
    }
    assert_true(changed > 0);
}

int main(int argc, char **argv)
{
    g_dir = argc > 1 ? argv[1] : getenv("SLUICE_TEST_DATA");
    if (g_dir == NULL || g_dir[0] == '\0') {
        fprintf(stderr, "test_codec: give the test-data directory (make_images.py output) as "
                        "argv[1] or SLUICE_TEST_DATA\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_pil),     cmocka_unit_test(test_peek),
        cmocka_unit_test(test_roi_equals_crop), cmocka_unit_test(test_roi_invalid),
        cmocka_unit_test(test_truncated),       cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_size_limits),     cmocka_unit_test(test_metadata_limits),
        cmocka_unit_test(test_scratch_enomem),  cmocka_unit_test(test_png16_rounding),
        cmocka_unit_test(test_fast_idct),
    };
    return cmocka_run_group_tests(tests, load_manifest, NULL);
}
