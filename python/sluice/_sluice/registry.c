/* python/sluice/_sluice/registry.c: the operator registry as Python data.
 *
 * Exports slpy_registry (registry() -> list of dicts, from which sluice.fn, sluice.ops and
 * their docs are generated). The checks of a node where fn.* is called are the build's own C
 * functions (sl__node_check, sl__graph_place, sl__stage_check), called from graph.c.
 */
#include "sluice_py.h"

/* ---- registry() ---------------------------------------------------------------------------- */

static int set_item(PyObject *d, const char *key, PyObject *v)
{
    if (!v)
        return -1;
    int rc = PyDict_SetItemString(d, key, v);
    Py_DECREF(v);
    return rc;
}

static PyObject *str_or_none(const char *s)
{
    return s ? PyUnicode_FromString(s) : Py_NewRef(Py_None);
}

/* The inputs or outputs of an operator as [{name, doc, when_inputs, when_arg, when_arg_unless,
 * when_arg_range}]; when: the outputs' conditions (sl_op_def.output_when) or NULL;
 * when_arg_range: (lo, hi) for an int argument's range (in_range), else None. */
static PyObject *io_list(const sl_io_def *ios, const sl_output_when *when, int n)
{
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++) {
        PyObject *range = when && when[i].in_range
                              ? Py_BuildValue("(LL)", (long long)when[i].lo, (long long)when[i].hi)
                              : Py_NewRef(Py_None);
        PyObject *t = range ? Py_BuildValue("{s:s,s:s,s:i,s:z,s:z,s:N}", "name",
                                            ios[i].name ? ios[i].name : "", "doc",
                                            ios[i].doc ? ios[i].doc : "", "when_inputs",
                                            when ? when[i].inputs : 0, "when_arg",
                                            when ? when[i].arg : NULL, "when_arg_unless",
                                            when ? when[i].unless : NULL, "when_arg_range", range)
                            : NULL;
        if (!t) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, t);
    }
    return l;
}

/* The default as the Python value its JSON text denotes (None when there is none). */
static PyObject *default_value(const sl_arg_def *a)
{
    if (!a->def)
        Py_RETURN_NONE;
    sl__value v;
    char err[256];
    if (sl__value_parse_json(a->def, &v, err, sizeof err) != SL_OK)
        Py_RETURN_NONE; /* a bug in the operator file; the registry-wide C test catches it */
    PyObject *o = slpy_value_to_py(&v);
    sl__value_fini(&v);
    return o;
}

static PyObject *choices(const char *c)
{
    if (!c)
        Py_RETURN_NONE;
    PyObject *s = PyUnicode_FromString(c), *sep = PyUnicode_FromString("|");
    PyObject *l = s && sep ? PyUnicode_Split(s, sep, -1) : NULL;
    Py_XDECREF(s);
    Py_XDECREF(sep);
    return l;
}

static PyObject *arg_dict(const sl_arg_def *a)
{
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    bool range = a->flags & SL_ARG_RANGE;
    if (set_item(d, "name", PyUnicode_FromString(a->name)) < 0 ||
        set_item(d, "type", PyUnicode_FromString(sl_arg_type_name(a->type))) < 0 ||
        set_item(d, "default", default_value(a)) < 0 ||
        set_item(d, "default_json", str_or_none(a->def)) < 0 ||
        set_item(d, "required", PyBool_FromLong(!a->def && !(a->flags & SL_ARG_OPTIONAL))) < 0 ||
        set_item(d, "optional", PyBool_FromLong(!!(a->flags & SL_ARG_OPTIONAL))) < 0 ||
        set_item(d, "doc", PyUnicode_FromString(a->doc ? a->doc : "")) < 0 ||
        set_item(d, "per_sample", PyBool_FromLong(!!(a->flags & SL_ARG_TENSOR))) < 0 ||
        set_item(d, "scalar_ok", PyBool_FromLong(!!(a->flags & SL_ARG_SCALAR_OK))) < 0 ||
        set_item(d, "auto",
                 str_or_none((a->flags & SL_ARG_AUTO_RANK)         ? "rank"
                             : (a->flags & SL_ARG_AUTO_WORLD_SIZE) ? "world_size"
                                                                   : NULL)) < 0 ||
        set_item(d, "range", range ? Py_BuildValue("(dd)", a->min, a->max) : Py_NewRef(Py_None)) <
            0 ||
        set_item(d, "min_len", PyLong_FromLong(a->min_len)) < 0 ||
        set_item(d, "max_len", PyLong_FromLong(a->max_len)) < 0 ||
        set_item(d, "choices", choices(a->choices)) < 0) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *names_of_bits(unsigned bits, const char *const *names, int n)
{
    PyObject *l = PyList_New(0);
    for (int i = 0; l && i < n; i++) {
        if (!(bits & (1u << i)))
            continue;
        PyObject *s = PyUnicode_FromString(names[i]);
        if (!s || PyList_Append(l, s) < 0)
            Py_CLEAR(l);
        Py_XDECREF(s);
    }
    return l;
}

static PyObject *op_dict(const sl_op_def *op)
{
    static const char *const devices[] = {"cpu", "mixed", "gpu"};
    static const char *const flags[] = {"source",   "stateful",   "random",   "side_effects",
                                        "transfer", "samplewise", "metadata", "callback"};
    PyObject *d = PyDict_New(), *args = PyList_New(sl_op_num_args(op));
    if (!d || !args)
        goto fail;
    for (int i = 0; i < sl_op_num_args(op); i++) {
        PyObject *a = arg_dict(sl_op_arg(op, i));
        if (!a)
            goto fail;
        PyList_SET_ITEM(args, i, a);
    }
    if (set_item(d, "name", PyUnicode_FromString(op->name)) < 0 ||
        set_item(d, "doc", PyUnicode_FromString(op->doc ? op->doc : "")) < 0 ||
        set_item(d, "inputs", io_list(op->inputs, NULL, sl_op_num_input_defs(op))) < 0 ||
        set_item(d, "min_inputs", PyLong_FromLong(op->min_inputs)) < 0 ||
        set_item(d, "max_inputs",
                 op->max_inputs == SL_INPUTS_ANY ? Py_NewRef(Py_None)
                                                 : PyLong_FromLong(op->max_inputs)) < 0 ||
        set_item(d, "aliases", slpy_alias_list(op)) < 0 ||
        set_item(d, "outputs", io_list(op->outputs, op->output_when, op->num_outputs)) < 0 ||
        set_item(d, "devices", names_of_bits(op->devices, devices, 3)) < 0 ||
        set_item(d, "flags", names_of_bits(op->flags, flags, 8)) < 0 ||
        set_item(d, "num_outputs_arg", str_or_none(op->num_outputs_arg)) < 0 ||
        set_item(d, "args", Py_NewRef(args)) < 0)
        goto fail;
    Py_DECREF(args);
    return d;
fail:
    Py_XDECREF(args);
    Py_XDECREF(d);
    return NULL;
}

PyObject *slpy_registry(PyObject *module, PyObject *unused)
{
    int n = sl_registry_count();
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++) {
        PyObject *d = op_dict(sl_registry_get(i));
        if (!d) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, d);
    }
    return l;
}
