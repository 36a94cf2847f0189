/* ops/image/resample.cu: the gpu run of the image family's resampling (resample.h), behind
 * resize and random_resized_crop.
 *
 * Exports sl__resample_gpu.
 *
 * Per batch, on the host: each sample is planned by the operator's callback and
 * sl__resample_plan_init (the CPU's plan: taps, rows and columns read, pass order, skipped
 * axes), its coefficient tables are computed by sl__resample_tables / sl__resample_nn_tables
 * (the CPU's own functions) into one host buffer, uploaded once (upload buffer 0), and its one
 * or two passes, planned by the CPU's sl__resample_passes_of, are described in sl__rsg_pass
 * structs (upload buffer 1). The intermediate
 * images of all samples share device scratch buffer 0. Then two launches over the batch: every
 * sample's first pass, then every sample's second one (resample.cuh). Nothing waits on the GPU.
 * Samples with the same axes and types share one copy of the tables (same_tables).
 * Host scratch: sl_ctx_scratch_n buffers 0 (plans), 1 (tables), 2 (pass structs) and 3 (the
 * samples that own tables).
 */
#include "ops/image/resample.cuh"

extern "C" {
#include "ops/image/resample.h"
}

namespace {

/* A planned sample and where its tables and intermediate go. */
struct planned {
    sl__resample_plan p;
    int64_t offset;        /* elements from the sample's start to the plan's pixel (0, 0) */
    int same;              /* an earlier sample whose tables these are (-1: its own) */
    size_t tab, ntab;      /* its tables: byte offset in the table buffer, bytes */
    size_t tmp, ntmp;      /* its intermediate: byte offset in device scratch, bytes */
    size_t fy, wy, fx, wx; /* table parts, byte offsets from tab (NN: fy rows, fx columns) */
};

size_t align_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

/* Sizes a planned sample's tables (laid out for the upload, a skipped axis gets none) and its
 * intermediate (sl__resample_passes_of's, as the CPU's). */
void size_parts(planned *q, int *kmax)
{
    const sl__resample_plan *p = &q->p;
    q->fy = q->wy = q->fx = q->wx = q->ntab = q->ntmp = 0;
    if (!p->scratch)
        return;
    size_t n = 0;
    if (p->nn) {
        q->fx = align_up((size_t)p->y.out * 4, 16);
        q->ntab = q->fx + align_up((size_t)p->x.out * 4, 16);
        return;
    }
    if (!p->skip_y) {
        q->wy = align_up((size_t)p->y.out * 4, 16);
        n = q->wy + align_up((size_t)p->y.out * (size_t)p->ky * 4, 16);
    }
    q->fx = n;
    if (!p->skip_x) {
        q->wx = n + align_up((size_t)p->x.out * 4, 16);
        n = q->wx + align_up((size_t)p->x.out * (size_t)p->kx * 4, 16);
    }
    q->ntab = n;
    sl__resample_passes ps;
    sl__resample_passes_of(p, &ps);
    q->ntmp = ps.tmp_bytes;
    *kmax = p->ky > *kmax ? p->ky : *kmax;
    *kmax = p->kx > *kmax ? p->kx : *kmax;
}

bool same_axis(const sl__resample_axis &a, const sl__resample_axis &b)
{
    return a.in == b.in && a.out == b.out && a.lo == b.lo && a.hi == b.hi && a.filter == b.filter &&
           a.antialias == b.antialias;
}
/* Whether two planned samples have the same coefficient tables: the tables are a function of
 * the axes and the types alone (sl__resample_plan_init derives the rest from them; channels and
 * strides only place the passes). Batches of same-sized images share them (a val pipeline's
 * 500x375 photos), so each distinct table set is computed and uploaded once. */
bool same_tables(const sl__resample_plan &a, const sl__resample_plan &b)
{
    return same_axis(a.y, b.y) && same_axis(a.x, b.x) && a.in_type == b.in_type &&
           a.out_type == b.out_type;
}
int types_of(bool fixed, bool in_u8, bool out_u8)
{
    if (fixed)
        return SL__RSG_FIXED;
    if (in_u8)
        return SL__RSG_U8_F32;
    return out_u8 ? SL__RSG_F32_U8 : SL__RSG_F32_F32;
}

/* Weighted pass s of a planned sample (sl__resample_passes_of), with device pointers; tab: the
 * sample's device tables. */
sl__rsg_pass pass_of(const planned *q, const sl__resample_pass_plan &s, const void *src,
                     int64_t sstride, void *dst, int64_t dstride, const char *tab)
{
    const sl__resample_plan *p = &q->p;
    sl__rsg_pass a = {};
    a.kind = s.horizontal ? SL__RSG_H : SL__RSG_V;
    a.types = types_of(s.src_u8 && s.dst_u8, s.src_u8, s.dst_u8);
    a.k = s.horizontal ? p->kx : p->ky;
    a.src = src;
    a.sstride = sstride;
    a.dst = dst;
    a.dstride = dstride;
    a.rows = s.rows;
    a.n = s.n;
    a.c = p->c;
    a.count = s.rows * s.n * (s.horizontal && p->c > SL__RSG_PIXEL_C ? p->c : 1);
    a.first = (const int32_t *)(tab + (s.horizontal ? q->fx : q->fy));
    a.w = tab + (s.horizontal ? q->wx : q->wy);
    return a;
}

/* The passes of one planned sample: sl__resample_passes_of's, which sl__resample_run runs.
 * src: the sample's pixel (0, 0) of the plan; tab, tmp: its device tables and intermediate. */
void passes_of(const planned *q, const char *src, void *dst, const char *tab, void *tmp,
               sl__rsg_pass out[2])
{
    const sl__resample_plan *p = &q->p;
    const bool in_u8 = p->in_type == SL_DTYPE_UINT8, out_u8 = p->out_type == SL_DTYPE_UINT8;
    const size_t es = in_u8 ? 1 : 4;
    const int64_t C = p->c, ow = p->x.out, stride = p->stride ? p->stride : p->x.in * C;
    out[0] = out[1] = sl__rsg_pass{};
    if (!p->scratch)
        return;
    if (p->nn) {
        sl__rsg_pass &a = out[0];
        a.kind = SL__RSG_GATHER;
        a.types = in_u8 == out_u8 ? (in_u8 ? SL__RSG_U8_U8 : SL__RSG_F32_F32)
                                  : (in_u8 ? SL__RSG_U8_F32 : SL__RSG_F32_U8);
        a.src = src;
        a.sstride = stride;
        a.dst = dst;
        a.rows = p->y.out;
        a.n = ow;
        a.c = C;
        a.count = p->y.out * ow * C;
        a.first = (const int32_t *)(tab + q->fy);
        a.col = (const int32_t *)(tab + q->fx);
        return;
    }
    sl__resample_passes ps;
    sl__resample_passes_of(p, &ps);
    const char *s0 = src + (size_t)(p->y0 * stride + p->x0 * C) * es;
    if (ps.count == 1) { /* the other axis only: input -> output */
        out[0] = pass_of(q, ps.pass[0], s0, stride, dst, ow * C, tab);
        return;
    }
    out[0] = pass_of(q, ps.pass[0], s0, stride, tmp, ps.tmp_stride, tab);
    out[1] = pass_of(q, ps.pass[1], tmp, ps.tmp_stride, dst, ow * C, tab);
}

} // namespace

extern "C" sl_status sl__resample_gpu(sl_ctx *ctx, sl__resample_plan_fn plan)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx);
    if (n <= 0)
        return SL_OK;
    planned *qs = (planned *)sl_ctx_scratch_n(ctx, 0, sizeof(planned) * (size_t)n);
    if (!qs)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d resampling plans", n);
    size_t ntab = 0, ntmp = 0;
    int kmax = 1;
    int owners = 0; /* samples with tables of their own, listed at the front of `own` */
    int *own = (int *)sl_ctx_scratch_n(ctx, 3, sizeof(int) * (size_t)n);
    if (!own)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d resampling plans", n);
    for (int i = 0; i < n; i++) {
        planned *q = &qs[i];
        plan(ctx, i, &q->p, &q->offset);
        sl__resample_plan_init(&q->p);
        size_parts(q, &kmax);
        q->same = -1;
        for (int k = owners - 1; k >= 0 && q->ntab; k--) { /* the most recent first */
            if (same_tables(qs[own[k]].p, q->p)) {
                q->same = own[k];
                break;
            }
        }
        q->tmp = ntmp;
        ntmp += align_up(q->ntmp, 256);
        if (q->same >= 0) {
            q->tab = qs[q->same].tab;
            continue;
        }
        own[owners++] = i;
        q->tab = ntab;
        ntab += align_up(q->ntab, 256);
    }
    /* the tables, then the doubles sl__resample_tables borrows (not uploaded) */
    char *tabs = (char *)sl_ctx_scratch_n(ctx, 1, ntab + (size_t)kmax * sizeof(double));
    sl__rsg_pass *passes = (sl__rsg_pass *)sl_ctx_scratch_n(ctx, 2, sizeof(sl__rsg_pass) * 2 * n);
    if (!tabs || !passes)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %zu bytes of resampling tables", ntab);
    for (int i = 0; i < n; i++) {
        planned *q = &qs[i];
        char *t = tabs + q->tab;
        if (q->same >= 0)
            continue; /* an earlier sample's tables */
        if (q->p.scratch && q->p.nn)
            sl__resample_nn_tables(&q->p, (int32_t *)(t + q->fy), (int32_t *)(t + q->fx));
        else if (q->p.scratch)
            sl__resample_tables(&q->p, (int32_t *)(t + q->fy), t + q->wy, (int32_t *)(t + q->fx),
                                t + q->wx, (double *)(tabs + ntab));
    }
    const char *dtab = NULL;
    char *dtmp = NULL;
    if (ntab && !(dtab = (const char *)sl_ctx_gpu_upload(ctx, 0, tabs, ntab)))
        return SL_ENOMEM;
    if (ntmp && !(dtmp = (char *)sl_ctx_gpu_scratch(ctx, 0, ntmp)))
        return SL_ENOMEM;
    int64_t max0 = 0, max1 = 0;
    for (int i = 0; i < n; i++) {
        const planned *q = &qs[i];
        const char *src = (const char *)sl_batch_sample_data(in, i) +
                          (size_t)q->offset * sl_dtype_size(q->p.in_type);
        passes_of(q, src, sl_ctx_output_data(ctx, 0, i), dtab + q->tab, dtmp + q->tmp,
                  &passes[2 * i]);
        max0 = passes[2 * i].count > max0 ? passes[2 * i].count : max0;
        max1 = passes[2 * i + 1].count > max1 ? passes[2 * i + 1].count : max1;
    }
    const sl__rsg_pass *dp = sl_gpu_params(ctx, 1, passes, 2 * n);
    if (!dp)
        return SL_ENOMEM;
    sl_status st = sl_gpu_each(ctx, n, max0, sl__rsg_kernel{dp, 0}, "resample (first pass)");
    if (st == SL_OK)
        st = sl_gpu_each(ctx, n, max1, sl__rsg_kernel{dp, 1}, "resample (second pass)");
    return st;
}
