/* src/graph/cond.c: conditional scopes of a plan (split and merge, issue 17).
 *
 * Exports sl__plan_scopes, sl__op_is_split, sl__op_is_merge, sl__plan_out_scope and
 * sl__plan_describe_scope. A scope is the set of samples a node runs on: scope 0 the whole
 * batch, a split's output k a child scope (branch k of the parent on its predicate). Every
 * node but a merge takes the scope of its inputs (data, argument inputs and batch_like), which
 * must agree: the front end splits what a branch reads. A merge reads the true branch (input 0)
 * and the false branch (input 1) of one conditional and gives back the parent scope. Splits of
 * one parent on the same predicate share scopes; the first computes them (sched.c runs it
 * first: the others wait for it through an extra edge).
 */
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"

extern const sl_op_def sl_op_cond_split, sl_op_cond_merge;

bool sl__op_is_split(const sl_op_def *op)
{
    return op == &sl_op_cond_split;
}

bool sl__op_is_merge(const sl_op_def *op)
{
    return op == &sl_op_cond_merge;
}

int sl__plan_out_scope(const sl__plan *plan, sl__ref r)
{
    const sl__pnode *pn = &plan->nodes[r.node];
    if (pn->branch[0] >= 0 && r.out >= 0 && r.out < 2)
        return pn->branch[r.out];
    return pn->scope;
}

void sl__plan_describe_scope(const sl__plan *plan, int scope, char *buf, size_t len)
{
    size_t n = 0;
    if (len)
        buf[0] = '\0';
    for (int s = scope; s > 0 && n < len; s = plan->scopes[s].parent) {
        const sl__scope *sc = &plan->scopes[s];
        const char *pred =
            sc->pred.node >= 0 ? plan->nodes[sc->pred.node].name : plan->nodes[sc->split].name;
        int w = snprintf(buf + n, len - n, "%sthe %s branch of the conditional on \"%s\"",
                         s == scope ? "" : ", inside ", sc->branch == 0 ? "true" : "false", pred);
        n += w > 0 ? (size_t)w : 0;
    }
}

static sl_status fail(const sl__plan *plan, int j, sl__error *err, const char *fmt, ...)
    SL_PRINTF(4, 5);
static sl_status fail(const sl__plan *plan, int j, sl__error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const sl__pnode *pn = j >= 0 ? &plan->nodes[j] : NULL;
    sl__error_setv(err, SL_EINVAL, pn ? pn->op->name : NULL, pn ? pn->name : NULL, -1, -1, NULL,
                   fmt, ap);
    va_end(ap);
    return SL_EINVAL;
}

/* "the whole batch" or the scope's description. */
static void scope_text(const sl__plan *plan, int s, char *buf, size_t len)
{
    if (s == 0)
        snprintf(buf, len, "the whole batch (outside any conditional)");
    else
        sl__plan_describe_scope(plan, s, buf, len);
}

/* The scope (parent, predicate, branch) of split j, made when no split made it before. */
static sl_status child_scope(sl__plan *plan, int j, int parent, sl__ref pred, int branch, int *out,
                             sl__error *err)
{
    for (int s = 1; s < plan->nscopes; s++) {
        const sl__scope *sc = &plan->scopes[s];
        if (sc->parent == parent && sc->branch == branch && pred.node >= 0 &&
            sc->pred.node == pred.node && sc->pred.out == pred.out) {
            *out = s;
            return SL_OK;
        }
    }
    sl__scope *sc = sl__realloc(plan->scopes, sizeof(sl__scope) * (size_t)(plan->nscopes + 1));
    if (!sc) {
        sl__error_set(err, SL_ENOMEM, NULL, NULL, -1, -1, NULL, "out of memory");
        return SL_ENOMEM;
    }
    plan->scopes = sc;
    sc[plan->nscopes] = (sl__scope){.parent = parent,
                                    .branch = branch,
                                    .split = j,
                                    .pred = pred,
                                    .depth = sc[parent].depth + 1};
    *out = plan->nscopes++;
    return SL_OK;
}

/* The predicate argument's input (node -1: a constant). */
static sl__ref pred_ref(const sl__pnode *pn)
{
    int a = sl_op_arg_index(pn->op, "predicate");
    sl__ref none = {.node = -1, .out = 0};
    return a >= 0 ? pn->args[a].input : none;
}

/* A merge: input 0 from branch 0 and input 1 from branch 1 of one conditional, whose
 * predicate is the merge's; its own scope is their parent. */
static sl_status merge_scope(sl__plan *plan, int j, sl__error *err)
{
    sl__pnode *pn = &plan->nodes[j];
    int s[2];
    char a[512], b[512];
    for (int k = 0; k < 2; k++) {
        s[k] = sl__plan_out_scope(plan, pn->inputs[k]);
        if (s[k] == 0 || plan->scopes[s[k]].branch != k) {
            scope_text(plan, s[k], a, sizeof a);
            return fail(plan, j, err,
                        "input %d (\"%s\") must come from the %s branch of a conditional "
                        "(a _conditional.split output %d, or a node reading one); it comes from "
                        "%s",
                        k, plan->nodes[pn->inputs[k].node].name, k ? "false" : "true", k, a);
        }
    }
    const sl__scope *t = &plan->scopes[s[0]], *f = &plan->scopes[s[1]];
    bool same = t->parent == f->parent &&
                (t->pred.node >= 0 ? t->pred.node == f->pred.node && t->pred.out == f->pred.out
                                   : t->split == f->split);
    if (!same) {
        scope_text(plan, s[0], a, sizeof a);
        scope_text(plan, s[1], b, sizeof b);
        return fail(plan, j, err,
                    "its inputs come from two different conditionals: input 0 from %s, input 1 "
                    "from %s",
                    a, b);
    }
    sl__ref p = pred_ref(pn);
    if (t->pred.node >= 0 && (p.node != t->pred.node || p.out != t->pred.out))
        return fail(plan, j, err,
                    "argument \"predicate\" must be the predicate of the split its inputs come "
                    "from (\"%s\")",
                    plan->nodes[t->pred.node].name);
    pn->scope = t->parent;
    if (p.node >= 0 && sl__plan_out_scope(plan, p) != pn->scope) {
        scope_text(plan, sl__plan_out_scope(plan, p), a, sizeof a);
        return fail(plan, j, err, "argument input \"predicate\" comes from %s", a);
    }
    return SL_OK;
}

/* Every other node: the one scope of its inputs, argument inputs and batch_like. */
static sl_status node_scope(sl__plan *plan, int j, sl__error *err)
{
    sl__pnode *pn = &plan->nodes[j];
    int scope = -1;
    char what[160], first[160] = "", a[512], b[512];
    for (int k = 0; k < pn->ninputs + pn->nargs + 1; k++) {
        sl__ref r;
        if (k < pn->ninputs) {
            r = pn->inputs[k];
            snprintf(what, sizeof what, "input %d", k);
        } else if (k < pn->ninputs + pn->nargs) {
            r = pn->args[k - pn->ninputs].input;
            snprintf(what, sizeof what, "argument input \"%s\"",
                     sl_op_arg(pn->op, k - pn->ninputs)->name);
        } else {
            r = pn->batch_like;
            snprintf(what, sizeof what, "batch_like");
        }
        if (r.node < 0)
            continue;
        int s = sl__plan_out_scope(plan, r);
        if (scope < 0) {
            scope = s;
            memcpy(first, what, sizeof first);
            continue;
        }
        if (s != scope) {
            scope_text(plan, s, a, sizeof a);
            scope_text(plan, scope, b, sizeof b);
            return fail(plan, j, err,
                        "%s comes from %s, but %s from %s: a node reads the samples of one "
                        "conditional branch (split what the branch uses with "
                        "_conditional.split)",
                        what, a, first, b);
        }
    }
    pn->scope = scope < 0 ? 0 : scope;
    if (pn->scope != 0 && (pn->op->flags & SL_OP_SOURCE)) {
        sl__plan_describe_scope(plan, pn->scope, a, sizeof a);
        return fail(plan, j, err,
                    "a source decides the batch of its iterations and cannot run inside %s "
                    "(read it outside the conditional and split what the branch uses)",
                    a);
    }
    return SL_OK;
}

sl_status sl__plan_scopes(sl__plan *plan, sl__error *err)
{
    plan->scopes = sl__calloc(1, sizeof(sl__scope));
    if (!plan->scopes) {
        sl__error_set(err, SL_ENOMEM, NULL, NULL, -1, -1, NULL, "out of memory");
        return SL_ENOMEM;
    }
    plan->scopes[0] = (sl__scope){.parent = -1, .split = -1, .pred = {.node = -1}};
    plan->nscopes = 1;
    for (int j = 0; j < plan->n; j++) {
        sl__pnode *pn = &plan->nodes[j];
        sl_status st =
            sl__op_is_merge(pn->op) ? merge_scope(plan, j, err) : node_scope(plan, j, err);
        if (st != SL_OK)
            return st;
        if (!sl__op_is_split(pn->op))
            continue;
        sl__ref p = pred_ref(pn);
        for (int k = 0; k < 2; k++) {
            st = child_scope(plan, j, pn->scope, p, k, &pn->branch[k], err);
            if (st != SL_OK)
                return st;
        }
        int rep = plan->scopes[pn->branch[0]].split;
        if (rep != j) { /* the scopes' samples are computed by split `rep`: wait for it */
            int before = plan->nodes[rep].nsucc;
            bool have = false;
            for (int k = 0; k < before; k++)
                have |= plan->nodes[rep].succ[k] == j;
            if (!have) {
                int *s = sl__realloc(plan->nodes[rep].succ, sizeof(int) * (size_t)(before + 1));
                if (!s) {
                    sl__error_set(err, SL_ENOMEM, NULL, NULL, -1, -1, NULL, "out of memory");
                    return SL_ENOMEM;
                }
                plan->nodes[rep].succ = s;
                s[plan->nodes[rep].nsucc++] = j;
                pn->npred++;
            }
        }
    }
    for (int k = 0; k < plan->noutputs; k++) {
        int s = sl__plan_out_scope(plan, plan->outputs[k]);
        if (s != 0) {
            char a[512];
            sl__plan_describe_scope(plan, s, a, sizeof a);
            return fail(plan, plan->outputs[k].node, err,
                        "pipeline output %d is inside %s: merge it first "
                        "(_conditional.merge)",
                        k, a);
        }
    }
    return SL_OK;
}
