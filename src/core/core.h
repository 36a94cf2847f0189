/* src/core/core.h: internal interface of the core module (never installed).
 *
 * Exports: the one allocator (fault-injectable, counted), error records and the thread-local
 * last error, the monotonic clock, batch storage internals, the worker thread pool.
 * Nothing here knows about images, graphs or operators.
 */
#ifndef SLUICE_CORE_H
#define SLUICE_CORE_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/batch.h"
#include "sluice/rng.h"
#include "sluice/status.h"

#ifdef __cplusplus
extern "C" { /* the CUDA sources use the allocator and errors */
#endif

/* ---- allocation (alloc.c) ---------------------------------------------------------------
 * Every allocation of the library goes through these, so tests can count allocations (steady
 * state allocates nothing) and make the Nth one fail (every failure path is exercised). */
void *sl__malloc(size_t n);
void *sl__calloc(size_t count, size_t size);
void *sl__realloc(void *p, size_t n);
/* 64-byte aligned, freed with sl__free. */
void *sl__aligned_alloc(size_t n);
void sl__free(void *p);
char *sl__strdup(const char *s);
/* Allocations made so far (successful ones). */
uint64_t sl__alloc_count(void);
/* Blocks allocated and not yet freed (realloc moves one: it counts one free and one
 * allocation), and the bytes they hold (malloc_usable_size: at least what was asked). Memory
 * libjpeg, libspng or the CUDA runtime allocate for themselves is not seen here. */
uint64_t sl__alloc_live_count(void);
uint64_t sl__alloc_live_bytes(void);
/* The most live bytes there were at any moment since the last sl__alloc_peak_reset() (since
 * the start of the process before the first). */
uint64_t sl__alloc_peak_bytes(void);
void sl__alloc_peak_reset(void);
/* Make the n-th allocation from now fail (n >= 1); 0 disables. */
void sl__alloc_fail_after(uint64_t n);
/* True once an injected failure fired since the last sl__alloc_fail_after(). */
bool sl__alloc_fail_fired(void);

/* ---- errors (status.c) ------------------------------------------------------------------ */
#define SL__MSG_MAX 2048

typedef struct sl__error {
    sl_status code;
    char op[64];
    char node[96];
    int64_t iteration; /* -1 when none */
    int sample;        /* -1 when none */
    char source[512];  /* "" when none */
    char detail[1024]; /* the failing part's own words */
    char message[SL__MSG_MAX];
} sl__error;

void sl__error_clear(sl__error *e);
/* Fills e and composes its message:
 *   decoders.image (node "dec"): iteration 7, sample 3, file "a/b.jpg": <detail>
 * op, node, source may be NULL; iteration/sample -1 are omitted. Returns code. */
sl_status sl__error_set(sl__error *e, sl_status code, const char *op, const char *node,
                        int64_t iteration, int sample, const char *source, const char *fmt, ...)
    SL_PRINTF(8, 9);
sl_status sl__error_setv(sl__error *e, sl_status code, const char *op, const char *node,
                         int64_t iteration, int sample, const char *source, const char *fmt,
                         va_list ap);
/* Plain message for calls without a handle. Returns code. */
sl_status sl__last_error_set(sl_status code, const char *fmt, ...) SL_PRINTF(2, 3);
void sl__last_error_clear(void);

/* ---- clock (clock.c) ------------------------------------------------------------------ */
/* Monotonic time in nanoseconds. */
int64_t sl__now_ns(void);

/* ---- batch internals (batch.c) ---------------------------------------------------------- */
struct sl_batch {
    int size;     /* samples in this iteration */
    int capacity; /* samples the shape/offset arrays can hold */
    int ndim;
    sl_dtype dtype;
    sl_device device;
    char layout[SL_MAX_NDIM + 1];
    int64_t *shapes;      /* capacity * SL_MAX_NDIM extents, sample i at i * SL_MAX_NDIM */
    size_t *offsets;      /* capacity + 1 byte offsets; offsets[size] = total bytes */
    const char **sources; /* capacity entries, borrowed strings (reader-owned) */
    uint8_t *data;        /* 64-byte aligned, bytes_cap bytes, reused across iterations */
    size_t bytes_cap;
    /* Where `data` lives when device is not SL_DEVICE_CPU (pinned host or GPU memory): the
     * allocator that owns it. NULL for pageable host memory (sl__aligned_alloc). */
    const struct sl__devmem *mem;
    /* Scattered storage (a fused node's output, src/exec/sched.c): sample i lives at
     * sample_ptrs[i] (per-thread scratch, valid only while its fused task runs), data is NULL.
     * capacity entries; NULL for a normal batch. */
    uint8_t **sample_ptrs;
};

/* A device-memory allocator (src/cuda implements it; core knows nothing about CUDA). alloc
 * returns NULL on failure; free accepts NULL. Threads: both may be called from any thread. */
typedef struct sl__devmem {
    void *(*alloc)(void *ctx, sl_device device, size_t bytes);
    void (*free)(void *ctx, sl_device device, void *ptr, size_t bytes); /* bytes: as allocated */
    /* Synchronous copy of device memory into pageable host memory. */
    sl_status (*to_host)(void *ctx, void *dst, const void *src, size_t bytes);
    void *ctx;
} sl__devmem;

/* Makes b's storage scattered (sample_ptrs, kept across sl__batch_reserve_samples); b must
 * have no data. */
sl_status sl__batch_scatter(sl_batch *b);
/* Prepares an empty batch (no allocation). */
void sl__batch_init(sl_batch *b);
/* Makes b's storage live on `device` through `mem` (NULL: pageable host memory). Only on a
 * batch without storage yet. */
void sl__batch_set_device(sl_batch *b, sl_device device, const sl__devmem *mem);
/* Gives dst src's samples: count, dtype, ndim, layout, shapes and sources (not the data), then
 * allocates dst's storage. */
sl_status sl__batch_mirror(sl_batch *dst, const sl_batch *src);
/* Copies n bytes from src, inside b's storage (any device), to host memory dst: a synchronous
 * device-to-host copy for GPU storage. SL_EINVAL when [src, src + n) is not inside it. */
sl_status sl__batch_read(const sl_batch *b, const void *src, size_t n, void *dst);
/* Frees the storage; the struct may be reused after sl__batch_init. */
void sl__batch_fini(sl_batch *b);
/* Makes room for n samples' metadata; keeps capacity (never shrinks). */
sl_status sl__batch_reserve_samples(sl_batch *b, int n);
/* Sets n samples of dtype/ndim/layout, shapes and sources reset to 0/NULL. */
sl_status sl__batch_begin(sl_batch *b, int n, sl_dtype dtype, int ndim, const char *layout);
/* Computes offsets from the shapes and grows the data (geometrically, 64-byte aligned) if
 * needed. Steady state with similar sizes allocates nothing. SL_ENOMEM also when the sizes do
 * not fit in size_t. */
sl_status sl__batch_alloc(sl_batch *b);
/* Bytes of sample i (its extents times the element size), false when an extent is negative or
 * when the element size times the extents other than zeros passes INT64_MAX — even for a sample
 * with a zero extent, which holds no byte: every shape that passes (the executor checks each
 * output's, sl__ctx_check_sizes) then has products of its extents, in any order and any subset,
 * that fit in int64, so no operator's size arithmetic can overflow on it (issue 15). */
bool sl__batch_sample_bytes(const sl_batch *b, int i, size_t *bytes);
static inline int64_t *sl__batch_shape_mut(sl_batch *b, int i)
{
    return b->shapes + (size_t)i * SL_MAX_NDIM;
}

/* ---- thread pool (tpool.c) -------------------------------------------------------------
 * Fixed worker threads taking tasks from one priority queue (lowest prio first, FIFO among
 * equals). A task runs to completion; no task waits for another. Destroy drops queued tasks
 * and joins the workers after the tasks that are running return. */
typedef struct sl__tpool sl__tpool;
typedef void (*sl__task_fn)(void *arg, int64_t i, int worker);
typedef struct sl__task {
    sl__task_fn fn;
    void *arg;
    int64_t i;
    uint64_t prio;
    uint64_t seq; /* set by the pool: FIFO among equal priorities */
} sl__task;

/* threads 0: no workers; the owner runs the queued tasks itself (sl__tpool_take). */
sl_status sl__tpool_create(int threads, sl__tpool **out);
/* Queues n tasks at once (one lock). Returns SL_ENOMEM if the queue cannot grow (then nothing
 * was queued) or SL_ECANCELED after destroy began. */
sl_status sl__tpool_submit(sl__tpool *p, const sl__task *tasks, int n);
int sl__tpool_threads(const sl__tpool *p);
/* Takes the first queued task (lowest prio, then FIFO) into *out, for the caller to run
 * (out->fn(out->arg, out->i, worker)); false when none is queued or destroy began. */
bool sl__tpool_take(sl__tpool *p, sl__task *out);
/* Nanoseconds the workers spent waiting for tasks so far, summed over the workers (the waits
 * under way included). */
int64_t sl__tpool_idle_ns(sl__tpool *p);
void sl__tpool_destroy(sl__tpool *p);

/* ---- random (rng.c) --------------------------------------------------------------------- */
/* One Philox4x32-10 block (exposed for the known-answer test). */
void sl__philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
/* A well-mixed 64-bit hash (splitmix64 finaliser). */
uint64_t sl__mix64(uint64_t x);
/* FNV-1a over a string, then mixed. */
uint64_t sl__hash_str(const char *s);
/* A fresh seed in [0, 2^63): from getrandom(); if that fails (no entropy source), from the
 * clock, the process id and a per-process counter, so two calls never return the same value
 * in one process. Threads: safe. */
int64_t sl__seed_fresh(void);

#ifdef __cplusplus
}
#endif
#endif
