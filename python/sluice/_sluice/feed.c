/* python/sluice/_sluice/feed.c: Pipeline.feed_input, one batch for an external_source node.
 *
 * Exports slpy_pipeline_feed_input. The samples are objects with the buffer protocol (the
 * Python layer turns NumPy arrays, torch CPU tensors and DLPack objects into C-contiguous
 * NumPy arrays first); each must be C-contiguous, and all must share one element type and one
 * number of dimensions. The views are held while sl_pipeline_feed_input copies the data (GIL
 * released), then released: the caller may reuse its arrays at once.
 */
#include "sluice_py.h"

typedef struct feed_buf {
    Py_buffer *views; /* n views, `got` of them acquired */
    Py_ssize_t n, got;
    int64_t *shapes;   /* n * ndim */
    const void **data; /* n */
} feed_buf;

static void feed_fini(feed_buf *f)
{
    for (Py_ssize_t i = 0; i < f->got; i++)
        PyBuffer_Release(&f->views[i]);
    PyMem_Free(f->views);
    PyMem_Free(f->shapes);
    PyMem_Free(f->data);
}

/* Acquires sample i's buffer and checks it against sample 0's dtype and ndim. */
static int take_sample(slpy_state *st, feed_buf *f, PyObject *obj, Py_ssize_t i, sl_feed *out)
{
    Py_buffer *v = &f->views[i];
    if (PyObject_GetBuffer(obj, v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    f->got = i + 1;
    sl_dtype t = slpy_dtype_from_format(v->format, v->itemsize);
    if (t == SL_DTYPE_INVALID)
        return PyErr_Format(st->errors[SL_EINVAL],
                            "feed_input: sample %zd has an element type sluice does not support "
                            "(buffer format \"%s\", %zd bytes)",
                            i, v->format ? v->format : "B", v->itemsize),
               -1;
    if (v->ndim > SL_MAX_NDIM)
        return PyErr_Format(st->errors[SL_EINVAL],
                            "feed_input: sample %zd has %d dimensions; "
                            "at most %d are supported",
                            i, v->ndim, SL_MAX_NDIM),
               -1;
    if (i == 0) {
        out->dtype = t;
        out->ndim = v->ndim;
        f->shapes = PyMem_Calloc((size_t)(f->n * (v->ndim ? v->ndim : 1)), sizeof(int64_t));
        if (!f->shapes)
            return PyErr_NoMemory(), -1;
    } else if (t != out->dtype || v->ndim != out->ndim) {
        return PyErr_Format(st->errors[SL_EINVAL],
                            "feed_input: sample %zd is %s with %d dimensions, sample 0 is %s "
                            "with %d; the samples of a batch must share type and number of "
                            "dimensions",
                            i, sl_dtype_name(t), v->ndim, sl_dtype_name(out->dtype), out->ndim),
               -1;
    }
    for (int d = 0; d < v->ndim; d++)
        f->shapes[i * v->ndim + d] = v->shape ? v->shape[d] : v->len / v->itemsize;
    f->data[i] = v->buf;
    return 0;
}

static int take_batch(slpy_state *st, PyObject *samples, feed_buf *f, sl_feed *out)
{
    PyObject *seq = PySequence_Fast(samples, "feed_input: samples must be a sequence");
    if (!seq)
        return -1;
    f->n = PySequence_Fast_GET_SIZE(seq);
    f->views = PyMem_Calloc((size_t)(f->n ? f->n : 1), sizeof(Py_buffer));
    f->data = PyMem_Calloc((size_t)(f->n ? f->n : 1), sizeof(void *));
    int rc = f->views && f->data ? 0 : (PyErr_NoMemory(), -1);
    if (f->n > INT32_MAX)
        rc = (PyErr_SetString(PyExc_OverflowError, "feed_input: too many samples"), -1);
    for (Py_ssize_t i = 0; rc == 0 && i < f->n; i++)
        rc = take_sample(st, f, PySequence_Fast_GET_ITEM(seq, i), i, out);
    Py_DECREF(seq);
    out->num_samples = (int)f->n;
    out->shapes = f->shapes;
    out->data = f->data;
    return rc;
}

PyObject *slpy_pipeline_feed_input(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"name", "samples", "layout", NULL};
    slpy_pipeline *self = (slpy_pipeline *)obj;
    slpy_state *st = slpy_state_of(obj);
    const char *name, *layout = NULL;
    PyObject *samples;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO|z:feed_input", kwlist, &name, &samples,
                                     &layout))
        return NULL;
    feed_buf f = {0};
    sl_feed batch = {.layout = layout, .dtype = SL_DTYPE_UINT8};
    if (take_batch(st, samples, &f, &batch) < 0 || slpy_pipeline_enter(st, self) < 0) {
        feed_fini(&f);
        return NULL;
    }
    sl_status rc;
    PyThreadState *ts = PyEval_SaveThread(); /* the copy may be large */
    rc = sl_pipeline_feed_input(self->p, name, &batch);
    PyEval_RestoreThread(ts);
    slpy_pipeline_leave(self);
    feed_fini(&f);
    if (rc != SL_OK)
        return slpy_raise_pipeline(st, self->p, rc);
    Py_RETURN_NONE;
}
