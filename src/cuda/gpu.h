/* src/cuda/gpu.h: what the executor and the GPU operators see of the CUDA runtime (internal).
 *
 * Exports sl__gpu_*: probing a device (lazily: nothing touches CUDA until a pipeline with a
 * mixed or gpu node is built), one sl__gpu per pipeline holding its device, its two streams
 * (compute and host-to-device copies), a device-memory pool and a pinned host-memory pool
 * (freed blocks are kept and reused, so steady state never calls cudaMalloc/cudaHostAlloc),
 * events, and asynchronous copies. Everything is C-callable; the implementation is gpu.cu.
 *
 * Emulation: with SLUICE_GPU_EMULATE=1 in the environment, device 0 is emulated on the host:
 * "pinned" memory is ordinary host memory, "device" memory is host pages that only emulated
 * kernels and copies may touch (sl__gpu_emu_enter), copies happen at once, streams and events
 * are no-ops and kernels run on the calling thread (kernel.cuh). It exists so that the
 * GPU stage — the executor's placement, staging, copies and every kernel's indexing and
 * arithmetic — is tested on machines without a GPU; it is never chosen silently.
 *
 * Only compiled when SLUICE_HAVE_CUDA is defined.
 */
#ifndef SLUICE_CUDA_GPU_H
#define SLUICE_CUDA_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl__gpu sl__gpu;
typedef struct sl__gpu_event sl__gpu_event; /* a cudaEvent_t (NULL when emulated) */

/* True when device `device_id` can run GPU work (or is emulated). On false, why says why
 * ("no CUDA driver", "device 3 of 1", ...). Cheap after the first call. */
bool sl__gpu_probe(int device_id, char *why, size_t whylen);
/* True when SLUICE_GPU_EMULATE=1 (read once). */
bool sl__gpu_emulated(void);

/* A pipeline's GPU context on device_id: streams and pools. Returns SL_EUNSUPPORTED (no device)
 * or SL_ENOMEM with the reason in err. */
sl_status sl__gpu_create(int device_id, sl__gpu **out, char *err, size_t errlen);
/* Waits for the streams, frees every pooled block. */
void sl__gpu_destroy(sl__gpu *g);
bool sl__gpu_is_emulated(const sl__gpu *g);
/* The cudaStream_t (as void *) for kernels and for host-to-device copies. */
void *sl__gpu_stream(const sl__gpu *g);
void *sl__gpu_copy_stream(const sl__gpu *g);
/* The allocator for batches on SL_DEVICE_GPU / SL_DEVICE_PINNED of this context. */
const sl__devmem *sl__gpu_devmem(sl__gpu *g);
/* Total bytes of the device's memory (cudaMemGetInfo); emulated: of the host's. 0 if unknown. */
size_t sl__gpu_memory(const sl__gpu *g);
/* Calls of cudaMalloc + cudaHostAlloc made so far (the pools' misses), for tests. */
uint64_t sl__gpu_alloc_calls(const sl__gpu *g);
/* Makes g's device current on the calling thread for the CUDA calls that follow; returns what
 * sl__gpu_leave needs to give the thread its previous device back (the user's threads keep
 * theirs: torch.cuda.current_device() is not changed by sluice). */
int sl__gpu_enter(const sl__gpu *g);
void sl__gpu_leave(int prev);

/* Asynchronous copies on `stream` (void * cudaStream_t); kind by the pointers' devices. host
 * memory should be pinned for the copy to be asynchronous. */
sl_status sl__gpu_copy(const sl__gpu *g, void *dst, const void *src, size_t bytes, void *stream);
/* Asynchronous memset of device memory on `stream`. */
sl_status sl__gpu_memset(const sl__gpu *g, void *dst, int value, size_t bytes, void *stream);

sl_status sl__gpu_event_create(const sl__gpu *g, sl__gpu_event **out);
/* An event that can time (sl__gpu_elapsed_ms); NULL when emulated. */
sl_status sl__gpu_timer_create(const sl__gpu *g, sl__gpu_event **out);
/* Milliseconds between two completed records of timing events; SL_EINVAL when either never
 * completed a record. */
sl_status sl__gpu_elapsed_ms(sl__gpu_event *from, sl__gpu_event *to, float *ms);
void sl__gpu_event_destroy(sl__gpu_event *e);
sl_status sl__gpu_event_record(sl__gpu_event *e, void *stream);
/* Makes `stream` wait (on the device) for e's last record. */
sl_status sl__gpu_stream_wait(void *stream, sl__gpu_event *e);
/* Blocks the calling thread until e's last record completed. */
sl_status sl__gpu_event_sync(sl__gpu_event *e);
/* Blocks until everything queued on stream completed. */
sl_status sl__gpu_stream_sync(void *stream);
/* Blocks until everything queued on the current device (every stream) completed. */
sl_status sl__gpu_device_sync(void);

/* Emulation only: device memory is mapped PROT_NONE except between enter and leave, which
 * bracket every emulated kernel and copy (kernel.cuh, the copies here) and serialise them
 * process-wide. So host code that dereferences a device pointer — fine in an emulation that
 * simply used host memory, a crash on a GPU — faults in the emulated tests too. No-ops when
 * not emulated. */
void sl__gpu_emu_enter(void);
void sl__gpu_emu_leave(void);

/* The last CUDA error's text (thread-local), for messages. */
const char *sl__gpu_error_text(void);

#ifdef __cplusplus
}
#endif
#endif
