/* random.choice: random picks from a list of values or from [0, n) (DALI's fn.random.choice).
 *
 * Exports: const sl_op_def sl_op_random_choice.
 *
 * Input `a`, per sample: a scalar n (integer type) picks from 0, 1, ..., n-1; a tensor picks
 * among its elements along the outermost dimension (a 1-D tensor: among its values; an N-D one:
 * among its (N-1)-D slices, copied whole). Each pick is an index k drawn from the sample's own
 * stream r = sl_ctx_rng(ctx, i), one draw per output element in order: uniform (sl_rng_below,
 * unbiased) without `p`, otherwise the first k whose cumulative probability exceeds
 * u * sum(p) for one 53-bit uniform u, so an element with p = 0 is never picked. The output has
 * the input's type and shape `shape` (+ the slice shape); without `shape` one pick per sample.
 * DALI's positional `shape_like` input is not supported (one input).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ops/random/rng_shape.h"
#include "sluice/batch.h"
#include "sluice/op.h"

enum { A_P, A_SHAPE, A_SEED, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_P] = {.name = "p",
             .type = SL_ARG_FLOATS,
             .doc = "Probability of each element of `a` (or of each value 0..n-1): one per "
                    "element, each in [0, 1], summing to 1 (within 1e-4, as DALI). Unset: "
                    "uniform.",
             .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR},
    [A_SHAPE] = {.name = "shape",
                 .type = SL_ARG_INTS,
                 .doc = "Shape of the picks of each sample (a slice's shape is appended for an "
                        "N-D `a`). Unset: one pick per sample.",
                 .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR,
                 .max_len = SL_MAX_NDIM},
    [A_SEED] = SL_ARG_SEED_DEF,
};

static const sl_io_def inputs[] = {
    {"a", "A scalar n of an integer type (pick from [0, n)), or a tensor whose elements along "
          "the outermost dimension are picked from (any type)."},
};
static const sl_io_def outputs[] = {
    {"output", "The picks, of the type of `a`; shape `shape` (+ the slice shape)."},
};

static bool is_int(sl_dtype t)
{
    return t >= SL_DTYPE_UINT8 && t <= SL_DTYPE_INT64;
}

/* Number of elements to pick from in sample i: the value of a scalar `a`, else its extent 0.
 * A scalar uint64 above INT64_MAX is capped (no sample can hold that many anyway). */
static int64_t num_choices(const sl_batch *a, int i)
{
    const void *d = sl_batch_sample_data(a, i);
    if (sl_batch_ndim(a) > 0)
        return sl_batch_shape(a, i)[0];
    switch (sl_batch_dtype(a)) {
    case SL_DTYPE_UINT8: return *(const uint8_t *)d;
    case SL_DTYPE_UINT16: return *(const uint16_t *)d;
    case SL_DTYPE_UINT32: return *(const uint32_t *)d;
    case SL_DTYPE_UINT64: {
        uint64_t v = *(const uint64_t *)d;
        return v > INT64_MAX ? INT64_MAX : (int64_t)v;
    }
    case SL_DTYPE_INT8: return *(const int8_t *)d;
    case SL_DTYPE_INT16: return *(const int16_t *)d;
    case SL_DTYPE_INT32: return *(const int32_t *)d;
    default: return *(const int64_t *)d;
    }
}

static int out_ndim(sl_ctx *ctx)
{
    int in = sl_batch_ndim(sl_ctx_input(ctx, 0));
    return sl__rng_shape_ndim(ctx, A_SHAPE) + (in > 0 ? in - 1 : 0);
}

static sl_status choice_setup(sl_ctx *ctx)
{
    const sl_batch *a = sl_ctx_input(ctx, 0);
    const int in = sl_batch_ndim(a), nd = out_ndim(ctx);
    const char *layout = sl_batch_layout(a);
    if (in == 0 && !is_int(sl_batch_dtype(a)))
        return sl_fail(ctx, SL_EINVAL,
                       "a scalar `a` must be of an integer type (the number of choices); got %s",
                       sl_dtype_name(sl_batch_dtype(a)));
    if (sl__rng_shape_ndim(ctx, A_SHAPE) > SL_MAX_NDIM || nd > SL_MAX_NDIM)
        return sl_fail(ctx, SL_EINVAL,
                       "the output would have %d dimensions; at most %d are "
                       "supported",
                       nd, SL_MAX_NDIM);
    /* DALI: the input's layout when the ndim is kept, its tail when one dimension is picked */
    if (!layout[0] || (nd != in && nd != in - 1))
        layout = NULL;
    else if (nd == in - 1)
        layout++;
    sl_ctx_set_output(ctx, 0, sl_batch_dtype(a), nd, layout && layout[0] ? layout : NULL);
    return SL_OK;
}

/* Checks p of sample i against n choices: length, range, sum. */
static sl_status check_p(sl_ctx *ctx, int i, int64_t n)
{
    int len = sl_ctx_arg_floats(ctx, A_P, i, NULL, 0);
    if (len != n)
        return sl_fail(ctx, SL_EINVAL, "p has %d values but `a` has %lld elements to choose from",
                       len, (long long)n);
    double *p = sl_ctx_scratch(ctx, sizeof(double) * (size_t)len);
    if (!p)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d probabilities", len);
    sl_ctx_arg_floats(ctx, A_P, i, p, len);
    double sum = 0;
    for (int k = 0; k < len; k++) {
        if (!(p[k] >= 0 && p[k] <= 1))
            return sl_fail(ctx, SL_EINVAL, "p[%d] is %g; probabilities must be in [0, 1]", k, p[k]);
        sum += p[k];
    }
    if (!(fabs(sum - 1.0) < 1e-4))
        return sl_fail(ctx, SL_EINVAL, "the probabilities p sum to %.9g; they must sum to 1", sum);
    return SL_OK;
}

static sl_status choice_setup_sample(sl_ctx *ctx, int i)
{
    const sl_batch *a = sl_ctx_input(ctx, 0);
    const int in = sl_batch_ndim(a), ns = sl__rng_shape_ndim(ctx, A_SHAPE);
    int64_t dims[SL_MAX_NDIM] = {0};
    sl_status st = sl__rng_shape_sample(ctx, A_SHAPE, i, ns, dims);
    if (st != SL_OK)
        return st;
    const int64_t n = num_choices(a, i);
    if (n <= 0)
        return sl_fail(ctx, SL_EINVAL, "`a` has %lld elements to choose from; it needs at least 1",
                       (long long)n);
    if (sl_ctx_arg_is_set(ctx, A_P) && (st = check_p(ctx, i, n)) != SL_OK)
        return st;
    for (int d = 1; d < in; d++)
        dims[ns + d - 1] = sl_batch_shape(a, i)[d];
    sl_ctx_set_shape(ctx, 0, i, dims);
    return SL_OK;
}

/* The first k with cdf[k] > u * cdf[n-1]; when rounding leaves none, the last k with a
 * non-zero probability. */
static int64_t pick(sl_rng *r, const double *cdf, int64_t n)
{
    const double x = sl_rng_uniform(r) * cdf[n - 1];
    int64_t lo = 0, hi = n; /* the answer is in [lo, hi) or hi = n: none */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] > x)
            hi = mid;
        else
            lo = mid + 1;
    }
    while (lo == n || (lo > 0 && cdf[lo] == cdf[lo - 1]))
        lo--;
    return lo;
}

/* The source of the picks of one sample: uniform, or by the cumulative p when cdf is set. */
typedef struct picker {
    sl_rng r;
    const double *cdf; /* n cumulative probabilities, or NULL */
    int64_t n;
} picker;

static inline int64_t next(picker *pk)
{
    return pk->cdf ? pick(&pk->r, pk->cdf, pk->n) : (int64_t)sl_rng_below(&pk->r, (uint64_t)pk->n);
}

#define STORE(T)                                                                                   \
    do {                                                                                           \
        T *o = out;                                                                                \
        for (int64_t j = 0; j < m; j++)                                                            \
            o[j] = (T)next(pk);                                                                    \
    } while (0)

/* A scalar `a`: the picks are the indices themselves, in a's type. */
static void store_indices(void *out, sl_dtype t, picker *pk, int64_t m)
{
    switch (t) {
    case SL_DTYPE_UINT8: STORE(uint8_t); break;
    case SL_DTYPE_UINT16: STORE(uint16_t); break;
    case SL_DTYPE_UINT32: STORE(uint32_t); break;
    case SL_DTYPE_UINT64: STORE(uint64_t); break;
    case SL_DTYPE_INT8: STORE(int8_t); break;
    case SL_DTYPE_INT16: STORE(int16_t); break;
    case SL_DTYPE_INT32: STORE(int32_t); break;
    default: STORE(int64_t); break;
    }
}

static sl_status choice_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *a = sl_ctx_input(ctx, 0);
    const int64_t m = sl__rng_shape_numel(ctx, A_SHAPE, i);
    picker pk = {.r = sl_ctx_rng(ctx, i), .cdf = NULL, .n = num_choices(a, i)};
    if (sl_ctx_arg_is_set(ctx, A_P)) {
        double *cdf = sl_ctx_scratch(ctx, sizeof(double) * (size_t)pk.n);
        if (!cdf)
            return sl_fail(ctx, SL_ENOMEM, "out of memory for %lld probabilities", (long long)pk.n);
        sl_ctx_arg_floats(ctx, A_P, i, cdf, (int)pk.n);
        for (int64_t k = 1; k < pk.n; k++)
            cdf[k] += cdf[k - 1];
        pk.cdf = cdf;
    }
    void *out = sl_ctx_output_data(ctx, 0, i);
    if (sl_batch_ndim(a) == 0) {
        store_indices(out, sl_batch_dtype(a), &pk, m);
        return SL_OK;
    }
    /* picks of (N-1)-D slices of `a`, copied whole */
    const size_t slice =
        sl_dtype_size(sl_batch_dtype(a)) * (size_t)(sl_batch_sample_numel(a, i) / pk.n);
    const uint8_t *src = sl_batch_sample_data(a, i);
    for (int64_t j = 0; j < m; j++)
        memcpy((uint8_t *)out + (size_t)j * slice, src + (size_t)next(&pk) * slice, slice);
    return SL_OK;
}

const sl_op_def sl_op_random_choice = {
    .name = "random.choice",
    .doc = "Random picks from the values of `a`, or from 0..n-1 for a scalar n (DALI's "
           "random.choice).\n\n"
           "A scalar `a` (integer type) picks from [0, a); a 1-D `a` picks among its values, "
           "an N-D one among its slices along the first dimension. `p` gives each element's "
           "probability (one per element, each in [0, 1], summing to 1 within 1e-4; an element "
           "with p = 0 is never picked); unset, every element is equally likely. The output "
           "has the type of `a` and shape `shape` (+ the slice shape), one pick per sample "
           "without it. Values depend only on the seed, the node, the iteration, the sample "
           "and `a`. Differs from DALI: the positional `shape_like` input is not supported.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_RANDOM,
    .setup = choice_setup,
    .setup_sample = choice_setup_sample,
    .run_sample = choice_run_sample,
};
