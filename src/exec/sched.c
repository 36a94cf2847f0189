/* src/exec/sched.c: frames and node tasks — the dataflow scheduler.
 *
 * Exports sl__exec_start_frames_locked and sl__exec_frame_fail. A node runs as a chain of tasks:
 *   node_task (setup, serial) -> setup_sample tasks (parallel) -> alloc (by the last of them)
 *   -> run_sample tasks (parallel) or run_batch -> complete (by the last of them).
 * Completion decrements the consumers' pending counts under mu and submits those that reach
 * zero. A node whose outputs use storage shared by the slots (istore.c) may park between
 * per-sample setup and allocation; the completion that frees the storage resumes it. Once a frame
 * has failed, the remaining work of that frame is skipped (not its bookkeeping), so the frame still
 * completes and the error is delivered in order.
 *
 * Sample fusion (pn->fuse_into, plan.c): a fused node runs its setup phases as usual, then,
 * instead of allocating and running, releases its one consumer (which needs only its shapes).
 * The chain's tail, after its own allocation, runs one task per sample that calls run_sample
 * of every node of the chain, head first, each intermediate sample in the worker's scratch
 * (ping-pong between two buffers), and its completion completes the whole chain, head first:
 * a fused node's producers stay alive until then. Before a sample runs, the chain's nodes say,
 * tail first, which part of their fused input they will read (roi_sample); a producer may
 * then compute only that part of its sample (sl_ctx_output_roi).
 */
#include <assert.h>
#include <string.h>

#include "exec/cache.h"
#include "exec/exec.h"

static void node_task(void *arg, int64_t i, int worker);
static void setup_sample_task(void *arg, int64_t i, int worker);
static void run_sample_task(void *arg, int64_t i, int worker);
static void fused_run_task(void *arg, int64_t i, int worker);
static void resume_task(void *arg, int64_t i, int worker);

/* The thread pool's order: setup work before run work, then older iterations first, then
 * producers before consumers. Setup work is a node's setup and per-sample setup tasks and a
 * source's (a reader's) run tasks: short, and what lets the next iterations' run tasks be
 * queued. So the next iteration's reads and header parses run as soon as a thread is free,
 * not after the older iteration's last run task was taken, and when that iteration's tail
 * leaves threads idle, the next one's samples are already waiting (issue 21: with 16 threads
 * and 64 samples per batch the threads ran dry at every batch's tail; bench/sim.py replays it).
 * The iterations in flight are bounded by the prefetch depth, so setup work cannot run
 * further ahead than that. */
static uint64_t prio(const sl__snode *sn, bool run)
{
    bool late = run && !(sn->p->plan->nodes[sn->node].op->flags & SL_OP_SOURCE);
    return ((uint64_t)late << 62) | ((uint64_t)sn->slot->iteration << 20) | (uint64_t)sn->node;
}

static void complete_node_locked(sl__snode *sn, int64_t end);

/* A fused node's setup is done (or skipped): its consumer may count it. Needs mu. */
static void release_fused_consumer_locked(sl_pipeline *p, sl__snode *sn);

/* A task of node sn could not be queued: fails its frame (first error wins) with that. Needs
 * mu. Returns sn's plan node. */
static const sl__pnode *queue_failed_locked(sl_pipeline *p, sl__snode *sn)
{
    SL__ASSERT_LOCKED(p);
    const sl__pnode *pn = &p->plan->nodes[sn->node];
    sl__exec_frame_failf_locked(sn->slot, SL_ENOMEM, pn->op->name, pn->name, -1, NULL,
                                "out of memory while queueing work");
    return pn;
}

/* Queues node sn's setup task. Needs mu. If the queue cannot grow, the frame fails here and
 * the node completes without running, so the frame still finishes and the error is delivered. */
static void submit_node_locked(sl_pipeline *p, sl__snode *sn)
{
    SL__ASSERT_LOCKED(p);
    sl__task t = {.fn = node_task, .arg = sn, .i = 0, .prio = prio(sn, false)};
    if (sn->submitted)
        return;
    if (sn->slot->gset < 0 && p->gsets && p->plan->nodes[sn->node].stage != SL__STAGE_CPU) {
        sn->gpu_parked = true; /* its outputs are in the buffer set it waits for (stage_sets.c) */
        return;
    }
    sn->submitted = true;
    if (sl__tpool_submit(p->pool, &t, 1) != SL_ENOMEM)
        return;
    const sl__pnode *pn = queue_failed_locked(p, sn);
    sn->t_start = sl__now_ns();
    atomic_store(&sn->busy_ns, 0);
    /* a fused node completes with its chain's tail, which must still run */
    if (pn->fuse_into >= 0) {
        release_fused_consumer_locked(p, sn);
        return;
    }
    /* its turn on shared output storage must still pass in order: parked, it completes when
     * resumed (run_allocated sees the failed frame) */
    if (sl__istore_acquire_locked(p, sn))
        complete_node_locked(sn, sn->t_start);
}

void sl__exec_gpu_resume_locked(sl_pipeline *p, sl__slot *slot)
{
    SL__ASSERT_LOCKED(p);
    for (int j = 0; j < p->plan->n; j++) {
        sl__snode *sn = &slot->nodes[j];
        if (sn->gpu_parked) {
            sn->gpu_parked = false;
            submit_node_locked(p, sn);
        }
    }
}

void sl__exec_slot_free_locked(sl_pipeline *p, sl__slot *slot)
{
    SL__ASSERT_LOCKED(p);
    slot->state = SLOT_FREE;
    sl__stage_slot_free_locked(p, slot);
    sl__exec_start_frames_locked(p);
}

static void release_fused_consumer_locked(sl_pipeline *p, sl__snode *sn)
{
    SL__ASSERT_LOCKED(p);
    sl__snode *c = &sn->slot->nodes[p->plan->nodes[sn->node].fuse_into];
    if (--c->pending == 0)
        submit_node_locked(p, c);
}

/* Submits `n` per-sample tasks of fn for node sn, all or none (one pool call on the node's
 * preallocated task array). Returns the pool's status. */
static sl_status submit_samples(sl_pipeline *p, sl__snode *sn, sl__task_fn fn, int n)
{
    bool run = fn != setup_sample_task;
    atomic_store(&sn->remaining, n);
    for (int k = 0; k < n; k++)
        sn->tasks[k] = (sl__task){.fn = fn, .arg = sn, .i = k, .prio = prio(sn, run)};
    return sl__tpool_submit(p->pool, sn->tasks, n);
}

/* The frame's error: the first one, unless both name samples and e's comes earlier in the
 * batch (a sample before the recorded one was still running: sample_runs). fail_sample is
 * stored before failed, so a task that sees the frame failed sees at least that sample. */
void sl__exec_frame_fail_locked(sl__slot *slot, const sl__error *e)
{
    SL__ASSERT_LOCKED(slot->p);
    if (atomic_load(&slot->failed) &&
        !(e->sample >= 0 && slot->err.sample >= 0 && e->sample < slot->err.sample))
        return;
    slot->err = *e;
    atomic_store(&slot->fail_sample, e->sample);
    atomic_store(&slot->failed, true);
}

void sl__exec_frame_failf_locked(sl__slot *slot, sl_status code, const char *op, const char *node,
                                 int sample, const char *source, const char *fmt, ...)
{
    SL__ASSERT_LOCKED(slot->p);
    sl__error e;
    va_list ap;
    va_start(ap, fmt);
    sl__error_setv(&e, code, op, node, slot->iteration, sample, source, fmt, ap);
    va_end(ap);
    sl__exec_frame_fail_locked(slot, &e);
}

void sl__exec_frame_fail(sl__slot *slot, const sl__error *e, sl_pipeline *p)
{
    sl__exec_lock(p);
    sl__exec_frame_fail_locked(slot, e);
    sl__exec_unlock(p);
}

/* Records a failure of the op's function that returned st without calling sl_fail. */
static void op_failed(sl_ctx *ctx, sl_status st, const char *what)
{
    if (ctx->failed)
        return;
    sl_fail(ctx, st, "%s failed with %s", what, sl_status_name(st));
}

/* ---- completion ------------------------------------------------------------------------ */

static void release_stateful_successor_locked(sl_pipeline *p, int node, int64_t iteration)
{
    SL__ASSERT_LOCKED(p);
    p->stateful_next[node] = iteration + 1;
    sl__slot *next = &p->slots[(iteration + 1) % p->depth];
    if (next->state != SLOT_RUNNING || next->iteration != iteration + 1)
        return; /* that frame starts later and will see stateful_next */
    sl__snode *sn = &next->nodes[node];
    if (--sn->pending == 0)
        submit_node_locked(p, sn);
}

/* Marks sn done: stats, consumers' pending counts, the stateful successor, frame readiness.
 * The tail of a fused chain completes the chain's nodes first (head first). Needs mu. */
static void complete_node_locked(sl__snode *sn, int64_t end)
{
    SL__ASSERT_LOCKED(sn->p);
    sl_pipeline *p = sn->p;
    const sl__pnode *pn = &p->plan->nodes[sn->node];
    if (pn->fused_from >= 0)
        complete_node_locked(&sn->slot->nodes[pn->fused_from], end);
    sl__stats_record_locked(p, sn->node, sn->slot->iteration, sn->t_start, end,
                            atomic_load(&sn->busy_ns));
    for (int i = 0; sn->sampled && i < sn->slot->scope_n[pn->scope]; i++) {
        const sl__sspan *sp = &sn->sspans[i];
        if (sp->end_ns)
            p->strace[p->strace_count++ % SL__SAMPLE_SPANS] = *sp;
    }
    p->stats[sn->node].fallbacks += atomic_exchange(&sn->fallbacks, 0);
    sn->done = true;
    sl__istore_node_done_locked(p, sn); /* before the slot can become READY and be reused */
    for (int k = 0; pn->fuse_into < 0 && k < pn->nsucc; k++) { /* fused: released at setup */
        sl__snode *s = &sn->slot->nodes[pn->succ[k]];
        if (--s->pending == 0)
            submit_node_locked(p, s);
    }
    if (pn->op->flags & SL_OP_STATEFUL)
        release_stateful_successor_locked(p, sn->node, sn->slot->iteration);
    if (--sn->slot->nodes_left == 0) {
        sl__cache_frame_done_locked(p, sn->slot); /* sample cache: fills complete or dropped */
        sl__stage_frame_done_locked(p, sn->slot);
        sn->slot->state = SLOT_READY;
        pthread_cond_broadcast(&p->cv);
    }
}

static void complete_node(sl__snode *sn)
{
    int64_t end = sl__now_ns();
    sl__exec_lock(sn->p);
    complete_node_locked(sn, end);
    sl__exec_unlock(sn->p);
}

/* ---- phases ---------------------------------------------------------------------------- */

static sl_ctx make_ctx(sl__snode *sn, int sample, int worker)
{
    return (sl_ctx){.p = sn->p,
                    .slot = sn->slot,
                    .sn = sn,
                    .pn = &sn->p->plan->nodes[sn->node],
                    .sample = sample,
                    .worker = worker};
}

static void add_busy(sl__snode *sn, int64_t t0)
{
    atomic_fetch_add_explicit(&sn->busy_ns, sl__now_ns() - t0, memory_order_relaxed);
}

static sl_status alloc_outputs(sl_ctx *ctx)
{
    for (int o = 0; o < ctx->pn->nout; o++) {
        if (ctx->sn->wouts[o].size != sl__ctx_output_size(ctx, o))
            return sl_fail(ctx, SL_EINTERNAL, "setup did not declare output %d", o);
        if (atomic_load(&ctx->slot->any_bad) && sl__bad_shapes(ctx, &ctx->sn->wouts[o]) != SL_OK)
            return SL_ECORRUPT;
        if (sl__ctx_check_sizes(ctx, &ctx->sn->wouts[o], o) != SL_OK)
            return SL_EINVAL;
    }
    if (ctx->pn->stage == SL__STAGE_MIXED)
        return sl__stage_alloc_mixed(ctx);
    for (int o = 0; o < ctx->pn->nout; o++) {
        if (sl__istore_alloc(ctx->sn, o) != SL_OK)
            return sl_fail(ctx, SL_ENOMEM, "out of memory for output %d (%zu bytes)", o,
                           ctx->sn->outs[o].offsets[ctx->sn->outs[o].size]);
        if (atomic_load(&ctx->slot->any_bad))
            sl__bad_zero(ctx, &ctx->sn->outs[o]);
    }
    return SL_OK;
}

/* After a node's CPU work: a mixed node queues the copies of its outputs to the GPU. */
static void finish_node(sl__snode *sn, int worker)
{
    if (sn->p->plan->nodes[sn->node].stage == SL__STAGE_MIXED && !atomic_load(&sn->slot->failed)) {
        sl_ctx ctx = make_ctx(sn, -1, worker);
        if (ctx.pn->op->flags & SL_OP_MIXED_GPU) {
            int64_t t0 = sl__now_ns();
            sl_status st = sl__stage_run_mixed_gpu(&ctx);
            add_busy(sn, t0);
            if (st != SL_OK)
                op_failed(&ctx, st, "run_gpu");
        } else {
            sl__stage_copy_mixed(&ctx);
        }
    }
    complete_node(sn);
}

/* Allocates (the node's turn for shared storage has come), then runs per sample or per batch
 * (CPU and mixed nodes) or enqueues the batch's GPU work (gpu nodes). */
static void run_allocated(sl__snode *sn, int worker)
{
    sl_ctx ctx = make_ctx(sn, -1, worker);
    const sl_op_def *op = ctx.pn->op;
    if (atomic_load(&sn->slot->failed) || alloc_outputs(&ctx) != SL_OK) {
        complete_node(sn);
        return;
    }
    if (ctx.pn->stage == SL__STAGE_GPU || ctx.pn->to_host) {
        int64_t t0 = sl__now_ns();
        sl_status st = ctx.pn->to_host ? sl__stage_to_host(&ctx) : sl__stage_run_gpu(&ctx);
        add_busy(sn, t0);
        if (st != SL_OK)
            op_failed(&ctx, st, ctx.pn->to_host ? "the copy from the GPU" : "run_gpu");
        complete_node(sn);
        return;
    }
    int n = sl_ctx_batch_size(&ctx);
    if (op->run_sample && n > 0) {
        sn->phase = PHASE_RUN_SAMPLE;
        sn->sampled = true;
        sl__task_fn fn = ctx.pn->fused_from >= 0 ? fused_run_task : run_sample_task;
        if (submit_samples(sn->p, sn, fn, n) == SL_OK)
            return;
        sl_fail(&ctx, SL_ENOMEM, "out of memory while queueing work");
        complete_node(sn);
        return;
    }
    if (op->run_batch) {
        int64_t t0 = sl__now_ns();
        sl_status st = op->run_batch(&ctx);
        add_busy(sn, t0);
        if (st != SL_OK)
            op_failed(&ctx, st, "run_batch");
    }
    finish_node(sn, worker);
}

/* A fused node after its setup phases: checks what they declared, then lets its consumer
 * start (the chain's tail will run it per sample and complete it). */
static void fused_setup_done(sl__snode *sn, int worker)
{
    sl_pipeline *p = sn->p;
    sl_ctx ctx = make_ctx(sn, -1, worker);
    if (!atomic_load(&sn->slot->failed) && sn->outs[0].size != sl_ctx_batch_size(&ctx))
        sl_fail(&ctx, SL_EINTERNAL, "setup did not declare output 0");
    else if (!atomic_load(&sn->slot->failed) && atomic_load(&sn->slot->any_bad) &&
             sl__bad_shapes(&ctx, &sn->outs[0]) != SL_OK)
        ;                                     /* the frame failed: no good sample */
    else if (!atomic_load(&sn->slot->failed)) /* its samples go to scratch: the same limit */
        sl__ctx_check_sizes(&ctx, &sn->outs[0], 0);
    sl__exec_lock(p);
    release_fused_consumer_locked(p, sn);
    sl__exec_unlock(p);
}

/* After setup (and per-sample setup): takes the node's shared output storage (istore.c), or
 * parks the node until the completion that frees it resumes it (resume_task), then goes on. */
static void alloc_and_run(sl__snode *sn, int worker)
{
    sl_pipeline *p = sn->p;
    if (p->cache) /* sample cache: cached samples take their cached shapes */
        sl__cache_shapes(sn, worker);
    if (p->plan->nodes[sn->node].fuse_into >= 0) {
        fused_setup_done(sn, worker);
        return;
    }
    if (p->istores[sn->node].nstored) {
        sl__exec_lock(p);
        bool go = sl__istore_acquire_locked(p, sn);
        sl__exec_unlock(p);
        if (!go)
            return;
    }
    run_allocated(sn, worker);
}

static void resume_task(void *arg, int64_t i, int worker)
{
    run_allocated(arg, worker);
}

void sl__exec_resume_locked(sl_pipeline *p, sl__snode *sn)
{
    SL__ASSERT_LOCKED(p);
    sl__task t = {.fn = resume_task, .arg = sn, .i = 0, .prio = prio(sn, true)};
    if (sl__tpool_submit(p->pool, &t, 1) != SL_ENOMEM)
        return;
    queue_failed_locked(p, sn);
    complete_node_locked(sn, sl__now_ns());
}

static void node_task(void *arg, int64_t i, int worker)
{
    sl__snode *sn = arg;
    sl_ctx ctx = make_ctx(sn, -1, worker);
    sn->t_start = sl__now_ns();
    atomic_store(&sn->busy_ns, 0);
    /* A failed frame skips its remaining work, except the setup of a stateful source: that is
     * where its state advances (a reader's cursor), and iteration k+1 must read the same
     * samples whether or not something else failed iteration k first — results never depend
     * on scheduling. (A stateful node with producers cannot run on their skipped outputs.) The
     * later phases see the failure and skip. */
    bool stateful_source = (ctx.pn->op->flags & SL_OP_STATEFUL) && ctx.pn->npred == 0;
    if (atomic_load(&sn->slot->failed) && !stateful_source) {
        /* Still through the allocation phase: a node with shared output storage must pass its
         * turn in iteration order (istore.c), even when it does nothing. */
        alloc_and_run(sn, worker);
        return;
    }
    if (ctx.pn->op->checkpoint && sn->p->opt.enable_checkpointing)
        sl__ckpt_snapshot(sn); /* before the setup moves its state on (ckpt.c) */
    sl_status st = sl__ctx_check_arg_inputs(&ctx);
    if (st == SL_OK) {
        st = ctx.pn->op->setup(&ctx);
        if (st == SL_OK && ctx.oom != SL_OK)
            st = sl_fail(&ctx, ctx.oom, "out of memory declaring outputs");
        if (st != SL_OK)
            op_failed(&ctx, st, "setup");
        else if (sn->p->cache) /* sample cache: a reader's samples, hit or not */
            sl__cache_root_setup(&ctx);
    }
    add_busy(sn, sn->t_start);
    int n = sl_ctx_batch_size(&ctx);
    if (st == SL_OK && ctx.pn->op->setup_sample && n > 0) {
        sn->phase = PHASE_SETUP_SAMPLE;
        if (submit_samples(sn->p, sn, setup_sample_task, n) == SL_OK)
            return;
        sl_fail(&ctx, SL_ENOMEM, "out of memory while queueing work");
    }
    alloc_and_run(sn, worker); /* on failure it only passes its storage turn and completes */
}

/* The index in the whole batch of sample `sample` of sn's scope. */
static int sample_index(sl__snode *sn, int sample)
{
    sl_ctx ctx = make_ctx(sn, sample, 0);
    return sl__ctx_sample_index(&ctx, sample);
}

/* The trace's record of sample `sample`'s run task (t0 0: it did not run). */
static void sample_span(sl__snode *sn, int sample, int worker, int64_t t0)
{
    sn->sspans[sample] = (sl__sspan){.node = sn->node,
                                     .sample = sample,
                                     .worker = worker,
                                     .iteration = sn->slot->iteration,
                                     .start_ns = t0,
                                     .end_ns = t0 ? sl__now_ns() : 0};
}

/* Whether sample `sample` (in sn's scope) runs its per-sample work: not when it is bad
 * (bad.c), nor when the frame failed, unless the failure names a later sample of the batch —
 * then this one still runs, so that its own failure, if any, is the one reported. */
static bool sample_runs(sl__snode *sn, int sample)
{
    int k = sample_index(sn, sample);
    if (atomic_load_explicit(&sn->slot->failed, memory_order_acquire) &&
        !(k < atomic_load_explicit(&sn->slot->fail_sample, memory_order_relaxed)))
        return false;
    return !sl__bad_is(sn->slot, k);
}

/* Runs fn for one sample when sample_runs says so; returns true for the phase's last task. */
static bool sample_step(sl__snode *sn, int sample, int worker, sl_status (*fn)(sl_ctx *, int),
                        const char *what)
{
    int64_t t0 = 0;
    if (sample_runs(sn, sample)) {
        sl_ctx ctx = make_ctx(sn, sample, worker);
        t0 = sl__now_ns();
        sl_status st = sn->p->cache /* sample cache: a cached sample skips fn */
                           ? sl__cache_run(&ctx, sample, fn, sn->phase == PHASE_RUN_SAMPLE)
                           : fn(&ctx, sample);
        add_busy(sn, t0);
        if (st != SL_OK)
            op_failed(&ctx, st, what);
    }
    if (sn->phase == PHASE_RUN_SAMPLE)
        sample_span(sn, sample, worker, t0);
    return atomic_fetch_sub_explicit(&sn->remaining, 1, memory_order_acq_rel) == 1;
}

static void setup_sample_task(void *arg, int64_t i, int worker)
{
    sl__snode *sn = arg;
    if (sample_step(sn, (int)i, worker, sn->p->plan->nodes[sn->node].op->setup_sample,
                    "setup_sample"))
        alloc_and_run(sn, worker);
}

static void run_sample_task(void *arg, int64_t i, int worker)
{
    sl__snode *sn = arg;
    if (sample_step(sn, (int)i, worker, sn->p->plan->nodes[sn->node].op->run_sample, "run_sample"))
        finish_node(sn, worker);
}

/* Runs sample `sample` of every node of a fused chain (chain[0] the tail, chain[len - 1] the
 * head), head first. A fused node writes the sample into worker scratch, alternating between
 * the worker's two buffers along the chain so that a node never writes what it reads; a
 * sample larger than p->fuse_keep gets a buffer of its own, freed as soon as its consumer has
 * run, so that the threads' scratch stays small whatever outliers the data holds. Returns
 * false when a node failed (the frame's error is recorded). */
static bool run_chain_sample(sl__snode *tail, const int *chain, int len, int sample, int worker)
{
    sl_pipeline *p = tail->p;
    uint8_t *own[2] = {NULL, NULL}; /* per buffer parity: a one-off buffer, or NULL */
    bool ok = true;
    for (int k = len - 1, pos = 0; ok && k >= 0; k--, pos++) {
        sl__snode *sn = &tail->slot->nodes[chain[k]];
        sl_ctx ctx = make_ctx(sn, sample, worker);
        int64_t t0 = sl__now_ns();
        if (k > 0) { /* fused: its output goes to scratch, where buffer pos & 1 is dead now */
            sl_batch *b = &sn->outs[0];
            size_t bytes = (size_t)sl_batch_sample_numel(b, sample) * sl_dtype_size(b->dtype);
            size_t want = bytes > 64 ? bytes : 64; /* an empty sample still has an address */
            uint8_t *buf;
            sl__free(own[pos & 1]);
            own[pos & 1] = NULL;
            if (want > p->fuse_keep)
                buf = own[pos & 1] = sl__aligned_alloc(want);
            else
                buf = sl__scratch_get(&p->fuse_scratch[worker * 2 + (pos & 1)], want,
                                      &p->fuse_hw[pos & 1]);
            if (!buf) {
                sl_fail(&ctx, SL_ENOMEM, "out of memory for output 0 of sample %d (%zu bytes)",
                        sample, want);
                ok = false;
                break;
            }
            b->sample_ptrs[sample] = buf;
        }
        sl_status (*fn)(sl_ctx *, int) = p->plan->nodes[chain[k]].op->run_sample;
        /* sample cache: a cached node's sample comes from the cache (a fused one's output may
         * then point into it), a sample being filled is stored */
        sl_status st = p->cache ? sl__cache_run(&ctx, sample, fn, true) : fn(&ctx, sample);
        add_busy(sn, t0);
        if (st != SL_OK) {
            op_failed(&ctx, st, "run_sample");
            ok = false;
        }
    }
    sl__free(own[0]);
    sl__free(own[1]);
    return ok;
}

/* Asks the chain (as run_chain_sample), tail first, which part of each fused intermediate
 * sample its consumer reads (op roi_sample, sl_ctx_input_roi). Returns false when one failed. */
static bool chain_rois(sl__snode *tail, const int *chain, int len, int sample, int worker)
{
    sl_pipeline *p = tail->p;
    for (int k = 1; k < len; k++)
        tail->slot->nodes[chain[k]].roi_set[sample] = false;
    for (int k = 0; k < len; k++) {
        sl__snode *sn = &tail->slot->nodes[chain[k]];
        const sl_op_def *op = p->plan->nodes[chain[k]].op;
        /* sample cache: a cached node does not run; one being stored computes all its output */
        if (p->cache && sl__cache_roi(sn, sample))
            continue;
        if (k == len - 1 || !op->roi_sample) /* the head's inputs are whole batches */
            continue;
        sl_ctx ctx = make_ctx(sn, sample, worker);
        int64_t t0 = sl__now_ns();
        sl_status st = op->roi_sample(&ctx, sample);
        add_busy(sn, t0);
        if (st != SL_OK) {
            op_failed(&ctx, st, "roi_sample");
            return false;
        }
    }
    return true;
}

/* The per-sample task of a fused chain's tail (after the tail's allocation). */
static void fused_run_task(void *arg, int64_t i, int worker)
{
    sl__snode *sn = arg;
    const sl__plan *plan = sn->p->plan;
    int chain[SL__MAX_CHAIN], len = 0; /* the tail first */
    for (int j = sn->node; j >= 0; j = plan->nodes[j].fused_from)
        chain[len++] = j;
    sl_pipeline *p = sn->p;
    int64_t t0 = 0;
    if (sample_runs(sn, (int)i)) {
        t0 = sl__now_ns();
        if (!(p->cache && sl__cache_chain(sn, (int)i, worker)) && /* sample cache: a hit */
            chain_rois(sn, chain, len, (int)i, worker))
            run_chain_sample(sn, chain, len, (int)i, worker);
    }
    sample_span(sn, (int)i, worker, t0);
    if (atomic_fetch_sub_explicit(&sn->remaining, 1, memory_order_acq_rel) == 1)
        finish_node(sn, worker);
}

/* ---- frames ---------------------------------------------------------------------------- */

/* The batch size of iteration `it`: what the sources that decide it say (they must agree), else
 * the pipeline's. A disagreement fails the frame. Needs mu. */
static int frame_batch_size_locked(sl_pipeline *p, sl__slot *slot, int64_t it)
{
    SL__ASSERT_LOCKED(p);
    int bs = 0, first = -1;
    for (int j = 0; j < p->plan->n; j++) {
        const sl__pnode *pn = &p->plan->nodes[j];
        int v = pn->op->batch_size ? pn->op->batch_size(p->states[j], it) : 0;
        if (v <= 0)
            continue;
        if (bs && v != bs)
            sl__exec_frame_failf_locked(slot, SL_EINVAL, pn->op->name, pn->name, -1, NULL,
                                        "fed %d samples for this iteration, but node \"%s\" was "
                                        "fed %d",
                                        v, p->plan->nodes[first].name, bs);
        if (!bs) {
            bs = v;
            first = j;
        }
    }
    return bs ? bs : p->opt.batch_size;
}

/* prefetch_queue_depth "auto" (autotune.c): iteration k runs in slot k % SL__AUTO_SLOTS, but
 * only about tune.depth slots are in use at a time; a frame starting in a slot whose outputs
 * have no storage yet takes a free slot's (the batches swapped whole: storage and sample
 * metadata), so the storage follows the frames and as many sets exist as slots were ever in
 * use at once, not SL__AUTO_SLOTS. Both slots are free: no view and no istore holder uses
 * either's batches. Needs mu. */
static void take_storage_locked(sl_pipeline *p, sl__slot *slot)
{
    SL__ASSERT_LOCKED(p);
    for (int s = 0; p->tune.on && !slot->has_storage && s < p->depth; s++) {
        sl__slot *from = &p->slots[s];
        if (from == slot || from->state != SLOT_FREE || !from->has_storage)
            continue;
        for (int j = 0; j < p->plan->n; j++) {
            for (int o = 0; o < p->plan->nodes[j].nout; o++) {
                sl_batch b = slot->nodes[j].outs[o];
                slot->nodes[j].outs[o] = from->nodes[j].outs[o];
                from->nodes[j].outs[o] = b;
            }
        }
        from->has_storage = false;
        break;
    }
    slot->has_storage = true;
}

/* Starts iteration `it` in its (free) slot. Needs mu. */
static void start_frame_locked(sl_pipeline *p, int64_t it)
{
    SL__ASSERT_LOCKED(p);
    sl__slot *slot = &p->slots[it % p->depth];
    take_storage_locked(p, slot);
    slot->iteration = it;
    slot->state = SLOT_RUNNING;
    slot->nodes_left = p->plan->n;
    atomic_store(&slot->failed, false);
    atomic_store(&slot->fail_sample, -1);
    sl__error_clear(&slot->err);
    sl__bad_frame_start_locked(p, slot);
    sl__stage_frame_start_locked(p, slot);
    slot->batch_size = frame_batch_size_locked(p, slot, it);
    slot->scope_n[0] = slot->batch_size;
    for (int s = 1; s < p->plan->nscopes; s++)
        slot->scope_n[s] = 0; /* its split sets it */
    for (int j = 0; j < p->plan->n; j++) {
        sl__snode *sn = &slot->nodes[j];
        const sl__pnode *pn = &p->plan->nodes[j];
        assert(!sn->holds); /* the slot's previous frame released everything */
        sn->done = false;
        sn->submitted = false;
        sn->parked = false;
        sn->gpu_parked = false;
        sn->sampled = false;
        sn->consumers_left = pn->nsucc;
        sn->pending = pn->npred;
        if ((pn->op->flags & SL_OP_STATEFUL) && p->stateful_next[j] != it)
            sn->pending++;
    }
    for (int j = 0; j < p->plan->n; j++) {
        if (slot->nodes[j].pending == 0)
            submit_node_locked(p, &slot->nodes[j]);
    }
}

void sl__exec_start_frames_locked(sl_pipeline *p)
{
    SL__ASSERT_LOCKED(p);
    while (!p->stopping && p->started < p->scheduled) {
        sl__slot *slot = &p->slots[p->started % p->depth];
        if (slot->state != SLOT_FREE)
            break;
        start_frame_locked(p, p->started++);
    }
}
