/* crop_mirror_normalize: crop, optional horizontal mirror, per-channel normalisation, channel
 * padding, layout change (HWC -> CHW) and cast, fused into one pass over each image.
 *
 * Exports: const sl_op_def sl_op_crop_mirror_normalize ("crop_mirror_normalize", DALI's
 * fn.crop_mirror_normalize, CPU and GPU).
 *
 * Per sample i, with input H x W x C (HWC, uint8 or float32):
 *   window   (ops/image/window.h, shared with crop) crop extents truncated to int (<= 0: the
 *            whole extent), anchor = round(pos * (in - crop)) along H and W, "round" = halves
 *            away from zero;
 *            a window outside the image fails, pads with fill_values or is trimmed
 *            (out_of_bounds_policy)
 *   mirror   mirror != 0 reverses the window along W
 *   value    out = (in - mean[c]) * (scale * float32(1 / std[c])) + shift, in float32
 *   channels pad_output: C' = next power of two >= C, channels C.. C'-1 hold fill_values
 *   cast     float32, float16 (saturated to +-65504, as DALI), uint8 / int8 (rounded, halves
 *            away from zero, saturated; NaN -> the type's minimum, where DALI's is undefined)
 * Pixels outside the image (policy "pad") and padded channels are fill_values[c] written as
 * output values (not normalised), as DALI does; fill_values has one value (all channels) or at
 * least C' (one per output channel), and mean / std one or exactly C: other lengths fail the
 * sample with an error naming the argument.
 *
 * On the GPU (crop_mirror_normalize.cu) one fused kernel runs the batch, a thread per output
 * pixel, with the same windows, coefficients, arithmetic and conversions, so its outputs equal
 * the CPU's.
 *
 * Invariant: setup_sample computes each sample's window once and keeps it in the iteration
 * data; run_sample only reads it, so the output shape and the pixels written always agree.
 * The op keeps no state of its own (init only validates), so it allocates nothing.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "sluice/op.h"

#include "core/half.h"
#include "exec/exec.h" /* sl__ctx_output_fused */
#include "ops/image/crop_mirror_normalize.h"
#include "ops/image/hwc.h"
#include "ops/image/window.h"
#include "ops/tensor/convert.h"

enum {
    A_MIRROR = SL__CROP_NUM_ARGS,
    A_MEAN,
    A_STD,
    A_SCALE,
    A_SHIFT,
    A_DTYPE,
    A_OUTPUT_LAYOUT,
    A_PAD_OUTPUT,
    A_FILL_VALUES,
    A_OOB_POLICY,
    A_ROUNDING,
    NUM_ARGS
};

static const sl_arg_def args[NUM_ARGS] = {
    SL__CROP_ARG_DEFS,
    [A_MIRROR] = {.name = "mirror",
                  .type = SL_ARG_INT,
                  .def = "0",
                  .doc = "Non-zero: flip the window horizontally. Usually an argument input "
                         "fed by random.coin_flip.",
                  .flags = SL_ARG_TENSOR},
    [A_MEAN] = {.name = "mean",
                .type = SL_ARG_FLOATS,
                .def = "[0.0]",
                .doc = "Subtracted from each channel: one value (all channels) or one per "
                       "input channel.",
                .flags = SL_ARG_TENSOR | SL_ARG_SCALAR_OK},
    [A_STD] = {.name = "std",
               .type = SL_ARG_FLOATS,
               .def = "[1.0]",
               .doc = "Divides each channel (as a multiplication by float32(1/std)): one value "
                      "or one per input channel.",
               .flags = SL_ARG_TENSOR | SL_ARG_SCALAR_OK},
    [A_SCALE] = {.name = "scale",
                 .type = SL_ARG_FLOAT,
                 .def = "1.0",
                 .doc = "Multiplies the normalised value: out = scale * (in - mean) / std + "
                        "shift. Useful to fit integer outputs."},
    [A_SHIFT] = {.name = "shift",
                 .type = SL_ARG_FLOAT,
                 .def = "0.0",
                 .doc = "Added to the scaled value (e.g. 128 for uint8 outputs)."},
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .def = "\"float32\"",
                 .doc = "Output type: float32, float16, uint8 or int8. Integer outputs are "
                        "rounded (halves away from zero) and saturated."},
    [A_OUTPUT_LAYOUT] = {.name = "output_layout",
                         .type = SL_ARG_STRING,
                         .def = "\"CHW\"",
                         .doc = "Output layout: \"CHW\" (planar) or \"HWC\" (interleaved).",
                         .choices = "CHW|HWC"},
    [A_PAD_OUTPUT] = {.name = "pad_output",
                      .type = SL_ARG_BOOL,
                      .def = "false",
                      .doc = "Pad the channels to the next power of two (3 -> 4); the added "
                             "channels hold fill_values."},
    [A_FILL_VALUES] = {.name = "fill_values",
                       .type = SL_ARG_FLOATS,
                       .def = "[0.0]",
                       .doc = "Output values of pixels outside the image (out_of_bounds_policy "
                              "\"pad\") and of padded channels: one value, or one per output "
                              "channel (e.g. [0, 0, 0, 42] puts 42 in channel 3).",
                       .flags = SL_ARG_SCALAR_OK},
    [A_OOB_POLICY] = SL__ARG_OOB_POLICY,
    [A_ROUNDING] = SL__ARG_ROUNDING,
};

static const sl_io_def inputs[] = {
    {"input", "Images, layout \"HWC\" (or unset), uint8 or float32."},
};
static const sl_io_def outputs[] = {
    {"output", "Cropped, mirrored, normalised images in output_layout, of type dtype."},
};

/* Where the crop arguments are, for the shared window code (ops/image/window.h). */
static const sl__crop_args crop_args = {.rounding = A_ROUNDING, .policy = A_OOB_POLICY};

/* Per-sample iteration data, written by setup_sample, read by run_sample. */
typedef sl__crop_window window;

/* The batch-wide constant arguments, re-read cheaply in each phase (the op keeps no state). */
typedef struct config {
    sl_dtype out_type;
    bool chw;
    bool pad_output;
    bool pad; /* out_of_bounds_policy "pad" */
} config;

static void read_config(const sl_ctx *ctx, config *cf)
{
    cf->out_type = sl_ctx_arg_dtype(ctx, A_DTYPE);
    cf->chw = strcmp(sl_ctx_arg_str(ctx, A_OUTPUT_LAYOUT), "HWC") != 0;
    cf->pad_output = sl_ctx_arg_bool(ctx, A_PAD_OUTPUT, 0);
    cf->pad = sl__oob_parse(sl_ctx_arg_str(ctx, A_OOB_POLICY)) == SL__OOB_PAD;
}

static int64_t out_channels(const config *cf, int64_t c)
{
    if (!cf->pad_output)
        return c;
    int64_t p = 1;
    while (p < c)
        p <<= 1;
    return p;
}

/* ---- init: checks of the constant arguments ------------------------------------------- */

static sl_status cmn_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    sl_dtype t = sl_init_arg_dtype(ini, A_DTYPE);
    if (t != SL_DTYPE_FLOAT32 && t != SL_DTYPE_FLOAT16 && t != SL_DTYPE_UINT8 && t != SL_DTYPE_INT8)
        return sl_init_fail(ini, SL_EUNSUPPORTED,
                            "dtype %s is not supported; use float32, float16, uint8 or int8",
                            sl_dtype_name(t));
    return sl__crop_init_check(ini);
}

/* ---- setup ----------------------------------------------------------------------------- */

static sl_status cmn_setup(sl_ctx *ctx)
{
    config cf;
    sl_status st = sl__hwc_check(ctx);
    if (st != SL_OK)
        return st;
    read_config(ctx, &cf);
    sl_ctx_set_output(ctx, 0, cf.out_type, 3, cf.chw ? "CHW" : "HWC");
    return SL_OK;
}

/* Checks that list argument `arg` of sample i has 1 value or `need` (at least `need` when
 * !exact). */
static sl_status check_len(sl_ctx *ctx, int arg, int i, int64_t need, bool exact)
{
    double one[1];
    int n = sl_ctx_arg_floats(ctx, arg, i, one, 1);
    if (n == 1 || n == need || (!exact && n > need))
        return SL_OK;
    return sl_fail(ctx, SL_EINVAL, "%s has %d values; expected 1 or %s%lld (one per %s channel)",
                   args[arg].name, n, exact ? "" : "at least ", (long long)need,
                   exact ? "input" : "output");
}

static sl_status cmn_setup_sample(sl_ctx *ctx, int i)
{
    const int64_t *s = sl_batch_shape(sl_ctx_input(ctx, 0), i);
    int64_t H = s[0], W = s[1], C = s[2];
    window *win = (window *)sl_ctx_iter_data(ctx) + i;
    config cf;
    sl_status st;

    read_config(ctx, &cf);
    int64_t OC = out_channels(&cf, C);
    if ((st = check_len(ctx, A_MEAN, i, C, true)) != SL_OK ||
        (st = check_len(ctx, A_STD, i, C, true)) != SL_OK)
        return st;
    if ((cf.pad || OC > C) && (st = check_len(ctx, A_FILL_VALUES, i, OC, false)) != SL_OK)
        return st;

    if ((st = sl__crop_window_get(ctx, &crop_args, i, H, W, win)) != SL_OK)
        return st;

    int64_t shape[3];
    if (cf.chw) {
        shape[0] = OC, shape[1] = win->h, shape[2] = win->w;
    } else {
        shape[0] = win->h, shape[1] = win->w, shape[2] = OC;
    }
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

/* ---- element conversions ----------------------------------------------------------------- */

static inline float cv_f32(float v)
{
    return v;
}

/* The conversions are branch-free: normalised data has random signs, and a branch on them
 * mispredicts half the time (GCC turns plain ternary clamps back into branches, hence SSE
 * min/max on x86; MAXSS/MINSS return their second operand when either is NaN).
 * clampf: NaN becomes lo (int8); clampf_nan: NaN stays NaN (float16). uint8 outputs are
 * convert.h's sl__cv_u8, the library's one float -> uint8 rule (branch-free the same way). */
#if defined(__SSE2__)
static inline float clampf(float v, float lo, float hi)
{
    __m128 x = _mm_max_ss(_mm_set_ss(v), _mm_set_ss(lo));
    return _mm_cvtss_f32(_mm_min_ss(x, _mm_set_ss(hi)));
}

static inline float clampf_nan(float v, float lo, float hi)
{
    __m128 x = _mm_max_ss(_mm_set_ss(lo), _mm_set_ss(v));
    return _mm_cvtss_f32(_mm_min_ss(_mm_set_ss(hi), x));
}
#else
static inline float clampf(float v, float lo, float hi)
{
    v = v > lo ? v : lo;
    return v < hi ? v : hi;
}

static inline float clampf_nan(float v, float lo, float hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}
#endif

static inline uint16_t cv_f16(float v)
{
    /* DALI's ConvertSat<float16> clamps to the finite range instead of overflowing to inf. */
    return sl__half_from_float(clampf_nan(v, -65504.0f, 65504.0f));
}

static inline int8_t cv_i8(float v)
{
    double d = clampf(v, -128.0f, 127.0f);
    return (int8_t)(int)(d + copysign(0.5, d)); /* halves away from zero */
}

/* ---- row kernels ------------------------------------------------------------------------- */

/* Converts n pixels of one row. src: channel 0 of the first input pixel, `step` elements to the
 * next pixel (+C, or -C when mirrored). dst: channel 0 of the first output pixel; channel c of
 * pixel j is at dst[c * cstride + j * pstride] (CHW: cstride = plane, pstride = 1; HWC:
 * cstride = 1, pstride = C'). */
typedef void (*row_fn)(const void *src, ptrdiff_t step, int64_t n, int64_t C, void *dst,
                       ptrdiff_t cstride, ptrdiff_t pstride, const float *mean, const float *mul,
                       float shift);

/* Generic kernel: channel-major so each inner loop has its channel's constants in registers and
 * no branch; the contiguous-store case (CHW) gets its own loop so it vectorises. */
#define DEFINE_ROW(NAME, IN_T, OUT_T, CONVERT)                                                     \
    static void NAME(const void *src_, ptrdiff_t step, int64_t n, int64_t C, void *dst_,           \
                     ptrdiff_t cstride, ptrdiff_t pstride, const float *mean, const float *mul,    \
                     float shift)                                                                  \
    {                                                                                              \
        for (int64_t c = 0; c < C; c++) {                                                          \
            const IN_T *s = (const IN_T *)src_ + c;                                                \
            OUT_T *d = (OUT_T *)dst_ + c * cstride;                                                \
            const float m = mean[c], k = mul[c];                                                   \
            if (pstride == 1) {                                                                    \
                for (int64_t j = 0; j < n; j++)                                                    \
                    d[j] = CONVERT(((float)s[j * step] - m) * k + shift);                          \
            } else {                                                                               \
                for (int64_t j = 0; j < n; j++)                                                    \
                    d[j * pstride] = CONVERT(((float)s[j * step] - m) * k + shift);                \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_ROW(row_u8_f32, uint8_t, float, cv_f32)
DEFINE_ROW(row_u8_f16, uint8_t, uint16_t, cv_f16)
DEFINE_ROW(row_u8_u8, uint8_t, uint8_t, sl__cv_u8)
DEFINE_ROW(row_u8_i8, uint8_t, int8_t, cv_i8)
DEFINE_ROW(row_f32_f32, float, float, cv_f32)
DEFINE_ROW(row_f32_f16, float, uint16_t, cv_f16)
DEFINE_ROW(row_f32_u8, float, uint8_t, sl__cv_u8)
DEFINE_ROW(row_f32_i8, float, int8_t, cv_i8)

#if defined(__x86_64__)
/* row_u8_f32_chw3 for the first n - n % 8 pixels with AVX2 (chw3_avx2, which returns how many it
 * did; this is its loop, one copy per kind of store). Each group of 8 pixels (24 bytes, read
 * exactly) is split into its R, G and B bytes by one byte shuffle per 128-bit half (the halves hold
 * bytes 0-15 and 8-23, pixels 0-4 and 3-7; mirrored, the same bytes in reverse pixel order) and a
 * dword permutation, then widened to float. The arithmetic is the scalar loop's, (x - m) * k +
 * shift rounded after each operation (no FMA), so the results are bit-identical. When the output
 * is a batch's (not a fused consumer's scratch, read at once) and the three planes' rows start
 * 32-byte aligned (a CHW float batch: they do), the stores are non-temporal: the 602 KB a
 * 224 x 224 sample writes go to a batch of tens of MB that no cache keeps, and streaming them saves
 * reading every line before it is written (cmn_run_sample fences them before the sample counts as
 * done). */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
chw3_avx2_loop(const uint8_t *s, bool mirror, int64_t end, float *d0, float *d1, float *d2,
               const float *mean, const float *mul, float shift, bool stream)
{
    /* per half: dword 0 = R of its 4 pixels, 1 = G, 2 = B (in output order) */
    const __m256i fwd = _mm256_setr_epi8(0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11, -1, -1, -1, -1, 4, 7,
                                         10, 13, 5, 8, 11, 14, 6, 9, 12, 15, -1, -1, -1, -1);
    const __m256i rev = _mm256_setr_epi8(9, 6, 3, 0, 10, 7, 4, 1, 11, 8, 5, 2, -1, -1, -1, -1, 13,
                                         10, 7, 4, 14, 11, 8, 5, 15, 12, 9, 6, -1, -1, -1, -1);
    /* -> R0-3 R4-7 G0-3 G4-7 B0-3 B4-7 (mirrored: the upper half holds the first 4 pixels) */
    const __m256i order = mirror ? _mm256_setr_epi32(4, 0, 5, 1, 6, 2, 7, 3)
                                 : _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    const __m256i mask = mirror ? rev : fwd;
    const __m256 m0 = _mm256_set1_ps(mean[0]), m1 = _mm256_set1_ps(mean[1]);
    const __m256 m2 = _mm256_set1_ps(mean[2]), k0 = _mm256_set1_ps(mul[0]);
    const __m256 k1 = _mm256_set1_ps(mul[1]), k2 = _mm256_set1_ps(mul[2]);
    const __m256 sh = _mm256_set1_ps(shift);
    for (int64_t j = 0; j < end; j += 8) {
        /* the 24 bytes of pixels j .. j + 7 (mirrored: they end at pixel j's last byte) */
        const uint8_t *b = mirror ? s - 3 * j - 21 : s + 3 * j;
        __m256i x =
            _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)b)),
                                    _mm_loadu_si128((const __m128i *)(b + 8)), 1);
        x = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(x, mask), order);
        __m128i lo = _mm256_castsi256_si128(x), hi = _mm256_extracti128_si256(x, 1);
        __m256 r = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(lo));
        __m256 g = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_unpackhi_epi64(lo, lo)));
        __m256 bl = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(hi));
        r = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(r, m0), k0), sh);
        g = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(g, m1), k1), sh);
        bl = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(bl, m2), k2), sh);
        if (stream) { /* a constant in each copy of the loop */
            _mm256_stream_ps(d0 + j, r);
            _mm256_stream_ps(d1 + j, g);
            _mm256_stream_ps(d2 + j, bl);
        } else {
            _mm256_storeu_ps(d0 + j, r);
            _mm256_storeu_ps(d1 + j, g);
            _mm256_storeu_ps(d2 + j, bl);
        }
    }
}

__attribute__((target("avx2"))) static int64_t chw3_avx2(const uint8_t *s, bool mirror, int64_t n,
                                                         float *d0, float *d1, float *d2,
                                                         const float *mean, const float *mul,
                                                         float shift, bool may_stream)
{
    const int64_t end = n - n % 8;
    if (may_stream && (((uintptr_t)d0 | (uintptr_t)d1 | (uintptr_t)d2) & 31) == 0)
        chw3_avx2_loop(s, mirror, end, d0, d1, d2, mean, mul, shift, true);
    else
        chw3_avx2_loop(s, mirror, end, d0, d1, d2, mean, mul, shift, false);
    return end;
}
#endif

/* The hot case (ImageNet training): RGB uint8 -> planar float32. One pass over the pixels,
 * three planes written side by side, constants hoisted, no branch in the loop; AVX2 where the
 * CPU has it. may_stream: the output is a batch's (not a fused consumer's scratch, read at
 * once), so the AVX2 loop may store around the cache. */
static inline __attribute__((always_inline)) void
u8_f32_chw3(const void *src_, ptrdiff_t step, int64_t n, void *dst_, ptrdiff_t cstride,
            const float *mean, const float *mul, float shift, bool may_stream)
{
    const uint8_t *s = src_;
    float *d0 = dst_, *d1 = d0 + cstride, *d2 = d1 + cstride;
    const float m0 = mean[0], m1 = mean[1], m2 = mean[2];
    const float k0 = mul[0], k1 = mul[1], k2 = mul[2];
    int64_t j = 0;
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) {
        j = chw3_avx2(s, step < 0, n, d0, d1, d2, mean, mul, shift, may_stream);
        s += j * step;
    }
#endif
    for (; j < n; j++, s += step) {
        d0[j] = ((float)s[0] - m0) * k0 + shift;
        d1[j] = ((float)s[1] - m1) * k1 + shift;
        d2[j] = ((float)s[2] - m2) * k2 + shift;
    }
}

static void row_u8_f32_chw3(const void *src, ptrdiff_t step, int64_t n, int64_t C, void *dst,
                            ptrdiff_t cstride, ptrdiff_t pstride, const float *mean,
                            const float *mul, float shift)
{
    (void)C, (void)pstride;
    u8_f32_chw3(src, step, n, dst, cstride, mean, mul, shift, false);
}

static void row_u8_f32_chw3_stream(const void *src, ptrdiff_t step, int64_t n, int64_t C, void *dst,
                                   ptrdiff_t cstride, ptrdiff_t pstride, const float *mean,
                                   const float *mul, float shift)
{
    (void)C, (void)pstride;
    u8_f32_chw3(src, step, n, dst, cstride, mean, mul, shift, true);
}

/* The row function for the types and layout; fused: the output is a fused consumer's input. */
static row_fn pick_row(sl_dtype in, sl_dtype out, bool chw, int64_t C, bool fused)
{
    if (in == SL_DTYPE_UINT8) {
        switch (out) {
        case SL_DTYPE_FLOAT32:
            return !(chw && C == 3) ? row_u8_f32 : fused ? row_u8_f32_chw3 : row_u8_f32_chw3_stream;
        case SL_DTYPE_FLOAT16: return row_u8_f16;
        case SL_DTYPE_UINT8: return row_u8_u8;
        default: return row_u8_i8;
        }
    }
    switch (out) {
    case SL_DTYPE_FLOAT32: return row_f32_f32;
    case SL_DTYPE_FLOAT16: return row_f32_f16;
    case SL_DTYPE_UINT8: return row_f32_u8;
    default: return row_f32_i8;
    }
}

/* Writes fill[c] (already converted, `esize` bytes each) into channels [c0, c1) of n pixels. */
static void fill_px(void *dst, int64_t n, int64_t c0, int64_t c1, ptrdiff_t cstride,
                    ptrdiff_t pstride, const unsigned char *fill, size_t esize)
{
    unsigned char *d = dst;
    for (int64_t c = c0; c < c1; c++)
        for (int64_t j = 0; j < n; j++)
            memcpy(d + (size_t)(c * cstride + j * pstride) * esize, fill + (size_t)c * esize,
                   esize);
}

static void store_one(void *dst, sl_dtype t, float v)
{
    switch (t) {
    case SL_DTYPE_FLOAT32: memcpy(dst, &v, 4); break;
    case SL_DTYPE_FLOAT16: {
        uint16_t h = cv_f16(v);
        memcpy(dst, &h, 2);
    } break;
    case SL_DTYPE_UINT8: *(uint8_t *)dst = sl__cv_u8(v); break;
    default: *(int8_t *)dst = cv_i8(v); break;
    }
}

/* ---- run --------------------------------------------------------------------------------- */

/* Reads list argument `arg` of sample i into out[0..n) as float32, broadcasting one value
 * (lengths were checked in setup_sample). tmp holds n doubles. */
static void read_per_channel(sl_ctx *ctx, int arg, int i, int64_t n, double *tmp, float *out)
{
    int len = sl_ctx_arg_floats(ctx, arg, i, tmp, (int)n);
    for (int64_t c = 0; c < n; c++)
        out[c] = (float)tmp[len == 1 ? 0 : c];
}

/* Sample i's normalisation: mean[c] and mul[c] = scale * float32(1 / std[c]) for c < C. tmp
 * holds C doubles. */
static void read_norm(sl_ctx *ctx, int i, int64_t C, double *tmp, float *mean, float *mul)
{
    const float scale = (float)sl_ctx_arg_float(ctx, A_SCALE, i);
    read_per_channel(ctx, A_MEAN, i, C, tmp, mean);
    read_per_channel(ctx, A_STD, i, C, tmp, mul);
    for (int64_t c = 0; c < C; c++)
        mul[c] = scale * (1.0f / mul[c]); /* float32(1/std), as DALI */
}

/* The input is HWC (setup checks it): only the window's rows and columns are read. */
static sl_status cmn_roi_sample(sl_ctx *ctx, int i)
{
    return sl__crop_window_roi(ctx, i, false);
}

static sl_status cmn_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t *s = sl_batch_shape(in, i);
    const int64_t H = s[0], W = s[1], C = s[2];
    const window *win = (const window *)sl_ctx_iter_data(ctx) + i;
    const sl_dtype in_type = sl_batch_dtype(in);
    const size_t in_es = sl_dtype_size(in_type);
    config cf;

    read_config(ctx, &cf);
    const int64_t OC = out_channels(&cf, C);
    const int64_t oh = win->h, ow = win->w;
    const size_t es = sl_dtype_size(cf.out_type);
    if (oh == 0 || ow == 0 || OC == 0)
        return SL_OK;

    /* Scratch: tmp[nc] doubles (argument values), mean[nc], mul[nc] floats, fill[nc] values
     * of the output type (at most 4 bytes each). */
    size_t nc = (size_t)(OC > C ? OC : C);
    double *tmp = sl_ctx_scratch(ctx, nc * (sizeof(double) + 2 * sizeof(float) + 4));
    if (!tmp)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %zu channels", nc);
    float *mean = (float *)(tmp + nc), *mul = mean + nc;
    unsigned char *fill = (unsigned char *)(mul + nc);
    const float shift = (float)sl_ctx_arg_float(ctx, A_SHIFT, i);
    read_norm(ctx, i, C, tmp, mean, mul);
    bool need_fill = cf.pad || OC > C;
    if (need_fill) {
        int len = sl_ctx_arg_floats(ctx, A_FILL_VALUES, i, tmp, (int)nc);
        for (int64_t c = 0; c < OC; c++)
            store_one(fill + (size_t)c * es, cf.out_type, (float)tmp[len == 1 ? 0 : c]);
    }

    /* Valid output columns [jb, je) and the input column of jb. */
    const bool mirror = sl_ctx_arg_int(ctx, A_MIRROR, i) != 0;
    const int64_t x0 = win->x0;
    int64_t jb, je, ix0;
    if (!mirror) { /* ix = x0 + j */
        jb = -x0;
        je = W - x0;
    } else { /* ix = x0 + ow - 1 - j */
        jb = x0 + ow - W;
        je = x0 + ow;
    }
    jb = jb < 0 ? 0 : jb > ow ? ow : jb;
    je = je < jb ? jb : je > ow ? ow : je;
    ix0 = mirror ? x0 + ow - 1 - jb : x0 + jb;
    const ptrdiff_t step = mirror ? -(ptrdiff_t)C : (ptrdiff_t)C;

    const ptrdiff_t cstride = cf.chw ? (ptrdiff_t)(oh * ow) : 1;
    const ptrdiff_t pstride = cf.chw ? 1 : (ptrdiff_t)OC;
    const ptrdiff_t rstride = cf.chw ? (ptrdiff_t)ow : (ptrdiff_t)(ow * OC);
    row_fn row = pick_row(in_type, cf.out_type, cf.chw, C, sl__ctx_output_fused(ctx));
    const unsigned char *src = sl_batch_sample_data(in, i);
    unsigned char *out = sl_ctx_output_data(ctx, 0, i);

    for (int64_t y = 0; y < oh; y++) {
        int64_t iy = win->y0 + y;
        unsigned char *orow = out + (size_t)(y * rstride) * es;
        if (iy < 0 || iy >= H) {
            fill_px(orow, ow, 0, OC, cstride, pstride, fill, es);
            continue;
        }
        if (jb > 0)
            fill_px(orow, jb, 0, OC, cstride, pstride, fill, es);
        if (je < ow)
            fill_px(orow + (size_t)(je * pstride) * es, ow - je, 0, OC, cstride, pstride, fill, es);
        if (je > jb) {
            unsigned char *o = orow + (size_t)(jb * pstride) * es;
            row(src + (size_t)((iy * W + ix0) * C) * in_es, step, je - jb, C, o, cstride, pstride,
                mean, mul, shift);
            if (OC > C)
                fill_px(o, je - jb, C, OC, cstride, pstride, fill, es);
        }
    }
#if defined(__x86_64__)
    if (row == row_u8_f32_chw3_stream) /* its non-temporal stores: ordered before the sample ends */
        _mm_sfence();
#endif
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* Every sample's window (setup_sample's), mirror flag, shift and coefficients (mean[C], mul[C],
 * fill[OC] as floats, converted in the kernel as store_one does) for the fused kernel. */
static sl_status cmn_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const window *win = sl_ctx_iter_data(ctx);
    const int n = sl_ctx_batch_size(ctx);
    config cf;
    read_config(ctx, &cf);
    size_t ncoef = 0, maxc = 1;
    for (int i = 0; i < n; i++) {
        const int64_t C = sl_batch_shape(in, i)[2], OC = out_channels(&cf, C);
        ncoef += (size_t)(2 * C + OC);
        maxc = (size_t)OC > maxc ? (size_t)OC : maxc; /* OC >= C */
    }
    sl__cmn_gsample *s = sl_ctx_scratch_n(ctx, 0, sizeof(*s) * (size_t)(n > 0 ? n : 1));
    float *coef = sl_ctx_scratch_n(ctx, 1, sizeof(float) * (ncoef ? ncoef : 1));
    double *tmp = sl_ctx_scratch_n(ctx, 2, sizeof(double) * maxc);
    if (!s || !coef || !tmp)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        const int64_t *shape = sl_batch_shape(in, i);
        const int64_t C = shape[2], OC = out_channels(&cf, C);
        float *mean = coef + at, *mul = mean + C, *fill = mul + C;
        read_norm(ctx, i, C, tmp, mean, mul);
        if (cf.pad || OC > C)
            read_per_channel(ctx, A_FILL_VALUES, i, OC, tmp, fill);
        else
            memset(fill, 0, sizeof(float) * (size_t)OC); /* no pixel uses them */
        s[i] = (sl__cmn_gsample){.in = sl_batch_sample_data(in, i),
                                 .out = sl_ctx_output_data(ctx, 0, i),
                                 .H = shape[0],
                                 .W = shape[1],
                                 .C = C,
                                 .OC = OC,
                                 .y0 = win[i].y0,
                                 .x0 = win[i].x0,
                                 .oh = win[i].h,
                                 .ow = win[i].w,
                                 .coef = (int64_t)at,
                                 .shift = (float)sl_ctx_arg_float(ctx, A_SHIFT, i),
                                 .mirror = sl_ctx_arg_int(ctx, A_MIRROR, i) != 0};
        at += (size_t)(2 * C + OC);
    }
    return sl__cmn_gpu(ctx, s, n, coef, ncoef ? ncoef : 1, sl_batch_dtype(in), cf.out_type, cf.chw);
}
#endif

/* Deprecated names DALI still accepts (DALI 0.24: output_dtype, image_type). */
static const sl_arg_alias aliases[] = {{"output_dtype", "dtype", NULL}, {"image_type", NULL, NULL}};

const sl_op_def sl_op_crop_mirror_normalize = {
    .name = "crop_mirror_normalize",
    .doc = "Crops, mirrors, normalises and casts images in one pass (DALI's "
           "crop_mirror_normalize).\n\n"
           "For each sample: a window of `crop` (or `crop_h` x `crop_w`) pixels is placed at "
           "`crop_pos_x/y` (anchor = pos * (in - crop), rounded per `rounding`), reversed along "
           "W when `mirror` is non-zero, normalised as `out = scale * (in - mean[c]) / std[c] + "
           "shift` (in float32, dividing as a multiplication by float32(1/std)), padded to a "
           "power-of-two channel count with `fill_values` when `pad_output`, laid out as "
           "`output_layout` (default CHW) and cast to `dtype`. Without crop arguments the whole "
           "image is used. Windows reaching outside the image follow `out_of_bounds_policy`; "
           "pixels outside and padded channels hold `fill_values` as output values.\n\n"
           "Input: HWC uint8 or float32 images. Integer outputs are rounded (halves away from "
           "zero) and saturated; float16 outputs saturate to +-65504.\n\n"
           "`device=\"gpu\"` runs the same steps as one fused GPU kernel (a thread per output "
           "pixel) with the same results.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .aliases = aliases,
    .num_aliases = 2,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE | SL_OP_DETERMINISTIC,
    .iter_bytes_per_sample = sizeof(window),
    .init = cmn_init,
    .setup = cmn_setup,
    .setup_sample = cmn_setup_sample,
    .run_sample = cmn_run_sample,
    .roi_sample = cmn_roi_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = cmn_run_gpu,
#endif
};
