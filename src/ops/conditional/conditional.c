/* conditional.c: the operators of conditional execution (issue 17): split, merge, not_ and
 * validate_logical (DALI's internal `_conditional.*` operators, which the Python front end
 * inserts for `if`/`elif`/`else`, `and`, `or` and `not` on DataNodes).
 *
 * Exports: const sl_op_def sl_op_cond_split ("_conditional.split", CPU and GPU),
 * sl_op_cond_merge ("_conditional.merge", CPU and GPU), sl_op_cond_not ("_conditional.not_",
 * CPU), sl_op_cond_validate_logical ("_conditional.validate_logical", CPU).
 *
 * A split divides its input's samples by a per-sample predicate: output 0 the samples whose
 * predicate is true, output 1 the others, each in their order, with their shapes and sources.
 * The first split of a scope (src/graph/cond.c) also records which samples of the whole batch
 * the two branches hold (sl__slot scope_n / scope_idx): the nodes of a branch run on that
 * many samples, draw random numbers and name samples in errors by their index in the whole
 * batch. A merge puts the samples of the two branches back in the order of the predicate.
 * Both copy the samples (one task per sample on the CPU, one copy per sample on the GPU).
 * Invariant: split then merge on the same predicate gives back the input unchanged.
 */
#include <stdio.h>
#include <string.h>

#include "exec/exec.h"
#include "ops/math/elementwise.h"
#include "ops/tensor/tensor.h"
#include "sluice/op.h"

#ifdef SLUICE_HAVE_CUDA
sl_status sl__cond_split_run_gpu(sl_ctx *ctx); /* conditional.cu */
sl_status sl__cond_merge_run_gpu(sl_ctx *ctx);
#endif

enum { ARG_PREDICATE = 0 };

/* The predicate's per-sample batch, or NULL when it is a constant. */
static const sl_batch *pred_batch(const sl_ctx *ctx)
{
    sl__ref r = ctx->pn->args[ARG_PREDICATE].input;
    return r.node >= 0 ? &ctx->slot->nodes[r.node].outs[r.out] : NULL;
}

static bool scalar_type(sl_dtype t)
{
    switch (t) {
    case SL_DTYPE_BOOL:
    case SL_DTYPE_UINT8:
    case SL_DTYPE_UINT16:
    case SL_DTYPE_UINT32:
    case SL_DTYPE_UINT64:
    case SL_DTYPE_INT8:
    case SL_DTYPE_INT16:
    case SL_DTYPE_INT32:
    case SL_DTYPE_INT64: return true;
    default: return false;
    }
}

/* "a 2-d float32 tensor of 6 elements" */
static void describe(const sl_batch *b, int i, char *buf, size_t len)
{
    int64_t n = sl_batch_sample_numel(b, i);
    snprintf(buf, len, "a %d-d %s tensor of %lld element%s", sl_batch_ndim(b),
             sl_dtype_name(sl_batch_dtype(b)), (long long)n, n == 1 ? "" : "s");
}

/* The truth of sample i of b: one element, bool or an integer type; false when it is not one
 * (the caller fails). */
static bool truth(const sl_batch *b, int i, bool *v)
{
    if (!scalar_type(sl_batch_dtype(b)) || sl_batch_sample_numel(b, i) != 1)
        return false;
    const uint8_t *d = sl_batch_sample_data(b, i);
    size_t sz = sl_dtype_size(sl_batch_dtype(b));
    bool any = false;
    for (size_t k = 0; k < sz; k++)
        any |= d[k] != 0;
    *v = any;
    return true;
}

/* The truth of a one-element sample of any numeric type (Python's bool(): nonzero, NaN true);
 * false when the type is not numeric. */
static bool any_truth(const sl_batch *b, int i, bool *v)
{
    const void *d = sl_batch_sample_data(b, i);
    switch (sl_batch_dtype(b)) {
    case SL_DTYPE_FLOAT16: *v = (*(const uint16_t *)d & 0x7fffu) != 0; return true;
    case SL_DTYPE_FLOAT32: *v = *(const float *)d != 0.0f; return true;
    case SL_DTYPE_FLOAT64: *v = *(const double *)d != 0.0; return true;
    default: return truth(b, i, v);
    }
}

/* Reads the predicate of every sample of ctx's node into pos (as iter data): sample i goes to
 * branch 0 at position pos[i] >= 0, or to branch 1 at -pos[i] - 1. counts[k]: samples of
 * branch k. */
static sl_status read_predicate(sl_ctx *ctx, int *pos, int counts[2])
{
    const sl_batch *pb = pred_batch(ctx);
    int n = sl_ctx_batch_size(ctx);
    counts[0] = counts[1] = 0;
    for (int i = 0; i < n; i++) {
        bool v = false;
        if (!pb) {
            v = sl_ctx_arg_bool(ctx, ARG_PREDICATE, i);
        } else if (sl_batch_sample_numel(pb, i) != 1 || !any_truth(pb, i, &v)) {
            char what[96];
            describe(pb, i, what, sizeof what);
            sl_ctx_focus_sample(ctx, i);
            return sl_fail(ctx, SL_EINVAL,
                           "Conditions inside `if` statements are restricted to scalar (0-d "
                           "tensors) inputs, that are placed on CPU. Got a %d-d input as a "
                           "condition of the `if` statement (%s; sluice also takes a "
                           "one-element sample as a scalar)",
                           sl_batch_ndim(pb), what);
        }
        pos[i] = v ? counts[0]++ : -(counts[1]++) - 1;
    }
    return SL_OK;
}

static inline int branch_of(int pos)
{
    return pos >= 0 ? 0 : 1;
}

static inline int index_in(int pos)
{
    return pos >= 0 ? pos : -pos - 1;
}

/* ---- split ------------------------------------------------------------------------------ */

static sl_status split_setup(sl_ctx *ctx)
{
    int *pos = sl_ctx_iter_data(ctx), counts[2];
    int n = sl_ctx_batch_size(ctx);
    sl_status st = read_predicate(ctx, pos, counts);
    if (st != SL_OK)
        return st;
    const sl__pnode *pn = ctx->pn;
    const sl__plan *plan = ctx->p->plan;
    if (plan->scopes[pn->branch[0]].split == ctx->sn->node) { /* it computes the scopes */
        int *idx[2] = {sl__slot_scope_idx(ctx->slot, pn->branch[0]),
                       sl__slot_scope_idx(ctx->slot, pn->branch[1])};
        for (int i = 0; i < n; i++)
            idx[branch_of(pos[i])][index_in(pos[i])] = sl__ctx_sample_index(ctx, i);
        ctx->slot->scope_n[pn->branch[0]] = counts[0];
        ctx->slot->scope_n[pn->branch[1]] = counts[1];
    } else if (ctx->slot->scope_n[pn->branch[0]] != counts[0]) {
        return sl_fail(ctx, SL_EINTERNAL, "its predicate disagrees with the scope's");
    }
    const sl_batch *in = sl_ctx_input(ctx, 0);
    for (int o = 0; o < 2; o++)
        sl_ctx_set_output(ctx, o, sl_batch_dtype(in), sl_batch_ndim(in), sl_batch_layout(in));
    if (ctx->oom != SL_OK)
        return SL_OK; /* the executor reports it */
    for (int i = 0; i < n; i++) {
        int o = branch_of(pos[i]), j = index_in(pos[i]);
        sl_ctx_set_shape(ctx, o, j, sl_batch_shape(in, i));
        sl_ctx_set_source(ctx, o, j, sl_batch_source(in, i));
    }
    return SL_OK;
}

static sl_status split_run_sample(sl_ctx *ctx, int i)
{
    const int *pos = sl_ctx_iter_data(ctx);
    const sl_batch *in = sl_ctx_input(ctx, 0);
    size_t bytes = (size_t)sl_batch_sample_numel(in, i) * sl_dtype_size(sl_batch_dtype(in));
    if (bytes)
        memcpy(sl_ctx_output_data(ctx, branch_of(pos[i]), index_in(pos[i])),
               sl_batch_sample_data(in, i), bytes);
    return SL_OK;
}

/* ---- merge ------------------------------------------------------------------------------ */

static sl_status merge_setup(sl_ctx *ctx)
{
    int *pos = sl_ctx_iter_data(ctx), counts[2];
    int n = sl_ctx_batch_size(ctx);
    sl_status st = read_predicate(ctx, pos, counts);
    if (st != SL_OK)
        return st;
    const sl_batch *in[2] = {sl_ctx_input(ctx, 0), sl_ctx_input(ctx, 1)};
    static const char *const name[2] = {"true", "false"};
    for (int k = 0; k < 2; k++) {
        if (sl_batch_size(in[k]) != counts[k])
            return sl_fail(ctx, SL_EINVAL,
                           "input %d (the %s branch) has %d samples, but the predicate is %s "
                           "for %d",
                           k, name[k], sl_batch_size(in[k]), name[k], counts[k]);
    }
    /* An empty branch's number of dimensions may be unknowable (a reshape to per-sample
     * shapes it never saw): the branch with samples decides it, as it decides the layout. */
    bool both = counts[0] > 0 && counts[1] > 0;
    if (both && sl_batch_ndim(in[0]) != sl_batch_ndim(in[1]))
        return sl_fail(ctx, SL_EINVAL,
                       "Divergent data found in different branches of conditional operation: "
                       "the branches of a conditional give different kinds of data for one "
                       "variable: the true branch %d-d %s, the false branch %d-d %s; every "
                       "branch must give the same number of dimensions",
                       sl_batch_ndim(in[0]), sl_dtype_name(sl_batch_dtype(in[0])),
                       sl_batch_ndim(in[1]), sl_dtype_name(sl_batch_dtype(in[1])));
    /* Branches of different types (`out * 0.5` in one, `out` uint8 in the other) merge into
     * their promoted type, arithmetic's rule, whichever branches have samples (so the type
     * does not change from iteration to iteration); DALI fails where both have samples. */
    sl_dtype type = sl__ew_promote(sl_batch_dtype(in[0]), sl_batch_dtype(in[1]));
    const sl_batch *lead = counts[0] > 0 || counts[1] == 0 ? in[0] : in[1];
    const char *layout = sl_batch_layout(lead);
    if (!layout[0] && both)
        layout = sl_batch_layout(in[1]);
    if (both && sl_batch_layout(in[0])[0] && sl_batch_layout(in[1])[0] &&
        strcmp(sl_batch_layout(in[0]), sl_batch_layout(in[1])))
        return sl_fail(ctx, SL_EINVAL,
                       "the branches of a conditional give different layouts for one variable: "
                       "the true branch \"%s\", the false branch \"%s\"",
                       sl_batch_layout(in[0]), sl_batch_layout(in[1]));
    sl_ctx_set_output(ctx, 0, type, sl_batch_ndim(lead), layout);
    if (ctx->oom != SL_OK)
        return SL_OK;
    for (int i = 0; i < n; i++) {
        const sl_batch *b = in[branch_of(pos[i])];
        int j = index_in(pos[i]);
        sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(b, j));
        sl_ctx_set_source(ctx, 0, i, sl_batch_source(b, j));
    }
    return SL_OK;
}

static sl_status merge_run_sample(sl_ctx *ctx, int i)
{
    const int *pos = sl_ctx_iter_data(ctx);
    const sl_batch *b = sl_ctx_input(ctx, branch_of(pos[i]));
    int j = index_in(pos[i]);
    int64_t numel = sl_batch_sample_numel(b, j);
    sl_dtype out =
        sl__ew_promote(sl_batch_dtype(sl_ctx_input(ctx, 0)), sl_batch_dtype(sl_ctx_input(ctx, 1)));
    if (!numel)
        return SL_OK;
    if (out == sl_batch_dtype(b))
        memcpy(sl_ctx_output_data(ctx, 0, i), sl_batch_sample_data(b, j),
               (size_t)numel * sl_dtype_size(out));
    else
        sl__convert_get(out, sl_batch_dtype(b))(sl_ctx_output_data(ctx, 0, i),
                                                sl_batch_sample_data(b, j), numel);
    return SL_OK;
}

/* ---- not_ and validate_logical ----------------------------------------------------------- */

enum { ARG_EXPRESSION_NAME = 0, ARG_EXPRESSION_SIDE };

/* DALI's rule for the operands of `and`, `or` (a bool scalar per sample) and `not` (a scalar
 * of any numeric type), on the CPU; sluice also takes a one-element sample as a scalar, as it
 * does for the condition of an `if` (docs/python.md). */
static sl_status logical_check(sl_ctx *ctx, const char *expr, const char *side)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    bool is_not = strcmp(expr, "not") == 0;
    char where[48] = "";
    if (strcmp(side, "only") != 0)
        snprintf(where, sizeof where, " as the %s argument", side);
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++) {
        int64_t n = sl_batch_sample_numel(in, i);
        bool v;
        if (n == 1 && (is_not ? any_truth(in, i, &v) : sl_batch_dtype(in) == SL_DTYPE_BOOL))
            continue;
        sl_ctx_focus_sample(ctx, i);
        char got[96];
        if (n != 1)
            snprintf(got, sizeof got, "a %d-d input of %lld elements", sl_batch_ndim(in),
                     (long long)n);
        else
            snprintf(got, sizeof got, "an input of type `%s`", sl_dtype_name(sl_batch_dtype(in)));
        return sl_fail(ctx, SL_EINVAL,
                       "Logical expression `%s` is restricted to scalar (0-d tensors) "
                       "inputs%s, that are placed on CPU. Got %s%s in logical expression. "
                       "Use the bitwise operators `&`, `|` or a comparison with zero "
                       "(`== 0`) for other shapes or types",
                       expr, is_not ? "" : " of `bool` type", got, where);
    }
    return SL_OK;
}

static sl_status not_setup(sl_ctx *ctx)
{
    sl_status st = logical_check(ctx, "not", "only");
    if (st != SL_OK)
        return st;
    const sl_batch *in = sl_ctx_input(ctx, 0);
    sl_ctx_set_output(ctx, 0, SL_DTYPE_BOOL, sl_batch_ndim(in), sl_batch_layout(in));
    if (ctx->oom != SL_OK)
        return SL_OK;
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(in, i));
    return SL_OK;
}

static sl_status not_run_sample(sl_ctx *ctx, int i)
{
    bool v = false;
    any_truth(sl_ctx_input(ctx, 0), i, &v); /* setup checked it */
    *(uint8_t *)sl_ctx_output_data(ctx, 0, i) = !v;
    return SL_OK;
}

static sl_status validate_setup(sl_ctx *ctx)
{
    sl_status st = logical_check(ctx, sl_ctx_arg_str(ctx, ARG_EXPRESSION_NAME),
                                 sl_ctx_arg_str(ctx, ARG_EXPRESSION_SIDE));
    if (st != SL_OK)
        return st;
    const sl_batch *in = sl_ctx_input(ctx, 0);
    sl_ctx_set_output(ctx, 0, sl_batch_dtype(in), sl_batch_ndim(in), sl_batch_layout(in));
    if (ctx->oom != SL_OK)
        return SL_OK;
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(in, i));
    return SL_OK;
}

static sl_status validate_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    memcpy(sl_ctx_output_data(ctx, 0, i), sl_batch_sample_data(in, i),
           sl_dtype_size(sl_batch_dtype(in)));
    return SL_OK;
}

/* ---- definitions ------------------------------------------------------------------------- */

static const sl_arg_def pred_args[] = {
    {.name = "predicate",
     .type = SL_ARG_BOOL,
     .doc = "Per sample, whether it goes to the true branch: an argument input whose samples are "
            "scalars (0-d or one element) of any numeric type, true where nonzero.",
     .flags = SL_ARG_TENSOR | SL_ARG_OWN_CHECK}, /* read_predicate words DALI's error */
};

static const sl_io_def split_in[] = {{"input", "Data of any type, shape and layout."}};
static const sl_io_def split_out[] = {
    {"true", "The samples whose predicate is true, in their order."},
    {"false", "The samples whose predicate is false, in their order."}};

const sl_op_def sl_op_cond_split = {
    .name = "_conditional.split",
    .doc = "Divides a batch by a per-sample predicate (the `if` of conditional execution).\n\n"
           "Output 0 holds the samples whose predicate is true, output 1 the others, each in "
           "their original order, with their shapes, layouts and source files. The nodes "
           "reading an output run only on those samples (possibly none); random operators "
           "among them draw for each sample what they would draw unconditionally. Inserted by "
           "the Python front end for `if` statements on DataNodes (`enable_conditionals`).",
    .inputs = split_in,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = split_out,
    .num_outputs = 2,
    .args = pred_args,
    .num_args = 1,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .iter_bytes_per_sample = sizeof(int),
    .setup = split_setup,
    .run_sample = split_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = sl__cond_split_run_gpu,
#endif
};

static const sl_io_def merge_in[] = {{"true", "The true branch's samples."},
                                     {"false", "The false branch's samples."}};
static const sl_io_def merge_out[] = {{"output", "The samples of both, in the original order."}};

const sl_op_def sl_op_cond_merge = {
    .name = "_conditional.merge",
    .doc = "Puts the samples of the two branches of a conditional back in their original order "
           "(the end of an `if`).\n\n"
           "Input 0 comes from the true branch, input 1 from the false branch of the split on "
           "the same `predicate`. Where both have samples they must have the same number of "
           "dimensions and layout (an empty branch takes the other's). Branches of different "
           "types give their promoted type (arithmetic's rule: uint8 and float32 give "
           "float32), converted on the CPU; on the GPU the types must be the same.",
    .inputs = merge_in,
    .min_inputs = 2,
    .max_inputs = 2,
    .outputs = merge_out,
    .num_outputs = 1,
    .args = pred_args,
    .num_args = 1,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .iter_bytes_per_sample = sizeof(int),
    .setup = merge_setup,
    .run_sample = merge_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = sl__cond_merge_run_gpu,
#endif
};

static const sl_io_def pred_in[] = {{"input", "Per sample, a boolean scalar."}};
static const sl_io_def not_out[] = {{"output", "Per sample, the negation (bool)."}};

const sl_op_def sl_op_cond_not = {
    .name = "_conditional.not_",
    .doc = "The logical negation of a per-sample scalar of any numeric type (`not` on a "
           "DataNode): true where the sample is zero.",
    .inputs = pred_in,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = not_out,
    .num_outputs = 1,
    .devices = SL_OP_CPU,
    .setup = not_setup,
    .run_sample = not_run_sample,
};

static const sl_arg_def validate_args[] = {
    {.name = "expression_name",
     .type = SL_ARG_STRING,
     .def = "\"and\"",
     .doc = "The logical expression the input is an operand of, for the error message.",
     .choices = "and|or|not"},
    {.name = "expression_side",
     .type = SL_ARG_STRING,
     .def = "\"left\"",
     .doc = "Which operand the input is, for the error message.",
     .choices = "left|right|only"},
};
static const sl_io_def validate_out[] = {{"output", "The input, unchanged."}};

const sl_op_def sl_op_cond_validate_logical = {
    .name = "_conditional.validate_logical",
    .doc = "Checks an operand of `and`, `or` or `not` on DataNodes and passes it through.\n\n"
           "Each sample must be a scalar (0-d or one element) of bool type for `and` and `or`, "
           "of any numeric type for `not` (DALI's rules); anything else fails, naming the "
           "expression and the operand.",
    .inputs = pred_in,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = validate_out,
    .num_outputs = 1,
    .args = validate_args,
    .num_args = 2,
    .devices = SL_OP_CPU,
    .setup = validate_setup,
    .run_sample = validate_run_sample,
};
