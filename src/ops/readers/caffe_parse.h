/* caffe_parse.h: the values of Caffe and Caffe2 LMDB databases, parsed without protobuf (the
 * wire format of tfrecord_parse.h): Caffe's Datum and Caffe2's TensorProtos.
 *
 * Every function reads only the bytes it is given, checks every length against what is left
 * before it uses it, never allocates, and on bad input returns false with a message in err.
 * Used by readers.caffe and readers.caffe2 (lmdb.c) and the fuzz target caffe.
 *
 * Schemas (caffe.proto, caffe2.proto, proto2), by field number:
 *   Datum { int32 channels = 1; int32 height = 2; int32 width = 3; bytes data = 4;
 *           int32 label = 5; repeated float float_data = 6; bool encoded = 7; }
 *   TensorProtos { repeated TensorProto protos = 1; }
 *   TensorProto { repeated int64 dims = 1; DataType data_type = 2 [default FLOAT];
 *                 repeated float float_data = 3; repeated int32 int32_data = 4;
 *                 bytes byte_data = 5; repeated bytes string_data = 6; string name = 7;
 *                 repeated double double_data = 9; repeated int64 int64_data = 10; ... }
 * Repeated numbers are accepted packed and unpacked; for optional fields the last one wins.
 */
#ifndef SLUICE_OPS_READERS_CAFFE_PARSE_H
#define SLUICE_OPS_READERS_CAFFE_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sl__datum {
    bool has_data, has_label, has_encoded, encoded;
    int32_t channels, height, width, label;
    const uint8_t *data; /* into the value */
    size_t data_len;
} sl__datum;

/* Parses a serialized Datum. */
bool sl__caffe_datum(const uint8_t *v, size_t n, sl__datum *d, char *err, size_t errlen);

/* TensorProto.DataType values used by readers.caffe2. */
enum { SL__C2_FLOAT = 1, SL__C2_INT32 = 2, SL__C2_BYTE = 3, SL__C2_STRING = 4, SL__C2_INT64 = 10 };
/* The numeric repeated fields' numbers. */
enum { SL__C2_F_FLOAT = 3, SL__C2_F_INT32 = 4, SL__C2_F_INT64 = 10 };

#define SL__C2_MAX_DIMS 8

typedef struct sl__c2_tensor {
    const uint8_t *msg; /* the TensorProto's bytes */
    size_t len;
    int64_t data_type;
    int ndims;
    int64_t dims[SL__C2_MAX_DIMS];
    bool has_byte_data;
    const uint8_t *byte_data;
    size_t byte_len;
    int64_t nstrings; /* string_data entries; the first one in string0 */
    const uint8_t *string0;
    size_t string0_len;
} sl__c2_tensor;

/* Parses a serialized TensorProtos: *count gets the number of its protos, the first `max` of
 * them are parsed into t (each one's scalar fields; its numbers through sl__c2_numbers). */
bool sl__c2_protos(const uint8_t *v, size_t n, sl__c2_tensor *t, int max, int *count, char *err,
                   size_t errlen);

/* The values of the numeric repeated field `field` (SL__C2_F_FLOAT: float, SL__C2_F_INT32:
 * int32_t, SL__C2_F_INT64: int64_t) of tensor t: *count gets how many there are; when out is
 * not NULL the first min(count, max) of them are written there. */
bool sl__c2_numbers(const sl__c2_tensor *t, int field, void *out, int64_t max, int64_t *count,
                    char *err, size_t errlen);

#endif
