//===- BufferDevice.h - Device memory of a session's buffers ----*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// A step compiled for CUDA reads and writes the session's buffers (state,
// inputs, loss, metrics) from kernels; they are device memory
// (BufferMemory::Device, docs/GPU.md "Session buffers in device memory"),
// which the host never dereferences. Every host access goes through a copy
// on the backend's stream: the buffer's host copy (TensorBuffer::data()) is
// filled by download() and sent by upload(), whole states at once with one
// wait (copyBuffers).
//
// BufferDevice is that device: the runtime's msamp_rt_gpu_* functions, or
// in unit tests a fake whose memory is inaccessible host pages except while
// the device works on it, so that any host access the session makes by
// mistake faults in the test.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_SESSION_BUFFERDEVICE_H
#define MSAMP_LIB_RUNTIME_SESSION_BUFFERDEVICE_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace msamp::session {

class BufferDevice {
public:
  virtual ~BufferDevice();
  /// `bytes` (> 0) of zero-filled device memory; null with `error` set.
  virtual void *allocate(size_t bytes, std::string &error) = 0;
  virtual void release(void *ptr) = 0;
  /// dst[k] <- src[k], bytes[k] each, for k < n (each side host or device
  /// memory), then one wait: "" or the error.
  virtual std::string copy(void *const *dst, const void *const *src,
                           const size_t *bytes, int64_t n) = 0;
  /// msamp_rt_gpu_find_all_ones over device buffers: "" or the error.
  virtual std::string findAllOnes(const void *const *data,
                                  const int64_t *counts, const int32_t *widths,
                                  const uint64_t *masks, int64_t n,
                                  int64_t *first) = 0;
  /// Free and total device bytes: "" or the error.
  virtual std::string memoryInfo(size_t &freeBytes, size_t &totalBytes) = 0;
  /// Runs `work`, which makes the device use its memory (the step): the
  /// runtime's device just calls it.
  virtual void run(const std::function<void()> &work) { work(); }
  /// Waits for the work enqueued on the device's stream (the step's).
  virtual void synchronize() = 0;
  /// The host copy of an input a step's host code may read
  /// (msamp_rt_gpu_register_host_copy); unregister before release.
  virtual void registerHostCopy(const void *device, const void *host,
                                size_t bytes);
  virtual void unregisterHostCopy(const void *device);
};

/// The CUDA backend's device memory (msamp_gpu_host.h).
BufferDevice &runtimeBufferDevice();

} // namespace msamp::session

#endif // MSAMP_LIB_RUNTIME_SESSION_BUFFERDEVICE_H
