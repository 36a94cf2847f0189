/* tfrecord_parse.h: the bytes of TFRecord files, parsed without TensorFlow or protobuf: the
 * record framing (a little-endian uint64 length, its masked CRC-32C, the payload, the payload's
 * masked CRC-32C) and the tf.train.Example message a payload holds.
 *
 * Every function reads only the bytes it is given, checks every length against what is left
 * before it uses it, and on bad input returns false with a message in err (never reads out of
 * bounds, never allocates). Used by readers.tfrecord and `sluice tfrecord-index`.
 */
#ifndef SLUICE_OPS_READERS_TFRECORD_PARSE_H
#define SLUICE_OPS_READERS_TFRECORD_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of a record's framing: 8 (length) + 4 (its CRC) before the payload, 4 (CRC) after. */
#define SL__TFR_HEADER 12
#define SL__TFR_FOOTER 4

/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of n bytes. */
uint32_t sl__crc32c(const uint8_t *p, size_t n);
/* The same by slicing-by-8 tables only (what runs without SSE4.2); for the tests. */
uint32_t sl__crc32c_sliced(const uint8_t *p, size_t n);
/* TFRecord's masked CRC: rotate right by 15, add 0xa282ead8. */
uint32_t sl__tfr_masked_crc(const uint8_t *p, size_t n);

/* Checks a record's 12-byte header (the length's CRC) and gives the payload length. */
bool sl__tfr_header(const uint8_t hdr[SL__TFR_HEADER], uint64_t *len, char *err, size_t errlen);
/* Checks the payload's CRC against the 4 bytes that follow it (payload + len). */
bool sl__tfr_check_payload(const uint8_t *payload, uint64_t len, char *err, size_t errlen);

/* The protobuf wire format, shared with the LMDB readers' messages (caffe_parse.c): a cursor
 * (p, end) over a message's bytes that never passes end. */
typedef struct sl__pb {
    const uint8_t *p, *end;
} sl__pb;

/* One field: its number, wire type and, for length-delimited (2) and fixed (1, 5) fields, its
 * bytes (data, len); a varint's value in `value`. */
typedef struct sl__pb_field {
    uint64_t number;
    int wire;
    const uint8_t *data;
    size_t len;
    uint64_t value;
} sl__pb_field;

/* Reads one varint (at most 10 bytes); false when truncated or malformed. */
bool sl__pb_varint(sl__pb *c, uint64_t *v);
/* Reads the next field of the message at c; false with a message in err (naming `what`) when
 * its key is malformed, its wire type is a group or unknown (3, 4, 6, 7), or its bytes run
 * past the end (lengths are checked against what is left before the cursor moves). */
bool sl__pb_next(sl__pb *c, sl__pb_field *f, const char *what, char *err, size_t errlen);

/* The kinds of an Example's Feature (its oneof), as the Feature message numbers them. */
typedef enum sl__tf_kind {
    SL__TF_NONE = 0, /* the feature is absent (or holds no list) */
    SL__TF_BYTES = 1,
    SL__TF_FLOAT = 2,
    SL__TF_INT64 = 3
} sl__tf_kind;

/* One feature found in an Example: its kind and the bytes of its list message. */
typedef struct sl__tf_feature {
    sl__tf_kind kind;
    const uint8_t *list;
    size_t list_len;
} sl__tf_feature;

/* Finds the feature `name` in a serialized Example (the last entry with that key wins, as in
 * protobuf's map parsing); kind SL__TF_NONE when absent. Checks the whole Example's structure
 * as far as it walks it. */
bool sl__tf_example_find(const uint8_t *ex, size_t n, const char *name, sl__tf_feature *f,
                         char *err, size_t errlen);

/* The values of a feature's list: with out NULL counts them into *count; else writes *count
 * values (int64_t for INT64, float for FLOAT) to out. Accepts packed and unpacked encodings. */
bool sl__tf_list_numbers(const sl__tf_feature *f, void *out, int64_t *count, char *err,
                         size_t errlen);
/* A BytesList's value `index` (*count: how many it has); *value NULL when index >= count. */
bool sl__tf_list_bytes(const sl__tf_feature *f, int64_t index, const uint8_t **value, size_t *len,
                       int64_t *count, char *err, size_t errlen);

#endif
