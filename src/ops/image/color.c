/* ops/image/color.c: per-pixel colour kernels and the operator glue of the colour ops
 * (conventions in color.h).
 *
 * Each (input type, output type) pair gets its own loops with the matrix coefficients in
 * locals and a compile-time channel layout (3 -> 3, 3 -> 1, 1 -> 3, 1 -> 1), so the inner loops
 * have no branches and GCC vectorises them.
 *
 * Invariant: the kernels touch exactly n pixels of the source and destination.
 */
#include <math.h>
#include <string.h>

#include "ops/image/color.h"
#include "ops/image/store_u8.h"

/* ---- kernels (float32 results) -------------------------------------------------------------- */

#define DEFINE_APPLY(NAME, IN_T)                                                                   \
    static void NAME(const void *src_, float *restrict d, int64_t n, const sl__color_xform *x)     \
    {                                                                                              \
        const IN_T *restrict s = src_;                                                             \
        const float m00 = x->m[0][0], m01 = x->m[0][1], m02 = x->m[0][2];                          \
        const float m10 = x->m[1][0], m11 = x->m[1][1], m12 = x->m[1][2];                          \
        const float m20 = x->m[2][0], m21 = x->m[2][1], m22 = x->m[2][2];                          \
        const float o0 = x->off[0], o1 = x->off[1], o2 = x->off[2];                                \
        if (x->cin == 3 && x->cout == 3) {                                                         \
            for (int64_t p = 0; p < n; p++) {                                                      \
                float a = s[3 * p], b = s[3 * p + 1], c = s[3 * p + 2];                            \
                d[3 * p] = m00 * a + m01 * b + m02 * c + o0;                                       \
                d[3 * p + 1] = m10 * a + m11 * b + m12 * c + o1;                                   \
                d[3 * p + 2] = m20 * a + m21 * b + m22 * c + o2;                                   \
            }                                                                                      \
        } else if (x->cin == 3) {                                                                  \
            for (int64_t p = 0; p < n; p++)                                                        \
                d[p] = m00 * s[3 * p] + m01 * s[3 * p + 1] + m02 * s[3 * p + 2] + o0;              \
        } else if (x->cout == 3) {                                                                 \
            for (int64_t p = 0; p < n; p++) {                                                      \
                float a = s[p];                                                                    \
                d[3 * p] = m00 * a + o0;                                                           \
                d[3 * p + 1] = m10 * a + o1;                                                       \
                d[3 * p + 2] = m20 * a + o2;                                                       \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t p = 0; p < n; p++)                                                        \
                d[p] = m00 * s[p] + o0;                                                            \
        }                                                                                          \
    }

#define DEFINE_LINEAR(NAME, IN_T)                                                                  \
    static void NAME(const void *src_, float *restrict d, int64_t n, float mul, float add)         \
    {                                                                                              \
        const IN_T *restrict s = src_;                                                             \
        for (int64_t k = 0; k < n; k++)                                                            \
            d[k] = (float)s[k] * mul + add;                                                        \
    }

DEFINE_APPLY(apply_u8, uint8_t)
DEFINE_APPLY(apply_f32, float)
DEFINE_LINEAR(linear_u8, uint8_t)
DEFINE_LINEAR(linear_f32, float)

/* uint8 outputs go through a float block on the stack, converted by sl__store_u8. */
enum { BLOCK = 1024 }; /* values per block */

void sl__color_apply(const void *src, sl_dtype st, void *dst, sl_dtype dt, int64_t n,
                     const sl__color_xform *x)
{
    void (*k)(const void *, float *, int64_t, const sl__color_xform *) =
        st == SL_DTYPE_UINT8 ? apply_u8 : apply_f32;
    if (dt == SL_DTYPE_FLOAT32) {
        k(src, dst, n, x);
        return;
    }
    float buf[BLOCK];
    const size_t es = st == SL_DTYPE_UINT8 ? 1 : sizeof(float);
    const int64_t step = BLOCK / 3;
    for (int64_t p = 0; p < n; p += step) {
        int64_t m = n - p < step ? n - p : step;
        k((const char *)src + (size_t)(p * x->cin) * es, buf, m, x);
        sl__store_u8(buf, (uint8_t *)dst + p * x->cout, m * x->cout);
    }
}

void sl__color_linear(const void *src, sl_dtype st, void *dst, sl_dtype dt, int64_t n, float mul,
                      float add)
{
    void (*k)(const void *, float *, int64_t, float, float) =
        st == SL_DTYPE_UINT8 ? linear_u8 : linear_f32;
    if (dt == SL_DTYPE_FLOAT32) {
        k(src, dst, n, mul, add);
        return;
    }
    float buf[BLOCK];
    const size_t es = st == SL_DTYPE_UINT8 ? 1 : sizeof(float);
    for (int64_t p = 0; p < n; p += BLOCK) {
        int64_t m = n - p < BLOCK ? n - p : BLOCK;
        k((const char *)src + (size_t)p * es, buf, m, mul, add);
        sl__store_u8(buf, (uint8_t *)dst + p, m);
    }
}

/* ---- the YIQ model ------------------------------------------------------------------------ */

static const double rgb2yiq[3][3] = {
    {0.299, 0.587, 0.114},
    {0.596, -0.274, -0.321},
    {0.211, -0.523, 0.311},
};

/* The exact inverse of rgb2yiq (numpy.linalg.inv, 17 significant digits). */
static const double yiq2rgb[3][3] = {
    {0.9996643205124056, 0.9565411896520855, 0.620861702057573},
    {0.9996248232318959, -0.27227450319254143, -0.647451271296598},
    {1.0028122537690163, -1.1068480906311553, 1.7054056783849885},
};

static void matmul3(const double a[3][3], const double b[3][3], double out[3][3])
{
    double r[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            r[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
    memcpy(out, r, sizeof r);
}

void sl__color_yiq(double hue_deg, double saturation, double value, double m[3][3])
{
    double h = fmod(hue_deg, 360.0) * (M_PI / 180.0);
    double c = cos(h) * saturation, s = sin(h) * saturation;
    const double hs[3][3] = {{1, 0, 0}, {0, c, s}, {0, -s, c}};
    matmul3(yiq2rgb, hs, m);
    matmul3(m, rgb2yiq, m);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            m[i][j] *= value;
}

void sl__color_xform_set(sl__color_xform *x, const double m[3][3], double scale, double offset,
                         bool bgr)
{
    x->cin = x->cout = 3;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            /* BGR: out channel i is RGB channel 2 - i, input channel j is RGB 2 - j. */
            double v = bgr ? m[2 - i][2 - j] : m[i][j];
            x->m[i][j] = (float)(v * scale);
        }
        x->off[i] = (float)offset;
    }
}

/* ---- operator glue ------------------------------------------------------------------------ */

static bool layout_ok(const char *layout, int ndim)
{
    if (!layout[0])
        return true;
    if (ndim == 3)
        return strcmp(layout, "HWC") == 0;
    return strcmp(layout, "FHWC") == 0 || strcmp(layout, "DHWC") == 0;
}

sl_status sl__color_setup(sl_ctx *ctx, int dtype_arg)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const char *layout = sl_batch_layout(in);
    int ndim = sl_batch_ndim(in);
    sl_dtype t = sl_batch_dtype(in);
    if (ndim != 3 && ndim != 4)
        return sl_fail(ctx, SL_EINVAL,
                       "expected channels-last images (HWC, or FHWC / DHWC), got %d dimensions",
                       ndim);
    if (!layout_ok(layout, ndim))
        return sl_fail(ctx, SL_EUNSUPPORTED,
                       "input layout \"%s\" is not supported; expected \"%s\"", layout,
                       ndim == 3 ? "HWC" : "FHWC\" or \"DHWC");
    if (t != SL_DTYPE_UINT8 && t != SL_DTYPE_FLOAT32)
        return sl_fail(ctx, SL_EUNSUPPORTED,
                       "input type %s is not supported; expected uint8 or float32",
                       sl_dtype_name(t));
    if (!layout[0] && ndim == 3)
        layout = "HWC"; /* unset: treated as HWC, and said so */
    sl_ctx_set_output(ctx, 0, sl__hwc_out_type(ctx, dtype_arg), ndim, layout[0] ? layout : NULL);
    return SL_OK;
}

sl_status sl__color_setup_sample(sl_ctx *ctx, int i, int64_t need_c, int64_t out_c,
                                 const char *what)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    int ndim = sl_batch_ndim(in);
    int64_t shape[4];
    memcpy(shape, sl_batch_shape(in, i), sizeof(int64_t) * (size_t)ndim);
    int64_t c = shape[ndim - 1];
    if (need_c && c != need_c)
        return sl_fail(ctx, SL_EINVAL, "expected %s (%lld channel%s), got %lld channel%s", what,
                       (long long)need_c, need_c == 1 ? "" : "s", (long long)c, c == 1 ? "" : "s");
    if (out_c)
        shape[ndim - 1] = out_c;
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

sl_status sl__color_run(sl_ctx *ctx, int i, int dtype_arg, sl__color_params_fn params)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const void *src = sl_batch_sample_data(in, i);
    void *dst = sl_ctx_output_data(ctx, 0, i);
    sl_dtype st = sl_batch_dtype(in), dt = sl__hwc_out_type(ctx, dtype_arg);
    int64_t n = sl_batch_sample_numel(in, i);
    sl__color_params p;
    if (n == 0)
        return SL_OK;
    params(ctx, i, &p);
    if (p.x.cin > 0)
        sl__color_apply(src, st, dst, dt, n / p.x.cin, &p.x);
    else
        sl__color_linear(src, st, dst, dt, n, p.mul, p.add);
    return SL_OK;
}

void sl__color_yiq_params(const sl_ctx *ctx, double hue, double sat, double value,
                          double brightness, double contrast, bool bgr, sl__color_params *p)
{
    const double grey = sl_batch_dtype(sl_ctx_input(ctx, 0)) == SL_DTYPE_UINT8 ? 128.0 : 0.5;
    double m[3][3];
    sl__color_yiq(hue, sat, value, m);
    sl__color_xform_set(&p->x, m, brightness * contrast, (grey - grey * contrast) * brightness,
                        bgr);
    p->mul = p->add = 0;
}

bool sl__color_bgr(const sl_ctx *ctx, int arg)
{
    return strcmp(sl_ctx_arg_str(ctx, arg), "BGR") == 0;
}

void sl__color_bc_params(const sl_ctx *ctx, int i, int dtype_arg, double brightness, double shift,
                         double contrast, int center_arg, sl__color_params *p)
{
    const bool u8_in = sl_batch_dtype(sl_ctx_input(ctx, 0)) == SL_DTYPE_UINT8;
    const float range = sl__hwc_out_type(ctx, dtype_arg) == SL_DTYPE_UINT8 ? 255.0f : 1.0f;
    const float b = (float)brightness, c = (float)contrast;
    float center = u8_in ? 128.0f : 0.5f;
    if (center_arg >= 0 && sl_ctx_arg_is_set(ctx, center_arg))
        center = (float)sl_ctx_arg_float(ctx, center_arg, i);
    memset(&p->x, 0, sizeof p->x); /* x.cin 0: the linear form */
    /* out = (shift * range + b * (center - c * center)) + (b * c) * in, DALI's arrangement */
    p->add = (float)shift * range + b * (center - c * center);
    p->mul = b * c;
}

/* ---- a colour op from its description ----------------------------------------------------- */

sl_status sl__color_op_init(sl_op_init *ini, void **state, const sl__color_op *op)
{
    *state = (void *)op; /* read-only: the functions below take it back as const */
    return sl__hwc_dtype_check(ini, op->dtype_arg);
}

sl_status sl__color_op_setup(sl_ctx *ctx)
{
    const sl__color_op *op = sl_ctx_state(ctx);
    return sl__color_setup(ctx, op->dtype_arg);
}

sl_status sl__color_op_setup_sample(sl_ctx *ctx, int i)
{
    const sl__color_op *op = sl_ctx_state(ctx);
    return sl__color_setup_sample(ctx, i, op->need_c, 0, op->what);
}

sl_status sl__color_op_run_sample(sl_ctx *ctx, int i)
{
    const sl__color_op *op = sl_ctx_state(ctx);
    return sl__color_run(ctx, i, op->dtype_arg, op->params);
}

#ifdef SLUICE_HAVE_CUDA
sl_status sl__color_op_run_gpu(sl_ctx *ctx)
{
    const sl__color_op *op = sl_ctx_state(ctx);
    return sl__color_run_gpu(ctx, op->dtype_arg, op->params);
}
#endif

const sl_io_def sl__color_inputs[1] = {
    {"input", "Images, HWC (or FHWC / DHWC), uint8 or float32, any number of channels."},
};
const sl_io_def sl__color_inputs3[1] = {
    {"input", "3-channel images, HWC (or FHWC / DHWC), uint8 or float32."},
};
const sl_io_def sl__color_outputs[1] = {
    {"output", "Adjusted images, same shape and layout, of type dtype."},
};
