/* wds_index.c: sl_wds_index (sluice/index.h): walks a tar archive's headers (tar.h) and writes
 * DALI's wds2idx v1.2 index through a temporary file renamed over the index at the end, so a
 * failure leaves no partial index. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* GNU strerror_r, open_memstream */
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/index.h"

#include "core/core.h"
#include "ops/readers/index_file.h"
#include "ops/readers/tar.h"

/* The samples' lines into body; *count samples. */
static sl_status scan(int fd, const char *path, int64_t size, FILE *body, int64_t *count)
{
    sl__tar t = {fd, size, 0};
    sl__tar_entry *e = sl__malloc(sizeof *e);
    char *key = sl__malloc(SL__TAR_NAME_MAX + 1), err[200];
    bool done = false, open = false;
    sl_status st = e && key ? SL_OK : sl__last_error_set(SL_ENOMEM, "out of memory");
    while (st == SL_OK && sl__tar_next(&t, e, &done, err, sizeof err)) {
        int64_t k = e->regular ? sl__wds_split(e->name) : -1;
        if (k < 0)
            continue;
        if (strpbrk(e->name, " \t\r\n")) {
            st = sl__last_error_set(SL_ECORRUPT,
                                    "\"%s\": member \"%s\" at offset %lld has white space in its "
                                    "name, which the index format cannot hold",
                                    path, e->name, (long long)(e->data_offset - 512));
            break;
        }
        bool same = open && strncmp(key, e->name, (size_t)k) == 0 && key[k] == '\0';
        if (!same) {
            if (open)
                fputc('\n', body);
            memcpy(key, e->name, (size_t)k);
            key[k] = '\0';
            open = true;
            ++*count;
        } else {
            fputc(' ', body);
        }
        fprintf(body, "%s %lld %lld %s", e->name + k + 1, (long long)e->data_offset,
                (long long)e->size, e->name);
    }
    if (st == SL_OK && !done)
        st = sl__last_error_set(SL_ECORRUPT, "\"%s\": %s", path, err);
    if (st == SL_OK && open)
        fputc('\n', body);
    sl__free(e);
    sl__free(key);
    return st;
}

/* The v1.2 header (the sample count) and then the samples' lines, which scan wrote to memory. */
static sl_status scan_counted(int fd, const char *path, int64_t size, FILE *out, int64_t *count)
{
    char *text = NULL;
    size_t len = 0;
    FILE *body = open_memstream(&text, &len);
    sl_status s =
        body ? scan(fd, path, size, body, count) : sl__last_error_set(SL_ENOMEM, "out of memory");
    if (body && fclose(body) != 0 && s == SL_OK)
        s = sl__last_error_set(SL_ENOMEM, "out of memory");
    if (s == SL_OK && *count == 0)
        s = sl__last_error_set(SL_ENOTFOUND, "\"%s\": no WebDataset samples in the archive", path);
    if (s == SL_OK) {
        fprintf(out, "v1.2 %lld\n", (long long)*count);
        fwrite(text, 1, len, out);
    }
    free(text); /* open_memstream's buffer comes from libc */
    return s;
}

sl_status sl_wds_index(const char *path, const char *index_path, int64_t *num_samples)
{
    return sl__index_write("sl_wds_index", path, index_path, scan_counted, num_samples);
}
