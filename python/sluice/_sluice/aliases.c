/* python/sluice/_sluice/aliases.c: deprecated argument names, as DALI's Python front end
 * treats them.
 *
 * Exports slpy_resolve_aliases, the module function resolve_aliases() (what sluice.node runs
 * once on every operator call, before the node is recorded or checked) and slpy_alias_list (the
 * "aliases" entry of registry()). Which names are deprecated, what they stand for and the words
 * of the warning come from the operator definitions through the C registry (sl_op_def.aliases,
 * sl__op_arg_resolve, sl_arg_alias_message), the same rule sl__node_check applies to C graphs
 * and JSON specs; this file only adds what is Python's: a DeprecationWarning per call, shown
 * even where DeprecationWarnings are ignored by default (DALI shows them the same way), and the
 * renamed arguments recorded under their current names, so a serialized pipeline (or a node
 * replayed into several pipelines) has no deprecated names left.
 */
#include "sluice_py.h"

/* warnings.warn(msg, DeprecationWarning) inside catch_warnings() with simplefilter("default"),
 * as DALI does: the warning is shown (once per place) whatever the filters say. Returns 0 or -1
 * with an exception set (a filter may turn the warning into an error). */
static int warn_shown(const char *msg)
{
    PyObject *warnings = PyImport_ImportModule("warnings");
    PyObject *cm = warnings ? PyObject_CallMethod(warnings, "catch_warnings", NULL) : NULL;
    PyObject *entered = cm ? PyObject_CallMethod(cm, "__enter__", NULL) : NULL;
    int rc = -1;
    if (entered) {
        PyObject *r = PyObject_CallMethod(warnings, "simplefilter", "s", "default");
        rc = r ? PyErr_WarnEx(PyExc_DeprecationWarning, msg, 2) : -1;
        Py_XDECREF(r);
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyObject *exited = PyObject_CallMethod(cm, "__exit__", "OOO", Py_None, Py_None, Py_None);
        if (!exited)
            rc = -1; /* keep the first error */
        Py_XDECREF(exited);
        if (type)
            PyErr_Restore(type, value, tb);
    }
    Py_XDECREF(entered);
    Py_XDECREF(cm);
    Py_XDECREF(warnings);
    return rc;
}

/* Whether either dict has `key`. */
static bool given(PyObject *a, PyObject *b, const char *key)
{
    return PyDict_GetItemString(a, key) || PyDict_GetItemString(b, key);
}

/* Resolves the deprecated names of one dict (d, a copy the caller owns) in place. */
static int resolve_dict(slpy_state *st, const sl_op_def *op, const char *node, PyObject *d,
                        PyObject *args, PyObject *arg_inputs)
{
    PyObject *keys = PyDict_Keys(d);
    for (Py_ssize_t k = 0; keys && k < PyList_GET_SIZE(keys); k++) {
        PyObject *key = PyList_GET_ITEM(keys, k);
        const char *name = PyUnicode_AsUTF8(key);
        const sl_arg_alias *al;
        if (!name)
            goto fail;
        if (sl__op_arg_resolve(op, name, &al) == -1 || !al)
            continue; /* its own argument, or unknown: sl__node_check says so */
        if (al->renamed_to && given(args, arg_inputs, al->renamed_to)) {
            sl__error e;
            sl__error_set(&e, SL_EINVAL, op->name, node, -1, -1, NULL,
                          "argument \"%s\" is a deprecated alias for \"%s\", which is given too",
                          name, al->renamed_to);
            slpy_raise_error(st, &e, true);
            goto fail;
        }
        char msg[512];
        if (warn_shown(sl_arg_alias_message(al, msg, sizeof msg)) < 0)
            goto fail;
        PyObject *value = Py_NewRef(PyDict_GetItem(d, key));
        int rc = PyDict_DelItem(d, key);
        if (rc == 0 && al->renamed_to)
            rc = PyDict_SetItemString(d, al->renamed_to, value);
        Py_DECREF(value);
        if (rc < 0)
            goto fail;
    }
    Py_XDECREF(keys);
    return keys ? 0 : -1;
fail:
    Py_XDECREF(keys);
    return -1;
}

static bool has_alias(const sl_op_def *op, PyObject *d)
{
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(d, &pos, &key, &value)) {
        const char *name = PyUnicode_AsUTF8(key);
        if (!name)
            PyErr_Clear(); /* not a str: the checks report it */
        else if (sl_op_arg_index(op, name) < 0 && sl_op_find_alias(op, name))
            return true;
    }
    return false;
}

int slpy_resolve_aliases(slpy_state *st, const sl_op_def *op, const char *node, PyObject **args,
                         PyObject **arg_inputs)
{
    if (op->num_aliases == 0 || (!has_alias(op, *args) && !has_alias(op, *arg_inputs))) {
        Py_INCREF(*args);
        Py_INCREF(*arg_inputs);
        return 0;
    }
    PyObject *a = PyDict_Copy(*args), *ai = PyDict_Copy(*arg_inputs);
    if (!a || !ai || resolve_dict(st, op, node, a, *args, *arg_inputs) < 0 ||
        resolve_dict(st, op, node, ai, *args, *arg_inputs) < 0) {
        Py_XDECREF(a);
        Py_XDECREF(ai);
        return -1;
    }
    *args = a;
    *arg_inputs = ai;
    return 0;
}

PyObject *slpy_alias_list(const sl_op_def *op)
{
    PyObject *l = PyList_New(op->num_aliases);
    for (int i = 0; l && i < op->num_aliases; i++) {
        const sl_arg_alias *al = &op->aliases[i];
        char msg[512];
        PyObject *d = Py_BuildValue("{s:s,s:z,s:s}", "name", al->name, "renamed_to", al->renamed_to,
                                    "msg", sl_arg_alias_message(al, msg, sizeof msg));
        if (!d) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, d);
    }
    return l;
}

/* resolve_aliases(op, name, args, arg_inputs) -> (args, arg_inputs): slpy_resolve_aliases for
 * Python (name may be None: a node named later). */
PyObject *slpy_resolve_aliases_py(PyObject *module, PyObject *args)
{
    const char *opname, *name;
    PyObject *a, *ai;
    if (!PyArg_ParseTuple(args, "szO!O!:resolve_aliases", &opname, &name, &PyDict_Type, &a,
                          &PyDict_Type, &ai))
        return NULL;
    slpy_state *st = PyModule_GetState(module);
    const sl_op_def *op = sl_registry_find(opname);
    if (!op)
        return PyErr_Format(st->errors[SL_ENOTFOUND], "unknown operator \"%s\"", opname);
    if (slpy_resolve_aliases(st, op, name, &a, &ai) < 0)
        return NULL;
    return Py_BuildValue("(NN)", a, ai);
}
