/* src/graph/dot.c: a picture of the plan, as Graphviz DOT text (sl__plan_write_dot).
 *
 * One box per plan node (its name, operator and device), one solid edge per data input
 * (labelled with the output index where the producer has several outputs), one dashed edge per
 * argument input (labelled with the argument), an oval per pipeline output, a cluster per
 * fused chain (sample fusion) and one per conditional (its split and merge nodes, and a
 * cluster per branch around the nodes that run on the branch's samples). Pruned nodes are not in
 * the plan: a comment at the top names them. Invariant: the text depends on the plan and the graph
 * alone (no address, seed or time), so every front end draws one pipeline the same way, byte for
 * byte; node identifiers are n<plan index> and out<k>, user names appear only inside escaped
 * strings, so no name can break the syntax or collide with another.
 */
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"

/* ---- quoting ------------------------------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at s, or 0 when the bytes there are not one. */
static int utf8_len(const unsigned char *s)
{
    int n = 0;
    if (s[0] < 0x80)
        n = 1;
    else if (s[0] >= 0xc2 && s[0] < 0xe0)
        n = 2;
    else if (s[0] >= 0xe0 && s[0] < 0xf0)
        n = 3;
    else if (s[0] >= 0xf0 && s[0] < 0xf5)
        n = 4;
    for (int k = 1; k < n; k++) /* stops at the terminating zero, which is no continuation */
        if ((s[k] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* Writes s as the inside of a DOT string that a label shows as s: a quote and a backslash are
 * escaped (a lone backslash would start one of Graphviz's label escapes, \N or \l), a newline
 * becomes \n, another control byte \\xHH (shown as the text \xHH), and a byte that is not
 * UTF-8 '?' (Graphviz reads UTF-8 and rejects anything else). */
static void put_text(FILE *f, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c;) {
        int n = utf8_len(c);
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c == '\n')
            fputs("\\n", f);
        else if (*c < 0x20 || *c == 0x7f)
            fprintf(f, "\\\\x%02x", *c);
        else if (n == 0)
            fputc('?', f);
        else
            fwrite(c, 1, (size_t)n, f);
        c += n > 0 ? n : 1;
    }
}

/* ---- nodes -------------------------------------------------------------------------------- */

static const char *const fill[] = {"#e8eef7", "#fdf0d5", "#dcf1e1"}; /* by sl__stage */

/* What the device line adds to the stage: a device the build inferred from the inputs (none was
 * given) says so, and so does a cpu copy that brings GPU data back. */
static const char *stage_note(const sl__pnode *pn, const sl__gnode *gn)
{
    if (pn->to_host)
        return " (copy to host)";
    if (pn->stage != SL__STAGE_CPU && gn && !gn->device)
        return " (from inputs)";
    return "";
}

/* The box of plan node j: name, operator, device. */
static void put_node(FILE *f, const sl__plan *plan, const sl_graph *g, int j, const char *indent)
{
    const sl__pnode *pn = &plan->nodes[j];
    fprintf(f, "%sn%d [label=\"", indent, j);
    put_text(f, pn->name);
    fputs("\\n", f);
    put_text(f, pn->op->name);
    fprintf(f, "\\n%s%s\", fillcolor=\"%s\"];\n", sl__stage_name(pn->stage),
            stage_note(pn, sl__graph_find(g, pn->name)), fill[pn->stage]);
}

/* A fused chain, head (fuses into the next, fused from none) to tail, as one cluster: what runs
 * sample by sample in the tail's per-sample tasks. `indent`: the cluster's own. */
static void put_chain(FILE *f, const sl__plan *plan, const sl_graph *g, int head, int indent)
{
    char in2[64];
    snprintf(in2, sizeof in2, "%*s", indent + 4, "");
    fprintf(f,
            "%*ssubgraph cluster_fused_%d {\n"
            "%slabel=\"fused: runs sample by sample\";\n"
            "%sstyle=\"dashed,rounded\";\n",
            indent, "", head, in2, in2);
    for (int j = head; j >= 0; j = plan->nodes[j].fuse_into)
        put_node(f, plan, g, j, in2);
    fprintf(f, "%*s}\n", indent, "");
}

/* Conditional regions (issue 17). A conditional is named by its true scope t: the region
 * cluster_cond_<t> holds its splits and merges and two clusters, one per branch, around the
 * nodes of the branch's scope (nested conditionals inside them). Every node sits in the
 * innermost region it belongs to; a fused chain, which never crosses a split or merge, nests
 * inside. A node's home: the conditional (t, as -2 - t) of a split or merge, else its scope. */
static int home(const sl__plan *plan, int j)
{
    const sl__pnode *pn = &plan->nodes[j];
    if (pn->branch[0] >= 0)
        return -2 - pn->branch[0];
    if (sl__op_is_merge(pn->op))
        return -2 - sl__plan_out_scope(plan, pn->inputs[0]);
    return pn->scope;
}

/* The false scope of the conditional whose true scope is t. */
static int sibling(const sl__plan *plan, int t)
{
    for (int s = 1; s < plan->nscopes; s++) {
        const sl__scope *a = &plan->scopes[t], *b = &plan->scopes[s];
        if (b->branch == 1 && b->parent == a->parent && b->split == a->split)
            return s;
    }
    return -1;
}

static void put_home(FILE *f, const sl__plan *plan, const sl_graph *g, int where, int indent)
{
    char ind[64];
    snprintf(ind, sizeof ind, "%*s", indent, "");
    for (int j = 0; j < plan->n; j++) {
        const sl__pnode *pn = &plan->nodes[j];
        if (home(plan, j) != where)
            continue;
        if (pn->fuse_into < 0 && pn->fused_from < 0)
            put_node(f, plan, g, j, ind);
        else if (pn->fused_from < 0)
            put_chain(f, plan, g, j, indent);
    }
}

static void put_scope(FILE *f, const sl__plan *plan, const sl_graph *g, int scope, int indent);

static void put_conditional(FILE *f, const sl__plan *plan, const sl_graph *g, int t, int indent)
{
    const sl__scope *sc = &plan->scopes[t];
    const char *pred =
        sc->pred.node >= 0 ? plan->nodes[sc->pred.node].name : plan->nodes[sc->split].name;
    fprintf(f, "%*ssubgraph cluster_cond_%d {\n%*slabel=\"if ", indent, "", t, indent + 4, "");
    put_text(f, pred);
    fprintf(f, "\";\n%*sstyle=\"rounded\";\n", indent + 4, "");
    put_home(f, plan, g, -2 - t, indent + 4);
    int branches[2] = {t, sibling(plan, t)};
    for (int k = 0; k < 2; k++) {
        if (branches[k] < 0)
            continue;
        fprintf(f,
                "%*ssubgraph cluster_branch_%d {\n%*slabel=\"%s\";\n%*sstyle=\"dotted,rounded\";"
                "\n",
                indent + 4, "", branches[k], indent + 8, "", k ? "false" : "true", indent + 8, "");
        put_scope(f, plan, g, branches[k], indent + 8);
        fprintf(f, "%*s}\n", indent + 4, "");
    }
    fprintf(f, "%*s}\n", indent, "");
}

/* The nodes of scope `scope`, then the conditionals whose parent it is. */
static void put_scope(FILE *f, const sl__plan *plan, const sl_graph *g, int scope, int indent)
{
    put_home(f, plan, g, scope, indent);
    for (int t = 1; t < plan->nscopes; t++)
        if (plan->scopes[t].parent == scope && plan->scopes[t].branch == 0)
            put_conditional(f, plan, g, t, indent);
}

/* Every node, each exactly once: in its chain's cluster, its conditional region, or on its
 * own. */
static void put_nodes(FILE *f, const sl__plan *plan, const sl_graph *g)
{
    put_scope(f, plan, g, 0, 4);
}

/* ---- edges -------------------------------------------------------------------------------- */

/* An edge from r to `to` (n<j> or out<k>): labelled with r's output index where its producer
 * has several outputs; an argument input (arg not NULL) dashed and labelled "[k: ]arg". */
static void put_edge(FILE *f, const sl__plan *plan, sl__ref r, const char *to, int j,
                     const char *arg)
{
    bool several = plan->nodes[r.node].nout > 1; /* the node's: python_function has num_outputs */
    fprintf(f, "    n%d -> %s%d", r.node, to, j);
    if (several || arg)
        fputs(arg ? " [style=dashed, label=\"" : " [label=\"", f);
    if (several)
        fprintf(f, "%d%s", r.out, arg ? ": " : "");
    if (arg)
        put_text(f, arg);
    fputs(several || arg ? "\"];\n" : ";\n", f);
}

static void put_edges(FILE *f, const sl__plan *plan)
{
    for (int j = 0; j < plan->n; j++) {
        const sl__pnode *pn = &plan->nodes[j];
        for (int k = 0; k < pn->ninputs; k++)
            put_edge(f, plan, pn->inputs[k], "n", j, NULL);
        for (int a = 0; a < pn->nargs; a++)
            if (pn->args[a].input.node >= 0)
                put_edge(f, plan, pn->args[a].input, "n", j, sl_op_arg(pn->op, a)->name);
        if (pn->batch_like.node >= 0) /* no data: the batch (branch) it takes */
            fprintf(f, "    n%d -> n%d [style=dotted, label=\"batch_like\"];\n",
                    pn->batch_like.node, j);
    }
}

static void put_outputs(FILE *f, const sl__plan *plan)
{
    for (int k = 0; k < plan->noutputs; k++)
        fprintf(f, "    out%d [shape=oval, style=solid, label=\"output %d\"];\n", k, k);
    for (int k = 0; k < plan->noutputs; k++)
        put_edge(f, plan, plan->outputs[k], "out", k, NULL);
}

/* ---- the whole picture -------------------------------------------------------------------- */

static bool in_plan(const sl__plan *plan, const char *name)
{
    for (int j = 0; j < plan->n; j++)
        if (strcmp(plan->nodes[j].name, name) == 0)
            return true;
    return false;
}

/* The comment naming the graph's nodes the build pruned, when there are any. */
static void put_pruned(FILE *f, const sl__plan *plan, const sl_graph *g)
{
    int n = 0;
    for (int i = 0; i < g->n; i++) {
        if (in_plan(plan, g->nodes[i].name))
            continue;
        fputs(n++ ? ", \"" : "// pruned (no output needs them): \"", f);
        put_text(f, g->nodes[i].name);
        fputc('"', f);
    }
    if (n)
        fputc('\n', f);
}

sl_status sl__plan_write_dot(const sl__plan *plan, const sl_graph *g, FILE *f)
{
    fprintf(f, "// sluice pipeline: %d node%s in execution order, %d output%s\n", plan->n,
            plan->n == 1 ? "" : "s", plan->noutputs, plan->noutputs == 1 ? "" : "s");
    put_pruned(f, plan, g);
    fputs("digraph sluice {\n"
          "    graph [fontname=\"Helvetica\", fontsize=10];\n"
          "    node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
          "fontsize=10];\n"
          "    edge [fontname=\"Helvetica\", fontsize=9];\n",
          f);
    put_nodes(f, plan, g);
    put_edges(f, plan);
    put_outputs(f, plan);
    fputs("}\n", f);
    return ferror(f) ? SL_EIO : SL_OK;
}
