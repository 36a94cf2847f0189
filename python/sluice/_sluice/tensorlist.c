/* python/sluice/_sluice/tensorlist.c: TensorListCPU, one pipeline output of one iteration.
 *
 * Exports slpy_tensorlist_spec (sluice._sluice.TensorListCPU), slpy_sample_spec (the buffer
 * exporter behind at(i)), slpy_tensorlist_new and the dtype <-> buffer-format mapping.
 *
 * Zero copy, and memory safety: a TensorListCPU holds its own pin of the iteration's outputs
 * (sl_pipeline_outputs_pin) and a reference to its Pipeline; it unpins when it dies. Every view
 * references it: at(i) returns a NumPy array exported by a small _Sample object (which holds
 * the TensorListCPU), as_array() and the buffer protocol export the whole dense batch, and
 * DLPack capsules (dlpack.c) hold it until their deleter runs. So memory that a live Python
 * object can see is never reused by the executor, whatever release_outputs()/run() happen
 * meanwhile. Views are writable (torch.from_dlpack needs that); writing only changes that
 * iteration's copy.
 */
#include "sluice_py.h"

/* ---- dtype <-> buffer format ---------------------------------------------------------------- */

const char *slpy_dtype_format(sl_dtype t)
{
    static const char *const f[SL_DTYPE_COUNT] = {
        [SL_DTYPE_UINT8] = "B",   [SL_DTYPE_UINT16] = "H",  [SL_DTYPE_UINT32] = "I",
        [SL_DTYPE_UINT64] = "Q",  [SL_DTYPE_INT8] = "b",    [SL_DTYPE_INT16] = "h",
        [SL_DTYPE_INT32] = "i",   [SL_DTYPE_INT64] = "q",   [SL_DTYPE_FLOAT16] = "e",
        [SL_DTYPE_FLOAT32] = "f", [SL_DTYPE_FLOAT64] = "d", [SL_DTYPE_BOOL] = "?"};
    return (unsigned)t < SL_DTYPE_COUNT ? f[t] : NULL;
}

static sl_dtype by_size(Py_ssize_t size, sl_dtype s1, sl_dtype s2, sl_dtype s4, sl_dtype s8)
{
    return size == 1 ? s1 : size == 2 ? s2 : size == 4 ? s4 : size == 8 ? s8 : SL_DTYPE_INVALID;
}

sl_dtype slpy_dtype_from_format(const char *format, Py_ssize_t itemsize)
{
    const char *f = format ? format : "B";
    if (*f == '>' || *f == '!')
        return itemsize == 1 ? slpy_dtype_from_format(f + 1, itemsize) : SL_DTYPE_INVALID;
    if (*f == '@' || *f == '=' || *f == '<')
        f++;
    if (!f[0] || f[1])
        return SL_DTYPE_INVALID;
    const sl_dtype I = SL_DTYPE_INVALID;
    switch (*f) {
    case '?': return itemsize == 1 ? SL_DTYPE_BOOL : I;
    case 'e':
    case 'f':
    case 'd': return by_size(itemsize, I, SL_DTYPE_FLOAT16, SL_DTYPE_FLOAT32, SL_DTYPE_FLOAT64);
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n':
        return by_size(itemsize, SL_DTYPE_INT8, SL_DTYPE_INT16, SL_DTYPE_INT32, SL_DTYPE_INT64);
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
    case 'N':
        return by_size(itemsize, SL_DTYPE_UINT8, SL_DTYPE_UINT16, SL_DTYPE_UINT32, SL_DTYPE_UINT64);
    default: return I;
    }
}

/* ---- buffer export helper ----------------------------------------------------------------- */

static char empty_byte; /* where a zero-byte buffer points when the batch has no storage */

/* Fills view for `ndim` extents at `shape` (a leading batch extent first when lead >= 0). */
static int fill_view(Py_buffer *view, PyObject *owner, const sl_batch *b, const void *buf,
                     Py_ssize_t len, Py_ssize_t lead, const int64_t *shape, int flags)
{
    int ndim = sl_batch_ndim(b) + (lead >= 0);
    size_t item = sl_dtype_size(sl_batch_dtype(b));
    if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && ndim > 1) {
        PyErr_SetString(PyExc_BufferError, "TensorListCPU: the data is C-contiguous only");
        return -1;
    }
    Py_ssize_t *dims = PyMem_Malloc(sizeof(Py_ssize_t) * 2 * (size_t)(ndim ? ndim : 1));
    if (!dims)
        return PyErr_NoMemory(), -1;
    Py_ssize_t *strides = dims + ndim;
    for (int d = 0; d < ndim; d++)
        dims[d] = lead >= 0 ? (d == 0 ? lead : (Py_ssize_t)shape[d - 1]) : (Py_ssize_t)shape[d];
    Py_ssize_t s = (Py_ssize_t)item;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = s;
        s *= dims[d];
    }
    view->buf = buf ? (void *)buf : &empty_byte;
    view->obj = Py_NewRef(owner);
    view->len = len;
    view->readonly = 0;
    view->itemsize = (Py_ssize_t)item;
    view->format = (flags & PyBUF_FORMAT) ? (char *)slpy_dtype_format(sl_batch_dtype(b)) : NULL;
    view->ndim = (flags & PyBUF_ND) ? ndim : 1; /* a plain request sees bytes */
    view->shape = (flags & PyBUF_ND) ? dims : NULL;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? strides : NULL;
    view->suboffsets = NULL;
    view->internal = dims;
    return 0;
}

static void release_view(PyObject *self, Py_buffer *view)
{
    PyMem_Free(view->internal);
}

/* ---- TensorListCPU ------------------------------------------------------------------------ */

PyObject *slpy_tensorlist_new(slpy_state *st, PyObject *pipeline, int i)
{
    sl_outputs *pin = sl_pipeline_outputs_pin(((slpy_pipeline *)pipeline)->p);
    if (!pin)
        return PyErr_Format(st->errors[SL_EMISUSE], "no outputs are shared");
    PyTypeObject *tp = sl_batch_device(sl_outputs_get(pin, i)) == SL_DEVICE_GPU
                           ? st->tensorlist_gpu_type
                           : st->tensorlist_type;
    slpy_tensorlist *self = (slpy_tensorlist *)tp->tp_alloc(tp, 0);
    if (!self) {
        sl_outputs_unpin(pin);
        return NULL;
    }
    self->pipeline = Py_NewRef(pipeline);
    self->pin = pin;
    self->b = sl_outputs_get(pin, i);
    self->index = i;
    self->device_id = sl_pipeline_device_id(((slpy_pipeline *)pipeline)->p);
    return (PyObject *)self;
}

static void tl_dealloc(slpy_tensorlist *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    if (self->pin)
        sl_outputs_unpin(self->pin); /* thread-safe, never blocks for long */
    Py_XDECREF(self->pipeline);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static Py_ssize_t tl_len(PyObject *self)
{
    return sl_batch_size(((slpy_tensorlist *)self)->b);
}

static int tl_getbuffer(PyObject *obj, Py_buffer *view, int flags)
{
    const sl_batch *b = ((slpy_tensorlist *)obj)->b;
    if (!sl_batch_is_uniform(b)) {
        PyErr_SetString(PyExc_BufferError, "TensorListCPU: the samples have different shapes, so "
                                           "the batch is not one dense tensor; use at(i)");
        return -1;
    }
    return fill_view(view, obj, b, sl_batch_data(b), (Py_ssize_t)sl_batch_nbytes(b),
                     sl_batch_size(b), sl_batch_shape(b, 0), flags);
}

/* The sample exporter: a _Sample(tl, i) whose buffer is sample i. */
typedef struct sample {
    PyObject_HEAD PyObject *tl;
    int i;
} sample;

static int sample_getbuffer(PyObject *obj, Py_buffer *view, int flags)
{
    sample *s = (sample *)obj;
    const sl_batch *b = ((slpy_tensorlist *)s->tl)->b;
    Py_ssize_t bytes =
        (Py_ssize_t)(sl_batch_sample_numel(b, s->i) * (int64_t)sl_dtype_size(sl_batch_dtype(b)));
    return fill_view(view, obj, b, sl_batch_sample_data(b, s->i), bytes, -1,
                     sl_batch_shape(b, s->i), flags);
}

static void sample_dealloc(sample *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    Py_XDECREF(self->tl);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyObject *tl_at_index(PyObject *self, Py_ssize_t i)
{
    slpy_state *st = slpy_state_of(self);
    Py_ssize_t n = tl_len(self);
    if (i < 0)
        i += n;
    if (i < 0 || i >= n)
        return PyErr_Format(PyExc_IndexError, "sample index out of range (batch of %zd)", n);
    PyObject *asarray = slpy_np_asarray(st);
    if (!asarray)
        return NULL;
    sample *s = (sample *)st->sample_type->tp_alloc(st->sample_type, 0);
    if (!s)
        return NULL;
    s->tl = Py_NewRef(self);
    s->i = (int)i;
    PyObject *arr = PyObject_CallOneArg(asarray, (PyObject *)s);
    Py_DECREF(s);
    return arr;
}

static PyObject *tl_at(PyObject *self, PyObject *arg)
{
    Py_ssize_t i = PyNumber_AsSsize_t(arg, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    return tl_at_index(self, i);
}

static PyObject *tl_subscript(PyObject *self, PyObject *key)
{
    if (!PySlice_Check(key))
        return tl_at(self, key);
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(key, &start, &stop, &step) < 0)
        return NULL;
    Py_ssize_t n = PySlice_AdjustIndices(tl_len(self), &start, &stop, step);
    PyObject *l = PyList_New(n);
    for (Py_ssize_t k = 0; l && k < n; k++) {
        PyObject *a = tl_at_index(self, start + k * step);
        if (!a) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, k, a);
    }
    return l;
}

static PyObject *tl_is_dense(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(sl_batch_is_uniform(((slpy_tensorlist *)self)->b));
}

static PyObject *tl_as_array(PyObject *self, PyObject *unused)
{
    slpy_state *st = slpy_state_of(self);
    const sl_batch *b = ((slpy_tensorlist *)self)->b;
    if (!sl_batch_is_uniform(b)) {
        const int64_t *s0 = sl_batch_shape(b, 0);
        int k = 1;
        while (k < sl_batch_size(b) &&
               memcmp(sl_batch_shape(b, k), s0, sizeof(int64_t) * (size_t)sl_batch_ndim(b)) == 0)
            k++;
        return PyErr_Format(st->errors[SL_EINVAL],
                            "as_array: the samples have different shapes (sample %d differs "
                            "from sample 0), so the batch is not one dense tensor; use at(i) "
                            "per sample",
                            k);
    }
    PyObject *asarray = slpy_np_asarray(st);
    return asarray ? PyObject_CallOneArg(asarray, self) : NULL;
}

static PyObject *tl_layout(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(sl_batch_layout(((slpy_tensorlist *)self)->b));
}

static PyObject *shape_tuple(const sl_batch *b, int i)
{
    int nd = sl_batch_ndim(b);
    const int64_t *s = sl_batch_shape(b, i);
    PyObject *t = PyTuple_New(nd);
    for (int d = 0; t && d < nd; d++) {
        PyObject *e = PyLong_FromLongLong(s[d]);
        if (!e) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, d, e);
    }
    return t;
}

static PyObject *tl_shape(PyObject *self, PyObject *unused)
{
    const sl_batch *b = ((slpy_tensorlist *)self)->b;
    PyObject *l = PyList_New(sl_batch_size(b));
    for (int i = 0; l && i < sl_batch_size(b); i++) {
        PyObject *t = shape_tuple(b, i);
        if (!t) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, t);
    }
    return l;
}

static PyObject *tl_data_ptr(PyObject *self, PyObject *unused)
{
    return PyLong_FromVoidPtr((void *)sl_batch_data(((slpy_tensorlist *)self)->b));
}

static PyObject *tl_source_info(PyObject *self, PyObject *arg)
{
    const sl_batch *b = ((slpy_tensorlist *)self)->b;
    Py_ssize_t i = PyNumber_AsSsize_t(arg, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    if (i < 0 || i >= sl_batch_size(b))
        return PyErr_Format(PyExc_IndexError, "sample index out of range");
    const char *s = sl_batch_source(b, (int)i);
    return PyUnicode_FromString(s ? s : "");
}

static PyObject *tl_dtype(PyObject *self, void *closure)
{
    slpy_state *st = slpy_state_of(self);
    sl_dtype t = sl_batch_dtype(((slpy_tensorlist *)self)->b);
    if (st->dtypes && (unsigned)t < SL_DTYPE_COUNT)
        return Py_NewRef(PyTuple_GET_ITEM(st->dtypes, t));
    return PyUnicode_FromString(sl_dtype_name(t));
}

static PyObject *tl_iteration(PyObject *self, void *closure)
{
    return PyLong_FromLongLong(sl_outputs_iteration(((slpy_tensorlist *)self)->pin));
}

static PyObject *tl_repr(PyObject *self)
{
    const sl_batch *b = ((slpy_tensorlist *)self)->b;
    PyObject *shape = tl_shape(self, NULL);
    if (!shape)
        return NULL;
    PyObject *r = PyUnicode_FromFormat(
        "%s(iteration=%lld, dtype=%s, layout=\"%s\", shape=%R)", _PyType_Name(Py_TYPE(self)),
        (long long)sl_outputs_iteration(((slpy_tensorlist *)self)->pin),
        sl_dtype_name(sl_batch_dtype(b)), sl_batch_layout(b), shape);
    Py_DECREF(shape);
    return r;
}

static PyMethodDef tl_methods[] = {
    {"at", tl_at, METH_O, "at(i) -> numpy.ndarray: sample i, a view (no copy)."},
    {"as_array", tl_as_array, METH_NOARGS,
     "as_array() -> numpy.ndarray [batch, ...]: the dense batch, a view; error when the "
     "samples' shapes differ."},
    {"as_tensor", tl_as_array, METH_NOARGS,
     "as_tensor() -> numpy.ndarray: same as as_array() (DALI returns a TensorCPU)."},
    {"is_dense_tensor", tl_is_dense, METH_NOARGS,
     "is_dense_tensor() -> bool: whether all samples share one shape."},
    {"layout", tl_layout, METH_NOARGS, "layout() -> str: \"HWC\", \"CHW\"... or \"\"."},
    {"shape", tl_shape, METH_NOARGS, "shape() -> list of tuples: each sample's shape."},
    {"data_ptr", tl_data_ptr, METH_NOARGS, "data_ptr() -> int: address of the batch storage."},
    {"source_info", tl_source_info, METH_O,
     "source_info(i) -> str: the file sample i came from (\"\" when unknown)."},
    {"__dlpack__", SLPY_CFUNC(slpy_tensorlist_dlpack), METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(stream=None, max_version=None, dl_device=None, copy=None): a DLPack capsule "
     "of the dense batch (no copy)."},
    {"__dlpack_device__", slpy_tensorlist_dlpack_device, METH_NOARGS,
     "__dlpack_device__() -> (1, 0): kDLCPU."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef tl_getset[] = {
    {"dtype", tl_dtype, NULL, "Element type (a sluice.types.DALIDataType member).", NULL},
    {"iteration", tl_iteration, NULL, "The iteration these outputs belong to.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot tl_slots[] = {
    {Py_tp_dealloc, tl_dealloc},
    {Py_tp_methods, tl_methods},
    {Py_tp_getset, tl_getset},
    {Py_tp_repr, tl_repr},
    {Py_sq_length, tl_len},
    {Py_sq_item, tl_at_index},
    {Py_mp_length, tl_len},
    {Py_mp_subscript, tl_subscript},
    {Py_bf_getbuffer, tl_getbuffer},
    {Py_bf_releasebuffer, release_view},
    {Py_tp_doc, "One output of one iteration: a batch of samples on the CPU. Holds the "
                "iteration's buffers until it and every view of it are gone."},
    {0, NULL}};

PyType_Spec slpy_tensorlist_spec = {
    .name = "sluice._sluice.TensorListCPU",
    .basicsize = sizeof(slpy_tensorlist),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = tl_slots,
};

static PyType_Slot sample_slots[] = {{Py_tp_dealloc, sample_dealloc},
                                     {Py_bf_getbuffer, sample_getbuffer},
                                     {Py_bf_releasebuffer, release_view},
                                     {Py_tp_doc, "Buffer of one sample of a TensorListCPU."},
                                     {0, NULL}};

/* ---- TensorListGPU ------------------------------------------------------------------------ */

/* as_cpu(): the batch copied to host memory, as a sluice.tensors.TensorListHost. */
static PyObject *tlg_as_cpu(PyObject *self, PyObject *unused)
{
    slpy_state *st = slpy_state_of(self);
    const sl_batch *b = ((slpy_tensorlist *)self)->b;
    size_t n = sl_batch_nbytes(b);
    PyObject *buf = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)n);
    if (!buf)
        return NULL;
    sl_status rc;
    char *dst = PyByteArray_AS_STRING(buf);
    Py_BEGIN_ALLOW_THREADS rc = sl_batch_copy_to_host(b, dst, n);
    Py_END_ALLOW_THREADS if (rc != SL_OK)
    {
        Py_DECREF(buf);
        return slpy_raise_last(st, rc);
    }
    PyObject *mod = PyImport_ImportModule("sluice.tensors");
    PyObject *cls = mod ? PyObject_GetAttrString(mod, "TensorListHost") : NULL;
    Py_XDECREF(mod);
    PyObject *shape = tl_shape(self, NULL);
    PyObject *dtype = tl_dtype(self, NULL);
    PyObject *sources = PyList_New(sl_batch_size(b));
    for (int i = 0; sources && i < sl_batch_size(b); i++) {
        const char *src = sl_batch_source(b, i);
        PyObject *s = PyUnicode_FromString(src ? src : "");
        if (!s) {
            Py_CLEAR(sources);
            break;
        }
        PyList_SET_ITEM(sources, i, s);
    }
    PyObject *r = NULL;
    if (cls && shape && dtype && sources)
        r = PyObject_CallFunction(cls, "OOOsOL", buf, shape, dtype, sl_batch_layout(b), sources,
                                  (long long)sl_outputs_iteration(((slpy_tensorlist *)self)->pin));
    Py_XDECREF(cls);
    Py_XDECREF(shape);
    Py_XDECREF(dtype);
    Py_XDECREF(sources);
    Py_DECREF(buf);
    return r;
}

static PyObject *tlg_device_id(PyObject *self, void *closure)
{
    return PyLong_FromLong(((slpy_tensorlist *)self)->device_id);
}

static PyMethodDef tlg_methods[] = {
    {"as_cpu", tlg_as_cpu, METH_NOARGS,
     "as_cpu() -> TensorListHost: the batch copied to host memory (at(i), as_array() give "
     "NumPy arrays)."},
    {"is_dense_tensor", tl_is_dense, METH_NOARGS,
     "is_dense_tensor() -> bool: whether all samples share one shape."},
    {"layout", tl_layout, METH_NOARGS, "layout() -> str: \"HWC\", \"CHW\"... or \"\"."},
    {"shape", tl_shape, METH_NOARGS, "shape() -> list of tuples: each sample's shape."},
    {"data_ptr", tl_data_ptr, METH_NOARGS,
     "data_ptr() -> int: device address of the batch storage."},
    {"source_info", tl_source_info, METH_O,
     "source_info(i) -> str: the file sample i came from (\"\" when unknown)."},
    {"__dlpack__", SLPY_CFUNC(slpy_tensorlist_dlpack), METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(stream=None, max_version=None, dl_device=None, copy=None): a DLPack capsule "
     "of the dense batch on the GPU (kDLCUDA, no copy). The data is complete before the "
     "outputs are returned; `stream` is the consumer's stream, whose queued work on these "
     "buffers finishes before sluice reuses them."},
    {"__dlpack_device__", slpy_tensorlist_dlpack_device, METH_NOARGS,
     "__dlpack_device__() -> (2, device_id): kDLCUDA."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef tlg_getset[] = {
    {"dtype", tl_dtype, NULL, "Element type (a sluice.types.DALIDataType member).", NULL},
    {"iteration", tl_iteration, NULL, "The iteration these outputs belong to.", NULL},
    {"device_id", tlg_device_id, NULL, "The CUDA device the data is on.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot tlg_slots[] = {
    {Py_tp_dealloc, tl_dealloc},
    {Py_tp_methods, tlg_methods},
    {Py_tp_getset, tlg_getset},
    {Py_tp_repr, tl_repr},
    {Py_sq_length, tl_len},
    {Py_mp_length, tl_len},
    {Py_tp_doc, "One output of one iteration: a batch of samples in GPU memory. Holds the "
                "iteration's buffers until it and every DLPack export of it are gone. "
                "torch.from_dlpack(t) takes it without a copy; as_cpu() copies it to the host."},
    {0, NULL}};

PyType_Spec slpy_tensorlist_gpu_spec = {
    .name = "sluice._sluice.TensorListGPU",
    .basicsize = sizeof(slpy_tensorlist),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = tlg_slots,
};

PyType_Spec slpy_sample_spec = {
    .name = "sluice._sluice._Sample",
    .basicsize = sizeof(sample),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = sample_slots,
};
