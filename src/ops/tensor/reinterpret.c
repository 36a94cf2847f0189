/* reinterpret: gives each sample's bytes another element type, shape and/or layout (DALI's
 * fn.reinterpret).
 *
 * Exports: const sl_op_def sl_op_reinterpret ("reinterpret", CPU and GPU).
 *
 * The bytes are unchanged; their count must match. `dtype` (default: the input's) is the new
 * element type. The shape is `shape` (one extent may be -1: inferred from the byte count), or
 * `rel_shape` (out[d] = round(rel_shape[d] * in[d]); one may be -1); with neither, the input
 * shape with its innermost extent rescaled by the change of element size (an error naming the
 * sample when its bytes are not divisible). `layout` sets the output layout (""
 * none); unset, the input's is kept when the number of dimensions is unchanged.
 * Invariant: the data is copied unchanged (sluice outputs own their storage; DALI shares the
 * input buffer).
 */
#include <math.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/tensor_gpu.h"

enum { A_DTYPE, A_SHAPE, A_REL_SHAPE, A_LAYOUT, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .doc = "Output element type; the sample's byte count must fit it. Unset: the "
                        "input's.",
                 .flags = SL_ARG_OPTIONAL},
    [A_SHAPE] = {.name = "shape",
                 .type = SL_ARG_INTS,
                 .doc = "Output shape; one extent may be -1 (inferred from the byte count). "
                        "Exclusive with rel_shape.",
                 .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR,
                 .min_len = 1,
                 .max_len = SL_MAX_NDIM},
    [A_REL_SHAPE] = {.name = "rel_shape",
                     .type = SL_ARG_FLOATS,
                     .doc = "Output shape relative to the input's: round(rel_shape[d] * in[d]); "
                            "one value may be -1 (inferred).",
                     .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR,
                     .min_len = 1,
                     .max_len = SL_MAX_NDIM},
    [A_LAYOUT] = {.name = "layout",
                  .type = SL_ARG_STRING,
                  .doc = "Output layout (\"\": none). Unset: the input's when the number of "
                         "dimensions is unchanged.",
                  .flags = SL_ARG_OPTIONAL},
};

static const sl_io_def inputs[] = {{"data", "Data of any type, shape and layout."}};
static const sl_io_def outputs[] = {{"output", "The same bytes, retyped and reshaped."}};

static sl_status reinterpret_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    if (sl_init_arg_is_set(ini, A_SHAPE) && sl_init_arg_is_set(ini, A_REL_SHAPE))
        return sl_init_fail(ini, SL_EINVAL, "shape and rel_shape are exclusive: give one");
    return SL_OK;
}

static sl_dtype out_dtype(const sl_ctx *ctx)
{
    return sl_ctx_arg_is_set(ctx, A_DTYPE) ? sl_ctx_arg_dtype(ctx, A_DTYPE)
                                           : sl_batch_dtype(sl_ctx_input(ctx, 0));
}

/* Output dimensionality: that of shape / rel_shape (sample 0), else the input's. */
static int out_ndim(sl_ctx *ctx, int nd)
{
    if (sl_ctx_arg_is_set(ctx, A_SHAPE))
        return sl_ctx_arg_ints(ctx, A_SHAPE, 0, NULL, 0);
    if (sl_ctx_arg_is_set(ctx, A_REL_SHAPE))
        return sl_ctx_arg_floats(ctx, A_REL_SHAPE, 0, NULL, 0);
    return nd;
}

/* The shape of sample i into os (ond extents). */
static sl_status sample_shape(sl_ctx *ctx, int i, int ond, int64_t *os)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in);
    const int64_t *sh = sl_batch_shape(in, i);
    const size_t bytes = (size_t)sl_batch_sample_numel(in, i) * sl_dtype_size(sl_batch_dtype(in));
    const size_t osz = sl_dtype_size(out_dtype(ctx));
    int infer = -1;
    if (sl_ctx_arg_is_set(ctx, A_SHAPE) || sl_ctx_arg_is_set(ctx, A_REL_SHAPE)) {
        const bool rel = !sl_ctx_arg_is_set(ctx, A_SHAPE);
        double v[SL_MAX_NDIM];
        int64_t iv[SL_MAX_NDIM];
        int n = rel ? sl_ctx_arg_floats(ctx, A_REL_SHAPE, i, v, SL_MAX_NDIM)
                    : sl_ctx_arg_ints(ctx, A_SHAPE, i, iv, SL_MAX_NDIM);
        if (n != ond)
            return sl_fail(ctx, SL_EINVAL, "sample %d: the shape has %d extents, sample 0's %d", i,
                           n, ond);
        if (rel && n > nd)
            return sl_fail(ctx, SL_EINVAL, "rel_shape has %d values for %d-D input", n, nd);
        for (int d = 0; d < n; d++) {
            double x = rel ? v[d] : (double)iv[d];
            if (x < 0) {
                if (infer >= 0)
                    return sl_fail(ctx, SL_EINVAL, "only one extent may be negative (inferred)");
                infer = d;
                os[d] = 1;
            } else {
                os[d] = rel ? (int64_t)roundf((float)x * (float)sh[d]) : iv[d];
            }
        }
    } else {
        memcpy(os, sh, sizeof(int64_t) * (size_t)nd);
        if (nd == 0 && bytes != osz)
            return sl_fail(ctx, SL_EINVAL,
                           "sample %d: a scalar of %zu bytes cannot be one element of %zu bytes", i,
                           bytes, osz);
        if (nd > 0) {
            size_t inner = (size_t)sh[nd - 1] * sl_dtype_size(sl_batch_dtype(in));
            if (inner % osz)
                return sl_fail(ctx, SL_EINVAL,
                               "sample %d: the innermost extent holds %zu bytes, not a multiple "
                               "of the %zu-byte %s",
                               i, inner, osz, sl_dtype_name(out_dtype(ctx)));
            os[nd - 1] = (int64_t)(inner / osz);
        }
        return SL_OK;
    }
    int64_t vol = 1;
    for (int d = 0; d < ond; d++)
        vol *= os[d];
    if (infer >= 0) {
        if (vol == 0 || bytes % ((size_t)vol * osz))
            return sl_fail(
                ctx, SL_EINVAL,
                "sample %d: %zu bytes cannot be split into the given extents of %zu-byte "
                "elements",
                i, bytes, osz);
        os[infer] = (int64_t)(bytes / ((size_t)vol * osz));
    } else if ((size_t)vol * osz != bytes) {
        return sl_fail(ctx, SL_EINVAL,
                       "sample %d: the input has %zu bytes, the requested shape and type %zu", i,
                       bytes, (size_t)vol * osz);
    }
    return SL_OK;
}

static sl_status reinterpret_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in), ond = out_ndim(ctx, nd);
    const char *layout = sl_ctx_arg_is_set(ctx, A_LAYOUT) ? sl_ctx_arg_str(ctx, A_LAYOUT)
                         : ond == nd                      ? sl_batch_layout(in)
                                                          : NULL;
    if (sl_ctx_arg_is_set(ctx, A_LAYOUT) && *layout && (int)strlen(layout) != ond)
        return sl_fail(ctx, SL_EINVAL, "layout \"%s\" has %d letters; the output has %d dimensions",
                       layout, (int)strlen(layout), ond);
    sl_ctx_set_output(ctx, 0, out_dtype(ctx), ond, layout);
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++) {
        int64_t os[SL_MAX_NDIM];
        sl_status s = sample_shape(ctx, i, ond, os);
        if (s != SL_OK)
            return s;
        sl_ctx_set_shape(ctx, 0, i, os);
    }
    return SL_OK;
}

static sl_status reinterpret_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    size_t bytes = (size_t)sl_batch_sample_numel(in, i) * sl_dtype_size(sl_batch_dtype(in));
    if (bytes)
        memcpy(sl_ctx_output_data(ctx, 0, i), sl_batch_sample_data(in, i), bytes);
    return SL_OK;
}

const sl_op_def sl_op_reinterpret = {
    .name = "reinterpret",
    .doc = "Treats each sample's bytes as another type, shape and/or layout (DALI's "
           "reinterpret).\n\n"
           "`dtype` retypes the bytes; `shape` (one extent may be -1) or `rel_shape` reshapes; "
           "with neither, the innermost extent is rescaled by the change of element size. The "
           "byte count must match, else the sample fails with both sizes.\n\n"
           "Differs from DALI: the data is copied (DALI passes the input buffer through); "
           "src_dims and the shape input are not supported.\n\n"
           "`device=\"gpu\"` copies the data on the GPU (one device-to-device copy per batch).",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = reinterpret_init,
    .setup = reinterpret_setup,
    .run_sample = reinterpret_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = sl__copy_run_gpu,
#endif
};
