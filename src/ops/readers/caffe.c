/* caffe.c: readers.caffe: reads (image, label) pairs from Caffe LMDB databases, each value a
 * serialized Datum (its encoded image, or raw pixels when the Datum says encoded = false, and
 * its label); the reading is lmdb.c's, shared with readers.caffe2.
 *
 * Exports sl_op_readers_caffe (listed in src/ops/ops.def).
 */
#include "sluice/op.h"

#include "ops/readers/lmdb.h"

static const sl_arg_def caffe_args[NUM_CAFFE_ARGS] = {
    SL__LMDB_PATH_ARG("Caffe"),
    SL__LMDB_IMAGE_ARG,
    [ARG_LABEL_AVAILABLE] = {.name = "label_available",
                             .type = SL_ARG_BOOL,
                             .def = "true",
                             .doc = "Whether the entries hold a label (the labels output)."},
    SL__CURSOR_ARG_DEFS,
};

static const sl_io_def caffe_outputs[] = {
    {"images", "The Datum's data, uint8: the encoded image, 1-D (unless the Datum says "
               "encoded = false: then the raw pixels, (height, width, channels), layout HWC)."},
    {"labels", "The Datum's label, int32 (1,)."},
};
static const sl_output_when caffe_when[] = {{.arg = "image_available"}, {.arg = "label_available"}};

const sl_op_def sl_op_readers_caffe = {
    .name = "readers.caffe",
    .doc = "Reads (image, label) pairs from Caffe LMDB databases (values: serialized Datum "
           "messages).\n"
           "\n"
           "Outputs, as their flags say: images (the Datum's data: encoded bytes, or raw "
           "pixels (H, W, C) when the Datum says encoded = false), labels (int32 (1,)).\n"
           "\n" SL__LMDB_DOC,
    .outputs = caffe_outputs,
    .num_outputs = 2,
    .output_when = caffe_when,
    .args = caffe_args,
    .num_args = NUM_CAFFE_ARGS,
    .aliases = sl__lmdb_aliases,
    .num_aliases = SL__LMDB_NUM_ALIASES,
    .devices = SL_OP_CPU,
    .flags = SL_OP_SOURCE | SL_OP_STATEFUL,
    .iter_bytes_per_sample = sizeof(sl__lmdb_sample),
    .init = sl__lmdb_init_caffe,
    .fini = sl__lmdb_fini,
    .setup = sl__lmdb_setup,
    .setup_sample = sl__lmdb_setup_sample,
    .run_sample = sl__lmdb_run_sample,
    .reader_meta = sl__lmdb_reader_meta,
    .checkpoint = sl__lmdb_checkpoint,
    .restore = sl__lmdb_restore,
};
