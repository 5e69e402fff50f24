//===- Staging.h - Device, stream and memory policy -------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The ABI hands the backend plain pointers: what compiled steps pass today
// are host buffers (memref.alloc), while a CUDA-aware session can pass
// device memory. The CUDA backend accepts both and decides per pointer, per
// call, with cudaPointerGetAttributes:
//
//   * device memory (cudaMalloc/cudaMallocAsync, on the backend's device)
//     and managed memory are used in place: zero copies;
//   * anything else (ordinary host memory, and pinned host memory too) is
//     staged: copied into stream-ordered device scratch before the kernels
//     (inputs) and copied back after them (outputs).
//
// Staging is per call and keyed by address: a host buffer passed twice (an
// in-place optimizer update, out_m == m) gets one device copy that is read
// and written, exactly as a device buffer passed twice would be. Host ranges
// that overlap without being the same buffer are rejected (the ABI supports
// identical aliasing only).
//
// Every call ends with finish(). A call that staged host memory (or copied
// to the host with copyToHost) copies its outputs back and synchronizes the
// stream once: the caller reads those host bytes, or may reuse the inputs,
// as soon as it returns. A call on device and managed memory only (what
// compiled GPU steps pass) does not wait: its work is ordered on the stream
// with the kernels before and after it, and the caller synchronizes before
// its own host code reads the results (RuntimeABI.md 7, 10.2). A kernel
// that faults is then reported by the next synchronization (the step's
// last, msamp_rt_gpu_stream_synchronize); a launch that cannot start is
// reported by the call itself. Scratch comes from the device's
// default memory pool (cudaMallocAsync; the pool keeps freed memory, so a
// steady-state step allocates nothing from the driver), or plain cudaMalloc
// where pools are unsupported.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_COMMON_STAGING_H
#define MSAMP_LIB_RUNTIME_CUDA_COMMON_STAGING_H

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace msamp::runtime::cuda {

/// The device the backend runs on, its stream and allocator.
struct DeviceContext {
  int device = 0;
  int ccMajor = 0, ccMinor = 0, smCount = 0;
  char name[256] = {0};
  cudaStream_t stream = nullptr;
  bool memoryPools = false;

  /// Makes `device` current on the calling thread (CUDA's current device is
  /// per thread, and the session may call from any thread).
  msamp_rt_status makeCurrent() const;
  /// Stream-ordered scratch on `stream`.
  msamp_rt_status allocate(size_t bytes, void **ptr) const;
  void release(void *ptr) const;
};

enum class MemoryKind { Host, Device, Managed };

/// Where `ptr` lives; device memory of another device is an error.
msamp_rt_status classifyPointer(const DeviceContext &ctx, const void *ptr,
                                MemoryKind &kind);

class Staging {
public:
  explicit Staging(const DeviceContext &ctx) : ctx(ctx) {}
  ~Staging();
  Staging(const Staging &) = delete;
  Staging &operator=(const Staging &) = delete;

  /// The device address of `bytes` at `ptr`, which the kernels read. A null
  /// `ptr` or 0 bytes yields `ptr` unchanged (empty tensors, dummies).
  msamp_rt_status input(const void *ptr, size_t bytes, const void **device);
  /// The device address the kernels write `bytes` of `ptr` to; a staged
  /// output is copied back by finish().
  msamp_rt_status output(void *ptr, size_t bytes, void **device);
  /// Uninitialized device scratch, freed when the Staging ends.
  msamp_rt_status scratch(size_t bytes, void **device);
  /// Zeroed `unsigned` scratch for an amax accumulator.
  msamp_rt_status amaxAccumulator(unsigned **device);

  template <typename T>
  msamp_rt_status input(const T *ptr, size_t bytes, const T **device) {
    const void *d = nullptr;
    const msamp_rt_status s = input(static_cast<const void *>(ptr), bytes, &d);
    *device = static_cast<const T *>(d);
    return s;
  }
  template <typename T>
  msamp_rt_status output(T *ptr, size_t bytes, T **device) {
    void *d = nullptr;
    const msamp_rt_status s = output(static_cast<void *>(ptr), bytes, &d);
    *device = static_cast<T *>(d);
    return s;
  }

  /// Enqueues a copy of `bytes` at device `src` into host `dst`, which the
  /// caller reads after finish() (which then waits for it).
  msamp_rt_status copyToHost(void *dst, const void *src, size_t bytes);

  /// Copies staged outputs back and, if any host memory is involved, waits
  /// for the stream; otherwise returns without waiting.
  msamp_rt_status finish();

private:
  struct Entry {
    char *host;
    size_t bytes;
    char *device;
    bool uploaded; ///< copied to the device (it is read)
    bool copyBack; ///< copied back by finish() (it is written)
  };
  msamp_rt_status resolve(const void *ptr, size_t bytes, bool read, bool write,
                          void **device);

  const DeviceContext &ctx;
  std::vector<Entry> entries;
  std::vector<void *> buffers; ///< every allocation, freed at the end
  bool hostCopies = false;     ///< copyToHost was used
};

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_COMMON_STAGING_H
