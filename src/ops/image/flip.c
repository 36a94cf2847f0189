/* flip: reverses images along W (horizontal), H (vertical) and D (depthwise) (DALI's fn.flip).
 *
 * Exports: const sl_op_def sl_op_flip ("flip", CPU and GPU).
 *
 * The axes are found by letter in the input layout (HWC, CHW, FHWC, DHWC, FCHW, CDHW, ...; any
 * layout with H and W); an input without a layout is taken as HW (2-D), HWC (3-D) or DHWC
 * (4-D). Per sample, `horizontal`, `vertical`, `depthwise` (0 / non-zero, argument inputs
 * allowed) choose the axes; `depthwise` on a layout without D does nothing. The copy is a
 * strided gather (copy_kernels.c) with negative strides on the flipped axes, so any dtype
 * works and zero-extent samples give empty outputs. On the GPU the same gather runs as one
 * kernel for the batch (copy_kernels.cu), its strides computed on the host.
 * Invariant: output shape, dtype and layout equal the input's.
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/tensor.h"
#include "ops/tensor/tensor_gpu.h"

enum { A_HORIZONTAL, A_VERTICAL, A_DEPTHWISE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_HORIZONTAL] = {.name = "horizontal",
                      .type = SL_ARG_INT,
                      .def = "1",
                      .doc = "Non-zero: flip along W (left <-> right). Default on, as in DALI.",
                      .flags = SL_ARG_TENSOR},
    [A_VERTICAL] = {.name = "vertical",
                    .type = SL_ARG_INT,
                    .def = "0",
                    .doc = "Non-zero: flip along H (top <-> bottom).",
                    .flags = SL_ARG_TENSOR},
    [A_DEPTHWISE] = {.name = "depthwise",
                     .type = SL_ARG_INT,
                     .def = "0",
                     .doc = "Non-zero: flip along D (volumes); ignored without a D axis.",
                     .flags = SL_ARG_TENSOR},
};

static const sl_io_def inputs[] = {
    {"input", "Images or volumes of any type, with H and W in the layout (HWC if unset)."},
};
static const sl_io_def outputs[] = {{"output", "The flipped samples, same shape and layout."}};

/* The layout used to find axes: the input's, or the default for its dimensionality. */
static const char *axes_layout(const sl_batch *in)
{
    const char *l = sl_batch_layout(in);
    if (l[0])
        return l;
    switch (sl_batch_ndim(in)) {
    case 2: return "HW";
    case 3: return "HWC";
    case 4: return "DHWC";
    default: return "";
    }
}

static sl_status flip_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const char *l = axes_layout(in);
    if (sl__layout_find(l, 'H') < 0 || sl__layout_find(l, 'W') < 0 ||
        (int)strlen(l) != sl_batch_ndim(in))
        return sl_fail(ctx, SL_EINVAL,
                       "The layout \"%s\" does not match any of the allowed layouts: flip needs "
                       "H and W axes (HWC, CHW, FHWC, DHWC, ...) and %d-D input has none by "
                       "default",
                       sl_batch_layout(in), sl_batch_ndim(in));
    sl_ctx_set_output(ctx, 0, sl_batch_dtype(in), sl_batch_ndim(in), sl_batch_layout(in));
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(in, i));
    return SL_OK;
}

/* Sample i's gather: input strides (elements, negative on flipped axes) and the offset of the
 * input element the output starts from. Returns the number of elements. */
static int64_t flip_strides(const sl_ctx *ctx, int i, int64_t *stride, int64_t *offset)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const char *l = axes_layout(in);
    const int ndim = sl_batch_ndim(in);
    const int64_t *shape = sl_batch_shape(in, i);
    bool flip[SL_MAX_NDIM] = {false};
    int w = sl__layout_find(l, 'W'), h = sl__layout_find(l, 'H'), d = sl__layout_find(l, 'D');
    flip[w] = sl_ctx_arg_int(ctx, A_HORIZONTAL, i) != 0;
    flip[h] = sl_ctx_arg_int(ctx, A_VERTICAL, i) != 0;
    if (d >= 0)
        flip[d] = sl_ctx_arg_int(ctx, A_DEPTHWISE, i) != 0;

    int64_t s = 1;
    *offset = 0;
    for (int k = ndim - 1; k >= 0; k--) {
        stride[k] = flip[k] ? -s : s;
        if (flip[k] && shape[k] > 0)
            *offset += (shape[k] - 1) * s;
        s *= shape[k];
    }
    return s;
}

static sl_status flip_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const size_t es = sl_dtype_size(sl_batch_dtype(in));
    int64_t stride[SL_MAX_NDIM], offset;
    if (flip_strides(ctx, i, stride, &offset) == 0)
        return SL_OK;
    const unsigned char *src = sl_batch_sample_data(in, i);
    sl__gather(sl_ctx_output_data(ctx, 0, i), src + (size_t)offset * es, es, sl_batch_ndim(in),
               sl_batch_shape(in, i), stride);
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
static sl_status flip_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx);
    const size_t es = sl_dtype_size(sl_batch_dtype(in));
    sl__ggather *g = sl_ctx_scratch(ctx, sizeof(sl__ggather) * (size_t)(n > 0 ? n : 1));
    if (!g)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    for (int i = 0; i < n; i++) {
        int64_t stride[SL_MAX_NDIM], offset;
        int64_t count = flip_strides(ctx, i, stride, &offset);
        /* a device pointer, offset here but never dereferenced (an empty sample: not moved) */
        const unsigned char *src = sl_batch_sample_data(in, i);
        sl__ggather_plan(&g[i], count ? src + (size_t)offset * es : src,
                         sl_ctx_output_data(ctx, 0, i), sl_batch_ndim(in), sl_batch_shape(in, i),
                         stride);
    }
    return sl__gpu_gather(ctx, g, n, es);
}
#endif

const sl_op_def sl_op_flip = {
    .name = "flip",
    .doc = "Flips images horizontally, vertically and/or along depth (DALI's flip).\n\n"
           "`horizontal` (default 1: on), `vertical` and `depthwise` are per-sample switches, "
           "usually fed by random.coin_flip. Axes are found by letter in the layout (any layout "
           "with H and W: HWC, CHW, FHWC, FCHW, DHWC, CDHW, ...); without a layout the input "
           "is taken as HW, HWC or DHWC by its dimensionality. Any element type; empty samples "
           "are allowed.\n\n"
           "`device=\"gpu\"` flips on the GPU (one kernel per batch) with the same results.\n\n"
           "Differs from DALI: layouts are not limited to DALI's list, only H and W are "
           "required.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE | SL_OP_DETERMINISTIC,
    .setup = flip_setup,
    .run_sample = flip_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = flip_run_gpu,
#endif
};
