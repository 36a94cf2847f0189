/* tests/c/testutil.h: small helpers shared by the C tests (header-only, static functions).
 *
 * Temporary directories, file copies, the test-data locations the build passes in the
 * environment (SLUICE_TEST_DATA, SLUICE_TEST_TREE), and a pipeline-building shorthand.
 */
#ifndef SLUICE_TESTUTIL_H
#define SLUICE_TESTUTIL_H

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/sluice.h"

/* The directory named by environment variable `var`; exits the test (status 1) when unset. */
static inline const char *tu_env_dir(const char *var)
{
    const char *d = getenv(var);
    if (!d || !*d) {
        fprintf(stderr, "%s is not set: run this test through ctest\n", var);
        exit(1);
    }
    return d;
}

/* Creates a fresh temporary directory; returns a malloc'ed path. */
static inline char *tu_mkdtemp(void)
{
    char tmpl[] = "/tmp/sluice-test-XXXXXX";
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

static int tu_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static inline void tu_rmtree(const char *dir)
{
    if (dir)
        nftw(dir, tu_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Reads a whole file; *n receives its size. Returns malloc'ed bytes or NULL. */
static inline unsigned char *tu_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(size > 0 ? (size_t)size : 1);
    if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *n = (size_t)size;
    return buf;
}

/* Writes the first `keep` bytes of src to dst (keep = SIZE_MAX copies all). Returns 0 on
 * success. */
static inline int tu_copy_prefix(const char *src, const char *dst, size_t keep)
{
    size_t n;
    unsigned char *buf = tu_read_file(src, &n);
    if (!buf)
        return -1;
    FILE *f = fopen(dst, "wb");
    size_t len = keep < n ? keep : n;
    int rc = (f && fwrite(buf, 1, len, f) == len) ? 0 : -1;
    if (f)
        fclose(f);
    free(buf);
    return rc;
}

static int tu_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the entries of dir that end with `suffix` (NULL: all but . and ..).
 * Returns the count; *names is malloc'ed (free each and the array). */
static inline int tu_list(const char *dir, const char *suffix, char ***names)
{
    DIR *d = opendir(dir);
    int n = 0, cap = 16;
    *names = malloc(sizeof(char *) * (size_t)cap);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name), sl = suffix ? strlen(suffix) : 0;
        if (e->d_name[0] == '.' || len < sl || (suffix && strcmp(e->d_name + len - sl, suffix)))
            continue;
        if (n == cap)
            *names = realloc(*names, sizeof(char *) * (size_t)(cap *= 2));
        (*names)[n++] = strdup(e->d_name);
    }
    if (d)
        closedir(d);
    qsort(*names, (size_t)n, sizeof(char *), tu_cmp_str);
    return n;
}

static inline void tu_free_list(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* FNV-1a over bytes, for comparing outputs across runs. */
static inline uint64_t tu_hash(const void *data, size_t n, uint64_t h)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001B3ull;
    }
    return h;
}

/* Hash of a whole batch: shapes and bytes. */
static inline uint64_t tu_hash_batch(const sl_batch *b, uint64_t h)
{
    for (int i = 0; i < sl_batch_size(b); i++)
        h = tu_hash(sl_batch_shape(b, i), sizeof(int64_t) * (size_t)sl_batch_ndim(b), h);
    return tu_hash(sl_batch_data(b), sl_batch_nbytes(b), h);
}

#endif
