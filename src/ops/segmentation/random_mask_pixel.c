/* segmentation.random_mask_pixel: a random pixel of a mask, of its foreground or of anywhere
 * (DALI's fn.segmentation.random_mask_pixel).
 *
 * Exports: const sl_op_def sl_op_segmentation_random_mask_pixel
 * ("segmentation.random_mask_pixel", CPU).
 *
 * The input is an N-D mask of any numeric type, every dimension spatial. Per sample, with
 * `foreground` non-zero the pixel is drawn uniformly among those equal to `value` when given,
 * else those greater than `threshold` (default 0); with `foreground` 0, or when no pixel
 * qualifies, uniformly among all pixels. The output is its coordinates, int64 (ndim,); an
 * empty mask gives zeros. Draws from the sample's stream: independent of threads.
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/tensor.h"

enum { A_FOREGROUND, A_VALUE, A_THRESHOLD, A_SEED, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_FOREGROUND] = {.name = "foreground",
                      .type = SL_ARG_INT,
                      .def = "0",
                      .doc = "Non-zero: draw among the foreground pixels; 0: among all.",
                      .flags = SL_ARG_TENSOR},
    [A_VALUE] = {.name = "value",
                 .type = SL_ARG_FLOAT,
                 .doc = "The foreground is the pixels equal to this. Exclusive with threshold.",
                 .flags = SL_ARG_TENSOR | SL_ARG_OPTIONAL},
    [A_THRESHOLD] = {.name = "threshold",
                     .type = SL_ARG_FLOAT,
                     .def = "0.0",
                     .doc = "The foreground is the pixels greater than this.",
                     .flags = SL_ARG_TENSOR},
    [A_SEED] = SL_ARG_SEED_DEF,
};

static const sl_io_def inputs[] = {{"input", "A mask: any numeric type, any dimensionality."}};
static const sl_io_def outputs[] = {{"output", "The drawn pixel's coordinates, int64 (ndim,)."}};

static sl_status rmp_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    if (sl_init_arg_is_set(ini, A_VALUE) && sl_init_arg_is_set(ini, A_THRESHOLD))
        return sl_init_fail(ini, SL_EINVAL, "value and threshold are exclusive: give one");
    return SL_OK;
}

static sl_status rmp_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    int64_t nd = sl_batch_ndim(in);
    sl_ctx_set_output(ctx, 0, SL_DTYPE_INT64, 1, NULL);
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        sl_ctx_set_shape(ctx, 0, i, &nd);
    return SL_OK;
}

static sl_status rmp_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int nd = sl_batch_ndim(in);
    const int64_t *shape = sl_batch_shape(in, i);
    const int64_t n = sl_batch_sample_numel(in, i);
    int64_t *out = sl_ctx_output_data(ctx, 0, i);
    memset(out, 0, (size_t)nd * sizeof *out);
    if (n == 0)
        return SL_OK;
    const size_t es = sl_dtype_size(sl_batch_dtype(in));
    sl__convert_fn rd = sl__convert_get(SL_DTYPE_FLOAT64, sl_batch_dtype(in));
    const unsigned char *d = sl_batch_sample_data(in, i);
    sl_rng r = sl_ctx_rng(ctx, i);
    const bool fg = sl_ctx_arg_int(ctx, A_FOREGROUND, i) != 0;
    const bool by_value = sl_ctx_arg_is_set(ctx, A_VALUE);
    const double value = by_value ? sl_ctx_arg_float(ctx, A_VALUE, i) : 0.0;
    const double thr = sl_ctx_arg_float(ctx, A_THRESHOLD, i);
    int64_t pick = -1;
    if (fg) {
        int64_t count = 0;
        for (int pass = 0; pass < 2 && pick < 0; pass++) {
            int64_t want = pass ? (int64_t)sl_rng_below(&r, (uint64_t)count) : -1, seen = 0;
            for (int64_t k = 0; k < n; k++) {
                double v;
                rd(&v, d + (size_t)k * es, 1);
                if (!(by_value ? v == value : v > thr))
                    continue;
                if (pass && seen == want) {
                    pick = k;
                    break;
                }
                seen++;
            }
            count = seen;
            if (!count)
                break;
        }
    }
    if (pick < 0)
        pick = (int64_t)sl_rng_below(&r, (uint64_t)n);
    for (int k = nd - 1; k >= 0; k--) {
        out[k] = pick % shape[k];
        pick /= shape[k];
    }
    return SL_OK;
}

const sl_op_def sl_op_segmentation_random_mask_pixel = {
    .name = "segmentation.random_mask_pixel",
    .doc = "Draws a random pixel of a mask: of its foreground, or anywhere (DALI's "
           "segmentation.random_mask_pixel).\n\n"
           "With `foreground` non-zero (per sample, e.g. from random.coin_flip) the pixel is "
           "drawn uniformly among those equal to `value`, or greater than `threshold` (default "
           "0); otherwise, or when the mask has no such pixel, among all pixels. Outputs its "
           "coordinates, int64 (ndim,), e.g. to centre a crop on an object.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_RANDOM | SL_OP_SAMPLEWISE,
    .init = rmp_init,
    .setup = rmp_setup,
    .run_sample = rmp_run_sample,
};
