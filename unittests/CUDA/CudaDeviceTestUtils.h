//===- CudaDeviceTestUtils.h - Skips and fixtures of GPU tests --*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Every GPU test derives from CudaTest, whose SetUp skips the test, by name
// and with the reason, when there is no usable device:
//
//   [  SKIPPED ] CudaCast.QuantizeMatchesCpu
//   ... no CUDA device (cudaGetDeviceCount: 35 cudaErrorInsufficientDriver:
//       CUDA driver version is insufficient for CUDA runtime version)
//
// and otherwise checks that backend "cuda" can be selected. onBoth() runs a
// call under the CPU reference and under CUDA on identical inputs.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_UNITTESTS_CUDA_CUDADEVICETESTUTILS_H
#define MSAMP_UNITTESTS_CUDA_CUDADEVICETESTUTILS_H

#include "CudaTestUtils.h"

#include "MSAMP/Runtime/msamp_gpu_host.h"

#include "gtest/gtest.h"

#include <cuda_runtime_api.h>

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace msamp_cuda_test {

/// A test hook of the loaded CUDA plugin (lib/Runtime/CUDA/TestHooks.h),
/// or null with a failure. The runtime has loaded the plugin already (the
/// test selected "cuda"): it is found by its soname, wherever it was loaded
/// from (the build tree or a GPU kit), and never loaded a second time.
template <typename Fn>
Fn pluginHook(const char *name) {
  void *handle = dlopen("libmsamp_runtime_cuda.so", RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(handle, nullptr) << dlerror();
  void *symbol = handle ? dlsym(handle, name) : nullptr;
  EXPECT_NE(symbol, nullptr) << name;
  return reinterpret_cast<Fn>(symbol);
}

/// Why the GPU tests cannot run here ("" when they can): no driver or
/// device, or a device older than the sm_89 the kernels are built for.
inline const std::string &noDeviceReason() {
  static const std::string reason = [] {
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess) {
      (void)cudaGetLastError();
      return "cudaGetDeviceCount: " + std::to_string(static_cast<int>(error)) +
             " " + cudaGetErrorName(error) + ": " + cudaGetErrorString(error);
    }
    if (count == 0)
      return std::string("cudaGetDeviceCount: 0 devices");
    int major = 0, minor = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    if (major * 10 + minor < 89)
      return "device 0 is sm_" + std::to_string(major * 10 + minor) +
             "; the cuda backend needs sm_89 or newer";
    return std::string();
  }();
  return reason;
}

#define MSAMP_REQUIRE_CUDA_DEVICE()                                            \
  do {                                                                         \
    if (!::msamp_cuda_test::noDeviceReason().empty())                          \
      GTEST_SKIP() << "no CUDA device ("                                       \
                   << ::msamp_cuda_test::noDeviceReason() << ")";              \
  } while (false)

class CudaTest : public ::testing::Test {
protected:
  void SetUp() override {
    MSAMP_REQUIRE_CUDA_DEVICE();
    msamp_rt_clear_error();
    ASSERT_EQ(msamp_rt_set_backend("cuda"), MSAMP_RT_OK)
        << msamp_rt_get_last_error_message();
    ASSERT_EQ(msamp_rt_set_backend("cpu"), MSAMP_RT_OK);
  }
  void TearDown() override {
    msamp_rt_set_backend("cpu");
    msamp_rt_clear_error();
  }

  static void use(const char *backend) {
    ASSERT_EQ(msamp_rt_set_backend(backend), MSAMP_RT_OK)
        << msamp_rt_get_last_error_message();
  }

  static void expectNoError(const std::string &what = "") {
    EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_OK)
        << what << ": " << msamp_rt_get_last_error_message();
    msamp_rt_clear_error();
  }

  /// fn(false) on "cpu", then fn(true) on "cuda"; each must succeed.
  template <typename F>
  static void onBoth(F &&fn, const std::string &what = "") {
    use("cpu");
    fn(false);
    expectNoError(what + " (cpu)");
    use("cuda");
    fn(true);
    expectNoError(what + " (cuda)");
    use("cpu");
  }
};

/// A CudaTest on the "cuda" backend with managed buffers (as the session's
/// were), filled on the host and freed after the test.
class CudaManagedTest : public CudaTest {
protected:
  void SetUp() override {
    CudaTest::SetUp();
    if (IsSkipped() || HasFatalFailure())
      return;
    use("cuda");
  }
  void TearDown() override {
    for (void *p : buffers_)
      msamp_rt_gpu_free(p);
    CudaTest::TearDown();
  }
  /// `values` in managed memory, `slack_` bytes more allocated.
  template <typename T>
  T *managed(const std::vector<T> &values) {
    void *p = msamp_rt_gpu_alloc(values.size() * sizeof(T) + slack_);
    buffers_.push_back(p);
    std::memcpy(p, values.data(), values.size() * sizeof(T));
    return static_cast<T *>(p);
  }
  std::vector<void *> buffers_;
  size_t slack_ = 0;
};

/// An f32 memref's descriptor as a generated kernel's parameters (a
/// compiled step passes them so): allocated and aligned pointer, offset,
/// sizes, strides (row-major, static).
struct KernelMemref {
  KernelMemref(float *data, std::vector<int64_t> shape)
      : allocated(data), aligned(data), sizes(shape), strides(shape.size()) {
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      strides[d] = stride;
      stride *= shape[d];
    }
  }
  void append(std::vector<void *> &params) {
    params.push_back(&allocated);
    params.push_back(&aligned);
    params.push_back(&offset);
    for (int64_t &s : sizes)
      params.push_back(&s);
    for (int64_t &s : strides)
      params.push_back(&s);
  }
  float *allocated, *aligned;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;
};

/// cudaMalloc'd memory, for calls that pass device pointers.
class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t bytes) : size(bytes) {
    EXPECT_EQ(cudaMalloc(&ptr, bytes ? bytes : 1), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  void *get() const { return ptr; }
  void upload(const void *host) {
    // Not while an earlier call's kernels may still read it (download).
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr, host, size, cudaMemcpyHostToDevice), cudaSuccess);
  }
  /// After the calls that wrote it: a call on device memory returns before
  /// its kernels finish (RuntimeABI.md 10.2), on the backend's non-blocking
  /// stream, with which cudaMemcpy's legacy stream is not ordered.
  void download(void *host) const {
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(host, ptr, size, cudaMemcpyDeviceToHost), cudaSuccess);
  }

private:
  void *ptr = nullptr;
  size_t size;
};

} // namespace msamp_cuda_test

#endif // MSAMP_UNITTESTS_CUDA_CUDADEVICETESTUTILS_H
