/* sluice/graph.h: describing a pipeline as a graph of operator nodes.
 *
 * Nodes are named; a node's outputs are referred to as "name" (output 0) or "name:k". Calls
 * here only record what is asked; every check against the operator schemas happens when the
 * pipeline is built, which names the node and the problem.
 *
 *   sl_graph_add(g, "readers.file", "reader", NULL);
 *   sl_graph_arg_str(g, "reader", "file_root", "/data/train");
 *   sl_graph_add(g, "decoders.image", "dec", NULL);
 *   sl_graph_input(g, "dec", "reader:0");
 *   sl_graph_output(g, "dec");
 *
 * Errors: these calls fail only on misuse (NULL, duplicate node name, unknown node) or memory;
 * the message is in sl_last_error(). Threads: a graph is used by one thread at a time.
 */
#ifndef SLUICE_GRAPH_H
#define SLUICE_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_graph sl_graph;

/* Returns: SL_OK and *out (owned: sl_graph_destroy), or SL_ENOMEM. */
SL_API sl_status sl_graph_create(sl_graph **out);
SL_API void sl_graph_destroy(sl_graph *g);

/* Adds a node running operator `op` on `device` ("cpu", "mixed", "gpu"). NULL leaves the device
 * to the build, which places the node from its inputs as DALI does: on "gpu" when at least one
 * of its regular inputs is GPU data (an output of a mixed or gpu node), else on "cpu" (so a
 * source runs on "cpu"); argument inputs do not count. A given device always wins. `name`
 * must be unique; NULL picks "<op>_<k>". Strings are copied. */
SL_API sl_status sl_graph_add(sl_graph *g, const char *op, const char *name, const char *device);
/* Appends the next positional input of `node`: "producer" or "producer:k". */
SL_API sl_status sl_graph_input(sl_graph *g, const char *node, const char *source);
/* Sets argument `arg` of `node` to a constant. Setting it again replaces the value. */
SL_API sl_status sl_graph_arg_bool(sl_graph *g, const char *node, const char *arg, bool v);
SL_API sl_status sl_graph_arg_int(sl_graph *g, const char *node, const char *arg, int64_t v);
SL_API sl_status sl_graph_arg_float(sl_graph *g, const char *node, const char *arg, double v);
SL_API sl_status sl_graph_arg_str(sl_graph *g, const char *node, const char *arg, const char *v);
SL_API sl_status sl_graph_arg_ints(sl_graph *g, const char *node, const char *arg, const int64_t *v,
                                   int n);
SL_API sl_status sl_graph_arg_floats(sl_graph *g, const char *node, const char *arg,
                                     const double *v, int n);
SL_API sl_status sl_graph_arg_strs(sl_graph *g, const char *node, const char *arg,
                                   const char *const *v, int n);
/* Sets an argument from JSON text: true, 3, 0.5, "RGB", [224, 224], ["a", "b"].
 * Returns SL_EINVAL when the text is not JSON of one of those forms. */
SL_API sl_status sl_graph_arg_json(sl_graph *g, const char *node, const char *arg,
                                   const char *json);
/* Makes `arg` of `node` an argument input: one value per sample from `source` (a CPU node). */
SL_API sl_status sl_graph_arg_input(sl_graph *g, const char *node, const char *arg,
                                    const char *source);
/* Makes `node` take the batch of `source` ("producer" or "producer:k"): its number of samples
 * and their identity (source files, sample indices), as if it read that output. For a node
 * without inputs inside a conditional branch (a random number drawn only for the samples of
 * an `if` body), `source` being an output of that branch. NULL clears it. */
SL_API sl_status sl_graph_batch_like(sl_graph *g, const char *node, const char *source);
/* Appends a pipeline output: "node" or "node:k". */
SL_API sl_status sl_graph_output(sl_graph *g, const char *source);

/* JSON spec (the format `sluice run` reads):
 *   {"pipeline": {"batch_size": 64, "num_threads": 2, "prefetch_queue_depth": 2, "seed": 42},
 *    "nodes": [{"name": "dec", "op": "decoders.image", "device": "cpu",
 *               "inputs": ["reader:0"], "args": {"output_type": "RGB"},
 *               "arg_inputs": {"mirror": "coin"}}, ...],
 *    "outputs": ["cmn", "reader:1"]}
 * A node without "device" is placed from its inputs, as sl_graph_add(..., NULL) is.
 * sl_graph_from_json parses the graph part (options: sl_pipeline_options_from_json). Errors name
 * the node and key. Returns: *out owned by the caller. */
SL_API sl_status sl_graph_from_json(const char *json, sl_graph **out);
/* Writes the graph as JSON (without the "pipeline" part); a node added without a device is
 * written without "device", so reading the text back places it the same way.
 * Returns: *json owned (free()). */
SL_API sl_status sl_graph_to_json(const sl_graph *g, char **json);

#ifdef __cplusplus
}
#endif
#endif
