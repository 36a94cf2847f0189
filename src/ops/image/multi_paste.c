/* multi_paste: pastes several regions of input images onto a zeroed canvas per output sample
 * (DALI's fn.multi_paste).
 *
 * Exports: const sl_op_def sl_op_multi_paste ("multi_paste", CPU and GPU).
 *
 * Two modes, as DALI:
 *   in_ids given    one input; output sample i receives, in order, the regions of input samples
 *                   in_ids[i][k] (k = 0 .. n_i - 1)
 *   in_ids unset    any number of inputs; output sample i receives sample i of each input, in
 *                   input order
 * Region k: source anchor in_anchors[k] (y, x; or in_anchors_rel times the source extent), extent
 * shapes[k] (or shapes_rel; default: the rest of the source from the anchor), destination anchor
 * out_anchors[k] (or out_anchors_rel times the canvas extent); relative values are rounded half
 * away from zero; lists are flat, two values (y, x) per region. A region must lie inside its
 * source and the canvas (else the sample fails). Later regions overwrite earlier ones. The canvas
 * is output_size (H, W; a third value, the channels, is ignored) or, unset, the shape of the
 * samples when they are all equal; channels are the sources' (they must agree). Values are
 * converted to dtype (default: the input type) with DALI's saturating cast.
 * GPU (multi_paste.cu, builds with CUDA): the same regions (plan()), one thread per output
 * element taking the last region that covers it.
 * Invariant: setup_sample fixes the canvas; run_sample reads sample i's regions only.
 */
#include <math.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/image/multi_paste.h"
#include "ops/tensor/tensor.h"

enum {
    A_IN_IDS,
    A_IN_ANCHORS,
    A_IN_ANCHORS_REL,
    A_SHAPES,
    A_SHAPES_REL,
    A_OUT_ANCHORS,
    A_OUT_ANCHORS_REL,
    A_OUTPUT_SIZE,
    A_DTYPE,
    NUM_ARGS
};

#define MAX_REGIONS 1024

#define LIST(NAME, TYPE, DOC)                                                                      \
    {                                                                                              \
        .name = NAME, .type = TYPE, .doc = DOC, .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR,          \
        .max_len = 2 * MAX_REGIONS                                                                 \
    }

static const sl_arg_def args[NUM_ARGS] = {
    [A_IN_IDS] = LIST("in_ids", SL_ARG_INTS,
                      "Per output sample, the input samples to paste from, in order (one input "
                      "only). Unset: sample i of every input."),
    [A_IN_ANCHORS] = LIST("in_anchors", SL_ARG_INTS,
                          "Top-left corner (y, x) of each region in its source, flat; default 0."),
    [A_IN_ANCHORS_REL] =
        LIST("in_anchors_rel", SL_ARG_FLOATS, "in_anchors as fractions of the source extent."),
    [A_SHAPES] =
        LIST("shapes", SL_ARG_INTS,
             "Extent (h, w) of each region, flat; default: the source from the anchor on."),
    [A_SHAPES_REL] = LIST("shapes_rel", SL_ARG_FLOATS, "shapes as fractions of the source extent."),
    [A_OUT_ANCHORS] = LIST("out_anchors", SL_ARG_INTS,
                           "Where (y, x) each region goes on the canvas, flat; default 0."),
    [A_OUT_ANCHORS_REL] =
        LIST("out_anchors_rel", SL_ARG_FLOATS, "out_anchors as fractions of the canvas extent."),
    [A_OUTPUT_SIZE] = {.name = "output_size",
                       .type = SL_ARG_INTS,
                       .doc = "Canvas size (H, W); a third value (channels) is ignored. Unset: "
                              "the samples' shape, which must then be uniform.",
                       .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR | SL_ARG_RANGE,
                       .min = 0,
                       .max = 1048576,
                       .min_len = 2,
                       .max_len = 3},
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .doc = "Output type; unset: the input type (DALI's saturating cast).",
                 .flags = SL_ARG_OPTIONAL},
};

static const sl_io_def inputs[] = {{"images", "HWC images of one type (every input)."}};
static const sl_io_def outputs[] = {{"output", "The canvases, HWC."}};

static sl_status mp_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    const int pairs[3][2] = {{A_IN_ANCHORS, A_IN_ANCHORS_REL},
                             {A_SHAPES, A_SHAPES_REL},
                             {A_OUT_ANCHORS, A_OUT_ANCHORS_REL}};
    for (int k = 0; k < 3; k++)
        if (sl_init_arg_is_set(ini, pairs[k][0]) && sl_init_arg_is_set(ini, pairs[k][1]))
            return sl_init_fail(ini, SL_EINVAL,
                                "absolute and relative values of the same coordinates are "
                                "exclusive (argument %d and its _rel twin)",
                                pairs[k][0]);
    return SL_OK;
}

static sl_dtype out_type(const sl_ctx *ctx)
{
    return sl_ctx_arg_is_set(ctx, A_DTYPE) ? sl_ctx_arg_dtype(ctx, A_DTYPE)
                                           : sl_batch_dtype(sl_ctx_input(ctx, 0));
}

static sl_status mp_setup(sl_ctx *ctx)
{
    int nin = sl_ctx_num_inputs(ctx);
    if (sl_ctx_arg_is_set(ctx, A_IN_IDS) && nin != 1)
        return sl_fail(ctx, SL_EINVAL, "with in_ids the operator takes exactly one input, got %d",
                       nin);
    for (int k = 0; k < nin; k++) {
        const sl_batch *b = sl_ctx_input(ctx, k);
        if (sl_batch_ndim(b) != 3 || sl_batch_dtype(b) != sl_batch_dtype(sl_ctx_input(ctx, 0)))
            return sl_fail(ctx, SL_EINVAL,
                           "input %d must be HWC images (3-D) of the type of input 0 (%s); got "
                           "%d-D %s",
                           k, sl_dtype_name(sl_batch_dtype(sl_ctx_input(ctx, 0))), sl_batch_ndim(b),
                           sl_dtype_name(sl_batch_dtype(b)));
    }
    sl_ctx_set_output(ctx, 0, out_type(ctx), 3, sl_batch_layout(sl_ctx_input(ctx, 0)));
    return SL_OK;
}

/* The number of regions of output sample i, and the source of region k. */
static int regions(sl_ctx *ctx, int i, int64_t *ids)
{
    if (sl_ctx_arg_is_set(ctx, A_IN_IDS))
        return sl_ctx_arg_ints(ctx, A_IN_IDS, i, ids, MAX_REGIONS);
    return sl_ctx_num_inputs(ctx);
}

static const int64_t *source_shape(sl_ctx *ctx, int i, int k, const int64_t *ids, bool by_id)
{
    return by_id ? sl_batch_shape(sl_ctx_input(ctx, 0), (int)ids[k])
                 : sl_batch_shape(sl_ctx_input(ctx, k), i);
}

static sl_status mp_setup_sample(sl_ctx *ctx, int i)
{
    int64_t ids[MAX_REGIONS];
    bool by_id = sl_ctx_arg_is_set(ctx, A_IN_IDS);
    int n = regions(ctx, i, ids);
    if (n > MAX_REGIONS)
        return sl_fail(ctx, SL_EINVAL, "%d regions; at most %d are supported", n, MAX_REGIONS);
    int bs = sl_ctx_batch_size(ctx);
    int64_t c = -1;
    for (int k = 0; k < n; k++) {
        if (by_id && (ids[k] < 0 || ids[k] >= bs))
            return sl_fail(ctx, SL_EINVAL, "in_ids[%d] = %lld is not a sample of the batch (%d)", k,
                           (long long)ids[k], bs);
        const int64_t *s = source_shape(ctx, i, k, ids, by_id);
        if (c >= 0 && s[2] != c)
            return sl_fail(ctx, SL_EINVAL, "the pasted images have %lld and %lld channels",
                           (long long)c, (long long)s[2]);
        c = s[2];
    }
    int64_t shape[3];
    const int64_t *own = sl_batch_shape(sl_ctx_input(ctx, 0), i);
    if (sl_ctx_arg_is_set(ctx, A_OUTPUT_SIZE)) {
        int64_t v[3] = {0, 0, 0};
        sl_ctx_arg_ints(ctx, A_OUTPUT_SIZE, i, v, 3);
        shape[0] = v[0], shape[1] = v[1];
    } else {
        for (int k = 0; k < sl_ctx_num_inputs(ctx); k++)
            for (int s = 0; s < bs; s++) {
                const int64_t *o = sl_batch_shape(sl_ctx_input(ctx, k), s);
                if (o[0] != own[0] || o[1] != own[1] || o[2] != own[2])
                    return sl_fail(ctx, SL_EINVAL,
                                   "the input shapes are not uniform: give output_size");
            }
        shape[0] = own[0], shape[1] = own[1];
    }
    shape[2] = c >= 0 ? c : own[2];
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

/* Coordinate pair k of an absolute / relative argument pair (rel: times ext); def when unset. */
static void pair(sl_ctx *ctx, int i, int abs_arg, int rel_arg, int k, const int64_t *ext,
                 const int64_t *def, int64_t *out, int *count)
{
    if (sl_ctx_arg_is_set(ctx, abs_arg)) {
        int64_t v[2 * MAX_REGIONS];
        *count = sl_ctx_arg_ints(ctx, abs_arg, i, v, 2 * MAX_REGIONS);
        out[0] = 2 * k + 1 < *count ? v[2 * k] : 0;
        out[1] = 2 * k + 1 < *count ? v[2 * k + 1] : 0;
    } else if (sl_ctx_arg_is_set(ctx, rel_arg)) {
        double v[2 * MAX_REGIONS];
        *count = sl_ctx_arg_floats(ctx, rel_arg, i, v, 2 * MAX_REGIONS);
        for (int d = 0; d < 2; d++) {
            double x = 2 * k + 1 < *count ? v[2 * k + d] * (double)ext[d] : 0;
            out[d] = fabs(x) < 0x1p60 ? llround(x) : 0;
        }
    } else {
        *count = -1;
        out[0] = def[0], out[1] = def[1];
    }
}

/* Output sample i's regions, checked, into r (*nr of them; those of zero area left out). */
static sl_status plan(sl_ctx *ctx, int i, sl__mp_region *r, int *nr)
{
    int64_t ids[MAX_REGIONS];
    bool by_id = sl_ctx_arg_is_set(ctx, A_IN_IDS);
    int n = regions(ctx, i, ids);
    const int64_t *os = sl_ctx_output_shape(ctx, 0, i);
    const int64_t zero[2] = {0, 0};
    *nr = 0;
    for (int k = 0; k < n; k++) {
        const int64_t *ss = source_shape(ctx, i, k, ids, by_id);
        const sl_batch *b = by_id ? sl_ctx_input(ctx, 0) : sl_ctx_input(ctx, k);
        const unsigned char *src = sl_batch_sample_data(b, by_id ? (int)ids[k] : i);
        int64_t ia[2], sh[2], oa[2], rest[2];
        int cnt[3];
        pair(ctx, i, A_IN_ANCHORS, A_IN_ANCHORS_REL, k, ss, zero, ia, &cnt[0]);
        rest[0] = ss[0] - ia[0], rest[1] = ss[1] - ia[1];
        pair(ctx, i, A_SHAPES, A_SHAPES_REL, k, ss, rest, sh, &cnt[1]);
        pair(ctx, i, A_OUT_ANCHORS, A_OUT_ANCHORS_REL, k, os, zero, oa, &cnt[2]);
        for (int a = 0; a < 3; a++)
            if (cnt[a] >= 0 && cnt[a] != 2 * n)
                return sl_fail(ctx, SL_EINVAL,
                               "the %s have %d values; expected %d (y, x per region)",
                               a == 0   ? "input anchors"
                               : a == 1 ? "shapes"
                                        : "output anchors",
                               cnt[a], 2 * n);
        for (int d = 0; d < 2; d++)
            if (ia[d] < 0 || sh[d] < 0 || ia[d] + sh[d] > ss[d] || oa[d] < 0 ||
                oa[d] + sh[d] > os[d])
                return sl_fail(ctx, SL_EINVAL,
                               "region %d (from (%lld, %lld), %lld x %lld, to (%lld, %lld)) is "
                               "out of bounds of its %lld x %lld source or the %lld x %lld canvas",
                               k, (long long)ia[0], (long long)ia[1], (long long)sh[0],
                               (long long)sh[1], (long long)oa[0], (long long)oa[1],
                               (long long)ss[0], (long long)ss[1], (long long)os[0],
                               (long long)os[1]);
        if (sh[0] == 0 || sh[1] == 0)
            continue;
        r[*nr] = (sl__mp_region){src, ss[1], {ia[0], ia[1]}, {sh[0], sh[1]}, {oa[0], oa[1]}};
        (*nr)++;
    }
    return SL_OK;
}

static sl_status mp_run_sample(sl_ctx *ctx, int i)
{
    const int64_t *os = sl_ctx_output_shape(ctx, 0, i);
    sl_dtype ot = out_type(ctx), it = sl_batch_dtype(sl_ctx_input(ctx, 0));
    size_t oes = sl_dtype_size(ot), ies = sl_dtype_size(it);
    unsigned char *out = sl_ctx_output_data(ctx, 0, i);
    const int64_t c = os[2];
    if (os[0] * os[1] * c > 0)
        memset(out, 0, (size_t)(os[0] * os[1] * c) * oes);
    sl__mp_region *r = sl_ctx_scratch(ctx, sizeof(*r) * MAX_REGIONS);
    if (!r)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for the regions");
    int nr;
    sl_status st = plan(ctx, i, r, &nr);
    if (st != SL_OK)
        return st;
    sl__convert_fn conv = sl__convert_get(ot, it);
    for (int k = 0; k < nr; k++) {
        const sl__mp_region *g = &r[k];
        const unsigned char *src = g->src;
        for (int64_t y = 0; y < g->sh[0]; y++) {
            const unsigned char *s = src + (size_t)(((g->ia[0] + y) * g->sw + g->ia[1]) * c) * ies;
            unsigned char *d = out + (size_t)(((g->oa[0] + y) * os[1] + g->oa[1]) * c) * oes;
            conv(d, s, g->sh[1] * c);
        }
    }
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* Every sample's regions planned on the host (errors name the sample), then one launch
 * (multi_paste.cu). */
static sl_status mp_run_gpu(sl_ctx *ctx)
{
    const int n = sl_ctx_batch_size(ctx);
    if (n <= 0)
        return SL_OK;
    int64_t total = 0;
    int64_t *ids = sl_ctx_scratch_n(ctx, 2, sizeof(int64_t) * MAX_REGIONS);
    if (!ids)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for the regions of %d samples", n);
    for (int i = 0; i < n; i++) {
        int m = regions(ctx, i, ids);
        total += m < MAX_REGIONS ? m : MAX_REGIONS;
    }
    sl__mp_gpu *h = sl_ctx_scratch_n(ctx, 0, sizeof(*h) * (size_t)n);
    sl__mp_region *r = sl_ctx_scratch_n(ctx, 1, sizeof(*r) * (size_t)(total + 1));
    if (!h || !r)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for the regions of %d samples", n);
    int64_t used = 0;
    for (int i = 0; i < n; i++) {
        const int64_t *os = sl_ctx_output_shape(ctx, 0, i);
        int nr;
        sl_ctx_focus_sample(ctx, i);
        sl_status st = plan(ctx, i, r + used, &nr);
        if (st != SL_OK)
            return st;
        h[i] = (sl__mp_gpu){sl_ctx_output_data(ctx, 0, i), os[0], os[1], os[2], used, nr};
        used += nr;
    }
    sl_ctx_focus_sample(ctx, -1);
    return sl__multi_paste_run_gpu(ctx, h, n, r, used, out_type(ctx),
                                   sl_batch_dtype(sl_ctx_input(ctx, 0)));
}
#endif

const sl_op_def sl_op_multi_paste = {
    .name = "multi_paste",
    .doc = "Pastes regions of input images onto a zeroed canvas per output sample (DALI's "
           "multi_paste).\n\n"
           "With `in_ids` (one input) output sample i gets the regions of input samples "
           "in_ids[i]; without, sample i of every input. Regions: in_anchors / in_anchors_rel, "
           "shapes / shapes_rel (default: the source from the anchor on), out_anchors / "
           "out_anchors_rel, given flat as (y, x) pairs; later regions overwrite earlier ones; "
           "a region outside its source or the canvas fails the sample. The canvas is "
           "output_size (H, W) or the uniform input shape; `dtype` converts.\n\n"
           "Differs from DALI: coordinate lists are flat (DALI takes 2-D tensors), and given as "
           "argument inputs they hold at most 32 values (16 regions).\n\n"
           "`device=\"gpu\"` pastes the whole batch in one launch, with the same regions.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = SL_INPUTS_ANY,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .init = mp_init,
    .setup = mp_setup,
    .setup_sample = mp_setup_sample,
    .run_sample = mp_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = mp_run_gpu,
#endif
};
