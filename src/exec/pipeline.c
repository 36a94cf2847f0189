/* src/exec/pipeline.c: the pipeline object and its run API (sl_pipeline_*).
 *
 * Exports the public calls of sluice/pipeline.h except stats (stats.c). Build turns the graph
 * into a plan, initialises each operator, allocates `depth` slots and starts the thread pool.
 * The consumer side (schedule_run / share_outputs / release_outputs) only moves slot states
 * under mu and waits on cv; all work happens on the pool's threads.
 */
#include <assert.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec/cache.h"
#include "exec/exec.h"
#include "sluice/distributed.h"

_Thread_local char sl__exec_thread_tag;

void sl_pipeline_options_init(sl_pipeline_options *o)
{
    o->batch_size = 1;
    o->num_threads = SL_NUM_THREADS_AUTO;
    o->prefetch_queue_depth = SL_PREFETCH_AUTO;
    o->seed = -1; /* a fresh seed per pipeline, drawn by sl_pipeline_create */
    o->device_id = -1;
    o->fuse_samples = 1;
    o->cpu_queue_depth = 0;
    o->gpu_queue_depth = 0;
    o->max_held_bytes = 0;
    o->max_sample_bytes = (int64_t)1 << 30;
    o->on_bad_sample = SL_BAD_SAMPLE_RAISE;
    o->max_bad_samples = 0;
    o->prefetch_max_bytes = 0;
    o->cache_bytes = 0;
    o->cache_file[0] = '\0';
    o->enable_checkpointing = 0;
    o->checkpoint = NULL;
}

/* num_threads "auto": the CPUs this process may run on (its affinity mask: a container's or
 * taskset's limit), else the CPUs online. */
static int usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set) < 1024 ? CPU_COUNT(&set) : 1024;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 ? (cpus < 1024 ? (int)cpus : 1024) : 1;
}

static sl_status check_options(const sl_pipeline_options *o)
{
    if (o->batch_size < 1)
        return sl__last_error_set(SL_EINVAL, "batch_size must be at least 1, got %d",
                                  o->batch_size);
    if (o->num_threads != SL_NUM_THREADS_AUTO && (o->num_threads < 0 || o->num_threads > 1024))
        return sl__last_error_set(SL_EINVAL,
                                  "num_threads must be in [0, 1024] (0: the calling thread runs "
                                  "the tasks) or -1 (\"auto\"), got %d",
                                  o->num_threads);
    bool separated = o->cpu_queue_depth != 0 || o->gpu_queue_depth != 0;
    if (!separated && o->prefetch_queue_depth != SL_PREFETCH_AUTO &&
        (o->prefetch_queue_depth < 1 || o->prefetch_queue_depth > 64))
        return sl__last_error_set(SL_EINVAL,
                                  "prefetch_queue_depth must be in [1, 64] or 0 (\"auto\"), got "
                                  "%d",
                                  o->prefetch_queue_depth);
    if (o->prefetch_max_bytes < 0)
        return sl__last_error_set(SL_EINVAL,
                                  "prefetch_max_bytes must be 0 (the default budget) or "
                                  "positive, got %lld",
                                  (long long)o->prefetch_max_bytes);
    if (separated && (o->cpu_queue_depth < 1 || o->gpu_queue_depth < 1 ||
                      o->cpu_queue_depth + o->gpu_queue_depth > 64))
        return sl__last_error_set(SL_EINVAL,
                                  "cpu_queue_depth and gpu_queue_depth must both be 0 (one "
                                  "queue) or both at least 1 with a sum of at most 64, got %d "
                                  "and %d",
                                  o->cpu_queue_depth, o->gpu_queue_depth);
    if (o->max_held_bytes < 0)
        return sl__last_error_set(SL_EINVAL,
                                  "max_held_bytes must be 0 (the default budget) or positive, "
                                  "got %lld",
                                  (long long)o->max_held_bytes);
    if (o->max_sample_bytes < 1)
        return sl__last_error_set(SL_EINVAL, "max_sample_bytes must be at least 1, got %lld",
                                  (long long)o->max_sample_bytes);
    if (o->on_bad_sample < SL_BAD_SAMPLE_RAISE || o->on_bad_sample > SL_BAD_SAMPLE_REPLACE)
        return sl__last_error_set(SL_EINVAL,
                                  "on_bad_sample must be \"raise\" (0), \"skip\" (1) or "
                                  "\"replace\" (2), got %d",
                                  o->on_bad_sample);
    if (o->max_bad_samples < 0)
        return sl__last_error_set(SL_EINVAL,
                                  "max_bad_samples must be 0 (no limit) or positive, got %lld",
                                  (long long)o->max_bad_samples);
    if (o->cache_bytes < 0)
        return sl__last_error_set(SL_EINVAL,
                                  "cache_bytes must be 0 (no cache) or positive, got %lld",
                                  (long long)o->cache_bytes);
    if (!memchr(o->cache_file, '\0', sizeof o->cache_file))
        return sl__last_error_set(SL_EINVAL, "cache_file is longer than %d bytes",
                                  SL_CACHE_FILE_MAX - 1);
    if (o->enable_checkpointing != 0 && o->enable_checkpointing != 1)
        return sl__last_error_set(SL_EINVAL, "enable_checkpointing must be 0 or 1, got %d",
                                  o->enable_checkpointing);
    if (o->fuse_samples != 0 && o->fuse_samples != 1)
        return sl__last_error_set(SL_EINVAL, "fuse_samples must be 0 or 1, got %d",
                                  o->fuse_samples);
    return SL_OK;
}

sl_status sl_pipeline_create(const sl_graph *g, const sl_pipeline_options *o, sl_pipeline **out)
{
    sl_pipeline_options def;
    if (!out || !g)
        return sl__last_error_set(SL_EMISUSE, "sl_pipeline_create: graph or out is NULL");
    *out = NULL;
    if (!o) {
        sl_pipeline_options_init(&def);
        o = &def;
    }
    sl_status st = check_options(o);
    if (st != SL_OK)
        return st;
    sl_pipeline_options opt = *o;
    if (opt.device_id == SL_DEVICE_ID_AUTO && (st = sl_distributed_local_rank(&opt.device_id))) {
        char why[512]; /* sl_last_error()'s buffer is the one being written */
        snprintf(why, sizeof why, "%s", sl_last_error());
        return sl__last_error_set(st, "device_id \"auto\" needs the job's local rank: %s", why);
    }
    if (opt.num_threads == SL_NUM_THREADS_AUTO)
        opt.num_threads = usable_cpus();
    o = &opt;
    sl_pipeline *p = sl__calloc(1, sizeof(*p));
    if (!p || sl__graph_copy(g, &p->graph) != SL_OK) {
        sl__free(p);
        return sl__last_error_set(SL_ENOMEM, "sl_pipeline_create: out of memory");
    }
    p->opt = *o;
    p->opt.checkpoint = NULL; /* borrowed: parsed here, kept as p->ckpt_restore */
    pthread_mutex_init(&p->ckpt_mu, NULL);
    if (o->checkpoint && (st = sl__ckpt_parse(p, o->checkpoint)) != SL_OK) {
        pthread_mutex_destroy(&p->ckpt_mu);
        sl_graph_destroy(p->graph);
        sl__free(p);
        return st;
    }
    if (p->opt.seed < 0) /* DALI's rule: no seed given, a fresh one for this pipeline */
        p->opt.seed = sl__seed_fresh();
    /* separated queues: the slots carry every iteration in flight, the GPU stage's buffer
     * sets (stage_sets.c) only gpu_queue_depth of them */
    bool separated = o->cpu_queue_depth > 0;
    /* "auto" is resolved at build (resolve_depth), when the plan tells whether it is tuned */
    p->depth = separated ? o->cpu_queue_depth + o->gpu_queue_depth
               : o->prefetch_queue_depth == SL_PREFETCH_AUTO ? SL__AUTO_START
                                                             : o->prefetch_queue_depth;
    p->gdepth = separated ? o->gpu_queue_depth : p->depth;
    p->current = -1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    sl__error_clear(&p->error);
    *out = p;
    return SL_OK;
}

int64_t sl_pipeline_seed(const sl_pipeline *p)
{
    return p ? p->opt.seed : -1;
}

sl_status sl__pipeline_fail(sl_pipeline *p, sl_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sl__error_setv(&p->error, code, NULL, NULL, -1, -1, NULL, fmt, ap);
    va_end(ap);
    return code;
}

/* ---- build ---------------------------------------------------------------------------- */

static sl_status init_ops(sl_pipeline *p)
{
    p->states = sl__calloc((size_t)p->plan->n, sizeof(void *));
    p->node_policy = sl__calloc((size_t)p->plan->n, 1);
    if (!p->states || !p->node_policy)
        return sl__pipeline_fail(p, SL_ENOMEM, "out of memory");
    memset(p->node_policy, -1, (size_t)p->plan->n); /* the pipeline's on_bad_sample */
    for (int j = 0; j < p->plan->n; j++) {
        const sl_op_def *op = p->plan->nodes[j].op;
        sl_op_init ini = {.p = p, .node = j};
        if (!op->init)
            continue;
        sl_status st = op->init(&ini, &p->states[j]);
        if (st != SL_OK) {
            if (!ini.failed)
                sl_init_fail(&ini, st, "init failed with %s", sl_status_name(st));
            return st;
        }
    }
    return SL_OK;
}

static sl_status init_slot(sl_pipeline *p, sl__slot *slot, int index)
{
    slot->p = p;
    slot->index = index;
    slot->iteration = -1;
    slot->gset = -1;
    slot->nodes = sl__calloc((size_t)p->plan->n, sizeof(sl__snode));
    slot->scope_n = sl__calloc((size_t)p->plan->nscopes, sizeof(int));
    slot->scope_idx = sl__calloc((size_t)p->plan->nscopes * (size_t)p->opt.batch_size, sizeof(int));
    if (!slot->nodes || !slot->scope_n || !slot->scope_idx || sl__bad_slot_init(p, slot) != SL_OK)
        return SL_ENOMEM;
    for (int j = 0; j < p->plan->n; j++) {
        const sl_op_def *op = p->plan->nodes[j].op;
        sl__snode *sn = &slot->nodes[j];
        sn->p = p;
        sn->slot = slot;
        sn->node = j;
        sn->ckpt_iter = -1;
        sn->tasks = sl__calloc((size_t)p->opt.batch_size, sizeof(sl__task));
        sn->sspans = sl__calloc((size_t)p->opt.batch_size, sizeof(sl__sspan));
        sn->iter_data = sl__calloc((size_t)p->opt.batch_size, op->iter_bytes_per_sample + 1);
        if (!sn->tasks || !sn->sspans || !sn->iter_data)
            return SL_ENOMEM;
        if (p->plan->nodes[j].stage != SL__STAGE_CPU)
            continue; /* its batches are a GPU buffer set's, bound while the slot holds one */
        int nout = p->plan->nodes[j].nout;
        sn->outs = sl__calloc((size_t)(nout ? nout : 1), sizeof(sl_batch));
        if (!sn->outs)
            return SL_ENOMEM;
        sn->wouts = sn->outs;
        for (int o = 0; o < nout; o++) {
            if (sl__batch_reserve_samples(&sn->outs[o], p->opt.batch_size) != SL_OK)
                return SL_ENOMEM;
        }
        /* fused into its consumer: its samples live in the threads' scratch (sched.c) */
        if (p->plan->nodes[j].fuse_into >= 0) {
            sn->roi = sl__calloc((size_t)p->opt.batch_size * 2 * SL_MAX_NDIM, sizeof(int64_t));
            sn->roi_set = sl__calloc((size_t)p->opt.batch_size, sizeof(bool));
            if (!sn->roi || !sn->roi_set || sl__batch_scatter(&sn->outs[0]) != SL_OK)
                return SL_ENOMEM;
        }
    }
    return SL_OK;
}

static sl_status alloc_exec(sl_pipeline *p)
{
    int n = p->plan->n;
    p->slots = sl__calloc((size_t)p->depth, sizeof(sl__slot));
    p->shared = sl__calloc((size_t)p->depth, sizeof(int));
    p->stateful_next = sl__calloc((size_t)n, sizeof(int64_t));
    p->stats = sl__calloc((size_t)n, sizeof(sl__node_stat));
    bool spans = true; /* not zeroed: the ring is read only where written (strace_count) */
    for (int c = 0; c < SL__SPAN_CHUNKS; c++)
        spans &= (p->strace[c] = sl__malloc(SL__SPAN_CHUNK * sizeof(sl__sspan))) != NULL;
    p->nworkers = p->opt.num_threads > 0 ? p->opt.num_threads : 1;
    p->scratch = sl__calloc((size_t)p->nworkers * SL_SCRATCH_BUFFERS, sizeof(sl__scratch));
    p->fuse_scratch = sl__calloc((size_t)p->nworkers * 2, sizeof(sl__scratch));
    p->fuse_keep = SL__FUSE_KEEP;
    if (!p->slots || !p->shared || !p->stateful_next || !p->stats || !spans || !p->scratch ||
        !p->fuse_scratch)
        return sl__pipeline_fail(p, SL_ENOMEM, "out of memory");
    for (int s = 0; s < p->depth; s++) {
        if (init_slot(p, &p->slots[s], s) != SL_OK)
            return sl__pipeline_fail(p, SL_ENOMEM, "out of memory for iteration slots");
    }
    if (sl__istore_create(p) != SL_OK)
        return sl__pipeline_fail(p, SL_ENOMEM, "out of memory");
    char err[512] = "";
    sl_status st = sl__stage_create(p, err, sizeof err);
    if (st != SL_OK)
        return sl__pipeline_fail(p, st, "cannot set up the GPU stage on device %d: %s",
                                 p->opt.device_id, err);
    if (sl__outputs_create(p) != SL_OK)
        return sl__pipeline_fail(p, SL_ENOMEM, "out of memory");
    if (sl__tpool_create(p->opt.num_threads, &p->pool) != SL_OK)
        return sl__pipeline_fail(p, SL_ENOMEM, "cannot start %d threads", p->opt.num_threads);
    return SL_OK;
}

/* "skip" and "replace" rewrite the outputs in host memory (bad.c): CPU pipelines only. */
static sl_status check_bad_sample_policy(sl_pipeline *p)
{
    bool gpu = false, policy = p->opt.on_bad_sample != SL_BAD_SAMPLE_RAISE;
    for (int j = 0; j < p->plan->n; j++) {
        gpu |= p->plan->nodes[j].stage != SL__STAGE_CPU;
        policy |= p->node_policy[j] > SL_BAD_SAMPLE_RAISE;
    }
    if (gpu && policy)
        return sl__pipeline_fail(
            p, SL_EUNSUPPORTED,
            "on_bad_sample \"skip\" and \"replace\" need a pipeline without mixed or gpu "
            "nodes (the outputs are rewritten in host memory); use \"raise\" here");
    return SL_OK;
}

/* prefetch_queue_depth "auto" is tuned (autotune.c) in a pipeline with one queue, no source
 * fed by the application (its batches are fed for the iterations schedule_run asks for: a
 * depth that moves would change how many must be fed first) and no GPU stage (its buffer sets
 * go round the slots: each would keep device memory); the others run at SL__AUTO_START. */
static void resolve_depth(sl_pipeline *p)
{
    bool want = p->opt.prefetch_queue_depth == SL_PREFETCH_AUTO && p->opt.cpu_queue_depth == 0;
    bool on = want && p->opt.num_threads > 0; /* 0: no worker idles, nothing to tune */
    for (int j = 0; on && j < p->plan->n; j++)
        on = p->plan->nodes[j].stage == SL__STAGE_CPU && !p->plan->nodes[j].op->feed;
    if (on) {
        p->depth = SL__AUTO_SLOTS;
        p->gdepth = p->depth;
    }
    sl__autotune_init(&p->tune, on, p->depth, p->depth, p->opt.prefetch_max_bytes);
    if (want && !on)
        p->tune.reason = p->opt.num_threads == 0
                             ? "auto: fixed at 2 (num_threads 0)"
                             : "auto: fixed at 2 (external source or GPU stage)";
    else if (!want && p->opt.cpu_queue_depth > 0) /* separated queues: all of them at first */
        p->tune.depth = p->depth;
}

sl_status sl_pipeline_build(sl_pipeline *p)
{
    if (!p)
        return sl__last_error_set(SL_EMISUSE, "sl_pipeline_build: pipeline is NULL");
    if (p->built)
        return SL_OK;
    if (p->plan) /* an earlier build failed half-way: the pipeline cannot be built again */
        return sl__pipeline_fail(p, SL_EMISUSE,
                                 "an earlier build of this pipeline failed; create a new one");
    sl__error_clear(&p->error);
    sl_status st = sl__plan_build(p->graph, &p->opt, &p->plan, &p->error);
    if (st == SL_OK)
        st = init_ops(p);
    if (st == SL_OK)
        st = check_bad_sample_policy(p);
    if (st == SL_OK) {
        resolve_depth(p);
        st = alloc_exec(p);
    }
    if (st == SL_OK)
        st = sl__cache_create(p);
    if (st == SL_OK)
        st = sl__ckpt_build(p);
    p->built = st == SL_OK;
    return st;
}

/* ---- destroy ---------------------------------------------------------------------------- */

static void free_slots(sl_pipeline *p)
{
    for (int s = 0; p->slots && s < p->depth; s++) {
        sl__slot *slot = &p->slots[s];
        for (int j = 0; slot->nodes && j < p->plan->n; j++) {
            sl__snode *sn = &slot->nodes[j];
            for (int o = 0; sn->outs && o < p->plan->nodes[j].nout; o++)
                sl__batch_fini(&sn->outs[o]);
            sl__free(sn->outs);
            sl__free(sn->tasks);
            sl__free(sn->sspans);
            sl__free(sn->iter_data);
            sl__free(sn->roi);
            sl__free(sn->roi_set);
        }
        sl__free(slot->nodes);
        sl__free(slot->scope_n);
        sl__free(slot->scope_idx);
        sl__bad_slot_fini(slot);
    }
    sl__free(p->slots);
}

void sl_pipeline_destroy(sl_pipeline *p)
{
    if (!p)
        return;
    sl__exec_lock(p);
    p->stopping = true;
    pthread_cond_broadcast(&p->cv);
    sl__exec_unlock(p);
    sl__tpool_destroy(p->pool); /* drops queued tasks, joins the workers */
    for (int j = 0; p->plan && p->states && j < p->plan->n; j++) {
        if (p->states[j] && p->plan->nodes[j].op->fini)
            p->plan->nodes[j].op->fini(p->states[j]);
    }
    sl__cache_destroy(p);
    sl__istore_destroy(p);
    sl__stage_fini_slots(p);
    sl__outputs_destroy(p);
    sl__ckpt_fini(p);
    free_slots(p);
    sl__stage_destroy(p);
    for (int w = 0; p->scratch && w < p->nworkers * SL_SCRATCH_BUFFERS; w++)
        sl__free(p->scratch[w].buf);
    sl__free(p->scratch);
    for (int w = 0; p->fuse_scratch && w < p->nworkers * 2; w++)
        sl__free(p->fuse_scratch[w].buf);
    sl__free(p->fuse_scratch);
    sl__free(p->states);
    sl__free(p->node_policy);
    sl__free(p->shared);
    sl__free(p->stateful_next);
    sl__free(p->stats);
    for (int c = 0; c < SL__SPAN_CHUNKS; c++)
        sl__free(p->strace[c]);
    sl__plan_destroy(p->plan);
    for (int k = 0; k < p->ncallbacks; k++)
        sl__free(p->callbacks[k].node);
    sl__free(p->callbacks);
    sl_graph_destroy(p->graph);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->ckpt_mu);
    sl__free(p);
}

/* ---- callbacks ---------------------------------------------------------------------------- */

sl_status sl_pipeline_set_callback(sl_pipeline *p, const char *name, sl_callback_fn fn, void *user)
{
    if (!p)
        return sl__last_error_set(SL_EMISUSE, "sl_pipeline_set_callback: pipeline is NULL");
    sl__error_clear(&p->error);
    if (!name || !fn)
        return sl__pipeline_fail(p, SL_EMISUSE,
                                 "sl_pipeline_set_callback: node name or function is NULL");
    if (p->built || p->plan)
        return sl__pipeline_fail(
            p, SL_EMISUSE,
            "sl_pipeline_set_callback: the pipeline is built already; register the "
            "function of node \"%s\" before sl_pipeline_build",
            name);
    const sl__gnode *n = sl__graph_find(p->graph, name);
    if (!n)
        return sl__pipeline_fail(p, SL_ENOTFOUND, "sl_pipeline_set_callback: no node named \"%s\"",
                                 name);
    const sl_op_def *op = sl_registry_find(n->op);
    if (!op || !(op->flags & SL_OP_CALLBACK))
        return sl__pipeline_fail(
            p, SL_EINVAL,
            "sl_pipeline_set_callback: node \"%s\" (%s) runs no function of the "
            "application: its operator takes no callback",
            name, n->op);
    for (int k = 0; k < p->ncallbacks; k++) {
        if (strcmp(p->callbacks[k].node, name) == 0) {
            p->callbacks[k].fn = fn;
            p->callbacks[k].user = user;
            return SL_OK;
        }
    }
    sl__callback *c = sl__realloc(p->callbacks, sizeof(*c) * (size_t)(p->ncallbacks + 1));
    if (!c)
        return sl__pipeline_fail(p, SL_ENOMEM, "sl_pipeline_set_callback: out of memory");
    p->callbacks = c;
    char *copy = sl__strdup(name);
    if (!copy)
        return sl__pipeline_fail(p, SL_ENOMEM, "sl_pipeline_set_callback: out of memory");
    p->callbacks[p->ncallbacks++] = (sl__callback){.node = copy, .fn = fn, .user = user};
    return SL_OK;
}

/* ---- run API ---------------------------------------------------------------------------- */

static sl_status need_built(sl_pipeline *p, const char *fn)
{
    if (!p)
        return sl__last_error_set(SL_EMISUSE, "%s: pipeline is NULL", fn);
    sl__error_clear(&p->error);
    if (!p->built) {
        sl_status st = sl_pipeline_build(p);
        if (st != SL_OK)
            return st;
    }
    return SL_OK;
}

sl_status sl_pipeline_schedule_run(sl_pipeline *p)
{
    sl_status st = need_built(p, "sl_pipeline_schedule_run");
    if (st != SL_OK)
        return st;
    sl__exec_lock(p);
    /* the first call asks for the depth's iterations, later ones for one more each (DALI's
     * prefetch); "auto" asks for more when its depth rises (sl__autotune_shared_locked) */
    p->runs++;
    if (p->scheduled < p->runs - 1 + p->tune.depth)
        p->scheduled = p->runs - 1 + p->tune.depth;
    sl__exec_start_frames_locked(p);
    sl__exec_unlock(p);
    return SL_OK;
}

/* Frees the slot of the oldest shared iteration. Needs mu. */
static void release_oldest_locked(sl_pipeline *p)
{
    SL__ASSERT_LOCKED(p);
    int s = p->shared[p->shared_head];
    p->shared_head = (p->shared_head + 1) % p->depth;
    p->nshared--;
    if (p->current == s)
        p->current = -1;
    sl__outputs_release_locked(p, &p->slots[s]);
}

/* How long share_outputs waits for pinned views (released on other threads) to die before
 * reporting that it would wait forever. */
#define PIN_WAIT_NS 2000000000LL

/* The error of a share_outputs that waited PIN_WAIT_NS for views of iteration b's slot to die:
 * they could not be set aside (sl__outputs_set_aside_locked said `why`). Needs mu. */
static sl_status fail_held_locked(sl_pipeline *p, int64_t it, const sl__slot *b, bool gpu,
                                  sl_status why)
{
    SL__ASSERT_LOCKED(p);
    if (why == SL_ENOMEM)
        return sl__pipeline_fail(
            p, SL_ENOMEM,
            "share_outputs: iteration %lld needs the %sbuffers of iteration %lld, which "
            "are still referenced (%d pinned views), and there is no memory to set "
            "them aside",
            (long long)it, gpu ? "GPU " : "", (long long)b->iteration, b->out->pins);
    char held[512];
    sl__outputs_describe_held_locked(p, held, sizeof held);
    return sl__pipeline_fail(
        p, SL_EMISUSE,
        "share_outputs would wait forever: iteration %lld needs the %sbuffers of "
        "iteration %lld, which are still referenced (%d pinned views), and setting "
        "them aside would pass max_held_bytes: %s; drop the views you no longer need "
        "(or copy what you keep), or raise max_held_bytes",
        (long long)it, gpu ? "GPU " : "", (long long)b->iteration, b->out->pins, held);
}

/* sl__exec_wait, or with num_threads 0 (a pool without workers) the waiting thread's share
 * of the work: it takes one queued task and runs it unlocked as worker 0, then returns for its
 * caller to look again. One thread helps at a time (`helping`: worker 0's scratch is one);
 * another waits on cv, woken when the helper steps back, and so does a helper that finds no
 * task: what it waits for then is another thread's doing (a release, an unpin), and every
 * submission under mu wakes it (sched.c, submit_one_locked). The task is taken under mu, so no
 * wake-up is lost between the look and the wait. Needs mu; returns with it. */
static void wait_or_run_locked(sl_pipeline *p)
{
    SL__ASSERT_LOCKED(p);
    sl__task t;
    if (p->opt.num_threads > 0) {
        sl__exec_wait(p);
        return;
    }
    if (!p->helping && sl__tpool_take(p->pool, &t)) {
        p->helping = true;
        sl__exec_unlock(p);
        t.fn(t.arg, t.i, 0);
        sl__exec_lock(p);
        p->helping = false;
        if (p->waiting > 0)
            pthread_cond_broadcast(&p->cv);
        return;
    }
    p->waiting++;
    sl__exec_wait(p);
    p->waiting--;
}

/* Waits until iteration `it` is READY in its slot. Needs mu. */
static sl_status wait_ready_locked(sl_pipeline *p, int64_t it)
{
    SL__ASSERT_LOCKED(p);
    sl__slot *slot = &p->slots[it % p->depth];
    int64_t deadline = 0;
    for (;;) {
        if (p->stopping)
            return sl__pipeline_fail(p, SL_ECANCELED, "the pipeline is being destroyed");
        if (slot->iteration == it && slot->state == SLOT_READY)
            return SL_OK;
        /* an older iteration it waits for: its slot's, or its GPU buffer set's (stage_sets.c) */
        sl__slot *b = slot->iteration < it ? slot : sl__stage_set_blocker_locked(p, it);
        bool gpu = b != slot;
        if (b && b->state == SLOT_SHARED)
            return sl__pipeline_fail(
                p, SL_EMISUSE,
                "share_outputs would wait forever: iteration %lld needs the %sbuffers "
                "still shared for iteration %lld; call release_outputs first",
                (long long)it, gpu ? "GPU " : "", (long long)b->iteration);
        if (!b || b->state != SLOT_HELD) {
            wait_or_run_locked(p);
            continue;
        }
        /* released while its views live: set them aside now if the memory allows (views of
         * other iterations may have died meanwhile) */
        sl_status why = sl__outputs_set_aside_locked(p, b);
        if (why == SL_OK)
            continue;
        int64_t now = sl__now_ns();
        if (!deadline)
            deadline = now + PIN_WAIT_NS;
        if (why == SL_ENOMEM || now >= deadline)
            return fail_held_locked(p, it, b, gpu, why);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50000000; /* re-check every 50 ms */
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        sl__exec_timedwait(p, &ts);
    }
}

sl_status sl_pipeline_share_outputs(sl_pipeline *p)
{
    sl_status st = need_built(p, "sl_pipeline_share_outputs");
    if (st != SL_OK)
        return st;
    sl__exec_lock(p);
    int64_t it = p->next_share;
    if (it >= p->scheduled)
        st = sl__pipeline_fail(p, SL_EMISUSE,
                               "share_outputs: no iteration is scheduled (call schedule_run)");
    /* the autotuner's measurements: was it ready, how long did the consumer wait for it */
    const sl__slot *want = &p->slots[it % p->depth];
    bool ready = want->iteration == it && want->state == SLOT_READY;
    int64_t t0 = sl__now_ns();
    if (st == SL_OK)
        st = wait_ready_locked(p, it);
    int64_t waited = sl__now_ns() - t0;
    if (st == SL_OK && p->gpu) {
        /* READY: only this call moves the slot on, so its GPU work can be awaited unlocked */
        sl__exec_unlock(p);
        sl_status gst = sl__stage_frame_sync(p, &p->slots[it % p->depth]);
        sl__exec_lock(p);
        sl__slot *slot = &p->slots[it % p->depth];
        sl__stage_frame_finish_locked(p, slot);
        if (gst != SL_OK)
            sl__exec_frame_fail_locked(slot, &p->error);
    }
    if (st == SL_OK && atomic_load(&p->slots[it % p->depth].any_bad)) {
        /* READY: only this call moves the slot on, so its outputs are rewritten unlocked */
        sl__exec_unlock(p);
        sl__bad_deliver(p, &p->slots[it % p->depth]);
        sl__exec_lock(p);
    }
    if (st == SL_OK) {
        sl__slot *slot = &p->slots[it % p->depth];
        p->next_share++;
        if (atomic_load(&slot->failed)) {
            /* Deliver the frame's error; its buffers are not lent, the slot is free again. */
            p->error = slot->err;
            st = slot->err.code;
            sl__exec_slot_free_locked(p, slot);
        } else {
            slot->state = SLOT_SHARED;
            sl__outputs_share_locked(p, slot);
            p->shared[(p->shared_head + p->nshared) % p->depth] = slot->index;
            p->nshared++;
            p->current = slot->index;
            sl__autotune_shared_locked(p, slot, waited, ready);
        }
    }
    sl__exec_unlock(p);
    return st;
}

sl_status sl_pipeline_release_outputs(sl_pipeline *p)
{
    sl_status st = need_built(p, "sl_pipeline_release_outputs");
    if (st != SL_OK)
        return st;
    sl__exec_lock(p);
    if (p->nshared == 0)
        st = sl__pipeline_fail(p, SL_EMISUSE, "release_outputs: no outputs are shared");
    else
        release_oldest_locked(p);
    sl__exec_unlock(p);
    return st;
}

sl_status sl_pipeline_run(sl_pipeline *p)
{
    sl_status st = need_built(p, "sl_pipeline_run");
    if (st != SL_OK)
        return st;
    sl__exec_lock(p);
    if (p->nshared > 0)
        release_oldest_locked(p);
    sl__exec_unlock(p);
    st = sl_pipeline_schedule_run(p);
    return st == SL_OK ? sl_pipeline_share_outputs(p) : st;
}

/* ---- feeding external sources ------------------------------------------------------------- */

sl_status sl_pipeline_feed_input(sl_pipeline *p, const char *name, const sl_feed *batch)
{
    sl_status st = need_built(p, "sl_pipeline_feed_input");
    if (st != SL_OK)
        return st;
    if (!name || !batch || (batch->num_samples > 0 && (!batch->data || !batch->shapes)))
        return sl__pipeline_fail(p, SL_EMISUSE, "feed_input: name, batch, data or shapes is NULL");
    for (int j = 0; j < p->plan->n; j++) {
        const sl__pnode *pn = &p->plan->nodes[j];
        if (strcmp(pn->name, name) != 0)
            continue;
        if (!pn->op->feed)
            return sl__pipeline_fail(p, SL_EINVAL, "feed_input: node \"%s\" (%s) cannot be fed",
                                     name, pn->op->name);
        char err[512] = "";
        st = pn->op->feed(p->states[j], batch, err, sizeof err);
        if (st != SL_OK)
            sl__error_set(&p->error, st, pn->op->name, pn->name, -1, -1, NULL, "feed_input: %s",
                          err);
        return st;
    }
    return sl__pipeline_fail(p, SL_ENOTFOUND,
                             "feed_input: no node named \"%s\" in the built pipeline", name);
}

/* ---- outputs and errors ------------------------------------------------------------------ */

int sl_pipeline_num_outputs(const sl_pipeline *p)
{
    return p && p->plan ? p->plan->noutputs : 0;
}

int sl_pipeline_device_id(const sl_pipeline *p)
{
    return p ? p->opt.device_id : -1;
}

int64_t sl_pipeline_iteration(const sl_pipeline *p)
{
    return p && p->current >= 0 ? p->slots[p->current].iteration : -1;
}

const char *sl_pipeline_error(const sl_pipeline *p)
{
    return p ? p->error.message : "";
}

void sl_pipeline_error_detail(const sl_pipeline *p, sl_error_detail *d)
{
    static const sl__error none = {.iteration = -1, .sample = -1};
    if (!d)
        return;
    const sl__error *e = p ? &p->error : &none;
    d->code = e->code;
    d->op = e->op[0] ? e->op : NULL;
    d->node = e->node[0] ? e->node : NULL;
    d->iteration = e->iteration;
    d->sample = e->sample;
    d->source = e->source[0] ? e->source : NULL;
    d->detail = e->detail;
}

/* ---- readers ------------------------------------------------------------------------------ */

static int find_reader(const sl_pipeline *p, const char *name)
{
    for (int j = 0; p->plan && j < p->plan->n; j++) {
        const sl__pnode *pn = &p->plan->nodes[j];
        if (pn->op->reader_meta && (!name || strcmp(pn->name, name) == 0))
            return j;
    }
    return -1;
}

sl_status sl_pipeline_reader_meta(const sl_pipeline *p, const char *name, sl_reader_meta *meta)
{
    if (!p || !meta)
        return sl__last_error_set(SL_EMISUSE, "sl_pipeline_reader_meta: NULL argument");
    int j = p->built ? find_reader(p, name) : -1;
    if (j < 0) /* the message is not logical state of p: set it through a mutable alias */
        return sl__pipeline_fail((sl_pipeline *)p, SL_ENOTFOUND,
                                 "no reader named \"%s\" in the built pipeline",
                                 name ? name : "(any)");
    memset(meta, 0, sizeof(*meta));
    p->plan->nodes[j].op->reader_meta(p->states[j], meta);
    return SL_OK;
}

int64_t sl_pipeline_epoch_size(const sl_pipeline *p, const char *name)
{
    sl_reader_meta m;
    return sl_pipeline_reader_meta(p, name, &m) == SL_OK ? m.epoch_size : -1;
}
