/* index_file.c: the index writers' shared frame (index_file.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* GNU strerror_r */
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "ops/readers/index_file.h"

sl_status sl__index_sys_fail(const char *what, const char *path)
{
    char buf[128];
    int e = errno;
    return sl__last_error_set(e == ENOENT ? SL_ENOTFOUND : SL_EIO, "%s \"%s\": %s", what, path,
                              strerror_r(e, buf, sizeof buf));
}

sl_status sl__index_write(const char *who, const char *path, const char *index_path,
                          sl__index_scan_fn scan, int64_t *num_entries)
{
    if (!path || !index_path)
        return sl__last_error_set(SL_EINVAL, "%s: path and index_path needed", who);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sl__index_sys_fail("cannot open", path);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        sl_status s = S_ISREG(st.st_mode)
                          ? sl__index_sys_fail("cannot read", path)
                          : sl__last_error_set(SL_EIO, "\"%s\" is not a regular file", path);
        close(fd);
        return s;
    }
    size_t n = strlen(index_path) + 24;
    char *tmp = sl__malloc(n);
    if (!tmp) {
        close(fd);
        return sl__last_error_set(SL_ENOMEM, "out of memory");
    }
    snprintf(tmp, n, "%s.tmp%ld", index_path, (long)getpid());
    FILE *out = fopen(tmp, "w");
    sl_status s = SL_OK;
    int64_t count = 0;
    if (!out)
        s = sl__index_sys_fail("cannot write", tmp);
    if (s == SL_OK)
        s = scan(fd, path, (int64_t)st.st_size, out, &count);
    if (out && fclose(out) != 0 && s == SL_OK)
        s = sl__index_sys_fail("cannot write", tmp);
    if (s == SL_OK && rename(tmp, index_path) != 0)
        s = sl__index_sys_fail("cannot write", index_path);
    if (s != SL_OK && out)
        unlink(tmp);
    sl__free(tmp);
    close(fd);
    if (s == SL_OK && num_entries)
        *num_entries = count;
    return s;
}
