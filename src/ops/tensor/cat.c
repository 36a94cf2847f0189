/* cat: joins its inputs along an existing axis (DALI's fn.cat).
 *
 * Exports: const sl_op_def sl_op_cat ("cat", CPU).
 *
 * Sample i of the output is the concatenation of sample i of every input along `axis` (or the
 * layout letter `axis_name`); the inputs must agree in type, number of dimensions, non-empty
 * layouts and every extent but the axis'. An input whose whole batch is empty is skipped, as in
 * DALI. The output keeps the common layout. The work is in ops/tensor/join.c, shared with stack.
 * Invariant: setup checks every sample's shapes; run only copies.
 */
#include "sluice/op.h"

#include "ops/tensor/tensor.h"

enum { A_AXIS, A_AXIS_NAME, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_AXIS] = {.name = "axis",
                .type = SL_ARG_INT,
                .def = "0",
                .doc = "Axis along which the inputs are joined, in [-ndim, ndim - 1]; negative "
                       "values count from the back."},
    [A_AXIS_NAME] = {.name = "axis_name",
                     .type = SL_ARG_STRING,
                     .doc = "Layout letter of the axis along which the inputs are joined; "
                            "exclusive with axis. Needs a non-empty input layout.",
                     .flags = SL_ARG_OPTIONAL},
};

static const sl_io_def inputs[] =
    SL__JOIN_INPUTS("Data to join; all inputs share type, dimensions and layout.");
static const sl_io_def outputs[] = {{"output", "The inputs joined along the axis."}};

static const sl__join_args join = {.new_axis = false, .axis = A_AXIS, .axis_name = A_AXIS_NAME};

static sl_status cat_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    if (sl_init_arg_is_set(ini, A_AXIS) && sl_init_arg_is_set(ini, A_AXIS_NAME))
        return sl_init_fail(ini, SL_EINVAL, "axis and axis_name are exclusive: give one of them");
    return SL_OK;
}

static sl_status cat_setup(sl_ctx *ctx)
{
    return sl__join_setup(ctx, &join);
}

static sl_status cat_run_sample(sl_ctx *ctx, int i)
{
    return sl__join_run(ctx, &join, i);
}

const sl_op_def sl_op_cat = {
    .name = "cat",
    .doc = "Joins the inputs along an existing axis (DALI's cat).\n\n"
           "Sample i of the output is sample i of each input, concatenated along `axis` "
           "(negative: from the back) or the layout letter `axis_name`. The inputs (any "
           "number, at least one) must have the same type, number of dimensions and extents "
           "except along the axis; their non-empty layouts must match and the output keeps it. "
           "An input whose whole batch is empty is skipped, as in DALI.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = SL_INPUTS_ANY,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .init = cat_init,
    .setup = cat_setup,
    .run_sample = cat_run_sample,
};
