/* src/exec/exec.h: internal interface of the executor (never installed).
 *
 * The pipeline owns `depth` iteration slots. Iteration k runs in slot k % depth as a frame: a
 * pending-producer count per node; a node whose count reaches zero runs its phases (setup,
 * per-sample setup, allocation, per-sample run) as tasks on the thread pool (`p->pool`,
 * src/core/tpool.c), the last task of a phase starting the next, and its completion decrements
 * its consumers' counts. A stateful node's iteration k also waits for its own iteration k-1. No
 * task ever waits for another. Pipeline outputs have one batch per slot; intermediate outputs
 * have two intermediate storage buffers for all slots (istore.c), which a node takes in
 * iteration order at its allocation phase, iteration k buffer k % 2 (parking, without a waiting
 * thread, until iteration k - 2's consumers are done). The mixed and gpu nodes' outputs live in
 * `gdepth` GPU buffer sets (stage_sets.c) that iterations take in order; a mixed/gpu node whose
 * iteration holds no set yet waits, parked, until one is given back.
 *
 * Conditionals (plan scopes, src/graph/cond.c): a node runs on its scope's samples — the slot's
 * scope_n[scope] of them, each mapped to its index in the whole batch by scope_idx — which the
 * first split of the scope writes in its setup, before any node of the scope can start (they
 * all wait for it through the plan's edges). sl_ctx_batch_size, sl_ctx_rng and errors read
 * them; scope 0 is the whole batch (slot->batch_size, identity map).
 *
 * ---- The state machines -------------------------------------------------------------------
 * A slot (sl__slot.state, slot_state below; all moves under mu):
 *   FREE    -> RUNNING  start_frame_locked (sched.c): schedule_run, or the slot freed, when the
 *                       iteration that maps to it is scheduled
 *   RUNNING -> READY    complete_node_locked (sched.c), the frame's last node
 *   READY   -> SHARED   share_outputs (pipeline.c), the frame not failed
 *   READY   -> FREE     share_outputs delivering the frame's error (sl__exec_slot_free_locked)
 *   SHARED  -> FREE     release_outputs / run (sl__outputs_release_locked), no view pinned, or
 *                       its pinned views set aside (outputs.c)
 *   SHARED  -> HELD     the same, views pinned that cannot be set aside (max_held_bytes, memory)
 *   HELD    -> FREE     the last unpin (sl_outputs_unpin), or share_outputs setting the views
 *                       aside once the budget allows (wait_ready_locked, pipeline.c)
 *
 * A node of a running frame (sl__snode; the state is spread over the fields named):
 *   state            fields                 moved out by                    lock
 *   WAITING          pending > 0            producers' complete_node_locked, mu
 *                                           release_fused_consumer_locked,
 *                                           release_stateful_successor_locked
 *                                           (pending -> 0: submit_node_locked)
 *   GPU_PARKED       gpu_parked             sl__exec_gpu_resume_locked, when mu
 *                                           stage_sets.c hands the frame a
 *                                           buffer set -> QUEUED
 *   QUEUED           submitted, !done       a thread of the pool takes          (pool's own)
 *                                           node_task -> SETUP
 *   SETUP            phase tasks running    node_task (setup) submits the       none: the node's
 *   SETUP_SAMPLE     (phase, remaining)     setup_sample tasks; the last task   tasks only, and
 *                                           (atomic `remaining`) -> ALLOCATING  atomics
 *   ALLOCATING       (task)                 alloc_and_run: sl__istore_acquire_  mu for the turn
 *                                           locked -> RUN, or -> STORE_PARKED
 *   STORE_PARKED     parked                 sl__istore_node_done_locked (the    mu
 *                                           storage freed) -> resume_task -> RUN
 *   FUSED            (fuse_into >= 0)       after setup, release_fused_          mu
 *                                           consumer_locked; completes with its
 *                                           chain's tail (complete_node_locked)
 *   RUN / RUN_SAMPLE phase tasks running    run_allocated / the last run_sample none, atomics
 *                                           task -> finish_node -> DONE
 *   DONE             done                   complete_node_locked: stats, the    mu
 *                                           consumers' pending, istore, frame
 *                                           nodes_left (0: slot READY)
 * A failed frame (slot->failed) skips the work but not the moves: every node still passes
 * ALLOCATING (its storage turn) and reaches DONE, so the frame completes and its error is
 * delivered in order. start_frame_locked resets every node to WAITING (or QUEUED, pending 0).
 *
 * ---- Locking -----------------------------------------------------------------------------------
 * `mu` (the pipeline lock) protects slot states, pending counts, the shared-iteration FIFO,
 * stateful ordering, the intermediate storage's turns and holders, the GPU buffer sets'
 * holders, the consumers' records, stats, the trace ring and the sample cache's publication of
 * the entries a frame filled (cache.h); per-sample progress uses atomics only. Fields marked (mu)
 * below need it; functions named `*_locked` need it and assert it (SL__ASSERT_LOCKED); others take
 * it themselves or touch no (mu) field.
 *
 * Lock order (a lock on the left may be held while one on its right is taken, never the
 * reverse):
 *   pipeline mu  ->  the thread pool's lock (sl__tpool_submit under mu)
 *                ->  ckpt_mu (ckpt.c: sl_pipeline_checkpoint holds both; a stateful node's
 *                    setup task takes ckpt_mu alone to record its state)
 *                ->  an operator's own lock (op->batch_size runs under mu: external_source's
 *                    state lock; operators never call into the executor holding their lock;
 *                    op->checkpoint runs under ckpt_mu)
 *                ->  the GPU allocators' locks (src/cuda: batches grown or freed under mu when
 *                    outputs are set aside) and, below them, the GPU emulation's lock (an
 *                    emulated device block mapped or unmapped; it also brackets each emulated
 *                    kernel or copy, inside which nothing takes mu)
 * Under mu the executor only enqueues device work (event records, stream waits); it never
 * waits for the device: share_outputs syncs the frame unlocked (sl__stage_frame_sync), a
 * to_host node waits on its worker, and an unpin that cannot order the storage's reuse on the
 * device waits for it unlocked (sl__stage_wait_device, which asserts that).
 */
#ifndef SLUICE_EXEC_H
#define SLUICE_EXEC_H

#include <assert.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "core/core.h"
#include "graph/graph.h"
#include "sluice/pipeline.h"

typedef enum slot_state {
    SLOT_FREE = 0, /* may start the next iteration that maps to it */
    SLOT_RUNNING,  /* a frame is executing */
    SLOT_READY,    /* all nodes done, waiting for share_outputs */
    SLOT_SHARED,   /* lent to the consumer until release_outputs */
    SLOT_HELD      /* released, views of its outputs still pinned, and they could not be set
                    * aside (outputs.c: past max_held_bytes, or out of memory) */
} slot_state;

typedef enum node_phase { PHASE_SETUP_SAMPLE = 1, PHASE_RUN_SAMPLE } node_phase;

struct sl_pipeline;
struct sl__slot;

/* One sample's run task (run_sample, or a fused chain's whole sample) for the trace: what
 * bench/sim.py replays. */
typedef struct sl__sspan {
    int node, sample, worker;
    int64_t iteration;
    int64_t start_ns, end_ns; /* 0, 0: not run (failed frame, bad sample) */
} sl__sspan;

#define SL__SAMPLE_SPANS 8192
/* The ring is held in chunks of SL__SPAN_CHUNK spans, all allocated at build: one 320 KiB
 * block would be mapped and unmapped for every pipeline by the sanitizers' allocators (their
 * shadow poisoned and faulted in each time: a quarter of building a small pipeline under ASan),
 * where 40 KiB blocks are reused from their free lists. */
#define SL__SPAN_CHUNK 1024
#define SL__SPAN_CHUNKS (SL__SAMPLE_SPANS / SL__SPAN_CHUNK)

typedef struct sl__snode {
    struct sl_pipeline *p;
    struct sl__slot *slot;
    int node;               /* plan index */
    sl_batch *outs;         /* pn->nout batches, storage reused across iterations */
    sl_batch *wouts;        /* what the op's context writes: outs, or host_outs (mixed) */
    sl_batch *host_outs;    /* mixed nodes: pinned staging of outs (stage_phases.c), else NULL */
    struct sl__gpunode *gn; /* mixed and gpu nodes: events and upload buffers (stage.h) */
    void *iter_data;        /* op->iter_bytes_per_sample * batch_size bytes */
    int pending;            /* (mu) producers not yet finished, +1 waiting for own k-1 */
    bool done;              /* (mu) */
    bool submitted;         /* (mu) its setup task was queued in this frame */
    node_phase phase;       /* written before the phase's tasks are submitted */
    atomic_int remaining;   /* tasks of the current phase not yet finished */
    atomic_int_fast64_t busy_ns; /* thread time in the op's functions this iteration */
    atomic_int fallbacks;        /* sl_ctx_count_fallback calls this iteration */
    int64_t t_start;             /* ns, set by the setup task */
    int consumers_left;          /* (mu) consumer nodes of this frame not yet done */
    bool holds;                  /* (mu) its stored outputs borrow the node's storage */
    bool parked;                 /* (mu) waits for the node's storage (istore.c) */
    bool gpu_parked;             /* (mu) mixed/gpu node ready, waiting for a GPU buffer set */
    sl__task *tasks;             /* batch_size entries: per-sample tasks are queued in one call */
    sl__sspan *sspans;           /* batch_size entries: each written by its sample's run task */
    bool sampled;                /* ran run tasks this frame (reset at frame start, under mu) */
    /* Fused nodes: per sample, the box of output 0 its consumer reads (sl_ctx_input_roi), 2 *
     * SL_MAX_NDIM extents (lo, hi), valid when roi_set; written and read by the sample's fused
     * task only. NULL for other nodes. */
    int64_t *roi;
    bool *roi_set;
    /* Checkpointing (ckpt.c), nodes with a checkpoint function: the node's state before the
     * setup of iteration ckpt_iter (-1: none recorded), ckpt_n values (-1: it could not be
     * saved, why in ckpt_err) in ckpt (ckpt_cap entries). (ckpt_mu) */
    int64_t *ckpt;
    int ckpt_n, ckpt_cap;
    int64_t ckpt_iter;
    char ckpt_err[160];
} sl__snode;

/* What the consumer sees of one iteration (pipeline.h's sl_outputs; outputs.c). Each slot has
 * one, attached; share_outputs fills its views. A release that finds it pinned sets it aside:
 * the slot's output storage moves into the views and the slot takes a spare's (or fresh) storage,
 * so the pipeline goes on while the views live. When the last pin dies a set-aside record
 * becomes a spare, its storage reused by the next set-aside. */
struct sl_outputs {
    struct sl_pipeline *p;
    struct sl__slot *slot; /* (mu) the slot it is attached to; NULL when set aside or spare */
    int64_t iteration;     /* (mu) of the outputs last shared through it */
    int pins;              /* (mu) live sl_outputs pins */
    /* p->nviews batches. Attached: copies of the slot's output batch structs made at share (the
     * slot owns their storage). Set aside or spare: the storage itself, owned here. */
    sl_batch *view;
    size_t bytes[2];                /* set aside: host and device bytes of `view` */
    struct sl__gpurec *gr;          /* GPU pipelines: the consumers' streams (stage_sets.c) */
    struct sl_outputs *prev, *next; /* (mu) in p->held or p->spares */
};

typedef struct sl__slot {
    struct sl_pipeline *p;
    int index;
    struct sl_outputs *out; /* (mu) its record: what sl_pipeline_outputs_pin returns */
    int64_t iteration;      /* (mu) iteration held, -1 when never used */
    int batch_size;         /* samples of this iteration (set at frame start, before tasks) */
    slot_state state;       /* (mu) */
    int nodes_left;         /* (mu) nodes of this frame not yet done */
    atomic_bool failed;     /* set once an error is recorded; later work of the frame is skipped */
    /* the sample (index in the whole batch) the recorded error names, -1 for none: a sample
     * before it still runs its per-sample work, and its own error replaces the recorded one,
     * so the error delivered names the batch's first failing sample whatever the threads'
     * timing (sched.c, sl__exec_frame_fail_locked) */
    atomic_int fail_sample;
    sl__error err;    /* (mu) the frame's error: its first, or a failure of an earlier sample */
    sl__snode *nodes; /* plan->n */
    /* Conditional scopes (plan->scopes): per scope its samples in this iteration (scope 0:
     * batch_size, set at frame start; a branch: by the split that computes it, in its setup),
     * and, per scope, opt.batch_size entries mapping each sample to its index in the
     * iteration's whole batch (scope 0 maps nothing: identity). */
    int *scope_n;
    int *scope_idx;
    struct sl__gpuslot *gs; /* pipelines with a GPU stage: the frame's events (stage_phases.c) */
    int gset;         /* (mu) the GPU buffer set its iteration holds (stage_sets.c), -1 none */
    bool has_storage; /* (mu) its output batches have storage (a frame ran in it) */
    /* Bad samples (bad.c), opt.batch_size entries indexed in the whole batch: the flag (set
     * once per frame, under mu), the sample's first error, the node that failed it and the
     * policy (sl_bad_sample) that applies; nbad of them in this frame (mu). */
    atomic_uchar *bad;
    sl__error *bad_err;
    int *bad_node;
    int *bad_policy;
    int nbad;
    atomic_bool any_bad;     /* nbad > 0, read without mu */
    struct sl__cslot *cache; /* the sample cache's per-frame state (cache.c), NULL without */
} sl__slot;

typedef struct sl__span {
    int node;
    int64_t iteration;
    int64_t start_ns, end_ns;
    int64_t busy_ns; /* thread time in the op's functions */
} sl__span;

#define SL__TRACE_SPANS 512

/* The default of sl_pipeline.fuse_keep. */
#define SL__FUSE_KEEP ((size_t)16 << 20)

typedef struct sl__node_stat {
    int64_t iterations;
    int64_t total_ns;
    int64_t busy_ns;
    int64_t gpu_ns;      /* device time of its kernels / copies (CUDA events; 0 when emulated) */
    int64_t fallbacks;   /* sl_ctx_count_fallback, added when the node completes an iteration */
    int64_t bad_samples; /* samples it failed that were skipped or replaced (bad.c) */
} sl__node_stat;

/* Storage of one intermediate (node, output), shared by the slots (istore.c). */
typedef struct sl__istore_buf {
    uint8_t *data; /* 64-byte aligned, as sl__batch_alloc leaves it */
    size_t cap;
} sl__istore_buf;

/* Buffers of each stored intermediate output (istore.c): iteration k uses buffer k % 2, so
 * iteration k + 1 can run the node while iteration k's consumers finish their batch's tail. */
#define SL__ISTORE_BUFS 2

/* Per node: which outputs share storage across slots, and whose turn it is. */
typedef struct sl__istore {
    bool *stored;          /* per output: not a pipeline output, CPU: shared by all slots */
    sl__istore_buf *store; /* per buffer and output: store[b * nout + o] */
    int nstored;
    int *pred; /* distinct producer nodes (this node counts down their consumers_left) */
    int npred;
    int64_t holder[SL__ISTORE_BUFS]; /* (mu) iteration whose batches borrow buffer b, -1 none */
    int64_t next;                    /* (mu) the next iteration that may take its buffer */
} sl__istore;

typedef struct sl__scratch {
    void *buf;
    size_t cap;
} sl__scratch;

/* A function registered for a node before the build (sl_pipeline_set_callback). */
typedef struct sl__callback {
    char *node; /* the node's name (owned) */
    sl_callback_fn fn;
    void *user; /* the application's, borrowed */
} sl__callback;

/* prefetch_queue_depth "auto" (autotune.c). */
#define SL__AUTO_SLOTS 8  /* slots of a tuned pipeline: the most iterations ahead */
#define SL__AUTO_START 2  /* where it starts, and the least it goes to (DALI's default) */
#define SL__AUTO_WINDOW 4 /* delivered iterations per decision */
#define SL__AUTO_HISTORY 16

/* One window of measurements (injected by tests through sl__autotune.inject). */
typedef struct sl__autotune_window {
    double idle;        /* fraction of the threads' time they were idle */
    double wait;        /* fraction of the window the consumer waited in share_outputs */
    int ready;          /* iterations already ready when the consumer asked for them */
    int n;              /* iterations in the window */
    int64_t slot_bytes; /* host bytes of one iteration's own outputs (the largest seen) */
} sl__autotune_window;

typedef struct sl__autotune_change {
    int64_t iteration; /* delivered when the decision was made */
    int depth;
} sl__autotune_change;

typedef struct sl__autotune {
    bool on;            /* tuned: "auto", one queue, no external source, no GPU stage */
    int depth;          /* (mu) iterations in flight or waiting now ("ahead") */
    int floor;          /* (mu) the least depth it goes back to */
    int high;           /* (mu) the most it reached */
    int slots;          /* the most: the pipeline's slots */
    int64_t budget;     /* bytes of in-flight outputs allowed (prefetch_max_bytes) */
    int64_t slot_bytes; /* (mu) host bytes of one iteration's outputs, the largest measured */
    /* (mu) the window being measured */
    int64_t win_start, win_idle, win_wait, win_bytes;
    int win_n, win_ready;
    int settle, calm, since_down; /* (mu) policy state */
    /* (mu) what it did: decisions, the last window, the last reason, the last changes */
    int64_t ups, downs, windows;
    double idle, wait;
    const char *reason;
    sl__autotune_change history[SL__AUTO_HISTORY];
    int64_t nhistory;
    /* Tests only: called with each measured window before the decision, may rewrite it. */
    void (*inject)(void *user, sl__autotune_window *w);
    void *inject_user;
} sl__autotune;

struct sl_pipeline {
    sl_graph *graph;         /* owned copy of what the user described */
    sl_pipeline_options opt; /* with defaults resolved */
    bool built;
    sl__plan *plan;
    void **states;     /* per plan node, from op init */
    int depth;         /* iteration slots: iterations in flight or waiting for the consumer (with
                        * "auto", SL__AUTO_SLOTS: tune.depth of them in use) */
    sl__autotune tune; /* prefetch_queue_depth "auto" (autotune.c); fixed: depth, not tuned */
    int gdepth; /* GPU buffer sets (stage_sets.c): depth, or gpu_queue_depth with separated queues
                 */
    sl__slot *slots;
    sl__tpool *pool;
    int nworkers;              /* worker indices: num_threads, 1 for num_threads 0 (the caller) */
    sl__scratch *scratch;      /* SL_SCRATCH_BUFFERS per worker */
    sl__scratch *fuse_scratch; /* 2 per worker: fused chains' intermediate samples (sched.c) */
    atomic_size_t scratch_hw[SL_SCRATCH_BUFFERS]; /* the largest size asked of each, any worker */
    atomic_size_t fuse_hw[2];
    /* A fused intermediate sample larger than this gets a buffer of its own for its task
     * instead of growing the worker's scratch, which every worker would then keep. */
    size_t fuse_keep;

    pthread_mutex_t mu;        /* the pipeline lock: take it with sl__exec_lock (below) */
    atomic_uintptr_t mu_owner; /* the holder's sl__exec_thread_tag address (lock checks), 0 */
    pthread_cond_t cv;         /* a slot became READY or FREE, or stopping */
    bool stopping;             /* (mu) */
    /* num_threads 0 (pipeline.c, wait_or_run_locked): the pool has no workers and a thread
     * waiting in share_outputs runs the queued tasks, one helper at a time, as worker 0. */
    bool helping;             /* (mu) a thread is running a task for the pool */
    int waiting;              /* (mu) threads waiting on cv while it does */
    int64_t runs;             /* (mu) schedule_run calls */
    int64_t scheduled;        /* (mu) iterations asked for: runs - 1 + tune.depth at least */
    int64_t started;          /* (mu) iterations whose frame started */
    int64_t next_share;       /* (mu) next iteration to deliver */
    int *shared;              /* (mu) FIFO of shared slot indices (capacity depth) */
    int shared_head, nshared; /* (mu) */
    int current;              /* slot whose outputs sl_pipeline_output shows, -1 none */
    int64_t *stateful_next;   /* (mu) per node: next iteration a stateful node may run */
    sl__istore *istores;      /* per node: its intermediate storage (istore.c) */

    sl__node_stat *stats;            /* (mu) per node */
    sl__span trace[SL__TRACE_SPANS]; /* (mu) ring */
    int64_t trace_count;             /* (mu) */
    /* (mu) ring of SL__SAMPLE_SPANS sample spans, in chunks: span k is sl__strace_at(p, k) */
    sl__sspan *strace[SL__SPAN_CHUNKS];
    int64_t strace_count; /* (mu) */

    struct sl__gpu
        *gpu; /* streams and allocators when the plan has mixed or gpu nodes, else NULL */
    struct sl__gset *gsets; /* gdepth buffer sets of the GPU stage (stage_sets.c), with gpu */
    int64_t gset_next;      /* (mu) the next iteration that may take a GPU buffer set */
    bool gpu_unordered;     /* (mu) a storage reuse could not be ordered after its consumers
                             * (stage_sets.c): every later frame fails */
    char gpu_unordered_why[160];

    /* Pipeline outputs as the consumer sees them (outputs.c). */
    int nviews;                /* distinct (node, output) batches among the pipeline outputs */
    sl__ref *view_ref;         /* nviews: the batch each view shows */
    int *view_of;              /* per pipeline output: its view */
    struct sl_outputs *held;   /* (mu) set-aside records that views still pin */
    struct sl_outputs *spares; /* (mu) set-aside records no view pins: storage to reuse */
    int nheld, nspares;        /* (mu) */
    size_t held_bytes[2];      /* (mu) host, device bytes of the held records */
    size_t held_max[2];        /* host, device bytes the held records may take */

    sl__callback *callbacks; /* registered before the build; SL_OP_CALLBACK nodes' init reads
                              * them (sl_init_callback) */
    int ncallbacks;

    sl__error error; /* last failure of a call on this pipeline */

    /* Bad samples (bad.c): per plan node its own on_bad_sample (sl_init_on_bad_sample), -1 for
     * the pipeline's; the samples skipped or replaced so far (mu); where their lines go. */
    signed char *node_policy;
    int64_t bad_total;
    sl_log_fn log_fn;
    void *log_user;

    struct sl__cache *cache; /* the sample cache (cache.c): NULL when off or nothing to cache */
    /* Checkpointing (ckpt.c): orders the stateful nodes' snapshots and checkpoint(); the graph's
     * hash (16 hex digits, at build with enable_checkpointing or a checkpoint to restore); the
     * checkpoint to restore (a jansson json_t, parsed at create, applied and dropped at build). */
    pthread_mutex_t ckpt_mu;
    char ckpt_graph[17];
    void *ckpt_restore;
};

struct sl_ctx {
    struct sl_pipeline *p;
    sl__slot *slot;
    sl__snode *sn;
    const sl__pnode *pn;
    int sample; /* -1 in setup / run_batch */
    int worker;
    bool failed;   /* sl_fail was called */
    sl_status oom; /* SL_ENOMEM from sl_ctx_set_output */
    void *stream;  /* run_gpu: the compute stream */
};

struct sl_op_init {
    struct sl_pipeline *p;
    int node;
    bool failed;
};

/* ---- the pipeline lock ----------------------------------------------------------------------
 * Every function whose name ends in `_locked` needs p->mu held by its caller and asserts it on
 * entry (SL__ASSERT_LOCKED). With assert() compiled in (every make configuration: SLUICE_ASSERT
 * drops NDEBUG; the sanitizer builds too) the lock records its holder, one relaxed atomic store
 * per lock and unlock, so the check is exact: a thread that does not hold mu fails it. */
extern _Thread_local char sl__exec_thread_tag; /* its address names the calling thread */

static inline void sl__exec_lock(const struct sl_pipeline *cp)
{
    struct sl_pipeline *p = (struct sl_pipeline *)cp; /* stats calls lock a const pipeline */
    pthread_mutex_lock(&p->mu);
#ifndef NDEBUG
    atomic_store_explicit(&p->mu_owner, (uintptr_t)&sl__exec_thread_tag, memory_order_relaxed);
#endif
}

static inline void sl__exec_unlock(const struct sl_pipeline *cp)
{
    struct sl_pipeline *p = (struct sl_pipeline *)cp;
#ifndef NDEBUG
    atomic_store_explicit(&p->mu_owner, 0, memory_order_relaxed);
#endif
    pthread_mutex_unlock(&p->mu);
}

/* Records a pipeline-level error (no operator, node, iteration or sample) in p->error and
 * returns code (pipeline.c; the build, checkpoints and the sample cache use it). */
sl_status sl__pipeline_fail(sl_pipeline *p, sl_status code, const char *fmt, ...) SL_PRINTF(3, 4);

/* pthread_cond_wait / timedwait on p->cv, the holder recorded again after the wait. */
static inline void sl__exec_wait(struct sl_pipeline *p)
{
#ifndef NDEBUG
    atomic_store_explicit(&p->mu_owner, 0, memory_order_relaxed);
#endif
    pthread_cond_wait(&p->cv, &p->mu);
#ifndef NDEBUG
    atomic_store_explicit(&p->mu_owner, (uintptr_t)&sl__exec_thread_tag, memory_order_relaxed);
#endif
}

static inline void sl__exec_timedwait(struct sl_pipeline *p, const struct timespec *ts)
{
#ifndef NDEBUG
    atomic_store_explicit(&p->mu_owner, 0, memory_order_relaxed);
#endif
    pthread_cond_timedwait(&p->cv, &p->mu, ts);
#ifndef NDEBUG
    atomic_store_explicit(&p->mu_owner, (uintptr_t)&sl__exec_thread_tag, memory_order_relaxed);
#endif
}

/* Whether the calling thread holds p->mu (always true without lock checks). */
static inline bool sl__exec_holds_lock(const struct sl_pipeline *p)
{
#ifndef NDEBUG
    return atomic_load_explicit(&((struct sl_pipeline *)p)->mu_owner, memory_order_relaxed) ==
           (uintptr_t)&sl__exec_thread_tag;
#else
    (void)p;
    return true;
#endif
}

#define SL__ASSERT_LOCKED(p) assert(sl__exec_holds_lock(p))

/* Span k (counted since the build) of the sample-span ring. Needs mu. */
static inline sl__sspan *sl__strace_at(struct sl_pipeline *p, int64_t k)
{
    int64_t i = k % SL__SAMPLE_SPANS;
    return &p->strace[i / SL__SPAN_CHUNK][i % SL__SPAN_CHUNK];
}

/* autotune.c */
void sl__autotune_init(sl__autotune *a, bool on, int fixed, int slots, int64_t budget);
/* The policy: the new depth after window w (pure: the state and w decide). */
int sl__autotune_decide(sl__autotune *a, const sl__autotune_window *w);
/* The most iterations ahead the slots and the memory budget allow. */
int sl__autotune_limit(const sl__autotune *a);
/* share_outputs delivered `slot`'s iteration after waiting waited_ns for it (ready: it was
 * ready when asked for): measures, decides every SL__AUTO_WINDOW deliveries, and schedules
 * and starts more iterations when the depth rose. Needs mu. */
void sl__autotune_shared_locked(struct sl_pipeline *p, sl__slot *slot, int64_t waited_ns,
                                bool ready);

/* sched.c */
/* Starts the frames that are scheduled and whose slot is free. Needs mu. */
void sl__exec_start_frames_locked(struct sl_pipeline *p);
/* Records an error for the frame (first one wins). Takes mu. */
void sl__exec_frame_fail(sl__slot *slot, const sl__error *e, struct sl_pipeline *p);
/* The same with mu held: error e, or one made from the arguments (the slot's iteration). */
void sl__exec_frame_fail_locked(sl__slot *slot, const sl__error *e);
void sl__exec_frame_failf_locked(sl__slot *slot, sl_status code, const char *op, const char *node,
                                 int sample, const char *source, const char *fmt, ...)
    SL_PRINTF(7, 8);

/* The slot's iteration is over (delivered failed, released, or its last view died): frees the
 * slot and its GPU buffer set, starts what can start. Needs mu. */
void sl__exec_slot_free_locked(struct sl_pipeline *p, sl__slot *slot);
/* Submits the mixed/gpu nodes of `slot` that waited for a GPU buffer set (it holds one now).
 * Needs mu. */
void sl__exec_gpu_resume_locked(struct sl_pipeline *p, sl__slot *slot);

/* Submits parked node sn again (its shared storage is now its own); on failure fails the
 * frame and completes the node. Needs mu. */
void sl__exec_resume_locked(struct sl_pipeline *p, sl__snode *sn);

/* istore.c: intermediate outputs stored once for all slots (see istore.c for the rules). */
sl_status sl__istore_create(struct sl_pipeline *p); /* at build, after the slots */
void sl__istore_destroy(struct sl_pipeline *p);     /* before the slots are freed */
/* Takes node sn's storage for its iteration, or marks it parked (false). Needs mu. */
bool sl__istore_acquire_locked(struct sl_pipeline *p, sl__snode *sn);
/* sl__batch_alloc of output o, in the shared storage when the output is stored. Called by the
 * holder only, without mu. */
sl_status sl__istore_alloc(sl__snode *sn, int o);
/* Bookkeeping of node sn's completion: releases the storage of producers whose consumers are
 * all done, hands storage on to parked nodes. Needs mu. */
void sl__istore_node_done_locked(struct sl_pipeline *p, sl__snode *sn);

/* ctx.c: conditionals. The index in the iteration's whole batch of sample `sample` of ctx's
 * node (of its scope); the samples output o of ctx's node has (a split's outputs: its branches'
 * scopes); the scope's map entries (writable by the split computing the scope, in its setup). */
int sl__ctx_sample_index(const sl_ctx *ctx, int sample);
int sl__ctx_output_size(const sl_ctx *ctx, int o);
int *sl__slot_scope_idx(const sl__slot *slot, int scope);

/* ctx.c: whether ctx's node runs fused into its consumer (sample fusion): its output samples
 * are then the worker's scratch, which the consumer reads at once, not a batch's. For operators
 * that choose how to store their output (crop_mirror_normalize's non-temporal stores). */
bool sl__ctx_output_fused(const sl_ctx *ctx);

/* ctx.c: the executor's checks of argument inputs before a node's setup. */
sl_status sl__ctx_check_arg_inputs(sl_ctx *ctx);
/* ctx.c: fails the frame, naming the sample, when one of b's samples (output o of ctx's node,
 * shapes set) would take more than max_sample_bytes, or has a size that does not fit in
 * size_t: before anything is allocated for it. */
sl_status sl__ctx_check_sizes(sl_ctx *ctx, const sl_batch *b, int o);
/* ctx.c: s's buffer, grown (contents lost) to at least `bytes` and to the largest size asked
 * of this buffer by any worker (*hw, raised to `bytes`): which worker runs which sample depends
 * on scheduling, so each grows to what all have needed, and steady state allocates nothing
 * whatever the next epoch's schedule. NULL when out of memory. */
void *sl__scratch_get(sl__scratch *s, size_t bytes, atomic_size_t *hw);

/* stage_*.c: the mixed and gpu stages (stage.h; stage_stubs.c without CUDA). */
/* At build, after the slots: the GPU context, device batches, events. */
sl_status sl__stage_create(struct sl_pipeline *p, char *err, size_t errlen);
void sl__stage_fini_slots(struct sl_pipeline *p); /* before the slots' batches are freed */
void sl__stage_destroy(struct sl_pipeline *p);    /* after them */
/* Mixed node: allocate the pinned staging and the device outputs mirroring them. */
sl_status sl__stage_alloc_mixed(sl_ctx *ctx);
/* Mixed node, after its CPU work: queue the copies of its outputs to the device. */
sl_status sl__stage_copy_mixed(sl_ctx *ctx);
/* Mixed node of an SL_OP_MIXED_GPU op, after its CPU work: queue the copy of its staging and
 * its run_gpu. */
sl_status sl__stage_run_mixed_gpu(sl_ctx *ctx);
/* Gpu node: order after its mixed producers' copies, then run_gpu. */
sl_status sl__stage_run_gpu(sl_ctx *ctx);
/* A cpu transfer node reading GPU data (pn->to_host): copy its input to its output, on the
 * compute stream after the producer's work, and wait for that copy. */
sl_status sl__stage_to_host(sl_ctx *ctx);
/* At frame start: takes the slot's GPU buffer set when the iteration's turn has come and the
 * set is free (always with one queue); else its mixed/gpu nodes wait (sched.c). Needs mu. */
void sl__stage_frame_start_locked(struct sl_pipeline *p, sl__slot *slot);
/* The slot is free again: gives its buffer set back and hands sets on to the iterations
 * waiting for them (sl__exec_gpu_resume_locked). Needs mu. */
void sl__stage_slot_free_locked(struct sl_pipeline *p, sl__slot *slot);
/* The slot whose release iteration `it` waits for before it can take its GPU buffer set, or
 * NULL when it waits for none. Needs mu. */
sl__slot *sl__stage_set_blocker_locked(struct sl_pipeline *p, int64_t it);
void sl__stage_frame_done_locked(struct sl_pipeline *p, sl__slot *slot); /* needs mu */
/* Waits until the frame's GPU work is complete (share_outputs, without mu). */
sl_status sl__stage_frame_sync(struct sl_pipeline *p, sl__slot *slot);
/* After frame_sync: adds the frame's device times to the node stats and fails the frame when
 * a kernel set its node's error flag (sl_ctx_gpu_error_flag). Needs mu. */
void sl__stage_frame_finish_locked(struct sl_pipeline *p, sl__slot *slot);
/* A record's consumer streams (sl_outputs_set_stream) and `released` event: made with the
 * record (SL_ENOMEM, or SL_EINTERNAL when CUDA cannot make the event), freed with it. No-ops in
 * a pipeline without a GPU stage. */
sl_status sl__stage_rec_init(struct sl_pipeline *p, struct sl_outputs *o);
void sl__stage_rec_fini(struct sl_pipeline *p, struct sl_outputs *o);
/* The record's last view is dying: `released` is recorded after its consumers' streams. True
 * when the device cannot order that (a consumer stream it cannot wait on, or more than 16
 * streams): the caller then releases mu, keeps the record pinned, calls sl__stage_wait_device
 * and asks again. Needs mu. */
bool sl__stage_unpinned_locked(struct sl_pipeline *p, struct sl_outputs *o);
/* Waits for all work on the device. Never with mu held (asserted). */
void sl__stage_wait_device(struct sl_pipeline *p);
/* The record's storage goes back to the pipeline's writers: their streams wait (on the device)
 * for its consumers' `released`, so kernels queued on the outputs finish first. Needs mu. */
void sl__stage_reclaim_locked(struct sl_pipeline *p, struct sl_outputs *o);
/* Bytes of device memory (the emulated device: of host memory); 0 without a GPU stage. */
size_t sl__stage_device_memory(const struct sl_pipeline *p);

/* outputs.c: the consumer's records (struct sl_outputs). */
/* At build, after the slots and the GPU stage: one record per slot, the views, the budget. */
sl_status sl__outputs_create(struct sl_pipeline *p);
/* Frees every record; after the GPU stage stopped using buffers, before it is destroyed. */
void sl__outputs_destroy(struct sl_pipeline *p);
/* Iteration delivered: the slot's record shows its output batches. Needs mu. */
void sl__outputs_share_locked(struct sl_pipeline *p, sl__slot *slot);
/* The consumer released the slot: free it, set its pinned outputs aside, or leave it HELD when
 * they cannot be (sl__outputs_set_aside_locked tells why). Needs mu. */
void sl__outputs_release_locked(struct sl_pipeline *p, sl__slot *slot);
/* A HELD slot: set its outputs aside now and free the slot. SL_OK; SL_EMISUSE when that would
 * pass max_held_bytes; SL_ENOMEM. Needs mu. */
sl_status sl__outputs_set_aside_locked(struct sl_pipeline *p, sl__slot *slot);
/* Writes, for error messages, which views hold how much of the budget ("views of iterations 3,
 * 4 (2 set aside) already hold 12.0 MiB of the 16.0 MiB of host memory that max_held_bytes
 * allows"). Needs mu. */
void sl__outputs_describe_held_locked(const struct sl_pipeline *p, char *buf, size_t len);

/* bad.c: bad samples (see bad.c for the rules). */
sl_status sl__bad_slot_init(struct sl_pipeline *p, sl__slot *slot); /* with the slot */
void sl__bad_slot_fini(sl__slot *slot);
void sl__bad_frame_start_locked(struct sl_pipeline *p, sl__slot *slot); /* needs mu */
/* Whether sample `whole` (index in the whole batch) of the slot's frame is bad. */
bool sl__bad_is(const sl__slot *slot, int whole);
/* sl_fail of a sample (e->sample, whole-batch index): marks it bad and returns true when the
 * policy of ctx's node is not "raise" (the frame goes on), else false. Takes mu. */
bool sl__bad_mark(sl_ctx *ctx, const sl__error *e);
/* Before ctx's node allocates b (one of its outputs): each bad sample takes the shape of the
 * next good one; fails the frame (SL_ECORRUPT) when none is good. */
sl_status sl__bad_shapes(sl_ctx *ctx, sl_batch *b);
void sl__bad_zero(sl_ctx *ctx, sl_batch *b); /* after the allocation: bad samples are zeros */
/* share_outputs, the frame READY and not failed: counts, checks max_bad_samples, logs, and
 * rewrites the pipeline outputs without (skip) or with replacements for (replace) the bad
 * samples. Not SL_OK: the frame failed (its error recorded). Takes mu. */
sl_status sl__bad_deliver(struct sl_pipeline *p, sl__slot *slot);

/* ckpt.c: checkpoints (see ckpt.c for the rules). */
/* At create, the options' checkpoint text: checked and kept; the pipeline takes its seed (a
 * different seed given is an error). Errors in sl_last_error(). */
sl_status sl__ckpt_parse(struct sl_pipeline *p, const char *text);
/* At build, after the slots: the graph's hash; restores the kept checkpoint (the operators'
 * states, the iteration counters), or fails saying what differs. */
sl_status sl__ckpt_build(struct sl_pipeline *p);
sl_status sl__ckpt_restore(struct sl_pipeline *p);
/* A stateful node with a checkpoint function, before its setup: records its state. */
void sl__ckpt_snapshot(sl__snode *sn);
void sl__ckpt_fini(struct sl_pipeline *p); /* before the slots are freed */

/* stats.c */
void sl__stats_record_locked(struct sl_pipeline *p, int node, int64_t iteration, int64_t start,
                             int64_t end, int64_t busy); /* needs mu */

#endif
