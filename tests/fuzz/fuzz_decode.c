/* tests/fuzz/fuzz_decode.c: fuzz target "decode": decoders.image over arbitrary bytes, every
 * output type, through external_source as a user's program feeds it (docs/fuzzing.md).
 *
 * Input: byte 0 selects, the rest is the encoded image (JPEG, PNG or anything else; possibly
 * empty: an empty sample, issue 15's finding 2). Byte 0:
 *   bits 0-1  output_type: 0 RGB, 1 BGR, 2 GRAY, 3 RGB; BGR and GRAY are decoded as RGB too
 *             and compared with it
 *   bit 2     use_fast_idct
 *   bits 3-7  unused (any value: the same run)
 * An empty input is an empty sample with byte 0 = 0.
 *
 * Findings: a sanitizer report; a run that fails without a message or with SL_EINTERNAL or
 * SL_EMISUSE; a decoded sample that is not HWC uint8 of 1 or 3 channels, at least 1 x 1 pixels;
 * a BGR decode that is not the RGB decode with its channels reversed; a GRAY decode of a PNG
 * that is not the documented luma (19595 R + 38470 G + 7471 B + 32768) >> 16 of its RGB decode
 * (JPEGs are not compared: YCbCr ones give their Y channel). Images announcing more
 * than FZ_MAX_PIXELS are skipped. The pipelines (one per byte-0 choice, built on first use) live
 * for the whole process, as a training job's do: a failed iteration must leave them usable.
 *
 * Exports LLVMFuzzerTestOneInput.
 */
#include <stdio.h>
#include <string.h>

#include "fuzzutil.h"

static const char *const type_names[] = {"RGB", "BGR", "GRAY", "RGB"};

/* external_source "in" -> decoders.image "dec" (output 0); for BGR and GRAY also "rgb"
 * (output 1). */
static sl_pipeline *make(int type, bool fast)
{
    sl_graph *g;
    fz_check(sl_graph_create(&g), "sl_graph_create");
    fz_check(sl_graph_add(g, "external_source", "in", NULL), "add in");
    fz_check(sl_graph_add(g, "decoders.image", "dec", NULL), "add dec");
    fz_check(sl_graph_input(g, "dec", "in"), "input dec");
    fz_check(sl_graph_arg_str(g, "dec", "output_type", type_names[type]), "output_type");
    fz_check(sl_graph_arg_bool(g, "dec", "use_fast_idct", fast), "use_fast_idct");
    fz_check(sl_graph_output(g, "dec"), "output dec");
    if (type == 1 || type == 2) {
        fz_check(sl_graph_add(g, "decoders.image", "rgb", NULL), "add rgb");
        fz_check(sl_graph_input(g, "rgb", "in"), "input rgb");
        fz_check(sl_graph_arg_bool(g, "rgb", "use_fast_idct", fast), "use_fast_idct");
        fz_check(sl_graph_output(g, "rgb"), "output rgb");
    }
    sl_pipeline *p = fz_pipeline(g, 1);
    sl_graph_destroy(g);
    return p;
}

static void check_image(const sl_batch *b, int channels, size_t n)
{
    const int64_t *s = sl_batch_shape(b, 0);
    if (sl_batch_size(b) != 1 || sl_batch_ndim(b) != 3 || sl_batch_dtype(b) != SL_DTYPE_UINT8 ||
        strcmp(sl_batch_layout(b), "HWC") != 0)
        fz_fail("decoders.image output: %d samples, %d dims, %s, layout \"%s\"", sl_batch_size(b),
                sl_batch_ndim(b), sl_dtype_name(sl_batch_dtype(b)), sl_batch_layout(b));
    if (s[0] < 1 || s[1] < 1 || s[2] != channels)
        fz_fail("decoders.image output shape %lldx%lldx%lld from %zu bytes (want C = %d)",
                (long long)s[0], (long long)s[1], (long long)s[2], n, channels);
}

/* BGR must be the RGB decode with each pixel's channels reversed. */
static void check_bgr(const sl_batch *bgr, const sl_batch *rgb)
{
    const int64_t *s = sl_batch_shape(bgr, 0), *t = sl_batch_shape(rgb, 0);
    if (s[0] != t[0] || s[1] != t[1] || s[2] != t[2])
        fz_fail("BGR decode %lldx%lld, RGB decode %lldx%lld", (long long)s[1], (long long)s[0],
                (long long)t[1], (long long)t[0]);
    const uint8_t *x = sl_batch_sample_data(bgr, 0), *y = sl_batch_sample_data(rgb, 0);
    for (int64_t k = 0; k < s[0] * s[1]; k++)
        if (x[3 * k] != y[3 * k + 2] || x[3 * k + 1] != y[3 * k + 1] || x[3 * k + 2] != y[3 * k])
            fz_fail("BGR decode is not RGB reversed at pixel (%lld, %lld)", (long long)(k % s[1]),
                    (long long)(k / s[1]));
}

/* A PNG's GRAY decode must be the luma of its RGB decode (a gray PNG: the gray value itself,
 * which the formula gives back). */
static void check_gray(const sl_batch *gray, const sl_batch *rgb)
{
    const int64_t *s = sl_batch_shape(gray, 0), *t = sl_batch_shape(rgb, 0);
    if (s[0] != t[0] || s[1] != t[1])
        fz_fail("GRAY decode %lldx%lld, RGB decode %lldx%lld", (long long)s[1], (long long)s[0],
                (long long)t[1], (long long)t[0]);
    const uint8_t *g = sl_batch_sample_data(gray, 0), *c = sl_batch_sample_data(rgb, 0);
    for (int64_t k = 0; k < s[0] * s[1]; k++) {
        uint32_t luma =
            (19595u * c[3 * k] + 38470u * c[3 * k + 1] + 7471u * c[3 * k + 2] + 32768u) >> 16;
        if (g[k] != luma)
            fz_fail("PNG: GRAY %u at pixel (%lld, %lld), the luma of RGB (%u, %u, %u) is %u", g[k],
                    (long long)(k % s[1]), (long long)(k / s[1]), c[3 * k], c[3 * k + 1],
                    c[3 * k + 2], luma);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sl_pipeline *pipes[4][2];
    unsigned sel = size ? data[0] : 0;
    const uint8_t *img = size ? data + 1 : data;
    size_t n = size ? size - 1 : 0;
    if (fz_image_too_large(img, n, FZ_MAX_PIXELS))
        return 0;
    int type = (int)(sel & 3);
    bool fast = (sel & 4) != 0;
    if (!pipes[type][fast])
        pipes[type][fast] = make(type, fast);
    sl_pipeline *p = pipes[type][fast];
    fz_feed_bytes(p, "in", img, n);
    if (fz_run(p) != SL_OK)
        return 0;
    check_image(sl_pipeline_output(p, 0), type == 2 ? 1 : 3, n);
    if (type == 1 || type == 2)
        check_image(sl_pipeline_output(p, 1), 3, n);
    if (type == 1)
        check_bgr(sl_pipeline_output(p, 0), sl_pipeline_output(p, 1));
    if (type == 2 && n >= 8 && memcmp(img, "\x89PNG\r\n\x1a\n", 8) == 0)
        check_gray(sl_pipeline_output(p, 0), sl_pipeline_output(p, 1));
    return 0;
}
