/* tests/c/test_exec_autotune.c: prefetch_queue_depth "auto" (exec/autotune.c, white-box).
 *
 * The policy on synthetic windows (deterministic: no clock): idle threads while the consumer
 * waits raise the depth up to the slots, busy threads do not, a slow consumer lowers it to 2
 * after three windows, a rise right after a fall pins the depth, the memory budget caps it and
 * cuts it at once when an iteration's outputs grow. Then real pipelines whose measured windows
 * are replaced by injected ones: outputs identical, byte for byte, whatever depth the tuner
 * goes through (random operators and a shuffling reader included), the output storage
 * following the frames (no more storage sets than slots in use at once), the budget respected,
 * a fed pipeline fixed at 2; num_threads "auto" is the affinity mask's CPU count; the spec and
 * the options take and write "auto".
 * Data: the JPEG class tree made by tests/data/make_tree.py (env SLUICE_TEST_TREE).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sched.h>
#include <string.h>

#include "core/core.h"
#include "exec/exec.h"
#include "testutil.h"

static const sl__autotune_window IDLE_TAIL = {.idle = 0.30, .wait = 0.20, .ready = 0, .n = 4};
static const sl__autotune_window BUSY = {.idle = 0.01, .wait = 0.50, .ready = 0, .n = 4};
static const sl__autotune_window SLOW_CONSUMER = {.idle = 0.60, .wait = 0.0, .ready = 4, .n = 4};

static void policy_rises_on_idle_tails(void **state)
{
    sl__autotune a;
    sl__autotune_init(&a, true, 0, 8, (int64_t)1 << 40);
    assert_int_equal(a.depth, 2);
    /* one step per window, one window skipped after each: 3, 3, 4, 4, ... 8 */
    int want[] = {3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 8, 8};
    for (int k = 0; k < (int)(sizeof want / sizeof want[0]); k++)
        assert_int_equal(sl__autotune_decide(&a, &IDLE_TAIL), want[k]);
    assert_int_equal(a.ups, 6);
    assert_string_equal(a.reason, "idle threads, at the most slots");
    /* busy threads: more depth would not help, it stays */
    sl__autotune_init(&a, true, 0, 8, (int64_t)1 << 40);
    for (int k = 0; k < 10; k++)
        assert_int_equal(sl__autotune_decide(&a, &BUSY), 2);
    assert_int_equal(a.ups, 0);
    /* not tuned: a fixed depth never moves */
    sl__autotune_init(&a, false, 3, 3, 0);
    for (int k = 0; k < 4; k++)
        assert_int_equal(sl__autotune_decide(&a, &IDLE_TAIL), 3);
}

static void policy_falls_for_a_slow_consumer(void **state)
{
    sl__autotune a;
    sl__autotune_init(&a, true, 0, 8, (int64_t)1 << 40);
    for (int k = 0; k < 5; k++)
        sl__autotune_decide(&a, &IDLE_TAIL);
    assert_int_equal(a.depth, 5);
    /* settle (1), then three consumer-bound windows per step, then settle again */
    int want[] = {5, 5, 5, 4, 4, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 2};
    for (int k = 0; k < (int)(sizeof want / sizeof want[0]); k++)
        assert_int_equal(sl__autotune_decide(&a, &SLOW_CONSUMER), want[k]);
    assert_int_equal(a.downs, 3);
    assert_string_equal(a.reason, "the consumer is the bottleneck");
    /* a window that is neither (the consumer waited a little, threads busy) resets the count */
    sl__autotune_init(&a, true, 0, 8, (int64_t)1 << 40);
    for (int k = 0; k < 3; k++)
        sl__autotune_decide(&a, &IDLE_TAIL);
    assert_int_equal(a.depth, 4);
    sl__autotune_decide(&a, &SLOW_CONSUMER);
    sl__autotune_decide(&a, &SLOW_CONSUMER);
    sl__autotune_decide(&a, &BUSY);
    sl__autotune_decide(&a, &SLOW_CONSUMER);
    sl__autotune_decide(&a, &SLOW_CONSUMER);
    assert_int_equal(a.depth, 4);
    sl__autotune_decide(&a, &SLOW_CONSUMER);
    assert_int_equal(a.depth, 3);
}

static void policy_does_not_oscillate(void **state)
{
    sl__autotune a;
    sl__autotune_init(&a, true, 0, 8, (int64_t)1 << 40);
    for (int k = 0; k < 3; k++)
        sl__autotune_decide(&a, &IDLE_TAIL);
    assert_int_equal(a.depth, 4);
    for (int k = 0; k < 4; k++) /* down to 3 */
        sl__autotune_decide(&a, &SLOW_CONSUMER);
    assert_int_equal(a.depth, 3);
    sl__autotune_decide(&a, &IDLE_TAIL);                      /* settling */
    assert_int_equal(sl__autotune_decide(&a, &IDLE_TAIL), 4); /* it had to come back */
    assert_int_equal(a.floor, 4);
    for (int k = 0; k < 12; k++) /* 4 proved useful: it stays there */
        assert_int_equal(sl__autotune_decide(&a, &SLOW_CONSUMER), 4);
}

static void policy_respects_the_budget(void **state)
{
    sl__autotune a;
    sl__autotune_init(&a, true, 0, 8, 350);
    sl__autotune_window w = IDLE_TAIL;
    w.slot_bytes = 100; /* 350 bytes: 3 iterations */
    for (int k = 0; k < 12; k++)
        assert_true(sl__autotune_decide(&a, &w) <= 3);
    assert_int_equal(a.depth, 3);
    assert_int_equal(sl__autotune_limit(&a), 3);
    assert_string_equal(a.reason, "idle threads, at the memory budget");
    w.slot_bytes = 200; /* an iteration grew: 1 fits, the depth goes back to 2 at once */
    assert_int_equal(sl__autotune_decide(&a, &w), 2);
    assert_string_equal(a.reason, "memory budget");
    for (int k = 0; k < 6; k++)
        assert_int_equal(sl__autotune_decide(&a, &w), 2);
    /* the default budget: 1 GiB or an eighth of the memory */
    sl__autotune_init(&a, true, 0, 8, 0);
    assert_true(a.budget > 0 && a.budget <= (int64_t)1 << 30);
}

/* ---- real pipelines, injected windows ------------------------------------------------------ */

/* reader (shuffled) -> decoder -> random_resized_crop 24 x 24 -> cmn mirrored by a coin flip:
 * every output depends on the iteration's random draws and the reader's order. */
static sl_graph *make_graph(void)
{
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "readers.file", "reader", NULL), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", tu_env_dir("SLUICE_TEST_TREE")),
                     SL_OK);
    assert_int_equal(sl_graph_arg_bool(g, "reader", "random_shuffle", true), SL_OK);
    assert_int_equal(sl_graph_arg_int(g, "reader", "seed", 5), SL_OK);
    assert_int_equal(sl_graph_add(g, "decoders.image", "dec", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "dec", "reader:0"), SL_OK);
    assert_int_equal(sl_graph_add(g, "random_resized_crop", "rrc", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "rrc", "dec"), SL_OK);
    double size[2] = {24, 24};
    assert_int_equal(sl_graph_arg_floats(g, "rrc", "size", size, 2), SL_OK);
    assert_int_equal(sl_graph_add(g, "random.coin_flip", "coin", NULL), SL_OK);
    assert_int_equal(sl_graph_add(g, "crop_mirror_normalize", "cmn", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "cmn", "rrc"), SL_OK);
    assert_int_equal(sl_graph_arg_input(g, "cmn", "mirror", "coin"), SL_OK);
    assert_int_equal(sl_graph_output(g, "cmn"), SL_OK);
    assert_int_equal(sl_graph_output(g, "reader:1"), SL_OK);
    return g;
}

static sl_pipeline *make_pipeline(const sl_graph *g, int depth, int64_t budget)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    assert_int_equal(o.prefetch_queue_depth, SL_PREFETCH_AUTO); /* the defaults */
    assert_int_equal(o.num_threads, SL_NUM_THREADS_AUTO);
    o.batch_size = 3;
    o.num_threads = 2;
    o.prefetch_queue_depth = depth;
    o.prefetch_max_bytes = budget;
    o.seed = 77;
    sl_pipeline *p = NULL;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    if (sl_pipeline_build(p) != SL_OK)
        fail_msg("build failed: %s", sl_pipeline_error(p));
    return p;
}

/* The injection: every measured window becomes `user`'s. */
static void inject(void *user, sl__autotune_window *w)
{
    const sl__autotune_window *want = user;
    int64_t bytes = w->slot_bytes;
    *w = *want;
    w->slot_bytes = bytes; /* the real size: the budget applies */
}

enum { ITERS = 60 };

static void run_hashes(sl_pipeline *p, uint64_t *h)
{
    for (int k = 0; k < ITERS; k++) {
        if (sl_pipeline_run(p) != SL_OK)
            fail_msg("run %d: %s", k, sl_pipeline_error(p));
        h[k] = tu_hash_batch(sl_pipeline_output(p, 0), tu_hash_batch(sl_pipeline_output(p, 1), 1));
    }
}

static int slots_with_storage(sl_pipeline *p)
{
    int n = 0;
    sl__exec_lock(p);
    for (int s = 0; s < p->depth; s++)
        n += p->slots[s].has_storage;
    sl__exec_unlock(p);
    return n;
}

static void outputs_do_not_depend_on_the_depth(void **state)
{
    sl_graph *g = make_graph();
    uint64_t want[ITERS], got[ITERS];
    sl_pipeline *p = make_pipeline(g, 1, 0);
    run_hashes(p, want);
    sl_pipeline_destroy(p);
    /* idle tails: the depth climbs to the slots while it runs */
    p = make_pipeline(g, SL_PREFETCH_AUTO, 0);
    p->tune.inject = inject;
    p->tune.inject_user = (void *)&IDLE_TAIL;
    run_hashes(p, got);
    assert_memory_equal(want, got, sizeof want);
    sl_prefetch_stats s;
    assert_int_equal(sl_pipeline_prefetch_stats(p, &s), SL_OK);
    assert_true(s.autotune);
    assert_int_equal(s.depth, SL__AUTO_SLOTS);
    assert_int_equal(s.increases, SL__AUTO_SLOTS - SL__AUTO_START);
    assert_int_equal(s.nchanges, SL__AUTO_SLOTS - SL__AUTO_START);
    assert_int_equal(s.change_depth[0], 3);
    assert_true(s.iteration_bytes > 0);
    print_message("depth %d after %lld windows, %lld bytes per iteration\n", s.depth,
                  (long long)s.windows, (long long)s.iteration_bytes);
    sl_pipeline_destroy(p);
    /* up, then a slow consumer brings it down again: still the same outputs */
    p = make_pipeline(g, SL_PREFETCH_AUTO, 0);
    p->tune.inject = inject;
    p->tune.inject_user = (void *)&IDLE_TAIL;
    for (int k = 0; k < ITERS / 2; k++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        got[k] =
            tu_hash_batch(sl_pipeline_output(p, 0), tu_hash_batch(sl_pipeline_output(p, 1), 1));
    }
    int high = p->tune.depth;
    assert_true(high > SL__AUTO_START);
    p->tune.inject_user = (void *)&SLOW_CONSUMER;
    for (int k = ITERS / 2; k < ITERS; k++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        got[k] =
            tu_hash_batch(sl_pipeline_output(p, 0), tu_hash_batch(sl_pipeline_output(p, 1), 1));
    }
    assert_memory_equal(want, got, sizeof want);
    assert_true(p->tune.depth < high);
    assert_true(p->tune.downs > 0);
    /* the storage followed the frames: no more sets than slots in use at once */
    assert_true(slots_with_storage(p) <= high);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

static void the_budget_caps_the_depth(void **state)
{
    sl_graph *g = make_graph();
    uint64_t want[ITERS], got[ITERS];
    sl_pipeline *p = make_pipeline(g, 2, 0);
    run_hashes(p, want);
    sl_pipeline_destroy(p);
    /* measure one iteration's bytes (the most over the same iterations), then allow 3.5 */
    p = make_pipeline(g, SL_PREFETCH_AUTO, 0);
    run_hashes(p, got);
    sl_prefetch_stats s;
    assert_int_equal(sl_pipeline_prefetch_stats(p, &s), SL_OK);
    int64_t per = s.iteration_bytes;
    assert_true(per > 0);
    sl_pipeline_destroy(p);
    p = make_pipeline(g, SL_PREFETCH_AUTO, 3 * per + per / 2);
    p->tune.inject = inject;
    p->tune.inject_user = (void *)&IDLE_TAIL;
    run_hashes(p, got);
    assert_memory_equal(want, got, sizeof want);
    assert_int_equal(sl_pipeline_prefetch_stats(p, &s), SL_OK);
    assert_int_equal(s.depth, 3); /* 3.5 iterations' bytes */
    assert_int_equal(s.depth_limit, 3);
    assert_string_equal(s.reason, "idle threads, at the memory budget");
    assert_true(s.depth * per <= s.budget_bytes);
    assert_true(slots_with_storage(p) <= p->tune.high);
    sl_pipeline_destroy(p);
    /* a budget below two iterations: the depth stays at 2 */
    p = make_pipeline(g, SL_PREFETCH_AUTO, 1);
    p->tune.inject = inject;
    p->tune.inject_user = (void *)&IDLE_TAIL;
    run_hashes(p, got);
    assert_memory_equal(want, got, sizeof want);
    assert_int_equal(p->tune.depth, 2);
    assert_true(slots_with_storage(p) <= 2);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* A pipeline fed by the application runs "auto" at 2: the batches fed first stay DALI's. */
static void fed_pipelines_stay_at_two(void **state)
{
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "external_source", "src", NULL), SL_OK);
    assert_int_equal(sl_graph_output(g, "src"), SL_OK);
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 2;
    sl_pipeline *p = NULL;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_OK);
    assert_false(p->tune.on);
    assert_int_equal(p->depth, 2);
    sl_prefetch_stats s;
    assert_int_equal(sl_pipeline_prefetch_stats(p, &s), SL_OK);
    assert_false(s.autotune);
    assert_int_equal(s.depth, 2);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

static void auto_options(void **state)
{
    /* num_threads "auto": the CPUs of the affinity mask */
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    sl_graph *g = make_graph();
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    sl_pipeline *p = NULL;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    assert_int_equal(p->opt.num_threads, CPU_COUNT(&set));
    assert_int_equal(sl_pipeline_build(p), SL_OK);
    assert_true(p->tune.on);
    assert_int_equal(p->depth, SL__AUTO_SLOTS);
    sl_prefetch_stats s;
    assert_int_equal(sl_pipeline_prefetch_stats(p, &s), SL_OK);
    assert_int_equal(s.num_threads, CPU_COUNT(&set));
    assert_int_equal(s.depth, SL__AUTO_START);
    sl_pipeline_destroy(p);
    /* a spec: "auto" or numbers, written back as given */
    assert_int_equal(sl_pipeline_options_from_json("{\"pipeline\": {\"prefetch_queue_depth\": 3, "
                                                   "\"num_threads\": 2}}",
                                                   &o),
                     SL_OK);
    assert_int_equal(o.prefetch_queue_depth, 3);
    assert_int_equal(o.num_threads, 2);
    assert_int_equal(sl_pipeline_options_from_json("{\"pipeline\": {\"prefetch_queue_depth\": "
                                                   "\"auto\", \"num_threads\": \"auto\", "
                                                   "\"prefetch_max_bytes\": 1000}}",
                                                   &o),
                     SL_OK);
    assert_int_equal(o.prefetch_queue_depth, SL_PREFETCH_AUTO);
    assert_int_equal(o.num_threads, SL_NUM_THREADS_AUTO);
    assert_int_equal(o.prefetch_max_bytes, 1000);
    assert_int_equal(sl_pipeline_options_from_json("{\"pipeline\": {\"prefetch_queue_depth\": "
                                                   "\"deep\"}}",
                                                   &o),
                     SL_EINVAL);
    assert_non_null(strstr(
        sl_last_error(), "\"prefetch_queue_depth\" must be an integer or \"auto\", got a string"));
    o.prefetch_queue_depth = 65;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_EINVAL);
    assert_non_null(strstr(sl_last_error(), "prefetch_queue_depth must be in [1, 64] or 0"));
    sl_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(policy_rises_on_idle_tails),
        cmocka_unit_test(policy_falls_for_a_slow_consumer),
        cmocka_unit_test(policy_does_not_oscillate),
        cmocka_unit_test(policy_respects_the_budget),
        cmocka_unit_test(outputs_do_not_depend_on_the_depth),
        cmocka_unit_test(the_budget_caps_the_depth),
        cmocka_unit_test(fed_pipelines_stay_at_two),
        cmocka_unit_test(auto_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
