/* coord_flip: flips normalised coordinates (DALI's fn.coord_flip).
 *
 * Exports: const sl_op_def sl_op_coord_flip ("coord_flip", CPU and GPU).
 *
 * The input is (N, D) float32 points, D = 1, 2 or 3, their axes named by `layout` ("x", "xy",
 * "xyz" in any order; empty: that order). A flipped coordinate c becomes 2 * center - c
 * (center 0.5 by default: the flip of [0, 1] coordinates). flip_x (default on), flip_y and
 * flip_z and the centers may be given per sample.
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/geometry/points_gpu.h"

enum { A_LAYOUT, A_FLIP_X, A_FLIP_Y, A_FLIP_Z, A_CENTER_X, A_CENTER_Y, A_CENTER_Z, NUM_ARGS };

#define FLIP(nm, dflt, text)                                                                       \
    {                                                                                              \
        .name = nm, .type = SL_ARG_INT, .def = dflt, .doc = text, .flags = SL_ARG_TENSOR           \
    }
#define CENTER(nm, text)                                                                           \
    {                                                                                              \
        .name = nm, .type = SL_ARG_FLOAT, .def = "0.5", .doc = text, .flags = SL_ARG_TENSOR        \
    }

static const sl_arg_def args[NUM_ARGS] = {
    [A_LAYOUT] = {.name = "layout",
                  .type = SL_ARG_STRING,
                  .def = "\"\"",
                  .doc = "Names of the coordinates: x, y, z in some order, one per column "
                         "(\"xy\", \"yx\", \"xyz\"). Empty: \"x\", \"xy\" or \"xyz\"."},
    [A_FLIP_X] = FLIP("flip_x", "1", "Non-zero: flip the x coordinate."),
    [A_FLIP_Y] = FLIP("flip_y", "0", "Non-zero: flip the y coordinate."),
    [A_FLIP_Z] = FLIP("flip_z", "0", "Non-zero: flip the z coordinate."),
    [A_CENTER_X] = CENTER("center_x", "The x coordinate is flipped about this value."),
    [A_CENTER_Y] = CENTER("center_y", "The y coordinate is flipped about this value."),
    [A_CENTER_Z] = CENTER("center_z", "The z coordinate is flipped about this value."),
};

static const sl_io_def inputs[] = {{"input", "Points, float32 of shape (N, D), D <= 3."}};
static const sl_io_def outputs[] = {{"output", "The flipped points, same shape."}};

static const char *layout_of(const sl_ctx *ctx, int d)
{
    const char *l = sl_ctx_arg_str(ctx, A_LAYOUT);
    return l[0] ? l : d == 1 ? "x" : d == 2 ? "xy" : "xyz";
}

static sl_status cf_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    const char *l = sl_init_arg_str(ini, A_LAYOUT);
    size_t n = strlen(l);
    for (size_t k = 0; k < n; k++)
        if (!strchr("xyz", l[k]) || strchr(l + k + 1, l[k]))
            return sl_init_fail(ini, SL_EINVAL,
                                "layout \"%s\": coordinates are named x, y and z, each once", l);
    if (n > 3)
        return sl_init_fail(ini, SL_EINVAL, "layout \"%s\" has more than 3 coordinates", l);
    return SL_OK;
}

static sl_status cf_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    if (sl_batch_dtype(in) != SL_DTYPE_FLOAT32)
        return sl_fail(ctx, SL_EINVAL, "coordinates must be float32, got %s",
                       sl_dtype_name(sl_batch_dtype(in)));
    if (sl_batch_ndim(in) != 2)
        return sl_fail(ctx, SL_EINVAL, "coordinates must be a 2-D (N, D) tensor, got %d-D",
                       sl_batch_ndim(in));
    sl_ctx_set_output(ctx, 0, SL_DTYPE_FLOAT32, 2, sl_batch_layout(in));
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++) {
        const int64_t *s = sl_batch_shape(in, i);
        sl_ctx_set_shape(ctx, 0, i, s);
    }
    return SL_OK;
}

static sl_status cf_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t *s = sl_batch_shape(in, i);
    const int64_t n = s[0], d = s[1];
    if (n == 0)
        return SL_OK;
    const char *l = layout_of(ctx, (int)d);
    if (d < 1 || d > 3 || (int64_t)strlen(l) != d)
        return sl_fail(ctx, SL_EINVAL,
                       "the points have %lld coordinates, but the layout \"%s\" names %d (1 to "
                       "3 supported)",
                       (long long)d, l, (int)strlen(l));
    bool flip[3];
    double c2[3];
    for (int k = 0; k < d; k++) {
        int axis = l[k] - 'x';
        flip[k] = sl_ctx_arg_int(ctx, A_FLIP_X + axis, i) != 0;
        c2[k] = 2.0 * sl_ctx_arg_float(ctx, A_CENTER_X + axis, i);
    }
    const float *src = sl_batch_sample_data(in, i);
    float *dst = sl_ctx_output_data(ctx, 0, i);
    for (int64_t p = 0; p < n; p++)
        for (int k = 0; k < d; k++) {
            float v = src[p * d + k];
            dst[p * d + k] = flip[k] ? (float)(c2[k] - v) : v;
        }
    return SL_OK;
}

#ifdef SLUICE_HAVE_CUDA
/* One kernel for the batch; the flips and centres of each sample are resolved here, the layout
 * checked as run_sample checks it. */
static sl_status cf_run_gpu(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int n = sl_ctx_batch_size(ctx);
    sl__gcflip *s = sl_ctx_scratch(ctx, sizeof(sl__gcflip) * (size_t)(n > 0 ? n : 1));
    if (!s)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    for (int i = 0; i < n; i++) {
        const int64_t *sh = sl_batch_shape(in, i);
        const int64_t d = sh[1];
        s[i] = (sl__gcflip){.in = sl_batch_sample_data(in, i),
                            .out = sl_ctx_output_data(ctx, 0, i),
                            .count = sh[0] * d,
                            .d = (int32_t)d};
        if (sh[0] == 0) {
            s[i].count = 0;
            s[i].d = 1;
            continue;
        }
        const char *l = layout_of(ctx, (int)d);
        if (d < 1 || d > 3 || (int64_t)strlen(l) != d) {
            sl_ctx_focus_sample(ctx, i);
            return sl_fail(ctx, SL_EINVAL,
                           "the points have %lld coordinates, but the layout \"%s\" names %d (1 "
                           "to 3 supported)",
                           (long long)d, l, (int)strlen(l));
        }
        for (int k = 0; k < d; k++) {
            int axis = l[k] - 'x';
            s[i].flip[k] = sl_ctx_arg_int(ctx, A_FLIP_X + axis, i) != 0;
            s[i].c2[k] = 2.0 * sl_ctx_arg_float(ctx, A_CENTER_X + axis, i);
        }
    }
    return sl__gpu_coord_flip(ctx, s, n);
}
#endif

const sl_op_def sl_op_coord_flip = {
    .name = "coord_flip",
    .doc = "Flips normalised coordinates: c -> 2 * center - c (DALI's coord_flip).\n\n"
           "Input (N, D) float32 points, D <= 3, columns named by `layout` (\"xy\", \"xyz\", ...; "
           "empty: x, y, z in order). `flip_x` (default 1), `flip_y`, `flip_z` and "
           "`center_x/y/z` (default 0.5) may be given per sample, e.g. from random.coin_flip.\n\n"
           "`device=\"gpu\"` flips on the GPU with the same results.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU | SL_OP_GPU,
    .flags = SL_OP_SAMPLEWISE,
    .init = cf_init,
    .setup = cf_setup,
    .run_sample = cf_run_sample,
#ifdef SLUICE_HAVE_CUDA
    .run_gpu = cf_run_gpu,
#endif
};
