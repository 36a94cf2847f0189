/* tests/c/test_cuda_cond.c: conditionals inside the GPU stage (split and merge on "gpu").
 *
 * Runs on the device, or emulated on the host (the .emulated ctest entry), never skipped
 * silently (gpuutil.h). One spec over the JPEG tree, built with its split, merge and branch
 * nodes on "cpu" (the reference, checked against the per-sample model in test_conditional.c)
 * and on "gpu": decoded images routed by label (label 0: true), the true branch flipped by a
 * coin that is split with its samples and a nested conditional on that coin cropping the heads,
 * the false branch cropped at a per-sample position drawn inside the branch (a node without
 * inputs tied to it by batch_like). Both give the same bytes, samples and shapes.
 * Data: the JPEG class tree of tests/data/make_tree.py (SLUICE_TEST_TREE).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpuutil.h"
#include "testutil.h"

/* pred: the arithmetic that decides the outer conditional ("eq" 0: label 0; "geq" 0: every
 * sample, the false branch empty on the GPU). */
static const char *spec(const char *pred)
{
    return tu_gpu_tree_spec(
        6, 11, 5, "\"m\", \"reader:1\"",
        "{\"name\": \"dec\", \"op\": \"decoders.image\", \"device\": \"$MIX\", \"inputs\": "
        "[\"reader:0\"]},"
        "{\"name\": \"is0\", \"op\": \"arithmetic\", \"inputs\": [\"reader:1\"], \"args\": "
        "{\"op\": \"%s\", \"scalar_int\": 0}},"
        "{\"name\": \"coin\", \"op\": \"random.coin_flip\"},"
        "{\"name\": \"sc\", \"op\": \"_conditional.split\", \"inputs\": [\"coin\"], "
        "\"arg_inputs\": {\"predicate\": \"is0\"}},"
        "{\"name\": \"s\", \"op\": \"_conditional.split\", \"device\": \"$GPU\", \"inputs\": "
        "[\"dec\"], \"arg_inputs\": {\"predicate\": \"is0\"}},"
        "{\"name\": \"ft\", \"op\": \"flip\", \"device\": \"$GPU\", \"inputs\": [\"s:0\"], "
        "\"arg_inputs\": {\"horizontal\": \"sc:0\"}},"
        "{\"name\": \"s2\", \"op\": \"_conditional.split\", \"device\": \"$GPU\", \"inputs\": "
        "[\"ft\"], \"arg_inputs\": {\"predicate\": \"sc:0\"}},"
        "{\"name\": \"c2\", \"op\": \"crop\", \"device\": \"$GPU\", \"inputs\": [\"s2:0\"], "
        "\"args\": {\"crop\": [16, 16]}},"
        "{\"name\": \"c2f\", \"op\": \"crop\", \"device\": \"$GPU\", \"inputs\": [\"s2:1\"], "
        "\"args\": {\"crop\": [16, 16], \"crop_pos_x\": 0.0}},"
        "{\"name\": \"m2\", \"op\": \"_conditional.merge\", \"device\": \"$GPU\", \"inputs\": "
        "[\"c2\", \"c2f\"], \"arg_inputs\": {\"predicate\": \"sc:0\"}},"
        "{\"name\": \"px\", \"op\": \"random.uniform\", \"args\": {\"range\": [0.0, 1.0]}, "
        "\"batch_like\": {\"node\": \"s\", \"output\": 1}},"
        "{\"name\": \"cf\", \"op\": \"crop\", \"device\": \"$GPU\", \"inputs\": [\"s:1\"], "
        "\"args\": {\"crop\": [16, 16]}, \"arg_inputs\": {\"crop_pos_x\": \"px\"}},"
        "{\"name\": \"m\", \"op\": \"_conditional.merge\", \"device\": \"$GPU\", \"inputs\": "
        "[\"m2\", \"cf\"], \"arg_inputs\": {\"predicate\": \"is0\"}}",
        pred);
}

static void test_gpu_matches_cpu(void **state)
{
    (void)state;
    tu_diff d = tu_gpu_compare(spec("eq"), 6, 0);
    assert_true(d.elements > 0);
    assert_true(d.max_abs == 0);
}

/* Every sample in the true branch: the gpu nodes of the false branch run on empty batches. */
static void test_gpu_empty_branch(void **state)
{
    (void)state;
    tu_diff d = tu_gpu_compare(spec("geq"), 3, 0);
    assert_true(d.elements > 0);
    assert_true(d.max_abs == 0);
}

int main(void)
{
    tu_gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_matches_cpu),
        cmocka_unit_test(test_gpu_empty_branch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
