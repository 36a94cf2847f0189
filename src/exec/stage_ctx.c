/* src/exec/stage_ctx.c: the operator-facing GPU calls (op.h) and the buffers behind them.
 *
 * Exports sl_ctx_stream, sl_ctx_gpu_emulated, sl_ctx_gpu_upload, sl_ctx_gpu_scratch,
 * sl_ctx_gpu_error_flag, sl_ctx_staged, sl_ctx_set_staging, sl_ctx_staging,
 * sl_ctx_staging_device, and sl__stage_reserve and sl__stage_mark_start (stage.h). Called by
 * operators from their functions, on a thread of the thread pool, without the pipeline lock.
 */
#include <string.h>

#include "exec/exec.h"

#ifdef SLUICE_HAVE_CUDA
#include "exec/stage.h"
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

void sl__stage_mark_start(const sl_ctx *ctx)
{
    struct sl__gpunode *gn = ctx->sn->gn;
    if (gn && gn->t0_pending && ctx->stream) {
        gn->t0_pending = false;
        sl__gpu_event_record(gn->t0, ctx->stream); /* a failure only loses the timing */
    }
}

void *sl_ctx_stream(const sl_ctx *ctx)
{
    sl__stage_mark_start(ctx); /* asked for to enqueue work (kernel.cuh) */
    return ctx->stream;
}

bool sl_ctx_gpu_emulated(const sl_ctx *ctx)
{
    return ctx->p->gpu && sl__gpu_is_emulated(ctx->p->gpu);
}

/* Grows b to at least bytes (device part, and the pinned part when host is wanted). */
bool sl__stage_reserve(sl_pipeline *p, sl__gbuf *b, size_t bytes, bool host)
{
    if (bytes <= b->cap && b->dev && (!host || b->host))
        return true;
    const sl__devmem *m = sl__gpu_devmem(p->gpu);
    size_t cap = bytes > b->cap ? bytes + bytes / 2 : b->cap;
    sl__stage_free_gbuf(p->gpu, b);
    b->dev = m->alloc(m->ctx, SL_DEVICE_GPU, cap);
    b->host = host ? m->alloc(m->ctx, SL_DEVICE_PINNED, cap) : NULL;
    b->cap = cap;
    if (b->dev && (!host || b->host))
        return true;
    sl__stage_free_gbuf(p->gpu, b);
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
    sl__gbuf *b = &ctx->sn->gn->up[k];
    if (!sl__stage_reserve(ctx->p, b, bytes ? bytes : 1, true)) {
        sl_fail(ctx, SL_ENOMEM, "out of GPU or pinned memory for %zu bytes of parameters", bytes);
        return NULL;
    }
    memcpy(b->host, host, bytes);
    sl__stage_mark_start(ctx);
    if (sl__gpu_copy(ctx->p->gpu, b->dev, b->host, bytes, sl__gpu_stream(ctx->p->gpu)) != SL_OK) {
        sl_fail(ctx, SL_EINTERNAL, "uploading parameters: %s", sl__gpu_error_text());
        return NULL;
    }
    return b->dev;
}

int *sl_ctx_gpu_error_flag(sl_ctx *ctx, const char *message)
{
    struct sl__gpunode *gn = ctx->sn->gn;
    if (!gn || !(ctx->pn->stage == SL__STAGE_GPU || sl__stage_is_mixed_gpu(ctx->pn))) {
        sl_fail(ctx, SL_EINTERNAL, "sl_ctx_gpu_error_flag outside run_gpu");
        return NULL;
    }
    if (!sl__stage_reserve(ctx->p, &gn->flag, sizeof(int), true)) {
        sl_fail(ctx, SL_ENOMEM, "out of GPU or pinned memory for an error flag");
        return NULL;
    }
    if (!gn->flag_armed)
        sl__stage_mark_start(ctx);
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
    sl__gbuf *b = &ctx->sn->gn->scratch[k];
    if (!sl__stage_reserve(ctx->p, b, bytes ? bytes : 1, false)) {
        sl_fail(ctx, SL_ENOMEM, "out of GPU memory for %zu bytes of scratch", bytes);
        return NULL;
    }
    return b->dev;
}

#endif
