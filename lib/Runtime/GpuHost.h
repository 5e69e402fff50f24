//===- GpuHost.h - Runtime <-> CUDA plugin: GPU-compiled steps --*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The host wrappers a step compiled with --msamp-lower-to-gpu calls
// (include/MSAMP/Runtime/msamp_gpu_host.h, docs/RuntimeABI.md 13) are
// exported by libmsamp_runtime.so (GpuHostABI.cpp) and implemented by the
// CUDA plugin (CUDA/gpu/GpuHost.cpp), which hands this table over through
// its second entry point when backend "cuda" is created. No CUDA type
// appears here: the runtime is built without CUDA headers.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_GPUHOST_H
#define MSAMP_LIB_RUNTIME_GPUHOST_H

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstddef>
#include <cstdint>

namespace msamp::runtime {

/// 2: launchKernel takes the kernel's name (for its error message).
/// 3: copyBuffers, findAllOnes (the session's snapshot and non-finite
///    check of a GPU step's state, on the device) and memoryInfo.
/// 4: arena (the static device and pinned host arenas of a step).
/// 5: graphBeginCapture, graphEndCapture, graphLaunch, graphDestroy (the
///    session's CUDA graph of a step).
/// 6: deviceAlloc, deviceFree (the session's buffers in device memory).
/// 7: checkIndex (a computed index's range check, on the stream).
constexpr uint32_t kGpuHostVersion = 7;

/// What the plugin implements. Every function records its failure in the
/// runtime's sticky error state (the plugin's recordError hook) and
/// returns an error code or null.
struct GpuHostTable {
  uint32_t version; ///< kGpuHostVersion of the plugin
  /// Loads a kernel image (PTX text if `isPtx`, then JIT-compiled by the
  /// driver at `optLevel`; else a cubin/fatbin of `bytes` bytes).
  msamp_rt_status (*moduleLoad)(const void *image, size_t bytes, int32_t isPtx,
                                int32_t optLevel, void **module);
  msamp_rt_status (*moduleGetFunction)(void *module, const char *name,
                                       void **function);
  /// The backend's stream (kernels and ABI calls stay ordered).
  void *(*stream)();
  msamp_rt_status (*streamSynchronize)(void *stream);
  /// Enqueues `function` (named `name` in messages) on `stream`; does not
  /// wait for it.
  msamp_rt_status (*launchKernel)(void *function, const char *name,
                                  intptr_t gridX, intptr_t gridY,
                                  intptr_t gridZ, intptr_t blockX,
                                  intptr_t blockY, intptr_t blockZ,
                                  int32_t sharedBytes, void *stream,
                                  void **params, void **extra);
  /// Managed memory, reachable from kernels, the host and the backend.
  msamp_rt_status (*alloc)(size_t bytes, void **ptr);
  void (*free)(void *ptr);
  /// dst[k] <- src[k] (bytes[k] each; managed or device memory) on the
  /// stream, then one wait for all `n`: the host touches none of it.
  msamp_rt_status (*copyBuffers)(void *const *dst, const void *const *src,
                                 const size_t *bytes, int64_t n);
  /// first[k] = the index of the first element of data[k] (counts[k]
  /// elements of widths[k] bytes) whose bits hold every bit of masks[k], or
  /// -1; one wait for all `n`.
  msamp_rt_status (*findAllOnes)(const void *const *data, const int64_t *counts,
                                 const int32_t *widths, const uint64_t *masks,
                                 int64_t n, int64_t *first);
  /// The backend device's free and total memory (cudaMemGetInfo): the
  /// session refuses a step whose state cannot fit before allocating it.
  msamp_rt_status (*memoryInfo)(size_t *freeBytes, size_t *totalBytes);
  /// The backend device's arena `kind` (0: device memory, 1: pinned host
  /// memory) of at least `bytes`, kept and reused; a larger request
  /// replaces it (after a stream synchronization).
  msamp_rt_status (*arena)(int32_t kind, size_t bytes, void **ptr);
  /// Starts capturing the backend's stream into a CUDA graph
  /// (cudaStreamCaptureModeThreadLocal: this thread's unsafe calls fail).
  msamp_rt_status (*graphBeginCapture)();
  /// Ends the capture and instantiates it into `*exec`; null with the
  /// error (naming why the capture failed) when it cannot.
  msamp_rt_status (*graphEndCapture)(void **exec);
  /// Enqueues the instantiated graph on the backend's stream.
  msamp_rt_status (*graphLaunch)(void *exec);
  void (*graphDestroy)(void *exec);
  /// `bytes` of device memory (cudaMalloc), zero-filled before it returns:
  /// the session's buffers of a GPU step, which the host reaches only
  /// through copyBuffers. Not cached: the session allocates them once.
  msamp_rt_status (*deviceAlloc)(size_t bytes, void **ptr);
  void (*deviceFree)(void *ptr);
  /// Enqueues the range check of `numel` indices (`width` 4 or 8 bytes,
  /// signed) at `ids` on the backend's stream, and nothing else: `record`
  /// (16 bytes of device memory) is reset, then record[0] becomes the
  /// lowest linear index of an element outside [0, upper) that is not
  /// `ignoreIndex` (when `hasIgnore`), all ones when there is none, and
  /// record[1] that element's value. Capturable: a graph replay resets and
  /// fills the record again. The host reads it after its next wait.
  msamp_rt_status (*checkIndex)(const void *ids, int64_t numel, int32_t width,
                                int64_t upper, int64_t ignoreIndex,
                                int32_t hasIgnore, void *record);
};

/// The installed table, or null (no CUDA backend).
const GpuHostTable *installedGpuHost();

/// The plugin's second exported symbol: returns its table.
#define MSAMP_RT_CUDA_PLUGIN_GPU_HOST "msamp_rt_cuda_plugin_gpu_host"
using CudaPluginGpuHostFn = const GpuHostTable *(*)();

/// Called by the CUDA loader once backend "cuda" exists (GpuHostABI.cpp).
void installGpuHost(const GpuHostTable *table);

} // namespace msamp::runtime

#endif // MSAMP_LIB_RUNTIME_GPUHOST_H
