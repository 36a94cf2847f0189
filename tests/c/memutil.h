/* tests/c/memutil.h: what a test reads about the process's memory (C test library, memutil.c).
 *
 * Exports tu_mem_now (one reading of every figure below) and tu_mem_reset_peak. Three views, as
 * no single one sees everything: the kernel's (resident set, and its peak), the process
 * allocator's own counters (every malloc: libjpeg's and libspng's too), and sluice's allocator
 * (sl__alloc_*: the library's blocks only, with a peak). Under AddressSanitizer freed blocks wait
 * in a quarantine (256 MiB by default) before their memory is reused, so the resident set there
 * grows with the bytes freed, not only with those in use: read heap_bytes (which the sanitizer
 * keeps without the quarantine) or sluice's counters for "in use" under ASan.
 */
#ifndef SLUICE_TEST_MEMUTIL_H
#define SLUICE_TEST_MEMUTIL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct tu_mem {
    int64_t rss;            /* bytes resident now (/proc/self/status VmRSS) */
    int64_t rss_peak;       /* most bytes resident since the start or the last reset (VmHWM) */
    int64_t heap_bytes;     /* bytes in use in malloc'ed blocks: glibc's mallinfo2 (uordblks +
                             * hblkhd), or the sanitizer allocator's current allocated bytes */
    uint64_t sl_live_bytes; /* sluice's allocator: bytes in live blocks (malloc_usable_size) */
    uint64_t sl_live_count; /* ... live blocks */
    uint64_t sl_peak_bytes; /* ... most live bytes since the last reset */
} tu_mem;

/* True in a build with AddressSanitizer (its quarantine changes what rss means, above). */
bool tu_mem_asan(void);
/* One reading. -1 for a figure the system does not give. */
tu_mem tu_mem_now(void);
/* Makes glibc hand large freed blocks back at once: fixed mmap and trim thresholds (mallopt;
 * by default glibc raises its mmap threshold, up to 32 MiB, after a large block is freed, and
 * then keeps up to twice that free at the top of each thread's arena, so the resident set of a
 * long run steps up by megabytes at moments that depend on which thread freed what). No effect
 * under ASan, whose allocator is its own. Call it before what is measured. */
void tu_mem_predictable(void);
/* Hands memory that is free back where it can be: ASan's quarantine drained and its free
 * memory returned to the system (__sanitizer_purge_allocator), or glibc's free heap trimmed
 * (malloc_trim), so that the resident set read next is close to what is in use. */
void tu_mem_settle(void);
/* Resets the peaks: the kernel's (writing 5 to /proc/self/clear_refs) and sluice's. Returns
 * false when the kernel's cannot be reset (rss_peak then keeps counting from the start). */
bool tu_mem_reset_peak(void);

#define TU_MIB ((int64_t)1 << 20)

#endif
