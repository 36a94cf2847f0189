/* transpose: permutes the dimensions of each sample (DALI's fn.transpose).
 *
 * Exports: const sl_op_def sl_op_transpose ("transpose", CPU and GPU).
 *
 * Output dimension d is input dimension perm[d]: out_shape[d] = in_shape[perm[d]], and the
 * element at out index k is the input element at the index with k[d] on axis perm[d]; without
 * perm the axes are reversed (DALI). The output layout is `output_layout` when given, else the
 * input layout permuted the same way (transpose_layout, the default) or, with
 * transpose_layout false, the input layout unchanged (DALI's rule). The copy is a strided gather
 * (copy_kernels.c); the image case HWC -> CHW (perm [2, 0, 1]) is one deinterleaving pass over the
 * pixels. On the GPU every perm is the same gather, one kernel for the batch (copy_kernels.cu).
 * Invariant: a given perm is checked once at build (a permutation of 0..n-1) and its length
 * against the input at setup; run only copies.
 */
#include <stdio.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/tensor.h"
#include "ops/tensor/tensor_gpu.h"

enum { A_PERM, A_TRANSPOSE_LAYOUT, A_OUTPUT_LAYOUT, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_PERM] = {.name = "perm",
                .type = SL_ARG_INTS,
                .doc = "Output dimension d is input dimension perm[d]; a permutation of "
                       "0..ndim-1 (e.g. [2, 0, 1] turns HWC into CHW). Not given: the "
                       "dimensions are reversed (perm = [ndim-1, ..., 0], as DALI).",
                .flags = SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK,
                .max_len = SL_MAX_NDIM},
    [A_TRANSPOSE_LAYOUT] = {.name = "transpose_layout",
                            .type = SL_ARG_BOOL,
                            .def = "true",
                            .doc = "Permute the layout letters with the data (HWC -> CHW); "
                                   "false: the input layout is kept as it is (DALI)."},
    [A_OUTPUT_LAYOUT] = {.name = "output_layout",
                         .type = SL_ARG_STRING,
                         .doc = "Output layout, set explicitly (one letter per dimension); "
                                "overrides transpose_layout.",
                         .flags = SL_ARG_OPTIONAL},
};

static const sl_io_def inputs[] = {
    {"input", "Data of any type (len(perm) dimensions when perm is given)."}};
static const sl_io_def outputs[] = {{"output", "The transposed data."}};

/* The permutation for samples of ndim dimensions into perm: `perm` when given, else the axes
 * reversed. Returns its length. */
static int get_perm(const sl_ctx *ctx, int ndim, int64_t *perm)
{
    if (sl_ctx_arg_is_set(ctx, A_PERM))
        return sl_ctx_arg_ints(ctx, A_PERM, 0, perm, SL_MAX_NDIM);
    for (int d = 0; d < ndim; d++)
        perm[d] = ndim - 1 - d;
    return ndim;
}

static sl_status transpose_init(sl_op_init *ini, void **state)
{
    int n = 0;
    const int64_t *perm =
        sl_init_arg_is_set(ini, A_PERM) ? sl_init_arg_ints(ini, A_PERM, &n) : NULL;
    bool seen[SL_MAX_NDIM] = {false};
    *state = NULL;
    for (int d = 0; d < n; d++) {
        if (perm[d] < 0 || perm[d] >= n || seen[perm[d]])
            return sl_init_fail(ini, SL_EINVAL,
                                "perm must be a permutation of 0..%d: value %lld at position %d "
                                "is %s",
                                n - 1, (long long)perm[d], d,
                                perm[d] < 0 || perm[d] >= n ? "out of range" : "repeated");
        seen[perm[d]] = true;
    }
    if (perm && sl_init_arg_is_set(ini, A_OUTPUT_LAYOUT)) {
        size_t len = strlen(sl_init_arg_str(ini, A_OUTPUT_LAYOUT));
        if (len != 0 && len != (size_t)n)
            return sl_init_fail(ini, SL_EINVAL,
                                "output_layout \"%s\" has %zu letters; expected %d (one per "
                                "dimension) or none",
                                sl_init_arg_str(ini, A_OUTPUT_LAYOUT), len, n);
    }
    return SL_OK;
}

static sl_status transpose_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    int64_t perm[SL_MAX_NDIM];
    int n = get_perm(ctx, sl_batch_ndim(in), perm);
    if (n != sl_batch_ndim(in))
        return sl_fail(ctx, SL_EINVAL, "perm has %d values but the input has %d dimensions", n,
                       sl_batch_ndim(in));
    char layout[SL_MAX_NDIM + 1] = "";
    const char *in_layout = sl_batch_layout(in);
    if (sl_ctx_arg_is_set(ctx, A_OUTPUT_LAYOUT)) {
        const char *want = sl_ctx_arg_str(ctx, A_OUTPUT_LAYOUT);
        if (want[0] && (int)strlen(want) != n) /* checked at init when perm is given */
            return sl_fail(ctx, SL_EINVAL,
                           "output_layout \"%s\" has %zu letters; expected %d (one per "
                           "dimension) or none",
                           want, strlen(want), n);
        snprintf(layout, sizeof layout, "%s", want);
    } else if (!sl_ctx_arg_bool(ctx, A_TRANSPOSE_LAYOUT, 0)) {
        snprintf(layout, sizeof layout, "%s", in_layout);
    } else if ((int)strlen(in_layout) == n) {
        for (int d = 0; d < n; d++)
            layout[d] = in_layout[perm[d]];
        layout[n] = '\0';
    }
    sl_ctx_set_output(ctx, 0, sl_batch_dtype(in), n, layout);
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++) {
        const int64_t *s = sl_batch_shape(in, i);
        int64_t shape[SL_MAX_NDIM];
        for (int d = 0; d < n; d++)
            shape[d] = s[perm[d]];
        sl_ctx_set_shape(ctx, 0, i, shape);
    }
    return SL_OK;
}

/* Sample i's gather: output shape and the input strides (elements) of the output axes.
 * Returns the number of dimensions; perm receives the permutation. */
static int transpose_strides(const sl_ctx *ctx, int i, int64_t *perm, int64_t *shape,
                             int64_t *stride)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t *s = sl_batch_shape(in, i);
    int64_t in_stride[SL_MAX_NDIM];
    int n = get_perm(ctx, sl_batch_ndim(in), perm);
    int64_t acc = 1;
    for (int d = n - 1; d >= 0; d--) {
        in_stride[d] = acc;
        acc *= s[d];
    }
    for (int d = 0; d < n; d++) {
        shape[d] = s[perm[d]];
        stride[d] = in_stride[perm[d]];
    }
    return n;
}

static sl_status transpose_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t *s = sl_batch_shape(in, i);
    const size_t es = sl_dtype_size(sl_batch_dtype(in));
    int64_t perm[SL_MAX_NDIM], stride[SL_MAX_NDIM], shape[SL_MAX_NDIM];
    int n = transpose_strides(ctx, i, perm, shape, stride);
    const void *src = sl_batch_sample_data(in, i);
    void *dst = sl_ctx_output_data(ctx, 0, i);

    if (n == 3 && perm[0] == 2 && perm[1] == 0 && perm[2] == 1) { /* HWC -> CHW */
        sl__deinterleave(dst, src, es, s[0] * s[1], s[2]);
        return SL_OK;
    }
    sl__gather(dst, src, es, n, shape, stride);
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
static sl_status transpose_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nb = sl_ctx_batch_size(ctx);
    sl__ggather *g = sl_ctx_scratch(ctx, sizeof(sl__ggather) * (size_t)(nb > 0 ? nb : 1));
    if (!g)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", nb);
    for (int i = 0; i < nb; i++) {
        int64_t perm[SL_MAX_NDIM], stride[SL_MAX_NDIM], shape[SL_MAX_NDIM];
        int n = transpose_strides(ctx, i, perm, shape, stride);
        sl__ggather_plan(&g[i], sl_batch_sample_data(in, i), sl_ctx_output_data(ctx, 0, i), n,
                         shape, stride);
    }
    return sl__gpu_gather(ctx, g, nb, sl_dtype_size(sl_batch_dtype(in)));
}
#endif

const sl_op_def sl_op_transpose = {
    .name = "transpose",
    .doc = "Permutes the dimensions of each sample (DALI's transpose).\n\n"
           "Output dimension d is input dimension perm[d], so perm = [2, 0, 1] turns HWC images "
           "into CHW; without perm the dimensions are reversed. The layout is permuted with the "
           "data (transpose_layout, default), kept as it is (transpose_layout=False) or set "
           "with output_layout. Any element type and number of dimensions (up to 8); HWC -> "
           "CHW takes a single deinterleaving pass. `device=\"gpu\"` transposes on the GPU (one "
           "kernel per batch) with the same results.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE | SL_OP_DETERMINISTIC,
    .init = transpose_init,
    .setup = transpose_setup,
    .run_sample = transpose_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = transpose_run_gpu,
#endif
};
