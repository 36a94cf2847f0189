/* src/core/version.c: the library version. */
#include "sluice/sluice.h"

const char *sl_version(void)
{
#define SL_STR2(x) #x
#define SL_STR(x) SL_STR2(x)
    return SL_STR(SLUICE_VERSION_MAJOR) "." SL_STR(SLUICE_VERSION_MINOR) "." SL_STR(
        SLUICE_VERSION_PATCH);
}
