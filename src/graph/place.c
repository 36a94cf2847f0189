/* src/graph/place.c: where a node runs — the device it was given, else the one its inputs
 * imply — and whether the operator and this build can run it there.
 *
 * Exports sl__stage_name, sl__stage_parse, sl__stage_place (the rule), sl__stage_check and
 * sl__graph_place. The rule is DALI's: a node given a device runs there, whatever its inputs
 * (a wrong one is then the build's input-stage error); a node without one runs on gpu when at
 * least one of its regular inputs is GPU data (an output of a mixed or gpu node), else on cpu,
 * so sources run on cpu. Argument inputs never count: they are CPU data (the build rejects one
 * from the GPU). An operator with no implementation on the stage its inputs imply is an error
 * naming that input, never a silent fall back to cpu.
 *
 * The build (plan.c) applies the rule to every node in topological order; a front end that
 * needs a node's device before the build (Python's DataNode.device) calls sl__graph_place,
 * which applies the same rule over the unbuilt graph.
 */
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"

/* Marks in sl__graph_place's `placed` cache besides a stage (>= 0). */
#define UNKNOWN SL__PLACED_UNKNOWN
#define VISITING (-2)

static const struct {
    const char *name;
    sl__stage stage;
    unsigned mask; /* sl_op_def.devices bit */
} stages[] = {{"cpu", SL__STAGE_CPU, SL_OP_CPU},
              {"mixed", SL__STAGE_MIXED, SL_OP_MIXED},
              {"gpu", SL__STAGE_GPU, SL_OP_GPU}};

const char *sl__stage_name(sl__stage s)
{
    return s == SL__STAGE_GPU ? "gpu" : s == SL__STAGE_MIXED ? "mixed" : "cpu";
}

bool sl__stage_parse(const char *device, sl__stage *out)
{
    for (int d = 0; d < 3; d++) {
        if (strcmp(device, stages[d].name) == 0) {
            *out = stages[d].stage;
            return true;
        }
    }
    return false;
}

bool sl__stage_place(const char *device, const sl__stage *in, int n, sl__placement *out)
{
    memset(out, 0, sizeof(*out));
    out->from = -1;
    out->given = device != NULL;
    if (device)
        return sl__stage_parse(device, &out->stage);
    out->stage = SL__STAGE_CPU;
    for (int k = 0; k < n; k++) {
        if (in[k] != SL__STAGE_CPU) {
            out->stage = SL__STAGE_GPU;
            out->from = k;
            out->from_stage = in[k];
            return true;
        }
    }
    return true;
}

sl_status sl__stage_check(const sl_op_def *op, const sl__placement *pl, const char *from_node,
                          char *err, size_t errlen)
{
    const char *dev = sl__stage_name(pl->stage);
    if (!(op->devices & stages[pl->stage].mask)) {
        if (pl->from >= 0) /* inferred gpu: say which input decided it */
            snprintf(err, errlen,
                     "operator has no %s implementation, and no device was given: input %d "
                     "comes from node \"%s\" on %s (GPU data), so the node would run on %s; "
                     "bring that input back with .cpu() (a copy node on cpu) first",
                     dev, pl->from, from_node ? from_node : "?", sl__stage_name(pl->from_stage),
                     dev);
        else
            snprintf(err, errlen, "operator has no %s implementation", dev);
        return SL_EUNSUPPORTED;
    }
    if (pl->stage == SL__STAGE_CPU)
        return SL_OK;
#ifndef SLUICE_HAVE_CUDA
    snprintf(err, errlen, "device \"%s\" needs CUDA, and this build of sluice has no CUDA support",
             dev);
    return SL_EUNSUPPORTED;
#else
    if (pl->stage == SL__STAGE_GPU && !op->run_gpu) {
        snprintf(err, errlen, "operator has no gpu implementation in this build");
        return SL_EUNSUPPORTED;
    }
    return SL_OK;
#endif
}

/* ---- over the unbuilt graph ------------------------------------------------------------- */

static sl_status place_node(const sl_graph *g, int i, signed char *placed, char *err,
                            size_t errlen);

/* sl__graph_place's work. `self`: the node placed when it is a producer of the one asked for
 * (messages then name it), else NULL (the caller's error names it). */
static sl_status place_parts(const sl_graph *g, const char *self, const char *device,
                             char *const *inputs, int n, signed char *placed, sl__placement *out,
                             int *from_node, char *err, size_t errlen)
{
    int nin = device ? 0 : n; /* a given device wins: the inputs are not looked at */
    sl__stage *in = sl__malloc(sizeof(sl__stage) * (size_t)(nin ? nin : 1));
    int *node = sl__malloc(sizeof(int) * (size_t)(nin ? nin : 1));
    sl_status st = in && node ? SL_OK : SL_ENOMEM;
    if (st != SL_OK)
        snprintf(err, errlen, "out of memory");
    for (int k = 0; st == SL_OK && k < nin; k++) {
        int out_index;
        if (!sl__graph_parse_ref(g, inputs[k], &node[k], &out_index) || node[k] < 0) {
            snprintf(err, errlen, "%s%s%sinput %d refers to unknown node \"%s\"",
                     self ? "node \"" : "", self ? self : "", self ? "\": " : "", k, inputs[k]);
            st = SL_ENOTFOUND;
            break;
        }
        st = place_node(g, node[k], placed, err, errlen);
        in[k] = st == SL_OK ? (sl__stage)placed[node[k]] : SL__STAGE_CPU;
    }
    if (st == SL_OK && !sl__stage_place(device, in, nin, out)) {
        snprintf(err, errlen, "%s%s%sunknown device \"%s\" (expected cpu, mixed or gpu)",
                 self ? "node \"" : "", self ? self : "", self ? "\": " : "", device);
        st = SL_EINVAL;
    }
    if (st == SL_OK && from_node)
        *from_node = out->from >= 0 ? node[out->from] : -1;
    sl__free(node);
    sl__free(in);
    return st;
}

/* Fills placed[i] (its producers first). */
static sl_status place_node(const sl_graph *g, int i, signed char *placed, char *err, size_t errlen)
{
    const sl__gnode *n = &g->nodes[i];
    if (placed[i] >= 0)
        return SL_OK;
    if (placed[i] == VISITING) {
        snprintf(err, errlen, "the graph has a cycle through node \"%s\"", n->name);
        return SL_EINVAL;
    }
    placed[i] = VISITING;
    sl__placement pl;
    sl_status st =
        place_parts(g, n->name, n->device, n->inputs, n->ninputs, placed, &pl, NULL, err, errlen);
    placed[i] = st == SL_OK ? (signed char)pl.stage : UNKNOWN;
    return st;
}

sl_status sl__graph_place(const sl_graph *g, const char *device, char *const *inputs, int n,
                          signed char *placed, sl__placement *out, int *from_node, char *err,
                          size_t errlen)
{
    return place_parts(g, NULL, device, inputs, n, placed, out, from_node, err, errlen);
}
