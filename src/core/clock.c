/* src/core/clock.c: the monotonic clock (CLOCK_MONOTONIC, nanoseconds). */
#include <time.h>

#include "core/core.h"

int64_t sl__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
