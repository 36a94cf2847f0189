/* src/exec/bad.c: bad samples (sl_pipeline_options.on_bad_sample): a sample whose per-sample
 * work fails is skipped or replaced instead of failing its batch.
 *
 * Exports the sl__bad_* functions of exec.h, sl_init_on_bad_sample, sl_pipeline_bad_samples
 * and sl_pipeline_set_log. Under "skip" or "replace" (the pipeline's, or the failing node's own
 * argument), sl_fail of a sample (setup_sample, run_sample, a fused chain, the size limit)
 * marks the sample bad in its slot instead of failing the frame: the first error per sample is
 * kept, the frame goes on. From then on the executor runs no per-sample function of any node on
 * it; a node allocating its outputs gives each bad sample the shape of the next good sample of
 * its scope (i + 1, i + 2, ..., wrapping; an empty sample when a conditional's branch holds no
 * good one) and zeros (CPU), so that the batch-wide setups of its consumers see well-formed
 * samples. When the frame is delivered (share_outputs), the pipeline
 * outputs are rewritten: a skipped sample is dropped (the others keep their order), a replaced
 * one becomes a copy of the next good sample of the batch in every output (its file and label
 * included: the replacement is a whole sample). The count is checked against max_bad_samples
 * and each bad sample is logged and counted then, in sample order, on the delivering thread.
 * Invariant: a slot's bad flags only go from 0 to 1 during its frame; reads without mu see
 * either, and every action taken on a flag read as 1 (no per-sample run) is safe either way.
 */
#include <stdio.h>
#include <string.h>

#include "exec/exec.h"

sl_status sl__bad_slot_init(sl_pipeline *p, sl__slot *slot)
{
    size_t n = (size_t)p->opt.batch_size;
    slot->bad = sl__calloc(n, sizeof(atomic_uchar));
    slot->bad_err = sl__calloc(n, sizeof(sl__error));
    slot->bad_node = sl__calloc(n, sizeof(int));
    slot->bad_policy = sl__calloc(n, sizeof(int));
    return slot->bad && slot->bad_err && slot->bad_node && slot->bad_policy ? SL_OK : SL_ENOMEM;
}

void sl__bad_slot_fini(sl__slot *slot)
{
    sl__free((void *)slot->bad);
    sl__free(slot->bad_err);
    sl__free(slot->bad_node);
    sl__free(slot->bad_policy);
}

void sl__bad_frame_start_locked(sl_pipeline *p, sl__slot *slot)
{
    SL__ASSERT_LOCKED(p);
    for (int i = 0; i < p->opt.batch_size; i++)
        atomic_store_explicit(&slot->bad[i], 0, memory_order_relaxed);
    slot->nbad = 0;
    atomic_store(&slot->any_bad, false);
}

static int node_policy(const sl_pipeline *p, int node)
{
    int v = p->node_policy ? p->node_policy[node] : -1;
    return v >= 0 ? v : p->opt.on_bad_sample;
}

bool sl__bad_is(const sl__slot *slot, int whole)
{
    return whole >= 0 && whole < slot->batch_size &&
           atomic_load_explicit(&slot->bad[whole], memory_order_acquire);
}

bool sl__bad_mark(sl_ctx *ctx, const sl__error *e)
{
    sl_pipeline *p = ctx->p;
    sl__slot *slot = ctx->slot;
    int whole = e->sample;
    if (whole < 0 || whole >= slot->batch_size || ctx->pn->stage != SL__STAGE_CPU ||
        node_policy(p, ctx->sn->node) == SL_BAD_SAMPLE_RAISE)
        return false;
    sl__exec_lock(p);
    if (!atomic_load(&slot->bad[whole])) {
        slot->bad_err[whole] = *e;
        slot->bad_node[whole] = ctx->sn->node;
        slot->bad_policy[whole] = node_policy(p, ctx->sn->node);
        slot->nbad++;
        atomic_store_explicit(&slot->bad[whole], 1, memory_order_release);
        atomic_store(&slot->any_bad, true);
    }
    sl__exec_unlock(p);
    return true;
}

/* The next good sample after `whole` (wrapping), -1 when there is none. */
static int donor_of(const sl__slot *slot, int whole, int n)
{
    for (int k = 1; k < n; k++) {
        int j = (whole + k) % n;
        if (!sl__bad_is(slot, j))
            return j;
    }
    return -1;
}

/* The first bad sample's error (the lowest index), for the failures that bad samples cause. */
static const sl__error *first_error(const sl__slot *slot)
{
    for (int i = 0; i < slot->batch_size; i++) {
        if (atomic_load(&slot->bad[i]))
            return &slot->bad_err[i];
    }
    return NULL;
}

static void fail_no_good_locked(sl__slot *slot)
{
    SL__ASSERT_LOCKED(slot->p);
    const sl__error *first = first_error(slot);
    sl__error e = *first;
    sl__error_set(
        &e, first->code, first->op[0] ? first->op : NULL, first->node[0] ? first->node : NULL,
        first->iteration, first->sample, first->source[0] ? first->source : NULL,
        "%s (and no sample of the batch is good, so none can take its place)", first->detail);
    sl__exec_frame_fail_locked(slot, &e);
}

sl_status sl__bad_shapes(sl_ctx *ctx, sl_batch *b)
{
    sl__slot *slot = ctx->slot;
    int n = sl_ctx_batch_size(ctx);
    if (b->size != n || ctx->pn->stage != SL__STAGE_CPU)
        return SL_OK;
    for (int i = 0; i < n; i++) {
        int whole = sl__ctx_sample_index(ctx, i);
        if (!sl__bad_is(slot, whole))
            continue;
        /* the donor in this node's scope: the next sample of the scope that is good */
        int d = -1;
        for (int k = 1; k < n && d < 0; k++) {
            int j = (i + k) % n;
            if (!sl__bad_is(slot, sl__ctx_sample_index(ctx, j)))
                d = j;
        }
        if (d >= 0) {
            memcpy(sl__batch_shape_mut(b, i), sl__batch_shape_mut(b, d),
                   sizeof(int64_t) * SL_MAX_NDIM);
            continue;
        }
        /* No good sample in this scope (a conditional's branch that holds only bad samples):
         * the bad ones are empty here; their place in the delivered batch is decided at
         * delivery, from the whole batch. Without a good sample anywhere, the batch fails. */
        if (donor_of(slot, whole, slot->batch_size) < 0) {
            sl__exec_lock(ctx->p);
            fail_no_good_locked(slot);
            sl__exec_unlock(ctx->p);
            return SL_ECORRUPT;
        }
        memset(sl__batch_shape_mut(b, i), 0, sizeof(int64_t) * SL_MAX_NDIM);
    }
    return SL_OK;
}

void sl__bad_zero(sl_ctx *ctx, sl_batch *b)
{
    int n = sl_ctx_batch_size(ctx);
    if (b->size != n || !b->data || b->mem)
        return;
    for (int i = 0; i < n; i++) {
        if (sl__bad_is(ctx->slot, sl__ctx_sample_index(ctx, i)))
            memset(b->data + b->offsets[i], 0, b->offsets[i + 1] - b->offsets[i]);
    }
}

/* Rewrites batch b as its samples src[0..m). Host batches only. */
static sl_status remap(sl_batch *b, const int *src, int m)
{
    int n = b->size;
    size_t total = b->offsets[n];
    uint8_t *old = sl__aligned_alloc(total ? total : 64);
    int64_t *shapes = sl__calloc((size_t)n * SL_MAX_NDIM, sizeof(int64_t));
    size_t *offsets = sl__calloc((size_t)n + 1, sizeof(size_t));
    const char **sources = sl__calloc((size_t)n, sizeof(char *));
    sl_status st = SL_ENOMEM;
    if (old && shapes && offsets && sources) {
        if (total)
            memcpy(old, b->data, total);
        memcpy(shapes, b->shapes, (size_t)n * SL_MAX_NDIM * sizeof(int64_t));
        memcpy(offsets, b->offsets, ((size_t)n + 1) * sizeof(size_t));
        memcpy(sources, b->sources, (size_t)n * sizeof(char *));
        for (int k = 0; k < m; k++) {
            memcpy(&b->shapes[(size_t)k * SL_MAX_NDIM], &shapes[(size_t)src[k] * SL_MAX_NDIM],
                   SL_MAX_NDIM * sizeof(int64_t));
            b->sources[k] = sources[src[k]];
        }
        b->size = m;
        st = sl__batch_alloc(b);
        for (int k = 0; st == SL_OK && k < m; k++)
            memcpy(b->data + b->offsets[k], old + offsets[src[k]],
                   offsets[src[k] + 1] - offsets[src[k]]);
    }
    sl__free(old);
    sl__free(shapes);
    sl__free(offsets);
    sl__free((void *)sources);
    return st;
}

static void log_line(sl_pipeline *p, const char *line)
{
    if (p->log_fn)
        p->log_fn(p->log_user, line);
    else
        fprintf(stderr, "%s\n", line);
}

sl_status sl__bad_deliver(sl_pipeline *p, sl__slot *slot)
{
    sl__exec_lock(p);
    int nbad = slot->nbad;
    if (nbad == 0 || atomic_load(&slot->failed)) {
        sl__exec_unlock(p);
        return SL_OK;
    }
    p->bad_total += nbad;
    for (int i = 0; i < slot->batch_size; i++) {
        if (atomic_load(&slot->bad[i]))
            p->stats[slot->bad_node[i]].bad_samples++;
    }
    if (p->opt.max_bad_samples > 0 && p->bad_total > p->opt.max_bad_samples) {
        const sl__error *first = first_error(slot);
        sl__error e;
        sl__error_set(&e, first->code, first->op[0] ? first->op : NULL,
                      first->node[0] ? first->node : NULL, first->iteration, first->sample,
                      first->source[0] ? first->source : NULL,
                      "%s (%lld bad samples so far, more than max_bad_samples=%lld)", first->detail,
                      (long long)p->bad_total, (long long)p->opt.max_bad_samples);
        sl__exec_frame_fail_locked(slot, &e);
        sl__exec_unlock(p);
        return e.code;
    }
    /* No good sample at all: sl__bad_shapes finds that in most frames, but with conditionals a
     * scope may have seen a good sample that another scope's node later found bad. */
    if (donor_of(slot, (int)(first_error(slot) - slot->bad_err), slot->batch_size) < 0) {
        fail_no_good_locked(slot);
        sl__exec_unlock(p);
        return SL_ECORRUPT;
    }
    sl__exec_unlock(p);

    /* READY: only share_outputs moves the slot on, so its outputs are rewritten unlocked */
    int n = slot->batch_size, m = 0;
    int *src = sl__calloc((size_t)n, sizeof(int));
    if (!src) {
        sl__exec_lock(p);
        sl__exec_frame_failf_locked(slot, SL_ENOMEM, NULL, NULL, -1, NULL, "out of memory");
        sl__exec_unlock(p);
        return SL_ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        if (!atomic_load(&slot->bad[i]))
            src[m++] = i;
        else if (slot->bad_policy[i] == SL_BAD_SAMPLE_REPLACE)
            src[m++] = donor_of(slot, i, n); /* exists: checked above */
    }
    for (int i = 0; i < n; i++) {
        if (!atomic_load(&slot->bad[i]))
            continue;
        const sl__error *e = &slot->bad_err[i];
        char line[SL__MSG_MAX + 128];
        if (slot->bad_policy[i] == SL_BAD_SAMPLE_REPLACE)
            snprintf(line, sizeof line, "sluice: bad sample replaced by sample %d: %s",
                     donor_of(slot, i, n), e->message);
        else
            snprintf(line, sizeof line, "sluice: bad sample skipped: %s", e->message);
        log_line(p, line);
    }
    sl_status st = SL_OK;
    for (int v = 0; v < p->nviews && st == SL_OK; v++) {
        sl_batch *b = &slot->nodes[p->view_ref[v].node].outs[p->view_ref[v].out];
        if (b->size == n)
            st = remap(b, src, m);
    }
    sl__free(src);
    if (st != SL_OK) {
        sl__exec_lock(p);
        sl__exec_frame_failf_locked(slot, st, NULL, NULL, -1, NULL,
                                    "out of memory rewriting the outputs without bad samples");
        sl__exec_unlock(p);
    }
    return st;
}

sl_status sl_init_on_bad_sample(sl_op_init *ini, int arg)
{
    if (!sl_init_arg_is_set(ini, arg))
        return SL_OK;
    const char *s = sl_init_arg_str(ini, arg);
    static const char *const names[] = {"raise", "skip", "replace"};
    for (int k = 0; k < 3; k++) {
        if (strcmp(s, names[k]) == 0) {
            ini->p->node_policy[ini->node] = (signed char)k;
            return SL_OK;
        }
    }
    return sl_init_fail(ini, SL_EINVAL,
                        "on_bad_sample must be \"raise\", \"skip\" or \"replace\", got \"%s\"", s);
}

int64_t sl_pipeline_bad_samples(const sl_pipeline *p)
{
    if (!p)
        return 0;
    sl_pipeline *mp = (sl_pipeline *)p; /* the lock is not part of the logical state */
    sl__exec_lock(mp);
    int64_t n = p->bad_total;
    sl__exec_unlock(mp);
    return n;
}

void sl_pipeline_set_log(sl_pipeline *p, sl_log_fn fn, void *user)
{
    if (!p)
        return;
    sl__exec_lock(p);
    p->log_fn = fn;
    p->log_user = user;
    sl__exec_unlock(p);
}
