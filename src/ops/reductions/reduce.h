/* src/ops/reductions/reduce.h: the reduction family (internal to src/ops/reductions).
 *
 * One implementation (reduce.c) serves DALI's eight reductions `reductions.min`, `max`, `sum`,
 * `mean`, `mean_square`, `rms`, `std_dev` and `variance`; each operator's file is one
 * SL__RED_OP line: its name, kind, schema and documentation. The schemas:
 *   BASIC     axes, axis_names, keep_dims                       (min, max)
 *   DTYPE     axes, axis_names, keep_dims, dtype                (sum, mean, mean_square, rms)
 *   MEAN_IN   axes, axis_names, keep_dims, ddof; a second input, the mean (std_dev, variance)
 * The argument indices are the same in every schema (A_AXES .. A_EXTRA), so one setup and one
 * run serve all.
 *
 * Invariant: the operators hold no state; everything is recomputed per iteration from the
 * inputs and arguments (setup: output types, layouts and shapes; run_sample: one sample).
 */
#ifndef SLUICE_OPS_REDUCTIONS_REDUCE_H
#define SLUICE_OPS_REDUCTIONS_REDUCE_H

#include "sluice/op.h"

typedef enum sl__red_kind {
    SL__RED_MIN,
    SL__RED_MAX,
    SL__RED_SUM,
    SL__RED_MEAN,
    SL__RED_MEAN_SQUARE,
    SL__RED_RMS,
    SL__RED_STD_DEV,
    SL__RED_VARIANCE
} sl__red_kind;

/* Argument positions shared by the three schemas; A_EXTRA is dtype (DTYPE) or ddof (MEAN_IN). */
enum { SL__RED_A_AXES, SL__RED_A_AXIS_NAMES, SL__RED_A_KEEP_DIMS, SL__RED_A_EXTRA };

sl_status sl__red_init(sl_op_init *ini, sl__red_kind kind);
sl_status sl__red_setup(sl_ctx *ctx, sl__red_kind kind);
sl_status sl__red_run_sample(sl_ctx *ctx, sl__red_kind kind, int sample);

/* Schemas (reduce.c). */
extern const sl_arg_def sl__red_basic_args[3], sl__red_dtype_args[4], sl__red_mean_in_args[4];
extern const sl_io_def sl__red_inputs[2], sl__red_outputs[1];

#define SL__RED_BASIC_SCHEMA                                                                       \
    .inputs = sl__red_inputs, .min_inputs = 1, .max_inputs = 1, .args = sl__red_basic_args,        \
    .num_args = 3
#define SL__RED_DTYPE_SCHEMA                                                                       \
    .inputs = sl__red_inputs, .min_inputs = 1, .max_inputs = 1, .args = sl__red_dtype_args,        \
    .num_args = 4
#define SL__RED_MEAN_IN_SCHEMA                                                                     \
    .inputs = sl__red_inputs, .min_inputs = 2, .max_inputs = 2, .args = sl__red_mean_in_args,      \
    .num_args = 4

/* A whole reduction operator: `const sl_op_def sl_op_reductions_NAME`, the operator
 * "reductions.NAME" of kind KIND with schema SCHEMA (BASIC, DTYPE or MEAN_IN) and doc DOC. */
#define SL__RED_OP(NAME, KIND, SCHEMA, DOC)                                                        \
    static sl_status NAME##_init(sl_op_init *ini, void **state)                                    \
    {                                                                                              \
        *state = NULL;                                                                             \
        return sl__red_init(ini, KIND);                                                            \
    }                                                                                              \
    static sl_status NAME##_setup(sl_ctx *ctx)                                                     \
    {                                                                                              \
        return sl__red_setup(ctx, KIND);                                                           \
    }                                                                                              \
    static sl_status NAME##_run_sample(sl_ctx *ctx, int i)                                         \
    {                                                                                              \
        return sl__red_run_sample(ctx, KIND, i);                                                   \
    }                                                                                              \
    const sl_op_def sl_op_reductions_##NAME = {.name = "reductions." #NAME,                        \
                                               .doc = DOC,                                         \
                                               SL__RED_##SCHEMA##_SCHEMA,                          \
                                               .outputs = sl__red_outputs,                         \
                                               .num_outputs = 1,                                   \
                                               .devices = SL_OP_CPU,                               \
                                               .init = NAME##_init,                                \
                                               .setup = NAME##_setup,                              \
                                               .run_sample = NAME##_run_sample}

#endif
