/* get_property: a property of each sample's metadata as a tensor (DALI's fn.get_property).
 *
 * Exports: const sl_op_def sl_op_get_property ("get_property", CPU; metadata only).
 *
 * key "source_info": the sample's source (the file a reader read it from; "" when it has
 * none), key "layout": the batch's layout; each as a 1-D uint8 tensor of its bytes, which
 * `np.array(t).tobytes().decode()` turns back into the string, as in DALI.
 * Invariant: reads no sample data (SL_OP_METADATA), so it may look at GPU data in place.
 */
#include <string.h>

#include "sluice/op.h"

enum { A_KEY, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_KEY] = {.name = "key",
               .type = SL_ARG_STRING,
               .doc = "The property: \"source_info\" (the sample's source file) or \"layout\" "
                      "(the data layout).",
               .choices = "source_info|layout"},
};

static const sl_io_def inputs[] = {{"input", "Data of any type and shape."}};
static const sl_io_def outputs[] = {{"output", "The property's bytes: a 1-D uint8 tensor."}};

static const char *property(sl_ctx *ctx, int i)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    const char *v = strcmp(sl_ctx_arg_str(ctx, A_KEY), "layout") == 0 ? sl_batch_layout(in)
                                                                      : sl_batch_source(in, i);
    return v ? v : "";
}

static sl_status get_property_setup(sl_ctx *ctx)
{
    sl_ctx_set_output(ctx, 0, SL_DTYPE_UINT8, 1, NULL);
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++) {
        int64_t n = (int64_t)strlen(property(ctx, i));
        sl_ctx_set_shape(ctx, 0, i, &n);
    }
    return SL_OK;
}

static sl_status get_property_run_sample(sl_ctx *ctx, int i)
{
    const char *v = property(ctx, i);
    size_t n = strlen(v);
    if (n)
        memcpy(sl_ctx_output_data(ctx, 0, i), v, n);
    return SL_OK;
}

const sl_op_def sl_op_get_property = {
    .name = "get_property",
    .doc = "A property of each sample's metadata, as a 1-D uint8 tensor of its bytes (DALI's "
           "get_property).\n\n"
           "key \"source_info\": the file the sample was read from (readers set it; \"\" for "
           "data without a source, such as external_source's); key \"layout\": the layout of "
           "the data. `np.array(t).tobytes().decode()` gives the string back.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_METADATA,
    .setup = get_property_setup,
    .run_sample = get_property_run_sample,
};
