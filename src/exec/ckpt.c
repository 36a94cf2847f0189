/* src/exec/ckpt.c: checkpoints — the pipeline's state after the iterations its consumer took,
 * as JSON text, and a pipeline restored from one (DESIGN.md, Executor semantics: Checkpoint).
 *
 * Exports sl_pipeline_checkpoint and the executor's hooks (exec.h): sl__ckpt_parse (create),
 * sl__ckpt_snapshot (a stateful node's setup task), sl__ckpt_restore (build).
 *
 * The state of a pipeline between iterations is small: the next iteration's number (random
 * operators draw from streams counted by (node seed, iteration, sample), so it is their whole
 * state), the bad-sample count, and each stateful node's own values (readers: epoch and
 * position). Iterations run ahead of the consumer, so a node's state now is that of a later
 * iteration: with enable_checkpointing, the setup task of each iteration of a node with a
 * `checkpoint` function first records the node's state in the iteration's slot, and a
 * checkpoint takes, for the next iteration the consumer has not taken (next_share), the
 * values its slot recorded — or, when that iteration's setup has not begun yet, the node's
 * state as it is now (every earlier setup of the node is over: it ran in order, and its
 * iteration was delivered). `ckpt_mu` orders the two: a setup records (under it) before it
 * changes anything. Prefetched, unconsumed iterations are thus not counted: a restored
 * pipeline runs them again, byte for byte.
 *
 * A checkpoint is bound to its pipeline: a hash of the graph (operators, arguments, node
 * names), the batch size, the seed, and each reader's sharding and data set size; restoring
 * into a pipeline where any differs fails at create (seed) or build (the rest), saying which.
 */
#include <assert.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "exec/exec.h"

#define CKPT_VERSION 1

/* ---- create: reading the text ------------------------------------------------------------- */

/* Integer member `key` of obj into *v; false when missing or not an integer. */
static bool get_int(const json_t *obj, const char *key, int64_t *v)
{
    const json_t *j = json_object_get(obj, key);
    if (!json_is_integer(j))
        return false;
    *v = (int64_t)json_integer_value(j);
    return true;
}

sl_status sl__ckpt_parse(sl_pipeline *p, const char *text)
{
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    if (!root)
        return sl__last_error_set(SL_EINVAL, "checkpoint: not valid JSON (line %d, column %d): %s",
                                  je.line, je.column, je.text);
    int64_t version = 0, seed = 0, v = 0;
    const json_t *nodes = json_object_get(root, "nodes");
    if (!json_is_object(root) || !get_int(root, "sluice_checkpoint", &version))
        goto not_ours;
    if (version != CKPT_VERSION) {
        json_decref(root);
        return sl__last_error_set(SL_EINVAL,
                                  "checkpoint: format version %lld, this sluice reads version %d",
                                  (long long)version, CKPT_VERSION);
    }
    if (!get_int(root, "seed", &seed) || !get_int(root, "iteration", &v) || v < 0 ||
        !get_int(root, "batch_size", &v) || !get_int(root, "bad_samples", &v) ||
        !json_is_string(json_object_get(root, "graph")) || !json_is_array(nodes))
        goto not_ours;
    if (p->opt.seed >= 0 && p->opt.seed != seed) {
        json_decref(root);
        return sl__last_error_set(SL_EINVAL,
                                  "checkpoint: it was made by a pipeline with seed %lld, this "
                                  "pipeline has seed %lld (leave the seed out to take the "
                                  "checkpoint's)",
                                  (long long)seed, (long long)p->opt.seed);
    }
    p->opt.seed = seed;
    p->ckpt_restore = root;
    return SL_OK;
not_ours:
    json_decref(root);
    return sl__last_error_set(SL_EINVAL,
                              "checkpoint: not a sluice pipeline checkpoint (it needs "
                              "\"sluice_checkpoint\", \"graph\", \"seed\", \"batch_size\", "
                              "\"iteration\", \"bad_samples\" and \"nodes\")");
}

void sl__ckpt_fini(sl_pipeline *p)
{
    json_decref(p->ckpt_restore);
    p->ckpt_restore = NULL;
    for (int s = 0; p->slots && p->plan && s < p->depth; s++) {
        for (int j = 0; p->slots[s].nodes && j < p->plan->n; j++)
            sl__free(p->slots[s].nodes[j].ckpt);
    }
}

/* ---- build: what binds a checkpoint to its pipeline --------------------------------------- */

/* FNV-1a, 64 bits, of the graph's JSON text: the same graph gives the same text (spec.c). */
static sl_status graph_hash(sl_pipeline *p, char out[17])
{
    char *json = NULL;
    if (sl_graph_to_json(p->graph, &json) != SL_OK)
        return sl__pipeline_fail(p, SL_ENOMEM, "checkpoint: out of memory");
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *c = (const unsigned char *)json; *c; c++)
        h = (h ^ *c) * 0x100000001b3ULL;
    free(json);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
    return SL_OK;
}

sl_status sl__ckpt_build(sl_pipeline *p)
{
    if (!p->opt.enable_checkpointing && !p->ckpt_restore)
        return SL_OK;
    sl_status st = graph_hash(p, p->ckpt_graph);
    if (st == SL_OK && p->ckpt_restore)
        st = sl__ckpt_restore(p);
    return st;
}

/* The node's reader metadata into *m; false for a node that is not a reader. */
static bool node_meta(const sl_pipeline *p, int j, sl_reader_meta *m)
{
    const sl_op_def *op = p->plan->nodes[j].op;
    if (!op->reader_meta || !p->states[j])
        return false;
    memset(m, 0, sizeof *m);
    op->reader_meta(p->states[j], m);
    return true;
}

/* The checkpoint's entry for node `name`, NULL when it has none. */
static const json_t *find_entry(const json_t *nodes, const char *name)
{
    for (size_t k = 0; k < json_array_size(nodes); k++) {
        const json_t *e = json_array_get(nodes, k);
        const json_t *n = json_object_get(e, "name");
        if (json_is_string(n) && strcmp(json_string_value(n), name) == 0)
            return e;
    }
    return NULL;
}

/* Checks that reader j reads what the checkpoint's entry e says it read. */
static sl_status check_reader(sl_pipeline *p, int j, const json_t *e)
{
    sl_reader_meta m;
    int64_t shard = -1, shards = -1, size = -1;
    if (!node_meta(p, j, &m))
        return SL_OK;
    get_int(e, "shard_id", &shard);
    get_int(e, "num_shards", &shards);
    get_int(e, "epoch_size", &size);
    if (shard == m.shard_id && shards == m.number_of_shards && size == m.epoch_size)
        return SL_OK;
    return sl__pipeline_fail(
        p, SL_EINVAL,
        "checkpoint: reader \"%s\" was at shard %lld of %lld of a data set of %lld "
        "samples; in this pipeline it reads shard %d of %d of %lld samples (a "
        "checkpoint restores the same rank of the same job on the same data)",
        p->plan->nodes[j].name, (long long)shard, (long long)shards, (long long)size, m.shard_id,
        m.number_of_shards, (long long)m.epoch_size);
}

/* Restores node j from its entry e (every stateful node with a restore function has one). */
static sl_status restore_node(sl_pipeline *p, int j, const json_t *e, int64_t it)
{
    const sl__pnode *pn = &p->plan->nodes[j];
    const json_t *op = json_object_get(e, "op"), *vals = json_object_get(e, "state");
    if (!json_is_string(op) || strcmp(json_string_value(op), pn->op->name) != 0)
        return sl__pipeline_fail(
            p, SL_EINVAL, "checkpoint: node \"%s\" is a %s here, a %s in the checkpoint", pn->name,
            pn->op->name, json_is_string(op) ? json_string_value(op) : "?");
    if (!json_is_array(vals) || json_array_size(vals) > 1 << 20)
        return sl__pipeline_fail(p, SL_EINVAL,
                                 "checkpoint: node \"%s\": \"state\" must be an array of integers",
                                 pn->name);
    sl_status st = check_reader(p, j, e);
    if (st != SL_OK)
        return st;
    int n = (int)json_array_size(vals);
    int64_t *v = sl__calloc((size_t)(n ? n : 1), sizeof *v);
    if (!v)
        return sl__pipeline_fail(p, SL_ENOMEM, "checkpoint: out of memory");
    for (int k = 0; k < n && st == SL_OK; k++) {
        const json_t *x = json_array_get(vals, (size_t)k);
        if (!json_is_integer(x))
            st = sl__pipeline_fail(p, SL_EINVAL,
                                   "checkpoint: node \"%s\": \"state\" must be an array of "
                                   "integers",
                                   pn->name);
        else
            v[k] = (int64_t)json_integer_value(x);
    }
    char err[256] = "";
    if (st == SL_OK && pn->op->restore(p->states[j], it, v, n, err, sizeof err) != SL_OK)
        st = sl__pipeline_fail(p, SL_EINVAL,
                               "checkpoint: node \"%s\" (%s) cannot take its saved state: %s",
                               pn->name, pn->op->name, err);
    sl__free(v);
    return st;
}

sl_status sl__ckpt_restore(sl_pipeline *p)
{
    const json_t *root = p->ckpt_restore, *nodes = json_object_get(root, "nodes");
    int64_t it = 0, bs = 0, bad = 0;
    get_int(root, "iteration", &it);
    get_int(root, "batch_size", &bs);
    get_int(root, "bad_samples", &bad);
    if (strcmp(json_string_value(json_object_get(root, "graph")), p->ckpt_graph) != 0)
        return sl__pipeline_fail(
            p, SL_EINVAL,
            "checkpoint: it was made by a different pipeline: the graphs differ "
            "(operators, arguments or node names; graph %s in the checkpoint, %s here)",
            json_string_value(json_object_get(root, "graph")), p->ckpt_graph);
    if (bs != p->opt.batch_size)
        return sl__pipeline_fail(
            p, SL_EINVAL,
            "checkpoint: it was made by a pipeline with batch_size %lld, this pipeline "
            "has batch_size %d",
            (long long)bs, p->opt.batch_size);
    for (size_t k = 0; k < json_array_size(nodes); k++) {
        const json_t *n = json_object_get(json_array_get(nodes, k), "name");
        int j = 0;
        while (j < p->plan->n &&
               !(json_is_string(n) && strcmp(p->plan->nodes[j].name, json_string_value(n)) == 0))
            j++;
        if (j == p->plan->n || !p->plan->nodes[j].op->restore)
            return sl__pipeline_fail(
                p, SL_EINVAL,
                "checkpoint: it saves the state of node \"%s\", which this pipeline "
                "has no stateful node of that name for",
                json_is_string(n) ? json_string_value(n) : "?");
    }
    for (int j = 0; j < p->plan->n; j++) {
        const sl__pnode *pn = &p->plan->nodes[j];
        if (!pn->op->restore)
            continue;
        const json_t *e = find_entry(nodes, pn->name);
        if (!e)
            return sl__pipeline_fail(p, SL_EINVAL,
                                     "checkpoint: it has no state for node \"%s\" (%s)", pn->name,
                                     pn->op->name);
        sl_status st = restore_node(p, j, e, it);
        if (st != SL_OK)
            return st;
    }
    /* every counter keyed by the iteration starts at `it`, as if `it` iterations had run
     * (nothing is scheduled yet: the lock only keeps the (mu) fields' rule) */
    sl__exec_lock(p);
    p->scheduled = p->started = p->next_share = it;
    p->runs = it; /* the next schedule_run asks for runs - 1 + depth: it + depth, as a first */
    for (int j = 0; j < p->plan->n; j++) {
        p->stateful_next[j] = it;
        p->istores[j].next = it;
    }
    p->gset_next = it;
    p->bad_total = bad;
    sl__exec_unlock(p);
    json_decref(p->ckpt_restore);
    p->ckpt_restore = NULL;
    return SL_OK;
}

/* ---- run: recording each iteration's starting state ---------------------------------------- */

/* Writes node j's state now into *vals (grown as needed, *cap entries); returns the count, or
 * -1 with why in err. */
static int save_node(sl_pipeline *p, int j, int64_t **vals, int *cap, char *err, size_t errlen)
{
    const sl_op_def *op = p->plan->nodes[j].op;
    for (;;) {
        int n = op->checkpoint(p->states[j], *vals, *cap, err, errlen);
        if (n <= *cap)
            return n;
        int64_t *grown = sl__realloc(*vals, (size_t)n * sizeof **vals);
        if (!grown) {
            snprintf(err, errlen, "out of memory for its state (%d values)", n);
            return -1;
        }
        *vals = grown;
        *cap = n;
    }
}

void sl__ckpt_snapshot(sl__snode *sn)
{
    sl_pipeline *p = sn->p;
    pthread_mutex_lock(&p->ckpt_mu);
    sn->ckpt_n =
        save_node(p, sn->node, &sn->ckpt, &sn->ckpt_cap, sn->ckpt_err, sizeof sn->ckpt_err);
    sn->ckpt_iter = sn->slot->iteration;
    pthread_mutex_unlock(&p->ckpt_mu);
}

/* ---- the public call ------------------------------------------------------------------------ */

/* The checkpoint's entry for node j at iteration it (needs mu and ckpt_mu), or NULL with the
 * error recorded. */
static json_t *node_entry_locked(sl_pipeline *p, int j, int64_t it)
{
    const sl__pnode *pn = &p->plan->nodes[j];
    sl__snode *sn = &p->slots[it % p->depth].nodes[j];
    char err[256] = "";
    int64_t *vals = NULL;
    int n, cap = 0;
    bool own = sn->ckpt_iter != it; /* its setup for `it` has not begun: its state now */
    if (own)
        n = save_node(p, j, &vals, &cap, err, sizeof err);
    else
        n = sn->ckpt_n, vals = sn->ckpt, snprintf(err, sizeof err, "%s", sn->ckpt_err);
    json_t *e = NULL, *a = n >= 0 ? json_array() : NULL;
    for (int k = 0; a && k < n; k++)
        json_array_append_new(a, json_integer(vals[k]));
    if (own)
        sl__free(vals);
    if (n < 0) {
        sl__pipeline_fail(p, SL_EUNSUPPORTED,
                          "checkpoint: node \"%s\" (%s) cannot be checkpointed: %s", pn->name,
                          pn->op->name, err);
        return NULL;
    }
    e = json_pack("{s:s, s:s, s:o}", "name", pn->name, "op", pn->op->name, "state", a);
    sl_reader_meta m;
    if (e && node_meta(p, j, &m)) {
        json_object_set_new(e, "shard_id", json_integer(m.shard_id));
        json_object_set_new(e, "num_shards", json_integer(m.number_of_shards));
        json_object_set_new(e, "epoch_size", json_integer(m.epoch_size));
    }
    if (!e)
        sl__pipeline_fail(p, SL_ENOMEM, "checkpoint: out of memory");
    return e;
}

/* The checkpoint as a JSON object (needs mu), or NULL with the error recorded. */
static json_t *make_checkpoint_locked(sl_pipeline *p)
{
    SL__ASSERT_LOCKED(p);
    int64_t it = p->next_share;
    json_t *nodes = json_array();
    json_t *root =
        json_pack("{s:i, s:s, s:I, s:i, s:I, s:I}", "sluice_checkpoint", CKPT_VERSION, "graph",
                  p->ckpt_graph, "seed", (json_int_t)p->opt.seed, "batch_size", p->opt.batch_size,
                  "iteration", (json_int_t)it, "bad_samples", (json_int_t)p->bad_total);
    if (!root || !nodes || json_object_set(root, "nodes", nodes) != 0) {
        json_decref(nodes);
        json_decref(root);
        sl__pipeline_fail(p, SL_ENOMEM, "checkpoint: out of memory");
        return NULL;
    }
    pthread_mutex_lock(&p->ckpt_mu);
    bool ok = true;
    for (int j = 0; ok && j < p->plan->n; j++) {
        const sl_op_def *op = p->plan->nodes[j].op;
        if (!op->restore)
            continue;
        json_t *e = op->checkpoint ? node_entry_locked(p, j, it)
                                   : json_pack("{s:s, s:s, s:[]}", "name", p->plan->nodes[j].name,
                                               "op", op->name, "state");
        ok = e && json_array_append_new(nodes, e) == 0;
        if (!e && ok)
            sl__pipeline_fail(p, SL_ENOMEM, "checkpoint: out of memory");
    }
    pthread_mutex_unlock(&p->ckpt_mu);
    json_decref(nodes);
    if (!ok) {
        json_decref(root);
        return NULL;
    }
    return root;
}

sl_status sl_pipeline_checkpoint(sl_pipeline *p, char **out, size_t *len)
{
    if (!p || !out)
        return sl__last_error_set(SL_EMISUSE, "sl_pipeline_checkpoint: pipeline or out is NULL");
    *out = NULL;
    if (len)
        *len = 0;
    sl__error_clear(&p->error);
    if (!p->opt.enable_checkpointing)
        return sl__pipeline_fail(
            p, SL_EMISUSE,
            "checkpoint: checkpointing is not enabled for this pipeline (create it with "
            "enable_checkpointing)");
    sl_status st = p->built ? SL_OK : sl_pipeline_build(p);
    if (st != SL_OK)
        return st;
    sl__exec_lock(p);
    json_t *root = make_checkpoint_locked(p);
    sl__exec_unlock(p);
    if (!root)
        return p->error.code;
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!text)
        return sl__pipeline_fail(p, SL_ENOMEM, "checkpoint: out of memory");
    *out = text;
    if (len)
        *len = strlen(text);
    return SL_OK;
}

void sl_checkpoint_free(char *text)
{
    free(text);
}
