/* src/graph/graph.h: internal interface of the graph module (never installed).
 *
 * Exports: typed argument values and their coercion to a schema, the unbuilt graph (what the
 * user described), the registry's parsed defaults, placement (where a node runs: its device,
 * or the one its inputs imply), the plan (validated, pruned, ordered, placed graph) that the
 * executor runs, and the plan's picture (Graphviz DOT).
 */
#ifndef SLUICE_GRAPH_INTERNAL_H
#define SLUICE_GRAPH_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/core.h"
#include "sluice/graph.h"
#include "sluice/op.h"
#include "sluice/pipeline.h"
#include "sluice/registry.h"

/* ---- values (value.c) ------------------------------------------------------------------- */
typedef enum sl__vkind {
    SL__V_NONE = 0,
    SL__V_BOOL,
    SL__V_INT,
    SL__V_FLOAT,
    SL__V_STRING,
    SL__V_INTS,
    SL__V_FLOATS,
    SL__V_STRINGS
} sl__vkind;

typedef struct sl__value {
    sl__vkind kind;
    int n; /* list length */
    bool b;
    int64_t i;
    double f;
    char *s;
    int64_t *ints;
    double *floats;
    char **strs;
} sl__value;

void sl__value_fini(sl__value *v);
sl_status sl__value_copy(sl__value *dst, const sl__value *src);
/* Parses JSON text (bool, number, string, list of numbers, list of strings). On failure
 * writes the reason to err. */
sl_status sl__value_parse_json(const char *json, sl__value *out, char *err, size_t errlen);
/* Same from an already parsed jansson element (json_t *). */
sl_status sl__value_from_jansson(const void *json, sl__value *out, char *err, size_t errlen);
/* Converts `in` to what `def` wants (int -> float, integral float -> int, scalar -> list when
 * SL_ARG_SCALAR_OK, dtype names) and checks range, length and choices. The result is stored
 * in the representation of def->type: BOOL b, INT i, FLOAT f, STRING s, DTYPE i (sl_dtype),
 * INTS ints, FLOATS floats, STRINGS strs. err receives the reason. */
sl_status sl__value_coerce(const sl__value *in, const sl_arg_def *def, sl__value *out, char *err,
                           size_t errlen);
/* Whether a value of v's kind has the right shape for def at all, so that a failed
 * sl__value_coerce is a bad value (ValueError) rather than a value of the wrong kind
 * (TypeError). */
bool sl__value_kind_fits(const sl_arg_def *def, const sl__value *v);
/* Writes the value as JSON text into buf (for docs and spec output). */
void sl__value_to_json(const sl__value *v, char *buf, size_t cap);
const char *sl__vkind_name(sl__vkind k);

/* ---- registry (registry.c) -------------------------------------------------------------- */
/* The default of argument i of op, parsed and coerced (SL__V_NONE when it has none). Returns
 * NULL only when memory ran out parsing the defaults (a later call tries again). */
const sl__value *sl__registry_default(const sl_op_def *op, int i);

/* sl__op_arg_resolve's answer for a deprecated name whose value is ignored. */
#define SL__ARG_IGNORED (-2)
/* The argument a name given to op stands for, the rule every front end applies: its own
 * argument's index, the index of the argument a deprecated alias renames (*alias set to the
 * alias), SL__ARG_IGNORED for a deprecated name sluice accepts and ignores (*alias set), or
 * -1 for a name the operator does not know. alias may be NULL. */
int sl__op_arg_resolve(const sl_op_def *op, const char *name, const sl_arg_alias **alias);

/* ---- the unbuilt graph (graph.c) -------------------------------------------------------- */
typedef struct sl__garg {
    char *name;
    char *source; /* argument input "node[:k]" or NULL for a constant */
    sl__value value;
} sl__garg;

typedef struct sl__gnode {
    char *name;
    char *op;
    char *device;  /* as given; NULL when not given (placed from the inputs: place.c) */
    char **inputs; /* "node[:k]" */
    int ninputs;
    sl__garg *args;
    int nargs;
    /* "node[:k]": the output whose batch (its size and its samples' identity) this node takes;
     * NULL: its inputs' (a node without inputs: the iteration's whole batch). What ties a node
     * without inputs created inside a conditional branch to the branch (sl_graph_batch_like). */
    char *batch_like;
} sl__gnode;

struct sl_graph {
    sl__gnode *nodes;
    int n, cap;
    char **outputs;
    int noutputs;
};

sl_status sl__graph_copy(const sl_graph *src, sl_graph **out);
sl__gnode *sl__graph_find(const sl_graph *g, const char *name);
/* Splits "name:k" into the node (looked up) and the output index. Returns false when the
 * text is malformed; *node is NULL when no node has that name. */
bool sl__graph_parse_ref(const sl_graph *g, const char *ref, int *node, int *out_index);

/* ---- the JSON spec (spec.c) ------------------------------------------------------------- */
/* Writes a whole spec: the "pipeline" object from o (left out when o is NULL), then the graph
 * as sl_graph_to_json does. Returns: *json owned (free() or sl__free). Errors in
 * sl_last_error(). */
sl_status sl__spec_write(const sl_graph *g, const sl_pipeline_options *o, char **json);

/* ---- placement (place.c) ---------------------------------------------------------------- */
typedef enum sl__stage { SL__STAGE_CPU = 0, SL__STAGE_MIXED, SL__STAGE_GPU } sl__stage;

/* Where a node runs, and why. */
typedef struct sl__placement {
    sl__stage stage;
    bool given;           /* the node's device was given (it wins whatever the inputs) */
    int from;             /* no device given and on gpu: the first regular input holding GPU
                           * data, which decided it; -1 otherwise */
    sl__stage from_stage; /* where that input's producer runs (mixed or gpu) */
} sl__placement;

const char *sl__stage_name(sl__stage s);
/* The stage "cpu", "mixed" or "gpu" names; false for any other text. */
bool sl__stage_parse(const char *device, sl__stage *out);
/* The placement rule, the one every front end gets (DALI's): a node given a `device` runs
 * there; a node without one (device NULL) runs on gpu when at least one of its regular inputs
 * is GPU data (in[k], the stage of input k's producer, is mixed or gpu), else on cpu (so a
 * source runs on cpu). Argument inputs are never passed: they do not count. Returns false
 * only for a given device that names no stage. */
bool sl__stage_place(const char *device, const sl__stage *in, int n, sl__placement *out);
/* Whether this build can run op where pl puts it: the operator has an implementation on that
 * stage and, off the cpu, sluice was built with CUDA (and has the operator's GPU code).
 * Returns SL_OK, or SL_EUNSUPPORTED with the reason in err, in the build's words; an inferred
 * gpu placement's reason names the input that implied it (from_node: its producer's name). */
sl_status sl__stage_check(const sl_op_def *op, const sl__placement *pl, const char *from_node,
                          char *err, size_t errlen);

/* A cache entry of sl__graph_place not placed yet. */
#define SL__PLACED_UNKNOWN (-1)
/* Places a node of the unbuilt graph g before the build, as the build will: its `device`
 * (NULL: not given) and its regular `inputs` ("node[:k]"), which must name nodes of g — the
 * node itself need not be in g yet. placed[] (one entry per node of g, SL__PLACED_UNKNOWN until
 * known) caches the stages of nodes placed on the way; the caller keeps it between calls, so
 * nodes added one by one cost one lookup per input. *from_node: the node index behind
 * out->from (-1 when none). Returns SL_OK, or the error (in err) for what the build would
 * reject first: an unknown device, a reference to no node, a cycle, out of memory. */
sl_status sl__graph_place(const sl_graph *g, const char *device, char *const *inputs, int n,
                          signed char *placed, sl__placement *out, int *from_node, char *err,
                          size_t errlen);

/* ---- the plan (plan.c) ------------------------------------------------------------------ */

typedef struct sl__ref {
    int node; /* index in plan order */
    int out;
} sl__ref;

typedef struct sl__parg {
    bool set;      /* given by the user (constant or input), or has a default */
    bool user_set; /* given by the user */
    sl__ref input; /* argument input; input.node < 0 for a constant */
    sl__value value;
} sl__parg;

/* options.c: the pipeline options, one entry per field of sl_pipeline_options in the order a
 * spec writes them: key (the spec key, and the Python keyword), the field's offset, whether it
 * is an int64_t (else an int), and whether a spec writes it only when it differs from the
 * default. The spec reader and writer and the Python extension go through this list alone. */
typedef struct sl__option {
    const char *key;
    size_t offset;
    bool wide;
    bool if_not_default;
    /* An enumeration's values by name (value k: names[k]), NULL-terminated; NULL for numbers.
     * A spec and Python give and show such an option by name. */
    const char *const *names;
    /* A string (a char array of SL_CACHE_FILE_MAX bytes: cache_file): read and written with
     * sl__option_str / sl__option_set_str, never as a number; "" is its default. */
    bool str;
    /* A number that a spec and Python may also give as "auto": the value auto_v. */
    bool has_auto;
    int64_t auto_v;
} sl__option;
/* A string option's value, and setting it (SL_EINVAL with err when it is too long). */
const char *sl__option_str(const sl_pipeline_options *o, const sl__option *opt);
sl_status sl__option_set_str(sl_pipeline_options *o, const sl__option *opt, const char *v,
                             char *err, size_t errlen);
extern const sl__option sl__options[];
extern const int sl__num_options;
const sl__option *sl__option_find(const char *key); /* NULL when unknown */
int64_t sl__option_get(const sl_pipeline_options *o, const sl__option *opt);
/* SL_EINVAL, the reason in err, when v does not fit an int field. */
sl_status sl__option_set(sl_pipeline_options *o, const sl__option *opt, int64_t v, char *err,
                         size_t errlen);
/* A named option's value from its name: SL_EINVAL, the names allowed in err, when unknown. */
sl_status sl__option_parse(const sl__option *opt, const char *name, int64_t *v, char *err,
                           size_t errlen);
/* The name of value v of a named option; NULL when it has none. */
const char *sl__option_name(const sl__option *opt, int64_t v);

/* check.c: the checks of node n (operator op) that need no other node — its device name, its
 * number of inputs, its arguments (each known; a constant that coerces to the argument's type,
 * or an argument input where per-sample values are accepted; every required one given) — with
 * the error, naming operator and node, in e. The build runs them on every node and the Python
 * extension on each node fn.* records, so both report the same error in the same words.
 * pargs (sl_op_num_args(op) entries, zeroed, or NULL): the coerced values by schema position,
 * defaults filled in, argument inputs marked set (plan.c resolves their references).
 * *type_error (may be NULL): the failure is about what was given — an unknown or missing
 * argument, a value of the wrong kind, the number of inputs — rather than a bad value. */
sl_status sl__node_check(const sl__gnode *n, const sl_op_def *op, sl__parg *pargs, sl__error *e,
                         bool *type_error);

/* A node's number of outputs: op->num_outputs, or the value of its op->num_outputs_arg in pargs
 * (sl__node_check's coerced arguments; the default when not given). */
int sl__node_num_outputs(const sl_op_def *op, const sl__parg *pargs, int ninputs);

typedef struct sl__pnode {
    const sl_op_def *op;
    char *name;
    sl__stage stage;
    bool to_host; /* a cpu SL_OP_TRANSFER node reading GPU data: the executor copies it */
    int ninputs;
    sl__ref *inputs;
    int nout;  /* its number of outputs: op->num_outputs or op->num_outputs_arg's value */
    int nargs; /* sl_op_num_args(op) */
    sl__parg *args;
    int *succ; /* distinct consumer nodes (data or argument inputs) */
    int nsucc;
    int npred; /* distinct producer nodes */
    uint64_t seed;
    /* Sample fusion (plan.c): fuse_into is the one consumer this node runs sample by sample
     * with (its one output lives in per-thread scratch), fused_from the producer fused into
     * this node; -1 when none. A chain runs head to tail in the tail's per-sample tasks. */
    int fuse_into;
    int fused_from;
    /* Conditionals: the node's batch is that of scope `scope` (plan->scopes; 0: the
     * iteration's whole batch). A split node's outputs 0 and 1 are in scopes branch[0] (its
     * true samples) and branch[1] (false); -1 for other nodes. batch_like: the output whose
     * batch a node without inputs takes (node -1: none). */
    int scope;
    int branch[2];
    sl__ref batch_like;
} sl__pnode;

/* A conditional scope: the samples of its parent scope whose predicate is true (branch 0) or
 * false (branch 1). Splits of one parent scope on the same predicate output share the scopes
 * (the front end splits each variable a branch uses by its own split node); the first of them
 * in plan order (`split`) computes the scope's samples each iteration and the others wait for
 * it. Scope 0 is the whole batch (parent -1). */
typedef struct sl__scope {
    int parent;
    int branch;   /* 0: true, 1: false */
    int split;    /* the plan node that computes it */
    sl__ref pred; /* the predicate's output (node -1: a constant, then one split's own) */
    int depth;    /* nesting: 0 for the whole batch */
} sl__scope;

typedef struct sl__plan {
    sl__pnode *nodes; /* topological order */
    int n;
    sl__ref *outputs;
    int noutputs;
    sl__scope *scopes; /* nscopes >= 1; scopes[0] the whole batch */
    int nscopes;
} sl__plan;

/* cond.c: gives every node of the plan (topological order, linked) its scope, and each split
 * its branch scopes; fails, naming the node, when a node's inputs come from different branches,
 * a merge's do not come from the two branches of one conditional, or a pipeline output is
 * inside a branch. */
sl_status sl__plan_scopes(sl__plan *plan, sl__error *err);
/* Whether op is _conditional.split / _conditional.merge (src/ops/conditional). */
bool sl__op_is_split(const sl_op_def *op);
bool sl__op_is_merge(const sl_op_def *op);
/* The scope of output `out` of plan node `node`. */
int sl__plan_out_scope(const sl__plan *plan, sl__ref r);
/* Writes "the true branch of the conditional on \"coin\"" (nested ones: ", inside ..."). */
void sl__plan_describe_scope(const sl__plan *plan, int scope, char *buf, size_t len);

/* The longest fused chain (plan.c stops a chain there; sched.c walks it on the stack). */
#define SL__MAX_CHAIN 16

/* Validates g against the registry, prunes, orders and places it. On failure fills err (with
 * the node named) and returns its code. */
sl_status sl__plan_build(const sl_graph *g, const sl_pipeline_options *o, sl__plan **out,
                         sl__error *err);
void sl__plan_destroy(sl__plan *p);
/* True when output `out` of node `node` (out < 0: any of its outputs) is a pipeline output. */
bool sl__plan_is_output(const sl__plan *plan, int node, int out);

/* ---- the picture (dot.c) ---------------------------------------------------------------- */
/* Writes plan (built from g) to f as Graphviz DOT: a box per node (name, operator, device),
 * data edges solid, argument inputs dashed, pipeline outputs as ovals, fused chains as
 * clusters; the nodes of g the build pruned are named in a comment. Returns SL_EIO when f
 * reports a write error (no message: the caller words it), else SL_OK. */
sl_status sl__plan_write_dot(const sl__plan *plan, const sl_graph *g, FILE *f);

#endif
