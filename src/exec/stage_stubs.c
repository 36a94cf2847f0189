/* src/exec/stage_stubs.c: the GPU stage's exports in a build without CUDA.
 *
 * The plan refuses mixed and gpu nodes there (src/graph/plan.c), so only these remain: the
 * executor's hooks do nothing and the operator-facing calls fail naming the missing support.
 */
#include "exec/exec.h"

#ifndef SLUICE_HAVE_CUDA

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
    SL__ASSERT_LOCKED(p);
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
bool sl__stage_unpinned_locked(sl_pipeline *p, sl_outputs *o)
{
    return false;
}
void sl__stage_wait_device(sl_pipeline *p) {}
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
