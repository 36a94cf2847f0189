/* python/sluice/_sluice/module.c: the module sluice._sluice (multi-phase init, module state).
 *
 * Exports PyInit__sluice (the only symbol the shared object exports) and the module-level
 * functions: registry(), version(), graph_from_json(), options_from_json(), _set_dtypes(),
 * resolve_aliases(), _dlpack_device(), _shm_live(), _distributed_info(), _distributed_set(),
 * _dl_gather() (dlio.c), _lower_peek(), _lower_crop_resize() (lower.c).
 * Constants: HAVE_CUDA, DTYPE_NAMES (sl_dtype index -> "uint8", ...).
 * Invariant: the module state owns every Python object the C code keeps; types are heap types
 * created per module object, so sub-interpreters and re-imports are safe.
 */
#include "sluice_py.h"

slpy_state *slpy_state_of_type(PyTypeObject *t)
{
    PyObject *m = PyType_GetModuleByDef(t, &slpy_module);
    return m ? (slpy_state *)PyModule_GetState(m) : NULL;
}

slpy_state *slpy_state_of(PyObject *obj)
{
    return slpy_state_of_type(Py_TYPE(obj));
}

PyObject *slpy_np_asarray(slpy_state *st)
{
    if (!st->np_asarray) {
        PyObject *np = PyImport_ImportModule("numpy");
        if (!np)
            return NULL;
        st->np_asarray = PyObject_GetAttrString(np, "asarray");
        Py_DECREF(np);
    }
    return st->np_asarray;
}

static PyObject *version(PyObject *module, PyObject *unused)
{
    return PyUnicode_FromString(sl_version());
}

/* _set_dtypes(seq): what TensorListCPU.dtype returns, indexed by sl_dtype (set by sluice.types
 * so that outputs report types.DALIDataType members). */
static PyObject *set_dtypes(PyObject *module, PyObject *seq)
{
    slpy_state *st = PyModule_GetState(module);
    PyObject *t = PySequence_Tuple(seq);
    if (!t)
        return NULL;
    if (PyTuple_GET_SIZE(t) != SL_DTYPE_COUNT) {
        Py_DECREF(t);
        return PyErr_Format(PyExc_ValueError, "_set_dtypes: expected %d entries",
                            (int)SL_DTYPE_COUNT);
    }
    Py_XSETREF(st->dtypes, t);
    Py_RETURN_NONE;
}

/* _distributed_info() -> (rank, world_size, local_rank, source): sl_distributed_info (the
 * launcher's environment, or what _distributed_set registered); local_rank -1 when unknown.
 * Raises NotFoundError when no launcher is found, InvalidArgumentError for a malformed
 * variable. */
static PyObject *distributed_info(PyObject *module, PyObject *unused)
{
    sl_distributed d;
    sl_status code = sl_distributed_info(&d);
    if (code != SL_OK)
        return slpy_raise_last(PyModule_GetState(module), code);
    return Py_BuildValue("(iiis)", d.rank, d.world_size, d.local_rank, d.source);
}

/* _distributed_set(rank, world_size, local_rank, source): sl_distributed_set (world_size 0
 * forgets the registration). */
static PyObject *distributed_set(PyObject *module, PyObject *args)
{
    int rank, world_size, local_rank;
    const char *source;
    if (!PyArg_ParseTuple(args, "iiis:_distributed_set", &rank, &world_size, &local_rank, &source))
        return NULL;
    sl_status code = sl_distributed_set(rank, world_size, local_rank, source);
    if (code != SL_OK)
        return slpy_raise_last(PyModule_GetState(module), code);
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"_dl_gather", slpy_dl_gather, METH_VARARGS,
     "_dl_gather(dst, rows, row_bytes) -> bool: row i (a C-contiguous buffer of row_bytes, or "
     "an int address) copied to address dst + i * row_bytes; False, nothing written, when a "
     "row is not such a buffer (the DataLoader worker's stacking; dlio.c)."},
    {"_distributed_info", distributed_info, METH_NOARGS,
     "_distributed_info() -> (rank, world_size, local_rank, source) from the job's launcher."},
    {"_distributed_set", distributed_set, METH_VARARGS,
     "_distributed_set(rank, world_size, local_rank, source): registers the job (world_size 0: "
     "forgets it)."},
    {"registry", slpy_registry, METH_NOARGS,
     "registry() -> list of dict: every operator of the C registry with its schema."},
    {"version", version, METH_NOARGS, "version() -> str: the library's version."},
    {"graph_from_json", slpy_graph_from_json, METH_O,
     "graph_from_json(text) -> Graph: the graph part of a JSON pipeline spec."},
    {"options_from_json", slpy_options_from_json, METH_O,
     "options_from_json(text) -> dict: the \"pipeline\" object of a JSON spec, with defaults."},
    {"_set_dtypes", set_dtypes, METH_O, "_set_dtypes(seq): dtype objects by sl_dtype index."},
    {"resolve_aliases", slpy_resolve_aliases_py, METH_VARARGS,
     "resolve_aliases(op, name, args, arg_inputs) -> (args, arg_inputs): deprecated argument "
     "names resolved to the current ones (each with a DeprecationWarning), as the build does."},
    {"_dlpack_device", slpy_dlpack_capsule_device, METH_O,
     "_dlpack_device(capsule) -> (device_type, device_id) of an unconsumed DLPack capsule."},
    {"_shm_live", slpy_shm_live, METH_NOARGS,
     "_shm_live() -> (mappings, bytes): SharedChunk mappings alive in this process."},
    {"_lower_peek", slpy_lower_peek, METH_O,
     "_lower_peek(data) -> (width, height), or None unless the codec decodes the image exactly "
     "as Pillow's convert(\"RGB\") (the DataLoader's lowering; lower.c)."},
    {"_lower_crop_resize", slpy_lower_crop_resize, METH_VARARGS,
     "_lower_crop_resize(data, top, left, height, width, out_h, out_w, flip, out, offset): one "
     "image's window decoded, resized (PIL BILINEAR) and flipped, written CHW uint8 into out "
     "at offset (the DataLoader's lowering; lower.c)."},
    {NULL, NULL, 0, NULL}};

static int add_type(PyObject *m, PyType_Spec *spec, PyTypeObject **out)
{
    *out = (PyTypeObject *)PyType_FromModuleAndSpec(m, spec, NULL);
    if (!*out)
        return -1;
    const char *dot = strrchr(spec->name, '.');
    return PyModule_AddObjectRef(m, dot ? dot + 1 : spec->name, (PyObject *)*out);
}

static int add_constants(PyObject *m)
{
#ifdef SLUICE_HAVE_CUDA
    int have_cuda = 1;
#else
    int have_cuda = 0;
#endif
    if (PyModule_AddObjectRef(m, "HAVE_CUDA", have_cuda ? Py_True : Py_False) < 0)
        return -1;
    PyObject *names = PyTuple_New(SL_DTYPE_COUNT);
    if (!names)
        return -1;
    for (int t = 0; t < SL_DTYPE_COUNT; t++) {
        PyObject *s = PyUnicode_FromString(sl_dtype_name((sl_dtype)t));
        if (!s) {
            Py_DECREF(names);
            return -1;
        }
        PyTuple_SET_ITEM(names, t, s);
    }
    int rc = PyModule_AddObjectRef(m, "DTYPE_NAMES", names);
    Py_DECREF(names);
    return rc;
}

static int module_exec(PyObject *m)
{
    slpy_state *st = PyModule_GetState(m);
    if (add_type(m, &slpy_graph_spec, &st->graph_type) < 0 ||
        add_type(m, &slpy_pipeline_spec, &st->pipeline_type) < 0 ||
        add_type(m, &slpy_tensorlist_spec, &st->tensorlist_type) < 0 ||
        add_type(m, &slpy_tensorlist_gpu_spec, &st->tensorlist_gpu_type) < 0 ||
        add_type(m, &slpy_tensor_spec, &st->tensor_type) < 0 ||
        add_type(m, &slpy_tensor_gpu_spec, &st->tensor_gpu_type) < 0 ||
        add_type(m, &slpy_chunk_spec, &st->chunk_type) < 0)
        return -1;
    if (slpy_errors_init(m, st) < 0 || add_constants(m) < 0)
        return -1;
    return 0;
}

static int module_traverse(PyObject *m, visitproc visit, void *arg)
{
    slpy_state *st = PyModule_GetState(m);
    if (!st)
        return 0;
    Py_VISIT(st->graph_type);
    Py_VISIT(st->pipeline_type);
    Py_VISIT(st->tensorlist_type);
    Py_VISIT(st->tensorlist_gpu_type);
    Py_VISIT(st->tensor_type);
    Py_VISIT(st->tensor_gpu_type);
    Py_VISIT(st->chunk_type);
    Py_VISIT(st->np_asarray);
    Py_VISIT(st->dtypes);
    return slpy_errors_traverse(st, visit, arg);
}

static int module_clear(PyObject *m)
{
    slpy_state *st = PyModule_GetState(m);
    if (!st)
        return 0;
    Py_CLEAR(st->graph_type);
    Py_CLEAR(st->pipeline_type);
    Py_CLEAR(st->tensorlist_type);
    Py_CLEAR(st->tensorlist_gpu_type);
    Py_CLEAR(st->tensor_type);
    Py_CLEAR(st->tensor_gpu_type);
    Py_CLEAR(st->chunk_type);
    Py_CLEAR(st->np_asarray);
    Py_CLEAR(st->dtypes);
    slpy_errors_clear(st);
    return 0;
}

static void module_free(void *m)
{
    module_clear((PyObject *)m);
}

static PyModuleDef_Slot module_slots[] = {{Py_mod_exec, module_exec}, {0, NULL}};

PyModuleDef slpy_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "sluice._sluice",
    .m_doc = "The C extension of sluice: the registry, graphs, pipelines and their outputs.",
    .m_size = sizeof(slpy_state),
    .m_methods = module_methods,
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__sluice(void)
{
    return PyModuleDef_Init(&slpy_module);
}
