/* python/sluice/_sluice/dlio.c: the DataLoader's copies of rows into a batch chunk.
 *
 * Exports slpy_dl_gather (module function _dl_gather()). A DataLoader worker stacks the samples
 * of a batch straight into its shared-memory chunk (plugin/_dl_worker.py, _write_stack): one
 * row per sample, each the bytes of a C-contiguous NumPy array or CPU tensor. Done row by row
 * in Python, each row costs a ctypes.memmove call and, for an array, its __array_interface__
 * (a new dict per call): 4-5 us a row, 150 us for a batch of 32 — as much as the copy of a
 * 4.8 MB batch itself. Here the whole batch is one call (rows: a list or tuple).
 * Invariant: nothing is written unless every row is usable (checked first), so the caller's
 * fallback sees the destination as it was.
 */
#include <string.h>

#include "sluice_py.h"

/* A row's source: its buffer (held until release_rows) or the address an int gives. */
typedef struct row {
    Py_buffer view; /* view.obj == NULL: an address */
    const void *src;
} row;

static void release_rows(row *rows, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        if (rows[i].view.obj)
            PyBuffer_Release(&rows[i].view);
}

/* Fills *r from item: 1 when usable, 0 when not (no exception set), -1 on an error. r->view.obj
 * is non-NULL only while r holds a buffer (released by release_rows). */
static int row_of(PyObject *item, Py_ssize_t row_bytes, row *r)
{
    r->view.obj = NULL;
    if (PyLong_Check(item)) {
        r->src = PyLong_AsVoidPtr(item);
        if (!r->src)
            return PyErr_Occurred() ? -1 : 0;
        return 1;
    }
    if (PyObject_GetBuffer(item, &r->view, PyBUF_C_CONTIGUOUS) < 0) {
        r->view.obj = NULL;
        /* no buffer (TypeError), or not a contiguous one (BufferError; NumPy's ValueError):
         * the caller copies that row its own way */
        if (!PyErr_ExceptionMatches(PyExc_BufferError) &&
            !PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_ValueError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    r->src = r->view.buf;
    return r->view.len == row_bytes;
}

PyObject *slpy_dl_gather(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *dst_obj, *seq;
    Py_ssize_t row_bytes;
    if (!PyArg_ParseTuple(args, "OOn:_dl_gather", &dst_obj, &seq, &row_bytes))
        return NULL;
    char *dst = PyLong_AsVoidPtr(dst_obj);
    if (!dst || row_bytes < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "_dl_gather: no destination address or row size");
        return NULL;
    }
    PyObject *fast = PySequence_Fast(seq, "_dl_gather: rows must be a list or a tuple");
    if (!fast)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    row *rows = PyMem_Calloc(n ? (size_t)n : 1, sizeof(row));
    if (!rows) {
        Py_DECREF(fast);
        return PyErr_NoMemory();
    }
    Py_ssize_t got = 0;
    int ok = 1;
    for (; got < n && ok == 1; got++)
        ok = row_of(PySequence_Fast_GET_ITEM(fast, got), row_bytes, &rows[got]);
    if (ok == 1)
        for (Py_ssize_t i = 0; i < n; i++)
            memcpy(dst + i * row_bytes, rows[i].src, (size_t)row_bytes);
    /* the row that failed may hold a view too (wrong length) */
    release_rows(rows, got);
    PyMem_Free(rows);
    Py_DECREF(fast);
    if (ok < 0)
        return NULL;
    return PyBool_FromLong(ok == 1);
}
