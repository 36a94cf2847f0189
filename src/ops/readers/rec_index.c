/* rec_index.c: sl_rec_index (sluice/index.h): walks an MXNet RecordIO file by its part headers
 * with pread (8 bytes per part; the data is skipped, never read) and writes DALI's rec2idx lines
 * "<key>\t<offset>" (key: the record's number in file order, from 0; offset: its first part's
 * header) to a temporary file renamed over the index at the end, so a failure leaves no partial
 * index. Record framing as readers.mxnet (mxnet.c): uint32 magic 0xced7230a, uint32 lrec (cflag
 * in the top 3 bits, length in the low 29), the data padded to 4 bytes; a record is one part of
 * cflag 0 or a part of cflag 1, parts of cflag 2 and a part of cflag 3. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* GNU strerror_r */
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/index.h"

#include "core/core.h"
#include "ops/readers/index_file.h"

#define MAGIC 0xced7230au

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Reads the 8-byte part header at off; *got: the bytes there were (< 8 at the file's end). */
static sl_status header(int fd, const char *path, int64_t off, uint8_t h[8], int64_t *got)
{
    *got = 0;
    while (*got < 8) {
        ssize_t k = pread(fd, h + *got, (size_t)(8 - *got), (off_t)(off + *got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return sl__index_sys_fail("cannot read", path);
        if (k == 0)
            break;
        *got += k;
    }
    return SL_OK;
}

static sl_status scan(int fd, const char *path, int64_t size, FILE *out, int64_t *count)
{
    int64_t start = 0;   /* the current record's first part */
    bool inside = false; /* a record's first part (cflag 1) was seen, not yet its last */
    for (int64_t off = 0; off < size;) {
        uint8_t h[8];
        int64_t got;
        sl_status st = header(fd, path, off, h, &got);
        if (st != SL_OK)
            return st;
        if (got < 8)
            return sl__last_error_set(SL_ECORRUPT,
                                      "\"%s\": truncated RecordIO part header at offset %lld "
                                      "(%lld of 8 bytes)",
                                      path, (long long)off, (long long)got);
        uint32_t magic = le32(h), lrec = le32(h + 4), cflag = lrec >> 29,
                 len = lrec & ((1u << 29) - 1);
        if (magic != MAGIC)
            return sl__last_error_set(SL_ECORRUPT,
                                      "\"%s\": bad RecordIO magic 0x%08" PRIx32
                                      " at offset %lld (expected 0xced7230a): not a RecordIO "
                                      "file, or corrupt",
                                      path, magic, (long long)off);
        bool opens = cflag == 0 || cflag == 1;
        if (opens == inside || cflag > 3)
            return sl__last_error_set(
                SL_ECORRUPT,
                "\"%s\": RecordIO part at offset %lld has flag %" PRIu32 ", which cannot follow %s",
                path, (long long)off, cflag,
                inside ? "a record's first part" : "a whole record (or the file's start)");
        int64_t padded = ((int64_t)len + 3) & ~(int64_t)3;
        if (padded > size - off - 8)
            return sl__last_error_set(SL_ECORRUPT,
                                      "\"%s\": RecordIO part at offset %lld holds %" PRIu32
                                      " bytes, past the end of the file (%lld bytes): "
                                      "truncated",
                                      path, (long long)off, len, (long long)size);
        if (opens)
            start = off;
        inside = cflag == 1 || cflag == 2;
        if (!inside) {
            if (fprintf(out, "%lld\t%lld\n", (long long)*count, (long long)start) < 0)
                return sl__last_error_set(SL_EIO, "cannot write the index");
            ++*count;
        }
        off += 8 + padded;
    }
    if (inside)
        return sl__last_error_set(SL_ECORRUPT,
                                  "\"%s\": the record at offset %lld has no last part: "
                                  "truncated",
                                  path, (long long)start);
    return SL_OK;
}

sl_status sl_rec_index(const char *path, const char *index_path, int64_t *num_records)
{
    return sl__index_write("sl_rec_index", path, index_path, scan, num_records);
}
