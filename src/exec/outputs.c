/* src/exec/outputs.c: what the consumer sees of an iteration, and the outputs that live views
 * keep after their release.
 *
 * Exports sl_pipeline_outputs_pin, sl_outputs_get / _iteration / _unpin, sl_pipeline_output
 * (pipeline.h) and sl__outputs_* (exec.h).
 *
 * Each slot has a record (struct sl_outputs, exec.h). share_outputs copies the slot's output
 * batch structs into the record's views (the slot keeps owning the storage); a TensorList, NumPy
 * array, DLPack capsule or torch tensor pins the record. When the consumer releases an iteration
 * whose record is still pinned, the record is *set aside*: it takes over the storage its views
 * show, and the slot gets other storage — a spare record's (one set aside earlier whose views
 * all died) or empty batches that grow in the slot's next iteration — and that record. The slot
 * is free at once, so DALI's loops that keep batches (`out = pipe.run()` at depth 1, a `for`
 * loop's variables, `list(iterator)`) go on, and memory a live view can see is never written.
 * When the last pin of a set-aside record dies it becomes a spare; `depth` spares are kept, the
 * rest freed. A consumer that drops its views before the release sets nothing aside and
 * allocates nothing; one that keeps k iterations at a time cycles through k spares and, once
 * they exist, allocates nothing either.
 *
 * Budget: set-aside records hold at most held_max[0] bytes of host and held_max[1] bytes of
 * device memory (sl_pipeline_options.max_held_bytes for both; by default a quarter of the
 * machine's memory and a quarter of the device's). A release past it leaves the slot HELD: the
 * iteration that needs the slot waits for views to die, and share_outputs fails after ~2 s
 * naming the iterations whose views hold the memory (pipeline.c, wait_ready).
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exec/exec.h"

enum { HOST, DEVICE };

static sl_batch *slot_batch(const sl_pipeline *p, sl__slot *slot, int v)
{
    const sl__ref *r = &p->view_ref[v];
    return &slot->nodes[r->node].outs[r->out];
}

/* Frees a record; `owned`: its views own their storage (set aside or spare). */
static void free_record(sl_pipeline *p, sl_outputs *o, bool owned)
{
    if (!o)
        return;
    for (int v = 0; owned && o->view && v < p->nviews; v++)
        sl__batch_fini(&o->view[v]);
    sl__stage_rec_fini(p, o);
    sl__free(o->view);
    sl__free(o);
}

static sl_outputs *new_record(sl_pipeline *p)
{
    sl_outputs *o = sl__calloc(1, sizeof(*o));
    if (!o)
        return NULL;
    o->p = p;
    o->iteration = -1;
    o->view = sl__calloc((size_t)(p->nviews ? p->nviews : 1), sizeof(sl_batch));
    if (!o->view || sl__stage_rec_init(p, o) != SL_OK) {
        free_record(p, o, false);
        return NULL;
    }
    return o;
}

/* Empty batches like the slot's (device, allocator, room for a batch of samples) in o's views,
 * which then own them. */
static sl_status fresh_storage(sl_pipeline *p, sl__slot *slot, sl_outputs *o)
{
    for (int v = 0; v < p->nviews; v++) {
        const sl_batch *like = slot_batch(p, slot, v);
        sl__batch_init(&o->view[v]);
        sl__batch_set_device(&o->view[v], like->device, like->mem);
        if (sl__batch_reserve_samples(&o->view[v], p->opt.batch_size) != SL_OK)
            return SL_ENOMEM; /* free_record(owned) frees what was made */
    }
    return SL_OK;
}

static size_t quarter_of_ram(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (size_t)pages / 4 * (size_t)size : SIZE_MAX;
}

sl_status sl__outputs_create(sl_pipeline *p)
{
    const sl__plan *plan = p->plan;
    p->view_ref = sl__calloc((size_t)(plan->noutputs ? plan->noutputs : 1), sizeof(sl__ref));
    p->view_of = sl__calloc((size_t)(plan->noutputs ? plan->noutputs : 1), sizeof(int));
    if (!p->view_ref || !p->view_of)
        return SL_ENOMEM;
    for (int i = 0; i < plan->noutputs; i++) { /* one view per batch, however often returned */
        int v = 0;
        while (v < p->nviews && (p->view_ref[v].node != plan->outputs[i].node ||
                                 p->view_ref[v].out != plan->outputs[i].out))
            v++;
        if (v == p->nviews)
            p->view_ref[p->nviews++] = plan->outputs[i];
        p->view_of[i] = v;
    }
    for (int s = 0; s < p->depth; s++) {
        if (!(p->slots[s].out = new_record(p)))
            return SL_ENOMEM;
        p->slots[s].out->slot = &p->slots[s];
    }
    if (p->opt.max_held_bytes > 0) {
        p->held_max[HOST] = p->held_max[DEVICE] = (size_t)p->opt.max_held_bytes;
    } else {
        p->held_max[HOST] = quarter_of_ram();
        p->held_max[DEVICE] = sl__stage_device_memory(p) / 4;
    }
    return SL_OK;
}

void sl__outputs_destroy(sl_pipeline *p)
{
    for (int s = 0; p->slots && s < p->depth; s++) {
        free_record(p, p->slots[s].out, false);
        p->slots[s].out = NULL;
    }
    for (sl_outputs **list = &p->held; list; list = list == &p->held ? &p->spares : NULL) {
        while (*list) {
            sl_outputs *o = *list;
            *list = o->next;
            free_record(p, o, true);
        }
    }
    sl__free(p->view_ref);
    sl__free(p->view_of);
}

/* ---- lists (mu) ------------------------------------------------------------------------ */

static void push_locked(sl_outputs **list, sl_outputs *o)
{
    SL__ASSERT_LOCKED(o->p);
    o->prev = NULL;
    o->next = *list;
    if (*list)
        (*list)->prev = o;
    *list = o;
}

static void unlink_from_locked(sl_outputs **list, sl_outputs *o)
{
    SL__ASSERT_LOCKED(o->p);
    if (o->prev)
        o->prev->next = o->next;
    else
        *list = o->next;
    if (o->next)
        o->next->prev = o->prev;
    o->prev = o->next = NULL;
}

/* ---- share, release, set aside ---------------------------------------------------------- */

void sl__outputs_share_locked(sl_pipeline *p, sl__slot *slot)
{
    SL__ASSERT_LOCKED(p);
    sl_outputs *o = slot->out;
    o->iteration = slot->iteration;
    for (int v = 0; v < p->nviews; v++)
        o->view[v] = *slot_batch(p, slot, v);
}

sl_status sl__outputs_set_aside_locked(sl_pipeline *p, sl__slot *slot)
{
    SL__ASSERT_LOCKED(p);
    sl_outputs *r = slot->out;
    size_t bytes[2] = {0, 0};
    for (int v = 0; v < p->nviews; v++) {
        const sl_batch *b = slot_batch(p, slot, v);
        bytes[b->device == SL_DEVICE_GPU ? DEVICE : HOST] += b->bytes_cap;
    }
    if (p->held_bytes[HOST] + bytes[HOST] > p->held_max[HOST] ||
        p->held_bytes[DEVICE] + bytes[DEVICE] > p->held_max[DEVICE])
        return SL_EMISUSE;
    /* the storage the slot goes on with: a spare's, or empty batches */
    sl_outputs *s = p->spares;
    if (s) {
        unlink_from_locked(&p->spares, s);
        p->nspares--;
        sl__stage_reclaim_locked(p, s); /* its last consumers' kernels come first */
    } else if (!(s = new_record(p)) || fresh_storage(p, slot, s) != SL_OK) {
        free_record(p, s, true);
        return SL_ENOMEM;
    }
    for (int v = 0; v < p->nviews; v++) {
        sl_batch *b = slot_batch(p, slot, v);
        r->view[v] = *b;
        *b = s->view[v];
    }
    r->slot = NULL;
    r->bytes[HOST] = bytes[HOST];
    r->bytes[DEVICE] = bytes[DEVICE];
    push_locked(&p->held, r);
    p->nheld++;
    p->held_bytes[HOST] += bytes[HOST];
    p->held_bytes[DEVICE] += bytes[DEVICE];
    s->slot = slot;
    s->iteration = -1;
    slot->out = s;
    sl__exec_slot_free_locked(p, slot);
    return SL_OK;
}

void sl__outputs_release_locked(sl_pipeline *p, sl__slot *slot)
{
    SL__ASSERT_LOCKED(p);
    if (slot->out->pins == 0)
        sl__exec_slot_free_locked(p, slot);
    else if (sl__outputs_set_aside_locked(p, slot) != SL_OK)
        slot->state = SLOT_HELD; /* freed by the last unpin, or set aside by wait_ready */
}

/* A set-aside record's last view died: keep its storage as a spare, or free it. */
static void retire_locked(sl_pipeline *p, sl_outputs *o)
{
    SL__ASSERT_LOCKED(p);
    unlink_from_locked(&p->held, o);
    p->nheld--;
    p->held_bytes[HOST] -= o->bytes[HOST];
    p->held_bytes[DEVICE] -= o->bytes[DEVICE];
    if (p->nspares < p->depth) {
        push_locked(&p->spares, o);
        p->nspares++;
        return;
    }
    sl__stage_reclaim_locked(p, o); /* device blocks go back to the pipeline's allocator */
    free_record(p, o, true);
}

static void size_text(char *buf, size_t len, size_t bytes)
{
    if (bytes >= (size_t)1 << 20)
        snprintf(buf, len, "%.1f MiB", (double)bytes / (1 << 20));
    else if (bytes >= 1024)
        snprintf(buf, len, "%.1f KiB", (double)bytes / 1024);
    else
        snprintf(buf, len, "%zu bytes", bytes);
}

void sl__outputs_describe_held_locked(const sl_pipeline *p, char *buf, size_t len)
{
    SL__ASSERT_LOCKED(p);
    size_t n = (size_t)snprintf(buf, len, "views of iteration%s", p->nheld == 1 ? "" : "s");
    const sl_outputs *oldest = p->held; /* the list is newest first: list it backwards */
    while (oldest && oldest->next)
        oldest = oldest->next;
    int listed = 0;
    for (const sl_outputs *o = oldest; o && n < len; o = o->prev, listed++) {
        if (listed == 8) {
            n += (size_t)snprintf(buf + n, len - n, ", ...");
            break;
        }
        n += (size_t)snprintf(buf + n, len - n, "%s %lld", listed ? "," : "",
                              (long long)o->iteration);
    }
    char held[2][32], max[2][32];
    for (int d = HOST; d <= DEVICE; d++) {
        size_text(held[d], sizeof held[d], p->held_bytes[d]);
        size_text(max[d], sizeof max[d], p->held_max[d]);
    }
    if (n < len)
        n += (size_t)snprintf(buf + n, len - n,
                              " (%d set aside) already hold %s of the %s of host memory", p->nheld,
                              held[HOST], max[HOST]);
    if (n < len && p->gpu)
        n += (size_t)snprintf(buf + n, len - n, " and %s of the %s of device memory", held[DEVICE],
                              max[DEVICE]);
    if (n < len)
        snprintf(buf + n, len - n, " that max_held_bytes allows");
}

/* ---- the public calls --------------------------------------------------------------------- */

sl_outputs *sl_pipeline_outputs_pin(sl_pipeline *p)
{
    if (!p || !p->built)
        return NULL;
    sl__exec_lock(p);
    sl_outputs *o = NULL;
    if (p->current >= 0) {
        o = p->slots[p->current].out;
        o->pins++;
    }
    sl__exec_unlock(p);
    return o;
}

const sl_batch *sl_outputs_get(const sl_outputs *o, int i)
{
    if (!o || i < 0 || i >= o->p->plan->noutputs)
        return NULL;
    return &o->view[o->p->view_of[i]];
}

int64_t sl_outputs_iteration(const sl_outputs *o)
{
    return o ? o->iteration : -1;
}

void sl_outputs_unpin(sl_outputs *o)
{
    if (!o)
        return;
    sl_pipeline *p = o->p;
    sl__exec_lock(p);
    assert(o->pins > 0);
    /* the last view: order the storage's reuse after its consumers' streams, or wait for the
     * device without the lock, still pinned (a view pinned meanwhile may add streams: again) */
    while (o->pins == 1 && sl__stage_unpinned_locked(p, o)) {
        sl__exec_unlock(p);
        sl__stage_wait_device(p);
        sl__exec_lock(p);
    }
    if (--o->pins == 0) {
        if (!o->slot)
            retire_locked(p, o);
        else if (o->slot->state == SLOT_HELD)
            sl__exec_slot_free_locked(p, o->slot);
        pthread_cond_broadcast(&p->cv); /* a share_outputs may wait for the memory */
    }
    sl__exec_unlock(p);
}

const sl_batch *sl_pipeline_output(const sl_pipeline *p, int i)
{
    if (!p || !p->plan || p->current < 0 || i < 0 || i >= p->plan->noutputs)
        return NULL;
    return &p->slots[p->current].out->view[p->view_of[i]];
}
