/* normalize: out = (in - mean) * scale / sqrt(stddev^2 + epsilon) + shift, with mean and
 * stddev given or computed over chosen axes per sample or over the whole batch (DALI's
 * fn.normalize).
 *
 * Exports: const sl_op_def sl_op_normalize ("normalize", CPU, GPU).
 *
 * Reduced axes: `axes` / `axis_names`, default all. Statistics have one value per element of
 * the non-reduced axes (P values; P = 1 for a full reduction), laid out in C order.
 *   mean     given: 1 value (broadcast) or P values; else the average over the reduced axes
 *            (per sample, or over all samples with batch=True)
 *   stddev   given: factor = scale / sqrt(stddev^2 + epsilon) (epsilon 0: scale / stddev, 0
 *            when stddev is 0); else the variance sum((x - mean)^2) / (N - ddof) over the N
 *            reduced elements, factor = scale / sqrt(var + epsilon), and 0 when var + epsilon
 *            is 0 or N <= ddof without epsilon (DALI's ScaleRSqrtKeepZero)
 *   output   (x - mean) * factor + shift in float32, converted to dtype (integers: rounded,
 *            halves away from zero, saturated)
 * Statistics are accumulated in double (DALI: float32 with pairwise sums), so results agree
 * with a float64 reference to float32 precision.
 * GPU (normalize.cu, host part in run_gpu below): the same statistics, given ones prepared on
 * the host, computed ones reduced on the device (setup then reads no data, even with batch=True).
 * Invariant: per-sample statistics live in the worker's scratch during run_sample; batch
 * statistics are computed once in setup into the iteration data (at most STATS_PER_SAMPLE mean /
 * factor pairs per sample of the batch), which run_sample only reads.
 */
#include <math.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/normalize_gpu.h"
#include "ops/tensor/tensor.h"

enum {
    A_MEAN,
    A_STDDEV,
    A_AXES,
    A_AXIS_NAMES,
    A_BATCH,
    A_SCALE,
    A_SHIFT,
    A_EPSILON,
    A_DDOF,
    A_DTYPE,
    NUM_ARGS
};

static const sl_arg_def args[NUM_ARGS] = {
    [A_MEAN] = {.name = "mean",
                .type = SL_ARG_FLOATS,
                .doc = "Mean to subtract: one value, or one per element of the non-reduced axes "
                       "(C order). Unset: computed from the data.",
                .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR | SL_ARG_SCALAR_OK},
    [A_STDDEV] = {.name = "stddev",
                  .type = SL_ARG_FLOATS,
                  .doc = "Standard deviation to divide by: one value, or one per element of the "
                         "non-reduced axes. Unset: computed from the data.",
                  .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR | SL_ARG_SCALAR_OK},
    [A_AXES] = {.name = "axes",
                .type = SL_ARG_INTS,
                .doc = "Reduced axes (indices; negative from the back). Unset or empty (and no "
                       "axis_names): all axes.",
                .flags = SL_ARG_OPTIONAL,
                .max_len = SL_MAX_NDIM},
    [A_AXIS_NAMES] = {.name = "axis_names",
                      .type = SL_ARG_STRING,
                      .doc = "Reduced axes by layout letter (\"HW\": per-channel statistics of "
                             "HWC images). Exclusive with axes.",
                      .flags = SL_ARG_OPTIONAL},
    [A_BATCH] = {.name = "batch",
                 .type = SL_ARG_BOOL,
                 .def = "false",
                 .doc = "Compute mean and stddev over the whole batch (the non-reduced extents "
                        "must then agree across samples)."},
    [A_SCALE] = {.name = "scale",
                 .type = SL_ARG_FLOAT,
                 .def = "1.0",
                 .doc = "Multiplies the normalised value (useful for integer outputs)."},
    [A_SHIFT] = {.name = "shift",
                 .type = SL_ARG_FLOAT,
                 .def = "0.0",
                 .doc = "Added last: the value the mean maps to."},
    [A_EPSILON] = {.name = "epsilon",
                   .type = SL_ARG_FLOAT,
                   .def = "0.0",
                   .doc = "Added to the variance before the square root."},
    [A_DDOF] = {.name = "ddof",
                .type = SL_ARG_INT,
                .def = "0",
                .doc = "Delta degrees of freedom: the variance divides by N - ddof. Ignored "
                       "when stddev is given.",
                .flags = SL_ARG_RANGE,
                .min = 0,
                .max = 1e9},
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .def = "\"float32\"",
                 .doc = "Output type; integer outputs are rounded and saturated."},
};

static const sl_io_def inputs[] = {{"input", "Numeric data (not bool), any shape and layout."}};
static const sl_io_def outputs[] = {{"output", "The normalised data, same shape and layout."}};

#define STATS_PER_SAMPLE 128 /* batch mode: mean / factor pairs kept per sample of the batch */
#define CHUNK 1024           /* elements converted at a time */

static sl_status normalize_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    sl_dtype t = sl_init_arg_dtype(ini, A_DTYPE);
    if (t == SL_DTYPE_BOOL)
        return sl_init_fail(ini, SL_EUNSUPPORTED, "dtype bool is not supported");
    if (sl_init_arg_is_set(ini, A_AXES) && sl_init_arg_is_set(ini, A_AXIS_NAMES))
        return sl_init_fail(ini, SL_EINVAL, "axes and axis_names are exclusive: give one of them");
    for (int a = A_MEAN; a <= A_STDDEV && sl_init_arg_bool(ini, A_BATCH); a++) {
        int n = 0;
        if (sl_init_arg_is_set(ini, a) &&
            (sl_init_arg_is_input(ini, a) || (sl_init_arg_floats(ini, a, &n), n != 1)))
            return sl_init_fail(ini, SL_EINVAL,
                                "Non-scalar %s cannot be used when `batch` argument is True: "
                                "give one constant value",
                                args[a].name);
    }
    return SL_OK;
}

/* ---- walking elements with their statistic index ------------------------------------------- */

/* A sample's dimensions merged into runs of reduced / kept axes. Element strides are C order;
 * pstride is the stride of the statistic index (0 along reduced axes). */
typedef struct pwalk {
    int n;
    int64_t shape[SL_MAX_NDIM], estride[SL_MAX_NDIM], pstride[SL_MAX_NDIM];
    int64_t P; /* statistics (product of kept extents) */
    int64_t N; /* reduced elements per statistic */
} pwalk;

static void pwalk_init(pwalk *w, int ndim, const int64_t *shape, const bool *reduced)
{
    int64_t ps = 1, es = 1;
    w->n = 0;
    w->P = 1;
    w->N = 1;
    for (int d = ndim - 1; d >= 0; d--) { /* build from the innermost axis, merging alike */
        int64_t p = reduced[d] ? 0 : ps;
        if (w->n > 0 && (p == 0) == (w->pstride[w->n - 1] == 0)) {
            w->shape[w->n - 1] *= shape[d];
        } else {
            w->shape[w->n] = shape[d];
            w->estride[w->n] = es;
            w->pstride[w->n++] = p;
        }
        es *= shape[d];
        if (reduced[d])
            w->N *= shape[d];
        else
            ps *= shape[d], w->P *= shape[d];
    }
    for (int a = 0, b = w->n - 1; a < b; a++, b--) { /* outermost first */
        int64_t t;
        t = w->shape[a], w->shape[a] = w->shape[b], w->shape[b] = t;
        t = w->estride[a], w->estride[a] = w->estride[b], w->estride[b] = t;
        t = w->pstride[a], w->pstride[a] = w->pstride[b], w->pstride[b] = t;
    }
    if (w->n == 0) { /* a scalar */
        w->n = 1;
        w->shape[0] = 1, w->estride[0] = 1, w->pstride[0] = 0;
    }
}

/* Called on runs of `count` elements starting at element `e` whose statistic index starts at p
 * and advances by pstep (0 or 1) per element. */
typedef void (*pvisit)(void *u, int64_t e, int64_t count, int64_t p, int64_t pstep);

static void pwalk_run(const pwalk *w, int d, int64_t e, int64_t p, pvisit f, void *u)
{
    if (d == w->n - 1) {
        for (int64_t k = 0; k < w->shape[d]; k += CHUNK) {
            int64_t m = w->shape[d] - k < CHUNK ? w->shape[d] - k : CHUNK;
            f(u, e + k, m, p + (w->pstride[d] ? k : 0), w->pstride[d] ? 1 : 0);
        }
        return;
    }
    for (int64_t i = 0; i < w->shape[d]; i++)
        pwalk_run(w, d + 1, e + i * w->estride[d], p + i * w->pstride[d], f, u);
}

/* ---- statistics -------------------------------------------------------------------------------
 */

typedef struct stat_job {
    const unsigned char *data;
    size_t es;
    sl__convert_fn to_double;
    const float *mean; /* NULL: sum x; else sum (x - mean[p])^2 */
    double *acc;       /* P sums */
    double buf[CHUNK];
} stat_job;

static void stat_visit(void *u, int64_t e, int64_t count, int64_t p, int64_t pstep)
{
    stat_job *j = u;
    j->to_double(j->buf, j->data + (size_t)e * j->es, count);
    if (j->mean) {
        for (int64_t k = 0; k < count; k++) {
            double x = j->buf[k] - j->mean[p + k * pstep];
            j->acc[p + k * pstep] += x * x;
        }
    } else {
        for (int64_t k = 0; k < count; k++)
            j->acc[p + k * pstep] += j->buf[k];
    }
}

/* Adds sample i's sums (or squared deviations from mean) into acc[P]. */
static void accumulate(const sl_batch *in, int i, const pwalk *w, const float *mean, double *acc,
                       stat_job *j)
{
    j->data = sl_batch_sample_data(in, i);
    j->es = sl_dtype_size(sl_batch_dtype(in));
    j->to_double = sl__convert_get(SL_DTYPE_FLOAT64, sl_batch_dtype(in));
    j->mean = mean;
    j->acc = acc;
    pwalk_run(w, 0, 0, 0, stat_visit, j);
}

static float factor_from_std(double sd, double eps, double scale)
{
    if (eps != 0)
        return (float)(scale / sqrt(sd * sd + eps));
    return sd != 0 ? (float)(scale / sd) : 0.0f;
}

/* Reads given list argument `arg` of sample i into out[P] (1 value broadcast). */
static sl_status read_given(sl_ctx *ctx, int arg, int i, int64_t P, float *out, double *tmp)
{
    int n = sl_ctx_arg_floats(ctx, arg, i, NULL, 0);
    if (n != 1 && n != P)
        return sl_fail(ctx, SL_EINVAL,
                       "%s has %d values; expected 1 or %lld (one per element of the non-reduced "
                       "axes; axes / axis_names choose the reduced ones)",
                       args[arg].name, n, (long long)P);
    if (n == 1) {
        sl_ctx_arg_floats(ctx, arg, i, tmp, 1);
        for (int64_t p = 0; p < P; p++)
            out[p] = (float)tmp[0];
        return SL_OK;
    }
    sl_ctx_arg_floats(ctx, arg, i, tmp, n);
    for (int64_t p = 0; p < P; p++)
        out[p] = (float)tmp[p];
    return SL_OK;
}

/* The statistics given as arguments (values of sample si): mean[P] when `mean` is set, factor[P]
 * when `stddev` is; the others are left alone. tmp holds P doubles. */
static sl_status given_stats(sl_ctx *ctx, int si, int64_t P, float *mean, float *factor,
                             double *tmp)
{
    const double scale = sl_ctx_arg_float(ctx, A_SCALE, si),
                 eps = sl_ctx_arg_float(ctx, A_EPSILON, si);
    sl_status st;
    if (sl_ctx_arg_is_set(ctx, A_MEAN) && (st = read_given(ctx, A_MEAN, si, P, mean, tmp)) != SL_OK)
        return st;
    if (!sl_ctx_arg_is_set(ctx, A_STDDEV))
        return SL_OK;
    if ((st = read_given(ctx, A_STDDEV, si, P, factor, tmp)) != SL_OK)
        return st;
    for (int64_t p = 0; p < P; p++)
        factor[p] = factor_from_std(factor[p], eps, scale);
    return SL_OK;
}

/* Reduced-axis flags for the input, from axes / axis_names. */
static sl_status reduced_axes(sl_ctx *ctx, const sl_batch *in, bool *reduced)
{
    int axes[SL_MAX_NDIM], ndim = sl_batch_ndim(in);
    int n = sl__axes_get(ctx, A_AXES, A_AXIS_NAMES, ndim, sl_batch_layout(in), axes);
    if (n < 0)
        return SL_EINVAL;
    memset(reduced, 0, sizeof(bool) * SL_MAX_NDIM);
    for (int k = 0; k < n; k++)
        reduced[axes[k]] = true;
    return SL_OK;
}

/* Statistics (mean[P], factor[P]) of sample i, or of the whole batch when i < 0. scratch holds
 * 2 * P doubles and the stat job. */
static sl_status compute_stats(sl_ctx *ctx, int i, const bool *reduced, int64_t P, float *mean,
                               float *factor, double *scratch)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int first = i < 0 ? 0 : i, last = i < 0 ? sl_ctx_batch_size(ctx) : i + 1;
    const int si = i < 0 ? 0 : i; /* sample whose argument values apply */
    double *acc = scratch;
    stat_job *j = (stat_job *)(scratch + 2 * P);
    int64_t N = 0;
    pwalk w;
    sl_status st = given_stats(ctx, si, P, mean, factor, acc);
    if (st != SL_OK)
        return st;
    if (!sl_ctx_arg_is_set(ctx, A_MEAN)) {
        memset(acc, 0, sizeof(double) * (size_t)P);
        for (int s = first; s < last; s++) {
            pwalk_init(&w, sl_batch_ndim(in), sl_batch_shape(in, s), reduced);
            accumulate(in, s, &w, NULL, acc, j);
            N += w.N;
        }
        for (int64_t p = 0; p < P; p++)
            mean[p] = N > 0 ? (float)(acc[p] / (double)N) : 0.0f;
    }
    if (sl_ctx_arg_is_set(ctx, A_STDDEV))
        return SL_OK;
    memset(acc, 0, sizeof(double) * (size_t)P);
    N = 0;
    for (int s = first; s < last; s++) {
        pwalk_init(&w, sl_batch_ndim(in), sl_batch_shape(in, s), reduced);
        accumulate(in, s, &w, mean, acc, j);
        N += w.N;
    }
    const int64_t ddof = sl_ctx_arg_int(ctx, A_DDOF, si);
    const double scale = sl_ctx_arg_float(ctx, A_SCALE, si),
                 eps = sl_ctx_arg_float(ctx, A_EPSILON, si);
    for (int64_t p = 0; p < P; p++)
        factor[p] = sl__norm_factor(acc[p], N, ddof, eps, scale);
    return SL_OK;
}

static size_t stats_scratch_bytes(int64_t P)
{
    return sizeof(double) * 2 * (size_t)P + sizeof(stat_job);
}

/* ---- setup --------------------------------------------------------------------------------------
 */

/* Statistics count P of sample i (product of the kept extents). */
static int64_t stat_count(const sl_batch *in, int i, const bool *reduced)
{
    int64_t P = 1;
    for (int d = 0; d < sl_batch_ndim(in); d++)
        if (!reduced[d])
            P *= sl_batch_shape(in, i)[d];
    return P;
}

/* batch=True: checks the kept extents agree and computes the statistics into the iteration
 * data: mean[P] then factor[P]. */
static sl_status setup_batch(sl_ctx *ctx, const sl_batch *in, const bool *reduced)
{
    const int nb = sl_ctx_batch_size(ctx);
    for (int i = 1; i < nb; i++)
        for (int d = 0; d < sl_batch_ndim(in); d++)
            if (!reduced[d] && sl_batch_shape(in, i)[d] != sl_batch_shape(in, 0)[d])
                return sl_fail(ctx, SL_EINVAL,
                               "batch=True requires that the input sample shapes in the "
                               "non-averaged axes match: axis %d is %lld in sample 0 and %lld in "
                               "sample %d",
                               d, (long long)sl_batch_shape(in, 0)[d],
                               (long long)sl_batch_shape(in, i)[d], i);
    int64_t P = stat_count(in, 0, reduced);
    if (P > (int64_t)STATS_PER_SAMPLE * nb)
        return sl_fail(ctx, SL_EUNSUPPORTED,
                       "batch=True supports at most %d statistics per sample of the batch (%lld "
                       "here); reduce more axes",
                       STATS_PER_SAMPLE, (long long)P);
    if (sl_batch_device(in) == SL_DEVICE_GPU)
        return SL_OK; /* the gpu run computes the statistics on the device */
    double *scratch = sl_ctx_scratch(ctx, stats_scratch_bytes(P));
    if (!scratch)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %lld statistics", (long long)P);
    float *mean = sl_ctx_iter_data(ctx);
    return compute_stats(ctx, -1, reduced, P, mean, mean + P, scratch);
}

static sl_status normalize_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    bool reduced[SL_MAX_NDIM];
    if (sl_batch_dtype(in) == SL_DTYPE_BOOL)
        return sl_fail(ctx, SL_EUNSUPPORTED, "input type bool is not supported");
    sl_status st = reduced_axes(ctx, in, reduced);
    if (st != SL_OK)
        return st;
    sl_ctx_set_output(ctx, 0, sl_ctx_arg_dtype(ctx, A_DTYPE), sl_batch_ndim(in),
                      sl_batch_layout(in));
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(in, i));
    if (sl_ctx_batch_size(ctx) > 0 && sl_ctx_arg_bool(ctx, A_BATCH, 0))
        return setup_batch(ctx, in, reduced); /* an empty batch (a conditional's) has none */
    return SL_OK;
}

/* ---- run
 * ------------------------------------------------------------------------------------------ */

typedef struct apply_job {
    const unsigned char *in;
    unsigned char *out;
    size_t ies, oes;
    sl__convert_fn to_float, from_float;
    const float *mean, *factor;
    float shift;
    float buf[CHUNK];
} apply_job;

static void apply_visit(void *u, int64_t e, int64_t count, int64_t p, int64_t pstep)
{
    apply_job *j = u;
    float *restrict b = j->buf;
    j->to_float(b, j->in + (size_t)e * j->ies, count);
    if (pstep == 0) {
        const float m = j->mean[p], k = j->factor[p], s = j->shift;
        for (int64_t q = 0; q < count; q++)
            b[q] = (b[q] - m) * k + s;
    } else {
        const float *restrict m = j->mean + p, *restrict k = j->factor + p;
        for (int64_t q = 0; q < count; q++)
            b[q] = (b[q] - m[q]) * k[q] + j->shift;
    }
    j->from_float(j->out + (size_t)e * j->oes, b, count);
}

static sl_status normalize_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const sl_dtype ot = sl_ctx_arg_dtype(ctx, A_DTYPE);
    bool reduced[SL_MAX_NDIM];
    pwalk w;
    reduced_axes(ctx, in, reduced); /* checked in setup */
    pwalk_init(&w, sl_batch_ndim(in), sl_batch_shape(in, i), reduced);
    if (sl_batch_sample_numel(in, i) == 0)
        return SL_OK;

    const bool batch = sl_ctx_arg_bool(ctx, A_BATCH, 0);
    size_t bytes = sizeof(apply_job) +
                   (batch ? 0 : sizeof(float) * 2 * (size_t)w.P + stats_scratch_bytes(w.P));
    unsigned char *scratch = sl_ctx_scratch(ctx, bytes);
    if (!scratch)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %lld statistics", (long long)w.P);
    apply_job *j = (apply_job *)scratch;
    if (batch) {
        j->mean = sl_ctx_iter_data(ctx);
        j->factor = j->mean + w.P;
    } else {
        float *mean = (float *)(j + 1), *factor = mean + w.P;
        sl_status st = compute_stats(ctx, i, reduced, w.P, mean, factor, (double *)(factor + w.P));
        if (st != SL_OK)
            return st;
        j->mean = mean;
        j->factor = factor;
    }
    j->in = sl_batch_sample_data(in, i);
    j->out = sl_ctx_output_data(ctx, 0, i);
    j->ies = sl_dtype_size(sl_batch_dtype(in));
    j->oes = sl_dtype_size(ot);
    j->to_float = sl__convert_get(SL_DTYPE_FLOAT32, sl_batch_dtype(in));
    j->from_float = sl__convert_get(ot, SL_DTYPE_FLOAT32);
    j->shift = (float)sl_ctx_arg_float(ctx, A_SHIFT, i);
    pwalk_run(&w, 0, 0, 0, apply_visit, j);
    return SL_OK;
}

/* ---- run_gpu (host part; kernels in normalize.cu) ------------------------------------------ */

#ifdef SLUICE_HAVE_CUDA
/* Partial sums per statistic for N reduced elements: about 64 elements each, at most 1024. */
static int64_t partials_for(int64_t N)
{
    int64_t T = (N + 63) / 64;
    return T < 1 ? 1 : T > 1024 ? 1024 : T;
}

/* Sample i's pointers and merged dimensions. */
static void gpu_sample(sl_ctx *ctx, const sl_batch *in, int i, const bool *reduced,
                       sl__norm_gsample *g)
{
    pwalk w;
    pwalk_init(&w, sl_batch_ndim(in), sl_batch_shape(in, i), reduced);
    memset(g, 0, sizeof *g);
    g->in = sl_batch_sample_data(in, i);
    g->out = sl_ctx_output_data(ctx, 0, i);
    g->numel = sl_batch_sample_numel(in, i);
    g->n = w.n;
    for (int d = 0; d < w.n; d++) {
        g->shape[d] = w.shape[d];
        g->estride[d] = w.estride[d];
        g->pstride[d] = w.pstride[d];
    }
    g->P = w.P;
    g->N = w.N;
    g->shift = (float)sl_ctx_arg_float(ctx, A_SHIFT, i);
}

/* The statistics set of sample i (per-sample mode) or of the batch (set 0, i = -1). */
static void gpu_set(sl_ctx *ctx, int i, int n, int64_t P, int64_t stats, sl__norm_gset *set)
{
    const int si = i < 0 ? 0 : i;
    set->P = P;
    set->stats = stats;
    set->first = i < 0 ? 0 : i;
    set->last = i < 0 ? n : i + 1;
    set->ddof = sl_ctx_arg_int(ctx, A_DDOF, si);
    set->eps = sl_ctx_arg_float(ctx, A_EPSILON, si);
    set->scale = sl_ctx_arg_float(ctx, A_SCALE, si);
}

/* Samples, sets and the sizes of the job (no data is read). */
static void gpu_plan(sl_ctx *ctx, const bool *reduced, bool batch, sl__norm_gsample *g,
                     sl__norm_gset *sets, sl__norm_gjob *job)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx);
    for (int i = 0; i < n; i++) {
        gpu_sample(ctx, in, i, reduced, &g[i]);
        if (g[i].numel == 0 && !batch) { /* nothing to do, no statistics (as run_sample) */
            memset(&sets[i], 0, sizeof sets[i]);
            continue;
        }
        if (!batch || i == 0) {
            gpu_set(ctx, batch ? -1 : i, n, g[i].P, job->nstats, &sets[batch ? 0 : i]);
            job->nstats += 2 * g[i].P;
        }
        g[i].stats = sets[batch ? 0 : i].stats;
        g[i].T = g[i].numel > 0 && (job->mean || job->var) ? partials_for(g[i].N) : 0;
        g[i].part = job->nparts;
        job->nparts += g[i].P * g[i].T;
        job->max_numel = g[i].numel > job->max_numel ? g[i].numel : job->max_numel;
        job->max_parts = g[i].P * g[i].T > job->max_parts ? g[i].P * g[i].T : job->max_parts;
        job->max_P = g[i].P > job->max_P ? g[i].P : job->max_P;
    }
}

/* Everything per sample is planned here from shapes and arguments; statistics that are not
 * given are reduced on the device (normalize.cu), never read back. */
static sl_status normalize_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx);
    const bool batch = sl_ctx_arg_bool(ctx, A_BATCH, 0);
    bool reduced[SL_MAX_NDIM];
    if (n <= 0)
        return SL_OK;
    reduced_axes(ctx, in, reduced); /* checked in setup */
    sl__norm_gjob job = {.in = sl_batch_dtype(in),
                         .out = sl_ctx_arg_dtype(ctx, A_DTYPE),
                         .mean = !sl_ctx_arg_is_set(ctx, A_MEAN),
                         .var = !sl_ctx_arg_is_set(ctx, A_STDDEV),
                         .nsets = batch ? 1 : n};
    sl__norm_gsample *g = sl_ctx_scratch_n(ctx, 0, sizeof(*g) * (size_t)n);
    sl__norm_gset *sets = sl_ctx_scratch_n(ctx, 1, sizeof(*sets) * (size_t)n);
    if (!g || !sets)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    memset(sets, 0, sizeof(*sets) * (size_t)n);
    gpu_plan(ctx, reduced, batch, g, sets, &job);
    float *stats = sl_ctx_scratch_n(ctx, 2, sizeof(float) * (size_t)(job.nstats + 1));
    double *tmp = sl_ctx_scratch_n(ctx, 3, sizeof(double) * (size_t)(job.max_P + 1));
    if (!stats || !tmp)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %lld statistics", (long long)job.nstats);
    for (int k = 0; k < job.nsets; k++) {
        const sl__norm_gset *set = &sets[k];
        sl_status st;
        if ((batch || g[k].numel > 0) &&
            (st = given_stats(ctx, batch ? 0 : k, set->P, stats + set->stats,
                              stats + set->stats + set->P, tmp)) != SL_OK)
            return st;
    }
    return sl__norm_gpu_launch(ctx, &job, g, n, sets, stats);
}
#endif

const sl_op_def sl_op_normalize = {
    .name = "normalize",
    .doc = "Normalises data: (x - mean) / stddev * scale + shift, with statistics given or "
           "computed per sample or over the batch (DALI's normalize).\n\n"
           "Statistics are taken over the reduced axes (`axes` / `axis_names`, default all) and "
           "have one value per element of the other axes; `mean` and `stddev` may be given "
           "(one value, or one per statistic) or are computed, per sample or with `batch` over "
           "all samples. The divisor is sqrt(stddev^2 + epsilon) (or stddev when epsilon is 0), "
           "the computed variance divides by N - ddof, and a zero divisor gives a factor of 0 "
           "(output = shift), as DALI. Computed in float32 (statistics in double); integer "
           "outputs are rounded and saturated.\n\n"
           "On `device=\"gpu\"` given statistics are prepared on the host as on the CPU and "
           "the rest is computed on the device: reductions in double by partial sums, whose "
           "order of addition differs from the CPU's, so a computed mean or factor may differ "
           "in its last float32 bit (given statistics give identical results).\n\n"
           "Differs from DALI: given mean / stddev are flat lists (not tensors whose shape "
           "selects the reduced axes: use axes); with batch=True at most 128 statistics per "
           "sample of the batch.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .iter_bytes_per_sample = STATS_PER_SAMPLE * 2 * sizeof(float),
    .init = normalize_init,
    .setup = normalize_setup,
    .run_sample = normalize_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = normalize_run_gpu,
#endif
};
