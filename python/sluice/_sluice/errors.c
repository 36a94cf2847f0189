/* python/sluice/_sluice/errors.c: sluice's exception classes and raising them.
 *
 * Exports slpy_errors_init/clear/traverse and slpy_raise*. Every class derives from
 * SluiceError(RuntimeError) — what DALI raises for pipeline failures — and, where a built-in
 * exception says the same thing, from that too:
 *
 *   SL_EINVAL        InvalidArgumentError(SluiceError, ValueError)
 *   (call site)      ArgumentTypeError(SluiceError, TypeError): unknown or ill-typed argument,
 *                    missing required argument, wrong number of inputs
 *   SL_ENOTFOUND     NotFoundError(SluiceError, LookupError)
 *   SL_EIO           ReadError(SluiceError)
 *   SL_ECORRUPT      CorruptDataError(SluiceError)
 *   SL_EUNSUPPORTED  UnsupportedError(SluiceError, NotImplementedError)
 *   SL_ENOMEM        OutOfMemoryError(SluiceError, MemoryError)
 *   SL_ECANCELED     CanceledError(SluiceError)
 *   SL_EMISUSE       MisuseError(SluiceError)
 *   SL_ECALLBACK     CallbackError(SluiceError)
 *   SL_EWORKER       WorkerError(SluiceError)
 *   SL_EINTERNAL     InternalError(SluiceError)
 *
 * An instance carries the C library's context as attributes: .code ("SL_ECORRUPT"),
 * .operator, .node, .iteration, .sample, .source (None when unknown) and .detail (the failing
 * component's own words); str(e) is the full message.
 */
#include "sluice_py.h"

typedef struct cls {
    sl_status code;
    const char *name;
    PyObject **builtin; /* second base, or NULL */
    const char *doc;
} cls;

/* Class attributes of SluiceError: the context of an exception raised without one. */
static PyObject *context_defaults(void)
{
    static const char *const keys[] = {"code",   "operator", "node",  "iteration",
                                       "sample", "source",   "detail"};
    PyObject *d = PyDict_New();
    for (size_t k = 0; d && k < sizeof keys / sizeof keys[0]; k++) {
        if (PyDict_SetItemString(d, keys[k], Py_None) < 0)
            Py_CLEAR(d);
    }
    return d;
}

static int make_class(PyObject *m, const char *name, PyObject *base, PyObject *builtin,
                      const char *doc, PyObject **out)
{
    char qual[96];
    snprintf(qual, sizeof qual, "sluice.%s", name);
    PyObject *bases = builtin ? PyTuple_Pack(2, base, builtin) : PyTuple_Pack(1, base);
    PyObject *dict = base == PyExc_RuntimeError ? context_defaults() : PyDict_New();
    if (!bases || !dict) {
        Py_XDECREF(bases);
        Py_XDECREF(dict);
        return -1;
    }
    *out = PyErr_NewExceptionWithDoc(qual, doc, bases, dict);
    Py_DECREF(bases);
    Py_DECREF(dict);
    if (!*out)
        return -1;
    return PyModule_AddObjectRef(m, name, *out);
}

int slpy_errors_init(PyObject *m, slpy_state *st)
{
    const cls table[] = {
        {SL_EINVAL, "InvalidArgumentError", &PyExc_ValueError,
         "A wrong argument value or data that does not fit (SL_EINVAL)."},
        {SL_ENOTFOUND, "NotFoundError", &PyExc_LookupError,
         "A file, operator, node or argument that does not exist (SL_ENOTFOUND)."},
        {SL_EIO, "ReadError", NULL, "Reading or writing failed (SL_EIO)."},
        {SL_ECORRUPT, "CorruptDataError", NULL, "Malformed data: a corrupt image (SL_ECORRUPT)."},
        {SL_EUNSUPPORTED, "UnsupportedError", &PyExc_NotImplementedError,
         "Valid but not supported: an image format, a device (SL_EUNSUPPORTED)."},
        {SL_ENOMEM, "OutOfMemoryError", &PyExc_MemoryError, "An allocation failed (SL_ENOMEM)."},
        {SL_ECANCELED, "CanceledError", NULL, "The work was cancelled (SL_ECANCELED)."},
        {SL_EMISUSE, "MisuseError", NULL, "The API was called wrongly (SL_EMISUSE)."},
        {SL_ECALLBACK, "CallbackError", NULL, "A user callback failed (SL_ECALLBACK)."},
        {SL_EWORKER, "WorkerError", NULL, "A worker thread or process died (SL_EWORKER)."},
        {SL_EINTERNAL, "InternalError", NULL, "A bug in sluice (SL_EINTERNAL)."},
    };
    if (make_class(m, "SluiceError", PyExc_RuntimeError, NULL,
                   "Base of every sluice error. Attributes: code, operator, node, iteration, "
                   "sample, source, detail (None when unknown).",
                   &st->error) < 0)
        return -1;
    st->errors[SL_OK] = Py_NewRef(st->error);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (make_class(m, table[i].name, st->error, table[i].builtin ? *table[i].builtin : NULL,
                       table[i].doc, &st->errors[table[i].code]) < 0)
            return -1;
    }
    return make_class(m, "ArgumentTypeError", st->error, PyExc_TypeError,
                      "An unknown or ill-typed operator argument, a missing required one, or a "
                      "wrong number of inputs, found where the operator is called.",
                      &st->arg_type_error);
}

void slpy_errors_clear(slpy_state *st)
{
    Py_CLEAR(st->error);
    Py_CLEAR(st->arg_type_error);
    for (int i = 0; i <= SL_EINTERNAL; i++)
        Py_CLEAR(st->errors[i]);
}

int slpy_errors_traverse(slpy_state *st, visitproc visit, void *arg)
{
    Py_VISIT(st->error);
    Py_VISIT(st->arg_type_error);
    for (int i = 0; i <= SL_EINTERNAL; i++)
        Py_VISIT(st->errors[i]);
    return 0;
}

static int set_str(PyObject *e, const char *attr, const char *v)
{
    PyObject *o =
        v && v[0] ? PyUnicode_DecodeUTF8(v, (Py_ssize_t)strlen(v), "replace") : Py_NewRef(Py_None);
    if (!o)
        return -1;
    int rc = PyObject_SetAttrString(e, attr, o);
    Py_DECREF(o);
    return rc;
}

static int set_int(PyObject *e, const char *attr, long long v)
{
    PyObject *o = v >= 0 ? PyLong_FromLongLong(v) : Py_NewRef(Py_None);
    if (!o)
        return -1;
    int rc = PyObject_SetAttrString(e, attr, o);
    Py_DECREF(o);
    return rc;
}

/* Sets the context attributes on exception instance e. */
static int set_context(PyObject *e, sl_status code, const char *msg, const sl_error_detail *d)
{
    if (set_str(e, "code", sl_status_name(code)) < 0)
        return -1;
    if (set_str(e, "operator", d ? d->op : NULL) < 0 || set_str(e, "node", d ? d->node : NULL) < 0)
        return -1;
    if (set_int(e, "iteration", d ? d->iteration : -1) < 0 ||
        set_int(e, "sample", d ? d->sample : -1) < 0)
        return -1;
    if (set_str(e, "source", d ? d->source : NULL) < 0)
        return -1;
    return set_str(e, "detail", d && d->detail && d->detail[0] ? d->detail : msg);
}

static PyObject *raise_class(PyObject *klass, sl_status code, const char *msg,
                             const sl_error_detail *d)
{
    PyObject *text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
    if (!text)
        return NULL;
    PyObject *e = PyObject_CallOneArg(klass, text);
    Py_DECREF(text);
    if (!e)
        return NULL;
    if (set_context(e, code, msg, d) == 0)
        PyErr_SetObject((PyObject *)Py_TYPE(e), e);
    Py_DECREF(e);
    return NULL;
}

PyObject *slpy_raise(slpy_state *st, sl_status code, const char *msg, const sl_error_detail *d)
{
    PyObject *klass = (unsigned)code <= SL_EINTERNAL ? st->errors[code] : st->error;
    return raise_class(klass, code, msg && msg[0] ? msg : sl_status_name(code), d);
}

PyObject *slpy_raise_pipeline(slpy_state *st, const sl_pipeline *p, sl_status code)
{
    sl_error_detail d;
    sl_pipeline_error_detail(p, &d);
    return slpy_raise(st, code, sl_pipeline_error(p), &d);
}

PyObject *slpy_raise_last(slpy_state *st, sl_status code)
{
    return slpy_raise(st, code, sl_last_error(), NULL);
}

PyObject *slpy_raise_error(slpy_state *st, const sl__error *e, bool as_type)
{
    sl_error_detail d = {.code = e->code,
                         .op = e->op,
                         .node = e->node,
                         .iteration = e->iteration,
                         .sample = e->sample,
                         .source = e->source,
                         .detail = e->detail};
    PyObject *klass = as_type
                          ? st->arg_type_error
                          : ((unsigned)e->code <= SL_EINTERNAL ? st->errors[e->code] : st->error);
    return raise_class(klass, e->code, e->message, &d);
}
