/* src/exec/stage_sets.c: the GPU stage's buffer sets and the consumers' records (stage.h).
 *
 * Exports sl__stage_create / sl__stage_fini_slots / sl__stage_destroy (build, destroy),
 * sl__stage_frame_start_locked / sl__stage_slot_free_locked / sl__stage_set_blocker_locked
 * (sets taken and given back in iteration order), sl__stage_rec_* / sl__stage_unpinned_locked /
 * sl__stage_reclaim_locked / sl__stage_wait_consumers (a record's consumer streams and the
 * reuse of its storage after them) and sl_outputs_set_stream (pipeline.h).
 */
#include <string.h>

#include "exec/exec.h"

#ifdef SLUICE_HAVE_CUDA
#include "exec/stage.h"
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
        if (!sl__stage_is_gpu(pn))
            continue;
        int nout = pn->nout;
        if (new_gnode(p, &g->gn[j]) != SL_OK || !(g->outs[j] = new_batches(p, nout, SL_DEVICE_GPU)))
            return SL_ENOMEM;
        if (sl__stage_is_mixed_gpu(pn)) {
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
static void bind_set_locked(sl_pipeline *p, sl__slot *slot, struct sl__gset *g)
{
    SL__ASSERT_LOCKED(p);
    for (int j = 0; j < p->plan->n; j++) {
        if (!sl__stage_is_gpu(&p->plan->nodes[j]))
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
        any |= sl__stage_is_gpu(&p->plan->nodes[j]);
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

void sl__stage_free_gbuf(sl__gpu *g, sl__gbuf *b)
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
    sl__stage_free_gbuf(g, &gn->flag);
    for (int k = 0; k < SL_GPU_UPLOADS; k++) {
        sl__stage_free_gbuf(g, &gn->up[k]);
        sl__stage_free_gbuf(g, &gn->scratch[k]);
    }
    sl__stage_free_gbuf(g, &gn->staging);
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
        if (slot->nodes) { /* the sets' batches are gone */
            sl__exec_lock(p);
            bind_set_locked(p, slot, NULL);
            sl__exec_unlock(p);
        }
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
static bool take_set_locked(sl_pipeline *p, sl__slot *slot)
{
    SL__ASSERT_LOCKED(p);
    int64_t it = slot->iteration;
    struct sl__gset *g = &p->gsets[it % p->gdepth];
    if (p->gset_next != it || g->holder >= 0)
        return false;
    g->holder = it;
    p->gset_next = it + 1;
    slot->gset = (int)(it % p->gdepth);
    bind_set_locked(p, slot, g);
    /* the consumers of the set's previous outputs were waited for when they gave the storage
     * back (sl__stage_reclaim_locked, at slot free or set-aside) */
    for (int j = 0; j < p->plan->n; j++)
        gnode_frame_start(g->gn[j]);
    return true;
}

void sl__stage_frame_start_locked(sl_pipeline *p, sl__slot *slot)
{
    SL__ASSERT_LOCKED(p);
    if (!p->gpu)
        return;
    for (int j = 0; j < p->plan->n; j++) { /* the to_host nodes' own events */
        if (p->plan->nodes[j].to_host)
            gnode_frame_start(slot->nodes[j].gn);
    }
    take_set_locked(p, slot);
    if (p->gpu_unordered) /* sl__stage_reclaim_locked */
        sl__exec_frame_failf_locked(slot, SL_EINTERNAL, NULL, NULL, -1, NULL,
                                    "the GPU cannot order the reuse of output buffers after "
                                    "their consumers' streams: %s",
                                    p->gpu_unordered_why);
}

void sl__stage_slot_free_locked(sl_pipeline *p, sl__slot *slot)
{
    SL__ASSERT_LOCKED(p);
    if (!p->gsets || slot->gset < 0)
        return;
    struct sl__gset *g = &p->gsets[slot->gset];
    g->holder = -1;
    slot->gset = -1;
    bind_set_locked(p, slot, NULL);
    /* hand the sets on, in iteration order, to the running iterations waiting for them */
    for (;;) {
        sl__slot *next = &p->slots[p->gset_next % p->depth];
        if (next->state != SLOT_RUNNING || next->iteration != p->gset_next ||
            !take_set_locked(p, next))
            break;
        sl__exec_gpu_resume_locked(p, next);
    }
}

sl__slot *sl__stage_set_blocker_locked(sl_pipeline *p, int64_t it)
{
    SL__ASSERT_LOCKED(p);
    if (!p->gsets)
        return NULL;
    const struct sl__gset *g = &p->gsets[it % p->gdepth];
    return g->holder >= 0 && g->holder < it ? &p->slots[g->holder % p->depth] : NULL;
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
    SL__ASSERT_LOCKED(p);
    struct sl__gpurec *gs = o->gr;
    if (!gs || !gs->release_pending)
        return;
    /* on the pipeline's streams, so for all work queued later. If the device cannot order
     * that (a CUDA error, sticky in practice), no host wait here, under the lock: every later
     * frame fails instead (sl__stage_frame_start_locked), so nothing writes the storage before
     * its consumers are done. */
    int prev = sl__gpu_enter(p->gpu);
    if (sl__gpu_stream_wait(sl__gpu_stream(p->gpu), gs->released) != SL_OK ||
        sl__gpu_stream_wait(sl__gpu_copy_stream(p->gpu), gs->released) != SL_OK) {
        if (!p->gpu_unordered)
            snprintf(p->gpu_unordered_why, sizeof p->gpu_unordered_why, "%s", sl__gpu_error_text());
        p->gpu_unordered = true;
    }
    sl__gpu_leave(prev);
    gs->release_pending = false;
}

bool sl__stage_unpinned_locked(sl_pipeline *p, sl_outputs *o)
{
    SL__ASSERT_LOCKED(p);
    struct sl__gpurec *gs = o->gr;
    if (!gs || (!gs->nconsumer && !gs->overflow))
        return false;
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
    sl__gpu_leave(prev);
    /* not ok: the reuse cannot be ordered after the consumers on the device; the caller waits
     * for the whole device (sl__stage_wait_device) with the lock released, the record still
     * pinned, so that the storage cannot come back meanwhile */
    gs->release_pending = ok;
    gs->nconsumer = 0;
    gs->overflow = false;
    return !ok;
}

void sl__stage_wait_device(sl_pipeline *p)
{
    assert(!sl__exec_holds_lock(p)); /* never a device synchronisation under the lock */
    int prev = sl__gpu_enter(p->gpu);
    sl__gpu_device_sync();
    sl__gpu_leave(prev);
}

void sl_outputs_set_stream(sl_outputs *o, void *stream)
{
    if (!o || !o->p->gpu)
        return;
    sl__exec_lock(o->p);
    struct sl__gpurec *gs = o->gr;
    bool known = false;
    for (int k = 0; k < gs->nconsumer; k++)
        known |= gs->consumer[k] == stream;
    if (!known && gs->nconsumer < CONSUMER_STREAMS)
        gs->consumer[gs->nconsumer++] = stream;
    else if (!known)
        gs->overflow = true;
    sl__exec_unlock(o->p);
}

#endif
