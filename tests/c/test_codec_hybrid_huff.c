/* tests/c/test_codec_hybrid_huff.c: the hybrid JPEG decoder's own Huffman decoder
 * (src/ops/decoders/jpeg_huff.c) against libjpeg-turbo's, which is the reference.
 *
 * Checks: (1) MCU by MCU, on every single-scan JPEG of make_images.py (every subsampling, odd
 * and tiny sizes, gray, restart intervals per row and per MCU, optimized tables, qualities 10
 * to 100), the blocks sl__huff_mcu writes equal those libjpeg's own decode_mcu writes on a
 * second decompressor over the same file, with nothing given up (so the fast decoder did the
 * work), also when MCUs are skipped; (2) sl__jpeg_hybrid_coefs with and without
 * SL__HYB_LIBJPEG_HUFF give the same status, the same message and the same staging bytes, for
 * every JPEG of the test data (corrupt ones included), windows at the corners, bands, single
 * pixels and whole images, RGB and GRAY, with and without SL__DECODE_TO_END; (3) the same on
 * hundreds of damaged files (tests/c/mutate.h: cuts at many lengths, byte changes in the
 * entropy-coded data, restart markers renumbered or preceded by junk, the end-of-image marker
 * replaced by junk and fill bytes to the end, the hybrid fuzz target's regression inputs),
 * where libjpeg's verdict must stand: some of them decode and some fail, with the same result
 * both ways; (4) the end rule both decoders share (sl__huff_tail) on tails built by hand.
 * Data: also SLUICE_SOURCE_DIR (tests/fuzz/regressions/hybrid).
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

#include <jpeglib.h>

#include <jpegint.h> /* struct jpeg_entropy_decoder: libjpeg's decode_mcu, the reference */

#include "mutate.h"
#include "ops/decoders/codec.h"
#include "ops/decoders/hybrid.h"
#include "ops/decoders/jpeg_huff.h"
#include "testutil.h"

/* Single-scan JPEGs of make_images.py (the progressive ones go through jpeg_read_coefficients). */
static const char *const single_scan[] = {
    "jpeg_444_q90.jpg",        "jpeg_444_odd_131x97.jpg",   "jpeg_422_q90.jpg",
    "jpeg_422_odd_97x131.jpg", "jpeg_420_q90.jpg",          "jpeg_420_odd_97x131.jpg",
    "jpeg_420_odd_301x67.jpg", "jpeg_420_tiny_13x7.jpg",    "jpeg_440_q90.jpg",
    "jpeg_440_odd_101x75.jpg", "jpeg_411_q90.jpg",          "jpeg_411_odd_75x101.jpg",
    "jpeg_gray.jpg",           "jpeg_restart_rows_420.jpg", "jpeg_restart_mcu_422.jpg",
    "jpeg_restart_gray.jpg",   "jpeg_optimized_420.jpg",    "jpeg_q10_420.jpg",
    "jpeg_q50_422.jpg",        "jpeg_q75_420.jpg",          "jpeg_q100_444.jpg",
};
#define NSINGLE ((int)(sizeof single_scan / sizeof single_scan[0]))

static unsigned char *read_data(const char *name, size_t *n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", tu_env_dir("SLUICE_TEST_DATA"), name);
    unsigned char *d = tu_read_file(path, n);
    if (d == NULL)
        fail_msg("cannot read %s", path);
    return d;
}

/* ---- (1) MCU by MCU against libjpeg's decode_mcu ---------------------------------------- */

typedef struct ref_dec {
    struct jpeg_decompress_struct c;
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
} ref_dec;

static void ref_error(j_common_ptr c)
{
    char msg[JMSG_LENGTH_MAX];
    c->err->format_message(c, msg);
    fail_msg("libjpeg: %s", msg); /* a good test file: never */
}

/* A decompressor in raw-data mode, started: the scan set up, nothing decoded. */
static void ref_open(ref_dec *r, const unsigned char *d, size_t n)
{
    memset(r, 0, sizeof *r);
    r->c.err = jpeg_std_error(&r->mgr);
    r->mgr.error_exit = ref_error;
    jpeg_create_decompress(&r->c);
    jpeg_mem_src(&r->c, d, (unsigned long)n);
    assert_int_equal(jpeg_read_header(&r->c, TRUE), JPEG_HEADER_OK);
    r->c.raw_data_out = TRUE;
    r->c.out_color_space = r->c.jpeg_color_space;
    assert_true(jpeg_start_decompress(&r->c));
    assert_false(jpeg_has_multiple_scans(&r->c));
}

/* Every MCU of the file; `skip_every` > 0 skips (mcu NULL) each MCU whose index is a multiple
 * of it in both decoders. Returns the MCUs compared. */
static long compare_mcus(const char *name, int skip_every)
{
    size_t n;
    unsigned char *d = read_data(name, &n);
    ref_dec *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    sl__huff *h = malloc(sizeof *h);
    ref_open(a, d, n);
    ref_open(b, d, n);
    assert_int_equal(sl__huff_init(h, &a->c), SL__HUFF_OK);
    struct jpeg_decompress_struct *c = &b->c;
    JBLOCK ours[D_MAX_BLOCKS_IN_MCU], theirs[D_MAX_BLOCKS_IN_MCU];
    JBLOCKROW po[D_MAX_BLOCKS_IN_MCU], pt[D_MAX_BLOCKS_IN_MCU];
    for (int k = 0; k < D_MAX_BLOCKS_IN_MCU; k++) {
        po[k] = ours + k;
        pt[k] = theirs + k;
    }
    /* jdcoefct.c's decompress_onepass: MCU rows per iMCU row */
    long mcus = 0;
    const jpeg_component_info *only = c->cur_comp_info[0];
    for (JDIMENSION row = 0; row < c->total_iMCU_rows; row++) {
        int rows = c->comps_in_scan > 1           ? 1
                   : row < c->total_iMCU_rows - 1 ? only->v_samp_factor
                                                  : only->last_row_height;
        for (int y = 0; y < rows; y++) {
            for (JDIMENSION x = 0; x < c->MCUs_per_row; x++, mcus++) {
                bool skip = skip_every > 0 && mcus % skip_every == 0;
                memset(ours, 0, sizeof ours);
                memset(theirs, 0, sizeof theirs);
                if (sl__huff_mcu(h, skip ? NULL : po) != SL__HUFF_OK)
                    fail_msg("%s: MCU %ld: the fast decoder gave up", name, mcus);
                assert_true((*c->entropy->decode_mcu)(c, skip ? NULL : pt));
                if (memcmp(ours, theirs, sizeof(JBLOCK) * (size_t)c->blocks_in_MCU) != 0)
                    fail_msg("%s: MCU %ld (iMCU row %u, column %u) differs from libjpeg's", name,
                             mcus, row, x);
            }
        }
    }
    if (sl__huff_finish(h) != SL__HUFF_OK)
        fail_msg("%s: the fast decoder gave up at the end", name);
    jpeg_destroy_decompress(&a->c);
    jpeg_destroy_decompress(&b->c);
    free(h);
    free(a);
    free(b);
    free(d);
    return mcus;
}

static void test_mcus_equal_libjpeg(void **state)
{
    (void)state;
    long total = 0;
    for (int i = 0; i < NSINGLE; i++) {
        total += compare_mcus(single_scan[i], 0);
        compare_mcus(single_scan[i], 3); /* skipped MCUs keep the DC prediction and position */
    }
    assert_true(total > 1000);
}

/* A progressive or arithmetic-coded scan is not one it decodes: it says so at once. */
static void test_gives_up_on_progressive(void **state)
{
    (void)state;
    size_t n;
    unsigned char *d = read_data("jpeg_progressive_420.jpg", &n);
    ref_dec *r = malloc(sizeof *r);
    memset(r, 0, sizeof *r);
    r->c.err = jpeg_std_error(&r->mgr);
    r->mgr.error_exit = ref_error;
    jpeg_create_decompress(&r->c);
    jpeg_mem_src(&r->c, d, (unsigned long)n);
    assert_int_equal(jpeg_read_header(&r->c, TRUE), JPEG_HEADER_OK);
    sl__huff *h = malloc(sizeof *h);
    assert_int_equal(sl__huff_init(h, &r->c), SL__HUFF_GIVE_UP);
    jpeg_destroy_decompress(&r->c);
    free(h);
    free(r);
    free(d);
}

/* sl__huff_tail, the end rule both decoders apply where libjpeg's reader may have read further
 * than theirs, on tails built by hand, against the rule as jpeg_huff_core.h states it: within
 * 24 bytes of q, a marker first is clean; the data's end, fill bytes (0xFF 0xFF ..) running to
 * the end or to a stuffed zero are not; 0xFF 0x00 is one data byte (two of the 24), not a
 * marker; nothing past the 24 bytes or past a marker counts. The libjpeg comparisons above
 * cannot tell 24 from 16 (libjpeg near the data's end reads at most ~8 bytes ahead, and both
 * answers then fall back to it alike), nor catch 0xFF 0x00 taken for a marker: a review's
 * surviving mutants, killed here. */
static void test_tail_rule(void **state)
{
    (void)state;
    enum { JUNK = -1, PAIR = -2, FILL = -3 }; /* n junk bytes, n stuffed 0xFF 0x00, n 0xFF */
    static const struct {
        int parts[10]; /* (kind, count) pairs, or a literal byte >= 0 with count 1; -9: done */
        int ok;
    } cases[] = {
        {{-9}, 0},                                      /* no data at all: the end */
        {{JUNK, 23, -9}, 0},                            /* the end within the 24 bytes */
        {{JUNK, 24, -9}, 0},                            /* the end right after them */
        {{JUNK, 25, -9}, 1},                            /* the end past them */
        {{JUNK, 20, -9}, 0},                            /* (16 would not see it) */
        {{JUNK, 1, 0xFF, 1, 0xD9, 1, -9}, 1},           /* a marker */
        {{JUNK, 23, 0xFF, 1, 0xD9, 1, -9}, 1},          /* a marker at the last byte */
        {{JUNK, 1, PAIR, 1, -9}, 0},                    /* 0xFF 0x00 is data, then the end */
        {{JUNK, 1, PAIR, 1, JUNK, 40, -9}, 1},          /* ... then data past the 24 bytes */
        {{PAIR, 11, JUNK, 1, -9}, 0},                   /* 23 bytes of data, then the end */
        {{PAIR, 12, JUNK, 1, -9}, 1},                   /* 24 bytes, then one more */
        {{PAIR, 3, 0xFF, 1, 0xD0, 1, -9}, 1},           /* data, then a marker */
        {{JUNK, 5, FILL, 3, -9}, 0},                    /* fill bytes to the end */
        {{JUNK, 5, FILL, 30, -9}, 0},                   /* a long run, past the 24 bytes */
        {{JUNK, 23, FILL, 30, -9}, 0},                  /* starting at the last byte */
        {{JUNK, 24, FILL, 30, -9}, 1},                  /* starting past the 24 bytes */
        {{JUNK, 5, FILL, 3, 0xD9, 1, -9}, 1},           /* fill bytes, then a marker's code */
        {{JUNK, 5, FILL, 2, 0x00, 1, JUNK, 40, -9}, 0}, /* fill bytes before a stuffed zero */
        {{JUNK, 5, FILL, 30, 0x00, 1, JUNK, 40, -9}, 0},
        {{JUNK, 2, 0xFF, 1, 0xD9, 1, FILL, 30, -9}, 1}, /* nothing past a marker counts */
        {{JUNK, 2, 0xFF, 1, 0xD9, 1, -9}, 1},           /* the data may end right after it */
    };
    for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++) {
        uint8_t buf[128];
        size_t n = 0;
        for (int k = 0; cases[c].parts[k] != -9; k += 2) {
            const int kind = cases[c].parts[k], count = cases[c].parts[k + 1];
            for (int j = 0; j < count; j++) {
                if (kind == PAIR) {
                    buf[n++] = 0xFF;
                    buf[n++] = 0;
                } else {
                    const uint8_t junk = (uint8_t)(0x11 + 3 * (n % 61)); /* never 0xFF */
                    buf[n++] = kind == JUNK ? junk : kind == FILL ? 0xFF : (uint8_t)kind;
                }
            }
        }
        assert_true(n <= sizeof buf);
        const int got = sl__huff_tail(buf, buf + n) == SL__HUFF_OK;
        if (got != cases[c].ok)
            fail_msg("tail case %d (%zu bytes): %s, the rule says %s", c, n,
                     got ? "clean" : "give up", cases[c].ok ? "clean" : "give up");
    }
}

/* ---- (2), (3) the staging both ways ------------------------------------------------------ */

static unsigned char *stage_a, *stage_b;
#define STAGE_CAP ((size_t)64 << 20)

static void *no_scratch(void *ctx, size_t bytes)
{
    (void)ctx;
    (void)bytes;
    return NULL; /* the hybrid CPU half takes none */
}

static const sl__decode_mem mem = {no_scratch, NULL, (size_t)64 << 20};

typedef struct tally {
    int compared, ok, failed;
} tally;

/* d through sl__jpeg_hybrid_coefs with jpeg_huff.c and with libjpeg's decoder: same status,
 * message and bytes. */
static void compare_staging(const char *name, const unsigned char *d, size_t n, sl__color color,
                            unsigned flags, const sl__roi *win, tally *t)
{
    sl__hyb_head head;
    size_t bytes = 0;
    const char *why = NULL;
    char e1[256] = "", e2[256] = "";
    if (sl__jpeg_hybrid_plan(d, n, color, flags, win, &mem, &head, &bytes, &why, e1, sizeof e1) !=
            SL_OK ||
        head.kind != SL__HYB_COEFS || bytes > STAGE_CAP)
        return;
    memset(stage_a, 0x5a, bytes);
    memset(stage_b, 0x5a, bytes);
    const char *why1 = NULL, *why2 = NULL;
    sl_status s1 = sl__jpeg_hybrid_coefs(d, n, color, flags, win, &mem, stage_a, STAGE_CAP, &why1,
                                         e1, sizeof e1);
    sl_status s2 = sl__jpeg_hybrid_coefs(d, n, color, flags | SL__HYB_LIBJPEG_HUFF, win, &mem,
                                         stage_b, STAGE_CAP, &why2, e2, sizeof e2);
    char what[512];
    snprintf(what, sizeof what, "%s (color %d, flags %#x, window %d,%d %dx%d)", name, (int)color,
             flags, win ? win->x : 0, win ? win->y : 0, win ? win->w : -1, win ? win->h : -1);
    if (s1 != s2)
        fail_msg("%s: status %d with jpeg_huff.c, %d with libjpeg's decoder (%s | %s)", what,
                 (int)s1, (int)s2, e1, e2);
    if (s1 != SL_OK) {
        if (strcmp(e1, e2) != 0)
            fail_msg("%s: messages differ: \"%s\" | \"%s\"", what, e1, e2);
        t->failed++;
    } else {
        if (memcmp(stage_a, stage_b, bytes) != 0) {
            size_t at = 0;
            while (stage_a[at] == stage_b[at])
                at++;
            fail_msg("%s: staging differs at byte %zu of %zu", what, at, bytes);
        }
        t->ok++;
    }
    t->compared++;
}

/* The windows of an image of w x h tried on every file (whole image first). */
static int windows(int w, int h, sl__roi *out)
{
    int k = 0;
    out[k++] = (sl__roi){0, 0, w, h, 0};
    out[k++] = (sl__roi){0, 0, (w + 1) / 2, (h + 1) / 2, 0};         /* top-left */
    out[k++] = (sl__roi){w / 2, h / 2, w - w / 2, h - h / 2, 0};     /* bottom-right */
    out[k++] = (sl__roi){0, h / 3, w, h / 3 > 0 ? h / 3 : 1, 0};     /* a band */
    out[k++] = (sl__roi){w - 1, h - 1, 1, 1, 0};                     /* the last pixel */
    out[k++] = (sl__roi){w / 3, h / 4, w / 3 > 0 ? w / 3 : 1, 1, 0}; /* one row */
    out[k++] = (sl__roi){w / 4, h / 4, (w + 1) / 2, (h + 1) / 2, 0}; /* the centre */
    return k;
}

static void compare_all_ways(const char *name, const unsigned char *d, size_t n, tally *t)
{
    sl__image_info info;
    char err[256];
    if (sl__jpeg_peek(d, n, &info, err, sizeof err) != SL_OK)
        return;
    sl__roi win[8];
    int nw = windows(info.width, info.height, win);
    static const sl__color colors[] = {SL__COLOR_RGB, SL__COLOR_GRAY};
    for (int c = 0; c < 2; c++)
        for (int f = 0; f < 2; f++)
            for (int k = 0; k < nw; k++)
                compare_staging(name, d, n, colors[c], f ? SL__DECODE_TO_END : 0,
                                k ? &win[k] : NULL, t);
}

static void test_staging_equal_libjpeg(void **state)
{
    (void)state;
    char **names;
    int nn = tu_list(tu_env_dir("SLUICE_TEST_DATA"), ".jpg", &names);
    tally t = {0};
    for (int i = 0; i < nn; i++) {
        size_t n;
        unsigned char *d = read_data(names[i], &n);
        compare_all_ways(names[i], d, n, &t);
        free(d);
    }
    tu_free_list(names, nn);
    assert_true(t.ok > 500);
    assert_true(t.failed > 0); /* corrupt_truncated.jpg fails, with libjpeg's message */
}

/* Restart markers of d (single scan): their offsets. */
static int restart_markers(const unsigned char *d, size_t n, size_t *at, int cap)
{
    int k = 0;
    for (size_t i = 0; i + 1 < n && k < cap; i++)
        if (d[i] == 0xFF && d[i + 1] >= 0xD0 && d[i + 1] <= 0xD7)
            at[k++] = i;
    return k;
}

static void test_damaged_equal_libjpeg(void **state)
{
    (void)state;
    static const char *const sources[] = {
        "jpeg_420_q90.jpg",      "jpeg_422_odd_97x131.jpg",   "jpeg_411_odd_75x101.jpg",
        "jpeg_gray.jpg",         "jpeg_restart_rows_420.jpg", "jpeg_restart_mcu_422.jpg",
        "jpeg_restart_gray.jpg", "jpeg_q100_444.jpg",
    };
    tu_corpus corpus = {0};
    for (int i = 0; i < (int)(sizeof sources / sizeof sources[0]); i++) {
        size_t n;
        unsigned char *d = read_data(sources[i], &n);
        tu_add_cuts(&corpus, sources[i], d, n);
        tu_add_changes(&corpus, sources[i], d, n, 24, 77u + (uint32_t)i);
        size_t at[64];
        int m = restart_markers(d, n, at, 64);
        for (int r = 0; r < m; r += (m > 8 ? m / 8 : 1)) {
            unsigned char *e = malloc(n + 1);
            memcpy(e, d, n);
            e[at[r] + 1] = (unsigned char)(0xD0 + ((e[at[r] + 1] - 0xD0 + 3) & 7));
            tu_corpus_add(&corpus, TU_CHANGE, e, n, "%s: restart marker at %zu renumbered",
                          sources[i], at[r]);
            memcpy(e, d, at[r]); /* a junk byte before the marker */
            e[at[r]] = 0x3c;
            memcpy(e + at[r] + 1, d + at[r], n - at[r]);
            tu_corpus_add(&corpus, TU_CHANGE, e, n + 1, "%s: junk before the restart at %zu",
                          sources[i], at[r]);
            free(e);
        }
        /* fill bytes before a stuffed zero: data to libjpeg's slow decoder, a marker to its
         * fast one, whose coefficients stay in the MCU (jpeg_huff.c's refill_slow) */
        tu_add_fill_bytes(&corpus, sources[i], d, n, 8);
        /* the end-of-image marker replaced by k junk bytes and then, to the file's end, f fill
         * bytes (0xFF): libjpeg's reader, which may be up to 16 bytes ahead of jpeg_huff.c's
         * and reads every fill byte looking for a marker's code, hits the end (a premature
         * end) where jpeg_huff.c's may not have read that far: found by the hybrid fuzz
         * target (tests/fuzz/regressions/hybrid/fill-bytes-to-data-end-after-junk.bin) */
        for (int junk = 0; junk <= 26; junk++) {
            /* fill bytes to the end; then 2 or 40 of them and a stuffed zero at the end, which
             * libjpeg reads as one data byte before it asks for more (found by a review); then
             * one 0xFF and a stuffed zero: a data byte too, not a marker */
            static const int fill[] = {1, 9, 40, 2, 40, 1}, zero[] = {0, 0, 0, 1, 1, 1};
            for (int b = 0; b < 6; b++) {
                size_t len = n - 2 + (size_t)junk + (size_t)fill[b] + (size_t)zero[b];
                unsigned char *e = malloc(len);
                memcpy(e, d, n - 2);
                for (int k = 0; k < junk; k++)
                    e[n - 2 + (size_t)k] = (unsigned char)(0x5a + 7 * k);
                memset(e + n - 2 + junk, 0xFF, (size_t)fill[b]);
                if (zero[b])
                    e[len - 1] = 0;
                tu_corpus_add(&corpus, TU_CHANGE, e, len,
                              "%s: %d junk bytes, %d fill bytes%s to the end", sources[i], junk,
                              fill[b], zero[b] ? " and a stuffed zero" : "");
                free(e);
            }
        }
        /* the end-of-image marker replaced by k stuffed 0xFF data bytes (0xFF 0x00), then the
         * file's end or an end-of-image marker: libjpeg's reader reads 8 data bytes ahead,
         * which here are 16 raw bytes, so whether it asks past the data's end depends on
         * where jpeg_huff.c's reader stands within sl__huff_tail's 24 bytes */
        for (int pairs = 0; pairs <= 16; pairs++) {
            for (int eoi = 0; eoi < 2; eoi++) {
                size_t len = n - 2 + 2 * (size_t)pairs + (eoi ? 2 : 0);
                unsigned char *e = malloc(len);
                memcpy(e, d, n - 2);
                for (int k = 0; k < pairs; k++) {
                    e[n - 2 + 2 * (size_t)k] = 0xFF;
                    e[n - 1 + 2 * (size_t)k] = 0;
                }
                if (eoi) {
                    e[len - 2] = 0xFF;
                    e[len - 1] = 0xD9;
                }
                tu_corpus_add(&corpus, TU_CHANGE, e, len, "%s: %d stuffed 0xFF data bytes%s",
                              sources[i], pairs, eoi ? ", then the end-of-image marker" : "");
                free(e);
            }
        }
        free(d);
    }
    /* the hybrid fuzz target's findings (tests/fuzz/regressions/hybrid: a mode byte, then the
     * JPEG), every way here too */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/regressions/hybrid", tu_env_dir("SLUICE_SOURCE_DIR"));
    char **names;
    int nn = tu_list(dir, ".bin", &names);
    assert_true(nn >= 5);
    for (int i = 0; i < nn; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t n = 0;
        unsigned char *d = tu_read_file(path, &n);
        assert_true(d != NULL && n > 1);
        tu_corpus_add(&corpus, TU_CHANGE, d + 1, n - 1, "fuzz finding %s", names[i]);
        free(d);
    }
    tu_free_list(names, nn);
    tally t = {0};
    for (int i = 0; i < corpus.n; i++)
        compare_all_ways(corpus.v[i].name, corpus.v[i].data, corpus.v[i].size, &t);
    tu_corpus_free(&corpus);
    assert_true(t.ok > 100);
    assert_true(t.failed > 100);
}

static int setup(void **state)
{
    (void)state;
    stage_a = malloc(STAGE_CAP);
    stage_b = malloc(STAGE_CAP);
    return stage_a && stage_b ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    free(stage_a);
    free(stage_b);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mcus_equal_libjpeg),
        cmocka_unit_test(test_gives_up_on_progressive),
        cmocka_unit_test(test_tail_rule),
        cmocka_unit_test(test_staging_equal_libjpeg),
        cmocka_unit_test(test_damaged_equal_libjpeg),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
