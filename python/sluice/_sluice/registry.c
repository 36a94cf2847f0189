/* python/sluice/_sluice/registry.c: the operator registry as Python data, and call-site checks.
 *
 * Exports slpy_registry (registry() -> list of dicts, from which sluice.fn, sluice.ops and
 * their docs are generated), slpy_check_node and slpy_check_placement (what fn.* runs before
 * recording a node). The checks are the build's own (src/graph/plan.c: device, input count,
 * unknown argument, per-sample argument, missing argument; sl__value_coerce for every value;
 * sl__stage_check for where the node runs) with the same words, so an error found where the
 * operator is called reads exactly like the one the build, the JSON spec or the CLI reports.
 * The build checks everything again.
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

static PyObject *io_list(const sl_io_def *ios, int n)
{
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++) {
        PyObject *t = Py_BuildValue("{s:s,s:s}", "name", ios[i].name ? ios[i].name : "", "doc",
                                    ios[i].doc ? ios[i].doc : "");
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
    static const char *const flags[] = {"source", "stateful", "random", "side_effects"};
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
        set_item(d, "inputs", io_list(op->inputs, sl_op_num_input_defs(op))) < 0 ||
        set_item(d, "min_inputs", PyLong_FromLong(op->min_inputs)) < 0 ||
        set_item(d, "max_inputs",
                 op->max_inputs == SL_INPUTS_ANY ? Py_NewRef(Py_None)
                                                 : PyLong_FromLong(op->max_inputs)) < 0 ||
        set_item(d, "aliases", slpy_alias_list(op)) < 0 ||
        set_item(d, "outputs", io_list(op->outputs, op->num_outputs)) < 0 ||
        set_item(d, "devices", names_of_bits(op->devices, devices, 3)) < 0 ||
        set_item(d, "flags", names_of_bits(op->flags, flags, 4)) < 0 ||
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

/* ---- call-site checks ------------------------------------------------------------------------ */

typedef struct check {
    slpy_state *st;
    const sl_op_def *op;
    const char *node;
} check;

static int fail(const check *c, sl_status code, bool as_type, const char *fmt, ...) SL_PRINTF(4, 5);
static int fail(const check *c, sl_status code, bool as_type, const char *fmt, ...)
{
    sl__error e;
    va_list ap;
    va_start(ap, fmt);
    sl__error_setv(&e, code, c->op->name, c->node, -1, -1, NULL, fmt, ap);
    va_end(ap);
    slpy_raise_error(c->st, &e, as_type);
    return -1;
}

static int check_ninputs(const check *c, Py_ssize_t n)
{
    char why[128];
    if (sl__op_check_ninputs(c->op, n > INT_MAX ? INT_MAX : (int)n, why, sizeof why) == SL_OK)
        return 0;
    return fail(c, SL_EINVAL, true, "%s", why);
}

/* Whether a value of kind k has the right shape for def at all (then a failed coercion is a
 * bad value, ValueError; otherwise a bad type, TypeError). Mirrors sl__value_coerce. */
static bool kind_fits(const sl_arg_def *def, const sl__value *v)
{
    sl__vkind k = v->kind;
    bool num = k == SL__V_INT || k == SL__V_FLOAT, list = k == SL__V_INTS || k == SL__V_FLOATS;
    bool scalar_ok = def->flags & SL_ARG_SCALAR_OK;
    switch (def->type) {
    case SL_ARG_BOOL: return k == SL__V_BOOL || k == SL__V_INT;
    case SL_ARG_INT: return k == SL__V_BOOL || num;
    case SL_ARG_FLOAT: return num;
    case SL_ARG_STRING:
    case SL_ARG_DTYPE: return k == SL__V_STRING;
    case SL_ARG_INTS:
    case SL_ARG_FLOATS: return list || (num && scalar_ok);
    case SL_ARG_STRINGS:
        return k == SL__V_STRINGS || (k == SL__V_FLOATS && v->n == 0) ||
               (k == SL__V_STRING && scalar_ok);
    }
    return false;
}

static int check_value(const check *c, const char *name, PyObject *value)
{
    int a = sl_op_arg_index(c->op, name);
    if (a < 0)
        return fail(c, SL_EINVAL, true, "unknown argument \"%s\"", name);
    const sl_arg_def *def = sl_op_arg(c->op, a);
    sl__value v, out;
    char err[512];
    int rc = slpy_value_from_py(value, &v, err, sizeof err);
    if (rc == -2)
        return -1;
    if (rc < 0)
        return fail(c, SL_EINVAL, true, "argument \"%s\": %s", name, err);
    sl_status st = sl__value_coerce(&v, def, &out, err, sizeof err);
    bool fits = kind_fits(def, &v);
    sl__value_fini(&v);
    if (st == SL_ENOMEM)
        return PyErr_NoMemory(), -1;
    if (st != SL_OK)
        return fail(c, st, !fits, "argument \"%s\": %s", name, err);
    sl__value_fini(&out);
    return 0;
}

static int check_arg_input(const check *c, const char *name)
{
    int a = sl_op_arg_index(c->op, name);
    if (a < 0)
        return fail(c, SL_EINVAL, true, "unknown argument \"%s\"", name);
    if (!(sl_op_arg(c->op, a)->flags & SL_ARG_TENSOR))
        return fail(c, SL_EINVAL, true,
                    "argument \"%s\" does not accept per-sample argument inputs", name);
    return 0;
}

static int check_args(const check *c, PyObject *args, PyObject *arg_inputs)
{
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (args && PyDict_Next(args, &pos, &key, &value)) {
        const char *name = PyUnicode_AsUTF8(key);
        if (!name || check_value(c, name, value) < 0)
            return -1;
    }
    pos = 0;
    while (arg_inputs && PyDict_Next(arg_inputs, &pos, &key, &value)) {
        const char *name = PyUnicode_AsUTF8(key);
        if (!name || check_arg_input(c, name) < 0)
            return -1;
    }
    for (int a = 0; a < sl_op_num_args(c->op); a++) {
        const sl_arg_def *def = sl_op_arg(c->op, a);
        if (def->def || (def->flags & SL_ARG_OPTIONAL))
            continue;
        bool given = (args && PyDict_GetItemString(args, def->name)) ||
                     (arg_inputs && PyDict_GetItemString(arg_inputs, def->name));
        if (!given)
            return fail(c, SL_EINVAL, true, "missing required argument \"%s\"", def->name);
    }
    return 0;
}

int slpy_check_node(slpy_state *st, const sl_op_def *op, const char *node, const char *device,
                    Py_ssize_t ninputs, PyObject *args, PyObject *arg_inputs)
{
    check c = {.st = st, .op = op, .node = node};
    sl__stage stage;
    if (device && !sl__stage_parse(device, &stage)) /* plan.c's check_node, same words */
        return fail(&c, SL_EINVAL, false, "unknown device \"%s\" (expected cpu, mixed or gpu)",
                    device);
    if (check_ninputs(&c, ninputs) < 0 || check_args(&c, args, arg_inputs) < 0)
        return -1;
    return 0;
}

int slpy_check_placement(slpy_state *st, const sl_op_def *op, const char *node,
                         const sl__placement *pl, const char *from_node)
{
    check c = {.st = st, .op = op, .node = node};
    char why[512];
    if (sl__stage_check(op, pl, from_node, why, sizeof why) != SL_OK)
        return fail(&c, SL_EUNSUPPORTED, false, "%s", why);
    return 0;
}
