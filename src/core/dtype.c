/* src/core/dtype.c: element type sizes and names. */
#include <strings.h>

#include "core/core.h"
#include "sluice/dtype.h"

static const struct {
    const char *name; /* sluice's name */
    const char *dali; /* DALI's types.* name */
    size_t size;
} info[SL_DTYPE_COUNT] = {
    [SL_DTYPE_INVALID] = {"invalid", "NO_TYPE", 0}, [SL_DTYPE_UINT8] = {"uint8", "UINT8", 1},
    [SL_DTYPE_UINT16] = {"uint16", "UINT16", 2},    [SL_DTYPE_UINT32] = {"uint32", "UINT32", 4},
    [SL_DTYPE_UINT64] = {"uint64", "UINT64", 8},    [SL_DTYPE_INT8] = {"int8", "INT8", 1},
    [SL_DTYPE_INT16] = {"int16", "INT16", 2},       [SL_DTYPE_INT32] = {"int32", "INT32", 4},
    [SL_DTYPE_INT64] = {"int64", "INT64", 8},       [SL_DTYPE_FLOAT16] = {"float16", "FLOAT16", 2},
    [SL_DTYPE_FLOAT32] = {"float32", "FLOAT", 4},   [SL_DTYPE_FLOAT64] = {"float64", "FLOAT64", 8},
    [SL_DTYPE_BOOL] = {"bool", "BOOL", 1},
};

size_t sl_dtype_size(sl_dtype t)
{
    return (unsigned)t < SL_DTYPE_COUNT ? info[t].size : 0;
}

const char *sl_dtype_name(sl_dtype t)
{
    return (unsigned)t < SL_DTYPE_COUNT ? info[t].name : "invalid";
}

sl_dtype sl_dtype_from_name(const char *name)
{
    if (!name)
        return SL_DTYPE_INVALID;
    for (int t = 1; t < SL_DTYPE_COUNT; t++) {
        if (strcasecmp(name, info[t].name) == 0 || strcasecmp(name, info[t].dali) == 0)
            return (sl_dtype)t;
    }
    if (strcasecmp(name, "DOUBLE") == 0)
        return SL_DTYPE_FLOAT64;
    if (strcasecmp(name, "HALF") == 0)
        return SL_DTYPE_FLOAT16;
    return SL_DTYPE_INVALID;
}
