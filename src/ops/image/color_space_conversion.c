/* color_space_conversion: converts images between RGB, BGR, GRAY and YCbCr (DALI's
 * fn.color_space_conversion).
 *
 * Exports: const sl_op_def sl_op_color_space_conversion ("color_space_conversion", CPU, GPU).
 *
 * The coefficients are DALI's (kernels/imgproc/color_manipulation/color_space_conversion_impl.h):
 *   GRAY  = 0.299 R + 0.587 G + 0.114 B                     (JPEG / BT.601 luma, full range)
 *   YCbCr = ITU-R BT.601 "video range" (Y in 16..235, Cb, Cr in 16..240 for uint8):
 *     Y  =  0.257 R + 0.504 G + 0.098 B + 16
 *     Cb = -0.148 R - 0.291 G + 0.439 B + 128
 *     Cr =  0.439 R - 0.368 G - 0.071 B + 128
 *   and back R = 1.164 (Y - 16) + 1.596 (Cr - 128), G = 1.164 (Y - 16) - 0.813 (Cr - 128)
 *   - 0.392 (Cb - 128), B = 1.164 (Y - 16) + 2.017 (Cb - 128);
 *   YCbCr -> GRAY = (Y - 16) / 0.859 and GRAY -> YCbCr = (0.859 g + 16, 128, 128), where
 *   0.859 = 0.257 + 0.504 + 0.098; GRAY -> RGB / BGR replicates the value.
 * For float32 images (values in [0, 1]) the offsets 16 and 128 become 0.0625 and 0.5, as in
 * DALI. Every conversion is one matrix + offset (sl__color_apply) composed through RGB in
 * double precision, then applied in float32; uint8 results are rounded and saturated. The GPU
 * run applies the same matrix with the same float32 arithmetic (color.cu).
 *
 * Invariant: no state; the transform depends only on the two (build-time) types and the input
 * element type.
 */
#include <stdio.h>
#include <string.h>

#include "ops/image/color.h"

enum { A_IMAGE_TYPE, A_OUTPUT_TYPE, NUM_ARGS };

#define TYPES "RGB|BGR|GRAY|YCbCr"

static const sl_arg_def args[NUM_ARGS] = {
    [A_IMAGE_TYPE] = {.name = "image_type",
                      .type = SL_ARG_STRING,
                      .doc = "Colour space of the input: RGB, BGR (3 channels), GRAY (1) or "
                             "YCbCr (3).",
                      .choices = TYPES},
    [A_OUTPUT_TYPE] = {.name = "output_type",
                       .type = SL_ARG_STRING,
                       .doc = "Colour space of the output: RGB, BGR, GRAY or YCbCr.",
                       .choices = TYPES},
};

static const sl_io_def inputs[] = {
    {"input", "Images, HWC (or FHWC / DHWC), uint8 or float32, with the channels of "
              "image_type."},
};
static const sl_io_def outputs[] = {
    {"output", "Converted images with the channels of output_type, same element type."},
};

enum space { RGB, BGR, GRAY, YCBCR };

static enum space space_of(const char *s)
{
    return !strcmp(s, "RGB") ? RGB : !strcmp(s, "BGR") ? BGR : !strcmp(s, "GRAY") ? GRAY : YCBCR;
}

static int channels(enum space s)
{
    return s == GRAY ? 1 : 3;
}

/* An affine map v -> m v + off between spaces (unused rows / columns zero). */
typedef struct xf {
    double m[3][3], off[3];
} xf;

/* to RGB from space s: rgb = m v + off (v has channels(s) components). */
static void to_rgb(enum space s, double oy, double oc, xf *t)
{
    memset(t, 0, sizeof *t);
    switch (s) {
    case RGB: t->m[0][0] = t->m[1][1] = t->m[2][2] = 1; break;
    case BGR: t->m[0][2] = t->m[1][1] = t->m[2][0] = 1; break;
    case GRAY: t->m[0][0] = t->m[1][0] = t->m[2][0] = 1; break;
    case YCBCR: {
        const double m[3][3] = {{1.164, 0, 1.596}, {1.164, -0.392, -0.813}, {1.164, 2.017, 0}};
        memcpy(t->m, m, sizeof m);
        for (int k = 0; k < 3; k++)
            t->off[k] = -(m[k][0] * oy + (m[k][1] + m[k][2]) * oc);
    } break;
    }
}

/* from RGB to space s: w = m rgb + off. */
static void from_rgb(enum space s, double oy, double oc, xf *t)
{
    memset(t, 0, sizeof *t);
    switch (s) {
    case RGB: t->m[0][0] = t->m[1][1] = t->m[2][2] = 1; break;
    case BGR: t->m[0][2] = t->m[1][1] = t->m[2][0] = 1; break;
    case GRAY: t->m[0][0] = 0.299, t->m[0][1] = 0.587, t->m[0][2] = 0.114; break;
    case YCBCR: {
        const double m[3][3] = {
            {0.257, 0.504, 0.098}, {-0.148, -0.291, 0.439}, {0.439, -0.368, -0.071}};
        memcpy(t->m, m, sizeof m);
        t->off[0] = oy, t->off[1] = t->off[2] = oc;
    } break;
    }
}

/* The transform from `in` to `out`; oy, oc: the Y and chroma offsets of the element type. */
static void conversion(enum space in, enum space out, double oy, double oc, sl__color_xform *x)
{
    xf a, b;
    to_rgb(in, oy, oc, &a);
    from_rgb(out, oy, oc, &b);
    if (in == YCBCR && out == GRAY) { /* DALI's direct formula, not luma of the RGB */
        const double k = 1.0 / (0.257 + 0.504 + 0.098);
        memset(&a, 0, sizeof a);
        a.m[0][0] = k, a.off[0] = -k * oy;
        memset(&b, 0, sizeof b);
        b.m[0][0] = 1;
    }
    if (in == out) { /* identity (a copy, converted) */
        to_rgb(RGB, oy, oc, &a);
        from_rgb(RGB, oy, oc, &b);
    }
    x->cin = channels(in);
    x->cout = channels(out);
    for (int i = 0; i < 3; i++) {
        double off = b.off[i];
        for (int j = 0; j < 3; j++) {
            double v = 0;
            for (int k = 0; k < 3; k++)
                v += b.m[i][k] * a.m[k][j];
            x->m[i][j] = (float)v;
            off += b.m[i][j] * a.off[j];
        }
        x->off[i] = (float)off;
    }
}

static sl_status csc_setup(sl_ctx *ctx)
{
    return sl__color_setup(ctx, -1);
}

static sl_status csc_setup_sample(sl_ctx *ctx, int i)
{
    const char *in = sl_ctx_arg_str(ctx, A_IMAGE_TYPE);
    char what[32];
    snprintf(what, sizeof what, "%s images", in);
    return sl__color_setup_sample(ctx, i, channels(space_of(in)),
                                  channels(space_of(sl_ctx_arg_str(ctx, A_OUTPUT_TYPE))), what);
}

static void csc_params(const sl_ctx *ctx, int i, sl__color_params *p)
{
    const bool u8 = sl_batch_dtype(sl_ctx_input(ctx, 0)) == SL_DTYPE_UINT8;
    conversion(space_of(sl_ctx_arg_str(ctx, A_IMAGE_TYPE)),
               space_of(sl_ctx_arg_str(ctx, A_OUTPUT_TYPE)), u8 ? 16.0 : 0.0625, u8 ? 128.0 : 0.5,
               &p->x);
    p->mul = p->add = 0;
}

static sl_status csc_run_sample(sl_ctx *ctx, int i)
{
    return sl__color_run(ctx, i, -1, csc_params);
}

#ifdef SLUICE_HAVE_CUDA
static sl_status csc_run_gpu(sl_ctx *ctx)
{
    return sl__color_run_gpu(ctx, -1, csc_params);
}
#endif

const sl_op_def sl_op_color_space_conversion = {
    .name = "color_space_conversion",
    .doc = "Converts images between the RGB, BGR, GRAY and YCbCr colour spaces (DALI's "
           "color_space_conversion).\n\n"
           "GRAY is full-range luma, 0.299 R + 0.587 G + 0.114 B. YCbCr is ITU-R BT.601 "
           "\"video range\" as in DALI: Y = 0.257 R + 0.504 G + 0.098 B + 16, Cb = -0.148 R - "
           "0.291 G + 0.439 B + 128, Cr = 0.439 R - 0.368 G - 0.071 B + 128, and back R = "
           "1.164 (Y - 16) + 1.596 (Cr - 128), G = 1.164 (Y - 16) - 0.813 (Cr - 128) - 0.392 "
           "(Cb - 128), B = 1.164 (Y - 16) + 2.017 (Cb - 128); YCbCr -> GRAY is (Y - 16) / "
           "0.859 and GRAY -> YCbCr (0.859 g + 16, 128, 128). For float32 images (values in "
           "[0, 1]) the offsets 16 and 128 are 0.0625 and 0.5. Computed in float32; uint8 "
           "results are rounded and saturated. The output keeps the input's element type.\n\n"
           "On `device=\"gpu\"` one kernel applies the same matrix to the whole batch; the results "
           "are identical to the CPU's.\n\n"
           "Differences from DALI: GRAY -> YCbCr on uint8 adds 16 (DALI's uint8 path adds "
           "0.0625, a slip); uint8 and float32 only.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE | SL_OP_DETERMINISTIC,
    .setup = csc_setup,
    .setup_sample = csc_setup_sample,
    .run_sample = csc_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = csc_run_gpu,
#endif
};
