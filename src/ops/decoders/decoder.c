/* src/ops/decoders/decoder.c: the decoder family helper (see decoder.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "ops/decoders/decoder.h"
#include "ops/decoders/hybrid.h"

/* ---- the files known to be whole (see decoder.h) ------------------------------------------ */

/* What is known of a file (a key's properties). */
enum {
    WHOLE = 1, /* read to its end without error */
    CLEAN = 2  /* and jpeg_huff.c entropy-decoded its whole scan without giving up (hybrid.h:
                  device entropy decoding) */
};

/* Open addressing, linear probing, keys != 0, at most half full. */
typedef struct verdicts {
    pthread_mutex_t mu;
    uint64_t *keys; /* (mu) cap entries, 0 = empty */
    uint8_t *props; /* (mu) each key's WHOLE | CLEAN */
    size_t cap, n;  /* (mu) */
} verdicts;

sl_status sl__decoder_init(sl_op_init *ini, void **state)
{
    verdicts *v = sl__calloc(1, sizeof(*v));
    if (!v)
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    pthread_mutex_init(&v->mu, NULL);
    *state = v;
    return sl_init_on_bad_sample(ini, SL__A_ON_BAD_SAMPLE);
}

void sl__decoder_fini(void *state)
{
    verdicts *v = state;
    pthread_mutex_destroy(&v->mu);
    sl__free(v->keys);
    sl__free(v->props);
    sl__free(v);
}

/* The slot of key in keys (cap a power of two): where it is, or the empty one it would go to. */
static size_t probe(const uint64_t *keys, size_t cap, uint64_t key)
{
    size_t i = (size_t)sl__mix64(key) & (cap - 1);
    while (keys[i] != 0 && keys[i] != key)
        i = (i + 1) & (cap - 1);
    return i;
}

/* The properties known of key's file (0: none, or key 0). */
static unsigned known(verdicts *v, uint64_t key)
{
    if (key == 0)
        return 0;
    pthread_mutex_lock(&v->mu);
    unsigned p = 0;
    if (v->cap) {
        size_t i = probe(v->keys, v->cap, key);
        p = v->keys[i] == key ? v->props[i] : 0;
    }
    pthread_mutex_unlock(&v->mu);
    return p;
}

static bool known_whole(verdicts *v, uint64_t key)
{
    return (known(v, key) & WHOLE) != 0;
}

/* Adds props to key's. Out of memory, the set stays as it was: the file is read whole again
 * next time. */
static void add(verdicts *v, uint64_t key, unsigned props)
{
    pthread_mutex_lock(&v->mu);
    if (2 * (v->n + 1) > v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 1024;
        uint64_t *keys = sl__calloc(cap, sizeof(uint64_t));
        uint8_t *pr = sl__calloc(cap, 1);
        for (size_t i = 0; keys && pr && i < v->cap; i++) {
            if (v->keys[i]) {
                size_t k = probe(keys, cap, v->keys[i]);
                keys[k] = v->keys[i];
                pr[k] = v->props[i];
            }
        }
        if (keys && pr) {
            sl__free(v->keys);
            sl__free(v->props);
            v->keys = keys;
            v->props = pr;
            v->cap = cap;
        } else {
            sl__free(keys);
            sl__free(pr);
        }
    }
    if (2 * (v->n + 1) <= v->cap) {
        size_t i = probe(v->keys, v->cap, key);
        v->n += v->keys[i] == 0;
        v->keys[i] = key;
        v->props[i] |= (uint8_t)props;
    }
    pthread_mutex_unlock(&v->mu);
}

static void add_whole(verdicts *v, uint64_t key)
{
    add(v, key, WHOLE);
}

/* Sample i's key: its file name and size, or 0 (no name: never remembered). */
static uint64_t file_key(const sl_batch *in, int i)
{
    const char *source = sl_batch_source(in, i);
    if (!source)
        return 0;
    uint64_t k = sl__hash_str(source) ^ sl__mix64((uint64_t)sl_batch_sample_numel(in, i));
    return k ? k : 1;
}

const sl_io_def sl__decoder_inputs[1] = {
    {"encoded", "Encoded image files: a 1-D uint8 tensor of bytes per sample, such as "
                "readers.file produces."},
};

/* output_type as a codec color. */
static sl_status color_of(sl_ctx *ctx, sl__color *color)
{
    const char *s = sl_ctx_arg_str(ctx, SL__A_OUTPUT_TYPE);
    if (s != NULL && strcmp(s, "RGB") == 0)
        *color = SL__COLOR_RGB;
    else if (s != NULL && strcmp(s, "BGR") == 0)
        *color = SL__COLOR_BGR;
    else if (s != NULL && strcmp(s, "GRAY") == 0)
        *color = SL__COLOR_GRAY;
    else /* the executor checks choices first; this guards a caller that did not */
        return sl_fail(ctx, SL_EINVAL,
                       "output_type must be \"RGB\", \"BGR\" or \"GRAY\", got \"%s\"",
                       s ? s : "(null)");
    return SL_OK;
}

sl_status sl__decoder_setup(sl_ctx *ctx)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    sl__color color;
    if (sl_batch_dtype(in) != SL_DTYPE_UINT8 || sl_batch_ndim(in) != 1)
        return sl_fail(ctx, SL_EINVAL,
                       "input 0 must be encoded image bytes, a 1-D uint8 tensor per sample; got "
                       "%d-D %s",
                       sl_batch_ndim(in), sl_dtype_name(sl_batch_dtype(in)));
    sl_status s = color_of(ctx, &color);
    if (s == SL_OK)
        sl_ctx_set_output(ctx, 0, SL_DTYPE_UINT8, 3, "HWC");
    return s;
}

sl_status sl__decoder_header(sl_ctx *ctx, int i, sl__color *color, sl__image_info *info)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    char err[256];
    sl_status s = color_of(ctx, color);
    if (s != SL_OK)
        return s;
    s = sl__image_peek(sl_batch_sample_data(in, i), (size_t)sl_batch_sample_numel(in, i), info, err,
                       sizeof err);
    return s == SL_OK ? SL_OK : sl_fail(ctx, s, "%s", err);
}

sl_status sl__decoder_options(sl_ctx *ctx, int i, sl__color *color, unsigned *flags)
{
    sl_status s = color_of(ctx, color);
    *flags = sl_ctx_arg_bool(ctx, SL__A_USE_FAST_IDCT, i) ? SL__DECODE_FAST_IDCT : 0;
    return s;
}

void *sl__decoder_scratch(void *ctx, size_t bytes)
{
    return sl_ctx_scratch_n(ctx, SL__DECODER_SCRATCH, bytes);
}

sl_status sl__decoder_decode(sl_ctx *ctx, int i, sl__color color, unsigned flags,
                             const sl__roi *roi, uint8_t *out)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    char err[256];
    const sl__decode_mem mem = {sl__decoder_scratch, ctx, sl_ctx_max_sample_bytes(ctx)};
    /* A window is decoded, but the rest of the file is read too (not reconstructed) until the
     * file is known to be whole, so it gets the same verdict whichever window an epoch picks. */
    verdicts *v = sl_ctx_state(ctx);
    uint64_t key = roi ? file_key(in, i) : 0;
    if (roi && !(key && known_whole(v, key)))
        flags |= SL__DECODE_TO_END;
    sl_status s =
        sl__image_decode(sl_batch_sample_data(in, i), (size_t)sl_batch_sample_numel(in, i), color,
                         flags, roi, out, &mem, err, sizeof err);
    if (s != SL_OK)
        return sl_fail(ctx, s, "%s", err);
    if (key && (flags & SL__DECODE_TO_END))
        add_whole(v, key);
    return SL_OK;
}

/* ---- device "mixed": the hybrid decoder's CPU half (decoder.h, hybrid.h) ------------------- */

/* SLUICE_HYBRID_DEVICE_HUFF=0 turns device entropy decoding off (hybrid.h); read once. */
static pthread_once_t device_huff_once = PTHREAD_ONCE_INIT;
static bool device_huff_on = true;

static void device_huff_read(void)
{
    const char *e = getenv("SLUICE_HYBRID_DEVICE_HUFF");
    device_huff_on = !(e && strcmp(e, "0") == 0);
}

static bool device_huff_enabled(void)
{
    pthread_once(&device_huff_once, device_huff_read);
    return device_huff_on;
}

/* Samples staged for device entropy decoding so far (all pipelines; tests read it). */
static atomic_uint_fast64_t device_huff_samples;

uint64_t sl__decoder_device_huff_samples(void)
{
    return (uint64_t)atomic_load_explicit(&device_huff_samples, memory_order_relaxed);
}

static bool is_jpeg(const sl_batch *in, int i)
{
    const uint8_t *d = sl_batch_sample_data(in, i);
    return sl_batch_sample_numel(in, i) >= 3 && d[0] == 0xff && d[1] == 0xd8 && d[2] == 0xff;
}

sl_status sl__decoder_setup_staged(sl_ctx *ctx, int i, bool hybrid, const sl__roi *window,
                                   const int64_t out_shape[3], sl__staged *st)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    sl__color color;
    unsigned flags;
    sl_status s = sl__decoder_options(ctx, i, &color, &flags);
    if (s != SL_OK)
        return s;
    st->bytes = SL__HYB_HEAD_BYTES + (size_t)(out_shape[0] * out_shape[1] * out_shape[2]);
    st->coefs = false;
    st->device_huff = false;
    if (hybrid && is_jpeg(in, i)) {
        /* a file jpeg_huff.c decoded whole before is entropy-decoded on the device (hybrid.h);
         * the verdict is decided here, and run_staged follows it (the plan sized the job) */
        if (device_huff_enabled() && (known(sl_ctx_state(ctx), file_key(in, i)) & CLEAN))
            flags |= SL__HYB_DEVICE_HUFF;
        sl__hyb_head head;
        const sl__decode_mem mem = {sl__decoder_scratch, ctx, sl_ctx_max_sample_bytes(ctx)};
        const char *why = NULL;
        size_t bytes = 0;
        char err[256];
        s = sl__jpeg_hybrid_plan(sl_batch_sample_data(in, i), (size_t)sl_batch_sample_numel(in, i),
                                 color, flags, window, &mem, &head, &bytes, &why, err, sizeof err);
        if (s != SL_OK)
            return sl_fail(ctx, s, "%s", err);
        if (head.kind == SL__HYB_COEFS) { /* a window outside the image is SL__HYB_PIXELS */
            st->bytes = bytes > st->bytes ? bytes : st->bytes;
            st->coefs = true;
            st->device_huff = head.huff_off != 0;
            if (st->device_huff) /* the head and the job only: never a fallback (run_staged) */
                st->bytes = bytes;
        }
    }
    sl_ctx_set_staging(ctx, i, st->bytes);
    return SL_OK;
}

sl_status sl__decoder_run_staged(sl_ctx *ctx, int i, bool hybrid, const sl__roi *window,
                                 const sl__staged *st, uint8_t **pixels)
{
    const sl_batch *in = sl_ctx_input(ctx, 0);
    uint8_t *buf = sl_ctx_staging(ctx, i);
    const int64_t *shape = sl_ctx_output_shape(ctx, 0, i);
    sl__color color;
    unsigned flags;
    *pixels = NULL;
    sl_status s = sl__decoder_options(ctx, i, &color, &flags);
    if (s != SL_OK)
        return s;
    if (buf == NULL)
        return sl_fail(ctx, SL_EINTERNAL, "no staging for the sample");
    sl__hyb_head *h = (sl__hyb_head *)(void *)buf;
    if (st->coefs) {
        const sl__decode_mem mem = {sl__decoder_scratch, ctx, sl_ctx_max_sample_bytes(ctx)};
        const char *why = NULL;
        char err[256];
        /* a window: the rows below it are read (entropy-decoded, not kept) until the file is
         * known whole, as the CPU decoder does (sl__decoder_decode) */
        verdicts *v = sl_ctx_state(ctx);
        uint64_t key = file_key(in, i);
        if (window && !(key && known_whole(v, key)))
            flags |= SL__DECODE_TO_END;
        if (st->device_huff)
            flags |= SL__HYB_DEVICE_HUFF;
        bool clean = false;
        s = sl__jpeg_hybrid_stage(sl_batch_sample_data(in, i), (size_t)sl_batch_sample_numel(in, i),
                                  color, flags, window, &mem, buf, st->bytes, &why, &clean, err,
                                  sizeof err);
        if (s == SL_OK && h->kind == SL__HYB_COEFS) {
            /* read to its end: a window's SL__DECODE_TO_END, or the whole image */
            if (key && (!window || (flags & SL__DECODE_TO_END)))
                add(v, key, WHOLE | (clean ? CLEAN : 0));
            else if (key && clean)
                add(v, key, CLEAN);
            if (h->huff_off)
                atomic_fetch_add_explicit(&device_huff_samples, 1, memory_order_relaxed);
            return SL_OK;
        }
        /* anything else (incomplete progressive, or a file libjpeg's coefficient reader
         * rejects): the CPU decoder decides, as on "cpu" (a file whose EOI is missing decodes
         * there, and corrupt data fails with its message) */
        if (st->device_huff) { /* no room for pixels: the file was decoded cleanly before */
            if (s != SL_OK)
                return sl_fail(ctx, s, "%s", err);
            return sl_fail(ctx, SL_EINTERNAL,
                           "the file changed since it was decoded (planned for device entropy "
                           "decoding: %s)",
                           why ? why : "not decoded");
        }
    }
    if (hybrid)
        sl_ctx_count_fallback(ctx);
    memset(h, 0, sizeof(*h));
    h->magic = SL__HYB_MAGIC;
    h->kind = SL__HYB_PIXELS;
    h->height = (int32_t)shape[0];
    h->width = (int32_t)shape[1];
    h->out_c = (int32_t)shape[2];
    *pixels = buf + SL__HYB_HEAD_BYTES;
    return SL_OK;
}
