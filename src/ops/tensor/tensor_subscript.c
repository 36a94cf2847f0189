/* tensor_subscript: NumPy-style basic indexing of each sample (`x[10:20, :, 0]`, `x[..., ::-1]`,
 * `x[-1]`, `x[None]`), the operator behind DataNode indexing (DALI's internal TensorSubscript).
 *
 * Exports: const sl_op_def sl_op_tensor_subscript ("tensor_subscript", CPU).
 *
 * The subscript is a list of strings, one per written index position, in Python's syntax:
 * an integer ("0", "-1"), a slice ("10:20", "::-1", "1:-1:2", ":"), "..." or "None" (a new axis
 * of extent 1). A value written as its name ("at" for an index, "lo", "hi" or "step" in its part
 * of a slice) is read per sample from the argument of that name, so it may be an argument input.
 * Every position is resolved per sample against the sample's own shape, with NumPy's rules:
 * negative values count from the end, slice bounds are clipped to the extent, an integer index
 * outside [-n, n) fails naming the axis and its size, "..." stands for the axes not written
 * (unwritten trailing axes are kept whole too), integer indices drop their axis and its layout
 * letter. The result is a strided view of the input (offset, per-dimension extents and strides,
 * possibly negative or 0) copied by the tensor family's gather kernel (ops/tensor/copy_kernels.c).
 * Invariant: init parses the subscript once into the node's state; setup_sample resolves each
 * sample's view into the iteration data; run only copies, never forming an out-of-range pointer
 * (an empty view copies nothing).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/op.h"

#include "core/core.h"
#include "ops/tensor/tensor.h"

enum { A_SUBSCRIPT, A_AT, A_LO, A_HI, A_STEP, NUM_ARGS };

/* Positions: at most SL_MAX_NDIM that consume input axes, SL_MAX_NDIM new axes and one "...". */
#define MAX_ITEMS (2 * SL_MAX_NDIM + 1)

#define PER_SAMPLE(NAME, DOC)                                                                      \
    {                                                                                              \
        .name = NAME, .type = SL_ARG_INT, .doc = DOC, .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR     \
    }

static const sl_arg_def args[NUM_ARGS] = {
    [A_SUBSCRIPT] = {.name = "subscript",
                     .type = SL_ARG_STRINGS,
                     .doc = "One string per index position, in Python's syntax: an integer index "
                            "(\"0\", \"-1\"), a slice (\"10:20\", \"::-1\", \":\"), \"...\" or "
                            "\"None\" (new axis); \"at\", \"lo\", \"hi\", \"step\" in place of a "
                            "number read that argument. [] copies the input.",
                     .max_len = MAX_ITEMS},
    [A_AT] = PER_SAMPLE("at", "Value of the integer index written \"at\" in the subscript (an "
                              "argument input of a float type is rounded)."),
    [A_LO] = PER_SAMPLE("lo", "Value of the slice start written \"lo\" in the subscript."),
    [A_HI] = PER_SAMPLE("hi", "Value of the slice stop written \"hi\" in the subscript."),
    [A_STEP] = PER_SAMPLE("step", "Value of the slice step written \"step\" in the subscript "
                                  "(not 0)."),
};

static const sl_io_def inputs[] = {{"input", "Data of any type, layout and dimensionality."}};
static const sl_io_def outputs[] = {{"output", "The indexed data, a contiguous copy."}};

typedef enum kind { K_INDEX, K_SLICE, K_ELLIPSIS, K_NEW } kind;
typedef enum vsrc { V_NONE, V_LIT, V_ARG } vsrc; /* where a value comes from */

/* One written position. Values: an index uses [0]; a slice [0..2] = lo, hi, step. */
typedef struct item {
    kind kind;
    vsrc src[3];
    int64_t lit[3]; /* the literals (V_LIT) */
} item;

/* The parsed subscript: the node's state, constant after init. */
typedef struct plan {
    int n;       /* positions */
    int n_axes;  /* index and slice positions: the input axes written */
    int n_index; /* integer index positions: the axes dropped */
    int n_new;   /* new axes */
    item it[MAX_ITEMS];
} plan;

/* Per sample (iteration data): the view of the input the output copies. */
typedef struct view {
    int64_t offset; /* elements from the sample's start to the view's element 0 */
    int64_t shape[SL_MAX_NDIM], stride[SL_MAX_NDIM]; /* stride in elements, any sign */
} view;

/* ---- parsing (init) ------------------------------------------------------------------------ */

/* The names of a position's values, by kind (K_INDEX, K_SLICE). */
static const char *const value_names[2][3] = {
    [K_INDEX] = {"at", "", ""}, [K_SLICE] = {"lo", "hi", "step"}};

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Parses value part [s, s + len) of a position: empty (V_NONE), the name `name` (V_ARG) or an
 * integer literal (V_LIT). False when it is none of these. */
static bool parse_value(const char *s, size_t len, const char *name, vsrc *src, int64_t *v)
{
    char buf[32], *end;
    while (len && is_blank(*s))
        s++, len--;
    while (len && is_blank(s[len - 1]))
        len--;
    *src = V_NONE;
    if (len == 0)
        return true;
    if (len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    *src = strcmp(buf, name) == 0 ? V_ARG : V_LIT;
    if (*src == V_ARG)
        return true;
    if (!(buf[0] == '-' || buf[0] == '+' || (buf[0] >= '0' && buf[0] <= '9')))
        return false;
    errno = 0;
    long long x = strtoll(buf, &end, 10);
    *v = x;
    return errno == 0 && *end == '\0' && end != buf;
}

/* Parses one position into *it; false when it is not an index, a slice, "..." or "None". */
static bool parse_item(const char *tok, item *it)
{
    char buf[128];
    size_t len = strlen(tok);
    while (len && is_blank(*tok))
        tok++, len--;
    while (len && is_blank(tok[len - 1]))
        len--;
    if (len >= sizeof buf)
        return false;
    memcpy(buf, tok, len);
    buf[len] = '\0';
    memset(it, 0, sizeof *it);
    if (strcmp(buf, "...") == 0 || strcmp(buf, "None") == 0) {
        it->kind = buf[0] == '.' ? K_ELLIPSIS : K_NEW;
        return true;
    }
    int colons = 0;
    for (const char *c = buf; *c; c++)
        colons += *c == ':';
    if (colons > 2)
        return false;
    it->kind = colons ? K_SLICE : K_INDEX;
    const char *p = buf;
    for (int k = 0; k <= colons; k++) {
        const char *q = strchr(p, ':');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        if (!parse_value(p, n, value_names[it->kind][k], &it->src[k], &it->lit[k]))
            return false;
        p += n + 1;
    }
    return it->kind == K_SLICE || it->src[0] != V_NONE;
}

/* The argument a position's value k is read from when written by name. */
static int value_arg(const item *it, int k)
{
    return it->kind == K_INDEX ? A_AT : A_LO + k;
}

/* Counts the kinds and checks what needs the whole subscript: one "...", at most SL_MAX_NDIM
 * axes written, no step 0, and the named arguments given exactly when the subscript uses them. */
static sl_status check_plan(sl_op_init *ini, plan *p)
{
    bool used[NUM_ARGS] = {false};
    int ellipses = 0;
    for (int k = 0; k < p->n; k++) {
        const item *it = &p->it[k];
        ellipses += it->kind == K_ELLIPSIS;
        p->n_new += it->kind == K_NEW;
        p->n_index += it->kind == K_INDEX;
        p->n_axes += it->kind == K_INDEX || it->kind == K_SLICE;
        for (int v = 0; v < 3; v++)
            if (it->src[v] == V_ARG)
                used[value_arg(it, v)] = true;
        if (it->kind == K_SLICE && it->src[2] == V_LIT && it->lit[2] == 0)
            return sl_init_fail(ini, SL_EINVAL, "subscript[%d]: slice step cannot be zero", k);
    }
    if (ellipses > 1)
        return sl_init_fail(ini, SL_EINVAL,
                            "an index can only have a single ellipsis ('...'); the subscript "
                            "has %d",
                            ellipses);
    if (p->n_axes > SL_MAX_NDIM || p->n_new > SL_MAX_NDIM)
        return sl_init_fail(ini, SL_EINVAL,
                            "too many indices: the subscript writes %d axes and %d new axes; "
                            "at most %d of each",
                            p->n_axes, p->n_new, SL_MAX_NDIM);
    for (int a = A_AT; a < NUM_ARGS; a++) {
        if (used[a] && !sl_init_arg_is_set(ini, a))
            return sl_init_fail(ini, SL_EINVAL,
                                "the subscript reads \"%s\" but the argument is not given",
                                args[a].name);
        if (!used[a] && sl_init_arg_is_set(ini, a))
            return sl_init_fail(ini, SL_EINVAL,
                                "argument \"%s\" is given but no subscript position reads it "
                                "(write \"%s\" where its value goes)",
                                args[a].name, args[a].name);
    }
    return SL_OK;
}

static sl_status subscript_init(sl_op_init *ini, void **state)
{
    int n;
    const char *const *toks = sl_init_arg_strs(ini, A_SUBSCRIPT, &n);
    plan *p = sl__calloc(1, sizeof *p);
    sl_status st = SL_OK;
    *state = NULL;
    if (!p)
        return sl_init_fail(ini, SL_ENOMEM, "out of memory for the subscript");
    p->n = n;
    for (int k = 0; k < n && st == SL_OK; k++)
        if (!parse_item(toks[k], &p->it[k]))
            st = sl_init_fail(ini, SL_EINVAL,
                              "subscript[%d] \"%s\" is not an integer index, a slice "
                              "(lo:hi:step, each part an integer, empty or its name), "
                              "\"...\" or \"None\"",
                              k, toks[k]);
    if (st == SL_OK)
        st = check_plan(ini, p);
    if (st != SL_OK) {
        sl__free(p);
        return st;
    }
    *state = p;
    return SL_OK;
}

static void subscript_fini(void *state)
{
    sl__free(state);
}

/* ---- per iteration --------------------------------------------------------------------------- */

/* Output layout: the letters of the kept axes; none when the input has none or a new axis (which
 * has no letter) is inserted. */
static void out_layout(const plan *p, const char *in, int ndim, char *out)
{
    int d = 0, o = 0;
    out[0] = '\0';
    if ((int)strlen(in) != ndim || p->n_new > 0)
        return;
    for (int k = 0; k < p->n; k++) {
        if (p->it[k].kind == K_ELLIPSIS)
            for (int e = 0; e < ndim - p->n_axes; e++)
                out[o++] = in[d++];
        else if (p->it[k].kind == K_SLICE)
            out[o++] = in[d++];
        else if (p->it[k].kind == K_INDEX)
            d++;
    }
    while (d < ndim)
        out[o++] = in[d++];
    out[o] = '\0';
}

static sl_status subscript_setup(sl_ctx *ctx)
{
    const plan *p = sl_ctx_state(ctx);
    const sl_batch *in = sl_ctx_input(ctx, 0);
    int ndim = sl_batch_ndim(in);
    int out_ndim = ndim - p->n_index + p->n_new;
    char layout[SL_MAX_NDIM + 1];
    if (p->n_axes > ndim)
        return sl_fail(ctx, SL_EINVAL,
                       "too many indices: the subscript indexes %d axes but the input has %d "
                       "dimensions",
                       p->n_axes, ndim);
    if (out_ndim > SL_MAX_NDIM)
        return sl_fail(ctx, SL_EINVAL,
                       "the result would have %d dimensions; at most %d are supported", out_ndim,
                       SL_MAX_NDIM);
    out_layout(p, sl_batch_layout(in), ndim, layout);
    sl_ctx_set_output(ctx, 0, sl_batch_dtype(in), out_ndim, layout);
    return SL_OK;
}

/* Value k of position it for sample i. */
static int64_t value(sl_ctx *ctx, const item *it, int k, int i)
{
    return it->src[k] == V_LIT ? it->lit[k] : sl_ctx_arg_int(ctx, value_arg(it, k), i);
}

/* Python's clipping of a slice bound x on an axis of extent n (PySlice_AdjustIndices). */
static int64_t clip_bound(int64_t x, int64_t n, bool backward)
{
    if (x < 0) {
        x += n;
        if (x < 0)
            x = backward ? -1 : 0;
    } else if (x >= n) {
        x = backward ? n - 1 : n;
    }
    return x;
}

/* Resolves slice position `it` on input axis d (extent n, stride s) into output dimension o. */
static sl_status resolve_slice(sl_ctx *ctx, const item *it, int i, int d, int64_t n, int64_t s,
                               view *v, int o)
{
    int64_t step = it->src[2] == V_NONE ? 1 : value(ctx, it, 2, i);
    if (step == 0)
        return sl_fail(ctx, SL_EINVAL, "slice step cannot be zero (axis %d)", d);
    bool back = step < 0;
    int64_t lo =
        it->src[0] == V_NONE ? (back ? n - 1 : 0) : clip_bound(value(ctx, it, 0, i), n, back);
    int64_t hi = it->src[1] == V_NONE ? (back ? -1 : n) : clip_bound(value(ctx, it, 1, i), n, back);
    int64_t span = back ? lo - hi : hi - lo; /* elements in [lo, hi) or (hi, lo] */
    uint64_t mag = back ? (uint64_t)0 - (uint64_t)step : (uint64_t)step;
    int64_t count = span > 0 ? (int64_t)((uint64_t)(span - 1) / mag) + 1 : 0;
    v->shape[o] = count;
    /* count > 1 implies |step| < n, so step * s stays within the sample's size. */
    v->stride[o] = count > 1 ? step * s : 0;
    if (count > 0)
        v->offset += lo * s;
    return SL_OK;
}

/* An integer index on input axis d (extent n, stride s). */
static sl_status resolve_index(sl_ctx *ctx, const item *it, int i, int d, int64_t n, int64_t s,
                               view *v)
{
    int64_t x = value(ctx, it, 0, i);
    if (x < -n || x >= n)
        return sl_fail(ctx, SL_EINVAL, "index %lld is out of bounds for axis %d with size %lld",
                       (long long)x, d, (long long)n);
    v->offset += (x < 0 ? x + n : x) * s;
    return SL_OK;
}

static sl_status subscript_setup_sample(sl_ctx *ctx, int i)
{
    const plan *p = sl_ctx_state(ctx);
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int ndim = sl_batch_ndim(in);
    const int64_t *shape = sl_batch_shape(in, i);
    view *v = (view *)sl_ctx_iter_data(ctx) + i;
    int64_t stride[SL_MAX_NDIM];
    int d = 0, o = 0;
    sl_status st = SL_OK;
    int64_t acc = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        stride[k] = acc;
        acc *= shape[k];
    }
    v->offset = 0;
    for (int k = 0; k < p->n && st == SL_OK; k++) {
        const item *it = &p->it[k];
        if (it->kind == K_NEW) {
            v->shape[o] = 1, v->stride[o++] = 0;
        } else if (it->kind == K_ELLIPSIS) {
            for (int e = 0; e < ndim - p->n_axes; e++, d++, o++)
                v->shape[o] = shape[d], v->stride[o] = stride[d];
        } else if (it->kind == K_INDEX) {
            st = resolve_index(ctx, it, i, d, shape[d], stride[d], v);
            d++;
        } else {
            st = resolve_slice(ctx, it, i, d, shape[d], stride[d], v, o++);
            d++;
        }
    }
    for (; d < ndim; d++, o++)
        v->shape[o] = shape[d], v->stride[o] = stride[d];
    if (st == SL_OK)
        sl_ctx_set_shape(ctx, 0, i, v->shape);
    return st;
}

static sl_status subscript_run_sample(sl_ctx *ctx, int i)
{
    const plan *p = sl_ctx_state(ctx);
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const view *v = (const view *)sl_ctx_iter_data(ctx) + i;
    const int out_ndim = sl_batch_ndim(in) - p->n_index + p->n_new;
    const size_t es = sl_dtype_size(sl_batch_dtype(in));
    for (int d = 0; d < out_ndim; d++)
        if (v->shape[d] == 0)
            return SL_OK; /* empty: no element, and the offset may not point into the input */
    const unsigned char *src = sl_batch_sample_data(in, i);
    sl__gather(sl_ctx_output_data(ctx, 0, i), src + (size_t)v->offset * es, es, out_ndim, v->shape,
               v->stride);
    return SL_OK;
}

const sl_op_def sl_op_tensor_subscript = {
    .name = "tensor_subscript",
    .doc = "Indexes each sample as NumPy's basic indexing does (DALI's internal "
           "TensorSubscript, behind DataNode indexing).\n\n"
           "`subscript` holds one string per index position in Python's syntax: an integer "
           "(\"0\", \"-1\"), a slice (\"10:20\", \"::-1\", \"1:-1:2\", \":\"), \"...\" or "
           "\"None\"; `x[10:20, :, 0]` is subscript [\"10:20\", \":\", \"0\"]. A value written "
           "as a name (\"at\" for an index, \"lo:hi:step\" parts) is read per sample from that "
           "argument, which may be an argument input. Each sample is indexed against its own "
           "shape: negative values count from the end, slice bounds are clipped, an integer "
           "index out of range fails naming the axis and its size, \"...\" stands for the axes "
           "not written, and unwritten trailing axes are kept whole. Integer indices drop the "
           "axis and its layout letter.\n\n"
           "Differs from DALI: DALI's operator is internal, with arguments at_<k>, lo_<k>, "
           "hi_<k>, step_<k> per position; a new axis (None) has no layout letter, so the output "
           "of an input with a layout then has none.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .iter_bytes_per_sample = sizeof(view),
    .init = subscript_init,
    .fini = subscript_fini,
    .setup = subscript_setup,
    .setup_sample = subscript_setup_sample,
    .run_sample = subscript_run_sample,
};
