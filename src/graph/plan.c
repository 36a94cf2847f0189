/* src/graph/plan.c: building a graph into a plan — validate, prune, order, place.
 *
 * Exports sl__plan_build / sl__plan_destroy. Every check names the node and the problem:
 * unknown operator, device the operator or the build does not support, wrong number of
 * inputs, an input or argument input that refers to nothing, unknown argument, wrong argument
 * type or value, missing required argument, argument input from a non-CPU node, cycle.
 * Placement (place.c's rule) runs in topological order once the graph is known to be acyclic:
 * a node without a device takes the one its inputs imply, its producers being placed first.
 * Invariant of the result: nodes are in topological order (producers before consumers; ties in
 * the order they were added), and every node reaches an output or has side effects/preserve.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"

typedef struct build {
    const sl_graph *g;
    const sl_pipeline_options *o;
    const sl_op_def **ops; /* per graph node */
    sl__stage *stages;     /* per graph node, once placed */
    sl__placement *placed; /* per graph node, once placed */
    sl__parg **pargs;      /* per graph node, its checked arguments (gplan's) */
    sl__error *err;
} build;

static sl_status fail(build *b, int node, sl_status code, const char *fmt, ...) SL_PRINTF(4, 5);
static sl_status fail(build *b, int node, sl_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const sl__gnode *n = node >= 0 ? &b->g->nodes[node] : NULL;
    sl__error_setv(b->err, code, n ? n->op : NULL, n ? n->name : NULL, -1, -1, NULL, fmt, ap);
    va_end(ap);
    return code;
}

/* Places node i from its regular inputs' producers, already placed (topological order). */
static void place(build *b, int i, const sl__ref *refs, sl__stage *scratch)
{
    const sl__gnode *n = &b->g->nodes[i];
    for (int k = 0; k < n->ninputs; k++)
        scratch[k] = b->stages[refs[k].node];
    bool ok = sl__stage_place(n->device, scratch, n->ninputs, &b->placed[i]);
    assert(ok); /* check_node has parsed the device */
    (void)ok;
    b->stages[i] = b->placed[i].stage;
}

/* Checks that the operator and this build support where node i was placed. */
static sl_status check_device(build *b, int i, const sl__ref *refs)
{
    const sl__placement *pl = &b->placed[i];
    const char *from = pl->from >= 0 ? b->g->nodes[refs[pl->from].node].name : NULL;
    char why[512];
    if (sl__stage_check(b->ops[i], pl, from, why, sizeof why) != SL_OK)
        return fail(b, i, SL_EUNSUPPORTED, "%s", why);
    /* A node placed off the cpu by its inputs never gets here in a CPU-only pipeline: the
     * mixed or gpu node above it, given its device, is checked first and fails. */
    if (pl->stage != SL__STAGE_CPU && b->o->device_id < 0)
        return fail(b, i, SL_EUNSUPPORTED, "device \"%s\" in a CPU-only pipeline (device_id is -1)",
                    sl__stage_name(pl->stage));
    return SL_OK;
}

/* Data flows cpu -> mixed -> gpu: cpu and mixed nodes read CPU data, gpu nodes GPU data. */
static sl_status check_input_stages(build *b, int i, const sl__ref *refs)
{
    const sl__gnode *n = &b->g->nodes[i];
    for (int k = 0; k < n->ninputs; k++) {
        sl__stage from = b->stages[refs[k].node];
        const char *pname = b->g->nodes[refs[k].node].name;
        const sl__placement *pl = &b->placed[i];
        if (b->stages[i] == SL__STAGE_GPU && from == SL__STAGE_CPU && pl->from >= 0)
            return fail(b, i, SL_EINVAL,
                        "input %d comes from CPU node \"%s\"; a gpu operator reads GPU data "
                        "(no device was given, and input %d is GPU data): move it with .gpu() "
                        "or run the producer on a mixed or gpu device",
                        k, pname, pl->from);
        if (b->stages[i] == SL__STAGE_GPU && from == SL__STAGE_CPU)
            return fail(b, i, SL_EINVAL,
                        "input %d comes from CPU node \"%s\"; a gpu operator reads GPU data: "
                        "move it with .gpu() or run the producer on a mixed or gpu device",
                        k, pname);
        if (b->stages[i] == SL__STAGE_CPU && from != SL__STAGE_CPU &&
            (b->ops[i]->flags & (SL_OP_TRANSFER | SL_OP_METADATA)))
            continue; /* the way back to the host (DataNode.cpu()), or shapes only */
        if (b->stages[i] != SL__STAGE_GPU && from != SL__STAGE_CPU)
            return fail(b, i, SL_EINVAL,
                        "input %d comes from node \"%s\" on %s; a %s operator reads CPU data "
                        "(move it back with .cpu() first)",
                        k, pname, sl__stage_name(from), sl__stage_name(b->stages[i]));
    }
    return SL_OK;
}

/* Resolves "node[:k]" used by node i (what: "input 2", "argument input \"mirror\""). */
static sl_status resolve(build *b, int i, const char *ref, const char *what, sl__ref *out)
{
    if (!sl__graph_parse_ref(b->g, ref, &out->node, &out->out))
        return fail(b, i, SL_EINVAL, "%s: malformed reference \"%s\" (expected node or node:k)",
                    what, ref);
    if (out->node < 0)
        return fail(b, i, SL_ENOTFOUND, "%s refers to unknown node \"%s\"", what, ref);
    int nout = sl__node_num_outputs(b->ops[out->node], b->pargs[out->node],
                                    b->g->nodes[out->node].ninputs);
    if (out->out >= nout)
        return fail(b, i, SL_EINVAL, "%s refers to output %d of node \"%s\", which has %d", what,
                    out->out, b->g->nodes[out->node].name, nout);
    return SL_OK;
}

/* Resolves node i's input references (their count was checked by sl__node_check). */
static sl_status check_inputs(build *b, int i, sl__ref *refs)
{
    const sl__gnode *n = &b->g->nodes[i];
    for (int k = 0; k < n->ninputs; k++) {
        char what[32];
        snprintf(what, sizeof what, "input %d", k);
        sl_status st = resolve(b, i, n->inputs[k], what, &refs[k]);
        if (st != SL_OK)
            return st;
    }
    return SL_OK;
}

/* Argument inputs are CPU data, whatever the node's device (placed nodes). */
static sl_status check_arg_stages(build *b, int i, const sl__parg *pargs)
{
    const sl_op_def *op = b->ops[i];
    for (int a = 0; a < sl_op_num_args(op); a++) {
        int p = pargs[a].input.node;
        if (p >= 0 && b->stages[p] != SL__STAGE_CPU)
            return fail(b, i, SL_EINVAL,
                        "argument input \"%s\" comes from node \"%s\" on %s; argument inputs "
                        "must come from CPU nodes",
                        sl_op_arg(op, a)->name, b->g->nodes[p].name, sl__stage_name(b->stages[p]));
    }
    return SL_OK;
}

/* Resolves node i's argument inputs (sl__node_check filled the rest of its plan arguments). */
static sl_status check_args(build *b, int i, sl__parg *pargs)
{
    const sl__gnode *n = &b->g->nodes[i];
    for (int k = 0; k < n->nargs; k++) {
        const sl__garg *ga = &n->args[k];
        if (!ga->source)
            continue;
        int a = sl__op_arg_resolve(b->ops[i], ga->name, NULL); /* checked: known */
        if (a == SL__ARG_IGNORED)
            continue; /* a deprecated argument sluice has no use for (DALI ignores it too) */
        char what[128];
        snprintf(what, sizeof what, "argument input \"%s\"", ga->name);
        sl_status st = resolve(b, i, ga->source, what, &pargs[a].input);
        if (st != SL_OK)
            return st;
    }
    return SL_OK;
}

/* ---- pruning and ordering -------------------------------------------------------------- */

typedef struct gplan {
    sl__ref *like;    /* per graph node: its batch_like (node -1: none) */
    sl__ref **inputs; /* per graph node */
    sl__parg **args;  /* per graph node */
    bool *keep;
    int *order; /* graph node indices in topological order */
    int norder;
} gplan;

static void mark(const build *b, const gplan *gp, int i)
{
    if (gp->keep[i])
        return;
    gp->keep[i] = true;
    for (int k = 0; k < b->g->nodes[i].ninputs; k++)
        mark(b, gp, gp->inputs[i][k].node);
    for (int a = 0; a < sl_op_num_args(b->ops[i]); a++) {
        if (gp->args[i][a].input.node >= 0)
            mark(b, gp, gp->args[i][a].input.node);
    }
    if (gp->like[i].node >= 0)
        mark(b, gp, gp->like[i].node);
}

/* Producers of graph node i, in input order then argument order (may repeat). */
static int producers(const build *b, const gplan *gp, int i, int *out)
{
    int n = 0;
    for (int k = 0; k < b->g->nodes[i].ninputs; k++)
        out[n++] = gp->inputs[i][k].node;
    for (int a = 0; a < sl_op_num_args(b->ops[i]); a++) {
        if (gp->args[i][a].input.node >= 0)
            out[n++] = gp->args[i][a].input.node;
    }
    if (gp->like[i].node >= 0)
        out[n++] = gp->like[i].node;
    return n;
}

static int max_producers(const build *b, int i)
{
    return b->g->nodes[i].ninputs + sl_op_num_args(b->ops[i]) + 1;
}

/* Kahn's algorithm over all nodes; smallest ready index first, so the order is stable. */
static sl_status toposort(build *b, gplan *gp)
{
    int n = b->g->n;
    int *indeg = sl__calloc((size_t)n, sizeof(int));
    bool *done = sl__calloc((size_t)n, sizeof(bool));
    int maxp = 1;
    for (int i = 0; i < n; i++)
        maxp = max_producers(b, i) > maxp ? max_producers(b, i) : maxp;
    int *prod = sl__malloc(sizeof(int) * (size_t)maxp);
    sl_status st = (indeg && done && prod) ? SL_OK : SL_ENOMEM;
    for (int i = 0; st == SL_OK && i < n; i++)
        indeg[i] = producers(b, gp, i, prod);
    for (int step = 0; st == SL_OK && step < n; step++) {
        int next = -1;
        for (int i = 0; i < n && next < 0; i++)
            if (!done[i] && indeg[i] == 0)
                next = i;
        if (next < 0) {
            int first = 0;
            while (done[first])
                first++;
            st = fail(b, first, SL_EINVAL, "the graph has a cycle through this node");
            break;
        }
        done[next] = true;
        gp->order[gp->norder++] = next;
        for (int j = 0; j < n; j++) {
            int np = done[j] ? 0 : producers(b, gp, j, prod);
            for (int k = 0; k < np; k++)
                indeg[j] -= prod[k] == next;
        }
    }
    sl__free(prod);
    sl__free(done);
    sl__free(indeg);
    return st == SL_ENOMEM ? fail(b, -1, st, "out of memory") : st;
}

/* ---- assembling the plan --------------------------------------------------------------- */

static bool preserved(const build *b, const gplan *gp, int i)
{
    int a = sl_op_arg_index(b->ops[i], "preserve");
    return (b->ops[i]->flags & SL_OP_SIDE_EFFECTS) || (a >= 0 && gp->args[i][a].value.b);
}

static uint64_t node_seed(const build *b, const gplan *gp, int i)
{
    int a = sl_op_arg_index(b->ops[i], "seed");
    if (a >= 0 && gp->args[i][a].user_set && gp->args[i][a].input.node < 0 &&
        gp->args[i][a].value.i != -1)
        return (uint64_t)gp->args[i][a].value.i;
    assert(b->o->seed >= 0); /* sl_pipeline_create replaced a negative seed with a fresh one */
    uint64_t pipeline_seed = (uint64_t)b->o->seed;
    return sl__mix64(sl__mix64(pipeline_seed) ^ sl__hash_str(b->g->nodes[i].name));
}

/* Adds j to the successor list of node p if not there yet. */
static sl_status add_succ(sl__pnode *p, int j)
{
    for (int k = 0; k < p->nsucc; k++)
        if (p->succ[k] == j)
            return SL_OK;
    int *s = sl__realloc(p->succ, sizeof(int) * (size_t)(p->nsucc + 1));
    if (!s)
        return SL_ENOMEM;
    p->succ = s;
    p->succ[p->nsucc++] = j;
    return SL_OK;
}

/* Makes node j wait for node p (a producer it reads, or one it depends on otherwise). */
static sl_status add_edge(sl__plan *plan, int p, int j)
{
    int before = plan->nodes[p].nsucc;
    if (add_succ(&plan->nodes[p], j) != SL_OK)
        return SL_ENOMEM;
    plan->nodes[j].npred += plan->nodes[p].nsucc > before;
    return SL_OK;
}

static sl_status link_node(sl__plan *plan, int j, const int *remap)
{
    sl__pnode *pn = &plan->nodes[j];
    for (int k = 0; k < pn->ninputs; k++)
        pn->inputs[k].node = remap[pn->inputs[k].node];
    for (int a = 0; a < pn->nargs; a++)
        if (pn->args[a].input.node >= 0)
            pn->args[a].input.node = remap[pn->args[a].input.node];
    if (pn->batch_like.node >= 0) {
        pn->batch_like.node = remap[pn->batch_like.node];
        if (add_edge(plan, pn->batch_like.node, j) != SL_OK)
            return SL_ENOMEM;
    }
    for (int k = 0; k < pn->ninputs + pn->nargs; k++) {
        int p = k < pn->ninputs ? pn->inputs[k].node : pn->args[k - pn->ninputs].input.node;
        if (p < 0)
            continue;
        int before = plan->nodes[p].nsucc;
        if (add_succ(&plan->nodes[p], j) != SL_OK)
            return SL_ENOMEM;
        pn->npred += plan->nodes[p].nsucc > before;
    }
    return SL_OK;
}

/* Moves the kept nodes into the plan in topological order. */
static sl_status assemble(build *b, gplan *gp, sl__plan *plan, int *remap)
{
    for (int k = 0; k < gp->norder; k++) {
        int i = gp->order[k];
        if (!gp->keep[i])
            continue;
        sl__pnode *pn = &plan->nodes[plan->n];
        remap[i] = plan->n++;
        pn->op = b->ops[i];
        pn->stage = b->stages[i];
        pn->to_host = pn->stage == SL__STAGE_CPU && (pn->op->flags & SL_OP_TRANSFER) &&
                      gp->inputs[i] && b->g->nodes[i].ninputs == 1 &&
                      b->stages[gp->inputs[i][0].node] != SL__STAGE_CPU;
        pn->name = sl__strdup(b->g->nodes[i].name);
        pn->seed = node_seed(b, gp, i); /* before the arguments move into the plan */
        pn->ninputs = b->g->nodes[i].ninputs;
        pn->nout = sl__node_num_outputs(b->ops[i], gp->args[i], b->g->nodes[i].ninputs);
        pn->inputs = gp->inputs[i];
        gp->inputs[i] = NULL;
        pn->nargs = sl_op_num_args(b->ops[i]);
        pn->batch_like = gp->like[i];
        pn->branch[0] = pn->branch[1] = -1;
        pn->args = gp->args[i];
        gp->args[i] = NULL;
        if (!pn->name)
            return fail(b, i, SL_ENOMEM, "out of memory");
    }
    for (int j = 0; j < plan->n; j++) {
        if (link_node(plan, j, remap) != SL_OK)
            return fail(b, -1, SL_ENOMEM, "out of memory");
    }
    for (int k = 0; k < plan->noutputs; k++)
        plan->outputs[k].node = remap[plan->outputs[k].node];
    return SL_OK;
}

static sl_status check_node(build *b, gplan *gp, int i)
{
    const sl__gnode *n = &b->g->nodes[i];
    b->ops[i] = sl_registry_find(n->op);
    if (!b->ops[i])
        return fail(b, i, SL_ENOTFOUND, "unknown operator \"%s\"", n->op);
    gp->inputs[i] = sl__calloc((size_t)(n->ninputs ? n->ninputs : 1), sizeof(sl__ref));
    gp->args[i] = sl__calloc((size_t)sl_op_num_args(b->ops[i]), sizeof(sl__parg));
    if (!gp->inputs[i] || !gp->args[i])
        return fail(b, i, SL_ENOMEM, "out of memory");
    return sl__node_check(n, b->ops[i], gp->args[i], b->err, NULL);
}

static sl_status check_outputs(build *b, sl__plan *plan)
{
    if (b->g->noutputs == 0)
        return fail(b, -1, SL_EINVAL, "the pipeline has no outputs");
    for (int k = 0; k < b->g->noutputs; k++) {
        sl__ref *r = &plan->outputs[k];
        if (!sl__graph_parse_ref(b->g, b->g->outputs[k], &r->node, &r->out) || r->node < 0)
            return fail(b, -1, SL_ENOTFOUND, "pipeline output %d refers to unknown node \"%s\"", k,
                        b->g->outputs[k]);
        int nout =
            sl__node_num_outputs(b->ops[r->node], b->pargs[r->node], b->g->nodes[r->node].ninputs);
        if (r->out >= nout)
            return fail(b, r->node, SL_EINVAL,
                        "pipeline output %d asks for output %d; the node has %d", k, r->out, nout);
    }
    return SL_OK;
}

/* Places every node, producers first, then checks the placements in that order, so that a
 * node placed on gpu because of a producer that cannot run is not reported before it. */
static sl_status place_all(build *b, gplan *gp)
{
    int maxin = 1;
    for (int i = 0; i < b->g->n; i++)
        maxin = b->g->nodes[i].ninputs > maxin ? b->g->nodes[i].ninputs : maxin;
    sl__stage *scratch = sl__malloc(sizeof(sl__stage) * (size_t)maxin);
    if (!scratch)
        return fail(b, -1, SL_ENOMEM, "out of memory");
    for (int k = 0; k < gp->norder; k++)
        place(b, gp->order[k], gp->inputs[gp->order[k]], scratch);
    sl__free(scratch);
    sl_status st = SL_OK;
    for (int k = 0; st == SL_OK && k < gp->norder; k++)
        st = check_arg_stages(b, gp->order[k], gp->args[gp->order[k]]);
    for (int k = 0; st == SL_OK && k < gp->norder; k++)
        st = check_device(b, gp->order[k], gp->inputs[gp->order[k]]);
    for (int k = 0; st == SL_OK && k < gp->norder; k++)
        st = check_input_stages(b, gp->order[k], gp->inputs[gp->order[k]]);
    return st;
}

/* Resolves node i's batch_like reference. */
static sl_status check_like(build *b, gplan *gp, int i)
{
    const sl__gnode *n = &b->g->nodes[i];
    gp->like[i].node = -1;
    gp->like[i].out = 0;
    if (!n->batch_like)
        return SL_OK;
    return resolve(b, i, n->batch_like, "batch_like", &gp->like[i]);
}

static sl_status validate(build *b, gplan *gp, sl__plan *plan)
{
    sl_status st = SL_OK;
    for (int i = 0; st == SL_OK && i < b->g->n; i++)
        st = check_node(b, gp, i);
    for (int i = 0; st == SL_OK && i < b->g->n; i++)
        st = check_inputs(b, i, gp->inputs[i]);
    for (int i = 0; st == SL_OK && i < b->g->n; i++)
        st = check_args(b, i, gp->args[i]);
    for (int i = 0; st == SL_OK && i < b->g->n; i++)
        st = check_like(b, gp, i);
    if (st == SL_OK)
        st = toposort(b, gp);
    if (st == SL_OK)
        st = place_all(b, gp);
    if (st == SL_OK)
        st = check_outputs(b, plan);
    return st;
}

static void gplan_fini(const build *b, gplan *gp)
{
    for (int i = 0; i < b->g->n; i++) {
        if (gp->args && gp->args[i]) {
            for (int a = 0; a < sl_op_num_args(b->ops[i]); a++)
                sl__value_fini(&gp->args[i][a].value);
            sl__free(gp->args[i]);
        }
        if (gp->inputs)
            sl__free(gp->inputs[i]);
    }
    sl__free(gp->inputs);
    sl__free(gp->like);
    sl__free(gp->args);
    sl__free(gp->keep);
    sl__free(gp->order);
}

bool sl__plan_is_output(const sl__plan *plan, int node, int out)
{
    for (int k = 0; k < plan->noutputs; k++)
        if (plan->outputs[k].node == node && (out < 0 || plan->outputs[k].out == out))
            return true;
    return false;
}

/* True when node j reads node i only through data inputs (never an argument input). */
static bool data_only(const sl__pnode *c, int i)
{
    for (int a = 0; a < c->nargs; a++)
        if (c->args[a].input.node == i)
            return false;
    return true;
}

/* Sample fusion: node i (CPU, per sample, one output that nothing but one SL_OP_SAMPLEWISE CPU
 * consumer reads, as data) runs sample by sample with that consumer. Sources and stateful
 * nodes keep their batches (they run ahead of the others), as do the GPU stage and the
 * pipeline's outputs. Chains form where a fused consumer is itself fusable. */
static void fuse(sl__plan *plan)
{
    for (int i = 0; i < plan->n; i++) {
        const sl__pnode *pn = &plan->nodes[i];
        unsigned not_fusable = SL_OP_SOURCE | SL_OP_STATEFUL | SL_OP_SIDE_EFFECTS;
        if (pn->stage != SL__STAGE_CPU || pn->to_host || !pn->op->run_sample || pn->nout != 1 ||
            (pn->op->flags & not_fusable) || pn->nsucc != 1 || sl__plan_is_output(plan, i, -1) ||
            sl__op_is_split(pn->op) || sl__op_is_merge(pn->op))
            continue;
        sl__pnode *c = &plan->nodes[pn->succ[0]];
        /* never across a split or merge: a fused chain runs one scope's samples */
        if (c->stage != SL__STAGE_CPU || c->to_host || !(c->op->flags & SL_OP_SAMPLEWISE) ||
            !c->op->run_sample || c->fused_from >= 0 || !data_only(c, i) || c->scope != pn->scope ||
            sl__op_is_split(c->op) || sl__op_is_merge(c->op))
            continue;
        int len = 2; /* the chain i would join: i, c and i's fused producers */
        for (int j = pn->fused_from; j >= 0; j = plan->nodes[j].fused_from)
            len++;
        if (len > SL__MAX_CHAIN)
            continue;
        plan->nodes[i].fuse_into = pn->succ[0];
        c->fused_from = i;
    }
}

sl_status sl__plan_build(const sl_graph *g, const sl_pipeline_options *o, sl__plan **out,
                         sl__error *err)
{
    int n = g->n;
    build b = {.g = g, .o = o, .err = err};
    gplan gp = {0};
    sl__plan *plan = sl__calloc(1, sizeof(*plan));
    int *remap = sl__malloc(sizeof(int) * (size_t)(n ? n : 1));
    b.ops = sl__calloc((size_t)(n ? n : 1), sizeof(*b.ops));
    b.stages = sl__calloc((size_t)(n ? n : 1), sizeof(*b.stages));
    b.placed = sl__calloc((size_t)(n ? n : 1), sizeof(*b.placed));
    gp.inputs = sl__calloc((size_t)(n ? n : 1), sizeof(*gp.inputs));
    gp.like = sl__calloc((size_t)(n ? n : 1), sizeof(*gp.like));
    for (int i = 0; gp.like && i < n; i++)
        gp.like[i].node = -1;
    gp.args = sl__calloc((size_t)(n ? n : 1), sizeof(*gp.args));
    gp.keep = sl__calloc((size_t)(n ? n : 1), sizeof(bool));
    gp.order = sl__calloc((size_t)(n ? n : 1), sizeof(int));
    sl_status st = SL_OK;
    if (plan) {
        plan->nodes = sl__calloc((size_t)(n ? n : 1), sizeof(sl__pnode));
        plan->outputs = sl__calloc((size_t)(g->noutputs ? g->noutputs : 1), sizeof(sl__ref));
        plan->noutputs = g->noutputs;
    }
    if (!plan || !plan->nodes || !plan->outputs || !remap || !b.ops || !b.stages || !b.placed ||
        !gp.inputs || !gp.like || !gp.args || !gp.keep || !gp.order)
        st = fail(&b, -1, SL_ENOMEM, "out of memory");
    b.pargs = gp.args;
    if (st == SL_OK)
        st = validate(&b, &gp, plan);
    for (int k = 0; st == SL_OK && k < g->noutputs; k++)
        mark(&b, &gp, plan->outputs[k].node);
    for (int i = 0; st == SL_OK && i < n; i++)
        if (preserved(&b, &gp, i))
            mark(&b, &gp, i);
    if (st == SL_OK)
        st = assemble(&b, &gp, plan, remap);
    if (st == SL_OK)
        st = sl__plan_scopes(plan, err);
    if (st == SL_OK) {
        for (int j = 0; j < plan->n; j++)
            plan->nodes[j].fuse_into = plan->nodes[j].fused_from = -1;
        if (o->fuse_samples)
            fuse(plan);
    }
    gplan_fini(&b, &gp);
    sl__free(b.placed);
    sl__free(b.stages);
    sl__free(b.ops);
    sl__free(remap);
    if (st != SL_OK) {
        sl__plan_destroy(plan);
        plan = NULL;
    }
    *out = plan;
    return st;
}

void sl__plan_destroy(sl__plan *p)
{
    if (!p)
        return;
    for (int j = 0; j < p->n; j++) {
        sl__pnode *pn = &p->nodes[j];
        sl__free(pn->name);
        sl__free(pn->inputs);
        for (int a = 0; pn->args && a < pn->nargs; a++)
            sl__value_fini(&pn->args[a].value);
        sl__free(pn->args);
        sl__free(pn->succ);
    }
    sl__free(p->nodes);
    sl__free(p->outputs);
    sl__free(p->scopes);
    sl__free(p);
}
