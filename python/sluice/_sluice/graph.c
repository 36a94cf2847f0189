/* python/sluice/_sluice/graph.c: the Graph type, an sl_graph built as fn.* is called.
 *
 * Exports slpy_graph_spec (sluice._sluice.Graph), graph_from_json() and options_from_json().
 * Graph.add_node resolves deprecated argument names (slpy_resolve_aliases), checks the whole
 * node against the operator's schema (slpy_check_node), places it with the build's rule
 * (sl__graph_place: its device, or the one its inputs imply, which DataNode.device reports) and
 * only then records it, so a failed call leaves the graph as it was. Node names: the caller's,
 * or "<op>_<k>" (the first k that is free). Serialisation is the C library's own
 * spec writer, so Pipeline.serialize() is exactly what `sluice run` reads.
 * Invariant: `g` is never NULL after construction; the object is used by one thread at a time
 * (the GIL is held throughout: nothing here blocks).
 */
#include "sluice_py.h"

static PyObject *graph_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, ":Graph", kwlist))
        return NULL;
    slpy_graph *self = (slpy_graph *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    if (sl_graph_create(&self->g) != SL_OK) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static void graph_dealloc(slpy_graph *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyMem_Free(self->placed);
    sl_graph_destroy(self->g);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyObject *raise_graph(PyObject *self, sl_status code)
{
    return slpy_raise_last(slpy_state_of(self), code);
}

/* Stores a value through the public setters (which copy it), as the spec reader does. */
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

/* A free "<op>_<k>" name into buf. */
static void auto_name(const sl_graph *g, const char *op, char *buf, size_t cap)
{
    for (int k = g->n;; k++) {
        snprintf(buf, cap, "%s_%d", op, k);
        if (!sl__graph_find(g, buf))
            return;
    }
}

static int add_args(PyObject *self, const char *node, PyObject *args, PyObject *arg_inputs)
{
    sl_graph *g = ((slpy_graph *)self)->g;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(args, &pos, &key, &value)) {
        sl__value v;
        char err[256];
        int rc = slpy_value_from_py(value, &v, err, sizeof err); /* checked: cannot fail */
        if (rc < 0)
            return rc == -2 ? -1 : (PyErr_SetString(PyExc_ValueError, err), -1);
        sl_status st = set_arg(g, node, PyUnicode_AsUTF8(key), &v);
        sl__value_fini(&v);
        if (st != SL_OK)
            return raise_graph(self, st), -1;
    }
    pos = 0;
    while (PyDict_Next(arg_inputs, &pos, &key, &value)) {
        const char *ref = PyUnicode_AsUTF8(value);
        if (!ref)
            return -1;
        sl_status st = sl_graph_arg_input(g, node, PyUnicode_AsUTF8(key), ref);
        if (st != SL_OK)
            return raise_graph(self, st), -1;
    }
    return 0;
}

static int add_inputs(PyObject *self, const char *node, PyObject *inputs)
{
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(inputs); k++) {
        const char *ref = PyUnicode_AsUTF8(PyList_GET_ITEM(inputs, k));
        if (!ref)
            return -1;
        sl_status st = sl_graph_input(((slpy_graph *)self)->g, node, ref);
        if (st != SL_OK)
            return raise_graph(self, st), -1;
    }
    return 0;
}

/* Makes room in the placement cache for the nodes of g and one more, the new entries not
 * placed yet (a graph read from JSON starts with none: its nodes are placed on first use). */
static int reserve_placed(slpy_graph *self)
{
    int need = self->g->n + 1;
    if (need <= self->cap)
        return 0;
    int cap = need > 2 * self->cap ? need : 2 * self->cap;
    signed char *p = PyMem_Realloc(self->placed, (size_t)cap);
    if (!p)
        return PyErr_NoMemory(), -1;
    memset(p + self->cap, SL__PLACED_UNKNOWN, (size_t)(cap - self->cap));
    self->placed = p;
    self->cap = cap;
    return 0;
}

/* Places the node about to be added (sl__graph_place: the build's rule) and checks that it
 * can run there; on failure raises the error in the build's words and returns -1. */
static int place_new(slpy_graph *self, const sl_op_def *op, const char *name, const char *device,
                     PyObject *inputs, sl__placement *pl)
{
    slpy_state *st = slpy_state_of((PyObject *)self);
    Py_ssize_t n = PyList_GET_SIZE(inputs);
    const char **refs = PyMem_Calloc((size_t)(n ? n : 1), sizeof(char *));
    if (!refs)
        return PyErr_NoMemory(), -1;
    int rc = reserve_placed(self);
    for (Py_ssize_t k = 0; rc == 0 && k < n; k++) {
        refs[k] = PyUnicode_AsUTF8(PyList_GET_ITEM(inputs, k)); /* lives as long as the list */
        rc = refs[k] ? 0 : -1;
    }
    int from = -1;
    char err[512];
    sl_status code = SL_OK;
    if (rc == 0)
        code = sl__graph_place(self->g, device, (char *const *)refs, (int)n, self->placed, pl,
                               &from, err, sizeof err);
    PyMem_Free(refs);
    if (rc < 0)
        return -1;
    if (code != SL_OK) {
        sl__error e;
        sl__error_set(&e, code, op->name, name, -1, -1, NULL, "%s", err);
        return slpy_raise_error(st, &e, false), -1;
    }
    return slpy_check_placement(st, op, name, pl, from >= 0 ? self->g->nodes[from].name : NULL);
}

/* Graph.add_node(op, name, device, inputs, args, arg_inputs) -> (the node's name, where it
 * runs: its device, or the one its inputs imply). */
static PyObject *graph_add_node(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"op", "name", "device", "inputs", "args", "arg_inputs", NULL};
    const char *opname, *name = NULL, *device = NULL;
    PyObject *inputs, *cargs, *arg_inputs;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "szzO!O!O!:add_node", kwlist, &opname, &name,
                                     &device, &PyList_Type, &inputs, &PyDict_Type, &cargs,
                                     &PyDict_Type, &arg_inputs))
        return NULL;
    slpy_state *st = slpy_state_of(self);
    sl_graph *g = ((slpy_graph *)self)->g;
    const sl_op_def *op = sl_registry_find(opname);
    if (!op)
        return PyErr_Format(st->errors[SL_ENOTFOUND], "unknown operator \"%s\"", opname);
    char buf[256];
    if (name && (strchr(name, ':') || !name[0] || strlen(name) >= sizeof buf - 1))
        return PyErr_Format(st->errors[SL_EINVAL],
                            "%s: node name \"%s\" must be non-empty, without ':', and shorter "
                            "than %d characters",
                            opname, name, (int)sizeof buf - 1);
    if (name && sl__graph_find(g, name))
        return PyErr_Format(st->errors[SL_EINVAL],
                            "%s: a node named \"%s\" already exists in this pipeline", opname,
                            name);
    if (!name)
        auto_name(g, opname, buf, sizeof buf);
    else
        snprintf(buf, sizeof buf, "%s", name);
    sl__placement pl;
    if (slpy_resolve_aliases(st, op, buf, &cargs, &arg_inputs) < 0) /* new references */
        return NULL;
    PyObject *r = NULL;
    if (slpy_check_node(st, op, buf, device, PyList_GET_SIZE(inputs), cargs, arg_inputs) < 0 ||
        place_new((slpy_graph *)self, op, buf, device, inputs, &pl) < 0)
        goto done;
    sl_status rc = sl_graph_add(g, opname, buf, device);
    if (rc != SL_OK) {
        raise_graph(self, rc);
        goto done;
    }
    ((slpy_graph *)self)->placed[g->n - 1] = (signed char)pl.stage; /* room: place_new */
    if (add_inputs(self, buf, inputs) < 0 || add_args(self, buf, cargs, arg_inputs) < 0)
        goto done; /* only on out of memory: the node stays, the build reports it */
    r = Py_BuildValue("(ss)", buf, sl__stage_name(pl.stage));
done:
    Py_DECREF(cargs);
    Py_DECREF(arg_inputs);
    return r;
}

static PyObject *graph_output(PyObject *self, PyObject *ref)
{
    const char *s = PyUnicode_AsUTF8(ref);
    if (!s)
        return NULL;
    sl_status st = sl_graph_output(((slpy_graph *)self)->g, s);
    if (st != SL_OK)
        return raise_graph(self, st);
    Py_RETURN_NONE;
}

/* The pipeline options as Python sees them: key, field, whether the field is an int64_t (else
 * an int). One table for reading a dict and for writing one. */
static const struct {
    const char *key;
    size_t off;
    bool wide;
} option_fields[] = {
    {"batch_size", offsetof(sl_pipeline_options, batch_size), false},
    {"num_threads", offsetof(sl_pipeline_options, num_threads), false},
    {"prefetch_queue_depth", offsetof(sl_pipeline_options, prefetch_queue_depth), false},
    {"seed", offsetof(sl_pipeline_options, seed), true},
    {"device_id", offsetof(sl_pipeline_options, device_id), false},
    {"fuse_samples", offsetof(sl_pipeline_options, fuse_samples), false},
    {"cpu_queue_depth", offsetof(sl_pipeline_options, cpu_queue_depth), false},
    {"gpu_queue_depth", offsetof(sl_pipeline_options, gpu_queue_depth), false},
    {"max_held_bytes", offsetof(sl_pipeline_options, max_held_bytes), true},
    {"max_sample_bytes", offsetof(sl_pipeline_options, max_sample_bytes), true},
};
#define NUM_OPTION_FIELDS ((int)(sizeof option_fields / sizeof option_fields[0]))

/* Reads the options dict (missing keys keep the defaults). */
static int options_from_dict(PyObject *d, sl_pipeline_options *o)
{
    sl_pipeline_options_init(o);
    for (int k = 0; k < NUM_OPTION_FIELDS; k++) {
        PyObject *v = PyDict_GetItemString(d, option_fields[k].key);
        if (!v || v == Py_None)
            continue;
        long long x = PyLong_AsLongLong(v);
        if (x == -1 && PyErr_Occurred())
            return -1;
        char *field = (char *)o + option_fields[k].off;
        if (option_fields[k].wide) {
            *(int64_t *)(void *)field = x;
            continue;
        }
        if (x < INT_MIN || x > INT_MAX)
            return PyErr_Format(PyExc_OverflowError, "%s is out of range", option_fields[k].key),
                   -1;
        *(int *)(void *)field = (int)x;
    }
    return 0;
}

/* Graph.to_json(options=None) -> str: the JSON spec (with a "pipeline" object when given). */
static PyObject *graph_to_json(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"options", NULL};
    PyObject *opts = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:to_json", kwlist, &opts))
        return NULL;
    sl_pipeline_options o;
    if (opts != Py_None && (!PyDict_Check(opts) || options_from_dict(opts, &o) < 0))
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_TypeError, "options must be a dict");
    char *json = NULL;
    sl_status st = sl__spec_write(((slpy_graph *)self)->g, opts != Py_None ? &o : NULL, &json);
    if (st != SL_OK)
        return raise_graph(self, st);
    PyObject *s = PyUnicode_FromString(json);
    sl__free(json);
    return s;
}

static PyObject *graph_has_node(PyObject *self, PyObject *name)
{
    const char *s = PyUnicode_AsUTF8(name);
    if (!s)
        return NULL;
    return PyBool_FromLong(sl__graph_find(((slpy_graph *)self)->g, s) != NULL);
}

static PyObject *graph_outputs(PyObject *self, void *closure)
{
    const sl_graph *g = ((slpy_graph *)self)->g;
    PyObject *l = PyList_New(g->noutputs);
    for (int i = 0; l && i < g->noutputs; i++) {
        PyObject *s = PyUnicode_FromString(g->outputs[i]);
        if (!s) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, s);
    }
    return l;
}

/* [(name, op, device), ...] in the order the nodes were added. */
static PyObject *graph_nodes(PyObject *self, void *closure)
{
    const sl_graph *g = ((slpy_graph *)self)->g;
    PyObject *l = PyList_New(g->n);
    for (int i = 0; l && i < g->n; i++) {
        const sl__gnode *n = &g->nodes[i];
        PyObject *t = Py_BuildValue("(sss)", n->name, n->op, n->device);
        if (!t) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, t);
    }
    return l;
}

PyObject *slpy_graph_from_json(PyObject *module, PyObject *text)
{
    slpy_state *st = PyModule_GetState(module);
    const char *s = PyUnicode_AsUTF8(text);
    if (!s)
        return NULL;
    slpy_graph *self = (slpy_graph *)st->graph_type->tp_alloc(st->graph_type, 0);
    if (!self)
        return NULL;
    sl_status rc = sl_graph_from_json(s, &self->g);
    if (rc != SL_OK) {
        Py_DECREF(self);
        return slpy_raise_last(st, rc);
    }
    return (PyObject *)self;
}

PyObject *slpy_options_from_json(PyObject *module, PyObject *text)
{
    slpy_state *st = PyModule_GetState(module);
    const char *s = PyUnicode_AsUTF8(text);
    if (!s)
        return NULL;
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    sl_status rc = sl_pipeline_options_from_json(s, &o);
    if (rc != SL_OK)
        return slpy_raise_last(st, rc);
    PyObject *d = PyDict_New();
    for (int k = 0; d && k < NUM_OPTION_FIELDS; k++) {
        const char *field = (const char *)&o + option_fields[k].off;
        long long x = option_fields[k].wide ? *(const int64_t *)(const void *)field
                                            : *(const int *)(const void *)field;
        PyObject *v = strcmp(option_fields[k].key, "fuse_samples") == 0 ? PyBool_FromLong(x != 0)
                                                                        : PyLong_FromLongLong(x);
        if (!v || PyDict_SetItemString(d, option_fields[k].key, v) < 0)
            Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

static PyMethodDef graph_methods[] = {
    {"add_node", SLPY_CFUNC(graph_add_node), METH_VARARGS | METH_KEYWORDS,
     "add_node(op, name, device, inputs, args, arg_inputs) -> (name, device)\n\nChecks the "
     "node against the operator's schema and places it as the build will (device None: from "
     "its inputs), then records it; returns its name and where it runs."},
    {"output", graph_output, METH_O, "output(ref): appends a pipeline output \"node[:k]\"."},
    {"to_json", SLPY_CFUNC(graph_to_json), METH_VARARGS | METH_KEYWORDS,
     "to_json(options=None) -> str: the JSON pipeline spec."},
    {"has_node", graph_has_node, METH_O, "has_node(name) -> bool"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef graph_getset[] = {
    {"outputs", graph_outputs, NULL, "The pipeline outputs, as references.", NULL},
    {"nodes", graph_nodes, NULL, "[(name, op, device)] in the order they were added.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot graph_slots[] = {
    {Py_tp_new, graph_new},
    {Py_tp_dealloc, graph_dealloc},
    {Py_tp_methods, graph_methods},
    {Py_tp_getset, graph_getset},
    {Py_tp_doc, "Graph(): operator nodes recorded as a pipeline is defined (an sl_graph)."},
    {0, NULL}};

PyType_Spec slpy_graph_spec = {
    .name = "sluice._sluice.Graph",
    .basicsize = sizeof(slpy_graph),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = graph_slots,
};
