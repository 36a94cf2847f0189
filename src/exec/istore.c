/* src/exec/istore.c: storage of intermediate node outputs, shared by the iteration slots.
 *
 * Exports sl__istore_create / sl__istore_destroy (build, destroy), sl__istore_acquire_locked and
 * sl__istore_alloc (a node's allocation phase) and sl__istore_node_done_locked (node completion).
 *
 * An output that is not a pipeline output (nor a source's, nor fused, nor read by a GPU stage
 * that waits for buffer sets: see is_source, feeds_parked_gpu_stage and sched.c) is dead once
 * every consumer of its node has finished
 * the iteration; keeping one buffer per slot for it, as for pipeline outputs, makes memory grow
 * with prefetch_queue_depth for nothing (unfused, val's decoded and resized images are ~57 MiB
 * per slot, and "auto" goes to 8 slots). So each such (node, output) has SL__ISTORE_BUFS (2)
 * buffers, iteration k's batches borrowing buffer k % 2 from the node's allocation until its
 * last consumer of that iteration completes.
 *
 * Why two, not one: with one, iteration k+1 could not run the node until iteration k's
 * consumers of it were done, and when the consumer is a fused decode chain whose samples vary
 * in cost, the threads idled through every batch's tail whatever the depth: the train pipeline's
 * coin flips (64 bytes) made iteration k+1's whole chain wait for iteration k's slowest sample
 * (16 threads of a lent H100 machine: only one iteration's samples in flight, 1 -> 16 threads
 * 9.4x where the decode bound scales 15.3x). With two, iteration k+1 takes the other buffer
 * and fills the tail; iteration k+2 waits for iteration k, whose tail has ended by then.
 *
 * Order and progress: iterations take a node's buffers in iteration order (`next`), and a node
 * that cannot take its buffer yet is parked — no thread waits — and resubmitted by the
 * completion that frees it (sl__exec_resume_locked). The oldest running iteration never parks:
 * every older iteration has completed all its nodes, so it has passed `next` and released its
 * buffer. Hence no deadlock, whatever the graph (stateful nodes included).
 *
 * Invariant (mu): istores[j].holder[k % 2] == k iff the batches of node j in iteration k's slot
 * borrow buffer k % 2 (slot node `holds`); every other slot's batch of a stored output has data
 * NULL.
 */
#include <string.h>

#include "exec/exec.h"

/* A source (a reader) keeps its outputs per slot: stored, iteration k+1's reader would wait
 * for iteration k's last consumer of the files (with sample fusion, the whole decode chain),
 * and the threads would idle while it reads; per slot it runs ahead, for one batch of files
 * (6.6 MiB in the ImageNet pipelines) per extra slot: +1.4-1.7 % images/s measured. */
static bool is_source(const sl__pnode *pn)
{
    return (pn->op->flags & SL_OP_SOURCE) != 0;
}

/* With separated queues a mixed or gpu consumer waits for its iteration's GPU buffer set
 * (stage_sets.c), i.e. for the consumer to release an older iteration: a stored output it reads
 * would keep every later iteration of the producer waiting too, and the CPU stage could not
 * run ahead. Such outputs stay per slot (one batch per CPU-stage iteration in flight). */
static bool feeds_parked_gpu_stage(const sl_pipeline *p, const sl__pnode *pn)
{
    for (int k = 0; p->gdepth < p->depth && k < pn->nsucc; k++) {
        if (p->plan->nodes[pn->succ[k]].stage != SL__STAGE_CPU)
            return true;
    }
    return false;
}

/* Adds producer j to node s's list of producers. */
static sl_status add_pred(sl__istore *s, int j)
{
    int *pred = sl__realloc(s->pred, sizeof(int) * (size_t)(s->npred + 1));
    if (!pred)
        return SL_ENOMEM;
    s->pred = pred;
    s->pred[s->npred++] = j;
    return SL_OK;
}

sl_status sl__istore_create(sl_pipeline *p)
{
    const sl__plan *plan = p->plan;
    p->istores = sl__calloc((size_t)plan->n, sizeof(sl__istore));
    if (!p->istores)
        return SL_ENOMEM;
    for (int j = 0; j < plan->n; j++) {
        const sl__pnode *pn = &plan->nodes[j];
        sl__istore *is = &p->istores[j];
        int nout = pn->nout;
        for (int b = 0; b < SL__ISTORE_BUFS; b++)
            is->holder[b] = -1;
        is->stored = sl__calloc((size_t)(nout ? nout : 1), sizeof(bool));
        is->store = sl__calloc((size_t)SL__ISTORE_BUFS * (nout ? nout : 1), sizeof(sl__istore_buf));
        if (!is->stored || !is->store)
            return SL_ENOMEM;
        for (int o = 0; o < nout; o++) {
            /* CPU memory only; GPU-stage outputs keep their own storage, a fused node's
             * output has none (its samples live in the threads' scratch, sched.c) */
            is->stored[o] = pn->stage == SL__STAGE_CPU && pn->fuse_into < 0 && !is_source(pn) &&
                            !feeds_parked_gpu_stage(p, pn) && !sl__plan_is_output(plan, j, o);
            is->nstored += is->stored[o];
        }
        for (int k = 0; k < pn->nsucc; k++)
            if (add_pred(&p->istores[pn->succ[k]], j) != SL_OK)
                return SL_ENOMEM;
    }
    return SL_OK;
}

void sl__istore_destroy(sl_pipeline *p)
{
    if (!p->istores)
        return;
    for (int j = 0; j < p->plan->n; j++) {
        sl__istore *is = &p->istores[j];
        const int nout = p->plan->nodes[j].nout;
        for (int o = 0; is->stored && is->store && o < nout; o++) {
            if (!is->stored[o])
                continue;
            for (int k = 0; k < SL__ISTORE_BUFS; k++) {
                uint8_t *data = is->store[k * nout + o].data;
                /* the slots' batches may still borrow it (destroyed mid-iteration): unbind */
                for (int s = 0; data && p->slots && s < p->depth; s++) {
                    if (!p->slots[s].nodes || !p->slots[s].nodes[j].outs)
                        continue;
                    sl_batch *b = &p->slots[s].nodes[j].outs[o];
                    if (b->data == data) {
                        b->data = NULL;
                        b->bytes_cap = 0;
                    }
                }
                sl__free(data);
            }
        }
        sl__free(is->stored);
        sl__free(is->store);
        sl__free(is->pred);
    }
    sl__free(p->istores);
    p->istores = NULL;
}

static void wake_locked(sl_pipeline *p, int j);

bool sl__istore_acquire_locked(sl_pipeline *p, sl__snode *sn)
{
    SL__ASSERT_LOCKED(p);
    sl__istore *is = &p->istores[sn->node];
    if (!is->nstored)
        return true;
    const int64_t it = sn->slot->iteration;
    if (is->next != it || is->holder[it % SL__ISTORE_BUFS] >= 0) {
        sn->parked = true;
        return false;
    }
    is->holder[it % SL__ISTORE_BUFS] = it;
    is->next = it + 1;
    sn->holds = true;
    sn->parked = false;
    wake_locked(p, sn->node); /* the next iteration, parked for its turn, may have its buffer */
    return true;
}

sl_status sl__istore_alloc(sl__snode *sn, int o)
{
    sl_batch *b = &sn->outs[o];
    sl__istore *is = &sn->p->istores[sn->node];
    if (!is->stored[o])
        return sl__batch_alloc(b);
    /* only the holder touches its buffer, so no lock: borrow, grow if needed, give back */
    const int nout = sn->p->plan->nodes[sn->node].nout;
    sl__istore_buf *st = &is->store[(sn->slot->iteration % SL__ISTORE_BUFS) * nout + o];
    b->data = st->data;
    b->bytes_cap = st->cap;
    sl_status s = sl__batch_alloc(b);
    st->data = b->data;
    st->cap = b->bytes_cap;
    return s;
}

/* Gives node j's buffer back (its consumers in the holder's iteration are done), so that the
 * iteration two later can have it. */
static void release_locked(sl_pipeline *p, sl__snode *sn)
{
    SL__ASSERT_LOCKED(p);
    sl__istore *is = &p->istores[sn->node];
    for (int o = 0; o < p->plan->nodes[sn->node].nout; o++) {
        if (is->stored[o]) {
            sn->outs[o].data = NULL;
            sn->outs[o].bytes_cap = 0;
        }
    }
    sn->holds = false;
    is->holder[sn->slot->iteration % SL__ISTORE_BUFS] = -1;
}

/* Resumes node j of iteration is->next if it is parked and its buffer is free. */
static void wake_locked(sl_pipeline *p, int j)
{
    SL__ASSERT_LOCKED(p);
    sl__istore *is = &p->istores[j];
    sl__slot *slot = &p->slots[is->next % p->depth];
    sl__snode *sn = &slot->nodes[j];
    if (is->holder[is->next % SL__ISTORE_BUFS] >= 0 || slot->state != SLOT_RUNNING ||
        slot->iteration != is->next || !sn->parked)
        return;
    sl__istore_acquire_locked(p, sn);
    sl__exec_resume_locked(p, sn);
}

void sl__istore_node_done_locked(sl_pipeline *p, sl__snode *sn)
{
    SL__ASSERT_LOCKED(p);
    const int j = sn->node;
    sl__istore *is = &p->istores[j];
    sn->parked = false;
    /* passed its allocation without taking the storage (skipped, failed): let the next go */
    if (is->nstored && is->next == sn->slot->iteration && !sn->holds) {
        is->next++;
        wake_locked(p, j);
    }
    if (sn->holds && sn->consumers_left == 0) { /* no consumers at all */
        release_locked(p, sn);
        wake_locked(p, j);
    }
    for (int k = 0; k < is->npred; k++) {
        sl__snode *pr = &sn->slot->nodes[is->pred[k]];
        if (--pr->consumers_left == 0 && pr->holds) {
            release_locked(p, pr);
            wake_locked(p, pr->node);
        }
    }
}
