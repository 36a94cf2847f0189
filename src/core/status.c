/* src/core/status.c: status names, error records and the thread-local last error.
 *
 * An sl__error holds a failure with its context; its message is composed once, when it is set,
 * in the one format every front end shows:
 *   decoders.image (node "dec"): iteration 7, sample 3, file "train/cat/1.jpg": corrupt JPEG...
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"

static const char *const names[] = {
    "SL_OK",     "SL_EINVAL",    "SL_ENOTFOUND", "SL_EIO",       "SL_ECORRUPT", "SL_EUNSUPPORTED",
    "SL_ENOMEM", "SL_ECANCELED", "SL_EMISUSE",   "SL_ECALLBACK", "SL_EWORKER",  "SL_EINTERNAL",
};

static _Thread_local char last_error[SL__MSG_MAX];

const char *sl_status_name(sl_status s)
{
    if ((unsigned)s < sizeof(names) / sizeof(names[0]))
        return names[s];
    return "SL_E?";
}

const char *sl_last_error(void)
{
    return last_error;
}

void sl__last_error_clear(void)
{
    last_error[0] = '\0';
}

sl_status sl__last_error_set(sl_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
    return code;
}

void sl__error_clear(sl__error *e)
{
    memset(e, 0, sizeof(*e));
    e->iteration = -1;
    e->sample = -1;
}

static void copy(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

/* Appends the context prefix ("op (node "x"): iteration 7, sample 3, file "f": ") to buf. */
static size_t compose_prefix(const sl__error *e, char *buf, size_t cap)
{
    size_t n = 0;
    const char *sep = "";
#define PUT(...) n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__)
    if (e->op[0])
        PUT("%s", e->op);
    if (e->node[0])
        PUT("%s(node \"%s\")", e->op[0] ? " " : "", e->node);
    if (e->op[0] || e->node[0])
        sep = ": ";
    if (e->iteration >= 0) {
        PUT("%siteration %lld", sep, (long long)e->iteration);
        sep = ", ";
    }
    if (e->sample >= 0) {
        PUT("%ssample %d", sep, e->sample);
        sep = ", ";
    }
    if (e->source[0])
        PUT("%sfile \"%s\"", sep, e->source);
    if (n > 0)
        PUT(": ");
#undef PUT
    return n < cap ? n : cap - 1;
}

sl_status sl__error_setv(sl__error *e, sl_status code, const char *op, const char *node,
                         int64_t iteration, int sample, const char *source, const char *fmt,
                         va_list ap)
{
    e->code = code;
    copy(e->op, sizeof(e->op), op);
    copy(e->node, sizeof(e->node), node);
    e->iteration = iteration;
    e->sample = sample;
    copy(e->source, sizeof(e->source), source);
    vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
    size_t n = compose_prefix(e, e->message, sizeof(e->message));
    snprintf(e->message + n, sizeof(e->message) - n, "%s", e->detail);
    return code;
}

sl_status sl__error_set(sl__error *e, sl_status code, const char *op, const char *node,
                        int64_t iteration, int sample, const char *source, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sl__error_setv(e, code, op, node, iteration, sample, source, fmt, ap);
    va_end(ap);
    return code;
}
