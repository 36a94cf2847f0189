/* src/exec/cache.c: the sample cache — outputs of the deterministic subgraph kept per sample.
 *
 * Exports the sl__cache_* hooks (cache.h), sl_ctx_set_sample_key (op.h) and
 * sl_pipeline_cache_stats (pipeline.h).
 *
 * The cacheable subgraph. A root is a CPU SL_OP_DETERMINISTIC source with reader metadata (a
 * reader: it names each sample's key, its index in the data set, in its setup). A node is
 * cacheable when its operator is SL_OP_DETERMINISTIC (and not random, a callback or a source),
 * it runs per sample on the CPU, outside any conditional, and every producer (data and
 * argument inputs) is cacheable with the same root. The outputs that leave the subgraph — a
 * pipeline output, an input of a node that is not cacheable, any argument input — are the cached
 * outputs: their bytes are kept. Of the others only the shapes are kept, so that the batch-wide
 * setups of the subgraph's nodes see what they would have seen. A cached output may belong to
 * a node fused into a consumer outside the subgraph (decode and resize fused into a
 * crop_mirror_normalize whose mirror is random): a hit then points the fused sample at the
 * cached bytes (a file cache reads them into the sample's scratch), and a fill computes the
 * whole sample (not only the box its consumer reads) so that what is stored is complete.
 *
 * An entry holds, for one key of one root, a part per cacheable node of that root: the shapes
 * of all its outputs and a blob (memory, or a range of the cache file) per cached output. The
 * root's setup (serial, in iteration order) looks each sample's key up: a READY entry is a hit
 * — no node of the subgraph runs setup_sample or run_sample for the sample, the shapes come
 * from the entry before allocation, the cached outputs' bytes are copied in by the run phase;
 * no entry, with room left, is claimed (FILLING) and its parts are written by the tasks that
 * compute the sample; anything else is computed as without a cache. When the frame is done
 * (every task finished), a claimed entry whose parts all arrived becomes READY, any other one
 * (a bad sample, a failed frame, a part that did not fit) is emptied so that a later epoch may
 * try again. Results are therefore the bytes the work would give, whatever the thread count,
 * the order of the samples or which of them failed.
 *
 * Admission and eviction: samples are admitted in the order they are first computed while they
 * fit in cache_bytes; the first one that does not fit closes admission, and nothing is ever
 * evicted. Every epoch reads every sample once, in any order, so a policy that evicts can only
 * trade one hit for another and pay a copy for it (LRU over shuffled epochs does worse than
 * keeping a fixed part); keeping what is cached also means an entry, once READY, is never
 * written or freed again while the pipeline lives — readers need no lock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/cache.h"

enum { HOW_COMPUTE = 0, HOW_HIT = 1, HOW_FILL = 2 };
enum { ENTRY_EMPTY = 0, ENTRY_FILLING = 1, ENTRY_READY = 2 };

typedef struct blob {
    void *mem;   /* memory cache: the bytes */
    int64_t off; /* file cache: where they are */
    size_t bytes;
} blob;

/* Followed by the parts: per cacheable node of the root, (SL_MAX_NDIM + 1) int64 per output
 * (ndim, extents) then a blob per output. */
typedef struct entry {
    atomic_int state;
    atomic_int parts_left;
    atomic_bool broken; /* a part could not be stored */
} entry;

typedef struct croot {
    int node;      /* plan index of the reader */
    int64_t nkeys; /* its epoch size: keys are 0 .. nkeys - 1 */
    entry **table; /* nkeys, claimed entries (only the root's setup writes it) */
    int nparts;    /* its cacheable nodes */
    size_t esize;  /* bytes of one entry */
} croot;

typedef struct sl__cache sl__cache;
struct sl__cache {
    int nroots;
    croot *roots;
    int *root_of; /* per plan node: its root's index, -1 not cacheable */
    size_t *part; /* per plan node: the byte offset of its part in an entry */
    bool *cached; /* per plan node, SL__MAX_OUT... : nout entries at out_base[node] */
    int *out_base;
    int nodes; /* cacheable nodes */
    int64_t capacity;
    atomic_int_fast64_t bytes, entries, hits, misses;
    atomic_bool full;
    int fd; /* the cache file, -1: memory */
    atomic_int_fast64_t file_end;
    char path[SL_CACHE_FILE_MAX];
};

/* Per slot: per root, the samples' keys (set by the root's setup), what each sample does in the
 * frame, and the entries they hit or fill. */
struct sl__cslot {
    int64_t *key; /* nroots * batch_size */
    uint8_t *how; /* nroots * batch_size */
    entry **ent;  /* nroots * batch_size */
};

static int64_t *part_shapes(const sl__cache *c, entry *e, int node)
{
    return (int64_t *)(void *)((char *)e + c->part[node]);
}

static blob *part_blobs(const sl__cache *c, entry *e, int node, int nout)
{
    return (blob *)(void *)(part_shapes(c, e, node) + (size_t)nout * (SL_MAX_NDIM + 1));
}

/* ---- build ------------------------------------------------------------------------------- */

static bool is_root(const sl_pipeline *p, int j)
{
    const sl__pnode *pn = &p->plan->nodes[j];
    unsigned f = pn->op->flags;
    return (f & SL_OP_DETERMINISTIC) && (f & SL_OP_SOURCE) &&
           !(f & (SL_OP_RANDOM | SL_OP_CALLBACK)) && pn->op->reader_meta && pn->op->run_sample &&
           pn->npred == 0 && pn->stage == SL__STAGE_CPU && pn->scope == 0 && pn->fuse_into < 0;
}

/* The root node j may hang off (its producers' common root), -1 when it is not cacheable. */
static int node_root(const sl_pipeline *p, const int *root, int j)
{
    const sl__pnode *pn = &p->plan->nodes[j];
    unsigned f = pn->op->flags;
    if (!(f & SL_OP_DETERMINISTIC) || (f & (SL_OP_RANDOM | SL_OP_CALLBACK | SL_OP_SOURCE)) ||
        !pn->op->run_sample || pn->stage != SL__STAGE_CPU || pn->to_host || pn->scope != 0 ||
        pn->ninputs == 0)
        return -1;
    int r = -1;
    for (int k = 0; k < pn->ninputs; k++) {
        int q = root[pn->inputs[k].node];
        if (q < 0 || (r >= 0 && q != r))
            return -1;
        r = q;
    }
    for (int a = 0; a < pn->nargs; a++) {
        int src = pn->args[a].input.node;
        if (src >= 0 && (root[src] < 0 || root[src] != r))
            return -1;
    }
    return r;
}

/* root[j]: the plan index of node j's root, -1 not cacheable (plan order is topological). */
static void find_subgraph(const sl_pipeline *p, int *root)
{
    int n = p->plan->n;
    for (int j = 0; j < n; j++)
        root[j] = is_root(p, j) ? j : node_root(p, root, j);
}

/* Whether output o of cacheable node j leaves the subgraph. */
static bool leaves(const sl_pipeline *p, const int *root, int j, int o)
{
    if (sl__plan_is_output(p->plan, j, o))
        return true;
    for (int c = 0; c < p->plan->n; c++) {
        const sl__pnode *pc = &p->plan->nodes[c];
        for (int k = 0; k < pc->ninputs; k++) {
            if (pc->inputs[k].node == j && pc->inputs[k].out == o && root[c] < 0)
                return true;
        }
        for (int a = 0; a < pc->nargs; a++) {
            if (pc->args[a].input.node == j && pc->args[a].input.out == o)
                return true;
        }
    }
    return false;
}

static sl_status make_roots(sl_pipeline *p, sl__cache *c, const int *root)
{
    int n = p->plan->n, total_out = 0;
    for (int j = 0; j < n; j++) {
        c->out_base[j] = total_out;
        total_out += p->plan->nodes[j].nout;
        if (root[j] == j)
            c->nroots++;
    }
    c->cached = sl__calloc((size_t)(total_out ? total_out : 1), sizeof(bool));
    c->roots = sl__calloc((size_t)c->nroots, sizeof(croot));
    if (!c->cached || !c->roots)
        return sl__pipeline_fail(p, SL_ENOMEM, "out of memory for the sample cache");
    int r = 0;
    for (int j = 0; j < n; j++) {
        if (root[j] != j)
            continue;
        sl_reader_meta m;
        memset(&m, 0, sizeof m);
        p->plan->nodes[j].op->reader_meta(p->states[j], &m);
        croot *cr = &c->roots[r];
        cr->node = j;
        cr->nkeys = m.epoch_size > 0 ? m.epoch_size : 0;
        cr->esize = (sizeof(entry) + 15) & ~(size_t)15; /* the parts: int64s and blobs */
        cr->table = sl__calloc((size_t)(cr->nkeys ? cr->nkeys : 1), sizeof(entry *));
        if (!cr->table)
            return sl__pipeline_fail(p, SL_ENOMEM, "out of memory for the sample cache's table");
        for (int k = j; k < n; k++) { /* the root's index for its nodes, their parts */
            if (root[k] != j)
                continue;
            int nout = p->plan->nodes[k].nout;
            c->root_of[k] = r;
            c->part[k] = cr->esize;
            cr->esize += (size_t)nout * ((SL_MAX_NDIM + 1) * sizeof(int64_t) + sizeof(blob));
            cr->nparts++;
            c->nodes++;
            for (int o = 0; o < nout; o++)
                c->cached[c->out_base[k] + o] = leaves(p, root, k, o);
        }
        r++;
    }
    return SL_OK;
}

static sl_status make_slots(sl_pipeline *p, sl__cache *c)
{
    size_t n = (size_t)c->nroots * (size_t)p->opt.batch_size;
    for (int s = 0; s < p->depth; s++) {
        struct sl__cslot *cs = p->slots[s].cache = sl__calloc(1, sizeof(*cs));
        if (!cs || !(cs->key = sl__malloc(n * sizeof(int64_t))) || !(cs->how = sl__calloc(n, 1)) ||
            !(cs->ent = sl__calloc(n, sizeof(entry *))))
            return sl__pipeline_fail(p, SL_ENOMEM, "out of memory for the sample cache");
        for (size_t i = 0; i < n; i++)
            cs->key[i] = -1;
    }
    return SL_OK;
}

sl_status sl__cache_create(sl_pipeline *p)
{
    if (p->opt.cache_bytes <= 0)
        return SL_OK;
    int n = p->plan->n;
    int *root = sl__malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!root)
        return sl__pipeline_fail(p, SL_ENOMEM, "out of memory for the sample cache");
    find_subgraph(p, root);
    bool any = false;
    for (int j = 0; j < n; j++)
        any |= root[j] >= 0;
    if (!any) { /* nothing to cache: the pipeline runs as without one (stats say nodes 0) */
        sl__free(root);
        return SL_OK;
    }
    sl__cache *c = p->cache = sl__calloc(1, sizeof(*c));
    if (!c) {
        sl__free(root);
        return sl__pipeline_fail(p, SL_ENOMEM, "out of memory for the sample cache");
    }
    c->fd = -1;
    c->capacity = p->opt.cache_bytes;
    c->root_of = sl__malloc(sizeof(int) * (size_t)n);
    c->part = sl__calloc((size_t)n, sizeof(size_t));
    c->out_base = sl__calloc((size_t)n, sizeof(int));
    sl_status st = c->root_of && c->part && c->out_base
                       ? SL_OK
                       : sl__pipeline_fail(p, SL_ENOMEM, "out of memory for the sample cache");
    for (int j = 0; st == SL_OK && j < n; j++)
        c->root_of[j] = -1;
    if (st == SL_OK)
        st = make_roots(p, c, root);
    sl__free(root);
    if (st == SL_OK)
        st = make_slots(p, c);
    if (st == SL_OK && p->opt.cache_file[0]) {
        snprintf(c->path, sizeof c->path, "%s", p->opt.cache_file);
        c->fd = open(c->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (c->fd < 0) {
            char buf[128];
            st = sl__pipeline_fail(p, SL_EIO, "cache_file \"%s\": cannot create it: %s", c->path,
                                   strerror_r(errno, buf, sizeof buf));
        }
    }
    return st;
}

static void free_blobs(sl__cache *c, const sl_pipeline *p, int r, entry *e)
{
    for (int j = 0; j < p->plan->n; j++) {
        if (c->root_of[j] != r)
            continue;
        int nout = p->plan->nodes[j].nout;
        blob *b = part_blobs(c, e, j, nout);
        for (int o = 0; o < nout; o++) {
            sl__free(b[o].mem);
            if (b[o].mem || c->fd < 0)
                atomic_fetch_sub(&c->bytes, (int64_t)b[o].bytes);
            b[o] = (blob){.off = -1};
        }
    }
}

void sl__cache_destroy(sl_pipeline *p)
{
    sl__cache *c = p->cache;
    for (int s = 0; p->slots && s < p->depth; s++) {
        struct sl__cslot *cs = p->slots[s].cache;
        if (cs) {
            sl__free(cs->key);
            sl__free(cs->how);
            sl__free(cs->ent);
            sl__free(cs);
            p->slots[s].cache = NULL;
        }
    }
    if (!c)
        return;
    for (int r = 0; c->roots && r < c->nroots; r++) {
        croot *cr = &c->roots[r];
        for (int64_t k = 0; cr->table && k < cr->nkeys; k++) {
            if (cr->table[k]) {
                free_blobs(c, p, r, cr->table[k]);
                sl__free(cr->table[k]);
            }
        }
        sl__free(cr->table);
    }
    if (c->fd >= 0) {
        close(c->fd);
        unlink(c->path);
    }
    sl__free(c->roots);
    sl__free(c->root_of);
    sl__free(c->part);
    sl__free(c->cached);
    sl__free(c->out_base);
    sl__free(c);
    p->cache = NULL;
}

/* ---- per frame ----------------------------------------------------------------------------- */

void sl_ctx_set_sample_key(sl_ctx *ctx, int sample, int64_t key)
{
    sl__cache *c = ctx->p->cache;
    if (!c || c->root_of[ctx->sn->node] < 0 || ctx->pn->npred != 0 || sample < 0 ||
        sample >= ctx->p->opt.batch_size)
        return;
    ctx->slot->cache->key[c->root_of[ctx->sn->node] * ctx->p->opt.batch_size + sample] = key;
}

/* Reserves `bytes` of the budget; false (and admission closed) when they do not fit. */
static bool reserve(sl__cache *c, size_t bytes)
{
    int64_t was = atomic_fetch_add(&c->bytes, (int64_t)bytes);
    if (was + (int64_t)bytes <= c->capacity && (int64_t)bytes >= 0)
        return true;
    atomic_fetch_sub(&c->bytes, (int64_t)bytes);
    atomic_store(&c->full, true);
    return false;
}

void sl__cache_root_setup(sl_ctx *ctx)
{
    sl_pipeline *p = ctx->p;
    sl__cache *c = p->cache;
    int j = ctx->sn->node;
    if (!c || c->root_of[j] < 0 || c->roots[c->root_of[j]].node != j)
        return;
    int r = c->root_of[j], bs = p->opt.batch_size, n = sl_ctx_batch_size(ctx);
    croot *cr = &c->roots[r];
    struct sl__cslot *cs = ctx->slot->cache;
    bool failed = atomic_load(&ctx->slot->failed);
    int64_t hits = 0, misses = 0;
    for (int i = 0; i < n; i++) {
        int64_t key = cs->key[r * bs + i];
        cs->key[r * bs + i] = -1; /* the next frame's setup names its own */
        uint8_t *how = &cs->how[r * bs + i];
        *how = HOW_COMPUTE;
        cs->ent[r * bs + i] = NULL;
        if (key < 0 || key >= cr->nkeys || failed) {
            misses++;
            continue;
        }
        entry *e = cr->table[key];
        if (e && atomic_load_explicit(&e->state, memory_order_acquire) == ENTRY_READY) {
            *how = HOW_HIT;
            cs->ent[r * bs + i] = e;
            hits++;
            continue;
        }
        misses++;
        if (atomic_load(&c->full))
            continue;
        if (!e) {
            if (!reserve(c, cr->esize) || !(e = sl__calloc(1, cr->esize)))
                continue;
            cr->table[key] = e;
            for (int k = 0; k < p->plan->n; k++) {
                if (c->root_of[k] != r)
                    continue;
                blob *b = part_blobs(c, e, k, p->plan->nodes[k].nout);
                for (int o = 0; o < p->plan->nodes[k].nout; o++)
                    b[o].off = -1;
            }
        } else if (atomic_load(&e->state) != ENTRY_EMPTY) {
            continue; /* being filled by an earlier iteration still in flight */
        }
        atomic_store(&e->broken, false);
        atomic_store(&e->parts_left, cr->nparts);
        atomic_store(&e->state, ENTRY_FILLING);
        *how = HOW_FILL;
        cs->ent[r * bs + i] = e;
    }
    atomic_fetch_add(&c->hits, hits);
    atomic_fetch_add(&c->misses, misses);
}

/* What sample `sample` of node j does in the slot's frame, and its entry. */
static int how_of(const sl_pipeline *p, const sl__slot *slot, int j, int sample, entry **e)
{
    const sl__cache *c = p->cache;
    int r = c->root_of[j];
    if (r < 0 || sample < 0 || sample >= p->opt.batch_size)
        return HOW_COMPUTE;
    size_t k = (size_t)r * (size_t)p->opt.batch_size + (size_t)sample;
    *e = slot->cache->ent[k];
    return slot->cache->how[k];
}

static sl_status read_blob(sl_ctx *ctx, const blob *b, void *dst)
{
    sl__cache *c = ctx->p->cache;
    if (b->mem) {
        memcpy(dst, b->mem, b->bytes);
        return SL_OK;
    }
    for (size_t done = 0; done < b->bytes;) {
        ssize_t got =
            pread(c->fd, (char *)dst + done, b->bytes - done, (off_t)(b->off + (int64_t)done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            char buf[128];
            return sl_fail(ctx, SL_EIO, "reading the sample cache file \"%s\": %s", c->path,
                           got < 0 ? strerror_r(errno, buf, sizeof buf)
                                   : "it is shorter than written");
        }
        done += (size_t)got;
    }
    return SL_OK;
}

static bool write_blob(sl__cache *c, blob *b, const void *src, size_t bytes)
{
    if (!reserve(c, bytes))
        return false;
    b->bytes = bytes;
    if (c->fd < 0) {
        if (!(b->mem = sl__malloc(bytes ? bytes : 1))) {
            atomic_fetch_sub(&c->bytes, (int64_t)bytes);
            b->bytes = 0;
            return false;
        }
        memcpy(b->mem, src, bytes);
        return true;
    }
    int64_t off = atomic_fetch_add(&c->file_end, (int64_t)bytes);
    for (size_t done = 0; done < bytes;) {
        ssize_t put =
            pwrite(c->fd, (const char *)src + done, bytes - done, (off_t)(off + (int64_t)done));
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0) { /* the file's space stays counted: file space is never reused */
            atomic_store(&c->full, true);
            return false;
        }
        done += (size_t)put;
    }
    b->off = off;
    return true;
}

/* Copies the cached outputs of sample `sample` of ctx's node out of entry e. */
static sl_status copy_in(sl_ctx *ctx, int sample, entry *e)
{
    sl__cache *c = ctx->p->cache;
    int j = ctx->sn->node, nout = ctx->pn->nout;
    const blob *b = part_blobs(c, e, j, nout);
    for (int o = 0; o < nout; o++) {
        if (!c->cached[c->out_base[j] + o])
            continue;
        size_t bytes = 0;
        sl_batch *out = &ctx->sn->wouts[o];
        if (!sl__batch_sample_bytes(out, sample, &bytes) || bytes != b[o].bytes)
            return sl_fail(ctx, SL_EINTERNAL,
                           "the sample cache holds %zu bytes for output %d, the sample has %zu",
                           b[o].bytes, o, bytes);
        if (out->sample_ptrs && b[o].mem) { /* fused: its consumer reads the cached bytes */
            out->sample_ptrs[sample] = b[o].mem;
            continue;
        }
        sl_status st = read_blob(ctx, &b[o], sl_ctx_output_data(ctx, o, sample));
        if (st != SL_OK)
            return st;
    }
    return SL_OK;
}

/* Stores node j's part of sample `sample` (its outputs' shapes, its cached outputs' bytes from
 * out_data(o)) into e; the last part makes the entry complete. */
static void store_part(sl_pipeline *p, sl__snode *sn, int sample, entry *e)
{
    sl__cache *c = p->cache;
    int j = sn->node, nout = p->plan->nodes[j].nout;
    int64_t *shapes = part_shapes(c, e, j);
    blob *b = part_blobs(c, e, j, nout);
    bool ok = !atomic_load(&e->broken);
    for (int o = 0; ok && o < nout; o++) {
        const sl_batch *out = &sn->outs[o];
        int64_t *s = shapes + (size_t)o * (SL_MAX_NDIM + 1);
        s[0] = out->ndim;
        memcpy(s + 1, sl_batch_shape(out, sample), sizeof(int64_t) * (size_t)out->ndim);
        if (!c->cached[c->out_base[j] + o])
            continue;
        size_t bytes = 0;
        const void *src = out->sample_ptrs ? out->sample_ptrs[sample]
                                           : (const void *)(out->data + out->offsets[sample]);
        ok = sl__batch_sample_bytes(out, sample, &bytes) && write_blob(c, &b[o], src, bytes);
    }
    if (!ok)
        atomic_store(&e->broken, true);
    atomic_fetch_sub_explicit(&e->parts_left, 1, memory_order_acq_rel);
}

sl_status sl__cache_run(sl_ctx *ctx, int sample, sl_status (*fn)(sl_ctx *, int), bool run)
{
    entry *e = NULL;
    int how = how_of(ctx->p, ctx->slot, ctx->sn->node, sample, &e);
    if (how == HOW_HIT)
        return run ? copy_in(ctx, sample, e) : SL_OK;
    sl_status st = fn(ctx, sample);
    if (st == SL_OK && run && how == HOW_FILL)
        store_part(ctx->p, ctx->sn, sample, e);
    return st;
}

static sl_ctx node_ctx(sl__snode *sn, int sample, int worker)
{
    return (sl_ctx){.p = sn->p,
                    .slot = sn->slot,
                    .sn = sn,
                    .pn = &sn->p->plan->nodes[sn->node],
                    .sample = sample,
                    .worker = worker};
}

/* Whether node j keeps the bytes of one of its outputs. */
static bool has_cached_output(const sl_pipeline *p, int j)
{
    for (int o = 0; o < p->plan->nodes[j].nout; o++) {
        if (p->cache->cached[p->cache->out_base[j] + o])
            return true;
    }
    return false;
}

bool sl__cache_roi(sl__snode *sn, int sample)
{
    entry *e = NULL;
    int how = how_of(sn->p, sn->slot, sn->node, sample, &e);
    if (how == HOW_HIT)
        return true;
    if (how == HOW_FILL && sn->roi_set && has_cached_output(sn->p, sn->node))
        sn->roi_set[sample] = false;
    return false;
}

bool sl__cache_chain(sl__snode *tail, int sample, int worker)
{
    entry *e = NULL;
    if (how_of(tail->p, tail->slot, tail->node, sample, &e) != HOW_HIT)
        return false;
    sl_ctx ctx = node_ctx(tail, sample, worker);
    int64_t t0 = sl__now_ns();
    copy_in(&ctx, sample, e); /* a failure is recorded in the frame */
    atomic_fetch_add_explicit(&tail->busy_ns, sl__now_ns() - t0, memory_order_relaxed);
    return true;
}

void sl__cache_shapes(sl__snode *sn, int worker)
{
    sl_pipeline *p = sn->p;
    sl__cache *c = p->cache;
    if (!c || c->root_of[sn->node] < 0 || atomic_load(&sn->slot->failed))
        return;
    int nout = p->plan->nodes[sn->node].nout;
    for (int i = 0, n = sn->slot->batch_size; i < n; i++) {
        entry *e = NULL;
        if (how_of(p, sn->slot, sn->node, i, &e) != HOW_HIT)
            continue;
        const int64_t *shapes = part_shapes(c, e, sn->node);
        for (int o = 0; o < nout; o++) {
            sl_batch *b = &sn->wouts[o];
            const int64_t *s = shapes + (size_t)o * (SL_MAX_NDIM + 1);
            if (b->size != n || s[0] != b->ndim) {
                sl_ctx ctx = node_ctx(sn, i, worker);
                sl_fail(&ctx, SL_EINTERNAL,
                        "output %d has %d dimensions, the sample cache holds %lld for it", o,
                        b->ndim, (long long)s[0]);
                return;
            }
            memcpy(sl__batch_shape_mut(b, i), s + 1, sizeof(int64_t) * (size_t)b->ndim);
        }
    }
}

void sl__cache_frame_done_locked(sl_pipeline *p, sl__slot *slot)
{
    SL__ASSERT_LOCKED(p);
    sl__cache *c = p->cache;
    if (!c)
        return;
    int bs = p->opt.batch_size;
    for (int r = 0; r < c->nroots; r++) {
        for (int i = 0; i < bs; i++) {
            size_t k = (size_t)r * (size_t)bs + (size_t)i;
            entry *e = slot->cache->ent[k];
            if (slot->cache->how[k] == HOW_FILL) {
                if (atomic_load(&e->parts_left) == 0 && !atomic_load(&e->broken)) {
                    atomic_store_explicit(&e->state, ENTRY_READY, memory_order_release);
                    atomic_fetch_add(&c->entries, 1);
                } else {
                    free_blobs(c, p, r, e);
                    atomic_store(&e->state, ENTRY_EMPTY);
                }
            }
            slot->cache->how[k] = HOW_COMPUTE;
            slot->cache->ent[k] = NULL;
        }
    }
}

sl_status sl_pipeline_cache_stats(const sl_pipeline *p, sl_cache_stats *s)
{
    if (!p || !s || !p->built)
        return sl__last_error_set(SL_EMISUSE, "sl_pipeline_cache_stats: %s",
                                  !s ? "stats is NULL" : "pipeline is NULL or not built");
    memset(s, 0, sizeof *s);
    s->capacity = p->opt.cache_bytes > 0 ? p->opt.cache_bytes : 0;
    const sl__cache *c = p->cache;
    if (!c)
        return SL_OK;
    s->nodes = c->nodes;
    s->hits = atomic_load(&((sl__cache *)c)->hits);
    s->misses = atomic_load(&((sl__cache *)c)->misses);
    s->entries = atomic_load(&((sl__cache *)c)->entries);
    s->bytes = atomic_load(&((sl__cache *)c)->bytes);
    s->full = atomic_load(&((sl__cache *)c)->full);
    return SL_OK;
}
