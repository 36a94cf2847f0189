/* ops/image/resample.h: separable resampling of HWC images, the family helper behind `resize`
 * and `random_resized_crop`.
 *
 * Coordinates: pixel k of an axis covers [k, k+1), its centre is k + 0.5. Along each axis an
 * input interval [lo, hi) (hi < lo mirrors the axis) is mapped onto the `out` output pixels:
 * output pixel o samples the input around centre c = lo + (o + 0.5) * s, s = (hi - lo) / out.
 * The weight of input pixel k is f((k + 0.5 - c) / fs), normalised over the pixels inside the
 * image (pixels outside the image are dropped, not clamped), with
 *   fs = max(1, |s|)  when the filter antialiases (downscaling widens it, as PIL's
 *                     ImagingResample does), else fs = 1 (OpenCV-like: no widening).
 * Filters f (support in input pixels at fs = 1):
 *   NN          the pixel containing c, floor(c) clamped to the image (never antialiased);
 *               c accumulated o times by s in double, as PIL does, so exact ties match PIL
 *   LINEAR      triangle 1 - |x|, support 1 (PIL BILINEAR)
 *   TRIANGULAR  LINEAR, always antialiased (DALI: deprecated alias of LINEAR + antialias)
 *   CUBIC       Keys cubic with a = -0.5, support 2 (PIL BICUBIC)
 *   LANCZOS3    sinc(x) sinc(x/3) for |x| < 3 (PIL LANCZOS)
 *   GAUSSIAN    exp(-4 x^2) for |x| < 1 (sigma = 1/(2 sqrt 2) ~ 0.354 px, DALI's Gaussian
 *               window: exp(-x^2) over [-2, 2] stretched to the support)
 * An output pixel whose window holds no weight (it lies wholly outside the image, possible
 * with a region of interest) takes the nearest edge pixel.
 *
 * Precision: uint8 -> uint8 works like PIL's 8-bit path: the coefficients are rounded to 22-bit
 * fixed point (per output pixel, computed once per row/column of a sample), sums are rounded
 * and clamped to 0..255 after each pass and the intermediate image is uint8, so results equal
 * PIL's (horizontal pass first, as PIL). Any float32 side works in float32: the intermediate is
 * float32, uint8 outputs are rounded (to nearest, ties to even) and clamped, and the pass order
 * (horizontal or vertical first) is the cheaper one for the sample's sizes.
 *
 * Exports: sl__filter and its parsing, the plan/run pair that resamples one image with scratch
 * memory from the caller (no allocation, no per-pixel branches in the inner loops), the
 * plan's coefficient tables and passes for callers that run them elsewhere, the argument glue
 * both operators share (interp_type, mag_filter, min_filter, antialias, dtype; their init check
 * and setup are hwc.h's sl__hwc_dtype_check and sl__hwc_setup) and, in CUDA builds,
 * their run_gpu (resample.cu + resample.cuh: the same plans, tables and arithmetic on the GPU).
 * Output window (sl__resample_plan_window): a plan may compute only a rectangle of its output,
 * each pixel byte-identical to what the whole plan computes there (same centres, windows,
 * weights, taps and pass order), reading only the input rows / columns that rectangle needs.
 * Invariant: the kernels never read outside the input image nor write outside the output,
 * whatever the interval (huge, NaN-free, mirrored, outside the image); they read only input rows
 * [y0, y1) x columns [x0, x1) of the plan and write only its output window.
 */
#ifndef SLUICE_OPS_IMAGE_RESAMPLE_H
#define SLUICE_OPS_IMAGE_RESAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/op.h"

#include "ops/image/hwc.h"

typedef enum sl__filter {
    SL__FILTER_NN,
    SL__FILTER_LINEAR,
    SL__FILTER_CUBIC,
    SL__FILTER_LANCZOS3,
    SL__FILTER_TRIANGULAR,
    SL__FILTER_GAUSSIAN
} sl__filter;

/* The `choices` of interp_type / mag_filter / min_filter, in sl__filter order. */
#define SL__INTERP_CHOICES                                                                         \
    "INTERP_NN|INTERP_LINEAR|INTERP_CUBIC|INTERP_LANCZOS3|INTERP_TRIANGULAR|INTERP_GAUSSIAN"

/* "INTERP_CUBIC" -> SL__FILTER_CUBIC; unknown names -> SL__FILTER_LINEAR (the registry checks
 * choices before an operator sees them). */
sl__filter sl__filter_parse(const char *name);

/* One axis of a resampling. */
typedef struct sl__resample_axis {
    int64_t in;        /* input extent in pixels (>= 1 when out >= 1) */
    int64_t out;       /* output extent in pixels (>= 0) */
    double lo, hi;     /* input interval mapped onto the output; hi < lo mirrors */
    sl__filter filter; /* for this axis (see sl__resample_pick) */
    bool antialias;    /* widen the filter when downscaling (ignored by NN and TRIANGULAR) */
} sl__resample_axis;

/* min_filter when the axis is downscaled (out < |hi - lo|), else mag_filter (DALI's rule). */
sl__filter sl__resample_pick(sl__filter min_filter, sl__filter mag_filter, double in_extent,
                             int64_t out);

/* A resampling of one H x W x C image, planned once per sample. */
typedef struct sl__resample_plan {
    sl__resample_axis y, x;
    int64_t c;                  /* channels (>= 0) */
    int64_t stride;             /* elements from one input row to the next; 0: x.in * c */
    sl_dtype in_type, out_type; /* uint8 or float32 each */
    /* Filled by sl__resample_plan_init: */
    int ky, kx;          /* taps per output pixel along y and x */
    int64_t y0, y1;      /* input rows [y0, y1) the resampling reads */
    int64_t x0, x1;      /* input columns [x0, x1) */
    bool vertical_first; /* pass order */
    bool skip_x, skip_y; /* identity axes (same size, interval [0, in)): no pass, as PIL */
    bool nn;             /* both axes NN or identities: a direct gather, no passes */
    size_t scratch;      /* bytes of scratch sl__resample_run needs (0: nothing to do) */
    /* The output window: rows [wy0, wy1) x columns [wx0, wx1) are computed. init: the whole
     * output (window false); sl__resample_plan_window: the rectangle asked, clamped. */
    bool window;
    int64_t wy0, wy1, wx0, wx1;
} sl__resample_plan;

/* Completes *p (whose axes, c and types the caller set; the other fields may hold anything) and
 * sizes its scratch, for the whole output. Cheap: O(out). */
void sl__resample_plan_init(sl__resample_plan *p);
/* Restricts a plan completed by sl__resample_plan_init to output rows [wy0, wy1) x columns
 * [wx0, wx1) (each clamped to [0, out); an empty one computes nothing: scratch 0). Afterwards
 * y0, y1, x0, x1 are the input rows / columns the window's pixels need (empty for an empty
 * window) and scratch what the window needs (<= the whole plan's); ky, kx, vertical_first,
 * skip_* and nn stay the whole plan's, so the window's pixels are byte-identical to the whole
 * run's, whatever the filter, types and instruction set. sl__resample_run then writes exactly the
 * window's pixels of dst (whose layout stays the whole output's) and no other byte of it, for
 * every plan (NN gathers and identity axes included: there is no fallback to the whole output).
 * May be called again on the same plan (the last window counts). Cheap: O(out). Not for plans
 * whose tables run elsewhere (sl__resample_tables, the GPU): they stay whole. */
void sl__resample_plan_window(sl__resample_plan *p, int64_t wy0, int64_t wy1, int64_t wx0,
                              int64_t wx1);
/* Resamples src (p->y.in rows of p->x.in x p->c elements, p->stride apart) into dst (p->y.out x
 * p->x.out x p->c, contiguous): the plan's window of it (the whole output unless
 * sl__resample_plan_window restricted it), reading input rows [y0, y1) x columns [x0, x1) only.
 * scratch: p->scratch bytes, 64-byte aligned (sl_ctx_scratch). Threads: reentrant. */
void sl__resample_run(const sl__resample_plan *p, const void *src, void *dst, void *scratch);

/* The coefficient tables sl__resample_run computes for a planned, non-NN resampling (p->scratch
 * > 0, !p->nn) of the whole output (no window: asserted), for callers that run the passes
 * elsewhere (the GPU, resample.cu): per output pixel of an axis its first tap (relative to y0 /
 * x0) and k weights, int32 22-bit fixed point for uint8 -> uint8, else float32. first_y: y.out,
 * w_y: y.out * ky (x alike); a skipped axis (skip_y / skip_x) gets nothing. tmp: max(ky, kx)
 * doubles. Threads: reentrant. */
void sl__resample_tables(const sl__resample_plan *p, int32_t *first_y, void *w_y, int32_t *first_x,
                         void *w_x, double *tmp);
/* NN plans (p->nn): the source row of every output row (y.out) and the source column of every
 * output column (x.out), as sl__resample_run gathers them (whatever the window). */
void sl__resample_nn_tables(const sl__resample_plan *p, int32_t *iy, int32_t *ix);

/* One pass of a planned resampling (sl__resample_passes_of). */
typedef struct sl__resample_pass_plan {
    bool horizontal;     /* along x (x table, kx taps), else along y (y table, ky taps) */
    bool src_u8, dst_u8; /* element types read and written: uint8, else float32 */
    int64_t rows;        /* rows of the pass */
    int64_t n;           /* per row: output pixels (horizontal) or elements (vertical) */
} sl__resample_pass_plan;

/* The passes of a plan over its window, in order. pass[0] reads the input from row y0, column
 * x0 (rows stride apart); the last pass writes the window of the output (rows x.out * c elements
 * apart); with two, pass[0] writes the intermediate image and pass[1] reads it. */
typedef struct sl__resample_passes {
    int count; /* 1 (an axis is skipped) or 2 */
    sl__resample_pass_plan pass[2];
    int64_t tmp_stride; /* elements from one row of the intermediate to the next (count 2) */
    size_t tmp_bytes;   /* bytes of the intermediate; 0 with one pass */
} sl__resample_passes;

/* Plans the passes of a completed plan that is not NN (init, and a window if any): their order,
 * sizes and element types, as sl__resample_run runs them and resample.cu runs them on the GPU.
 * Cheap: O(1). */
void sl__resample_passes_of(const sl__resample_plan *p, sl__resample_passes *ps);

/* ---- argument glue shared by resize and random_resized_crop --------------------------------
 * Argument indices of the five common arguments in an operator's table. */
typedef struct sl__resample_args {
    int interp_type, mag_filter, min_filter, antialias, dtype;
} sl__resample_args;

/* The common arguments' values for one sample. */
typedef struct sl__resample_cfg {
    sl__filter min_filter, mag_filter;
    bool antialias;
    sl_dtype out_type;
} sl__resample_cfg;

void sl__resample_cfg_get(const sl_ctx *ctx, const sl__resample_args *a, int sample,
                          sl__resample_cfg *cf);
/* Runs a completed plan (init, and a window if any) on src into output 0 of sample i, taking
 * scratch from ctx. */
sl_status sl__resample_sample(sl_ctx *ctx, int i, const sl__resample_plan *p, const void *src);
/* roi_sample glue: declares (sl_ctx_input_roi) that sample i of input 0 is read only where the
 * completed plan reads, its pixel (0, 0) at input row y, column x; nothing when the plan
 * computes nothing. */
void sl__resample_input_roi(sl_ctx *ctx, int i, const sl__resample_plan *p, int64_t y, int64_t x);

#ifdef SLUICE_HAVE_CUDA
/* Plans sample i of input 0 for the GPU path: fills the axes, c, stride, in_type and out_type
 * of *p (not yet initialised) and *offset, the elements from the sample's start to the plan's
 * pixel (0, 0). Runs on the host, from sizes, arguments and iteration data only. */
typedef void (*sl__resample_plan_fn)(sl_ctx *ctx, int i, sl__resample_plan *p, int64_t *offset);
/* run_gpu of resize and random_resized_crop (resample.cu): plans every sample with `plan`,
 * computes the coefficient tables on the host (the functions above, so the GPU output equals
 * the CPU's) and enqueues the passes for the whole batch on the node's stream. */
sl_status sl__resample_gpu(sl_ctx *ctx, sl__resample_plan_fn plan);
#endif

/* Docs of the common arguments. */
#define SL__DOC_INTERP                                                                             \
    "Filter: INTERP_NN, INTERP_LINEAR (triangle; PIL BILINEAR), INTERP_CUBIC (Keys, a = -0.5; "    \
    "PIL BICUBIC), INTERP_LANCZOS3 (PIL LANCZOS), INTERP_GAUSSIAN (exp(-4x^2), |x| < 1) or "       \
    "INTERP_TRIANGULAR (LINEAR, always antialiased). Default for mag_filter and min_filter."
#define SL__DOC_MAG "Filter for axes that are upscaled (or kept); unset: interp_type."
#define SL__DOC_MIN "Filter for axes that are downscaled; unset: interp_type."
#define SL__DOC_ANTIALIAS                                                                          \
    "When downscaling, widen the filter by the scale factor (as PIL does); false: sample the "     \
    "unwidened filter (as OpenCV's INTER_LINEAR). NN never antialiases, TRIANGULAR always does."
#define SL__DOC_DTYPE                                                                              \
    "Output type, uint8 or float32; unset: the input's type. uint8 outputs are rounded and "       \
    "clamped to 0..255."

/* The common arguments' definitions, for resize and random_resized_crop. */
#define SL__ARG_INTERP_TYPE_DEF                                                                    \
    {                                                                                              \
        .name = "interp_type", .type = SL_ARG_STRING, .def = "\"INTERP_LINEAR\"",                  \
        .doc = SL__DOC_INTERP, .choices = SL__INTERP_CHOICES                                       \
    }
#define SL__ARG_MAG_FILTER_DEF                                                                     \
    {                                                                                              \
        .name = "mag_filter", .type = SL_ARG_STRING, .doc = SL__DOC_MAG, .flags = SL_ARG_OPTIONAL, \
        .choices = SL__INTERP_CHOICES                                                              \
    }
#define SL__ARG_MIN_FILTER_DEF                                                                     \
    {                                                                                              \
        .name = "min_filter", .type = SL_ARG_STRING, .doc = SL__DOC_MIN, .flags = SL_ARG_OPTIONAL, \
        .choices = SL__INTERP_CHOICES                                                              \
    }
#define SL__ARG_ANTIALIAS_DEF                                                                      \
    {                                                                                              \
        .name = "antialias", .type = SL_ARG_BOOL, .def = "true", .doc = SL__DOC_ANTIALIAS          \
    }
#define SL__ARG_RESAMPLE_DTYPE_DEF                                                                 \
    {                                                                                              \
        .name = "dtype", .type = SL_ARG_DTYPE, .doc = SL__DOC_DTYPE, .flags = SL_ARG_OPTIONAL      \
    }

#endif
