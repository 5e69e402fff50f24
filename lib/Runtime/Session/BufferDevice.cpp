//===- BufferDevice.cpp - Device memory of a session's buffers ------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "BufferDevice.h"
#include "Error.h"

#include "MSAMP/Runtime/msamp_gpu_host.h"
#include "MSAMP/Runtime/msamp_runtime.h"

namespace msamp::session {

BufferDevice::~BufferDevice() = default;

void BufferDevice::registerHostCopy(const void *device, const void *host,
                                    size_t bytes) {
  msamp_rt_gpu_register_host_copy(device, host, bytes);
}

void BufferDevice::unregisterHostCopy(const void *device) {
  msamp_rt_gpu_unregister_host_copy(device);
}

namespace {

class RuntimeBufferDevice : public BufferDevice {
public:
  void *allocate(size_t bytes, std::string &error) override {
    void *ptr = nullptr;
    error = runtimeFailure(msamp_rt_gpu_device_alloc(bytes, &ptr));
    return error.empty() ? ptr : nullptr;
  }
  void release(void *ptr) override { msamp_rt_gpu_device_free(ptr); }
  std::string copy(void *const *dst, const void *const *src,
                   const size_t *bytes, int64_t n) override {
    return runtimeFailure(msamp_rt_gpu_copy_buffers(dst, src, bytes, n));
  }
  std::string findAllOnes(const void *const *data, const int64_t *counts,
                          const int32_t *widths, const uint64_t *masks,
                          int64_t n, int64_t *first) override {
    return runtimeFailure(
        msamp_rt_gpu_find_all_ones(data, counts, widths, masks, n, first));
  }
  std::string memoryInfo(size_t &freeBytes, size_t &totalBytes) override {
    return runtimeFailure(msamp_rt_gpu_memory_info(&freeBytes, &totalBytes));
  }
  void synchronize() override {
    msamp_rt_gpu_stream_synchronize(msamp_rt_gpu_stream_create());
  }
};

} // namespace

BufferDevice &runtimeBufferDevice() {
  static RuntimeBufferDevice device;
  return device;
}

} // namespace msamp::session
