/* python/sluice/_sluice/callback.c: the Python functions of python_function nodes.
 *
 * Exports Pipeline.set_callback (slpy_pipeline_set_callback) and the bookkeeping pipeline.c
 * calls (slpy_callbacks_*). set_callback(node, runner) registers a trampoline for the node with
 * sl_pipeline_set_callback; the C node calls it on one of the pipeline's threads, once per
 * iteration. The trampoline takes the pipeline's call lock (one Python function of a pipeline
 * at a time, as DALI runs them; a robust mutex, so a thread the interpreter ends at exit
 * cannot leave it locked), then the GIL, copies the inputs into bytearrays (so the function
 * owns what it gets: it may keep or modify it), calls the runner — sluice/python_function.py:
 * runner(iteration, batch_size, inputs) -> num_outputs lists of batch_size NumPy arrays —
 * and hands the arrays' buffers (any strides) to the node, which copies them and releases
 * them here, taking the GIL again. Everything about calling conventions (per sample or per
 * batch, DLPack, tuples of outputs) is the runner's; the C node checks what comes back.
 *
 * A Python exception fails the iteration with SL_ECALLBACK and "Type: message"; the exception
 * itself (with its traceback) is kept, keyed by (node, iteration), until the share_outputs that
 * delivers the iteration raises CallbackError with it as __cause__ (slpy_callbacks_after_share).
 * Invariants: the table and its runners live as long as the Pipeline object, which destroys
 * the sl_pipeline (joining its threads) before freeing them — except when the Pipeline dies on
 * one of those threads, during a call (the function, or the collector running in it, dropped
 * the last reference): a detached thread then destroys the sl_pipeline and frees the table
 * after the call returned. No Python call happens once the interpreter is finalizing (the call
 * fails with SL_ECANCELED, held buffers are left alone).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "sluice_py.h"

typedef struct slpy_cbentry {
    struct slpy_callbacks *owner;
    PyObject *node;   /* str: the node's name */
    PyObject *runner; /* the callable */
} slpy_cbentry;

struct slpy_callbacks {
    pthread_mutex_t call_mu; /* held around each call: one function of the pipeline at a time */
    slpy_cbentry **entries;  /* registered functions; their addresses are the nodes' `user` */
    int n;
    PyObject *errors; /* dict {(node, iteration): exception} of failed calls not yet raised */
};

/* What one call hands to the node: the arrays' buffers, released together. */
typedef struct held {
    PyObject *result; /* the runner's lists, keeping the arrays alive */
    Py_ssize_t nviews;
    Py_buffer *views;
    int64_t *dims; /* per view: SL_MAX_NDIM extents, then SL_MAX_NDIM strides */
} held;

/* The table whose function this thread is running now (trampoline), or NULL. */
static _Thread_local struct slpy_callbacks *running;

static int finalizing(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing();
#else
    return _Py_IsFinalizing();
#endif
}

/* ---- the table ---------------------------------------------------------------------------- */

static struct slpy_callbacks *table_new(void)
{
    struct slpy_callbacks *t = PyMem_RawCalloc(1, sizeof(*t));
    if (!t)
        return NULL;
    if (!(t->errors = PyDict_New())) {
        PyMem_RawFree(t);
        return NULL;
    }
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&t->call_mu, &a);
    pthread_mutexattr_destroy(&a);
    return t;
}

void slpy_callbacks_free(struct slpy_callbacks *t)
{
    if (!t)
        return;
    for (int k = 0; k < t->n; k++) {
        Py_XDECREF(t->entries[k]->node);
        Py_XDECREF(t->entries[k]->runner);
        PyMem_RawFree(t->entries[k]);
    }
    PyMem_RawFree(t->entries);
    Py_XDECREF(t->errors);
    pthread_mutex_destroy(&t->call_mu);
    PyMem_RawFree(t);
}

int slpy_callbacks_traverse(struct slpy_callbacks *t, visitproc visit, void *arg)
{
    if (!t)
        return 0;
    for (int k = 0; k < t->n; k++)
        Py_VISIT(t->entries[k]->runner);
    Py_VISIT(t->errors);
    return 0;
}

/* ---- inputs ------------------------------------------------------------------------------- */

/* (bytearray, dtype name, [shape tuples], [byte offsets]): a copy of input batch b. */
static PyObject *input_tuple(const sl_batch *b)
{
    int n = sl_batch_size(b), ndim = sl_batch_ndim(b);
    size_t elem = sl_dtype_size(sl_batch_dtype(b)), total = 0;
    for (int i = 0; i < n; i++)
        total += (size_t)sl_batch_sample_numel(b, i) * elem;
    PyObject *data = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)total);
    PyObject *shapes = PyList_New(n), *offsets = PyList_New(n), *t = NULL;
    if (!data || !shapes || !offsets)
        goto done;
    char *dst = PyByteArray_AS_STRING(data);
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        const int64_t *shape = sl_batch_shape(b, i);
        PyObject *s = PyTuple_New(ndim), *o = PyLong_FromSize_t(off);
        for (int d = 0; s && d < ndim; d++) {
            PyObject *x = PyLong_FromLongLong(shape[d]);
            if (!x)
                Py_CLEAR(s);
            else
                PyTuple_SET_ITEM(s, d, x);
        }
        if (!s || !o) {
            Py_XDECREF(s);
            Py_XDECREF(o);
            goto done;
        }
        PyList_SET_ITEM(shapes, i, s);
        PyList_SET_ITEM(offsets, i, o);
        size_t bytes = (size_t)sl_batch_sample_numel(b, i) * elem;
        if (bytes)
            memcpy(dst + off, sl_batch_sample_data(b, i), bytes);
        off += bytes;
    }
    t = Py_BuildValue("(OsOO)", data, sl_dtype_name(sl_batch_dtype(b)), shapes, offsets);
done:
    Py_XDECREF(data);
    Py_XDECREF(shapes);
    Py_XDECREF(offsets);
    return t;
}

static PyObject *inputs_list(const sl_callback_call *call)
{
    PyObject *l = PyList_New(call->num_inputs);
    for (int k = 0; l && k < call->num_inputs; k++) {
        PyObject *t = input_tuple(call->inputs[k]);
        if (!t)
            Py_CLEAR(l);
        else
            PyList_SET_ITEM(l, k, t);
    }
    return l;
}

/* ---- outputs ------------------------------------------------------------------------------ */

static void held_free(held *h)
{
    for (Py_ssize_t k = 0; k < h->nviews; k++)
        PyBuffer_Release(&h->views[k]);
    Py_XDECREF(h->result);
    PyMem_RawFree(h->views);
    PyMem_RawFree(h->dims);
    PyMem_RawFree(h);
}

/* The node's release of a call's views: from any thread, without the GIL. At interpreter exit
 * the buffers are left alone (the interpreter can no longer be entered from another thread). */
static void release_held(void *ctx)
{
    if (finalizing())
        return;
    PyGILState_STATE g = PyGILState_Ensure();
    held_free(ctx);
    PyGILState_Release(g);
}

/* Takes the buffer of sample i of output o into h's view k and call's view. Returns SL_OK, or
 * SL_EINVAL with the reason in call->err. */
static sl_status take_view(held *h, Py_ssize_t k, PyObject *obj, int o, int i,
                           sl_callback_call *call)
{
    Py_buffer *v = &h->views[k];
    if (PyObject_GetBuffer(obj, v, PyBUF_RECORDS_RO) < 0) {
        PyErr_Clear();
        snprintf(call->err, call->errlen,
                 "output %d, sample %d: the function returned %s, which exposes no buffer", o, i,
                 Py_TYPE(obj)->tp_name);
        return SL_EINVAL;
    }
    h->nviews = k + 1;
    sl_dtype t = slpy_dtype_from_format(v->format, v->itemsize);
    if (t == SL_DTYPE_INVALID) {
        snprintf(call->err, call->errlen,
                 "output %d, sample %d: element type \"%s\" (%zd bytes) is not supported (bool, "
                 "int8 to int64, uint8 to uint64, float16, float32, float64)",
                 o, i, v->format ? v->format : "B", v->itemsize);
        return SL_EINVAL;
    }
    if (v->ndim > SL_MAX_NDIM) {
        snprintf(call->err, call->errlen,
                 "output %d, sample %d has %d dimensions; at most %d are supported", o, i, v->ndim,
                 SL_MAX_NDIM);
        return SL_EINVAL;
    }
    int64_t *shape = h->dims + k * 2 * SL_MAX_NDIM, *strides = shape + SL_MAX_NDIM;
    for (int d = 0; d < v->ndim; d++) {
        shape[d] = v->shape[d];
        strides[d] = v->strides ? v->strides[d] : 0;
    }
    call->outputs[o * call->batch_size + i] = (sl_sample_view){
        .dtype = t,
        .ndim = v->ndim,
        .shape = shape,
        .strides = v->strides ? strides : NULL,
        .data = v->buf,
    };
    return SL_OK;
}

/* The runner's result into the call's views: a list of num_outputs lists of batch_size
 * objects with the buffer protocol. The runner guarantees the structure; anything else is a
 * bug, reported as such. */
static sl_status take_outputs(PyObject *result, sl_callback_call *call)
{
    int nout = call->num_outputs, n = call->batch_size;
    bool ok = PyList_Check(result) && PyList_GET_SIZE(result) == nout;
    for (int o = 0; ok && o < nout; o++) {
        PyObject *l = PyList_GET_ITEM(result, o);
        ok = PyList_Check(l) && PyList_GET_SIZE(l) == n;
    }
    if (!ok) {
        snprintf(call->err, call->errlen,
                 "the runner returned something else than %d lists of %d arrays (a bug in "
                 "sluice)",
                 nout, n);
        return SL_EINTERNAL;
    }
    Py_ssize_t count = (Py_ssize_t)nout * n;
    if (count == 0)
        return SL_OK; /* a sink (num_outputs=0): nothing to hold */
    held *h = PyMem_RawCalloc(1, sizeof(*h));
    if (h) {
        h->views = PyMem_RawCalloc((size_t)count, sizeof(Py_buffer));
        h->dims = PyMem_RawCalloc((size_t)count * 2 * SL_MAX_NDIM, sizeof(int64_t));
    }
    if (!h || !h->views || !h->dims) {
        if (h) {
            PyMem_RawFree(h->views);
            PyMem_RawFree(h->dims);
        }
        PyMem_RawFree(h);
        snprintf(call->err, call->errlen, "out of memory");
        return SL_ENOMEM;
    }
    h->result = Py_NewRef(result);
    call->release = release_held;
    call->release_ctx = h;
    sl_status st = SL_OK;
    for (int o = 0; st == SL_OK && o < nout; o++) {
        PyObject *l = PyList_GET_ITEM(result, o);
        for (int i = 0; st == SL_OK && i < n; i++)
            st = take_view(h, (Py_ssize_t)o * n + i, PyList_GET_ITEM(l, i), o, i, call);
    }
    return st;
}

/* ---- failures ----------------------------------------------------------------------------- */

/* Keeps the raised exception for the share_outputs that delivers the iteration, and writes
 * "Type: message" into call->err. Returns SL_ECALLBACK. */
static sl_status keep_error(slpy_cbentry *e, sl_callback_call *call)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb && value)
        PyException_SetTraceback(value, tb);
    const char *name = type && PyType_Check(type) ? ((PyTypeObject *)type)->tp_name : "SystemError";
    const char *dot = strrchr(name, '.');
    PyObject *text = value ? PyObject_Str(value) : NULL;
    const char *msg = text ? PyUnicode_AsUTF8(text) : NULL;
    if (!msg)
        PyErr_Clear();
    snprintf(call->err, call->errlen, "%s%s%s", dot ? dot + 1 : name, msg && msg[0] ? ": " : "",
             msg ? msg : "");
    PyObject *key = Py_BuildValue("(OL)", e->node, (long long)call->iteration);
    if (!key || !value || PyDict_SetItem(e->owner->errors, key, value) < 0)
        PyErr_Clear(); /* the error is still reported, without its __cause__ */
    Py_XDECREF(key);
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return SL_ECALLBACK;
}

/* ---- the trampoline ----------------------------------------------------------------------- */

static sl_status call_runner(slpy_cbentry *e, sl_callback_call *call)
{
    PyObject *inputs = inputs_list(call);
    if (!inputs)
        return keep_error(e, call);
    PyObject *result = PyObject_CallFunction(e->runner, "LiO", (long long)call->iteration,
                                             call->batch_size, inputs);
    Py_DECREF(inputs);
    if (!result)
        return keep_error(e, call);
    sl_status st = take_outputs(result, call);
    Py_DECREF(result);
    return st;
}

static sl_status trampoline(void *user, sl_callback_call *call)
{
    slpy_cbentry *e = user;
    int rc = pthread_mutex_lock(&e->owner->call_mu);
    if (rc == EOWNERDEAD) /* a thread ended holding it: the interpreter is exiting */
        pthread_mutex_consistent(&e->owner->call_mu);
    if (finalizing()) {
        pthread_mutex_unlock(&e->owner->call_mu);
        snprintf(call->err, call->errlen, "the Python interpreter is shutting down");
        return SL_ECANCELED;
    }
    PyGILState_STATE g = PyGILState_Ensure();
    running = e->owner;
    sl_status st = call_runner(e, call);
    running = NULL;
    PyGILState_Release(g);
    pthread_mutex_unlock(&e->owner->call_mu);
    return st;
}

/* ---- destroying a pipeline from one of its own threads ------------------------------------ */

typedef struct later {
    sl_pipeline *p;
    struct slpy_callbacks *t;
} later;

static void *destroy_thread(void *arg)
{
    later *l = arg;
    sl_pipeline_destroy(l->p); /* joins the thread that asked, once its call returned */
    if (!finalizing()) {
        PyGILState_STATE g = PyGILState_Ensure();
        slpy_callbacks_free(l->t);
        PyGILState_Release(g);
    }
    free(l);
    return NULL;
}

bool slpy_callbacks_destroy_here(slpy_pipeline *self)
{
    if (!self->cb || running != self->cb)
        return false;
    /* This thread runs one of the pipeline's functions (whose code, or the collector running
     * during it, dropped the pipeline's last reference): destroying the pipeline here would
     * join this very thread. A thread of its own destroys it once the call has returned. */
    later *l = malloc(sizeof(*l));
    pthread_t th;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (l) {
        *l = (later){.p = self->p, .t = self->cb};
        if (pthread_create(&th, &a, destroy_thread, l) != 0) {
            free(l); /* nothing can destroy it safely: left as it is (a leak, not a crash) */
            l = NULL;
        }
    }
    pthread_attr_destroy(&a);
    self->p = NULL;
    self->cb = NULL;
    return true;
}

/* ---- Pipeline methods and hooks ----------------------------------------------------------- */

PyObject *slpy_pipeline_set_callback(PyObject *obj, PyObject *args)
{
    slpy_pipeline *self = (slpy_pipeline *)obj;
    PyObject *node, *runner;
    if (!PyArg_ParseTuple(args, "UO:set_callback", &node, &runner))
        return NULL;
    if (!PyCallable_Check(runner))
        return PyErr_Format(PyExc_TypeError, "set_callback: the runner must be callable");
    const char *name = PyUnicode_AsUTF8(node);
    if (!name)
        return NULL;
    if (!self->cb && !(self->cb = table_new()))
        return PyErr_NoMemory();
    struct slpy_callbacks *t = self->cb;
    slpy_cbentry **grown = PyMem_RawRealloc(t->entries, sizeof(*grown) * (size_t)(t->n + 1));
    if (!grown)
        return PyErr_NoMemory();
    t->entries = grown;
    slpy_cbentry *e = PyMem_RawCalloc(1, sizeof(*e));
    if (!e)
        return PyErr_NoMemory();
    *e = (slpy_cbentry){.owner = t, .node = Py_NewRef(node), .runner = Py_NewRef(runner)};
    t->entries[t->n++] = e; /* kept even when refused: freed with the table */
    sl_status rc = sl_pipeline_set_callback(self->p, name, trampoline, e);
    if (rc != SL_OK)
        return slpy_raise_pipeline(slpy_state_of(obj), self->p, rc);
    Py_RETURN_NONE;
}

/* The exception kept for (node, iteration), removed from the table; NULL when none. */
static PyObject *take_error(struct slpy_callbacks *t, const char *node, int64_t iteration)
{
    PyObject *key = Py_BuildValue("(sL)", node, (long long)iteration), *exc = NULL;
    if (key && (exc = PyDict_GetItemWithError(t->errors, key)) != NULL) {
        Py_INCREF(exc);
        if (PyDict_DelItem(t->errors, key) < 0)
            PyErr_Clear();
    }
    Py_XDECREF(key);
    if (!exc)
        PyErr_Clear();
    return exc;
}

/* Drops what was kept for iterations up to `iteration` (delivered: no one will ask). */
static void forget_upto(struct slpy_callbacks *t, int64_t iteration)
{
    PyObject *key, *value, *stale = PyList_New(0);
    Py_ssize_t pos = 0;
    while (stale && PyDict_Next(t->errors, &pos, &key, &value)) {
        long long it = PyLong_AsLongLong(PyTuple_GET_ITEM(key, 1));
        if (it <= iteration && PyList_Append(stale, key) < 0)
            Py_CLEAR(stale);
    }
    for (Py_ssize_t k = 0; stale && k < PyList_GET_SIZE(stale); k++) {
        if (PyDict_DelItem(t->errors, PyList_GET_ITEM(stale, k)) < 0)
            PyErr_Clear();
    }
    Py_XDECREF(stale);
    PyErr_Clear();
}

void slpy_callbacks_after_share(slpy_pipeline *self, sl_status rc)
{
    struct slpy_callbacks *t = self->cb;
    if (!t || PyDict_GET_SIZE(t->errors) == 0)
        return;
    sl_error_detail d;
    sl_pipeline_error_detail(self->p, &d);
    int64_t it = rc == SL_OK ? sl_pipeline_iteration(self->p) : d.iteration;
    if (rc == SL_ECALLBACK && d.node && it >= 0 && PyErr_Occurred()) {
        PyObject *cause = take_error(t, d.node, it);
        if (cause) { /* chained as `raise CallbackError(...) from the_exception` */
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyErr_NormalizeException(&type, &value, &tb);
            if (value)
                PyException_SetCause(value, cause); /* steals cause */
            else
                Py_DECREF(cause);
            PyErr_Restore(type, value, tb);
        }
    }
    if (it >= 0) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        forget_upto(t, it);
        PyErr_Restore(type, value, tb);
    }
}
