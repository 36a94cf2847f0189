/* tests/c/npy.c: the .npy reader of the C test library (see npy.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/half.h"
#include "npy.h"

static const struct {
    const char *descr;
    sl_dtype dtype;
} descrs[] = {
    {"|u1", SL_DTYPE_UINT8},   {"<u2", SL_DTYPE_UINT16},  {"<u4", SL_DTYPE_UINT32},
    {"<u8", SL_DTYPE_UINT64},  {"|i1", SL_DTYPE_INT8},    {"<i2", SL_DTYPE_INT16},
    {"<i4", SL_DTYPE_INT32},   {"<i8", SL_DTYPE_INT64},   {"<f2", SL_DTYPE_FLOAT16},
    {"<f4", SL_DTYPE_FLOAT32}, {"<f8", SL_DTYPE_FLOAT64}, {"|b1", SL_DTYPE_BOOL},
};

/* Parses the header dict: 'descr', 'fortran_order', 'shape'. */
static int parse_header(const char *h, npy_array *a, char *err, size_t errlen)
{
    const char *d = strstr(h, "'descr':");
    const char *f = strstr(h, "'fortran_order':");
    const char *s = strstr(h, "'shape':");
    if (!d || !f || !s)
        return snprintf(err, errlen, "malformed header: %s", h), -1;
    a->dtype = SL_DTYPE_INVALID;
    for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++) {
        if (strstr(d, descrs[i].descr) == strchr(d + 8, '\'') + 1)
            a->dtype = descrs[i].dtype;
    }
    if (a->dtype == SL_DTYPE_INVALID)
        return snprintf(err, errlen, "unsupported dtype in header: %s", h), -1;
    if (strncmp(strchr(f, ':') + 1 + strspn(strchr(f, ':') + 1, " "), "False", 5) != 0)
        return snprintf(err, errlen, "Fortran order is not supported"), -1;
    const char *p = strchr(s, '(') + 1;
    a->ndim = 0;
    a->numel = 1;
    while (*p && *p != ')') {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p)
            break;
        if (a->ndim == SL_MAX_NDIM)
            return snprintf(err, errlen, "too many dimensions"), -1;
        a->shape[a->ndim++] = v;
        a->numel *= v;
        p = end + strspn(end, ", ");
    }
    return 0;
}

int npy_load(const char *path, npy_array *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof(*a));
    FILE *fp = fopen(path, "rb");
    unsigned char pre[12];
    if (!fp)
        return snprintf(err, errlen, "cannot open %s", path), -1;
    int rc = -1;
    char *header = NULL;
    if (fread(pre, 1, 10, fp) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        snprintf(err, errlen, "%s: not a .npy file", path);
        goto done;
    }
    size_t hlen = pre[8] | (size_t)pre[9] << 8;
    if (pre[6] >= 2) {
        if (fread(pre + 10, 1, 2, fp) != 2)
            goto done;
        hlen |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    }
    header = calloc(hlen + 1, 1);
    if (!header || fread(header, 1, hlen, fp) != hlen || parse_header(header, a, err, errlen))
        goto done;
    size_t bytes = (size_t)a->numel * sl_dtype_size(a->dtype);
    a->data = malloc(bytes ? bytes : 1);
    if (a->data && fread(a->data, 1, bytes, fp) == bytes)
        rc = 0;
    else
        snprintf(err, errlen, "%s: truncated data", path);
done:
    free(header);
    fclose(fp);
    if (rc)
        npy_free(a);
    return rc;
}

void npy_free(npy_array *a)
{
    free(a->data);
    a->data = NULL;
}

double npy_get(sl_dtype t, const void *d, int64_t k)
{
    switch (t) {
    case SL_DTYPE_UINT8: return ((const uint8_t *)d)[k];
    case SL_DTYPE_UINT16: return ((const uint16_t *)d)[k];
    case SL_DTYPE_UINT32: return ((const uint32_t *)d)[k];
    case SL_DTYPE_UINT64: return (double)((const uint64_t *)d)[k];
    case SL_DTYPE_INT8: return ((const int8_t *)d)[k];
    case SL_DTYPE_INT16: return ((const int16_t *)d)[k];
    case SL_DTYPE_INT32: return ((const int32_t *)d)[k];
    case SL_DTYPE_INT64: return (double)((const int64_t *)d)[k];
    case SL_DTYPE_FLOAT16: return sl__half_to_float(((const uint16_t *)d)[k]);
    case SL_DTYPE_FLOAT32: return ((const float *)d)[k];
    case SL_DTYPE_FLOAT64: return ((const double *)d)[k];
    case SL_DTYPE_BOOL: return ((const uint8_t *)d)[k] != 0;
    default: return 0;
    }
}
