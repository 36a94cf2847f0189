/* src/exec/ctx.c: the operator-author API (sl_ctx_*, sl_init_*, sl_fail) on top of the executor.
 *
 * Argument values come from the plan (constants, defaults) or, for argument inputs, from the
 * producing node's output in the same slot; sl__ctx_check_arg_inputs has already checked those
 * (count, numeric type, length) before the op's setup runs, so accessors cannot fail.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/half.h"
#include "exec/exec.h"

/* ---- argument inputs ------------------------------------------------------------------- */

static const sl_batch *arg_batch(const sl_ctx *ctx, int arg)
{
    const sl__parg *pa = &ctx->pn->args[arg];
    if (pa->input.node < 0)
        return NULL;
    return &ctx->slot->nodes[pa->input.node].outs[pa->input.out];
}

/* Element k of sample i of a numeric batch, as double. */
static double elem(const sl_batch *b, int i, int64_t k)
{
    const uint8_t *d = b->data + b->offsets[i];
    switch (b->dtype) {
    case SL_DTYPE_UINT8: return ((const uint8_t *)d)[k];
    case SL_DTYPE_UINT16: return ((const uint16_t *)d)[k];
    case SL_DTYPE_UINT32: return ((const uint32_t *)d)[k];
    case SL_DTYPE_UINT64: return (double)((const uint64_t *)d)[k];
    case SL_DTYPE_INT8: return ((const int8_t *)d)[k];
    case SL_DTYPE_INT16: return ((const int16_t *)d)[k];
    case SL_DTYPE_INT32: return ((const int32_t *)d)[k];
    case SL_DTYPE_INT64: return (double)((const int64_t *)d)[k];
    case SL_DTYPE_FLOAT16: return sl__half_to_float(((const uint16_t *)d)[k]);
    case SL_DTYPE_FLOAT32: return ((const float *)d)[k];
    case SL_DTYPE_FLOAT64: return ((const double *)d)[k];
    case SL_DTYPE_BOOL: return ((const uint8_t *)d)[k] != 0;
    default: return 0;
    }
}

static bool is_list(sl_arg_type t)
{
    return t == SL_ARG_INTS || t == SL_ARG_FLOATS;
}

static sl_status check_one(sl_ctx *ctx, int arg, const sl_batch *b)
{
    const sl_arg_def *def = sl_op_arg(ctx->pn->op, arg);
    if (b->dtype == SL_DTYPE_INVALID || b->size != sl_ctx_batch_size(ctx))
        return sl_fail(ctx, SL_EINVAL, "argument input \"%s\": expected %d numeric samples",
                       def->name, sl_ctx_batch_size(ctx));
    for (int i = 0; i < b->size; i++) {
        int64_t n = sl_batch_sample_numel(b, i);
        bool ok = (def->flags & SL_ARG_OWN_CHECK) ||
                  (is_list(def->type) ? (n >= (def->min_len ? def->min_len : 0) &&
                                         (!def->max_len || n <= def->max_len) &&
                                         (n > 0 || !(def->flags & SL_ARG_SCALAR_OK)))
                                      : n == 1);
        if (!ok)
            return sl_fail(ctx, SL_EINVAL,
                           "argument input \"%s\": sample %d has %lld values, expected %s",
                           def->name, sl__ctx_sample_index(ctx, i), (long long)n,
                           is_list(def->type) ? "a list of the allowed length" : "one");
        for (int64_t k = 0; k < n && (def->flags & SL_ARG_RANGE); k++) {
            double x = elem(b, i, k);
            if (x < def->min || x > def->max)
                return sl_fail(ctx, SL_EINVAL,
                               "argument input \"%s\": sample %d: value %.10g is out of range "
                               "[%.10g, %.10g]",
                               def->name, sl__ctx_sample_index(ctx, i), x, def->min, def->max);
        }
    }
    return SL_OK;
}

sl_status sl__ctx_check_arg_inputs(sl_ctx *ctx)
{
    for (int a = 0; a < ctx->pn->nargs; a++) {
        const sl_batch *b = arg_batch(ctx, a);
        sl_status st = b ? check_one(ctx, a, b) : SL_OK;
        if (st != SL_OK)
            return st;
    }
    return SL_OK;
}

/* ---- per-iteration accessors ----------------------------------------------------------- */

int sl_ctx_batch_size(const sl_ctx *ctx)
{
    return ctx->slot->scope_n[ctx->pn->scope];
}

int *sl__slot_scope_idx(const sl__slot *slot, int scope)
{
    return slot->scope_idx + (size_t)scope * (size_t)slot->nodes[0].p->opt.batch_size;
}

int sl__ctx_sample_index(const sl_ctx *ctx, int sample)
{
    if (ctx->pn->scope == 0 || sample < 0 || sample >= sl_ctx_batch_size(ctx))
        return sample;
    return sl__slot_scope_idx(ctx->slot, ctx->pn->scope)[sample];
}

int sl__ctx_output_size(const sl_ctx *ctx, int o)
{
    sl__ref r = {.node = ctx->sn->node, .out = o};
    return ctx->slot->scope_n[sl__plan_out_scope(ctx->p->plan, r)];
}

bool sl__ctx_output_fused(const sl_ctx *ctx)
{
    return ctx->pn->fuse_into >= 0;
}

int64_t sl_ctx_iteration(const sl_ctx *ctx)
{
    return ctx->slot->iteration;
}

int sl_ctx_num_inputs(const sl_ctx *ctx)
{
    return ctx->pn->ninputs;
}

int sl_ctx_num_outputs(const sl_ctx *ctx)
{
    return ctx->pn->nout;
}

const sl_batch *sl_ctx_input(const sl_ctx *ctx, int i)
{
    if (i < 0 || i >= ctx->pn->ninputs)
        return NULL;
    const sl__ref *r = &ctx->pn->inputs[i];
    return &ctx->slot->nodes[r->node].outs[r->out];
}

void *sl_ctx_state(const sl_ctx *ctx)
{
    return ctx->p->states[ctx->sn->node];
}

void *sl_ctx_iter_data(const sl_ctx *ctx)
{
    return ctx->sn->iter_data;
}

void sl_ctx_set_output(sl_ctx *ctx, int o, sl_dtype dtype, int ndim, const char *layout)
{
    assert(o >= 0 && o < ctx->pn->nout && ndim >= 0 && ndim <= SL_MAX_NDIM);
    sl_batch *b = &ctx->sn->wouts[o];
    int n = sl__ctx_output_size(ctx, o);
    if (sl__batch_begin(b, n, dtype, ndim, layout) != SL_OK) {
        ctx->oom = SL_ENOMEM;
        b->size = 0;
        return;
    }
    const sl_batch *in = sl_ctx_input(ctx, 0);
    if (in && in->size == n)
        memcpy((void *)b->sources, in->sources, sizeof(char *) * (size_t)n);
}

void sl_ctx_set_shape(sl_ctx *ctx, int o, int sample, const int64_t *shape)
{
    sl_batch *b = &ctx->sn->wouts[o];
    assert(sample >= 0 && sample < b->size);
    for (int d = 0; d < b->ndim; d++) {
        assert(shape[d] >= 0);
        sl__batch_shape_mut(b, sample)[d] = shape[d];
    }
}

void sl_ctx_set_source(sl_ctx *ctx, int o, int sample, const char *source)
{
    sl_batch *b = &ctx->sn->wouts[o];
    assert(sample >= 0 && sample < b->size);
    b->sources[sample] = source;
}

void *sl_ctx_output_data(sl_ctx *ctx, int o, int sample)
{
    sl_batch *b = &ctx->sn->wouts[o];
    if (b->sample_ptrs) /* a fused node's output: the sample's scratch */
        return b->sample_ptrs[sample];
    return b->data + b->offsets[sample];
}

const int64_t *sl_ctx_output_shape(const sl_ctx *ctx, int o, int sample)
{
    return sl_batch_shape(&ctx->sn->wouts[o], sample);
}

void sl_ctx_input_roi(sl_ctx *ctx, int i, int sample, const int64_t *lo, const int64_t *hi)
{
    if (i < 0 || i >= ctx->pn->ninputs || sample < 0 || sample >= sl_ctx_batch_size(ctx))
        return;
    const sl__ref *r = &ctx->pn->inputs[i];
    if (ctx->p->plan->nodes[r->node].fuse_into != ctx->sn->node)
        return; /* its producer writes the whole sample anyway */
    sl__snode *pr = &ctx->slot->nodes[r->node];
    const sl_batch *b = &pr->outs[0];
    const int64_t *shape = sl_batch_shape(b, sample);
    int64_t *box = pr->roi + (size_t)sample * 2 * SL_MAX_NDIM;
    for (int d = 0; d < b->ndim; d++) {
        int64_t l = lo[d] < 0 ? 0 : lo[d] > shape[d] ? shape[d] : lo[d];
        int64_t h = hi[d] < l ? l : hi[d] > shape[d] ? shape[d] : hi[d];
        if (pr->roi_set[sample]) { /* the box covering both */
            l = l < box[d] ? l : box[d];
            h = h > box[SL_MAX_NDIM + d] ? h : box[SL_MAX_NDIM + d];
        }
        box[d] = l;
        box[SL_MAX_NDIM + d] = h;
    }
    pr->roi_set[sample] = true;
}

bool sl_ctx_output_roi(const sl_ctx *ctx, int o, int sample, int64_t *lo, int64_t *hi)
{
    const sl__snode *sn = ctx->sn;
    if (o != 0 || !sn->roi || sample < 0 || sample >= sl_ctx_batch_size(ctx) ||
        !sn->roi_set[sample])
        return false;
    const int64_t *box = sn->roi + (size_t)sample * 2 * SL_MAX_NDIM;
    for (int d = 0; d < sn->outs[0].ndim; d++) {
        lo[d] = box[d];
        hi[d] = box[SL_MAX_NDIM + d];
    }
    return true;
}

void *sl_ctx_scratch(sl_ctx *ctx, size_t bytes)
{
    return sl_ctx_scratch_n(ctx, 0, bytes);
}

void *sl_ctx_scratch_n(sl_ctx *ctx, int k, size_t bytes)
{
    assert(k >= 0 && k < SL_SCRATCH_BUFFERS);
    return sl__scratch_get(&ctx->p->scratch[ctx->worker * SL_SCRATCH_BUFFERS + k], bytes,
                           &ctx->p->scratch_hw[k]);
}

void *sl__scratch_get(sl__scratch *s, size_t bytes, atomic_size_t *hw)
{
    size_t h = atomic_load_explicit(hw, memory_order_relaxed);
    while (bytes > h && !atomic_compare_exchange_weak_explicit(hw, &h, bytes, memory_order_relaxed,
                                                               memory_order_relaxed)) {
    }
    bytes = bytes > h ? bytes : h;
    if (bytes <= s->cap)
        return s->buf;
    size_t cap = bytes + bytes / 4;
    void *buf = sl__aligned_alloc(cap);
    if (!buf)
        return NULL;
    sl__free(s->buf);
    s->buf = buf;
    s->cap = cap;
    return buf;
}

/* ---- argument values ------------------------------------------------------------------- */

bool sl_ctx_arg_is_set(const sl_ctx *ctx, int arg)
{
    return ctx->pn->args[arg].user_set;
}

static double scalar(const sl_ctx *ctx, int arg, int sample)
{
    const sl_batch *b = arg_batch(ctx, arg);
    if (b)
        return elem(b, sample, 0);
    const sl__value *v = &ctx->pn->args[arg].value;
    switch (v->kind) {
    case SL__V_BOOL: return v->b;
    case SL__V_INT: return (double)v->i;
    case SL__V_FLOAT: return v->f;
    case SL__V_FLOATS: return v->n ? v->floats[0] : 0;
    case SL__V_INTS: return v->n ? (double)v->ints[0] : 0;
    default: return 0;
    }
}

bool sl_ctx_arg_bool(const sl_ctx *ctx, int arg, int sample)
{
    return scalar(ctx, arg, sample) != 0;
}

int64_t sl_ctx_arg_int(const sl_ctx *ctx, int arg, int sample)
{
    const sl_batch *b = arg_batch(ctx, arg);
    if (!b && ctx->pn->args[arg].value.kind == SL__V_INT)
        return ctx->pn->args[arg].value.i; /* exact beyond 2^53 */
    return (int64_t)llround(scalar(ctx, arg, sample));
}

double sl_ctx_arg_float(const sl_ctx *ctx, int arg, int sample)
{
    return scalar(ctx, arg, sample);
}

const char *sl_ctx_arg_str(const sl_ctx *ctx, int arg)
{
    return ctx->pn->args[arg].value.s;
}

sl_dtype sl_ctx_arg_dtype(const sl_ctx *ctx, int arg)
{
    return (sl_dtype)ctx->pn->args[arg].value.i;
}

/* Copies list argument values into out as doubles; returns the full length. */
static int list_values(const sl_ctx *ctx, int arg, int sample, double *out, int max)
{
    const sl_batch *b = arg_batch(ctx, arg);
    if (b) {
        int n = (int)sl_batch_sample_numel(b, sample);
        for (int k = 0; k < n && k < max; k++)
            out[k] = elem(b, sample, k);
        return n;
    }
    const sl__value *v = &ctx->pn->args[arg].value;
    for (int k = 0; k < v->n && k < max; k++)
        out[k] = v->kind == SL__V_INTS ? (double)v->ints[k] : v->floats[k];
    return v->n;
}

int sl_ctx_arg_floats(const sl_ctx *ctx, int arg, int sample, double *out, int max)
{
    return list_values(ctx, arg, sample, out, max);
}

int sl_ctx_arg_ints(const sl_ctx *ctx, int arg, int sample, int64_t *out, int max)
{
    const sl__value *v = &ctx->pn->args[arg].value;
    if (!arg_batch(ctx, arg) && v->kind == SL__V_INTS) {
        for (int k = 0; k < v->n && k < max; k++)
            out[k] = v->ints[k];
        return v->n;
    }
    double tmp[SL_MAX_NDIM * 4];
    int n = list_values(ctx, arg, sample, tmp, (int)(sizeof tmp / sizeof tmp[0]));
    for (int k = 0; k < n && k < max && k < (int)(sizeof tmp / sizeof tmp[0]); k++)
        out[k] = (int64_t)llround(tmp[k]);
    return n;
}

/* ---- errors ------------------------------------------------------------------------------ */

static const char *sample_source(const sl_ctx *ctx)
{
    if (ctx->sample < 0)
        return NULL;
    if (sl__op_is_split(ctx->pn->op) || sl__op_is_merge(ctx->pn->op)) {
        /* their outputs (and a merge's inputs) count samples otherwise: the predicate's are
         * the node's own */
        sl__ref r = ctx->pn->args[sl_op_arg_index(ctx->pn->op, "predicate")].input;
        const sl_batch *pb = r.node >= 0 ? &ctx->slot->nodes[r.node].outs[r.out] : NULL;
        if (pb && ctx->sample < pb->size && pb->sources[ctx->sample])
            return pb->sources[ctx->sample];
        const sl_batch *in = sl__op_is_split(ctx->pn->op) ? sl_ctx_input(ctx, 0) : NULL;
        return in && ctx->sample < in->size ? in->sources[ctx->sample] : NULL;
    }
    const sl_batch *out = ctx->pn->nout > 0 ? &ctx->sn->wouts[0] : NULL;
    if (out && ctx->sample < out->size && out->sources[ctx->sample])
        return out->sources[ctx->sample];
    const sl_batch *in = sl_ctx_input(ctx, 0);
    if (in && ctx->sample < in->size)
        return in->sources[ctx->sample];
    return NULL;
}

void sl_ctx_focus_sample(sl_ctx *ctx, int sample)
{
    ctx->sample = sample >= 0 && sample < sl_ctx_batch_size(ctx) ? sample : -1;
}

sl_status sl_fail(sl_ctx *ctx, sl_status code, const char *fmt, ...)
{
    sl__error e;
    va_list ap;
    va_start(ap, fmt);
    if (ctx->pn->scope == 0) {
        sl__error_setv(&e, code, ctx->pn->op->name, ctx->pn->name, ctx->slot->iteration,
                       ctx->sample, sample_source(ctx), fmt, ap);
    } else { /* inside a conditional: the sample's index in the whole batch, and the branch */
        char detail[sizeof e.detail], where[512];
        vsnprintf(detail, sizeof detail, fmt, ap);
        sl__plan_describe_scope(ctx->p->plan, ctx->pn->scope, where, sizeof where);
        sl__error_set(&e, code, ctx->pn->op->name, ctx->pn->name, ctx->slot->iteration,
                      sl__ctx_sample_index(ctx, ctx->sample), sample_source(ctx), "%s (in %s)",
                      detail, where);
    }
    va_end(ap);
    ctx->failed = true;
    if (ctx->sample >= 0 && sl__bad_mark(ctx, &e))
        return code; /* skipped or replaced: the frame goes on (bad.c) */
    sl__exec_frame_fail(ctx->slot, &e, ctx->p);
    return code;
}

/* ---- the per-sample size limit ------------------------------------------------------------ */

size_t sl_ctx_max_sample_bytes(const sl_ctx *ctx)
{
    return (size_t)ctx->p->opt.max_sample_bytes;
}

/* "1.5 GiB", "12.0 MiB", "300 bytes". */
static void size_text(char *buf, size_t len, size_t bytes)
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%zu bytes", bytes);
    else
        snprintf(buf, len, "%.1f %s", v, unit[u]);
}

sl_status sl__ctx_check_sizes(sl_ctx *ctx, const sl_batch *b, int o)
{
    size_t max = sl_ctx_max_sample_bytes(ctx), bytes;
    for (int i = 0; i < b->size; i++) {
        bool fits = sl__batch_sample_bytes(b, i, &bytes);
        if (fits && bytes <= max)
            continue;
        char shape[32 * SL_MAX_NDIM] = "", have[32], limit[32];
        for (int d = 0, n = 0; d < b->ndim; d++)
            n += snprintf(shape + n, sizeof shape - (size_t)n, "%s%lld", d ? ", " : "",
                          (long long)sl__batch_shape_mut((sl_batch *)b, i)[d]);
        size_text(have, sizeof have, bytes);
        size_text(limit, sizeof limit, max);
        int was = ctx->sample;
        ctx->sample = i;
        sl_status st =
            fits ? sl_fail(ctx, SL_EINVAL,
                           "output %d would take %s for this sample (shape [%s] of %s), more "
                           "than max_sample_bytes (%s); raise it if the size is right",
                           o, have, shape, sl_dtype_name(b->dtype), limit)
                 : sl_fail(ctx, SL_EINVAL,
                           "output %d has an impossible size for this sample (shape [%s] of "
                           "%s)",
                           o, shape, sl_dtype_name(b->dtype));
        ctx->sample = was;
        if (atomic_load(&ctx->slot->failed))
            return st;
        ctx->failed = false;
        /* a bad sample now (bad.c): it takes a good one's shape, and the check starts over */
        if (sl__bad_shapes(ctx, (sl_batch *)b) != SL_OK)
            return SL_ECORRUPT;
        i = -1;
    }
    return SL_OK;
}

/* ---- init (build time) ------------------------------------------------------------------- */

static const sl__value *init_value(const sl_op_init *ini, int arg)
{
    return &ini->p->plan->nodes[ini->node].args[arg].value;
}

bool sl_init_arg_is_set(const sl_op_init *ini, int arg)
{
    return ini->p->plan->nodes[ini->node].args[arg].user_set;
}

bool sl_init_arg_is_input(const sl_op_init *ini, int arg)
{
    return ini->p->plan->nodes[ini->node].args[arg].input.node >= 0;
}

bool sl_init_arg_bool(const sl_op_init *ini, int arg)
{
    return init_value(ini, arg)->b;
}

int64_t sl_init_arg_int(const sl_op_init *ini, int arg)
{
    return init_value(ini, arg)->i;
}

double sl_init_arg_float(const sl_op_init *ini, int arg)
{
    return init_value(ini, arg)->f;
}

const char *sl_init_arg_str(const sl_op_init *ini, int arg)
{
    return init_value(ini, arg)->s;
}

sl_dtype sl_init_arg_dtype(const sl_op_init *ini, int arg)
{
    return (sl_dtype)init_value(ini, arg)->i;
}

const int64_t *sl_init_arg_ints(const sl_op_init *ini, int arg, int *n)
{
    *n = init_value(ini, arg)->n;
    return init_value(ini, arg)->ints;
}

const double *sl_init_arg_floats(const sl_op_init *ini, int arg, int *n)
{
    *n = init_value(ini, arg)->n;
    return init_value(ini, arg)->floats;
}

const char *const *sl_init_arg_strs(const sl_op_init *ini, int arg, int *n)
{
    *n = init_value(ini, arg)->n;
    return (const char *const *)init_value(ini, arg)->strs;
}

int sl_init_batch_size(const sl_op_init *ini)
{
    return ini->p->opt.batch_size;
}

uint64_t sl_init_seed(const sl_op_init *ini)
{
    return ini->p->plan->nodes[ini->node].seed;
}

const char *sl_init_node_name(const sl_op_init *ini)
{
    return ini->p->plan->nodes[ini->node].name;
}

int sl_init_num_outputs(const sl_op_init *ini)
{
    return ini->p->plan->nodes[ini->node].nout;
}

bool sl_init_callback(const sl_op_init *ini, sl_callback_fn *fn, void **user)
{
    const char *name = ini->p->plan->nodes[ini->node].name;
    for (int k = 0; k < ini->p->ncallbacks; k++) {
        if (strcmp(ini->p->callbacks[k].node, name) == 0) {
            *fn = ini->p->callbacks[k].fn;
            *user = ini->p->callbacks[k].user;
            return true;
        }
    }
    return false;
}

sl_status sl_init_fail(sl_op_init *ini, sl_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const sl__pnode *pn = &ini->p->plan->nodes[ini->node];
    sl__error_setv(&ini->p->error, code, pn->op->name, pn->name, -1, -1, NULL, fmt, ap);
    va_end(ap);
    ini->failed = true;
    return code;
}

sl_rng sl_ctx_rng(const sl_ctx *ctx, int sample)
{
    sl_rng r;
    /* counted by the sample's index in the whole batch: a conditional draws for each sample
     * what it would draw unconditionally, however the batch was split */
    sl_rng_init(&r, ctx->pn->seed, (uint64_t)ctx->slot->iteration,
                (uint64_t)sl__ctx_sample_index(ctx, sample));
    return r;
}
