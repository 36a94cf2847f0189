/* resize: resamples HWC images to a requested size (DALI's fn.resize, CPU and GPU).
 *
 * Exports: const sl_op_def sl_op_resize.
 *
 * Per sample, setup_sample turns the size arguments into an output extent and an input interval
 * per axis (DALI's ResizeAttr rules, in float32 like DALI):
 *   request  (resize_y, resize_x), size (one value: both axes), or (L, L) for resize_shorter /
 *            resize_longer (modes not_smaller / not_larger); 0 = unspecified
 *   ROI      roi_start / roi_end (absolute or relative pixels, (y, x) order), else [0, extent);
 *            a reversed ROI mirrors the axis
 *   mode     default: missing extents scaled by the geometric mean of the given scales;
 *            stretch: missing extents kept; not_larger / not_smaller: one scale (min / max of
 *            the given ones) for both axes; max_size caps extents (and the one scale)
 *   output   max(1, round(|size|)) (halves away from zero; 0 allowed for empty inputs), a
 *            negative size mirrors the axis; subpixel_scale moves the ROI edges about its
 *            centre so the scale stays size / ROI extent instead of rounded size / ROI extent
 * run_sample resamples with the family helper (resample.h); run_gpu (device "gpu") plans the
 * same way and runs the passes on the GPU (resample.cu), giving the same bytes.
 *
 * Invariant: the geometry is computed once per sample in setup_sample and kept in the
 * iteration data; run_sample only reads it, so the output shape and the pixels always agree.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sluice/op.h"

#include "ops/image/resize.h"

#define A_RESIZE_X SL__RZ_RESIZE_X
#define A_RESIZE_Y SL__RZ_RESIZE_Y
#define A_RESIZE_SHORTER SL__RZ_RESIZE_SHORTER
#define A_RESIZE_LONGER SL__RZ_RESIZE_LONGER
#define A_SIZE SL__RZ_SIZE
#define A_MODE SL__RZ_MODE
#define A_MAX_SIZE SL__RZ_MAX_SIZE
#define A_INTERP SL__RZ_INTERP
#define A_MAG SL__RZ_MAG
#define A_MIN SL__RZ_MIN
#define A_ANTIALIAS SL__RZ_ANTIALIAS
#define A_ROI_START SL__RZ_ROI_START
#define A_ROI_END SL__RZ_ROI_END
#define A_ROI_RELATIVE SL__RZ_ROI_RELATIVE
#define A_SUBPIXEL SL__RZ_SUBPIXEL
#define A_DTYPE SL__RZ_DTYPE
#define NUM_ARGS SL__RESIZE_NUM_ARGS

static const sl_arg_def args[NUM_ARGS] = {SL__RESIZE_ARG_DEFS(SL__ARG_ANTIALIAS_DEF)};

static const sl__resample_args rargs = {A_INTERP, A_MAG, A_MIN, A_ANTIALIAS, A_DTYPE};

static const sl_io_def inputs[] = {
    {"input", "Images, layout \"HWC\" (or unset), any channel count, uint8 or float32."},
};
static const sl_io_def outputs[] = {
    {"output", "Resized images, HWC, of type dtype (default: the input's)."},
};

enum mode { M_DEFAULT, M_STRETCH, M_NOT_LARGER, M_NOT_SMALLER };

/* Per-sample iteration data. */
typedef sl__resize_geom geom;

/* ---- init -------------------------------------------------------------------------------- */

static bool separate_given(const sl_op_init *ini)
{
    return sl_init_arg_is_set(ini, A_RESIZE_X) || sl_init_arg_is_set(ini, A_RESIZE_Y);
}

static sl_status resize_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    return sl__resize_init_check(ini);
}

sl_status sl__resize_init_check(sl_op_init *ini)
{
    int methods = separate_given(ini) + sl_init_arg_is_set(ini, A_SIZE) +
                  sl_init_arg_is_set(ini, A_RESIZE_SHORTER) +
                  sl_init_arg_is_set(ini, A_RESIZE_LONGER);
    if (methods != 1)
        return sl_init_fail(ini, SL_EINVAL,
                            "Exactly one method of specifying size must be used. The available "
                            "methods: separate resize_x, resize_y arguments; size argument; "
                            "resize_longer; resize_shorter (got %d)",
                            methods);
    if (sl_init_arg_is_set(ini, A_RESIZE_SHORTER) + sl_init_arg_is_set(ini, A_RESIZE_LONGER) +
            sl_init_arg_is_set(ini, A_MODE) >
        1)
        return sl_init_fail(ini, SL_EINVAL,
                            "resize_shorter, resize_longer and mode arguments are mutually "
                            "exclusive");
    if (sl_init_arg_is_set(ini, A_ROI_START) != sl_init_arg_is_set(ini, A_ROI_END))
        return sl_init_fail(ini, SL_EINVAL, "roi_start and roi_end must be specified together");
    if (sl_init_arg_is_set(ini, A_MAX_SIZE)) {
        int n = 0;
        const double *m = sl_init_arg_floats(ini, A_MAX_SIZE, &n);
        for (int k = 0; k < n; k++)
            if (!isfinite(m[k]))
                return sl_init_fail(ini, SL_EINVAL, "max_size[%d] is %g; expected a finite value",
                                    k, m[k]);
    }
    return sl__hwc_dtype_check(ini, A_DTYPE);
}

/* ---- output size (DALI's AdjustOutputSize, float32 extents, double scales) --------------- */

static enum mode mode_of(const sl_ctx *ctx)
{
    if (sl_ctx_arg_is_set(ctx, A_RESIZE_SHORTER))
        return M_NOT_SMALLER;
    if (sl_ctx_arg_is_set(ctx, A_RESIZE_LONGER))
        return M_NOT_LARGER;
    const char *m = sl_ctx_arg_str(ctx, A_MODE);
    return !strcmp(m, "stretch")       ? M_STRETCH
           : !strcmp(m, "not_larger")  ? M_NOT_LARGER
           : !strcmp(m, "not_smaller") ? M_NOT_SMALLER
                                       : M_DEFAULT;
}

/* max_size capping of extents (default and stretch modes). */
static void cap_extents(float out[2], const float *max)
{
    for (int d = 0; d < 2 && max; d++)
        if (max[d] > 0 && fabsf(out[d]) > max[d])
            out[d] = copysignf(max[d], out[d]);
}

/* not_larger / not_smaller: one scale for both axes. */
static void one_scale(float out[2], const float in[2], const double scale[2], const bool mask[2],
                      bool smaller, const float *max)
{
    double fin = 0;
    bool first = true;
    for (int d = 0; d < 2; d++) {
        float s = fabsf((float)scale[d]);
        if (mask[d] && (first || (smaller && s > fin) || (!smaller && s < fin)))
            fin = s;
        first = first && !mask[d];
    }
    for (int d = 0; d < 2 && max; d++)
        if (max[d] > 0 && (double)max[d] / in[d] < fin)
            fin = (double)max[d] / in[d];
    for (int d = 0; d < 2; d++)
        if (!mask[d] || fabs(scale[d]) != fin)
            out[d] = (float)(in[d] * copysign(fin, scale[d]));
}

/* Turns the requested extents out[] (0 = unspecified) into the unrounded output extents. */
static void adjust_size(float out[2], const float in[2], enum mode m, const float *max)
{
    double scale[2];
    bool mask[2];
    int given = 0;
    for (int d = 0; d < 2; d++) {
        mask[d] = out[d] != 0 && in[d] != 0;
        scale[d] = in[d] != 0 ? (double)(out[d] / in[d]) : 1.0;
        given += mask[d];
    }
    if (!given) {
        out[0] = in[0], out[1] = in[1];
        return;
    }
    if (m == M_NOT_LARGER || m == M_NOT_SMALLER) {
        one_scale(out, in, scale, mask, m == M_NOT_SMALLER, max);
        return;
    }
    for (int d = 0; d < 2 && given < 2; d++) /* one given: its scale is the geometric mean */
        if (!mask[d])
            out[d] = m == M_DEFAULT ? (float)(in[d] * fabs(scale[1 - d])) : in[d];
    cap_extents(out, max);
}

/* ---- setup ------------------------------------------------------------------------------- */

static sl_status resize_setup(sl_ctx *ctx)
{
    return sl__hwc_setup(ctx, A_DTYPE);
}

/* The requested (y, x) extents of sample i. */
static sl_status requested(sl_ctx *ctx, int i, float req[2])
{
    double v[2] = {0, 0};
    if (sl_ctx_arg_is_set(ctx, A_SIZE)) {
        int n = sl_ctx_arg_floats(ctx, A_SIZE, i, v, 2);
        if (n < 1 || n > 2)
            return sl_fail(ctx, SL_EINVAL, "size has %d values; expected 1 or 2 (H, W)", n);
        if (n == 1)
            v[1] = v[0];
    } else if (sl_ctx_arg_is_set(ctx, A_RESIZE_SHORTER) ||
               sl_ctx_arg_is_set(ctx, A_RESIZE_LONGER)) {
        int a = sl_ctx_arg_is_set(ctx, A_RESIZE_SHORTER) ? A_RESIZE_SHORTER : A_RESIZE_LONGER;
        v[0] = v[1] = sl_ctx_arg_float(ctx, a, i);
    } else {
        v[0] = sl_ctx_arg_float(ctx, A_RESIZE_Y, i);
        v[1] = sl_ctx_arg_float(ctx, A_RESIZE_X, i);
    }
    for (int d = 0; d < 2; d++) {
        if (!(fabs(v[d]) < 0x1p30)) /* NaN too */
            return sl_fail(ctx, SL_EINVAL,
                           "requested %s of %g is not a usable size (finite, below 2^30)",
                           d ? "width" : "height", v[d]);
        req[d] = (float)v[d];
    }
    return SL_OK;
}

/* The input interval of each axis: the ROI when given (and the axis is not empty). */
static sl_status input_roi(sl_ctx *ctx, int i, const int64_t in[2], geom *g)
{
    double a[2] = {0, 0}, b[2] = {0, 0};
    bool roi = sl_ctx_arg_is_set(ctx, A_ROI_START);
    if (roi && (sl_ctx_arg_floats(ctx, A_ROI_START, i, a, 2) != 2 ||
                sl_ctx_arg_floats(ctx, A_ROI_END, i, b, 2) != 2))
        return sl_fail(ctx, SL_EINVAL, "roi_start and roi_end need 2 values each: (y, x)");
    bool rel = sl_ctx_arg_bool(ctx, A_ROI_RELATIVE, i);
    for (int d = 0; d < 2; d++) {
        double lo = 0, hi = (double)in[d];
        if (roi && in[d] > 0) {
            lo = (float)(rel ? a[d] * (double)in[d] : a[d]);
            hi = (float)(rel ? b[d] * (double)in[d] : b[d]);
            if (!(fabs(lo) < 1e9 && fabs(hi) < 1e9))
                return sl_fail(ctx, SL_EINVAL, "ROI (%g .. %g) along %s is not finite or too big",
                               lo, hi, d ? "x" : "y");
            if (fabs(hi - lo) < 1e-3) { /* degenerate: sample the location (DALI) */
                double off = lo <= hi ? 0.5e-3 : -0.5e-3;
                lo -= off;
                hi += off;
            }
        }
        g->lo[d] = lo;
        g->hi[d] = hi;
    }
    return SL_OK;
}

/* Rounds the extents, mirrors negative ones and, with subpixel_scale, moves the ROI edges. */
static void finish(geom *g, const float size[2], bool empty, bool subpixel)
{
    for (int d = 0; d < 2; d++) {
        float s = fabsf(size[d]);
        int64_t o = (int64_t)lroundf(s);
        g->out[d] = o < (empty ? 0 : 1) ? (empty ? 0 : 1) : o;
        if (size[d] < 0) {
            double t = g->lo[d];
            g->lo[d] = g->hi[d];
            g->hi[d] = t;
        }
        if (subpixel && s > 0 && (double)g->out[d] != (double)s) {
            double adj = (double)g->out[d] / s;
            adj = adj > 10.0 ? 10.0 : adj;
            double c = (g->lo[d] + g->hi[d]) * 0.5;
            g->lo[d] = c + (g->lo[d] - c) * adj;
            g->hi[d] = c + (g->hi[d] - c) * adj;
        }
    }
}

sl_status sl__resize_geom_get(sl_ctx *ctx, int i, geom *g)
{
    const int64_t *s = sl_batch_shape(sl_ctx_input(ctx, 0), i);
    const int64_t in[2] = {s[0], s[1]};
    enum mode m = mode_of(ctx);
    float req[2], in_size[2], maxv[2], *max = NULL;
    sl_status st;

    if (in[0] > INT32_MAX || in[1] > INT32_MAX)
        return sl_fail(ctx, SL_EUNSUPPORTED, "image of %lld x %lld is too large", (long long)in[0],
                       (long long)in[1]);
    if ((st = requested(ctx, i, req)) != SL_OK || (st = input_roi(ctx, i, in, g)) != SL_OK)
        return st;
    for (int d = 0; d < 2; d++)
        if (in[d] == 0 && req[d] != 0 && (m == M_DEFAULT || m == M_STRETCH))
            return sl_fail(ctx, SL_EINVAL,
                           "Cannot produce non-empty output from empty input (image of %lld x "
                           "%lld, requested %g x %g)",
                           (long long)in[0], (long long)in[1], req[0], req[1]);
    if (sl_ctx_arg_is_set(ctx, A_MAX_SIZE)) {
        double v[2] = {0, 0};
        if (sl_ctx_arg_floats(ctx, A_MAX_SIZE, i, v, 2) == 1)
            v[1] = v[0];
        maxv[0] = (float)v[0], maxv[1] = (float)v[1];
        max = maxv;
    }
    for (int d = 0; d < 2; d++) {
        in_size[d] = (float)(g->hi[d] - g->lo[d]);
        if (in_size[d] < 0) { /* reversed ROI: mirror via the size */
            double t = g->lo[d];
            g->lo[d] = g->hi[d];
            g->hi[d] = t;
            req[d] = -req[d];
            in_size[d] = -in_size[d];
        }
    }
    adjust_size(req, in_size, m, max);
    for (int d = 0; d < 2; d++)
        if (!(fabsf(req[d]) < 0x1p30f))
            return sl_fail(ctx, SL_EINVAL, "output size %g x %g is too large", req[0], req[1]);
    finish(g, req, in[0] * in[1] * s[2] == 0, sl_ctx_arg_bool(ctx, A_SUBPIXEL, i));
    return SL_OK;
}

static sl_status resize_setup_sample(sl_ctx *ctx, int i)
{
    const int64_t *s = sl_batch_shape(sl_ctx_input(ctx, 0), i);
    geom *g = (geom *)sl_ctx_iter_data(ctx) + i;
    sl_status st = sl__resize_geom_get(ctx, i, g);
    if (st != SL_OK)
        return st;
    int64_t shape[3] = {g->out[0], g->out[1], s[2]};
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

/* ---- run --------------------------------------------------------------------------------- */

/* The resampling of sample i (from its geometry in the iteration data); *offset: 0, the plan
 * covers the whole image. Shared by the CPU and GPU runs. */
static void resize_plan(sl_ctx *ctx, int i, sl__resample_plan *p, int64_t *offset)
{
    sl__resize_plan_of(ctx, i, (const geom *)sl_ctx_iter_data(ctx) + i, p);
    *offset = 0;
}

void sl__resize_plan_of(sl_ctx *ctx, int i, const geom *g, sl__resample_plan *p)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t *s = sl_batch_shape(in, i);
    sl__resample_cfg cf;

    sl__resample_cfg_get(ctx, &rargs, i, &cf);
    for (int d = 0; d < 2; d++) {
        sl__resample_axis *a = d ? &p->x : &p->y;
        a->in = s[d];
        a->out = g->out[d];
        a->lo = g->lo[d];
        a->hi = g->hi[d];
        a->filter = sl__resample_pick(cf.min_filter, cf.mag_filter, g->hi[d] - g->lo[d], a->out);
        a->antialias = cf.antialias;
    }
    p->c = s[2];
    p->stride = 0;
    p->in_type = sl_batch_dtype(in);
    p->out_type = cf.out_type;
}

/* Sample i's CPU plan, restricted to what a fused consumer reads of the output (a crop of
 * it: sl_ctx_output_roi), so that only those pixels are computed. */
static void resize_cpu_plan(sl_ctx *ctx, int i, sl__resample_plan *p)
{
    int64_t offset, lo[3], hi[3];
    resize_plan(ctx, i, p, &offset);
    sl__resample_plan_init(p);
    if (sl_ctx_output_roi(ctx, 0, i, lo, hi))
        sl__resample_plan_window(p, lo[0], hi[0], lo[1], hi[1]);
}

/* The input rows and columns the (windowed) plan reads: a decoder fused before it decodes
 * only those. */
static sl_status resize_roi_sample(sl_ctx *ctx, int i)
{
    sl__resample_plan p;
    resize_cpu_plan(ctx, i, &p);
    sl__resample_input_roi(ctx, i, &p, 0, 0);
    return SL_OK;
}

static sl_status resize_run_sample(sl_ctx *ctx, int i)
{
    sl__resample_plan p;
    resize_cpu_plan(ctx, i, &p);
    return sl__resample_sample(ctx, i, &p, sl_batch_sample_data(sl_ctx_input(ctx, 0), i));
}

#ifdef SLUICE_HAVE_CUDA
/* The same plans and tables as the CPU run, the passes on the GPU (resample.cu). */
static sl_status resize_run_gpu(sl_ctx *ctx)
{
    return sl__resample_gpu(ctx, resize_plan);
}
#endif

/* Deprecated names DALI still accepts (DALI 0.24: output_dtype, image_type). */
static const sl_arg_alias aliases[] = {{"image_type", NULL, NULL}};

const sl_op_def sl_op_resize = {
    .name = "resize",
    .doc =
        "Resizes images with a separable filter, antialiased when downscaling (DALI's resize).\n\n"
        "The size comes from exactly one of: resize_x / resize_y, size (H, W), resize_shorter, "
        "resize_longer; 0 means unspecified and `mode` fills it in (default: keep the aspect "
        "ratio). Extents are rounded (halves away from zero) to at least 1; a negative size "
        "mirrors the axis. roi_start / roi_end select the input region (fractional, possibly "
        "reversed or reaching outside the image). Pixel centres are at k + 0.5; output pixel o "
        "samples the ROI at lo + (o + 0.5) * scale.\n\n"
        "Filters and precision (resample.h): uint8 -> uint8 uses PIL's 22-bit fixed point, so "
        "results equal PIL's Image.resize (NEAREST, BILINEAR, BICUBIC, LANCZOS) or differ by 1; "
        "with antialias=false the filter is not widened (OpenCV-like). `subpixel_scale` (default "
        "true, as DALI) keeps the exact scale factor when the output size is rounded; set it "
        "false to match PIL / OpenCV for computed, fractional sizes. With argument inputs the "
        "per-sample size arguments may differ per sample.\n\n"
        "On device \"gpu\" the geometry, filters and coefficient tables are computed on the "
        "host exactly as on the CPU and the passes run on the GPU with the CPU's arithmetic, "
        "pass order and intermediate type, so the output equals the CPU's bit for bit (uint8 "
        "and float32); argument inputs stay on the CPU.\n\n"
        "Differences from DALI: 2-D HWC images only (no resize_z, no volumes or sequences, "
        "no save_attrs, minibatch_size, temp_buffer_hint); pixels outside the image are "
        "dropped and the filter weights renormalised (PIL) instead of clamping coordinates, "
        "which differs only at edges for CUBIC / LANCZOS3 and for ROIs reaching outside the "
        "image; INTERP_CUBIC is antialiased like the other filters; an empty axis with a "
        "requested extent fails in modes default / stretch and gives an empty output in "
        "not_larger / not_smaller.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .aliases = aliases,
    .num_aliases = 1,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE | SL_OP_DETERMINISTIC,
    .iter_bytes_per_sample = sizeof(geom),
    .init = resize_init,
    .setup = resize_setup,
    .setup_sample = resize_setup_sample,
    .run_sample = resize_run_sample,
    .roi_sample = resize_roi_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = resize_run_gpu,
#endif
};
