/* src/exec/stage.h: the GPU stage's private types, shared by its files (CUDA builds only).
 *
 * The stage (the executor's mixed and gpu nodes) is split by job:
 *   stage_sets.c    GPU buffer sets: made at build, taken by iterations in order, given back,
 *                   and the consumers' records (streams, `released`) that gate their reuse;
 *   stage_phases.c  the stage's node phases (allocation, copies, run_gpu) and frame phases
 *                   (done, sync, finish);
 *   stage_ctx.c     the operator-facing GPU calls (sl_ctx_gpu_upload, sl_ctx_staging, ...);
 *   stage_stubs.c   the same exports without CUDA (the plan refuses mixed and gpu nodes).
 *
 * A pipeline with mixed or gpu nodes gets one sl__gpu (src/cuda): a compute stream, a copy
 * stream and caching allocators of device and pinned memory. A mixed node runs its operator's
 * CPU functions into pinned host batches (`host_outs`, what its context writes), then copies
 * them on the copy stream into its device batches (`outs`, what consumers read) and records
 * `copied`. A gpu node runs on a thread of the thread pool: its compute stream first waits for
 * the `copied` events of its mixed producers, then run_gpu enqueues the kernels. GPU nodes are
 * ordered by the dataflow (a node is submitted when its producers have enqueued their work on
 * the same stream), so nothing waits on the host. When a frame's last node is done, the compute
 * stream waits for the frame's copies and the slot's `done` event is recorded; share_outputs
 * waits for it (sl__stage_frame_sync, without the pipeline lock) before the consumer sees the
 * outputs, so they are complete for any stream. Output storage that views showed comes back to
 * the pipeline's writers (a slot freed, or a set-aside record's storage reused: outputs.c) only
 * after their streams wait for the `released` event that the record's last view recorded on the
 * consumers' streams, so kernels the consumers queued finish first.
 *
 * Buffer sets: the mixed and gpu nodes' device outputs, pinned staging, events and upload /
 * scratch buffers live in `gdepth` sets, not in the slots. Iteration k takes set k % gdepth,
 * in iteration order, once the slot of the set's previous holder is free (delivered failed,
 * released with no view left, or its outputs set aside); until then its mixed and gpu nodes
 * wait, parked (sched.c). With one queue gdepth equals the slots and a frame takes its set when
 * it starts; with separated queues (cpu_queue_depth + gpu_queue_depth slots, gpu_queue_depth
 * sets) the CPU stage runs up to cpu_queue_depth iterations beyond the GPU stage's sets. A set's
 * pinned staging and upload buffers are rewritten only after share_outputs synchronised its
 * previous holder's frame, and its device buffers only after that holder's consumers
 * (`released`, waited for on the device when the storage came back).
 *
 * Locking: functions named `_locked` need the pipeline lock; none of them waits for the device
 * (they only enqueue: event records, stream waits). The host waits — share_outputs' frame sync,
 * a to_host node's copy, sl_outputs_unpin's fallback when a consumer stream cannot be ordered —
 * happen without it.
 */
#ifndef SLUICE_EXEC_STAGE_H
#define SLUICE_EXEC_STAGE_H

#include "cuda/gpu.h"
#include "exec/exec.h"

typedef struct sl__gbuf {
    void *host; /* pinned, upload buffers only */
    void *dev;
    size_t cap;
} sl__gbuf;

struct sl__gpunode {
    sl__gpu_event *copied;  /* mixed: last H2D copy of this node in this slot */
    sl__gpu_event *t0, *t1; /* timing of its device work (kernels or copies) */
    bool timed;             /* t0/t1 were recorded in the slot's current frame */
    /* gpu nodes: t0 is still to be recorded. run_gpu plans on the host before it enqueues
     * anything, and an event recorded on an idle stream before that planning would time the
     * planning too; so t0 goes on the stream with the node's first device work (the first
     * sl_ctx_stream, upload or error flag of run_gpu: sl__stage_mark_start), or after run_gpu
     * when it enqueued nothing. Written by run_gpu's thread only. */
    bool t0_pending;
    sl__gbuf up[SL_GPU_UPLOADS];
    unsigned up_used; /* bit k: upload buffer k was filled in the current frame */
    unsigned sc_used; /* bit k: scratch buffer k was handed out in the current frame */
    sl__gbuf flag;    /* sl_ctx_gpu_error_flag: one int on the device and its pinned copy */
    bool flag_armed;  /* the flag was asked for in the current frame */
    char flag_msg[256];
    sl__gbuf scratch[SL_GPU_UPLOADS];
    /* mixed nodes of SL_OP_MIXED_GPU ops: the samples' staging, pinned and on the device, and
     * batch_size + 1 offsets into it; until the allocation, stage_off[i + 1] holds sample i's
     * bytes (sl_ctx_set_staging), after it the offsets */
    sl__gbuf staging;
    size_t *stage_off;
    int stage_n;
};

#define CONSUMER_STREAMS 16

struct sl__gpuslot {
    sl__gpu_event *done; /* recorded on the compute stream when the frame is complete */
    bool done_ok;        /* (mu) `done` was recorded for the current frame */
};

/* A record's (struct sl_outputs) consumers, for the reuse of the storage its views showed. */
struct sl__gpurec {
    sl__gpu_event *released; /* recorded on the consumers' streams when the last view died */
    bool release_pending;    /* (mu) released was recorded and not yet waited for */
    /* (mu) the streams sl_outputs_set_stream named while the outputs were pinned; past
     * CONSUMER_STREAMS of them, `overflow`: the whole device is waited for instead */
    void *consumer[CONSUMER_STREAMS];
    int nconsumer;
    bool overflow;
};

struct sl__gset {
    int64_t holder;          /* (mu) iteration holding it, -1 none */
    sl_batch **outs;         /* per plan node: device outputs (mixed and gpu nodes, else NULL) */
    sl_batch **host_outs;    /* per plan node: pinned staging (mixed nodes, else NULL) */
    struct sl__gpunode **gn; /* per plan node (mixed and gpu nodes, else NULL) */
};

#define FLAG_CLEAR                                                                                 \
    0x7f7f7f7f /* sl_ctx_gpu_error_flag's memset byte 0x7f: above any sample index                 \
                */

static inline bool sl__stage_is_gpu(const sl__pnode *pn)
{
    return pn->stage != SL__STAGE_CPU;
}

/* A mixed node whose op finishes on the device (SL_OP_MIXED_GPU): no pinned outputs. */
static inline bool sl__stage_is_mixed_gpu(const sl__pnode *pn)
{
    return pn->stage == SL__STAGE_MIXED && (pn->op->flags & SL_OP_MIXED_GPU);
}

/* stage_ctx.c: records the gpu node's start event t0 on its stream if still pending (see
 * t0_pending); the operator-facing calls that enqueue device work call it before they do. */
void sl__stage_mark_start(const sl_ctx *ctx);
/* stage_ctx.c: grows b to at least bytes (device part, and the pinned part when host is
 * wanted); false when out of memory (b is then empty). */
bool sl__stage_reserve(sl_pipeline *p, sl__gbuf *b, size_t bytes, bool host);
/* stage_sets.c: frees b's blocks (b is then empty). */
void sl__stage_free_gbuf(sl__gpu *g, sl__gbuf *b);

#endif
