/* python/sluice/_sluice/graph.c: the Graph type, an sl_graph built as fn.* is called.
 *
 * Exports slpy_graph_spec (sluice._sluice.Graph), graph_from_json() and options_from_json().
 * Graph.add_node checks the whole node with the build's own checks first (sl__node_check),
 * places it with the build's rule (sl__graph_place: its device, or the one its inputs imply,
 * which DataNode.device reports) and only then records it, so a failed call leaves the graph
 * as it was. Graph.check_node runs the same checks for a node of no graph yet (an operator
 * called outside a pipeline definition), placing it from its inputs' devices. Node names: the
 * caller's, or "<op>_<k>" (the first k that is free). Serialisation is the C library's own
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
        int rc = slpy_value_from_py(value, &v, err, sizeof err); /* check_new converted it */
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

/* Whether this build can run op where pl puts it (sl__stage_check; from_node: the producer that
 * implied a gpu placement); -1 with UnsupportedError raised in the build's words if not. */
static int check_stage(slpy_state *st, const sl_op_def *op, const char *name,
                       const sl__placement *pl, const char *from_node)
{
    char why[512];
    if (sl__stage_check(op, pl, from_node, why, sizeof why) == SL_OK)
        return 0;
    sl__error e;
    sl__error_set(&e, SL_EUNSUPPORTED, op->name, name, -1, -1, NULL, "%s", why);
    return slpy_raise_error(st, &e, false), -1;
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
    return check_stage(st, op, name, pl, from >= 0 ? self->g->nodes[from].name : NULL);
}

/* The build's checks of the node about to be added that need no other node (sl__node_check:
 * device name, input count, arguments), on a node assembled from the call, so a failed call
 * records nothing. Returns 0, or -1 with the error raised in the build's words
 * (ArgumentTypeError for what was given of the wrong kind, InvalidArgumentError for values). */
static int check_new(slpy_state *st, const sl_op_def *op, const char *name, const char *device,
                     Py_ssize_t ninputs, PyObject *args, PyObject *arg_inputs)
{
    Py_ssize_t cap = PyDict_Size(args) + PyDict_Size(arg_inputs);
    sl__garg *ga = PyMem_Calloc((size_t)(cap ? cap : 1), sizeof(sl__garg));
    if (!ga)
        return PyErr_NoMemory(), -1;
    sl__gnode n = {.name = (char *)name,
                   .op = (char *)op->name,
                   .device = (char *)device,
                   .ninputs = (int)ninputs,
                   .args = ga};
    sl__error e;
    bool type_error = false;
    int rc = 0;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (rc == 0 && PyDict_Next(args, &pos, &key, &value)) {
        sl__garg *a = &ga[n.nargs++];
        if (!(a->name = (char *)PyUnicode_AsUTF8(key)))
            rc = -1;
        else if (sl_op_arg_index(op, a->name) < 0)
            continue; /* sl__node_check names it before looking at any value */
        char err[512];
        int conv = rc ? 0 : slpy_value_from_py(value, &a->value, err, sizeof err);
        if (conv == -2)
            rc = -1;
        else if (conv < 0) {
            sl__error_set(&e, SL_EINVAL, op->name, name, -1, -1, NULL, "argument \"%s\": %s",
                          a->name, err);
            rc = -1;
            slpy_raise_error(st, &e, true);
        }
    }
    pos = 0;
    while (rc == 0 && PyDict_Next(arg_inputs, &pos, &key, &value)) {
        sl__garg *a = &ga[n.nargs++];
        a->source = (char *)""; /* an input: its reference is resolved by the build */
        if (!(a->name = (char *)PyUnicode_AsUTF8(key)))
            rc = -1;
    }
    if (rc == 0 && sl__node_check(&n, op, NULL, &e, &type_error) != SL_OK) {
        slpy_raise_error(st, &e, type_error);
        rc = -1;
    }
    for (int k = 0; k < n.nargs; k++)
        sl__value_fini(&ga[k].value);
    PyMem_Free(ga);
    return rc;
}

/* Longest node name + 2 (a NUL and room to tell a longer one). */
#define SLPY_NODE_NAME_MAX 256

static const sl_op_def *find_op(slpy_state *st, const char *opname)
{
    const sl_op_def *op = sl_registry_find(opname);
    if (!op)
        PyErr_Format(st->errors[SL_ENOTFOUND], "unknown operator \"%s\"", opname);
    return op;
}

/* A node name a graph takes: non-empty, no ':' (it separates the output index in references),
 * not too long. Returns 0, or -1 with InvalidArgumentError raised. */
static int check_name(slpy_state *st, const char *opname, const char *name)
{
    if (!strchr(name, ':') && name[0] && strlen(name) < SLPY_NODE_NAME_MAX - 1)
        return 0;
    PyErr_Format(st->errors[SL_EINVAL],
                 "%s: node name \"%s\" must be non-empty, without ':', and shorter than %d "
                 "characters",
                 opname, name, SLPY_NODE_NAME_MAX - 1);
    return -1;
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
    const sl_op_def *op = find_op(st, opname);
    char buf[SLPY_NODE_NAME_MAX];
    if (!op || (name && check_name(st, opname, name) < 0))
        return NULL;
    if (name && sl__graph_find(g, name))
        return PyErr_Format(st->errors[SL_EINVAL],
                            "%s: a node named \"%s\" already exists in this pipeline", opname,
                            name);
    if (!name)
        auto_name(g, opname, buf, sizeof buf);
    else
        snprintf(buf, sizeof buf, "%s", name);
    sl__placement pl;
    if (check_new(st, op, buf, device, PyList_GET_SIZE(inputs), cargs, arg_inputs) < 0 ||
        place_new((slpy_graph *)self, op, buf, device, inputs, &pl) < 0)
        return NULL;
    sl_status rc = sl_graph_add(g, opname, buf, device);
    if (rc != SL_OK)
        return raise_graph(self, rc);
    ((slpy_graph *)self)->placed[g->n - 1] = (signed char)pl.stage; /* room: place_new */
    if (add_inputs(self, buf, inputs) < 0 || add_args(self, buf, cargs, arg_inputs) < 0)
        return NULL; /* only on out of memory: the node stays, the build reports it */
    return Py_BuildValue("(ss)", buf, sl__stage_name(pl.stage));
}

/* The stages of a detached node's inputs, from their devices' names; -1 with ValueError for a
 * name that is no stage (a caller's mistake: the names come from earlier placements). */
static int input_stages(PyObject *devices, sl__stage *in)
{
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(devices); k++) {
        const char *d = PyUnicode_AsUTF8(PyList_GET_ITEM(devices, k));
        if (!d)
            return -1;
        if (!sl__stage_parse(d, &in[k]))
            return PyErr_Format(PyExc_ValueError, "input %zd: \"%s\" is not a device", k, d), -1;
    }
    return 0;
}

/* Graph.check_node(op, name, device, inputs, input_devices, args, arg_inputs) -> where it runs
 * (a class method). The checks of add_node for a node that belongs to no graph yet (an
 * operator called outside a pipeline definition): the same schema check, and the placement
 * rule applied to the devices of its inputs (named by `inputs`, for messages) instead of to
 * nodes of a graph; so the node fails now, in the words add_node would use, or never. */
static PyObject *graph_check_node(PyObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"op",   "name",       "device", "inputs", "input_devices",
                             "args", "arg_inputs", NULL};
    const char *opname, *name, *device = NULL;
    PyObject *inputs, *devices, *cargs, *arg_inputs;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "ssz|O!O!O!O!:check_node", kwlist, &opname,
                                     &name, &device, &PyList_Type, &inputs, &PyList_Type, &devices,
                                     &PyDict_Type, &cargs, &PyDict_Type, &arg_inputs))
        return NULL;
    slpy_state *st = slpy_state_of_type((PyTypeObject *)type);
    const sl_op_def *op = find_op(st, opname);
    Py_ssize_t n = PyList_GET_SIZE(inputs);
    if (!op || check_name(st, opname, name) < 0)
        return NULL;
    if (PyList_GET_SIZE(devices) != n)
        return PyErr_Format(PyExc_ValueError, "check_node: %zd inputs but %zd devices", n,
                            PyList_GET_SIZE(devices));
    if (check_new(st, op, name, device, n, cargs, arg_inputs) < 0)
        return NULL;
    sl__stage *in = PyMem_Calloc((size_t)(n ? n : 1), sizeof(sl__stage));
    if (!in)
        return PyErr_NoMemory();
    sl__placement pl;
    int rc = input_stages(devices, in);
    if (rc == 0 && !sl__stage_place(device, in, (int)n, &pl)) /* check_new saw device */
        rc = (PyErr_Format(PyExc_ValueError, "unknown device \"%s\"", device), -1);
    PyMem_Free(in);
    if (rc < 0)
        return NULL;
    const char *from = pl.from >= 0 ? PyUnicode_AsUTF8(PyList_GET_ITEM(inputs, pl.from)) : NULL;
    if ((pl.from >= 0 && !from) || check_stage(st, op, name, &pl, from) < 0)
        return NULL;
    return PyUnicode_FromString(sl__stage_name(pl.stage));
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

int slpy_options_from_dict(PyObject *d, sl_pipeline_options *o)
{
    sl_pipeline_options_init(o);
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(d, &pos, &key, &value)) {
        const char *name = PyUnicode_AsUTF8(key);
        if (!name)
            return -1;
        const sl__option *opt = sl__option_find(name);
        if (!opt)
            return PyErr_Format(PyExc_TypeError, "unknown pipeline option \"%s\"", name), -1;
        if (value == Py_None)
            continue;
        char err[160];
        if (opt->str) { /* a string (cache_file): a str or an os.PathLike */
            PyObject *path = PyOS_FSPath(value);
            PyObject *b = path && PyUnicode_Check(path) ? PyUnicode_EncodeFSDefault(path) : NULL;
            if (path && !PyUnicode_Check(path) && !PyBytes_Check(path))
                PyErr_Format(PyExc_TypeError, "pipeline option \"%s\" must be a path, got %s", name,
                             Py_TYPE(value)->tp_name);
            const char *s = b                             ? PyBytes_AsString(b)
                            : path && PyBytes_Check(path) ? PyBytes_AsString(path)
                                                          : NULL;
            int rc = !s ? -1
                     : sl__option_set_str(o, opt, s, err, sizeof err) != SL_OK
                         ? (PyErr_Format(PyExc_ValueError, "%s", err), -1)
                         : 0;
            Py_XDECREF(b);
            Py_XDECREF(path);
            if (rc < 0)
                return -1;
            continue;
        }
        if (opt->names) { /* an enumeration: by name */
            const char *s = PyUnicode_Check(value) ? PyUnicode_AsUTF8(value) : NULL;
            if (!s)
                return PyErr_Occurred() ? -1
                                        : (PyErr_Format(PyExc_TypeError,
                                                        "pipeline option \"%s\" must be a "
                                                        "string, got %s",
                                                        name, Py_TYPE(value)->tp_name),
                                           -1);
            int64_t v;
            if (sl__option_parse(opt, s, &v, err, sizeof err) != SL_OK)
                return PyErr_Format(PyExc_ValueError, "%s", err), -1;
            if (sl__option_set(o, opt, v, err, sizeof err) != SL_OK)
                return PyErr_Format(PyExc_ValueError, "%s", err), -1;
            continue;
        }
        if (opt->has_auto && PyUnicode_Check(value)) { /* a number that may be "auto" */
            const char *s = PyUnicode_AsUTF8(value);
            if (!s)
                return -1;
            if (strcmp(s, "auto") != 0)
                return PyErr_Format(PyExc_ValueError,
                                    "pipeline option \"%s\" must be an int or \"auto\", got "
                                    "\"%s\"",
                                    name, s),
                       -1;
            if (sl__option_set(o, opt, opt->auto_v, err, sizeof err) != SL_OK)
                return PyErr_Format(PyExc_ValueError, "%s", err), -1;
            continue;
        }
        long long x = PyLong_AsLongLong(value);
        if (x == -1 && PyErr_Occurred())
            return -1;
        if (sl__option_set(o, opt, x, err, sizeof err) != SL_OK)
            return PyErr_Format(PyExc_OverflowError, "%s", err), -1;
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
    if (opts != Py_None && (!PyDict_Check(opts) || slpy_options_from_dict(opts, &o) < 0))
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
    for (int k = 0; d && k < sl__num_options; k++) {
        const sl__option *opt = &sl__options[k];
        long long x = sl__option_get(&o, opt);
        PyObject *v = opt->str ? PyUnicode_DecodeFSDefault(sl__option_str(&o, opt))
                      : opt->names && sl__option_name(opt, x)
                          ? PyUnicode_FromString(sl__option_name(opt, x))
                      : opt->has_auto && x == opt->auto_v && strcmp(opt->key, "device_id") != 0
                          ? PyUnicode_FromString("auto")
                      : strcmp(opt->key, "fuse_samples") == 0 ? PyBool_FromLong(x != 0)
                                                              : PyLong_FromLongLong(x);
        if (!v || PyDict_SetItemString(d, opt->key, v) < 0)
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
    {"check_node", SLPY_CFUNC(graph_check_node), METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "check_node(op, name, device, inputs, input_devices, args, arg_inputs) -> device\n\nThe "
     "checks of add_node for a node of no graph (a class method): the schema, and the "
     "placement from its inputs' devices; returns where it runs."},
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
