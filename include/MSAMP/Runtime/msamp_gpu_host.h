/*===- msamp_gpu_host.h - Host wrappers of GPU-compiled steps ------*- C -*-===
 *
 * Part of the msamp project. docs/RuntimeABI.md 13.
 *
 * A train step compiled with `msamp-compile --target cuda`
 * (--msamp-lower-to-gpu) calls these functions of libmsamp_runtime.so from
 * its host code: the GPU dialect's kernel modules (PTX embedded in the
 * step), kernel launches and the step's temporary buffers. They need the
 * "cuda" backend (msamp_rt_set_backend("cuda")) by the time a kernel is
 * launched or a buffer allocated; module loads are recorded and performed
 * lazily, so a step may be dlopened before the backend is selected.
 *
 * Errors: launches and synchronizations record the sticky error
 * (msamp_rt_get_last_error) and return; the step goes on, as after a
 * failed runtime call. An allocation that fails cannot be survived (the
 * step would write through a null pointer): msamp_rt_gpu_alloc prints the
 * reason to stderr and aborts.
 *
 * MSAMP_RT_GPU_HOST_LIST below is the one list of these wrappers: the
 * compiler renames upstream's calls from it (GPURuntimeSymbols.cpp) and the
 * runtime's build checks every prototype of this file against it
 * (lib/Runtime/EntryPoints.cpp). Adding a wrapper: one line in the list,
 * its documented prototype here and its definition in GpuHostABI.cpp.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MSAMP_RUNTIME_MSAMP_GPU_HOST_H
#define MSAMP_RUNTIME_MSAMP_GPU_HOST_H

#include "MSAMP/Runtime/msamp_runtime.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel modules: a global constructor of the step registers each
 * gpu.binary (no driver call yet), a destructor forgets it. */
MSAMP_RT_EXPORT void *msamp_rt_gpu_module_load(const void *image, size_t bytes);
MSAMP_RT_EXPORT void *msamp_rt_gpu_module_load_jit(const char *ptx,
                                                   int32_t opt_level);
MSAMP_RT_EXPORT void msamp_rt_gpu_module_unload(void *module);

/* gpu.launch_func: the first lookup loads the module (the driver JITs the
 * PTX); null after recording the error. */
MSAMP_RT_EXPORT void *msamp_rt_gpu_module_get_function(void *module,
                                                       const char *name);
/* The backend's stream; destroy is a no-op. */
MSAMP_RT_EXPORT void *msamp_rt_gpu_stream_create(void);
MSAMP_RT_EXPORT void msamp_rt_gpu_stream_synchronize(void *stream);
MSAMP_RT_EXPORT void msamp_rt_gpu_stream_destroy(void *stream);
/* A null function (a failed lookup) is skipped: the error is recorded. */
MSAMP_RT_EXPORT void
msamp_rt_gpu_launch_kernel(void *function, intptr_t grid_x, intptr_t grid_y,
                           intptr_t grid_z, intptr_t block_x, intptr_t block_y,
                           intptr_t block_z, int32_t shared_bytes, void *stream,
                           void **params, void **extra, size_t num_params);

/* memref.alloc / dealloc of the step's host code: CUDA managed memory,
 * cached by size for the next step. Alignments up to 256 bytes. */
MSAMP_RT_EXPORT void *msamp_rt_gpu_alloc(size_t bytes);
MSAMP_RT_EXPORT void *msamp_rt_gpu_aligned_alloc(size_t alignment,
                                                 size_t bytes);
MSAMP_RT_EXPORT void msamp_rt_gpu_free(void *ptr);

/* The step's static arenas (msamp-gpu-static-arena, RuntimeABI.md 13.2):
 * the step calls each once at its entry with the size its buffer plan laid
 * out and views every buffer at an offset of it. msamp_rt_gpu_arena is
 * device memory (cudaMalloc), msamp_rt_gpu_host_arena pinned host memory
 * (cudaMallocHost: the buffers the step's host code reads or writes, which
 * kernels reach too). One of each per device, kept for the next step and
 * grown (the old one freed after a stream synchronization) when a step asks
 * for more. 256-byte aligned. A failure aborts, as msamp_rt_gpu_alloc's:
 * the session reserves both at open (msamp_rt_gpu_reserve_arenas), where a
 * failure is an error it reports. */
MSAMP_RT_EXPORT void *msamp_rt_gpu_arena(int64_t bytes);
MSAMP_RT_EXPORT void *msamp_rt_gpu_host_arena(int64_t bytes);

/* Every wrapper a GPU-compiled step calls, as
 * X(upstream, symbol, RESULT, PARAM...): `upstream` is the function that
 * upstream MLIR's lowering declares (MLIR's CUDA runtime wrappers mgpu*, and
 * finalize-memref-to-llvm's generic allocation functions), which the
 * compiler renames to `symbol`, the runtime's function above, whose C result
 * and parameter types follow in order (`void` alone for none). */
#define MSAMP_RT_GPU_HOST_LIST(X)                                              \
  X(mgpuModuleLoad, msamp_rt_gpu_module_load, void *, const void *, size_t)    \
  X(mgpuModuleLoadJIT, msamp_rt_gpu_module_load_jit, void *, const char *,     \
    int32_t)                                                                   \
  X(mgpuModuleUnload, msamp_rt_gpu_module_unload, void, void *)                \
  X(mgpuModuleGetFunction, msamp_rt_gpu_module_get_function, void *, void *,   \
    const char *)                                                              \
  X(mgpuStreamCreate, msamp_rt_gpu_stream_create, void *, void)                \
  X(mgpuStreamSynchronize, msamp_rt_gpu_stream_synchronize, void, void *)      \
  X(mgpuStreamDestroy, msamp_rt_gpu_stream_destroy, void, void *)              \
  X(mgpuLaunchKernel, msamp_rt_gpu_launch_kernel, void, void *, intptr_t,      \
    intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, int32_t, void *,         \
    void **, void **, size_t)                                                  \
  X(_mlir_memref_to_llvm_alloc, msamp_rt_gpu_alloc, void *, size_t)            \
  X(_mlir_memref_to_llvm_aligned_alloc, msamp_rt_gpu_aligned_alloc, void *,    \
    size_t, size_t)                                                            \
  X(_mlir_memref_to_llvm_free, msamp_rt_gpu_free, void, void *)                \
  X(msamp_rt_gpu_arena, msamp_rt_gpu_arena, void *, int64_t)                   \
  X(msamp_rt_gpu_host_arena, msamp_rt_gpu_host_arena, void *, int64_t)

/* 1 when the GPU wrappers can run (the cuda backend was created). */
MSAMP_RT_EXPORT int32_t msamp_rt_gpu_available(void);

/* For the session (not called by steps): a GPU step's state stays on the
 * device, where a host read or write would migrate its managed pages.
 * msamp_rt_gpu_copy_buffers copies dst[k] <- src[k] (bytes[k] each) for
 * k < n and waits once. msamp_rt_gpu_find_all_ones sets first[k] to the
 * index of the first element of data[k] (counts[k] elements of widths[k]
 * = 1, 2, 4 or 8 bytes) whose bits hold every bit of masks[k], or -1, and
 * waits once. Both return the status, recorded as the sticky error too. */
MSAMP_RT_EXPORT msamp_rt_status msamp_rt_gpu_copy_buffers(
    void *const *dst, const void *const *src, const size_t *bytes, int64_t n);
/* The backend device's free and total bytes (cudaMemGetInfo), for the
 * session's check that a GPU step's state fits before it allocates it. */
MSAMP_RT_EXPORT msamp_rt_status msamp_rt_gpu_memory_info(size_t *free_bytes,
                                                         size_t *total_bytes);
/* For the session: makes the device arena at least `device_bytes` and the
 * pinned host arena at least `host_bytes` (what manifest.json's
 * "gpu_arena" records), so that the step's own calls find them; the
 * status (MSAMP_RT_ERROR_OUT_OF_MEMORY when CUDA cannot allocate them). */
MSAMP_RT_EXPORT msamp_rt_status msamp_rt_gpu_reserve_arenas(size_t device_bytes,
                                                            size_t host_bytes);
MSAMP_RT_EXPORT msamp_rt_status msamp_rt_gpu_find_all_ones(
    const void *const *data, const int64_t *counts, const int32_t *widths,
    const uint64_t *masks, int64_t n, int64_t *first);

/* For the session: its buffers of a GPU step (state, inputs, loss,
 * metrics, the state's copy) are device memory, which the host reaches
 * only through msamp_rt_gpu_copy_buffers (docs/GPU.md "Session buffers in
 * device memory"). device_alloc sets *ptr to `bytes` of device memory
 * (cudaMalloc), zero-filled when it returns; the status, recorded as the
 * sticky error too (MSAMP_RT_ERROR_OUT_OF_MEMORY when it does not fit).
 * device_free frees one (null: nothing). */
MSAMP_RT_EXPORT msamp_rt_status msamp_rt_gpu_device_alloc(size_t bytes,
                                                          void **ptr);
MSAMP_RT_EXPORT void msamp_rt_gpu_device_free(void *ptr);

/* The host copy of a device buffer, for the host code of a step that reads
 * one of its inputs on the host: the packed entry point's index checks
 * (msamp_rt_check_index, RuntimeABI.md 11.1) run before the step and read
 * the batch. A session keeps a host copy of every input it writes, equal
 * to the device buffer whenever a step runs; registering it makes
 * msamp_rt_check_index read an index input in [device, device + bytes)
 * from [host, host + bytes) instead of dereferencing device memory.
 * Registering a registered `device` replaces its copy; unregister forgets
 * it (before the buffer is freed). Thread-safe; no backend needed. */
MSAMP_RT_EXPORT void msamp_rt_gpu_register_host_copy(const void *device,
                                                     const void *host,
                                                     size_t bytes);
MSAMP_RT_EXPORT void msamp_rt_gpu_unregister_host_copy(const void *device);

/* For the session's CUDA graph of a step (docs/GPU.md "The step as a CUDA
 * graph"): begin_capture starts capturing the backend's stream (thread-local
 * mode); the step's calls and launches are then recorded, not run.
 * end_capture ends it and instantiates the graph into *graph (null, with
 * the error, when a call inside could not be captured or instantiation
 * failed). launch enqueues the graph on the backend's stream without
 * waiting; destroy frees it (null: nothing). Each returns the status,
 * recorded as the sticky error too. */
MSAMP_RT_EXPORT msamp_rt_status msamp_rt_gpu_graph_begin_capture(void);
MSAMP_RT_EXPORT msamp_rt_status msamp_rt_gpu_graph_end_capture(void **graph);
MSAMP_RT_EXPORT msamp_rt_status msamp_rt_gpu_graph_launch(void *graph);
MSAMP_RT_EXPORT void msamp_rt_gpu_graph_destroy(void *graph);

#ifdef __cplusplus
}
#endif

#endif /* MSAMP_RUNTIME_MSAMP_GPU_HOST_H */
