/* ops/hd.h: SL__HD, how a helper shared by a CPU operator (C) and its GPU kernel (CUDA C++) is
 * declared, so that both compile one source (internal; C and CUDA C++).
 *
 * Exports SL__HD: `static inline` in C; under nvcc `static __host__ __device__ __forceinline__`
 * (cuda/kernel.cuh's SL_HD, internal linkage), so the same function runs in the CPU operator,
 * in the kernel on the device and in the kernel's host emulation (SLUICE_GPU_EMULATE=1), where
 * the tests compare GPU and CPU outputs bit for bit.
 * Invariant: an SL__HD function is plain arithmetic on its arguments: no globals, no calls but
 * <math.h>'s (which nvcc provides on the device), no `restrict` (not C++).
 */
#ifndef SLUICE_OPS_HD_H
#define SLUICE_OPS_HD_H

#ifdef __CUDACC__
#define SL__HD static __host__ __device__ __forceinline__
#else
#define SL__HD static inline
#endif

#endif
