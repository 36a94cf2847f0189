/* src/ops/sources/external_source.c: `external_source`, batches fed by the application.
 *
 * Exports sl_op_external_source. sl_pipeline_feed_input copies a batch into a FIFO owned by the
 * node; each iteration's setup (iterations of a stateful node run in order) takes the oldest
 * batch, and run_sample copies its samples into the output. A taken batch stays referenced by
 * the iteration slot (sl_ctx_iter_data) until that slot's next iteration, then goes to a free
 * list, so run_sample never races with its release and steady state reuses buffers. Lent data
 * (sl_feed.release) is given back as soon as the last of its samples was copied (the feeder
 * may then reuse that memory while the iteration is still running), or, when the iteration
 * failed before copying them all, when the buffer is recycled.
 * Invariant: `mu` guards the FIFO and the free list; nothing else in the state changes after
 * init.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "sluice/op.h"

enum { A_LAYOUT, A_DTYPE, A_NDIM, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_LAYOUT] = {.name = "layout",
                  .type = SL_ARG_STRING,
                  .def = "\"\"",
                  .doc = "Layout of the fed data (\"HWC\"...); a fed batch's own layout, when "
                         "given, must match."},
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .flags = SL_ARG_OPTIONAL,
                 .doc = "When given, every fed batch must have this element type."},
    [A_NDIM] = {.name = "ndim",
                .type = SL_ARG_INT,
                .flags = SL_ARG_OPTIONAL | SL_ARG_RANGE,
                .min = 0,
                .max = SL_MAX_NDIM,
                .doc = "When given, every fed sample must have this many dimensions."},
};

static const sl_io_def outputs[] = {{"data", "The fed samples, in the order they were fed."}};

/* Batch sizes remembered for iterations not started yet (far more than any prefetch depth). */
#define SIZES_RING 256

typedef struct fed {
    struct fed *next; /* in the FIFO or the free list */
    int64_t seq;      /* the iteration it belongs to: batches are numbered as fed */
    struct fed *all;  /* every buffer of the node, for fini (slots hold some) */
    int n, ndim;
    sl_dtype dtype;
    char layout[SL_MAX_NDIM + 1]; /* the fed batch's own layout, "" if none */
    int64_t *shapes;              /* batch_size * SL_MAX_NDIM */
    size_t *offsets;              /* batch_size + 1 */
    const void **lent;            /* batch_size: the samples when lent */
    bool is_lent;                 /* the samples are in `lent`, not copied into `data` */
    atomic_int to_copy;           /* lent: samples run_sample has not copied yet */
    void (*release)(void *ctx);   /* set while lent data is held: called once (give_back) */
    void *release_ctx;
    uint8_t *data;
    size_t cap; /* bytes of data */
} fed;

typedef struct state {
    pthread_mutex_t mu;
    fed *head, *tail;      /* (mu) FIFO of fed batches */
    fed *free_list;        /* (mu) */
    fed *all;              /* (mu) every buffer, wherever it is */
    int64_t next_seq;      /* (mu) the iteration the next fed batch is for */
    int64_t started;       /* (mu) iterations started so far (their batch size was asked) */
    int sizes[SIZES_RING]; /* (mu) samples of batch seq, at seq % SIZES_RING */
    char layout[SL_MAX_NDIM + 1];
    sl_dtype dtype; /* SL_DTYPE_INVALID: any */
    int ndim;       /* -1: any */
    int batch_size;
} state;

static void fed_free(fed *f)
{
    if (!f)
        return;
    sl__free(f->shapes);
    sl__free(f->offsets);
    sl__free((void *)f->lent);
    sl__free(f->data);
    sl__free(f);
}

/* Gives lent data back (once). */
static void give_back(fed *f)
{
    if (f->release) {
        void (*release)(void *) = f->release;
        f->release = NULL;
        release(f->release_ctx);
    }
}

static sl_status init(sl_op_init *ini, void **out)
{
    state *s = sl__calloc(1, sizeof(*s));
    if (!s)
        return SL_ENOMEM;
    pthread_mutex_init(&s->mu, NULL);
    snprintf(s->layout, sizeof s->layout, "%s", sl_init_arg_str(ini, A_LAYOUT));
    s->dtype =
        sl_init_arg_is_set(ini, A_DTYPE) ? sl_init_arg_dtype(ini, A_DTYPE) : SL_DTYPE_INVALID;
    s->ndim = sl_init_arg_is_set(ini, A_NDIM) ? (int)sl_init_arg_int(ini, A_NDIM) : -1;
    s->batch_size = sl_init_batch_size(ini);
    if (strlen(sl_init_arg_str(ini, A_LAYOUT)) > SL_MAX_NDIM) {
        sl__free(s);
        return sl_init_fail(ini, SL_EINVAL, "argument \"layout\": more than %d dimensions",
                            SL_MAX_NDIM);
    }
    *out = s;
    return SL_OK;
}

static void fini(void *st)
{
    state *s = st;
    for (fed *f = s->all, *next; f; f = next) {
        next = f->all;
        give_back(f);
        fed_free(f);
    }
    pthread_mutex_destroy(&s->mu);
    sl__free(s);
}

/* Checks a fed batch against what the node declares. */
static sl_status check_feed(const state *s, const sl_feed *b, char *err, size_t errlen)
{
    if (b->num_samples < 1 || b->num_samples > s->batch_size)
        snprintf(err, errlen, "got %d samples; expected 1 to %d (the pipeline's batch size)",
                 b->num_samples, s->batch_size);
    else if (b->ndim < 0 || b->ndim > SL_MAX_NDIM || (s->ndim >= 0 && b->ndim != s->ndim))
        snprintf(err, errlen, "samples have %d dimensions, expected %d", b->ndim, s->ndim);
    else if (sl_dtype_size(b->dtype) == 0 || (s->dtype && b->dtype != s->dtype))
        snprintf(err, errlen, "element type %s, expected %s", sl_dtype_name(b->dtype),
                 sl_dtype_name(s->dtype));
    else if (b->layout && b->layout[0] && s->layout[0] && strcmp(b->layout, s->layout) != 0)
        snprintf(err, errlen, "layout \"%s\", expected \"%s\"", b->layout, s->layout);
    else if (b->layout && b->layout[0] && (int)strlen(b->layout) != b->ndim)
        snprintf(err, errlen, "layout \"%s\" does not have %d dimensions", b->layout, b->ndim);
    else
        return SL_OK;
    return SL_EINVAL;
}

/* Allocates the per-sample arrays of f (for the maximum batch size) if it lacks them. */
static bool ensure_arrays(const state *s, fed *f)
{
    size_t n = (size_t)s->batch_size;
    if (!f->shapes)
        f->shapes = sl__calloc(n * SL_MAX_NDIM, sizeof(int64_t));
    if (!f->offsets)
        f->offsets = sl__calloc(n + 1, sizeof(size_t));
    if (!f->lent)
        f->lent = sl__calloc(n, sizeof(void *));
    return f->shapes && f->offsets && f->lent;
}

/* A buffer of the free list (or a new one) with room for `bytes` of copied data. */
static fed *take_buffer(state *s, size_t bytes)
{
    pthread_mutex_lock(&s->mu);
    fed *f = s->free_list;
    if (f)
        s->free_list = f->next;
    pthread_mutex_unlock(&s->mu);
    if (!f) {
        if (!(f = sl__calloc(1, sizeof(*f))))
            return NULL;
        pthread_mutex_lock(&s->mu);
        f->all = s->all;
        s->all = f;
        pthread_mutex_unlock(&s->mu);
    }
    if (bytes > f->cap) {
        sl__free(f->data);
        f->data = sl__aligned_alloc(bytes);
        f->cap = f->data ? bytes : 0;
    }
    if (!ensure_arrays(s, f) || f->cap < bytes) {
        pthread_mutex_lock(&s->mu); /* back to the free list; fini frees it */
        f->next = s->free_list;
        s->free_list = f;
        pthread_mutex_unlock(&s->mu);
        return NULL;
    }
    return f;
}

static sl_status feed(void *st, const sl_feed *b, char *err, size_t errlen)
{
    state *s = st;
    sl_status rc = check_feed(s, b, err, errlen);
    if (rc != SL_OK)
        return rc;
    size_t elem = sl_dtype_size(b->dtype), total = 0;
    for (int i = 0; i < b->num_samples; i++) {
        size_t n = 1;
        for (int d = 0; d < b->ndim; d++)
            n *= (size_t)b->shapes[(size_t)i * b->ndim + d];
        total += n * elem;
    }
    fed *f = take_buffer(s, b->release ? 0 : total);
    if (!f)
        return snprintf(err, errlen, "out of memory for %zu bytes", total), SL_ENOMEM;
    f->n = b->num_samples;
    f->ndim = b->ndim;
    f->dtype = b->dtype;
    snprintf(f->layout, sizeof f->layout, "%s", b->layout ? b->layout : "");
    f->next = NULL;
    size_t off = 0;
    for (int i = 0; i < b->num_samples; i++) {
        size_t n = elem;
        for (int d = 0; d < b->ndim; d++) {
            f->shapes[(size_t)i * SL_MAX_NDIM + d] = b->shapes[(size_t)i * b->ndim + d];
            n *= (size_t)b->shapes[(size_t)i * b->ndim + d];
        }
        f->offsets[i] = off;
        if (b->release)
            f->lent[i] = b->data[i];
        else if (n)
            memcpy(f->data + off, b->data[i], n);
        off += n;
    }
    f->is_lent = b->release != NULL;
    f->release = b->release;
    f->release_ctx = b->release_ctx;
    f->offsets[b->num_samples] = off;
    pthread_mutex_lock(&s->mu);
    /* the next iteration that has not started: one that started without data stays empty */
    f->seq = s->next_seq > s->started ? s->next_seq : s->started;
    s->next_seq = f->seq + 1;
    s->sizes[f->seq % SIZES_RING] = f->n;
    if (s->tail)
        s->tail->next = f;
    else
        s->head = f;
    s->tail = f;
    pthread_mutex_unlock(&s->mu);
    return SL_OK;
}

/* Recycles the batch this slot held, drops batches fed for iterations that are over (they
 * failed before taking them), and pops the batch of `iteration` if it was fed. Needs s->mu. */
static fed *take_batch(state *s, fed **slot_batch, int64_t iteration)
{
    if (*slot_batch) {
        give_back(*slot_batch);
        (*slot_batch)->next = s->free_list;
        s->free_list = *slot_batch;
        *slot_batch = NULL;
    }
    while (s->head && s->head->seq <= iteration) {
        fed *f = s->head;
        s->head = f->next;
        if (!s->head)
            s->tail = NULL;
        if (f->seq == iteration)
            return f;
        give_back(f);
        f->next = s->free_list;
        s->free_list = f;
    }
    return NULL;
}

/* Called when `iteration` starts (the executor's hook): its batch size, 0 if nothing was fed
 * for it. From then on, batches fed go to later iterations. */
static int batch_size(void *st, int64_t iteration)
{
    state *s = st;
    pthread_mutex_lock(&s->mu);
    if (iteration + 1 > s->started)
        s->started = iteration + 1;
    int n = iteration < s->next_seq && iteration >= s->next_seq - SIZES_RING
                ? s->sizes[iteration % SIZES_RING]
                : 0;
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* A restored pipeline starts at `iteration`: the first batch fed is that iteration's. The
 * application's source restarts from there itself (the Python front end's sources by their
 * saved position); nothing else of this node is state. */
static sl_status restore(void *st, int64_t iteration, const int64_t *vals, int n, char *err,
                         size_t errlen)
{
    (void)vals;
    state *s = st;
    if (n != 0) {
        snprintf(err, errlen, "external_source saves no values, got %d", n);
        return SL_EINVAL;
    }
    pthread_mutex_lock(&s->mu);
    s->next_seq = s->started = iteration;
    pthread_mutex_unlock(&s->mu);
    return SL_OK;
}

static sl_status setup(sl_ctx *ctx)
{
    state *s = sl_ctx_state(ctx);
    fed **slot_batch = sl_ctx_iter_data(ctx);
    pthread_mutex_lock(&s->mu);
    fed *f = take_batch(s, slot_batch, sl_ctx_iteration(ctx));
    pthread_mutex_unlock(&s->mu);
    if (!f)
        return sl_fail(ctx, SL_EINVAL,
                       "no data was fed for this iteration: call feed_input before scheduling "
                       "it (prefetch_queue_depth iterations start at the first run)");
    *slot_batch = f;
    atomic_store_explicit(&f->to_copy, f->n, memory_order_relaxed); /* run_sample: later */
    if (f->n != sl_ctx_batch_size(ctx))
        return sl_fail(ctx, SL_EINVAL,
                       "%d samples were fed after this iteration had started with %d: feed "
                       "before scheduling",
                       f->n, sl_ctx_batch_size(ctx));
    sl_ctx_set_output(ctx, 0, f->dtype, f->ndim, s->layout[0] ? s->layout : f->layout);
    for (int i = 0; i < f->n; i++)
        sl_ctx_set_shape(ctx, 0, i, f->shapes + (size_t)i * SL_MAX_NDIM);
    return SL_OK;
}

static sl_status run_sample(sl_ctx *ctx, int i)
{
    fed *f = *(fed **)sl_ctx_iter_data(ctx);
    size_t bytes = f->offsets[i + 1] - f->offsets[i];
    if (bytes) /* an empty batch copied nothing: f->data is NULL, and NULL + 0 is undefined */
        memcpy(sl_ctx_output_data(ctx, 0, i), f->is_lent ? f->lent[i] : f->data + f->offsets[i],
               bytes);
    /* the last copy gives lent data back (the others' reads happen before their decrement) */
    if (f->is_lent && atomic_fetch_sub_explicit(&f->to_copy, 1, memory_order_acq_rel) == 1)
        give_back(f);
    return SL_OK;
}

const sl_op_def sl_op_external_source = {
    .name = "external_source",
    .doc = "Passes batches that the application feeds with sl_pipeline_feed_input.\n\n"
           "Batches are numbered as they are fed: the k-th batch fed is iteration k's, and its "
           "number of samples (1 to the pipeline's batch_size) is that iteration's batch size "
           "(several external sources must agree). The data is copied at feed time, so the "
           "caller may reuse its memory at once. With prefetch_queue_depth D, the first run "
           "starts D iterations: feed D batches first. An iteration that finds nothing fed "
           "fails with a message saying so.\n\n"
           "Differences from DALI: the Python `source=` callback/iterable form is in the "
           "Python API (fn.external_source).",
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_SOURCE | SL_OP_STATEFUL,
    .iter_bytes_per_sample = sizeof(void *), /* the slot's batch pointer (>= 1 sample) */
    .init = init,
    .fini = fini,
    .restore = restore,
    .setup = setup,
    .run_sample = run_sample,
    .feed = feed,
    .batch_size = batch_size,
};
