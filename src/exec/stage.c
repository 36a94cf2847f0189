/* src/exec/stage.c: the executor's mixed and gpu stages.
 *
 * Exports sl__stage_* (exec.h) and the op-author calls sl_ctx_stream, sl_ctx_gpu_upload,
 * sl_ctx_gpu_scratch, sl_ctx_gpu_emulated (op.h) and sl_outputs_set_stream (pipeline.h).
 *
 * A pipeline with mixed or gpu nodes gets one sl__gpu (src/cuda): a compute stream, a copy
 * stream and memory pools. A mixed node runs its operator's CPU functions into pinned host
 * batches (`host_outs`, what its context writes), then copies them on the copy stream into its
 * device batches (`outs`, what consumers read) and records `copied`. A gpu node runs on a pool
 * thread: its compute stream first waits for the `copied` events of its mixed producers, then
 * run_gpu enqueues the kernels. GPU nodes are ordered by the dataflow (a node is submitted when
 * its producers have enqueued their work on the same stream), so nothing waits on the host.
 * When a frame's last node is done, the compute stream waits for the frame's copies and the
 * slot's `done` event is recorded; share_outputs waits for it (sl__stage_frame_sync) before the
 * consumer sees the outputs, so they are complete for any stream. Output storage that views
 * showed comes back to the pipeline's writers (a slot freed, or a set-aside record's storage
 * reused: outputs.c) only after their streams wait for the `released` event that the record's
 * last view recorded on the consumers' streams, so kernels the consumers queued finish first.
 *
 * Buffer sets: the mixed and gpu nodes' device outputs, pinned staging, events and upload /
 * scratch buffers live in `gdepth` sets, not in the slots. Iteration k takes set k % gdepth,
 * in iteration order, once the slot of the set's previous holder is free (delivered failed,
 * released with no view left, or its outputs set aside); until then its mixed and gpu nodes wait,
 * parked (sched.c). With one queue gdepth equals the slots and a frame takes its set when it
 * starts; with separated queues (cpu_queue_depth + gpu_queue_depth slots, gpu_queue_depth sets) the
 * CPU stage runs up to cpu_queue_depth iterations beyond the GPU stage's sets. A set's pinned
 * staging and upload buffers are rewritten only after share_outputs synchronised its previous
 * holder's frame, and its device buffers only after that holder's consumers (`released`, waited
 * for when the storage came back).
 *
 * Without CUDA at build time only stubs remain: the plan refuses mixed and gpu nodes.
 */
#include <string.h>

#include "exec/exec.h"

#ifdef SLUICE_HAVE_CUDA
#include "cuda/gpu.h"

typedef struct gbuf {
    void *host; /* pinned, upload buffers only */
    void *dev;
    size_t cap;
} gbuf;

struct sl__gpunode {
    sl__gpu_event *copied;  /* mixed: last H2D copy of this node in this slot */
    sl__gpu_event *t0, *t1; /* timing of its device work (kernels or copies) */
    bool timed;             /* t0/t1 were recorded in the slot's current frame */
    gbuf up[SL_GPU_UPLOADS];
    unsigned up_used; /* bit k: upload buffer k was filled in the current frame */
    unsigned sc_used; /* bit k: scratch buffer k was handed out in the current frame */
    gbuf flag;        /* sl_ctx_gpu_error_flag: one int on the device and its pinned copy */
    bool flag_armed;  /* the flag was asked for in the current frame */
    char flag_msg[256];
    gbuf scratch[SL_GPU_UPLOADS];
    /* mixed nodes of SL_OP_MIXED_GPU ops: the samples' staging, pinned and on the device, and
     * batch_size + 1 offsets into it; until the allocation, stage_off[i + 1] holds sample i's
     * bytes (sl_ctx_set_staging), after it the offsets */
    gbuf staging;
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

static bool gpu_stage(const sl__pnode *pn)
{
    return pn->stage != SL__STAGE_CPU;
}

/* A mixed node whose op finishes on the device (SL_OP_MIXED_GPU): no pinned outputs. */
static bool mixed_gpu(const sl__pnode *pn)
{
    return pn->stage == SL__STAGE_MIXED && (pn->op->flags & SL_OP_MIXED_GPU);
}

/* A node's events: its copies' (mixed, to_host) and the timing pair. */
static sl_status new_gnode(sl_pipeline *p, struct sl__gpunode **out)
{
    struct sl__gpunode *gn = *out = sl__calloc(1, sizeof(*gn));
    if (!gn || sl__gpu_timer_create(p->gpu, &gn->t0) != SL_OK ||
        sl__gpu_timer_create(p->gpu, &gn->t1) != SL_OK)
        return SL_ENOMEM;
    return sl__gpu_event_create(p->gpu, &gn->copied);
}

/* n batches on device d, each with room for a batch's sample metadata; NULL when out of
 * memory (what was made is freed). */
static sl_batch *new_batches(sl_pipeline *p, int n, sl_device d)
{
    sl_batch *b = sl__calloc((size_t)(n ? n : 1), sizeof(sl_batch));
    for (int o = 0; b && o < n; o++) {
        sl__batch_set_device(&b[o], d, sl__gpu_devmem(p->gpu));
        if (sl__batch_reserve_samples(&b[o], p->opt.batch_size) != SL_OK) {
            for (int k = 0; k <= o; k++)
                sl__batch_fini(&b[k]);
            sl__free(b);
            return NULL;
        }
    }
    return b;
}

static void free_batches(sl_batch *b, int n)
{
    for (int o = 0; b && o < n; o++)
        sl__batch_fini(&b[o]);
    sl__free(b);
}

/* Set g: for each mixed or gpu node, device outputs (mixed: written through pinned staging),
 * events. */
static sl_status init_set(sl_pipeline *p, struct sl__gset *g)
{
    int n = p->plan->n;
    g->holder = -1;
    g->outs = sl__calloc((size_t)n, sizeof(sl_batch *));
    g->host_outs = sl__calloc((size_t)n, sizeof(sl_batch *));
    g->gn = sl__calloc((size_t)n, sizeof(struct sl__gpunode *));
    if (!g->outs || !g->host_outs || !g->gn)
        return SL_ENOMEM;
    for (int j = 0; j < n; j++) {
        const sl__pnode *pn = &p->plan->nodes[j];
        if (!gpu_stage(pn))
            continue;
        int nout = pn->nout;
        if (new_gnode(p, &g->gn[j]) != SL_OK || !(g->outs[j] = new_batches(p, nout, SL_DEVICE_GPU)))
            return SL_ENOMEM;
        if (mixed_gpu(pn)) {
            g->gn[j]->stage_n = p->opt.batch_size;
            if (!(g->gn[j]->stage_off = sl__calloc((size_t)p->opt.batch_size + 1, sizeof(size_t))))
                return SL_ENOMEM;
        } else if (pn->stage == SL__STAGE_MIXED &&
                   !(g->host_outs[j] = new_batches(p, nout, SL_DEVICE_PINNED))) {
            return SL_ENOMEM;
        }
    }
    return SL_OK;
}

/* Points the slot's mixed and gpu nodes at set g (NULL: at nothing). Needs mu. */
static void bind_set(sl_pipeline *p, sl__slot *slot, struct sl__gset *g)
{
    for (int j = 0; j < p->plan->n; j++) {
        if (!gpu_stage(&p->plan->nodes[j]))
            continue;
        sl__snode *sn = &slot->nodes[j];
        sn->outs = g ? g->outs[j] : NULL;
        sn->host_outs = g ? g->host_outs[j] : NULL;
        sn->wouts = sn->host_outs ? sn->host_outs : sn->outs;
        sn->gn = g ? g->gn[j] : NULL;
    }
}

sl_status sl__stage_create(sl_pipeline *p, char *err, size_t errlen)
{
    bool any = false;
    for (int j = 0; j < p->plan->n; j++)
        any |= gpu_stage(&p->plan->nodes[j]);
    if (!any)
        return SL_OK;
    sl_status st = sl__gpu_create(p->opt.device_id, &p->gpu, err, errlen);
    if (st != SL_OK)
        return st;
    p->gsets = sl__calloc((size_t)p->gdepth, sizeof(struct sl__gset));
    if (!p->gsets)
        goto oom;
    for (int k = 0; k < p->gdepth; k++) {
        if (init_set(p, &p->gsets[k]) != SL_OK)
            goto oom;
    }
    for (int s = 0; s < p->depth; s++) {
        sl__slot *slot = &p->slots[s];
        slot->gs = sl__calloc(1, sizeof(*slot->gs));
        if (!slot->gs)
            goto oom;
        if (sl__gpu_event_create(p->gpu, &slot->gs->done) != SL_OK) {
            snprintf(err, errlen, "creating CUDA events: %s", sl__gpu_error_text());
            return SL_EINTERNAL;
        }
        for (int j = 0; j < p->plan->n; j++) {
            /* a cpu node copying GPU data back (DataNode.cpu()): host outputs, events */
            if (p->plan->nodes[j].to_host && new_gnode(p, &slot->nodes[j].gn) != SL_OK)
                goto oom;
        }
    }
    return SL_OK;
oom:
    snprintf(err, errlen, "out of memory setting up the GPU stage");
    return SL_ENOMEM;
}

static void free_gbuf(sl__gpu *g, gbuf *b)
{
    const sl__devmem *m = sl__gpu_devmem(g);
    m->free(m->ctx, SL_DEVICE_PINNED, b->host, b->cap);
    m->free(m->ctx, SL_DEVICE_GPU, b->dev, b->cap);
    memset(b, 0, sizeof(*b));
}

static void free_gnode(sl__gpu *g, struct sl__gpunode *gn)
{
    if (!gn)
        return;
    sl__gpu_event_destroy(gn->copied);
    sl__gpu_event_destroy(gn->t0);
    sl__gpu_event_destroy(gn->t1);
    free_gbuf(g, &gn->flag);
    for (int k = 0; k < SL_GPU_UPLOADS; k++) {
        free_gbuf(g, &gn->up[k]);
        free_gbuf(g, &gn->scratch[k]);
    }
    free_gbuf(g, &gn->staging);
    sl__free(gn->stage_off);
    sl__free(gn);
}

void sl__stage_fini_slots(sl_pipeline *p)
{
    if (!p->gpu)
        return;
    /* nothing may still read or write the buffers freed below */
    sl__gpu_stream_sync(sl__gpu_stream(p->gpu));
    sl__gpu_stream_sync(sl__gpu_copy_stream(p->gpu));
    for (int k = 0; p->gsets && k < p->gdepth; k++) {
        struct sl__gset *g = &p->gsets[k];
        for (int j = 0; g->outs && g->host_outs && g->gn && j < p->plan->n; j++) {
            int nout = p->plan->nodes[j].nout;
            free_batches(g->outs[j], nout);
            free_batches(g->host_outs[j], nout);
            free_gnode(p->gpu, g->gn[j]);
        }
        sl__free(g->outs);
        sl__free(g->host_outs);
        sl__free(g->gn);
    }
    sl__free(p->gsets);
    p->gsets = NULL;
    for (int s = 0; p->slots && s < p->depth; s++) {
        sl__slot *slot = &p->slots[s];
        if (slot->nodes)
            bind_set(p, slot, NULL); /* the sets' batches are gone */
        for (int j = 0; slot->nodes && j < p->plan->n; j++) {
            if (p->plan->nodes[j].to_host) {
                free_gnode(p->gpu, slot->nodes[j].gn);
                slot->nodes[j].gn = NULL;
            }
        }
        if (slot->gs) {
            sl__gpu_event_destroy(slot->gs->done);
            sl__free(slot->gs);
            slot->gs = NULL;
        }
    }
}

void sl__stage_destroy(sl_pipeline *p)
{
    sl__gpu_destroy(p->gpu); /* after every batch gave its blocks back */
    p->gpu = NULL;
}

/* ---- node phases -------------------------------------------------------------------------- */

static bool reserve(sl_pipeline *p, gbuf *b, size_t bytes, bool host);

/* SL_OP_MIXED_GPU: device outputs, and the staging laid out from the sizes setup_sample gave. */
static sl_status alloc_mixed_gpu(sl_ctx *ctx)
{
    sl__snode *sn = ctx->sn;
    struct sl__gpunode *gn = sn->gn;
    for (int o = 0; o < ctx->pn->nout; o++) {
        if (sl__batch_alloc(&sn->outs[o]) != SL_OK)
            return sl_fail(ctx, SL_ENOMEM, "out of GPU memory for output %d (%zu bytes)", o,
                           sn->outs[o].offsets[sn->outs[o].size]);
    }
    int n = sl_ctx_batch_size(ctx);
    gn->stage_off[0] = 0;
    for (int i = 0; i < n; i++) {
        size_t bytes = (gn->stage_off[i + 1] + 255) & ~(size_t)255;
        if (bytes < gn->stage_off[i + 1] || gn->stage_off[i] + bytes < bytes)
            return sl_fail(ctx, SL_ENOMEM, "staging of %zu bytes is too large",
                           gn->stage_off[i + 1]);
        gn->stage_off[i + 1] = gn->stage_off[i] + bytes;
    }
    if (!reserve(ctx->p, &gn->staging, gn->stage_off[n] ? gn->stage_off[n] : 1, true))
        return sl_fail(ctx, SL_ENOMEM, "out of GPU or pinned memory for %zu bytes of staging",
                       gn->stage_off[n]);
    return SL_OK;
}

sl_status sl__stage_alloc_mixed(sl_ctx *ctx)
{
    sl__snode *sn = ctx->sn;
    if (mixed_gpu(ctx->pn))
        return alloc_mixed_gpu(ctx);
    for (int o = 0; o < ctx->pn->nout; o++) {
        if (sl__batch_alloc(&sn->host_outs[o]) != SL_OK)
            return sl_fail(ctx, SL_ENOMEM, "out of pinned host memory for output %d (%zu bytes)", o,
                           sn->host_outs[o].offsets[sn->host_outs[o].size]);
        if (sl__batch_mirror(&sn->outs[o], &sn->host_outs[o]) != SL_OK)
            return sl_fail(ctx, SL_ENOMEM, "out of GPU memory for output %d (%zu bytes)", o,
                           sn->outs[o].offsets[sn->outs[o].size]);
    }
    return SL_OK;
}

sl_status sl__stage_copy_mixed(sl_ctx *ctx)
{
    sl_pipeline *p = ctx->p;
    sl__snode *sn = ctx->sn;
    void *stream = sl__gpu_copy_stream(p->gpu);
    int prev = sl__gpu_enter(p->gpu);
    sl_status st = sl__gpu_event_record(sn->gn->t0, stream);
    for (int o = 0; st == SL_OK && o < ctx->pn->nout; o++) {
        const sl_batch *h = &sn->host_outs[o];
        st = sl__gpu_copy(p->gpu, sn->outs[o].data, h->data, h->offsets[h->size], stream);
    }
    if (st == SL_OK)
        st = sl__gpu_event_record(sn->gn->t1, stream);
    if (st == SL_OK)
        st = sl__gpu_event_record(sn->gn->copied, stream);
    sn->gn->timed = st == SL_OK;
    sl__gpu_leave(prev);
    if (st != SL_OK)
        return sl_fail(ctx, st, "copying the outputs to the GPU: %s", sl__gpu_error_text());
    return SL_OK;
}

sl_status sl__stage_run_mixed_gpu(sl_ctx *ctx)
{
    sl_pipeline *p = ctx->p;
    struct sl__gpunode *gn = ctx->sn->gn;
    void *stream = sl__gpu_stream(p->gpu);
    size_t total = gn->stage_off[sl_ctx_batch_size(ctx)];
    int prev = sl__gpu_enter(p->gpu);
    sl__gpu_event_record(gn->t0, stream);
    sl_status st = sl__gpu_copy(p->gpu, gn->staging.dev, gn->staging.host, total, stream);
    if (st != SL_OK) {
        sl__gpu_leave(prev);
        return sl_fail(ctx, st, "copying the staging to the GPU: %s", sl__gpu_error_text());
    }
    ctx->stream = stream;
    st = ctx->pn->op->run_gpu(ctx);
    ctx->stream = NULL;
    gn->timed = sl__gpu_event_record(gn->t1, stream) == SL_OK && st == SL_OK;
    /* the consumers wait for `copied`: here it follows the kernels, on the compute stream */
    sl_status rec = sl__gpu_event_record(gn->copied, stream);
    sl__gpu_leave(prev);
    if (st == SL_OK && rec != SL_OK)
        return sl_fail(ctx, rec, "recording an event: %s", sl__gpu_error_text());
    return st;
}

bool sl_ctx_staged(const sl_ctx *ctx)
{
    return ctx->sn->gn && ctx->sn->gn->stage_off;
}

void sl_ctx_set_staging(sl_ctx *ctx, int sample, size_t bytes)
{
    struct sl__gpunode *gn = ctx->sn->gn;
    if (gn && gn->stage_off && sample >= 0 && sample < gn->stage_n)
        gn->stage_off[sample + 1] = bytes;
}

void *sl_ctx_staging(const sl_ctx *ctx, int sample)
{
    const struct sl__gpunode *gn = ctx->sn->gn;
    if (!gn || !gn->stage_off || !gn->staging.host || sample < 0 || sample >= gn->stage_n)
        return NULL;
    return (char *)gn->staging.host + gn->stage_off[sample];
}

const void *sl_ctx_staging_device(const sl_ctx *ctx, int sample)
{
    const struct sl__gpunode *gn = ctx->sn->gn;
    if (!gn || !gn->stage_off || !gn->staging.dev || sample < 0 || sample >= gn->stage_n)
        return NULL;
    return (const char *)gn->staging.dev + gn->stage_off[sample];
}

sl_status sl__stage_run_gpu(sl_ctx *ctx)
{
    sl_pipeline *p = ctx->p;
    void *stream = sl__gpu_stream(p->gpu);
    int prev = sl__gpu_enter(p->gpu);
    sl_status st = SL_OK;
    for (int k = 0; st == SL_OK && k < ctx->pn->ninputs; k++) {
        const sl__snode *pr = &ctx->slot->nodes[ctx->pn->inputs[k].node];
        if (p->plan->nodes[pr->node].stage == SL__STAGE_MIXED)
            st = sl__gpu_stream_wait(stream, pr->gn->copied);
    }
    if (st != SL_OK) {
        sl__gpu_leave(prev);
        return sl_fail(ctx, st, "ordering the GPU work: %s", sl__gpu_error_text());
    }
    ctx->stream = stream;
    sl__gpu_event_record(ctx->sn->gn->t0, stream);
    st = ctx->pn->op->run_gpu(ctx);
    struct sl__gpunode *gn = ctx->sn->gn;
    if (st == SL_OK && gn->flag_armed) /* read when the frame is done (frame_finish) */
        st = sl__gpu_copy(p->gpu, gn->flag.host, gn->flag.dev, sizeof(int), stream);
    gn->timed = sl__gpu_event_record(gn->t1, stream) == SL_OK && st == SL_OK;
    ctx->stream = NULL;
    sl__gpu_leave(prev);
    return st;
}

sl_status sl__stage_to_host(sl_ctx *ctx)
{
    sl_pipeline *p = ctx->p;
    void *stream = sl__gpu_stream(p->gpu);
    const sl__snode *pr = &ctx->slot->nodes[ctx->pn->inputs[0].node];
    const sl_batch *in = sl_ctx_input(ctx, 0);
    int prev = sl__gpu_enter(p->gpu);
    sl_status st = SL_OK;
    if (p->plan->nodes[pr->node].stage == SL__STAGE_MIXED)
        st = sl__gpu_stream_wait(stream, pr->gn->copied);
    if (st == SL_OK && sl_batch_size(in) > 0)
        st = sl__gpu_copy(p->gpu, ctx->sn->outs[0].data, in->data, sl_batch_nbytes(in), stream);
    if (st == SL_OK)
        st = sl__gpu_event_record(ctx->sn->gn->copied, stream);
    if (st == SL_OK) /* the CPU consumers read it next: the one place a worker waits for the GPU */
        st = sl__gpu_event_sync(ctx->sn->gn->copied);
    sl__gpu_leave(prev);
    if (st != SL_OK)
        return sl_fail(ctx, st, "copying the input from the GPU: %s", sl__gpu_error_text());
    return SL_OK;
}

/* ---- frames --------------------------------------------------------------------------------- */

static void gnode_frame_start(struct sl__gpunode *gn)
{
    if (!gn)
        return;
    gn->timed = false;
    gn->up_used = 0;
    gn->sc_used = 0;
    gn->flag_armed = false;
    if (gn->stage_off)
        memset(gn->stage_off, 0, sizeof(size_t) * ((size_t)gn->stage_n + 1));
}

/* Gives the slot's iteration its buffer set if its turn has come and the set is free. Needs
 * mu. */
static bool take_set(sl_pipeline *p, sl__slot *slot)
{
    int64_t it = slot->iteration;
    struct sl__gset *g = &p->gsets[it % p->gdepth];
    if (p->gset_next != it || g->holder >= 0)
        return false;
    g->holder = it;
    p->gset_next = it + 1;
    slot->gset = (int)(it % p->gdepth);
    bind_set(p, slot, g);
    /* the consumers of the set's previous outputs were waited for when they gave the storage
     * back (sl__stage_reclaim_locked, at slot free or set-aside) */
    for (int j = 0; j < p->plan->n; j++)
        gnode_frame_start(g->gn[j]);
    return true;
}

void sl__stage_frame_start_locked(sl_pipeline *p, sl__slot *slot)
{
    if (!p->gpu)
        return;
    for (int j = 0; j < p->plan->n; j++) { /* the to_host nodes' own events */
        if (p->plan->nodes[j].to_host)
            gnode_frame_start(slot->nodes[j].gn);
    }
    take_set(p, slot);
}

void sl__stage_slot_free_locked(sl_pipeline *p, sl__slot *slot)
{
    if (!p->gsets || slot->gset < 0)
        return;
    struct sl__gset *g = &p->gsets[slot->gset];
    g->holder = -1;
    slot->gset = -1;
    bind_set(p, slot, NULL);
    /* hand the sets on, in iteration order, to the running iterations waiting for them */
    for (;;) {
        sl__slot *next = &p->slots[p->gset_next % p->depth];
        if (next->state != SLOT_RUNNING || next->iteration != p->gset_next || !take_set(p, next))
            break;
        sl__exec_gpu_resume_locked(p, next);
    }
}

sl__slot *sl__stage_set_blocker_locked(sl_pipeline *p, int64_t it)
{
    if (!p->gsets)
        return NULL;
    const struct sl__gset *g = &p->gsets[it % p->gdepth];
    return g->holder >= 0 && g->holder < it ? &p->slots[g->holder % p->depth] : NULL;
}

void sl__stage_frame_done_locked(sl_pipeline *p, sl__slot *slot)
{
    if (!p->gpu)
        return;
    void *stream = sl__gpu_stream(p->gpu);
    int prev = sl__gpu_enter(p->gpu);
    sl_status st = SL_OK;
    for (int j = 0; st == SL_OK && j < p->plan->n; j++) {
        if (p->plan->nodes[j].stage == SL__STAGE_MIXED)
            st = sl__gpu_stream_wait(stream, slot->nodes[j].gn->copied);
    }
    if (st == SL_OK)
        st = sl__gpu_event_record(slot->gs->done, stream);
    /* without its event the frame cannot be waited for: fail it (frame_sync then waits for the
     * whole streams) rather than hand out outputs the GPU may still be writing */
    slot->gs->done_ok = st == SL_OK;
    if (st != SL_OK)
        sl__exec_frame_failf_locked(slot, SL_EINTERNAL, NULL, NULL, -1, NULL,
                                    "ordering the GPU work of this iteration failed: %s",
                                    sl__gpu_error_text());
    sl__gpu_leave(prev);
}

sl_status sl__stage_frame_sync(sl_pipeline *p, sl__slot *slot)
{
    if (!p->gpu)
        return SL_OK;
    int prev = sl__gpu_enter(p->gpu);
    sl_status st = slot->gs->done_ok ? sl__gpu_event_sync(slot->gs->done) : SL_OK;
    if (!slot->gs->done_ok) { /* no event to wait for: wait for everything queued */
        st = sl__gpu_stream_sync(sl__gpu_stream(p->gpu));
        if (st == SL_OK)
            st = sl__gpu_stream_sync(sl__gpu_copy_stream(p->gpu));
    }
    sl__gpu_leave(prev);
    if (st != SL_OK) /* a kernel fault: the context is lost */
        return sl__error_set(&p->error, SL_EINTERNAL, NULL, NULL, slot->iteration, -1, NULL,
                             "GPU work of this iteration failed: %s", sl__gpu_error_text());
    return SL_OK;
}

#define FLAG_CLEAR 0x7f7f7f7f /* memset byte 0x7f: above any sample index */

/* A device error flag that a kernel set: the frame fails as a CPU sample would. Needs mu. */
static void check_flag(sl_pipeline *p, sl__slot *slot, int j)
{
    struct sl__gpunode *gn = slot->nodes[j].gn;
    int sample = *(const int *)gn->flag.host;
    if (sample == FLAG_CLEAR || atomic_load(&slot->failed))
        return;
    const sl__pnode *pn = &p->plan->nodes[j];
    const sl_batch *out = pn->nout ? &slot->nodes[j].outs[0] : NULL;
    const char *src = out && sample >= 0 && sample < out->size ? out->sources[sample] : NULL;
    if (pn->scope == 0) {
        sl__exec_frame_failf_locked(slot, SL_EINVAL, pn->op->name, pn->name, sample, src, "%s",
                                    gn->flag_msg);
        return;
    }
    char where[512]; /* inside a conditional: the index in the whole batch, and the branch */
    sl__plan_describe_scope(p->plan, pn->scope, where, sizeof where);
    int orig = sample >= 0 && sample < slot->scope_n[pn->scope]
                   ? sl__slot_scope_idx(slot, pn->scope)[sample]
                   : sample;
    sl__exec_frame_failf_locked(slot, SL_EINVAL, pn->op->name, pn->name, orig, src, "%s (in %s)",
                                gn->flag_msg, where);
}

void sl__stage_frame_finish_locked(sl_pipeline *p, sl__slot *slot)
{
    if (!p->gpu)
        return;
    for (int j = 0; j < p->plan->n; j++) {
        struct sl__gpunode *gn = slot->nodes[j].gn;
        float ms;
        if (gn && gn->timed && sl__gpu_elapsed_ms(gn->t0, gn->t1, &ms) == SL_OK)
            p->stats[j].gpu_ns += (int64_t)((double)ms * 1e6);
        if (gn && gn->flag_armed && gn->timed)
            check_flag(p, slot, j);
    }
}

sl_status sl__stage_rec_init(sl_pipeline *p, sl_outputs *o)
{
    if (!p->gpu)
        return SL_OK;
    o->gr = sl__calloc(1, sizeof(*o->gr));
    if (!o->gr)
        return SL_ENOMEM;
    return sl__gpu_event_create(p->gpu, &o->gr->released);
}

void sl__stage_rec_fini(sl_pipeline *p, sl_outputs *o)
{
    if (!o->gr)
        return;
    sl__gpu_event_destroy(o->gr->released);
    sl__free(o->gr);
    o->gr = NULL;
}

size_t sl__stage_device_memory(const sl_pipeline *p)
{
    return p->gpu ? sl__gpu_memory(p->gpu) : 0;
}

void sl__stage_reclaim_locked(sl_pipeline *p, sl_outputs *o)
{
    struct sl__gpurec *gs = o->gr;
    if (!gs || !gs->release_pending)
        return;
    /* on the pipeline's streams, so for all work queued later; if the device cannot order
     * that, the host waits for the consumers */
    int prev = sl__gpu_enter(p->gpu);
    if (sl__gpu_stream_wait(sl__gpu_stream(p->gpu), gs->released) != SL_OK ||
        sl__gpu_stream_wait(sl__gpu_copy_stream(p->gpu), gs->released) != SL_OK)
        sl__gpu_event_sync(gs->released);
    sl__gpu_leave(prev);
    gs->release_pending = false;
}

void sl__stage_unpinned_locked(sl_pipeline *p, sl_outputs *o)
{
    struct sl__gpurec *gs = o->gr;
    if (!gs || (!gs->nconsumer && !gs->overflow))
        return;
    int prev = sl__gpu_enter(p->gpu);
    /* `released` ends up after every consumer stream's work (and after its own earlier record,
     * when the outputs were pinned and let go before): each stream waits for the event so far,
     * then records it */
    bool ok = !gs->overflow;
    for (int k = 0; ok && k < gs->nconsumer; k++) {
        if (k > 0 || gs->release_pending)
            ok = sl__gpu_stream_wait(gs->consumer[k], gs->released) == SL_OK;
        ok = ok && sl__gpu_event_record(gs->released, gs->consumer[k]) == SL_OK;
    }
    if (ok) {
        gs->release_pending = true;
    } else { /* cannot order the reuse after the consumers on the device: wait here */
        sl__gpu_device_sync();
        gs->release_pending = false;
    }
    sl__gpu_leave(prev);
    gs->nconsumer = 0;
    gs->overflow = false;
}

void sl_outputs_set_stream(sl_outputs *o, void *stream)
{
    if (!o || !o->p->gpu)
        return;
    pthread_mutex_lock(&o->p->mu);
    struct sl__gpurec *gs = o->gr;
    bool known = false;
    for (int k = 0; k < gs->nconsumer; k++)
        known |= gs->consumer[k] == stream;
    if (!known && gs->nconsumer < CONSUMER_STREAMS)
        gs->consumer[gs->nconsumer++] = stream;
    else if (!known)
        gs->overflow = true;
    pthread_mutex_unlock(&o->p->mu);
}

/* ---- op-author calls ------------------------------------------------------------------------ */

void *sl_ctx_stream(const sl_ctx *ctx)
{
    return ctx->stream;
}

bool sl_ctx_gpu_emulated(const sl_ctx *ctx)
{
    return ctx->p->gpu && sl__gpu_is_emulated(ctx->p->gpu);
}

/* Grows b to at least bytes (device part, and the pinned part when host is wanted). */
static bool reserve(sl_pipeline *p, gbuf *b, size_t bytes, bool host)
{
    if (bytes <= b->cap && b->dev && (!host || b->host))
        return true;
    const sl__devmem *m = sl__gpu_devmem(p->gpu);
    size_t cap = bytes > b->cap ? bytes + bytes / 2 : b->cap;
    free_gbuf(p->gpu, b);
    b->dev = m->alloc(m->ctx, SL_DEVICE_GPU, cap);
    b->host = host ? m->alloc(m->ctx, SL_DEVICE_PINNED, cap) : NULL;
    b->cap = cap;
    if (b->dev && (!host || b->host))
        return true;
    free_gbuf(p->gpu, b);
    return false;
}

void *sl_ctx_gpu_upload(sl_ctx *ctx, int k, const void *host, size_t bytes)
{
    if (!ctx->sn->gn || k < 0 || k >= SL_GPU_UPLOADS) {
        sl_fail(ctx, SL_EINTERNAL, "sl_ctx_gpu_upload outside the GPU stage or k=%d", k);
        return NULL;
    }
    /* refilling a buffer whose asynchronous copy may not have run yet would change what the
     * earlier copy sends: one fill per buffer and iteration */
    if (ctx->sn->gn->up_used & (1u << k)) {
        sl_fail(ctx, SL_EINTERNAL, "sl_ctx_gpu_upload: buffer %d filled twice in one iteration", k);
        return NULL;
    }
    ctx->sn->gn->up_used |= 1u << k;
    gbuf *b = &ctx->sn->gn->up[k];
    if (!reserve(ctx->p, b, bytes ? bytes : 1, true)) {
        sl_fail(ctx, SL_ENOMEM, "out of GPU or pinned memory for %zu bytes of parameters", bytes);
        return NULL;
    }
    memcpy(b->host, host, bytes);
    if (sl__gpu_copy(ctx->p->gpu, b->dev, b->host, bytes, sl__gpu_stream(ctx->p->gpu)) != SL_OK) {
        sl_fail(ctx, SL_EINTERNAL, "uploading parameters: %s", sl__gpu_error_text());
        return NULL;
    }
    return b->dev;
}

int *sl_ctx_gpu_error_flag(sl_ctx *ctx, const char *message)
{
    struct sl__gpunode *gn = ctx->sn->gn;
    if (!gn || ctx->pn->stage != SL__STAGE_GPU) {
        sl_fail(ctx, SL_EINTERNAL, "sl_ctx_gpu_error_flag outside run_gpu");
        return NULL;
    }
    if (!reserve(ctx->p, &gn->flag, sizeof(int), true)) {
        sl_fail(ctx, SL_ENOMEM, "out of GPU or pinned memory for an error flag");
        return NULL;
    }
    if (!gn->flag_armed &&
        sl__gpu_memset(ctx->p->gpu, gn->flag.dev, 0x7f, sizeof(int), ctx->stream) != SL_OK) {
        sl_fail(ctx, SL_EINTERNAL, "clearing an error flag: %s", sl__gpu_error_text());
        return NULL;
    }
    gn->flag_armed = true;
    snprintf(gn->flag_msg, sizeof gn->flag_msg, "%s", message ? message : "failed on the GPU");
    return (int *)gn->flag.dev;
}

void *sl_ctx_gpu_scratch(sl_ctx *ctx, int k, size_t bytes)
{
    if (!ctx->sn->gn || k < 0 || k >= SL_GPU_UPLOADS) {
        sl_fail(ctx, SL_EINTERNAL, "sl_ctx_gpu_scratch outside the GPU stage or k=%d", k);
        return NULL;
    }
    /* growing it frees the old block, which another node may take while kernels enqueued
     * earlier still use it: one size per buffer and iteration */
    if ((ctx->sn->gn->sc_used & (1u << k)) && bytes > ctx->sn->gn->scratch[k].cap) {
        sl_fail(ctx, SL_EINTERNAL, "sl_ctx_gpu_scratch: buffer %d grown twice in one iteration", k);
        return NULL;
    }
    ctx->sn->gn->sc_used |= 1u << k;
    gbuf *b = &ctx->sn->gn->scratch[k];
    if (!reserve(ctx->p, b, bytes ? bytes : 1, false)) {
        sl_fail(ctx, SL_ENOMEM, "out of GPU memory for %zu bytes of scratch", bytes);
        return NULL;
    }
    return b->dev;
}

#else /* no CUDA: the plan refuses mixed and gpu nodes, so only these remain */

sl_status sl__stage_create(sl_pipeline *p, char *err, size_t errlen)
{
    return SL_OK;
}
void sl__stage_fini_slots(sl_pipeline *p) {}
void sl__stage_destroy(sl_pipeline *p) {}
sl_status sl__stage_alloc_mixed(sl_ctx *ctx)
{
    return sl_fail(ctx, SL_EUNSUPPORTED, "no CUDA support in this build");
}
sl_status sl__stage_copy_mixed(sl_ctx *ctx)
{
    return sl_fail(ctx, SL_EUNSUPPORTED, "no CUDA support in this build");
}
sl_status sl__stage_run_gpu(sl_ctx *ctx)
{
    return sl_fail(ctx, SL_EUNSUPPORTED, "no CUDA support in this build");
}
sl_status sl__stage_run_mixed_gpu(sl_ctx *ctx)
{
    return sl_fail(ctx, SL_EUNSUPPORTED, "no CUDA support in this build");
}
void sl_ctx_set_staging(sl_ctx *ctx, int sample, size_t bytes) {}
bool sl_ctx_staged(const sl_ctx *ctx)
{
    return false;
}
void *sl_ctx_staging(const sl_ctx *ctx, int sample)
{
    return NULL;
}
const void *sl_ctx_staging_device(const sl_ctx *ctx, int sample)
{
    return NULL;
}
sl_status sl__stage_to_host(sl_ctx *ctx)
{
    return sl_fail(ctx, SL_EUNSUPPORTED, "no CUDA support in this build");
}
void sl__stage_frame_start_locked(sl_pipeline *p, sl__slot *slot) {}
void sl__stage_slot_free_locked(sl_pipeline *p, sl__slot *slot) {}
sl__slot *sl__stage_set_blocker_locked(sl_pipeline *p, int64_t it)
{
    return NULL;
}
void sl__stage_frame_done_locked(sl_pipeline *p, sl__slot *slot) {}
sl_status sl__stage_frame_sync(sl_pipeline *p, sl__slot *slot)
{
    return SL_OK;
}
void sl__stage_frame_finish_locked(sl_pipeline *p, sl__slot *slot) {}
sl_status sl__stage_rec_init(sl_pipeline *p, sl_outputs *o)
{
    return SL_OK;
}
void sl__stage_rec_fini(sl_pipeline *p, sl_outputs *o) {}
size_t sl__stage_device_memory(const sl_pipeline *p)
{
    return 0;
}
void sl__stage_reclaim_locked(sl_pipeline *p, sl_outputs *o) {}
void sl__stage_unpinned_locked(sl_pipeline *p, sl_outputs *o) {}
void sl_outputs_set_stream(sl_outputs *o, void *stream) {}
void *sl_ctx_stream(const sl_ctx *ctx)
{
    return NULL;
}
bool sl_ctx_gpu_emulated(const sl_ctx *ctx)
{
    return false;
}
void *sl_ctx_gpu_upload(sl_ctx *ctx, int k, const void *host, size_t bytes)
{
    sl_fail(ctx, SL_EUNSUPPORTED, "no CUDA support in this build");
    return NULL;
}
void *sl_ctx_gpu_scratch(sl_ctx *ctx, int k, size_t bytes)
{
    sl_fail(ctx, SL_EUNSUPPORTED, "no CUDA support in this build");
    return NULL;
}
int *sl_ctx_gpu_error_flag(sl_ctx *ctx, const char *message)
{
    sl_fail(ctx, SL_EUNSUPPORTED, "no CUDA support in this build");
    return NULL;
}
#endif
