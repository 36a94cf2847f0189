/* segmentation.select_masks: keeps the polygons of chosen masks and their vertices (DALI's
 * fn.segmentation.select_masks).
 *
 * Exports: const sl_op_def sl_op_segmentation_select_masks ("segmentation.select_masks", CPU).
 *
 * Inputs: mask_ids (1-D integers), polygons (P, 3) int32 rows [mask id, first vertex, end
 * vertex) and vertices (V, D) of any type. For each id of mask_ids in order, every polygon of
 * that mask (in input order) is output with its vertices, which are packed one polygon after
 * another, so the output's vertex ranges are consecutive from 0. With `reindex_masks` a
 * polygon's mask id becomes the id's position in mask_ids. An id with no polygon, a malformed
 * polygons tensor or a vertex range outside the vertices is an error naming the sample.
 */
#include <string.h>

#include "sluice/op.h"

#include "ops/tensor/tensor.h"

enum { A_REINDEX, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_REINDEX] = {.name = "reindex_masks",
                   .type = SL_ARG_BOOL,
                   .def = "false",
                   .doc = "Replace each mask id by its position in mask_ids."},
};

static const sl_io_def inputs[] = {
    {"mask_ids", "The ids of the masks to keep, 1-D integers."},
    {"polygons", "Polygons, int32 (P, 3): mask id, first vertex, end vertex."},
    {"vertices", "Vertices, (V, D) of any type."},
};
static const sl_io_def outputs[] = {
    {"polygons", "The kept polygons, int32 (Q, 3), vertex ranges into the output vertices."},
    {"vertices", "The kept polygons' vertices, packed, same type as the input's."},
};

/* Checks sample i; *npoly and *nvert receive the output sizes. */
static sl_status count(sl_ctx *ctx, int i, int64_t *npoly, int64_t *nvert)
{
    const sl_batch *ids = sl_ctx_input(ctx, 0), *pb = sl_ctx_input(ctx, 1),
                   *vb = sl_ctx_input(ctx, 2);
    const int64_t np = sl_batch_shape(pb, i)[0], nv = sl_batch_shape(vb, i)[0];
    const int32_t *poly = sl_batch_sample_data(pb, i);
    int64_t nid = sl_batch_sample_numel(ids, i);
    sl__convert_fn rd = sl__convert_get(SL_DTYPE_INT64, sl_batch_dtype(ids));
    const unsigned char *idd = sl_batch_sample_data(ids, i);
    const size_t ies = sl_dtype_size(sl_batch_dtype(ids));
    for (int64_t p = 0; p < np; p++) {
        const int32_t *q = poly + 3 * p;
        if (q[1] < 0 || q[1] > q[2] || q[2] > nv)
            return sl_fail(ctx, SL_EINVAL,
                           "Vertex index range for mask id %d is out of bounds. Expected to be "
                           "within the range of available vertices (0, %lld): got [%d, %d)",
                           q[0], (long long)nv, q[1], q[2]);
    }
    *npoly = *nvert = 0;
    for (int64_t m = 0; m < nid; m++) {
        int64_t id;
        rd(&id, idd + (size_t)m * ies, 1);
        bool found = false;
        for (int64_t p = 0; p < np; p++)
            if (poly[3 * p] == id) {
                found = true;
                ++*npoly;
                *nvert += poly[3 * p + 2] - poly[3 * p + 1];
            }
        if (!found)
            return sl_fail(ctx, SL_EINVAL, "Selected mask_id %lld is not present in the input.",
                           (long long)id);
    }
    return SL_OK;
}

static sl_status sm_setup(sl_ctx *ctx)
{
    const sl_batch *ids = sl_ctx_input(ctx, 0), *pb = sl_ctx_input(ctx, 1),
                   *vb = sl_ctx_input(ctx, 2);
    sl_dtype it = sl_batch_dtype(ids);
    if (it == SL_DTYPE_FLOAT16 || it == SL_DTYPE_FLOAT32 || it == SL_DTYPE_FLOAT64 ||
        it == SL_DTYPE_BOOL || sl_batch_ndim(ids) > 1)
        return sl_fail(ctx, SL_EINVAL, "mask_ids must be 1-D integers, got %d-D %s",
                       sl_batch_ndim(ids), sl_dtype_name(it));
    if (sl_batch_dtype(pb) != SL_DTYPE_INT32 || sl_batch_ndim(pb) != 2)
        return sl_fail(ctx, SL_EINVAL, "``polygons`` must be 2-D int32 tensors, got %d-D %s",
                       sl_batch_ndim(pb), sl_dtype_name(sl_batch_dtype(pb)));
    if (sl_batch_ndim(vb) != 2)
        return sl_fail(ctx, SL_EINVAL, "``vertices`` must be 2-D tensors (V, D), got %d-D",
                       sl_batch_ndim(vb));
    for (int i = 0; i < sl_ctx_batch_size(ctx); i++)
        if (sl_batch_shape(pb, i)[1] != 3) {
            sl_ctx_focus_sample(ctx, i);
            sl_status st = sl_fail(ctx, SL_EINVAL,
                                   "``polygons`` is expected to contain 2D tensors with 3 "
                                   "columns: ``mask_id, start_idx, end_idx``. Got %lld columns.",
                                   (long long)sl_batch_shape(pb, i)[1]);
            sl_ctx_focus_sample(ctx, -1);
            return st;
        }
    sl_ctx_set_output(ctx, 0, SL_DTYPE_INT32, 2, sl_batch_layout(pb));
    sl_ctx_set_output(ctx, 1, sl_batch_dtype(vb), 2, sl_batch_layout(vb));
    return SL_OK;
}

static sl_status sm_setup_sample(sl_ctx *ctx, int i)
{
    int64_t np = 0, nv = 0;
    sl_status st = count(ctx, i, &np, &nv);
    if (st != SL_OK)
        return st;
    int64_t ps[2] = {np, 3}, vs[2] = {nv, sl_batch_shape(sl_ctx_input(ctx, 2), i)[1]};
    sl_ctx_set_shape(ctx, 0, i, ps);
    sl_ctx_set_shape(ctx, 1, i, vs);
    return SL_OK;
}

static sl_status sm_run_sample(sl_ctx *ctx, int i)
{
    const sl_batch *ids = sl_ctx_input(ctx, 0), *pb = sl_ctx_input(ctx, 1),
                   *vb = sl_ctx_input(ctx, 2);
    const int64_t np = sl_batch_shape(pb, i)[0];
    const int32_t *poly = sl_batch_sample_data(pb, i);
    const size_t row = (size_t)sl_batch_shape(vb, i)[1] * sl_dtype_size(sl_batch_dtype(vb));
    const unsigned char *verts = sl_batch_sample_data(vb, i);
    int32_t *op = sl_ctx_output_data(ctx, 0, i);
    unsigned char *ov = sl_ctx_output_data(ctx, 1, i);
    sl__convert_fn rd = sl__convert_get(SL_DTYPE_INT64, sl_batch_dtype(ids));
    const unsigned char *idd = sl_batch_sample_data(ids, i);
    const size_t ies = sl_dtype_size(sl_batch_dtype(ids));
    const bool reindex = sl_ctx_arg_bool(ctx, A_REINDEX, i);
    int64_t q = 0, v = 0;
    for (int64_t m = 0; m < sl_batch_sample_numel(ids, i); m++) {
        int64_t id;
        rd(&id, idd + (size_t)m * ies, 1);
        for (int64_t p = 0; p < np; p++) {
            if (poly[3 * p] != id)
                continue;
            int64_t len = poly[3 * p + 2] - poly[3 * p + 1];
            op[3 * q] = (int32_t)(reindex ? m : id);
            op[3 * q + 1] = (int32_t)v;
            op[3 * q + 2] = (int32_t)(v + len);
            memcpy(ov + (size_t)v * row, verts + (size_t)poly[3 * p + 1] * row, (size_t)len * row);
            v += len;
            q++;
        }
    }
    return SL_OK;
}

const sl_op_def sl_op_segmentation_select_masks = {
    .name = "segmentation.select_masks",
    .doc = "Keeps the polygons of chosen masks and their vertices (DALI's "
           "segmentation.select_masks).\n\n"
           "Inputs: mask_ids, polygons (P, 3) int32 [mask id, first vertex, end vertex) and "
           "vertices (V, D). For each id of mask_ids in order, its polygons are output with "
           "their vertices packed (vertex ranges renumbered from 0); `reindex_masks=True` "
           "replaces the ids by their positions in mask_ids.",
    .inputs = inputs,
    .min_inputs = 3,
    .max_inputs = 3,
    .outputs = outputs,
    .num_outputs = 2,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .setup = sm_setup,
    .setup_sample = sm_setup_sample,
    .run_sample = sm_run_sample,
};
