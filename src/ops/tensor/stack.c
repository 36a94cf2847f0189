/* stack: joins its inputs along a new axis (DALI's fn.stack).
 *
 * Exports: const sl_op_def sl_op_stack ("stack", CPU).
 *
 * Sample i of the output holds sample i of every input, one after another along a new axis
 * inserted at position `axis` of the output (0: whole samples stacked; ndim: elements
 * interleaved). The inputs must agree in type, number of dimensions, non-empty layouts and
 * shapes. The output layout is the input layout with `axis_name` inserted at `axis` when given,
 * else none (as DALI). The work is in ops/tensor/join.c, shared with cat.
 * Invariant: setup checks every sample's shapes; run only copies.
 */
#include "sluice/op.h"

#include "ops/tensor/tensor.h"

enum { A_AXIS, A_AXIS_NAME, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_AXIS] = {.name = "axis",
                .type = SL_ARG_INT,
                .def = "0",
                .doc = "Position of the new axis in the output, in [-ndim - 1, ndim] (ndim: the "
                       "inputs'); negative values count from the back (-1: last)."},
    [A_AXIS_NAME] = {.name = "axis_name",
                     .type = SL_ARG_STRING,
                     .doc = "Layout letter of the new axis, inserted into the input layout at "
                            "`axis` (\"F\" on HWC with axis 0 gives FHWC). Unset: the output has "
                            "no layout.",
                     .flags = SL_ARG_OPTIONAL},
};

static const sl_io_def inputs[] =
    SL__JOIN_INPUTS("Data to stack; all inputs share type, shape and layout.");
static const sl_io_def outputs[] = {{"output", "The inputs stacked along a new axis."}};

static const sl__join_args join = {.new_axis = true, .axis = A_AXIS, .axis_name = A_AXIS_NAME};

static sl_status stack_setup(sl_ctx *ctx)
{
    return sl__join_setup(ctx, &join);
}

static sl_status stack_run_sample(sl_ctx *ctx, int i)
{
    return sl__join_run(ctx, &join, i);
}

const sl_op_def sl_op_stack = {
    .name = "stack",
    .doc = "Joins the inputs along a new axis (DALI's stack).\n\n"
           "Sample i of the output stacks sample i of each input (any number of inputs, at "
           "least one, of equal type and shape) along a new axis at position `axis` of the "
           "output: 0 stacks whole samples, ndim interleaves elements. The output layout is the "
           "input layout with "
           "`axis_name` inserted at `axis`; without axis_name the output has no layout, as in "
           "DALI.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = SL_INPUTS_ANY,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .setup = stack_setup,
    .run_sample = stack_run_sample,
};
