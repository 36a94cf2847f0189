/* ops/readers/npy.c: the .npy header parser (see npy.h).
 *
 * Layout (NumPy's format.py): "\x93NUMPY", major, minor, then the header length as a
 * little-endian uint16 (1.x) or uint32 (2.x, 3.x), then that many bytes of a Python dict
 * literal, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with spaces
 * and ended by '\n'. The data follows at 10 + len (1.x) or 12 + len.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ops/readers/npy.h"

typedef struct parser {
    const uint8_t *s;
    size_t pos, end, base; /* base: file offset of s[0] (for messages) */
    char *err;
    size_t errlen;
} parser;

static int64_t fail(parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(p->err, p->errlen, "invalid .npy header at byte %zu: ", p->pos);
    if (n >= 0 && (size_t)n < p->errlen)
        vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static void skip_space(parser *p)
{
    while (p->pos < p->end && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n'))
        p->pos++;
}

static bool eat(parser *p, char c)
{
    skip_space(p);
    if (p->pos < p->end && p->s[p->pos] == (uint8_t)c) {
        p->pos++;
        return true;
    }
    return false;
}

/* A quoted string ('...' or "...", no escapes) into out (at most cap - 1 bytes kept). */
static bool string(parser *p, char *out, size_t cap)
{
    skip_space(p);
    if (p->pos >= p->end || (p->s[p->pos] != '\'' && p->s[p->pos] != '"'))
        return false;
    uint8_t q = p->s[p->pos++];
    size_t n = 0;
    while (p->pos < p->end && p->s[p->pos] != q) {
        if (p->s[p->pos] == '\\' || n + 1 >= cap)
            return false;
        out[n++] = (char)p->s[p->pos++];
    }
    if (p->pos >= p->end)
        return false;
    p->pos++;
    out[n] = '\0';
    return true;
}

static bool word(parser *p, const char *w)
{
    skip_space(p);
    size_t n = strlen(w);
    if (p->end - p->pos < n || memcmp(p->s + p->pos, w, n) != 0)
        return false;
    p->pos += n;
    return true;
}

/* A non-negative integer below 2^62 (Python may write a trailing L in old files). */
static bool integer(parser *p, int64_t *v)
{
    skip_space(p);
    size_t start = p->pos;
    int64_t x = 0;
    while (p->pos < p->end && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
        int d = p->s[p->pos++] - '0';
        if (x > (((int64_t)1 << 62) - 1 - d) / 10)
            return false; /* checked before the multiplication, which could overflow */
        x = x * 10 + d;
    }
    if (p->pos < p->end && p->s[p->pos] == 'L')
        p->pos++;
    *v = x;
    return p->pos > start;
}

static int64_t shape(parser *p, sl__npy_header *h)
{
    if (!eat(p, '('))
        return fail(p, "'shape' is not a tuple");
    h->ndim = 0;
    while (!eat(p, ')')) {
        if (h->ndim == SL_MAX_NDIM)
            return fail(p, "'shape' has more than %d dimensions", SL_MAX_NDIM);
        if (!integer(p, &h->shape[h->ndim]))
            return fail(p, "'shape' holds something other than a non-negative integer "
                           "below 2^62");
        h->ndim++;
        if (!eat(p, ',') && !eat(p, ')'))
            return fail(p, "expected ',' or ')' in 'shape'");
        else if (p->s[p->pos - 1] == ')')
            break;
    }
    return 0;
}

/* '<f4', '|u1', '>i8', '|b1', ... into dtype, swap. */
static int64_t descr(parser *p, sl__npy_header *h)
{
    char d[32];
    size_t at = p->pos;
    if (!string(p, d, sizeof d)) {
        p->pos = at;
        return fail(p, "'descr' is not a simple type string (structured arrays are not "
                       "supported)");
    }
    static const struct {
        const char *code;
        sl_dtype t;
    } types[] = {{"b1", SL_DTYPE_BOOL},    {"u1", SL_DTYPE_UINT8},   {"u2", SL_DTYPE_UINT16},
                 {"u4", SL_DTYPE_UINT32},  {"u8", SL_DTYPE_UINT64},  {"i1", SL_DTYPE_INT8},
                 {"i2", SL_DTYPE_INT16},   {"i4", SL_DTYPE_INT32},   {"i8", SL_DTYPE_INT64},
                 {"f2", SL_DTYPE_FLOAT16}, {"f4", SL_DTYPE_FLOAT32}, {"f8", SL_DTYPE_FLOAT64}};
    char order = d[0];
    const char *code = d + 1;
    h->dtype = SL_DTYPE_INVALID;
    if (order == '<' || order == '>' || order == '|' || order == '=')
        for (size_t k = 0; k < sizeof types / sizeof *types; k++)
            if (strcmp(code, types[k].code) == 0)
                h->dtype = types[k].t;
    if (h->dtype == SL_DTYPE_INVALID) {
        p->pos = at;
        return fail(p,
                    "Unknown Numpy type string '%s' (supported: bool, int8..64, "
                    "uint8..64, float16/32/64)",
                    d);
    }
    h->swap = order == '>' && sl_dtype_size(h->dtype) > 1;
    return 0;
}

static int64_t dict(parser *p, sl__npy_header *h)
{
    bool seen[3] = {false, false, false};
    static const char *const keys[3] = {"descr", "fortran_order", "shape"};
    if (!eat(p, '{'))
        return fail(p, "the header is not a dictionary");
    while (!eat(p, '}')) {
        char key[32];
        size_t at = p->pos;
        if (!string(p, key, sizeof key))
            return fail(p, "expected a quoted key");
        int k = 0;
        while (k < 3 && strcmp(key, keys[k]) != 0)
            k++;
        if (k == 3 || seen[k]) {
            p->pos = at;
            return fail(p, k == 3 ? "unexpected key '%s'" : "key '%s' appears twice", key);
        }
        seen[k] = true;
        if (!eat(p, ':'))
            return fail(p, "expected ':' after '%s'", key);
        int64_t r = 0;
        if (k == 0)
            r = descr(p, h);
        else if (k == 1) {
            h->fortran_order = word(p, "True");
            if (!h->fortran_order && !word(p, "False"))
                return fail(p, "'fortran_order' is neither True nor False");
        } else
            r = shape(p, h);
        if (r < 0)
            return r;
        if (!eat(p, ',')) {
            if (eat(p, '}'))
                break;
            return fail(p, "expected ',' or '}'");
        }
    }
    for (int k = 0; k < 3; k++)
        if (!seen[k])
            return fail(p, "key '%s' is missing", keys[k]);
    skip_space(p);
    if (p->pos != p->end)
        return fail(p, "bytes after the dictionary");
    return 0;
}

/* The array's bytes. As NumPy ("array is too big"), the product of the extents other than
 * zeros, times the item size, must fit whether or not an extent is zero: then a product of the
 * shape's extents in any order, by any operator downstream, fits too (issue 15, fuzz target npy:
 * a shape (0, 333300000000000, 23330, ...) overflowed a later product). */
static int64_t sizes(parser *p, sl__npy_header *h)
{
    int64_t n = (int64_t)sl_dtype_size(h->dtype);
    bool empty = false;
    for (int d = 0; d < h->ndim; d++) {
        if (h->shape[d] == 0) {
            empty = true;
            continue;
        }
        if (n > INT64_MAX / 2 / h->shape[d])
            return fail(p, "the array's byte size overflows 64 bits");
        n *= h->shape[d];
    }
    h->nbytes = empty ? 0 : n;
    return 0;
}

int64_t sl__npy_parse(const uint8_t *buf, size_t len, sl__npy_header *h, char *err, size_t errlen)
{
    parser p = {.s = buf, .end = len, .err = err, .errlen = errlen};
    memset(h, 0, sizeof *h);
    if (len < 10)
        return 10;
    if (memcmp(buf, "\x93NUMPY", 6) != 0)
        return fail(&p, "not a .npy file (no \\x93NUMPY magic)");
    int major = buf[6];
    if (major < 1 || major > 3) {
        p.pos = 6;
        return fail(&p, "unsupported format version %d.%d", major, buf[7]);
    }
    size_t start = major == 1 ? 10 : 12;
    if (len < start)
        return (int64_t)start;
    uint64_t hlen = major == 1 ? (uint64_t)(buf[8] | buf[9] << 8)
                               : (uint64_t)buf[8] | (uint64_t)buf[9] << 8 |
                                     (uint64_t)buf[10] << 16 | (uint64_t)buf[11] << 24;
    if (hlen > SL__NPY_MAX_HEADER - start) {
        p.pos = 8;
        return fail(&p, "header length %llu is above the limit of %d bytes",
                    (unsigned long long)hlen, SL__NPY_MAX_HEADER);
    }
    if (len < start + hlen)
        return (int64_t)(start + hlen);
    p.pos = start;
    p.end = start + hlen;
    int64_t r = dict(&p, h);
    if (r == 0)
        r = sizes(&p, h);
    h->offset = (int64_t)(start + hlen);
    return r;
}
