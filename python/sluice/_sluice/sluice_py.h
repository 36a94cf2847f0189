/* python/sluice/_sluice/sluice_py.h: private interface of the CPython extension sluice._sluice.
 *
 * The extension is one module (module.c) with one C file per Python type: Graph (graph.c),
 * Pipeline (pipeline.c), TensorListCPU and TensorListGPU (tensorlist.c; the lists that own their
 * batch: hostlist.c), TensorCPU and TensorGPU (tensor.c), plus buffer-protocol views (buffer.c),
 * DLPack capsules (dlpack.c), the exception classes (errors.c), the registry's introspection and
 * the call-site argument checks (registry.c), deprecated argument names (aliases.c), Python
 * value conversion (value.c), feeding external sources (feed.c), the shared-memory chunks of
 * Python workers, lent to external sources (shm.c), and the Python functions of
 * python_function nodes (callback.c).
 *
 * Invariants: no C globals hold Python objects — everything lives in the module state
 * (slpy_state), reached from a heap type with slpy_state_of(). Every call into sluice that can
 * block (build, run, schedule_run, share_outputs, release_outputs, feed_input, destroy) runs
 * with the GIL released. Memory a live Python object can see is never freed or reused: a
 * TensorListCPU holds a pin of its iteration's outputs (sl_pipeline_outputs_pin) and a
 * reference to its Pipeline; TensorCPU objects, NumPy arrays and DLPack capsules hold
 * references to the TensorListCPU (or TensorCPU) whose memory they show.
 */
#ifndef SLUICE_PY_H
#define SLUICE_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "graph/graph.h" /* sl__value, sl__value_coerce: the same checks the build makes */
#include "sluice/sluice.h"

/* ---- module state (module.c) ------------------------------------------------------------ */
typedef struct slpy_state {
    PyTypeObject *graph_type;
    PyTypeObject *pipeline_type;
    PyTypeObject *tensorlist_type;
    PyTypeObject *tensorlist_gpu_type;  /* outputs on SL_DEVICE_GPU (tensorlist.c) */
    PyTypeObject *tensor_type;          /* TensorCPU: a sample, or a whole dense batch */
    PyTypeObject *tensor_gpu_type;      /* TensorGPU */
    PyTypeObject *chunk_type;           /* SharedChunk (shm.c) */
    PyObject *error;                    /* SluiceError(RuntimeError) */
    PyObject *errors[SL_EINTERNAL + 1]; /* class per status code (SL_OK: SluiceError) */
    PyObject *arg_type_error;           /* ArgumentTypeError(SluiceError, TypeError) */
    PyObject *np_asarray;               /* numpy.asarray, imported on first use */
    PyObject *dtypes; /* tuple indexed by sl_dtype: what TensorListCPU.dtype returns */
} slpy_state;

extern PyModuleDef slpy_module;
/* The module state of the module that defined type(obj). Never NULL for our own types. */
slpy_state *slpy_state_of(PyObject *obj);
slpy_state *slpy_state_of_type(PyTypeObject *t);
/* numpy.asarray (imported on first use); NULL with an exception set when NumPy is missing. */
PyObject *slpy_np_asarray(slpy_state *st);

/* ---- errors (errors.c) ------------------------------------------------------------------ */
/* Creates the exception classes and adds them to the module. Returns 0 or -1. */
int slpy_errors_init(PyObject *module, slpy_state *st);
void slpy_errors_clear(slpy_state *st);
int slpy_errors_traverse(slpy_state *st, visitproc visit, void *arg);
/* Raises the class for `code` with `msg` and the context of `d` (may be NULL) as attributes
 * (.code .operator .node .iteration .sample .source .detail). Returns NULL. */
PyObject *slpy_raise(slpy_state *st, sl_status code, const char *msg, const sl_error_detail *d);
/* Raises the last failure of a call on p. Returns NULL. */
PyObject *slpy_raise_pipeline(slpy_state *st, const sl_pipeline *p, sl_status code);
/* Raises sl_last_error() with class for code. Returns NULL. */
PyObject *slpy_raise_last(slpy_state *st, sl_status code);
/* Raises an sl__error (a call-site check); TypeError flavour when as_type. Returns NULL. */
PyObject *slpy_raise_error(slpy_state *st, const sl__error *e, bool as_type);

/* ---- values (value.c) -------------------------------------------------------------------- */
/* Converts a Python bool/int/float/str or a list/tuple of them into *out (owned:
 * sl__value_fini). On failure writes the reason to err and returns -1 (no Python exception
 * set unless memory ran out: then returns -2 with MemoryError set). */
int slpy_value_from_py(PyObject *o, sl__value *out, char *err, size_t errlen);
/* A Python object (bool, int, float, str, list) for a value. New reference or NULL. */
PyObject *slpy_value_to_py(const sl__value *v);

/* ---- the DataLoader's lowering of torchvision transforms (lower.c) ------------------------ */
PyObject *slpy_lower_peek(PyObject *module, PyObject *arg);
PyObject *slpy_lower_crop_resize(PyObject *module, PyObject *args);

/* ---- registry (registry.c) --------------------------------------------------------------- */
PyObject *slpy_registry(PyObject *module, PyObject *unused);

/* ---- deprecated argument names (aliases.c) ------------------------------------------------ */
/* Replaces *args and *arg_inputs (dicts, borrowed) with new references to dicts where every
 * deprecated name of op (sl_op_def.aliases) is resolved as the build resolves it: a renamed
 * argument moves to its current name, an ignored one is dropped, each with a
 * DeprecationWarning in the registry's words; an alias given together with the argument it
 * renames raises ArgumentTypeError. Without deprecated names the same dicts come back (new
 * references). Returns 0, or -1 with the exception set. */
int slpy_resolve_aliases(slpy_state *st, const sl_op_def *op, const char *node, PyObject **args,
                         PyObject **arg_inputs);
/* The deprecated names of op as a list of {"name", "renamed_to" (None: ignored), "msg"}. */
PyObject *slpy_alias_list(const sl_op_def *op);
/* The module function resolve_aliases(op, name, args, arg_inputs) -> (args, arg_inputs). */
PyObject *slpy_resolve_aliases_py(PyObject *module, PyObject *args);

/* ---- Graph (graph.c) --------------------------------------------------------------------- */
/* Reads a dict of pipeline options (keys: sl__options', the spec keys; None or a missing key:
 * the default) into *o. Returns 0, or -1 with TypeError (unknown key) or OverflowError. */
int slpy_options_from_dict(PyObject *d, sl_pipeline_options *o);
typedef struct slpy_graph {
    PyObject_HEAD sl_graph *g;
    signed char *placed; /* sl__graph_place's cache: per node of g (PyMem), `cap` entries */
    int cap;
} slpy_graph;
extern PyType_Spec slpy_graph_spec;
PyObject *slpy_graph_from_json(PyObject *module, PyObject *text);
PyObject *slpy_options_from_json(PyObject *module, PyObject *text);

/* ---- Pipeline (pipeline.c) --------------------------------------------------------------- */
struct slpy_callbacks;
typedef struct slpy_pipeline {
    PyObject_HEAD sl_pipeline *p;
    int busy; /* a call is running with the GIL released (one consumer thread at a time) */
    struct slpy_callbacks *cb; /* python_function nodes' functions (callback.c), NULL if none */
} slpy_pipeline;
extern PyType_Spec slpy_pipeline_spec;
/* Marks the pipeline busy for a call that releases the GIL; -1 with RuntimeError when another
 * thread is inside a call already. */
int slpy_pipeline_enter(slpy_state *st, slpy_pipeline *self);
void slpy_pipeline_leave(slpy_pipeline *self);

/* ---- feeding external sources (feed.c) --------------------------------------------------- */
/* Pipeline.feed_input(name, samples, layout=None): samples is a sequence of objects with the
 * buffer protocol (C-contiguous), one per sample. */
PyObject *slpy_pipeline_feed_input(PyObject *self, PyObject *args, PyObject *kwargs);

/* ---- python_function (callback.c) ---------------------------------------------------------- */
/* Pipeline.set_callback(node, runner): runner(iteration, batch_size, inputs) runs the node's
 * Python function (sluice/python_function.py) on the pipeline's threads. */
PyObject *slpy_pipeline_set_callback(PyObject *self, PyObject *args);
/* After a share_outputs/run that returned rc (its exception, if any, raised): a CallbackError
 * gets the Python exception of its node and iteration as __cause__; what was kept for
 * iterations delivered is dropped. */
void slpy_callbacks_after_share(slpy_pipeline *self, sl_status rc);
int slpy_callbacks_traverse(struct slpy_callbacks *t, visitproc visit, void *arg);
/* Frees the table (GIL held), once the sl_pipeline that calls it is destroyed. */
void slpy_callbacks_free(struct slpy_callbacks *t);
/* Pipeline dealloc on a thread of its own sl_pipeline, inside one of its functions: hands the
 * sl_pipeline and the table to a detached thread that destroys them after the call, clears
 * self->p and self->cb and returns true; false (nothing done) on any other thread. */
bool slpy_callbacks_destroy_here(slpy_pipeline *self);

/* ---- shared-memory chunks of Python workers (shm.c) --------------------------------------- */
extern PyType_Spec slpy_chunk_spec;
/* Pipeline.feed_lent(name, chunks, samples, dtype, ndim, layout=None): a batch whose samples
 * lie in SharedChunks, lent (read in place; the chunks count as lent until released). */
PyObject *slpy_pipeline_feed_lent(PyObject *self, PyObject *args, PyObject *kwargs);
/* _shm_live() -> (mappings alive, bytes mapped), for leak checks. */
PyObject *slpy_shm_live(PyObject *module, PyObject *unused);

/* ---- the DataLoader's row copies into a batch chunk (dlio.c) ------------------------------ */
PyObject *slpy_dl_gather(PyObject *module, PyObject *args);

/* ---- exported memory (buffer.c, dlpack.c) ------------------------------------------------ */
/* Memory a view exports: one dense C-order array. */
typedef struct slpy_region {
    void *data; /* may be NULL when it holds no element */
    sl_dtype dtype;
    int ndim;
    const int64_t *shape; /* ndim extents */
    bool gpu;             /* device memory of device_id */
    int device_id;
    bool readonly;
    sl_outputs *pin; /* the pipeline outputs it lies in (GPU exports record the consumer's
                      * stream there); NULL for memory the owner holds otherwise */
} slpy_region;
/* Fills a buffer-protocol view of r for `owner` (referenced by the view). CPU memory only.
 * Returns 0, or -1 with BufferError (Fortran order asked of n-d data, writing read-only). */
int slpy_fill_view(Py_buffer *view, PyObject *owner, const slpy_region *r, int flags);
void slpy_release_view(PyObject *owner, Py_buffer *view);
/* Buffer-protocol format character of a dtype ("B", "f", "e", "?"...), NULL if none. */
const char *slpy_dtype_format(sl_dtype t);
/* NumPy's array-interface type string of a dtype ("|u1", "<f4", "|b1"), NULL if none. */
const char *slpy_dtype_typestr(sl_dtype t);
/* The dtype of a buffer-protocol format and item size; SL_DTYPE_INVALID if unsupported. */
sl_dtype slpy_dtype_from_format(const char *format, Py_ssize_t itemsize);
/* __dlpack__(stream=None, max_version=None, dl_device=None, copy=None) of r for `owner`: a
 * "dltensor" capsule whose deleter releases a reference to owner. */
PyObject *slpy_dlpack(PyObject *owner, const slpy_region *r, PyObject *args, PyObject *kwargs);
/* __dlpack_device__() of r: (1, 0) kDLCPU or (2, device_id) kDLCUDA. */
PyObject *slpy_dlpack_device(const slpy_region *r);
struct slpy_tensor;
/* Takes a "dltensor" capsule of CPU memory into t (data, dtype, ndim, shape, dl), renaming the
 * capsule "used_dltensor" as the protocol asks. Returns 0, or -1 with TypeError/ValueError. */
int slpy_dlpack_import(PyObject *capsule, struct slpy_tensor *t);
/* _dlpack_device(capsule) -> (device_type, device_id) of an unconsumed "dltensor" capsule,
 * what its producer's __dlpack_device__ would say (python_function reads capsules returned by
 * a function through numpy.from_dlpack). ValueError for anything else. */
PyObject *slpy_dlpack_capsule_device(PyObject *module, PyObject *capsule);
/* Calls the deleter of the capsule t took (t->dl), if any. */
void slpy_dlpack_release(struct slpy_tensor *t);

/* ---- TensorListCPU and TensorListGPU (tensorlist.c, hostlist.c) ------------------------ */
typedef struct slpy_tensorlist {
    PyObject_HEAD PyObject *pipeline; /* slpy_pipeline, kept alive while the pin lives (and
                                       * the sources `own` borrows from its readers); NULL for
                                       * a list made from Python data */
    sl_outputs *pin;                  /* unpinned when this object dies; NULL with `own` */
    const sl_batch *b;                /* output `index` of the pinned iteration, or `own` */
    sl_batch *own; /* a host batch this object owns and frees (TensorListCPU(data),
                    * TensorListGPU.as_cpu()); NULL for pipeline outputs */
    int index;
    int device_id; /* the pipeline's CUDA device (TensorListGPU), -1 for CPU-only */
} slpy_tensorlist;
extern PyType_Spec slpy_tensorlist_spec;
extern PyType_Spec slpy_tensorlist_gpu_spec; /* TensorListGPU: same struct, GPU data */
/* A new TensorListCPU for output i of the outputs just shared on `pipeline`: takes its own pin.
 * Returns NULL with an exception set. */
PyObject *slpy_tensorlist_new(slpy_state *st, PyObject *pipeline, int i);
/* A new TensorListCPU owning `own` (a host batch, freed with it, also on failure); pipeline
 * (may be NULL) is kept alive for the sources the batch borrows. */
PyObject *slpy_tensorlist_own(slpy_state *st, sl_batch *own, PyObject *pipeline);
/* TensorListCPU(data, layout=None): tp_new (hostlist.c). */
PyObject *slpy_tensorlist_construct(PyTypeObject *type, PyObject *args, PyObject *kwargs);
/* TensorListGPU.as_cpu(): the batch copied into a TensorListCPU (hostlist.c). */
PyObject *slpy_tensorlist_to_host(PyObject *self, PyObject *unused);

/* ---- TensorCPU and TensorGPU (tensor.c) ------------------------------------------------- */
#define SLPY_TENSOR_MAX_NDIM 32
typedef struct slpy_tensor {
    PyObject_HEAD PyObject *owner; /* holds the memory: a TensorList (its pin or own batch),
                                    * NULL when `buf` or `dl` does */
    Py_buffer buf;                 /* made from a Python buffer: the exporter's view, released
                                    * when this object dies (buf.obj NULL otherwise) */
    void *dl;                      /* made from a DLPack capsule: its DLManagedTensor, whose
                                    * deleter runs when this object dies */
    void *data;
    sl_dtype dtype;
    int ndim;
    int64_t shape[SLPY_TENSOR_MAX_NDIM];
    char layout[SLPY_TENSOR_MAX_NDIM + 1];
    PyObject *source; /* str, or NULL for none */
    bool gpu, readonly;
    int device_id;
} slpy_tensor;
extern PyType_Spec slpy_tensor_spec;     /* TensorCPU */
extern PyType_Spec slpy_tensor_gpu_spec; /* TensorGPU: same struct, GPU data */
/* A new TensorCPU (TensorGPU for r->gpu) over r, whose memory `owner` keeps alive; layout and
 * source may be NULL. Returns NULL with an exception set (ValueError past
 * SLPY_TENSOR_MAX_NDIM dimensions). */
PyObject *slpy_tensor_new(slpy_state *st, PyObject *owner, const slpy_region *r, const char *layout,
                          const char *source);

/* Casts a function of another signature to PyCFunction without -Wcast-function-type. */
#define SLPY_CFUNC(f) ((PyCFunction)(void (*)(void))(f))

#endif
