/* sluice/batch.h: a batch of samples, read-only view for consumers.
 *
 * A batch holds sl_batch_size() samples of one dtype and one number of dimensions; each sample
 * has its own shape (ragged batches are normal). Storage is one contiguous allocation: sample i
 * starts at sl_batch_sample_offset(b, i) bytes and samples follow each other without gaps, so a
 * batch whose samples share a shape is a dense [batch, ...shape] tensor at sl_batch_data(b).
 *
 * Batches handed out by a pipeline are borrowed: they live until sl_pipeline_release_outputs()
 * (or the next sl_pipeline_run()) and are then reused by the executor.
 */
#ifndef SLUICE_BATCH_H
#define SLUICE_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/dtype.h"
#include "sluice/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SL_MAX_NDIM 8

typedef enum sl_device {
    SL_DEVICE_CPU = 0,    /* pageable host memory */
    SL_DEVICE_PINNED = 1, /* page-locked host memory */
    SL_DEVICE_GPU = 2     /* CUDA device memory */
} sl_device;

typedef struct sl_batch sl_batch;

SL_API int sl_batch_size(const sl_batch *b);
SL_API int sl_batch_ndim(const sl_batch *b);
SL_API sl_dtype sl_batch_dtype(const sl_batch *b);
/* Layout string such as "HWC" or "CHW"; "" when unknown. Valid as long as the batch. */
SL_API const char *sl_batch_layout(const sl_batch *b);
SL_API sl_device sl_batch_device(const sl_batch *b);
/* Shape of sample i: sl_batch_ndim() extents. Returns NULL if i is out of range. */
SL_API const int64_t *sl_batch_shape(const sl_batch *b, int i);
/* Number of elements of sample i (product of its shape). */
SL_API int64_t sl_batch_sample_numel(const sl_batch *b, int i);
/* Byte offset of sample i from sl_batch_data(); sample i occupies
 * [offset(i), offset(i) + numel(i) * dtype size). */
SL_API size_t sl_batch_sample_offset(const sl_batch *b, int i);
SL_API const void *sl_batch_sample_data(const sl_batch *b, int i);
/* Start of the contiguous storage of all samples. */
SL_API const void *sl_batch_data(const sl_batch *b);
/* Total bytes of all samples. */
SL_API size_t sl_batch_nbytes(const sl_batch *b);
/* True when every sample has the same shape (the batch is then one dense tensor). */
SL_API bool sl_batch_is_uniform(const sl_batch *b);
/* Where sample i came from (a file path, a record name), as set by the reader that produced it
 * and carried along by operators; NULL when unknown. Valid as long as the pipeline. */
SL_API const char *sl_batch_source(const sl_batch *b, int i);
/* Copies all samples of b (on any device: host, pinned or GPU) into host memory dst, back to
 * back as sl_batch_sample_offset lays them out; cap >= sl_batch_nbytes(b). Synchronous.
 * Returns SL_EINVAL when cap is too small (message in sl_last_error()). */
SL_API sl_status sl_batch_copy_to_host(const sl_batch *b, void *dst, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
