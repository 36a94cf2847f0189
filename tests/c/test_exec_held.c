/* tests/c/test_exec_held.c: outputs that live views keep after their release (exec/outputs.c).
 *
 * DALI's ordinary loops keep batches while asking for the next: `out = pipe.run()` at depth 1
 * (the previous `out` lives until run() returns), a `for` loop's variables, list(iterator). The
 * executor sets such outputs aside and goes on. Checked here through the C API, every held batch
 * compared with a reference run of the same pipeline that holds nothing (the executor is
 * deterministic, test_exec.c): holding never changes what is delivered nor what is held, at
 * prefetch depths 1 to 3; a loop that keeps the previous batch, or one that dropped a list of
 * batches, allocates nothing in steady state; past max_held_bytes the run that would need more
 * memory fails after the pin wait naming the iterations that hold it, and goes on once views
 * are dropped; allocation failures while setting aside fail cleanly (fault injection). Data: the
 * JPEG class tree of tests/data/make_tree.py (SLUICE_TEST_TREE).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "exec/exec.h"
#include "testutil.h"

#define ITERS 12

/* reader -> decoder -> cmn 24x24 crop mirrored by a coin flip; outputs: the crops and the
 * labels. Batch 4, 2 threads (1 when `steady`), the given depth and max_held_bytes. The reader
 * shuffles unless `steady`: then every epoch has the same batches, so the first grows every buffer
 * to the size the later ones need (100 files: 25 iterations), and one thread runs them all: with
 * two, which thread decodes which file varies with the machine's load, and a thread's scratch
 * meeting its largest file only in the third epoch would grow then (an allocation that has nothing
 * to do with the outputs set aside, seen once under load). */
#define EPOCH 25
/* num_threads of the pipelines make_with builds when >= 0 (else 2, or 1 when steady). */
static int g_threads = -1;
static sl_pipeline *make_with(int depth, int64_t max_held, bool steady)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"pipeline\": {\"batch_size\": 4, \"num_threads\": %d, \"seed\": 5, "
             "\"prefetch_queue_depth\": %d, \"max_held_bytes\": %lld},"
             " \"nodes\": ["
             "  {\"name\": \"reader\", \"op\": \"readers.file\", \"args\": {\"file_root\": "
             "\"%s\", \"random_shuffle\": %s, \"seed\": 3}},"
             "  {\"name\": \"dec\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
             "  {\"name\": \"coin\", \"op\": \"random.coin_flip\"},"
             "  {\"name\": \"cmn\", \"op\": \"crop_mirror_normalize\", \"inputs\": [\"dec\"],"
             "   \"args\": {\"crop\": [24, 24]}, \"arg_inputs\": {\"mirror\": \"coin\"}}],"
             " \"outputs\": [\"cmn\", \"reader:1\"]}",
             g_threads >= 0 ? g_threads
             : steady       ? 1
                            : 2,
             depth, (long long)max_held, tu_env_dir("SLUICE_TEST_TREE"), steady ? "false" : "true");
    sl_graph *g = NULL;
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    assert_int_equal(sl_graph_from_json(json, &g), SL_OK);
    assert_int_equal(sl_pipeline_options_from_json(json, &o), SL_OK);
    sl_pipeline *p = NULL;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    sl_graph_destroy(g);
    if (sl_pipeline_build(p) != SL_OK)
        fail_msg("build: %s", sl_pipeline_error(p));
    return p;
}

static sl_pipeline *make(int depth, int64_t max_held)
{
    return make_with(depth, max_held, false);
}

static uint64_t hash_outputs(const sl_outputs *o)
{
    return tu_hash_batch(sl_outputs_get(o, 1), tu_hash_batch(sl_outputs_get(o, 0), 1));
}

/* What iterations 0 .. ITERS-1 deliver when nothing is held. */
static void reference(uint64_t ref[ITERS])
{
    sl_pipeline *p = make(2, 0);
    for (int k = 0; k < ITERS; k++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        sl_outputs *o = sl_pipeline_outputs_pin(p);
        ref[k] = hash_outputs(o);
        sl_outputs_unpin(o);
    }
    sl_pipeline_destroy(p);
}

/* list(iterator): every batch kept until the end, at depths 1, 2 and 3. */
static void holding_every_batch(void **state)
{
    uint64_t ref[ITERS];
    reference(ref);
    for (int depth = 1; depth <= 3; depth++) {
        sl_pipeline *p = make(depth, 0);
        sl_outputs *held[ITERS];
        for (int k = 0; k < ITERS; k++) {
            if (sl_pipeline_run(p) != SL_OK)
                fail_msg("depth %d, iteration %d: %s", depth, k, sl_pipeline_error(p));
            held[k] = sl_pipeline_outputs_pin(p);
            assert_int_equal(sl_outputs_iteration(held[k]), k);
            assert_true(hash_outputs(held[k]) == ref[k]);
        }
        for (int k = 0; k < ITERS; k++) { /* nothing held was written since */
            assert_int_equal(sl_outputs_iteration(held[k]), k);
            assert_true(hash_outputs(held[k]) == ref[k]);
            for (int m = 0; m < k; m++)
                assert_ptr_not_equal(sl_batch_data(sl_outputs_get(held[k], 0)),
                                     sl_batch_data(sl_outputs_get(held[m], 0)));
        }
        pthread_mutex_lock(&p->mu);
        assert_int_equal(p->nheld, ITERS - 1); /* the last one is still shared */
        pthread_mutex_unlock(&p->mu);
        for (int k = 0; k < ITERS; k++)
            sl_outputs_unpin(held[k]);
        pthread_mutex_lock(&p->mu);
        assert_int_equal(p->nheld, 0);
        assert_int_equal(p->held_bytes[0], 0);
        assert_true(p->nspares <= depth); /* the rest was freed */
        pthread_mutex_unlock(&p->mu);
        sl_pipeline_destroy(p);
    }
}

/* The views of a list of batches dropped, a loop that keeps nothing allocates nothing again. */
static void dropping_held_batches_restores_steady_state(void **state)
{
    sl_pipeline *p = make_with(2, 0, true);
    sl_outputs *held[ITERS];
    for (int k = 0; k < ITERS; k++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        held[k] = sl_pipeline_outputs_pin(p);
    }
    for (int k = 0; k < ITERS; k++)
        sl_outputs_unpin(held[k]);
    for (int k = ITERS; k < 2 * EPOCH; k++) /* the slots' fresh storage grows in an epoch */
        assert_int_equal(sl_pipeline_run(p), SL_OK);
    uint64_t before = sl__alloc_count();
    for (int k = 0; k < 2 * EPOCH; k++)
        assert_int_equal(sl_pipeline_run(p), SL_OK);
    assert_int_equal(sl__alloc_count() - before, 0);
    sl_pipeline_destroy(p);
}

/* DALI's `out = pipe.run()` at depth 1: the previous outputs are released while still pinned,
 * every time. Each delivered batch is right, each previous one unchanged, and once a spare
 * exists the loop allocates nothing. */
static void run_loop_keeping_the_previous_batch(void **state)
{
    uint64_t ref[ITERS];
    reference(ref);
    for (int depth = 1; depth <= 2; depth++) {
        for (int steady = 0; steady < 2; steady++) {
            sl_pipeline *p = make_with(depth, 0, steady);
            sl_outputs *prev = NULL;
            uint64_t before = 0;
            int n = steady ? 3 * EPOCH : ITERS;
            for (int k = 0; k < n; k++) {
                if (k == n - EPOCH) /* steady: after two epochs */
                    before = sl__alloc_count();
                assert_int_equal(sl_pipeline_run(p), SL_OK);
                sl_outputs *out = sl_pipeline_outputs_pin(p);
                assert_true(steady || hash_outputs(out) == ref[k]);
                if (prev) {
                    assert_true(steady || hash_outputs(prev) == ref[k - 1]);
                    sl_outputs_unpin(prev); /* rebinding `out` drops the previous batch */
                }
                prev = out;
            }
            if (steady)
                assert_int_equal(sl__alloc_count() - before, 0);
            sl_outputs_unpin(prev);
            sl_pipeline_destroy(p);
        }
    }
}

/* Past max_held_bytes a release leaves the outputs in place; the run whose iteration needs
 * their slot waits for the views, fails after the pin wait naming the iterations set aside, and
 * goes on (with the same iteration) once a view is dropped. */
static void held_memory_budget(void **state)
{
    uint64_t ref[ITERS];
    reference(ref);
    /* the bytes one iteration's outputs take when set aside */
    sl_pipeline *p = make(1, 0);
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    sl_outputs *o = sl_pipeline_outputs_pin(p);
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    pthread_mutex_lock(&p->mu);
    size_t one = p->held_bytes[0];
    pthread_mutex_unlock(&p->mu);
    assert_true(one >= 4 * 24 * 24 * 3 * sizeof(float));
    sl_outputs_unpin(o);
    sl_pipeline_destroy(p);

    /* room for one iteration, not two: depth 1 holding 0 and 1 */
    p = make(1, (int64_t)(one + one / 2));
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    sl_outputs *o0 = sl_pipeline_outputs_pin(p);
    assert_int_equal(sl_pipeline_run(p), SL_OK); /* iteration 0 set aside */
    sl_outputs *o1 = sl_pipeline_outputs_pin(p);
    int64_t t0 = sl__now_ns();
    assert_int_equal(sl_pipeline_run(p), SL_EMISUSE); /* 1 cannot be set aside as well */
    int64_t waited = sl__now_ns() - t0;
    const char *msg = sl_pipeline_error(p);
    print_message("%s\n", msg);
    assert_true(waited >= 1000000000LL && waited < 10000000000LL);
    assert_non_null(strstr(msg, "iteration 2 needs the buffers of iteration 1"));
    assert_non_null(strstr(msg, "still referenced (1 pinned views)"));
    assert_non_null(strstr(msg, "views of iteration 0 (1 set aside"));
    assert_non_null(strstr(msg, "max_held_bytes"));
    assert_true(hash_outputs(o0) == ref[0] && hash_outputs(o1) == ref[1]);
    sl_outputs_unpin(o0); /* room again: iteration 1 is set aside, 2 runs */
    assert_int_equal(sl_pipeline_share_outputs(p), SL_OK);
    assert_int_equal(sl_pipeline_iteration(p), 2);
    sl_outputs *o2 = sl_pipeline_outputs_pin(p);
    assert_true(hash_outputs(o2) == ref[2] && hash_outputs(o1) == ref[1]);
    sl_outputs_unpin(o1);
    sl_outputs_unpin(o2);
    for (int k = 3; k < ITERS; k++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        o = sl_pipeline_outputs_pin(p);
        assert_true(hash_outputs(o) == ref[k]);
        sl_outputs_unpin(o);
    }
    sl_pipeline_destroy(p);

    /* the option: a negative budget is refused, and specs keep it */
    sl_pipeline_options opt;
    sl_pipeline_options_init(&opt);
    assert_int_equal(opt.max_held_bytes, 0);
    opt.max_held_bytes = -1;
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_pipeline_create(g, &opt, &p), SL_EINVAL);
    assert_non_null(strstr(sl_last_error(), "max_held_bytes"));
    sl_graph_destroy(g);
}

/* A view that dies on another thread while share_outputs waits for the memory lets it go on. */
typedef struct late_unpin {
    sl_outputs *o;
} late_unpin;

static void *unpin_later(void *arg)
{
    usleep(300000);
    sl_outputs_unpin(((late_unpin *)arg)->o);
    return NULL;
}

static void view_dropped_on_another_thread(void **state)
{
    sl_pipeline *p = make(1, 1); /* nothing may be set aside */
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    late_unpin arg = {sl_pipeline_outputs_pin(p)};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, unpin_later, &arg), 0);
    assert_int_equal(sl_pipeline_run(p), SL_OK); /* waits ~0.3 s for the view to die */
    assert_int_equal(sl_pipeline_iteration(p), 1);
    pthread_join(t, NULL);
    sl_pipeline_destroy(p);
}

/* The same with num_threads 0: run() waits for the view to die (another thread's unpin frees
 * the slot and queues iteration 1's work, which wakes it), then runs that work itself. */
static void view_dropped_on_another_thread_no_workers(void **state)
{
    g_threads = 0;
    view_dropped_on_another_thread(state);
    g_threads = -1;
}

/* The N-th allocation after the build fails, for N = 1, 2, ... until none does, while every
 * batch is held (setting aside allocates records and fresh storage): every call succeeds or
 * fails cleanly, held data stays right, and the ASan build finds what a failure path leaks. */
static void set_aside_survives_allocation_failures(void **state)
{
    uint64_t ref[ITERS];
    reference(ref);
    bool fired = true;
    uint64_t n = 1;
    for (; fired && n < 5000; n++) {
        sl_pipeline *p = make(1, 0);
        sl_outputs *held[4] = {NULL};
        sl_status st = SL_OK;
        sl__alloc_fail_after(n);
        for (int k = 0; k < 4 && st == SL_OK; k++) {
            st = sl_pipeline_run(p);
            if (st == SL_OK)
                held[k] = sl_pipeline_outputs_pin(p);
        }
        fired = sl__alloc_fail_fired();
        sl__alloc_fail_after(0);
        if (!fired)
            assert_int_equal(st, SL_OK);
        for (int k = 0; k < 4; k++) {
            if (held[k])
                assert_true(hash_outputs(held[k]) == ref[sl_outputs_iteration(held[k])]);
            sl_outputs_unpin(held[k]);
        }
        sl_pipeline_destroy(p);
    }
    print_message("walked %llu allocations\n", (unsigned long long)n - 1);
    assert_false(fired); /* the walk reached a run without a failure */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(holding_every_batch),
        cmocka_unit_test(dropping_held_batches_restores_steady_state),
        cmocka_unit_test(run_loop_keeping_the_previous_batch),
        cmocka_unit_test(held_memory_budget),
        cmocka_unit_test(view_dropped_on_another_thread),
        cmocka_unit_test(view_dropped_on_another_thread_no_workers),
        cmocka_unit_test(set_aside_survives_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
