/* one_hot: one-hot encodes integer class ids (DALI's fn.one_hot).
 *
 * Exports: const sl_op_def sl_op_one_hot ("one_hot", CPU and GPU).
 *
 * A new dimension of num_classes extent is inserted at `axis` (-1: last; 0..ndim): output
 * element [.., c, ..] is on_value where the input element equals c, off_value elsewhere (an
 * id outside [0, num_classes) gives a row of off_value). Scalars, and batches whose samples
 * all hold one element (shape (1,), (1, 1), ...: DALI's "scalar-like" legacy input), give
 * samples of shape (num_classes). Float ids are truncated toward zero.
 * Layout: without axis_name, none; with it (one character), the input layout with axis_name
 * inserted at axis, or axis_name alone for a scalar result; an input of several dimensions
 * without layout then fails, as in DALI.
 * On the GPU (index_kernels.cu) one thread writes each output element, on or off by its id,
 * read with the same conversion: the CPU's results bit for bit.
 * Invariant: stateless.
 */
#include <math.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/index_gpu.h"
#include "ops/tensor/tensor.h"

enum { A_NUM_CLASSES, A_AXIS, A_DTYPE, A_ON_VALUE, A_OFF_VALUE, A_AXIS_NAME, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_NUM_CLASSES] = {.name = "num_classes",
                       .type = SL_ARG_INT,
                       .def = "0",
                       .doc = "Number of classes: the extent of the new dimension.",
                       .flags = SL_ARG_RANGE,
                       .min = 0,
                       .max = 2147483647.0},
    [A_AXIS] = {.name = "axis",
                .type = SL_ARG_INT,
                .def = "-1",
                .doc = "Where the new dimension goes: 0..ndim, or -1 for last.",
                .flags = SL_ARG_RANGE,
                .min = -1,
                .max = SL_MAX_NDIM},
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .def = "\"float32\"",
                 .doc = "Output element type."},
    [A_ON_VALUE] = {.name = "on_value",
                    .type = SL_ARG_FLOAT,
                    .def = "1.0",
                    .doc = "Value of the element of the class (converted to dtype)."},
    [A_OFF_VALUE] = {.name = "off_value",
                     .type = SL_ARG_FLOAT,
                     .def = "0.0",
                     .doc = "Value of every other element (converted to dtype)."},
    [A_AXIS_NAME] = {.name = "axis_name",
                     .type = SL_ARG_STRING,
                     .doc = "Layout letter of the new dimension (one character).",
                     .flags = SL_ARG_OPTIONAL},
};

static const sl_io_def inputs[] = {{"input", "Class ids: any numeric type, any shape."}};
static const sl_io_def outputs[] = {{"output", "The one-hot encoding."}};

static sl_status one_hot_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    if (sl_init_arg_is_set(ini, A_AXIS_NAME) && strlen(sl_init_arg_str(ini, A_AXIS_NAME)) != 1)
        return sl_init_fail(ini, SL_EINVAL,
                            "Unsupported axis_name value: \"%s\"; it must be one character",
                            sl_init_arg_str(ini, A_AXIS_NAME));
    return SL_OK;
}

/* True when every sample holds one element (the batch is "scalar-like"). */
static bool scalar_like(const sl_batch *in, int n)
{
    for (int i = 0; i < n; i++)
        if (sl_batch_sample_numel(in, i) != 1)
            return false;
    return true;
}

static sl_status one_hot_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in), n = sl_ctx_batch_size(ctx);
    const int64_t nc = sl_ctx_arg_int(ctx, A_NUM_CLASSES, 0);
    const bool scalar = nd == 0 || (n > 0 && scalar_like(in, n));
    int axis = (int)sl_ctx_arg_int(ctx, A_AXIS, 0);
    if (sl_batch_dtype(in) == SL_DTYPE_BOOL)
        return sl_fail(ctx, SL_EINVAL, "class ids must be numeric, got bool");
    if (!scalar && axis > nd)
        return sl_fail(ctx, SL_EINVAL, "axis %d is out of range for %d-D input (valid: -1..%d)",
                       axis, nd, nd);
    axis = scalar ? 0 : axis < 0 ? nd : axis;
    for (int i = 0; i < n; i++) { /* run_sample reads the class axis and ndim from here */
        ((int *)sl_ctx_iter_data(ctx))[2 * i] = axis;
        ((int *)sl_ctx_iter_data(ctx))[2 * i + 1] = scalar ? 1 : nd + 1;
    }
    const int ond = scalar ? 1 : nd + 1;
    if (ond > SL_MAX_NDIM)
        return sl_fail(ctx, SL_EINVAL, "the output would have %d dimensions", ond);

    char out_layout[SL_MAX_NDIM + 1] = "";
    const char *ol = NULL;
    if (sl_ctx_arg_is_set(ctx, A_AXIS_NAME)) {
        const char name = sl_ctx_arg_str(ctx, A_AXIS_NAME)[0];
        const char *layout = sl_batch_layout(in);
        if (scalar) {
            out_layout[0] = name;
        } else {
            if (!layout || (int)strlen(layout) != nd)
                return sl_fail(ctx, SL_EINVAL,
                               "Input layout mismatch: axis_name needs a layout of %d letters; "
                               "the input's is \"%s\"",
                               nd, layout ? layout : "");
            memcpy(out_layout, layout, (size_t)axis);
            out_layout[axis] = name;
            memcpy(out_layout + axis + 1, layout + axis, (size_t)(nd - axis));
            out_layout[ond] = '\0';
        }
        ol = out_layout;
    }
    sl_ctx_set_output(ctx, 0, sl_ctx_arg_dtype(ctx, A_DTYPE), ond, ol);
    for (int i = 0; i < n; i++) {
        const int64_t *sh = sl_batch_shape(in, i);
        int64_t os[SL_MAX_NDIM];
        if (scalar) {
            os[0] = nc;
        } else {
            for (int d = 0, j = 0; d < ond; d++)
                os[d] = d == axis ? nc : sh[j++];
        }
        sl_ctx_set_shape(ctx, 0, i, os);
    }
    return SL_OK;
}

static sl_status one_hot_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int axis = ((const int *)sl_ctx_iter_data(ctx))[2 * i]; /* the output's class axis */
    const int ond = ((const int *)sl_ctx_iter_data(ctx))[2 * i + 1];
    const int64_t nc = sl_ctx_arg_int(ctx, A_NUM_CLASSES, 0);
    const sl_dtype ot = sl_ctx_arg_dtype(ctx, A_DTYPE);
    const size_t es = sl_dtype_size(ot);
    const int64_t *osh = sl_ctx_output_shape(ctx, 0, i);
    const int64_t numel = sl_batch_sample_numel(in, i);
    unsigned char on[8], off[8], *out = sl_ctx_output_data(ctx, 0, i);
    sl__convert_scalar(ot, sl_ctx_arg_float(ctx, A_ON_VALUE, i), on);
    sl__convert_scalar(ot, sl_ctx_arg_float(ctx, A_OFF_VALUE, i), off);

    /* The output is [outer, nc, inner], outer * inner = numel: inner is the product of the
     * output extents after the class axis (1 for a scalar-like batch: (nc) per sample). */
    int64_t inner = 1;
    for (int d = axis + 1; d < ond; d++)
        inner *= osh[d];
    for (int64_t e = 0; e < numel * nc; e++)
        memcpy(out + (size_t)e * es, off, es);
    double ids[512];
    sl__convert_fn load = sl__convert_get(SL_DTYPE_FLOAT64, sl_batch_dtype(in));
    const unsigned char *src = sl_batch_sample_data(in, i);
    const size_t is = sl_dtype_size(sl_batch_dtype(in));
    for (int64_t s = 0; s < numel; s += 512) {
        int64_t m = numel - s < 512 ? numel - s : 512;
        load(ids, src + (size_t)s * is, m);
        for (int64_t k = 0; k < m; k++) {
            double c = trunc(ids[k]);
            if (!(c >= 0 && c < (double)nc))
                continue;
            int64_t e = s + k, o = e / inner, r = e % inner;
            memcpy(out + (size_t)((o * nc + (int64_t)c) * inner + r) * es, on, es);
        }
    }
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
static sl_status one_hot_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx);
    const int64_t nc = sl_ctx_arg_int(ctx, A_NUM_CLASSES, 0);
    const sl_dtype ot = sl_ctx_arg_dtype(ctx, A_DTYPE);
    sl__gonehot *s = sl_ctx_scratch(ctx, sizeof(sl__gonehot) * (size_t)(n > 0 ? n : 1));
    if (!s)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    for (int i = 0; i < n; i++) {
        const int axis = ((const int *)sl_ctx_iter_data(ctx))[2 * i];
        const int ond = ((const int *)sl_ctx_iter_data(ctx))[2 * i + 1];
        const int64_t *osh = sl_ctx_output_shape(ctx, 0, i);
        s[i] = (sl__gonehot){.in = sl_batch_sample_data(in, i),
                             .out = sl_ctx_output_data(ctx, 0, i),
                             .count = sl_batch_sample_numel(in, i) * nc,
                             .inner = 1};
        for (int d = axis + 1; d < ond; d++)
            s[i].inner *= osh[d];
        sl__convert_scalar(ot, sl_ctx_arg_float(ctx, A_ON_VALUE, i), &s[i].on);
        sl__convert_scalar(ot, sl_ctx_arg_float(ctx, A_OFF_VALUE, i), &s[i].off);
    }
    return sl__gpu_one_hot(ctx, s, n, nc, sl_batch_dtype(in), ot);
}
#endif

const sl_op_def sl_op_one_hot = {
    .name = "one_hot",
    .doc = "One-hot encodes class ids (DALI's one_hot).\n\n"
           "A dimension of `num_classes` is inserted at `axis` (-1: last); the element of each "
           "id's class is on_value, the others off_value (an id outside [0, num_classes) gives "
           "only off_value). Scalars, and batches of one-element samples, give (num_classes,) "
           "per sample. `axis_name` names the new dimension in the layout; without it the output "
           "has none. Float ids are truncated.\n\n"
           "`device=\"gpu\"` encodes on the GPU with the same results.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .iter_bytes_per_sample = 2 * sizeof(int),
    .init = one_hot_init,
    .setup = one_hot_setup,
    .run_sample = one_hot_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = one_hot_run_gpu,
#endif
};
