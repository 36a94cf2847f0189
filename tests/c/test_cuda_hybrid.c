/* tests/c/test_cuda_hybrid.c: the hybrid JPEG decoder (decoders.image on "mixed": entropy
 * decoding on the CPU, the rest in hybrid.cu's kernels) against the CPU decoder and PIL.
 *
 * Runs on the device, or emulated on the host (the .emulated ctest entry), never skipped
 * silently (gpuutil.h). Checks, with tolerance 0: every JPEG variant of tests/data/make_images.py
 * that the kernels decode (4:4:4, 4:2:2, 4:2:0, 4:4:0, 4:1:1, odd and tiny sizes, gray,
 * progressive color and gray, restart intervals, optimized tables, qualities 10..100) gives the
 * CPU pipeline's bytes for RGB, BGR and GRAY output, and PIL's RGB (the .rgb.ppm references);
 * none of them falls back (so the kernels did the work); what the kernels cannot do — a CMYK
 * JPEG, a PNG, a progressive file whose later scans are missing (libjpeg smooths its blocks)
 * — is decoded on the CPU, counted as fallbacks in the node's statistics, with the same bytes;
 * hybrid=false decodes everything on the CPU without counting; a truncated file fails its
 * iteration naming the file, as on "cpu"; decoders.image_random_crop on "mixed" gives the CPU's
 * windows (the kernels decode the window; with `size` the CPU decodes and resamples, counted):
 * windows at the edges, bands and whole images on every variant, and a file truncated below
 * its window fails as on "cpu" while it is not known whole.
 * Device entropy decoding (hybrid.h): from the second epoch on, every single-scan variant is
 * entropy-decoded on the device (counted: sl__decoder_device_huff_samples, exactly once per
 * single-scan sample after the first epoch, never a progressive one), whole images and
 * windows, RGB, BGR and GRAY, with the CPU decoder's bytes; files jpeg_huff.c gives up on (fill
 * bytes before a stuffed zero) never take that path and keep the
 * CPU's pixels; a file changed under the same name and size after it was decoded cleanly (so
 * the device decode gives up: a fill byte before a stuffed zero, with and without restart
 * intervals, or a restart marker renumbered) fails its iteration with an internal error naming
 * the file. The restart-interval variants go through the decode by intervals (more than one
 * interval) or the chunked decode (jpeg_restart_over_420.jpg: one). The
 * ctest entry test_cuda_hybrid.emulated_off runs all of it with SLUICE_HYBRID_DEVICE_HUFF=0,
 * where nothing is counted.
 * Data: SLUICE_TEST_DATA (make_images.py).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuutil.h"
#include "ops/decoders/codec.h"
#include "ops/decoders/decoder.h"
#include "testutil.h"

/* The variants the kernels decode exactly (no fallback expected). */
static const char *const variants[] = {
    "jpeg_444_q90.jpg",
    "jpeg_444_odd_131x97.jpg",
    "jpeg_422_q90.jpg",
    "jpeg_422_odd_97x131.jpg",
    "jpeg_420_q90.jpg",
    "jpeg_420_odd_97x131.jpg",
    "jpeg_420_odd_301x67.jpg",
    "jpeg_420_tiny_13x7.jpg",
    "jpeg_440_q90.jpg",
    "jpeg_440_odd_101x75.jpg",
    "jpeg_411_q90.jpg",
    "jpeg_411_odd_75x101.jpg",
    "jpeg_progressive_420.jpg",
    "jpeg_progressive_444_odd.jpg",
    "jpeg_gray.jpg",
    "jpeg_gray_progressive_odd.jpg",
    "jpeg_restart_rows_420.jpg",
    "jpeg_restart_mcu_422.jpg",
    "jpeg_restart_gray.jpg",
    "jpeg_restart_5mcu_420.jpg",
    "jpeg_restart_gray_1x4_odd_70x45.jpg",
    "jpeg_restart_over_420.jpg",
    "jpeg_optimized_420.jpg",
    "jpeg_q10_420.jpg",
    "jpeg_q50_422.jpg",
    "jpeg_q75_420.jpg",
    "jpeg_q100_444.jpg",
};
#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))
/* The progressive ones among them (the rest are single-scan). */
#define NPROGRESSIVE 3
#define NSINGLE (NVARIANTS - NPROGRESSIVE)

static char spec[16384];

/* reader (files in order, from root) -> decoders.image "dec" on $MIX; outputs: images. */
static const char *files_spec(const char *root, const char *const *files, int n, int batch,
                              const char *type, const char *extra)
{
    char list[8192];
    size_t at = 0;
    for (int k = 0; k < n; k++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s\"%s\"", k ? ", " : "", files[k]);
    assert_true(at < sizeof list);
    int len = snprintf(spec, sizeof spec,
                       "{\"pipeline\": {\"batch_size\": %d, \"num_threads\": 2, \"seed\": 5},"
                       " \"nodes\": ["
                       "  {\"name\": \"reader\", \"op\": \"readers.file\", \"args\": "
                       "{\"file_root\": \"%s\", \"files\": [%s]}},"
                       "  {\"name\": \"dec\", \"op\": \"decoders.image\", \"device\": \"$MIX\","
                       "   \"inputs\": [\"reader:0\"], \"args\": {\"output_type\": \"%s\"%s}}],"
                       " \"outputs\": [\"dec\"]}",
                       batch, root, list, type, extra);
    assert_true(len > 0 && (size_t)len < sizeof spec);
    return spec;
}

/* The node's fallbacks after `iterations` runs of the gpu pipeline of spec s; *done: the
 * iterations the node completed (prefetching may have run more than were consumed). */
static int64_t fallbacks_done(const char *s, int iterations, int64_t *done)
{
    sl_pipeline *p = tu_gpu_build(s, true);
    for (int it = 0; it < iterations; it++)
        if (sl_pipeline_run(p) != SL_OK)
            fail_msg("run %d: %s", it, sl_pipeline_error(p));
    int64_t n = -1;
    for (int i = 0; i < sl_pipeline_num_nodes(p); i++) {
        sl_node_stats st;
        assert_int_equal(sl_pipeline_node_stats(p, i, &st), SL_OK);
        if (strcmp(st.name, "dec") == 0) {
            assert_string_equal(st.device, "mixed");
            n = st.fallbacks;
            *done = st.iterations;
        }
    }
    sl_pipeline_destroy(p);
    assert_true(*done >= iterations);
    return n;
}

static int64_t fallbacks_after(const char *s, int iterations)
{
    int64_t done;
    return fallbacks_done(s, iterations, &done);
}

static void test_variants_equal_cpu(void **state)
{
    (void)state;
    const char *root = tu_env_dir("SLUICE_TEST_DATA");
    static const char *const types[] = {"RGB", "BGR", "GRAY"};
    for (int t = 0; t < 3; t++) {
        /* batch 5 over 24 files: 5 iterations cover them all and wrap around */
        tu_diff d = tu_gpu_compare(files_spec(root, variants, NVARIANTS, 5, types[t], ""), 5, 0);
        assert_true(d.elements > 0);
    }
    /* every sample went through the kernels */
    assert_int_equal(
        fallbacks_after(files_spec(root, variants, NVARIANTS, NVARIANTS, "RGB", ""), 2), 0);
    assert_int_equal(
        fallbacks_after(files_spec(root, variants, NVARIANTS, NVARIANTS, "GRAY", ""), 1), 0);
}

/* P6 / P5 file: the pixels after the header (malloc'ed), its size in *w, *h, *c. */
static unsigned char *read_pnm(const char *path, int *w, int *h, int *c)
{
    size_t n = 0;
    unsigned char *buf = tu_read_file(path, &n);
    assert_non_null(buf);
    int maxval, used = 0;
    char magic[3] = {0};
    assert_int_equal(sscanf((const char *)buf, "%2s %d %d %d%n", magic, w, h, &maxval, &used), 4);
    assert_int_equal(maxval, 255);
    *c = strcmp(magic, "P6") == 0 ? 3 : 1;
    size_t bytes = (size_t)*w * (size_t)*h * (size_t)*c;
    assert_true((size_t)used + 1 + bytes <= n);
    unsigned char *px = malloc(bytes);
    memcpy(px, buf + used + 1, bytes);
    free(buf);
    return px;
}

/* The GPU pipeline's RGB and GRAY against PIL's (make_images.py's .rgb.ppm / .gray.pgm). */
static void test_variants_equal_pil(void **state)
{
    (void)state;
    const char *root = tu_env_dir("SLUICE_TEST_DATA");
    static const char *const types[] = {"RGB", "GRAY"};
    static const char *const ext[] = {"rgb.ppm", "gray.pgm"};
    for (int t = 0; t < 2; t++) {
        char *gs =
            tu_gpu_spec(files_spec(root, variants, NVARIANTS, NVARIANTS, types[t], ""), true);
        sl_pipeline *p = tu_gpu_build(gs, true);
        free(gs);
        if (sl_pipeline_run(p) != SL_OK)
            fail_msg("run: %s", sl_pipeline_error(p));
        const sl_batch *b = sl_pipeline_output(p, 0);
        unsigned char *all = tu_batch_to_host(b);
        size_t off = 0;
        for (int i = 0; i < NVARIANTS; i++) {
            char path[4096];
            int w, h, c;
            snprintf(path, sizeof path, "%s/%s.%s", root, variants[i], ext[t]);
            unsigned char *ref = read_pnm(path, &w, &h, &c);
            const int64_t *shape = sl_batch_shape(b, i);
            assert_int_equal(shape[0], h);
            assert_int_equal(shape[1], w);
            assert_int_equal(shape[2], c);
            size_t bytes = (size_t)w * (size_t)h * (size_t)c;
            if (memcmp(all + off, ref, bytes) != 0)
                fail_msg("%s (%s): differs from PIL", variants[i], types[t]);
            off += bytes;
            free(ref);
        }
        free(all);
        sl_pipeline_destroy(p);
    }
}

/* Writes the first scans of a progressive file, then EOI: libjpeg decodes it, smoothing the
 * blocks whose coefficients are missing. */
static void write_incomplete(const char *src, const char *dst, int scans)
{
    size_t n = 0;
    unsigned char *buf = tu_read_file(src, &n);
    assert_non_null(buf);
    size_t cut = 0;
    int seen = 0;
    for (size_t k = 2; k + 1 < n; k++) { /* FF DA is a marker: entropy data stuffs FF as FF 00 */
        if (buf[k] == 0xff && buf[k + 1] == 0xda && ++seen == scans + 1) {
            cut = k;
            break;
        }
    }
    assert_true(cut > 0);
    FILE *f = fopen(dst, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, cut, f), cut);
    assert_int_equal(fwrite("\xff\xd9", 1, 2, f), 2);
    fclose(f);
    free(buf);
}

static void test_fallbacks_counted(void **state)
{
    (void)state;
    const char *root = tu_env_dir("SLUICE_TEST_DATA");
    char *dir = tu_mkdtemp();
    assert_non_null(dir);
    static const char *const names[] = {"jpeg_cmyk.jpg", "jpeg_420_q90.jpg", "png_rgb.png",
                                        "jpeg_gray.jpg"};
    char src[4096], dst[4096];
    for (int k = 0; k < 4; k++) {
        snprintf(src, sizeof src, "%s/%s", root, names[k]);
        snprintf(dst, sizeof dst, "%s/%s", dir, names[k]);
        assert_int_equal(tu_copy_prefix(src, dst, SIZE_MAX), 0);
    }
    snprintf(src, sizeof src, "%s/jpeg_progressive_420.jpg", root);
    snprintf(dst, sizeof dst, "%s/incomplete.jpg", dir);
    write_incomplete(src, dst, 3);
    static const char *const files[] = {"jpeg_cmyk.jpg", "jpeg_420_q90.jpg", "png_rgb.png",
                                        "incomplete.jpg", "jpeg_gray.jpg"};
    /* the same bytes as the CPU decoder, for all of them */
    tu_gpu_compare(files_spec(dir, files, 5, 5, "RGB", ""), 2, 0);
    tu_gpu_compare(files_spec(dir, files, 5, 5, "GRAY", ""), 1, 0);
    /* CMYK, PNG and the incomplete progressive file: 3 per iteration */
    int64_t done = 0;
    int64_t n = fallbacks_done(files_spec(dir, files, 5, 5, "RGB", ""), 2, &done);
    assert_int_equal(n, 3 * done);
    /* hybrid off: all on the CPU, nothing counted, the same bytes */
    tu_gpu_compare(files_spec(dir, files, 5, 5, "RGB", ", \"hybrid\": false"), 1, 0);
    assert_int_equal(fallbacks_after(files_spec(dir, files, 5, 5, "RGB", ", \"hybrid\": false"), 1),
                     0);
    tu_rmtree(dir);
    free(dir);
}

/* decoders.image_random_crop on mixed: the window of the kernels' decode; windows are drawn on
 * the CPU from the node's seed, so both pipelines crop the same ones. With `size` the CPU
 * decodes and resamples (a fallback per sample). */
static const char *crop_files_spec(const char *root, const char *const *files, int n, int batch,
                                   const char *type, const char *extra)
{
    char list[8192];
    size_t at = 0;
    for (int k = 0; k < n; k++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s\"%s\"", k ? ", " : "", files[k]);
    assert_true(at < sizeof list);
    int len = snprintf(spec, sizeof spec,
                       "{\"pipeline\": {\"batch_size\": %d, \"num_threads\": 2, \"seed\": 5},"
                       " \"nodes\": ["
                       "  {\"name\": \"reader\", \"op\": \"readers.file\", \"args\": "
                       "{\"file_root\": \"%s\", \"files\": [%s], \"random_shuffle\": true, "
                       "\"seed\": 2}},"
                       "  {\"name\": \"dec\", \"op\": \"decoders.image_random_crop\", "
                       "\"device\": \"$MIX\", \"inputs\": [\"reader:0\"], \"args\": "
                       "{\"output_type\": \"%s\", \"seed\": 11%s}}],"
                       " \"outputs\": [\"dec\"]}",
                       batch, root, list, type, extra);
    assert_true(len > 0 && (size_t)len < sizeof spec);
    return spec;
}

static const char *crop_spec(const char *root, int batch, const char *type, const char *extra)
{
    return crop_files_spec(root, variants, NVARIANTS, batch, type, extra);
}

static void test_random_crop_equal_cpu(void **state)
{
    (void)state;
    const char *root = tu_env_dir("SLUICE_TEST_DATA");
    /* 6 iterations of 8 over 24 files: two epochs, each file under two windows */
    tu_diff d = tu_gpu_compare(crop_spec(root, 8, "RGB", ""), 6, 0);
    assert_true(d.elements > 0);
    tu_gpu_compare(crop_spec(root, 8, "GRAY", ""), 3, 0);
    tu_gpu_compare(crop_spec(root, 8, "BGR", ""), 3, 0);
    assert_int_equal(fallbacks_after(crop_spec(root, 8, "RGB", ""), 3), 0);
    /* size: resampled on the CPU, every sample a fallback */
    tu_gpu_compare(crop_spec(root, 8, "RGB", ", \"size\": [40, 48]"), 2, 0);
    int64_t done = 0;
    int64_t n = fallbacks_done(crop_spec(root, 8, "RGB", ", \"size\": [40, 48]"), 2, &done);
    assert_int_equal(n, 8 * done);
}

static void test_corrupt_named(void **state)
{
    (void)state;
    const char *root = tu_env_dir("SLUICE_TEST_DATA");
    static const char *const files[] = {"jpeg_420_q90.jpg", "corrupt_truncated.jpg"};
    const char *s = files_spec(root, files, 2, 2, "RGB", "");
    char *gs = tu_gpu_spec(s, true);
    tu_gpu_expect_error(gs, true, SL_ECORRUPT, "corrupt_truncated.jpg", "decoders.image", NULL);
    free(gs);
}

/* The window's part of the CPU half (jpeg.c): only the blocks a window's pixels read are kept,
 * and a single-scan file is entropy-decoded down to the window's last row of blocks only.
 * Windows of every size and place — small ones (many at the image's edges and corners over
 * eight epochs), bands of the full width and of the full height (the central-crop fallback of
 * an aspect ratio no window of the image has), the whole image — over every variant (4:4:4,
 * 4:2:2, 4:2:0, 4:4:0, 4:1:1, gray, progressive, restart intervals), in RGB and GRAY (whose
 * chroma blocks are not kept): the CPU decoder's bytes, none a fallback. The first epoch reads
 * each file to its end (not yet known whole), the later ones stop below the window. */
static void test_random_crop_windows(void **state)
{
    (void)state;
    const char *root = tu_env_dir("SLUICE_TEST_DATA");
    static const char *const extras[] = {
        ", \"random_area\": [0.01, 0.2]",
        ", \"random_area\": [0.5, 1.0], \"random_aspect_ratio\": [10.0, 10.0]",
        ", \"random_area\": [0.5, 1.0], \"random_aspect_ratio\": [0.1, 0.1]",
        ", \"random_area\": [1.0, 1.0], \"random_aspect_ratio\": [0.1, 10.0]",
    };
    for (int e = 0; e < 4; e++) {
        int iters = e == 0 ? 8 : 2; /* batch = all variants: one epoch per iteration */
        tu_diff d = tu_gpu_compare(crop_spec(root, NVARIANTS, "RGB", extras[e]), iters, 0);
        assert_true(d.elements > 0);
        assert_int_equal(fallbacks_after(crop_spec(root, NVARIANTS, "RGB", extras[e]), 2), 0);
    }
    tu_gpu_compare(crop_spec(root, NVARIANTS, "GRAY", extras[0]), 4, 0);
    tu_gpu_compare(crop_spec(root, NVARIANTS, "BGR", extras[1]), 1, 0);
}

/* A file whose last fifth is missing, cropped to a band in its middle (intact rows): the
 * hybrid decoder reads it to its end while it is not known whole, so it fails as the CPU
 * decoder does, naming the file, in every epoch. */
static void test_random_crop_truncated_below_window(void **state)
{
    (void)state;
    const char *root = tu_env_dir("SLUICE_TEST_DATA");
    char *dir = tu_mkdtemp();
    assert_non_null(dir);
    char src[4096], dst[4096];
    snprintf(src, sizeof src, "%s/jpeg_420_q90.jpg", root);
    snprintf(dst, sizeof dst, "%s/cut.jpg", dir);
    size_t n = 0;
    unsigned char *buf = tu_read_file(src, &n);
    assert_non_null(buf);
    free(buf);
    assert_int_equal(tu_copy_prefix(src, dst, n * 8 / 10), 0);
    static const char *const files[] = {"cut.jpg"};
    const char *band = ", \"random_aspect_ratio\": [10.0, 10.0]"; /* central, full width */
    for (int gpu = 0; gpu < 2; gpu++) {
        char *gs = tu_gpu_spec(crop_files_spec(dir, files, 1, 1, "RGB", band), gpu != 0);
        tu_gpu_expect_error(gs, gpu != 0, SL_ECORRUPT, "cut.jpg", "decoders.image_random_crop",
                            NULL);
        free(gs);
    }
    tu_rmtree(dir);
    free(dir);
}

/* ---- device entropy decoding (hybrid.h) ---------------------------------------------------- */

/* SLUICE_HYBRID_DEVICE_HUFF=0 (the .emulated_off ctest entry): the path is off. */
static bool device_huff_on(void)
{
    const char *e = getenv("SLUICE_HYBRID_DEVICE_HUFF");
    return !(e && strcmp(e, "0") == 0);
}

/* n, the device samples of a pipeline whose batches hold each of `per_epoch` clean files
 * once (a batch is an epoch), run for `done` iterations: none when the path is off; else
 * every one after the first epoch, but for the second epoch's samples that the CPU half
 * planned while the first epoch's (whose verdicts make them clean) were still decoding — a
 * GPU pipeline keeps two iterations in flight — and with those of an iteration prefetched
 * past the last one run (counted as it is staged, before the node's statistics count it). */
static void assert_device_samples(uint64_t n, int64_t per_epoch, int64_t done)
{
    if (!device_huff_on()) {
        assert_int_equal(n, 0);
        return;
    }
    assert_true(done >= 3);
    if (n > (uint64_t)(per_epoch * done) || n < (uint64_t)(per_epoch * (done - 2)))
        fail_msg("%llu samples decoded on the device over %lld iterations of %lld clean files",
                 (unsigned long long)n, (long long)done, (long long)per_epoch);
}

/* Samples staged for device entropy decoding while the gpu pipeline of spec s ran
 * `iterations` iterations (*done: those the node ran); its fallbacks in *fallbacks. */
static uint64_t device_samples(const char *s, int iterations, int64_t *done, int64_t *fallbacks)
{
    uint64_t before = sl__decoder_device_huff_samples();
    *fallbacks = fallbacks_done(s, iterations, done);
    return sl__decoder_device_huff_samples() - before;
}

/* Whole images, every variant, three epochs (a batch is all of them): the first decodes
 * everything on the CPU, the next two entropy-decode the single-scan files on the device. */
static void test_device_huff_variants(void **state)
{
    (void)state;
    const char *root = tu_env_dir("SLUICE_TEST_DATA");
    static const char *const types[] = {"RGB", "BGR", "GRAY"};
    for (int t = 0; t < 3; t++) {
        tu_diff d =
            tu_gpu_compare(files_spec(root, variants, NVARIANTS, NVARIANTS, types[t], ""), 3, 0);
        assert_true(d.elements > 0);
        /* batches of 5 over 24 files: epochs meet inside a batch */
        tu_gpu_compare(files_spec(root, variants, NVARIANTS, 5, types[t], ""), 12, 0);
        int64_t done = 0, fb = -1;
        uint64_t n = device_samples(files_spec(root, variants, NVARIANTS, NVARIANTS, types[t], ""),
                                    3, &done, &fb);
        assert_int_equal(fb, 0);
        assert_device_samples(n, NSINGLE, done);
    }
}

/* Windows (decoders.image_random_crop): small ones, bands, whole images; from the second
 * epoch the window's rows only, entropy-decoded on the device. */
static void test_device_huff_windows(void **state)
{
    (void)state;
    const char *root = tu_env_dir("SLUICE_TEST_DATA");
    static const char *const extras[] = {
        ", \"random_area\": [0.01, 0.2]",
        ", \"random_area\": [0.5, 1.0], \"random_aspect_ratio\": [10.0, 10.0]",
        ", \"random_area\": [1.0, 1.0], \"random_aspect_ratio\": [0.1, 10.0]",
    };
    static const char *const types[] = {"RGB", "GRAY", "BGR"};
    for (int e = 0; e < 3; e++) {
        tu_diff d = tu_gpu_compare(crop_spec(root, NVARIANTS, types[e], extras[e]), 4, 0);
        assert_true(d.elements > 0);
        int64_t done = 0, fb = -1;
        uint64_t n = device_samples(crop_spec(root, NVARIANTS, types[e], extras[e]), 3, &done, &fb);
        assert_int_equal(fb, 0);
        assert_device_samples(n, NSINGLE, done);
    }
}

/* Offsets of the stuffed zeros (0xFF 0x00) of d's first scan whose preceding byte is not
 * 0xFF, and of its restart markers; counts in *nz, *nr. */
static void scan_places(const unsigned char *d, size_t n, size_t *zeros, int *nz, size_t *rst,
                        int *nr, int cap)
{
    size_t i = 2;
    *nz = *nr = 0;
    while (i + 4 <= n && !(d[i] == 0xFF && d[i + 1] == 0xDA)) /* to the SOS, over segments */
        i += d[i] == 0xFF && d[i + 1] != 0xFF ? 2 + (size_t)(d[i + 2] << 8 | d[i + 3]) : 1;
    if (i + 4 > n)
        return;
    for (i += 2 + (size_t)(d[i + 2] << 8 | d[i + 3]); i + 1 < n; i++) {
        if (d[i] == 0xFF && d[i + 1] == 0x00 && d[i - 1] != 0xFF && *nz < cap)
            zeros[(*nz)++] = i;
        if (d[i] == 0xFF && d[i + 1] >= 0xD0 && d[i + 1] <= 0xD7 && *nr < cap)
            rst[(*nr)++] = i;
    }
}

static void write_bytes(const char *path, const unsigned char *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(d, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* A decode's scratch (sl__decode_mem): one buffer, kept for the process. */
static void *scratch(void *ctx, size_t bytes)
{
    (void)ctx;
    static unsigned char *buf;
    static size_t cap;
    if (bytes > cap) {
        free(buf);
        cap = bytes;
        buf = malloc(cap);
    }
    return buf;
}

/* Whether the CPU half decodes d (whole image, RGB) and jpeg_huff.c did it cleanly. */
static bool cpu_half(const unsigned char *d, size_t n, bool *clean)
{
    static unsigned char stage[1 << 22];
    const sl__decode_mem mem = {scratch, NULL, (size_t)1 << 26};
    const char *why = NULL;
    char err[256];
    *clean = false;
    return sl__jpeg_hybrid_stage(d, n, SL__COLOR_RGB, SL__DECODE_TO_END, NULL, &mem, stage,
                                 sizeof stage, &why, clean, err, sizeof err) == SL_OK;
}

/* Files jpeg_huff.c gives up on but libjpeg decodes: fill bytes before a stuffed zero, in a
 * file without and one with restart intervals. They stay on the CPU path every epoch, with the
 * CPU's pixels; the good file beside them goes to the device from the second epoch. */
static void test_device_huff_not_after_give_up(void **state)
{
    (void)state;
    const char *root = tu_env_dir("SLUICE_TEST_DATA");
    char *dir = tu_mkdtemp();
    assert_non_null(dir);
    static const char *const sources[] = {"jpeg_420_q90.jpg", "jpeg_restart_rows_420.jpg"};
    const char *names[3] = {"good.jpg", NULL, NULL};
    char src[4096], dst[4096];
    snprintf(src, sizeof src, "%s/jpeg_444_q90.jpg", root);
    snprintf(dst, sizeof dst, "%s/good.jpg", dir);
    assert_int_equal(tu_copy_prefix(src, dst, SIZE_MAX), 0);
    int nfiles = 1;
    for (int k = 0; k < 2; k++) {
        snprintf(src, sizeof src, "%s/%s", root, sources[k]);
        size_t n = 0;
        unsigned char *d = tu_read_file(src, &n);
        assert_non_null(d);
        bool clean = false;
        assert_true(cpu_half(d, n, &clean));
        assert_true(clean); /* the original: decoded cleanly */
        size_t zeros[256], rst[256];
        int nz, nr;
        scan_places(d, n, zeros, &nz, rst, &nr, 256);
        unsigned char *e = malloc(n + 2);
        bool found = false;
        for (int r = 0; r < nz && !found; r++) {
            memcpy(e, d, zeros[r]); /* two fill bytes before the stuffed zero */
            memset(e + zeros[r], 0xFF, 2);
            memcpy(e + zeros[r] + 2, d + zeros[r], n - zeros[r]);
            found = cpu_half(e, n + 2, &clean) && !clean;
            if (found) {
                names[nfiles] = k == 0 ? "fill.jpg" : "fill_restart.jpg";
                snprintf(dst, sizeof dst, "%s/%s", dir, names[nfiles++]);
                write_bytes(dst, e, n + 2);
            }
        }
        if (!found)
            fail_msg("%s: no damage that libjpeg decodes and jpeg_huff.c gives up on", src);
        free(e);
        free(d);
    }
    assert_int_equal(nfiles, 3);
    static const char *const types[] = {"RGB", "GRAY"};
    for (int t = 0; t < 2; t++) {
        tu_diff d = tu_gpu_compare(files_spec(dir, names, 3, 3, types[t], ""), 3, 0);
        assert_true(d.elements > 0);
        int64_t done = 0, fb = -1;
        uint64_t n = device_samples(files_spec(dir, names, 3, 3, types[t], ""), 3, &done, &fb);
        assert_int_equal(fb, 0);
        assert_device_samples(n, 1, done); /* good.jpg only */
    }
    tu_rmtree(dir);
    free(dir);
}

/* Copies `source` (a test image) to dir/changed.jpg, runs a pipeline over it for an epoch,
 * changes the copy in place with `change` (same size), then runs 8 iterations: the device
 * decode gives up on the new bytes and the iteration fails naming the file with an internal
 * error, never garbage (without device entropy decoding, the CPU's verdict on them). */
static void gives_up_named(const char *dir, const char *source,
                           void (*change)(unsigned char *d, size_t n))
{
    char src[4096], dst[4096];
    snprintf(src, sizeof src, "%s/%s", tu_env_dir("SLUICE_TEST_DATA"), source);
    snprintf(dst, sizeof dst, "%s/changed.jpg", dir);
    size_t n = 0;
    unsigned char *d = tu_read_file(src, &n);
    assert_non_null(d);
    write_bytes(dst, d, n);
    static const char *const files[] = {"changed.jpg"};
    sl_pipeline *p = tu_gpu_build(files_spec(dir, files, 1, 1, "RGB", ""), true);
    if (sl_pipeline_run(p) != SL_OK)
        fail_msg("%s, first epoch: %s", source, sl_pipeline_error(p));
    change(d, n);
    write_bytes(dst, d, n);
    sl_status st = SL_OK;
    for (int it = 0; it < 8 && st == SL_OK; it++) /* prefetched iterations read the old bytes */
        st = sl_pipeline_run(p);
    if (!device_huff_on()) { /* the CPU decodes the new bytes: libjpeg's verdict, whatever */
        assert_true(st == SL_OK || strstr(sl_pipeline_error(p), "internal error") == NULL);
    } else {
        assert_int_not_equal(st, SL_OK);
        const char *msg = sl_pipeline_error(p);
        print_message("%s: %s\n", source, msg);
        assert_non_null(strstr(msg, "internal error"));
        assert_non_null(strstr(msg, "changed.jpg"));
        assert_non_null(strstr(msg, "decoders.image"));
    }
    sl_pipeline_destroy(p);
    free(d);
}

/* FF FF 00: a fill byte before a stuffed zero in the middle of the first scan. */
static void fill_byte(unsigned char *d, size_t n)
{
    size_t zeros[256], rst[256];
    int nz, nr;
    scan_places(d, n, zeros, &nz, rst, &nr, 256);
    assert_true(nz > 4);
    size_t at = zeros[nz / 2];
    assert_true(d[at - 2] != 0xFF);
    d[at - 1] = 0xFF;
}

/* The middle restart marker renumbered (RSTn to RSTn+3). */
static void renumbered_marker(unsigned char *d, size_t n)
{
    size_t zeros[256], rst[256];
    int nz, nr;
    scan_places(d, n, zeros, &nz, rst, &nr, 256);
    assert_true(nr > 4);
    d[rst[nr / 2] + 1] = (unsigned char)(0xD0 + ((d[rst[nr / 2] + 1] - 0xD0 + 3) & 7));
}

/* A file decoded cleanly in the first epoch, then changed under the same name and size so
 * that the decoder gives up on it: two fill bytes before a stuffed zero (the chunked decode),
 * or a restart marker renumbered (the decode by intervals). */
static void test_device_huff_gives_up_named(void **state)
{
    (void)state;
    const char *root = tu_env_dir("SLUICE_TEST_DATA");
    char *dir = tu_mkdtemp();
    assert_non_null(dir);
    gives_up_named(dir, "jpeg_420_q90.jpg", fill_byte);
    gives_up_named(dir, "jpeg_restart_rows_420.jpg", renumbered_marker);
    gives_up_named(dir, "jpeg_restart_mcu_422.jpg", fill_byte);
    char src[4096], dst[4096];
    snprintf(src, sizeof src, "%s/jpeg_420_q90.jpg", root);
    snprintf(dst, sizeof dst, "%s/changed.jpg", dir);
    static const char *const files[] = {"changed.jpg"};
    size_t n = 0;
    /* the same with its frame turned arithmetic-coded (SOF0 to SOF9, same size): every
     * iteration plans its sample from the header again, so it is no longer one for the device
     * (sl__huff_init refuses arithmetic coding) and the CPU half decodes it as libjpeg does */
    unsigned char *orig = tu_read_file(src, &n);
    assert_non_null(orig);
    write_bytes(dst, orig, n);
    size_t sof = 2;
    while (sof + 1 < n && !(orig[sof] == 0xFF && orig[sof + 1] == 0xC0))
        sof++;
    assert_true(sof + 1 < n);
    sl_pipeline *p = tu_gpu_build(files_spec(dir, files, 1, 1, "RGB", ""), true);
    if (sl_pipeline_run(p) != SL_OK)
        fail_msg("first epoch: %s", sl_pipeline_error(p));
    orig[sof + 1] = 0xC9;
    write_bytes(dst, orig, n);
    /* the CPU decoder's verdict on the new bytes */
    static unsigned char px[1 << 22];
    const sl__decode_mem mem = {scratch, NULL, (size_t)1 << 26};
    char err[256];
    sl_status cpu = sl__image_decode(orig, n, SL__COLOR_RGB, 0, NULL, px, &mem, err, sizeof err);
    uint64_t before = sl__decoder_device_huff_samples();
    sl_status st = SL_OK;
    for (int it = 0; it < 8 && st == SL_OK; it++)
        st = sl_pipeline_run(p);
    if (cpu == SL_OK) {
        if (st != SL_OK)
            fail_msg("arithmetic-coded: %s", sl_pipeline_error(p));
    } else { /* libjpeg's own failure, naming the file; not the device's */
        assert_int_equal(st, cpu);
        assert_non_null(strstr(sl_pipeline_error(p), "changed.jpg"));
        assert_null(strstr(sl_pipeline_error(p), "internal error"));
    }
    /* at most the two iterations in flight when the file changed read the old bytes */
    assert_true(sl__decoder_device_huff_samples() - before <= 2);
    sl_pipeline_destroy(p);
    free(orig);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    tu_gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variants_equal_cpu),
        cmocka_unit_test(test_variants_equal_pil),
        cmocka_unit_test(test_fallbacks_counted),
        cmocka_unit_test(test_random_crop_equal_cpu),
        cmocka_unit_test(test_corrupt_named),
        cmocka_unit_test(test_random_crop_windows),
        cmocka_unit_test(test_random_crop_truncated_below_window),
        cmocka_unit_test(test_device_huff_variants),
        cmocka_unit_test(test_device_huff_windows),
        cmocka_unit_test(test_device_huff_not_after_give_up),
        cmocka_unit_test(test_device_huff_gives_up_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
