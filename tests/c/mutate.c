/* tests/c/mutate.c: hostile inputs made from good JPEG and PNG files (see mutate.h). */
#include "mutate.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

/* ---- the corpus ------------------------------------------------------------------------- */

void tu_corpus_free(tu_corpus *c)
{
    for (int i = 0; i < c->n; i++)
        free(c->v[i].data);
    free(c->v);
    *c = (tu_corpus){0};
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "mutate: out of memory for %zu bytes\n", n);
        abort(); /* a test helper: nothing to recover */
    }
    return p;
}

int tu_corpus_add(tu_corpus *c, tu_kind kind, const uint8_t *d, size_t n, const char *fmt, ...)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 256;
        tu_input *v = realloc(c->v, (size_t)c->cap * sizeof *v);
        if (v == NULL)
            abort();
        c->v = v;
    }
    tu_input *in = &c->v[c->n];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(in->name, sizeof in->name, fmt, ap);
    va_end(ap);
    in->kind = kind;
    in->size = n;
    in->data = n ? xmalloc(n) : NULL;
    if (n)
        memcpy(in->data, d, n);
    return c->n++;
}

/* ---- byte helpers ----------------------------------------------------------------------- */

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static void put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static unsigned get16(const uint8_t *p)
{
    return (unsigned)p[0] << 8 | p[1];
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A growing byte string. */
typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static void buf_put(buf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL)
            abort();
    }
    if (n)
        memcpy(b->p + b->n, d, n);
    b->n += n;
}

/* d with [at, at + del) replaced by ins[0, k): a new malloc'ed string of *out_n bytes. */
static uint8_t *splice(const uint8_t *d, size_t n, size_t at, size_t del, const void *ins, size_t k,
                       size_t *out_n)
{
    buf b = {0};
    buf_put(&b, d, at);
    buf_put(&b, ins, k);
    buf_put(&b, d + at + del, n - at - del);
    *out_n = b.n;
    return b.p;
}

/* Adds d with k bytes at `at` overwritten. */
static void add_patch(tu_corpus *c, tu_kind kind, const uint8_t *d, size_t n, size_t at,
                      const uint8_t *bytes, size_t k, const char *name, const char *what)
{
    if (at + k > n)
        return;
    uint8_t *m = xmalloc(n);
    memcpy(m, d, n);
    memcpy(m + at, bytes, k);
    tu_corpus_add(c, kind, m, n, "%s: %s", name, what);
    free(m);
}

static void add_splice(tu_corpus *c, tu_kind kind, const uint8_t *d, size_t n, size_t at,
                       size_t del, const void *ins, size_t k, const char *name, const char *what)
{
    size_t m_n;
    uint8_t *m = splice(d, n, at, del, ins, k, &m_n);
    tu_corpus_add(c, kind, m, m_n, "%s: %s", name, what);
    free(m);
}

/* ---- JPEG structure ------------------------------------------------------------------------ */

/* Offset of the first segment with marker 0xff m before the first scan's data (m = 0xda finds
 * the SOS itself), or 0 when there is none. */
static size_t jseg(const uint8_t *d, size_t n, int m)
{
    size_t at = 2;
    while (at + 4 <= n && d[at] == 0xff) {
        int t = d[at + 1];
        if (t == 0xff) {
            at++;
            continue;
        }
        if (t == m)
            return at;
        if (t == 0xda || t == 0xd9)
            return 0;
        at += 2 + get16(d + at + 2);
    }
    return 0;
}

/* The frame header: the first SOFn (0xc0-0xcf but DHT c4, JPG c8 and DAC cc). */
static size_t jsof(const uint8_t *d, size_t n)
{
    size_t best = 0;
    for (int m = 0xc0; m <= 0xcf; m++) {
        size_t at = m == 0xc4 || m == 0xc8 || m == 0xcc ? 0 : jseg(d, n, m);
        if (at && (best == 0 || at < best))
            best = at;
    }
    return best;
}

/* Where the headers end: after the first SOS segment. */
static size_t jpeg_headers_end(const uint8_t *d, size_t n)
{
    size_t sos = jseg(d, n, 0xda);
    return sos ? sos + 2 + get16(d + sos + 2) : 0;
}

/* ---- PNG structure -------------------------------------------------------------------------- */

/* Offset of the first chunk of type t at or after `from` (its length field), or 0. */
static size_t pchunk(const uint8_t *d, size_t n, const char *t, size_t from)
{
    for (size_t at = from < 8 ? 8 : from; at + 12 <= n;) {
        uint32_t len = get32(d + at);
        if (memcmp(d + at + 4, t, 4) == 0)
            return at;
        if (len > n - at - 12)
            return 0;
        at += 12 + (size_t)len;
    }
    return 0;
}

static size_t pchunk_size(const uint8_t *d, size_t at)
{
    return 12 + (size_t)get32(d + at);
}

/* A chunk: length, type, data, CRC (a correct one unless bad_crc). */
static void chunk_put(buf *b, const char *type, const void *data, uint32_t len, bool bad_crc)
{
    uint8_t h[8];
    put32(h, len);
    memcpy(h + 4, type, 4);
    buf_put(b, h, 8);
    buf_put(b, data, len);
    uLong crc = crc32(0, (const Bytef *)type, 4);
    crc = crc32(crc, data, len);
    uint8_t t[4];
    put32(t, (uint32_t)crc ^ (bad_crc ? 1u : 0u));
    buf_put(b, t, 4);
}

/* Recomputes the CRC of the chunk at `at` of m (its length as written, which must fit). */
static void fix_crc(uint8_t *m, size_t n, size_t at)
{
    uint32_t len = get32(m + at);
    if (len > n - at - 12)
        return;
    put32(m + at + 8 + len, (uint32_t)crc32(0, m + at + 4, 4 + len));
}

/* Adds d with its IHDR's bytes [off, off + k) (off from the start of the IHDR data) replaced,
 * the CRC fixed. */
static void add_ihdr(tu_corpus *c, const uint8_t *d, size_t n, size_t off, const uint8_t *bytes,
                     size_t k, const char *name, const char *what)
{
    uint8_t *m = xmalloc(n);
    memcpy(m, d, n);
    memcpy(m + 16 + off, bytes, k);
    fix_crc(m, n, 8);
    tu_corpus_add(c, TU_HEADER, m, n, "%s: IHDR %s", name, what);
    free(m);
}

/* Adds d with a chunk inserted after IHDR. */
static void add_after_ihdr(tu_corpus *c, tu_kind kind, const uint8_t *d, size_t n, const buf *ch,
                           const char *name, const char *what)
{
    add_splice(c, kind, d, n, 8 + pchunk_size(d, 8), 0, ch->p, ch->n, name, what);
}

/* ---- truncations and changes -------------------------------------------------------------- */

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

int tu_add_cuts(tu_corpus *c, const char *name, const uint8_t *d, size_t n)
{
    size_t len[96];
    int k = 0, added = 0;
    for (size_t i = 0; i <= 16; i++)
        len[k++] = i;
    for (size_t i = 1; i < 64; i++)
        len[k++] = n * i / 64;
    for (size_t i = 1; i <= 3; i++)
        len[k++] = n - i;
    qsort(len, (size_t)k, sizeof len[0], cmp_size);
    for (int i = 0; i < k; i++) {
        if (len[i] >= n || (i > 0 && len[i] == len[i - 1]))
            continue;
        tu_corpus_add(c, TU_CUT, d, len[i], "%s: cut at %zu of %zu", name, len[i], n);
        added++;
    }
    return added;
}

int tu_add_fill_bytes(tu_corpus *c, const char *name, const uint8_t *d, size_t n, int most)
{
    static const uint8_t fill[2] = {0xff, 0xff};
    size_t at[64];
    int m = 0, added = 0;
    size_t i = n >= 3 && d[0] == 0xff && d[1] == 0xd8 ? jpeg_headers_end(d, n) : 0;
    for (; i > 0 && i + 1 < n && m < 64; i++)
        if (d[i] == 0xff && d[i + 1] == 0x00)
            at[m++] = i;
    for (int r = 0; r<m; r += m> most ? m / most : 1, added++) {
        char what[64];
        snprintf(what, sizeof what, "two fill bytes before the 0xFF 0x00 at %zu", at[r]);
        add_splice(c, TU_CHANGE, d, n, at[r], 0, fill, sizeof fill, name, what);
    }
    return added;
}

static size_t headers_end(const uint8_t *d, size_t n)
{
    if (n >= 3 && d[0] == 0xff && d[1] == 0xd8)
        return jpeg_headers_end(d, n);
    size_t idat = pchunk(d, n, "IDAT", 8);
    return idat ? idat + 8 : 0;
}

int tu_add_changes(tu_corpus *c, const char *name, const uint8_t *d, size_t n, int count,
                   uint32_t seed)
{
    size_t hdr = headers_end(d, n);
    int added = 0;
    if (n < 16 || hdr == 0 || hdr >= n)
        return 0;
    uint8_t *m = xmalloc(n);
    for (int i = 0; i < count; i++) {
        /* even i: a header byte (never the first two: a wrong magic is one case, not many) */
        size_t at = i % 2 == 0 ? 2 + lcg(&seed) % (hdr - 2) : hdr + lcg(&seed) % (n - hdr);
        memcpy(m, d, n);
        unsigned bit = lcg(&seed) % 8, kind = (unsigned)i / 2 % 4;
        m[at] = kind == 0   ? m[at] ^ (uint8_t)(1u << bit)
                : kind == 1 ? (uint8_t)~m[at]
                : kind == 2 ? 0x00
                            : 0xff;
        char what[64];
        if (kind == 0)
            snprintf(what, sizeof what, "bit %u flipped", bit);
        else
            snprintf(what, sizeof what, "%s",
                     kind == 1   ? "inverted"
                     : kind == 2 ? "set to 0x00"
                                 : "set to 0xff");
        if (memcmp(m, d, n) != 0) {
            tu_corpus_add(c, TU_CHANGE, m, n, "%s: byte %zu of %zu %s", name, at, n, what);
            added++;
        }
    }
    for (int i = 0; i < count / 4; i++) {
        memcpy(m, d, n);
        for (int k = 0; k < 8; k++)
            m[lcg(&seed) % n] = (uint8_t)lcg(&seed);
        tu_corpus_add(c, TU_CHANGE, m, n, "%s: 8 random bytes (noise %d)", name, i);
        added++;
    }
    free(m);
    return added;
}

/* ---- JPEG headers ------------------------------------------------------------------------- */

static void jpeg_sof_fields(tu_corpus *c, const char *name, const uint8_t *d, size_t n, size_t sof)
{
    unsigned h0 = get16(d + sof + 5), w0 = get16(d + sof + 7), nf = d[sof + 9];
    const unsigned dims[][2] = {{0, h0},          {w0, 0},          {0, 0},          {1, 1},
                                {1, h0},          {w0, 1},          {65535, 65535},  {65500, 65500},
                                {65535, 1},       {1, 65535},       {65535, h0},     {w0, 65535},
                                {16384, 16384},   {16385, 16384},   {4000, 4000},    {5000, 5000},
                                {2 * w0, 2 * h0}, {w0 + 1, h0 + 1}, {w0 / 2, h0 / 2}};
    char what[96];
    uint8_t b[4];
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        put16(b, dims[i][1]);
        put16(b + 2, dims[i][0]);
        snprintf(what, sizeof what, "SOF %ux%u (was %ux%u)", dims[i][0], dims[i][1], w0, h0);
        add_patch(c, TU_HEADER, d, n, sof + 5, b, 4, name, what);
    }
    static const uint8_t precision[] = {0, 1, 12, 16, 255};
    for (size_t i = 0; i < sizeof precision; i++) {
        snprintf(what, sizeof what, "SOF precision %u", precision[i]);
        add_patch(c, TU_HEADER, d, n, sof + 4, &precision[i], 1, name, what);
    }
    static const uint8_t ncomp[] = {0, 1, 2, 3, 4, 5, 255};
    for (size_t i = 0; i < sizeof ncomp; i++) {
        if (ncomp[i] == nf)
            continue;
        snprintf(what, sizeof what, "SOF component count %u (was %u)", ncomp[i], nf);
        add_patch(c, TU_HEADER, d, n, sof + 9, &ncomp[i], 1, name, what);
    }
    static const uint8_t samp[] = {0x00, 0x01, 0x10, 0x50, 0x05, 0x55, 0x44, 0x41, 0x14, 0xff};
    for (unsigned k = 0; k < nf && k < 2; k++) {
        for (size_t i = 0; i < sizeof samp; i++) {
            snprintf(what, sizeof what, "component %u sampling factors %ux%u", k, samp[i] >> 4,
                     samp[i] & 15u);
            add_patch(c, TU_HEADER, d, n, sof + 11 + 3 * k, &samp[i], 1, name, what);
        }
    }
    static const uint8_t tq[] = {1, 3, 4, 255};
    for (size_t i = 0; i < sizeof tq; i++) {
        snprintf(what, sizeof what, "component 0 quantisation table %u", tq[i]);
        add_patch(c, TU_HEADER, d, n, sof + 12, &tq[i], 1, name, what);
    }
    if (nf >= 2)
        add_patch(c, TU_HEADER, d, n, sof + 13, d + sof + 10, 1, name,
                  "component 1 has component 0's id");
    static const uint8_t type[] = {0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc9, 0xca, 0xcb, 0xcf};
    for (size_t i = 0; i < sizeof type; i++) {
        if (type[i] == d[sof + 1])
            continue;
        snprintf(what, sizeof what, "SOF%u instead of SOF%u", type[i] & 15u, d[sof + 1] & 15u);
        add_patch(c, TU_HEADER, d, n, sof + 1, &type[i], 1, name, what);
    }
}

static void jpeg_lengths(tu_corpus *c, const char *name, const uint8_t *d, size_t n, int marker,
                         const char *seg)
{
    size_t at = jseg(d, n, marker);
    if (at == 0)
        return;
    unsigned len0 = get16(d + at + 2);
    const unsigned lens[] = {0, 1, 2, 3, len0 - 1, len0 + 1, 0xfff0, 0xffff};
    char what[64];
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        uint8_t b[2];
        put16(b, lens[i]);
        snprintf(what, sizeof what, "%s length %u (was %u)", seg, lens[i], len0);
        add_patch(c, TU_HEADER, d, n, at + 2, b, 2, name, what);
    }
}

static void jpeg_tables(tu_corpus *c, const char *name, const uint8_t *d, size_t n)
{
    char what[64];
    size_t dqt = jseg(d, n, 0xdb), dht = jseg(d, n, 0xc4);
    jpeg_lengths(c, name, d, n, 0xdb, "DQT");
    jpeg_lengths(c, name, d, n, 0xc4, "DHT");
    static const uint8_t pq_tq[] = {0x10, 0x04, 0x1f, 0xff};
    for (size_t i = 0; dqt && i < sizeof pq_tq; i++) {
        snprintf(what, sizeof what, "DQT precision/id byte 0x%02x", pq_tq[i]);
        add_patch(c, TU_HEADER, d, n, dqt + 4, &pq_tq[i], 1, name, what);
    }
    static const uint8_t zeros[64];
    if (dqt)
        add_patch(c, TU_HEADER, d, n, dqt + 5, zeros, 64, name, "DQT of zeros");
    static const uint8_t tc_th[] = {0x02, 0x04, 0x20, 0xff};
    for (size_t i = 0; dht && i < sizeof tc_th; i++) {
        snprintf(what, sizeof what, "DHT class/id byte 0x%02x", tc_th[i]);
        add_patch(c, TU_HEADER, d, n, dht + 4, &tc_th[i], 1, name, what);
    }
    if (dht) {
        uint8_t ff[16], two = 2;
        memset(ff, 0xff, sizeof ff);
        add_patch(c, TU_HEADER, d, n, dht + 5, ff, 1, name, "DHT: 255 codes of length 1");
        add_patch(c, TU_HEADER, d, n, dht + 5, ff, 16, name, "DHT: 255 codes of every length");
        add_patch(c, TU_HEADER, d, n, dht + 5, zeros, 16, name, "DHT: no codes");
        add_patch(c, TU_HEADER, d, n, dht + 5, &two, 1, name, "DHT: 2 codes of length 1");
    }
}

static void jpeg_scan_fields(tu_corpus *c, const char *name, const uint8_t *d, size_t n)
{
    size_t sos = jseg(d, n, 0xda);
    if (sos == 0)
        return;
    char what[64];
    unsigned ns = d[sos + 4];
    jpeg_lengths(c, name, d, n, 0xda, "SOS");
    static const uint8_t count[] = {0, 2, 4, 5, 255};
    for (size_t i = 0; i < sizeof count; i++) {
        if (count[i] == ns)
            continue;
        snprintf(what, sizeof what, "SOS component count %u (was %u)", count[i], ns);
        add_patch(c, TU_HEADER, d, n, sos + 4, &count[i], 1, name, what);
    }
    static const uint8_t sel[] = {0, 99};
    for (size_t i = 0; i < sizeof sel; i++) {
        snprintf(what, sizeof what, "SOS component selector %u", sel[i]);
        add_patch(c, TU_HEADER, d, n, sos + 5, &sel[i], 1, name, what);
    }
    if (ns >= 2)
        add_patch(c, TU_HEADER, d, n, sos + 7, d + sos + 5, 1, name, "SOS names a component twice");
    static const uint8_t tables[] = {0x22, 0x44, 0xff};
    for (size_t i = 0; i < sizeof tables; i++) {
        snprintf(what, sizeof what, "SOS Huffman tables 0x%02x", tables[i]);
        add_patch(c, TU_HEADER, d, n, sos + 6, &tables[i], 1, name, what);
    }
    size_t ss = sos + 5 + 2 * (size_t)ns;
    static const uint8_t spectral[][3] = {{1, 63, 0},    {0, 64, 0},    {64, 0, 0},   {0, 255, 0},
                                          {0, 63, 0x11}, {0, 63, 0xff}, {0, 0, 0x0d}, {63, 1, 0}};
    for (size_t i = 0; i < sizeof spectral / sizeof spectral[0]; i++) {
        snprintf(what, sizeof what, "SOS Ss=%u Se=%u AhAl=0x%02x (was %u %u 0x%02x)",
                 spectral[i][0], spectral[i][1], spectral[i][2], d[ss], d[ss + 1], d[ss + 2]);
        add_patch(c, TU_HEADER, d, n, ss, spectral[i], 3, name, what);
    }
}

static void jpeg_structure(tu_corpus *c, const char *name, const uint8_t *d, size_t n)
{
    size_t sof = jsof(d, n), sos = jseg(d, n, 0xda), dri = jseg(d, n, 0xdd);
    size_t hdr = jpeg_headers_end(d, n);
    static const uint8_t soi_eoi[] = {0xff, 0xd8, 0xff, 0xd9}, eoi[] = {0xff, 0xd9};
    char what[64];
    tu_corpus_add(c, TU_HEADER, soi_eoi, 4, "%s: SOI EOI", name);
    tu_corpus_add(c, TU_HEADER, soi_eoi, 3, "%s: SOI ff", name);
    add_splice(c, TU_HEADER, d, n, sos, n - sos, eoi, 2, name, "no scan: EOI after the tables");
    add_splice(c, TU_HEADER, d, n, hdr, 0, eoi, 2, name, "EOI right after SOS");
    add_splice(c, TU_HEADER, d, n, sof, 2 + get16(d + sof + 2), NULL, 0, name, "no SOF");
    add_splice(c, TU_HEADER, d, n, sof, 0, d + sof, 2 + get16(d + sof + 2), name, "SOF twice");
    add_splice(c, TU_HEADER, d, n, jseg(d, n, 0xc4), 2 + get16(d + jseg(d, n, 0xc4) + 2), NULL, 0,
               name, "the first DHT removed");
    add_splice(c, TU_HEADER, d, n, jseg(d, n, 0xdb), 2 + get16(d + jseg(d, n, 0xdb) + 2), NULL, 0,
               name, "the first DQT removed");
    add_splice(c, TU_HEADER, d, n, 2, 0, soi_eoi, 2, name, "SOI twice");
    static const uint8_t tem[] = {0xff, 0x01}, rst[] = {0xff, 0xd0};
    add_splice(c, TU_HEADER, d, n, sof, 0, tem, 2, name, "TEM marker before SOF");
    add_splice(c, TU_HEADER, d, n, sof, 0, rst, 2, name, "RST0 marker before SOF");
    uint8_t fill[1000];
    memset(fill, 0xff, sizeof fill);
    add_splice(c, TU_HEADER, d, n, sof, 0, fill, sizeof fill, name, "1000 fill bytes before SOF");
    /* a restart interval: inserted, changed, or one that was there removed */
    static const unsigned intervals[] = {0, 1, 2, 65535};
    for (size_t i = 0; i < sizeof intervals / sizeof intervals[0]; i++) {
        uint8_t seg[6] = {0xff, 0xdd, 0, 4};
        put16(seg + 4, intervals[i]);
        snprintf(what, sizeof what, "DRI %u %s", intervals[i], dri ? "instead" : "inserted");
        if (dri)
            add_patch(c, TU_HEADER, d, n, dri + 4, seg + 4, 2, name, what);
        else
            add_splice(c, TU_HEADER, d, n, sof, 0, seg, sizeof seg, name, what);
    }
    if (dri)
        add_splice(c, TU_HEADER, d, n, dri, 6, NULL, 0, name, "DRI removed");
    /* APP and COM segments that claim more than there is, and many small ones */
    uint8_t com[4] = {0xff, 0xfe, 0xff, 0xff};
    add_splice(c, TU_HEADER, d, n, 2, 0, com, 4, name, "COM of 65535 bytes, 2 there");
    uint8_t app[4] = {0xff, 0xe1, 0x00, 0x00};
    add_splice(c, TU_HEADER, d, n, 2, 0, app, 4, name, "APP1 of length 0");
    buf many = {0};
    for (int i = 0; i < 2000; i++) {
        static const uint8_t small[] = {0xff, 0xef, 0x00, 0x06, 'x', 'y', 'z', 'w'};
        buf_put(&many, small, sizeof small);
    }
    add_splice(c, TU_HEADER, d, n, 2, 0, many.p, many.n, name, "2000 APP15 segments");
    free(many.p);
}

int tu_add_jpeg_headers(tu_corpus *c, const char *name, const uint8_t *d, size_t n)
{
    int before = c->n;
    size_t sof = jsof(d, n);
    if (sof == 0 || jseg(d, n, 0xda) == 0 || jseg(d, n, 0xdb) == 0 || jseg(d, n, 0xc4) == 0) {
        fprintf(stderr, "mutate: %s lacks a DQT, DHT, SOF or SOS\n", name);
        return 0;
    }
    jpeg_sof_fields(c, name, d, n, sof);
    jpeg_tables(c, name, d, n);
    jpeg_scan_fields(c, name, d, n);
    jpeg_lengths(c, name, d, n, 0xe0, "APP0");
    jpeg_structure(c, name, d, n);
    return c->n - before;
}

/* ---- PNG headers -------------------------------------------------------------------------- */

static void png_ihdr_fields(tu_corpus *c, const char *name, const uint8_t *d, size_t n)
{
    uint32_t w0 = get32(d + 16), h0 = get32(d + 20);
    const uint32_t extreme[] = {0, 1, 65535, 65536, 0x7fffffffu, 0x80000000u, 0xffffffffu};
    const uint32_t both[][2] = {{65535, 65535}, {16384, 16384}, {16385, 16384},
                                {4000, 4000},   {5000, 5000},   {2 * w0, 2 * h0},
                                {w0 + 1, h0},   {w0, h0 + 1},   {w0 / 2, h0 / 2}};
    char what[96];
    uint8_t b[8];
    for (size_t i = 0; i < sizeof extreme / sizeof extreme[0]; i++) {
        put32(b, extreme[i]);
        snprintf(what, sizeof what, "width %u (was %u)", extreme[i], w0);
        add_ihdr(c, d, n, 0, b, 4, name, what);
        snprintf(what, sizeof what, "height %u (was %u)", extreme[i], h0);
        add_ihdr(c, d, n, 4, b, 4, name, what);
    }
    for (size_t i = 0; i < sizeof both / sizeof both[0]; i++) {
        put32(b, both[i][0]);
        put32(b + 4, both[i][1]);
        snprintf(what, sizeof what, "%ux%u (was %ux%u)", both[i][0], both[i][1], w0, h0);
        add_ihdr(c, d, n, 0, b, 8, name, what);
    }
    /* bit depth (byte 8), color type (9), compression (10), filter (11), interlace (12) */
    static const struct {
        uint8_t off, v;
    } fields[] = {{8, 0},    {8, 1},  {8, 2},   {8, 3},  {8, 4},   {8, 5},  {8, 7},    {8, 8},
                  {8, 16},   {8, 32}, {8, 255}, {9, 0},  {9, 1},   {9, 2},  {9, 3},    {9, 4},
                  {9, 5},    {9, 6},  {9, 7},   {9, 8},  {9, 255}, {10, 1}, {10, 255}, {11, 1},
                  {11, 255}, {12, 0}, {12, 1},  {12, 2}, {12, 255}};
    static const char *const field[] = {"bit depth", "color type", "compression", "filter",
                                        "interlace"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (d[16 + fields[i].off] == fields[i].v)
            continue;
        snprintf(what, sizeof what, "%s %u (was %u)", field[fields[i].off - 8], fields[i].v,
                 d[16 + fields[i].off]);
        add_ihdr(c, d, n, fields[i].off, &fields[i].v, 1, name, what);
    }
    /* an IHDR of 12 and of 14 bytes, CRC right */
    for (uint32_t len = 12; len <= 14; len += 2) {
        uint8_t data[14] = {0};
        memcpy(data, d + 16, 13);
        buf ch = {0};
        chunk_put(&ch, "IHDR", data, len, false);
        snprintf(what, sizeof what, "IHDR of %u bytes", len);
        add_splice(c, TU_HEADER, d, n, 8, 25, ch.p, ch.n, name, what);
        free(ch.p);
    }
    uint8_t crc = d[29] ^ 0x40;
    add_patch(c, TU_HEADER, d, n, 29, &crc, 1, name, "IHDR CRC wrong");
}

static void png_lengths_and_order(tu_corpus *c, const char *name, const uint8_t *d, size_t n)
{
    size_t idat = pchunk(d, n, "IDAT", 8), iend = pchunk(d, n, "IEND", 8);
    char what[96];
    const uint32_t lens[] = {0, 0x7fffffffu, 0x80000000u, 0xfffffff0u, 0xffffffffu};
    for (size_t i = 0; idat && i < sizeof lens / sizeof lens[0]; i++) {
        uint8_t b[4];
        put32(b, lens[i]);
        snprintf(what, sizeof what, "first IDAT length %u (was %u)", lens[i], get32(d + idat));
        add_patch(c, TU_HEADER, d, n, idat, b, 4, name, what);
    }
    /* ancillary chunks: with a wrong CRC; claiming 2^32 - 1 bytes */
    buf ch = {0};
    chunk_put(&ch, "tEXt", "a\0b", 3, true);
    add_after_ihdr(c, TU_HEADER, d, n, &ch, name, "tEXt with a wrong CRC");
    put32(ch.p, 0xffffffffu);
    add_after_ihdr(c, TU_HEADER, d, n, &ch, name, "tEXt claiming 4 GiB");
    ch.n = 0;
    chunk_put(&ch, "ABCD", "x", 1, false);
    add_after_ihdr(c, TU_HEADER, d, n, &ch, name, "unknown critical chunk ABCD");
    ch.n = 0;
    chunk_put(&ch, "IEND", NULL, 0, false);
    add_after_ihdr(c, TU_HEADER, d, n, &ch, name, "IEND right after IHDR");
    free(ch.p);
    /* order: no IDAT, no IEND, IDAT before IHDR, IHDR twice */
    if (idat) {
        buf b = {0};
        for (size_t at = 8; at + 12 <= n && at < iend; at += pchunk_size(d, at)) {
            if (memcmp(d + at + 4, "IDAT", 4) != 0)
                buf_put(&b, d + at, pchunk_size(d, at));
        }
        buf out = {0};
        buf_put(&out, d, 8); /* the signature */
        buf_put(&out, b.p, b.n);
        buf_put(&out, d + iend, n - iend);
        tu_corpus_add(c, TU_HEADER, out.p, out.n, "%s: no IDAT", name);
        free(out.p);
        free(b.p);
        add_splice(c, TU_HEADER, d, n, 8, 0, d + idat, pchunk_size(d, idat), name,
                   "the first IDAT also before IHDR");
    }
    if (iend)
        add_splice(c, TU_HEADER, d, n, iend, n - iend, NULL, 0, name, "no IEND");
    add_splice(c, TU_HEADER, d, n, 33, 0, d + 8, 25, name, "IHDR twice");
}

static void png_palette(tu_corpus *c, const char *name, const uint8_t *d, size_t n)
{
    size_t plte = pchunk(d, n, "PLTE", 8);
    uint8_t pal[771];
    for (size_t i = 0; i < sizeof pal; i++)
        pal[i] = (uint8_t)(i * 7);
    char what[64];
    buf ch = {0};
    if (d[25] != 3) { /* not a palette image: a suggested palette is allowed */
        chunk_put(&ch, "PLTE", pal, 768, false);
        add_after_ihdr(c, TU_HEADER, d, n, &ch, name, "suggested PLTE of 256 entries");
        free(ch.p);
        return;
    }
    if (plte == 0)
        return;
    add_splice(c, TU_HEADER, d, n, plte, pchunk_size(d, plte), NULL, 0, name, "no PLTE");
    static const uint32_t lens[] = {0, 6, 771, 769};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        ch.n = 0;
        chunk_put(&ch, "PLTE", pal, lens[i], false);
        snprintf(what, sizeof what, "PLTE of %u bytes (was %u)", lens[i], get32(d + plte));
        add_splice(c, TU_HEADER, d, n, plte, pchunk_size(d, plte), ch.p, ch.n, name, what);
    }
    ch.n = 0;
    uint8_t alpha[300];
    memset(alpha, 0x80, sizeof alpha);
    chunk_put(&ch, "tRNS", alpha, sizeof alpha, false);
    size_t after = plte + pchunk_size(d, plte), trns = pchunk(d, n, "tRNS", 8);
    add_splice(c, TU_HEADER, d, n, trns ? trns : after, trns ? pchunk_size(d, trns) : 0, ch.p, ch.n,
               name, "tRNS of 300 entries");
    free(ch.p);
}

int tu_add_png_headers(tu_corpus *c, const char *name, const uint8_t *d, size_t n)
{
    int before = c->n;
    if (n < 45 || memcmp(d + 12, "IHDR", 4) != 0 || get32(d + 8) != 13) {
        fprintf(stderr, "mutate: %s does not start with IHDR\n", name);
        return 0;
    }
    png_ihdr_fields(c, name, d, n);
    png_lengths_and_order(c, name, d, n);
    png_palette(c, name, d, n);
    return c->n - before;
}

/* ---- bombs ---------------------------------------------------------------------------------- */

/* A zlib stream of `bytes` zero bytes (about bytes / 1000 long). */
static void zeros_stream(size_t bytes, buf *out)
{
    static uint8_t zeros[1 << 20], chunk[1 << 16];
    z_stream z = {0};
    if (deflateInit(&z, 9) != Z_OK)
        abort();
    for (size_t left = bytes;;) {
        size_t k = left < sizeof zeros ? left : sizeof zeros;
        z.next_in = zeros;
        z.avail_in = (uInt)k;
        left -= k;
        int flush = left ? Z_NO_FLUSH : Z_FINISH, rc;
        do {
            z.next_out = chunk;
            z.avail_out = sizeof chunk;
            rc = deflate(&z, flush);
            buf_put(out, chunk, sizeof chunk - z.avail_out);
        } while (z.avail_out == 0);
        if (rc == Z_STREAM_END)
            break;
    }
    deflateEnd(&z);
}

int tu_add_png_bombs(tu_corpus *c, const char *name, const uint8_t *d, size_t n)
{
    int before = c->n;
    static buf z128, z32; /* made once per process (deflating 160 MiB takes a while) */
    buf data = {0}, ch = {0};
    if (z128.n == 0) {
        zeros_stream((size_t)128 << 20, &z128);
        zeros_stream((size_t)32 << 20, &z32);
    }
    static const struct {
        const char *type, *head;
        size_t head_len;
    } text[] = {
        {"zTXt", "Comment\0\0", 9}, {"iCCP", "ICC\0\0", 5}, {"iTXt", "Comment\0\1\0\0\0", 12}};
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++) {
        data.n = ch.n = 0;
        buf_put(&data, text[i].head, text[i].head_len);
        buf_put(&data, z128.p, z128.n);
        chunk_put(&ch, text[i].type, data.p, (uint32_t)data.n, false);
        char what[64];
        snprintf(what, sizeof what, "%s inflating to 128 MiB", text[i].type);
        add_after_ihdr(c, TU_BOMB, d, n, &ch, name, what);
    }
    data.n = ch.n = 0;
    buf_put(&data, "Comment\0\0", 9);
    buf_put(&data, z32.p, z32.n);
    for (int i = 0; i < 4; i++)
        chunk_put(&ch, "zTXt", data.p, (uint32_t)data.n, false);
    add_after_ihdr(c, TU_BOMB, d, n, &ch, name, "4 zTXt inflating to 32 MiB each");
    ch.n = 0;
    for (int i = 0; i < 10000; i++)
        chunk_put(&ch, "tEXt", "key\0value", 9, false);
    add_after_ihdr(c, TU_BOMB, d, n, &ch, name, "10000 tEXt chunks");
    /* all IDATs replaced by one stream of 128 MiB of zeros (filter 0, black rows, then more) */
    size_t idat = pchunk(d, n, "IDAT", 8), iend = pchunk(d, n, "IEND", 8);
    if (idat && iend > idat) {
        ch.n = 0;
        chunk_put(&ch, "IDAT", z128.p, (uint32_t)z128.n, false);
        add_splice(c, TU_BOMB, d, n, idat, iend - idat, ch.p, ch.n, name,
                   "IDAT inflating to 128 MiB");
    }
    free(data.p);
    free(ch.p);
    return c->n - before;
}

/* ---- a progressive JPEG flooded with scans ------------------------------------------------- */

/* Entropy-coded bits, most significant first, 0xff bytes stuffed with 0x00. */
typedef struct bits {
    buf *out;
    uint32_t acc;
    int n;
} bits;

static void bits_put(bits *b, uint32_t v, int k)
{
    for (int i = k - 1; i >= 0; i--) {
        b->acc = b->acc << 1 | ((v >> i) & 1u);
        if (++b->n == 8) {
            uint8_t byte = (uint8_t)b->acc;
            buf_put(b->out, &byte, 1);
            if (byte == 0xff)
                buf_put(b->out, "", 1);
            b->acc = 0;
            b->n = 0;
        }
    }
}

static void bits_flush(bits *b)
{
    if (b->n)
        bits_put(b, 0x7f, 8 - b->n); /* pad with 1 bits */
}

int tu_add_jpeg_scan_flood(tu_corpus *c, int side, int ac_scans)
{
    buf o = {0};
    uint8_t seg[80];
    buf_put(&o, "\xff\xd8", 2);
    /* DQT: table 0, all ones */
    memcpy(seg, "\xff\xdb\x00\x43\x00", 5);
    memset(seg + 5, 1, 64);
    buf_put(&o, seg, 69);
    /* SOF2: 8-bit, side x side, one component (id 1, 1x1, table 0) */
    memcpy(seg, "\xff\xc2\x00\x0b\x08", 5);
    put16(seg + 5, (unsigned)side);
    put16(seg + 7, (unsigned)side);
    memcpy(seg + 9, "\x01\x01\x11\x00", 4);
    buf_put(&o, seg, 13);
    /* DHT DC 0: one code, '0', for category 0. DHT AC 0: 15 codes of 4 bits, code r for EOBr
     * (symbol r << 4: a run of 2^r + r extra bits of end-of-band blocks). */
    buf_put(&o, "\xff\xc4\x00\x14\x00\x01", 6);
    buf_put(&o, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 15);
    buf_put(&o, "\x00", 1);
    buf_put(&o, "\xff\xc4\x00\x22\x10\x00\x00\x00\x0f", 9);
    buf_put(&o, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
    for (unsigned r = 0; r < 15; r++) {
        uint8_t s = (uint8_t)(r << 4);
        buf_put(&o, &s, 1);
    }
    long blocks = (long)((side + 7) / 8) * ((side + 7) / 8);
    /* the DC scan: every block's DC difference is 0 */
    buf_put(&o, "\xff\xda\x00\x08\x01\x01\x00\x00\x00\x00", 10);
    bits b = {.out = &o};
    for (long i = 0; i < blocks; i++)
        bits_put(&b, 0, 1);
    bits_flush(&b);
    /* AC scans, Ss=1 Se=63 Ah=Al=0, each all end-of-band runs */
    for (int scan = 0; scan < ac_scans; scan++) {
        buf_put(&o, "\xff\xda\x00\x08\x01\x01\x00\x01\x3f\x00", 10);
        for (long left = blocks; left > 0;) {
            long run = left < 32767 ? left : 32767;
            int r = 0;
            while ((2L << r) <= run)
                r++;
            bits_put(&b, (uint32_t)r, 4);
            bits_put(&b, (uint32_t)(run - (1L << r)), r);
            left -= run;
        }
        bits_flush(&b);
    }
    buf_put(&o, "\xff\xd9", 2);
    int k = tu_corpus_add(c, TU_BOMB, o.p, o.n,
                          "progressive %dx%d gray JPEG of 1 + %d scans (%zu bytes)", side, side,
                          ac_scans, o.n);
    free(o.p);
    return k;
}
