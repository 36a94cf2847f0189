/* tests/c/test_hostile.c: regression tests of issue 15's fuzzing findings that are not about
 * pixels (those are in tests/python/test_roi_decode_exact.py), through the public C API. Run
 * under ASan+UBSan in CI, where undefined behaviour aborts.
 *
 * - An empty sample fed to external_source, copied or lent, gives an empty output sample
 *   (UBSan reported NULL + 0 in its run_sample; the input is
 *   tests/fuzz/regressions/decode/empty-sample.bin, an input of the fuzz target "decode").
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_sample_through_external_source),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
