/* test_random_resized_crop: the window distribution of random_resized_crop against
 * torchvision's RandomResizedCrop.get_params, determinism, and crop-then-resize semantics.
 *
 * Reference statistics (REF below) were produced once, at test-writing time, by running
 * torchvision 0.14.1's own get_params with its own RNG (Debian's /usr/bin/python3):
 *
 *     torch.manual_seed(12345); N = 200000
 *     win = [RandomResizedCrop.get_params(torch.empty(1, H, W), (0.08, 1.0), (3/4, 4/3))
 *            for _ in range(N)]                                # (i, j, h, w) = (y, x, h, w)
 *     area = h * w / (W * H);  la = log(w / h)
 *     mean and standard deviation of area and la; for p in 0.1 0.25 0.5 0.75 0.9:
 *         t = quantile(x, p) + 1e-9 and F(t) = mean(x <= t)    (t is never a reachable value)
 *     fallback = mean(window == torchvision's central-crop fallback window)
 *     pos = mean(j / (W - w)) over windows narrower than the image (0.5 when uniform)
 *
 * Tolerances (n sluice draws, N = 200000 reference draws): a mean must lie within
 * 4 * sd * sqrt(1/n + 1/N) of the reference; an empirical CDF value F_n(t) within
 * 4 * sqrt(F(1 - F) * (1/n + 1/N)) + 1/n of F(t) (binomial standard errors; + 1/n for the
 * discreteness of rounded windows); a fallback rate within 4 * sqrt(p(1 - p)(1/n + 1/N)) +
 * 1/n. Four standard errors: a false failure has probability ~6e-5 per check, and the seeds are
 * fixed, so a run always passes or always fails.
 *
 * Windows are checked twice: from the generator itself (sl__random_window, 20,000 draws on
 * 500 x 375 and 200 x 20) and through the operator, which never shows its window: a 60 x 40
 * image whose two channels hold each pixel's (x, y) is resized with INTERP_NN to 64 x 64 (at
 * least the window's size), so output pixel (0, 0) is the window's top-left pixel and (63, 63)
 * its bottom-right one (4,000 samples). Determinism: same seed -> same bytes for any thread
 * count, another seed -> other windows. Semantics: with the same explicit seed two nodes draw
 * the same windows, so the CUBIC output of one equals `resize` of the crops the other reveals.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/sluice.h"

#include "ops/image/crop_window.h"
#include "testutil.h"

typedef struct ref_stats {
    int W, H;
    double area_mean, area_sd, la_mean, la_sd, fallback;
    double area_q[5][2], la_q[5][2]; /* threshold t, F(t) = P(x <= t) */
    double pos;
} ref_stats;

/* Produced by the script in the header comment (torchvision 0.14.1a0, N = 200000). */
static const ref_stats REF_500x375 = {500,
                                      375,
                                      0.432327,
                                      0.216198,
                                      0.029938,
                                      0.164666,
                                      0.000010,
                                      {{0.147690668, 0.100030},
                                       {0.249973334, 0.250035},
                                       {0.420746668, 0.500030},
                                       {0.592368001, 0.750015},
                                       {0.735232001, 0.900010}},
                                      {{-0.210989451, 0.100010},
                                       {-0.107144636, 0.250020},
                                       {0.044617066, 0.500005},
                                       {0.174478380, 0.750035},
                                       {0.243879451, 0.900020}},
                                      0.500075};
static const ref_stats REF_60x40 = {60,
                                    40,
                                    0.397220,
                                    0.194680,
                                    0.031298,
                                    0.165052,
                                    0.000250,
                                    {{0.141666668, 0.101660},
                                     {0.236250001, 0.254030},
                                     {0.386666668, 0.503935},
                                     {0.539583334, 0.752165},
                                     {0.666666668, 0.900755}},
                                    {{-0.207639364, 0.104100},
                                     {-0.105360515, 0.256045},
                                     {0.048790165, 0.503225},
                                     {0.175890667, 0.751725},
                                     {0.245122459, 0.903215}},
                                    0.499992};
/* 200 x 20: most draws are too tall; the fallback is h = 20, w = round(20 * 4/3) = 27,
 * x = (200 - 27) / 2 = 86, y = 0. Only the fallback rate and the mean area are used. */
static const ref_stats REF_200x20 = {200,      20,       0.125898, 0.017131, 0.252616,
                                     0.104451, 0.746620, {{0}},    {{0}},    0.497779};
static const sl__window FALLBACK_200x20 = {86, 0, 27, 20};

#define NREF 200000.0
static const double AREA[2] = {0.08, 1.0};
static const double RATIO[2] = {0.75, 4.0 / 3.0};

/* ---- statistics -------------------------------------------------------------------------- */

static void check_mean(const char *what, const double *x, int n, double mean, double sd)
{
    double s = 0;
    for (int k = 0; k < n; k++)
        s += x[k];
    double tol = 4 * sd * sqrt(1.0 / n + 1.0 / NREF);
    printf("  %-22s mean %.5f  ref %.5f  tol %.5f\n", what, s / n, mean, tol);
    if (!(fabs(s / n - mean) <= tol))
        fail_msg("%s: mean %.5f, torchvision %.5f (tolerance %.5f)", what, s / n, mean, tol);
}

static void check_cdf(const char *what, const double *x, int n, const double q[5][2])
{
    for (int j = 0; j < 5; j++) {
        int below = 0;
        for (int k = 0; k < n; k++)
            below += x[k] <= q[j][0];
        double f = (double)below / n, p = q[j][1];
        double tol = 4 * sqrt(p * (1 - p) * (1.0 / n + 1.0 / NREF)) + 1.0 / n;
        printf("  %-22s F(%+.4f) = %.4f  ref %.4f  tol %.4f\n", what, q[j][0], f, p, tol);
        if (!(fabs(f - p) <= tol))
            fail_msg("%s: P(x <= %g) = %.4f, torchvision %.4f (tolerance %.4f)", what, q[j][0], f,
                     p, tol);
    }
}

static void check_rate(const char *what, int hits, int n, double p)
{
    double tol = 4 * sqrt(p * (1 - p) * (1.0 / n + 1.0 / NREF)) + 1.0 / n;
    printf("  %-22s %.4f  ref %.4f  tol %.4f\n", what, (double)hits / n, p, tol);
    if (!(fabs((double)hits / n - p) <= tol))
        fail_msg("%s: rate %.4f, torchvision %.4f (tolerance %.4f)", what, (double)hits / n, p,
                 tol);
}

static bool same_window(const sl__window *a, const sl__window *b)
{
    return a->x == b->x && a->y == b->y && a->w == b->w && a->h == b->h;
}

/* Every statistic of REF (quantiles only when full) for n windows of a W x H image. */
static void check_windows(const sl__window *win, int n, const ref_stats *ref, bool full,
                          const sl__window *fallback)
{
    double *area = malloc(sizeof(double) * (size_t)n), *la = malloc(sizeof(double) * (size_t)n);
    double *pos = malloc(sizeof(double) * (size_t)n);
    int npos = 0, nfall = 0;
    for (int k = 0; k < n; k++) {
        const sl__window *w = &win[k];
        if (w->x < 0 || w->y < 0 || w->w < 1 || w->h < 1 || w->x + w->w > ref->W ||
            w->y + w->h > ref->H)
            fail_msg("window %d (%d, %d, %d x %d) is not inside %d x %d", k, w->x, w->y, w->w, w->h,
                     ref->W, ref->H);
        area[k] = (double)w->w * w->h / ((double)ref->W * ref->H);
        la[k] = log((double)w->w / w->h);
        if (w->w < ref->W)
            pos[npos++] = (double)w->x / (ref->W - w->w);
        nfall += fallback && same_window(w, fallback);
    }
    printf("%d x %d, %d windows:\n", ref->W, ref->H, n);
    check_mean("area fraction", area, n, ref->area_mean, ref->area_sd);
    check_rate("central fallback", nfall, n, ref->fallback);
    if (full) {
        check_mean("log aspect", la, n, ref->la_mean, ref->la_sd);
        check_cdf("area fraction", area, n, ref->area_q);
        check_cdf("log aspect", la, n, ref->la_q);
        check_mean("x / (W - w)", pos, npos, ref->pos, sqrt(1.0 / 12));
    }
    free(area);
    free(la);
    free(pos);
}

/* ---- the generator ----------------------------------------------------------------------- */

#define NDIRECT 20000

static void draw_direct(int W, int H, uint64_t seed, sl__window *win, int *accepted)
{
    *accepted = 0;
    for (int k = 0; k < NDIRECT; k++) {
        sl_rng r;
        sl_rng_init(&r, seed, 0, (uint64_t)k);
        *accepted += sl__random_window(&r, W, H, AREA, RATIO, 10, &win[k]);
    }
}

static void test_generator_500x375(void **state)
{
    (void)state;
    sl__window *win = malloc(sizeof(sl__window) * NDIRECT);
    int accepted;
    draw_direct(500, 375, 1, win, &accepted);
    check_windows(win, NDIRECT, &REF_500x375, true, NULL);
    check_rate("fallback (returned)", NDIRECT - accepted, NDIRECT, REF_500x375.fallback);
    free(win);
}

static void test_generator_fallback_200x20(void **state)
{
    (void)state;
    sl__window *win = malloc(sizeof(sl__window) * NDIRECT);
    int accepted;
    draw_direct(200, 20, 2, win, &accepted);
    check_windows(win, NDIRECT, &REF_200x20, false, &FALLBACK_200x20);
    check_rate("fallback (returned)", NDIRECT - accepted, NDIRECT, REF_200x20.fallback);
    free(win);
}

/* Odd shapes and ranges: the window is always inside the image and non-empty. */
static void test_generator_edges(void **state)
{
    (void)state;
    static const int dims[][2] = {{1, 1}, {1, 1000}, {1000, 1}, {2, 3}, {7, 1}, {3, 500}};
    static const double areas[][2] = {{0.08, 1.0}, {1.0, 1.0}, {1e-6, 1e-6}, {0.5, 0.5}};
    static const double ratios[][2] = {{0.75, 4.0 / 3}, {0.01, 100}, {5, 5}, {0.2, 0.2}};
    sl__window w;
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
        for (size_t a = 0; a < sizeof areas / sizeof areas[0]; a++)
            for (size_t q = 0; q < sizeof ratios / sizeof ratios[0]; q++)
                for (int k = 0; k < 50; k++) {
                    sl_rng r;
                    int W = dims[d][0], H = dims[d][1];
                    sl_rng_init(&r, 3, d * 100 + a * 10 + q, (uint64_t)k);
                    sl__random_window(&r, W, H, areas[a], ratios[q], k % 4, &w);
                    if (w.x < 0 || w.y < 0 || w.w < 1 || w.h < 1 || w.x + w.w > W || w.y + w.h > H)
                        fail_msg("%d x %d, area %g, ratio %g: window (%d, %d, %d x %d)", W, H,
                                 areas[a][0], ratios[q][0], w.x, w.y, w.w, w.h);
                }
    /* area 1 at the image's own aspect ratio: the whole image, at once */
    sl_rng r;
    sl_rng_init(&r, 4, 0, 0);
    double own[2] = {500.0 / 375, 500.0 / 375}, one[2] = {1, 1};
    assert_true(sl__random_window(&r, 500, 375, one, own, 1, &w));
    assert_true(same_window(&w, &(sl__window){0, 0, 500, 375}));
    /* an empty image gives an empty window */
    assert_false(sl__random_window(&r, 0, 5, AREA, RATIO, 10, &w));
    assert_int_equal(w.w, 0);
    assert_int_equal(w.h, 5);
}

/* ---- through the operator ---------------------------------------------------------------- */

/* A W x H image whose channel 0 holds x and channel 1 holds y. */
static uint8_t *coord_image(int W, int H)
{
    uint8_t *img = malloc((size_t)W * H * 2);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            img[(y * W + x) * 2] = (uint8_t)x;
            img[(y * W + x) * 2 + 1] = (uint8_t)y;
        }
    return img;
}

/* A smooth 3-channel pattern (so resampling errors would show). */
static uint8_t *pattern_image(int W, int H)
{
    uint8_t *img = malloc((size_t)W * H * 3);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < 3; c++)
                img[(y * W + x) * 3 + c] =
                    (uint8_t)(127.5 + 127 * sin(0.31 * x + 0.17 * y * (c + 1) + c));
    return img;
}

/* Feeds n copies of one HWC image to external_source `name`. */
static void feed_copies(sl_pipeline *p, const char *name, const uint8_t *img, int H, int W, int C,
                        int n)
{
    int64_t *shapes = malloc(sizeof(int64_t) * 3 * (size_t)n);
    const void **data = malloc(sizeof(void *) * (size_t)n);
    for (int i = 0; i < n; i++) {
        shapes[3 * i] = H, shapes[3 * i + 1] = W, shapes[3 * i + 2] = C;
        data[i] = img;
    }
    sl_feed f = {.num_samples = n,
                 .ndim = 3,
                 .dtype = SL_DTYPE_UINT8,
                 .layout = "HWC",
                 .shapes = shapes,
                 .data = data};
    if (sl_pipeline_feed_input(p, name, &f) != SL_OK)
        fail_msg("feed %s: %s", name, sl_pipeline_error(p));
    free(shapes);
    free(data);
}

static void add(sl_graph *g, const char *op, const char *name, const char *input,
                const char *const *kv)
{
    assert_int_equal(sl_graph_add(g, op, name, NULL), SL_OK);
    if (input)
        assert_int_equal(sl_graph_input(g, name, input), SL_OK);
    for (int k = 0; kv && kv[k]; k += 2)
        if (sl_graph_arg_json(g, name, kv[k], kv[k + 1]) != SL_OK)
            fail_msg("%s.%s = %s: %s", name, kv[k], kv[k + 1], sl_last_error());
}

static sl_pipeline *build(sl_graph *g, int batch, int threads)
{
    sl_pipeline_options o;
    sl_pipeline *p = NULL;
    sl_pipeline_options_init(&o);
    o.batch_size = batch;
    o.num_threads = threads;
    o.prefetch_queue_depth = 1;
    o.seed = 5;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    sl_graph_destroy(g);
    if (sl_pipeline_build(p) != SL_OK)
        fail_msg("build: %s", sl_pipeline_error(p));
    return p;
}

static void run_ok(sl_pipeline *p)
{
    if (sl_pipeline_run(p) != SL_OK)
        fail_msg("run: %s", sl_pipeline_error(p));
}

/* external_source "in" -> random_resized_crop "rrc" (NN to out_h x out_w) on a coordinate
 * image; returns the windows of iters * batch samples. */
static sl__window *op_windows(int W, int H, int out_h, int out_w, int batch, int iters,
                              const char *seed)
{
    char size[64];
    snprintf(size, sizeof size, "[%d, %d]", out_h, out_w);
    const char *kv[] = {"size",
                        size,
                        "interp_type",
                        "\"INTERP_NN\"",
                        "random_aspect_ratio",
                        "[0.75, 1.3333333333333333]",
                        "seed",
                        seed,
                        NULL};
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    add(g, "external_source", "in", NULL, NULL);
    add(g, "random_resized_crop", "rrc", "in", kv);
    assert_int_equal(sl_graph_output(g, "rrc"), SL_OK);
    sl_pipeline *p = build(g, batch, 4);
    uint8_t *img = coord_image(W, H);
    sl__window *win = malloc(sizeof(sl__window) * (size_t)(batch * iters));
    for (int it = 0; it < iters; it++) {
        feed_copies(p, "in", img, H, W, 2, batch);
        run_ok(p);
        const sl_batch *b = sl_pipeline_output(p, 0);
        for (int i = 0; i < batch; i++) {
            const uint8_t *o = sl_batch_sample_data(b, i);
            const uint8_t *last = o + ((size_t)out_h * out_w - 1) * 2;
            sl__window *w = &win[it * batch + i];
            *w = (sl__window){o[0], o[1], last[0] - o[0] + 1, last[1] - o[1] + 1};
        }
    }
    free(img);
    sl_pipeline_destroy(p);
    return win;
}

static void test_op_distribution_60x40(void **state)
{
    (void)state;
    sl__window *win = op_windows(60, 40, 64, 64, 1000, 4, "7");
    check_windows(win, 4000, &REF_60x40, true, NULL);
    free(win);
}

static void test_op_fallback_200x20(void **state)
{
    (void)state;
    sl__window *win = op_windows(200, 20, 24, 200, 1000, 2, "8");
    check_windows(win, 2000, &REF_200x20, false, &FALLBACK_200x20);
    free(win);
}

/* Hash of `iters` outputs of rrc (LINEAR, 3 channels) on the pattern image. */
static uint64_t op_hash(const char *seed, int threads, int iters)
{
    const char *kv[] = {"size", "[24, 20]", "seed", seed, NULL};
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    add(g, "external_source", "in", NULL, NULL);
    add(g, "random_resized_crop", "rrc", "in", kv);
    assert_int_equal(sl_graph_output(g, "rrc"), SL_OK);
    sl_pipeline *p = build(g, 16, threads);
    uint8_t *img = pattern_image(60, 40);
    uint64_t h = 0xcbf29ce484222325ull;
    for (int it = 0; it < iters; it++) {
        feed_copies(p, "in", img, 40, 60, 3, 16);
        run_ok(p);
        h = tu_hash_batch(sl_pipeline_output(p, 0), h);
    }
    free(img);
    sl_pipeline_destroy(p);
    return h;
}

static void test_op_determinism(void **state)
{
    (void)state;
    uint64_t a = op_hash("11", 1, 3);
    assert_true(a == op_hash("11", 4, 3));
    assert_true(a == op_hash("11", 2, 3));
    assert_true(a != op_hash("12", 2, 3));
    /* windows differ between samples and iterations (not one window reused) */
    sl__window *win = op_windows(60, 40, 64, 64, 8, 2, "13");
    int same = 0;
    for (int k = 1; k < 16; k++)
        same += same_window(&win[k], &win[0]);
    assert_true(same < 3);
    free(win);
}

/* Two nodes with the same explicit seed draw the same windows: "win" (NN on the coordinate
 * image) reveals them, "img" (CUBIC, antialiased) resizes the pattern; `resize` of each
 * revealed crop, cut here, must give img's output exactly. */
static void test_op_equals_resize_of_crop(void **state)
{
    (void)state;
    enum { N = 12, W = 60, H = 40, OH = 21, OW = 33 };
    const char *kv_win[] = {"size", "[64, 64]", "interp_type", "\"INTERP_NN\"", "seed", "99", NULL};
    const char *kv_img[] = {"size", "[21, 33]", "interp_type", "\"INTERP_CUBIC\"",
                            "seed", "99",       NULL};
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    add(g, "external_source", "coords", NULL, NULL);
    add(g, "external_source", "pattern", NULL, NULL);
    add(g, "random_resized_crop", "win", "coords", kv_win);
    add(g, "random_resized_crop", "img", "pattern", kv_img);
    assert_int_equal(sl_graph_output(g, "win"), SL_OK);
    assert_int_equal(sl_graph_output(g, "img"), SL_OK);
    sl_pipeline *p = build(g, N, 2);
    uint8_t *coords = coord_image(W, H), *pat = pattern_image(W, H);
    feed_copies(p, "coords", coords, H, W, 2, N);
    feed_copies(p, "pattern", pat, H, W, 3, N);
    run_ok(p);

    /* the crops, cut here, through resize */
    const char *kv_rs[] = {"resize_x",         "33", "resize_y", "21", "interp_type",
                           "\"INTERP_CUBIC\"", NULL};
    assert_int_equal(sl_graph_create(&g), SL_OK);
    add(g, "external_source", "crops", NULL, NULL);
    add(g, "resize", "rs", "crops", kv_rs);
    assert_int_equal(sl_graph_output(g, "rs"), SL_OK);
    sl_pipeline *q = build(g, N, 2);
    int64_t shapes[N * 3];
    const void *data[N];
    uint8_t *crops[N];
    const sl_batch *wb = sl_pipeline_output(p, 0);
    int partial = 0;
    for (int i = 0; i < N; i++) {
        const uint8_t *o = sl_batch_sample_data(wb, i), *last = o + (64 * 64 - 1) * 2;
        int x = o[0], y = o[1], w = last[0] - x + 1, h = last[1] - y + 1;
        partial += w < W || h < H;
        crops[i] = malloc((size_t)w * h * 3);
        for (int r = 0; r < h; r++)
            memcpy(crops[i] + (size_t)r * w * 3, pat + ((size_t)(y + r) * W + x) * 3,
                   (size_t)w * 3);
        shapes[3 * i] = h, shapes[3 * i + 1] = w, shapes[3 * i + 2] = 3;
        data[i] = crops[i];
    }
    assert_true(partial > N / 2); /* real crops, not whole images */
    sl_feed f = {.num_samples = N,
                 .ndim = 3,
                 .dtype = SL_DTYPE_UINT8,
                 .layout = "HWC",
                 .shapes = shapes,
                 .data = data};
    assert_int_equal(sl_pipeline_feed_input(q, "crops", &f), SL_OK);
    run_ok(q);
    const sl_batch *a = sl_pipeline_output(p, 1), *b = sl_pipeline_output(q, 0);
    for (int i = 0; i < N; i++) {
        const int64_t *s = sl_batch_shape(a, i);
        assert_true(s[0] == OH && s[1] == OW && s[2] == 3);
        if (memcmp(sl_batch_sample_data(a, i), sl_batch_sample_data(b, i), OH * OW * 3) != 0)
            fail_msg("sample %d: random_resized_crop differs from resize of its crop", i);
        free(crops[i]);
    }
    free(coords);
    free(pat);
    sl_pipeline_destroy(q);
    sl_pipeline_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generator_500x375),
        cmocka_unit_test(test_generator_fallback_200x20),
        cmocka_unit_test(test_generator_edges),
        cmocka_unit_test(test_op_distribution_60x40),
        cmocka_unit_test(test_op_fallback_200x20),
        cmocka_unit_test(test_op_determinism),
        cmocka_unit_test(test_op_equals_resize_of_crop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
