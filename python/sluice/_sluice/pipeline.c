/* python/sluice/_sluice/pipeline.c: the Pipeline type, an sl_pipeline and its run API.
 *
 * Exports slpy_pipeline_spec (sluice._sluice.Pipeline) and the busy guard. The Python class
 * sluice.Pipeline (pipeline.py) keeps the DALI-shaped API and its bookkeeping (external
 * sources, epochs); this type is the thin, blocking part: build, schedule_run, share_outputs,
 * release_outputs, run, feed_input, reader metadata, stats, the graph's DOT text. Every
 * blocking one of those calls runs with the GIL released; a second thread calling in meanwhile
 * gets RuntimeError (a pipeline has one consumer thread at a time). share_outputs/run return one
 * TensorListCPU per output, each holding its own pin of the iteration's buffers and a reference to
 * this object, so the sl_pipeline is destroyed (GIL released: it joins threads) only after the last
 * view died.
 * The Python functions of python_function nodes (callback.c) belong to this object too: the
 * collector sees them (a function may refer back to its pipeline), and they are freed after
 * the sl_pipeline, whose threads call them.
 */
#include "sluice_py.h"

int slpy_pipeline_enter(slpy_state *st, slpy_pipeline *self)
{
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the pipeline is in use by another thread (one consumer thread at a time)");
        return -1;
    }
    self->busy = 1;
    return 0;
}

void slpy_pipeline_leave(slpy_pipeline *self)
{
    self->busy = 0;
}

static PyObject *pipeline_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"graph", "options", "checkpoint", NULL};
    slpy_state *st = slpy_state_of_type(type);
    PyObject *graph, *options = NULL;
    const char *checkpoint = NULL;
    sl_pipeline_options o;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|O!z:Pipeline", kwlist, st->graph_type,
                                     &graph, &PyDict_Type, &options, &checkpoint))
        return NULL;
    sl_pipeline_options_init(&o);
    if (options && slpy_options_from_dict(options, &o) < 0)
        return NULL;
    o.checkpoint = checkpoint; /* the text, borrowed until sl_pipeline_create returns */
    if (o.num_threads < 0) {   /* DALI's -1: the default; 0 runs on the caller's thread */
        sl_pipeline_options def;
        sl_pipeline_options_init(&def);
        o.num_threads = def.num_threads;
    }
    slpy_pipeline *self = (slpy_pipeline *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    sl_status rc = sl_pipeline_create(((slpy_graph *)graph)->g, &o, &self->p);
    if (rc != SL_OK) {
        Py_DECREF(self);
        return slpy_raise_last(st, rc);
    }
    return (PyObject *)self;
}

static void pipeline_dealloc(slpy_pipeline *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    slpy_callbacks_destroy_here(self); /* dying on its own thread: destroyed by another */
    sl_pipeline *p = self->p;
    if (p) {
        /* joins the pipeline's threads; one running a Python function takes the GIL to finish
         * it, and the node's views are released (the GIL again) as it is destroyed */
        PyThreadState *ts = PyEval_SaveThread();
        sl_pipeline_destroy(p);
        PyEval_RestoreThread(ts);
    }
    slpy_callbacks_free(self->cb); /* nothing calls them any more */
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

/* The Python functions of python_function nodes may refer to the pipeline (a bound method of
 * a Pipeline subclass, a closure): the collector sees them, so such a cycle is collected. */
static int pipeline_traverse(slpy_pipeline *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    return slpy_callbacks_traverse(self->cb, visit, arg);
}

typedef sl_status (*blocking_fn)(sl_pipeline *p);

/* Runs fn(p) with the GIL released; raises on failure. Returns 0 or -1. */
static int call_blocking(PyObject *obj, blocking_fn fn)
{
    slpy_pipeline *self = (slpy_pipeline *)obj;
    slpy_state *st = slpy_state_of(obj);
    if (slpy_pipeline_enter(st, self) < 0)
        return -1;
    sl_status rc;
    PyThreadState *ts = PyEval_SaveThread();
    rc = fn(self->p);
    PyEval_RestoreThread(ts);
    slpy_pipeline_leave(self);
    if (rc != SL_OK)
        slpy_raise_pipeline(st, self->p, rc);
    if (fn == sl_pipeline_share_outputs || fn == sl_pipeline_run)
        slpy_callbacks_after_share(self, rc);
    return rc == SL_OK ? 0 : -1;
}

static PyObject *outputs_tuple(PyObject *self)
{
    slpy_state *st = slpy_state_of(self);
    int n = sl_pipeline_num_outputs(((slpy_pipeline *)self)->p);
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *tl = slpy_tensorlist_new(st, self, i);
        if (!tl) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, tl);
    }
    return t;
}

static PyObject *pipeline_build(PyObject *self, PyObject *unused)
{
    if (call_blocking(self, sl_pipeline_build) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *pipeline_schedule_run(PyObject *self, PyObject *unused)
{
    if (call_blocking(self, sl_pipeline_schedule_run) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *pipeline_share_outputs(PyObject *self, PyObject *unused)
{
    if (call_blocking(self, sl_pipeline_share_outputs) < 0)
        return NULL;
    return outputs_tuple(self);
}

static PyObject *pipeline_release_outputs(PyObject *self, PyObject *unused)
{
    if (call_blocking(self, sl_pipeline_release_outputs) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *pipeline_run(PyObject *self, PyObject *unused)
{
    if (call_blocking(self, sl_pipeline_run) < 0)
        return NULL;
    return outputs_tuple(self);
}

static int opt_name(PyObject *o, const char **name)
{
    *name = NULL;
    if (o == Py_None)
        return 0;
    *name = PyUnicode_AsUTF8(o);
    return *name ? 0 : -1;
}

static PyObject *pipeline_epoch_size(PyObject *self, PyObject *args)
{
    PyObject *o = Py_None;
    const char *name;
    if (!PyArg_ParseTuple(args, "|O:epoch_size", &o) || opt_name(o, &name) < 0)
        return NULL;
    return PyLong_FromLongLong(sl_pipeline_epoch_size(((slpy_pipeline *)self)->p, name));
}

static PyObject *pipeline_reader_meta(PyObject *self, PyObject *args)
{
    PyObject *o = Py_None;
    const char *name;
    if (!PyArg_ParseTuple(args, "|O:reader_meta", &o) || opt_name(o, &name) < 0)
        return NULL;
    sl_reader_meta m;
    sl_status rc = sl_pipeline_reader_meta(((slpy_pipeline *)self)->p, name, &m);
    if (rc != SL_OK)
        return slpy_raise_last(slpy_state_of(self), rc);
    return Py_BuildValue("{s:L,s:L,s:i,s:i,s:O,s:O}", "epoch_size", (long long)m.epoch_size,
                         "epoch_size_padded", (long long)m.epoch_size_padded, "number_of_shards",
                         m.number_of_shards, "shard_id", m.shard_id, "pad_last_batch",
                         m.pad_last_batch ? Py_True : Py_False, "stick_to_shard",
                         m.stick_to_shard ? Py_True : Py_False);
}

/* stats() -> [dict(name, op, device, iterations, total_ms, busy_ms, gpu_ms, fused_into,
 * fallbacks, bad_samples)] in
 * execution order (fused_into: a node name or None). */
static PyObject *pipeline_stats(PyObject *self, PyObject *unused)
{
    sl_pipeline *p = ((slpy_pipeline *)self)->p;
    int n = sl_pipeline_num_nodes(p);
    PyObject *l = PyList_New(0);
    for (int i = 0; l && i < n; i++) {
        sl_node_stats s;
        if (sl_pipeline_node_stats(p, i, &s) != SL_OK)
            continue;
        PyObject *d = Py_BuildValue(
            "{s:s,s:s,s:s,s:L,s:d,s:d,s:d,s:z,s:L,s:L}", "name", s.name, "op", s.op, "device",
            s.device, "iterations", (long long)s.iterations, "total_ms", s.total_ms, "busy_ms",
            s.busy_ms, "gpu_ms", s.gpu_ms, "fused_into", s.fused_into, "fallbacks",
            (long long)s.fallbacks, "bad_samples", (long long)s.bad_samples);
        if (!d || PyList_Append(l, d) < 0)
            Py_CLEAR(l);
        Py_XDECREF(d);
    }
    return l;
}

/* prefetch_stats() -> dict: what prefetch_queue_depth "auto" decided (sl_pipeline_prefetch_stats;
 * quick, the GIL kept). */
static PyObject *pipeline_prefetch_stats(PyObject *self, PyObject *unused)
{
    sl_pipeline *p = ((slpy_pipeline *)self)->p;
    sl_prefetch_stats s;
    if (sl_pipeline_prefetch_stats(p, &s) != SL_OK)
        return slpy_raise_last(slpy_state_of(self), SL_EMISUSE);
    PyObject *changes = PyList_New(0);
    for (int k = 0; changes && k < s.nchanges; k++) {
        PyObject *c = Py_BuildValue("(Li)", (long long)s.change_iteration[k], s.change_depth[k]);
        if (!c || PyList_Append(changes, c) < 0)
            Py_CLEAR(changes);
        Py_XDECREF(c);
    }
    if (!changes)
        return NULL;
    return Py_BuildValue("{s:O,s:i,s:i,s:i,s:L,s:L,s:L,s:L,s:L,s:d,s:d,s:s,s:N}", "autotune",
                         s.autotune ? Py_True : Py_False, "depth", s.depth, "depth_limit",
                         s.depth_limit, "num_threads", s.num_threads, "iteration_bytes",
                         (long long)s.iteration_bytes, "budget_bytes", (long long)s.budget_bytes,
                         "increases", (long long)s.increases, "decreases", (long long)s.decreases,
                         "windows", (long long)s.windows, "idle", s.idle, "consumer_wait",
                         s.consumer_wait, "reason", s.reason, "changes", changes);
}

/* cache_stats() -> dict(nodes, hits, misses, entries, bytes, capacity, full): the sample
 * cache's counters (sl_pipeline_cache_stats). */
static PyObject *pipeline_cache_stats(PyObject *self, PyObject *unused)
{
    sl_cache_stats s;
    if (sl_pipeline_cache_stats(((slpy_pipeline *)self)->p, &s) != SL_OK)
        return PyErr_Format(PyExc_RuntimeError, "%s", sl_last_error());
    return Py_BuildValue("{s:i,s:L,s:L,s:L,s:L,s:L,s:O}", "nodes", s.nodes, "hits",
                         (long long)s.hits, "misses", (long long)s.misses, "entries",
                         (long long)s.entries, "bytes", (long long)s.bytes, "capacity",
                         (long long)s.capacity, "full", s.full ? Py_True : Py_False);
}

/* checkpoint() -> str: sl_pipeline_checkpoint's JSON text. */
static PyObject *pipeline_checkpoint(PyObject *self, PyObject *unused)
{
    slpy_pipeline *sp = (slpy_pipeline *)self;
    slpy_state *st = slpy_state_of(self);
    char *text = NULL;
    size_t len = 0;
    if (slpy_pipeline_enter(st, sp) < 0)
        return NULL;
    PyThreadState *ts = PyEval_SaveThread(); /* it may build the pipeline */
    sl_status rc = sl_pipeline_checkpoint(sp->p, &text, &len);
    PyEval_RestoreThread(ts);
    slpy_pipeline_leave(sp);
    if (rc != SL_OK)
        return slpy_raise_pipeline(st, sp->p, rc), NULL;
    PyObject *r = PyUnicode_DecodeUTF8(text, (Py_ssize_t)len, "strict");
    sl_checkpoint_free(text);
    return r;
}

/* dot() -> str: the pipeline's graph as Graphviz DOT text (sl_pipeline_write_dot: the built
 * plan, or the one a build will make, without building). Quick and non-blocking, so the GIL is
 * kept; the busy guard still keeps it off a pipeline another thread is building. */
static PyObject *pipeline_dot(PyObject *self, PyObject *unused)
{
    slpy_pipeline *sp = (slpy_pipeline *)self;
    slpy_state *st = slpy_state_of(self);
    char *text = NULL;
    size_t len = 0;
    if (slpy_pipeline_enter(st, sp) < 0)
        return NULL;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) {
        slpy_pipeline_leave(sp);
        return PyErr_NoMemory();
    }
    sl_status rc = sl_pipeline_write_dot(sp->p, mem);
    bool closed = fclose(mem) == 0;
    slpy_pipeline_leave(sp);
    PyObject *r = NULL;
    if (rc != SL_OK)
        slpy_raise_pipeline(st, sp->p, rc);
    else if (!closed)
        PyErr_NoMemory();
    else
        r = PyUnicode_DecodeUTF8(text, (Py_ssize_t)len, "replace");
    free(text);
    return r;
}

static PyObject *pipeline_iteration(PyObject *self, void *closure)
{
    return PyLong_FromLongLong(sl_pipeline_iteration(((slpy_pipeline *)self)->p));
}

static PyObject *pipeline_num_outputs(PyObject *self, void *closure)
{
    return PyLong_FromLong(sl_pipeline_num_outputs(((slpy_pipeline *)self)->p));
}

static PyObject *pipeline_seed(PyObject *self, void *closure)
{
    return PyLong_FromLongLong(sl_pipeline_seed(((slpy_pipeline *)self)->p));
}

static PyObject *pipeline_error(PyObject *self, void *closure)
{
    return PyUnicode_FromString(sl_pipeline_error(((slpy_pipeline *)self)->p));
}

static PyMethodDef pipeline_methods[] = {
    {"build", pipeline_build, METH_NOARGS, "build(): validate, prune, place, start threads."},
    {"schedule_run", pipeline_schedule_run, METH_NOARGS,
     "schedule_run(): asks for one more iteration (the first call: prefetch_queue_depth)."},
    {"share_outputs", pipeline_share_outputs, METH_NOARGS,
     "share_outputs() -> tuple of TensorListCPU: waits for the oldest scheduled iteration."},
    {"release_outputs", pipeline_release_outputs, METH_NOARGS,
     "release_outputs(): gives the oldest shared iteration back (live views keep it)."},
    {"run", pipeline_run, METH_NOARGS,
     "run() -> tuple of TensorListCPU: release previous + schedule_run + share_outputs."},
    {"feed_input", SLPY_CFUNC(slpy_pipeline_feed_input), METH_VARARGS | METH_KEYWORDS,
     "feed_input(name, samples, layout=None): one batch for external_source node `name`; "
     "samples: C-contiguous buffers, one per sample; copied."},
    {"feed_lent", SLPY_CFUNC(slpy_pipeline_feed_lent), METH_VARARGS | METH_KEYWORDS,
     "feed_lent(name, chunks, samples, dtype, ndim, layout=None): one batch whose samples lie "
     "in SharedChunks (samples[i] = (chunk index, offset, shape)); lent, not copied: the chunks "
     "count as lent until the pipeline releases the batch."},
    {"set_callback", slpy_pipeline_set_callback, METH_VARARGS,
     "set_callback(node, runner): runs runner(iteration, batch_size, inputs) as the function of "
     "python_function node `node` (before build); see sluice/python_function.py."},
    {"epoch_size", pipeline_epoch_size, METH_VARARGS,
     "epoch_size(name=None) -> int: reader `name` (None: the first); -1 if none."},
    {"reader_meta", pipeline_reader_meta, METH_VARARGS, "reader_meta(name=None) -> dict"},
    {"stats", pipeline_stats, METH_NOARGS, "stats() -> per-node timing, execution order."},
    {"prefetch_stats", pipeline_prefetch_stats, METH_NOARGS,
     "prefetch_stats() -> dict: the prefetch depth and what \"auto\" decided."},
    {"cache_stats", pipeline_cache_stats, METH_NOARGS,
     "cache_stats() -> the sample cache's counters."},
    {"checkpoint", pipeline_checkpoint, METH_NOARGS,
     "checkpoint() -> str: the pipeline's state after the iterations taken (JSON)."},
    {"dot", pipeline_dot, METH_NOARGS,
     "dot() -> str: the graph as Graphviz DOT text (the plan the build makes; no build)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef pipeline_getset[] = {
    {"iteration", pipeline_iteration, NULL, "Iteration of the outputs last shared, -1 before.",
     NULL},
    {"num_outputs", pipeline_num_outputs, NULL, "Number of pipeline outputs (after build).", NULL},
    {"error", pipeline_error, NULL, "Message of the last failed call, \"\" if none.", NULL},
    {"seed", pipeline_seed, NULL,
     "The pipeline's seed: the one given, or the fresh one drawn when it was negative.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot pipeline_slots[] = {
    {Py_tp_new, pipeline_new},
    {Py_tp_dealloc, pipeline_dealloc},
    {Py_tp_traverse, pipeline_traverse},
    {Py_tp_methods, pipeline_methods},
    {Py_tp_getset, pipeline_getset},
    {Py_tp_doc, "Pipeline(graph, options=None): an sl_pipeline (the graph is copied); options "
                "is a dict of the pipeline options by their spec keys (None or missing: the "
                "default)."},
    {0, NULL}};

PyType_Spec slpy_pipeline_spec = {
    .name = "sluice._sluice.Pipeline",
    .basicsize = sizeof(slpy_pipeline),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = pipeline_slots,
};
