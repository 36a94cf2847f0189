/* tfrecord_index.c: sl_tfrecord_index (sluice/index.h): walks a TFRecord file by its record
 * headers with pread (12 bytes per record; payloads are skipped, never read) and writes DALI's
 * tfrecord2idx lines "<offset> <size>" to a temporary file renamed over the index at the end,
 * so a failure leaves no partial index. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* GNU strerror_r */
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/index.h"

#include "core/core.h"
#include "ops/readers/index_file.h"
#include "ops/readers/tfrecord_parse.h"

static sl_status scan(int fd, const char *path, int64_t size, FILE *out, int64_t *count)
{
    char err[160];
    for (int64_t off = 0; off < size;) {
        uint8_t hdr[SL__TFR_HEADER];
        int64_t got = 0;
        while (got < SL__TFR_HEADER && off + got < size) {
            ssize_t k = pread(fd, hdr + got, (size_t)(SL__TFR_HEADER - got), (off_t)(off + got));
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0)
                return sl__index_sys_fail("cannot read", path);
            if (k == 0)
                break;
            got += k;
        }
        if (got < SL__TFR_HEADER)
            return sl__last_error_set(SL_ECORRUPT,
                                      "\"%s\": truncated record header at offset %lld (%lld of "
                                      "12 bytes)",
                                      path, (long long)off, (long long)got);
        uint64_t len;
        if (!sl__tfr_header(hdr, &len, err, sizeof err))
            return sl__last_error_set(SL_ECORRUPT, "\"%s\", record at offset %lld: %s", path,
                                      (long long)off, err);
        int64_t left = size - off - SL__TFR_HEADER - SL__TFR_FOOTER;
        if (len > (uint64_t)(left < 0 ? 0 : left))
            return sl__last_error_set(SL_ECORRUPT,
                                      "\"%s\", record at offset %lld: its length %llu runs past "
                                      "the end of the file (%lld bytes): truncated",
                                      path, (long long)off, (unsigned long long)len,
                                      (long long)size);
        int64_t rec = (int64_t)len + SL__TFR_HEADER + SL__TFR_FOOTER;
        if (fprintf(out, "%lld %lld\n", (long long)off, (long long)rec) < 0)
            return sl__last_error_set(SL_EIO, "cannot write the index");
        off += rec;
        (*count)++;
    }
    return SL_OK;
}

sl_status sl_tfrecord_index(const char *path, const char *index_path, int64_t *num_records)
{
    return sl__index_write("sl_tfrecord_index", path, index_path, scan, num_records);
}

uint32_t sl_tfrecord_masked_crc(const void *data, size_t n)
{
    return sl__tfr_masked_crc(data, n);
}
