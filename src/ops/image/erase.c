/* erase: fills one or more boxes of each sample with a value (DALI's fn.erase).
 *
 * Exports: const sl_op_def sl_op_erase ("erase", CPU and GPU).
 *
 * Per sample, `anchor` and `shape` hold R regions of n values each, n the number of axes
 * (`axis_names`, default "HW", or `axes`; the other axes are covered whole). Per region and
 * axis, in float32 as DALI: a = anchor * extent when normalized_anchor (or normalized), s =
 * shape * extent when normalized_shape (or normalized); centered_anchor: a -= s / 2; the box is
 * [round(a), round(a) + round(s)) (halves away from zero) clipped to the sample. The output is
 * the input with every box set to fill_value: one value, or one per channel along the layout's
 * C axis, converted to the input type (DALI's saturating cast).
 * GPU (erase.cu, builds with CUDA): the same regions (plan()) for every sample, uploaded; one
 * thread per element writes the fill value when the element lies in any region, else the input.
 * Invariant: run_sample copies the input, then fills each box; nothing is kept between calls.
 */
#include <math.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/image/erase.h"
#include "ops/tensor/tensor.h"

enum {
    A_ANCHOR,
    A_SHAPE,
    A_AXES,
    A_AXIS_NAMES,
    A_CENTERED,
    A_FILL,
    A_NORMALIZED,
    A_NORM_ANCHOR,
    A_NORM_SHAPE,
    NUM_ARGS
};

#define MAX_COORDS 4096 /* anchor / shape values per sample */

static const sl_arg_def args[NUM_ARGS] = {
    [A_ANCHOR] = {.name = "anchor",
                  .type = SL_ARG_FLOATS,
                  .def = "[]",
                  .doc = "Start of each region along the erased axes, region after region "
                         "(y0, x0, y1, x1, ... for axis_names \"HW\").",
                  .flags = SL_ARG_TENSOR | SL_ARG_SCALAR_OK,
                  .max_len = MAX_COORDS},
    [A_SHAPE] = {.name = "shape",
                 .type = SL_ARG_FLOATS,
                 .def = "[]",
                 .doc = "Extent of each region along the erased axes, in the order of anchor.",
                 .flags = SL_ARG_TENSOR | SL_ARG_SCALAR_OK,
                 .max_len = MAX_COORDS},
    [A_AXES] = {.name = "axes",
                .type = SL_ARG_INTS,
                .def = "[1, 0]",
                .doc = "Axes (indices) the coordinates refer to; used when axis_names is not "
                       "given and the input has no layout, or given explicitly.",
                .max_len = SL_MAX_NDIM},
    [A_AXIS_NAMES] = {.name = "axis_names",
                      .type = SL_ARG_STRING,
                      .def = "\"HW\"",
                      .doc = "Layout letters of the axes the coordinates refer to; takes "
                             "priority over axes."},
    [A_CENTERED] = {.name = "centered_anchor",
                    .type = SL_ARG_BOOL,
                    .def = "false",
                    .doc = "The anchor is the centre of the region instead of its start."},
    [A_FILL] = {.name = "fill_value",
                .type = SL_ARG_FLOATS,
                .def = "[0.0]",
                .doc = "Value of the erased elements: one, or one per channel (along C).",
                .flags = SL_ARG_TENSOR | SL_ARG_SCALAR_OK,
                .max_len = SL__MAX_FILL},
    [A_NORMALIZED] = {.name = "normalized",
                      .type = SL_ARG_BOOL,
                      .def = "false",
                      .doc = "Both anchor and shape are fractions of the extent (sets "
                             "normalized_anchor and normalized_shape)."},
    [A_NORM_ANCHOR] = {.name = "normalized_anchor",
                       .type = SL_ARG_BOOL,
                       .def = "false",
                       .doc = "anchor holds fractions of the extent."},
    [A_NORM_SHAPE] = {.name = "normalized_shape",
                      .type = SL_ARG_BOOL,
                      .def = "false",
                      .doc = "shape holds fractions of the extent."},
};

static const sl_io_def inputs[] = {{"input", "Data of any type and layout."}};
static const sl_io_def outputs[] = {{"output", "The input with the regions erased."}};

static sl_status erase_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    if (sl_init_arg_is_set(ini, A_NORMALIZED) &&
        (sl_init_arg_is_set(ini, A_NORM_ANCHOR) || sl_init_arg_is_set(ini, A_NORM_SHAPE)))
        return sl_init_fail(ini, SL_EINVAL,
                            "\"normalized\" and \"normalized_anchor\" / \"normalized_shape\" are "
                            "mutually exclusive");
    return SL_OK;
}

/* The erased axes: axis_names when given, else axes when given, else "HW" on the layout (no
 * layout: axes [1, 0]). -1 after sl_fail. */
static int erase_axes(sl_ctx *ctx, const sl_batch *in, int *out)
{
    const char *layout = sl_batch_layout(in);
    int ndim = sl_batch_ndim(in);
    if (sl_ctx_arg_is_set(ctx, A_AXIS_NAMES) || sl_ctx_arg_is_set(ctx, A_AXES))
        return sl__axes_get(ctx, A_AXES, A_AXIS_NAMES, ndim, layout, out);
    char err[256];
    if (!layout[0]) {
        int64_t def[2] = {1, 0};
        int n = sl__axes_from_ints(def, 2, ndim, out, err, sizeof err);
        if (n < 0)
            sl_fail(ctx, SL_EINVAL, "%s (the default axes [1, 0]); give axes", err);
        return n;
    }
    int n = sl__axes_from_names("HW", layout, out, err, sizeof err);
    if (n < 0)
        sl_fail(ctx, SL_EINVAL, "%s (the default axis_names \"HW\"); give axes or axis_names", err);
    return n;
}

static sl_status erase_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    int axes[SL_MAX_NDIM];
    if (erase_axes(ctx, in, axes) < 0)
        return SL_EINVAL;
    sl_ctx_set_output(ctx, 0, sl_batch_dtype(in), sl_batch_ndim(in), sl_batch_layout(in));
    return SL_OK;
}

static sl_status erase_setup_sample(sl_ctx *ctx, int i)
{
    sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(sl_ctx_input(ctx, 0), i));
    return SL_OK;
}

/* Fills the box [lo, hi) of a dense tensor of `shape` (ndim >= 1) with fill values: one value
 * (nfill 1) or one per index along axis `c`. */
static void fill_box(unsigned char *data, int ndim, const int64_t *shape, const int64_t *lo,
                     const int64_t *hi, size_t es, const unsigned char *fill, int nfill, int c)
{
    int64_t idx[SL_MAX_NDIM], stride[SL_MAX_NDIM];
    stride[ndim - 1] = 1;
    for (int d = ndim - 2; d >= 0; d--)
        stride[d] = stride[d + 1] * shape[d + 1];
    for (int d = 0; d < ndim; d++) {
        if (hi[d] <= lo[d])
            return;
        idx[d] = lo[d];
    }
    const int last = ndim - 1;
    for (;;) {
        int64_t off = 0;
        for (int d = 0; d < last; d++)
            off += idx[d] * stride[d];
        for (int64_t k = lo[last]; k < hi[last]; k++) {
            int64_t f = nfill == 1 ? 0 : (c == last ? k : idx[c]);
            memcpy(data + (size_t)(off + k) * es, fill + (size_t)f * es, es);
        }
        int d = last - 1;
        while (d >= 0 && ++idx[d] == hi[d]) {
            idx[d] = lo[d];
            d--;
        }
        if (d < 0)
            return;
    }
}

/* Sample i's regions, clipped to the sample: boxes[2 * (r * n + k)] and [... + 1] are region
 * r's start and end along axes[k] (k < *n), for *nbox regions (those that erase nothing are
 * left out); fill: *nfill values of the input type, one per index along axis *c when *nfill >
 * 1. scratch: 2 * MAX_COORDS doubles; boxes: room for MAX_COORDS * 2 values. Checks as the CPU
 * operator always did, in its order. */
static sl_status plan(sl_ctx *ctx, int i, double *scratch, int *axes, int *n, int64_t *boxes,
                      int *nbox, unsigned char *fill, int *nfill, int *c)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t *s = sl_batch_shape(in, i);
    const sl_dtype t = sl_batch_dtype(in);
    *nbox = 0;
    *n = erase_axes(ctx, in, axes);
    if (*n < 0)
        return SL_EINVAL;
    double *anchor = scratch, *shape = scratch + MAX_COORDS;
    int na = sl_ctx_arg_floats(ctx, A_ANCHOR, i, anchor, MAX_COORDS);
    int ns = sl_ctx_arg_floats(ctx, A_SHAPE, i, shape, MAX_COORDS);
    if (na != ns || (*n > 0 && na % *n != 0))
        return sl_fail(ctx, SL_EINVAL,
                       "anchor has %d values and shape %d; both must hold the same number of "
                       "regions of %d values (one per erased axis)",
                       na, ns, *n);
    *c = sl__layout_find(sl_batch_layout(in), 'C');
    *nfill = sl__fill_read(ctx, A_FILL, i, t, fill, SL__MAX_FILL);
    if (*nfill != 1) {
        if (*c < 0)
            return sl_fail(ctx, SL_EINVAL,
                           "fill_value has %d values; one per channel needs a C axis in the "
                           "layout (\"%s\")",
                           *nfill, sl_batch_layout(in));
        if (*nfill < s[*c])
            return sl_fail(ctx, SL_EINVAL,
                           "fill_value has %d values; expected 1 or one per channel (%lld)", *nfill,
                           (long long)s[*c]);
    }
    if (sl_batch_sample_numel(in, i) == 0 || *n == 0)
        return SL_OK;
    bool norm = sl_ctx_arg_bool(ctx, A_NORMALIZED, i);
    bool norm_a = norm || sl_ctx_arg_bool(ctx, A_NORM_ANCHOR, i);
    bool norm_s = norm || sl_ctx_arg_bool(ctx, A_NORM_SHAPE, i);
    bool centered = sl_ctx_arg_bool(ctx, A_CENTERED, i);
    for (int r = 0; r < na / *n; r++) {
        int64_t *box = boxes + (size_t)*nbox * 2 * (size_t)*n;
        bool empty = false;
        for (int k = 0; k < *n; k++) {
            int d = axes[k];
            float ext = (float)s[d];
            float a = (float)anchor[r * *n + k], l = (float)shape[r * *n + k];
            if (norm_a)
                a *= ext;
            if (norm_s)
                l *= ext;
            if (centered)
                a -= l * 0.5f;
            if (!(fabsf(a) < 0x1p60f && fabsf(l) < 0x1p60f))
                return sl_fail(ctx, SL_EINVAL, "region %d: anchor %g / shape %g is not usable", r,
                               (double)a, (double)l);
            if (l < 0)
                return sl_fail(ctx, SL_EINVAL, "region %d: negative shape %g along axis %d", r,
                               (double)l, d);
            int64_t st = llroundf(a), en = st + llroundf(l);
            box[2 * k] = st < 0 ? 0 : st > s[d] ? s[d] : st;
            box[2 * k + 1] = en < 0 ? 0 : en > s[d] ? s[d] : en;
            empty = empty || box[2 * k + 1] <= box[2 * k];
        }
        if (!empty)
            (*nbox)++;
    }
    return SL_OK;
}

static sl_status erase_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int ndim = sl_batch_ndim(in);
    const int64_t *s = sl_batch_shape(in, i);
    const size_t es = sl_dtype_size(sl_batch_dtype(in));
    unsigned char *out = sl_ctx_output_data(ctx, 0, i);
    int64_t numel = sl_batch_sample_numel(in, i);
    if (numel > 0)
        memcpy(out, sl_batch_sample_data(in, i), (size_t)numel * es);

    double *scratch = sl_ctx_scratch(ctx, 2 * MAX_COORDS * sizeof(double));
    int64_t *boxes = sl_ctx_scratch_n(ctx, 1, 2 * MAX_COORDS * sizeof(int64_t));
    unsigned char *fill = sl_ctx_scratch_n(ctx, 2, SL__MAX_FILL * 8);
    if (!scratch || !boxes || !fill)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for the regions");
    int axes[SL_MAX_NDIM], n, nbox, nfill, c;
    sl_status st = plan(ctx, i, scratch, axes, &n, boxes, &nbox, fill, &nfill, &c);
    if (st != SL_OK)
        return st;
    for (int r = 0; r < nbox; r++) {
        int64_t lo[SL_MAX_NDIM], hi[SL_MAX_NDIM];
        for (int d = 0; d < ndim; d++)
            lo[d] = 0, hi[d] = s[d];
        for (int k = 0; k < n; k++) {
            lo[axes[k]] = boxes[(size_t)(r * n + k) * 2];
            hi[axes[k]] = boxes[(size_t)(r * n + k) * 2 + 1];
        }
        fill_box(out, ndim, s, lo, hi, es, fill, nfill, c);
    }
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* Everything the GPU run (erase.cu) needs of a batch, planned on the host by plan(). */
static sl_status erase_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nsamples = sl_ctx_batch_size(ctx), ndim = sl_batch_ndim(in);
    const size_t es = sl_dtype_size(sl_batch_dtype(in));
    if (nsamples <= 0)
        return SL_OK;
    int64_t coords = 0;
    for (int i = 0; i < nsamples; i++) {
        int na = sl_ctx_arg_floats(ctx, A_ANCHOR, i, NULL, 0);
        coords += na < MAX_COORDS ? na : MAX_COORDS;
    }
    sl__erase_gpu *h = sl_ctx_scratch_n(ctx, 0, sizeof(*h) * (size_t)nsamples);
    double *scratch = sl_ctx_scratch_n(ctx, 1, 2 * MAX_COORDS * sizeof(double));
    int64_t *boxes = sl_ctx_scratch_n(ctx, 2, 2 * (size_t)(coords + 1) * sizeof(int64_t));
    unsigned char *fills = sl_ctx_scratch_n(ctx, 3, (size_t)nsamples * SL__MAX_FILL * es);
    if (!h || !scratch || !boxes || !fills)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for the regions of %d samples", nsamples);
    int64_t used = 0;
    for (int i = 0; i < nsamples; i++) {
        sl__erase_gpu *g = &h[i];
        memset(g, 0, sizeof *g);
        sl_ctx_focus_sample(ctx, i);
        int axes[SL_MAX_NDIM], n, nbox, nfill, c;
        unsigned char *fill = fills + (size_t)i * SL__MAX_FILL * es;
        sl_status st = plan(ctx, i, scratch, axes, &n, boxes + 2 * used, &nbox, fill, &nfill, &c);
        if (st != SL_OK)
            return st;
        const int64_t *s = sl_batch_shape(in, i);
        g->in = sl_batch_sample_data(in, i);
        g->out = sl_ctx_output_data(ctx, 0, i);
        g->numel = sl_batch_sample_numel(in, i);
        g->naxes = n;
        g->nbox = nbox;
        g->box_off = used;
        g->fill_off = (int64_t)i * SL__MAX_FILL;
        g->nfill = nfill;
        int64_t stride = 1;
        for (int d = ndim - 1; d >= 0; d--) {
            for (int k = 0; k < n; k++)
                if (axes[k] == d)
                    g->stride[k] = stride, g->extent[k] = s[d];
            if (d == c)
                g->cstride = stride, g->cextent = s[d];
            stride *= s[d];
        }
        used += (int64_t)nbox * n;
    }
    sl_ctx_focus_sample(ctx, -1);
    return sl__erase_run_gpu(ctx, h, nsamples, boxes, used, fills, (size_t)nsamples * SL__MAX_FILL);
}
#endif

const sl_op_def sl_op_erase = {
    .name = "erase",
    .doc = "Erases one or more regions of each sample, setting them to fill_value (DALI's "
           "erase).\n\n"
           "`anchor` and `shape` hold the regions one after another, each with one value per "
           "axis of `axis_names` (default \"HW\") or `axes`; other axes are covered whole. "
           "Values are pixels, or fractions of the extent with normalized_anchor / "
           "normalized_shape (or normalized); with centered_anchor the anchor is the region's "
           "centre. Coordinates are rounded half away from zero and regions clipped to the "
           "sample (a region wholly outside erases nothing). fill_value is one value or one per "
           "channel along the layout's C axis.\n\n"
           "`device=\"gpu\"` erases the whole batch in one launch, with the same regions.\n\n"
           "Differs from DALI: an input without a layout uses axes [1, 0] by default.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = erase_init,
    .setup = erase_setup,
    .setup_sample = erase_setup_sample,
    .run_sample = erase_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = erase_run_gpu,
#endif
};
