/* python/sluice/_sluice/dlpack.c: __dlpack__ and __dlpack_device__ of TensorListCPU, TensorCPU
 * (kDLCPU), TensorListGPU and TensorGPU (kDLCUDA on the pipeline's device), and reading a DLPack
 * capsule (TensorCPU(capsule)).
 *
 * Exports slpy_dlpack, slpy_dlpack_device and slpy_dlpack_import. The structs below are
 * DLPack's stable ABI (dlpack.h v0.6-v0.8, unversioned "dltensor" capsules: what
 * torch.from_dlpack and numpy.from_dlpack take), declared here rather than taken from
 * libdlpack-dev so the build needs nothing more. A capsule exports one dense array (a region:
 * the dense batch [batch, ...] of a list, or a tensor) with explicit C-order strides; its
 * DLManagedTensor holds a reference to the exporting object (and so the pin of the iteration's
 * buffers) until the consumer calls the deleter — which may happen on any thread, so the
 * deleter takes the GIL. An unconsumed capsule calls the deleter from its destructor.
 */
#include "sluice_py.h"

/* ---- DLPack ABI (https://dmlc.github.io/dlpack/latest/c_api.html) ------------------------- */
enum { kDLCPU = 1, kDLCUDA = 2 };
enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBool = 6 };

typedef struct {
    int32_t device_type; /* DLDeviceType, an int-sized enum */
    int32_t device_id;
} DLDevice;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* in elements */
    uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

/* ---- export ------------------------------------------------------------------------------- */

typedef struct dl_export {
    DLManagedTensor mt; /* first: the capsule points here */
    int64_t shape[SLPY_TENSOR_MAX_NDIM];
    int64_t strides[SLPY_TENSOR_MAX_NDIM];
    PyObject *owner; /* the TensorList or Tensor whose memory it is */
} dl_export;

static void deleter(DLManagedTensor *mt)
{
    dl_export *e = (dl_export *)mt;
    if (!Py_IsInitialized())
        return; /* at interpreter exit: nothing left to keep alive */
    PyGILState_STATE g = PyGILState_Ensure();
    Py_XDECREF(e->owner);
    PyMem_RawFree(e);
    PyGILState_Release(g);
}

static void capsule_destructor(PyObject *capsule)
{
    if (!PyCapsule_IsValid(capsule, "dltensor"))
        return; /* consumed: renamed "used_dltensor", the consumer owns it */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    DLManagedTensor *mt = PyCapsule_GetPointer(capsule, "dltensor");
    if (mt && mt->deleter)
        mt->deleter(mt);
    PyErr_Restore(type, value, tb);
}

static DLDataType dl_dtype(sl_dtype t)
{
    DLDataType d = {.code = kDLUInt, .bits = (uint8_t)(8 * sl_dtype_size(t)), .lanes = 1};
    switch (t) {
    case SL_DTYPE_INT8:
    case SL_DTYPE_INT16:
    case SL_DTYPE_INT32:
    case SL_DTYPE_INT64: d.code = kDLInt; break;
    case SL_DTYPE_FLOAT16:
    case SL_DTYPE_FLOAT32:
    case SL_DTYPE_FLOAT64: d.code = kDLFloat; break;
    case SL_DTYPE_BOOL: d.code = kDLBool; break;
    default: break;
    }
    return d;
}

/* The consumer's stream of a CUDA export, as the DLPack protocol passes it: None or 1 the
 * legacy default stream, 2 the per-thread default stream, -1 no synchronisation (*none set),
 * anything else a cudaStream_t. Returns -1 with an exception on a bad value. */
static int parse_stream(PyObject *stream, void **out, bool *none)
{
    *none = false;
    if (stream == Py_None) {
        *out = (void *)(uintptr_t)1; /* cudaStreamLegacy */
        return 0;
    }
    long long v = PyLong_AsLongLong(stream);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v == 0) {
        PyErr_SetString(PyExc_BufferError,
                        "__dlpack__: stream 0 is ambiguous for CUDA (DLPack: use 1 or 2)");
        return -1;
    }
    *none = v == -1;
    *out = (void *)(uintptr_t)v;
    return 0;
}

/* Checks the keyword arguments of the DLPack protocol (CPU data: no stream; no copy). */
static int check_request(int dev_type, PyObject *stream, PyObject *dl_device, PyObject *copy)
{
    if (dev_type == kDLCPU && stream != Py_None) {
        PyErr_SetString(PyExc_BufferError, "__dlpack__: stream must be None for CPU data (kDLCPU)");
        return -1;
    }
    if (copy != Py_None && PyObject_IsTrue(copy)) {
        PyErr_SetString(PyExc_BufferError,
                        "__dlpack__: copy=True is not supported; the export is zero-copy");
        return -1;
    }
    if (dl_device != Py_None) {
        int req_type = -1, dev_id = -1;
        if (!PyArg_ParseTuple(dl_device, "ii", &req_type, &dev_id))
            return -1;
        if (req_type != dev_type) {
            PyErr_SetString(PyExc_BufferError, dev_type == kDLCPU
                                                   ? "__dlpack__: the data is on the CPU (kDLCPU)"
                                                   : "__dlpack__: the data is on a GPU (kDLCUDA); "
                                                     "use as_cpu() for a host copy");
            return -1;
        }
    }
    return 0;
}

PyObject *slpy_dlpack(PyObject *owner, const slpy_region *r, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$OOO:__dlpack__", kwlist, &stream,
                                     &max_version, &dl_device, &copy))
        return NULL;
    if (check_request(r->gpu ? kDLCUDA : kDLCPU, stream, dl_device, copy) < 0)
        return NULL;
    void *consumer = NULL;
    bool no_sync = true;
    if (r->gpu && parse_stream(stream, &consumer, &no_sync) < 0)
        return NULL;
    if (r->ndim > SLPY_TENSOR_MAX_NDIM) {
        PyErr_Format(PyExc_BufferError, "__dlpack__: more than %d dimensions",
                     SLPY_TENSOR_MAX_NDIM);
        return NULL;
    }
    dl_export *e = PyMem_RawCalloc(1, sizeof(dl_export));
    if (!e)
        return PyErr_NoMemory();
    int64_t s = 1;
    for (int d = r->ndim - 1; d >= 0; d--) {
        e->shape[d] = r->shape[d];
        e->strides[d] = s;
        s *= e->shape[d];
    }
    e->mt.dl_tensor = (DLTensor){.data = r->data,
                                 .device = {r->gpu ? kDLCUDA : kDLCPU, r->gpu ? r->device_id : 0},
                                 .ndim = r->ndim,
                                 .dtype = dl_dtype(r->dtype),
                                 .shape = e->shape,
                                 .strides = e->strides};
    e->mt.manager_ctx = e;
    e->mt.deleter = deleter;
    e->owner = Py_NewRef(owner);
    PyObject *capsule = PyCapsule_New(&e->mt, "dltensor", capsule_destructor);
    if (!capsule) {
        Py_DECREF(e->owner);
        PyMem_RawFree(e);
        return NULL;
    }
    /* the data is complete already (share_outputs waited for it); what remains is the
     * consumer's own work on it, which must end before the buffers are reused */
    if (r->gpu && !no_sync && r->pin)
        sl_outputs_set_stream(r->pin, consumer);
    return capsule;
}

PyObject *slpy_dlpack_device(const slpy_region *r)
{
    if (r->gpu)
        return Py_BuildValue("(ii)", kDLCUDA, r->device_id);
    return Py_BuildValue("(ii)", kDLCPU, 0);
}

/* ---- import ------------------------------------------------------------------------------- */

static sl_dtype from_dl_dtype(DLDataType d)
{
    if (d.lanes != 1)
        return SL_DTYPE_INVALID;
    for (int t = 0; t < SL_DTYPE_COUNT; t++) {
        DLDataType x = dl_dtype((sl_dtype)t);
        if (x.code == d.code && x.bits == d.bits)
            return (sl_dtype)t;
    }
    return SL_DTYPE_INVALID;
}

int slpy_dlpack_import(PyObject *capsule, slpy_tensor *t)
{
    DLManagedTensor *mt = PyCapsule_GetPointer(capsule, "dltensor");
    if (!mt)
        return -1; /* not a capsule, or consumed already: ValueError set */
    const DLTensor *x = &mt->dl_tensor;
    const char *why = NULL;
    if (x->device.device_type != kDLCPU)
        why = "the data is not in CPU memory (kDLCPU); TensorGPU does not take DLPack";
    else if (x->ndim < 0 || x->ndim > SLPY_TENSOR_MAX_NDIM)
        why = "too many dimensions";
    else if (from_dl_dtype(x->dtype) == SL_DTYPE_INVALID)
        why = "an element type sluice does not have";
    int64_t s = 1;
    for (int d = x->ndim - 1; !why && x->strides && d >= 0; d--) {
        if (x->shape[d] != 1 && x->strides[d] != s)
            why = "strided data (only C-contiguous arrays are taken)";
        s *= x->shape[d];
    }
    if (why) {
        PyErr_Format(PyExc_TypeError, "TensorCPU: a DLPack capsule with %s", why);
        return -1;
    }
    t->dtype = from_dl_dtype(x->dtype);
    t->ndim = x->ndim;
    memcpy(t->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    t->data = (char *)x->data + x->byte_offset;
    t->dl = mt;
    return PyCapsule_SetName(capsule, "used_dltensor"); /* ours now: its deleter is */
}

void slpy_dlpack_release(slpy_tensor *t)
{
    DLManagedTensor *mt = t->dl;
    t->dl = NULL;
    if (mt && mt->deleter)
        mt->deleter(mt);
}

PyObject *slpy_dlpack_capsule_device(PyObject *module, PyObject *capsule)
{
    DLManagedTensor *mt = PyCapsule_GetPointer(capsule, "dltensor");
    if (!mt)
        return NULL; /* not a capsule, or consumed already: ValueError set */
    return Py_BuildValue("(ii)", (int)mt->dl_tensor.device.device_type,
                         (int)mt->dl_tensor.device.device_id);
}
