/* caffe2.c: readers.caffe2: reads Caffe2 LMDB databases, each value a serialized TensorProtos
 * (image, labels of label_type, additional_inputs tensors, bounding box); the reading is
 * lmdb.c's, shared with readers.caffe.
 *
 * Exports sl_op_readers_caffe2 (listed in src/ops/ops.def).
 */
#include <stdint.h>

#include "sluice/op.h"

#include "ops/readers/lmdb.h"

static const sl_arg_def caffe2_args[NUM_CAFFE2_ARGS] = {
    SL__LMDB_PATH_ARG("Caffe2"),
    SL__LMDB_IMAGE_ARG,
    [ARG_LABEL_TYPE] = {.name = "label_type",
                        .type = SL_ARG_INT,
                        .def = "0",
                        .flags = SL_ARG_RANGE,
                        .min = 0,
                        .max = 4,
                        .doc = "The labels' kind (as Caffe2's image input): 0 one label (the "
                               "tensor's single value), 1 sparse multi-label (the active "
                               "labels' indices, output as a (num_labels,) vector of 0 and 1), "
                               "2 dense multi-label (the tensor's values), 3 weighted sparse "
                               "(indices, then a FLOAT tensor of their weights: a float32 "
                               "(num_labels,) vector), 4 no label (no labels output)."},
    [ARG_NUM_LABELS] = {.name = "num_labels",
                        .type = SL_ARG_INT,
                        .def = "1",
                        .flags = SL_ARG_RANGE,
                        .min = 1,
                        .max = 1 << 24,
                        .doc = "The number of classes: the length of the sparse label types' "
                               "output."},
    [ARG_ADDITIONAL_INPUTS] = {.name = "additional_inputs",
                               .type = SL_ARG_INT,
                               .def = "0",
                               .flags = SL_ARG_RANGE,
                               .min = 0,
                               .max = MAX_ADDITIONAL,
                               .doc = "The number of auxiliary tensors after the labels (FLOAT, "
                                      "INT32 or INT64), one output each, 1-D."},
    [ARG_BBOX] = {.name = "bbox",
                  .type = SL_ARG_BOOL,
                  .def = "false",
                  .doc = "Whether the entries may end with a bounding box (an INT32 tensor of 4 "
                         "values): the bbox output, int32 (4,), or (0,) for an entry without."},
    SL__CURSOR_ARG_DEFS,
};

#define ADD(k)                                                                                     \
    {                                                                                              \
        "additional_" #k, "The additional input tensor " #k " (FLOAT, INT32 or INT64), 1-D."       \
    }
static const sl_io_def caffe2_outputs[] = {
    {"images", "The first tensor: a STRING tensor's first string (an encoded image), uint8 "
               "1-D, or a BYTE tensor's bytes (raw pixels), uint8 (H, W, C) (C = 1 for a 2-D "
               "tensor), layout HWC."},
    {"labels", "The labels (label_type): float32 or int32 as their tensor, (1,) for a single "
               "label, (num_labels,) for the sparse types, the tensor's length when dense."},
    ADD(0),
    ADD(1),
    ADD(2),
    ADD(3),
    ADD(4),
    ADD(5),
    ADD(6),
    ADD(7),
    {"bbox", "The bounding box (with bbox): int32 (4,), or (0,) when the entry has none."},
};
#define ADD_WHEN(k)                                                                                \
    {                                                                                              \
        .arg = "additional_inputs", .in_range = true, .lo = (k) + 1, .hi = INT64_MAX               \
    }
static const sl_output_when caffe2_when[] = {
    {.arg = "image_available"},
    {.arg = "label_type", .in_range = true, .lo = 0, .hi = 3},
    ADD_WHEN(0),
    ADD_WHEN(1),
    ADD_WHEN(2),
    ADD_WHEN(3),
    ADD_WHEN(4),
    ADD_WHEN(5),
    ADD_WHEN(6),
    ADD_WHEN(7),
    {.arg = "bbox"},
};

const sl_op_def sl_op_readers_caffe2 = {
    .name = "readers.caffe2",
    .doc = "Reads sample data from Caffe2 LMDB databases (values: serialized TensorProtos).\n"
           "\n"
           "The tensors in order: the image (with image_available), the labels (unless "
           "label_type is 4; two tensors for label_type 3), additional_inputs auxiliary "
           "tensors, then, with bbox, a bounding box when one tensor is left. Outputs: images, "
           "labels, additional_0..., bbox, as their arguments say.\n"
           "\n" SL__LMDB_DOC,
    .outputs = caffe2_outputs,
    .num_outputs = 2 + MAX_ADDITIONAL + 1,
    .output_when = caffe2_when,
    .args = caffe2_args,
    .num_args = NUM_CAFFE2_ARGS,
    .aliases = sl__lmdb_aliases,
    .num_aliases = SL__LMDB_NUM_ALIASES,
    .devices = SL_OP_CPU,
    .flags = SL_OP_SOURCE | SL_OP_STATEFUL,
    .iter_bytes_per_sample = sizeof(sl__lmdb_sample),
    .init = sl__lmdb_init_caffe2,
    .fini = sl__lmdb_fini,
    .setup = sl__lmdb_setup,
    .setup_sample = sl__lmdb_setup_sample,
    .run_sample = sl__lmdb_run_sample,
    .reader_meta = sl__lmdb_reader_meta,
    .checkpoint = sl__lmdb_checkpoint,
    .restore = sl__lmdb_restore,
};
