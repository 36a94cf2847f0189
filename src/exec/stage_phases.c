/* src/exec/stage_phases.c: the GPU stage's node and frame phases (stage.h).
 *
 * Exports the node phases sl__stage_alloc_mixed, sl__stage_copy_mixed, sl__stage_run_mixed_gpu,
 * sl__stage_run_gpu, sl__stage_to_host (called by sched.c on a thread of the thread pool,
 * without the pipeline lock) and the frame phases sl__stage_frame_done_locked (the frame's last
 * node completed), sl__stage_frame_sync (share_outputs, without the lock) and
 * sl__stage_frame_finish_locked (device times, error flags).
 */
#include <string.h>

#include "exec/exec.h"

#ifdef SLUICE_HAVE_CUDA
#include "exec/stage.h"
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
    if (!sl__stage_reserve(ctx->p, &gn->staging, gn->stage_off[n] ? gn->stage_off[n] : 1, true))
        return sl_fail(ctx, SL_ENOMEM, "out of GPU or pinned memory for %zu bytes of staging",
                       gn->stage_off[n]);
    return SL_OK;
}

sl_status sl__stage_alloc_mixed(sl_ctx *ctx)
{
    sl__snode *sn = ctx->sn;
    if (sl__stage_is_mixed_gpu(ctx->pn))
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
    if (st == SL_OK && gn->flag_armed) /* read when the frame is done (frame_finish) */
        st = sl__gpu_copy(p->gpu, gn->flag.host, gn->flag.dev, sizeof(int), stream);
    gn->timed = sl__gpu_event_record(gn->t1, stream) == SL_OK && st == SL_OK;
    /* the consumers wait for `copied`: here it follows the kernels, on the compute stream */
    sl_status rec = sl__gpu_event_record(gn->copied, stream);
    sl__gpu_leave(prev);
    if (st == SL_OK && rec != SL_OK)
        return sl_fail(ctx, rec, "recording an event: %s", sl__gpu_error_text());
    return st;
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
    ctx->sn->gn->t0_pending = true; /* recorded with the node's first device work */
    st = ctx->pn->op->run_gpu(ctx);
    sl__stage_mark_start(ctx); /* it enqueued nothing: an empty interval */
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

void sl__stage_frame_done_locked(sl_pipeline *p, sl__slot *slot)
{
    SL__ASSERT_LOCKED(p);
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

/* A device error flag that a kernel set: the frame fails as a CPU sample would. Needs mu. */
static void check_flag_locked(sl_pipeline *p, sl__slot *slot, int j)
{
    SL__ASSERT_LOCKED(p);
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
    SL__ASSERT_LOCKED(p);
    if (!p->gpu)
        return;
    for (int j = 0; j < p->plan->n; j++) {
        struct sl__gpunode *gn = slot->nodes[j].gn;
        float ms;
        if (gn && gn->timed && sl__gpu_elapsed_ms(gn->t0, gn->t1, &ms) == SL_OK)
            p->stats[j].gpu_ns += (int64_t)((double)ms * 1e6);
        if (gn && gn->flag_armed && gn->timed)
            check_flag_locked(p, slot, j);
    }
}

#endif
