/* tar.c: tar headers (tar.h). Layout of a header block (POSIX.1-1988 ustar):
 *   0 name[100]  100 mode[8]  108 uid[8]  116 gid[8]  124 size[12]  136 mtime[12]
 *   148 chksum[8]  156 typeflag  157 linkname[100]  257 magic "ustar"  345 prefix[155]
 * Sizes are octal text, or GNU base-256 (high bit of the first byte set). The checksum is the
 * byte sum of the block with its own field read as spaces. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* GNU strerror_r */
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ops/readers/tar.h"

static bool octal(const uint8_t *f, int n, int64_t *v)
{
    int i = 0;
    int64_t x = 0;
    if (f[0] & 0x80) { /* GNU base-256: big-endian, positive only */
        if (f[0] != 0x80)
            return false;
        for (i = 1; i < n; i++) {
            if (x > (INT64_MAX >> 8))
                return false;
            x = x << 8 | f[i];
        }
        *v = x;
        return true;
    }
    while (i < n && f[i] == ' ')
        i++;
    bool any = false;
    for (; i < n && f[i] >= '0' && f[i] <= '7'; i++, any = true) {
        if (x > (INT64_MAX >> 3))
            return false;
        x = x << 3 | (f[i] - '0');
    }
    for (; i < n; i++)
        if (f[i] != ' ' && f[i] != '\0')
            return false;
    *v = x;
    return any;
}

static void field_str(char *out, const uint8_t *f, int n)
{
    int k = 0;
    while (k < n && f[k])
        k++;
    memcpy(out, f, (size_t)k);
    out[k] = '\0';
}

bool sl__tar_header(const uint8_t h[512], int64_t at, char *kind, char *name, int64_t *size,
                    char *err, size_t errlen)
{
    bool zero = true;
    for (int i = 0; i < 512 && zero; i++)
        zero = h[i] == 0;
    if (zero) {
        *kind = 'z';
        return true;
    }
    int64_t sum = 0, want;
    for (int i = 0; i < 512; i++)
        sum += (i >= 148 && i < 156) ? ' ' : h[i];
    if (!octal(h + 148, 8, &want) || want != sum) {
        snprintf(err, errlen,
                 "tar header at offset %lld: bad checksum (not a tar archive, or "
                 "corrupt)",
                 (long long)at);
        return false;
    }
    if (!octal(h + 124, 12, size) || *size < 0) {
        snprintf(err, errlen, "tar header at offset %lld: malformed size field", (long long)at);
        return false;
    }
    char t = (char)h[156];
    name[0] = '\0';
    if (memcmp(h + 257, "ustar", 5) == 0 && h[345]) {
        field_str(name, h + 345, 155);
        strcat(name, "/");
    }
    field_str(name + strlen(name), h, 100);
    *kind = (t == '0' || t == '\0' || t == '7') ? 0 : (t == 'L' || t == 'x' || t == 'g') ? t : 'o';
    return true;
}

bool sl__tar_pax_path(const uint8_t *p, size_t n, char *path, bool *found, char *err, size_t errlen)
{
    *found = false;
    for (size_t i = 0; i < n;) {
        size_t len = 0, j = i;
        while (j < n && p[j] >= '0' && p[j] <= '9' && len < n)
            len = len * 10 + (size_t)(p[j++] - '0');
        if (j == i || j >= n || p[j] != ' ' || len <= j - i + 1 || len > n - i ||
            p[i + len - 1] != '\n') {
            snprintf(err, errlen, "malformed pax extended header record at byte %zu", i);
            return false;
        }
        const uint8_t *kv = p + j + 1, *end = p + i + len - 1;
        if ((size_t)(end - kv) > 5 && memcmp(kv, "path=", 5) == 0) {
            size_t vn = (size_t)(end - kv - 5);
            if (vn > SL__TAR_NAME_MAX) {
                snprintf(err, errlen, "pax path of %zu bytes is too long", vn);
                return false;
            }
            memcpy(path, kv + 5, vn);
            path[vn] = '\0';
            *found = true;
        }
        i += len;
    }
    return true;
}

static bool read_at(const sl__tar *t, void *dst, size_t n, int64_t at, char *err, size_t errlen)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = pread(t->fd, (uint8_t *)dst + done, n - done, (off_t)(at + (int64_t)done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            char buf[96];
            snprintf(err, errlen, "cannot read %zu bytes at offset %lld: %s", n, (long long)at,
                     k < 0 ? strerror_r(errno, buf, sizeof buf) : "the file ends there");
            return false;
        }
        done += (size_t)k;
    }
    return true;
}

bool sl__tar_next(sl__tar *t, sl__tar_entry *e, bool *done, char *err, size_t errlen)
{
    char long_name[SL__TAR_NAME_MAX + 1];
    bool have_long = false;
    *done = false;
    for (int hops = 0; hops < 16; hops++) {
        int64_t at = t->pos;
        if (t->size == at && !have_long) { /* an archive without its zero blocks */
            *done = true;
            return false;
        }
        if (t->size - at < 512) {
            snprintf(err, errlen, "truncated tar header at offset %lld", (long long)at);
            return false;
        }
        uint8_t h[512];
        char kind, name[256 + 2];
        int64_t size;
        if (!read_at(t, h, 512, at, err, errlen) ||
            !sl__tar_header(h, at, &kind, name, &size, err, errlen))
            return false;
        if (kind == 'z') {
            *done = true;
            return false;
        }
        int64_t left = t->size - at - 512; /* size is checked before it is rounded up */
        int64_t padded = size > left ? 0 : size + (512 - size % 512) % 512;
        if (size > left || padded > left) {
            snprintf(err, errlen,
                     "tar entry at offset %lld: its size %lld runs past the end of the archive "
                     "(%lld bytes): truncated",
                     (long long)at, (long long)size, (long long)t->size);
            return false;
        }
        t->pos = at + 512 + padded;
        if (kind == 'L' || kind == 'x') {
            if (size > SL__TAR_NAME_MAX * 4) {
                snprintf(err, errlen, "tar entry at offset %lld: a %lld-byte long name header",
                         (long long)at, (long long)size);
                return false;
            }
            uint8_t buf[SL__TAR_NAME_MAX * 4];
            if (!read_at(t, buf, (size_t)size, at + 512, err, errlen))
                return false;
            if (kind == 'L') {
                size_t n = strnlen((const char *)buf, (size_t)size);
                if (n > SL__TAR_NAME_MAX) {
                    snprintf(err, errlen, "tar entry at offset %lld: long name too long",
                             (long long)at);
                    return false;
                }
                memcpy(long_name, buf, n);
                long_name[n] = '\0';
                have_long = true;
            } else {
                bool found;
                char perr[96];
                if (!sl__tar_pax_path(buf, (size_t)size, long_name, &found, perr, sizeof perr)) {
                    snprintf(err, errlen, "tar entry at offset %lld: %s", (long long)at, perr);
                    return false;
                }
                have_long = have_long || found;
            }
            continue;
        }
        if (kind == 'g')
            continue;
        strcpy(e->name, have_long ? long_name : name);
        e->regular = kind == 0;
        e->data_offset = at + 512;
        e->size = size;
        return true;
    }
    snprintf(err, errlen, "tar header at offset %lld: more than 16 extension headers in a row",
             (long long)t->pos);
    return false;
}

int64_t sl__wds_split(const char *name)
{
    const char *slash = strrchr(name, '/'), *base = slash ? slash + 1 : name;
    const char *dot = strchr(base, '.');
    if (!dot || dot == base || dot[1] == '\0')
        return -1;
    return dot - name;
}
