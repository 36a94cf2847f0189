/* gaussian_blur: separable Gaussian blur of images, volumes and sequences (DALI's
 * fn.gaussian_blur).
 *
 * Exports: const sl_op_def sl_op_gaussian_blur ("gaussian_blur", CPU and GPU).
 *
 * Per spatial axis (every axis but C and F, ops/image/convolution.h) a normalised Gaussian
 * kernel: DALI's rules, window = 2 * ceil(3 * sigma) + 1 when only sigma is given, sigma =
 * (r - 1) * 0.3 + 0.8 (r = (window - 1) / 2, OpenCV's rule) when only window_size is; weights
 * exp(-x^2 / (2 sigma^2)) scaled to sum 1. Borders reflect-101, arithmetic float32, the output
 * converted to dtype (default: the input type) with rounding and saturation.
 * GPU (builds with CUDA): the same kernels (kernels()) given to convolution.cu's
 * sl__conv_run_gpu, bit-identical results.
 * Invariant: a pure function of the sample and its arguments; nothing kept between calls.
 */
#include <math.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/image/convolution.h"

enum { A_SIGMA, A_WINDOW_SIZE, A_DTYPE, NUM_ARGS };

#define MAX_WINDOW 1025 /* longest kernel (sigma up to ~170) */

static const sl_arg_def args[NUM_ARGS] = {
    [A_SIGMA] = {.name = "sigma",
                 .type = SL_ARG_FLOATS,
                 .doc = "Standard deviation of the kernel: one value for every spatial axis, or "
                        "one per axis (0: from window_size).",
                 .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR | SL_ARG_SCALAR_OK | SL_ARG_RANGE,
                 .min = 0.0,
                 .max = 170.0,
                 .max_len = SL_MAX_NDIM},
    [A_WINDOW_SIZE] = {.name = "window_size",
                       .type = SL_ARG_INTS,
                       .doc = "Diameter of the kernel (odd): one value for every spatial axis, "
                              "or one per axis (0: from sigma).",
                       .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR | SL_ARG_SCALAR_OK | SL_ARG_RANGE,
                       .min = 0,
                       .max = MAX_WINDOW,
                       .max_len = SL_MAX_NDIM},
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .doc = "Output type; unset: the input type (integers rounded and saturated).",
                 .flags = SL_ARG_OPTIONAL},
};

static const sl_io_def inputs[] = {
    {"input", "Images (HWC, CHW, ...), volumes or sequences of any numeric type."}};
static const sl_io_def outputs[] = {{"output", "The blurred samples, in the input layout."}};

static sl_status blur_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    if (!sl_init_arg_is_set(ini, A_SIGMA) && !sl_init_arg_is_set(ini, A_WINDOW_SIZE))
        return sl_init_fail(ini, SL_EINVAL, "either sigma or window_size must be given");
    if (sl_init_arg_is_set(ini, A_DTYPE) && sl_init_arg_dtype(ini, A_DTYPE) == SL_DTYPE_BOOL)
        return sl_init_fail(ini, SL_EINVAL, "dtype bool is not supported");
    return SL_OK;
}

static sl_dtype out_type(const sl_ctx *ctx)
{
    return sl_ctx_arg_is_set(ctx, A_DTYPE) ? sl_ctx_arg_dtype(ctx, A_DTYPE)
                                           : sl_batch_dtype(sl_ctx_input(ctx, 0));
}

static sl_status blur_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    if (sl_batch_dtype(in) == SL_DTYPE_BOOL)
        return sl_fail(ctx, SL_EINVAL, "bool input is not supported");
    sl_ctx_set_output(ctx, 0, out_type(ctx), sl_batch_ndim(in), sl_batch_layout(in));
    return SL_OK;
}

static sl_status blur_setup_sample(sl_ctx *ctx, int i)
{
    sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(sl_ctx_input(ctx, 0), i));
    return SL_OK;
}

/* Reads list argument arg for n axes into v (one value broadcast; 0 when unset). */
static sl_status per_axis(sl_ctx *ctx, int arg, int i, int n, double *v)
{
    for (int k = 0; k < n; k++)
        v[k] = 0;
    if (!sl_ctx_arg_is_set(ctx, arg))
        return SL_OK;
    double tmp[SL_MAX_NDIM];
    int64_t itmp[SL_MAX_NDIM];
    int m;
    if (args[arg].type == SL_ARG_INTS) {
        m = sl_ctx_arg_ints(ctx, arg, i, itmp, SL_MAX_NDIM);
        for (int k = 0; k < m && k < SL_MAX_NDIM; k++)
            tmp[k] = (double)itmp[k];
    } else {
        m = sl_ctx_arg_floats(ctx, arg, i, tmp, SL_MAX_NDIM);
    }
    if (m != 1 && m != n)
        return sl_fail(ctx, SL_EINVAL, "%s has %d values; expected 1 or one per spatial axis (%d)",
                       args[arg].name, m, n);
    for (int k = 0; k < n; k++)
        v[k] = tmp[m == 1 ? 0 : k];
    return SL_OK;
}

/* Sample i's normalised Gaussian kernel per spatial axis (n of them), into buf (n * MAX_WINDOW
 * floats): kp[k], len[k]. */
static sl_status kernels(sl_ctx *ctx, int i, int n, const int *axes, float *buf, const float **kp,
                         int *len)
{
    double sigma[SL_MAX_NDIM], win[SL_MAX_NDIM];
    sl_status st;
    if ((st = per_axis(ctx, A_SIGMA, i, n, sigma)) != SL_OK ||
        (st = per_axis(ctx, A_WINDOW_SIZE, i, n, win)) != SL_OK)
        return st;
    for (int k = 0; k < n; k++) {
        float sg = (float)sigma[k];
        int w = (int)win[k];
        if (w == 0 && !(sg > 0))
            return sl_fail(ctx, SL_EINVAL,
                           "axis %d: sigma and window_size are both 0; give one of them", axes[k]);
        if (w == 0)
            w = 2 * (int)ceilf(sg * 3) + 1;
        if (w % 2 == 0 || w < 1 || w > MAX_WINDOW)
            return sl_fail(ctx, SL_EINVAL, "window_size must be odd and at most %d; got %d",
                           MAX_WINDOW, w);
        int r = (w - 1) / 2;
        if (!(sg > 0))
            sg = (float)((r - 1) * 0.3 + 0.8);
        float *kk = buf + (size_t)k * MAX_WINDOW;
        float scale = 0.5f / (sg * sg), sum = 1.0f;
        for (int x = -r; x < 0; x++) {
            kk[x + r] = expf(-((float)(x * x) * scale));
            sum += 2 * kk[x + r];
        }
        kk[r] = 1.0f;
        for (int t = 0; t <= r; t++) {
            kk[t] /= sum;
            kk[w - 1 - t] = kk[t];
        }
        kp[k] = kk;
        len[k] = w;
    }
    return SL_OK;
}

static sl_status blur_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int ndim = sl_batch_ndim(in);
    const int64_t *s = sl_batch_shape(in, i);
    int axes[SL_MAX_NDIM];
    int n = sl__conv_axes(sl_batch_layout(in), ndim, axes);
    int len[SL_MAX_NDIM];
    const float *kp[SL_MAX_NDIM];
    int64_t numel = sl_batch_sample_numel(in, i);
    size_t kbytes = (size_t)n * MAX_WINDOW * sizeof(float);
    size_t need = kbytes + 3 * (size_t)numel * sizeof(float);
    if ((size_t)numel * sizeof(float) > sl_ctx_max_sample_bytes(ctx))
        return sl_fail(ctx, SL_EUNSUPPORTED, "a sample of %lld elements is too large to filter",
                       (long long)numel);
    float *buf = sl_ctx_scratch(ctx, need);
    if (!buf)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for the filter");
    sl_status st = kernels(ctx, i, n, axes, buf, kp, len);
    if (st != SL_OK)
        return st;
    if (numel == 0)
        return SL_OK;
    float *sum = buf + (size_t)n * MAX_WINDOW, *scratch = sum + numel;
    sl__conv_run(sl_batch_sample_data(in, i), sl_batch_dtype(in), ndim, s, n, axes, kp, len, sum,
                 false, scratch);
    sl__conv_store(sum, numel, 1.0f, out_type(ctx), sl_ctx_output_data(ctx, 0, i));
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* The one filter of sample i for convolution.cu. */
static sl_status gpu_filters(sl_ctx *ctx, int i, float *buf, sl__conv_filter *f)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    int axes[SL_MAX_NDIM];
    int n = sl__conv_axes(sl_batch_layout(in), sl_batch_ndim(in), axes);
    f[0].scale = 1.0f;
    return kernels(ctx, i, n, axes, buf, f[0].k, f[0].len);
}

/* One launch per spatial axis for the whole batch, bit-identical to blur_run_sample. */
static sl_status blur_run_gpu(sl_ctx *ctx)
{
    return sl__conv_run_gpu(ctx, out_type(ctx), 1, false, MAX_WINDOW, gpu_filters);
}
#endif

const sl_op_def sl_op_gaussian_blur = {
    .name = "gaussian_blur",
    .doc = "Blurs images, volumes or sequences with a separable Gaussian kernel (DALI's "
           "gaussian_blur).\n\n"
           "Every axis but C (channels) and F (frames) is blurred; `sigma` and `window_size` "
           "give one value for all of them or one per axis. Only sigma: window = 2 * ceil(3 * "
           "sigma) + 1; only window_size: sigma = (r - 1) * 0.3 + 0.8 with r = (window - 1) / 2 "
           "(OpenCV's rule, so the result matches cv2.GaussianBlur(ksize=window, sigma=0)). "
           "Borders reflect-101 (cv2.BORDER_REFLECT_101); float32 arithmetic; the output in "
           "`dtype` (default: the input's), integers rounded and saturated.\n\n"
           "`device=\"gpu\"` filters the whole batch on the GPU, one launch per axis, with the "
           "same float32 arithmetic: results identical to the CPU's.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = blur_init,
    .setup = blur_setup,
    .setup_sample = blur_setup_sample,
    .run_sample = blur_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = blur_run_gpu,
#endif
};
