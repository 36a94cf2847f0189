/* src/ops/callback/python_function.c: `python_function`, a node that runs the application's
 * function (DALI's PythonFunction / DLTensorPythonFunction).
 *
 * Exports sl_op_python_function. The function is not an argument: the front end registers it
 * for the node before the build (sl_pipeline_set_callback; the Python API does so with the
 * Python callable, a spec cannot hold one), and init refuses a node without one. Each
 * iteration's setup calls it once with the node's inputs (one call at a time, in iteration
 * order: the operator is stateful, and has side effects, so it is never pruned); it hands back
 * a view of every output sample, which setup checks (one dtype and one number of dimensions per
 * output, the declared layout's length) and declares; run_sample copies sample i of every
 * output, whatever the view's strides, and the last copy gives the views back.
 * Invariant: the views of at most one call are held at a time — in `held`, until released
 * (the last copy, the next setup when run was skipped, or fini); nothing else in the state
 * changes after init.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "sluice/op.h"

/* The most outputs a node may have (DALI sets no limit; this one is far past any use). */
#define MAX_OUTPUTS 64

enum { A_NUM_OUTPUTS, A_BATCH_PROCESSING, A_OUTPUT_LAYOUTS, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_NUM_OUTPUTS] = {.name = "num_outputs",
                       .type = SL_ARG_INT,
                       .def = "1",
                       .flags = SL_ARG_RANGE,
                       .min = 0,
                       .max = MAX_OUTPUTS,
                       .doc = "Number of outputs: of arrays the function returns (a tuple of "
                              "them when more than one); 0 for a function called for its side "
                              "effects only."},
    [A_BATCH_PROCESSING] = {.name = "batch_processing",
                            .type = SL_ARG_BOOL,
                            .def = "false",
                            .doc = "Read by the front end: true calls the function once per "
                                   "batch with a list of samples per input, false once per "
                                   "sample."},
    [A_OUTPUT_LAYOUTS] = {.name = "output_layouts",
                          .type = SL_ARG_STRINGS,
                          .flags = SL_ARG_OPTIONAL,
                          .doc = "Layouts of the outputs, from the first; outputs past the end "
                                 "of the list have none. Each must have as many letters as its "
                                 "output has dimensions. (Python also takes one string, for "
                                 "every output.)"},
};

static const sl_io_def inputs[] = {
    {"input", "Passed to the function (any number of inputs, CPU data)."}};
static const sl_io_def outputs[] = {{"output", "What the function returned (num_outputs)."}};

typedef struct state {
    sl_callback_fn fn;
    void *user;
    int nout;
    char layouts[MAX_OUTPUTS][SL_MAX_NDIM + 1]; /* "" when none */
    int batch_size;                             /* the maximum */
    sl_sample_view *views;                      /* nout * batch_size, the call's */
    const sl_batch **in;                        /* the inputs of a call (made by the first) */
    /* The call whose views are held: its release (NULL when none is held), and the samples
     * run_sample has not copied yet. */
    void (*release)(void *ctx);
    void *release_ctx;
    atomic_int to_copy;
} state;

static sl_status init(sl_op_init *ini, void **out)
{
    sl_callback_fn fn;
    void *user;
    if (!sl_init_callback(ini, &fn, &user))
        return sl_init_fail(ini, SL_EUNSUPPORTED,
                            "needs a Python callable: build it from Python (fn.python_function "
                            "registers its `function`); a JSON spec cannot hold one, and a C "
                            "program registers one with sl_pipeline_set_callback");
    int nout = sl_init_num_outputs(ini), nl = 0;
    const char *const *layouts = sl_init_arg_is_set(ini, A_OUTPUT_LAYOUTS)
                                     ? sl_init_arg_strs(ini, A_OUTPUT_LAYOUTS, &nl)
                                     : NULL;
    if (nl > nout)
        return sl_init_fail(ini, SL_EINVAL,
                            "the length of output_layouts (%d) is greater than the number of "
                            "outputs (%d)",
                            nl, nout);
    for (int o = 0; o < nl; o++) {
        if (strlen(layouts[o]) > SL_MAX_NDIM)
            return sl_init_fail(ini, SL_EINVAL,
                                "output_layouts[%d] \"%s\": more than %d dimensions", o, layouts[o],
                                SL_MAX_NDIM);
    }
    state *s = sl__calloc(1, sizeof(*s));
    int n = sl_init_batch_size(ini);
    if (s)
        s->views = sl__calloc((size_t)(nout ? nout : 1) * (size_t)n, sizeof(sl_sample_view));
    if (!s || !s->views) {
        if (s)
            sl__free(s->views);
        sl__free(s);
        return SL_ENOMEM;
    }
    s->fn = fn;
    s->user = user;
    s->nout = nout;
    s->batch_size = n;
    for (int o = 0; o < nl; o++)
        snprintf(s->layouts[o], sizeof s->layouts[o], "%s", layouts[o]);
    *out = s;
    return SL_OK;
}

/* Gives the held views back (once). */
static void give_back(state *s)
{
    void (*release)(void *) = s->release;
    s->release = NULL;
    if (release)
        release(s->release_ctx);
}

static void fini(void *st)
{
    state *s = st;
    give_back(s);
    sl__free(s->in);
    sl__free(s->views);
    sl__free(s);
}

/* Checks the views of output o and declares it. */
static sl_status declare(sl_ctx *ctx, state *s, int o, int n)
{
    const sl_sample_view *v = s->views + (size_t)o * n;
    for (int i = 0; i < n; i++) {
        sl_ctx_focus_sample(ctx, i);
        if (sl_dtype_size(v[i].dtype) == 0)
            return sl_fail(ctx, SL_EINVAL,
                           "output %d: the function returned no array of a "
                           "supported element type",
                           o);
        if (v[i].ndim < 0 || v[i].ndim > SL_MAX_NDIM)
            return sl_fail(ctx, SL_EINVAL, "output %d has %d dimensions; at most %d are supported",
                           o, v[i].ndim, SL_MAX_NDIM);
        if (v[i].dtype != v[0].dtype)
            return sl_fail(ctx, SL_EINVAL,
                           "output %d is %s, but %s in sample 0: the samples of an output must "
                           "share one element type",
                           o, sl_dtype_name(v[i].dtype), sl_dtype_name(v[0].dtype));
        if (v[i].ndim != v[0].ndim)
            return sl_fail(ctx, SL_EINVAL,
                           "output %d has %d dimensions, but %d in sample 0: the samples of an "
                           "output must have the same number of dimensions",
                           o, v[i].ndim, v[0].ndim);
        bool empty = false;
        for (int d = 0; d < v[i].ndim; d++) {
            if (v[i].shape[d] < 0)
                return sl_fail(ctx, SL_EINVAL, "output %d: extent %d is negative (%lld)", o, d,
                               (long long)v[i].shape[d]);
            empty |= v[i].shape[d] == 0;
        }
        if (!empty && !v[i].data)
            return sl_fail(ctx, SL_EINVAL, "output %d: the function returned no data", o);
    }
    sl_ctx_focus_sample(ctx, -1);
    const char *layout = s->layouts[o];
    if (layout[0] && (int)strlen(layout) != v[0].ndim)
        return sl_fail(ctx, SL_EINVAL,
                       "output_layouts[%d] \"%s\" has %d dimensions, but output %d has %d", o,
                       layout, (int)strlen(layout), o, v[0].ndim);
    sl_ctx_set_output(ctx, o, v[0].dtype, v[0].ndim, layout[0] ? layout : NULL);
    for (int i = 0; i < n; i++)
        sl_ctx_set_shape(ctx, o, i, v[i].shape);
    return SL_OK;
}

static sl_status setup(sl_ctx *ctx)
{
    state *s = sl_ctx_state(ctx);
    give_back(s); /* an earlier iteration failed before copying what it held */
    int n = sl_ctx_batch_size(ctx), nin = sl_ctx_num_inputs(ctx);
    if (!s->in && !(s->in = sl__calloc((size_t)(nin ? nin : 1), sizeof(*s->in))))
        return sl_fail(ctx, SL_ENOMEM, "out of memory");
    for (int k = 0; k < nin; k++)
        s->in[k] = sl_ctx_input(ctx, k);
    memset(s->views, 0, sizeof(sl_sample_view) * (size_t)s->nout * (size_t)n);
    char err[1024] = "";
    sl_callback_call call = {.iteration = sl_ctx_iteration(ctx),
                             .batch_size = n,
                             .num_inputs = nin,
                             .inputs = s->in,
                             .num_outputs = s->nout,
                             .outputs = s->views,
                             .err = err,
                             .errlen = sizeof err};
    sl_status st = s->fn(s->user, &call);
    s->release = call.release;
    s->release_ctx = call.release_ctx;
    if (st != SL_OK) {
        give_back(s);
        return sl_fail(ctx, st, "%s", err[0] ? err : "the function failed");
    }
    for (int o = 0; o < s->nout; o++) {
        st = declare(ctx, s, o, n);
        if (st != SL_OK) {
            give_back(s);
            return st;
        }
    }
    if (s->nout == 0 || n == 0)
        give_back(s);                                            /* nothing to copy */
    atomic_store_explicit(&s->to_copy, n, memory_order_relaxed); /* run_sample: later */
    return SL_OK;
}

/* Copies one sample, laid out by `strides` (NULL: C order), into dst in C order: the longest
 * contiguous run of innermost dimensions at a time. */
static void copy_sample(uint8_t *dst, const sl_sample_view *v)
{
    size_t elem = sl_dtype_size(v->dtype), run = elem;
    int64_t numel = 1;
    for (int d = 0; d < v->ndim; d++)
        numel *= v->shape[d];
    if (numel == 0)
        return;
    int outer_dims = v->ndim;
    if (!v->strides) {
        memcpy(dst, v->data, (size_t)numel * elem);
        return;
    }
    while (outer_dims > 0 && v->strides[outer_dims - 1] == (int64_t)run) {
        run *= (size_t)v->shape[outer_dims - 1];
        outer_dims--;
    }
    int64_t idx[SL_MAX_NDIM] = {0};
    const uint8_t *src = v->data;
    for (int64_t k = (int64_t)((size_t)numel * elem / run); k > 0; k--) {
        memcpy(dst, src, run);
        dst += run;
        for (int d = outer_dims - 1; d >= 0; d--) { /* the next run: an odometer */
            if (++idx[d] < v->shape[d]) {
                src += v->strides[d];
                break;
            }
            src -= v->strides[d] * (v->shape[d] - 1);
            idx[d] = 0;
        }
    }
}

static sl_status run_sample(sl_ctx *ctx, int i)
{
    state *s = sl_ctx_state(ctx);
    int n = sl_ctx_batch_size(ctx);
    for (int o = 0; o < s->nout; o++)
        copy_sample(sl_ctx_output_data(ctx, o, i), &s->views[(size_t)o * n + i]);
    /* the last copy gives the views back (the others' reads happen before their decrement) */
    if (atomic_fetch_sub_explicit(&s->to_copy, 1, memory_order_acq_rel) == 1)
        give_back(s);
    return SL_OK;
}

const sl_op_def sl_op_python_function = {
    .name = "python_function",
    .doc = "Runs a Python function on the data (DALI's fn.python_function).\n\n"
           "The function is the Python API's: `fn.python_function(*inputs, function=f, "
           "num_outputs=1, batch_processing=False, output_layouts=None)` registers `f` for the "
           "node, and `fn.dl_tensor_python_function` does the same with DLPack capsules instead "
           "of NumPy arrays. The function gets copies of the samples (per sample, or a list per "
           "input with batch_processing) and returns arrays, a tuple of num_outputs of them "
           "(per batch: lists of batch-size arrays); the samples of an output must share one "
           "element type and number of dimensions. It runs once per iteration (per sample: "
           "batch-size times), in iteration order, one call at a time, on a pipeline thread "
           "holding the GIL. The node has side effects: it is never pruned, even with no "
           "output used (num_outputs=0), and it must be made while a pipeline is being "
           "defined. An exception fails its iteration, raised by the run() that delivers it "
           "with the Python exception (and its traceback) as __cause__; the pipeline goes "
           "on.\n\n"
           "A JSON spec cannot hold the function: a spec (or a C program that registered none "
           "with sl_pipeline_set_callback) with this node fails to build, and Python's "
           "serialize() refuses a pipeline holding one. Device \"cpu\" only (DALI's "
           "device=\"gpu\" passes CuPy arrays).",
    .inputs = inputs,
    .min_inputs = 0,
    .max_inputs = SL_INPUTS_ANY,
    .outputs = outputs,
    .num_outputs = 1,
    .num_outputs_arg = "num_outputs",
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_STATEFUL | SL_OP_SIDE_EFFECTS | SL_OP_CALLBACK,
    .init = init,
    .fini = fini,
    .setup = setup,
    .run_sample = run_sample,
};
