/* src/cuda/gpu.cu: the CUDA runtime behind src/cuda/gpu.h — probing, per-pipeline streams,
 * device and pinned memory pools, events, copies, and the host emulation used by tests.
 *
 * Pools: a freed block goes to its pool's free list; an allocation takes the smallest free
 * block that fits and is at most twice the request (a block's size is the one asked for when
 * it was made; the batch gives it back with it), else asks CUDA (and, when CUDA is out of
 * memory, frees the cached blocks and asks again). Batches only grow, so after warm-up nothing
 * reaches CUDA. Blocks still listed at destroy are freed then. A mutex per pool: batches of
 * several slots grow from different threads.
 *
 * Errors: CUDA failures become SL_EUNSUPPORTED (no device), SL_ENOMEM (allocation) or
 * SL_EINTERNAL, with cudaGetErrorString kept in a thread-local buffer (sl__gpu_error_text).
 */
#include <cuda_runtime.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/gpu.h"

static __thread char last_text[256];

static sl_status cuda_fail(cudaError_t e, const char *what)
{
    snprintf(last_text, sizeof last_text, "%s: %s (%s)", what, cudaGetErrorString(e),
             cudaGetErrorName(e));
    cudaGetLastError(); /* clear the sticky-free error state */
    if (e == cudaErrorMemoryAllocation)
        return SL_ENOMEM;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInvalidDevice)
        return SL_EUNSUPPORTED;
    return SL_EINTERNAL;
}

extern "C" const char *sl__gpu_error_text(void)
{
    return last_text;
}

/* ---- probing --------------------------------------------------------------------------- */

extern "C" bool sl__gpu_emulated(void)
{
    static int cached = -1;
    if (cached < 0) {
        const char *v = getenv("SLUICE_GPU_EMULATE");
        cached = v && strcmp(v, "1") == 0;
    }
    return cached == 1;
}

extern "C" bool sl__gpu_probe(int device_id, char *why, size_t whylen)
{
    if (sl__gpu_emulated()) {
        if (device_id == 0)
            return true;
        snprintf(why, whylen, "device %d requested, but SLUICE_GPU_EMULATE emulates device 0 only",
                 device_id);
        return false;
    }
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        snprintf(why, whylen, "no usable CUDA device: %s", cudaGetErrorString(e));
        cudaGetLastError();
        return false;
    }
    if (device_id < 0 || device_id >= n) {
        snprintf(why, whylen, "device_id %d, but this machine has %d CUDA device%s", device_id, n,
                 n == 1 ? "" : "s");
        return false;
    }
    return true;
}

/* ---- the calling thread's device -------------------------------------------------------- */

/* Makes `device` current on this thread; returns the device that was, or -1 (nothing to
 * restore) when it already was or the call failed. */
static int push_device(int device)
{
    int prev = -1;
    if (cudaGetDevice(&prev) != cudaSuccess) {
        cudaGetLastError();
        prev = -1;
    }
    if (prev == device)
        return -1;
    if (cudaSetDevice(device) != cudaSuccess) {
        cuda_fail(cudaGetLastError(), "cudaSetDevice");
        return -1;
    }
    return prev;
}

static void pop_device(int prev)
{
    if (prev >= 0)
        cudaSetDevice(prev);
}

/* ---- emulated device memory ------------------------------------------------------------- */

typedef struct emu_block {
    void *p;
    size_t n; /* mapped bytes (whole pages) */
} emu_block;

static pthread_mutex_t emu_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static int emu_depth;         /* (emu_mu) nesting of enter/leave */
static emu_block *emu_blocks; /* (emu_mu) every mapped device block */
static int emu_n, emu_cap;    /* (emu_mu) */

static void emu_protect_all(int prot)
{
    for (int i = 0; i < emu_n; i++)
        mprotect(emu_blocks[i].p, emu_blocks[i].n, prot);
}

extern "C" void sl__gpu_emu_enter(void)
{
    if (!sl__gpu_emulated())
        return;
    pthread_mutex_lock(&emu_mu);
    if (emu_depth++ == 0)
        emu_protect_all(PROT_READ | PROT_WRITE);
}

extern "C" void sl__gpu_emu_leave(void)
{
    if (!sl__gpu_emulated())
        return;
    if (--emu_depth == 0)
        emu_protect_all(PROT_NONE);
    pthread_mutex_unlock(&emu_mu);
}

static void *emu_dev_alloc(size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t n = (bytes + page - 1) / page * page;
    void *p = mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    pthread_mutex_lock(&emu_mu);
    if (emu_n == emu_cap) {
        int cap = emu_cap ? 2 * emu_cap : 64;
        emu_block *v = (emu_block *)sl__realloc(emu_blocks, sizeof(emu_block) * (size_t)cap);
        if (!v) {
            pthread_mutex_unlock(&emu_mu);
            munmap(p, n);
            return NULL;
        }
        emu_blocks = v;
        emu_cap = cap;
    }
    emu_blocks[emu_n++] = emu_block{p, n};
    if (emu_depth > 0)
        mprotect(p, n, PROT_READ | PROT_WRITE);
    pthread_mutex_unlock(&emu_mu);
    return p;
}

static void emu_dev_free(void *p)
{
    pthread_mutex_lock(&emu_mu);
    for (int i = 0; i < emu_n; i++) {
        if (emu_blocks[i].p == p) {
            munmap(p, emu_blocks[i].n);
            emu_blocks[i] = emu_blocks[--emu_n];
            break;
        }
    }
    if (emu_n == 0) {
        sl__free(emu_blocks);
        emu_blocks = NULL;
        emu_cap = 0;
    }
    pthread_mutex_unlock(&emu_mu);
}

/* ---- pools ------------------------------------------------------------------------------ */

typedef struct block {
    void *ptr;
    size_t bytes;
} block;

typedef struct pool {
    pthread_mutex_t mu;
    block *free_list; /* (mu) cached blocks */
    int nfree, cap;   /* (mu) */
} pool;

struct sl__gpu {
    int device;
    bool emulated;
    cudaStream_t stream, copy_stream;
    pool dev, pinned;
    sl__devmem mem;
    uint64_t alloc_calls; /* (atomic) */
};

static void *raw_alloc(sl__gpu *g, sl_device d, size_t bytes)
{
    void *p = NULL;
    __atomic_fetch_add(&g->alloc_calls, 1, __ATOMIC_RELAXED);
    if (g->emulated)
        return d == SL_DEVICE_GPU ? emu_dev_alloc(bytes) : sl__aligned_alloc(bytes);
    int prev = push_device(g->device); /* any thread may grow a batch; the user's keeps its own */
    cudaError_t e = d == SL_DEVICE_GPU ? cudaMalloc(&p, bytes)
                                       : cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
    pop_device(prev);
    if (e != cudaSuccess) {
        cuda_fail(e, d == SL_DEVICE_GPU ? "cudaMalloc" : "cudaHostAlloc");
        return NULL;
    }
    return p;
}

static void raw_free(sl__gpu *g, sl_device d, void *p)
{
    if (g->emulated && d == SL_DEVICE_GPU) {
        emu_dev_free(p);
        return;
    }
    if (g->emulated) {
        sl__free(p);
        return;
    }
    int prev = push_device(g->device);
    if (d == SL_DEVICE_GPU)
        cudaFree(p);
    else
        cudaFreeHost(p);
    pop_device(prev);
}

/* Frees every cached block of pl. Needs pl->mu. */
static void drain(sl__gpu *g, pool *pl, sl_device d)
{
    for (int i = 0; i < pl->nfree; i++)
        raw_free(g, d, pl->free_list[i].ptr);
    pl->nfree = 0;
}

static void *pool_alloc(void *ctx, sl_device d, size_t bytes)
{
    sl__gpu *g = (sl__gpu *)ctx;
    pool *pl = d == SL_DEVICE_GPU ? &g->dev : &g->pinned;
    void *p = NULL;
    if (bytes == 0) /* an empty batch still gets storage: cudaMalloc(0) gives NULL */
        bytes = 64;
    pthread_mutex_lock(&pl->mu);
    int best = -1;
    for (int i = 0; i < pl->nfree; i++) {
        size_t b = pl->free_list[i].bytes;
        if (b >= bytes && b / 2 <= bytes && (best < 0 || b < pl->free_list[best].bytes))
            best = i;
    }
    if (best >= 0) {
        p = pl->free_list[best].ptr;
        pl->free_list[best] = pl->free_list[--pl->nfree];
    }
    if (!p) {
        p = raw_alloc(g, d, bytes);
        if (!p && pl->nfree) { /* give the cache back and try once more */
            drain(g, pl, d);
            p = raw_alloc(g, d, bytes);
        }
    }
    pthread_mutex_unlock(&pl->mu);
    return p;
}

static void pool_free(void *ctx, sl_device d, void *p, size_t bytes)
{
    if (!p)
        return;
    sl__gpu *g = (sl__gpu *)ctx;
    pool *pl = d == SL_DEVICE_GPU ? &g->dev : &g->pinned;
    pthread_mutex_lock(&pl->mu);
    if (pl->nfree == pl->cap) {
        int cap = pl->cap ? 2 * pl->cap : 16;
        block *v = (block *)sl__realloc(pl->free_list, sizeof(block) * (size_t)cap);
        if (!v) { /* cannot cache it: give it back */
            pthread_mutex_unlock(&pl->mu);
            raw_free(g, d, p);
            return;
        }
        pl->free_list = v;
        pl->cap = cap;
    }
    pl->free_list[pl->nfree++] = block{p, bytes};
    pthread_mutex_unlock(&pl->mu);
}

static sl_status pool_to_host(void *ctx, void *dst, const void *src, size_t bytes)
{
    sl__gpu *g = (sl__gpu *)ctx;
    if (g->emulated) {
        sl__gpu_emu_enter();
        memcpy(dst, src, bytes);
        sl__gpu_emu_leave();
        return SL_OK;
    }
    int prev = push_device(g->device);
    cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost);
    pop_device(prev);
    return e == cudaSuccess ? SL_OK
                            : sl__last_error_set(cuda_fail(e, "cudaMemcpy"), "%s", last_text);
}

/* ---- context ----------------------------------------------------------------------------- */

extern "C" sl_status sl__gpu_create(int device_id, sl__gpu **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!sl__gpu_probe(device_id, err, errlen))
        return SL_EUNSUPPORTED;
    sl__gpu *g = (sl__gpu *)sl__calloc(1, sizeof(sl__gpu));
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return SL_ENOMEM;
    }
    g->device = device_id;
    g->emulated = sl__gpu_emulated();
    pthread_mutex_init(&g->dev.mu, NULL);
    pthread_mutex_init(&g->pinned.mu, NULL);
    g->mem = sl__devmem{pool_alloc, pool_free, pool_to_host, g};
    if (!g->emulated) {
        int prev = push_device(device_id); /* the caller's current device is left as it was */
        cudaError_t e = cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking);
        if (e == cudaSuccess)
            e = cudaStreamCreateWithFlags(&g->copy_stream, cudaStreamNonBlocking);
        pop_device(prev);
        if (e != cudaSuccess) {
            sl_status st = cuda_fail(e, "creating the pipeline's CUDA streams");
            snprintf(err, errlen, "%s", last_text);
            sl__gpu_destroy(g);
            return st;
        }
    }
    *out = g;
    return SL_OK;
}

extern "C" void sl__gpu_destroy(sl__gpu *g)
{
    if (!g)
        return;
    int prev = g->emulated ? -1 : push_device(g->device);
    if (!g->emulated) {
        if (g->stream)
            cudaStreamSynchronize(g->stream);
        if (g->copy_stream)
            cudaStreamSynchronize(g->copy_stream);
    }
    pthread_mutex_lock(&g->dev.mu);
    drain(g, &g->dev, SL_DEVICE_GPU);
    pthread_mutex_unlock(&g->dev.mu);
    pthread_mutex_lock(&g->pinned.mu);
    drain(g, &g->pinned, SL_DEVICE_PINNED);
    pthread_mutex_unlock(&g->pinned.mu);
    if (!g->emulated) {
        if (g->stream)
            cudaStreamDestroy(g->stream);
        if (g->copy_stream)
            cudaStreamDestroy(g->copy_stream);
    }
    pop_device(prev);
    sl__free(g->dev.free_list);
    sl__free(g->pinned.free_list);
    pthread_mutex_destroy(&g->dev.mu);
    pthread_mutex_destroy(&g->pinned.mu);
    sl__free(g);
}

extern "C" bool sl__gpu_is_emulated(const sl__gpu *g)
{
    return g->emulated;
}

extern "C" void *sl__gpu_stream(const sl__gpu *g)
{
    return (void *)g->stream;
}

extern "C" void *sl__gpu_copy_stream(const sl__gpu *g)
{
    return (void *)g->copy_stream;
}

extern "C" const sl__devmem *sl__gpu_devmem(sl__gpu *g)
{
    return &g->mem;
}

extern "C" size_t sl__gpu_memory(const sl__gpu *g)
{
    if (g->emulated) {
        long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
        return pages > 0 && size > 0 ? (size_t)pages * (size_t)size : 0;
    }
    size_t free_bytes = 0, total = 0;
    int prev = push_device(g->device);
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess)
        total = 0;
    pop_device(prev);
    return total;
}

extern "C" uint64_t sl__gpu_alloc_calls(const sl__gpu *g)
{
    return __atomic_load_n(&g->alloc_calls, __ATOMIC_RELAXED);
}

extern "C" int sl__gpu_enter(const sl__gpu *g)
{
    return g->emulated ? -1 : push_device(g->device);
}

extern "C" void sl__gpu_leave(int prev)
{
    if (!sl__gpu_emulated())
        pop_device(prev);
}

/* ---- copies and events ------------------------------------------------------------------- */

extern "C" sl_status sl__gpu_copy(const sl__gpu *g, void *dst, const void *src, size_t bytes,
                                  void *stream)
{
    if (bytes == 0)
        return SL_OK;
    if (g->emulated) {
        sl__gpu_emu_enter();
        memmove(dst, src, bytes);
        sl__gpu_emu_leave();
        return SL_OK;
    }
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, (cudaStream_t)stream);
    return e == cudaSuccess ? SL_OK : cuda_fail(e, "cudaMemcpyAsync");
}

extern "C" sl_status sl__gpu_memset(const sl__gpu *g, void *dst, int value, size_t bytes,
                                    void *stream)
{
    if (bytes == 0)
        return SL_OK;
    if (g->emulated) {
        sl__gpu_emu_enter();
        memset(dst, value, bytes);
        sl__gpu_emu_leave();
        return SL_OK;
    }
    cudaError_t e = cudaMemsetAsync(dst, value, bytes, (cudaStream_t)stream);
    return e == cudaSuccess ? SL_OK : cuda_fail(e, "cudaMemsetAsync");
}

static sl_status make_event(const sl__gpu *g, unsigned flags, sl__gpu_event **out)
{
    *out = NULL;
    if (g->emulated)
        return SL_OK;
    cudaEvent_t ev;
    cudaError_t e = cudaEventCreateWithFlags(&ev, flags);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaEventCreate");
    *out = (sl__gpu_event *)ev;
    return SL_OK;
}

extern "C" sl_status sl__gpu_event_create(const sl__gpu *g, sl__gpu_event **out)
{
    /* blocking: a consumer waiting in share_outputs sleeps instead of spinning on a core the
     * CPU stage could use */
    return make_event(g, cudaEventDisableTiming | cudaEventBlockingSync, out);
}

extern "C" sl_status sl__gpu_timer_create(const sl__gpu *g, sl__gpu_event **out)
{
    return make_event(g, cudaEventDefault, out);
}

extern "C" sl_status sl__gpu_elapsed_ms(sl__gpu_event *from, sl__gpu_event *to, float *ms)
{
    *ms = 0;
    if (!from || !to)
        return SL_EINVAL;
    cudaError_t e = cudaEventElapsedTime(ms, (cudaEvent_t)from, (cudaEvent_t)to);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return SL_EINVAL;
    }
    return SL_OK;
}

extern "C" void sl__gpu_event_destroy(sl__gpu_event *e)
{
    if (e)
        cudaEventDestroy((cudaEvent_t)e);
}

extern "C" sl_status sl__gpu_event_record(sl__gpu_event *e, void *stream)
{
    if (!e)
        return SL_OK;
    cudaError_t r = cudaEventRecord((cudaEvent_t)e, (cudaStream_t)stream);
    return r == cudaSuccess ? SL_OK : cuda_fail(r, "cudaEventRecord");
}

extern "C" sl_status sl__gpu_stream_wait(void *stream, sl__gpu_event *e)
{
    if (!e)
        return SL_OK;
    cudaError_t r = cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)e, 0);
    return r == cudaSuccess ? SL_OK : cuda_fail(r, "cudaStreamWaitEvent");
}

extern "C" sl_status sl__gpu_event_sync(sl__gpu_event *e)
{
    if (!e)
        return SL_OK;
    cudaError_t r = cudaEventSynchronize((cudaEvent_t)e);
    return r == cudaSuccess ? SL_OK : cuda_fail(r, "cudaEventSynchronize");
}

extern "C" sl_status sl__gpu_stream_sync(void *stream)
{
    if (sl__gpu_emulated())
        return SL_OK;
    cudaError_t r = cudaStreamSynchronize((cudaStream_t)stream);
    return r == cudaSuccess ? SL_OK : cuda_fail(r, "cudaStreamSynchronize");
}

extern "C" sl_status sl__gpu_device_sync(void)
{
    if (sl__gpu_emulated())
        return SL_OK;
    cudaError_t r = cudaDeviceSynchronize();
    return r == cudaSuccess ? SL_OK : cuda_fail(r, "cudaDeviceSynchronize");
}
