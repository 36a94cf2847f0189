/* coord_transform: applies an affine transform to points (DALI's fn.coord_transform).
 *
 * Exports: const sl_op_def sl_op_coord_transform ("coord_transform", CPU and GPU).
 *
 * The input's innermost extent is the point's dimension D; every point x (of any leading shape)
 * becomes y = M x + T with out_dim rows. M is out_dim x D in row-major order, or one value s
 * (s I, out_dim = D), default the identity; T has out_dim values or one (repeated), default
 * zero. MT, exclusive with M and T, is the out_dim x (D + 1) matrix [M | T] (what the
 * transforms.* operators make). The output's shape is the input's with the last extent
 * out_dim; it is computed in double and converted to `dtype` (default float32) with DALI's
 * ConvertSat rules (integers: rounded half away from zero, saturated).
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/geometry/points_gpu.h"

#include "ops/tensor/tensor.h"

enum { A_M, A_T, A_MT, A_DTYPE, NUM_ARGS };

#define MAX_DIM 16 /* most coordinates per point, in or out */

static const sl_arg_def args[NUM_ARGS] = {
    [A_M] = {.name = "M",
             .type = SL_ARG_FLOATS,
             .doc = "The linear part, out_dim x in_dim in row-major order, or one value s for "
                    "s * I. Unset: the identity (or from MT).",
             .flags = SL_ARG_TENSOR | SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK,
             .min_len = 1,
             .max_len = MAX_DIM * MAX_DIM},
    [A_T] = {.name = "T",
             .type = SL_ARG_FLOATS,
             .doc = "The translation, out_dim values or one for all. Unset: zero.",
             .flags = SL_ARG_TENSOR | SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK,
             .min_len = 1,
             .max_len = MAX_DIM},
    [A_MT] = {.name = "MT",
              .type = SL_ARG_FLOATS,
              .doc = "The whole transform [M | T], out_dim x (in_dim + 1) in row-major order, "
                     "or one value s for [s * I | 0]. Exclusive with M and T.",
              .flags = SL_ARG_TENSOR | SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK,
              .min_len = 1,
              .max_len = MAX_DIM * (MAX_DIM + 1)},
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .def = "\"float32\"",
                 .doc = "Element type of the output; integers are rounded and saturated."},
};

static const sl_io_def inputs[] = {
    {"input", "Points: any numeric type, the innermost extent is the point's dimension."},
};
static const sl_io_def outputs[] = {{"output", "The transformed points, last extent out_dim."}};

static sl_status ct_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    if (sl_init_arg_is_set(ini, A_MT) &&
        (sl_init_arg_is_set(ini, A_M) || sl_init_arg_is_set(ini, A_T)))
        return sl_init_fail(ini, SL_EINVAL, "MT is exclusive with M and T: give MT, or M and T");
    return SL_OK;
}

/* Sample i's transform: out_dim into *od, the (od x (in + 1)) matrix [M | T] into mt.
 * Fails (naming the argument) when the lengths do not fit in_dim. */
static sl_status sample_matrix(sl_ctx *ctx, int i, int in, int *od, double *mt)
{
    double v[MAX_DIM * (MAX_DIM + 1)];
    if (sl_ctx_arg_is_set(ctx, A_MT)) {
        int n = sl_ctx_arg_floats(ctx, A_MT, i, v, (int)(sizeof v / sizeof v[0]));
        if (n == 1) {
            *od = in;
            for (int r = 0; r < in; r++)
                for (int c = 0; c <= in; c++)
                    mt[r * (in + 1) + c] = r == c ? v[0] : 0.0;
            return SL_OK;
        }
        if (n % (in + 1) || n / (in + 1) > MAX_DIM)
            return sl_fail(ctx, SL_EINVAL,
                           "MT has %d values, which is not out_dim x (%d + 1) for the %d-D "
                           "points of the input",
                           n, in, in);
        *od = n / (in + 1);
        memcpy(mt, v, (size_t)n * sizeof *mt);
        return SL_OK;
    }
    int out = in;
    if (sl_ctx_arg_is_set(ctx, A_M)) {
        int n = sl_ctx_arg_floats(ctx, A_M, i, v, (int)(sizeof v / sizeof v[0]));
        if (n != 1 && (n % in || n / in > MAX_DIM))
            return sl_fail(ctx, SL_EINVAL,
                           "M has %d values, which is not out_dim x %d for the %d-D points of "
                           "the input",
                           n, in, in);
        out = n == 1 ? in : n / in;
        for (int r = 0; r < out; r++)
            for (int c = 0; c < in; c++)
                mt[r * (in + 1) + c] = n == 1 ? (r == c ? v[0] : 0.0) : v[r * in + c];
    } else {
        for (int r = 0; r < out; r++)
            for (int c = 0; c < in; c++)
                mt[r * (in + 1) + c] = r == c ? 1.0 : 0.0;
    }
    for (int r = 0; r < out; r++)
        mt[r * (in + 1) + in] = 0.0;
    if (sl_ctx_arg_is_set(ctx, A_T)) {
        int n = sl_ctx_arg_floats(ctx, A_T, i, v, MAX_DIM);
        if (n != 1 && n != out)
            return sl_fail(ctx, SL_EINVAL, "T has %d values, expected 1 or out_dim = %d", n, out);
        for (int r = 0; r < out; r++)
            mt[r * (in + 1) + in] = v[n == 1 ? 0 : r];
    }
    *od = out;
    return SL_OK;
}

static sl_status ct_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    if (sl_batch_ndim(in) < 1)
        return sl_fail(ctx, SL_EINVAL,
                       "the input has 0 dimensions; points need an innermost coordinate axis");
    sl_ctx_set_output(ctx, 0, sl_ctx_arg_dtype(ctx, A_DTYPE), sl_batch_ndim(in),
                      sl_batch_layout(in));
    return SL_OK;
}

static sl_status ct_setup_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in);
    int64_t shape[SL_MAX_NDIM];
    memcpy(shape, sl_batch_shape(in, i), (size_t)nd * sizeof *shape);
    if (shape[nd - 1] < 1 || shape[nd - 1] > MAX_DIM)
        return sl_fail(ctx, SL_EINVAL,
                       "the points have %lld coordinates (innermost extent); 1 to %d supported",
                       (long long)shape[nd - 1], MAX_DIM);
    double mt[MAX_DIM * (MAX_DIM + 1)];
    int od;
    sl_status st = sample_matrix(ctx, i, (int)shape[nd - 1], &od, mt);
    if (st != SL_OK)
        return st;
    shape[nd - 1] = od;
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

static sl_status ct_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in);
    const int id = (int)sl_batch_shape(in, i)[nd - 1];
    const int64_t npoints = sl_batch_sample_numel(in, i) / id;
    double mt[MAX_DIM * (MAX_DIM + 1)], x[MAX_DIM], y[MAX_DIM];
    int od;
    sl_status st = sample_matrix(ctx, i, id, &od, mt);
    if (st != SL_OK)
        return st;
    const sl_dtype odt = sl_ctx_arg_dtype(ctx, A_DTYPE), idt = sl_batch_dtype(in);
    sl__convert_fn rd = sl__convert_get(SL_DTYPE_FLOAT64, idt);
    sl__convert_fn wr = sl__convert_get(odt, SL_DTYPE_FLOAT64);
    const size_t ies = sl_dtype_size(idt), oes = sl_dtype_size(odt);
    const unsigned char *src = sl_batch_sample_data(in, i);
    unsigned char *dst = sl_ctx_output_data(ctx, 0, i);
    for (int64_t p = 0; p < npoints; p++) {
        rd(x, src + (size_t)(p * id) * ies, id);
        for (int r = 0; r < od; r++) {
            const double *row = mt + r * (id + 1);
            double acc = row[id];
            for (int c = 0; c < id; c++)
                acc += row[c] * x[c];
            y[r] = acc;
        }
        wr(dst + (size_t)(p * od) * oes, y, od);
    }
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* One kernel for the batch: each sample's [M | T] (sample_matrix, as run_sample) goes into one
 * array of matrices, uploaded with the jobs. */
static sl_status ct_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx), nd = sl_batch_ndim(in);
    const size_t per = MAX_DIM * (MAX_DIM + 1);
    sl__gctrans *s = sl_ctx_scratch(ctx, sizeof(sl__gctrans) * (size_t)(n > 0 ? n : 1));
    double *mts = sl_ctx_scratch_n(ctx, 1, sizeof(double) * per * (size_t)(n > 0 ? n : 1));
    if (!s || !mts)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    int64_t nmt = 0;
    for (int i = 0; i < n; i++) {
        const int id = (int)sl_batch_shape(in, i)[nd - 1];
        int od;
        sl_ctx_focus_sample(ctx, i);
        sl_status st = sample_matrix(ctx, i, id, &od, mts + nmt);
        if (st != SL_OK)
            return st;
        s[i] = (sl__gctrans){.in = sl_batch_sample_data(in, i),
                             .out = sl_ctx_output_data(ctx, 0, i),
                             .count = sl_batch_sample_numel(in, i) / id * od,
                             .mt = nmt,
                             .id = id,
                             .od = od};
        nmt += (int64_t)od * (id + 1);
    }
    sl_ctx_focus_sample(ctx, -1);
    return sl__gpu_coord_transform(ctx, s, n, mts, nmt, sl_batch_dtype(in),
                                   sl_ctx_arg_dtype(ctx, A_DTYPE));
}
#endif

const sl_op_def sl_op_coord_transform = {
    .name = "coord_transform",
    .doc = "Applies an affine transform to points: y = M x + T (DALI's coord_transform).\n\n"
           "The input's innermost extent is the point's dimension (any leading shape, any "
           "numeric type). M (out_dim x in_dim, row-major, or a scalar for s * I; default I), "
           "T (out_dim values or one; default 0), or MT = [M | T] as made by transforms.*. The "
           "output has out_dim coordinates per point, in `dtype` (default float32; integers "
           "rounded and saturated). Arguments may be given per sample.\n\n"
           "`device=\"gpu\"` transforms on the GPU with the same results (the same double "
           "arithmetic in the same order).",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = ct_init,
    .setup = ct_setup,
    .setup_sample = ct_setup_sample,
    .run_sample = ct_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = ct_run_gpu,
#endif
};
