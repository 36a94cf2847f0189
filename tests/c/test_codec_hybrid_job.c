/* tests/c/test_codec_hybrid_job.c: device entropy decoding's CPU half and walk (hybrid.h,
 * jpeg.c's SL__HYB_DEVICE_HUFF, hybrid_job.h) on the host, against the CPU half's own
 * entropy decoding.
 *
 * The claim that makes device entropy decoding exact without a device-side fallback: for a
 * file whose whole scan jpeg_huff.c decoded without giving up (sl__jpeg_hybrid_stage's
 * *clean), the job written with SL__HYB_DEVICE_HUFF and decoded by sl__hyb_job_decode (the
 * kernel's code, here compiled as C) gives the coefficients the CPU half writes, byte for byte,
 * for every window and output color, and never gives up. Checked on every JPEG of the test
 * data and on hundreds of damaged ones (tests/c/mutate.h: cuts, byte changes in the
 * entropy-coded data, fill bytes before stuffed zeros): those found clean must match; those
 * not clean never get a job (decoder.c plans them for the CPU). Also: the plan sizes the
 * staging the job needs exactly (the job is staged into no more than the planned bytes), the
 * head equals the CPU's but for huff_off, and the job decode of a file that is not the one
 * staged (the clean file's job over a damaged copy's bytes) gives up rather than writing
 * garbage unnoticed in at least some cases. Data: SLUICE_TEST_DATA (make_images.py).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mutate.h"
#include "ops/decoders/codec.h"
#include "ops/decoders/hybrid.h"
#include "ops/decoders/hybrid_job.h"
#include "testutil.h"

#define STAGE_CAP ((size_t)32 << 20)
static uint8_t *cpu_stage, *job_stage, *coefs;

static void *no_scratch(void *ctx, size_t bytes)
{
    (void)ctx;
    (void)bytes;
    return NULL; /* the hybrid CPU half takes none */
}

static const sl__decode_mem mem = {no_scratch, NULL, (size_t)64 << 20};

typedef struct tally {
    int files, clean, not_clean, compared;
} tally;

/* Windows of a w x h image (NULL for the whole one is tried besides). */
static int windows(int w, int h, sl__roi *out)
{
    int k = 0;
    out[k++] = (sl__roi){0, 0, w, h, 0};
    out[k++] = (sl__roi){w / 3, h / 3, (w + 2) / 3, (h + 2) / 3, 0};       /* the middle */
    out[k++] = (sl__roi){0, h - (h + 3) / 4, (w + 1) / 2, (h + 3) / 4, 0}; /* bottom-left */
    out[k++] = (sl__roi){w - 1, 0, 1, h, 0};                               /* the last column */
    out[k++] = (sl__roi){0, h / 2, w, 1, 0};                               /* one row */
    out[k++] = (sl__roi){w / 2, h / 5, w - w / 2, h / 5 > 0 ? h / 5 : 1, 0};
    return k;
}

/* The coefficients the job's decode wrote (coefs) against the CPU half's (cpu_stage). */
static void same_coefs(const char *what, const char *how, size_t area)
{
    if (memcmp(coefs + SL__HYB_HEAD_BYTES, cpu_stage + SL__HYB_HEAD_BYTES, area) != 0) {
        size_t at = 0;
        while (coefs[SL__HYB_HEAD_BYTES + at] == cpu_stage[SL__HYB_HEAD_BYTES + at])
            at++;
        fail_msg("%s: %s: coefficients differ at byte %zu of %zu", what, how, at, area);
    }
}

/* Jobs decoded by intervals, and jobs with a restart interval decoded in chunks (one interval:
 * the restart interval at least the job's MCUs), by check_chunked. */
static int by_intervals_jobs, one_interval_jobs;

/* The chunked decode (hybrid_job.h, the kernels' passes on one thread) of the job staged in
 * job_stage, against the CPU half: chunks far smaller than the device's (a few blocks or
 * less: most guesses wrong, entries past the next origin, exits into the last chunk), the
 * device's, and without rounds (the fixup doing all) or with one or two. */
static void check_chunked(const char *what, const sl__hyb_head *h, size_t area)
{
    static const int ways[][2] = {{16, 0}, {16, 1}, {61, 2}, {SL__HYB_CHUNK, 3}, {4096, 1}};
    const uint8_t *job = job_stage + h->huff_off;
    const sl__hyb_huff_job *jb = (const sl__hyb_huff_job *)(const void *)job;
    if (jb->bits.restart_interval > 0 && sl__hyb_job_intervals(jb) > 1) { /* by intervals */
        static const int sizes[] = {1, 2, 16, 61, SL__HYB_CHUNK, 4096};
        assert_int_equal(sl__hyb_job_chunks(jb, SL__HYB_CHUNK), 0);
        for (size_t w = 0; w < sizeof sizes / sizeof sizes[0]; w++) {
            const int n = sl__hyb_job_marker_chunks(jb, sizes[w]);
            if (n < 1)
                fail_msg("%s: no chunks of %d bytes for the intervals", what, sizes[w]);
            int32_t *cnt = malloc((size_t)n * sizeof *cnt);
            assert_non_null(cnt);
            memset(coefs, 0, SL__HYB_HEAD_BYTES + area);
            char how[96];
            snprintf(how, sizeof how, "intervals, markers found in chunks of %d bytes", sizes[w]);
            if (sl__hyb_job_decode_intervals(h, job, coefs, sizes[w], cnt) != SL__HUFF_OK)
                fail_msg("%s: %s: gave up on a clean file", what, how);
            same_coefs(what, how, area);
            free(cnt);
        }
        by_intervals_jobs++;
        return;
    }
    /* no restart interval, or one the walk never reaches (no marker checked): in chunks */
    assert_int_equal(sl__hyb_job_marker_chunks(jb, SL__HYB_CHUNK), 0);
    one_interval_jobs += jb->bits.restart_interval > 0;
    for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
        const int chunk = ways[w][0], rounds = ways[w][1];
        const int n = sl__hyb_job_chunks(jb, chunk);
        if (n < 1)
            fail_msg("%s: no chunks of %d bytes", what, chunk);
        sl__hyb_chunk *rec = malloc(2 * (size_t)n * sizeof *rec);
        assert_non_null(rec);
        memset(coefs, 0, SL__HYB_HEAD_BYTES + area);
        char how[96];
        snprintf(how, sizeof how, "chunks of %d bytes, %d rounds", chunk, rounds);
        if (sl__hyb_job_decode_chunked(h, job, coefs, chunk, rounds, rec) != SL__HUFF_OK)
            fail_msg("%s: %s: gave up on a clean file", what, how);
        same_coefs(what, how, area);
        free(rec);
    }
}

/* d with color and window: the CPU half (flags 0: a file known whole) against the job path. */
static void compare_job(const char *name, const uint8_t *d, size_t n, sl__color color,
                        const sl__roi *win, tally *t)
{
    char what[512], e1[256] = "", e2[256] = "";
    snprintf(what, sizeof what, "%s (color %d, window %d,%d %dx%d)", name, (int)color,
             win ? win->x : 0, win ? win->y : 0, win ? win->w : -1, win ? win->h : -1);
    sl__hyb_head plan;
    size_t bytes = 0;
    const char *why = NULL;
    if (sl__jpeg_hybrid_plan(d, n, color, SL__HYB_DEVICE_HUFF, win, &mem, &plan, &bytes, &why, e1,
                             sizeof e1) != SL_OK)
        fail_msg("%s: the plan fails on a clean file: %s", what, e1);
    if (plan.kind != SL__HYB_COEFS)
        return; /* a window the kernels do not take */
    if (plan.huff_off != SL__HYB_HEAD_BYTES || bytes > STAGE_CAP)
        fail_msg("%s: planned without a job (huff_off %llu, %zu bytes)", what,
                 (unsigned long long)plan.huff_off, bytes);
    bool clean = false;
    memset(cpu_stage, 0x5a, STAGE_CAP);
    memset(job_stage, 0x5a, bytes + 64);
    sl_status s1 = sl__jpeg_hybrid_stage(d, n, color, 0, win, &mem, cpu_stage, STAGE_CAP, &why,
                                         &clean, e1, sizeof e1);
    /* staged into exactly the planned bytes: the bytes past them must stay untouched */
    sl_status s2 = sl__jpeg_hybrid_stage(d, n, color, SL__HYB_DEVICE_HUFF, win, &mem, job_stage,
                                         bytes, &why, &clean, e2, sizeof e2);
    if (s1 != SL_OK || s2 != SL_OK)
        fail_msg("%s: staging fails on a clean file: %s | %s", what, e1, e2);
    for (size_t k = bytes; k < bytes + 64; k++)
        if (job_stage[k] != 0x5a)
            fail_msg("%s: the job was written past the planned %zu bytes", what, bytes);
    sl__hyb_head a = *(const sl__hyb_head *)(const void *)cpu_stage;
    sl__hyb_head b = *(const sl__hyb_head *)(const void *)job_stage;
    if (b.kind != SL__HYB_COEFS || b.huff_off != SL__HYB_HEAD_BYTES)
        fail_msg("%s: no job staged (kind %d, huff_off %llu)", what, b.kind,
                 (unsigned long long)b.huff_off);
    b.huff_off = 0;
    if (memcmp(&a, &b, sizeof a) != 0)
        fail_msg("%s: the job's head differs from the CPU half's", what);
    size_t area = (size_t)a.nblocks * 128;
    memset(coefs, 0, SL__HYB_HEAD_BYTES + area);
    const sl__hyb_head *h = (const sl__hyb_head *)(const void *)job_stage;
    if (sl__hyb_job_decode(h, job_stage + h->huff_off, coefs) != SL__HUFF_OK)
        fail_msg("%s: the job's decode gave up on a clean file", what);
    same_coefs(what, "the job's walk", area);
    check_chunked(what, h, area);
    t->compared++;
}

/* A file: decoded to its end by the CPU half (the first epoch); clean ones compared every way,
 * the others checked never to be planned a job by decoder.c's rule (they are not clean). */
static void check_file(const char *name, const uint8_t *d, size_t n, tally *t)
{
    sl__image_info info;
    char err[256];
    if (sl__jpeg_peek(d, n, &info, err, sizeof err) != SL_OK)
        return;
    t->files++;
    bool clean = false;
    const char *why = NULL;
    sl_status s = sl__jpeg_hybrid_stage(d, n, SL__COLOR_RGB, SL__DECODE_TO_END, NULL, &mem,
                                        cpu_stage, STAGE_CAP, &why, &clean, err, sizeof err);
    if (s != SL_OK || !clean) {
        t->not_clean++;
        return;
    }
    t->clean++;
    sl__roi win[8];
    int nw = windows(info.width, info.height, win);
    static const sl__color colors[] = {SL__COLOR_RGB, SL__COLOR_GRAY};
    for (int c = 0; c < 2; c++) {
        compare_job(name, d, n, colors[c], NULL, t);
        for (int k = 0; k < nw; k++)
            compare_job(name, d, n, colors[c], &win[k], t);
    }
}

static uint8_t *read_data(const char *name, size_t *n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", tu_env_dir("SLUICE_TEST_DATA"), name);
    uint8_t *d = tu_read_file(path, n);
    if (d == NULL)
        fail_msg("cannot read %s", path);
    return d;
}

static void test_test_data(void **state)
{
    (void)state;
    char **names;
    int nn = tu_list(tu_env_dir("SLUICE_TEST_DATA"), ".jpg", &names);
    tally t = {0};
    for (int i = 0; i < nn; i++) {
        size_t n;
        uint8_t *d = read_data(names[i], &n);
        check_file(names[i], d, n, &t);
        free(d);
    }
    tu_free_list(names, nn);
    /* the single-scan variants are clean; progressive, CMYK-less... and corrupt ones are not */
    assert_true(t.clean >= 21);
    assert_true(t.not_clean >= 3);
    assert_true(t.compared > 21 * 2 * 5);
    /* five files with restart intervals: by intervals mostly, in chunks where one interval
     * covers the job (jpeg_restart_over_420.jpg; a window in a file's first rows) */
    print_message("%d jobs decoded by intervals, %d with a restart interval in chunks\n",
                  by_intervals_jobs, one_interval_jobs);
    assert_true(by_intervals_jobs >= 5 * 2 * 5);
    assert_true(one_interval_jobs >= 2 * 7);
}

static void test_damaged(void **state)
{
    (void)state;
    static const char *const sources[] = {
        "jpeg_420_q90.jpg",        "jpeg_422_odd_97x131.jpg",  "jpeg_411_odd_75x101.jpg",
        "jpeg_gray.jpg",           "jpeg_restart_mcu_422.jpg", "jpeg_restart_gray.jpg",
        "jpeg_440_odd_101x75.jpg", "jpeg_q100_444.jpg",
    };
    tu_corpus corpus = {0};
    for (int i = 0; i < (int)(sizeof sources / sizeof sources[0]); i++) {
        size_t n;
        uint8_t *d = read_data(sources[i], &n);
        tu_add_cuts(&corpus, sources[i], d, n);
        tu_add_changes(&corpus, sources[i], d, n, 24, 91u + (uint32_t)i);
        tu_add_fill_bytes(&corpus, sources[i], d, n, 6);
        free(d);
    }
    tally t = {0};
    for (int i = 0; i < corpus.n; i++)
        check_file(corpus.v[i].name, corpus.v[i].data, corpus.v[i].size, &t);
    tu_corpus_free(&corpus);
    print_message("%d damaged files: %d clean (compared %d ways), %d not\n", t.files, t.clean,
                  t.compared, t.not_clean);
    assert_true(t.clean > 50);      /* changes the decoder reads through (libjpeg does too) */
    assert_true(t.not_clean > 100); /* cuts, bad codes, fill bytes: never given a job */
}

/* d planned and staged for device entropy decoding (RGB, window win or the image) into
 * job_stage, both succeeding; returns the planned bytes. */
static size_t stage_job(const uint8_t *d, size_t n, const sl__roi *win)
{
    sl__hyb_head plan;
    size_t bytes = 0;
    const char *why = NULL;
    char err[256];
    assert_int_equal(sl__jpeg_hybrid_plan(d, n, SL__COLOR_RGB, SL__HYB_DEVICE_HUFF, win, &mem,
                                          &plan, &bytes, &why, err, sizeof err),
                     SL_OK);
    bool clean;
    assert_int_equal(sl__jpeg_hybrid_stage(d, n, SL__COLOR_RGB, SL__HYB_DEVICE_HUFF, win, &mem,
                                           job_stage, bytes, &why, &clean, err, sizeof err),
                     SL_OK);
    return bytes;
}

/* A clean file's job run over other bytes (the file changed after its verdict): the walk gives
 * up, or at least stays inside its buffers (ASan), on every damaged copy of the same size; the
 * chunked decode (the device's) writes the walk's coefficients wherever the walk does not give
 * up, and gives up wherever the walk does but for the end rule's look-ahead: at a whole
 * image's end both apply sl__huff_tail (within 24 bytes a marker must come before the data's
 * end and before fill bytes that run to it or to a stuffed zero), the walk from its reader and
 * the chunked decode (from whichever chunk decodes the job's last block) from the
 * byte after the last one decoded from, which the walk's reader may have passed; where only the
 * walk gives up, the chunked decode has the coefficients of the walk without that rule. Where
 * the end-of-image marker is gone, both give up (premature end). */
static void test_job_on_changed_bytes(void **state)
{
    (void)state;
    size_t n;
    uint8_t *d = read_data("jpeg_420_q90.jpg", &n);
    stage_job(d, n, NULL);
    const sl__hyb_head *h = (const sl__hyb_head *)(const void *)job_stage;
    uint8_t *job = job_stage + h->huff_off;
    const sl__hyb_huff_job *jb = (const sl__hyb_huff_job *)(const void *)job;
    uint8_t *data = job + jb->data_off;
    uint8_t *orig = malloc(jb->data_len);
    memcpy(orig, data, jb->data_len);
    size_t area = (size_t)h->nblocks * 128;
    assert_true(jb->data_len > 2 && orig[jb->data_len - 2] == 0xFF &&
                orig[jb->data_len - 1] == 0xD9);
    int gave_up = 0, both = 0, only_walk = 0, eoi = 0;
    sl__hyb_chunk *rec = malloc(2 * (size_t)sl__hyb_job_chunks(jb, 61) * sizeof *rec);
    assert_non_null(rec);
    uint32_t seed = 7;
    for (int r = 0; r < 300; r++) {
        memcpy(data, orig, jb->data_len);
        for (int k = 0; k < 1 + r % 4; k++) {
            seed = seed * 1103515245u + 12345u;
            /* one change in three among the data's last 40 bytes, where the scan ends */
            size_t at = r % 3 ? (seed >> 8) % jb->data_len : jb->data_len - 1 - (seed >> 8) % 40;
            data[at] ^= (uint8_t)(1u << (seed >> 28 & 7));
        }
        const int no_eoi = r % 25 == 0; /* the end-of-image marker gone, nothing else */
        if (no_eoi) {
            memcpy(data, orig, jb->data_len);
            data[jb->data_len - 2] = 0x12;
        }
        memset(coefs, 0, SL__HYB_HEAD_BYTES + area);
        const int walk = sl__hyb_job_decode(h, job, coefs);
        memset(cpu_stage, 0, SL__HYB_HEAD_BYTES + area);
        const int chunked = sl__hyb_job_decode_chunked(h, job, cpu_stage, 61, 1, rec);
        gave_up += walk != SL__HUFF_OK;
        both += walk != SL__HUFF_OK && chunked != SL__HUFF_OK;
        only_walk += walk != SL__HUFF_OK && chunked == SL__HUFF_OK;
        sl__hyb_huff_job *wjb = (sl__hyb_huff_job *)(void *)job;
        if (walk != SL__HUFF_OK && chunked == SL__HUFF_OK) { /* the walk without its end rule */
            const int32_t to_end = wjb->to_end;
            wjb->to_end = 0;
            memset(coefs, 0, SL__HYB_HEAD_BYTES + area);
            if (sl__hyb_job_decode(h, job, coefs) != SL__HUFF_OK)
                fail_msg("change %d: the chunked decode accepted what the walk gave up on", r);
            wjb->to_end = to_end;
        }
        if (chunked == SL__HUFF_OK &&
            memcmp(coefs + SL__HYB_HEAD_BYTES, cpu_stage + SL__HYB_HEAD_BYTES, area) != 0)
            fail_msg("change %d: the chunked decode wrote other coefficients than the walk", r);
        if (walk == SL__HUFF_OK && chunked != SL__HUFF_OK)
            fail_msg("change %d: the chunked decode gave up where the walk did not", r);
        if (no_eoi) {
            assert_int_not_equal(walk, SL__HUFF_OK);
            assert_int_not_equal(chunked, SL__HUFF_OK);
            eoi++;
        }
    }
    print_message("%d of 300 changed scans given up on by the walk: %d by the chunked decode "
                  "too, %d only by the walk's end rule\n",
                  gave_up, both, only_walk);
    assert_true(gave_up > 75);
    assert_true(both > 75);
    assert_true(eoi == 12);
    free(rec);
    free(orig);
    free(d);
}

/* The data's restart markers (0xFF 0xD0..0xD7): their offsets, up to cap; returns the count. */
static int restart_markers(const uint8_t *d, size_t n, size_t *at, int cap)
{
    int k = 0;
    for (size_t i = 0; i + 1 < n && k < cap; i++)
        if (d[i] == 0xFF && d[i + 1] >= 0xD0 && d[i + 1] <= 0xD7)
            at[k++] = i;
    return k;
}

/* The decode by intervals of a clean file's job over changed bytes: the same verdict as the
 * walk, every time (it decodes each interval from the walk's own state there, hybrid_job.h),
 * and where both decode, the walk's coefficients. Changes of seven kinds, in turn: bits
 * anywhere; bits among the data's last 40 bytes (the end checks); a marker's number changed
 * (RST3 for RST2); the byte before a marker made a fill byte (0xFF 0xFF 0xD2, which libjpeg
 * reads through and the walk gives up on); a marker gone (its 0xFF changed); the data cut
 * before a marker, or after its 0xFF (a lone 0xFF last). In the whole image the last five
 * are always given up on; in a window, only where the job's rows reach the change. */
enum { KINDS = 7 };
static void intervals_on_changed_bytes(const char *name, const sl__roi *win, int *total,
                                       int *decoded, int *gave_up)
{
    size_t n;
    uint8_t *d = read_data(name, &n);
    stage_job(d, n, win);
    const sl__hyb_head *h = (const sl__hyb_head *)(const void *)job_stage;
    uint8_t *job = job_stage + h->huff_off;
    sl__hyb_huff_job *jb = (sl__hyb_huff_job *)(void *)job;
    assert_true(jb->bits.restart_interval > 0 && sl__hyb_job_intervals(jb) > 1);
    uint8_t *data = job + jb->data_off;
    const uint64_t len = jb->data_len;
    uint8_t *orig = malloc(len);
    assert_non_null(orig);
    memcpy(orig, data, len);
    size_t marks[4096];
    const int nm = restart_markers(orig, len, marks, 4096);
    assert_true(nm >= 3);
    const size_t area = (size_t)h->nblocks * 128;
    int32_t *cnt = malloc((size_t)sl__hyb_job_marker_chunks(jb, 16) * sizeof *cnt);
    assert_non_null(cnt);
    int tried[KINDS] = {0}, given_up[KINDS] = {0};
    uint32_t seed = 11;
    for (int r = 0; r < 280; r++) {
        memcpy(data, orig, len);
        jb->data_len = len;
        seed = seed * 1103515245u + 12345u;
        const size_t m = marks[(seed >> 8) % (uint32_t)nm];
        const int kind = r % KINDS;
        if (kind == 0 || kind == 1) {
            for (int k = 0; k < 1 + r % 4; k++) {
                seed = seed * 1103515245u + 12345u;
                size_t at = kind == 0 ? (seed >> 8) % len : len - 1 - (seed >> 8) % 40;
                data[at] ^= (uint8_t)(1u << (seed >> 28 & 7));
            }
        } else if (kind == 2) {
            data[m + 1] = (uint8_t)(0xD0 + ((data[m + 1] - 0xD0 + 1 + (seed >> 28) % 7) & 7));
        } else if (kind == 3) {
            data[m - 1] = 0xFF;
        } else if (kind == 4) {
            data[m] = 0x12;
        } else {
            jb->data_len = m + (uint64_t)(kind == 6); /* before the marker, or after its 0xFF */
        }
        memset(coefs, 0, SL__HYB_HEAD_BYTES + area);
        const int walk = sl__hyb_job_decode(h, job, coefs);
        memset(cpu_stage, 0, SL__HYB_HEAD_BYTES + area);
        const int chunk = r % 2 ? 16 : SL__HYB_CHUNK;
        const int by = sl__hyb_job_decode_intervals(h, job, cpu_stage, chunk, cnt);
        if (walk != by)
            fail_msg("%s: change %d (kind %d): the walk %s, the decode by intervals %s", name, r,
                     kind, walk == SL__HUFF_OK ? "decoded" : "gave up",
                     by == SL__HUFF_OK ? "decoded" : "gave up");
        if (walk == SL__HUFF_OK &&
            memcmp(coefs + SL__HYB_HEAD_BYTES, cpu_stage + SL__HYB_HEAD_BYTES, area) != 0)
            fail_msg("%s: change %d: the decode by intervals wrote other coefficients", name, r);
        (*total)++;
        *decoded += walk == SL__HUFF_OK;
        *gave_up += walk != SL__HUFF_OK;
        tried[kind]++;
        given_up[kind] += walk != SL__HUFF_OK;
    }
    jb->data_len = len;
    if (!win) /* each marker is checked, and the whole image's end: all given up on */
        for (int k = 2; k < KINDS; k++)
            assert_int_equal(given_up[k], tried[k]);
    free(cnt);
    free(orig);
    free(d);
}

static void test_intervals_on_changed_bytes(void **state)
{
    (void)state;
    static const char *const files[] = {"jpeg_restart_rows_420.jpg", "jpeg_restart_mcu_422.jpg",
                                        "jpeg_restart_gray.jpg", "jpeg_restart_5mcu_420.jpg",
                                        "jpeg_restart_gray_1x4_odd_70x45.jpg"};
    int total = 0, decoded = 0, gave_up = 0;
    for (int f = 0; f < 5; f++) {
        size_t n;
        uint8_t *d = read_data(files[f], &n);
        sl__image_info info;
        char err[256];
        assert_int_equal(sl__jpeg_peek(d, n, &info, err, sizeof err), SL_OK);
        free(d);
        const sl__roi top = {0, 0, info.width / 2, info.height / 3, 0};
        intervals_on_changed_bytes(files[f], NULL, &total, &decoded, &gave_up);
        intervals_on_changed_bytes(files[f], &top, &total, &decoded, &gave_up);
    }
    print_message("%d changed scans with restart intervals: %d decoded by both, %d given up on by "
                  "both\n",
                  total, decoded, gave_up);
    assert_true(decoded > 300); /* bit changes the decoder reads through, changes past a window */
    assert_true(gave_up > 1200);
}

/* Intervals decode exactly where the job ends inside one (a window's rows: 9 MCUs a row, a
 * marker every 5) and with every chunk size from 1 byte (markers cut between chunks). */
static void test_intervals_short_last(void **state)
{
    (void)state;
    size_t n;
    uint8_t *d = read_data("jpeg_restart_5mcu_420.jpg", &n);
    tally t = {0};
    int short_last = 0;
    for (int rows = 1; rows <= 7; rows++) {
        const sl__roi win = {0, rows < 7 ? 16 * rows - 1 : 99, 130, 1, 0}; /* 100 rows */
        compare_job("jpeg_restart_5mcu_420.jpg", d, n, SL__COLOR_RGB, &win, &t);
        const sl__hyb_huff_job *jb =
            (const sl__hyb_huff_job *)(const void *)(job_stage +
                                                     ((const sl__hyb_head *)job_stage)->huff_off);
        assert_int_equal(jb->bits.restart_interval, 5);
        assert_true(jb->rows >= rows && jb->rows <= 7);
        assert_int_equal(sl__hyb_job_intervals(jb), (jb->rows * 9 + 4) / 5);
        short_last += jb->rows * 9 % 5 != 0;
        for (int chunk = 1; chunk <= 40; chunk++) {
            const sl__hyb_head *h = (const sl__hyb_head *)(const void *)job_stage;
            int32_t cnt[8192];
            assert_true(sl__hyb_job_marker_chunks(jb, chunk) <= 8192);
            memset(coefs, 0, SL__HYB_HEAD_BYTES + (size_t)h->nblocks * 128);
            assert_int_equal(
                sl__hyb_job_decode_intervals(h, job_stage + h->huff_off, coefs, chunk, cnt),
                SL__HUFF_OK);
            same_coefs("jpeg_restart_5mcu_420.jpg", "intervals, small chunks",
                       (size_t)h->nblocks * 128);
        }
    }
    assert_int_equal(t.compared, 7);
    assert_true(short_last >= 5);
    free(d);
}

/* The job's data length and the plan's size for d (whole image, RGB). */
static void job_size(const uint8_t *d, size_t n, size_t *bytes, uint64_t *data_len)
{
    *bytes = stage_job(d, n, NULL);
    const sl__hyb_head *h = (const sl__hyb_head *)(const void *)job_stage;
    assert_int_equal(h->huff_off, SL__HYB_HEAD_BYTES);
    *data_len = ((const sl__hyb_huff_job *)(const void *)(job_stage + h->huff_off))->data_len;
}

/* A file with bytes after its end-of-image marker (an appended preview JPEG, as cameras write
 * them; a motion photo's video, here junk with 0xFF bytes; fill bytes): the job's data ends with
 * that marker (jpeg.c's job_data_bytes), so the plan has the size it has without them, and
 * every decode of the job (the walk, in chunks, by intervals; every window and color) gives
 * the CPU half's coefficients, which read the whole file. */
static void test_job_data_ends_at_marker(void **state)
{
    (void)state;
    static const char *const files[] = {"jpeg_420_q90.jpg", "jpeg_restart_rows_420.jpg",
                                        "jpeg_gray.jpg"};
    size_t pn;
    uint8_t *preview = read_data("jpeg_q75_420.jpg", &pn);
    tally t = {0};
    for (int f = 0; f < 3; f++) {
        size_t n;
        uint8_t *d = read_data(files[f], &n);
        assert_true(n > 2 && d[n - 2] == 0xFF && d[n - 1] == 0xD9);
        size_t bytes0;
        uint64_t len0;
        job_size(d, n, &bytes0, &len0);
        for (int tail = 0; tail < 3; tail++) {
            const size_t extra = tail == 0 ? pn : tail == 1 ? 4000 : 64;
            uint8_t *e = malloc(n + extra);
            assert_non_null(e);
            memcpy(e, d, n);
            if (tail == 0) {
                memcpy(e + n, preview, pn);
            } else if (tail == 1) {
                uint32_t seed = 5;
                for (size_t k = 0; k < extra; k++) {
                    seed = seed * 1103515245u + 12345u;
                    e[n + k] = k % 37 == 0 ? 0xFF : (uint8_t)(seed >> 24);
                }
            } else {
                memset(e + n, 0xFF, extra);
            }
            size_t bytes;
            uint64_t len;
            job_size(e, n + extra, &bytes, &len);
            if (bytes != bytes0 || len != len0)
                fail_msg("%s, tail %d: a job of %zu bytes (data %llu) for %zu (data %llu)",
                         files[f], tail, bytes, (unsigned long long)len, bytes0,
                         (unsigned long long)len0);
            const int clean_before = t.clean;
            check_file(files[f], e, n + extra, &t);
            assert_int_equal(t.clean, clean_before + 1);
            free(e);
        }
        free(d);
    }
    assert_true(t.compared >= 3 * 3 * 2 * 7);
    free(preview);
}

/* The end check of a whole image's chunked decode is made by whichever chunk decodes the job's
 * last block, also one before the last chunk (which then holds only the end: a review found the
 * check skipped there): with the end-of-image marker gone, the walk and the chunked decode give
 * up for every chunk size from 16 to 1024 bytes. */
static void test_chunked_end_checked(void **state)
{
    (void)state;
    static const char *const files[] = {"jpeg_gray.jpg", "jpeg_420_q90.jpg"};
    for (int f = 0; f < 2; f++) {
        size_t n, bytes;
        uint8_t *d = read_data(files[f], &n);
        uint64_t len;
        job_size(d, n, &bytes, &len);
        const sl__hyb_head *h = (const sl__hyb_head *)(const void *)job_stage;
        uint8_t *job = job_stage + h->huff_off;
        sl__hyb_huff_job *jb = (sl__hyb_huff_job *)(void *)job;
        uint8_t *data = job + jb->data_off;
        assert_true(jb->to_end && len > 2 && data[len - 2] == 0xFF && data[len - 1] == 0xD9);
        data[len - 2] = 0x12; /* the end-of-image marker gone */
        memset(coefs, 0, SL__HYB_HEAD_BYTES + (size_t)h->nblocks * 128);
        assert_int_not_equal(sl__hyb_job_decode(h, job, coefs), SL__HUFF_OK);
        sl__hyb_chunk *rec = malloc(2 * (size_t)sl__hyb_job_chunks(jb, 16) * sizeof *rec);
        assert_non_null(rec);
        for (int chunk = 16; chunk <= 1024; chunk++) {
            memset(coefs, 0, SL__HYB_HEAD_BYTES + (size_t)h->nblocks * 128);
            if (sl__hyb_job_decode_chunked(h, job, coefs, chunk, chunk % 4, rec) == SL__HUFF_OK)
                fail_msg("%s without its end-of-image marker: the chunked decode (%d bytes) "
                         "accepted it",
                         files[f], chunk);
        }
        free(rec);
        free(d);
    }
}

static int setup(void **state)
{
    (void)state;
    cpu_stage = malloc(STAGE_CAP);
    job_stage = malloc(STAGE_CAP + 64);
    coefs = malloc(STAGE_CAP);
    return cpu_stage && job_stage && coefs ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    free(cpu_stage);
    free(job_stage);
    free(coefs);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_test_data),
        cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_job_on_changed_bytes),
        cmocka_unit_test(test_intervals_on_changed_bytes),
        cmocka_unit_test(test_intervals_short_last),
        cmocka_unit_test(test_job_data_ends_at_marker),
        cmocka_unit_test(test_chunked_end_checked),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
