/* ops/readers/npy.h: the parser of NumPy's .npy header (format versions 1.0, 2.0 and 3.0), for
 * readers.numpy and its fuzz target.
 *
 * Exports (npy.c): sl__npy_parse.
 *
 * The header is untrusted bytes: every length is checked against the bytes given and against
 * SL__NPY_MAX_HEADER before anything is read, the dictionary is parsed by a small grammar
 * (keys 'descr', 'fortran_order', 'shape', each exactly once; nothing else), and the array's
 * byte size is checked for overflow. Invariant: a pure function of the bytes.
 */
#ifndef SLUICE_OPS_READERS_NPY_H
#define SLUICE_OPS_READERS_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/batch.h" /* SL_MAX_NDIM */
#include "sluice/dtype.h"

/* Largest header (magic to the end of the dictionary) accepted, in bytes. NumPy writes headers
 * of a few hundred bytes and refuses to read ones above 10,000 by default. */
#define SL__NPY_MAX_HEADER 65536

typedef struct sl__npy_header {
    sl_dtype dtype;
    bool fortran_order;
    bool swap; /* big-endian elements of more than one byte: swap on reading */
    int ndim;  /* 0 .. SL_MAX_NDIM */
    int64_t shape[SL_MAX_NDIM];
    int64_t offset; /* first byte of the data in the file */
    int64_t nbytes; /* bytes of data: numel * element size (fits in int64) */
} sl__npy_header;

/* Parses the header at the start of buf (len bytes, the file's first bytes).
 * Returns 0 on success (h filled); n > len when the header needs n bytes and fewer were given
 * (read n and call again; n <= SL__NPY_MAX_HEADER); -1 when the header is invalid, with the
 * reason in err (what was wrong and at which byte offset). */
int64_t sl__npy_parse(const uint8_t *buf, size_t len, sl__npy_header *h, char *err, size_t errlen);

#endif
