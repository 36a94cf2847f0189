/* ops/image/color.h: per-pixel colour transforms, the family helper behind color_twist, hsv,
 * hue, saturation, brightness, contrast, brightness_contrast and color_space_conversion.
 *
 * Two kernels over channels-last images (HWC, or FHWC / DHWC: every pixel alike):
 *   sl__color_apply   out[k] = sum_j m[k][j] in[j] + off[k] for 1 or 3 input and output
 *                     channels (a 3x3 matrix + offset, or its 1x3 / 3x1 / 1x1 corners)
 *   sl__color_linear  out = in * mul + add on every element, any channel count
 * Arithmetic is float32; uint8 outputs are rounded (halves up) and saturated to [0, 255],
 * float32 outputs are not clamped (as DALI).
 *
 * The YIQ model of DALI's colour ops (color_twist, hsv, hue, saturation): rgb -> yiq with rows
 * [0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]; hue rotates the
 * (I, Q) plane, saturation scales it, value scales all three; back with the exact inverse of
 * that matrix (DALI rounds its inverse to 3 decimals, so identity settings are not exactly an
 * identity there; here they are).
 *
 * Exports: the kernels, sl__color_yiq (the composed matrix), sl__color_xform_set (double
 * matrix -> kernel transform, optionally for BGR order), and the operator glue shared by the
 * ops: sl__color_setup / _setup_sample / _run, the per-sample parameters sl__color_yiq_params /
 * _bc_params, the GPU run sl__color_run_gpu of color.cu, and on top of them an op's whole
 * init / setup / setup_sample / run_sample / run_gpu from its description (sl__color_op:
 * sl__color_op_init and sl__color_op_*, listed in an sl_op_def by SL__COLOR_OP_FIELDS), which
 * every colour op but color_space_conversion uses; the io definitions and doc paragraphs they
 * share. Their `dtype` argument, its init check and the output type are hwc.h's. An op supplies
 * one function computing a sample's sl__color_params; the CPU run (sl__color_run) and the GPU
 * run (sl__color_run_gpu, device code in color.cuh) both apply it.
 * Invariant: kernels read n pixels of cin channels and write n of cout, nothing else.
 */
#ifndef SLUICE_OPS_IMAGE_COLOR_H
#define SLUICE_OPS_IMAGE_COLOR_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/op.h"

#include "ops/image/hwc.h"

#ifdef __cplusplus
extern "C" { /* color.cu */
#endif

typedef struct sl__color_xform {
    int cin, cout; /* 1 or 3 each */
    float m[3][3]; /* out[k] = sum_j m[k][j] in[j] + off[k]; only [cout][cin] used */
    float off[3];
} sl__color_xform;

/* Applies x to n pixels. src / dst: uint8 or float32, channels-last, not overlapping. */
void sl__color_apply(const void *src, sl_dtype st, void *dst, sl_dtype dt, int64_t n,
                     const sl__color_xform *x);

/* out = in * mul + add for n elements. */
void sl__color_linear(const void *src, sl_dtype st, void *dst, sl_dtype dt, int64_t n, float mul,
                      float add);

/* m = yiq2rgb * diag(1, S, S) rotated by hue (degrees) * value * rgb2yiq, i.e. with
 * h = hue in radians: the (I, Q) block is S [[cos h, sin h], [-sin h, cos h]]. */
void sl__color_yiq(double hue_deg, double saturation, double value, double m[3][3]);

/* x = 3 -> 3 transform of matrix m scaled by `scale` plus `offset` on every channel; bgr:
 * the image's channels are in B, G, R order (m is permuted to act on them). */
void sl__color_xform_set(sl__color_xform *x, const double m[3][3], double scale, double offset,
                         bool bgr);

/* ---- operator glue ------------------------------------------------------------------------ */

/* setup: input 0 must be channels-last (3-D "HWC", 4-D "FHWC" / "DHWC", or no layout) uint8 or
 * float32; declares output 0 with the input's ndim and layout, of type sl__hwc_out_type. */
sl_status sl__color_setup(sl_ctx *ctx, int dtype_arg);

/* setup_sample: sample i must have `need_c` channels (0: any; the message says `what` is
 * expected); the output shape is the input's with out_c channels (0: the same). */
sl_status sl__color_setup_sample(sl_ctx *ctx, int i, int64_t need_c, int64_t out_c,
                                 const char *what);

/* Per-sample parameters of a colour op: the transform x when x.cin > 0, else out = in * mul +
 * add on every element. Computed on the host from the sample's arguments, for the CPU run and
 * the GPU run alike. */
typedef struct sl__color_params {
    sl__color_xform x;
    float mul, add;
} sl__color_params;

/* An op's parameters of sample i (may read arguments, never data). */
typedef void (*sl__color_params_fn)(const sl_ctx *ctx, int i, sl__color_params *p);

/* run_sample: applies params(ctx, i) to sample i. */
sl_status sl__color_run(sl_ctx *ctx, int i, int dtype_arg, sl__color_params_fn params);

/* Parameters of the YIQ ops (color_twist, hsv, hue, saturation): out = ((Y2R HS(hue, sat) value
 * R2Y in - grey) * contrast + grey) * brightness, grey 128 (uint8 input) or 0.5; bgr: the
 * channels are B, G, R. */
void sl__color_yiq_params(const sl_ctx *ctx, double hue, double sat, double value,
                          double brightness, double contrast, bool bgr, sl__color_params *p);

/* True when the `image_type` argument (index arg, SL__ARG_IMAGE_TYPE_DEF) is "BGR". */
bool sl__color_bgr(const sl_ctx *ctx, int arg);

/* Parameters of the brightness / contrast ops (sample i): out = shift * R + brightness * (center
 * + contrast * (in - center)) with R = 255 (uint8 output) or 1, center = argument center_arg
 * when set (center_arg >= 0), else 128 (uint8 input) or 0.5. mul and add are formed in float32,
 * as DALI does. */
void sl__color_bc_params(const sl_ctx *ctx, int i, int dtype_arg, double brightness, double shift,
                         double contrast, int center_arg, sl__color_params *p);

#ifdef SLUICE_HAVE_CUDA
/* run_gpu of a colour op (color.cu): params(ctx, i) of every sample computed on the host and
 * uploaded, then one kernel for the batch doing what sl__color_run does per sample, with the
 * same float32 arithmetic in the same order (bit-identical results). */
sl_status sl__color_run_gpu(sl_ctx *ctx, int dtype_arg, sl__color_params_fn params);
#endif

/* ---- a colour op from its description (all but color_space_conversion) ------------------- */

/* What sets a colour op apart from the others, besides its schema: a constant of the op's
 * file, which sl__color_op_init keeps as the node's state (borrowed; nothing to free). */
typedef struct sl__color_op {
    int dtype_arg;              /* index of the `dtype` argument (SL__ARG_HWC_DTYPE_DEF) */
    int64_t need_c;             /* input channels required, 0: any */
    const char *what;           /* what need_c channels are, for the error ("RGB images") */
    sl__color_params_fn params; /* the sample's parameters, for the CPU and the GPU run */
} sl__color_op;

/* init: checks `dtype` (sl__hwc_dtype_check) and keeps op as the state. */
sl_status sl__color_op_init(sl_op_init *ini, void **state, const sl__color_op *op);
/* The op's setup, setup_sample (same shape), run_sample and run_gpu: sl__color_setup,
 * sl__color_setup_sample, sl__color_run and sl__color_run_gpu with the state's description. */
sl_status sl__color_op_setup(sl_ctx *ctx);
sl_status sl__color_op_setup_sample(sl_ctx *ctx, int i);
sl_status sl__color_op_run_sample(sl_ctx *ctx, int i);
#ifdef SLUICE_HAVE_CUDA
sl_status sl__color_op_run_gpu(sl_ctx *ctx);
#endif

/* ---- argument and io definitions shared by brightness, contrast, brightness_contrast ------ */
#define SL__ARG_BRIGHTNESS_DEF                                                                     \
    {                                                                                              \
        .name = "brightness", .type = SL_ARG_FLOAT, .def = "1.0",                                  \
        .doc = "Brightness multiplier: 0 gives black (plus brightness_shift), 1 leaves it "        \
               "unchanged.",                                                                       \
        .flags = SL_ARG_TENSOR                                                                     \
    }
#define SL__ARG_BRIGHTNESS_SHIFT_DEF                                                               \
    {                                                                                              \
        .name = "brightness_shift", .type = SL_ARG_FLOAT, .def = "0.0",                            \
        .doc = "Added to the result, as a fraction of the output type's range (255 for uint8, 1 "  \
               "for float32).",                                                                    \
        .flags = SL_ARG_TENSOR                                                                     \
    }
#define SL__ARG_CONTRAST_DEF                                                                       \
    {                                                                                              \
        .name = "contrast", .type = SL_ARG_FLOAT, .def = "1.0",                                    \
        .doc = "Stretches values away from contrast_center: 0 gives uniform contrast_center, 1 "   \
               "leaves them unchanged.",                                                           \
        .flags = SL_ARG_TENSOR                                                                     \
    }
#define SL__ARG_CONTRAST_CENTER_DEF                                                                \
    {                                                                                              \
        .name = "contrast_center", .type = SL_ARG_FLOAT,                                           \
        .doc = "The value contrast leaves unchanged. Unset: half the input type's range (128 for " \
               "uint8, 0.5 for float32).",                                                         \
        .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR                                                   \
    }

/* ---- io definitions and doc paragraphs the colour ops share ------------------------------- */
extern const sl_io_def sl__color_inputs[1];  /* images of any channel count */
extern const sl_io_def sl__color_inputs3[1]; /* 3-channel images */
extern const sl_io_def sl__color_outputs[1]; /* "Adjusted images", of type dtype */

#ifdef __cplusplus
}
#endif

/* More argument definitions shared by the YIQ operators (hue, saturation, color_twist, ...). */
#define SL__ARG_HUE_DEF                                                                            \
    {                                                                                              \
        .name = "hue", .type = SL_ARG_FLOAT, .def = "0.0",                                         \
        .doc = "Hue change in degrees: rotation of the (I, Q) chroma plane of YIQ.",               \
        .flags = SL_ARG_TENSOR                                                                     \
    }
#define SL__ARG_SATURATION_DEF                                                                     \
    {                                                                                              \
        .name = "saturation", .type = SL_ARG_FLOAT, .def = "1.0",                                  \
        .doc = "Scales the chroma (I, Q) of YIQ: 0 gives greyscale, 1 leaves it unchanged.",       \
        .flags = SL_ARG_TENSOR                                                                     \
    }
#define SL__ARG_IMAGE_TYPE_DEF                                                                     \
    {                                                                                              \
        .name = "image_type", .type = SL_ARG_STRING, .def = "\"RGB\"",                             \
        .doc = "Channel order of the input and output: RGB or BGR.", .choices = "RGB|BGR"          \
    }

/* The last paragraphs of the ops' docs: the GPU run of the matrix ops (hue, saturation,
 * color_twist, hsv); the GPU run and the DALI differences of the linear ops (brightness,
 * contrast, brightness_contrast: SL__DOC_BC_TAIL) and of hue and saturation (SL__DOC_YIQ_TAIL). */
#define SL__DOC_COLOR_GPU_MATRIX                                                                   \
    "On `device=\"gpu\"` the per-sample matrix is computed on the host as on the CPU and one "     \
    "kernel applies it to the whole batch; the results are identical to the CPU's.\n\n"
#define SL__DOC_BC_TAIL                                                                            \
    "On `device=\"gpu\"` the per-sample factors are computed on the host as on the CPU and one "   \
    "kernel applies them to the whole batch; the results are identical to the CPU's.\n\n"          \
    "Differences from DALI: uint8 / float32 only; no per-frame arguments."
#define SL__DOC_YIQ_TAIL                                                                           \
    SL__DOC_COLOR_GPU_MATRIX                                                                       \
    "Differences from DALI: the YIQ -> RGB matrix is the exact inverse (DALI's is rounded to 3 "   \
    "decimals); 3-channel uint8 / float32 input only; no per-frame arguments."

/* The sl_op_def fields that the family fixes for an op built on sl__color_op (one image input,
 * one output, CPU and GPU, sample by sample, the family's functions); the op's definition gives
 * the rest: name, doc, inputs, outputs, args, num_args and init. */
#ifdef SLUICE_HAVE_CUDA
#define SL__COLOR_OP_RUN_GPU sl__color_op_run_gpu
#else
#define SL__COLOR_OP_RUN_GPU NULL
#endif
#define SL__COLOR_OP_FIELDS                                                                        \
    .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .devices = SL_OP_CPU | SL_OP_GPU,          \
    .flags = SL_OP_SAMPLEWISE, .setup = sl__color_op_setup,                                        \
    .setup_sample = sl__color_op_setup_sample, .run_sample = sl__color_op_run_sample,              \
    .run_gpu = SL__COLOR_OP_RUN_GPU

#endif
