/* lookup_table: maps each integer element through a key -> value table (DALI's
 * fn.lookup_table).
 *
 * Exports: const sl_op_def sl_op_lookup_table ("lookup_table", CPU and GPU).
 *
 * keys[k] -> values[k] (equal lengths, keys distinct); elements that are no key, including
 * values outside the input type's range, give default_value. The output has the input's shape
 * and layout and `dtype` (float32 by default); values are converted with cast's rules. The
 * table is built at init: sorted (key, value) pairs, looked up by binary search, or a dense
 * array when the keys span at most 65536 values (the common case: class ids).
 * On the GPU (index_kernels.cu) the sorted pairs are uploaded each iteration and every element
 * is looked up by binary search, with the same conversions: the CPU's results bit for bit.
 * Invariant: the state (the table) is read-only after init.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "sluice/op.h"

#include "ops/tensor/index_gpu.h"
#include "ops/tensor/tensor.h"

enum { A_KEYS, A_VALUES, A_DEFAULT_VALUE, A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_KEYS] = {.name = "keys",
                .type = SL_ARG_INTS,
                .def = "[]",
                .doc = "Input values to map; distinct; as many as values.",
                .flags = SL_ARG_SCALAR_OK},
    [A_VALUES] = {.name = "values",
                  .type = SL_ARG_FLOATS,
                  .def = "[]",
                  .doc = "What each key maps to (converted to dtype).",
                  .flags = SL_ARG_SCALAR_OK},
    [A_DEFAULT_VALUE] = {.name = "default_value",
                         .type = SL_ARG_FLOAT,
                         .def = "0.0",
                         .doc = "What every element that is not a key maps to."},
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .def = "\"float32\"",
                 .doc = "Output element type."},
};

static const sl_io_def inputs[] = {{"input", "Integer data (any integer type or bool)."}};
static const sl_io_def outputs[] = {{"output", "The mapped values, the input's shape."}};

#define DENSE_SPAN 65536

typedef struct pair {
    int64_t key;
    double value;
} pair;

typedef struct lut {
    int n;
    pair *pairs;   /* sorted by key */
    int64_t lo;    /* dense: the smallest key */
    int64_t span;  /* dense: entries of `dense` (0: binary search) */
    double *dense; /* dense[key - lo], default where no key */
    double def;
} lut;

static int cmp_pair(const void *a, const void *b)
{
    int64_t x = ((const pair *)a)->key, y = ((const pair *)b)->key;
    return (x > y) - (x < y);
}

static void lut_fini(void *state)
{
    lut *t = state;
    if (!t)
        return;
    sl__free(t->pairs);
    sl__free(t->dense);
    sl__free(t);
}

static sl_status lut_init(sl_op_init *ini, void **state)
{
    int nk, nv;
    const int64_t *keys = sl_init_arg_ints(ini, A_KEYS, &nk);
    const double *values = sl_init_arg_floats(ini, A_VALUES, &nv);
    *state = NULL;
    if (nk != nv)
        return sl_init_fail(ini, SL_EINVAL,
                            "keys has %d values and values %d; give one value per key", nk, nv);
    lut *t = sl__calloc(1, sizeof *t);
    if (!t || (nk && !(t->pairs = sl__malloc(sizeof(pair) * (size_t)nk))))
        goto nomem;
    t->n = nk;
    t->def = sl_init_arg_float(ini, A_DEFAULT_VALUE);
    for (int k = 0; k < nk; k++)
        t->pairs[k] = (pair){keys[k], values[k]};
    if (nk)
        qsort(t->pairs, (size_t)nk, sizeof(pair), cmp_pair);
    for (int k = 1; k < nk; k++)
        if (t->pairs[k].key == t->pairs[k - 1].key) {
            lut_fini(t);
            return sl_init_fail(ini, SL_EINVAL, "key %lld is given twice",
                                (long long)t->pairs[k].key);
        }
    if (nk && (uint64_t)t->pairs[nk - 1].key - (uint64_t)t->pairs[0].key < DENSE_SPAN) {
        t->lo = t->pairs[0].key;
        t->span = t->pairs[nk - 1].key - t->lo + 1;
        if (!(t->dense = sl__malloc(sizeof(double) * (size_t)t->span)))
            goto nomem;
        for (int64_t s = 0; s < t->span; s++)
            t->dense[s] = t->def;
        for (int k = 0; k < nk; k++)
            t->dense[t->pairs[k].key - t->lo] = t->pairs[k].value;
    }
    *state = t;
    return SL_OK;
nomem:
    lut_fini(t);
    return sl_init_fail(ini, SL_ENOMEM, "out of memory for a table of %d keys", nk);
}

static bool is_integer(sl_dtype t)
{
    return t == SL_DTYPE_BOOL || (t >= SL_DTYPE_UINT8 && t <= SL_DTYPE_INT64);
}

static sl_status lut_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    if (!is_integer(sl_batch_dtype(in)))
        return sl_fail(ctx, SL_EINVAL, "the input must be of an integer type, got %s",
                       sl_dtype_name(sl_batch_dtype(in)));
    sl_ctx_set_output(ctx, 0, sl_ctx_arg_dtype(ctx, A_DTYPE), sl_batch_ndim(in),
                      sl_batch_layout(in));
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(in, i));
    return SL_OK;
}

static double lookup(const lut *t, int64_t key, bool key_u64_big)
{
    if (key_u64_big || !t->n)
        return t->def;
    if (t->span) {
        uint64_t off = (uint64_t)key - (uint64_t)t->lo;
        return key >= t->lo && off < (uint64_t)t->span ? t->dense[off] : t->def;
    }
    int a = 0, b = t->n - 1;
    while (a <= b) {
        int m = a + (b - a) / 2;
        if (t->pairs[m].key == key)
            return t->pairs[m].value;
        if (t->pairs[m].key < key)
            a = m + 1;
        else
            b = m - 1;
    }
    return t->def;
}

#define CHUNK 512

static sl_status lut_run_sample(sl_ctx *ctx, int i)
{
    const lut *t = sl_ctx_state(ctx);
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const sl_dtype it = sl_batch_dtype(in), ot = sl_ctx_arg_dtype(ctx, A_DTYPE);
    const bool is_u64 = it == SL_DTYPE_UINT64;
    sl__convert_fn load = sl__convert_get(is_u64 ? SL_DTYPE_UINT64 : SL_DTYPE_INT64, it);
    sl__convert_fn store = sl__convert_get(ot, SL_DTYPE_FLOAT64);
    const unsigned char *src = sl_batch_sample_data(in, i);
    unsigned char *dst = sl_ctx_output_data(ctx, 0, i);
    const int64_t n = sl_batch_sample_numel(in, i);
    const size_t is = sl_dtype_size(it), os = sl_dtype_size(ot);
    int64_t keys[CHUNK];
    double vals[CHUNK];
    for (int64_t s = 0; s < n; s += CHUNK) {
        int64_t m = n - s < CHUNK ? n - s : CHUNK;
        load(keys, src + (size_t)s * is, m);
        for (int64_t k = 0; k < m; k++) /* a uint64 past INT64_MAX is no key */
            vals[k] = lookup(t, keys[k], is_u64 && (uint64_t)keys[k] > (uint64_t)INT64_MAX);
        store(dst + (size_t)s * os, vals, m);
    }
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
static sl_status lut_run_gpu(sl_ctx *ctx)
{
    const lut *t = sl_ctx_state(ctx);
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx);
    const int nk = t->n > 0 ? t->n : 1; /* an empty table uploads one unused pair */
    unsigned char *mem = sl_ctx_scratch(ctx, (sizeof(sl__glut) * (size_t)(n > 0 ? n : 1)) +
                                                 (sizeof(int64_t) + sizeof(double)) * (size_t)nk);
    if (!mem)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    sl__glut *s = (sl__glut *)mem;
    int64_t *keys = (int64_t *)(mem + sizeof(sl__glut) * (size_t)(n > 0 ? n : 1));
    double *values = (double *)(keys + nk);
    keys[0] = 0;
    values[0] = t->def;
    for (int k = 0; k < t->n; k++) {
        keys[k] = t->pairs[k].key;
        values[k] = t->pairs[k].value;
    }
    for (int i = 0; i < n; i++)
        s[i] = (sl__glut){sl_batch_sample_data(in, i), sl_ctx_output_data(ctx, 0, i),
                          sl_batch_sample_numel(in, i)};
    return sl__gpu_lookup(ctx, s, n, keys, values, t->n, t->def, sl_batch_dtype(in),
                          sl_ctx_arg_dtype(ctx, A_DTYPE));
}
#endif

const sl_op_def sl_op_lookup_table = {
    .name = "lookup_table",
    .doc = "Maps integer elements through a table (DALI's lookup_table).\n\n"
           "Each element equal to keys[k] becomes values[k]; every other element becomes "
           "default_value. The output has the input's shape and layout and type `dtype` "
           "(float32 by default; values are converted as `cast` does). The input must be of an "
           "integer type.\n\n"
           "Differs from DALI: keys are any int64 values (DALI limits them to [0, 65535]).\n\n"
           "`device=\"gpu\"` maps on the GPU with the same results.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = lut_init,
    .fini = lut_fini,
    .setup = lut_setup,
    .run_sample = lut_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = lut_run_gpu,
#endif
};
