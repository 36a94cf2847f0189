/* sluice/status.h: status codes and the error convention.
 *
 * Every fallible call returns an sl_status. The human-readable message lives with what failed:
 * sl_pipeline_error(p) after a call on a pipeline, sl_last_error() (thread-local) for calls that
 * have no handle yet (sl_graph_*, sl_pipeline_create). Codes are stable; messages are not API.
 */
#ifndef SLUICE_STATUS_H
#define SLUICE_STATUS_H

#include <stdint.h>

#if defined(SLUICE_BUILDING) && defined(__GNUC__)
#define SL_API __attribute__((visibility("default")))
#else
#define SL_API
#endif

#ifdef __GNUC__
#define SL_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define SL_PRINTF(fmt, args)
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sl_status {
    SL_OK = 0,
    SL_EINVAL,       /* an argument has the wrong type or value */
    SL_ENOTFOUND,    /* a file, operator, node or argument does not exist */
    SL_EIO,          /* reading or writing failed */
    SL_ECORRUPT,     /* data is malformed: a corrupt image, a bad spec */
    SL_EUNSUPPORTED, /* valid but not supported: an image format, a device */
    SL_ENOMEM,       /* an allocation failed */
    SL_ECANCELED,    /* the work was cancelled (pipeline destroyed) */
    SL_EMISUSE,      /* the API was called wrongly: NULL handle, wrong state */
    SL_ECALLBACK,    /* a user callback failed */
    SL_EWORKER,      /* a worker thread or process died */
    SL_EINTERNAL     /* a bug in sluice */
} sl_status;

/* The code's name, such as "SL_ECORRUPT". Returns a static string ("SL_E?" for unknown codes). */
SL_API const char *sl_status_name(sl_status s);

/* The message of the last failed call made on this thread that had no handle to hold it.
 * Returns: a thread-local string, "" if none; valid until the next failing call on this thread.
 * Threads: each thread sees its own. */
SL_API const char *sl_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
