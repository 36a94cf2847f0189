/* src/graph/graph.c: the graph builder API (sl_graph_*).
 *
 * Records nodes, inputs, arguments and outputs as given; nothing is checked against operator
 * schemas here (sl__plan_build does that and names the node). Failures are misuse (NULL, an
 * unknown or duplicate node name) or memory, reported through sl_last_error().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

sl_status sl_graph_create(sl_graph **out)
{
    if (!out)
        return sl__last_error_set(SL_EMISUSE, "sl_graph_create: out is NULL");
    *out = sl__calloc(1, sizeof(sl_graph));
    return *out ? SL_OK : sl__last_error_set(SL_ENOMEM, "sl_graph_create: out of memory");
}

static void node_fini(sl__gnode *n)
{
    sl__free(n->name);
    sl__free(n->op);
    sl__free(n->device);
    sl__free(n->batch_like);
    for (int i = 0; i < n->ninputs; i++)
        sl__free(n->inputs[i]);
    sl__free(n->inputs);
    for (int i = 0; i < n->nargs; i++) {
        sl__free(n->args[i].name);
        sl__free(n->args[i].source);
        sl__value_fini(&n->args[i].value);
    }
    sl__free(n->args);
}

void sl_graph_destroy(sl_graph *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n; i++)
        node_fini(&g->nodes[i]);
    sl__free(g->nodes);
    for (int i = 0; i < g->noutputs; i++)
        sl__free(g->outputs[i]);
    sl__free(g->outputs);
    sl__free(g);
}

sl__gnode *sl__graph_find(const sl_graph *g, const char *name)
{
    for (int i = 0; i < g->n; i++) {
        if (strcmp(g->nodes[i].name, name) == 0)
            return &g->nodes[i];
    }
    return NULL;
}

bool sl__graph_parse_ref(const sl_graph *g, const char *ref, int *node, int *out_index)
{
    char name[256];
    const char *colon = strrchr(ref, ':');
    size_t len = colon ? (size_t)(colon - ref) : strlen(ref);
    *node = -1;
    *out_index = 0;
    if (len == 0 || len >= sizeof(name))
        return false;
    if (colon) {
        char *end;
        long k = strtol(colon + 1, &end, 10);
        if (*end || end == colon + 1 || k < 0)
            return false;
        *out_index = (int)k;
    }
    memcpy(name, ref, len);
    name[len] = '\0';
    sl__gnode *n = sl__graph_find(g, name);
    *node = n ? (int)(n - g->nodes) : -1;
    return true;
}

/* Grows a pointer array by one slot. */
static bool grow(void **arr, int n, size_t elem)
{
    void *p = sl__realloc(*arr, (size_t)(n + 1) * elem);
    if (p)
        *arr = p;
    return p != NULL;
}

sl_status sl_graph_add(sl_graph *g, const char *op, const char *name, const char *device)
{
    if (!g || !op)
        return sl__last_error_set(SL_EMISUSE, "sl_graph_add: graph or operator is NULL");
    char autoname[128];
    if (!name) {
        snprintf(autoname, sizeof autoname, "%s_%d", op, g->n);
        name = autoname;
    }
    if (sl__graph_find(g, name))
        return sl__last_error_set(SL_EINVAL, "sl_graph_add: a node named \"%s\" already exists",
                                  name);
    if (!grow((void **)&g->nodes, g->n, sizeof(sl__gnode)))
        return sl__last_error_set(SL_ENOMEM, "sl_graph_add: out of memory");
    sl__gnode *n = &g->nodes[g->n];
    memset(n, 0, sizeof(*n));
    n->name = sl__strdup(name);
    n->op = sl__strdup(op);
    n->device = device ? sl__strdup(device) : NULL; /* NULL: placed from the inputs */
    if (!n->name || !n->op || (device && !n->device)) {
        node_fini(n);
        return sl__last_error_set(SL_ENOMEM, "sl_graph_add: out of memory");
    }
    g->n++;
    return SL_OK;
}

static sl__gnode *need_node(sl_graph *g, const char *node, const char *fn)
{
    if (!g || !node) {
        sl__last_error_set(SL_EMISUSE, "%s: graph or node name is NULL", fn);
        return NULL;
    }
    sl__gnode *n = sl__graph_find(g, node);
    if (!n)
        sl__last_error_set(SL_ENOTFOUND, "%s: no node named \"%s\"", fn, node);
    return n;
}

sl_status sl_graph_input(sl_graph *g, const char *node, const char *source)
{
    sl__gnode *n = need_node(g, node, "sl_graph_input");
    if (!n)
        return g && node ? SL_ENOTFOUND : SL_EMISUSE;
    if (!source)
        return sl__last_error_set(SL_EMISUSE, "sl_graph_input: source is NULL");
    char *s = sl__strdup(source);
    if (!s || !grow((void **)&n->inputs, n->ninputs, sizeof(char *))) {
        sl__free(s);
        return sl__last_error_set(SL_ENOMEM, "sl_graph_input: out of memory");
    }
    n->inputs[n->ninputs++] = s;
    return SL_OK;
}

/* Finds or appends the argument slot `arg` of node n, cleared for a new value. */
static sl__garg *arg_slot(sl__gnode *n, const char *arg)
{
    for (int i = 0; i < n->nargs; i++) {
        if (strcmp(n->args[i].name, arg) == 0) {
            sl__free(n->args[i].source);
            n->args[i].source = NULL;
            sl__value_fini(&n->args[i].value);
            return &n->args[i];
        }
    }
    char *name = sl__strdup(arg);
    if (!name || !grow((void **)&n->args, n->nargs, sizeof(sl__garg))) {
        sl__free(name);
        return NULL;
    }
    sl__garg *a = &n->args[n->nargs++];
    memset(a, 0, sizeof(*a));
    a->name = name;
    return a;
}

/* Stores v (ownership moves to the graph) as argument `arg` of `node`. */
static sl_status set_value(sl_graph *g, const char *node, const char *arg, sl__value *v,
                           const char *fn)
{
    sl__gnode *n = need_node(g, node, fn);
    sl_status st = !n ? (g && node ? SL_ENOTFOUND : SL_EMISUSE) : SL_OK;
    if (st == SL_OK && !arg)
        st = sl__last_error_set(SL_EMISUSE, "%s: argument name is NULL", fn);
    sl__garg *a = st == SL_OK ? arg_slot(n, arg) : NULL;
    if (st == SL_OK && !a)
        st = sl__last_error_set(SL_ENOMEM, "%s: out of memory", fn);
    if (st != SL_OK) {
        sl__value_fini(v);
        return st;
    }
    a->value = *v;
    return SL_OK;
}

sl_status sl_graph_arg_bool(sl_graph *g, const char *node, const char *arg, bool b)
{
    sl__value v = {.kind = SL__V_BOOL, .b = b};
    return set_value(g, node, arg, &v, "sl_graph_arg_bool");
}

sl_status sl_graph_arg_int(sl_graph *g, const char *node, const char *arg, int64_t i)
{
    sl__value v = {.kind = SL__V_INT, .i = i};
    return set_value(g, node, arg, &v, "sl_graph_arg_int");
}

sl_status sl_graph_arg_float(sl_graph *g, const char *node, const char *arg, double f)
{
    sl__value v = {.kind = SL__V_FLOAT, .f = f};
    return set_value(g, node, arg, &v, "sl_graph_arg_float");
}

sl_status sl_graph_arg_str(sl_graph *g, const char *node, const char *arg, const char *s)
{
    if (!s)
        return sl__last_error_set(SL_EMISUSE, "sl_graph_arg_str: value is NULL");
    sl__value v = {.kind = SL__V_STRING, .s = sl__strdup(s)};
    if (!v.s)
        return sl__last_error_set(SL_ENOMEM, "sl_graph_arg_str: out of memory");
    return set_value(g, node, arg, &v, "sl_graph_arg_str");
}

/* Copies a list into a value of `kind`. */
static sl_status list_value(sl__value *v, sl__vkind kind, const void *src, int n, size_t elem)
{
    memset(v, 0, sizeof(*v));
    v->kind = kind;
    v->n = n;
    void *copy = sl__malloc((size_t)(n > 0 ? n : 1) * elem);
    if (!copy)
        return SL_ENOMEM;
    if (n > 0)
        memcpy(copy, src, (size_t)n * elem);
    if (kind == SL__V_INTS)
        v->ints = copy;
    else
        v->floats = copy;
    return SL_OK;
}

sl_status sl_graph_arg_ints(sl_graph *g, const char *node, const char *arg, const int64_t *x, int n)
{
    sl__value v;
    if (n < 0 || (n > 0 && !x))
        return sl__last_error_set(SL_EMISUSE, "sl_graph_arg_ints: bad list");
    if (list_value(&v, SL__V_INTS, x, n, sizeof(int64_t)) != SL_OK)
        return sl__last_error_set(SL_ENOMEM, "sl_graph_arg_ints: out of memory");
    return set_value(g, node, arg, &v, "sl_graph_arg_ints");
}

sl_status sl_graph_arg_floats(sl_graph *g, const char *node, const char *arg, const double *x,
                              int n)
{
    sl__value v;
    if (n < 0 || (n > 0 && !x))
        return sl__last_error_set(SL_EMISUSE, "sl_graph_arg_floats: bad list");
    if (list_value(&v, SL__V_FLOATS, x, n, sizeof(double)) != SL_OK)
        return sl__last_error_set(SL_ENOMEM, "sl_graph_arg_floats: out of memory");
    return set_value(g, node, arg, &v, "sl_graph_arg_floats");
}

sl_status sl_graph_arg_strs(sl_graph *g, const char *node, const char *arg, const char *const *x,
                            int n)
{
    if (n < 0 || (n > 0 && !x))
        return sl__last_error_set(SL_EMISUSE, "sl_graph_arg_strs: bad list");
    sl__value v = {.kind = SL__V_STRINGS, .n = n};
    v.strs = sl__calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
    for (int i = 0; v.strs && i < n; i++) {
        if (!x[i] || !(v.strs[i] = sl__strdup(x[i]))) {
            sl__value_fini(&v);
            return sl__last_error_set(x[i] ? SL_ENOMEM : SL_EMISUSE, "sl_graph_arg_strs: bad list");
        }
    }
    if (!v.strs)
        return sl__last_error_set(SL_ENOMEM, "sl_graph_arg_strs: out of memory");
    return set_value(g, node, arg, &v, "sl_graph_arg_strs");
}

sl_status sl_graph_arg_json(sl_graph *g, const char *node, const char *arg, const char *json)
{
    sl__value v;
    char err[512];
    if (!json)
        return sl__last_error_set(SL_EMISUSE, "sl_graph_arg_json: value is NULL");
    sl_status st = sl__value_parse_json(json, &v, err, sizeof err);
    if (st != SL_OK)
        return sl__last_error_set(st, "node \"%s\", argument \"%s\": %s", node ? node : "?",
                                  arg ? arg : "?", err);
    return set_value(g, node, arg, &v, "sl_graph_arg_json");
}

sl_status sl_graph_arg_input(sl_graph *g, const char *node, const char *arg, const char *source)
{
    sl__gnode *n = need_node(g, node, "sl_graph_arg_input");
    if (!n)
        return g && node ? SL_ENOTFOUND : SL_EMISUSE;
    if (!arg || !source)
        return sl__last_error_set(SL_EMISUSE, "sl_graph_arg_input: argument or source is NULL");
    char *s = sl__strdup(source);
    sl__garg *a = s ? arg_slot(n, arg) : NULL;
    if (!a) {
        sl__free(s);
        return sl__last_error_set(SL_ENOMEM, "sl_graph_arg_input: out of memory");
    }
    a->source = s;
    return SL_OK;
}

sl_status sl_graph_batch_like(sl_graph *g, const char *node, const char *source)
{
    sl__gnode *n = need_node(g, node, "sl_graph_batch_like");
    if (!n)
        return g && node ? SL_ENOTFOUND : SL_EMISUSE;
    char *s = NULL;
    if (source && !(s = sl__strdup(source)))
        return sl__last_error_set(SL_ENOMEM, "sl_graph_batch_like: out of memory");
    sl__free(n->batch_like);
    n->batch_like = s;
    return SL_OK;
}

sl_status sl_graph_output(sl_graph *g, const char *source)
{
    if (!g || !source)
        return sl__last_error_set(SL_EMISUSE, "sl_graph_output: graph or source is NULL");
    char *s = sl__strdup(source);
    if (!s || !grow((void **)&g->outputs, g->noutputs, sizeof(char *))) {
        sl__free(s);
        return sl__last_error_set(SL_ENOMEM, "sl_graph_output: out of memory");
    }
    g->outputs[g->noutputs++] = s;
    return SL_OK;
}

/* ---- deep copy ------------------------------------------------------------------------- */

static sl_status copy_node(sl_graph *dst, const sl__gnode *n)
{
    sl_status st = sl_graph_add(dst, n->op, n->name, n->device);
    for (int i = 0; st == SL_OK && i < n->ninputs; i++)
        st = sl_graph_input(dst, n->name, n->inputs[i]);
    for (int i = 0; st == SL_OK && i < n->nargs; i++) {
        const sl__garg *a = &n->args[i];
        if (a->source) {
            st = sl_graph_arg_input(dst, n->name, a->name, a->source);
        } else {
            sl__value v;
            st = sl__value_copy(&v, &a->value);
            if (st == SL_OK)
                st = set_value(dst, n->name, a->name, &v, "sl_graph copy");
        }
    }
    if (st == SL_OK && n->batch_like)
        st = sl_graph_batch_like(dst, n->name, n->batch_like);
    return st;
}

sl_status sl__graph_copy(const sl_graph *src, sl_graph **out)
{
    sl_graph *g = NULL;
    sl_status st = sl_graph_create(&g);
    for (int i = 0; st == SL_OK && i < src->n; i++)
        st = copy_node(g, &src->nodes[i]);
    for (int i = 0; st == SL_OK && i < src->noutputs; i++)
        st = sl_graph_output(g, src->outputs[i]);
    if (st != SL_OK) {
        sl_graph_destroy(g);
        g = NULL;
    }
    *out = g;
    return st;
}
