/* src/graph/value.c: typed argument values, parsed from JSON and coerced to a schema.
 *
 * A value is what the user gave (bool, int, float, string, or a list); coercion turns it into
 * what an operator's argument declares and is the one place where every front end's argument
 * errors are worded. Lists own their arrays; sl__value_fini frees them.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"
#include "sluice/distributed.h"

const char *sl__vkind_name(sl__vkind k)
{
    static const char *const names[] = {"nothing",       "bool",          "int",
                                        "float",         "string",        "list of int",
                                        "list of float", "list of string"};
    return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

void sl__value_fini(sl__value *v)
{
    sl__free(v->s);
    sl__free(v->ints);
    sl__free(v->floats);
    if (v->strs) {
        for (int i = 0; i < v->n; i++)
            sl__free(v->strs[i]);
        sl__free(v->strs);
    }
    memset(v, 0, sizeof(*v));
}

static sl_status copy_strs(sl__value *dst, char *const *src, int n)
{
    dst->strs = sl__calloc((size_t)(n ? n : 1), sizeof(char *));
    if (!dst->strs)
        return SL_ENOMEM;
    dst->n = n;
    for (int i = 0; i < n; i++) {
        if (!(dst->strs[i] = sl__strdup(src[i])))
            return SL_ENOMEM;
    }
    return SL_OK;
}

static void *dup_mem(const void *src, size_t bytes)
{
    void *d = sl__malloc(bytes ? bytes : 1);
    if (d && bytes)
        memcpy(d, src, bytes);
    return d;
}

sl_status sl__value_copy(sl__value *dst, const sl__value *src)
{
    *dst = *src;
    dst->s = NULL;
    dst->ints = NULL;
    dst->floats = NULL;
    dst->strs = NULL;
    sl_status st = SL_OK;
    if (src->s && !(dst->s = sl__strdup(src->s)))
        st = SL_ENOMEM;
    if (src->ints && !(dst->ints = dup_mem(src->ints, (size_t)src->n * sizeof(int64_t))))
        st = SL_ENOMEM;
    if (src->floats && !(dst->floats = dup_mem(src->floats, (size_t)src->n * sizeof(double))))
        st = SL_ENOMEM;
    if (st == SL_OK && src->strs)
        st = copy_strs(dst, src->strs, src->n);
    if (st != SL_OK)
        sl__value_fini(dst);
    return st;
}

/* ---- JSON -> value ------------------------------------------------------------------------ */

static sl_status parse_list(json_t *j, sl__value *out, char *err, size_t errlen)
{
    size_t n = json_array_size(j);
    bool all_int = true, all_num = true, all_str = true;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(j, i);
        all_int &= json_is_integer(e);
        all_num &= json_is_number(e);
        all_str &= json_is_string(e);
    }
    out->n = (int)n;
    if (n == 0 || (all_num && !all_int)) {
        out->kind = SL__V_FLOATS;
        if (!(out->floats = sl__malloc((n ? n : 1) * sizeof(double))))
            return SL_ENOMEM;
        for (size_t i = 0; i < n; i++)
            out->floats[i] = json_number_value(json_array_get(j, i));
    } else if (all_int) {
        out->kind = SL__V_INTS;
        if (!(out->ints = sl__malloc(n * sizeof(int64_t))))
            return SL_ENOMEM;
        for (size_t i = 0; i < n; i++)
            out->ints[i] = json_integer_value(json_array_get(j, i));
    } else if (all_str) {
        out->kind = SL__V_STRINGS;
        if (!(out->strs = sl__calloc(n, sizeof(char *))))
            return SL_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            if (!(out->strs[i] = sl__strdup(json_string_value(json_array_get(j, i)))))
                return SL_ENOMEM;
        }
    } else {
        snprintf(err, errlen, "a list must hold only numbers or only strings");
        return SL_EINVAL;
    }
    return SL_OK;
}

/* Converts a parsed JSON element (not an object) into a value. */
static sl_status from_json(json_t *j, sl__value *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    sl_status st = SL_OK;
    if (json_is_boolean(j)) {
        out->kind = SL__V_BOOL;
        out->b = json_is_true(j);
    } else if (json_is_integer(j)) {
        out->kind = SL__V_INT;
        out->i = json_integer_value(j);
    } else if (json_is_real(j)) {
        out->kind = SL__V_FLOAT;
        out->f = json_real_value(j);
    } else if (json_is_string(j)) {
        out->kind = SL__V_STRING;
        st = (out->s = sl__strdup(json_string_value(j))) ? SL_OK : SL_ENOMEM;
    } else if (json_is_array(j)) {
        st = parse_list(j, out, err, errlen);
    } else {
        snprintf(err, errlen, "expected a bool, number, string or list");
        st = SL_EINVAL;
    }
    if (st != SL_OK)
        sl__value_fini(out);
    return st;
}

sl_status sl__value_parse_json(const char *text, sl__value *out, char *err, size_t errlen)
{
    json_error_t je;
    memset(out, 0, sizeof(*out));
    json_t *j = json_loads(text, JSON_DECODE_ANY, &je);
    if (!j) {
        snprintf(err, errlen, "not valid JSON (%s): %s", je.text, text);
        return SL_EINVAL;
    }
    sl_status st = from_json(j, out, err, errlen);
    json_decref(j);
    return st;
}

sl_status sl__value_from_jansson(const void *j, sl__value *out, char *err, size_t errlen)
{
    return from_json((json_t *)j, out, err, errlen);
}

/* ---- coercion ----------------------------------------------------------------------------- */

static bool as_double(const sl__value *in, double *d)
{
    if (in->kind == SL__V_INT)
        *d = (double)in->i;
    else if (in->kind == SL__V_FLOAT)
        *d = in->f;
    else
        return false;
    return true;
}

static bool as_int(const sl__value *in, int64_t *i)
{
    if (in->kind == SL__V_INT) {
        *i = in->i;
        return true;
    }
    if (in->kind == SL__V_FLOAT && in->f == floor(in->f) && fabs(in->f) < 9.0e18) {
        *i = (int64_t)in->f;
        return true;
    }
    if (in->kind == SL__V_BOOL) {
        *i = in->b;
        return true;
    }
    return false;
}

static sl_status check_range(const sl_arg_def *def, double x, char *err, size_t errlen)
{
    if ((def->flags & SL_ARG_RANGE) && (x < def->min || x > def->max)) {
        snprintf(err, errlen, "value %.10g is out of range [%.10g, %.10g]", x, def->min, def->max);
        return SL_EINVAL;
    }
    return SL_OK;
}

static sl_status check_choice(const sl_arg_def *def, const char *s, char *err, size_t errlen)
{
    if (!def->choices)
        return SL_OK;
    size_t len = strlen(s);
    for (const char *c = def->choices; *c;) {
        const char *bar = strchr(c, '|');
        size_t clen = bar ? (size_t)(bar - c) : strlen(c);
        if (clen == len && strncmp(c, s, len) == 0)
            return SL_OK;
        c += clen + (bar ? 1 : 0);
    }
    snprintf(err, errlen, "\"%s\" is not one of %s", s, def->choices);
    return SL_EINVAL;
}

static sl_status check_len(const sl_arg_def *def, int n, char *err, size_t errlen)
{
    if ((def->min_len && n < def->min_len) || (def->max_len && n > def->max_len)) {
        if (def->min_len == def->max_len)
            snprintf(err, errlen, "expected %d values, got %d", def->min_len, n);
        else if (!def->max_len) /* max_len 0: no upper bound */
            snprintf(err, errlen, "expected at least %d values, got %d", def->min_len, n);
        else if (!def->min_len)
            snprintf(err, errlen, "expected at most %d values, got %d", def->max_len, n);
        else
            snprintf(err, errlen, "expected %d to %d values, got %d", def->min_len, def->max_len,
                     n);
        return SL_EINVAL;
    }
    return SL_OK;
}

static sl_status type_error(const sl_arg_def *def, const sl__value *in, char *err, size_t errlen)
{
    snprintf(err, errlen, "expected %s, got %s", sl_arg_type_name(def->type),
             sl__vkind_name(in->kind));
    return SL_EINVAL;
}

/* Scalar (one element) view of a list or scalar input, for numeric lists. */
static int list_len(const sl__value *in)
{
    return (in->kind == SL__V_INT || in->kind == SL__V_FLOAT) ? 1 : in->n;
}

static bool list_get(const sl__value *in, int k, double *d)
{
    if (in->kind == SL__V_INT || in->kind == SL__V_FLOAT)
        return as_double(in, d);
    if (in->kind == SL__V_INTS)
        *d = (double)in->ints[k];
    else if (in->kind == SL__V_FLOATS)
        *d = in->floats[k];
    else
        return false;
    return true;
}

static sl_status coerce_numlist(const sl__value *in, const sl_arg_def *def, sl__value *out,
                                char *err, size_t errlen)
{
    bool scalar = in->kind == SL__V_INT || in->kind == SL__V_FLOAT;
    bool list = in->kind == SL__V_INTS || in->kind == SL__V_FLOATS;
    if (!list && !(scalar && (def->flags & SL_ARG_SCALAR_OK)))
        return type_error(def, in, err, errlen);
    int n = list_len(in);
    sl_status st = check_len(def, n, err, errlen);
    if (st != SL_OK)
        return st;
    out->n = n;
    if (def->type == SL_ARG_FLOATS) {
        out->kind = SL__V_FLOATS;
        if (!(out->floats = sl__malloc((size_t)(n ? n : 1) * sizeof(double))))
            return SL_ENOMEM;
    } else {
        out->kind = SL__V_INTS;
        if (!(out->ints = sl__malloc((size_t)(n ? n : 1) * sizeof(int64_t))))
            return SL_ENOMEM;
    }
    for (int k = 0; k < n; k++) {
        double d = 0;
        list_get(in, k, &d);
        if (def->type == SL_ARG_INTS) {
            if (d != floor(d))
                return snprintf(err, errlen, "expected integers, got %g", d), SL_EINVAL;
            out->ints[k] = (int64_t)d;
        } else {
            out->floats[k] = d;
        }
        if ((st = check_range(def, d, err, errlen)) != SL_OK)
            return st;
    }
    return SL_OK;
}

static sl_status coerce_strs(const sl__value *in, const sl_arg_def *def, sl__value *out, char *err,
                             size_t errlen)
{
    sl_status st;
    out->kind = SL__V_STRINGS;
    if (in->kind == SL__V_STRING && (def->flags & SL_ARG_SCALAR_OK))
        st = copy_strs(out, &in->s, 1);
    else if (in->kind == SL__V_STRINGS || (in->kind == SL__V_FLOATS && in->n == 0))
        st = copy_strs(out, in->strs, in->n);
    else
        return type_error(def, in, err, errlen);
    if (st == SL_OK)
        st = check_len(def, out->n, err, errlen);
    for (int k = 0; st == SL_OK && k < out->n; k++)
        st = check_choice(def, out->strs[k], err, errlen);
    return st;
}

static unsigned auto_flags(const sl_arg_def *def)
{
    return def->flags & (SL_ARG_AUTO_RANK | SL_ARG_AUTO_WORLD_SIZE);
}

/* "auto" for an SL_ARG_AUTO_* argument: the launcher's rank or world size (the rules of
 * sluice/distributed.h), then the argument's range. */
static sl_status resolve_auto(const sl__value *in, const sl_arg_def *def, sl__value *out, char *err,
                              size_t errlen)
{
    if (strcmp(in->s, "auto") != 0)
        return snprintf(err, errlen, "expected an int or \"auto\", got \"%s\"", in->s), SL_EINVAL;
    sl_distributed d;
    sl_status st = sl_distributed_info(&d);
    if (st != SL_OK)
        return snprintf(err, errlen, "\"auto\" needs the job's launcher: %s", sl_last_error()), st;
    out->kind = SL__V_INT;
    out->i = (def->flags & SL_ARG_AUTO_RANK) ? d.rank : d.world_size;
    return check_range(def, (double)out->i, err, errlen);
}

static sl_status coerce_scalar(const sl__value *in, const sl_arg_def *def, sl__value *out,
                               char *err, size_t errlen)
{
    switch (def->type) {
    case SL_ARG_BOOL:
        if (in->kind == SL__V_BOOL)
            out->b = in->b;
        else if (in->kind == SL__V_INT && (in->i == 0 || in->i == 1))
            out->b = in->i != 0;
        else
            return type_error(def, in, err, errlen);
        out->kind = SL__V_BOOL;
        return SL_OK;
    case SL_ARG_INT:
        if (in->kind == SL__V_STRING && auto_flags(def))
            return resolve_auto(in, def, out, err, errlen);
        if (!as_int(in, &out->i))
            return in->kind == SL__V_FLOAT
                       ? (snprintf(err, errlen, "expected int, got %g", in->f), SL_EINVAL)
                       : type_error(def, in, err, errlen);
        out->kind = SL__V_INT;
        return check_range(def, (double)out->i, err, errlen);
    case SL_ARG_FLOAT:
        if (!as_double(in, &out->f))
            return type_error(def, in, err, errlen);
        out->kind = SL__V_FLOAT;
        return check_range(def, out->f, err, errlen);
    default: return SL_EINTERNAL;
    }
}

/* Mirrors the kinds sl__value_coerce accepts for each type (graph.h). */
bool sl__value_kind_fits(const sl_arg_def *def, const sl__value *v)
{
    sl__vkind k = v->kind;
    bool num = k == SL__V_INT || k == SL__V_FLOAT, list = k == SL__V_INTS || k == SL__V_FLOATS;
    bool scalar_ok = def->flags & SL_ARG_SCALAR_OK;
    switch (def->type) {
    case SL_ARG_BOOL: return k == SL__V_BOOL || k == SL__V_INT;
    case SL_ARG_INT: return k == SL__V_BOOL || num || (k == SL__V_STRING && auto_flags(def));
    case SL_ARG_FLOAT: return num;
    case SL_ARG_STRING:
    case SL_ARG_DTYPE: return k == SL__V_STRING;
    case SL_ARG_INTS:
    case SL_ARG_FLOATS: return list || (num && scalar_ok);
    case SL_ARG_STRINGS:
        return k == SL__V_STRINGS || (k == SL__V_FLOATS && v->n == 0) ||
               (k == SL__V_STRING && scalar_ok);
    }
    return false;
}

sl_status sl__value_coerce(const sl__value *in, const sl_arg_def *def, sl__value *out, char *err,
                           size_t errlen)
{
    sl_status st;
    memset(out, 0, sizeof(*out));
    switch (def->type) {
    case SL_ARG_STRING:
        if (in->kind != SL__V_STRING)
            return type_error(def, in, err, errlen);
        if ((st = check_choice(def, in->s, err, errlen)) != SL_OK)
            return st;
        out->kind = SL__V_STRING;
        return (out->s = sl__strdup(in->s)) ? SL_OK : SL_ENOMEM;
    case SL_ARG_DTYPE:
        if (in->kind != SL__V_STRING)
            return type_error(def, in, err, errlen);
        out->i = sl_dtype_from_name(in->s);
        if (out->i == SL_DTYPE_INVALID) /* out stays empty on failure, as for other types */
            return snprintf(err, errlen, "unknown data type \"%s\"", in->s), SL_EINVAL;
        out->kind = SL__V_INT;
        return SL_OK;
    case SL_ARG_INTS:
    case SL_ARG_FLOATS: st = coerce_numlist(in, def, out, err, errlen); break;
    case SL_ARG_STRINGS: st = coerce_strs(in, def, out, err, errlen); break;
    default: st = coerce_scalar(in, def, out, err, errlen);
    }
    if (st != SL_OK)
        sl__value_fini(out);
    return st;
}

/* ---- value -> JSON text ------------------------------------------------------------------ */

void sl__value_to_json(const sl__value *v, char *buf, size_t cap)
{
    size_t n = 0;
#define PUT(...) n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__)
    buf[0] = '\0';
    switch (v->kind) {
    case SL__V_BOOL: PUT("%s", v->b ? "true" : "false"); break;
    case SL__V_INT: PUT("%lld", (long long)v->i); break;
    case SL__V_FLOAT: PUT("%.17g", v->f); break;
    case SL__V_STRING: PUT("\"%s\"", v->s); break;
    case SL__V_INTS:
    case SL__V_FLOATS:
    case SL__V_STRINGS:
        PUT("[");
        for (int k = 0; k < v->n; k++) {
            const char *sep = k ? ", " : "";
            if (v->kind == SL__V_INTS)
                PUT("%s%lld", sep, (long long)v->ints[k]);
            else if (v->kind == SL__V_FLOATS)
                PUT("%s%.17g", sep, v->floats[k]);
            else
                PUT("%s\"%s\"", sep, v->strs[k]);
        }
        PUT("]");
        break;
    default: PUT("null");
    }
#undef PUT
}
