/* src/core/batch.c: batch storage and the public read-only batch accessors.
 *
 * Invariant: samples are stored back to back from `data` in index order (offsets[i+1] =
 * offsets[i] + bytes of sample i), so a batch of equal shapes is one dense tensor. Storage only
 * grows: an executor slot reuses its batches every iteration without allocating.
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"

void sl__batch_init(sl_batch *b)
{
    memset(b, 0, sizeof(*b));
}

static void free_data(sl_batch *b, uint8_t *data)
{
    if (b->mem)
        b->mem->free(b->mem->ctx, b->device, data, b->bytes_cap);
    else
        sl__free(data);
}

void sl__batch_fini(sl_batch *b)
{
    sl__free(b->shapes);
    sl__free(b->offsets);
    sl__free((void *)b->sources);
    sl__free(b->sample_ptrs);
    free_data(b, b->data);
    sl__batch_init(b);
}

void sl__batch_set_device(sl_batch *b, sl_device device, const sl__devmem *mem)
{
    b->device = device;
    b->mem = mem;
}

sl_status sl__batch_reserve_samples(sl_batch *b, int n)
{
    if (n <= b->capacity && b->offsets) /* offsets has n + 1 entries even for n = 0 */
        return SL_OK;
    int64_t *shapes = sl__calloc((size_t)n * SL_MAX_NDIM, sizeof(int64_t));
    size_t *offsets = sl__calloc((size_t)n + 1, sizeof(size_t));
    const char **sources = sl__calloc((size_t)n, sizeof(char *));
    uint8_t **ptrs = b->sample_ptrs ? sl__calloc((size_t)n + 1, sizeof(uint8_t *)) : NULL;
    if (!shapes || !offsets || !sources || (b->sample_ptrs && !ptrs)) {
        sl__free(shapes);
        sl__free(offsets);
        sl__free((void *)sources);
        sl__free(ptrs);
        return SL_ENOMEM;
    }
    sl__free(b->shapes);
    sl__free(b->offsets);
    sl__free((void *)b->sources);
    if (ptrs) {
        sl__free(b->sample_ptrs);
        b->sample_ptrs = ptrs;
    }
    b->shapes = shapes;
    b->offsets = offsets;
    b->sources = sources;
    b->capacity = n;
    return SL_OK;
}

sl_status sl__batch_begin(sl_batch *b, int n, sl_dtype dtype, int ndim, const char *layout)
{
    sl_status st = sl__batch_reserve_samples(b, n);
    if (st != SL_OK)
        return st;
    b->size = n;
    b->dtype = dtype;
    b->ndim = ndim;
    snprintf(b->layout, sizeof(b->layout), "%s", layout ? layout : "");
    memset(b->shapes, 0, (size_t)n * SL_MAX_NDIM * sizeof(int64_t));
    memset((void *)b->sources, 0, (size_t)n * sizeof(char *));
    return SL_OK;
}

/* A shape with a zero extent holds no element whatever its other extents, whose product may
 * not fit in int64 (a parsed tensor of dims (2195456, 4398046511082, 0): issue 15, fuzz target
 * caffe); without one, the product is the sample's element count, which fits (its bytes were
 * counted with overflow checks when it was allocated). */
static int64_t numel(const sl_batch *b, int i)
{
    const int64_t *s = b->shapes + (size_t)i * SL_MAX_NDIM;
    int64_t n = 1;
    for (int d = 0; d < b->ndim; d++)
        if (s[d] == 0)
            return 0;
    for (int d = 0; d < b->ndim; d++)
        n *= s[d];
    return n;
}

bool sl__batch_sample_bytes(const sl_batch *b, int i, size_t *bytes)
{
    const int64_t *s = b->shapes + (size_t)i * SL_MAX_NDIM;
    size_t n = sl_dtype_size(b->dtype);
    bool empty = false;
    for (int d = 0; d < b->ndim; d++) {
        if (s[d] < 0)
            return false;
        if (s[d] == 0)
            empty = true;
        else if (__builtin_mul_overflow(n, (uint64_t)s[d], &n) || n > (size_t)INT64_MAX)
            return false;
    }
    *bytes = empty ? 0 : n;
    return true;
}

sl_status sl__batch_scatter(sl_batch *b)
{
    if (b->sample_ptrs)
        return SL_OK;
    b->sample_ptrs = sl__calloc((size_t)b->capacity + 1, sizeof(uint8_t *));
    return b->sample_ptrs ? SL_OK : SL_ENOMEM;
}

sl_status sl__batch_alloc(sl_batch *b)
{
    size_t total = 0, bytes;
    for (int i = 0; i < b->size; i++) {
        b->offsets[i] = total;
        if (!sl__batch_sample_bytes(b, i, &bytes) || __builtin_add_overflow(total, bytes, &total))
            return SL_ENOMEM; /* hostile sizes that the executor's limit did not stop */
    }
    b->offsets[b->size] = total;
    if (total <= b->bytes_cap && b->data)
        return SL_OK;
    size_t cap = b->bytes_cap + b->bytes_cap / 2; /* grow by 1.5x so sizes that creep up settle */
    if (cap < total)
        cap = total;
    if (cap > SIZE_MAX - 63)
        return SL_ENOMEM;
    cap = (cap + 63) & ~(size_t)63;
    /* contents need not survive growth (a batch is allocated before it is written), so the old
     * buffer goes first: a sample at max_sample_bytes never has both at once */
    free_data(b, b->data);
    b->data = b->mem ? b->mem->alloc(b->mem->ctx, b->device, cap) : sl__aligned_alloc(cap);
    b->bytes_cap = b->data ? cap : 0;
    return b->data ? SL_OK : SL_ENOMEM;
}

sl_status sl__batch_mirror(sl_batch *dst, const sl_batch *src)
{
    sl_status st = sl__batch_begin(dst, src->size, src->dtype, src->ndim, src->layout);
    if (st != SL_OK)
        return st;
    memcpy(dst->shapes, src->shapes, (size_t)src->size * SL_MAX_NDIM * sizeof(int64_t));
    memcpy((void *)dst->sources, (const void *)src->sources, (size_t)src->size * sizeof(char *));
    return sl__batch_alloc(dst);
}

sl_status sl_batch_copy_to_host(const sl_batch *b, void *dst, size_t cap)
{
    if (!b || (!dst && cap))
        return sl__last_error_set(SL_EMISUSE, "sl_batch_copy_to_host: NULL argument");
    size_t n = sl_batch_nbytes(b);
    if (cap < n)
        return sl__last_error_set(SL_EINVAL, "sl_batch_copy_to_host: %zu bytes needed, %zu given",
                                  n, cap);
    if (n == 0)
        return SL_OK;
    if (b->device == SL_DEVICE_GPU && b->mem)
        return b->mem->to_host(b->mem->ctx, dst, b->data, n);
    memcpy(dst, b->data, n);
    return SL_OK;
}

sl_status sl__batch_read(const sl_batch *b, const void *src, size_t n, void *dst)
{
    const uint8_t *s = src;
    size_t total = sl_batch_nbytes(b);
    if (n == 0)
        return SL_OK;
    if (!b->data || s < b->data || (size_t)(s - b->data) > total ||
        n > total - (size_t)(s - b->data))
        return sl__last_error_set(SL_EINVAL, "sl__batch_read: %zu bytes outside the batch", n);
    if (b->device == SL_DEVICE_GPU && b->mem)
        return b->mem->to_host(b->mem->ctx, dst, s, n);
    memcpy(dst, s, n);
    return SL_OK;
}

/* ---- public read-only accessors ---------------------------------------------------------- */

int sl_batch_size(const sl_batch *b)
{
    return b ? b->size : 0;
}

int sl_batch_ndim(const sl_batch *b)
{
    return b ? b->ndim : 0;
}

sl_dtype sl_batch_dtype(const sl_batch *b)
{
    return b ? b->dtype : SL_DTYPE_INVALID;
}

const char *sl_batch_layout(const sl_batch *b)
{
    return b ? b->layout : "";
}

sl_device sl_batch_device(const sl_batch *b)
{
    return b ? b->device : SL_DEVICE_CPU;
}

const int64_t *sl_batch_shape(const sl_batch *b, int i)
{
    if (!b || i < 0 || i >= b->size)
        return NULL;
    return b->shapes + (size_t)i * SL_MAX_NDIM;
}

int64_t sl_batch_sample_numel(const sl_batch *b, int i)
{
    if (!b || i < 0 || i >= b->size)
        return 0;
    return numel(b, i);
}

size_t sl_batch_sample_offset(const sl_batch *b, int i)
{
    if (!b || i < 0 || i > b->size)
        return 0;
    return b->offsets[i];
}

const void *sl_batch_sample_data(const sl_batch *b, int i)
{
    if (!b || i < 0 || i >= b->size)
        return NULL;
    if (b->sample_ptrs)
        return b->sample_ptrs[i];
    return b->data + b->offsets[i];
}

const void *sl_batch_data(const sl_batch *b)
{
    return b ? b->data : NULL;
}

size_t sl_batch_nbytes(const sl_batch *b)
{
    return b && b->size > 0 ? b->offsets[b->size] : 0;
}

bool sl_batch_is_uniform(const sl_batch *b)
{
    if (!b)
        return false;
    for (int i = 1; i < b->size; i++) {
        if (memcmp(b->shapes, b->shapes + (size_t)i * SL_MAX_NDIM,
                   (size_t)b->ndim * sizeof(int64_t)) != 0)
            return false;
    }
    return true;
}

const char *sl_batch_source(const sl_batch *b, int i)
{
    if (!b || i < 0 || i >= b->size)
        return NULL;
    return b->sources[i];
}
