/* sluice/dtype.h: element types of batches. */
#ifndef SLUICE_DTYPE_H
#define SLUICE_DTYPE_H

#include <stddef.h>
#include "sluice/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sl_dtype {
    SL_DTYPE_INVALID = 0,
    SL_DTYPE_UINT8,
    SL_DTYPE_UINT16,
    SL_DTYPE_UINT32,
    SL_DTYPE_UINT64,
    SL_DTYPE_INT8,
    SL_DTYPE_INT16,
    SL_DTYPE_INT32,
    SL_DTYPE_INT64,
    SL_DTYPE_FLOAT16,
    SL_DTYPE_FLOAT32,
    SL_DTYPE_FLOAT64,
    SL_DTYPE_BOOL,
    SL_DTYPE_COUNT
} sl_dtype;

/* Size of one element in bytes; 0 for SL_DTYPE_INVALID or an out-of-range value. */
SL_API size_t sl_dtype_size(sl_dtype t);

/* Lower-case name: "uint8", "float32", "bool"... Returns "invalid" for unknown values. */
SL_API const char *sl_dtype_name(sl_dtype t);

/* Parses a name as sl_dtype_name prints it, or a DALI name ("UINT8", "FLOAT" = float32,
 * "FLOAT16", "INT32", "BOOL"...). Returns SL_DTYPE_INVALID if the name is unknown. */
SL_API sl_dtype sl_dtype_from_name(const char *name);

#ifdef __cplusplus
}
#endif
#endif
