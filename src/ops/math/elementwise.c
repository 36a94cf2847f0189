/* src/ops/math/elementwise.c: broadcasting and the chunked driver of the element-wise family
 * (see elementwise.h; what the types mean is decided in ew_plan.c).
 *
 * Exports sl__ew_setup, sl__ew_setup_sample, sl__ew_run_sample and the host part of the GPU
 * run, sl__ew_run_gpu (same plan, broadcasting and constants; kernels in elementwise.cu).
 *
 * Every operand is converted to the compute type chunk by chunk (CHUNK elements in per-worker
 * scratch, so nothing is allocated per sample) and one typed loop runs per chunk. Broadcasting
 * is NumPy's, per sample: shapes are right-aligned, missing leading extents count as 1, and each
 * extent pair must be equal or contain a 1. Adjacent dimensions that broadcast alike are merged
 * first, so equal shapes are one long row and a per-sample scalar is one filled chunk; a small
 * operand repeated along the outer dimension (an image times a per-channel constant) is
 * pre-tiled, so rows of 3 elements still run as long chunks.
 * Invariant: setup, setup_sample and run_sample derive the same plan from the same inputs
 * (sl__ew_plan_iteration is a pure function of them); run_sample never fails on types.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ops/math/elementwise.h"

enum { CHUNK = 1024 }; /* elements per kernel call; 5 buffers of CHUNK * 8 bytes */

/* ---- shapes and layouts ----------------------------------------------------------------- */

static int out_ndim(const sl_ctx *ctx, const sl__ew_operands *ops)
{
    int nd = 0;
    for (int k = 0; k < ops->n; k++)
        if (ops->input[k] >= 0 && sl_batch_ndim(sl_ctx_input(ctx, ops->input[k])) > nd)
            nd = sl_batch_ndim(sl_ctx_input(ctx, ops->input[k]));
    return nd;
}

static bool is_suffix(const char *s, const char *of)
{
    size_t n = strlen(s), m = strlen(of);
    return n <= m && !strcmp(of + m - n, s);
}

/* DALI's rule: the layout of an operand with the most dimensions (none if that operand has
 * none); two layouts must be equal or one a suffix of the other. */
static sl_status out_layout(sl_ctx *ctx, const sl__ew_operands *ops, int nd, const char **out)
{
    const char *l[2] = {"", ""};
    int n[2] = {-1, -1};
    *out = NULL;
    for (int k = 0; k < ops->n; k++) {
        if (ops->input[k] < 0)
            continue;
        const sl_batch *b = sl_ctx_input(ctx, ops->input[k]);
        l[k] = sl_batch_layout(b);
        n[k] = sl_batch_ndim(b);
    }
    if (l[0][0] && l[1][0] && !is_suffix(l[0], l[1]) && !is_suffix(l[1], l[0]))
        return sl_fail(ctx, SL_EINVAL,
                       "input layouts \"%s\" and \"%s\" do not match: they must be equal or one "
                       "must be a suffix of the other",
                       l[0], l[1]);
    for (int k = 0; k < 2 && !*out; k++)
        if (n[k] == nd && l[k][0])
            *out = l[k];
    return SL_OK;
}

static void format_shape(char *buf, size_t cap, const int64_t *s, int nd)
{
    size_t len = 0;
    buf[0] = 0;
    for (int d = 0; d < nd && len < cap; d++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%lld", d ? " x " : "", (long long)s[d]);
    if (nd == 0)
        snprintf(buf, cap, "scalar");
}

/* Output shape of sample i: NumPy broadcasting of the tensor operands (a constant is a
 * scalar). */
static sl_status broadcast(sl_ctx *ctx, const sl__ew_operands *ops, int i, int nd, int64_t *out)
{
    const int64_t *first = NULL;
    int first_nd = 0;
    for (int d = 0; d < nd; d++)
        out[d] = 1;
    for (int k = 0; k < ops->n; k++) {
        if (ops->input[k] < 0)
            continue;
        const sl_batch *b = sl_ctx_input(ctx, ops->input[k]);
        const int n = sl_batch_ndim(b);
        const int64_t *s = sl_batch_shape(b, i);
        for (int j = 0; j < n; j++) {
            int64_t *o = &out[nd - n + j];
            if (*o == 1)
                *o = s[j];
            else if (s[j] != 1 && s[j] != *o) {
                char sa[160], sb[160];
                format_shape(sa, sizeof sa, first, first_nd);
                format_shape(sb, sizeof sb, s, n);
                return sl_fail(ctx, SL_EINVAL,
                               "can't broadcast shapes (%s) and (%s): extents must be equal or "
                               "one of them 1 in each dimension, counted from the last",
                               sa, sb);
            }
        }
        first = s;
        first_nd = n;
    }
    return SL_OK;
}

/* ---- the driver ------------------------------------------------------------------------- */

/* One kernel argument: where its values come from and how they become the compute type. */
typedef struct src {
    const uint8_t *data;         /* sample data, or the constant */
    size_t esize, csize;         /* bytes per element: source type, compute type */
    sl__ew_conv_fn conv;         /* NULL: the data is already the compute type */
    bool round16;                /* round to float16 after converting */
    int64_t stride[SL_MAX_NDIM]; /* elements per step of each merged dimension; 0: broadcast */
    int64_t period;              /* > 0: pre-tiled, its row of `period` elements repeats */
    uint8_t *buf, *tile;         /* CHUNK compute-type elements each (scratch) */
    int64_t tile_base;           /* element offset the tile was built from; -1: none */
} src;

/* The merged iteration space: m dimensions of extents ext (the output, C order). */
typedef struct space {
    int m;
    int64_t ext[SL_MAX_NDIM];
} space;

static void convert(const src *s, const uint8_t *p, void *dst, int64_t n)
{
    if (s->conv)
        s->conv(p, dst, n);
    else
        memcpy(dst, p, (size_t)n * s->csize);
    if (s->round16)
        sl__ew_round_f16(dst, n);
}

/* dst[0..n) = the value at v (csize bytes), n >= 1. */
static void fill(uint8_t *dst, const void *v, size_t csize, int64_t n)
{
    if (dst != v)
        memcpy(dst, v, csize);
    for (int64_t done = 1; done < n;) {
        int64_t c = done < n - done ? done : n - done;
        memcpy(dst + (size_t)done * csize, dst, (size_t)c * csize);
        done += c;
    }
}

/* The compute-type values of elements [k, k + len) of the row starting at element `base`
 * (inner: the row's stride, 0 or 1). */
static const void *fetch(src *s, int64_t base, int64_t k, int64_t inner, int64_t len)
{
    const uint8_t *p = s->data + (size_t)(base + k * inner) * s->esize;
    if (s->period) {
        if (s->tile_base != base) {
            convert(s, p, s->tile, s->period);
            fill(s->tile, s->tile, s->period * s->csize, CHUNK / s->period);
            s->tile_base = base;
        }
        return s->tile;
    }
    if (inner == 0) {
        sl__ew_scalar one;
        convert(s, p, &one, 1);
        fill(s->buf, &one, s->csize, len);
        return s->buf;
    }
    if (!s->conv && !s->round16)
        return p;
    convert(s, p, s->buf, len);
    return s->buf;
}

/* Merges adjacent output dimensions that every operand broadcasts alike (extent-1 output
 * dimensions vanish) and sets each operand's strides over the merged dimensions. */
static void merge_dims(const int64_t *out, int nd, const int64_t *const *shape, const int *ndim,
                       int n, space *sp, src *s)
{
    bool flag[SL_MAX_NDIM][2] = {{false}};
    sp->m = 0;
    for (int d = 0; d < nd; d++) {
        if (out[d] == 1)
            continue;
        bool f[2] = {false, false};
        for (int k = 0; k < n; k++) {
            int j = d - (nd - ndim[k]);
            f[k] = j >= 0 && shape[k][j] != 1;
        }
        if (sp->m > 0 && f[0] == flag[sp->m - 1][0] && f[1] == flag[sp->m - 1][1]) {
            sp->ext[sp->m - 1] *= out[d];
            continue;
        }
        sp->ext[sp->m] = out[d];
        flag[sp->m][0] = f[0];
        flag[sp->m][1] = f[1];
        sp->m++;
    }
    if (sp->m == 0)
        sp->ext[sp->m++] = 1;
    for (int k = 0; k < n; k++) {
        int64_t st = 1;
        for (int j = sp->m - 1; j >= 0; j--) {
            s[k].stride[j] = flag[j][k] ? st : 0;
            st *= flag[j][k] ? sp->ext[j] : 1;
        }
    }
}

/* Rows shorter than CHUNK / 4 where every operand is either contiguous over the last two
 * dimensions or the same row repeated along the outer one: merge those two dimensions and
 * pre-tile the repeated rows, so each chunk covers many rows. */
static void tile_rows(space *sp, src *s, int n)
{
    const int m = sp->m;
    if (m < 2 || sp->ext[m - 1] > CHUNK / 4)
        return;
    const int64_t L = sp->ext[m - 1];
    bool repeated = false;
    for (int k = 0; k < n; k++) {
        if (s[k].stride[m - 1] != 1 || (s[k].stride[m - 2] != L && s[k].stride[m - 2] != 0))
            return;
        repeated |= s[k].stride[m - 2] == 0;
    }
    if (!repeated)
        return;
    for (int k = 0; k < n; k++) {
        s[k].period = s[k].stride[m - 2] == 0 ? L : 0;
        s[k].stride[m - 2] = s[k].period ? 0 : 1;
    }
    sp->ext[m - 2] *= L;
    sp->m = m - 1;
}

/* Runs the kernel over every output element; returns non-zero on an integer division by 0. */
static int run_space(const sl__ew_plan *pl, src *s, int n, const space *sp, uint8_t *out,
                     uint8_t *obuf, const void *lo, const void *hi)
{
    const int m = sp->m;
    const int64_t L = sp->ext[m - 1];
    const int64_t period = s[0].period ? s[0].period : n > 1 ? s[1].period : 0;
    const int64_t chunk = period ? CHUNK / period * period : CHUNK;
    const size_t osize = sl_dtype_size(pl->out);
    int64_t idx[SL_MAX_NDIM] = {0}, base[2] = {0, 0}, rows = 1, orow = 0;
    int bad = 0;
    for (int d = 0; d < m - 1; d++)
        rows *= sp->ext[d];
    for (int64_t r = 0; r < rows; r++, orow += L) {
        for (int64_t k = 0; k < L; k += chunk) {
            const int64_t len = L - k < chunk ? L - k : chunk;
            const void *a = fetch(&s[0], base[0], k, s[0].stride[m - 1], len);
            uint8_t *o = pl->out_conv ? obuf : out + (size_t)(orow + k) * osize;
            if (pl->bin)
                bad |= pl->bin(a, fetch(&s[1], base[1], k, s[1].stride[m - 1], len), o, len);
            else if (pl->un)
                bad |= pl->un(a, o, len);
            else
                pl->clamp(a, lo, hi, o, len);
            if (pl->out_conv)
                pl->out_conv(obuf, out + (size_t)(orow + k) * osize, len);
        }
        for (int d = m - 2; d >= 0; d--) { /* next row: odometer over the outer dimensions */
            for (int k = 0; k < n; k++)
                base[k] += s[k].stride[d];
            if (++idx[d] < sp->ext[d])
                break;
            for (int k = 0; k < n; k++)
                base[k] -= s[k].stride[d] * sp->ext[d];
            idx[d] = 0;
        }
    }
    return bad;
}

/* Fills the kernel arguments of sample i (data, conversions, strides) and the space. */
static void make_srcs(sl_ctx *ctx, const sl__ew_operands *ops, const sl__ew_plan *pl, int i,
                      const sl__ew_scalar *c, const int64_t *oshape, int nd, uint8_t *scratch,
                      src *s, space *sp)
{
    const int64_t *shape[2] = {NULL, NULL};
    int ndim[2] = {0, 0};
    const int nargs = pl->clamp ? 1 : ops->n;
    for (int j = 0; j < nargs; j++) {
        const int k = pl->order[j];
        memset(&s[j], 0, sizeof s[j]);
        if (ops->input[k] >= 0) {
            const sl_batch *b = sl_ctx_input(ctx, ops->input[k]);
            s[j].data = sl_batch_sample_data(b, i);
            shape[j] = sl_batch_shape(b, i);
            ndim[j] = sl_batch_ndim(b);
        } else {
            s[j].data = (const uint8_t *)&c[0];
        }
        s[j].esize = sl_dtype_size(ops->type[k]);
        s[j].csize = sl_dtype_size(pl->in_ct[j]);
        s[j].conv = pl->conv[j];
        s[j].round16 = pl->round16[j];
        s[j].buf = scratch + (size_t)(2 * j) * CHUNK * 8;
        s[j].tile = s[j].buf + CHUNK * 8;
        s[j].tile_base = -1;
    }
    merge_dims(oshape, nd, shape, ndim, nargs, sp, s);
    tile_rows(sp, s, nargs);
}

sl_status sl__ew_run_sample(sl_ctx *ctx, int i)
{
    sl__ew_operands ops;
    sl__ew_plan pl;
    sl__ew_scalar c[2], bounds[2];
    src s[2] = {{0}, {0}};
    space sp;
    sl_status st = sl__ew_plan_iteration(ctx, &ops, &pl);
    if (st != SL_OK || (st = sl__ew_read_consts(ctx, &ops, i, c)) != SL_OK)
        return st;
    const int nd = out_ndim(ctx, &ops);
    const int64_t *oshape = sl_ctx_output_shape(ctx, 0, i);
    int64_t numel = 1;
    for (int d = 0; d < nd; d++)
        numel *= oshape[d];
    if (numel == 0)
        return SL_OK;
    uint8_t *scratch = sl_ctx_scratch(ctx, 5 * CHUNK * 8);
    if (!scratch)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d bytes of scratch", 5 * CHUNK * 8);
    make_srcs(ctx, &ops, &pl, i, c, oshape, nd, scratch, s, &sp);
    if (pl.clamp) { /* the bounds in the compute type, like operand 1 */
        src b = {.csize = sl_dtype_size(pl.in_ct[1]), .conv = pl.conv[1], .round16 = pl.round16[1]};
        convert(&b, (const uint8_t *)&c[0], &bounds[0], 1);
        convert(&b, (const uint8_t *)&c[1], &bounds[1], 1);
    }
    if (run_space(&pl, s, pl.clamp ? 1 : ops.n, &sp, sl_ctx_output_data(ctx, 0, i),
                  scratch + 4 * CHUNK * 8, &bounds[0], &bounds[1])) {
        const ew_op op = ((const sl__ew_state *)sl_ctx_state(ctx))->op;
        return sl_fail(ctx, SL_EINVAL,
                       "integer division by zero in `%s` (%s) on %s: the divisor has a zero "
                       "element",
                       sl__ew_op_symbol(op), sl__ew_op_name(op), sl_dtype_name(pl.ct));
    }
    return SL_OK;
}

/* ---- the GPU run (host part) ------------------------------------------------------------ */

#ifdef SLUICE_HAVE_CUDA
static sl__ew_gpu_kind gpu_kind(ew_op op, const sl__ew_plan *pl)
{
    if (pl->clamp)
        return SL__EW_GPU_CLAMP;
    if (pl->un)
        return SL__EW_GPU_UNARY;
    if (op >= EW_EQ && op <= EW_GEQ)
        return pl->in_ct[1] != pl->in_ct[0] ? SL__EW_GPU_MIXED : SL__EW_GPU_CMP;
    return SL__EW_GPU_ARITH;
}

/* The operation the kernel runs: a comparison of a uint64 left operand with a signed one runs
 * mirrored (mixed_compare in ew_plan.c swapped the arguments). */
static ew_op gpu_op(ew_op op, const sl__ew_plan *pl)
{
    static const ew_op mirror[] = {EW_EQ, EW_NEQ, EW_GT, EW_GEQ, EW_LT, EW_LEQ};
    return gpu_kind(op, pl) == SL__EW_GPU_MIXED && pl->order[0] == 1 ? mirror[op - EW_EQ] : op;
}

static bool int_divide(ew_op op, sl_dtype ct)
{
    return (op == EW_DIV || op == EW_FLOORDIV || op == EW_MOD) && ct != SL_DTYPE_FLOAT32 &&
           ct != SL_DTYPE_FLOAT64;
}

/* Sample i's kernel arguments: pointers, strides over the merged dimensions, constants in their
 * compute type (converted as run_sample converts them). Returns false on a constant integer
 * divisor of 0 (the CPU run fails such a sample; so does this one). */
static bool gpu_sample(sl_ctx *ctx, const sl__ew_operands *ops, const sl__ew_plan *pl, int i,
                       const sl__ew_scalar *c, const int64_t *oshape, int nd, sl__ew_gpu_sample *g)
{
    const int nargs = pl->clamp ? 1 : ops->n;
    const int64_t *shape[2] = {NULL, NULL};
    int ndim[2] = {0, 0};
    src s[2];
    space sp;
    memset(g, 0, sizeof *g);
    memset(s, 0, sizeof s);
    g->out = sl_ctx_output_data(ctx, 0, i);
    for (int j = 0; j < nargs; j++) {
        const int k = pl->order[j];
        src b = {
            .csize = sl_dtype_size(pl->in_ct[j]), .conv = pl->conv[j], .round16 = pl->round16[j]};
        if (ops->input[k] < 0) {
            convert(&b, (const uint8_t *)&c[0], &g->c[j], 1);
            continue;
        }
        const sl_batch *in = sl_ctx_input(ctx, ops->input[k]);
        g->arg[j] = sl_batch_sample_data(in, i);
        shape[j] = sl_batch_shape(in, i);
        ndim[j] = sl_batch_ndim(in);
    }
    if (pl->clamp) { /* the bounds in the compute type, like operand 1 */
        src b = {
            .csize = sl_dtype_size(pl->in_ct[1]), .conv = pl->conv[1], .round16 = pl->round16[1]};
        convert(&b, (const uint8_t *)&c[0], &g->c[0], 1);
        convert(&b, (const uint8_t *)&c[1], &g->c[1], 1);
    }
    merge_dims(oshape, nd, shape, ndim, nargs, &sp, s);
    g->m = sp.m;
    g->numel = 1;
    for (int d = 0; d < sp.m; d++) {
        g->ext[d] = sp.ext[d];
        g->numel *= sp.ext[d];
        for (int j = 0; j < nargs; j++)
            g->stride[j][d] = s[j].stride[d];
    }
    if (nargs == 2 && !g->arg[1] &&
        int_divide(((const sl__ew_state *)sl_ctx_state(ctx))->op, pl->ct)) {
        sl__ew_scalar zero;
        memset(&zero, 0, sizeof zero);
        return memcmp(&g->c[1], &zero, sl_dtype_size(pl->ct)) != 0;
    }
    return true;
}

sl_status sl__ew_run_gpu(sl_ctx *ctx)
{
    const ew_op op = ((const sl__ew_state *)sl_ctx_state(ctx))->op;
    const int n = sl_ctx_batch_size(ctx);
    sl__ew_operands ops;
    sl__ew_plan pl;
    sl_status st = sl__ew_plan_iteration(ctx, &ops, &pl);
    if (st != SL_OK || n <= 0)
        return st;
    sl__ew_gpu_sample *h = sl_ctx_scratch(ctx, sizeof(*h) * (size_t)n);
    if (!h)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    const int nd = out_ndim(ctx, &ops);
    int64_t max_numel = 0;
    for (int i = 0; i < n; i++) {
        sl__ew_scalar c[2];
        if ((st = sl__ew_read_consts(ctx, &ops, i, c)) != SL_OK)
            return st;
        const int64_t *oshape = sl_ctx_output_shape(ctx, 0, i);
        int64_t numel = 1;
        for (int d = 0; d < nd; d++)
            numel *= oshape[d];
        if (numel == 0) {
            memset(&h[i], 0, sizeof h[i]);
            continue;
        }
        sl_ctx_focus_sample(ctx, i);
        if (!gpu_sample(ctx, &ops, &pl, i, c, oshape, nd, &h[i]))
            return sl_fail(ctx, SL_EINVAL,
                           "integer division by zero in `%s` (%s) on %s: the divisor has a zero "
                           "element",
                           sl__ew_op_symbol(op), sl__ew_op_name(op), sl_dtype_name(pl.ct));
        max_numel = h[i].numel > max_numel ? h[i].numel : max_numel;
    }
    sl_ctx_focus_sample(ctx, -1);
    sl__ew_gpu_job job = {
        .kind = gpu_kind(op, &pl), .op = gpu_op(op, &pl), .ct = pl.ct, .out = pl.out};
    if (int_divide(op, pl.ct)) { /* a zero inside a divisor tensor fails its sample, as here */
        char msg[192];
        snprintf(msg, sizeof msg,
                 "integer division by zero in `%s` (%s) on %s: the divisor has a zero element",
                 sl__ew_op_symbol(op), sl__ew_op_name(op), sl_dtype_name(pl.ct));
        if (!(job.flag = sl_ctx_gpu_error_flag(ctx, msg)))
            return SL_ENOMEM;
    }
    for (int j = 0; j < (pl.clamp ? 1 : ops.n); j++) {
        job.src[j] = ops.type[pl.order[j]];
        job.round16[j] = pl.round16[j];
    }
    return sl__ew_gpu_launch(ctx, &job, h, n, max_numel);
}
#endif

/* ---- setup ------------------------------------------------------------------------------ */

sl_status sl__ew_setup(sl_ctx *ctx)
{
    sl__ew_operands ops;
    sl__ew_plan pl;
    const char *layout;
    sl_status st = sl__ew_plan_iteration(ctx, &ops, &pl);
    if (st != SL_OK)
        return st;
    const int nd = out_ndim(ctx, &ops);
    if ((st = out_layout(ctx, &ops, nd, &layout)) != SL_OK)
        return st;
    sl_ctx_set_output(ctx, 0, pl.out, nd, layout);
    return SL_OK;
}

sl_status sl__ew_setup_sample(sl_ctx *ctx, int i)
{
    sl__ew_operands ops;
    sl__ew_scalar c[2];
    int64_t shape[SL_MAX_NDIM];
    sl_status st = sl__ew_describe(ctx, sl_ctx_state(ctx), &ops);
    if (st != SL_OK || (st = sl__ew_read_consts(ctx, &ops, i, c)) != SL_OK ||
        (st = broadcast(ctx, &ops, i, out_ndim(ctx, &ops), shape)) != SL_OK)
        return st;
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}
