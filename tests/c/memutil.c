/* tests/c/memutil.c: the process's memory as tests read it (see memutil.h). */
#include "memutil.h"

#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"

#if defined(__SANITIZE_ADDRESS__)
#define TU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_ASAN 1
#endif
#endif

#ifdef TU_ASAN
/* The sanitizer allocator's counter (sanitizer/allocator_interface.h, which gcc does not ship):
 * bytes allocated and not yet freed, the quarantine not included. */
size_t __sanitizer_get_current_allocated_bytes(void);
void __sanitizer_purge_allocator(void);
#endif

bool tu_mem_asan(void)
{
#ifdef TU_ASAN
    return true;
#else
    return false;
#endif
}

/* A "Key:   1234 kB" line of /proc/self/status, in bytes; -1 when absent. */
static int64_t status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    char line[256];
    long long kb = -1;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, key, n) == 0 && line[n] == ':') {
            if (sscanf(line + n + 1, "%lld", &kb) != 1)
                kb = -1;
            break;
        }
    }
    fclose(f);
    return kb < 0 ? -1 : (int64_t)kb * 1024;
}

static int64_t heap_in_use(void)
{
#ifdef TU_ASAN
    return (int64_t)__sanitizer_get_current_allocated_bytes();
#else
    struct mallinfo2 mi = mallinfo2();
    return (int64_t)(mi.uordblks + mi.hblkhd);
#endif
}

tu_mem tu_mem_now(void)
{
    return (tu_mem){.rss = status_kb("VmRSS"),
                    .rss_peak = status_kb("VmHWM"),
                    .heap_bytes = heap_in_use(),
                    .sl_live_bytes = sl__alloc_live_bytes(),
                    .sl_live_count = sl__alloc_live_count(),
                    .sl_peak_bytes = sl__alloc_peak_bytes()};
}

void tu_mem_predictable(void)
{
#ifndef TU_ASAN
    mallopt(M_MMAP_THRESHOLD, 256 << 10);
    mallopt(M_TRIM_THRESHOLD, 256 << 10);
#endif
}

void tu_mem_settle(void)
{
#ifdef TU_ASAN
    __sanitizer_purge_allocator();
#else
    malloc_trim(0);
#endif
}

bool tu_mem_reset_peak(void)
{
    sl__alloc_peak_reset();
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f == NULL)
        return false;
    bool ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}
