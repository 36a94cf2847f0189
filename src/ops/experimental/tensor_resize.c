/* experimental.tensor_resize: resamples tensors of any dimensionality along chosen axes
 * (DALI's fn.experimental.tensor_resize), with nearest-neighbour or (antialiased) linear
 * interpolation.
 *
 * Exports: const sl_op_def sl_op_experimental_tensor_resize ("experimental.tensor_resize", CPU).
 *
 * The resized axes are `axes` / `axis_names` (all when neither is given); their output extents
 * are `sizes` (rounded to nearest) or round(scales * extent), one value per resized axis. Each
 * axis is resampled in turn, in float32: output index o samples the input at the centre
 * c = (o + 0.5) * in / out (half-pixel centres). INTERP_NN takes input index floor(c); LINEAR
 * weighs the input indices by a triangle filter around c - 0.5 of radius 1, widened to in / out
 * when shrinking and antialias is on (the filter PIL's BILINEAR resize uses), the weights
 * normalised over the input elements the window covers (PIL's edge rule: elements past the
 * edge are dropped, not repeated). Integer outputs are rounded to nearest and saturated.
 * Invariant: stateless; per-sample work in the worker's scratch (two float planes and the
 * filter table).
 */
#include <math.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/tensor.h"

enum { A_SIZES, A_SCALES, A_AXES, A_AXIS_NAMES, A_INTERP, A_ANTIALIAS, A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_SIZES] = {.name = "sizes",
                 .type = SL_ARG_FLOATS,
                 .doc = "Output extents of the resized axes (rounded to nearest, at least 1). "
                        "Exclusive with scales.",
                 .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR | SL_ARG_SCALAR_OK,
                 .max_len = SL_MAX_NDIM},
    [A_SCALES] = {.name = "scales",
                  .type = SL_ARG_FLOATS,
                  .doc = "Scale factors of the resized axes: extent round(scale * input extent).",
                  .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR | SL_ARG_SCALAR_OK,
                  .max_len = SL_MAX_NDIM},
    [A_AXES] = {.name = "axes",
                .type = SL_ARG_INTS,
                .doc = "The resized axes (negative: from the back). Unset: all axes.",
                .flags = SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK,
                .max_len = SL_MAX_NDIM},
    [A_AXIS_NAMES] = {.name = "axis_names",
                      .type = SL_ARG_STRING,
                      .doc = "The resized axes by layout letter. Exclusive with axes.",
                      .flags = SL_ARG_OPTIONAL},
    [A_INTERP] = {.name = "interp_type",
                  .type = SL_ARG_STRING,
                  .def = "\"INTERP_LINEAR\"",
                  .doc = "INTERP_NN or INTERP_LINEAR.",
                  .choices = "INTERP_NN|INTERP_LINEAR"},
    [A_ANTIALIAS] = {.name = "antialias",
                     .type = SL_ARG_BOOL,
                     .def = "true",
                     .doc = "LINEAR: widen the filter when shrinking, so every input element "
                            "contributes."},
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .doc = "Output type: float32 or the input type (the default).",
                 .flags = SL_ARG_OPTIONAL},
};

static const sl_io_def inputs[] = {{"input", "Numeric data of any dimensionality."}};
static const sl_io_def outputs[] = {{"output", "The resampled data."}};

static sl_status tr_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    if (sl_init_arg_is_set(ini, A_SIZES) == sl_init_arg_is_set(ini, A_SCALES))
        return sl_init_fail(ini, SL_EINVAL, "give exactly one of sizes and scales");
    if (sl_init_arg_is_set(ini, A_AXES) && sl_init_arg_is_set(ini, A_AXIS_NAMES))
        return sl_init_fail(ini, SL_EINVAL, "axes and axis_names are exclusive: give one");
    return SL_OK;
}

static sl_dtype out_type(const sl_ctx *ctx)
{
    return sl_ctx_arg_is_set(ctx, A_DTYPE) ? sl_ctx_arg_dtype(ctx, A_DTYPE)
                                           : sl_batch_dtype(sl_ctx_input(ctx, 0));
}

/* The output shape of sample i; -1 after sl_fail. */
static int out_shape(sl_ctx *ctx, int i, int64_t *os)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in);
    const int64_t *sh = sl_batch_shape(in, i);
    int ax[SL_MAX_NDIM], n = sl__axes_get(ctx, A_AXES, A_AXIS_NAMES, nd, sl_batch_layout(in), ax);
    if (n < 0)
        return -1;
    const bool sizes = sl_ctx_arg_is_set(ctx, A_SIZES);
    double v[SL_MAX_NDIM];
    int nv = sl_ctx_arg_floats(ctx, sizes ? A_SIZES : A_SCALES, i, v, SL_MAX_NDIM);
    if (nv != n)
        return sl_fail(ctx, SL_EINVAL, "sample %d: %s has %d values for %d resized axes", i,
                       sizes ? "sizes" : "scales", nv, n),
               -1;
    memcpy(os, sh, sizeof(int64_t) * (size_t)nd);
    for (int k = 0; k < n; k++) {
        double e = sizes ? v[k] : v[k] * (double)sh[ax[k]];
        if (!(e >= 0.5 && e < 1e9))
            return sl_fail(ctx, SL_EINVAL, "sample %d: axis %d would get extent %g (at least 1)", i,
                           ax[k], e),
                   -1;
        os[ax[k]] = (int64_t)floor(e + 0.5);
    }
    return nd;
}

static sl_status tr_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const sl_dtype it = sl_batch_dtype(in), ot = out_type(ctx);
    if (it == SL_DTYPE_BOOL || (ot != it && ot != SL_DTYPE_FLOAT32))
        return sl_fail(ctx, SL_EINVAL,
                       "cannot resize %s data to %s (dtype: float32 or the "
                       "input type)",
                       sl_dtype_name(it), sl_dtype_name(ot));
    sl_ctx_set_output(ctx, 0, ot, sl_batch_ndim(in), sl_batch_layout(in));
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++) {
        int64_t os[SL_MAX_NDIM];
        if (out_shape(ctx, i, os) < 0)
            return SL_EINVAL;
        sl_ctx_set_shape(ctx, 0, i, os);
    }
    return SL_OK;
}

/* Resamples axis d of src (shape sh, C order) from sh[d] to m elements into dst. */
static sl_status resample_axis(sl_ctx *ctx, const float *src, float *dst, int nd, const int64_t *sh,
                               int d, int64_t m, bool nn, bool aa)
{
    int64_t outer = 1, inner = 1, n = sh[d];
    for (int k = 0; k < d; k++)
        outer *= sh[k];
    for (int k = d + 1; k < nd; k++)
        inner *= sh[k];
    const double scale = (double)n / (double)m;
    const double radius = nn ? 0.5 : (aa && scale > 1 ? scale : 1.0);
    const int taps = nn ? 1 : (int)ceil(radius) * 2 + 1;
    int64_t *first = sl_ctx_scratch_n(ctx, 2, (size_t)m * (sizeof(int64_t) + sizeof(float) * taps));
    if (!first)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for a filter of %lld taps", (long long)m);
    float *w = (float *)(first + m);
    for (int64_t o = 0; o < m; o++) {
        double c = (o + 0.5) * scale;
        float *wo = w + o * taps;
        if (nn) {
            int64_t j = (int64_t)floor(c);
            first[o] = j < 0 ? 0 : j >= n ? n - 1 : j;
            wo[0] = 1;
            continue;
        }
        int64_t lo = (int64_t)floor(c - radius);
        double sum = 0;
        for (int t = 0; t < taps; t++) { /* input element j has its centre at j + 0.5 */
            double x = fabs((double)(lo + t) + 0.5 - c) / radius;
            bool inside = lo + t >= 0 && lo + t < n; /* outside: dropped, the rest renormalised */
            wo[t] = x < 1 && inside ? (float)(1 - x) : 0;
            sum += wo[t];
        }
        for (int t = 0; t < taps; t++)
            wo[t] = sum > 0 ? (float)(wo[t] / sum) : 0;
        first[o] = lo;
    }
    for (int64_t a = 0; a < outer; a++) {
        const float *s = src + a * n * inner;
        float *t = dst + a * m * inner;
        for (int64_t o = 0; o < m; o++) {
            float *row = t + o * inner;
            memset(row, 0, sizeof(float) * (size_t)inner);
            for (int k = 0; k < taps; k++) {
                const float wk = w[o * taps + k];
                if (wk == 0)
                    continue;
                int64_t j = first[o] + k;
                j = j < 0 ? 0 : j >= n ? n - 1 : j; /* (weight 0 outside: never read) */
                const float *sr = s + j * inner;
                for (int64_t e = 0; e < inner; e++)
                    row[e] += wk * sr[e];
            }
        }
    }
    return SL_OK;
}

static sl_status tr_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in);
    const sl_dtype ot = out_type(ctx);
    const bool nn = strcmp(sl_ctx_arg_str(ctx, A_INTERP), "INTERP_NN") == 0;
    const bool aa = sl_ctx_arg_bool(ctx, A_ANTIALIAS, i);
    int64_t sh[SL_MAX_NDIM], os[SL_MAX_NDIM];
    if (out_shape(ctx, i, os) < 0)
        return SL_EINVAL;
    memcpy(sh, sl_batch_shape(in, i), sizeof(int64_t) * (size_t)nd);
    int64_t numel = sl_batch_sample_numel(in, i), cap = numel, cur = numel;
    for (int d = 0; d < nd && numel; d++) { /* the largest intermediate: axes done in order */
        if (os[d] != sh[d]) {
            cur = cur / sh[d] * os[d];
            cap = cur > cap ? cur : cap;
        }
    }
    if (numel == 0) /* the output's size, to tell an empty result from a made-up one */
        for (int d = 0; d < nd; d++)
            cur = d ? cur * os[d] : os[d];
    if (cur == 0)
        return SL_OK;
    if (numel == 0) /* nothing to interpolate from: refuse rather than write made-up values */
        return sl_fail(ctx, SL_EINVAL, "the sample is empty; it cannot be resized to %lld elements",
                       (long long)cur);
    float *a = sl_ctx_scratch_n(ctx, 0, sizeof(float) * (size_t)cap);
    float *b = sl_ctx_scratch_n(ctx, 1, sizeof(float) * (size_t)cap);
    if (!a || !b)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %lld elements", (long long)cap);
    sl__convert_get(SL_DTYPE_FLOAT32, sl_batch_dtype(in))(a, sl_batch_sample_data(in, i), numel);
    for (int d = 0; d < nd; d++) {
        if (os[d] == sh[d])
            continue;
        sl_status s = resample_axis(ctx, a, b, nd, sh, d, os[d], nn, aa);
        if (s != SL_OK)
            return s;
        sh[d] = os[d];
        float *t = a;
        a = b;
        b = t;
    }
    sl__convert_get(ot, SL_DTYPE_FLOAT32)(sl_ctx_output_data(ctx, 0, i), a, cur);
    return SL_OK;
}

const sl_op_def sl_op_experimental_tensor_resize = {
    .name = "experimental.tensor_resize",
    .doc = "Resamples tensors of any dimensionality along chosen axes (DALI's "
           "experimental.tensor_resize).\n\n"
           "`axes` / `axis_names` (all when unset) get the extents `sizes` or round(scales * "
           "extent). INTERP_NN picks the nearest input element; INTERP_LINEAR interpolates with a "
           "triangle filter, widened when shrinking with antialias (PIL's BILINEAR filter), with "
           "half-pixel centres; at the edges the filter covers only the input and is renormalised "
           "(PIL's rule). Computed in float32; integer outputs are "
           "rounded and saturated.\n\n"
           "Differs from DALI: only INTERP_NN and INTERP_LINEAR, no roi, mode, max_size or "
           "subpixel_scale.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = tr_init,
    .setup = tr_setup,
    .run_sample = tr_run_sample,
};
