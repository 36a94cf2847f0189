/* ops/image/affine.cu: the gpu run of warp_affine and rotate (affine.h, affine.cuh).
 *
 * Exports sl__affine_run_gpu. Per sample, on the host: the op's matrix (from arguments and
 * shapes) and sl__affine_prepare (the CPU path's checks, fill values, float32 matrix); the
 * parameters and fill values are uploaded, then one launch covers every output pixel of the
 * batch. Errors name the sample and its file: the context is focused on each sample in turn
 * (sl_ctx_focus_sample; run_gpu's own context names none).
 * Invariant: nothing here reads sample data on the host; device pointers only go into the
 * uploaded jobs.
 */
#include <stdio.h>
#include <string.h>

#include "ops/image/affine.cuh"
#include "ops/image/affine.h"

template <class Tin, class Tout>
static sl_status launch(sl_ctx *ctx, int n, int64_t max_px, const sl__affine_job *jobs, bool linear)
{
    if (linear)
        return sl_gpu_each(ctx, n, max_px, sl__affine_kernel<Tin, Tout, true>{jobs}, "affine warp");
    return sl_gpu_each(ctx, n, max_px, sl__affine_kernel<Tin, Tout, false>{jobs}, "affine warp");
}

/* Host scratch of run_gpu: jobs (buffer 0), fill values (1), read_fill's doubles (2), fill
 * offsets (3). */
typedef struct host_bufs {
    sl__affine_job *jobs;
    float *fills;
    double *tmp;
    int64_t *fill_off; /* per sample: offset in fills, or -1 */
} host_bufs;

static sl_status host_scratch(sl_ctx *ctx, int n, host_bufs *h)
{
    int64_t cmax = 1, ctotal = 1;
    for (int i = 0; i < n; i++) {
        const int64_t c = sl_ctx_output_shape(ctx, 0, i)[2];
        cmax = c > cmax ? c : cmax;
        ctotal += c;
    }
    h->jobs = (sl__affine_job *)sl_ctx_scratch_n(ctx, 0, sizeof(sl__affine_job) * (size_t)n);
    h->fills = (float *)sl_ctx_scratch_n(ctx, 1, sizeof(float) * (size_t)ctotal);
    h->tmp = (double *)sl_ctx_scratch_n(ctx, 2, sizeof(double) * (size_t)cmax);
    h->fill_off = (int64_t *)sl_ctx_scratch_n(ctx, 3, sizeof(int64_t) * (size_t)n);
    if (!h->jobs || !h->fills || !h->tmp || !h->fill_off)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for the parameters of %d samples", n);
    return SL_OK;
}

/* Sample i's job (fill pointer still unset); *nfill: fill values it appended. */
static sl_status make_job(sl_ctx *ctx, int i, const sl__affine_args *a, const host_bufs *h,
                          int64_t used, int64_t *nfill)
{
    sl_ctx_focus_sample(ctx, i);
    double m[6];
    sl__affine_sample smp;
    sl_status st = a->matrix(ctx, i, m);
    if (st == SL_OK)
        st = sl__affine_prepare(ctx, i, a, m, h->tmp, h->fills + used, &smp);
    if (st != SL_OK)
        return st;
    sl__affine_job *j = &h->jobs[i];
    memset(j, 0, sizeof *j);
    j->src = smp.src.data;
    j->dst = smp.dst.data;
    memcpy(j->m, smp.aff.m, sizeof j->m);
    j->sh = smp.src.h;
    j->sw = smp.src.w;
    j->c = smp.dst.c;
    j->dw = smp.dst.w;
    j->npx = smp.kind == SL__AFFINE_SKIP ? 0 : smp.dst.h * smp.dst.w;
    j->fill_only = smp.kind == SL__AFFINE_FILL;
    *nfill = smp.kind != SL__AFFINE_SKIP && smp.aff.fill ? smp.dst.c : 0;
    h->fill_off[i] = *nfill ? used : -1;
    return SL_OK;
}

extern "C" sl_status sl__affine_run_gpu(sl_ctx *ctx)
{
    const sl__affine_args *a = (const sl__affine_args *)sl_ctx_state(ctx);
    const int n = sl_ctx_batch_size(ctx);
    if (n <= 0)
        return SL_OK;
    host_bufs h;
    sl_status st = host_scratch(ctx, n, &h);
    if (st != SL_OK)
        return st;
    int64_t used = 0, max_px = 0;
    for (int i = 0; i < n; i++) {
        int64_t nfill = 0;
        st = make_job(ctx, i, a, &h, used, &nfill);
        if (st != SL_OK)
            return st;
        used += nfill;
        max_px = h.jobs[i].npx > max_px ? h.jobs[i].npx : max_px;
    }
    sl_ctx_focus_sample(ctx, -1);
    if (max_px == 0)
        return SL_OK;
    const float *dfill = NULL;
    if (used > 0 && !(dfill = sl_gpu_params(ctx, 1, h.fills, (int)used)))
        return SL_ENOMEM;
    for (int i = 0; i < n; i++)
        h.jobs[i].fill = h.fill_off[i] >= 0 ? dfill + h.fill_off[i] : NULL;
    const sl__affine_job *jobs = sl_gpu_params(ctx, 0, h.jobs, n);
    if (!jobs)
        return SL_ENOMEM;

    const sl_dtype tin = sl_batch_dtype(sl_ctx_input(ctx, 0));
    const sl_dtype tout = sl__hwc_out_type(ctx, a->dtype);
    const bool linear = strcmp(sl_ctx_arg_str(ctx, a->interp_type), "INTERP_NN") != 0;
    const bool in8 = tin == SL_DTYPE_UINT8, out8 = tout == SL_DTYPE_UINT8;
    /* sl__hwc_setup and sl__affine_init admit uint8 and float32 only */
    if (in8 && out8)
        return launch<uint8_t, uint8_t>(ctx, n, max_px, jobs, linear);
    if (in8)
        return launch<uint8_t, float>(ctx, n, max_px, jobs, linear);
    if (out8)
        return launch<float, uint8_t>(ctx, n, max_px, jobs, linear);
    return launch<float, float>(ctx, n, max_px, jobs, linear);
}
