/* sluice/registry.h: the built-in operators, listed and introspected.
 *
 * The registry is static (src/ops/ops.def); it needs no initialisation and is safe to read from
 * any thread. Python's fn.*, docs/ops.md and `sluice ops` are generated from these calls.
 */
#ifndef SLUICE_REGISTRY_H
#define SLUICE_REGISTRY_H

#include "sluice/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of operators; they are sorted by name. */
SL_API int sl_registry_count(void);
/* Operator i (0 <= i < count), NULL when out of range. Borrowed, static. */
SL_API const sl_op_def *sl_registry_get(int i);
/* Operator by name ("decoders.image"), NULL when unknown. */
SL_API const sl_op_def *sl_registry_find(const char *name);

/* Arguments of an operator, its own followed by those every operator has ("preserve").
 * Returns: the count; sl_op_arg returns NULL out of range. */
SL_API int sl_op_num_args(const sl_op_def *op);
SL_API const sl_arg_def *sl_op_arg(const sl_op_def *op, int i);
/* Index of an argument by name, -1 when the operator has none of that name. */
SL_API int sl_op_arg_index(const sl_op_def *op, const char *name);
/* Entries of op->inputs: max_inputs, or for an operator taking any number of inputs
 * (SL_INPUTS_ANY) max(min_inputs, 1), the last one describing the inputs from there on. */
SL_API int sl_op_num_input_defs(const sl_op_def *op);
/* The deprecated argument name `name` of op (op->aliases), NULL when it is none. */
SL_API const sl_arg_alias *sl_op_find_alias(const sl_op_def *op, const char *name);
/* What a front end says when alias `a` is used: a->msg, or DALI's default words ("The argument
 * ``output_dtype`` is a deprecated alias for ``dtype``. Use ``dtype`` instead." / "The argument
 * ``image_type`` is no longer used and will be removed in a future release."), written into
 * buf. Returns buf. */
SL_API const char *sl_arg_alias_message(const sl_arg_alias *a, char *buf, size_t cap);
/* "bool", "int", "float", "string", "dtype", "list of int", ... */
SL_API const char *sl_arg_type_name(sl_arg_type t);

#ifdef __cplusplus
}
#endif
#endif
