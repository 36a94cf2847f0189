/* caffe_parse.c: Caffe's Datum and Caffe2's TensorProtos (caffe_parse.h) on the protobuf wire
 * helper of tfrecord_parse.h.
 * Invariant: a cursor never passes its end (sl__pb_next checks every length first).
 */
#include <stdio.h>
#include <string.h>

#include "ops/readers/caffe_parse.h"
#include "ops/readers/tfrecord_parse.h"

static bool want_wire(const sl__pb_field *f, int wire, const char *what, const char *name,
                      char *err, size_t errlen)
{
    if (f->wire == wire)
        return true;
    snprintf(err, errlen, "%s: field %s (%llu) has wire type %d, expected %d", what, name,
             (unsigned long long)f->number, f->wire, wire);
    return false;
}

bool sl__caffe_datum(const uint8_t *v, size_t n, sl__datum *d, char *err, size_t errlen)
{
    static const char *const names[] = {"", "channels", "height", "width", "data", "label"};
    memset(d, 0, sizeof *d);
    sl__pb c = {v, v + n};
    sl__pb_field f;
    while (c.p < c.end) {
        if (!sl__pb_next(&c, &f, "Datum", err, errlen))
            return false;
        switch (f.number) {
        case 1:
        case 2:
        case 3:
        case 5:
            if (!want_wire(&f, 0, "Datum", names[f.number], err, errlen))
                return false;
            /* int32: the low 32 bits (a negative value is sign-extended to 10 bytes) */
            int32_t x = (int32_t)(uint32_t)f.value;
            if (f.number == 1)
                d->channels = x;
            else if (f.number == 2)
                d->height = x;
            else if (f.number == 3)
                d->width = x;
            else {
                d->label = x;
                d->has_label = true;
            }
            break;
        case 4:
            if (!want_wire(&f, 2, "Datum", "data", err, errlen))
                return false;
            d->data = f.data ? f.data : v;
            d->data_len = f.len;
            d->has_data = true;
            break;
        case 7:
            if (!want_wire(&f, 0, "Datum", "encoded", err, errlen))
                return false;
            d->encoded = f.value != 0;
            d->has_encoded = true;
            break;
        default: /* float_data (6) and unknown fields: not used */ break;
        }
    }
    return true;
}

/* One TensorProto's scalar fields. */
static bool tensor(const uint8_t *m, size_t n, sl__c2_tensor *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->msg = m;
    t->len = n;
    t->data_type = SL__C2_FLOAT;
    sl__pb c = {m, m + n};
    sl__pb_field f;
    while (c.p < c.end) {
        if (!sl__pb_next(&c, &f, "TensorProto", err, errlen))
            return false;
        if (f.number == 1 && f.wire == 0) {
            if (t->ndims == SL__C2_MAX_DIMS) {
                snprintf(err, errlen, "TensorProto: more than %d dims", SL__C2_MAX_DIMS);
                return false;
            }
            t->dims[t->ndims++] = (int64_t)f.value;
        } else if (f.number == 1 && f.wire == 2) {
            sl__pb d = {f.data, f.data + f.len};
            uint64_t x;
            while (d.p < d.end) {
                if (!sl__pb_varint(&d, &x)) {
                    snprintf(err, errlen, "TensorProto: malformed packed dims");
                    return false;
                }
                if (t->ndims == SL__C2_MAX_DIMS) {
                    snprintf(err, errlen, "TensorProto: more than %d dims", SL__C2_MAX_DIMS);
                    return false;
                }
                t->dims[t->ndims++] = (int64_t)x;
            }
        } else if (f.number == 1) {
            return want_wire(&f, 0, "TensorProto", "dims", err, errlen);
        } else if (f.number == 2) {
            if (!want_wire(&f, 0, "TensorProto", "data_type", err, errlen))
                return false;
            t->data_type = (int64_t)f.value;
        } else if (f.number == 5) {
            if (!want_wire(&f, 2, "TensorProto", "byte_data", err, errlen))
                return false;
            t->has_byte_data = true;
            t->byte_data = f.data ? f.data : m;
            t->byte_len = f.len;
        } else if (f.number == 6) {
            if (!want_wire(&f, 2, "TensorProto", "string_data", err, errlen))
                return false;
            if (t->nstrings++ == 0) {
                t->string0 = f.data ? f.data : m;
                t->string0_len = f.len;
            }
        }
    }
    return true;
}

bool sl__c2_protos(const uint8_t *v, size_t n, sl__c2_tensor *t, int max, int *count, char *err,
                   size_t errlen)
{
    *count = 0;
    sl__pb c = {v, v + n};
    sl__pb_field f;
    while (c.p < c.end) {
        if (!sl__pb_next(&c, &f, "TensorProtos", err, errlen))
            return false;
        if (f.number != 1)
            continue;
        if (!want_wire(&f, 2, "TensorProtos", "protos", err, errlen))
            return false;
        if (*count < max) {
            char sub[200];
            if (!tensor(f.data ? f.data : v, f.len, &t[*count], sub, sizeof sub)) {
                snprintf(err, errlen, "protos[%d]: %s", *count, sub);
                return false;
            }
        }
        if (*count == INT32_MAX) {
            snprintf(err, errlen, "TensorProtos: too many protos");
            return false;
        }
        ++*count;
    }
    return true;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

bool sl__c2_numbers(const sl__c2_tensor *t, int field, void *out, int64_t max, int64_t *count,
                    char *err, size_t errlen)
{
    const char *what = field == SL__C2_F_FLOAT   ? "TensorProto float_data"
                       : field == SL__C2_F_INT32 ? "TensorProto int32_data"
                                                 : "TensorProto int64_data";
    int64_t k = 0;
    sl__pb c = {t->msg, t->msg ? t->msg + t->len : NULL};
    sl__pb_field f;
    while (c.p < c.end) {
        if (!sl__pb_next(&c, &f, "TensorProto", err, errlen))
            return false;
        if (f.number != (uint64_t)field)
            continue;
        if (field == SL__C2_F_FLOAT && (f.wire == 5 || f.wire == 2)) {
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
        } else if (field != SL__C2_F_FLOAT && (f.wire == 0 || f.wire == 2)) {
            sl__pb p = {f.data, f.data ? f.data + f.len : NULL}; /* NULL for a varint */
            uint64_t x = f.value;
            for (bool one = f.wire == 0; one || p.p < p.end; one = false) {
                if (!one && !sl__pb_varint(&p, &x)) {
                    snprintf(err, errlen, "%s: malformed packed varint", what);
                    return false;
                }
                if (out && k < max) {
                    if (field == SL__C2_F_INT32)
                        ((int32_t *)out)[k] = (int32_t)(uint32_t)x;
                    else
                        ((int64_t *)out)[k] = (int64_t)x;
                }
                k++;
                if (one)
                    break;
            }
        } else {
            snprintf(err, errlen, "%s: value with wire type %d", what, f.wire);
            return false;
        }
    }
    *count = k;
    return true;
}
