/* src/exec/stats.c: what a pipeline tells about itself: per-node timing, the Chrome/Perfetto
 * trace, the picture of its graph.
 *
 * Exports sl__stats_record_locked (called under mu when a node completes an iteration),
 * sl_pipeline_num_nodes, sl_pipeline_node_stats, sl_pipeline_write_trace and
 * sl_pipeline_write_dot (the picture itself is the graph module's: dot.c). The trace keeps the
 * last SL__TRACE_SPANS node spans in a ring; nothing here allocates but the plan that
 * sl_pipeline_write_dot makes for a pipeline not built yet.
 */
#include <inttypes.h>

#include "exec/exec.h"

void sl__stats_record_locked(sl_pipeline *p, int node, int64_t iteration, int64_t start,
                             int64_t end, int64_t busy)
{
    SL__ASSERT_LOCKED(p);
    sl__node_stat *s = &p->stats[node];
    s->iterations++;
    s->total_ns += end - start;
    s->busy_ns += busy;
    sl__span *sp = &p->trace[p->trace_count++ % SL__TRACE_SPANS];
    *sp = (sl__span){
        .node = node, .iteration = iteration, .start_ns = start, .end_ns = end, .busy_ns = busy};
}

void sl_ctx_count_fallback(sl_ctx *ctx)
{
    atomic_fetch_add(&ctx->sn->fallbacks, 1);
}

int sl_pipeline_num_nodes(const sl_pipeline *p)
{
    return p && p->built ? p->plan->n : 0;
}

sl_status sl_pipeline_node_stats(const sl_pipeline *p, int i, sl_node_stats *s)
{
    if (!p || !s || !p->built || i < 0 || i >= p->plan->n)
        return sl__last_error_set(SL_EMISUSE, "sl_pipeline_node_stats: %s",
                                  !p || !p->built ? "pipeline is NULL or not built"
                                                  : "node index out of range");
    sl_pipeline *mp = (sl_pipeline *)p; /* the lock is not part of the logical state */
    const sl__pnode *pn = &p->plan->nodes[i];
    sl__exec_lock(mp);
    s->name = pn->name;
    s->op = pn->op->name;
    s->device = sl__stage_name(pn->stage);
    s->iterations = p->stats[i].iterations;
    s->total_ms = (double)p->stats[i].total_ns / 1e6;
    s->busy_ms = (double)p->stats[i].busy_ns / 1e6;
    s->gpu_ms = (double)p->stats[i].gpu_ns / 1e6;
    s->fallbacks = p->stats[i].fallbacks;
    s->bad_samples = p->stats[i].bad_samples;
    s->fused_into = pn->fuse_into >= 0 ? p->plan->nodes[pn->fuse_into].name : NULL;
    sl__exec_unlock(mp);
    return SL_OK;
}

sl_status sl_pipeline_write_trace(const sl_pipeline *p, FILE *f)
{
    if (!p || !f || !p->built)
        return sl__last_error_set(SL_EMISUSE, "sl_pipeline_write_trace: bad pipeline or file");
    sl_pipeline *mp = (sl_pipeline *)p;
    sl__exec_lock(mp);
    int64_t n = p->trace_count < SL__TRACE_SPANS ? p->trace_count : SL__TRACE_SPANS;
    int64_t first = p->trace_count - n;
    fprintf(f, "{\"traceEvents\": [\n");
    for (int64_t k = 0; k < n; k++) {
        const sl__span *sp = &p->trace[(first + k) % SL__TRACE_SPANS];
        const sl__pnode *pn = &p->plan->nodes[sp->node];
        fprintf(f,
                "  {\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %.3f, "
                "\"dur\": %.3f, \"pid\": 1, \"tid\": %d, \"args\": {\"iteration\": %" PRId64
                ", \"busy_us\": %.3f, \"fused\": %s}}%s\n",
                pn->name, pn->op->name, (double)sp->start_ns / 1e3,
                (double)(sp->end_ns - sp->start_ns) / 1e3, sp->node, sp->iteration,
                (double)sp->busy_ns / 1e3, pn->fuse_into >= 0 ? "true" : "false",
                k + 1 < n ? "," : "");
    }
    /* the samples' run tasks, one row per worker thread (bench/sim.py replays them) */
    int64_t m = p->strace_count < SL__SAMPLE_SPANS ? p->strace_count : SL__SAMPLE_SPANS;
    for (int64_t k = 0; k < m; k++) {
        const sl__sspan *sp = sl__strace_at(mp, p->strace_count - m + k);
        const sl__pnode *pn = &p->plan->nodes[sp->node];
        fprintf(f,
                "%s  {\"name\": \"%s\", \"cat\": \"sample\", \"ph\": \"X\", \"ts\": %.3f, "
                "\"dur\": %.3f, \"pid\": 2, \"tid\": %d, \"args\": {\"iteration\": %" PRId64
                ", \"sample\": %d}}\n",
                n > 0 || k > 0 ? "," : "", pn->name, (double)sp->start_ns / 1e3,
                (double)(sp->end_ns - sp->start_ns) / 1e3, sp->worker, sp->iteration, sp->sample);
    }
    fprintf(f, "]}\n");
    sl__exec_unlock(mp);
    if (ferror(f))
        return sl__error_set(&mp->error, SL_EIO, NULL, NULL, -1, -1, NULL,
                             "sl_pipeline_write_trace: writing the trace failed");
    return SL_OK;
}

sl_status sl_pipeline_write_dot(const sl_pipeline *p, FILE *f)
{
    if (!p || !f)
        return sl__last_error_set(SL_EMISUSE, "sl_pipeline_write_dot: %s is NULL",
                                  p ? "the file" : "the pipeline");
    sl_pipeline *mp = (sl_pipeline *)p; /* the message is not part of the logical state */
    sl__error_clear(&mp->error);
    /* Built, or built half-way (an operator's init failed): the plan is complete either way.
     * Not built: the plan the build will make, from the same graph and options. */
    sl__plan *own = NULL;
    if (!p->plan) {
        sl_status st = sl__plan_build(p->graph, &p->opt, &own, &mp->error);
        if (st != SL_OK)
            return st;
    }
    sl_status st = sl__plan_write_dot(p->plan ? p->plan : own, p->graph, f);
    sl__plan_destroy(own);
    if (st != SL_OK)
        return sl__error_set(&mp->error, st, NULL, NULL, -1, -1, NULL,
                             "sl_pipeline_write_dot: writing the graph failed");
    return SL_OK;
}
