/* python/sluice/_sluice/value.c: Python objects <-> sluice argument values (sl__value).
 *
 * Exports slpy_value_from_py and slpy_value_to_py. Accepted: bool, int (and anything with
 * __index__, such as NumPy integers), float (and NumPy floats), str, and lists or tuples of
 * numbers or of strings — the same value forms a JSON spec allows. Enum members of
 * sluice.types and NumPy arrays are turned into these by the Python layer before they get
 * here. The value's kind is what the user wrote; sl__value_coerce (the build's own check)
 * decides whether it fits the argument.
 */
#include "sluice_py.h"

static const char *py_type_name(PyObject *o)
{
    return Py_TYPE(o)->tp_name;
}

static bool is_int(PyObject *o)
{
    return !PyBool_Check(o) && !PyFloat_Check(o) && (PyLong_Check(o) || PyIndex_Check(o));
}

static bool is_float(PyObject *o)
{
    /* NumPy floating scalars have __float__ but not __index__. */
    return PyFloat_Check(o) ||
           (!PyUnicode_Check(o) && !PyIndex_Check(o) && Py_TYPE(o)->tp_as_number &&
            Py_TYPE(o)->tp_as_number->nb_float && !PySequence_Check(o));
}

static int scalar(PyObject *o, sl__value *out, char *err, size_t errlen)
{
    if (PyBool_Check(o)) {
        out->kind = SL__V_BOOL;
        out->b = o == Py_True;
        return 0;
    }
    if (is_int(o)) {
        long long v = PyLong_AsLongLong(o);
        if (v == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            snprintf(err, errlen, "integer out of range");
            return -1;
        }
        out->kind = SL__V_INT;
        out->i = v;
        return 0;
    }
    if (is_float(o)) {
        double d = PyFloat_AsDouble(o);
        if (d == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            snprintf(err, errlen, "expected a number, got %s", py_type_name(o));
            return -1;
        }
        out->kind = SL__V_FLOAT;
        out->f = d;
        return 0;
    }
    if (PyUnicode_Check(o)) {
        const char *s = PyUnicode_AsUTF8(o);
        if (!s)
            return -2;
        out->kind = SL__V_STRING;
        out->s = sl__strdup(s);
        return out->s ? 0 : (PyErr_NoMemory(), -2);
    }
    snprintf(err, errlen, "expected a bool, number, string or list, got %s", py_type_name(o));
    return -1;
}

static int strings(PyObject *seq, Py_ssize_t n, sl__value *out, char *err, size_t errlen)
{
    out->kind = SL__V_STRINGS;
    out->strs = sl__calloc((size_t)(n ? n : 1), sizeof(char *));
    if (!out->strs)
        return PyErr_NoMemory(), -2;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *e = PySequence_Fast_GET_ITEM(seq, k);
        if (!PyUnicode_Check(e)) {
            snprintf(err, errlen, "a list must hold only numbers or only strings");
            return -1;
        }
        const char *s = PyUnicode_AsUTF8(e);
        if (!s)
            return -2;
        if (!(out->strs[k] = sl__strdup(s)))
            return PyErr_NoMemory(), -2;
        out->n = (int)k + 1;
    }
    return 0;
}

static int numbers(PyObject *seq, Py_ssize_t n, sl__value *out, char *err, size_t errlen)
{
    bool all_int = true;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *e = PySequence_Fast_GET_ITEM(seq, k);
        if (!PyBool_Check(e) && !is_int(e) && !is_float(e)) {
            snprintf(err, errlen, "a list must hold only numbers or only strings");
            return -1;
        }
        all_int = all_int && (PyBool_Check(e) || is_int(e));
    }
    out->kind = all_int && n > 0 ? SL__V_INTS : SL__V_FLOATS;
    out->ints = sl__calloc((size_t)(n ? n : 1), sizeof(int64_t));
    out->floats = sl__calloc((size_t)(n ? n : 1), sizeof(double));
    if (!out->ints || !out->floats)
        return PyErr_NoMemory(), -2;
    for (Py_ssize_t k = 0; k < n; k++) {
        sl__value v = {0};
        int rc = scalar(PySequence_Fast_GET_ITEM(seq, k), &v, err, errlen);
        if (rc < 0)
            return rc;
        out->ints[k] = v.kind == SL__V_BOOL ? v.b : v.i;
        out->floats[k] = v.kind == SL__V_FLOAT ? v.f : (double)out->ints[k];
    }
    out->n = (int)n;
    return 0;
}

int slpy_value_from_py(PyObject *o, sl__value *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (!PyList_Check(o) && !PyTuple_Check(o))
        return scalar(o, out, err, errlen);
    PyObject *seq = PySequence_Fast(o, "expected a list");
    if (!seq)
        return -2;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int rc;
    if (n > INT32_MAX) {
        snprintf(err, errlen, "list too long");
        rc = -1;
    } else if (n > 0 && PyUnicode_Check(PySequence_Fast_GET_ITEM(seq, 0))) {
        rc = strings(seq, n, out, err, errlen);
    } else {
        rc = numbers(seq, n, out, err, errlen);
    }
    Py_DECREF(seq);
    if (rc == 0 && out->kind == SL__V_INTS) { /* keep one representation, as the parser does */
        sl__free(out->floats);
        out->floats = NULL;
    } else if (rc == 0 && out->kind == SL__V_FLOATS) {
        sl__free(out->ints);
        out->ints = NULL;
    }
    if (rc < 0)
        sl__value_fini(out);
    return rc;
}

static PyObject *list_to_py(const sl__value *v)
{
    PyObject *l = PyList_New(v->n);
    for (int k = 0; l && k < v->n; k++) {
        PyObject *e = v->kind == SL__V_INTS     ? PyLong_FromLongLong(v->ints[k])
                      : v->kind == SL__V_FLOATS ? PyFloat_FromDouble(v->floats[k])
                                                : PyUnicode_FromString(v->strs[k]);
        if (!e) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, k, e);
    }
    return l;
}

PyObject *slpy_value_to_py(const sl__value *v)
{
    switch (v->kind) {
    case SL__V_BOOL: return PyBool_FromLong(v->b);
    case SL__V_INT: return PyLong_FromLongLong(v->i);
    case SL__V_FLOAT: return PyFloat_FromDouble(v->f);
    case SL__V_STRING: return PyUnicode_FromString(v->s);
    case SL__V_INTS:
    case SL__V_FLOATS:
    case SL__V_STRINGS: return list_to_py(v);
    default: Py_RETURN_NONE;
    }
}
