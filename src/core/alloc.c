/* src/core/alloc.c: the library's one allocator.
 *
 * Exports sl__malloc & co. Counts successful allocations (tests assert that steady-state
 * iterations allocate nothing) and the bytes they hold (live and peak: tests assert that memory
 * stays flat over a long run and bounded for a hostile file), and can fail the Nth allocation
 * on purpose (tests walk N = 1, 2, ... to exercise every failure path). Thread-safe: counters
 * are atomics. Bytes are malloc_usable_size's (glibc and the sanitizers' allocators both have
 * it), so sl__free needs no size and a block's bytes are the same when it is counted in and out.
 */
#include <malloc.h> /* malloc_usable_size */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

static atomic_uint_fast64_t count;
static atomic_uint_fast64_t frees;      /* sl__free of non-NULL pointers, and realloc's moves */
static atomic_uint_fast64_t live_bytes; /* usable bytes of the blocks allocated, not yet freed */
static atomic_uint_fast64_t peak_bytes; /* most live_bytes since sl__alloc_peak_reset */
static atomic_uint_fast64_t fail_countdown; /* 0: off; k: the k-th next allocation fails */
static atomic_bool fired;

/* True when this allocation must fail (fault injection). */
static bool inject(void)
{
    uint_fast64_t c = atomic_load_explicit(&fail_countdown, memory_order_relaxed);
    while (c != 0) {
        if (atomic_compare_exchange_weak(&fail_countdown, &c, c - 1)) {
            if (c == 1) {
                atomic_store(&fired, true);
                return true;
            }
            return false;
        }
    }
    return false;
}

static void add_bytes(size_t n)
{
    uint_fast64_t now = atomic_fetch_add_explicit(&live_bytes, n, memory_order_relaxed) + n;
    uint_fast64_t peak = atomic_load_explicit(&peak_bytes, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak(&peak_bytes, &peak, now))
        ;
}

static void *counted(void *p)
{
    if (p) {
        atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
        add_bytes(malloc_usable_size(p));
    }
    return p;
}

/* Counts p out (p not NULL, still allocated). */
static void uncounted(void *p)
{
    atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&live_bytes, malloc_usable_size(p), memory_order_relaxed);
}

void *sl__malloc(size_t n)
{
    return inject() ? NULL : counted(malloc(n ? n : 1));
}

void *sl__calloc(size_t c, size_t s)
{
    return inject() ? NULL : counted(calloc(c ? c : 1, s ? s : 1));
}

/* The old block is counted out and the new one in (a realloc in place counts as both), so
 * live_bytes follows; a failed realloc leaves p allocated and counted. */
void *sl__realloc(void *p, size_t n)
{
    if (inject())
        return NULL;
    size_t old = p ? malloc_usable_size(p) : 0;
    void *q = realloc(p, n ? n : 1);
    if (q == NULL)
        return NULL;
    if (p != NULL) {
        atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&live_bytes, old, memory_order_relaxed);
    }
    return counted(q);
}

void *sl__aligned_alloc(size_t n)
{
    void *p = NULL;
    if (inject())
        return NULL;
    if (posix_memalign(&p, 64, n ? n : 1) != 0)
        return NULL;
    return counted(p);
}

void sl__free(void *p)
{
    if (p)
        uncounted(p);
    free(p);
}

char *sl__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = sl__malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

uint64_t sl__alloc_count(void)
{
    return atomic_load(&count);
}

uint64_t sl__alloc_live_count(void)
{
    return atomic_load(&count) - atomic_load(&frees);
}

uint64_t sl__alloc_live_bytes(void)
{
    return atomic_load(&live_bytes);
}

uint64_t sl__alloc_peak_bytes(void)
{
    return atomic_load(&peak_bytes);
}

void sl__alloc_peak_reset(void)
{
    atomic_store(&peak_bytes, atomic_load(&live_bytes));
}

void sl__alloc_fail_after(uint64_t n)
{
    atomic_store(&fired, false);
    atomic_store(&fail_countdown, n);
}

bool sl__alloc_fail_fired(void)
{
    return atomic_load(&fired);
}
