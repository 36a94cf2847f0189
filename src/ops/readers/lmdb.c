/* lmdb.c: what readers.caffe and readers.caffe2 share (lmdb.h; their definitions are caffe.c and
 * caffe2.c): reading Caffe / Caffe2 LMDB databases (liblmdb) — each
 * entry's value a serialized Datum (caffe) or TensorProtos (caffe2), parsed by caffe_parse.c —
 * one epoch after another, optionally shuffled and sharded (readers/reader.h).
 *
 * Exports: the sl__lmdb_* functions and aliases of lmdb.h.
 *
 * Invariant: after init the sample table (database, key) never changes: init opens every
 * database read-only (MDB_RDONLY | MDB_NOTLS | MDB_NOLOCK: no lock file, read transactions not
 * bound to threads) and walks its keys once in order, copying them. setup (serial) picks the
 * samples; setup_sample and run_sample each open a read transaction, look the key up (mdb_get:
 * the value stays in LMDB's map, never copied whole), parse it — setup_sample for the output
 * shapes, run_sample copying the parts into the outputs — and end the transaction. Nothing else
 * of the database is read. The outputs' dtypes and ranks are the first entry's (of the first
 * database); an entry that differs fails naming the database and the key.
 */
#include <inttypes.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sluice/op.h"

#include "core/core.h"
#include "ops/readers/caffe_parse.h"
#include "ops/readers/lmdb.h"
#include "ops/readers/reader.h"

typedef enum kind { CAFFE, CAFFE2 } kind;

static const sl__cursor_args cursor_args = {.random_shuffle = ARG_RANDOM_SHUFFLE,
                                            .seed = ARG_SEED,
                                            .shard_id = ARG_SHARD_ID,
                                            .num_shards = ARG_NUM_SHARDS,
                                            .stick_to_shard = ARG_STICK_TO_SHARD,
                                            .pad_last_batch = ARG_PAD_LAST_BATCH};

typedef struct db {
    char *path;
    MDB_env *env;
    MDB_dbi dbi;
} db;

typedef struct entry {
    int32_t db;
    uint32_t klen;
    int64_t koff; /* into reader.keys */
} entry;

/* What the outputs hold (from the arguments and the first entry). */
typedef struct layout {
    bool image, label, bbox;
    int additional;
    bool raw_image;   /* (H, W, C) uint8, else 1-D encoded bytes */
    sl_dtype label_t; /* caffe: int32; caffe2: float32 or int32 */
    sl_dtype add_t[MAX_ADDITIONAL];
    int label_type;     /* caffe2 */
    int64_t num_labels; /* caffe2 */
} layout;

typedef struct reader {
    kind kind;
    db *dbs;
    int ndbs;
    entry *e;
    int64_t n, cap;
    char *keys;
    int64_t keys_len, keys_cap;
    layout lay;
    sl__cursor cur; /* setup only */
} reader;

typedef sl__lmdb_sample sample;

/* ---- keys and errors ------------------------------------------------------------------------ */

/* The key as text: printable ASCII as is, other bytes as \xNN, at most ~60 bytes shown. */
static const char *key_text(const uint8_t *k, size_t n, char *buf, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 8 < cap; i++) {
        if (o > 60) {
            snprintf(buf + o, cap - o, "...");
            return buf;
        }
        if (k[i] >= 0x20 && k[i] < 0x7f && k[i] != '"' && k[i] != '\\')
            buf[o++] = (char)k[i];
        else
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", k[i]);
    }
    buf[o] = '\0';
    return buf;
}

static const char *entry_key(const reader *r, const entry *e, char *buf, size_t cap)
{
    return key_text((const uint8_t *)r->keys + e->koff, e->klen, buf, cap);
}

/* ---- the databases ----------------------------------------------------------------------- */

static bool push(reader *r, int d, const MDB_val *key)
{
    if (r->n == r->cap) {
        int64_t cap = r->cap ? 2 * r->cap : 256;
        entry *v = sl__realloc(r->e, (size_t)cap * sizeof *v);
        if (!v)
            return false;
        r->e = v;
        r->cap = cap;
    }
    if (r->keys_len + (int64_t)key->mv_size > r->keys_cap) {
        int64_t cap = r->keys_cap ? 2 * r->keys_cap : 4096;
        while (cap < r->keys_len + (int64_t)key->mv_size)
            cap *= 2;
        char *v = sl__realloc(r->keys, (size_t)cap);
        if (!v)
            return false;
        r->keys = v;
        r->keys_cap = cap;
    }
    if (key->mv_size)
        memcpy(r->keys + r->keys_len, key->mv_data, key->mv_size);
    r->e[r->n++] = (entry){.db = d, .klen = (uint32_t)key->mv_size, .koff = r->keys_len};
    r->keys_len += (int64_t)key->mv_size;
    return true;
}

static sl_status open_db(sl_op_init *ini, reader *r, int d, const char *path)
{
    db *b = &r->dbs[d];
    struct stat sb;
    if (!(b->path = sl__strdup(path)))
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    if (stat(path, &sb) != 0)
        return sl_init_fail(ini, SL_ENOTFOUND, "path \"%s\": no such LMDB database", path);
    unsigned flags = MDB_RDONLY | MDB_NOTLS | MDB_NOLOCK | (S_ISDIR(sb.st_mode) ? 0 : MDB_NOSUBDIR);
    int rc = mdb_env_create(&b->env);
    if (rc == 0)
        rc = mdb_env_set_maxreaders(b->env, 1024);
    if (rc == 0)
        rc = mdb_env_open(b->env, path, flags, 0444);
    MDB_txn *txn = NULL;
    if (rc == 0)
        rc = mdb_txn_begin(b->env, NULL, MDB_RDONLY, &txn);
    if (rc == 0)
        rc = mdb_dbi_open(txn, NULL, 0, &b->dbi);
    MDB_cursor *cur = NULL;
    if (rc == 0)
        rc = mdb_cursor_open(txn, b->dbi, &cur);
    MDB_val key, val;
    int64_t first = r->n;
    sl_status st = SL_OK;
    while (rc == 0 && (rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) == 0)
        if (!push(r, d, &key))
            st = sl_init_fail(ini, SL_ENOMEM, "out of memory listing the keys of \"%s\"", path);
    if (rc == MDB_NOTFOUND)
        rc = 0;
    if (cur)
        mdb_cursor_close(cur);
    if (txn)
        mdb_txn_abort(txn);
    if (st != SL_OK)
        return st;
    if (rc != 0)
        return sl_init_fail(ini, rc == MDB_INVALID || rc == MDB_CORRUPTED ? SL_ECORRUPT : SL_EIO,
                            "path \"%s\": cannot read the LMDB database: %s", path,
                            mdb_strerror(rc));
    if (r->n == first)
        return sl_init_fail(ini, SL_ENOTFOUND, "path \"%s\": the LMDB database is empty", path);
    return SL_OK;
}

/* Looks entry e up in a fresh read transaction (*txn: to abort after use). */
static int lookup(const reader *r, const entry *e, MDB_txn **txn, MDB_val *val)
{
    const db *b = &r->dbs[e->db];
    int rc = mdb_txn_begin(b->env, NULL, MDB_RDONLY, txn);
    if (rc != 0) {
        *txn = NULL;
        return rc;
    }
    MDB_val key = {.mv_size = e->klen, .mv_data = r->keys + e->koff};
    return mdb_get(*txn, b->dbi, &key, val);
}

/* ---- the values ---------------------------------------------------------------------------- */

/* One value's outputs: extents and where their bytes are (pointers into the value). */
typedef struct parsed {
    int64_t ishape[3];
    int indim;
    const uint8_t *image;
    size_t image_len;
    int32_t label;               /* caffe */
    sl__c2_tensor t[MAX_PROTOS]; /* caffe2 */
    int nprotos;
    int label_proto, add_proto, bbox_proto; /* -1: none */
    sl_dtype label_t;
    int64_t nlabels; /* the label output's length */
    sl_dtype add_t[MAX_ADDITIONAL];
    int64_t nadd[MAX_ADDITIONAL];
    int add_field[MAX_ADDITIONAL];
    int64_t nbbox;
} parsed;

static int num_field(int64_t data_type, sl_dtype *t)
{
    switch (data_type) {
    case SL__C2_FLOAT: *t = SL_DTYPE_FLOAT32; return SL__C2_F_FLOAT;
    case SL__C2_INT32: *t = SL_DTYPE_INT32; return SL__C2_F_INT32;
    case SL__C2_INT64: *t = SL_DTYPE_INT64; return SL__C2_F_INT64;
    default: return 0;
    }
}

/* *n = a * b * c when that fits in 64 bits (each >= 0); false on overflow. */
static bool volume3(int64_t a, int64_t b, int64_t c, uint64_t *n)
{
    uint64_t ab;
    return !__builtin_mul_overflow((uint64_t)a, (uint64_t)b, &ab) &&
           !__builtin_mul_overflow(ab, (uint64_t)c, n);
}

static bool parse_caffe(const layout *lay, const uint8_t *v, size_t n, parsed *p, char *err,
                        size_t errlen)
{
    sl__datum d;
    if (!sl__caffe_datum(v, n, &d, err, errlen))
        return false;
    if (lay->image) {
        /* DALI's rule: encoded unless the Datum says encoded = false */
        bool raw = d.has_encoded && !d.encoded;
        p->image = d.data;
        p->image_len = d.data_len;
        if (raw) {
            uint64_t vol = 0;
            if (d.height < 0 || d.width < 0 || d.channels < 0 ||
                !volume3(d.height, d.width, d.channels, &vol) || vol != d.data_len) {
                snprintf(err, errlen,
                         "a raw (not encoded) Datum of %d x %d x %d holds %zu bytes of data",
                         d.height, d.width, d.channels, d.data_len);
                return false;
            }
            p->indim = 3;
            p->ishape[0] = d.height;
            p->ishape[1] = d.width;
            p->ishape[2] = d.channels;
        } else {
            p->indim = 1;
            p->ishape[0] = (int64_t)d.data_len;
        }
    }
    if (lay->label) {
        if (!d.has_label) {
            snprintf(err, errlen, "the Datum has no label (label_available is true)");
            return false;
        }
        p->label = d.label;
        p->label_t = SL_DTYPE_INT32;
        p->nlabels = 1;
    }
    return true;
}

static bool parse_caffe2(const layout *lay, const uint8_t *v, size_t n, parsed *p, char *err,
                         size_t errlen)
{
    if (!sl__c2_protos(v, n, p->t, MAX_PROTOS, &p->nprotos, err, errlen))
        return false;
    int at = 0, have = p->nprotos < MAX_PROTOS ? p->nprotos : MAX_PROTOS;
    p->label_proto = p->add_proto = p->bbox_proto = -1;
    if (lay->image) {
        if (at >= have) {
            snprintf(err, errlen, "TensorProtos holds no image tensor (image_available is true)");
            return false;
        }
        const sl__c2_tensor *t = &p->t[at++];
        if (t->data_type == SL__C2_STRING) {
            if (t->nstrings < 1) {
                snprintf(err, errlen, "the image tensor (STRING) has no string_data");
                return false;
            }
            p->image = t->string0;
            p->image_len = t->string0_len;
            p->indim = 1;
            p->ishape[0] = (int64_t)t->string0_len;
        } else if (t->data_type == SL__C2_BYTE) {
            int64_t c = t->ndims == 3 ? t->dims[2] : 1;
            uint64_t vol = 0;
            if ((t->ndims != 2 && t->ndims != 3) || t->dims[0] < 0 || t->dims[1] < 0 || c < 0 ||
                !volume3(t->dims[0], t->dims[1], c, &vol) || vol != t->byte_len) {
                snprintf(err, errlen,
                         "the image tensor (BYTE) has %d dims that do not describe its %zu "
                         "bytes (expected H, W[, C])",
                         t->ndims, t->byte_len);
                return false;
            }
            p->image = t->byte_data;
            p->image_len = t->byte_len;
            p->indim = 3;
            p->ishape[0] = t->dims[0];
            p->ishape[1] = t->dims[1];
            p->ishape[2] = c;
        } else {
            snprintf(err, errlen,
                     "the image tensor has data_type %" PRId64 ", expected STRING (4, encoded) "
                     "or BYTE (3, raw)",
                     t->data_type);
            return false;
        }
    }
    if (lay->label) {
        int need = lay->label_type == 3 ? 2 : 1;
        if (at + need > have) {
            snprintf(err, errlen,
                     "TensorProtos holds %d tensors, too few for the label (label_type %d)",
                     p->nprotos, lay->label_type);
            return false;
        }
        const sl__c2_tensor *t = &p->t[at];
        int field = num_field(t->data_type, &p->label_t);
        if (field != SL__C2_F_FLOAT && field != SL__C2_F_INT32) {
            snprintf(err, errlen,
                     "the label tensor has data_type %" PRId64 ", expected FLOAT (1) or INT32 (2)",
                     t->data_type);
            return false;
        }
        int64_t count;
        if (!sl__c2_numbers(t, field, NULL, 0, &count, err, errlen))
            return false;
        if (lay->label_type == 0 && count != 1) {
            snprintf(err, errlen,
                     "the label tensor holds %" PRId64
                     " values; label_type 0 (single label) needs 1",
                     count);
            return false;
        }
        p->label_proto = at;
        p->nlabels = lay->label_type == 0 || lay->label_type == 2 ? count : lay->num_labels;
        if (lay->label_type == 3) {
            int64_t wc;
            sl_dtype wt;
            if (num_field(p->t[at + 1].data_type, &wt) != SL__C2_F_FLOAT ||
                !sl__c2_numbers(&p->t[at + 1], SL__C2_F_FLOAT, NULL, 0, &wc, err, errlen) ||
                wc != count) {
                snprintf(err, errlen,
                         "label_type 3: the weights tensor must be FLOAT with as many values "
                         "(%" PRId64 ") as the indices tensor",
                         count);
                return false;
            }
            p->label_t = SL_DTYPE_FLOAT32;
        }
        at += need;
    }
    if (lay->additional > 0) {
        if (at + lay->additional > have) {
            snprintf(err, errlen, "TensorProtos holds %d tensors, too few for %d additional inputs",
                     p->nprotos, lay->additional);
            return false;
        }
        p->add_proto = at;
        for (int a = 0; a < lay->additional; a++, at++) {
            p->add_field[a] = num_field(p->t[at].data_type, &p->add_t[a]);
            if (!p->add_field[a]) {
                snprintf(err, errlen,
                         "additional input %d has data_type %" PRId64
                         ", expected FLOAT (1), INT32 (2) or INT64 (10)",
                         a, p->t[at].data_type);
                return false;
            }
            if (!sl__c2_numbers(&p->t[at], p->add_field[a], NULL, 0, &p->nadd[a], err, errlen))
                return false;
        }
    }
    if (lay->bbox) {
        p->nbbox = 0;
        if (p->nprotos == at + 1) { /* DALI: the last tensor, when one is left */
            int64_t count;
            if (p->t[at].data_type != SL__C2_INT32 ||
                !sl__c2_numbers(&p->t[at], SL__C2_F_INT32, NULL, 0, &count, err, errlen) ||
                count != 4) {
                snprintf(err, errlen, "the bounding box tensor must be INT32 with 4 values");
                return false;
            }
            p->bbox_proto = at;
            p->nbbox = 4;
        }
    }
    return true;
}

static bool parse(const reader *r, const uint8_t *v, size_t n, parsed *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    return r->kind == CAFFE ? parse_caffe(&r->lay, v, n, p, err, errlen)
                            : parse_caffe2(&r->lay, v, n, p, err, errlen);
}

/* The value of entry e parsed (in a transaction the caller aborts), or a failure naming the
 * database and the key. */
static sl_status get_parsed(sl_ctx *ctx, const reader *r, const entry *e, MDB_txn **txn, parsed *p)
{
    char kb[128], err[256];
    MDB_val val;
    int rc = lookup(r, e, txn, &val);
    if (rc != 0)
        return sl_fail(ctx, rc == MDB_NOTFOUND ? SL_ENOTFOUND : SL_EIO,
                       "LMDB \"%s\", key \"%s\": %s", r->dbs[e->db].path,
                       entry_key(r, e, kb, sizeof kb), mdb_strerror(rc));
    if (!parse(r, val.mv_data, val.mv_size, p, err, sizeof err))
        return sl_fail(ctx, SL_ECORRUPT, "LMDB \"%s\", key \"%s\" (a %zu-byte value): %s",
                       r->dbs[e->db].path, entry_key(r, e, kb, sizeof kb), val.mv_size, err);
    return SL_OK;
}

/* ---- init ------------------------------------------------------------------------------- */

void sl__lmdb_fini(void *state)
{
    reader *r = state;
    if (!r)
        return;
    for (int d = 0; d < r->ndbs; d++) {
        if (r->dbs[d].env)
            mdb_env_close(r->dbs[d].env);
        sl__free(r->dbs[d].path);
    }
    sl__free(r->dbs);
    sl__free(r->e);
    sl__free(r->keys);
    sl__cursor_fini(&r->cur);
    sl__free(r);
}

/* The outputs' dtypes and ranks: the first entry's. */
static sl_status first_layout(sl_op_init *ini, reader *r)
{
    MDB_txn *txn = NULL;
    MDB_val val;
    parsed *p = sl__malloc(sizeof *p);
    if (!p)
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    char kb[128], err[256];
    int rc = lookup(r, &r->e[0], &txn, &val);
    sl_status st = SL_OK;
    if (rc != 0)
        st = sl_init_fail(ini, SL_EIO, "LMDB \"%s\": cannot read its first entry: %s",
                          r->dbs[0].path, mdb_strerror(rc));
    else if (!parse(r, val.mv_data, val.mv_size, p, err, sizeof err))
        st = sl_init_fail(ini, SL_ECORRUPT, "LMDB \"%s\", key \"%s\" (a %zu-byte value): %s",
                          r->dbs[0].path, entry_key(r, &r->e[0], kb, sizeof kb), val.mv_size, err);
    if (txn)
        mdb_txn_abort(txn);
    if (st == SL_OK) {
        r->lay.raw_image = p->indim == 3;
        r->lay.label_t = p->label_t;
        for (int a = 0; a < r->lay.additional; a++)
            r->lay.add_t[a] = p->add_t[a];
    }
    sl__free(p);
    return st;
}

static sl_status init_kind(sl_op_init *ini, void **state, kind k)
{
    reader *r = sl__calloc(1, sizeof *r);
    if (!r)
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    r->kind = k;
    layout *lay = &r->lay;
    lay->image = sl_init_arg_bool(ini, ARG_IMAGE_AVAILABLE);
    if (k == CAFFE) {
        lay->label = sl_init_arg_bool(ini, ARG_LABEL_AVAILABLE);
    } else {
        lay->label_type = (int)sl_init_arg_int(ini, ARG_LABEL_TYPE);
        lay->label = lay->label_type != NO_LABEL;
        lay->num_labels = sl_init_arg_int(ini, ARG_NUM_LABELS);
        lay->additional = (int)sl_init_arg_int(ini, ARG_ADDITIONAL_INPUTS);
        lay->bbox = sl_init_arg_bool(ini, ARG_BBOX);
    }
    sl_status st = sl__cursor_config(ini, &cursor_args, &r->cur);
    int np = 0;
    const char *const *paths = st == SL_OK ? sl_init_arg_strs(ini, ARG_PATH, &np) : NULL;
    if (st == SL_OK && np == 0)
        st = sl_init_fail(ini, SL_EINVAL, "path is empty");
    if (st == SL_OK && !(r->dbs = sl__calloc((size_t)np, sizeof *r->dbs)))
        st = sl_init_fail(ini, SL_ENOMEM, "out of memory");
    for (int d = 0; st == SL_OK && d < np; d++) {
        r->ndbs = d + 1;
        st = open_db(ini, r, d, paths[d]);
    }
    if (st == SL_OK)
        st = first_layout(ini, r);
    if (st == SL_OK)
        st = sl__cursor_start(ini, &r->cur, r->n);
    if (st != SL_OK) {
        sl__lmdb_fini(r);
        return st;
    }
    *state = r;
    return SL_OK;
}

sl_status sl__lmdb_init_caffe(sl_op_init *ini, void **state)
{
    return init_kind(ini, state, CAFFE);
}

sl_status sl__lmdb_init_caffe2(sl_op_init *ini, void **state)
{
    return init_kind(ini, state, CAFFE2);
}

/* ---- per iteration --------------------------------------------------------------------------- */

/* The node's output numbers (in the order image, label, additional..., bbox). */
typedef struct outs {
    int image, label, add, bbox;
} outs;

static outs out_numbers(const layout *lay)
{
    outs o = {-1, -1, -1, -1};
    int k = 0;
    if (lay->image)
        o.image = k++;
    if (lay->label)
        o.label = k++;
    if (lay->additional) {
        o.add = k;
        k += lay->additional;
    }
    if (lay->bbox)
        o.bbox = k;
    return o;
}

sl_status sl__lmdb_setup(sl_ctx *ctx)
{
    reader *r = sl_ctx_state(ctx);
    const layout *lay = &r->lay;
    outs o = out_numbers(lay);
    sample *ss = sl_ctx_iter_data(ctx);
    if (o.image >= 0)
        sl_ctx_set_output(ctx, o.image, SL_DTYPE_UINT8, lay->raw_image ? 3 : 1,
                          lay->raw_image ? "HWC" : "");
    if (o.label >= 0)
        sl_ctx_set_output(ctx, o.label, lay->label_t, 1, "");
    for (int a = 0; a < lay->additional; a++)
        sl_ctx_set_output(ctx, o.add + a, lay->add_t[a], 1, "");
    if (o.bbox >= 0)
        sl_ctx_set_output(ctx, o.bbox, SL_DTYPE_INT32, 1, "");
    int nout = sl_ctx_num_outputs(ctx);
    for (int i = 0, bs = sl_ctx_batch_size(ctx); i < bs; i++) {
        ss[i].k = sl__cursor_next(&r->cur);
        for (int k = 0; k < nout; k++)
            sl_ctx_set_source(ctx, k, i, r->dbs[r->e[ss[i].k].db].path);
    }
    return SL_OK;
}

/* Checks that sample p has the layout of the first entry. */
static sl_status check_like_first(sl_ctx *ctx, const reader *r, const entry *e, const parsed *p)
{
    const layout *lay = &r->lay;
    char kb[128];
    const char *what = NULL;
    if (lay->image && (p->indim == 3) != lay->raw_image)
        what = lay->raw_image ? "an encoded image where the first entry has a raw one"
                              : "a raw image where the first entry has an encoded one";
    else if (lay->label && p->label_t != lay->label_t)
        what = "labels of another type than the first entry's";
    for (int a = 0; !what && a < lay->additional; a++)
        if (p->add_t[a] != lay->add_t[a])
            what = "an additional input of another type than the first entry's";
    if (!what)
        return SL_OK;
    return sl_fail(ctx, SL_ECORRUPT, "LMDB \"%s\", key \"%s\": %s", r->dbs[e->db].path,
                   entry_key(r, e, kb, sizeof kb), what);
}

sl_status sl__lmdb_setup_sample(sl_ctx *ctx, int i)
{
    const reader *r = sl_ctx_state(ctx);
    const layout *lay = &r->lay;
    const sample *s = (const sample *)sl_ctx_iter_data(ctx) + i;
    const entry *e = &r->e[s->k];
    MDB_txn *txn = NULL;
    parsed *p = sl_ctx_scratch(ctx, sizeof *p);
    if (!p)
        return sl_fail(ctx, SL_ENOMEM, "out of memory");
    sl_status st = get_parsed(ctx, r, e, &txn, p);
    if (txn)
        mdb_txn_abort(txn);
    if (st == SL_OK)
        st = check_like_first(ctx, r, e, p);
    if (st != SL_OK)
        return st;
    outs o = out_numbers(lay);
    if (o.image >= 0)
        sl_ctx_set_shape(ctx, o.image, i, p->ishape);
    if (o.label >= 0)
        sl_ctx_set_shape(ctx, o.label, i, &p->nlabels);
    for (int a = 0; a < lay->additional; a++)
        sl_ctx_set_shape(ctx, o.add + a, i, &p->nadd[a]);
    if (o.bbox >= 0)
        sl_ctx_set_shape(ctx, o.bbox, i, &p->nbbox);
    return SL_OK;
}

static sl_status fill(sl_ctx *ctx, int i, const reader *r, const entry *e, const parsed *p)
{
    const layout *lay = &r->lay;
    outs o = out_numbers(lay);
    char err[256], kb[128];
    bool changed = false;
    if (o.image >= 0) {
        const int64_t *sh = sl_ctx_output_shape(ctx, o.image, i);
        for (int d = 0; d < p->indim; d++)
            changed |= sh[d] != p->ishape[d];
        if (!changed && p->image_len)
            memcpy(sl_ctx_output_data(ctx, o.image, i), p->image, p->image_len);
    }
    if (!changed && o.label >= 0) {
        changed = sl_ctx_output_shape(ctx, o.label, i)[0] != p->nlabels;
        void *out = sl_ctx_output_data(ctx, o.label, i);
        if (!changed && r->kind == CAFFE) {
            memcpy(out, &p->label, 4);
        } else if (!changed) {
            const sl__c2_tensor *t = &p->t[p->label_proto];
            int field = t->data_type == SL__C2_FLOAT ? SL__C2_F_FLOAT : SL__C2_F_INT32;
            int64_t count;
            if (lay->label_type == 0 || lay->label_type == 2) {
                if (!sl__c2_numbers(t, field, out, p->nlabels, &count, err, sizeof err))
                    goto corrupt;
            } else {
                /* sparse: indices (int32 or float) of the active labels, each set to 1 or to
                 * its weight */
                int64_t n = 0;
                if (!sl__c2_numbers(t, field, NULL, 0, &n, err, sizeof err))
                    goto corrupt;
                size_t isz = field == SL__C2_F_FLOAT ? sizeof(float) : sizeof(int32_t);
                uint8_t *idx =
                    sl_ctx_scratch_n(ctx, 1, (size_t)(n ? n : 1) * (isz + sizeof(float)));
                if (!idx)
                    return sl_fail(ctx, SL_ENOMEM, "out of memory");
                float *w = (float *)(void *)(idx + (size_t)(n ? n : 1) * isz);
                if (!sl__c2_numbers(t, field, idx, n, &count, err, sizeof err))
                    goto corrupt;
                if (lay->label_type == 3 &&
                    !sl__c2_numbers(&p->t[p->label_proto + 1], SL__C2_F_FLOAT, w, n, &count, err,
                                    sizeof err))
                    goto corrupt;
                memset(out, 0, (size_t)p->nlabels * 4); /* float32 or int32 */
                for (int64_t k = 0; k < n; k++) {
                    double x = field == SL__C2_F_FLOAT ? (double)((float *)(void *)idx)[k]
                                                       : (double)((int32_t *)(void *)idx)[k];
                    if (!(x >= 0 && x < (double)p->nlabels)) {
                        snprintf(err, sizeof err,
                                 "label index %g is outside [0, num_labels = %lld)", x,
                                 (long long)p->nlabels);
                        goto corrupt;
                    }
                    int64_t j = (int64_t)x;
                    if (lay->label_type == 3)
                        ((float *)out)[j] = w[k];
                    else if (p->label_t == SL_DTYPE_FLOAT32)
                        ((float *)out)[j] = 1.0f;
                    else
                        ((int32_t *)out)[j] = 1;
                }
            }
        }
    }
    for (int a = 0; !changed && a < lay->additional; a++) {
        int64_t count;
        changed = sl_ctx_output_shape(ctx, o.add + a, i)[0] != p->nadd[a];
        if (!changed && !sl__c2_numbers(&p->t[p->add_proto + a], p->add_field[a],
                                        sl_ctx_output_data(ctx, o.add + a, i), p->nadd[a], &count,
                                        err, sizeof err))
            goto corrupt;
    }
    if (!changed && o.bbox >= 0) {
        int64_t count;
        changed = sl_ctx_output_shape(ctx, o.bbox, i)[0] != p->nbbox;
        if (!changed && p->nbbox &&
            !sl__c2_numbers(&p->t[p->bbox_proto], SL__C2_F_INT32,
                            sl_ctx_output_data(ctx, o.bbox, i), 4, &count, err, sizeof err))
            goto corrupt;
    }
    if (changed)
        return sl_fail(ctx, SL_EIO, "LMDB \"%s\", key \"%s\": the value changed while it was read",
                       r->dbs[e->db].path, entry_key(r, e, kb, sizeof kb));
    return SL_OK;
corrupt:
    return sl_fail(ctx, SL_ECORRUPT, "LMDB \"%s\", key \"%s\": %s", r->dbs[e->db].path,
                   entry_key(r, e, kb, sizeof kb), err);
}

sl_status sl__lmdb_run_sample(sl_ctx *ctx, int i)
{
    const reader *r = sl_ctx_state(ctx);
    const sample *s = (const sample *)sl_ctx_iter_data(ctx) + i;
    const entry *e = &r->e[s->k];
    MDB_txn *txn = NULL;
    parsed *p = sl_ctx_scratch(ctx, sizeof *p);
    if (!p)
        return sl_fail(ctx, SL_ENOMEM, "out of memory");
    sl_status st = get_parsed(ctx, r, e, &txn, p);
    if (st == SL_OK)
        st = check_like_first(ctx, r, e, p);
    if (st == SL_OK)
        st = fill(ctx, i, r, e, p);
    if (txn)
        mdb_txn_abort(txn);
    return st;
}

int sl__lmdb_checkpoint(const void *state, int64_t *vals, int cap, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    return sl__cursor_save(&((const reader *)state)->cur, vals, cap);
}

sl_status sl__lmdb_restore(void *state, int64_t iteration, const int64_t *vals, int n, char *err,
                           size_t errlen)
{
    (void)iteration;
    return sl__cursor_restore(&((reader *)state)->cur, vals, n, err, errlen);
}

void sl__lmdb_reader_meta(const void *state, sl_reader_meta *m)
{
    sl__cursor_meta(&((const reader *)state)->cur, m);
}

/* ---- shared definitions ----------------------------------------------------------------- */

#define NO_EFFECT(name)                                                                            \
    {                                                                                              \
        name, NULL, "the LMDB readers read through liblmdb's map; " name " has no effect"          \
    }
const sl_arg_alias sl__lmdb_aliases[SL__LMDB_NUM_ALIASES] = {
    NO_EFFECT("dont_use_mmap"),        NO_EFFECT("read_ahead"),        NO_EFFECT("lazy_init"),
    NO_EFFECT("prefetch_queue_depth"), NO_EFFECT("tensor_init_bytes"), NO_EFFECT("initial_fill"),
    NO_EFFECT("skip_cached_images"),
};
