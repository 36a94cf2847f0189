/* tests/c/test_sweep.c: the hostile-input sweep of the image decoders (issue 15, point 3),
 * through the public C API, under ASan+UBSan in CI (label unit).
 *
 * Inputs (tests/c/mutate.h), made from every good image of $SLUICE_TEST_DATA (make_images.py:
 * baseline, progressive, restart-interval, gray and CMYK JPEGs at every subsampling; PNGs of
 * every color type and depth, palettes, interlaced, 16-bit): truncations at ~80 lengths each,
 * ~80 byte changes each (headers and data), extreme header fields of five JPEGs and five PNGs,
 * decompression bombs in PNG metadata and image data, progressive JPEGs flooded with scans.
 * Each goes through three pipelines, external_source -> decoders.image (RGB and GRAY) and
 * decoders.image_random_crop (RGB), batch 1, max_sample_bytes 64 MiB.
 *
 * Checked for every input: the run returns SL_OK, or a data error (SL_ECORRUPT,
 * SL_EUNSUPPORTED, SL_EINVAL) whose message and detail name the operator, the node, the
 * iteration and sample 0; the three pipelines agree on the verdict (a window decode judges a
 * file as a whole decode does); a decoded image has the size its header announces; every run
 * takes under 10 s; and memory stays bounded: for a header claiming more than 64 MiB of output
 * nothing near that is allocated (sluice's peak, and the process's peak resident set), and no
 * decode takes more than the limit. Every 100 inputs a good file is decoded and compared with
 * Pillow's reference bit for bit (the hostile ones before it left nothing behind). At the end,
 * with the pipelines destroyed, sluice holds exactly the blocks it held before.
 * Pixels of mutated files against Pillow: tests/python/test_hostile_input.py (the reference
 * decoder is a Python library). SLUICE_SWEEP_VERBOSE=1 prints every input's verdicts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memutil.h"
#include "mutate.h"
#include "ops/decoders/codec.h"
#include "sluice/sluice.h"
#include "testutil.h"

#define LIMIT (64 * TU_MIB) /* the pipelines' max_sample_bytes */
#define HANG_S 10.0         /* a run slower than this is a hang */
#define MAX_SOURCES 64
/* The most sluice may hold at once for one run: an output of up to LIMIT, in a batch buffer
 * that grows by 1.5x (the old one freed first: src/core/batch.c), so up to 1.5 x LIMIT of
 * address space, most of it never touched; plus the decoder's scratch. The resident set is
 * held to LIMIT / 2. */
#define SL_BOUND (LIMIT * 3 / 2 + 8 * TU_MIB)
/* The most one run may add to the resident set. Under ASan blocks freed during the run stay
 * resident in its quarantine (libspng doubling a buffer from 8 KiB to 16 MiB touches 32 MiB),
 * and every byte has an eighth more of shadow. */
#define RSS_BOUND (tu_mem_asan() ? LIMIT : LIMIT / 2)

typedef struct source {
    char name[128];
    uint8_t *data;
    size_t size;
} source;

static const char *g_dir;
static source g_src[MAX_SOURCES];
static int g_nsrc;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint8_t *read_data(const char *name, size_t *n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    uint8_t *d = tu_read_file(path, n);
    if (d == NULL)
        fail_msg("cannot read %s", path);
    return d;
}

/* The good images of the manifest ("exact" and "tol1"), read into g_src. */
static int load_sources(void **state)
{
    (void)state;
    char path[1024], line[512], file[256], kind[32];
    snprintf(path, sizeof path, "%s/manifest.txt", g_dir);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        fail_msg("no %s: run tests/data/make_images.py into that directory", path);
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "%255s %31s", file, kind) != 2 || strcmp(kind, "corrupt") == 0)
            continue;
        assert_true(g_nsrc < MAX_SOURCES && strlen(file) < sizeof g_src[0].name);
        source *s = &g_src[g_nsrc++];
        strcpy(s->name, file);
        s->data = read_data(file, &s->size);
    }
    fclose(f);
    return 0;
}

static int free_sources(void **state)
{
    (void)state;
    for (int i = 0; i < g_nsrc; i++)
        free(g_src[i].data);
    return 0;
}

static const source *find_source(const char *name)
{
    for (int i = 0; i < g_nsrc; i++)
        if (strcmp(g_src[i].name, name) == 0)
            return &g_src[i];
    fail_msg("%s is not among the good images of the manifest", name);
    return NULL;
}

/* ---- the pipelines ------------------------------------------------------------------------ */

typedef struct runner {
    const char *op, *color;
    sl_pipeline *p;
    int64_t iter;
} runner;

static void runner_open(runner *r, const char *op, const char *color)
{
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "external_source", "in", "cpu"), SL_OK);
    assert_int_equal(sl_graph_add(g, op, "dec", "cpu"), SL_OK);
    assert_int_equal(sl_graph_input(g, "dec", "in"), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "dec", "output_type", color), SL_OK);
    assert_int_equal(sl_graph_output(g, "dec"), SL_OK);
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 1;
    o.num_threads = 2;
    o.prefetch_queue_depth = 1;
    o.seed = 7;
    o.max_sample_bytes = LIMIT;
    *r = (runner){.op = op, .color = color};
    assert_int_equal(sl_pipeline_create(g, &o, &r->p), SL_OK);
    sl_graph_destroy(g);
    if (sl_pipeline_build(r->p) != SL_OK)
        fail_msg("build %s: %s", op, sl_pipeline_error(r->p));
}

typedef struct outcome {
    sl_status status;
    double secs;
    int64_t h, w, c;
    const uint8_t *px; /* the decoded image, borrowed until the runner's next run */
} outcome;

/* Feeds one input, runs one iteration and checks what comes back; fails the test (naming the
 * input) on a wrong status, a message without its context, or a hang. */
static outcome runner_decode(runner *r, const tu_input *in)
{
    static const uint8_t none = 0;
    const void *data[1] = {in->size ? in->data : &none};
    int64_t shape[1] = {(int64_t)in->size};
    sl_feed f = {
        .num_samples = 1, .ndim = 1, .dtype = SL_DTYPE_UINT8, .shapes = shape, .data = data};
    if (sl_pipeline_feed_input(r->p, "in", &f) != SL_OK)
        fail_msg("feed %s: %s", in->name, sl_pipeline_error(r->p));
    outcome o = {0};
    double t0 = now_s();
    o.status = sl_pipeline_run(r->p);
    o.secs = now_s() - t0;
    int64_t it = r->iter++;
    if (o.secs > HANG_S)
        fail_msg("%s, %s: %.1f s (a hang: more than %.0f s)", in->name, r->op, o.secs, HANG_S);
    if (o.status == SL_OK) {
        const sl_batch *b = sl_pipeline_output(r->p, 0);
        const int64_t *s = sl_batch_shape(b, 0);
        o.h = s[0], o.w = s[1], o.c = s[2];
        o.px = sl_batch_sample_data(b, 0);
        return o;
    }
    sl_error_detail d;
    sl_pipeline_error_detail(r->p, &d);
    const char *msg = sl_pipeline_error(r->p);
    if (o.status != SL_ECORRUPT && o.status != SL_EUNSUPPORTED && o.status != SL_EINVAL)
        fail_msg("%s, %s: %s, not a data error: %s", in->name, r->op, sl_status_name(o.status),
                 msg);
    char sample[32];
    snprintf(sample, sizeof sample, "iteration %lld, sample 0", (long long)it);
    if (!d.op || !d.node || strcmp(d.op, r->op) != 0 || strcmp(d.node, "dec") != 0 ||
        d.iteration != it || d.sample != 0 || d.detail[0] == '\0' ||
        strncmp(msg, r->op, strlen(r->op)) != 0 || strstr(msg, sample) == NULL)
        fail_msg("%s, %s: the error does not name operator, node, iteration %lld and sample 0: "
                 "%s",
                 in->name, r->op, (long long)it, msg);
    return o;
}

/* ---- Pillow's pixels for a good file -------------------------------------------------------- */

/* <file>.rgb.ppm (P6) or <file>.gray.pgm (P5), maxval 255, no comments (make_images.py):
 * malloc'ed pixels. */
static uint8_t *load_ref(const char *file, int channels, int64_t *w, int64_t *h)
{
    char name[256];
    size_t n;
    int width, height, maxval, used;
    snprintf(name, sizeof name, "%s%s", file, channels == 3 ? ".rgb.ppm" : ".gray.pgm");
    uint8_t *d = read_data(name, &n);
    char head[64] = {0};
    memcpy(head, d, n < sizeof head - 1 ? n : sizeof head - 1);
    assert_int_equal(sscanf(head + 2, "%d %d %d%n", &width, &height, &maxval, &used), 3);
    used += 2;
    assert_true(head[0] == 'P' && head[1] == (channels == 3 ? '6' : '5') && maxval == 255);
    assert_int_equal(n - (size_t)used - 1, (size_t)width * (size_t)height * (size_t)channels);
    uint8_t *px = malloc(n);
    memcpy(px, d + used + 1, n - (size_t)used - 1);
    free(d);
    *w = width, *h = height;
    return px;
}

/* A good file through a decoders.image pipeline (RGB or GRAY) gives Pillow's pixels exactly. */
static void check_good(runner *r, const source *s)
{
    tu_input in = {.kind = TU_CUT, .data = s->data, .size = s->size};
    snprintf(in.name, sizeof in.name, "%s (whole, %s)", s->name, r->color);
    int64_t w, h, c = strcmp(r->color, "GRAY") == 0 ? 1 : 3;
    uint8_t *ref = load_ref(s->name, (int)c, &w, &h);
    outcome o = runner_decode(r, &in);
    if (o.status != SL_OK)
        fail_msg("%s: %s", in.name, sl_pipeline_error(r->p));
    assert_true(o.h == h && o.w == w && o.c == c);
    if (memcmp(o.px, ref, (size_t)(w * h * c)) != 0)
        fail_msg("%s: differs from Pillow's decode", in.name);
    free(ref);
}

/* ---- the sweep ------------------------------------------------------------------------------ */

typedef struct tally {
    int inputs, ok[TU_KINDS], failed[TU_KINDS], by_status[SL_EINTERNAL + 1];
    double slowest;
    char slowest_name[224];
    int64_t sl_peak, rss_peak;             /* the most one run took */
    int claims;                            /* runs of a header claiming more than the limit */
    int64_t claim_peak_sl, claim_peak_rss; /* the most one of those took */
    char sl_peak_name[224], rss_peak_name[224];
} tally;

static void build_corpus(tu_corpus *c)
{
    for (int i = 0; i < g_nsrc; i++) {
        tu_add_cuts(c, g_src[i].name, g_src[i].data, g_src[i].size);
        tu_add_changes(c, g_src[i].name, g_src[i].data, g_src[i].size, 64, 1000u + (uint32_t)i);
    }
    static const char *const jpegs[] = {"jpeg_420_q90.jpg", "jpeg_progressive_420.jpg",
                                        "jpeg_restart_rows_420.jpg", "jpeg_gray.jpg",
                                        "jpeg_cmyk.jpg"};
    static const char *const pngs[] = {"png_rgb.png", "png_palette.png", "png_interlaced_rgb.png",
                                       "png_gray16.png", "png_1bit.png"};
    for (size_t i = 0; i < sizeof jpegs / sizeof jpegs[0]; i++) {
        const source *s = find_source(jpegs[i]);
        assert_true(tu_add_jpeg_headers(c, s->name, s->data, s->size) > 100);
    }
    for (size_t i = 0; i < sizeof pngs / sizeof pngs[0]; i++) {
        const source *s = find_source(pngs[i]);
        assert_true(tu_add_png_headers(c, s->name, s->data, s->size) > 50);
    }
    const source *rgb = find_source("png_rgb.png"), *inter = find_source("png_interlaced_rgb.png");
    assert_true(tu_add_png_bombs(c, rgb->name, rgb->data, rgb->size) >= 6);
    assert_true(tu_add_png_bombs(c, inter->name, inter->data, inter->size) >= 6);
    tu_add_jpeg_scan_flood(c, 2896, 44872); /* 1 MiB, 46 s to decode without a scan limit */
    tu_add_jpeg_scan_flood(c, 64, 100000);
}

/* What a header claims: peek's width x height x channels bytes, 0 when peek fails. */
static int64_t claimed_bytes(const tu_input *in, int channels)
{
    sl__image_info info;
    char err[256];
    if (sl__image_peek(in->data, in->size, &info, err, sizeof err) != SL_OK)
        return 0;
    return (int64_t)info.width * info.height * channels;
}

/* One pipeline's run of one input, with the memory it took: no sample over the limit, and for
 * a header claiming more than the limit (claim; 0 when not known) nothing of its size. */
static outcome measured_decode(runner *r, const tu_input *in, int64_t claim, tally *t)
{
    tu_mem before = tu_mem_now();
    tu_mem_reset_peak();
    outcome o = runner_decode(r, in);
    tu_mem after = tu_mem_now();
    int64_t sl = (int64_t)(after.sl_peak_bytes - before.sl_live_bytes);
    int64_t rss = after.rss_peak - before.rss;
    if (o.secs > t->slowest) {
        t->slowest = o.secs;
        snprintf(t->slowest_name, sizeof t->slowest_name, "%s (%s %s)", in->name, r->op, r->color);
    }
    if (sl > SL_BOUND || rss > RSS_BOUND)
        fail_msg("%s, %s: took %lld MiB (sluice's peak) and %lld MiB (resident set)", in->name,
                 r->op, (long long)(sl / TU_MIB), (long long)(rss / TU_MIB));
    if (claim > LIMIT) {
        if (o.status == SL_OK || sl > 4 * TU_MIB || rss > 16 * TU_MIB)
            fail_msg("%s, %s %s: claims %lld MiB, over the limit: %s, took %lld MiB (sluice) "
                     "and %lld KiB (resident)",
                     in->name, r->op, r->color, (long long)(claim / TU_MIB),
                     sl_status_name(o.status), (long long)(sl / TU_MIB), (long long)(rss >> 10));
        t->claims++;
        t->claim_peak_sl = sl > t->claim_peak_sl ? sl : t->claim_peak_sl;
        t->claim_peak_rss = rss > t->claim_peak_rss ? rss : t->claim_peak_rss;
    }
    if (sl > t->sl_peak) {
        t->sl_peak = sl;
        snprintf(t->sl_peak_name, sizeof t->sl_peak_name, "%s (%s %s)", in->name, r->op, r->color);
    }
    if (rss > t->rss_peak) {
        t->rss_peak = rss;
        snprintf(t->rss_peak_name, sizeof t->rss_peak_name, "%s (%s %s)", in->name, r->op,
                 r->color);
    }
    return o;
}

/* One input through the three pipelines. */
static void sweep_one(runner *r, const tu_input *in, tally *t)
{
    outcome o[3];
    o[0] = measured_decode(&r[0], in, claimed_bytes(in, 3), t);
    o[1] = measured_decode(&r[1], in, claimed_bytes(in, 1), t);
    o[2] = measured_decode(&r[2], in, 0, t); /* a random window of the claim */
    /* the three agree: a window, or gray, judges a file as the whole RGB decode does */
    if ((o[0].status == SL_OK) != (o[1].status == SL_OK) ||
        (o[0].status == SL_OK) != (o[2].status == SL_OK))
        fail_msg("%s: decoders.image RGB %s, GRAY %s, image_random_crop %s: %s", in->name,
                 sl_status_name(o[0].status), sl_status_name(o[1].status),
                 sl_status_name(o[2].status),
                 sl_pipeline_error(r[o[0].status != SL_OK ? 0
                                     : o[1].status        ? 1
                                                          : 2]
                                       .p));
    if (getenv("SLUICE_SWEEP_VERBOSE"))
        print_message("%s | %s %s %s | %s\n", in->name, sl_status_name(o[0].status),
                      sl_status_name(o[1].status), sl_status_name(o[2].status),
                      o[0].status ? sl_pipeline_error(r[0].p) : "");
    if (o[0].status == SL_OK) {
        sl__image_info info;
        char err[256];
        assert_int_equal(sl__image_peek(in->data, in->size, &info, err, sizeof err), SL_OK);
        assert_true(o[0].h == info.height && o[0].w == info.width && o[0].c == 3);
        assert_true(o[1].h == info.height && o[1].w == info.width && o[1].c == 1);
        assert_true(o[2].h <= info.height && o[2].w <= info.width && o[2].c == 3);
        t->ok[in->kind]++;
    } else {
        t->failed[in->kind]++;
        t->by_status[o[0].status]++;
    }
    t->inputs++;
}

static void open_runners(runner *r)
{
    runner_open(&r[0], "decoders.image", "RGB");
    runner_open(&r[1], "decoders.image", "GRAY");
    runner_open(&r[2], "decoders.image_random_crop", "RGB");
}

static void report(const tally *t, const tu_corpus *c, double secs)
{
    static const char *const kinds[] = {"cuts", "byte changes", "header fields", "bombs"};
    print_message("test_sweep: %d inputs x 3 pipelines in %.1f s; slowest run %.3f s (%s)\n",
                  t->inputs, secs, t->slowest, t->slowest_name);
    for (int k = 0; k < TU_KINDS; k++)
        print_message("  %-13s %4d decoded, %4d failed\n", kinds[k], t->ok[k], t->failed[k]);
    print_message("  failures: %d SL_ECORRUPT, %d SL_EUNSUPPORTED, %d SL_EINVAL\n",
                  t->by_status[SL_ECORRUPT], t->by_status[SL_EUNSUPPORTED],
                  t->by_status[SL_EINVAL]);
    print_message("  most memory for one input: sluice %.1f MiB (%s), resident %.1f MiB (%s)\n",
                  (double)t->sl_peak / TU_MIB, t->sl_peak_name, (double)t->rss_peak / TU_MIB,
                  t->rss_peak_name);
    print_message("  %d runs of headers claiming more than %lld MiB: at most %.2f MiB (sluice), "
                  "%.2f MiB (resident)%s\n",
                  t->claims, (long long)(LIMIT / TU_MIB), (double)t->claim_peak_sl / TU_MIB,
                  (double)t->claim_peak_rss / TU_MIB, tu_mem_asan() ? " under ASan" : "");
    (void)c;
}

static void test_sweep(void **state)
{
    (void)state;
    tu_corpus c = {0};
    build_corpus(&c);
    runner r[3];
    runner_open(&r[0], "decoders.image", "RGB"); /* the library's one-time setup, first */
    sl_pipeline_destroy(r[0].p);
    tu_mem start = tu_mem_now();
    open_runners(r);
    for (int i = 0; i < g_nsrc; i++) { /* the good files first: Pillow's pixels, buffers grown */
        check_good(&r[0], &g_src[i]);
        check_good(&r[1], &g_src[i]);
    }
    tally t = {0};
    double t0 = now_s();
    for (int i = 0; i < c.n; i++) {
        sweep_one(r, &c.v[i], &t);
        if (i % 100 == 99) { /* nothing the hostile inputs did stays behind */
            check_good(&r[0], &g_src[(i / 100) % g_nsrc]);
            check_good(&r[1], &g_src[(i / 100) % g_nsrc]);
        }
    }
    report(&t, &c, now_s() - t0);
    for (int k = 0; k < 3; k++)
        sl_pipeline_destroy(r[k].p);
    tu_mem end = tu_mem_now();
    assert_int_equal(end.sl_live_count, start.sl_live_count);
    assert_int_equal(end.sl_live_bytes, start.sl_live_bytes);
    /* the sweep is what it says: every kind of input, some decoded and some refused */
    for (int k = 0; k < TU_KINDS; k++)
        assert_true(t.ok[k] + t.failed[k] > 0);
    assert_true(t.ok[TU_CHANGE] > 100 && t.failed[TU_CHANGE] > 100 && t.failed[TU_CUT] > 1000);
    assert_true(t.by_status[SL_ECORRUPT] > 0 && t.by_status[SL_EUNSUPPORTED] > 0);
    assert_true(t.claims >= 20 && t.inputs == c.n);
    tu_corpus_free(&c);
}

/* Progressive JPEGs that repeat cheap scans over the whole image (finding: a valid 1 MiB file
 * of 2896x2896 pixels and 44,873 scans took 46 s to decode): up to 256 scans decode (to the
 * image they describe, all mid-gray), more are refused at once, naming the limit. */
static void test_scan_flood(void **state)
{
    (void)state;
    static const struct {
        int side, ac_scans;
        sl_status want;
    } cases[] = {{2048, 255, SL_OK}, {2048, 256, SL_EUNSUPPORTED}, {2896, 44872, SL_EUNSUPPORTED}};
    tu_corpus c = {0};
    runner r[3];
    open_runners(r);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int at = tu_add_jpeg_scan_flood(&c, cases[i].side, cases[i].ac_scans);
        const tu_input *in = &c.v[at];
        for (int k = 0; k < 3; k++) {
            outcome o = runner_decode(&r[k], in);
            print_message("%s, %s %s: %s in %.2f s\n", in->name, r[k].op, r[k].color,
                          sl_status_name(o.status), o.secs);
            if (o.status != cases[i].want)
                fail_msg("%s: %s", in->name, sl_pipeline_error(r[k].p));
            assert_true(o.secs < 5);
            if (o.status != SL_OK) {
                assert_non_null(strstr(sl_pipeline_error(r[k].p), "more than 256 scans"));
                continue;
            }
            for (int64_t b = 0; b < o.h * o.w * o.c; b++)
                if (o.px[b] != 128)
                    fail_msg("%s, %s: byte %lld is %d, not 128", in->name, r[k].op, (long long)b,
                             o.px[b]);
        }
    }
    print_message("the largest: %zu bytes\n", c.v[c.n - 1].size);
    for (int k = 0; k < 3; k++)
        sl_pipeline_destroy(r[k].p);
    tu_corpus_free(&c);
}

int main(int argc, char **argv)
{
    g_dir = argc > 1 ? argv[1] : tu_env_dir("SLUICE_TEST_DATA");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_flood),
        cmocka_unit_test(test_sweep),
    };
    return cmocka_run_group_tests(tests, load_sources, free_sources);
}
