/* src/graph/spec.c: the JSON spec, read and written.
 *
 * Exports sl_graph_from_json, sl_pipeline_options_from_json, sl_graph_to_json and
 * sl__spec_write. Reading is strict: a key that is not part of the format is an error (a typo
 * must not be silently ignored), and every error says where it is, as
 *   spec: nodes[2] ("dec"): "inputs" must be a list of strings
 *   spec: line 3, column 5: <jansson's words>          (JSON syntax, SL_ECORRUPT)
 * through sl_last_error(); everything else is SL_EINVAL. Argument values are only parsed here;
 * the build checks them against the operator schemas and names node and argument.
 *
 * Writing has a fixed layout: keys in a fixed order, a node's "args" and "arg_inputs" sorted by
 * name, lists on one line, floats in the shortest text that reads back to the same double. So
 * writing what was read from written text gives the same text again.
 */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

/* ---- errors ------------------------------------------------------------------------------- */

/* Records "spec: <where>: <message>" (or "spec: <message>" when where is NULL).
 * Returns: code. */
static sl_status fail(sl_status code, const char *where, const char *fmt, ...) SL_PRINTF(3, 4);
static sl_status fail(sl_status code, const char *where, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (where)
        return sl__last_error_set(code, "spec: %s: %s", where, msg);
    return sl__last_error_set(code, "spec: %s", msg);
}

/* Re-words the last error of an sl_graph_* call with the place in the spec. */
static sl_status fail_graph(sl_status code, const char *where)
{
    char msg[SL__MSG_MAX];
    snprintf(msg, sizeof msg, "%s", sl_last_error());
    return fail(code, where, "%s", msg);
}

static const char *kind_name(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "a list";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a bool";
    default: return "null";
    }
}

/* Parses the whole text; the top level must be an object. Returns: *root owned (decref). */
static sl_status load(const char *text, json_t **root)
{
    json_error_t je;
    *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!*root) {
        if (json_error_code(&je) == json_error_out_of_memory)
            return fail(SL_ENOMEM, NULL, "out of memory");
        return sl__last_error_set(SL_ECORRUPT, "spec: line %d, column %d: %s", je.line, je.column,
                                  je.text);
    }
    if (!json_is_object(*root)) {
        sl_status st =
            fail(SL_EINVAL, NULL, "the top level must be an object, got %s", kind_name(*root));
        json_decref(*root);
        *root = NULL;
        return st;
    }
    return SL_OK;
}

/* Fails on the first key of obj that is not in `allowed` (NULL-terminated). */
static sl_status check_keys(json_t *obj, const char *const *allowed, const char *where)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val)
    {
        bool known = false;
        for (int i = 0; allowed[i] && !known; i++)
            known = strcmp(key, allowed[i]) == 0;
        if (known)
            continue;
        char list[256] = "";
        for (int i = 0; allowed[i]; i++) {
            size_t n = strlen(list);
            snprintf(list + n, sizeof list - n, "%s\"%s\"", i ? ", " : "", allowed[i]);
        }
        return fail(SL_EINVAL, where, "unknown key \"%s\" (expected one of %s)", key, list);
    }
    return SL_OK;
}

/* Gets an optional string member; a present non-string or empty string is an error. */
static sl_status get_string(json_t *obj, const char *key, const char *where, const char **out)
{
    json_t *j = json_object_get(obj, key);
    *out = NULL;
    if (!j)
        return SL_OK;
    if (!json_is_string(j) || json_string_length(j) == 0)
        return fail(SL_EINVAL, where, "\"%s\" must be a non-empty string, got %s", key,
                    json_is_string(j) ? "\"\"" : kind_name(j));
    *out = json_string_value(j);
    return SL_OK;
}

/* True when j is a list of non-empty strings. */
static bool is_ref_list(const json_t *j)
{
    if (!json_is_array(j))
        return false;
    for (size_t i = 0; i < json_array_size(j); i++) {
        const json_t *e = json_array_get(j, i);
        if (!json_is_string(e) || json_string_length(e) == 0)
            return false;
    }
    return true;
}

/* ---- reading a graph ---------------------------------------------------------------------- */

/* Stores a parsed value through the public setters, which copy it. */
static sl_status set_arg(sl_graph *g, const char *node, const char *arg, const sl__value *v)
{
    switch (v->kind) {
    case SL__V_BOOL: return sl_graph_arg_bool(g, node, arg, v->b);
    case SL__V_INT: return sl_graph_arg_int(g, node, arg, v->i);
    case SL__V_FLOAT: return sl_graph_arg_float(g, node, arg, v->f);
    case SL__V_STRING: return sl_graph_arg_str(g, node, arg, v->s);
    case SL__V_INTS: return sl_graph_arg_ints(g, node, arg, v->ints, v->n);
    case SL__V_FLOATS: return sl_graph_arg_floats(g, node, arg, v->floats, v->n);
    case SL__V_STRINGS: return sl_graph_arg_strs(g, node, arg, (const char *const *)v->strs, v->n);
    default: return sl__last_error_set(SL_EINTERNAL, "value of unknown kind %d", (int)v->kind);
    }
}

static sl_status read_inputs(sl_graph *g, const char *node, json_t *j, const char *where)
{
    if (!j)
        return SL_OK;
    if (!is_ref_list(j))
        return fail(SL_EINVAL, where,
                    "\"inputs\" must be a list of strings (\"node\" or "
                    "\"node:k\")");
    for (size_t i = 0; i < json_array_size(j); i++) {
        sl_status st = sl_graph_input(g, node, json_string_value(json_array_get(j, i)));
        if (st != SL_OK)
            return fail_graph(st, where);
    }
    return SL_OK;
}

static sl_status read_args(sl_graph *g, const char *node, json_t *j, const char *where)
{
    const char *key;
    json_t *val;
    if (!j)
        return SL_OK;
    if (!json_is_object(j))
        return fail(SL_EINVAL, where, "\"args\" must be an object {\"name\": value}, got %s",
                    kind_name(j));
    json_object_foreach(j, key, val)
    {
        sl__value v;
        char err[512];
        sl_status st = sl__value_from_jansson(val, &v, err, sizeof err);
        if (st != SL_OK)
            return st == SL_ENOMEM ? fail(st, where, "out of memory")
                                   : fail(st, where, "args \"%s\": %s", key, err);
        st = set_arg(g, node, key, &v);
        sl__value_fini(&v);
        if (st != SL_OK)
            return fail_graph(st, where);
    }
    return SL_OK;
}

static sl_status read_arg_inputs(sl_graph *g, const char *node, json_t *j, json_t *args,
                                 const char *where)
{
    const char *key;
    json_t *val;
    if (!j)
        return SL_OK;
    if (!json_is_object(j))
        return fail(SL_EINVAL, where,
                    "\"arg_inputs\" must be an object {\"argument\": \"node\"}, got %s",
                    kind_name(j));
    json_object_foreach(j, key, val)
    {
        if (!json_is_string(val) || json_string_length(val) == 0)
            return fail(SL_EINVAL, where,
                        "arg_inputs \"%s\" must be a string (\"node\" or "
                        "\"node:k\"), got %s",
                        key, kind_name(val));
        if (args && json_object_get(args, key))
            return fail(SL_EINVAL, where,
                        "argument \"%s\" is given in both \"args\" and \"arg_inputs\"", key);
        sl_status st = sl_graph_arg_input(g, node, key, json_string_value(val));
        if (st != SL_OK)
            return fail_graph(st, where);
    }
    return SL_OK;
}

/* "batch_like": {"node": "name", "output": k} (output 0 when left out), or "name[:k]". */
static sl_status read_batch_like(sl_graph *g, const char *node, json_t *j, const char *where)
{
    if (!j)
        return SL_OK;
    char ref[512];
    if (json_is_string(j) && json_string_length(j) > 0) {
        snprintf(ref, sizeof ref, "%s", json_string_value(j));
    } else {
        json_t *n = json_is_object(j) ? json_object_get(j, "node") : NULL;
        json_t *o = json_is_object(j) ? json_object_get(j, "output") : NULL;
        if (!n || !json_is_string(n) || json_string_length(n) == 0 ||
            (o && (!json_is_integer(o) || json_integer_value(o) < 0)) ||
            json_object_size(j) != 1u + (o != NULL))
            return fail(SL_EINVAL, where,
                        "\"batch_like\" must be {\"node\": \"name\", \"output\": k} or "
                        "\"name[:k]\", got %s",
                        kind_name(j));
        snprintf(ref, sizeof ref, "%s:%lld", json_string_value(n),
                 (long long)(o ? json_integer_value(o) : 0));
    }
    sl_status st = sl_graph_batch_like(g, node, ref);
    return st == SL_OK ? SL_OK : fail_graph(st, where);
}

static const char *const node_keys[] = {"name", "op",         "device",     "inputs",
                                        "args", "arg_inputs", "batch_like", NULL};

/* Adds nodes[i] to g. A node without "name" gets sl_graph_add's automatic one. */
static sl_status read_node(sl_graph *g, json_t *j, int i)
{
    char where[192];
    const char *name, *op, *device;
    snprintf(where, sizeof where, "nodes[%d]", i);
    if (!json_is_object(j))
        return fail(SL_EINVAL, where, "a node must be an object, got %s", kind_name(j));
    sl_status st = get_string(j, "name", where, &name);
    if (st != SL_OK)
        return st;
    if (name)
        snprintf(where, sizeof where, "nodes[%d] (\"%s\")", i, name);
    if ((st = check_keys(j, node_keys, where)) != SL_OK ||
        (st = get_string(j, "op", where, &op)) != SL_OK ||
        (st = get_string(j, "device", where, &device)) != SL_OK)
        return st;
    if (!op)
        return fail(SL_EINVAL, where,
                    "\"op\" is missing (the operator, such as "
                    "\"decoders.image\"; `sluice ops` lists them)");
    if ((st = sl_graph_add(g, op, name, device)) != SL_OK)
        return fail_graph(st, where);
    name = g->nodes[g->n - 1].name;
    json_t *args = json_object_get(j, "args");
    if ((st = read_inputs(g, name, json_object_get(j, "inputs"), where)) != SL_OK ||
        (st = read_args(g, name, args, where)) != SL_OK)
        return st;
    if ((st = read_arg_inputs(g, name, json_object_get(j, "arg_inputs"), args, where)) != SL_OK)
        return st;
    return read_batch_like(g, name, json_object_get(j, "batch_like"), where);
}

static const char *const top_keys[] = {"pipeline", "nodes", "outputs", NULL};

static sl_status read_graph(sl_graph *g, json_t *root)
{
    sl_status st = check_keys(root, top_keys, NULL);
    if (st != SL_OK)
        return st;
    json_t *nodes = json_object_get(root, "nodes");
    if (!nodes)
        return fail(SL_EINVAL, NULL, "\"nodes\" is missing (a list of node objects)");
    if (!json_is_array(nodes))
        return fail(SL_EINVAL, NULL, "\"nodes\" must be a list of node objects, got %s",
                    kind_name(nodes));
    for (size_t i = 0; i < json_array_size(nodes); i++) {
        if ((st = read_node(g, json_array_get(nodes, i), (int)i)) != SL_OK)
            return st;
    }
    json_t *outputs = json_object_get(root, "outputs");
    if (outputs && !is_ref_list(outputs))
        return fail(SL_EINVAL, NULL,
                    "\"outputs\" must be a list of strings (\"node\" or \"node:k\")");
    for (size_t i = 0; outputs && i < json_array_size(outputs); i++) {
        if ((st = sl_graph_output(g, json_string_value(json_array_get(outputs, i)))) != SL_OK)
            return fail_graph(st, "outputs");
    }
    return SL_OK;
}

sl_status sl_graph_from_json(const char *json, sl_graph **out)
{
    json_t *root = NULL;
    sl_graph *g = NULL;
    if (!json || !out)
        return sl__last_error_set(SL_EMISUSE, "sl_graph_from_json: json or out is NULL");
    *out = NULL;
    sl_status st = load(json, &root);
    if (st != SL_OK)
        return st;
    if ((st = sl_graph_create(&g)) != SL_OK)
        goto fail;
    if ((st = read_graph(g, root)) != SL_OK)
        goto fail;
    json_decref(root);
    *out = g;
    return SL_OK;
fail:
    sl_graph_destroy(g);
    json_decref(root);
    return st;
}

/* ---- reading the pipeline options -------------------------------------------------------- */

/* One "pipeline" key (its name was checked) into *o. */
static sl_status read_option(sl_pipeline_options *o, const char *key, json_t *val)
{
    static const char *const where = "\"pipeline\"";
    const sl__option *opt = sl__option_find(key);
    char err[160];
    if (opt->has_auto && json_is_string(val)) {
        if (strcmp(json_string_value(val), "auto") != 0)
            return fail(SL_EINVAL, where,
                        "\"%s\" must be an integer or \"auto\", got a string (\"%s\")", key,
                        json_string_value(val));
        return sl__option_set(o, opt, opt->auto_v, err, sizeof err);
    }
    if (opt->str) { /* a string (cache_file) */
        if (!json_is_string(val))
            return fail(SL_EINVAL, where, "\"%s\" must be a string, got %s", key, kind_name(val));
        if (sl__option_set_str(o, opt, json_string_value(val), err, sizeof err) != SL_OK)
            return fail(SL_EINVAL, where, "%s", err);
        return SL_OK;
    }
    if (opt->names) { /* an enumeration: by name only */
        int64_t v;
        const char *name = json_is_string(val) ? json_string_value(val) : "";
        if (sl__option_parse(opt, name, &v, err, sizeof err) != SL_OK)
            return json_is_string(val) ? fail(SL_EINVAL, where, "%s", err)
                                       : fail(SL_EINVAL, where, "\"%s\" must be a string, got %s",
                                              key, kind_name(val));
        return sl__option_set(o, opt, v, err, sizeof err);
    }
    if (!json_is_integer(val))
        return fail(SL_EINVAL, where, "\"%s\" must be an integer%s, got %s", key,
                    opt->has_auto ? " or \"auto\"" : "", kind_name(val));
    if (sl__option_set(o, opt, (int64_t)json_integer_value(val), err, sizeof err) != SL_OK)
        return fail(SL_EINVAL, where, "%s", err);
    return SL_OK;
}

/* The "pipeline" keys, sl__options', into keys (NULL-terminated, for check_keys). */
static const char *const *option_keys(const char **keys, int cap)
{
    int n = 0;
    for (; n < sl__num_options && n < cap - 1; n++)
        keys[n] = sl__options[n].key;
    keys[n] = NULL;
    return keys;
}

sl_status sl_pipeline_options_from_json(const char *json, sl_pipeline_options *o)
{
    json_t *root = NULL;
    if (!json || !o)
        return sl__last_error_set(SL_EMISUSE, "sl_pipeline_options_from_json: json or o is NULL");
    sl_status st = load(json, &root);
    if (st != SL_OK)
        return st;
    json_t *pl = json_object_get(root, "pipeline");
    sl_pipeline_options tmp = *o; /* *o changes only when every key was good */
    const char *keys[32];
    if (pl && !json_is_object(pl))
        st = fail(SL_EINVAL, NULL, "\"pipeline\" must be an object, got %s", kind_name(pl));
    else if (pl)
        st = check_keys(pl, option_keys(keys, 32), "\"pipeline\"");
    if (st == SL_OK && pl) {
        const char *key;
        json_t *val;
        json_object_foreach(pl, key, val)
        {
            if ((st = read_option(&tmp, key, val)) != SL_OK)
                break;
        }
    }
    if (st == SL_OK)
        *o = tmp;
    json_decref(root);
    return st;
}

/* ---- writing ------------------------------------------------------------------------------ */

/* A growing text buffer; st records the first failure, after which puts do nothing. */
typedef struct text {
    char *p;
    size_t n, cap;
    sl_status st;
} text;

static void put(text *t, const char *fmt, ...) SL_PRINTF(2, 3);
static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    if (t->st != SL_OK)
        return;
    va_start(ap, fmt);
    int len = vsnprintf(t->p ? t->p + t->n : NULL, t->p ? t->cap - t->n : 0, fmt, ap);
    va_end(ap);
    if (len < 0) {
        t->st = SL_EINTERNAL;
        return;
    }
    if (t->p && t->n + (size_t)len < t->cap) {
        t->n += (size_t)len;
        return;
    }
    size_t cap = t->cap ? t->cap : 1024;
    while (cap <= t->n + (size_t)len)
        cap *= 2;
    char *p = sl__realloc(t->p, cap);
    if (!p) {
        t->st = SL_ENOMEM;
        return;
    }
    t->p = p;
    t->cap = cap;
    va_start(ap, fmt);
    vsnprintf(t->p + t->n, t->cap - t->n, fmt, ap);
    va_end(ap);
    t->n += (size_t)len;
}

/* A JSON string literal: quotes, backslashes and control characters escaped; other bytes
 * (UTF-8) as they are. */
static void put_str(text *t, const char *s)
{
    put(t, "\"");
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            put(t, "\\%c", *c);
        else if (*c == '\n')
            put(t, "\\n");
        else if (*c == '\t')
            put(t, "\\t");
        else if (*c < 0x20)
            put(t, "\\u%04x", *c);
        else
            put(t, "%c", *c);
    }
    put(t, "\"");
}

/* The shortest %g text that reads back as d, always with a '.' or exponent so that it reads
 * back as a float, not an integer. d is finite (checked by the caller). */
static void put_float(text *t, double d)
{
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    put(t, "%s%s", buf, strpbrk(buf, ".eE") ? "" : ".0");
}

static bool value_finite(const sl__value *v)
{
    if (v->kind == SL__V_FLOAT)
        return isfinite(v->f);
    for (int k = 0; v->kind == SL__V_FLOATS && k < v->n; k++) {
        if (!isfinite(v->floats[k]))
            return false;
    }
    return true;
}

static void put_value(text *t, const sl__value *v)
{
    switch (v->kind) {
    case SL__V_BOOL: put(t, "%s", v->b ? "true" : "false"); return;
    case SL__V_INT: put(t, "%lld", (long long)v->i); return;
    case SL__V_FLOAT: put_float(t, v->f); return;
    case SL__V_STRING: put_str(t, v->s); return;
    default: break;
    }
    put(t, "[");
    for (int k = 0; k < v->n; k++) {
        put(t, "%s", k ? ", " : "");
        if (v->kind == SL__V_INTS)
            put(t, "%lld", (long long)v->ints[k]);
        else if (v->kind == SL__V_FLOATS)
            put_float(t, v->floats[k]);
        else
            put_str(t, v->strs[k]);
    }
    put(t, "]");
}

/* The argument of n after `prev` in name order with (inputs) or without (!inputs) a source;
 * NULL when none is left. Quadratic, but nodes have a few dozen arguments at most and this
 * needs no allocation. Arguments never given a value (SL__V_NONE) are left out. */
static const sl__garg *next_arg(const sl__gnode *n, const sl__garg *prev, bool inputs)
{
    const sl__garg *best = NULL;
    for (int i = 0; i < n->nargs; i++) {
        const sl__garg *a = &n->args[i];
        if ((a->source != NULL) != inputs || (!inputs && a->value.kind == SL__V_NONE))
            continue;
        if (prev && strcmp(a->name, prev->name) <= 0)
            continue;
        if (!best || strcmp(a->name, best->name) < 0)
            best = a;
    }
    return best;
}

static void put_args(text *t, const sl__gnode *n, bool inputs)
{
    const sl__garg *a = next_arg(n, NULL, inputs);
    if (!a)
        return;
    put(t, ",\n      \"%s\": {", inputs ? "arg_inputs" : "args");
    for (bool first = true; a; a = next_arg(n, a, inputs), first = false) {
        put(t, "%s\n        ", first ? "" : ",");
        put_str(t, a->name);
        put(t, ": ");
        if (inputs)
            put_str(t, a->source);
        else
            put_value(t, &a->value);
    }
    put(t, "\n      }");
}

static void put_refs(text *t, char *const *refs, int n)
{
    put(t, "[");
    for (int i = 0; i < n; i++) {
        put(t, "%s", i ? ", " : "");
        put_str(t, refs[i]);
    }
    put(t, "]");
}

static void put_node(text *t, const sl__gnode *n)
{
    put(t, "    {\n      \"name\": ");
    put_str(t, n->name);
    put(t, ",\n      \"op\": ");
    put_str(t, n->op);
    if (n->device) { /* none given: left out, so a reader places it from the inputs again */
        put(t, ",\n      \"device\": ");
        put_str(t, n->device);
    }
    if (n->ninputs > 0) {
        put(t, ",\n      \"inputs\": ");
        put_refs(t, n->inputs, n->ninputs);
    }
    put_args(t, n, false);
    put_args(t, n, true);
    if (n->batch_like) { /* written as {"node": "name", "output": k} */
        const char *colon = strrchr(n->batch_like, ':');
        char name[512];
        long long k = 0;
        char *end = NULL;
        if (colon && colon[1])
            k = strtoll(colon + 1, &end, 10);
        if (!colon || !end || *end) /* "name" alone, or not name:k: the whole text names it */
            colon = NULL, k = 0;
        snprintf(name, sizeof name, "%.*s",
                 (int)(colon ? (size_t)(colon - n->batch_like) : strlen(n->batch_like)),
                 n->batch_like);
        put(t, ",\n      \"batch_like\": {\"node\": ");
        put_str(t, name);
        put(t, ", \"output\": %lld}", k);
    }
    put(t, "\n    }");
}

/* "key": "value" with the value escaped as JSON (jansson writes it). */
static void put_string_option(text *t, const char *sep, const char *key, const char *v)
{
    json_t *s = json_string(v);
    char *enc = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
    put(t, "%s    \"%s\": %s", sep, key, enc ? enc : "\"\"");
    free(enc);
    json_decref(s);
}

static void put_options(text *t, const sl_pipeline_options *o)
{
    sl_pipeline_options def;
    sl_pipeline_options_init(&def);
    put(t, "  \"pipeline\": {");
    const char *sep = "\n";
    for (int k = 0; k < sl__num_options; k++) {
        const sl__option *opt = &sl__options[k];
        int64_t v = sl__option_get(o, opt);
        if (opt->if_not_default && v == sl__option_get(&def, opt))
            continue;
        if (opt->str)
            put_string_option(t, sep, opt->key, sl__option_str(o, opt));
        else if (opt->has_auto && v == opt->auto_v)
            put(t, "%s    \"%s\": \"auto\"", sep, opt->key);
        else if (sl__option_name(opt, v))
            put(t, "%s    \"%s\": \"%s\"", sep, opt->key, sl__option_name(opt, v));
        else
            put(t, "%s    \"%s\": %lld", sep, opt->key, (long long)v);
        sep = ",\n";
    }
    put(t, "\n  },\n");
}

/* Fails when an argument holds a float JSON cannot write (inf, nan). */
static sl_status check_finite(const sl_graph *g)
{
    for (int i = 0; i < g->n; i++) {
        const sl__gnode *n = &g->nodes[i];
        for (int a = 0; a < n->nargs; a++) {
            if (!n->args[a].source && !value_finite(&n->args[a].value))
                return sl__last_error_set(SL_EINVAL,
                                          "spec: node \"%s\", argument \"%s\": infinity or NaN "
                                          "cannot be written as JSON",
                                          n->name, n->args[a].name);
        }
    }
    return SL_OK;
}

sl_status sl__spec_write(const sl_graph *g, const sl_pipeline_options *o, char **json)
{
    text t = {0};
    if (!g || !json)
        return sl__last_error_set(SL_EMISUSE, "sl_graph_to_json: graph or json is NULL");
    *json = NULL;
    sl_status st = check_finite(g);
    if (st != SL_OK)
        return st;
    put(&t, "{\n");
    if (o)
        put_options(&t, o);
    put(&t, "  \"nodes\": [");
    for (int i = 0; i < g->n; i++) {
        put(&t, "%s\n", i ? "," : "");
        put_node(&t, &g->nodes[i]);
    }
    put(&t, "%s],\n  \"outputs\": ", g->n ? "\n  " : "");
    put_refs(&t, g->outputs, g->noutputs);
    put(&t, "\n}\n");
    if (t.st != SL_OK) {
        sl__free(t.p);
        return sl__last_error_set(t.st, "sl_graph_to_json: %s",
                                  t.st == SL_ENOMEM ? "out of memory" : "formatting failed");
    }
    *json = t.p;
    return SL_OK;
}

sl_status sl_graph_to_json(const sl_graph *g, char **json)
{
    return sl__spec_write(g, NULL, json);
}
