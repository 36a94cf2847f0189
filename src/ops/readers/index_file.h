/* index_file.h: what the index writers (tfrecord_index.c, wds_index.c, rec_index.c) share:
 * opening the data file, and writing the index through a temporary file renamed over it at the
 * end, so a failure leaves no partial index. */
#ifndef SLUICE_OPS_READERS_INDEX_FILE_H
#define SLUICE_OPS_READERS_INDEX_FILE_H

#include <stdint.h>
#include <stdio.h>

#include "sluice/status.h"

/* Writes the index of the `size`-byte file open as fd (path names it in errors) to out and
 * counts its entries in *count. */
typedef sl_status (*sl__index_scan_fn)(int fd, const char *path, int64_t size, FILE *out,
                                       int64_t *count);

/* errno's failure of `what` on path: SL_ENOTFOUND for ENOENT, else SL_EIO, with strerror. */
sl_status sl__index_sys_fail(const char *what, const char *path);

/* Opens path (a regular file), runs scan into "<index_path>.tmp<pid>" and renames that over
 * index_path; on failure removes the temporary file. *num_entries (may be NULL) on success. */
sl_status sl__index_write(const char *who, const char *path, const char *index_path,
                          sl__index_scan_fn scan, int64_t *num_entries);

#endif
