/* ops/tensor/copy_kernels.c: the copy kernels behind crop, slice, pad, flip, transpose, cat and
 * stack.
 *
 * Exports (ops/tensor/tensor.h): sl__window_scratch_bytes, sl__window_copy, sl__gather,
 * sl__deinterleave, sl__join_copy; in CUDA builds also sl__ggather_plan (tensor_gpu.h), the GPU
 * gather's host plan, which is sl__gather's own dimension merge.
 *
 * Both N-d kernels first merge adjacent dimensions that are contiguous in the same way on both
 * sides (a crop of full rows of an HWC image becomes one block copy; a vertical flip becomes a
 * copy of reversed rows), then recurse over the outer dimensions and run a tight loop on the
 * innermost one: memcpy / a converter for window copies, typed strided loops for gathers.
 * Invariant: no allocation; out-of-range input positions are never formed as pointers.
 */
#include <string.h>

#include "ops/tensor/tensor.h"
#include "ops/tensor/tensor_gpu.h" /* sl__ggather_plan */

/* ---- window copy --------------------------------------------------------------------------- */

/* The job's dimensions after merging. A merged dimension is "full" (anchor 0, out == in) iff its
 * outermost component is; a dimension merges into the one inside it only when that one is full,
 * so the merged index maps to the input exactly as the separate indices did. */
typedef struct wdims {
    int n;
    int64_t out[SL_MAX_NDIM], in[SL_MAX_NDIM], a[SL_MAX_NDIM];
    int64_t ostride[SL_MAX_NDIM], istride[SL_MAX_NDIM]; /* elements */
    int fa;         /* merged index of the per-channel fill axis, -1: one fill value */
    int64_t period; /* fill axis innermost: the fill row repeats every `period` elements */
} wdims;

static void merge_window(const sl__window_job *j, wdims *w)
{
    bool per_channel = j->nfill > 1 && j->fill_axis >= 0;
    int last = j->ndim - 1, g = SL_MAX_NDIM; /* groups fill w->x[g..] from the back */
    int fa_orig = per_channel ? j->fill_axis : -1, fa_group = -1;
    for (int d = last; d >= 0; d--) {
        bool full = g < SL_MAX_NDIM && w->a[g] == 0 && w->out[g] == w->in[g];
        bool keep_apart = fa_orig >= 0 && fa_orig != last && (d == fa_orig || d + 1 == fa_orig);
        if (d < last && full && !keep_apart) {
            w->a[g] = j->anchor[d] * w->in[g];
            w->out[g] *= j->out_shape[d];
            w->in[g] *= j->in_shape[d];
        } else {
            g--;
            w->a[g] = j->anchor[d];
            w->out[g] = j->out_shape[d];
            w->in[g] = j->in_shape[d];
        }
        if (d == fa_orig)
            fa_group = g;
    }
    w->n = SL_MAX_NDIM - g;
    memmove(w->a, w->a + g, sizeof(int64_t) * (size_t)w->n);
    memmove(w->out, w->out + g, sizeof(int64_t) * (size_t)w->n);
    memmove(w->in, w->in + g, sizeof(int64_t) * (size_t)w->n);
    w->fa = fa_group >= 0 ? fa_group - g : -1;
    w->period = (fa_orig == last && w->fa >= 0) ? j->out_shape[last] : 0;
    w->ostride[w->n - 1] = w->istride[w->n - 1] = 1;
    for (int d = w->n - 2; d >= 0; d--) {
        w->ostride[d] = w->ostride[d + 1] * w->out[d + 1];
        w->istride[d] = w->istride[d + 1] * w->in[d + 1];
    }
}

size_t sl__window_scratch_bytes(const sl__window_job *j)
{
    wdims w;
    if (j->ndim == 0)
        return 0;
    merge_window(j, &w);
    return (size_t)w.out[w.n - 1] * sl_dtype_size(j->out_type);
}

typedef struct wrun {
    const sl__window_job *j;
    wdims w;
    sl__convert_fn cv;
    size_t ies, oes;
    unsigned char *row; /* one innermost row of fill values */
} wrun;

/* Fills the row with fill value `ch` (per-channel fill on an outer axis). */
static void row_const(wrun *r, int64_t ch)
{
    const unsigned char *v = (const unsigned char *)r->j->fill + (size_t)ch * r->oes;
    int64_t n = r->w.out[r->w.n - 1];
    for (int64_t k = 0; k < n; k++)
        memcpy(r->row + (size_t)k * r->oes, v, r->oes);
}

static void row_init(wrun *r)
{
    int64_t n = r->w.out[r->w.n - 1];
    if (r->w.period > 0) {
        for (int64_t k = 0; k < n; k++)
            memcpy(r->row + (size_t)k * r->oes,
                   (const unsigned char *)r->j->fill + (size_t)(k % r->w.period) * r->oes, r->oes);
    } else {
        row_const(r, 0);
    }
}

/* Writes fill values into the whole block of dimensions d.. at out. */
static void fill_block(wrun *r, int d, unsigned char *out)
{
    const wdims *w = &r->w;
    int last = w->n - 1;
    size_t rowb = (size_t)w->out[last] * r->oes;
    if (d == last) {
        memcpy(out, r->row, rowb);
        return;
    }
    if (d > w->fa || w->period > 0) { /* the same row everywhere below d */
        int64_t rows = w->ostride[d] * w->out[d] / w->out[last];
        for (int64_t k = 0; k < rows; k++)
            memcpy(out + (size_t)k * rowb, r->row, rowb);
        return;
    }
    for (int64_t i = 0; i < w->out[d]; i++) {
        if (d == w->fa)
            row_const(r, i);
        fill_block(r, d + 1, out + (size_t)(i * w->ostride[d]) * r->oes);
    }
}

static void copy_block(wrun *r, int d, const unsigned char *in, unsigned char *out)
{
    const wdims *w = &r->w;
    const int64_t n = w->out[d], a = w->a[d], m = w->in[d];
    if (d == w->n - 1) {
        int64_t lo = -a < 0 ? 0 : -a > n ? n : -a;
        int64_t hi = m - a < lo ? lo : m - a > n ? n : m - a;
        if (lo > 0)
            memcpy(out, r->row, (size_t)lo * r->oes);
        if (hi > lo)
            r->cv(out + (size_t)lo * r->oes, in + (size_t)(a + lo) * r->ies, hi - lo);
        if (n > hi)
            memcpy(out + (size_t)hi * r->oes, r->row + (size_t)hi * r->oes,
                   (size_t)(n - hi) * r->oes);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        unsigned char *o = out + (size_t)(i * w->ostride[d]) * r->oes;
        if (d == w->fa)
            row_const(r, i);
        int64_t si = a + i;
        if (si < 0 || si >= m)
            fill_block(r, d + 1, o);
        else
            copy_block(r, d + 1, in + (size_t)(si * w->istride[d]) * r->ies, o);
    }
}

void sl__window_copy(const sl__window_job *j, void *scratch)
{
    wrun r = {.j = j,
              .cv = sl__convert_get(j->out_type, j->in_type),
              .ies = sl_dtype_size(j->in_type),
              .oes = sl_dtype_size(j->out_type),
              .row = scratch};
    if (j->ndim == 0) {
        r.cv(j->out, j->in, 1);
        return;
    }
    for (int d = 0; d < j->ndim; d++)
        if (j->out_shape[d] == 0)
            return;
    merge_window(j, &r.w);
    row_init(&r);
    copy_block(&r, 0, j->in, j->out);
}

/* ---- strided gather ------------------------------------------------------------------------ */

/* Two innermost dimensions (n1 x n0, input strides s1, s0) with a typed element copy. */
#define DEF_INNER(NAME, T)                                                                         \
    static void NAME(T *restrict o, const T *restrict s, int64_t n1, int64_t s1, int64_t n0,       \
                     int64_t s0)                                                                   \
    {                                                                                              \
        for (int64_t i = 0; i < n1; i++, o += n0)                                                  \
            for (int64_t k = 0; k < n0; k++)                                                       \
                o[k] = s[i * s1 + k * s0];                                                         \
    }
DEF_INNER(inner_1, uint8_t)
DEF_INNER(inner_2, uint16_t)
DEF_INNER(inner_4, uint32_t)
DEF_INNER(inner_8, uint64_t)

/* Whole pixels of N elements moved with a pixel stride s1 (horizontal flips of HWC images):
 * the constant N lets the compiler unroll the element loop. */
#define DEF_PIX(NAME, T, N)                                                                        \
    static void NAME(T *restrict o, const T *restrict s, int64_t n1, int64_t s1)                   \
    {                                                                                              \
        for (int64_t i = 0; i < n1; i++, o += (N))                                                 \
            for (int k = 0; k < (N); k++)                                                          \
                o[k] = s[i * s1 + k];                                                              \
    }
#define DEF_PIX_N(TAG, T)                                                                          \
    DEF_PIX(pix_##TAG##_1, T, 1)                                                                   \
    DEF_PIX(pix_##TAG##_2, T, 2) DEF_PIX(pix_##TAG##_3, T, 3) DEF_PIX(pix_##TAG##_4, T, 4)
DEF_PIX_N(1, uint8_t)
DEF_PIX_N(2, uint16_t)
DEF_PIX_N(4, uint32_t)
DEF_PIX_N(8, uint64_t)

typedef void (*pix_fn)(void *restrict o, const void *restrict s, int64_t n1, int64_t s1);
#define PIX_ROW(TAG)                                                                               \
    {                                                                                              \
        (pix_fn) pix_##TAG##_1, (pix_fn)pix_##TAG##_2, (pix_fn)pix_##TAG##_3,                      \
            (pix_fn)pix_##TAG##_4                                                                  \
    }
static const pix_fn pix_table[4][4] = {PIX_ROW(1), PIX_ROW(2), PIX_ROW(4), PIX_ROW(8)};

typedef struct gdims {
    int n;
    int64_t shape[SL_MAX_NDIM + 1], stride[SL_MAX_NDIM + 1];
    size_t es;
} gdims;

static void inner2(const gdims *g, unsigned char *out, const unsigned char *in)
{
    int64_t n1 = g->shape[g->n - 2], s1 = g->stride[g->n - 2];
    int64_t n0 = g->shape[g->n - 1], s0 = g->stride[g->n - 1];
    size_t es = g->es;
    if (s0 == 1 && n0 <= 4 && s1 != n0) { /* small pixels, e.g. a flipped RGB row */
        int e = es == 1 ? 0 : es == 2 ? 1 : es == 4 ? 2 : 3;
        pix_table[e][n0 - 1](out, in, n1, s1);
        return;
    }
    if (s0 == 1) {
        for (int64_t i = 0; i < n1; i++)
            memcpy(out + (size_t)(i * n0) * es, in + (ptrdiff_t)(i * s1) * (ptrdiff_t)es,
                   (size_t)n0 * es);
        return;
    }
    switch (es) {
    case 1: inner_1((void *)out, (const void *)in, n1, s1, n0, s0); break;
    case 2: inner_2((void *)out, (const void *)in, n1, s1, n0, s0); break;
    case 4: inner_4((void *)out, (const void *)in, n1, s1, n0, s0); break;
    default: inner_8((void *)out, (const void *)in, n1, s1, n0, s0); break;
    }
}

static void gather_rec(const gdims *g, int d, unsigned char *out, const unsigned char *in)
{
    if (d == g->n - 2) {
        inner2(g, out, in);
        return;
    }
    int64_t block = 1;
    for (int k = d + 1; k < g->n; k++)
        block *= g->shape[k];
    for (int64_t i = 0; i < g->shape[d]; i++)
        gather_rec(g, d + 1, out + (size_t)(i * block) * g->es,
                   in + (ptrdiff_t)(i * g->stride[d]) * (ptrdiff_t)g->es);
}

/* The dimension merge of a gather, the CPU's and the GPU's (sl__ggather_plan): extents of 1 are
 * dropped and dimension d joins the one outside it when that one's stride is stride[d] *
 * shape[d] (the merged index then walks the same input elements); none left: one of extent 1,
 * stride 0. Writes the merged extents and strides (at most ndim) and returns how many (>= 1). */
static int merge_gather(int ndim, const int64_t *shape, const int64_t *stride, int64_t *mshape,
                        int64_t *mstride)
{
    int n = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1)
            continue;
        if (n > 0 && mstride[n - 1] == stride[d] * shape[d]) {
            mshape[n - 1] *= shape[d];
            mstride[n - 1] = stride[d];
        } else {
            mshape[n] = shape[d];
            mstride[n++] = stride[d];
        }
    }
    if (n == 0) { /* a single element */
        mshape[0] = 1;
        mstride[0] = 0;
        n = 1;
    }
    return n;
}

void sl__gather(void *restrict out, const void *restrict in, size_t esize, int ndim,
                const int64_t *shape, const int64_t *stride)
{
    gdims g = {.n = 0, .es = esize};
    for (int d = 0; d < ndim; d++)
        if (shape[d] == 0)
            return;
    g.n = merge_gather(ndim, shape, stride, g.shape, g.stride);
    if (g.n == 1) { /* the kernels work on two dimensions: add a leading extent of 1 */
        g.shape[1] = g.shape[0];
        g.stride[1] = g.stride[0];
        g.shape[0] = 1;
        g.stride[0] = 0;
        g.n = 2;
    }
    gather_rec(&g, 0, out, in);
}

#ifdef SLUICE_HAVE_CUDA
void sl__ggather_plan(sl__ggather *g, const void *in, void *out, int ndim, const int64_t *shape,
                      const int64_t *stride)
{
    g->in = in;
    g->out = out;
    g->count = 1;
    for (int d = 0; d < ndim; d++)
        g->count *= shape[d];
    g->n = merge_gather(ndim, shape, stride, g->shape, g->stride);
}
#endif

/* ---- interleaved -> planar ------------------------------------------------------------------- */

#define DEF_DEINT(NAME, T)                                                                         \
    static void NAME(T *restrict o, const T *restrict s, int64_t n, int64_t C)                     \
    {                                                                                              \
        if (C == 3) {                                                                              \
            T *restrict o1 = o + n, *restrict o2 = o + 2 * n;                                      \
            for (int64_t k = 0; k < n; k++) {                                                      \
                o[k] = s[3 * k];                                                                   \
                o1[k] = s[3 * k + 1];                                                              \
                o2[k] = s[3 * k + 2];                                                              \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        for (int64_t k = 0; k < n; k++)                                                            \
            for (int64_t c = 0; c < C; c++)                                                        \
                o[c * n + k] = s[k * C + c];                                                       \
    }
DEF_DEINT(deint_1, uint8_t)
DEF_DEINT(deint_2, uint16_t)
DEF_DEINT(deint_4, uint32_t)
DEF_DEINT(deint_8, uint64_t)

void sl__deinterleave(void *restrict out, const void *restrict in, size_t esize, int64_t n,
                      int64_t C)
{
    switch (esize) {
    case 1: deint_1(out, in, n, C); break;
    case 2: deint_2(out, in, n, C); break;
    case 4: deint_4(out, in, n, C); break;
    default: deint_8(out, in, n, C); break;
    }
}

/* ---- joins ----------------------------------------------------------------------------------- */

void sl__join_copy(void *restrict out, size_t row, const void *restrict in, size_t block,
                   int64_t outer)
{
    unsigned char *o = out;
    const unsigned char *i = in;
    if (block == 0)
        return;
    if (block == row) { /* the only input, or the outermost axis: one copy */
        memcpy(o, i, block * (size_t)outer);
        return;
    }
    for (int64_t k = 0; k < outer; k++)
        memcpy(o + (size_t)k * row, i + (size_t)k * block, block);
}
