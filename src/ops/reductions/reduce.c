/* src/ops/reductions/reduce.c: the one implementation of DALI's reductions (see reduce.h).
 *
 * Exports sl__red_init, sl__red_setup, sl__red_run_sample and the family's schemas.
 *
 * Per sample: the reduced axes (`axes`, or `axis_names` in the input layout; neither: all;
 * an empty list: none, as NumPy's axis=()) split the input's dimensions into reduced and kept
 * ones. Adjacent dimensions of the same kind merge, extents of 1 drop out, and the sample is
 * walked in C order, row by row along the last merged dimension: a reduced row folds into one
 * accumulator, a kept row into a run of them. Accumulators are 64-bit: int64 / uint64 for
 * integer sums (wrapping, then truncated to the output type: what accumulating in that type
 * gives), min and max of integers, double for everything else (DALI accumulates floats in
 * float32; double agrees with a float64 reference at least as well). The result is written
 * with DALI's ConvertSat rules (ops/tensor/convert.c) where it is not an integer sum.
 *
 * Output types (DALI's): min, max: the input's; sum: dtype, else uint64 for uint8..uint32,
 * int64 for int8..int32, the input's otherwise; mean, mean_square, rms: dtype, else float32;
 * std_dev, variance: float32.
 *
 * Invariant: run_sample reads only sample i and writes only its output; scratch holds the
 * accumulators (P values of 8 bytes, P = output elements) and, for std_dev / variance, the
 * mean as double.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/reductions/reduce.h"
#include "ops/tensor/tensor.h"

/* ---- schemas ------------------------------------------------------------------------------ */

#define ARG_AXES                                                                                   \
    {                                                                                              \
        .name = "axes", .type = SL_ARG_INTS,                                                       \
        .doc = "Axis or axes to reduce, in [-ndim, ndim-1] (negative: from the back). Not given: " \
               "all axes; an empty list: none (the input is returned, converted). Exclusive "      \
               "with axis_names.",                                                                 \
        .flags = SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK                                                \
    }
#define ARG_AXIS_NAMES                                                                             \
    {                                                                                              \
        .name = "axis_names", .type = SL_ARG_STRING,                                               \
        .doc = "Axes to reduce, named by their letters in the input layout (\"HW\" with layout "   \
               "\"FHWC\" is axes=[1, 2]); \"\" reduces none. Exclusive with axes.",                \
        .flags = SL_ARG_OPTIONAL                                                                   \
    }
#define ARG_KEEP_DIMS                                                                              \
    {                                                                                              \
        .name = "keep_dims", .type = SL_ARG_BOOL, .def = "false",                                  \
        .doc = "Keep the reduced axes as extents of 1 (and the input layout); otherwise they are " \
               "removed, with their letters of the layout."                                        \
    }

const sl_arg_def sl__red_basic_args[3] = {ARG_AXES, ARG_AXIS_NAMES, ARG_KEEP_DIMS};
const sl_arg_def sl__red_dtype_args[4] = {
    ARG_AXES,
    ARG_AXIS_NAMES,
    ARG_KEEP_DIMS,
    {.name = "dtype",
     .type = SL_ARG_DTYPE,
     .doc = "Output type, also the type the result accumulates in (an integer sum wraps in it). "
            "Not given: sum gives uint64 for uint8..uint32, int64 for int8..int32 and the input "
            "type otherwise; mean, mean_square and rms give float32. An integer type needs an "
            "integer input for sum.",
     .flags = SL_ARG_OPTIONAL}};
const sl_arg_def sl__red_mean_in_args[4] = {
    ARG_AXES,
    ARG_AXIS_NAMES,
    ARG_KEEP_DIMS,
    {.name = "ddof",
     .type = SL_ARG_INT,
     .def = "0",
     .doc = "Delta degrees of freedom: the sum of squared deviations is divided by N - ddof "
            "(N: elements reduced into each output value); N - ddof <= 0 gives inf (or NaN "
            "for a zero sum), as NumPy.",
     .flags = SL_ARG_RANGE,
     .min = 0,
     .max = 2147483647.0}};
const sl_io_def sl__red_inputs[2] = {
    {"data", "Numeric data (any type but float16 for integer outputs), any shape and layout."},
    {"mean", "std_dev / variance: the mean to measure deviations from, per sample: as many "
             "values as the output has (fn.reductions.mean with the same axes, with or without "
             "keep_dims), or one value for all (a float constant)."}};
const sl_io_def sl__red_outputs[1] = {
    {"output", "The reduction: the input's shape without the reduced axes (extents of 1 with "
               "keep_dims)."}};

static const char *const kind_names[] = {"min",         "max", "sum",     "mean",
                                         "mean_square", "rms", "std_dev", "variance"};

/* ---- types -------------------------------------------------------------------------------- */

static bool is_float(sl_dtype t)
{
    return t == SL_DTYPE_FLOAT16 || t == SL_DTYPE_FLOAT32 || t == SL_DTYPE_FLOAT64;
}

static bool is_signed(sl_dtype t)
{
    return t >= SL_DTYPE_INT8 && t <= SL_DTYPE_INT64;
}

static bool has_dtype(sl__red_kind k)
{
    return k == SL__RED_SUM || k == SL__RED_MEAN || k == SL__RED_MEAN_SQUARE || k == SL__RED_RMS;
}

static bool has_mean(sl__red_kind k)
{
    return k == SL__RED_STD_DEV || k == SL__RED_VARIANCE;
}

static sl_dtype out_type(const sl_ctx *ctx, sl__red_kind k, sl_dtype in)
{
    if (has_dtype(k) && sl_ctx_arg_is_set(ctx, SL__RED_A_EXTRA))
        return sl_ctx_arg_dtype(ctx, SL__RED_A_EXTRA);
    switch (k) {
    case SL__RED_MIN:
    case SL__RED_MAX: return in;
    case SL__RED_SUM:
        if (in == SL_DTYPE_BOOL || (in >= SL_DTYPE_UINT8 && in <= SL_DTYPE_UINT32))
            return SL_DTYPE_UINT64;
        if (in >= SL_DTYPE_INT8 && in <= SL_DTYPE_INT32)
            return SL_DTYPE_INT64;
        return in;
    default: return SL_DTYPE_FLOAT32;
    }
}

/* What the accumulators are. */
typedef enum acc_kind { ACC_I64, ACC_U64, ACC_F64 } acc_kind;

static acc_kind acc_of(sl__red_kind k, sl_dtype in, sl_dtype out)
{
    if (k == SL__RED_MIN || k == SL__RED_MAX || (k == SL__RED_SUM && !is_float(out)))
        return is_float(in) ? ACC_F64 : is_signed(in) ? ACC_I64 : ACC_U64;
    return ACC_F64;
}

/* ---- the reduced axes of a sample --------------------------------------------------------- */

/* reduced[d] for the input's ndim dimensions; -1 after sl_fail. */
static int reduced_axes(sl_ctx *ctx, int ndim, const char *layout, bool *reduced)
{
    char err[256];
    int ax[SL_MAX_NDIM], n = ndim;
    for (int d = 0; d < ndim; d++)
        ax[d] = d;
    if (sl_ctx_arg_is_set(ctx, SL__RED_A_AXIS_NAMES)) {
        const char *names = sl_ctx_arg_str(ctx, SL__RED_A_AXIS_NAMES);
        if (!layout || !*layout) {
            if (*names)
                return sl_fail(ctx, SL_EINVAL,
                               "axis_names \"%s\" needs an input layout; the input has none",
                               names),
                       -1;
        }
        n = sl__axes_from_names(names, layout, ax, err, sizeof err);
    } else if (sl_ctx_arg_is_set(ctx, SL__RED_A_AXES)) {
        int64_t v[SL_MAX_NDIM + 1];
        n = sl_ctx_arg_ints(ctx, SL__RED_A_AXES, 0, v, SL_MAX_NDIM + 1);
        if (n > ndim)
            snprintf(err, sizeof err, "Axis index out of range: %d axes given for %d-D input", n,
                     ndim),
                n = -1;
        else if ((n = sl__axes_from_ints(v, n, ndim, ax, err, sizeof err)) < 0 &&
                 strstr(err, "out of range"))
            snprintf(err, sizeof err,
                     "Axis index out of range: axes must be in [%d, %d] for %d-D input", -ndim,
                     ndim - 1, ndim);
    }
    if (n < 0)
        return sl_fail(ctx, SL_EINVAL, "%s", err), -1;
    memset(reduced, 0, sizeof(bool) * (size_t)(ndim > 0 ? ndim : 1));
    for (int k = 0; k < n; k++)
        reduced[ax[k]] = true;
    return n;
}

/* ---- setup -------------------------------------------------------------------------------- */

sl_status sl__red_init(sl_op_init *ini, sl__red_kind kind)
{
    (void)kind;
    if (sl_init_arg_is_set(ini, SL__RED_A_AXES) && sl_init_arg_is_set(ini, SL__RED_A_AXIS_NAMES))
        return sl_init_fail(ini, SL_EINVAL, "axes and axis_names are exclusive: give one");
    return SL_OK;
}

static sl_status check_types(sl_ctx *ctx, sl__red_kind kind, sl_dtype in, sl_dtype out)
{
    if (in == SL_DTYPE_BOOL && kind != SL__RED_MIN && kind != SL__RED_MAX && kind != SL__RED_SUM)
        return sl_fail(ctx, SL_EINVAL, "%s of bool data is not supported; cast it first",
                       kind_names[kind]);
    if (out == SL_DTYPE_BOOL)
        return sl_fail(ctx, SL_EINVAL, "dtype bool is not supported for %s", kind_names[kind]);
    if (kind == SL__RED_SUM && is_float(in) && !is_float(out))
        return sl_fail(ctx, SL_EINVAL, "sum of %s data cannot accumulate in dtype %s",
                       sl_dtype_name(in), sl_dtype_name(out));
    if (has_mean(kind)) {
        sl_dtype mt = sl_batch_dtype(sl_ctx_input(ctx, 1));
        if (mt == SL_DTYPE_BOOL)
            return sl_fail(ctx, SL_EINVAL, "the mean input must be numeric, got bool");
    }
    return SL_OK;
}

sl_status sl__red_setup(sl_ctx *ctx, sl__red_kind kind)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in), n = sl_ctx_batch_size(ctx);
    const bool keep = sl_ctx_arg_bool(ctx, SL__RED_A_KEEP_DIMS, 0);
    const char *layout = sl_batch_layout(in);
    const sl_dtype it = sl_batch_dtype(in), ot = out_type(ctx, kind, it);
    bool red[SL_MAX_NDIM + 1];
    sl_status s = check_types(ctx, kind, it, ot);
    if (s != SL_OK)
        return s;
    int nred = reduced_axes(ctx, nd, layout, red);
    if (nred < 0)
        return SL_EINVAL;

    char out_layout[SL_MAX_NDIM + 1] = "";
    const bool has_layout = layout && (int)strlen(layout) == nd;
    int ond = keep ? nd : nd - nred, k = 0;
    for (int d = 0; d < nd && has_layout; d++)
        if (keep || !red[d])
            out_layout[k++] = layout[d];
    out_layout[k] = '\0';
    sl_ctx_set_output(ctx, 0, ot, ond, has_layout ? out_layout : NULL);
    for (int i = 0; i < n; i++) {
        const int64_t *sh = sl_batch_shape(in, i);
        int64_t os[SL_MAX_NDIM + 1];
        k = 0;
        for (int d = 0; d < nd; d++)
            if (keep || !red[d])
                os[k++] = red[d] ? 1 : sh[d];
        sl_ctx_set_shape(ctx, 0, i, os);
    }
    return SL_OK;
}

/* ---- run ---------------------------------------------------------------------------------- */

#define ROW 512 /* elements converted at a time */

/* One merged dimension of the walk. */
typedef struct mdim {
    int64_t ext;
    bool red;
    int64_t ostride; /* output elements per step; 0 for a reduced dimension */
} mdim;

/* What folding a row into the accumulators does. */
typedef struct fold {
    sl__red_kind kind;
    acc_kind acc;
    sl__convert_fn load; /* input -> int64 / uint64 / double */
    size_t esize;        /* input element size */
    void *acc_buf;       /* P accumulators */
    const double *mean;  /* std_dev / variance: P means (or one: mean_stride 0) */
    int64_t mean_stride;
} fold;

#define FOLD_MINMAX(T, ISNAN)                                                                      \
    for (int64_t j = 0; j < m; j++) {                                                              \
        T x = ((const T *)v)[j], *a = (T *)f->acc_buf + p + j * astep;                             \
        if (mx ? (x > *a || ISNAN(x)) : (x < *a || ISNAN(x)))                                      \
            if (!ISNAN(*a))                                                                        \
                *a = x;                                                                            \
    }
#define NO_NAN(x) 0

/* Folds m converted values v into accumulators p + j * astep (astep 0: all into p). */
static void fold_values(const fold *f, const void *v, int64_t m, int64_t p, int64_t astep)
{
    const bool mx = f->kind == SL__RED_MAX;
    if (f->kind == SL__RED_MIN || f->kind == SL__RED_MAX) {
        if (f->acc == ACC_I64) {
            FOLD_MINMAX(int64_t, NO_NAN)
        } else if (f->acc == ACC_U64) {
            FOLD_MINMAX(uint64_t, NO_NAN)
        } else {
            FOLD_MINMAX(double, isnan)
        }
        return;
    }
    if (f->acc != ACC_F64) { /* integer sum, wrapping (unsigned arithmetic: no overflow UB) */
        uint64_t *a = (uint64_t *)f->acc_buf + p;
        for (int64_t j = 0; j < m; j++)
            a[j * astep] += ((const uint64_t *)v)[j];
        return;
    }
    const double *x = v;
    double *a = (double *)f->acc_buf + p;
    if (f->kind == SL__RED_SUM || f->kind == SL__RED_MEAN) {
        for (int64_t j = 0; j < m; j++)
            a[j * astep] += x[j];
    } else if (f->kind == SL__RED_MEAN_SQUARE || f->kind == SL__RED_RMS) {
        for (int64_t j = 0; j < m; j++)
            a[j * astep] += x[j] * x[j];
    } else {
        const double *mu = f->mean + p * f->mean_stride;
        const int64_t ms = astep * f->mean_stride;
        for (int64_t j = 0; j < m; j++) {
            double d = x[j] - mu[j * ms];
            a[j * astep] += d * d;
        }
    }
}

/* Folds one row of e input elements at src; p: the accumulator of its first element. */
static void fold_row(const fold *f, const unsigned char *src, int64_t e, bool red, int64_t p)
{
    uint64_t buf[ROW];
    for (int64_t s = 0; s < e; s += ROW) {
        int64_t m = e - s < ROW ? e - s : ROW;
        f->load(buf, src + (size_t)s * f->esize, m);
        fold_values(f, buf, m, red ? p : p + s, red ? 0 : 1);
    }
}

static void acc_init(const fold *f, int64_t P)
{
    if (f->kind != SL__RED_MIN && f->kind != SL__RED_MAX) {
        memset(f->acc_buf, 0, (size_t)P * 8);
        return;
    }
    const bool mx = f->kind == SL__RED_MAX;
    for (int64_t p = 0; p < P; p++) {
        if (f->acc == ACC_I64)
            ((int64_t *)f->acc_buf)[p] = mx ? INT64_MIN : INT64_MAX;
        else if (f->acc == ACC_U64)
            ((uint64_t *)f->acc_buf)[p] = mx ? 0 : UINT64_MAX;
        else
            ((double *)f->acc_buf)[p] = mx ? -INFINITY : INFINITY;
    }
}

/* Walks the sample: dims[0..m) merged, C order; the last one is the row. */
static void walk(const fold *f, const unsigned char *src, const mdim *dims, int m)
{
    int64_t idx[SL_MAX_NDIM] = {0};
    const int64_t row = dims[m - 1].ext;
    int64_t p = 0;
    for (;;) {
        fold_row(f, src, row, dims[m - 1].red, p);
        src += (size_t)row * f->esize;
        int d = m - 2;
        for (; d >= 0; d--) {
            p += dims[d].ostride;
            if (++idx[d] < dims[d].ext)
                break;
            p -= dims[d].ostride * dims[d].ext;
            idx[d] = 0;
        }
        if (d < 0)
            return;
    }
}

/* Merges the sample's dimensions (dropping extents of 1); returns the count (>= 1). */
static int merge_dims(int nd, const int64_t *sh, const bool *red, mdim *out)
{
    int m = 0;
    for (int d = 0; d < nd; d++) {
        if (sh[d] == 1)
            continue;
        if (m > 0 && out[m - 1].red == red[d])
            out[m - 1].ext *= sh[d];
        else
            out[m++] = (mdim){.ext = sh[d], .red = red[d]};
    }
    if (m == 0)
        out[m++] = (mdim){.ext = 1, .red = true};
    int64_t stride = 1;
    for (int d = m - 1; d >= 0; d--) {
        out[d].ostride = out[d].red ? 0 : stride;
        stride *= out[d].red ? 1 : out[d].ext;
    }
    return m;
}

/* Accumulators -> results, in place (doubles), for the kinds that divide. */
static sl_status finish(sl_ctx *ctx, const fold *f, int64_t P, int64_t N, int i)
{
    double *a = f->acc_buf;
    if ((f->kind == SL__RED_MIN || f->kind == SL__RED_MAX) && N == 0 && P > 0)
        return sl_fail(ctx, SL_EINVAL,
                       "%s of an empty set: sample %d has no elements along the reduced axes",
                       kind_names[f->kind], i);
    if (f->acc != ACC_F64 || f->kind == SL__RED_SUM || f->kind == SL__RED_MIN ||
        f->kind == SL__RED_MAX)
        return SL_OK;
    double div = (double)N;
    if (has_mean(f->kind)) {
        int64_t ddof = sl_ctx_arg_int(ctx, SL__RED_A_EXTRA, i);
        div = N - ddof > 0 ? (double)(N - ddof) : 0.0;
    }
    const bool root = f->kind == SL__RED_RMS || f->kind == SL__RED_STD_DEV;
    for (int64_t p = 0; p < P; p++) {
        double r = a[p] / div; /* 0 / 0: NaN (NumPy's mean of nothing) */
        a[p] = root ? sqrt(r) : r;
    }
    return SL_OK;
}

/* Integer sum accumulators (64-bit) -> the output type, wrapping. */
static void store_wrapped(void *dst, sl_dtype t, const uint64_t *a, int64_t P)
{
    for (int64_t p = 0; p < P; p++) {
        switch (t) {
        case SL_DTYPE_UINT8: ((uint8_t *)dst)[p] = (uint8_t)a[p]; break;
        case SL_DTYPE_UINT16: ((uint16_t *)dst)[p] = (uint16_t)a[p]; break;
        case SL_DTYPE_UINT32: ((uint32_t *)dst)[p] = (uint32_t)a[p]; break;
        case SL_DTYPE_INT8: ((int8_t *)dst)[p] = (int8_t)(uint8_t)a[p]; break;
        case SL_DTYPE_INT16: ((int16_t *)dst)[p] = (int16_t)(uint16_t)a[p]; break;
        case SL_DTYPE_INT32: ((int32_t *)dst)[p] = (int32_t)(uint32_t)a[p]; break;
        default: ((uint64_t *)dst)[p] = a[p]; break; /* uint64, int64: same bits */
        }
    }
}

/* std_dev / variance: the mean of sample i as P doubles (or 1, broadcast) into *mean. */
static sl_status read_mean(sl_ctx *ctx, int i, int64_t P, fold *f)
{
    const sl_batch *mb = sl_ctx_input(ctx, 1);
    if (i >= sl_batch_size(mb))
        return sl_fail(ctx, SL_EINVAL, "the mean input has %d samples, the data %d",
                       sl_batch_size(mb), sl_ctx_batch_size(ctx));
    const int64_t mn = sl_batch_sample_numel(mb, i);
    if (mn != P && mn != 1)
        return sl_fail(ctx, SL_EINVAL,
                       "the mean of sample %d has %lld values; the reduction has %lld (or give "
                       "one value)",
                       i, (long long)mn, (long long)P);
    double *m = sl_ctx_scratch_n(ctx, 1, (size_t)(mn > 0 ? mn : 1) * sizeof(double));
    if (!m)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for the mean of sample %d", i);
    sl__convert_get(SL_DTYPE_FLOAT64, sl_batch_dtype(mb))(m, sl_batch_sample_data(mb, i), mn);
    f->mean = m;
    f->mean_stride = mn == 1 ? 0 : 1;
    return SL_OK;
}

sl_status sl__red_run_sample(sl_ctx *ctx, sl__red_kind kind, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in);
    const int64_t *sh = sl_batch_shape(in, i);
    const sl_dtype it = sl_batch_dtype(in), ot = out_type(ctx, kind, it);
    bool red[SL_MAX_NDIM + 1];
    if (reduced_axes(ctx, nd, sl_batch_layout(in), red) < 0)
        return SL_EINVAL;
    int64_t P = 1, N = 1, numel = sl_batch_sample_numel(in, i);
    for (int d = 0; d < nd; d++)
        *(red[d] ? &N : &P) *= sh[d];

    fold f = {.kind = kind, .acc = acc_of(kind, it, ot), .esize = sl_dtype_size(it)};
    f.load = sl__convert_get(f.acc == ACC_F64   ? SL_DTYPE_FLOAT64
                             : f.acc == ACC_I64 ? SL_DTYPE_INT64
                                                : SL_DTYPE_UINT64,
                             it);
    f.acc_buf = sl_ctx_scratch(ctx, (size_t)(P > 0 ? P : 1) * 8);
    if (!f.acc_buf)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %lld accumulators", (long long)P);
    if (has_mean(kind)) {
        sl_status s = read_mean(ctx, i, P, &f);
        if (s != SL_OK)
            return s;
    }
    acc_init(&f, P);
    if (numel > 0) {
        mdim dims[SL_MAX_NDIM + 1];
        int m = merge_dims(nd, sh, red, dims);
        walk(&f, sl_batch_sample_data(in, i), dims, m);
    }
    sl_status s = finish(ctx, &f, P, N, i);
    if (s != SL_OK || P == 0)
        return s;
    void *out = sl_ctx_output_data(ctx, 0, i);
    if (kind == SL__RED_SUM && f.acc != ACC_F64)
        store_wrapped(out, ot, f.acc_buf, P);
    else
        sl__convert_get(ot, f.acc == ACC_F64   ? SL_DTYPE_FLOAT64
                            : f.acc == ACC_I64 ? SL_DTYPE_INT64
                                               : SL_DTYPE_UINT64)(out, f.acc_buf, P);
    return SL_OK;
}

/* ---- GPU ---------------------------------------------------------------------------------- */

#ifdef SLUICE_HAVE_CUDA
/* Plans sample i's job (reduce.h's sl__red_gjob) from its shape: kept and reduced runs with
 * their input strides; *part advances past its partials. */
static void plan_gpu(sl__red_gjob *j, int nd, const int64_t *sh, const bool *red, int64_t *part)
{
    int64_t ext[SL_MAX_NDIM + 1], stride[SL_MAX_NDIM + 1], st = 1;
    bool kind[SL_MAX_NDIM + 1];
    int m = 0;
    /* runs from the back: a dimension joins the run after it when both are kept or both
     * reduced (its stride is that run's stride times its extent: dense C order) */
    for (int d = nd - 1; d >= 0; d--) {
        if (sh[d] != 1) {
            if (m > 0 && kind[m - 1] == red[d]) {
                ext[m - 1] *= sh[d];
            } else {
                ext[m] = sh[d];
                stride[m] = st;
                kind[m++] = red[d];
            }
        }
        st *= sh[d];
    }
    j->nk = j->nr = 0;
    j->P = j->N = 1;
    for (int k = m - 1; k >= 0; k--) { /* back to C order */
        if (kind[k]) {
            j->rext[j->nr] = ext[k];
            j->rstride[j->nr++] = stride[k];
            j->N *= ext[k];
        } else {
            j->kext[j->nk] = ext[k];
            j->kstride[j->nk++] = stride[k];
            j->P *= ext[k];
        }
    }
    j->C = sl__red_gchunks(j->P, j->N);
    j->part = *part;
    *part += j->P * j->C;
}

sl_status sl__red_run_gpu(sl_ctx *ctx, sl__red_kind kind)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const sl_batch *mb = has_mean(kind) ? sl_ctx_input(ctx, 1) : NULL;
    const int nd = sl_batch_ndim(in), n = sl_ctx_batch_size(ctx);
    const sl_dtype it = sl_batch_dtype(in), ot = out_type(ctx, kind, it);
    const acc_kind acc = acc_of(kind, it, ot);
    bool red[SL_MAX_NDIM + 1];
    if (reduced_axes(ctx, nd, sl_batch_layout(in), red) < 0)
        return SL_EINVAL;
    sl__red_gjob *jobs = sl_ctx_scratch(ctx, sizeof(sl__red_gjob) * (size_t)(n > 0 ? n : 1));
    if (!jobs)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    int64_t nparts = 0;
    for (int i = 0; i < n; i++) {
        sl__red_gjob *j = &jobs[i];
        memset(j, 0, sizeof *j);
        plan_gpu(j, nd, sl_batch_shape(in, i), red, &nparts);
        sl_ctx_focus_sample(ctx, i); /* errors name the sample, as run_sample's */
        if ((kind == SL__RED_MIN || kind == SL__RED_MAX) && j->N == 0 && j->P > 0)
            return sl_fail(ctx, SL_EINVAL,
                           "%s of an empty set: sample %d has no elements along the reduced axes",
                           kind_names[kind], i);
        if (mb) {
            if (i >= sl_batch_size(mb))
                return sl_fail(ctx, SL_EINVAL, "the mean input has %d samples, the data %d",
                               sl_batch_size(mb), n);
            const int64_t mn = sl_batch_sample_numel(mb, i);
            if (mn != j->P && mn != 1)
                return sl_fail(ctx, SL_EINVAL,
                               "the mean of sample %d has %lld values; the reduction has %lld (or "
                               "give one value)",
                               i, (long long)mn, (long long)j->P);
            j->mean = sl_batch_sample_data(mb, i);
            j->mean_step = mn == 1 ? 0 : 1;
        }
        j->div = (double)j->N;
        if (has_mean(kind)) {
            int64_t ddof = sl_ctx_arg_int(ctx, SL__RED_A_EXTRA, i);
            j->div = j->N - ddof > 0 ? (double)(j->N - ddof) : 0.0;
        }
        j->in = sl_batch_sample_data(in, i);
        j->out = j->P > 0 ? sl_ctx_output_data(ctx, 0, i) : NULL;
    }
    sl_ctx_focus_sample(ctx, -1);
    return sl__red_gpu_launch(ctx, jobs, n, kind, (int)acc, it, ot,
                              mb ? sl_batch_dtype(mb) : SL_DTYPE_FLOAT64, nparts);
}
#endif
