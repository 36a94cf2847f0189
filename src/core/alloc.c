/* src/core/alloc.c: the library's one allocator.
 *
 * Exports sl__malloc & co. Counts successful allocations (tests assert that steady-state
 * iterations allocate nothing) and can fail the Nth allocation on purpose (tests walk N = 1, 2,
 * ... to exercise every failure path). Thread-safe: counters are atomics.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

static atomic_uint_fast64_t count;
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

static void *counted(void *p)
{
    if (p)
        atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
    return p;
}

void *sl__malloc(size_t n)
{
    return inject() ? NULL : counted(malloc(n ? n : 1));
}

void *sl__calloc(size_t c, size_t s)
{
    return inject() ? NULL : counted(calloc(c ? c : 1, s ? s : 1));
}

void *sl__realloc(void *p, size_t n)
{
    return inject() ? NULL : counted(realloc(p, n ? n : 1));
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

void sl__alloc_fail_after(uint64_t n)
{
    atomic_store(&fired, false);
    atomic_store(&fail_countdown, n);
}

bool sl__alloc_fail_fired(void)
{
    return atomic_load(&fired);
}
