/* constant: a batch whose every sample is the same tensor, written in the arguments (DALI's
 * fn.constant; Python's types.Constant and the constants given where a DataNode is expected
 * become nodes of it).
 *
 * Exports: const sl_op_def sl_op_constant ("constant", CPU and GPU).
 *
 * The values are `fdata` (floating point) or `idata` (integers), exactly one of the two, in C
 * order. `shape` is the shape of a sample: the values fill it, or a single value is repeated to
 * fill it; unset, a sample is 1-D, one element per value. `dtype` is the element type (unset:
 * float32 for fdata, int32 for idata), each value converted to it with DALI's ConvertSat rules
 * (ops/tensor/convert.c: floating point to integer rounds to nearest, halves away from zero,
 * and saturates). `layout` names the dimensions, one letter each, or is empty.
 * On the GPU the values are uploaded each iteration and every sample gathers them with the
 * tensor family's gather kernel (strides 0 when one value fills the shape).
 * Invariant: init converts the values once into the node's state (as many elements as were
 * given, never the whole shape, so a huge shape filled with one value costs nothing until a
 * sample is made); run_sample / run_gpu only copy them into each sample.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sluice/op.h"

#include "core/core.h"
#include "ops/tensor/tensor.h"
#include "ops/tensor/tensor_gpu.h"

enum { A_FDATA, A_IDATA, A_SHAPE, A_DTYPE, A_LAYOUT, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_FDATA] = {.name = "fdata",
                 .type = SL_ARG_FLOATS,
                 .doc = "The values, for floating point data: a flat list in C order, or one "
                        "value. Exclusive with idata; one of the two is required.",
                 .flags = SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK},
    [A_IDATA] = {.name = "idata",
                 .type = SL_ARG_INTS,
                 .doc = "The values, for integer (and bool) data: a flat list in C order, or "
                        "one value. Exclusive with fdata; one of the two is required.",
                 .flags = SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK},
    [A_SHAPE] = {.name = "shape",
                 .type = SL_ARG_INTS,
                 .doc = "Shape of every sample ([] for a scalar). The values must fill it "
                        "exactly, or be a single value, which is repeated. Unset: 1-D, one "
                        "element per value.",
                 .flags = SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK,
                 .max_len = SL_MAX_NDIM},
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .doc = "Element type of the output; the values are converted to it (rounded "
                        "to nearest and saturated for integer types). Unset: float32 with "
                        "fdata, int32 with idata.",
                 .flags = SL_ARG_OPTIONAL},
    [A_LAYOUT] = {.name = "layout",
                  .type = SL_ARG_STRING,
                  .def = "\"\"",
                  .doc = "Layout of the samples, one letter per dimension (\"HWC\"), or \"\" "
                         "for none."},
};

static const sl_io_def outputs[] = {
    {"output", "The constant tensor, the same in every sample."},
};

/* The node's sample, made once at init. */
typedef struct constant {
    sl_dtype dtype;
    int ndim;
    int64_t shape[SL_MAX_NDIM];
    int64_t numel; /* elements of a sample */
    int64_t nvals; /* elements in data[]: numel, or 1 (repeated to fill a sample) */
    size_t esize;  /* bytes of one element */
    char layout[SL_MAX_NDIM + 1];
    uint64_t data[]; /* nvals elements of dtype (uint64_t: aligned for every dtype) */
} constant;

/* The sample's shape into c: `shape` when given (checked against the n values), else [n]. */
static sl_status read_shape(sl_op_init *ini, int n, constant *c)
{
    if (!sl_init_arg_is_set(ini, A_SHAPE)) {
        c->ndim = 1;
        c->shape[0] = c->numel = n;
        return SL_OK;
    }
    const int64_t *s = sl_init_arg_ints(ini, A_SHAPE, &c->ndim);
    c->numel = 1;
    for (int d = 0; d < c->ndim; d++) {
        if (s[d] < 0)
            return sl_init_fail(ini, SL_EINVAL, "shape[%d] is %lld: extents must be 0 or more", d,
                                (long long)s[d]);
        if (s[d] > 0 && c->numel > INT64_MAX / s[d])
            return sl_init_fail(ini, SL_EINVAL, "shape has more than 2^63 elements");
        c->shape[d] = s[d];
        c->numel *= s[d];
    }
    if (n != c->numel && n != 1) {
        char buf[160];
        return sl_init_fail(ini, SL_EINVAL,
                            "%d values do not fill shape %s of %lld elements: give that many "
                            "values, or one to fill it",
                            n, sl__shape_str(buf, sizeof buf, c->shape, c->ndim),
                            (long long)c->numel);
    }
    return SL_OK;
}

static sl_status constant_init(sl_op_init *ini, void **state)
{
    bool fdata = sl_init_arg_is_set(ini, A_FDATA), idata = sl_init_arg_is_set(ini, A_IDATA);
    *state = NULL;
    if (fdata && idata)
        return sl_init_fail(ini, SL_EINVAL, "fdata and idata are exclusive: give one of them");
    if (!fdata && !idata)
        return sl_init_fail(ini, SL_EINVAL, "either fdata or idata must be given");
    int n;
    const double *fv = fdata ? sl_init_arg_floats(ini, A_FDATA, &n) : NULL;
    const int64_t *iv = fdata ? NULL : sl_init_arg_ints(ini, A_IDATA, &n);
    constant head = {.dtype = fdata ? SL_DTYPE_FLOAT32 : SL_DTYPE_INT32};
    if (sl_init_arg_is_set(ini, A_DTYPE))
        head.dtype = sl_init_arg_dtype(ini, A_DTYPE);
    head.esize = sl_dtype_size(head.dtype);
    sl_status st = read_shape(ini, n, &head);
    if (st != SL_OK)
        return st;
    const char *layout = sl_init_arg_str(ini, A_LAYOUT);
    if (layout[0] && strlen(layout) != (size_t)head.ndim)
        return sl_init_fail(ini, SL_EINVAL,
                            "layout \"%s\" has %d letters, but the constant has %d dimensions",
                            layout, (int)strlen(layout), head.ndim);
    snprintf(head.layout, sizeof head.layout, "%s", layout);
    head.nvals = n;
    size_t bytes = (size_t)n * head.esize;
    constant *c = sl__malloc(sizeof *c + bytes);
    if (!c)
        return sl_init_fail(ini, SL_ENOMEM, "out of memory for %d values", n);
    *c = head;
    sl__convert_fn cv = sl__convert_get(c->dtype, fdata ? SL_DTYPE_FLOAT64 : SL_DTYPE_INT64);
    cv(c->data, fdata ? (const void *)fv : (const void *)iv, n);
    *state = c;
    return SL_OK;
}

static void constant_fini(void *state)
{
    sl__free(state);
}

static sl_status constant_setup(sl_ctx *ctx)
{
    const constant *c = sl_ctx_state(ctx);
    sl_ctx_set_output(ctx, 0, c->dtype, c->ndim, c->layout[0] ? c->layout : NULL);
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        sl_ctx_set_shape(ctx, 0, i, c->shape);
    return SL_OK;
}

static sl_status constant_run_sample(sl_ctx *ctx, int i)
{
    const constant *c = sl_ctx_state(ctx);
    unsigned char *out = sl_ctx_output_data(ctx, 0, i);
    if (c->numel == 0)
        return SL_OK;
    if (c->nvals == c->numel) {
        memcpy(out, c->data, (size_t)c->numel * c->esize);
        return SL_OK;
    }
    /* one value repeated: copy it once, then double the filled part */
    size_t total = (size_t)c->numel * c->esize, done = c->esize;
    memcpy(out, c->data, c->esize);
    while (done < total) {
        size_t k = done < total - done ? done : total - done;
        memcpy(out + done, out, k);
        done += k;
    }
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* One gather per sample from the uploaded values: in C order when they fill the shape, with
 * every stride 0 when one value is repeated. */
static sl_status constant_run_gpu(sl_ctx *ctx)
{
    const constant *c = sl_ctx_state(ctx);
    const int n = sl_ctx_batch_size(ctx);
    int64_t stride[SL_MAX_NDIM], step = 1;
    for (int d = c->ndim - 1; d >= 0; d--) {
        stride[d] = c->nvals == c->numel ? step : 0;
        step *= c->shape[d];
    }
    if (c->numel == 0 || n == 0)
        return SL_OK;
    /* buffer 1: sl__gpu_gather uploads its jobs into buffer 0 */
    const void *vals = sl_ctx_gpu_upload(ctx, 1, c->data, (size_t)c->nvals * c->esize);
    sl__ggather *g = sl_ctx_scratch(ctx, sizeof(sl__ggather) * (size_t)n);
    if (!vals)
        return SL_ENOMEM; /* the upload recorded the error */
    if (!g)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    for (int i = 0; i < n; i++)
        sl__ggather_plan(&g[i], vals, sl_ctx_output_data(ctx, 0, i), c->ndim, c->shape, stride);
    return sl__gpu_gather(ctx, g, n, c->esize);
}
#endif

const sl_op_def sl_op_constant = {
    .name = "constant",
    .doc = "Produces the same tensor in every sample of every batch (DALI's constant).\n\n"
           "Give the values in `fdata` (floating point) or `idata` (integers and bools), a flat "
           "list in C order, and the sample's `shape`: the values must fill it, or be a single "
           "value that is repeated; without `shape` a sample is 1-D with one element per value. "
           "`dtype` is the output type (float32 for fdata and int32 for idata when unset); each "
           "value is converted to it as `cast` converts (rounded to nearest, halves away from "
           "zero, and saturated for integer types). `layout` names the dimensions.\n\n"
           "Python makes these nodes for you: `types.Constant(value, dtype=None, shape=None, "
           "layout=None, device=None)` with a NumPy array, a list or a number, and a constant "
           "given where a DataNode is expected (an operator's input, an operand of arithmetic "
           "with an array or a list, a pipeline output).\n\n"
           "Differs from DALI: the values keep double precision (fdata) and 64 bits (idata), so "
           "`dtype=float64` or `int64` constants are exact; DALI stores them as float32 and "
           "int32. Every sample is its own copy (DALI lends one buffer to all).\n\n"
           "`device=\"gpu\"` makes the samples on the GPU (the values are uploaded each "
           "iteration and copied into every sample by one kernel).",
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .init = constant_init,
    .fini = constant_fini,
    .setup = constant_setup,
    .run_sample = constant_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = constant_run_gpu,
#endif
};
