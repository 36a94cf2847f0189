/* tfrecord_parse.c: TFRecord framing and tf.train.Example decoding (tfrecord_parse.h).
 *
 * The Example schema (tensorflow/core/example/{example,feature}.proto), by field number:
 *   Example { Features features = 1; }
 *   Features { map<string, Feature> feature = 1; }  -- entries { string key = 1; Feature value = 2;
 * } Feature { oneof { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3;
 * } } BytesList { repeated bytes value = 1; }  FloatList { repeated float value = 1; } Int64List {
 * repeated int64 value = 1; } Unknown fields are skipped by their wire type; groups (wire types 3,
 * 4) and wire types 6, 7 are errors. Invariant: a cursor (p, end) never passes end; every length is
 * compared with end - p before p moves.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ops/readers/tfrecord_parse.h"

/* ---- CRC-32C ------------------------------------------------------------------------------
 * Every record's payload is checked, so this is on the reader's hot path: the byte-at-a-time
 * table ran at about 0.4 GB/s and bounded readers.tfrecord at 0.12x of plain files. On x86-64
 * with SSE4.2 (checked at run time) the crc32 instruction does 8 bytes a step; elsewhere eight
 * tables (slicing-by-8) do. Both are checked against the bitwise definition in test_tfrecord. */

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;
static int crc_hw;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xFF];
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    crc_hw = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t crc_sliced(uint32_t c, const uint8_t *p, size_t n)
{
    for (; n >= 8; p += 8, n -= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                           (uint32_t)p[3] << 24);
        uint32_t hi =
            (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
        c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^
            crc_table[5][(lo >> 16) & 0xFF] ^ crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xFF] ^
            crc_table[2][(hi >> 8) & 0xFF] ^ crc_table[1][(hi >> 16) & 0xFF] ^
            crc_table[0][hi >> 24];
    }
    for (; n > 0; p++, n--)
        c = crc_table[0][(c ^ *p) & 0xFF] ^ (c >> 8);
    return c;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t c, const uint8_t *p, size_t n)
{
    uint64_t c64 = c;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c64 = __builtin_ia32_crc32di(c64, v);
    }
    c = (uint32_t)c64;
    for (; n > 0; p++, n--)
        c = __builtin_ia32_crc32qi(c, *p);
    return c;
}
#endif

uint32_t sl__crc32c(const uint8_t *p, size_t n)
{
    pthread_once(&crc_once, crc_init);
    uint32_t c = 0xFFFFFFFFu;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (crc_hw)
        return crc_sse42(c, p, n) ^ 0xFFFFFFFFu;
#endif
    return crc_sliced(c, p, n) ^ 0xFFFFFFFFu;
}

/* The portable path alone, for the tests (both paths against the bitwise definition). */
uint32_t sl__crc32c_sliced(const uint8_t *p, size_t n)
{
    pthread_once(&crc_once, crc_init);
    return crc_sliced(0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu;
}

uint32_t sl__tfr_masked_crc(const uint8_t *p, size_t n)
{
    uint32_t c = sl__crc32c(p, n);
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

bool sl__tfr_header(const uint8_t hdr[SL__TFR_HEADER], uint64_t *len, char *err, size_t errlen)
{
    uint32_t want = le32(hdr + 8), got = sl__tfr_masked_crc(hdr, 8);
    *len = le64(hdr);
    if (want != got) {
        snprintf(err, errlen,
                 "bad CRC of the record's length field (stored 0x%08x, computed 0x%08x): "
                 "not a TFRecord file, or corrupt",
                 want, got);
        return false;
    }
    return true;
}

bool sl__tfr_check_payload(const uint8_t *payload, uint64_t len, char *err, size_t errlen)
{
    uint32_t want = le32(payload + len), got = sl__tfr_masked_crc(payload, (size_t)len);
    if (want != got) {
        snprintf(err, errlen,
                 "bad CRC of the record's %llu-byte payload (stored 0x%08x, computed 0x%08x)",
                 (unsigned long long)len, want, got);
        return false;
    }
    return true;
}

/* ---- protobuf wire format ----------------------------------------------------------------- */

typedef sl__pb cur;

bool sl__pb_varint(sl__pb *c, uint64_t *v)
{
    uint64_t x = 0;
    for (int s = 0; s < 70; s += 7) {
        if (c->p == c->end)
            return false;
        uint8_t b = *c->p++;
        x |= (uint64_t)(b & 0x7F) << s;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
        if (s == 63)
            return false; /* an 11th byte: not a varint */
    }
    return false;
}

typedef sl__pb_field field;

bool sl__pb_next(sl__pb *c, sl__pb_field *f, const char *what, char *err, size_t errlen)
{
    uint64_t key;
    size_t at = 0;
    if (!sl__pb_varint(c, &key)) {
        snprintf(err, errlen, "%s: truncated or malformed field key", what);
        return false;
    }
    f->number = key >> 3;
    f->wire = (int)(key & 7);
    f->data = NULL;
    f->len = 0;
    switch (f->wire) {
    case 0:
        if (sl__pb_varint(c, &f->value))
            return true;
        break;
    case 1:
    case 5:
        at = f->wire == 1 ? 8 : 4;
        if ((size_t)(c->end - c->p) >= at) {
            f->data = c->p;
            f->len = at;
            c->p += at;
            return true;
        }
        break;
    case 2: {
        uint64_t len;
        if (sl__pb_varint(c, &len) && len <= (uint64_t)(c->end - c->p)) {
            f->data = c->p;
            f->len = (size_t)len;
            c->p += len;
            return true;
        }
        break;
    }
    default:
        snprintf(err, errlen, "%s: unsupported protobuf wire type %d (field %llu)", what, f->wire,
                 (unsigned long long)f->number);
        return false;
    }
    snprintf(err, errlen, "%s: field %llu (wire type %d) runs past the end of its message", what,
             (unsigned long long)f->number, f->wire);
    return false;
}

/* Parses one map entry; *match when its key equals name, then *value is its Feature. */
static bool parse_entry(const uint8_t *p, size_t n, const char *name, bool *match,
                        sl__tf_feature *value, char *err, size_t errlen)
{
    cur c = {p, p + n};
    const uint8_t *key = (const uint8_t *)"", *val = NULL;
    size_t key_len = 0, val_len = 0;
    field f;
    while (c.p < c.end) {
        if (!sl__pb_next(&c, &f, "Example feature map entry", err, errlen))
            return false;
        if (f.number == 1 && f.wire == 2) {
            key = f.data;
            key_len = f.len;
        } else if (f.number == 2 && f.wire == 2) {
            val = f.data;
            val_len = f.len;
        }
    }
    *match = key_len == strlen(name) && memcmp(key, name, key_len) == 0;
    if (!*match)
        return true;
    *value = (sl__tf_feature){SL__TF_NONE, NULL, 0};
    c = (cur){val, val ? val + val_len : NULL};
    while (c.p < c.end) {
        if (!sl__pb_next(&c, &f, "Feature", err, errlen))
            return false;
        if (f.wire == 2 && f.number >= 1 && f.number <= 3)
            *value = (sl__tf_feature){(sl__tf_kind)f.number, f.data, f.len};
    }
    return true;
}

bool sl__tf_example_find(const uint8_t *ex, size_t n, const char *name, sl__tf_feature *out,
                         char *err, size_t errlen)
{
    *out = (sl__tf_feature){SL__TF_NONE, NULL, 0};
    cur c = {ex, ex + n};
    field f, g;
    while (c.p < c.end) {
        if (!sl__pb_next(&c, &f, "Example", err, errlen))
            return false;
        if (f.number != 1 || f.wire != 2)
            continue;
        cur fs = {f.data, f.data + f.len}; /* Features */
        while (fs.p < fs.end) {
            if (!sl__pb_next(&fs, &g, "Example features", err, errlen))
                return false;
            bool match = false;
            sl__tf_feature v;
            if (g.number == 1 && g.wire == 2) {
                if (!parse_entry(g.data, g.len, name, &match, &v, err, errlen))
                    return false;
                if (match)
                    *out = v;
            }
        }
    }
    return true;
}

bool sl__tf_list_numbers(const sl__tf_feature *ft, void *out, int64_t *count, char *err,
                         size_t errlen)
{
    const bool is_float = ft->kind == SL__TF_FLOAT;
    const char *what = is_float ? "FloatList" : "Int64List";
    int64_t k = 0, max = out ? *count : INT64_MAX;
    cur c = {ft->list, ft->list ? ft->list + ft->list_len : NULL};
    field f;
    while (c.p < c.end) {
        if (!sl__pb_next(&c, &f, what, err, errlen))
            return false;
        if (f.number != 1)
            continue;
        if (is_float && (f.wire == 5 || f.wire == 2)) {
            if (f.len % 4) {
                snprintf(err, errlen, "%s: packed floats of %zu bytes, not a multiple of 4", what,
                         f.len);
                return false;
            }
            for (size_t i = 0; i < f.len; i += 4, k++)
                if (out && k < max) {
                    uint32_t b = le32(f.data + i);
                    memcpy((float *)out + k, &b, 4);
                }
        } else if (!is_float && f.wire == 0) {
            if (out && k < max)
                ((int64_t *)out)[k] = (int64_t)f.value;
            k++;
        } else if (!is_float && f.wire == 2) {
            cur v = {f.data, f.data + f.len};
            uint64_t x;
            while (v.p < v.end) {
                if (!sl__pb_varint(&v, &x)) {
                    snprintf(err, errlen, "%s: malformed packed varint", what);
                    return false;
                }
                if (out && k < max)
                    ((int64_t *)out)[k] = (int64_t)x;
                k++;
            }
        } else {
            snprintf(err, errlen, "%s: value with wire type %d", what, f.wire);
            return false;
        }
    }
    if (out && k != max) {
        snprintf(err, errlen, "%s: has %lld values, expected %lld", what, (long long)k,
                 (long long)max);
        return false;
    }
    *count = k;
    return true;
}

bool sl__tf_list_bytes(const sl__tf_feature *ft, int64_t index, const uint8_t **value, size_t *len,
                       int64_t *count, char *err, size_t errlen)
{
    int64_t k = 0;
    *value = NULL;
    *len = 0;
    cur c = {ft->list, ft->list ? ft->list + ft->list_len : NULL};
    field f;
    while (c.p < c.end) {
        if (!sl__pb_next(&c, &f, "BytesList", err, errlen))
            return false;
        if (f.number != 1)
            continue;
        if (f.wire != 2) {
            snprintf(err, errlen, "BytesList: value with wire type %d", f.wire);
            return false;
        }
        if (k++ == index) {
            *value = f.data ? f.data : (const uint8_t *)"";
            *len = f.len;
        }
    }
    *count = k;
    return true;
}
