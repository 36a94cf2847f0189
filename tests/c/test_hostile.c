/* tests/c/test_hostile.c: regression tests of issue 15's fuzzing findings that are not about
 * pixels (those are in tests/python/test_roi_decode_exact.py), through the public C API. Run
 * under ASan+UBSan in CI, where undefined behaviour aborts.
 *
 * - An empty sample fed to external_source, copied or lent, gives an empty output sample
 *   (UBSan reported NULL + 0 in its run_sample; the input is
 *   tests/fuzz/regressions/decode/empty-sample.bin, an input of the fuzz target "decode").
 * - The fuzzing run's specs (finding 3): random_resized_crop asked for size [434323333, 224]
 *   (a 3.5 TB output) is refused at build, naming the argument; crop_mirror_normalize asked for
 *   a 601601 x 224 window (1.5 GiB a sample) fails its iteration at once, naming node, sample
 *   and file, without allocating — and so does any sample over max_sample_bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sluice/sluice.h"
#include "testutil.h"

static void no_release(void *ctx)
{
    (*(int *)ctx)++;
}

static void empty_sample_through_external_source(void **state)
{
    for (int lent = 0; lent < 2; lent++) {
        sl_graph *g = NULL;
        assert_int_equal(sl_graph_create(&g), SL_OK);
        assert_int_equal(sl_graph_add(g, "external_source", "e", NULL), SL_OK);
        assert_int_equal(sl_graph_output(g, "e"), SL_OK);
        sl_pipeline_options o;
        sl_pipeline_options_init(&o);
        o.batch_size = 2;
        o.num_threads = 1;
        o.prefetch_queue_depth = 1;
        sl_pipeline *p = NULL;
        assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
        assert_int_equal(sl_pipeline_build(p), SL_OK);
        static const uint8_t one = 7;
        const void *data[2] = {NULL, &one}; /* an empty sample has no bytes to point at */
        int64_t shapes[2] = {0, 1};
        int released = 0;
        sl_feed f = {.num_samples = 2,
                     .ndim = 1,
                     .dtype = SL_DTYPE_UINT8,
                     .shapes = shapes,
                     .data = data,
                     .release = lent ? no_release : NULL,
                     .release_ctx = &released};
        assert_int_equal(sl_pipeline_feed_input(p, "e", &f), SL_OK);
        f.num_samples = 1; /* a batch of one empty sample: nothing at all to copy */
        assert_int_equal(sl_pipeline_feed_input(p, "e", &f), SL_OK);
        for (int it = 0; it < 2; it++) {
            if (sl_pipeline_run(p) != SL_OK)
                fail_msg("%s", sl_pipeline_error(p));
            const sl_batch *b = sl_pipeline_output(p, 0);
            assert_int_equal(sl_batch_size(b), 2 - it);
            assert_int_equal(sl_batch_shape(b, 0)[0], 0);
            assert_int_equal(sl_batch_sample_numel(b, 0), 0);
            if (it == 0)
                assert_int_equal(*(const uint8_t *)sl_batch_sample_data(b, 1), 7);
        }
        assert_int_equal(released, lent ? 2 : 0);
        sl_pipeline_destroy(p);
        sl_graph_destroy(g);
    }
}

/* Builds the spec: the test tree's files (batch 2), decoded, into `last` (a node "out" on node
 * "dec"), the pipeline's one output. Returns the build's status; *p is the pipeline. */
static sl_status build_spec(const char *last, sl_pipeline **p)
{
    char json[2048];
    snprintf(
        json, sizeof json,
        "{\"pipeline\": {\"batch_size\": 2, \"num_threads\": 2, \"seed\": 0},"
        " \"nodes\": ["
        "  {\"name\": \"reader\", \"op\": \"readers.file\", \"args\": {\"file_root\": \"%s\"}},"
        "  {\"name\": \"dec\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
        "  %s],"
        " \"outputs\": [\"out\"]}",
        tu_env_dir("SLUICE_TEST_TREE"), last);
    sl_graph *g = NULL;
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    assert_int_equal(sl_graph_from_json(json, &g), SL_OK);
    assert_int_equal(sl_pipeline_options_from_json(json, &o), SL_OK);
    assert_int_equal(sl_pipeline_create(g, &o, p), SL_OK);
    sl_graph_destroy(g);
    return sl_pipeline_build(*p);
}

static void huge_sizes_from_a_spec(void **state)
{
    sl_pipeline *p = NULL;
    assert_int_equal(build_spec("{\"name\": \"out\", \"op\": \"random_resized_crop\", "
                                "\"inputs\": [\"dec\"], \"args\": {\"size\": [434323333, 224]}}",
                                &p),
                     SL_EINVAL);
    print_message("%s\n", sl_pipeline_error(p));
    assert_non_null(strstr(sl_pipeline_error(p), "\"size\""));
    assert_non_null(strstr(sl_pipeline_error(p), "434323333"));
    sl_pipeline_destroy(p);

    assert_int_equal(build_spec("{\"name\": \"out\", \"op\": \"crop_mirror_normalize\", "
                                "\"inputs\": [\"dec\"], \"args\": {\"crop\": [601601, 224], "
                                "\"out_of_bounds_policy\": \"pad\"}}",
                                &p),
                     SL_OK);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int it = 0; it < 2; it++) { /* every iteration fails, and the next one is tried */
        assert_int_equal(sl_pipeline_run(p), SL_EINVAL);
        sl_error_detail d;
        sl_pipeline_error_detail(p, &d);
        print_message("%s\n", sl_pipeline_error(p));
        assert_string_equal(d.node, "out");
        assert_int_equal(d.iteration, it);
        assert_true(d.sample == 0 && d.source && strstr(d.source, ".jpg"));
        assert_non_null(strstr(d.detail, "max_sample_bytes"));
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(t1.tv_sec - t0.tv_sec < 5); /* nothing of 1.5 GiB was allocated or filled */
    sl_pipeline_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_sample_through_external_source),
        cmocka_unit_test(huge_sizes_from_a_spec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
