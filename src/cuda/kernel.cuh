/* src/cuda/kernel.cuh: how an operator's run_gpu launches its kernels (CUDA C++, internal).
 *
 * Exports SL_HD, sl_gpu_each, sl_gpu_memcpy, sl_gpu_flag_sample, sl_gpu_params and sl__gdivmod
 * (the index division every kernel's functor uses). Under emulation
 * device memory is readable only inside these (src/cuda/gpu.h): do not touch it otherwise. A kernel
 * is a functor F with
 *
 *     SL_HD int64_t count(int sample) const;          elements of that sample's work
 *     SL_HD void operator()(int sample, int64_t i) const;   element i of that sample
 *
 * and sl_gpu_each(ctx, n, max_count, f, "what") runs f(s, i) for every sample s < n and every
 * i < f.count(s): on the device as one launch (grid.y = samples, a grid-stride loop over the
 * elements), or — when the GPU is emulated (SLUICE_GPU_EMULATE=1, tests) — in a loop on the
 * calling thread. So the arithmetic and indexing of every kernel are the same code on both,
 * and the emulated run is checked against the CPU operators on machines without a GPU.
 *
 * Functors carry what they read by value: device pointers (sample data, per-sample parameter
 * arrays uploaded with sl_gpu_params) and scalars. Per-sample ragged data: a parameter array
 * of structs indexed by sample.
 */
#ifndef SLUICE_CUDA_KERNEL_CUH
#define SLUICE_CUDA_KERNEL_CUH

#include <cuda_runtime.h>
#include <string.h>

#include "cuda/gpu.h"
#include "sluice/op.h"

#define SL_HD __host__ __device__ __forceinline__

template <class F> __global__ void sl__k_each(F f, int first)
{
    const int s = first + (int)blockIdx.y;
    const int64_t n = f.count(s);
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        f(s, i);
}

/* Runs f over every element of every sample (see above). max_count: the largest f.count(s)
 * (sizes the grid). Returns SL_OK, or the launch error recorded with sl_fail. */
template <class F>
static inline sl_status sl_gpu_each(sl_ctx *ctx, int nsamples, int64_t max_count, const F &f,
                                    const char *what)
{
    if (nsamples <= 0 || max_count <= 0)
        return SL_OK;
    if (sl_ctx_gpu_emulated(ctx)) {
        sl__gpu_emu_enter(); /* device memory is readable only in here */
        for (int s = 0; s < nsamples; s++) {
            const int64_t n = f.count(s);
            for (int64_t i = 0; i < n; i++)
                f(s, i);
        }
        sl__gpu_emu_leave();
        return SL_OK;
    }
    const int threads = 256;
    int64_t blocks = (max_count + threads - 1) / threads;
    /* enough blocks to fill the device several times over per sample; the loop does the rest */
    if (blocks > 1024)
        blocks = 1024;
    cudaStream_t stream = (cudaStream_t)sl_ctx_stream(ctx);
    for (int first = 0; first < nsamples; first += 65535) { /* grid.y is at most 65535 */
        int n = nsamples - first < 65535 ? nsamples - first : 65535;
        sl__k_each<F><<<dim3((unsigned)blocks, (unsigned)n), threads, 0, stream>>>(f, first);
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return sl_fail(ctx, SL_EINTERNAL, "%s: kernel launch failed: %s", what,
                       cudaGetErrorString(e));
    return SL_OK;
}

/* In a kernel: reports that `sample` failed (see sl_ctx_gpu_error_flag); the lowest wins. */
SL_HD void sl_gpu_flag_sample(int *flag, int sample)
{
#ifdef __CUDA_ARCH__
    atomicMin(flag, sample);
#else
    if (sample < *flag) /* emulated kernels run one at a time */
        *flag = sample;
#endif
}

/* In a kernel: *q = i / d, returns i % d (i >= 0, d > 0), in 32 bits when both fit: a 64-bit
 * division is several times dearer on the device. Exact either way. */
static SL_HD int64_t sl__gdivmod(int64_t i, int64_t d, int64_t *q)
{
    if (((uint64_t)i | (uint64_t)d) <= 0xffffffffu) {
        uint32_t a = (uint32_t)i, b = (uint32_t)d, t = a / b;
        *q = t;
        return a - t * b;
    }
    *q = i / d;
    return i - *q * d;
}

/* Asynchronous device-to-device (or any-direction) copy on the node's stream. */
static inline sl_status sl_gpu_memcpy(sl_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return SL_OK;
    if (sl_ctx_gpu_emulated(ctx)) {
        sl__gpu_emu_enter();
        memmove(dst, src, bytes);
        sl__gpu_emu_leave();
        return SL_OK;
    }
    cudaError_t e =
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, (cudaStream_t)sl_ctx_stream(ctx));
    if (e != cudaSuccess)
        return sl_fail(ctx, SL_EINTERNAL, "cudaMemcpyAsync failed: %s", cudaGetErrorString(e));
    return SL_OK;
}

/* Uploads n host structs as upload buffer k; NULL on failure (error recorded). */
template <class T> static inline const T *sl_gpu_params(sl_ctx *ctx, int k, const T *host, int n)
{
    return (const T *)sl_ctx_gpu_upload(ctx, k, host, sizeof(T) * (size_t)(n > 0 ? n : 1));
}

#endif
