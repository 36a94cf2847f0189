/* tests/c/test_image_random_crop.c: decoders.image_random_crop against independent paths.
 *
 * - The window, decoded alone, equals the same pixels of a full decode (decoders.image), at a
 *   position the test finds by search, for JPEGs of every subsampling and PNGs.
 * - With the whole image as the only possible window it equals decoders.image exactly.
 * - With `size`: without DCT scaling it equals image_random_crop (no size) + resize of the same
 *   window exactly; with DCT scaling (window >= 4x size: 1/2 still >= 2x) it stays within a
 *   stated tolerance.
 * - Same seed, same windows, for 1 and 4 threads; a corrupt file names the file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "testutil.h"

/* The decoder test images listed "exact" in the manifest (JPEG and PNG, many subsamplings). */
static int exact_files(char ***files)
{
    const char *dir = tu_env_dir("SLUICE_TEST_DATA");
    char path[1024], name[256], kind[32];
    snprintf(path, sizeof path, "%s/manifest.txt", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int n = 0;
    *files = NULL;
    while (fscanf(f, "%255s %31s", name, kind) == 2) {
        if (strcmp(kind, "exact") != 0)
            continue;
        *files = realloc(*files, sizeof(char *) * (size_t)(n + 1));
        snprintf(path, sizeof path, "%s/%s", dir, name);
        (*files)[n++] = strdup(path);
    }
    fclose(f);
    return n;
}

/* reader over `files` -> full decode "full" and image_random_crop "crop" (+ extra args). */
static sl_pipeline *make(char **files, int n, int threads, const char *crop_args_json[][2])
{
    sl_graph *g;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "readers.file", "reader", NULL), SL_OK);
    assert_int_equal(sl_graph_arg_strs(g, "reader", "files", (const char *const *)files, n), SL_OK);
    assert_int_equal(sl_graph_add(g, "decoders.image", "full", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "full", "reader"), SL_OK);
    assert_int_equal(sl_graph_add(g, "decoders.image_random_crop", "crop", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "crop", "reader"), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "crop", "seed", 77), SL_OK);
    for (int k = 0; crop_args_json && crop_args_json[k][0]; k++)
        assert_int_equal(sl_graph_arg_json(g, "crop", crop_args_json[k][0], crop_args_json[k][1]),
                         SL_OK);
    assert_int_equal(sl_graph_output(g, "full"), SL_OK);
    assert_int_equal(sl_graph_output(g, "crop"), SL_OK);
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = n;
    o.num_threads = threads;
    o.prefetch_queue_depth = 1;
    sl_pipeline *p;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    sl_graph_destroy(g);
    if (sl_pipeline_build(p) != SL_OK)
        fail_msg("%s", sl_pipeline_error(p));
    return p;
}

/* Finds (x, y) where full[y:y+h, x:x+w] == crop exactly; returns false if nowhere. */
static bool find_window(const sl_batch *full, const sl_batch *crop, int i)
{
    const int64_t *fs = sl_batch_shape(full, i), *cs = sl_batch_shape(crop, i);
    const uint8_t *f = sl_batch_sample_data(full, i), *c = sl_batch_sample_data(crop, i);
    int64_t row = cs[1] * cs[2];
    for (int64_t y = 0; y + cs[0] <= fs[0]; y++) {
        for (int64_t x = 0; x + cs[1] <= fs[1]; x++) {
            bool same = true;
            for (int64_t r = 0; same && r < cs[0]; r++)
                same = memcmp(f + ((y + r) * fs[1] + x) * fs[2], c + r * row, (size_t)row) == 0;
            if (same)
                return true;
        }
    }
    return false;
}

static void test_window_equals_full_decode_crop(void **state)
{
    char **files;
    int n = exact_files(&files);
    assert_true(n >= 10);
    sl_pipeline *p = make(files, n, 2, NULL);
    for (int it = 0; it < 3; it++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        const sl_batch *full = sl_pipeline_output(p, 0), *crop = sl_pipeline_output(p, 1);
        for (int i = 0; i < n; i++) {
            const int64_t *fs = sl_batch_shape(full, i), *cs = sl_batch_shape(crop, i);
            double area = (double)(cs[0] * cs[1]) / (double)(fs[0] * fs[1]);
            assert_int_equal(cs[2], 3);
            assert_true(cs[0] >= 1 && cs[1] >= 1 && cs[0] <= fs[0] && cs[1] <= fs[1]);
            assert_true(area <= 1.0);
            if (!find_window(full, crop, i))
                fail_msg("iteration %d, %s: the %lldx%lld window is no crop of the full decode", it,
                         files[i], (long long)cs[1], (long long)cs[0]);
        }
    }
    sl_pipeline_destroy(p);
    tu_free_list(files, n);
}

static void test_whole_image_window(void **state)
{
    char **files;
    int n = exact_files(&files);
    const char *args[][2] = {{"random_area", "[1.0, 1.0]"},
                             {"random_aspect_ratio", "[0.01, 100.0]"},
                             {"num_attempts", "1"},
                             {NULL, NULL}};
    sl_pipeline *p = make(files, n, 2, args);
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    uint64_t a = tu_hash_batch(sl_pipeline_output(p, 0), 1);
    uint64_t b = tu_hash_batch(sl_pipeline_output(p, 1), 1);
    assert_true(a == b);
    sl_pipeline_destroy(p);
    tu_free_list(files, n);
}

/* image_random_crop(size) vs image_random_crop (same seed: same window) + resize to size. */
static void compare_with_resize(const char *size, double max_mean, int max_abs, bool want_scaled)
{
    char **files;
    int n = exact_files(&files);
    sl_graph *g;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    sl_graph_add(g, "readers.file", "reader", NULL);
    sl_graph_arg_strs(g, "reader", "files", (const char *const *)files, n);
    sl_graph_add(g, "decoders.image_random_crop", "win", NULL);
    sl_graph_input(g, "win", "reader");
    sl_graph_arg_int(g, "win", "seed", 5);
    sl_graph_add(g, "resize", "rs", NULL);
    sl_graph_input(g, "rs", "win");
    sl_graph_arg_json(g, "rs", "size", size);
    sl_graph_arg_bool(g, "rs", "subpixel_scale", false);
    sl_graph_add(g, "decoders.image_random_crop", "fused", NULL);
    sl_graph_input(g, "fused", "reader");
    sl_graph_arg_int(g, "fused", "seed", 5);
    sl_graph_arg_json(g, "fused", "size", size);
    sl_graph_output(g, "rs");
    sl_graph_output(g, "fused");
    sl_graph_output(g, "win");
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = n;
    o.num_threads = 2;
    sl_pipeline *p;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    if (sl_pipeline_build(p) != SL_OK)
        fail_msg("%s", sl_pipeline_error(p));
    int scaled = 0;
    double worst_mean = 0;
    for (int it = 0; it < 3; it++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        const sl_batch *a = sl_pipeline_output(p, 0), *b = sl_pipeline_output(p, 1);
        const sl_batch *win = sl_pipeline_output(p, 2);
        for (int i = 0; i < n; i++) {
            int64_t m = sl_batch_sample_numel(a, i), worst = 0;
            assert_int_equal(m, sl_batch_sample_numel(b, i));
            const uint8_t *x = sl_batch_sample_data(a, i), *y = sl_batch_sample_data(b, i);
            double sum = 0;
            for (int64_t k = 0; k < m; k++) {
                int d = abs((int)x[k] - (int)y[k]);
                sum += d;
                worst = d > worst ? d : worst;
            }
            const int64_t *ws = sl_batch_shape(win, i), *os = sl_batch_shape(a, i);
            bool jpeg = strstr(files[i], ".jpg") != NULL;
            /* DCT-scaled: at 1/2 (the largest reduced scale) still >= 2 x size */
            scaled += jpeg && ws[0] >= 4 * os[0] && ws[1] >= 4 * os[1];
            worst_mean = sum / (double)m > worst_mean ? sum / (double)m : worst_mean;
            if (sum / (double)m > max_mean || worst > max_abs)
                fail_msg("%s: mean |diff| %.3f, max %lld (window %lldx%lld -> %lldx%lld)", files[i],
                         sum / (double)m, (long long)worst, (long long)ws[1], (long long)ws[0],
                         (long long)os[1], (long long)os[0]);
        }
    }
    if (want_scaled) {
        printf("DCT-scaled windows: %d, worst mean |diff| %.3f\n", scaled, worst_mean);
        assert_true(scaled >= 5); /* the DCT path really ran */
    }
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
    tu_free_list(files, n);
}

static void test_size_without_dct_scaling_is_exact(void **state)
{
    compare_with_resize("[400, 360]", 0.0, 0, false); /* windows < 4 x size: scale 8/8 */
}

static void test_size_with_dct_scaling_within_tolerance(void **state)
{
    /* DCT scaling then resampling vs full-resolution resampling of the same window: measured
     * mean |diff| <= ~0.7 with the scales 1/2, 1/4, 1/8 (<= ~1.6 when 3/8 ... 7/8 were used too)
     * and max <= ~40 (edges, where the IDCT's implicit box filter differs most from the
     * resampling filter); the bound leaves some margin. */
    compare_with_resize("[24, 28]", 2.0, 64, true);
}

/* With the same seed, decoders.image_random_crop draws exactly random_resized_crop's windows
 * (so the window statistics tested against torchvision in test_random_resized_crop hold here
 * too) and, without DCT scaling (windows < 4 x size), produces the same bytes. */
static void test_same_windows_as_random_resized_crop(void **state)
{
    char **files;
    int n = exact_files(&files);
    sl_graph *g;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    sl_graph_add(g, "readers.file", "reader", NULL);
    sl_graph_arg_strs(g, "reader", "files", (const char *const *)files, n);
    sl_graph_add(g, "decoders.image", "dec", NULL);
    sl_graph_input(g, "dec", "reader");
    sl_graph_add(g, "random_resized_crop", "rrc", NULL);
    sl_graph_input(g, "rrc", "dec");
    sl_graph_arg_json(g, "rrc", "size", "[160, 160]");
    sl_graph_arg_int(g, "rrc", "seed", 9);
    sl_graph_add(g, "decoders.image_random_crop", "irc", NULL);
    sl_graph_input(g, "irc", "reader");
    sl_graph_arg_json(g, "irc", "size", "[160, 160]");
    sl_graph_arg_int(g, "irc", "seed", 9);
    sl_graph_output(g, "rrc");
    sl_graph_output(g, "irc");
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = n;
    o.num_threads = 2;
    sl_pipeline *p;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    if (sl_pipeline_build(p) != SL_OK)
        fail_msg("%s", sl_pipeline_error(p));
    for (int it = 0; it < 4; it++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        assert_true(tu_hash_batch(sl_pipeline_output(p, 0), 1) ==
                    tu_hash_batch(sl_pipeline_output(p, 1), 1));
    }
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
    tu_free_list(files, n);
}

static void test_deterministic_across_threads(void **state)
{
    char **files;
    int n = exact_files(&files);
    const char *args[][2] = {{"size", "[64, 64]"}, {NULL, NULL}};
    uint64_t h[2];
    for (int t = 0; t < 2; t++) {
        sl_pipeline *p = make(files, n, t ? 4 : 1, args);
        h[t] = 1;
        for (int it = 0; it < 2; it++) {
            assert_int_equal(sl_pipeline_run(p), SL_OK);
            h[t] = tu_hash_batch(sl_pipeline_output(p, 1), h[t]);
        }
        sl_pipeline_destroy(p);
    }
    assert_true(h[0] == h[1]);
    tu_free_list(files, n);
}

static void test_corrupt_file_named(void **state)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/corrupt_truncated.jpg", tu_env_dir("SLUICE_TEST_DATA"));
    char *files[1] = {path};
    sl_pipeline *p = make(files, 1, 1, NULL);
    assert_int_equal(sl_pipeline_run(p), SL_ECORRUPT);
    assert_non_null(strstr(sl_pipeline_error(p), "corrupt_truncated.jpg"));
    sl_pipeline_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_equals_full_decode_crop),
        cmocka_unit_test(test_whole_image_window),
        cmocka_unit_test(test_size_without_dct_scaling_is_exact),
        cmocka_unit_test(test_size_with_dct_scaling_within_tolerance),
        cmocka_unit_test(test_same_windows_as_random_resized_crop),
        cmocka_unit_test(test_deterministic_across_threads),
        cmocka_unit_test(test_corrupt_file_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
