/* ops/tensor/index_gpu.h: the GPU runs of one_hot and lookup_table, and the block copies of
 * the operators that move whole samples or frames (permute_batch, element_extract,
 * sequence_rearrange) (internal; C and CUDA C++; only in builds with CUDA, SLUICE_HAVE_CUDA).
 * Kernels in index_kernels.cu.
 *
 * Exports sl__gpu_one_hot, sl__gpu_lookup and sl__gpu_blocks. As tensor_gpu.h's: the operator's
 * run_gpu (in its .c) plans each sample on the host from shapes and argument values, these upload
 * the plans and launch one kernel for the whole batch on the node's stream. Invariant: the kernels
 * write every output element exactly once and read only inside the samples and the uploaded tables.
 */
#ifndef SLUICE_OPS_TENSOR_INDEX_GPU_H
#define SLUICE_OPS_TENSOR_INDEX_GPU_H

#include <stdint.h>

#include "sluice/batch.h"
#include "sluice/dtype.h"
#include "sluice/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One sample of one_hot: the output is [outer, nc, inner] (outer * inner = the input's
 * elements); element (o, c, r) is `on` where trunc(input[o * inner + r]) == c, else `off`. */
typedef struct sl__gonehot {
    const void *in; /* device */
    void *out;      /* device */
    int64_t count;  /* output elements: input elements * nc */
    int64_t inner;
    uint64_t on, off; /* the values' bytes in the output type (little end first) */
} sl__gonehot;

/* Runs n samples (host array) of one_hot with nc classes. */
sl_status sl__gpu_one_hot(sl_ctx *ctx, const sl__gonehot *s, int n, int64_t nc, sl_dtype in_type,
                          sl_dtype out_type);

/* One sample of lookup_table: count elements of in mapped to out. */
typedef struct sl__glut {
    const void *in; /* device */
    void *out;      /* device */
    int64_t count;
} sl__glut;

/* Runs n samples of lookup_table: keys (sorted ascending, distinct) -> values, nkeys of them,
 * every other key (and a uint64 key past INT64_MAX) -> def; values converted to out_type with
 * DALI's ConvertSat. */
sl_status sl__gpu_lookup(sl_ctx *ctx, const sl__glut *s, int n, const int64_t *keys,
                         const double *values, int nkeys, double def, sl_dtype in_type,
                         sl_dtype out_type);

/* One block copy: count elements from src to dst (device pointers, not overlapping). */
typedef struct sl__gblock {
    const void *src;
    void *dst;
    int64_t count;
} sl__gblock;

/* Runs n block copies of esize-byte elements (1, 2, 4 or 8) in one launch (tensor_gpu.h's
 * gather, one 1-D job each; it plans them in host scratch buffer 3, sl_ctx_scratch_n). */
sl_status sl__gpu_blocks(sl_ctx *ctx, const sl__gblock *b, int n, size_t esize);

#ifdef __cplusplus
}
#endif
#endif
