/* reshape: gives each sample a new shape (and/or layout) with the same elements in the same
 * order (DALI's fn.reshape).
 *
 * Exports: const sl_op_def sl_op_reshape ("reshape", CPU and GPU).
 *
 * The new shape is `shape` (extents; one may be negative: it receives what makes the volume
 * match) or `rel_shape` (out[d] = round(rel[d] * in[d]) in float32, halves away from zero, for
 * d below the input's dimensionality; one may be negative, inferred the same way). The total
 * number of elements must stay the same, else the sample fails naming both sizes. `layout`
 * sets the output layout (one letter per output dimension, or "" for none); unset, the input
 * layout is kept when the dimensionality is unchanged and dropped otherwise.
 * Invariant: the data is copied unchanged (sluice outputs own their storage; DALI shares the
 * input buffer instead).
 */
#include <math.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/tensor_gpu.h"

#include "ops/tensor/tensor.h"

enum { A_SHAPE, A_REL_SHAPE, A_LAYOUT, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_SHAPE] = {.name = "shape",
                 .type = SL_ARG_INTS,
                 .doc = "New shape; one extent may be -1 (inferred from the volume). Exclusive "
                        "with rel_shape.",
                 .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR,
                 .min_len = 1,
                 .max_len = SL_MAX_NDIM},
    [A_REL_SHAPE] = {.name = "rel_shape",
                     .type = SL_ARG_FLOATS,
                     .doc = "New shape relative to the input: out[d] = round(rel_shape[d] * "
                            "in[d]); one value may be -1 (inferred). At most as many values as "
                            "input dimensions.",
                     .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR,
                     .min_len = 1,
                     .max_len = SL_MAX_NDIM},
    [A_LAYOUT] = {.name = "layout",
                  .type = SL_ARG_STRING,
                  .doc = "Output layout, one letter per output dimension (\"\": none). Unset: "
                         "the input layout when the number of dimensions is unchanged.",
                  .flags = SL_ARG_OPTIONAL},
};

static const sl_io_def inputs[] = {{"input", "Data of any type, shape and layout."}};
static const sl_io_def outputs[] = {{"output", "The same elements with the new shape."}};

/* Checks a constant shape or rel_shape: non-zero values, at most one negative. */
static sl_status check_const(sl_op_init *ini, int arg)
{
    int n, negative = 0;
    const double *f = NULL;
    const int64_t *v = NULL;
    if (arg == A_SHAPE)
        v = sl_init_arg_ints(ini, arg, &n);
    else
        f = sl_init_arg_floats(ini, arg, &n);
    for (int d = 0; d < n; d++) {
        double x = v ? (double)v[d] : f[d];
        if (x == 0)
            return sl_init_fail(ini, SL_EINVAL, "Extent of 0 is illegal; %s[%d] is 0",
                                args[arg].name, d);
        if (x < 0 && ++negative > 1)
            return sl_init_fail(ini, SL_EINVAL, "Only one negative extent is allowed; %s has more",
                                args[arg].name);
    }
    return SL_OK;
}

static sl_status reshape_init(sl_op_init *ini, void **state)
{
    bool shape = sl_init_arg_is_set(ini, A_SHAPE), rel = sl_init_arg_is_set(ini, A_REL_SHAPE);
    *state = NULL;
    if (shape && rel)
        return sl_init_fail(ini, SL_EINVAL, "shape and rel_shape are exclusive: give one of them");
    if (!shape && !rel && !sl_init_arg_is_set(ini, A_LAYOUT))
        return sl_init_fail(ini, SL_EINVAL,
                            "reshape is no-op: arguments specify neither new shape nor layout");
    if (shape && !sl_init_arg_is_input(ini, A_SHAPE))
        return check_const(ini, A_SHAPE);
    if (rel && !sl_init_arg_is_input(ini, A_REL_SHAPE))
        return check_const(ini, A_REL_SHAPE);
    return SL_OK;
}

/* Number of output dimensions: the length of sample 0's shape / rel_shape, else the input's. */
static int out_ndim(const sl_ctx *ctx, int in_ndim)
{
    if (sl_ctx_arg_is_set(ctx, A_SHAPE))
        return sl_ctx_arg_ints(ctx, A_SHAPE, 0, NULL, 0);
    if (sl_ctx_arg_is_set(ctx, A_REL_SHAPE))
        return sl_ctx_arg_floats(ctx, A_REL_SHAPE, 0, NULL, 0);
    return in_ndim;
}

/* Fills out[0..n) for sample i before inference: extents, -1 where inferred. */
static sl_status requested(sl_ctx *ctx, int i, const int64_t *in, int in_ndim, int n, int64_t *out)
{
    if (sl_ctx_arg_is_set(ctx, A_SHAPE)) {
        if (sl_ctx_arg_ints(ctx, A_SHAPE, i, out, n) != n)
            return sl_fail(ctx, SL_EINVAL,
                           "All samples must have the same number of dimensions: "
                           "shape of sample 0 has %d values",
                           n);
        for (int d = 0; d < n; d++)
            out[d] = out[d] < 0 ? -1 : out[d];
    } else if (sl_ctx_arg_is_set(ctx, A_REL_SHAPE)) {
        double rel[SL_MAX_NDIM];
        if (sl_ctx_arg_floats(ctx, A_REL_SHAPE, i, rel, n) != n)
            return sl_fail(ctx, SL_EINVAL,
                           "All samples must have the same number of dimensions: "
                           "rel_shape of sample 0 has %d values",
                           n);
        if (n > in_ndim)
            return sl_fail(ctx, SL_EINVAL,
                           "rel_shape has more elements (%d) than there are dimensions in the "
                           "input (%d)",
                           n, in_ndim);
        for (int d = 0; d < n; d++)
            out[d] = rel[d] < 0 ? -1 : (int64_t)roundf((float)rel[d] * (float)in[d]);
    } else {
        memcpy(out, in, sizeof(int64_t) * (size_t)n);
    }
    return SL_OK;
}

static sl_status sample_shape(sl_ctx *ctx, int i, const sl_batch *in, int n, int64_t *out)
{
    const int64_t *s = sl_batch_shape(in, i);
    int64_t volume = sl_batch_sample_numel(in, i), other = 1;
    char a[96], b[96];
    int wild = -1;
    sl_status st = requested(ctx, i, s, sl_batch_ndim(in), n, out);
    if (st != SL_OK)
        return st;
    for (int d = 0; d < n; d++) {
        if (out[d] >= 0) {
            other *= out[d];
        } else if (wild >= 0) {
            return sl_fail(ctx, SL_EINVAL, "Only one dimension can have negative extent");
        } else {
            wild = d;
        }
    }
    if (wild >= 0) {
        if (other == 0)
            return sl_fail(ctx, SL_EINVAL,
                           "Cannot infer the extent of dimension %d when the volume of remaining "
                           "dimensions is 0. Input shape: %s",
                           wild, sl__shape_str(a, sizeof a, s, sl_batch_ndim(in)));
        out[wild] = volume / other;
        other *= out[wild];
    }
    if (other != volume)
        return sl_fail(ctx, SL_EINVAL,
                       "The volume of the new shape should match the one of the original shape. "
                       "Requested a shape with %lld elements %s but the original shape %s has "
                       "%lld elements.",
                       (long long)other, sl__shape_str(a, sizeof a, out, n),
                       sl__shape_str(b, sizeof b, s, sl_batch_ndim(in)), (long long)volume);
    return SL_OK;
}

static sl_status reshape_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = out_ndim(ctx, sl_batch_ndim(in));
    const char *layout = n == sl_batch_ndim(in) ? sl_batch_layout(in) : "";
    if (sl_ctx_arg_is_set(ctx, A_LAYOUT)) {
        layout = sl_ctx_arg_str(ctx, A_LAYOUT);
        if (layout[0] && (int)strlen(layout) != n)
            return sl_fail(ctx, SL_EINVAL,
                           "layout \"%s\" has %d letters but the output has %d dimensions", layout,
                           (int)strlen(layout), n);
    }
    sl_ctx_set_output(ctx, 0, sl_batch_dtype(in), n, layout);
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++) {
        int64_t shape[SL_MAX_NDIM];
        sl_status st = sample_shape(ctx, i, in, n, shape);
        if (st != SL_OK)
            return st;
        sl_ctx_set_shape(ctx, 0, i, shape);
    }
    return SL_OK;
}

static sl_status reshape_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    size_t bytes = (size_t)sl_batch_sample_numel(in, i) * sl_dtype_size(sl_batch_dtype(in));
    if (bytes)
        memcpy(sl_ctx_output_data(ctx, 0, i), sl_batch_sample_data(in, i), bytes);
    return SL_OK;
}

const sl_op_def sl_op_reshape = {
    .name = "reshape",
    .doc = "Gives each sample a new shape and/or layout, keeping its elements in order (DALI's "
           "reshape).\n\n"
           "`shape` lists the new extents (one may be -1: inferred from the number of "
           "elements); `rel_shape` gives them relative to the input's (out[d] = round(rel[d] * "
           "in[d])). Both accept per-sample argument inputs. The number of elements must not "
           "change. `layout` names the output axes; unset, the input layout is kept when the "
           "number of dimensions is unchanged.\n\n"
           "Differs from DALI: the data is copied (DALI shares the input buffer); the shape "
           "input and `src_dims` are not supported.\n\n"
           "`device=\"gpu\"` copies the data on the GPU (one device-to-device copy per batch).",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .init = reshape_init,
    .setup = reshape_setup,
    .run_sample = reshape_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = sl__copy_run_gpu,
#endif
};
