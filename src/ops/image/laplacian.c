/* laplacian: the Laplacian (sum of second derivatives) of images, volumes and sequences
 * (DALI's fn.laplacian), with OpenCV's derivative and smoothing windows.
 *
 * Exports: const sl_op_def sl_op_laplacian ("laplacian", CPU and GPU).
 *
 * For each spatial axis i (every axis but C and F, ops/image/convolution.h) the partial
 * d2/dx_i^2 is a separable filter: the derivative window of window_size[i] along i (size 3:
 * [1, -2, 1]; larger: [1, -2, 1] convolved with the binomial smoothing window two shorter)
 * and the binomial smoothing window ((1 + 1)^(s - 1) coefficients) along every other axis j, of
 * size smoothing_size[j] (default: window_size[i]). The output is sum_i scale[i] * partial_i;
 * normalized_kernel sets scale[i] = 2^-(sum_j size[i][j] - naxes - 2). Borders reflect-101,
 * float32 arithmetic, the output converted to dtype (default: the input type) with rounding and
 * saturation — for window_size 3 that is cv2.Laplacian(ksize=3).
 * GPU (builds with CUDA): the same filters (filters()) given to convolution.cu's
 * sl__conv_run_gpu, bit-identical results.
 * Invariant: a pure function of the sample and its arguments; nothing kept between calls.
 */
#include <math.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/image/convolution.h"

enum { A_WINDOW_SIZE, A_SMOOTHING_SIZE, A_SCALE, A_NORMALIZED, A_DTYPE, NUM_ARGS };

#define MAX_WINDOW 23 /* DALI's limit: binomial weights stay exact in float32 */

static const sl_arg_def args[NUM_ARGS] = {
    [A_WINDOW_SIZE] = {.name = "window_size",
                       .type = SL_ARG_INTS,
                       .def = "[3]",
                       .doc = "Size of the derivative window (odd, 3..23): one value for every "
                              "spatial axis, or one per axis.",
                       .flags = SL_ARG_TENSOR | SL_ARG_SCALAR_OK | SL_ARG_RANGE,
                       .min = 3,
                       .max = MAX_WINDOW,
                       .min_len = 1,
                       .max_len = SL_MAX_NDIM},
    [A_SMOOTHING_SIZE] = {.name = "smoothing_size",
                          .type = SL_ARG_INTS,
                          .doc = "Size of the smoothing window along each axis (odd, 1..23), "
                                 "one value or one per axis; unset: the partial's window_size.",
                          .flags =
                              SL_ARG_OPTIONAL | SL_ARG_TENSOR | SL_ARG_SCALAR_OK | SL_ARG_RANGE,
                          .min = 1,
                          .max = MAX_WINDOW,
                          .min_len = 1,
                          .max_len = SL_MAX_NDIM},
    [A_SCALE] = {.name = "scale",
                 .type = SL_ARG_FLOATS,
                 .def = "[1.0]",
                 .doc = "Factor of each partial derivative: one value or one per axis. "
                        "Exclusive with normalized_kernel.",
                 .flags = SL_ARG_TENSOR | SL_ARG_SCALAR_OK,
                 .min_len = 1,
                 .max_len = SL_MAX_NDIM},
    [A_NORMALIZED] = {.name = "normalized_kernel",
                      .type = SL_ARG_BOOL,
                      .def = "false",
                      .doc = "Scale each partial by 2^-(sum of its window sizes - axes - 2)."},
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .doc = "Output type; unset: the input type (integers rounded and saturated, "
                        "negative values of unsigned types become 0).",
                 .flags = SL_ARG_OPTIONAL},
};

static const sl_io_def inputs[] = {
    {"input", "Images (HWC, CHW, ...), volumes or sequences of any numeric type."}};
static const sl_io_def outputs[] = {{"output", "The Laplacian, in the input layout."}};

static sl_status lap_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    if (sl_init_arg_bool(ini, A_NORMALIZED) && sl_init_arg_is_set(ini, A_SCALE))
        return sl_init_fail(ini, SL_EINVAL,
                            "Parameter ``scale`` cannot be specified when ``normalized_kernel`` "
                            "is set to True");
    if (sl_init_arg_is_set(ini, A_DTYPE) && sl_init_arg_dtype(ini, A_DTYPE) == SL_DTYPE_BOOL)
        return sl_init_fail(ini, SL_EINVAL, "dtype bool is not supported");
    return SL_OK;
}

static sl_dtype out_type(const sl_ctx *ctx)
{
    return sl_ctx_arg_is_set(ctx, A_DTYPE) ? sl_ctx_arg_dtype(ctx, A_DTYPE)
                                           : sl_batch_dtype(sl_ctx_input(ctx, 0));
}

static sl_status lap_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    if (sl_batch_dtype(in) == SL_DTYPE_BOOL)
        return sl_fail(ctx, SL_EINVAL, "bool input is not supported");
    sl_ctx_set_output(ctx, 0, out_type(ctx), sl_batch_ndim(in), sl_batch_layout(in));
    return SL_OK;
}

static sl_status lap_setup_sample(sl_ctx *ctx, int i)
{
    sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(sl_ctx_input(ctx, 0), i));
    return SL_OK;
}

/* Integer list argument for n axes (one value broadcast). */
static sl_status ints_per_axis(sl_ctx *ctx, int arg, int i, int n, int *v, int lo)
{
    int64_t tmp[SL_MAX_NDIM];
    int m = sl_ctx_arg_ints(ctx, arg, i, tmp, SL_MAX_NDIM);
    if (m != 1 && m != n)
        return sl_fail(ctx, SL_EINVAL, "%s has %d values; expected 1 or one per spatial axis (%d)",
                       args[arg].name, m, n);
    for (int k = 0; k < n; k++) {
        int64_t x = tmp[m == 1 ? 0 : k];
        if (x < lo || x > MAX_WINDOW || x % 2 == 0)
            return sl_fail(ctx, SL_EINVAL, "%s must be an odd integer between %d and %d, got %lld",
                           args[arg].name, lo, MAX_WINDOW, (long long)x);
        v[k] = (int)x;
    }
    return SL_OK;
}

/* The binomial smoothing window of odd size s. */
static void smoothing(float *w, int s)
{
    w[0] = 1;
    for (int k = 1; k < s; k++) {
        w[k] = 1;
        for (int j = k - 1; j > 0; j--)
            w[j] += w[j - 1];
    }
}

/* The derivative window of odd size s >= 3: [1, -2, 1] convolved with smoothing(s - 2). */
static void derivative(float *w, int s)
{
    float sm[MAX_WINDOW];
    smoothing(sm, s - 2);
    for (int k = 0; k < s; k++) {
        float v = 0;
        if (k < s - 2)
            v += sm[k];
        if (k >= 1 && k - 1 < s - 2)
            v -= 2 * sm[k - 1];
        if (k >= 2)
            v += sm[k - 2];
        w[k] = v;
    }
}

/* Sample i's filters, one per spatial axis p (n of them): the partial d2 / d axes[p]^2's
 * windows and factor, the windows in buf (n * n * MAX_WINDOW floats). */
static sl_status filters(sl_ctx *ctx, int i, int n, float *buf, sl__conv_filter *f)
{
    int win[SL_MAX_NDIM], smooth[SL_MAX_NDIM];
    bool has_smooth = sl_ctx_arg_is_set(ctx, A_SMOOTHING_SIZE);
    sl_status st = ints_per_axis(ctx, A_WINDOW_SIZE, i, n, win, 3);
    if (st == SL_OK && has_smooth)
        st = ints_per_axis(ctx, A_SMOOTHING_SIZE, i, n, smooth, 1);
    if (st != SL_OK)
        return st;
    double sc[SL_MAX_NDIM];
    int m = sl_ctx_arg_floats(ctx, A_SCALE, i, sc, SL_MAX_NDIM);
    if (m != 1 && m != n)
        return sl_fail(ctx, SL_EINVAL,
                       "scale has %d values; expected 1 or one per spatial axis (%d)", m, n);
    bool norm = sl_ctx_arg_bool(ctx, A_NORMALIZED, i);
    for (int p = 0; p < n; p++) { /* partial d2 / d axes[p]^2 */
        int total = 0;
        for (int k = 0; k < n; k++) {
            float *w = buf + (size_t)(p * n + k) * MAX_WINDOW;
            f[p].len[k] = k == p ? win[p] : has_smooth ? smooth[k] : win[p];
            if (k == p)
                derivative(w, f[p].len[k]);
            else
                smoothing(w, f[p].len[k]);
            f[p].k[k] = w;
            total += f[p].len[k];
        }
        f[p].scale = (float)(norm ? exp2(-(double)(total - n - 2)) : sc[m == 1 ? 0 : p]);
    }
    return SL_OK;
}

static sl_status lap_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int ndim = sl_batch_ndim(in);
    const int64_t *s = sl_batch_shape(in, i);
    int axes[SL_MAX_NDIM];
    int n = sl__conv_axes(sl_batch_layout(in), ndim, axes);
    float kern[SL_MAX_NDIM * SL_MAX_NDIM * MAX_WINDOW];
    sl__conv_filter f[SL_MAX_NDIM];
    sl_status st = filters(ctx, i, n, kern, f);
    if (st != SL_OK)
        return st;
    int64_t numel = sl_batch_sample_numel(in, i);
    if (numel == 0 || n == 0) {
        if (numel > 0) /* no spatial axis: the second derivative of nothing is 0 */
            memset(sl_ctx_output_data(ctx, 0, i), 0, (size_t)numel * sl_dtype_size(out_type(ctx)));
        return SL_OK;
    }
    if ((size_t)numel * sizeof(float) > sl_ctx_max_sample_bytes(ctx))
        return sl_fail(ctx, SL_EUNSUPPORTED, "a sample of %lld elements is too large to filter",
                       (long long)numel);
    float *sum = sl_ctx_scratch(ctx, 4 * (size_t)numel * sizeof(float));
    if (!sum)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for the filter");
    float *part = sum + numel, *scratch = part + numel;
    for (int p = 0; p < n; p++) {
        sl__conv_run(sl_batch_sample_data(in, i), sl_batch_dtype(in), ndim, s, n, axes, f[p].k,
                     f[p].len, part, false, scratch);
        const float fp = f[p].scale;
        for (int64_t e = 0; e < numel; e++)
            sum[e] = p == 0 ? fp * part[e] : sum[e] + fp * part[e];
    }
    sl__conv_store(sum, numel, 1.0f, out_type(ctx), sl_ctx_output_data(ctx, 0, i));
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* Sample i's filters for convolution.cu. */
static sl_status gpu_filters(sl_ctx *ctx, int i, float *buf, sl__conv_filter *f)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    int axes[SL_MAX_NDIM];
    return filters(ctx, i, sl__conv_axes(sl_batch_layout(in), sl_batch_ndim(in), axes), buf, f);
}

/* The partials summed on the GPU, one launch per axis pass, bit-identical to lap_run_sample. */
static sl_status lap_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    int axes[SL_MAX_NDIM];
    int n = sl__conv_axes(sl_batch_layout(in), sl_batch_ndim(in), axes);
    return sl__conv_run_gpu(ctx, out_type(ctx), n, true, MAX_WINDOW, gpu_filters);
}
#endif

const sl_op_def sl_op_laplacian = {
    .name = "laplacian",
    .doc = "Computes the Laplacian (sum of second derivatives over the spatial axes) of images, "
           "volumes or sequences (DALI's laplacian).\n\n"
           "Every axis but C (channels) and F (frames) is differentiated. Each partial uses "
           "OpenCV's windows: the second-derivative window of `window_size` along its axis "
           "([1, -2, 1] for 3) and the binomial smoothing window of `smoothing_size` (default: "
           "that window_size) along the others; partials are scaled by `scale` (or, with "
           "normalized_kernel, by 2^-(sum of the partial's window sizes - axes - 2)) and summed. "
           "Borders reflect-101; float32 arithmetic; the output in `dtype` (default: the "
           "input's), integers rounded and saturated, as cv2.Laplacian(ksize=window_size) for "
           "2-D images.\n\n"
           "`device=\"gpu\"` computes the whole batch on the GPU with the same float32 "
           "arithmetic: results identical to the CPU's.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = lap_init,
    .setup = lap_setup,
    .setup_sample = lap_setup_sample,
    .run_sample = lap_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = lap_run_gpu,
#endif
};
