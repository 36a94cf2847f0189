/* python/sluice/_sluice/tensor.c: TensorCPU and TensorGPU, one sample of a batch (tl[i]) or a
 * dense batch as one tensor (tl.as_tensor()), as DALI returns them.
 *
 * Exports slpy_tensor_spec (sluice._sluice.TensorCPU), slpy_tensor_gpu_spec (TensorGPU) and
 * slpy_tensor_new. A tensor is a view: it holds a reference to the object whose memory it shows
 * (the TensorListCPU/GPU, and through it the pin of the iteration's buffers; or, made with
 * TensorCPU(data), the Python buffer or DLPack capsule it wraps), never a copy. NumPy arrays,
 * memoryviews and DLPack capsules of it hold the tensor, so the memory-safety rule of the lists
 * (outputs are set aside while referenced) covers every view. Its shape and layout are its own
 * (squeeze() changes them, not the batch's).
 * Invariant: ndim <= SLPY_TENSOR_MAX_NDIM; `data` lies inside what owner/buf/dl keeps alive.
 */
#include "sluice_py.h"

static slpy_region region_of(PyObject *self)
{
    slpy_tensor *t = (slpy_tensor *)self;
    slpy_state *st = slpy_state_of(self);
    sl_outputs *pin = NULL;
    if (t->owner && (PyObject_TypeCheck(t->owner, st->tensorlist_type) ||
                     PyObject_TypeCheck(t->owner, st->tensorlist_gpu_type)))
        pin = ((slpy_tensorlist *)t->owner)->pin;
    return (slpy_region){.data = t->data,
                         .dtype = t->dtype,
                         .ndim = t->ndim,
                         .shape = t->shape,
                         .gpu = t->gpu,
                         .device_id = t->device_id,
                         .readonly = t->readonly,
                         .pin = pin};
}

static int set_layout(slpy_tensor *t, const char *layout)
{
    size_t n = layout ? strlen(layout) : 0;
    if (n > SLPY_TENSOR_MAX_NDIM) {
        PyErr_Format(PyExc_ValueError, "layout \"%s\" is longer than %d letters", layout,
                     SLPY_TENSOR_MAX_NDIM);
        return -1;
    }
    memcpy(t->layout, layout ? layout : "", n + 1);
    return 0;
}

PyObject *slpy_tensor_new(slpy_state *st, PyObject *owner, const slpy_region *r, const char *layout,
                          const char *source)
{
    if (r->ndim > SLPY_TENSOR_MAX_NDIM)
        return PyErr_Format(PyExc_ValueError, "a tensor of %d dimensions (at most %d)", r->ndim,
                            SLPY_TENSOR_MAX_NDIM);
    PyTypeObject *tp = r->gpu ? st->tensor_gpu_type : st->tensor_type;
    slpy_tensor *t = (slpy_tensor *)tp->tp_alloc(tp, 0);
    if (!t)
        return NULL;
    t->owner = Py_XNewRef(owner);
    t->data = r->data;
    t->dtype = r->dtype;
    t->ndim = r->ndim;
    memcpy(t->shape, r->shape, sizeof(int64_t) * (size_t)r->ndim);
    t->gpu = r->gpu;
    t->readonly = r->readonly;
    t->device_id = r->gpu ? r->device_id : -1;
    if (set_layout(t, layout) < 0 ||
        (source && source[0] && !(t->source = PyUnicode_FromString(source)))) {
        Py_DECREF(t);
        return NULL;
    }
    return (PyObject *)t;
}

static void tensor_dealloc(slpy_tensor *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    if (self->buf.obj)
        PyBuffer_Release(&self->buf);
    slpy_dlpack_release(self);
    Py_XDECREF(self->owner);
    Py_XDECREF(self->source);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

/* TensorCPU(b, layout=None, is_pinned=False): wraps b without a copy — an object with the buffer
 * protocol (C-contiguous), a "dltensor" capsule of CPU memory, or an object with __dlpack__. */
static PyObject *tensor_construct(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"b", "layout", "is_pinned", NULL};
    PyObject *b, *is_pinned = Py_False;
    const char *layout = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|zO:TensorCPU", kwlist, &b, &layout,
                                     &is_pinned))
        return NULL;
    slpy_tensor *t = (slpy_tensor *)type->tp_alloc(type, 0);
    if (!t)
        return NULL;
    t->device_id = -1;
    PyObject *capsule = NULL;
    if (!PyCapsule_CheckExact(b) && !PyObject_CheckBuffer(b) &&
        PyObject_HasAttrString(b, "__dlpack__"))
        capsule = PyObject_CallMethod(b, "__dlpack__", NULL);
    int rc;
    if (capsule || PyCapsule_CheckExact(b)) {
        rc = slpy_dlpack_import(capsule ? capsule : b, t);
    } else if (PyObject_CheckBuffer(b)) {
        rc = PyObject_GetBuffer(b, &t->buf, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE);
        if (rc < 0) {
            PyErr_Clear(); /* read-only memory: a read-only tensor */
            rc = PyObject_GetBuffer(b, &t->buf, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT);
        }
        if (rc == 0) {
            t->dtype = slpy_dtype_from_format(t->buf.format, t->buf.itemsize);
            t->readonly = t->buf.readonly;
            t->data = t->buf.buf;
            t->ndim = t->buf.ndim;
            if (t->dtype == SL_DTYPE_INVALID || t->ndim > SLPY_TENSOR_MAX_NDIM) {
                PyErr_Format(PyExc_TypeError, "TensorCPU: unsupported %s (format \"%s\")",
                             t->ndim > SLPY_TENSOR_MAX_NDIM ? "number of dimensions"
                                                            : "element type",
                             t->buf.format ? t->buf.format : "B");
                rc = -1;
            }
            for (int d = 0; rc == 0 && d < t->ndim; d++)
                t->shape[d] = t->buf.shape ? t->buf.shape[d] : t->buf.len / t->buf.itemsize;
        }
    } else {
        PyErr_Format(PyExc_TypeError,
                     "TensorCPU: expected an object with the buffer protocol (a NumPy array) or "
                     "a DLPack capsule, got %s",
                     Py_TYPE(b)->tp_name);
        rc = -1;
    }
    Py_XDECREF(capsule);
    if (rc < 0 || set_layout(t, layout) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    return (PyObject *)t;
}

/* ---- methods ------------------------------------------------------------------------------- */

static PyObject *t_shape(PyObject *self, PyObject *unused)
{
    slpy_tensor *t = (slpy_tensor *)self;
    PyObject *l = PyList_New(t->ndim);
    for (int d = 0; l && d < t->ndim; d++) {
        PyObject *e = PyLong_FromLongLong(t->shape[d]);
        if (!e) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, d, e);
    }
    return l;
}

static PyObject *t_ndim(PyObject *self, PyObject *unused)
{
    return PyLong_FromLong(((slpy_tensor *)self)->ndim);
}

static PyObject *t_layout(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(((slpy_tensor *)self)->layout);
}

static PyObject *t_set_layout(PyObject *self, PyObject *arg)
{
    const char *l = arg == Py_None ? "" : PyUnicode_AsUTF8(arg);
    if (!l || set_layout((slpy_tensor *)self, l) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *t_source_info(PyObject *self, PyObject *unused)
{
    slpy_tensor *t = (slpy_tensor *)self;
    return t->source ? Py_NewRef(t->source) : PyUnicode_FromString("");
}

/* get_property(key): "layout" or "source_info" as a str, None when empty or unknown. */
static PyObject *t_get_property(PyObject *self, PyObject *key)
{
    slpy_tensor *t = (slpy_tensor *)self;
    const char *k = PyUnicode_AsUTF8(key);
    if (!k)
        return NULL;
    if (strcmp(k, "layout") == 0 && t->layout[0])
        return PyUnicode_FromString(t->layout);
    if (strcmp(k, "source_info") == 0 && t->source)
        return Py_NewRef(t->source);
    Py_RETURN_NONE;
}

static PyObject *t_data_ptr(PyObject *self, PyObject *unused)
{
    return PyLong_FromVoidPtr(((slpy_tensor *)self)->data);
}

/* squeeze(dim=None) -> bool: drops extents of 1 (all, or dimension dim, negative from the back)
 * and their layout letters; True when the shape changed. */
static PyObject *t_squeeze(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"dim", NULL};
    PyObject *dim_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:squeeze", kwlist, &dim_obj))
        return NULL;
    slpy_tensor *t = (slpy_tensor *)self;
    long dim = -1;
    if (dim_obj != Py_None) {
        dim = PyLong_AsLong(dim_obj);
        if (dim == -1 && PyErr_Occurred())
            return NULL;
        if (dim < -t->ndim || dim >= t->ndim)
            return PyErr_Format(PyExc_IndexError, "squeeze: dimension %ld out of range for %d-D",
                                dim, t->ndim);
        dim = dim < 0 ? dim + t->ndim : dim;
        if (t->shape[dim] != 1)
            return PyErr_Format(PyExc_ValueError,
                                "squeeze: dimension %ld has extent %lld; only extents of 1 go", dim,
                                (long long)t->shape[dim]);
    }
    bool with_layout = (int)strlen(t->layout) == t->ndim;
    int k = 0;
    for (int d = 0; d < t->ndim; d++) {
        bool drop = dim_obj == Py_None ? t->shape[d] == 1 : d == dim;
        if (drop)
            continue;
        t->shape[k] = t->shape[d];
        if (with_layout)
            t->layout[k] = t->layout[d];
        k++;
    }
    bool changed = k != t->ndim;
    if (with_layout)
        t->layout[k] = '\0';
    t->ndim = k;
    return PyBool_FromLong(changed);
}

static PyObject *t_dlpack(PyObject *self, PyObject *args, PyObject *kwargs)
{
    slpy_region r = region_of(self);
    return slpy_dlpack(self, &r, args, kwargs);
}

static PyObject *t_dlpack_device(PyObject *self, PyObject *unused)
{
    slpy_region r = region_of(self);
    return slpy_dlpack_device(&r);
}

/* __array__(dtype=None, copy=None): a NumPy view of the tensor (a copy when copy=True or a
 * dtype asks for one; ValueError when a dtype asks for one and copy=False, as NumPy 2's
 * protocol says: NumPy 1.x passes no copy). */
static PyObject *t_array(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:__array__", kwlist, &dtype, &copy))
        return NULL;
    slpy_state *st = slpy_state_of(self);
    PyObject *asarray = slpy_np_asarray(st);
    PyObject *mv = asarray ? PyMemoryView_FromObject(self) : NULL;
    PyObject *arr = mv ? PyObject_CallOneArg(asarray, mv) : NULL;
    Py_XDECREF(mv);
    if (!arr || (dtype == Py_None && copy != Py_True))
        return arr;
    PyObject *want = dtype == Py_None ? PyObject_GetAttrString(arr, "dtype") : Py_NewRef(dtype);
    /* astype(dtype, copy=...): copy by keyword (astype's second positional is the order) */
    PyObject *astype = want ? PyObject_GetAttrString(arr, "astype") : NULL;
    PyObject *pargs = astype ? PyTuple_Pack(1, want) : NULL;
    PyObject *kw =
        pargs ? Py_BuildValue("{s:O}", "copy", copy == Py_True ? Py_True : Py_False) : NULL;
    PyObject *r = kw ? PyObject_Call(astype, pargs, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(pargs);
    Py_XDECREF(astype);
    Py_XDECREF(want);
    if (r && r != arr && copy == Py_False) { /* NumPy 2's protocol: copy=False never copies */
        Py_DECREF(r);
        r = NULL;
        PyErr_SetString(PyExc_ValueError,
                        "__array__: a copy is needed to convert the tensor to that dtype, and "
                        "copy=False was given (NumPy 2's np.asarray(x, dtype, copy=False))");
    }
    Py_DECREF(arr);
    return r;
}

static PyObject *t_as_cpu(PyObject *self, PyObject *unused)
{
    slpy_tensor *t = (slpy_tensor *)self;
    if (!t->gpu)
        return Py_NewRef(self);
    slpy_state *st = slpy_state_of(self);
    size_t n = sl_dtype_size(t->dtype);
    for (int d = 0; d < t->ndim; d++)
        n *= (size_t)t->shape[d];
    PyObject *bytes = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)n);
    if (!bytes)
        return NULL;
    const sl_batch *b = ((slpy_tensorlist *)t->owner)->b; /* a TensorGPU's owner is its list */
    sl_status rc;
    char *dst = PyByteArray_AS_STRING(bytes);
    Py_BEGIN_ALLOW_THREADS rc = sl__batch_read(b, t->data, n, dst);
    Py_END_ALLOW_THREADS if (rc != SL_OK)
    {
        Py_DECREF(bytes);
        return slpy_raise_last(st, rc);
    }
    slpy_region r = {.data = dst, .dtype = t->dtype, .ndim = t->ndim, .shape = t->shape};
    PyObject *out = slpy_tensor_new(st, bytes, &r, t->layout, NULL);
    if (out && t->source)
        ((slpy_tensor *)out)->source = Py_NewRef(t->source);
    Py_DECREF(bytes);
    return out;
}

static PyObject *t_device_id(PyObject *self, PyObject *unused)
{
    return PyLong_FromLong(((slpy_tensor *)self)->device_id);
}

static PyObject *t_dtype(PyObject *self, void *closure)
{
    slpy_state *st = slpy_state_of(self);
    sl_dtype t = ((slpy_tensor *)self)->dtype;
    if (st->dtypes && (unsigned)t < SL_DTYPE_COUNT)
        return Py_NewRef(PyTuple_GET_ITEM(st->dtypes, t));
    return PyUnicode_FromString(sl_dtype_name(t));
}

static PyObject *t_array_interface(PyObject *self, void *closure)
{
    slpy_tensor *t = (slpy_tensor *)self;
    PyObject *shape = PyTuple_New(t->ndim);
    for (int d = 0; shape && d < t->ndim; d++) {
        PyObject *e = PyLong_FromLongLong(t->shape[d]);
        if (!e) {
            Py_CLEAR(shape);
            break;
        }
        PyTuple_SET_ITEM(shape, d, e);
    }
    if (!shape)
        return NULL;
    return Py_BuildValue("{s:s,s:N,s:(NO),s:i,s:O}", "typestr", slpy_dtype_typestr(t->dtype),
                         "shape", shape, "data", PyLong_FromVoidPtr(t->data),
                         t->readonly ? Py_True : Py_False, "version", 3, "strides", Py_None);
}

/* str / repr: DALI's text (sluice.tensors._tensor_to_string). */
static PyObject *to_string(PyObject *self, bool with_data)
{
    PyObject *mod = PyImport_ImportModule("sluice.tensors");
    PyObject *r = mod ? PyObject_CallMethod(mod, "_tensor_to_string", "OO", self,
                                            with_data ? Py_True : Py_False)
                      : NULL;
    Py_XDECREF(mod);
    return r;
}

static PyObject *t_str(PyObject *self)
{
    return to_string(self, true);
}

static PyObject *t_repr(PyObject *self)
{
    return to_string(self, false);
}

static int t_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    slpy_region r = region_of(self);
    return slpy_fill_view(view, self, &r, flags);
}

/* ---- types ----------------------------------------------------------------------------------- */

#define COMMON_METHODS                                                                             \
    {"shape", t_shape, METH_NOARGS, "shape() -> list of int: the extents."},                       \
        {"ndim", t_ndim, METH_NOARGS, "ndim() -> int: the number of dimensions."},                 \
        {"layout", t_layout, METH_NOARGS, "layout() -> str: \"HWC\", ... or \"\"."},               \
        {"set_layout", t_set_layout, METH_O, "set_layout(layout): this tensor's layout."},         \
        {"source_info", t_source_info, METH_NOARGS,                                                \
         "source_info() -> str: the file the sample came from (\"\" when unknown)."},              \
        {"get_property", t_get_property, METH_O,                                                   \
         "get_property(key) -> str or None: \"layout\" or \"source_info\"."},                      \
        {"data_ptr", t_data_ptr, METH_NOARGS, "data_ptr() -> int: address of the first element."}, \
        {"squeeze", SLPY_CFUNC(t_squeeze), METH_VARARGS | METH_KEYWORDS,                           \
         "squeeze(dim=None) -> bool: drops extents of 1 (all, or dimension dim) and their "        \
         "layout letters; True when the shape changed."},                                          \
        {"__dlpack__", SLPY_CFUNC(t_dlpack), METH_VARARGS | METH_KEYWORDS,                         \
         "__dlpack__(stream=None, max_version=None, dl_device=None, copy=None): a DLPack "         \
         "capsule of the tensor (no copy)."},                                                      \
    {                                                                                              \
        "__dlpack_device__", t_dlpack_device, METH_NOARGS,                                         \
            "__dlpack_device__() -> (1, 0) kDLCPU or (2, device_id) kDLCUDA."                      \
    }

static PyMethodDef cpu_methods[] = {
    COMMON_METHODS,
    {"as_cpu", t_as_cpu, METH_NOARGS, "as_cpu() -> TensorCPU: itself (the data is on the CPU)."},
    {"__array__", SLPY_CFUNC(t_array), METH_VARARGS | METH_KEYWORDS,
     "__array__(dtype=None, copy=None) -> numpy.ndarray: a view of the tensor (no copy)."},
    {NULL, NULL, 0, NULL}};

static PyMethodDef gpu_methods[] = {
    COMMON_METHODS,
    {"as_cpu", t_as_cpu, METH_NOARGS, "as_cpu() -> TensorCPU: the tensor copied to the host."},
    {"device_id", t_device_id, METH_NOARGS, "device_id() -> int: the CUDA device of the data."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef cpu_getset[] = {
    {"dtype", t_dtype, NULL, "Element type (a sluice.types.DALIDataType member).", NULL},
    {"__array_interface__", t_array_interface, NULL, "NumPy's array interface (version 3).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyGetSetDef gpu_getset[] = {
    {"dtype", t_dtype, NULL, "Element type (a sluice.types.DALIDataType member).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot cpu_slots[] = {
    {Py_tp_new, tensor_construct},
    {Py_tp_dealloc, tensor_dealloc},
    {Py_tp_methods, cpu_methods},
    {Py_tp_getset, cpu_getset},
    {Py_tp_str, t_str},
    {Py_tp_repr, t_repr},
    {Py_bf_getbuffer, t_getbuffer},
    {Py_bf_releasebuffer, slpy_release_view},
    {Py_tp_doc, "TensorCPU(b, layout=None, is_pinned=False): a tensor in host memory — one sample "
                "of a TensorListCPU (tl[i]), a dense batch (tl.as_tensor()), or a NumPy array or "
                "DLPack capsule wrapped without a copy. Buffer protocol, __array__, "
                "__array_interface__ and __dlpack__ give its memory without a copy; they keep "
                "it (and the pipeline's buffers it lies in) alive."},
    {0, NULL}};

static PyType_Slot gpu_slots[] = {
    {Py_tp_dealloc, tensor_dealloc},
    {Py_tp_methods, gpu_methods},
    {Py_tp_getset, gpu_getset},
    {Py_tp_str, t_str},
    {Py_tp_repr, t_repr},
    {Py_tp_doc, "A tensor in GPU memory: one sample of a TensorListGPU (tl[i]) or a dense batch "
                "(tl.as_tensor()). __dlpack__ gives it without a copy (kDLCUDA); as_cpu() "
                "copies it to the host."},
    {0, NULL}};

PyType_Spec slpy_tensor_spec = {
    .name = "sluice._sluice.TensorCPU",
    .basicsize = sizeof(slpy_tensor),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = cpu_slots,
};

PyType_Spec slpy_tensor_gpu_spec = {
    .name = "sluice._sluice.TensorGPU",
    .basicsize = sizeof(slpy_tensor),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = gpu_slots,
};
