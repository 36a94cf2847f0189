/* noise.salt_and_pepper: sets random pixels to a "salt" or a "pepper" value (DALI's
 * fn.noise.salt_and_pepper).
 *
 * Exports: const sl_op_def sl_op_noise_salt_and_pepper ("noise.salt_and_pepper", CPU and GPU).
 *
 * Per pixel of sample i (per element with per_channel), in element order, one uniform u from
 * the sample's stream: u < prob * salt_vs_pepper gives salt, else u < prob gives pepper, else
 * the input is kept. Without per_channel a pixel is every element sharing the other indices
 * along the channel axis (the layout's C, or the last axis when the layout is empty; no C in a
 * non-empty layout: each element is a pixel) and all its channels take the same value. salt
 * defaults to 1.0 for floating-point types and the type's maximum otherwise, pepper to -1.0 and
 * the minimum; both are converted to the input type with saturation. Each pixel takes two
 * words of the stream, so the GPU run (noise.cu) starts pixel p at word 2p: the same draws.
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/image/noise.h"
#include "ops/tensor/tensor.h"

enum { A_PROB, A_SALT_VS_PEPPER, A_SALT_VAL, A_PEPPER_VAL, A_PER_CHANNEL, A_SEED, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_PROB] = {.name = "prob",
                .type = SL_ARG_FLOAT,
                .def = "0.05",
                .doc = "Probability of a pixel (element with per_channel) to become salt or "
                       "pepper.",
                .flags = SL_ARG_TENSOR | SL_ARG_RANGE,
                .min = 0,
                .max = 1},
    [A_SALT_VS_PEPPER] = {.name = "salt_vs_pepper",
                          .type = SL_ARG_FLOAT,
                          .def = "0.5",
                          .doc = "Probability of a noisy pixel to be salt rather than pepper.",
                          .flags = SL_ARG_TENSOR | SL_ARG_RANGE,
                          .min = 0,
                          .max = 1},
    [A_SALT_VAL] = {.name = "salt_val",
                    .type = SL_ARG_FLOAT,
                    .doc = "Value of salt; unset: 1.0 for floating-point types, the type's "
                           "maximum otherwise.",
                    .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR},
    [A_PEPPER_VAL] = {.name = "pepper_val",
                      .type = SL_ARG_FLOAT,
                      .doc = "Value of pepper; unset: -1.0 for floating-point types, the type's "
                             "minimum otherwise.",
                      .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR},
    [A_PER_CHANNEL] = {.name = "per_channel",
                       .type = SL_ARG_BOOL,
                       .def = "false",
                       .doc = "Draw for every channel independently instead of once per pixel."},
    [A_SEED] = SL_ARG_SEED_DEF,
};

static const sl_io_def inputs[] = {{"input", "Data of any numeric type and layout."}};
static const sl_io_def outputs[] = {{"output", "The noisy data, of the input's type and shape."}};

/* A sample's draw parameters. */
typedef struct sp_draw {
    double prob, svp;
    unsigned char sv[8], pv[8];
    int64_t outer, ch, inner;
} sp_draw;

static bool is_float(sl_dtype t)
{
    return t == SL_DTYPE_FLOAT16 || t == SL_DTYPE_FLOAT32 || t == SL_DTYPE_FLOAT64;
}

/* The largest (max true) or smallest value of integer type t, as a double. */
static double type_limit(sl_dtype t, bool max)
{
    switch (t) {
    case SL_DTYPE_UINT8: return max ? 255.0 : 0.0;
    case SL_DTYPE_UINT16: return max ? 65535.0 : 0.0;
    case SL_DTYPE_UINT32: return max ? 4294967295.0 : 0.0;
    case SL_DTYPE_UINT64: return max ? 18446744073709551615.0 : 0.0;
    case SL_DTYPE_INT8: return max ? 127.0 : -128.0;
    case SL_DTYPE_INT16: return max ? 32767.0 : -32768.0;
    case SL_DTYPE_INT32: return max ? 2147483647.0 : -2147483648.0;
    default: return max ? 9223372036854775807.0 : -9223372036854775808.0;
    }
}

/* Sample i's parameters: probabilities, salt and pepper in the input's type (sv, pv) and the
 * pixel structure: outer x ch x inner around the channel axis (ch = 1: every element a pixel). */
static void sp_params(sl_ctx *ctx, int i, sp_draw *p)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const sl_dtype t = sl_batch_dtype(in);
    const int ndim = sl_batch_ndim(in);
    const int64_t *s = sl_batch_shape(in, i);
    p->prob = sl_ctx_arg_float(ctx, A_PROB, i);
    p->svp = sl_ctx_arg_float(ctx, A_SALT_VS_PEPPER, i);
    double salt = sl_ctx_arg_is_set(ctx, A_SALT_VAL) ? sl_ctx_arg_float(ctx, A_SALT_VAL, i)
                  : is_float(t)                      ? 1.0
                                                     : type_limit(t, true);
    double pepper = sl_ctx_arg_is_set(ctx, A_PEPPER_VAL) ? sl_ctx_arg_float(ctx, A_PEPPER_VAL, i)
                    : is_float(t)                        ? -1.0
                                                         : type_limit(t, false);
    memset(p->sv, 0, sizeof p->sv);
    memset(p->pv, 0, sizeof p->pv);
    sl__convert_scalar(t, salt, p->sv);
    sl__convert_scalar(t, pepper, p->pv);
    /* outer x C x inner around the channel axis c (none: C = 1) */
    const char *layout = sl_batch_layout(in);
    int c = sl_ctx_arg_bool(ctx, A_PER_CHANNEL, i) ? -1
            : layout[0]                            ? sl__layout_find(layout, 'C')
                                                   : ndim - 1;
    p->outer = 1, p->ch = 1, p->inner = 1;
    for (int d = 0; d < ndim; d++) {
        if (c < 0 || d < c)
            p->outer *= s[d];
        else if (d == c)
            p->ch = s[d];
        else
            p->inner *= s[d];
    }
}

static sl_status run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const size_t es = sl_dtype_size(sl_batch_dtype(in));
    int64_t numel = sl_batch_sample_numel(in, i);
    unsigned char *out = sl_ctx_output_data(ctx, 0, i);
    if (numel == 0)
        return SL_OK;
    memcpy(out, sl_batch_sample_data(in, i), (size_t)numel * es);
    sp_draw p;
    sp_params(ctx, i, &p);
    sl_rng r = sl_ctx_rng(ctx, i);
    for (int64_t o = 0; o < p.outer; o++) {
        for (int64_t j = 0; j < p.inner; j++) {
            double u = sl_rng_uniform(&r);
            if (u >= p.prob)
                continue;
            const unsigned char *v = u < p.prob * p.svp ? p.sv : p.pv;
            for (int64_t k = 0; k < p.ch; k++)
                memcpy(out + (size_t)((o * p.ch + k) * p.inner + j) * es, v, es);
        }
    }
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
static sl_status gpu_params(sl_ctx *ctx, int i, sl__noise_gpu *g)
{
    sp_draw p;
    sp_params(ctx, i, &p);
    g->a = p.prob;
    g->b = p.svp;
    g->outer = p.outer;
    g->ch = p.ch;
    g->inner = p.inner;
    memcpy(g->salt, p.sv, sizeof g->salt);
    memcpy(g->pepper, p.pv, sizeof g->pepper);
    return SL_OK;
}

/* One thread per pixel; pixel p draws its uniform from words 2p, 2p + 1 of the sample's stream,
 * as the CPU's pixel loop does (noise.cu). */
static sl_status run_gpu(sl_ctx *ctx)
{
    return sl__noise_run_gpu(ctx, SL__NOISE_SALT_AND_PEPPER, gpu_params);
}
#endif

const sl_op_def sl_op_noise_salt_and_pepper = {
    .name = "noise.salt_and_pepper",
    .doc = "Applies salt-and-pepper noise: random pixels become `salt_val` or `pepper_val` "
           "(DALI's noise.salt_and_pepper).\n\n"
           "A pixel is noisy with probability `prob`, salt with probability `salt_vs_pepper` "
           "among those. Without per_channel all channels of a pixel (along the layout's C, or "
           "the last axis for an empty layout) change together. Defaults: salt 1.0 / pepper "
           "-1.0 for floating-point data, the type's maximum / minimum otherwise. Each sample "
           "draws from its own stream of the node's seed; `device=\"gpu\"` draws the same "
           "numbers.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_RANDOM | SL_OP_SAMPLEWISE,
    .setup = sl__noise_setup,
    .setup_sample = sl__noise_setup_sample,
    .run_sample = run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = run_gpu,
#endif
};
