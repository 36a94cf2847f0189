/* python/sluice/_sluice/shm.c: SharedChunk, the main process's view of one shared-memory chunk
 * of a Python worker, and Pipeline.feed_lent, which lends chunk memory to an external_source.
 *
 * Exports slpy_chunk_spec (sluice._sluice.SharedChunk), slpy_pipeline_feed_lent and
 * slpy_shm_live (module function _shm_live()). A worker process writes a task's samples into a
 * chunk (a memfd it created and sized); the main process maps it read-only (map(fd, size): the
 * caller closes the fd afterwards, the mapping stays) and feeds the samples to the pipeline
 * *lent* (sl_feed.release): external_source reads them in place and copies them once into its
 * output. The release callback runs on an executor thread without the GIL, so the state it
 * touches is plain C: a mapping (slpy_map) with two atomic counters, `lent` (lends not yet
 * released: the chunk may be handed back to its worker only at 0, which the Python side polls
 * through SharedChunk.lent) and `refs` (the SharedChunk object plus every lend: the mapping is
 * unmapped when the last goes, so memory a pipeline still reads is never unmapped, whatever
 * order the pool and the pipeline die in). Mappings are MADV_DONTFORK: workers forked later
 * (another pipeline's) do not inherit them and keep no chunk alive.
 * Invariant: remap only while lent == 0 (the worker writes into a chunk only then, too).
 */
#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "core/core.h" /* sl__malloc / sl__free: the library's one allocator */
#include "sluice_py.h"

typedef struct slpy_map {
    atomic_int refs; /* the SharedChunk object + one per lend */
    atomic_int lent; /* lends not yet released */
    void *addr;      /* NULL while size == 0 */
    size_t size;     /* bytes mapped */
} slpy_map;

/* Mappings alive and their bytes, for leak checks (_shm_live()). Plain counters, no objects. */
static atomic_long live_maps, live_bytes;

static void map_unmap(slpy_map *m)
{
    if (m->addr) {
        munmap(m->addr, m->size);
        atomic_fetch_sub(&live_bytes, (long)m->size);
    }
    m->addr = NULL;
    m->size = 0;
}

static void map_unref(slpy_map *m)
{
    if (atomic_fetch_sub(&m->refs, 1) == 1) {
        map_unmap(m);
        atomic_fetch_sub(&live_maps, 1);
        sl__free(m);
    }
}

/* ---- lending -------------------------------------------------------------------------------- */

typedef struct lend {
    int n;
    slpy_map *maps[]; /* each holds one ref and one lent count */
} lend;

/* sl_feed.release: called once, from any thread, without the GIL. No Python in here. */
static void lend_release(void *ctx)
{
    lend *l = ctx;
    for (int i = 0; i < l->n; i++) {
        atomic_fetch_sub(&l->maps[i]->lent, 1);
        map_unref(l->maps[i]);
    }
    sl__free(l);
}

/* ---- SharedChunk ------------------------------------------------------------------------------
 */

typedef struct slpy_chunk {
    PyObject_HEAD slpy_map *m;
} slpy_chunk;

static PyObject *chunk_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (!PyArg_ParseTuple(args, ":SharedChunk"))
        return NULL;
    slpy_chunk *self = (slpy_chunk *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->m = sl__calloc(1, sizeof(slpy_map));
    if (!self->m) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    atomic_init(&self->m->refs, 1);
    atomic_init(&self->m->lent, 0);
    atomic_fetch_add(&live_maps, 1);
    return (PyObject *)self;
}

static void chunk_dealloc(slpy_chunk *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    if (self->m)
        map_unref(self->m); /* unmapped now, or by the last release */
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

/* map(fd, size): maps `size` bytes of fd read-only, replacing the previous mapping. The fd is
 * not kept (the caller closes it). Only while nothing is lent. */
static PyObject *chunk_map(PyObject *obj, PyObject *args)
{
    slpy_chunk *self = (slpy_chunk *)obj;
    int fd;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "in:map", &fd, &size))
        return NULL;
    if (size <= 0)
        return PyErr_Format(PyExc_ValueError, "SharedChunk.map: size must be positive, got %zd",
                            size);
    if (atomic_load(&self->m->lent) != 0)
        return PyErr_Format(slpy_state_of(obj)->errors[SL_EMISUSE],
                            "SharedChunk.map: the chunk is still lent to a pipeline (%d lends)",
                            atomic_load(&self->m->lent));
    PyThreadState *ts = PyEval_SaveThread();
    void *addr = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
    PyEval_RestoreThread(ts);
    if (addr == MAP_FAILED)
        return PyErr_SetFromErrno(PyExc_OSError);
    (void)madvise(addr, (size_t)size, MADV_DONTFORK); /* best effort: see the file comment */
    map_unmap(self->m);
    self->m->addr = addr;
    self->m->size = (size_t)size;
    atomic_fetch_add(&live_bytes, (long)size);
    Py_RETURN_NONE;
}

/* read(offset, n) -> bytes: a copy of mapped bytes (tests and diagnostics). */
static PyObject *chunk_read(PyObject *obj, PyObject *args)
{
    slpy_map *m = ((slpy_chunk *)obj)->m;
    Py_ssize_t off, n;
    if (!PyArg_ParseTuple(args, "nn:read", &off, &n))
        return NULL;
    if (off < 0 || n < 0 || (size_t)off > m->size || (size_t)n > m->size - (size_t)off)
        return PyErr_Format(PyExc_IndexError,
                            "SharedChunk.read: [%zd, %zd) is outside the %zu mapped bytes", off,
                            off + n, m->size);
    return PyBytes_FromStringAndSize((const char *)m->addr + off, n);
}

static PyObject *chunk_size(PyObject *obj, void *closure)
{
    return PyLong_FromSize_t(((slpy_chunk *)obj)->m->size);
}

static PyObject *chunk_lent(PyObject *obj, void *closure)
{
    return PyLong_FromLong(atomic_load(&((slpy_chunk *)obj)->m->lent));
}

static PyMethodDef chunk_methods[] = {
    {"map", chunk_map, METH_VARARGS,
     "map(fd, size): map size bytes of fd read-only (replacing the old mapping; only while nothing "
     "is lent). The fd is not kept."},
    {"read", chunk_read, METH_VARARGS, "read(offset, n) -> bytes: a copy of mapped bytes."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef chunk_getset[] = {
    {"size", chunk_size, NULL, "Bytes mapped (0 before map()).", NULL},
    {"lent", chunk_lent, NULL,
     "Lends to a pipeline not yet released (the chunk may be reused at 0).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot chunk_slots[] = {
    {Py_tp_new, chunk_new},
    {Py_tp_dealloc, chunk_dealloc},
    {Py_tp_methods, chunk_methods},
    {Py_tp_getset, chunk_getset},
    {Py_tp_doc, "SharedChunk(): a worker's shared-memory chunk mapped read-only in this process; "
                "lent to pipelines by Pipeline.feed_lent."},
    {0, NULL}};

PyType_Spec slpy_chunk_spec = {
    .name = "sluice._sluice.SharedChunk",
    .basicsize = sizeof(slpy_chunk),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = chunk_slots,
};

PyObject *slpy_shm_live(PyObject *module, PyObject *unused)
{
    return Py_BuildValue("(ll)", atomic_load(&live_maps), atomic_load(&live_bytes));
}

/* ---- Pipeline.feed_lent ------------------------------------------------------------------------
 */

typedef struct lent_batch {
    int64_t *shapes;
    const void **data;
    lend *l;
} lent_batch;

static void lent_batch_fini(lent_batch *b)
{
    sl__free(b->shapes);
    sl__free(b->data);
    if (b->l)
        lend_release(b->l);
}

/* Takes the chunks (one ref and one lent count each, so a bad sample below only has to
 * release them). */
static int take_chunks(slpy_state *st, PyObject *chunks, lent_batch *b)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(chunks);
    b->l = sl__malloc(sizeof(lend) + (size_t)(n ? n : 1) * sizeof(slpy_map *));
    if (!b->l)
        return PyErr_NoMemory(), -1;
    b->l->n = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *c = PySequence_Fast_GET_ITEM(chunks, i);
        if (!PyObject_TypeCheck(c, st->chunk_type))
            return PyErr_Format(PyExc_TypeError, "feed_lent: chunk %zd is a %s, not a SharedChunk",
                                i, Py_TYPE(c)->tp_name),
                   -1;
        slpy_map *m = ((slpy_chunk *)c)->m;
        atomic_fetch_add(&m->refs, 1);
        atomic_fetch_add(&m->lent, 1);
        b->l->maps[b->l->n++] = m;
    }
    return 0;
}

/* Sample i: (chunk index, byte offset, shape tuple), checked against the chunk's mapping. */
static int take_sample(slpy_state *st, PyObject *item, Py_ssize_t i, lent_batch *b, int ndim,
                       size_t elem)
{
    Py_ssize_t ci, off;
    PyObject *shape;
    if (!PyArg_ParseTuple(item, "nnO!;feed_lent: a sample is (chunk, offset, shape)", &ci, &off,
                          &PyTuple_Type, &shape))
        return -1;
    if (ci < 0 || ci >= b->l->n)
        return PyErr_Format(PyExc_IndexError, "feed_lent: sample %zd names chunk %zd of %d", i, ci,
                            b->l->n),
               -1;
    if (PyTuple_GET_SIZE(shape) != ndim)
        return PyErr_Format(st->errors[SL_EINVAL],
                            "feed_lent: sample %zd has %zd dimensions, expected %d", i,
                            PyTuple_GET_SIZE(shape), ndim),
               -1;
    size_t bytes = elem;
    for (int d = 0; d < ndim; d++) {
        long long e = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
        if (e == -1 && PyErr_Occurred())
            return -1;
        if (e < 0 || (e > 0 && bytes > SIZE_MAX / (size_t)e))
            return PyErr_Format(st->errors[SL_EINVAL],
                                "feed_lent: sample %zd has a bad extent %lld", i, e),
                   -1;
        b->shapes[i * ndim + d] = e;
        bytes *= (size_t)e;
    }
    const slpy_map *m = b->l->maps[ci];
    if (off < 0 || (size_t)off > m->size || bytes > m->size - (size_t)off)
        return PyErr_Format(
                   st->errors[SL_EINTERNAL],
                   "feed_lent: sample %zd ([%zd, +%zu)) is outside its chunk (%zu bytes mapped)", i,
                   off, bytes, m->size),
               -1;
    static const char nothing; /* a valid address for a sample of 0 bytes, never read */
    b->data[i] = m->addr ? (const char *)m->addr + off : (const void *)&nothing;
    return 0;
}

/* feed_lent(name, chunks, samples, dtype, ndim, layout=None): one batch for external_source
 * `name` whose samples lie in the chunks: samples[i] = (chunk index, offset, shape). The
 * chunks count as lent until the pipeline releases the batch (or the feed fails). */
PyObject *slpy_pipeline_feed_lent(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"name", "chunks", "samples", "dtype", "ndim", "layout", NULL};
    slpy_pipeline *self = (slpy_pipeline *)obj;
    slpy_state *st = slpy_state_of(obj);
    const char *name, *layout = NULL;
    PyObject *chunks_in, *samples_in;
    int dtype, ndim;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sOOii|z:feed_lent", kwlist, &name, &chunks_in,
                                     &samples_in, &dtype, &ndim, &layout))
        return NULL;
    if (dtype <= SL_DTYPE_INVALID || dtype >= SL_DTYPE_COUNT || ndim < 0 || ndim > SL_MAX_NDIM)
        return PyErr_Format(st->errors[SL_EINVAL], "feed_lent: bad dtype %d or ndim %d", dtype,
                            ndim);
    PyObject *chunks = PySequence_Fast(chunks_in, "feed_lent: chunks must be a sequence");
    PyObject *samples =
        chunks ? PySequence_Fast(samples_in, "feed_lent: samples must be a sequence") : NULL;
    lent_batch b = {0};
    Py_ssize_t n = samples ? PySequence_Fast_GET_SIZE(samples) : 0;
    int rc = samples ? 0 : -1;
    if (rc == 0 && (n < 1 || n > INT32_MAX))
        rc = (PyErr_Format(st->errors[SL_EINVAL], "feed_lent: %zd samples", n), -1);
    if (rc == 0) {
        b.shapes = sl__calloc((size_t)n * (size_t)(ndim ? ndim : 1), sizeof(int64_t));
        b.data = sl__calloc((size_t)n, sizeof(void *));
        rc = b.shapes && b.data ? take_chunks(st, chunks, &b) : (PyErr_NoMemory(), -1);
    }
    size_t elem = sl_dtype_size((sl_dtype)dtype);
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++)
        rc = take_sample(st, PySequence_Fast_GET_ITEM(samples, i), i, &b, ndim, elem);
    Py_XDECREF(chunks);
    Py_XDECREF(samples);
    if (rc == 0)
        rc = slpy_pipeline_enter(st, self);
    if (rc < 0) {
        lent_batch_fini(&b);
        return NULL;
    }
    sl_feed feed = {.num_samples = (int)n,
                    .ndim = ndim,
                    .dtype = (sl_dtype)dtype,
                    .layout = layout,
                    .shapes = b.shapes,
                    .data = b.data,
                    .release = lend_release,
                    .release_ctx = b.l};
    PyThreadState *ts = PyEval_SaveThread();
    sl_status s = sl_pipeline_feed_input(self->p, name, &feed);
    PyEval_RestoreThread(ts);
    slpy_pipeline_leave(self);
    if (s == SL_OK)
        b.l = NULL; /* the pipeline calls lend_release */
    lent_batch_fini(&b);
    if (s != SL_OK)
        return slpy_raise_pipeline(st, self->p, s);
    Py_RETURN_NONE;
}
