/* tests/c/test_cuda_exec.c: the executor's mixed and gpu stages (exec/stage_*.c, src/cuda).
 *
 * Runs on the device, or emulated on the host (the .emulated ctest entry), never skipped
 * silently (gpuutil.h). Checks: decoders.image on "mixed" and copy on "gpu" give the CPU
 * pipeline's bytes, on the GPU (sl_batch_device), with CPU outputs (labels) beside them; steady
 * state makes no device or pinned allocation; held GPU outputs stay unchanged while later
 * iterations run in other buffers; a corrupt file in a mixed decoder is reported at its iteration,
 * naming the file, and the pipeline goes on; placement errors (gpu input from a CPU node, CPU
 * input from a gpu node, mixed for an operator without it, gpu in a CPU-only pipeline) fail the
 * build naming the node; a node without a device runs where its inputs are (DALI's rule: gpu
 * below a mixed decoder, from a JSON spec or the C API, with the CPU pipeline's bytes), and
 * what cannot run there fails the build naming the node and the input that placed it; under
 * emulation, reading device memory on the host crashes as on a GPU.
 * Data: the JPEG class tree of tests/data/make_tree.py (SLUICE_TEST_TREE).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "exec/exec.h"
#include "gpuutil.h"
#include "testutil.h"

#ifdef SLUICE_HAVE_CUDA
#include "cuda/gpu.h"
#endif

static char spec[4096];

/* reader -> decoders.image ($MIX) -> copy ($GPU), and a 32x32 crop ($GPU) of it; outputs:
 * images, the GPU copy, labels, the crops. `queues`: the queue options of "pipeline". */
static const char *reader_spec_qs(int batch, const char *queues, bool shuffle)
{
    snprintf(spec, sizeof spec,
             "{\"pipeline\": {\"batch_size\": %d, \"num_threads\": 2, %s, \"seed\": 7},"
             " \"nodes\": ["
             "  {\"name\": \"reader\", \"op\": \"readers.file\", \"args\": {\"file_root\": "
             "\"%s\", \"random_shuffle\": %s, \"seed\": 3}},"
             "  {\"name\": \"dec\", \"op\": \"decoders.image\", \"device\": \"$MIX\","
             "   \"inputs\": [\"reader:0\"], \"args\": {\"output_type\": \"RGB\"}},"
             "  {\"name\": \"dup\", \"op\": \"copy\", \"device\": \"$GPU\", \"inputs\": "
             "[\"dec\"]},"
             "  {\"name\": \"crop\", \"op\": \"crop\", \"device\": \"$GPU\", \"inputs\": "
             "[\"dup\"], \"args\": {\"crop\": [32, 32]}}],"
             " \"outputs\": [\"dec\", \"dup\", \"reader:1\", \"crop\"]}",
             batch, queues, tu_env_dir("SLUICE_TEST_TREE"), shuffle ? "true" : "false");
    return spec;
}

static const char *reader_spec_q(int batch, const char *queues)
{
    return reader_spec_qs(batch, queues, true);
}

static const char *reader_spec(int batch, int depth)
{
    char q[64];
    snprintf(q, sizeof q, "\"prefetch_queue_depth\": %d", depth);
    return reader_spec_q(batch, q);
}

/* Separated queues: cpu_queue_depth c, gpu_queue_depth g. */
static const char *separated_spec(int batch, int c, int g)
{
    char q[96];
    snprintf(q, sizeof q, "\"cpu_queue_depth\": %d, \"gpu_queue_depth\": %d", c, g);
    return reader_spec_q(batch, q);
}

static void mixed_decode_equals_cpu(void **state)
{
    tu_diff d = tu_gpu_compare(reader_spec(7, 2), 9, 0);
    assert_true(d.elements > 1000000);
    assert_true(d.max_abs == 0);
}

/* DataNode.cpu(): GPU data copied back (copy on "cpu" reading a gpu node) feeds CPU operators. */
static void gpu_data_back_to_the_cpu(void **state)
{
    snprintf(spec, sizeof spec,
             "{\"pipeline\": {\"batch_size\": 6, \"num_threads\": 2, \"prefetch_queue_depth\": 2},"
             " \"nodes\": ["
             "  {\"name\": \"reader\", \"op\": \"readers.file\", \"args\": {\"file_root\": "
             "\"%s\", \"random_shuffle\": true, \"seed\": 5}},"
             "  {\"name\": \"dec\", \"op\": \"decoders.image\", \"device\": \"$MIX\","
             "   \"inputs\": [\"reader:0\"]},"
             "  {\"name\": \"flip\", \"op\": \"flip\", \"device\": \"$GPU\", \"inputs\": "
             "[\"dec\"]},"
             "  {\"name\": \"back\", \"op\": \"copy\", \"device\": \"cpu\", \"inputs\": "
             "[\"flip\"]},"
             "  {\"name\": \"back_mixed\", \"op\": \"copy\", \"device\": \"cpu\", \"inputs\": "
             "[\"dec\"]},"
             "  {\"name\": \"f\", \"op\": \"cast\", \"inputs\": [\"back\"], \"args\": "
             "{\"dtype\": \"float32\"}}],"
             " \"outputs\": [\"f\", \"back_mixed\", \"back\"]}",
             tu_env_dir("SLUICE_TEST_TREE"));
    tu_diff d = tu_gpu_compare(spec, 5, 0);
    assert_true(d.elements > 100000 && d.max_abs == 0);
    sl_pipeline *p = tu_gpu_build(spec, true);
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    for (int o = 0; o < 3; o++) /* CPU batches: readable on the host directly */
        assert_int_equal(sl_batch_device(sl_pipeline_output(p, o)), SL_DEVICE_CPU);
    sl_pipeline_destroy(p);
}

static void outputs_live_on_the_gpu(void **state)
{
    sl_pipeline *p = tu_gpu_build(reader_spec(4, 2), true);
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    assert_int_equal(sl_batch_device(sl_pipeline_output(p, 0)), SL_DEVICE_GPU);
    assert_int_equal(sl_batch_device(sl_pipeline_output(p, 1)), SL_DEVICE_GPU);
    assert_int_equal(sl_batch_device(sl_pipeline_output(p, 2)), SL_DEVICE_CPU);
    assert_ptr_not_equal(sl_batch_data(sl_pipeline_output(p, 0)),
                         sl_batch_data(sl_pipeline_output(p, 1)));
    /* a too-small destination is refused, not overrun */
    uint8_t small[4];
    assert_int_equal(sl_batch_copy_to_host(sl_pipeline_output(p, 0), small, sizeof small),
                     SL_EINVAL);
    sl_pipeline_destroy(p);
}

static void steady_state_allocates_no_device_memory(void **state)
{
#ifdef SLUICE_HAVE_CUDA
    for (int separated = 0; separated < 2; separated++) {
        /* in file order: the GPU scratch is sized by what a batch holds (the planes of its
         * images, ...), and in a shuffled order a batch holding more than any before grows it
         * (by half again) at any epoch. In order, with 100 files in batches of 8, the batches
         * repeat every 25 iterations; device entropy decoding (hybrid.h) starts in the second
         * epoch (iteration 13, the files found clean in the first) with scratch of its own, so
         * after 51 iterations every batch has been seen both ways */
        char q[96];
        snprintf(q, sizeof q,
                 separated ? "\"cpu_queue_depth\": 2, \"gpu_queue_depth\": 1"
                           : "\"prefetch_queue_depth\": 2");
        sl_pipeline *p = tu_gpu_build(reader_spec_qs(8, q, false), true);
        for (int i = 0; i < 51; i++)
            assert_int_equal(sl_pipeline_run(p), SL_OK);
        uint64_t before = sl__gpu_alloc_calls(p->gpu);
        for (int i = 0; i < 26; i++)
            assert_int_equal(sl_pipeline_run(p), SL_OK);
        assert_int_equal(sl__gpu_alloc_calls(p->gpu), before);
        sl_pipeline_destroy(p);
    }
#endif
}

/* Separated queues (DALI's prefetch_queue_depth=dict(cpu_size, gpu_size)) deliver the same
 * data as one queue and as the CPU pipeline. */
static void separated_queues_give_the_same_outputs(void **state)
{
    int q[][2] = {{3, 1}, {1, 2}, {2, 2}};
    for (int k = 0; k < 3; k++) {
        tu_diff d = tu_gpu_compare(separated_spec(7, q[k][0], q[k][1]), 9, 0);
        assert_true(d.elements > 1000000);
        assert_true(d.max_abs == 0);
    }
}

/* The GPU stage's outputs live in gpu_queue_depth buffer sets (with one queue, one per
 * iteration in flight), used in turn: the fixed-size crops of successive iterations take
 * exactly that many device addresses. */
static void gpu_outputs_live_in_gpu_queue_depth_sets(void **state)
{
    struct {
        int depth, cpu, gpu, sets;
    } cases[] = {{3, 0, 0, 3}, {0, 3, 1, 1}, {0, 1, 2, 2}, {0, 2, 3, 3}};
    for (int c = 0; c < 4; c++) {
        const char *json = cases[c].depth ? reader_spec(4, cases[c].depth)
                                          : separated_spec(4, cases[c].cpu, cases[c].gpu);
        sl_pipeline *p = tu_gpu_build(json, true);
        const void *seen[16];
        int nseen = 0;
        for (int i = 0; i < 12; i++) {
            assert_int_equal(sl_pipeline_run(p), SL_OK);
            const void *d = sl_batch_data(sl_pipeline_output(p, 3));
            if (i >= cases[c].sets) { /* iteration i uses set i % sets */
                assert_ptr_equal(d, seen[i % cases[c].sets]);
                continue;
            }
            for (int k = 0; k < nseen; k++)
                assert_ptr_not_equal(seen[k], d); /* a set of its own */
            seen[nseen++] = d;
        }
        assert_int_equal(nseen, cases[c].sets);
        sl_pipeline_destroy(p);
    }
}

static int node_index(const sl_pipeline *p, const char *name)
{
    for (int j = 0; j < p->plan->n; j++) {
        if (strcmp(p->plan->nodes[j].name, name) == 0)
            return j;
    }
    fail_msg("no node %s", name);
    return -1;
}

/* Waits (up to 10 s) until iterations 1..3 of p (4 slots) have run node `cpu` and wait, with
 * node `gpu` parked, for a GPU buffer set. */
static bool runs_ahead(sl_pipeline *p, const char *cpu, const char *gpu)
{
    int c = node_index(p, cpu), g = node_index(p, gpu);
    bool ahead = false;
    for (int wait = 0; wait < 1000 && !ahead; wait++) {
        pthread_mutex_lock(&p->mu);
        ahead = p->depth == 4;
        for (int it = 1; it <= 3; it++) {
            const sl__slot *slot = &p->slots[it % p->depth];
            ahead = ahead && slot->iteration == it && slot->state == SLOT_RUNNING &&
                    slot->nodes[c].done && slot->nodes[g].gpu_parked && slot->gset < 0;
        }
        pthread_mutex_unlock(&p->mu);
        if (!ahead)
            usleep(10000);
    }
    return ahead;
}

/* With separated queues the CPU stage runs cpu_queue_depth iterations beyond the GPU stage's
 * sets: while the consumer holds the one GPU set (gpu_queue_depth 1), the readers of the next
 * three iterations run and their mixed decoders wait for the set; asking for another iteration
 * then is an error naming the held one, not a hang; releasing lets the next one through. CPU
 * operators run ahead too: a CPU decoder whose output a mixed copy reads decodes the next
 * three iterations (its output is kept per slot, not shared by the slots). */
static void cpu_stage_runs_ahead_of_the_gpu_sets(void **state)
{
    sl_pipeline *p = tu_gpu_build(separated_spec(4, 3, 1), true);
    assert_int_equal(sl_pipeline_schedule_run(p), SL_OK); /* the first: cpu + gpu iterations */
    assert_int_equal(sl_pipeline_share_outputs(p), SL_OK);
    assert_int_equal(sl_pipeline_iteration(p), 0);
    assert_true(runs_ahead(p, "reader", "dec"));
    assert_int_equal(sl_pipeline_share_outputs(p), SL_EMISUSE);
    print_message("%s\n", sl_pipeline_error(p));
    assert_non_null(strstr(sl_pipeline_error(p), "GPU buffers still shared for iteration 0"));
    assert_int_equal(sl_pipeline_release_outputs(p), SL_OK);
    assert_int_equal(sl_pipeline_share_outputs(p), SL_OK);
    assert_int_equal(sl_pipeline_iteration(p), 1);
    for (int i = 0; i < 6; i++)
        assert_int_equal(sl_pipeline_run(p), SL_OK);
    assert_int_equal(sl_pipeline_iteration(p), 7);
    sl_pipeline_destroy(p);

    snprintf(spec, sizeof spec,
             "{\"pipeline\": {\"batch_size\": 4, \"num_threads\": 2, \"cpu_queue_depth\": 3, "
             "\"gpu_queue_depth\": 1},"
             " \"nodes\": ["
             "  {\"name\": \"reader\", \"op\": \"readers.file\", \"args\": {\"file_root\": "
             "\"%s\"}},"
             "  {\"name\": \"dec\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
             "  {\"name\": \"up\", \"op\": \"copy\", \"device\": \"mixed\", \"inputs\": "
             "[\"dec\"]}],"
             " \"outputs\": [\"up\"]}",
             tu_env_dir("SLUICE_TEST_TREE"));
    p = tu_gpu_build(spec, true);
    assert_int_equal(sl_pipeline_schedule_run(p), SL_OK);
    assert_int_equal(sl_pipeline_share_outputs(p), SL_OK);
    assert_true(runs_ahead(p, "dec", "up"));
    for (int i = 0; i < 5; i++) {
        assert_int_equal(sl_pipeline_release_outputs(p), SL_OK);
        assert_int_equal(sl_pipeline_schedule_run(p), SL_OK);
        assert_int_equal(sl_pipeline_share_outputs(p), SL_OK);
    }
    assert_int_equal(sl_pipeline_iteration(p), 5);
    sl_pipeline_destroy(p);
}

static void pinned_gpu_outputs_stay_unchanged(void **state)
{
    sl_pipeline *p = tu_gpu_build(reader_spec(5, 3), true);
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    sl_outputs *o = sl_pipeline_outputs_pin(p);
    assert_non_null(o);
    const sl_batch *b = sl_outputs_get(o, 1);
    size_t n = sl_batch_nbytes(b);
    void *first = tu_batch_to_host(b);
    for (int i = 0; i < 2; i++) /* depth 3: iterations 1 and 2 use the other slots */
        assert_int_equal(sl_pipeline_run(p), SL_OK);
    void *again = tu_batch_to_host(b);
    assert_memory_equal(first, again, n);
    sl_outputs_unpin(o);
    free(first);
    free(again);
    sl_pipeline_destroy(p);
}

/* More consumer streams than a record can order its reuse after (16): the last unpin waits for
 * the whole device, without the pipeline lock (stage_sets.c: sl__stage_wait_device asserts it),
 * the views unchanged until then, and the pipeline goes on with the same outputs. */
static void many_consumer_streams_wait_unlocked(void **state)
{
    sl_pipeline *p = tu_gpu_build(reader_spec(5, 2), true);
    sl_pipeline *ref = tu_gpu_build(reader_spec(5, 2), true);
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    assert_int_equal(sl_pipeline_run(ref), SL_OK);
    sl_outputs *o = sl_pipeline_outputs_pin(p);
    assert_non_null(o);
    static char fake[17]; /* distinct stream handles: past 16 none is used, the device waits */
    for (int k = 0; k < 17; k++)
        sl_outputs_set_stream(o, &fake[k]);
    void *first = tu_batch_to_host(sl_outputs_get(o, 1));
    sl_outputs_unpin(o);
    void *want = tu_batch_to_host(sl_pipeline_output(ref, 1));
    assert_memory_equal(first, want, sl_batch_nbytes(sl_pipeline_output(ref, 1)));
    free(first);
    free(want);
    for (int k = 1; k < 4; k++) {
        assert_int_equal(sl_pipeline_run(p), SL_OK);
        assert_int_equal(sl_pipeline_run(ref), SL_OK);
        const sl_batch *b = sl_pipeline_output(p, 1);
        void *got = tu_batch_to_host(b), *exp = tu_batch_to_host(sl_pipeline_output(ref, 1));
        assert_memory_equal(got, exp, sl_batch_nbytes(b));
        free(got);
        free(exp);
    }
    sl_pipeline_destroy(p);
    sl_pipeline_destroy(ref);
}

/* Held GPU outputs are set aside (exec/outputs.c): with one queue at depth 1 and with separated
 * queues (2, 2), every iteration's outputs kept while the next runs stay as they were on the
 * device; a loop that keeps the previous batch makes no device allocation once a spare exists;
 * past max_held_bytes the iteration that needs a held set fails after the pin wait, naming it,
 * and runs once the view is gone. */
static void held_gpu_outputs_are_set_aside(void **state)
{
    enum { N = 6 };
    for (int separated = 0; separated < 2; separated++) {
        char q[128];
        snprintf(q, sizeof q, "%s",
                 separated ? "\"cpu_queue_depth\": 2, \"gpu_queue_depth\": 2"
                           : "\"prefetch_queue_depth\": 1");
        sl_pipeline *p = tu_gpu_build(reader_spec_q(5, q), true);
        sl_outputs *o[N];
        void *first[N];
        for (int k = 0; k < N; k++) {
            assert_int_equal(sl_pipeline_run(p), SL_OK);
            o[k] = sl_pipeline_outputs_pin(p);
            first[k] = tu_batch_to_host(sl_outputs_get(o[k], 1));
        }
        for (int k = 0; k < N; k++) {
            const sl_batch *b = sl_outputs_get(o[k], 1);
            assert_int_equal(sl_batch_device(b), SL_DEVICE_GPU);
            void *again = tu_batch_to_host(b);
            assert_memory_equal(first[k], again, sl_batch_nbytes(b));
            free(again);
            free(first[k]);
            sl_outputs_unpin(o[k]);
        }
        sl_pipeline_destroy(p);
    }
#ifdef SLUICE_HAVE_CUDA
    for (int separated = 0; separated < 2; separated++) { /* steady state, keeping one */
        char q[128];
        snprintf(q, sizeof q, "%s",
                 separated ? "\"cpu_queue_depth\": 2, \"gpu_queue_depth\": 1"
                           : "\"prefetch_queue_depth\": 1");
        char *json = tu_gpu_spec(reader_spec_q(8, q), true);
        char *shuffle = strstr(json, "\"random_shuffle\": true");
        assert_non_null(shuffle);
        memcpy(shuffle, "\"random_shuffle\":false", 22); /* the same batches every epoch */
        sl_pipeline *p = tu_gpu_build(json, true);
        free(json);
        sl_outputs *prev = NULL;
        uint64_t before = 0;
        for (int k = 0; k < 3 * 13; k++) { /* 100 files: 13 iterations an epoch */
            if (k == 2 * 13)
                before = sl__gpu_alloc_calls(p->gpu);
            assert_int_equal(sl_pipeline_run(p), SL_OK);
            sl_outputs *out = sl_pipeline_outputs_pin(p);
            sl_outputs_unpin(prev);
            prev = out;
        }
        assert_int_equal(sl__gpu_alloc_calls(p->gpu), before);
        sl_outputs_unpin(prev);
        sl_pipeline_destroy(p);
    }
#endif
    sl_pipeline *p = tu_gpu_build(
        reader_spec_q(5, "\"cpu_queue_depth\": 2, \"gpu_queue_depth\": 2, \"max_held_bytes\": 1"),
        true);
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    sl_outputs *o = sl_pipeline_outputs_pin(p);
    const sl_batch *b = sl_outputs_get(o, 1);
    void *first = tu_batch_to_host(b);
    assert_int_equal(sl_pipeline_run(p), SL_OK);      /* iteration 1: the other set */
    assert_int_equal(sl_pipeline_run(p), SL_EMISUSE); /* iteration 2 needs iteration 0's set */
    print_message("%s\n", sl_pipeline_error(p));
    assert_non_null(strstr(sl_pipeline_error(p), "GPU buffers of iteration 0"));
    assert_non_null(strstr(sl_pipeline_error(p), "of device memory that max_held_bytes allows"));
    void *again = tu_batch_to_host(b);
    assert_memory_equal(first, again, sl_batch_nbytes(b));
    sl_outputs_unpin(o);
    assert_int_equal(sl_pipeline_share_outputs(p), SL_OK);
    assert_int_equal(sl_pipeline_iteration(p), 2);
    free(first);
    free(again);
    sl_pipeline_destroy(p);
}

/* Fault injection over the GPU stage's set-up and first iterations (one queue and separated
 * queues): the N-th allocation fails, for N = 1, 2, ... until none does; every call succeeds
 * or fails cleanly, and the ASan build finds what a failure path leaks. */
static void gpu_stage_survives_allocation_failures(void **state)
{
    for (int separated = 0; separated < 2; separated++) {
        char *json = tu_gpu_spec(separated ? separated_spec(3, 2, 1) : reader_spec(3, 2), true);
        bool fired = true;
        for (uint64_t k = 1; fired && k < 5000; k++) {
            sl_pipeline_options o;
            sl_graph *g = NULL;
            sl_pipeline *p = NULL;
            sl_pipeline_options_init(&o);
            assert_int_equal(sl_pipeline_options_from_json(json, &o), SL_OK);
            o.device_id = 0;
            sl__alloc_fail_after(k);
            sl_status st = sl_graph_from_json(json, &g);
            if (st == SL_OK)
                st = sl_pipeline_create(g, &o, &p);
            if (st == SL_OK)
                st = sl_pipeline_build(p);
            for (int i = 0; st == SL_OK && i < 4; i++)
                st = sl_pipeline_run(p);
            fired = sl__alloc_fail_fired();
            sl__alloc_fail_after(0);
            if (!fired)
                assert_int_equal(st, SL_OK);
            sl_pipeline_destroy(p);
            sl_graph_destroy(g);
        }
        assert_false(fired);
        free(json);
    }
}

static void corrupt_file_in_mixed_decoder_names_it(void **state)
{
    char *dir = tu_mkdtemp();
    char path[1024];
    snprintf(path, sizeof path, "%s/a", dir);
    mkdir(path, 0755);
    const char *tree = tu_env_dir("SLUICE_TEST_TREE");
    /* one good class folder entry, then a truncated JPEG in second position */
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "f=$(ls %s/*/*.jpg | head -1); cp \"$f\" %s/a/0.jpg && head -c 300 \"$f\" > "
             "%s/a/1.jpg && cp \"$f\" %s/a/2.jpg",
             tree, dir, dir, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(spec, sizeof spec,
             "{\"pipeline\": {\"batch_size\": 1, \"num_threads\": 2, \"prefetch_queue_depth\": 2},"
             " \"nodes\": ["
             "  {\"name\": \"reader\", \"op\": \"readers.file\", \"args\": {\"file_root\": "
             "\"%s\"}},"
             "  {\"name\": \"dec\", \"op\": \"decoders.image\", \"device\": \"mixed\","
             "   \"inputs\": [\"reader:0\"]}],"
             " \"outputs\": [\"dec\"]}",
             dir);
    sl_pipeline *p = tu_gpu_build(spec, true);
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    assert_int_not_equal(sl_pipeline_run(p), SL_OK);
    const char *msg = sl_pipeline_error(p);
    print_message("%s\n", msg);
    assert_non_null(strstr(msg, "decoders.image"));
    assert_non_null(strstr(msg, "1.jpg"));
    assert_non_null(strstr(msg, "iteration 1"));
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    sl_pipeline_destroy(p);
    tu_rmtree(dir);
    free(dir);
}

/* Under emulation, host code that reads device memory crashes as it would on a GPU (the pages
 * are PROT_NONE outside emulated kernels and copies): the emulated tests catch it. */
static void emulated_device_memory_is_not_host_memory(void **state)
{
    if (!tu_gpu_emulated()) {
        print_message("on a real device: nothing to check here\n");
        return;
    }
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* depth 1: no later iteration runs meanwhile, whose emulated kernels would open
         * device memory while this thread reads it */
        sl_pipeline *p = tu_gpu_build(reader_spec(2, 1), true);
        if (sl_pipeline_run(p) != SL_OK)
            _exit(3);
        signal(SIGSEGV, SIG_DFL); /* cmocka's handler would catch it in the child */
        const volatile uint8_t *d = sl_batch_data(sl_pipeline_output(p, 1));
        uint8_t v = *d; /* a device pointer read on the host */
        _exit(v == 255 ? 4 : 5);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status))
        fail_msg("the child exited with %d instead of dying of SIGSEGV", WEXITSTATUS(status));
    assert_int_equal(WTERMSIG(status), SIGSEGV);
}

/* Expects the built pipeline's nodes on the devices listed as NULL-terminated name, device
 * pairs, and no other node. */
static void expect_devices(const sl_pipeline *p, ...)
{
    va_list ap;
    int listed = 0;
    va_start(ap, p);
    for (const char *name; (name = va_arg(ap, const char *)); listed++) {
        const char *device = va_arg(ap, const char *);
        bool found = false;
        for (int i = 0; i < sl_pipeline_num_nodes(p); i++) {
            sl_node_stats s;
            assert_int_equal(sl_pipeline_node_stats(p, i, &s), SL_OK);
            if (strcmp(s.name, name) != 0)
                continue;
            found = true;
            if (strcmp(s.device, device) != 0)
                fail_msg("node \"%s\" runs on %s, expected %s", name, s.device, device);
        }
        if (!found)
            fail_msg("no node \"%s\" in the pipeline", name);
    }
    va_end(ap);
    assert_int_equal(sl_pipeline_num_nodes(p), listed);
}

/* DALI: "If the device parameter is not specified, it is selected automatically based on the
 * placement of the inputs" — gpu when at least one input is GPU data. Below a mixed decoder,
 * nodes without a device (one input, two GPU inputs, an arithmetic with a constant) run on
 * gpu and give the CPU pipeline's bytes; a node reading only the reader's labels stays cpu. */
static void inferred_gpu_equals_cpu(void **state)
{
    const char *json = tu_gpu_tree_spec(
        5, 3, 4, "\"flip\", \"half\", \"sum\", \"lab\"",
        "{\"name\": \"dec\", \"op\": \"decoders.image\", \"device\": \"$MIX\","
        " \"inputs\": [\"reader:0\"]},"
        "{\"name\": \"flip\", \"op\": \"flip\", \"inputs\": [\"dec\"], \"args\": {\"vertical\": "
        "1}},"
        "{\"name\": \"half\", \"op\": \"arithmetic\", \"inputs\": [\"flip\"],"
        " \"args\": {\"op\": \"mul\", \"scalar\": 0.5}},"
        "{\"name\": \"sum\", \"op\": \"arithmetic\", \"inputs\": [\"dec\", \"flip\"],"
        " \"args\": {\"op\": \"add\"}},"
        "{\"name\": \"lab\", \"op\": \"cast\", \"inputs\": [\"reader:1\"],"
        " \"args\": {\"dtype\": \"float32\"}}");
    char *copy = strdup(json); /* tu_gpu_tree_spec's buffer is reused */
    tu_diff d = tu_gpu_compare(copy, 4, 0);
    assert_true(d.elements > 100000 && d.max_abs == 0);
    sl_pipeline *p = tu_gpu_build(copy, true);
    expect_devices(p, "reader", "cpu", "dec", "mixed", "flip", "gpu", "half", "gpu", "sum", "gpu",
                   "lab", "cpu", NULL);
    assert_int_equal(sl_pipeline_run(p), SL_OK);
    for (int o = 0; o < 3; o++)
        assert_int_equal(sl_batch_device(sl_pipeline_output(p, o)), SL_DEVICE_GPU);
    assert_int_equal(sl_batch_device(sl_pipeline_output(p, 3)), SL_DEVICE_CPU);
    sl_pipeline_destroy(p);
    p = tu_gpu_build(copy, false); /* the same spec with a cpu decoder: every node on cpu */
    expect_devices(p, "reader", "cpu", "dec", "cpu", "flip", "cpu", "half", "cpu", "sum", "cpu",
                   "lab", "cpu", NULL);
    sl_pipeline_destroy(p);
    free(copy);
}

/* The same through the C API: sl_graph_add(..., NULL) leaves the device to the build, and the
 * spec written from that graph leaves it out too. */
static sl_pipeline *api_pipeline(const char *dec_device)
{
    sl_graph *g = NULL;
    sl_pipeline *p = NULL;
    sl_pipeline_options o;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "readers.file", "reader", NULL), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", tu_env_dir("SLUICE_TEST_TREE")),
                     SL_OK);
    assert_int_equal(sl_graph_add(g, "decoders.image", "dec", dec_device), SL_OK);
    assert_int_equal(sl_graph_input(g, "dec", "reader:0"), SL_OK);
    assert_int_equal(sl_graph_add(g, "flip", "flip", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "flip", "dec"), SL_OK);
    assert_int_equal(sl_graph_add(g, "arithmetic", "half", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "half", "flip"), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "half", "op", "mul"), SL_OK);
    assert_int_equal(sl_graph_arg_float(g, "half", "scalar", 0.5), SL_OK);
    assert_int_equal(sl_graph_output(g, "half"), SL_OK);
    char *json = NULL;
    assert_int_equal(sl_graph_to_json(g, &json), SL_OK);
    assert_non_null(strstr(json, "\"op\": \"flip\",\n      \"inputs\""));
    free(json);
    sl_pipeline_options_init(&o);
    o.batch_size = 4;
    o.num_threads = 2;
    o.device_id = strcmp(dec_device, "cpu") == 0 ? -1 : 0;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    sl_graph_destroy(g);
    if (sl_pipeline_build(p) != SL_OK)
        fail_msg("build: %s", sl_pipeline_error(p));
    return p;
}

static void inferred_gpu_from_the_c_api(void **state)
{
    sl_pipeline *c = api_pipeline("cpu"), *g = api_pipeline("mixed");
    expect_devices(c, "reader", "cpu", "dec", "cpu", "flip", "cpu", "half", "cpu", NULL);
    expect_devices(g, "reader", "cpu", "dec", "mixed", "flip", "gpu", "half", "gpu", NULL);
    for (int it = 0; it < 3; it++) {
        assert_int_equal(sl_pipeline_run(c), SL_OK);
        assert_int_equal(sl_pipeline_run(g), SL_OK);
        const sl_batch *x = sl_pipeline_output(c, 0), *y = sl_pipeline_output(g, 0);
        assert_int_equal(sl_batch_device(y), SL_DEVICE_GPU);
        assert_int_equal(sl_batch_dtype(x), SL_DTYPE_FLOAT32);
        assert_int_equal(sl_batch_dtype(y), SL_DTYPE_FLOAT32);
        assert_int_equal(sl_batch_nbytes(x), sl_batch_nbytes(y));
        void *hx = tu_batch_to_host(x), *hy = tu_batch_to_host(y);
        assert_memory_equal(hx, hy, sl_batch_nbytes(x));
        free(hx);
        free(hy);
    }
    sl_pipeline_destroy(c);
    sl_pipeline_destroy(g);
}

/* Builds spec with device_id; returns the build status, the message in msg. */
static sl_status build_status(const char *json, int device_id, char *msg, size_t n)
{
    sl_pipeline_options o;
    sl_graph *g = NULL;
    sl_pipeline *p = NULL;
    sl_pipeline_options_init(&o);
    o.device_id = device_id;
    assert_int_equal(sl_graph_from_json(json, &g), SL_OK);
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    sl_graph_destroy(g);
    sl_status st = sl_pipeline_build(p);
    snprintf(msg, n, "%s", sl_pipeline_error(p));
    print_message("%s\n", msg);
    sl_pipeline_destroy(p);
    return st;
}

static void placement_errors_name_the_node(void **state)
{
    char msg[2048];
    const char *cpu_into_gpu =
        "{\"nodes\": [{\"name\": \"c\", \"op\": \"random.uniform\"},"
        " {\"name\": \"g\", \"op\": \"copy\", \"device\": \"gpu\", \"inputs\": [\"c\"]}],"
        " \"outputs\": [\"g\"]}";
    assert_int_equal(build_status(cpu_into_gpu, 0, msg, sizeof msg), SL_EINVAL);
    assert_non_null(strstr(msg, "\"g\""));
    assert_non_null(strstr(msg, ".gpu()"));
    const char *gpu_into_cpu =
        "{\"nodes\": [{\"name\": \"c\", \"op\": \"random.uniform\"},"
        " {\"name\": \"m\", \"op\": \"copy\", \"device\": \"mixed\", \"inputs\": [\"c\"]},"
        " {\"name\": \"back\", \"op\": \"cast\", \"device\": \"cpu\", \"inputs\": [\"m\"], "
        "\"args\": {\"dtype\": \"float64\"}}],"
        " \"outputs\": [\"back\"]}";
    assert_int_equal(build_status(gpu_into_cpu, 0, msg, sizeof msg), SL_EINVAL);
    assert_non_null(strstr(msg, "\"back\""));
    assert_non_null(strstr(msg, ".cpu()"));
    const char *no_mixed = "{\"nodes\": [{\"name\": \"u\", \"op\": \"random.uniform\", "
                           "\"device\": \"mixed\"}], \"outputs\": [\"u\"]}";
    assert_int_equal(build_status(no_mixed, 0, msg, sizeof msg), SL_EUNSUPPORTED);
    assert_non_null(strstr(msg, "no mixed implementation"));
    const char *gpu_copy =
        "{\"nodes\": [{\"name\": \"c\", \"op\": \"random.uniform\"},"
        " {\"name\": \"m\", \"op\": \"copy\", \"device\": \"mixed\", \"inputs\": [\"c\"]}],"
        " \"outputs\": [\"m\"]}";
    assert_int_equal(build_status(gpu_copy, -1, msg, sizeof msg), SL_EUNSUPPORTED);
    assert_non_null(strstr(msg, "CPU-only pipeline"));
    assert_int_equal(build_status(gpu_copy, 0, msg, sizeof msg), SL_OK);
    /* a CPU pipeline with device_id 0 never touches CUDA: builds here whatever the machine */
    const char *cpu_only = "{\"nodes\": [{\"name\": \"u\", \"op\": \"random.uniform\"}], "
                           "\"outputs\": [\"u\"]}";
    assert_int_equal(build_status(cpu_only, 0, msg, sizeof msg), SL_OK);
}

/* What a node without a device cannot do where its inputs put it fails the build, naming the
 * node and the input that placed it — never a silent cpu. */
static void inferred_placement_errors_name_the_node(void **state)
{
    char msg[2048];
    /* an operator without a gpu implementation, below GPU data */
    const char *decode_gpu =
        "{\"nodes\": [{\"name\": \"r\", \"op\": \"readers.file\", \"args\": {\"file_root\": "
        "\"/nonexistent\"}},"
        " {\"name\": \"m\", \"op\": \"copy\", \"device\": \"mixed\", \"inputs\": [\"r\"]},"
        " {\"name\": \"d\", \"op\": \"decoders.image\", \"inputs\": [\"m\"]}],"
        " \"outputs\": [\"d\"]}";
    assert_int_equal(build_status(decode_gpu, 0, msg, sizeof msg), SL_EUNSUPPORTED);
    assert_non_null(strstr(msg, "decoders.image (node \"d\")"));
    assert_non_null(strstr(msg, "operator has no gpu implementation"));
    assert_non_null(strstr(msg, "no device was given: input 0 comes from node \"m\" on mixed"));
    /* in a CPU-only pipeline the mixed producer is the error, not the nodes it placed */
    const char *flip_after_mixed =
        "{\"nodes\": [{\"name\": \"f\", \"op\": \"flip\", \"inputs\": [\"m\"]},"
        " {\"name\": \"c\", \"op\": \"random.uniform\"},"
        " {\"name\": \"m\", \"op\": \"copy\", \"device\": \"mixed\", \"inputs\": [\"c\"]}],"
        " \"outputs\": [\"f\"]}";
    assert_int_equal(build_status(flip_after_mixed, -1, msg, sizeof msg), SL_EUNSUPPORTED);
    assert_non_null(strstr(msg, "copy (node \"m\")"));
    assert_non_null(strstr(msg, "device \"mixed\" in a CPU-only pipeline"));
    assert_int_equal(build_status(flip_after_mixed, 0, msg, sizeof msg), SL_OK);
    /* placed on gpu by one input, with another from the CPU */
    const char *gpu_and_cpu =
        "{\"nodes\": [{\"name\": \"c\", \"op\": \"random.uniform\"},"
        " {\"name\": \"m\", \"op\": \"copy\", \"device\": \"mixed\", \"inputs\": [\"c\"]},"
        " {\"name\": \"s\", \"op\": \"arithmetic\", \"inputs\": [\"m\", \"c\"],"
        "  \"args\": {\"op\": \"add\"}}],"
        " \"outputs\": [\"s\"]}";
    assert_int_equal(build_status(gpu_and_cpu, 0, msg, sizeof msg), SL_EINVAL);
    assert_non_null(strstr(msg, "arithmetic (node \"s\")"));
    assert_non_null(strstr(msg, "input 1 comes from CPU node \"c\""));
    assert_non_null(strstr(msg, "no device was given, and input 0 is GPU data"));
    assert_non_null(strstr(msg, ".gpu()"));
    /* a given device wins over the inputs: cpu reading GPU data stays the error it was */
    const char *given_cpu =
        "{\"nodes\": [{\"name\": \"c\", \"op\": \"random.uniform\"},"
        " {\"name\": \"m\", \"op\": \"copy\", \"device\": \"mixed\", \"inputs\": [\"c\"]},"
        " {\"name\": \"f\", \"op\": \"flip\", \"device\": \"cpu\", \"inputs\": [\"m\"]}],"
        " \"outputs\": [\"f\"]}";
    assert_int_equal(build_status(given_cpu, 0, msg, sizeof msg), SL_EINVAL);
    assert_non_null(strstr(msg, "flip (node \"f\")"));
    assert_non_null(
        strstr(msg, "input 0 comes from node \"m\" on mixed; a cpu operator reads CPU"));
}

int main(void)
{
    tu_gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mixed_decode_equals_cpu),
        cmocka_unit_test(outputs_live_on_the_gpu),
        cmocka_unit_test(gpu_data_back_to_the_cpu),
        cmocka_unit_test(steady_state_allocates_no_device_memory),
        cmocka_unit_test(pinned_gpu_outputs_stay_unchanged),
        cmocka_unit_test(many_consumer_streams_wait_unlocked),
        cmocka_unit_test(separated_queues_give_the_same_outputs),
        cmocka_unit_test(gpu_outputs_live_in_gpu_queue_depth_sets),
        cmocka_unit_test(cpu_stage_runs_ahead_of_the_gpu_sets),
        cmocka_unit_test(held_gpu_outputs_are_set_aside),
        cmocka_unit_test(gpu_stage_survives_allocation_failures),
        cmocka_unit_test(corrupt_file_in_mixed_decoder_names_it),
        cmocka_unit_test(placement_errors_name_the_node),
        cmocka_unit_test(inferred_gpu_equals_cpu),
        cmocka_unit_test(inferred_gpu_from_the_c_api),
        cmocka_unit_test(inferred_placement_errors_name_the_node),
        cmocka_unit_test(emulated_device_memory_is_not_host_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
