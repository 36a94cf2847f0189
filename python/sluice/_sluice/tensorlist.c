/* python/sluice/_sluice/tensorlist.c: TensorListCPU and TensorListGPU, one pipeline output of
 * one iteration (or, hostlist.c, a batch a list owns).
 *
 * Exports slpy_tensorlist_spec (sluice._sluice.TensorListCPU), slpy_tensorlist_gpu_spec
 * (TensorListGPU), slpy_tensorlist_new and slpy_tensorlist_own.
 *
 * What DALI returns: tl[i] (and iteration) a TensorCPU / TensorGPU of sample i, tl.at(i) a
 * NumPy array of it (TensorListGPU: a TensorGPU, deprecated in DALI), as_tensor() /
 * as_reshaped_tensor(shape) the dense batch as one tensor, as_cpu() the list itself (a host
 * copy for TensorListGPU), len(), shape(), layout(), dtype.
 *
 * Zero copy, and memory safety: a list of pipeline outputs holds its own pin of the iteration's
 * outputs (sl_pipeline_outputs_pin) and a reference to its Pipeline; it unpins when it dies.
 * Every view references it: tensors (tl[i], as_tensor()) hold the list, NumPy arrays
 * (at(i), as_array(), the buffer protocol) hold the list or a tensor, DLPack capsules (dlpack.c)
 * hold it until their deleter runs. So memory that a live Python object can see is never reused
 * by the executor, whatever release_outputs()/run() happen meanwhile. Views are writable
 * (torch.from_dlpack needs that); writing only changes that iteration's copy.
 */
#include "sluice_py.h"

static PyObject *tl_new_object(slpy_state *st, PyTypeObject *tp, PyObject *pipeline)
{
    slpy_tensorlist *self = (slpy_tensorlist *)tp->tp_alloc(tp, 0);
    if (self) {
        self->pipeline = Py_XNewRef(pipeline);
        self->device_id = pipeline ? sl_pipeline_device_id(((slpy_pipeline *)pipeline)->p) : -1;
    }
    return (PyObject *)self;
}

PyObject *slpy_tensorlist_new(slpy_state *st, PyObject *pipeline, int i)
{
    sl_outputs *pin = sl_pipeline_outputs_pin(((slpy_pipeline *)pipeline)->p);
    if (!pin)
        return PyErr_Format(st->errors[SL_EMISUSE], "no outputs are shared");
    bool gpu = sl_batch_device(sl_outputs_get(pin, i)) == SL_DEVICE_GPU;
    slpy_tensorlist *self = (slpy_tensorlist *)tl_new_object(
        st, gpu ? st->tensorlist_gpu_type : st->tensorlist_type, pipeline);
    if (!self) {
        sl_outputs_unpin(pin);
        return NULL;
    }
    self->pin = pin;
    self->b = sl_outputs_get(pin, i);
    self->index = i;
    return (PyObject *)self;
}

PyObject *slpy_tensorlist_own(slpy_state *st, sl_batch *own, PyObject *pipeline)
{
    slpy_tensorlist *self = (slpy_tensorlist *)tl_new_object(st, st->tensorlist_type, pipeline);
    if (!self) {
        sl__batch_fini(own);
        sl__free(own);
        return NULL;
    }
    self->own = own;
    self->b = own;
    self->index = -1;
    return (PyObject *)self;
}

static void tl_dealloc(slpy_tensorlist *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    if (self->pin)
        sl_outputs_unpin(self->pin); /* thread-safe, never blocks for long */
    if (self->own) {
        sl__batch_fini(self->own);
        sl__free(self->own);
    }
    Py_XDECREF(self->pipeline);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static Py_ssize_t tl_len(PyObject *self)
{
    return sl_batch_size(((slpy_tensorlist *)self)->b);
}

static bool is_gpu(const sl_batch *b)
{
    return sl_batch_device(b) == SL_DEVICE_GPU;
}

/* The dense batch [batch, ...sample shape] (shape: room for SL_MAX_NDIM + 1 extents); an empty
 * batch is [0]. Returns false with an exception (`what` names the caller) when the samples'
 * shapes differ. */
static bool dense_region(PyObject *self, int64_t *shape, slpy_region *r, PyObject *err,
                         const char *what)
{
    const slpy_tensorlist *tl = (slpy_tensorlist *)self;
    const sl_batch *b = tl->b;
    int n = sl_batch_size(b);
    if (!sl_batch_is_uniform(b)) {
        const int64_t *s0 = sl_batch_shape(b, 0);
        int k = 1;
        while (k < n &&
               memcmp(sl_batch_shape(b, k), s0, sizeof(int64_t) * (size_t)sl_batch_ndim(b)) == 0)
            k++;
        PyErr_Format(err,
                     "%s: the samples have different shapes (sample %d differs from sample 0), "
                     "so the batch is not one dense tensor; use at(i) or [i] per sample",
                     what, k);
        return false;
    }
    shape[0] = n;
    int ndim = n > 0 ? sl_batch_ndim(b) + 1 : 1;
    if (n > 0)
        memcpy(shape + 1, sl_batch_shape(b, 0), sizeof(int64_t) * (size_t)(ndim - 1));
    *r = (slpy_region){.data = (void *)sl_batch_data(b),
                       .dtype = sl_batch_dtype(b),
                       .ndim = ndim,
                       .shape = shape,
                       .gpu = is_gpu(b),
                       .device_id = tl->device_id,
                       .pin = tl->pin};
    return true;
}

static int tl_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    int64_t shape[SL_MAX_NDIM + 1];
    slpy_region r;
    if (!dense_region(self, shape, &r, PyExc_BufferError, "TensorListCPU"))
        return -1;
    return slpy_fill_view(view, self, &r, flags);
}

/* Sample i (negative from the end) as a TensorCPU / TensorGPU. */
static PyObject *tl_item(PyObject *self, Py_ssize_t i)
{
    const slpy_tensorlist *tl = (slpy_tensorlist *)self;
    const sl_batch *b = tl->b;
    Py_ssize_t n = tl_len(self);
    if (i < 0)
        i += n;
    if (i < 0 || i >= n)
        return PyErr_Format(PyExc_IndexError, "sample index out of range (batch of %zd)", n);
    slpy_region r = {.data = (void *)sl_batch_sample_data(b, (int)i),
                     .dtype = sl_batch_dtype(b),
                     .ndim = sl_batch_ndim(b),
                     .shape = sl_batch_shape(b, (int)i),
                     .gpu = is_gpu(b),
                     .device_id = tl->device_id,
                     .pin = tl->pin};
    return slpy_tensor_new(slpy_state_of(self), self, &r, sl_batch_layout(b),
                           sl_batch_source(b, (int)i));
}

static Py_ssize_t index_of(PyObject *arg)
{
    return PyNumber_AsSsize_t(arg, PyExc_IndexError);
}

/* at(i): TensorListCPU: a NumPy view of sample i; TensorListGPU: a TensorGPU (DALI deprecated
 * it in favour of [i]). */
static PyObject *tl_at(PyObject *self, PyObject *arg)
{
    Py_ssize_t i = index_of(arg);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    PyObject *t = tl_item(self, i);
    if (!t || is_gpu(((slpy_tensorlist *)self)->b))
        return t;
    PyObject *asarray = slpy_np_asarray(slpy_state_of(self));
    PyObject *arr = asarray ? PyObject_CallOneArg(asarray, t) : NULL;
    Py_DECREF(t);
    return arr;
}

static PyObject *tlg_at(PyObject *self, PyObject *arg)
{
    if (PyErr_WarnEx(PyExc_DeprecationWarning,
                     "TensorListGPU.at(i) is deprecated (as in DALI): use tl[i]", 1) < 0)
        return NULL;
    return tl_at(self, arg);
}

/* tl[i]: a tensor; tl[a:b:c]: a list of tensors (DALI has no slices). */
static PyObject *tl_subscript(PyObject *self, PyObject *key)
{
    if (!PySlice_Check(key)) {
        Py_ssize_t i = index_of(key);
        return i == -1 && PyErr_Occurred() ? NULL : tl_item(self, i);
    }
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(key, &start, &stop, &step) < 0)
        return NULL;
    Py_ssize_t n = PySlice_AdjustIndices(tl_len(self), &start, &stop, step);
    PyObject *l = PyList_New(n);
    for (Py_ssize_t k = 0; l && k < n; k++) {
        PyObject *a = tl_item(self, start + k * step);
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
    int64_t shape[SL_MAX_NDIM + 1];
    slpy_region r;
    if (!dense_region(self, shape, &r, st->errors[SL_EINVAL], "as_array"))
        return NULL;
    PyObject *asarray = slpy_np_asarray(st);
    return asarray ? PyObject_CallOneArg(asarray, self) : NULL;
}

/* as_tensor(): the dense batch as one TensorCPU / TensorGPU [batch, ...], a view. */
static PyObject *tl_as_tensor(PyObject *self, PyObject *unused)
{
    slpy_state *st = slpy_state_of(self);
    int64_t shape[SL_MAX_NDIM + 1];
    slpy_region r;
    if (!dense_region(self, shape, &r, st->errors[SL_EINVAL], "as_tensor"))
        return NULL;
    const sl_batch *b = ((slpy_tensorlist *)self)->b;
    char layout[SL_MAX_NDIM + 2] = ""; /* the sample layout after a batch axis, as in DALI: N */
    if (sl_batch_layout(b)[0])
        snprintf(layout, sizeof layout, "N%s", sl_batch_layout(b));
    return slpy_tensor_new(st, self, &r, layout, NULL);
}

/* as_reshaped_tensor(shape): the batch's elements (contiguous) as one tensor of `shape`. */
static PyObject *tl_as_reshaped_tensor(PyObject *self, PyObject *arg)
{
    slpy_state *st = slpy_state_of(self);
    const slpy_tensorlist *tl = (slpy_tensorlist *)self;
    const sl_batch *b = tl->b;
    PyObject *seq = PySequence_Fast(arg, "as_reshaped_tensor: shape must be a list of ints");
    if (!seq)
        return NULL;
    Py_ssize_t nd = PySequence_Fast_GET_SIZE(seq);
    int64_t shape[SLPY_TENSOR_MAX_NDIM], volume = 1;
    for (Py_ssize_t d = 0; d < nd && d < SLPY_TENSOR_MAX_NDIM; d++) {
        shape[d] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, d));
        if (shape[d] == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return NULL;
        }
        volume *= shape[d] < 0 ? 0 : shape[d];
    }
    Py_DECREF(seq);
    int64_t numel = (int64_t)(sl_batch_nbytes(b) / sl_dtype_size(sl_batch_dtype(b)));
    for (Py_ssize_t d = 0; d < nd && d < SLPY_TENSOR_MAX_NDIM; d++)
        if (shape[d] < 0)
            volume = -1;
    if (nd > SLPY_TENSOR_MAX_NDIM || volume != numel)
        return PyErr_Format(st->errors[SL_EINVAL],
                            "as_reshaped_tensor: to create a view tensor, the requested shape "
                            "needs the batch's volume: requested %lld, expected %lld (at most "
                            "%d non-negative extents)",
                            (long long)volume, (long long)numel, SLPY_TENSOR_MAX_NDIM);
    const char *l = sl_batch_layout(b);
    char layout[SL_MAX_NDIM + 2] = ""; /* N + the sample layout when the dimensions fit */
    if (l[0] && (size_t)nd == strlen(l) + 1)
        snprintf(layout, sizeof layout, "N%s", l);
    slpy_region r = {.data = (void *)sl_batch_data(b),
                     .dtype = sl_batch_dtype(b),
                     .ndim = (int)nd,
                     .shape = shape,
                     .gpu = is_gpu(b),
                     .device_id = tl->device_id,
                     .pin = tl->pin};
    return slpy_tensor_new(st, self, &r, layout, NULL);
}

static PyObject *tl_as_cpu(PyObject *self, PyObject *unused)
{
    return Py_NewRef(self);
}

static PyObject *tl_layout(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(sl_batch_layout(((slpy_tensorlist *)self)->b));
}

static PyObject *tl_ndim(PyObject *self, PyObject *unused)
{
    return PyLong_FromLong(sl_batch_ndim(((slpy_tensorlist *)self)->b));
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
    Py_ssize_t i = index_of(arg);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    if (i < 0 || i >= sl_batch_size(b))
        return PyErr_Format(PyExc_IndexError, "sample index out of range");
    const char *s = sl_batch_source(b, (int)i);
    return PyUnicode_FromString(s ? s : "");
}

static PyObject *tl_dlpack(PyObject *self, PyObject *args, PyObject *kwargs)
{
    int64_t shape[SL_MAX_NDIM + 1];
    slpy_region r;
    if (!dense_region(self, shape, &r, PyExc_BufferError, "__dlpack__"))
        return NULL;
    return slpy_dlpack(self, &r, args, kwargs);
}

static PyObject *tl_dlpack_device(PyObject *self, PyObject *unused)
{
    const slpy_tensorlist *tl = (slpy_tensorlist *)self;
    slpy_region r = {.gpu = is_gpu(tl->b), .device_id = tl->device_id};
    return slpy_dlpack_device(&r);
}

static PyObject *tl_dtype(PyObject *self, void *closure)
{
    slpy_state *st = slpy_state_of(self);
    sl_dtype t = sl_batch_dtype(((slpy_tensorlist *)self)->b);
    if (st->dtypes && (unsigned)t < SL_DTYPE_COUNT)
        return Py_NewRef(PyTuple_GET_ITEM(st->dtypes, t));
    return PyUnicode_FromString(sl_dtype_name(t));
}

/* The iteration of a pipeline output; None for a list that owns its batch. */
static PyObject *tl_iteration(PyObject *self, void *closure)
{
    const slpy_tensorlist *tl = (slpy_tensorlist *)self;
    if (!tl->pin)
        Py_RETURN_NONE;
    return PyLong_FromLongLong(sl_outputs_iteration(tl->pin));
}

static PyObject *tl_repr(PyObject *self)
{
    const slpy_tensorlist *tl = (slpy_tensorlist *)self;
    const sl_batch *b = tl->b;
    PyObject *shape = tl_shape(self, NULL);
    if (!shape)
        return NULL;
    PyObject *r = PyUnicode_FromFormat("%s(iteration=%lld, dtype=%s, layout=\"%s\", shape=%R)",
                                       _PyType_Name(Py_TYPE(self)),
                                       tl->pin ? (long long)sl_outputs_iteration(tl->pin) : -1LL,
                                       sl_dtype_name(sl_batch_dtype(b)), sl_batch_layout(b), shape);
    Py_DECREF(shape);
    return r;
}

/* str: DALI's text, data included (sluice.tensors._tensorlist_to_string). */
static PyObject *tl_str(PyObject *self)
{
    PyObject *mod = PyImport_ImportModule("sluice.tensors");
    PyObject *r = mod ? PyObject_CallMethod(mod, "_tensorlist_to_string", "O", self) : NULL;
    Py_XDECREF(mod);
    return r;
}

static PyObject *tlg_device_id(PyObject *self, PyObject *unused)
{
    return PyLong_FromLong(((slpy_tensorlist *)self)->device_id);
}

/* ---- types ----------------------------------------------------------------------------------- */

#define COMMON_METHODS                                                                             \
    {"as_tensor", tl_as_tensor, METH_NOARGS,                                                       \
     "as_tensor() -> tensor [batch, ...]: the dense batch, a view; error when the samples' "       \
     "shapes differ."},                                                                            \
        {"as_reshaped_tensor", tl_as_reshaped_tensor, METH_O,                                      \
         "as_reshaped_tensor(shape) -> tensor: the batch's elements viewed with `shape` (same "    \
         "number of elements)."},                                                                  \
        {"is_dense_tensor", tl_is_dense, METH_NOARGS,                                              \
         "is_dense_tensor() -> bool: whether all samples share one shape."},                       \
        {"layout", tl_layout, METH_NOARGS, "layout() -> str: \"HWC\", \"CHW\"... or \"\"."},       \
        {"shape", tl_shape, METH_NOARGS, "shape() -> list of tuples: each sample's shape."},       \
        {"ndim", tl_ndim, METH_NOARGS, "ndim() -> int: dimensions of the samples."},               \
        {"source_info", tl_source_info, METH_O,                                                    \
         "source_info(i) -> str: the file sample i came from (\"\" when unknown)."},               \
        {"__dlpack__", SLPY_CFUNC(tl_dlpack), METH_VARARGS | METH_KEYWORDS,                        \
         "__dlpack__(stream=None, max_version=None, dl_device=None, copy=None): a DLPack "         \
         "capsule of the dense batch (no copy)."},                                                 \
    {                                                                                              \
        "__dlpack_device__", tl_dlpack_device, METH_NOARGS,                                        \
            "__dlpack_device__() -> (1, 0) kDLCPU or (2, device_id) kDLCUDA."                      \
    }

static PyMethodDef tl_methods[] = {
    COMMON_METHODS,
    {"at", tl_at, METH_O, "at(i) -> numpy.ndarray: sample i, a view (no copy)."},
    {"as_array", tl_as_array, METH_NOARGS,
     "as_array() -> numpy.ndarray [batch, ...]: the dense batch, a view; error when the "
     "samples' shapes differ."},
    {"as_cpu", tl_as_cpu, METH_NOARGS, "as_cpu() -> TensorListCPU: itself (already on the CPU)."},
    {"data_ptr", tl_data_ptr, METH_NOARGS, "data_ptr() -> int: address of the batch storage."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef tl_getset[] = {
    {"dtype", tl_dtype, NULL, "Element type (a sluice.types.DALIDataType member).", NULL},
    {"iteration", tl_iteration, NULL,
     "The iteration these outputs belong to (None for a list made from Python data).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot tl_slots[] = {
    {Py_tp_new, slpy_tensorlist_construct},
    {Py_tp_dealloc, tl_dealloc},
    {Py_tp_methods, tl_methods},
    {Py_tp_getset, tl_getset},
    {Py_tp_repr, tl_repr},
    {Py_tp_str, tl_str},
    {Py_sq_length, tl_len},
    {Py_sq_item, tl_item},
    {Py_mp_length, tl_len},
    {Py_mp_subscript, tl_subscript},
    {Py_bf_getbuffer, tl_getbuffer},
    {Py_bf_releasebuffer, slpy_release_view},
    {Py_tp_doc, "A batch of samples on the CPU: one output of one iteration (it holds the "
                "iteration's buffers until it and every view of it are gone), or "
                "TensorListCPU(data, layout=None) made from NumPy data (copied). tl[i] is a "
                "TensorCPU, tl.at(i) a NumPy array."},
    {0, NULL}};

PyType_Spec slpy_tensorlist_spec = {
    .name = "sluice._sluice.TensorListCPU",
    .basicsize = sizeof(slpy_tensorlist),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = tl_slots,
};

static PyMethodDef tlg_methods[] = {
    COMMON_METHODS,
    {"at", tlg_at, METH_O, "at(i) -> TensorGPU: sample i (deprecated, as in DALI: use tl[i])."},
    {"as_cpu", slpy_tensorlist_to_host, METH_NOARGS,
     "as_cpu() -> TensorListCPU: the batch copied to host memory."},
    {"data_ptr", tl_data_ptr, METH_NOARGS,
     "data_ptr() -> int: device address of the batch storage."},
    {"device_id", tlg_device_id, METH_NOARGS, "device_id() -> int: the CUDA device of the data."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef tlg_getset[] = {
    {"dtype", tl_dtype, NULL, "Element type (a sluice.types.DALIDataType member).", NULL},
    {"iteration", tl_iteration, NULL, "The iteration these outputs belong to.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot tlg_slots[] = {
    {Py_tp_dealloc, tl_dealloc},
    {Py_tp_methods, tlg_methods},
    {Py_tp_getset, tlg_getset},
    {Py_tp_repr, tl_repr},
    {Py_tp_str, tl_str},
    {Py_sq_length, tl_len},
    {Py_sq_item, tl_item},
    {Py_mp_length, tl_len},
    {Py_mp_subscript, tl_subscript},
    {Py_tp_doc, "One output of one iteration: a batch of samples in GPU memory. Holds the "
                "iteration's buffers until it and every export of it are gone. tl[i] is a "
                "TensorGPU; torch.from_dlpack(t) takes it without a copy; as_cpu() copies it "
                "to the host."},
    {0, NULL}};

PyType_Spec slpy_tensorlist_gpu_spec = {
    .name = "sluice._sluice.TensorListGPU",
    .basicsize = sizeof(slpy_tensorlist),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = tlg_slots,
};
