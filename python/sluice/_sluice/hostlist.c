/* python/sluice/_sluice/hostlist.c: TensorListCPU objects that own their batch — made from
 * Python data (TensorListCPU(data, layout=None), as DALI's constructor) or copied from the GPU
 * (TensorListGPU.as_cpu()).
 *
 * Exports slpy_tensorlist_construct (TensorListCPU's tp_new) and slpy_tensorlist_to_host.
 * The data is copied once into a host sl_batch (core's batch storage: contiguous, 64-byte
 * aligned) that the new list owns (slpy_tensorlist.own) and frees when it dies; everything else
 * (tl[i], at(i), as_tensor(), the buffer protocol, DLPack) works as for pipeline outputs.
 * Accepted data, as in DALI: a list of samples (NumPy arrays, TensorCPU, anything TensorCPU()
 * takes) of one dtype and number of dimensions, an array whose first axis is the batch (or a
 * DLPack capsule of one), another TensorListCPU. Errors use DALI's words: TypeError "Object at
 * position i cannot be converted to TensorCPU." and "Tensors cannot have different data
 * types. ...".
 */
#include "sluice_py.h"

/* A TensorCPU over obj (no copy), or NULL with an exception. */
static slpy_tensor *as_tensor(slpy_state *st, PyObject *obj)
{
    if (PyObject_TypeCheck(obj, st->tensor_type))
        return (slpy_tensor *)Py_NewRef(obj);
    return (slpy_tensor *)PyObject_CallOneArg((PyObject *)st->tensor_type, obj);
}

/* A new host batch of n samples of dtype/ndim/layout whose shapes `shape_of` gives, allocated;
 * NULL with an exception. */
static sl_batch *new_batch(slpy_state *st, int n, sl_dtype dtype, int ndim, const char *layout,
                           const int64_t *(*shape_of)(void *ctx, int i), void *ctx)
{
    if (ndim > SL_MAX_NDIM || (layout && strlen(layout) > SL_MAX_NDIM)) {
        PyErr_Format(st->errors[SL_EUNSUPPORTED],
                     "TensorListCPU: samples of at most %d dimensions (and layout letters)",
                     SL_MAX_NDIM);
        return NULL;
    }
    sl_batch *b = sl__calloc(1, sizeof(sl_batch));
    if (!b)
        return (sl_batch *)PyErr_NoMemory();
    sl__batch_init(b);
    sl_status rc = sl__batch_begin(b, n, dtype, ndim, layout);
    for (int i = 0; rc == SL_OK && i < n; i++)
        memcpy(sl__batch_shape_mut(b, i), shape_of(ctx, i), sizeof(int64_t) * (size_t)ndim);
    if (rc == SL_OK)
        rc = sl__batch_alloc(b);
    if (rc != SL_OK) {
        sl__batch_fini(b);
        sl__free(b);
        return (sl_batch *)PyErr_NoMemory();
    }
    return b;
}

static const int64_t *tensor_shape(void *ctx, int i)
{
    return ((slpy_tensor **)ctx)[i]->shape;
}

/* From a list of samples. */
static PyObject *from_samples(slpy_state *st, PyObject *seq, const char *layout)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > INT_MAX)
        return PyErr_Format(PyExc_ValueError, "TensorListCPU: too many samples");
    slpy_tensor **t = PyMem_Calloc((size_t)(n ? n : 1), sizeof(slpy_tensor *));
    if (!t)
        return PyErr_NoMemory();
    PyObject *r = NULL;
    sl_batch *b = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        t[i] = as_tensor(st, PySequence_Fast_GET_ITEM(seq, i));
        if (!t[i]) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "Object at position %zd cannot be converted to TensorCPU.", i);
            goto done;
        }
        if (i > 0 && t[i]->dtype != t[0]->dtype) {
            PyErr_Format(PyExc_TypeError,
                         "Tensors cannot have different data types. Tensor at position %zd has "
                         "type '%s' expected to have type '%s'.",
                         i, sl_dtype_name(t[i]->dtype), sl_dtype_name(t[0]->dtype));
            goto done;
        }
        if (i > 0 && t[i]->ndim != t[0]->ndim) {
            PyErr_Format(PyExc_ValueError,
                         "TensorListCPU: the samples must have one number of dimensions; tensor "
                         "at position %zd has %d, expected %d",
                         i, t[i]->ndim, t[0]->ndim);
            goto done;
        }
    }
    int ndim = n ? t[0]->ndim : (layout ? (int)strlen(layout) : 0);
    b = new_batch(st, (int)n, n ? t[0]->dtype : SL_DTYPE_UINT8, ndim, layout, tensor_shape, t);
    if (!b)
        goto done;
    for (int i = 0; i < (int)n; i++) {
        size_t bytes = (size_t)sl_batch_sample_numel(b, i) * sl_dtype_size(b->dtype);
        if (bytes)
            memcpy((void *)sl_batch_sample_data(b, i), t[i]->data, bytes);
    }
    r = slpy_tensorlist_own(st, b, NULL);
done:
    for (Py_ssize_t i = 0; i < n; i++)
        Py_XDECREF(t[i]);
    PyMem_Free(t);
    return r;
}

static const int64_t *inner_shape(void *ctx, int i)
{
    (void)i;
    return (const int64_t *)ctx;
}

/* From one array whose first axis is the batch. */
static PyObject *from_array(slpy_state *st, PyObject *obj, const char *layout)
{
    slpy_tensor *t = as_tensor(st, obj);
    if (!t)
        return NULL;
    PyObject *r = NULL;
    if (t->ndim == 0) {
        PyErr_SetString(st->errors[SL_EINVAL], "Cannot create TensorList from 0-dim array.");
    } else if (t->shape[0] > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "TensorListCPU: too many samples");
    } else {
        sl_batch *b = new_batch(st, (int)t->shape[0], t->dtype, t->ndim - 1, layout, inner_shape,
                                t->shape + 1);
        if (b && sl_batch_nbytes(b))
            memcpy((void *)sl_batch_data(b), t->data, sl_batch_nbytes(b));
        r = b ? slpy_tensorlist_own(st, b, NULL) : NULL;
    }
    Py_DECREF(t);
    return r;
}

PyObject *slpy_tensorlist_construct(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"data", "layout", "is_pinned", NULL};
    PyObject *data, *is_pinned = Py_False;
    const char *layout = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|zO:TensorListCPU", kwlist, &data, &layout,
                                     &is_pinned))
        return NULL;
    slpy_state *st = slpy_state_of_type(type);
    if (PyObject_TypeCheck(data, st->tensorlist_type)) { /* a copy, with its layout or `layout` */
        const sl_batch *src = ((slpy_tensorlist *)data)->b;
        sl_batch *b = sl__calloc(1, sizeof(sl_batch));
        if (!b)
            return PyErr_NoMemory();
        sl__batch_init(b);
        sl_status rc = sl__batch_mirror(b, src);
        if (rc == SL_OK && layout)
            snprintf(b->layout, sizeof b->layout, "%s", layout);
        if (rc == SL_OK && sl_batch_nbytes(b))
            memcpy(b->data, sl_batch_data(src), sl_batch_nbytes(b));
        if (rc != SL_OK) {
            sl__batch_fini(b);
            sl__free(b);
            return PyErr_NoMemory();
        }
        return slpy_tensorlist_own(st, b, ((slpy_tensorlist *)data)->pipeline);
    }
    if (PyList_Check(data) || PyTuple_Check(data)) {
        PyObject *seq = PySequence_Fast(data, "");
        PyObject *r = seq ? from_samples(st, seq, layout) : NULL;
        Py_XDECREF(seq);
        return r;
    }
    return from_array(st, data, layout);
}

PyObject *slpy_tensorlist_to_host(PyObject *self, PyObject *unused)
{
    slpy_state *st = slpy_state_of(self);
    const slpy_tensorlist *tl = (slpy_tensorlist *)self;
    sl_batch *b = sl__calloc(1, sizeof(sl_batch));
    if (!b)
        return PyErr_NoMemory();
    sl__batch_init(b);
    sl_status rc = sl__batch_mirror(b, tl->b); /* host storage: b was never given a device */
    if (rc != SL_OK) {
        sl__batch_fini(b);
        sl__free(b);
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS rc = sl_batch_copy_to_host(tl->b, b->data, sl_batch_nbytes(b));
    Py_END_ALLOW_THREADS if (rc != SL_OK)
    {
        sl__batch_fini(b);
        sl__free(b);
        return slpy_raise_last(st, rc);
    }
    /* the sources are the pipeline's readers' strings: keep the pipeline */
    return slpy_tensorlist_own(st, b, tl->pipeline);
}
