/* sluice/index.h: index files of the readers' container formats, written by the `sluice`
 * command's indexer subcommands and usable from any front end.
 *
 *   sl_tfrecord_index   `sluice tfrecord-index`: DALI's tfrecord2idx format, one line
 *                       "<offset> <size>" per record (size: the whole record, its 12-byte header
 *                       and 4-byte footer included), read by readers.tfrecord's index_path.
 *   sl_wds_index        `sluice wds-index`: DALI's wds2idx format v1.2: "v1.2 <samples>", then
 *                       per sample "<ext> <offset> <size> <name>" per member (offset of its
 *                       contents), read by readers.webdataset's index_paths.
 *   sl_rec_index        `sluice rec-index`: DALI's rec2idx format, one line "<key>\t<offset>"
 *                       per record of an MXNet RecordIO file (key: its number in file order
 *                       from 0; offset: its first part's header), read by readers.mxnet's
 *                       index_path.
 */
#ifndef SLUICE_INDEX_H
#define SLUICE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "sluice/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Scans the TFRecord file at path (its record headers, each length's CRC checked; payloads are
 * skipped, not read) and writes its index to index_path; *num_records (may be NULL) gets the
 * count. A truncated record or a bad length CRC is SL_ECORRUPT naming the file and the offset;
 * nothing is left at index_path then. Errors in sl_last_error(). */
SL_API sl_status sl_tfrecord_index(const char *path, const char *index_path, int64_t *num_records);

/* Walks the tar archive at path (headers only) and writes its WebDataset index to index_path;
 * *num_samples (may be NULL) gets the count. A corrupt or truncated archive, or a member name
 * with white space (which the format cannot hold), is SL_ECORRUPT naming the file and offset;
 * nothing is left at index_path then. Errors in sl_last_error(). */
SL_API sl_status sl_wds_index(const char *path, const char *index_path, int64_t *num_samples);

/* Walks the RecordIO file at path by its part headers (the data is skipped, not read) and
 * writes its index to index_path; *num_records (may be NULL) gets the count. A bad magic, a
 * part flag out of sequence or a part running past the file's end is SL_ECORRUPT naming the
 * file and the offset; nothing is left at index_path then. Errors in sl_last_error(). */
SL_API sl_status sl_rec_index(const char *path, const char *index_path, int64_t *num_records);

/* TFRecord's masked CRC-32C of n bytes (the framing's checksum), for writers of TFRecord files:
 * a record is le64(len), le32(masked_crc(those 8 bytes)), the payload, le32(masked_crc(payload)).
 */
SL_API uint32_t sl_tfrecord_masked_crc(const void *data, size_t n);

#ifdef __cplusplus
}
#endif

#endif
