/* dump_image: writes each image to a PPM file and passes it through (DALI's fn.dump_image).
 *
 * Exports: const sl_op_def sl_op_dump_image ("dump_image", CPU; side effects).
 *
 * Sample i of every iteration is written to "<i>-<suffix>-0.ppm" in the working directory
 * (DALI's names, so each iteration overwrites the previous one's files), as ASCII PPM ("P3")
 * for 3 channels or PGM ("P2") for 1, from uint8 data laid out as input_layout ("HWC" or
 * "CHW"). The output is the input, unchanged. A file that cannot be written fails naming it and
 * the sample (SL_EIO).
 * Invariant: never pruned (SL_OP_SIDE_EFFECTS); iterations run in order (SL_OP_STATEFUL), so two
 * iterations never write the same file at once.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sluice/op.h"

enum { A_SUFFIX, A_INPUT_LAYOUT, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_SUFFIX] = {.name = "suffix",
                  .type = SL_ARG_STRING,
                  .def = "\"\"",
                  .doc = "Part of the file names: \"<sample>-<suffix>-0.ppm\"."},
    [A_INPUT_LAYOUT] = {.name = "input_layout",
                        .type = SL_ARG_STRING,
                        .def = "\"HWC\"",
                        .doc = "Layout of the images.",
                        .choices = "HWC|CHW"},
};

static const sl_io_def inputs[] = {{"input", "uint8 images with 1 or 3 channels."}};
static const sl_io_def outputs[] = {{"output", "The input, unchanged."}};

static sl_status dump_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    if (sl_batch_dtype(in) != SL_DTYPE_UINT8 || sl_batch_ndim(in) != 3)
        return sl_fail(ctx, SL_EINVAL,
                       "Input images must have three dimensions and type uint8; got %d-D %s",
                       sl_batch_ndim(in), sl_dtype_name(sl_batch_dtype(in)));
    sl_ctx_set_output(ctx, 0, SL_DTYPE_UINT8, 3, sl_batch_layout(in));
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        sl_ctx_set_shape(ctx, 0, i, sl_batch_shape(in, i));
    return SL_OK;
}

static sl_status dump_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const int64_t *sh = sl_batch_shape(in, i);
    const bool chw = strcmp(sl_ctx_arg_str(ctx, A_INPUT_LAYOUT), "CHW") == 0;
    const int64_t h = chw ? sh[1] : sh[0], w = chw ? sh[2] : sh[1], c = chw ? sh[0] : sh[2];
    const uint8_t *px = sl_batch_sample_data(in, i);
    char path[512];
    if (c != 1 && c != 3)
        return sl_fail(ctx, SL_EINVAL, "sample %d has %lld channels; PPM needs 1 or 3", i,
                       (long long)c);
    snprintf(path, sizeof path, "%d-%s-0.ppm", i, sl_ctx_arg_str(ctx, A_SUFFIX));
    FILE *f = fopen(path, "w");
    if (!f)
        return sl_fail(ctx, SL_EIO, "cannot write \"%s\": %s", path, strerror(errno));
    int bad =
        fprintf(f, "%s\n%lld %lld\n255\n", c == 3 ? "P3" : "P2", (long long)w, (long long)h) < 0;
    for (int64_t y = 0; y < h && !bad; y++) {
        for (int64_t x = 0; x < w && !bad; x++)
            for (int64_t k = 0; k < c && !bad; k++)
                bad = fprintf(f, "%u ", px[chw ? (k * h + y) * w + x : (y * w + x) * c + k]) < 0;
        bad = bad || fputc('\n', f) == EOF;
    }
    if (fclose(f) != 0 || bad)
        return sl_fail(ctx, SL_EIO, "writing \"%s\" failed: %s", path, strerror(errno));
    size_t bytes = (size_t)sl_batch_sample_numel(in, i);
    if (bytes)
        memcpy(sl_ctx_output_data(ctx, 0, i), px, bytes);
    return SL_OK;
}

const sl_op_def sl_op_dump_image = {
    .name = "dump_image",
    .doc = "Writes each image to a PPM file, for debugging, and passes it through (DALI's "
           "dump_image).\n\n"
           "Sample i goes to \"<i>-<suffix>-0.ppm\" in the working directory (overwritten every "
           "iteration, as DALI's), ASCII PPM for 3 channels or PGM for 1, from uint8 images in "
           "input_layout. The node is never pruned, even when its output is unused.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_SIDE_EFFECTS | SL_OP_STATEFUL,
    .setup = dump_setup,
    .run_sample = dump_run_sample,
};
