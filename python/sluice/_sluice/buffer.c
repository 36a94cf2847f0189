/* python/sluice/_sluice/buffer.c: buffer-protocol views of sluice memory, and dtype names in the
 * words of the buffer protocol and of NumPy's array interface.
 *
 * Exports slpy_fill_view / slpy_release_view (what TensorListCPU and TensorCPU export),
 * slpy_dtype_format, slpy_dtype_typestr and slpy_dtype_from_format.
 * Invariant: a view references its owner (view->obj), which keeps the memory alive; its shape
 * and strides live in view->internal, freed by slpy_release_view.
 */
#include "sluice_py.h"

const char *slpy_dtype_format(sl_dtype t)
{
    static const char *const f[SL_DTYPE_COUNT] = {
        [SL_DTYPE_UINT8] = "B",   [SL_DTYPE_UINT16] = "H",  [SL_DTYPE_UINT32] = "I",
        [SL_DTYPE_UINT64] = "Q",  [SL_DTYPE_INT8] = "b",    [SL_DTYPE_INT16] = "h",
        [SL_DTYPE_INT32] = "i",   [SL_DTYPE_INT64] = "q",   [SL_DTYPE_FLOAT16] = "e",
        [SL_DTYPE_FLOAT32] = "f", [SL_DTYPE_FLOAT64] = "d", [SL_DTYPE_BOOL] = "?"};
    return (unsigned)t < SL_DTYPE_COUNT ? f[t] : NULL;
}

const char *slpy_dtype_typestr(sl_dtype t)
{
    static const char *const s[SL_DTYPE_COUNT] = {
        [SL_DTYPE_UINT8] = "|u1",   [SL_DTYPE_UINT16] = "<u2",  [SL_DTYPE_UINT32] = "<u4",
        [SL_DTYPE_UINT64] = "<u8",  [SL_DTYPE_INT8] = "|i1",    [SL_DTYPE_INT16] = "<i2",
        [SL_DTYPE_INT32] = "<i4",   [SL_DTYPE_INT64] = "<i8",   [SL_DTYPE_FLOAT16] = "<f2",
        [SL_DTYPE_FLOAT32] = "<f4", [SL_DTYPE_FLOAT64] = "<f8", [SL_DTYPE_BOOL] = "|b1"};
    return (unsigned)t < SL_DTYPE_COUNT ? s[t] : NULL;
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

static char empty_byte; /* where a view of no element points when the memory has no address */

int slpy_fill_view(Py_buffer *view, PyObject *owner, const slpy_region *r, int flags)
{
    const int ndim = r->ndim;
    size_t item = sl_dtype_size(r->dtype);
    if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && ndim > 1) {
        PyErr_SetString(PyExc_BufferError, "the data is C-contiguous only");
        return -1;
    }
    if ((flags & PyBUF_WRITABLE) && r->readonly) {
        PyErr_SetString(PyExc_BufferError, "the data is read-only");
        return -1;
    }
    Py_ssize_t *dims = PyMem_Malloc(sizeof(Py_ssize_t) * 2 * (size_t)(ndim ? ndim : 1));
    if (!dims)
        return PyErr_NoMemory(), -1;
    Py_ssize_t *strides = dims + ndim, s = (Py_ssize_t)item;
    for (int d = ndim - 1; d >= 0; d--) {
        dims[d] = (Py_ssize_t)r->shape[d];
        strides[d] = s;
        s *= dims[d];
    }
    view->buf = r->data ? r->data : &empty_byte;
    view->obj = Py_NewRef(owner);
    view->len = s; /* the product of the extents, times the item size */
    view->readonly = r->readonly;
    view->itemsize = (Py_ssize_t)item;
    view->format = (flags & PyBUF_FORMAT) ? (char *)slpy_dtype_format(r->dtype) : NULL;
    view->ndim = (flags & PyBUF_ND) ? ndim : 1; /* a plain request sees bytes */
    view->shape = (flags & PyBUF_ND) ? dims : NULL;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? strides : NULL;
    view->suboffsets = NULL;
    view->internal = dims;
    return 0;
}

void slpy_release_view(PyObject *owner, Py_buffer *view)
{
    (void)owner;
    PyMem_Free(view->internal);
}
