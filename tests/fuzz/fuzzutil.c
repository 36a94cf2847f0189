/* tests/fuzz/fuzzutil.c: the fuzz targets' shared helpers (fuzzutil.h), public C API only.
 *
 * Exports fz_fail, fz_check, fz_pipeline, fz_feed_bytes, fz_feed_floats, fz_sample_equal,
 * fz_image_too_large and fz_run. Invariant: no state; every helper either succeeds or ends the
 * process through fz_fail.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzzutil.h"

void fz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sluice fuzz finding: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

void fz_check(sl_status s, const char *what)
{
    if (s != SL_OK)
        fz_fail("harness call %s failed: %s: %s", what, sl_status_name(s), sl_last_error());
}

sl_pipeline *fz_pipeline(const sl_graph *g, int fuse_samples)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 1;
    o.num_threads = 0; /* the calling thread runs the tasks: no thread start, join or hand-off */
    o.prefetch_queue_depth = 1;
    o.seed = 1;
    o.fuse_samples = fuse_samples;
    sl_pipeline *p = NULL;
    fz_check(sl_pipeline_create(g, &o, &p), "sl_pipeline_create");
    if (sl_pipeline_build(p) != SL_OK)
        fz_fail("the harness's pipeline does not build: %s", sl_pipeline_error(p));
    return p;
}

static void feed(sl_pipeline *p, const char *name, sl_dtype dtype, int ndim, int64_t extent,
                 const void *data)
{
    const void *samples[1] = {data};
    sl_feed f = {
        .num_samples = 1, .ndim = ndim, .dtype = dtype, .shapes = &extent, .data = samples};
    if (sl_pipeline_feed_input(p, name, &f) != SL_OK)
        fz_fail("feeding external_source \"%s\" failed: %s", name, sl_pipeline_error(p));
}

void fz_feed_bytes(sl_pipeline *p, const char *name, const uint8_t *data, size_t n)
{
    feed(p, name, SL_DTYPE_UINT8, 1, (int64_t)n, data);
}

void fz_feed_floats(sl_pipeline *p, const char *name, const float *v, int n)
{
    feed(p, name, SL_DTYPE_FLOAT32, n > 0, n, v);
}

static void shape_text(const sl_batch *b, int i, char *out, size_t cap)
{
    const int64_t *s = sl_batch_shape(b, i);
    size_t k = 0;
    out[0] = '\0';
    for (int d = 0; s && d < sl_batch_ndim(b) && k < cap; d++)
        k += (size_t)snprintf(out + k, cap - k, "%s%lld", d ? "x" : "", (long long)s[d]);
}

bool fz_sample_equal(const sl_batch *a, int i, const sl_batch *b, int j, const char **why)
{
    static char text[160];
    char sa[64], sb[64];
    shape_text(a, i, sa, sizeof sa);
    shape_text(b, j, sb, sizeof sb);
    const char *reason = NULL;
    if (sl_batch_dtype(a) != sl_batch_dtype(b) || sl_batch_ndim(a) != sl_batch_ndim(b) ||
        strcmp(sa, sb) != 0) {
        snprintf(text, sizeof text, "%s %s vs %s %s", sl_dtype_name(sl_batch_dtype(a)), sa,
                 sl_dtype_name(sl_batch_dtype(b)), sb);
        reason = text;
    } else {
        size_t n = (size_t)sl_batch_sample_numel(a, i) * sl_dtype_size(sl_batch_dtype(a));
        const uint8_t *x = sl_batch_sample_data(a, i), *y = sl_batch_sample_data(b, j);
        /* memcmp first: the byte loop, instrumented for libFuzzer (a comparison callback per
         * byte), took 5 % of the roi target's time; it only runs to name the first difference */
        bool differ = n && memcmp(x, y, n) != 0;
        for (size_t k = 0; differ && k < n && !reason; k++) {
            if (x[k] != y[k]) {
                snprintf(text, sizeof text, "shape %s, byte %zu of %zu: %u vs %u", sa, k, n, x[k],
                         y[k]);
                reason = text;
            }
        }
    }
    if (why)
        *why = reason;
    return reason == NULL;
}

/* Big-endian 16 and 32-bit reads. */
static uint32_t be16(const uint8_t *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t be32(const uint8_t *p)
{
    return be16(p) << 16 | be16(p + 2);
}

/* w * h > max, without overflow (each of w, h < 2^32). */
static bool over(uint64_t w, uint64_t h, int64_t max)
{
    return w > (uint64_t)max || h > (uint64_t)max || w * h > (uint64_t)max;
}

bool fz_image_too_large(const uint8_t *d, size_t n, int64_t max_pixels)
{
    static const uint8_t png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n >= 24 && memcmp(d, png, 8) == 0)
        return over(be32(d + 16), be32(d + 20), max_pixels);
    if (n < 3 || d[0] != 0xff || d[1] != 0xd8) /* sluice decodes ff d8 ff... as a JPEG */
        return false;
    /* The markers up to the first SOFn, found as libjpeg's next_marker finds them (bytes up to
     * an ff skipped, fill ff bytes skipped, ff 00 is no marker), segments skipped by length. */
    for (size_t i = 2;;) {
        while (i < n && d[i] != 0xff)
            i++;
        while (i < n && d[i] == 0xff)
            i++;
        if (i >= n)
            return false;
        uint8_t m = d[i++];
        if (m == 0x00 || m == 0x01 || m == 0xd8 || (m >= 0xd0 && m <= 0xd7))
            continue; /* not a marker, or one without a segment */
        if (m == 0xda || m == 0xd9)
            return false; /* a scan or the end before any frame header: the decode fails */
        if ((m & 0xf0) == 0xc0 && m != 0xc4 && m != 0xc8 && m != 0xcc) /* SOFn */
            return i + 7 <= n && over(be16(d + i + 5), be16(d + i + 3), max_pixels);
        if (i + 2 > n)
            return false;
        i += be16(d + i);
    }
}

sl_status fz_run(sl_pipeline *p)
{
    sl_status s = sl_pipeline_run(p);
    if (s == SL_OK)
        return s;
    const char *msg = sl_pipeline_error(p);
    if (!msg || !*msg)
        fz_fail("run failed with %s and no message", sl_status_name(s));
    if (s == SL_EINTERNAL || s == SL_EMISUSE)
        fz_fail("run failed with %s (a bug, not bad input): %s", sl_status_name(s), msg);
    return s;
}

void fz_mkdtemp(char *dir, size_t cap, const char *name)
{
    const char *base = getenv("FUZZ_TMPDIR");
    if (!base || !*base)
        base = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
    if ((size_t)snprintf(dir, cap, "%s/%s", base, name) >= cap)
        fz_fail("temporary folder name too long: %s/%s", base, name);
    if (!mkdtemp(dir))
        fz_fail("mkdtemp %s: %s", dir, strerror(errno));
}
