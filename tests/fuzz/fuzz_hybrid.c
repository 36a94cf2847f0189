/* tests/fuzz/fuzz_hybrid.c: fuzz target "hybrid": the CPU half of the hybrid JPEG decoder
 * (sl__jpeg_hybrid_plan and sl__jpeg_hybrid_coefs, src/ops/decoders/jpeg.c) and its own
 * Huffman decoder (jpeg_huff.c), differentially against libjpeg-turbo's entropy decoder.
 *
 * The one target below the public API (docs/fuzzing.md): the mixed decoder runs only in a CUDA
 * build (or its emulation there), which the fuzzing build is not, while its CPU half, where the
 * untrusted bytes are parsed, is plain C that the fuzzing build compiles.
 *
 * Input: a mode byte, then the JPEG. Mode bits 0-1: the window (the whole image, the top-left
 * quarter, a band through the middle, the bottom-right pixel); bit 2: GRAY output instead of
 * RGB; bit 3: SL__DECODE_TO_END (the rest of the file entropy-decoded too).
 * Checks:
 * - the plan succeeds, or fails with a code that blames the input (SL_ECORRUPT,
 *   SL_EUNSUPPORTED, SL_EINVAL, SL_ENOMEM under the memory limit) and a message;
 * - a file planned as coefficients gives, through jpeg_huff.c and through libjpeg's decoder
 *   (SL__HYB_LIBJPEG_HUFF), the same status, the same message and the same staging bytes: the
 *   fast decoder writes libjpeg's coefficients or gives up to libjpeg, whose verdict stands;
 * - a file jpeg_huff.c decoded whole without giving up (clean: a later epoch's device entropy
 *   decoding, hybrid.h) planned and staged with SL__HYB_DEVICE_HUFF (the window's rows only)
 *   gives a job within the planned bytes whose walk (hybrid_job.h, the kernel's code compiled
 *   as C) writes the same coefficients without giving up; so does its chunked decode (the
 *   device's many threads per sample, its passes run in order), with chunks of 16 and 37
 *   bytes (several in a fuzzer's small file: wrong guesses, entries past the next chunk) and
 *   of the device's size; a scan with more than one restart interval, its decode by
 *   intervals instead (the markers found in chunks of 16, 37 and 512 bytes).
 *
 * Exports LLVMFuzzerTestOneInput.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"
#include "ops/decoders/codec.h"
#include "ops/decoders/hybrid.h"
#include "ops/decoders/hybrid_job.h"

static uint8_t *scratch_buf;
static size_t scratch_cap;

static void *scratch(void *ctx, size_t bytes)
{
    (void)ctx;
    if (bytes > scratch_cap) {
        free(scratch_buf);
        scratch_buf = malloc(bytes);
        scratch_cap = scratch_buf ? bytes : 0;
    }
    return scratch_buf;
}

static const sl__decode_mem mem = {scratch, NULL, (size_t)256 << 20};

static bool blames_input(sl_status s)
{
    return s == SL_ECORRUPT || s == SL_EUNSUPPORTED || s == SL_EINVAL || s == SL_ENOMEM;
}

/* Device entropy decoding of a clean file: the job's walk gives cpu's coefficients. */
static void check_job(const uint8_t *jpeg, size_t n, sl__color color, unsigned flags,
                      const sl__roi *win, const uint8_t *cpu)
{
    sl__hyb_head head;
    size_t bytes = 0;
    const char *why = NULL;
    char err[512];
    flags |= SL__HYB_DEVICE_HUFF;
    sl_status s = sl__jpeg_hybrid_plan(jpeg, n, color, flags, win, &mem, &head, &bytes, &why, err,
                                       sizeof err);
    if (s != SL_OK || head.kind != SL__HYB_COEFS || head.huff_off != SL__HYB_HEAD_BYTES)
        fz_fail("a clean file planned for the device: %s \"%s\", kind %d, huff_off %llu",
                sl_status_name(s), err, head.kind, (unsigned long long)head.huff_off);
    uint8_t *stage = malloc(bytes);
    size_t area = (size_t)head.nblocks * 128;
    uint8_t *coefs = calloc(1, SL__HYB_HEAD_BYTES + area);
    if (!stage || !coefs)
        fz_fail("out of memory for a job of %zu bytes", bytes);
    bool clean;
    s = sl__jpeg_hybrid_stage(jpeg, n, color, flags, win, &mem, stage, bytes, &why, &clean, err,
                              sizeof err);
    const sl__hyb_head *h = (const sl__hyb_head *)(const void *)stage;
    if (s != SL_OK || h->kind != SL__HYB_COEFS || h->huff_off != SL__HYB_HEAD_BYTES)
        fz_fail("a clean file staged for the device: %s \"%s\"", sl_status_name(s), err);
    if (sl__hyb_job_decode(h, stage + h->huff_off, coefs) != SL__HUFF_OK)
        fz_fail("the job's walk gave up on a clean file");
    if (memcmp(coefs + SL__HYB_HEAD_BYTES, cpu + SL__HYB_HEAD_BYTES, area) != 0)
        fz_fail("the job's walk wrote other coefficients than the CPU half");
    /* the device's decode of the job: by intervals for a scan with more than one restart
     * interval, else chunked (many device threads per sample); markers searched or the scan
     * cut in chunks small enough that the fuzzer's small files have several, and in the
     * device's size */
    const sl__hyb_huff_job *jb = (const sl__hyb_huff_job *)(const void *)(stage + h->huff_off);
    const bool by_intervals = jb->bits.restart_interval > 0 && sl__hyb_job_intervals(jb) > 1;
    static const int ways[][2] = {{16, 0}, {37, 1}, {SL__HYB_CHUNK, 3}};
    for (int w = 0; w < 3; w++) {
        const int chunk = ways[w][0], rounds = ways[w][1];
        const int nm = sl__hyb_job_marker_chunks(jb, chunk), nc = sl__hyb_job_chunks(jb, chunk);
        if (by_intervals ? nm < 1 || nc != 0 : nc < 1 || nm != 0)
            fz_fail("a job of %lld restart intervals (restart interval %d) taken by the wrong "
                    "decode: %d marker chunks, %d chunks of %d bytes",
                    (long long)(jb->bits.restart_interval ? sl__hyb_job_intervals(jb) : 0),
                    jb->bits.restart_interval, nm, nc, chunk);
        void *rec = malloc(by_intervals ? (size_t)nm * sizeof(int32_t)
                                        : 2 * (size_t)nc * sizeof(sl__hyb_chunk));
        if (!rec)
            fz_fail("out of memory for %d chunks", by_intervals ? nm : nc);
        memset(coefs, 0, SL__HYB_HEAD_BYTES + area);
        const int r =
            by_intervals
                ? sl__hyb_job_decode_intervals(h, stage + h->huff_off, coefs, chunk, (int32_t *)rec)
                : sl__hyb_job_decode_chunked(h, stage + h->huff_off, coefs, chunk, rounds,
                                             (sl__hyb_chunk *)rec);
        if (r != SL__HUFF_OK)
            fz_fail("the decode %s (%d bytes, %d rounds) gave up on a clean file",
                    by_intervals ? "by intervals" : "in chunks", chunk, rounds);
        if (memcmp(coefs + SL__HYB_HEAD_BYTES, cpu + SL__HYB_HEAD_BYTES, area) != 0)
            fz_fail("the decode %s (%d bytes, %d rounds) wrote other coefficients than the CPU "
                    "half",
                    by_intervals ? "by intervals" : "in chunks", chunk, rounds);
        free(rec);
    }
    free(stage);
    free(coefs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    unsigned mode = data[0];
    const uint8_t *jpeg = data + 1;
    size_t n = size - 1;
    if (fz_image_too_large(jpeg, n, FZ_MAX_PIXELS))
        return 0;
    sl__image_info info;
    char err[512], err2[512];
    if (sl__image_peek(jpeg, n, &info, err, sizeof err) != SL_OK || info.format != SL__FMT_JPEG ||
        info.width < 1 || info.height < 1)
        return 0;
    sl__roi roi, *win = &roi;
    int w = info.width, h = info.height;
    switch (mode & 3) {
    case 0: win = NULL; break;
    case 1: roi = (sl__roi){0, 0, w > 1 ? w / 2 : 1, h > 1 ? h / 2 : 1, 0}; break;
    case 2: roi = (sl__roi){0, h / 3, w, h > 2 ? h / 3 : 1, 0}; break;
    default: roi = (sl__roi){w - 1, h - 1, 1, 1, 0}; break;
    }
    sl__color color = mode & 4 ? SL__COLOR_GRAY : SL__COLOR_RGB;
    unsigned flags = mode & 8 ? SL__DECODE_TO_END : 0;
    sl__hyb_head head;
    size_t bytes = 0;
    const char *why = NULL;
    sl_status s = sl__jpeg_hybrid_plan(jpeg, n, color, flags, win, &mem, &head, &bytes, &why, err,
                                       sizeof err);
    if (s != SL_OK) {
        if (!blames_input(s) || !err[0])
            fz_fail("sl__jpeg_hybrid_plan failed with %s, message \"%s\"", sl_status_name(s), err);
        return 0;
    }
    if (head.kind != SL__HYB_COEFS)
        return 0;
    if (bytes < SL__HYB_HEAD_BYTES || bytes > ((size_t)512 << 20))
        fz_fail("a staging of %zu bytes planned for a %dx%d JPEG", bytes, w, h);
    uint8_t *fast = calloc(1, bytes), *ref = calloc(1, bytes);
    if (!fast || !ref)
        fz_fail("out of memory for two stagings of %zu bytes", bytes);
    const char *why2 = NULL;
    err[0] = err2[0] = '\0';
    bool clean = false;
    sl_status a = sl__jpeg_hybrid_stage(jpeg, n, color, flags, win, &mem, fast, bytes, &why, &clean,
                                        err, sizeof err);
    sl_status b = sl__jpeg_hybrid_coefs(jpeg, n, color, flags | SL__HYB_LIBJPEG_HUFF, win, &mem,
                                        ref, bytes, &why2, err2, sizeof err2);
    if (a != b)
        fz_fail("jpeg_huff.c: %s \"%s\", libjpeg's decoder: %s \"%s\"", sl_status_name(a), err,
                sl_status_name(b), err2);
    if (a != SL_OK && (strcmp(err, err2) != 0 || !blames_input(a)))
        fz_fail("both failed, with %s: \"%s\" against \"%s\"", sl_status_name(a), err, err2);
    if (a == SL_OK && memcmp(fast, ref, bytes) != 0) {
        size_t k = 0;
        while (fast[k] == ref[k])
            k++;
        fz_fail("the stagings differ at byte %zu of %zu (%u against libjpeg's %u)", k, bytes,
                fast[k], ref[k]);
    }
    if (a == SL_OK && clean)
        check_job(jpeg, n, color, flags & ~SL__DECODE_TO_END, win, fast);
    free(fast);
    free(ref);
    return 0;
}
