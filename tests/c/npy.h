/* tests/c/npy.h: reading NumPy .npy files (format 1.0/2.0, little-endian, C order) for tests.
 *
 * Part of the C test library (tests/c/npy.c). Expected values written by the reference scripts
 * in tests/data/ arrive this way.
 */
#ifndef SLUICE_TEST_NPY_H
#define SLUICE_TEST_NPY_H

#include <stdint.h>

#include "sluice/sluice.h"

typedef struct npy_array {
    sl_dtype dtype;
    int ndim;
    int64_t shape[SL_MAX_NDIM];
    int64_t numel;
    void *data; /* malloc'ed, numel * sl_dtype_size(dtype) bytes */
} npy_array;

/* Loads path into *a. Returns 0, or -1 with a reason in err. */
int npy_load(const char *path, npy_array *a, char *err, size_t errlen);
void npy_free(npy_array *a);
/* Element k as a double. */
double npy_get(sl_dtype dtype, const void *data, int64_t k);

#endif
