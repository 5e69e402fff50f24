//===- AsyncCallTest.cpp - Runtime calls that do not wait -----------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// A runtime call whose buffers are all device or managed memory (a compiled
// GPU step's) returns once its kernels are enqueued on the backend's stream
// (RuntimeABI.md 10.2, common/Staging.h). These tests hold the stream with a
// gate (a host function that blocks it until the test opens it) to prove
// that the calls returned without waiting, then check that the next call on
// the stream and the host, after one synchronization, see the CPU backend's
// values; and that a kernel fault the call could not see is reported by the
// next synchronization (in a step: its last, so the session refuses it).
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "MSAMP/Runtime/msamp_gpu_host.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace msamp_cuda_test;

namespace {

/// Blocks the stream it is enqueued on until open() (or 20 s, the sign that
/// the test's thread waited for the stream instead of opening the gate).
struct Gate {
  std::atomic<bool> opened{false};
  std::atomic<bool> timedOut{false};

  static void CUDART_CB hold(void *self) {
    auto *gate = static_cast<Gate *>(self);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!gate->opened.load()) {
      if (std::chrono::steady_clock::now() > deadline) {
        gate->timedOut = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  void open() { opened = true; }
};

/// Managed memory, as a compiled step's buffers (msamp_rt_gpu_alloc).
template <typename T>
class Managed {
public:
  explicit Managed(size_t n) : n(n) {
    EXPECT_EQ(cudaMallocManaged(reinterpret_cast<void **>(&ptr),
                                n * sizeof(T) + 1, cudaMemAttachGlobal),
              cudaSuccess);
  }
  ~Managed() { cudaFree(ptr); }
  Managed(const Managed &) = delete;
  Managed &operator=(const Managed &) = delete;
  T *data() const { return ptr; }
  size_t bytes() const { return n * sizeof(T); }

private:
  T *ptr = nullptr;
  size_t n;
};

class CudaAsyncCalls : public CudaTest {};

TEST_F(CudaAsyncCalls, CallsOnDeviceMemoryReturnBeforeTheirKernelsRun) {
  const std::vector<float> values = interestingFloats(1 << 16, 91);
  const int64_t n = static_cast<int64_t>(values.size());
  Raw in = highPrecisionBuffer(MSAMP_RT_F32, values);
  auto scale = msamp_rt_test::scalar(4.0f);
  auto scaleInv = msamp_rt_test::scalar(0.25f);

  // The CPU backend's quantize, then dequantize of its result.
  Raw cpuQ(MSAMP_RT_F8E4M3FN, {n}), cpuBack(MSAMP_RT_F32, {n});
  use("cpu");
  _mlir_ciface_msamp_rt_quantize(in, scale, cpuQ, MSAMP_RT_F32,
                                 MSAMP_RT_F8E4M3FN);
  _mlir_ciface_msamp_rt_dequantize(cpuQ, scaleInv, cpuBack, MSAMP_RT_F8E4M3FN,
                                   MSAMP_RT_F32);
  expectNoError("cpu");

  use("cuda");
  void *stream = msamp_rt_gpu_stream_create(); // the backend's stream
  ASSERT_NE(stream, nullptr) << msamp_rt_get_last_error_message();
  Managed<float> dIn(n), dScale(1), dScaleInv(1), dBack(n);
  Managed<uint8_t> dQ(n);
  std::memcpy(dIn.data(), in.bytes.data(), dIn.bytes());
  dScale.data()[0] = 4.0f;
  dScaleInv.data()[0] = 0.25f;
  MemRef inRef(dIn.data(), {n}), qRef(dQ.data(), {n}),
      backRef(dBack.data(), {n}), scaleRef(dScale.data(), {}),
      scaleInvRef(dScaleInv.data(), {});

  // Load both kernels first: with CUDA's lazy module loading (the default)
  // the first launch of a kernel loads its module, which waits for the
  // device, here for the gate below.
  _mlir_ciface_msamp_rt_quantize(inRef, scaleRef, qRef, MSAMP_RT_F32,
                                 MSAMP_RT_F8E4M3FN);
  _mlir_ciface_msamp_rt_dequantize(qRef, scaleInvRef, backRef,
                                   MSAMP_RT_F8E4M3FN, MSAMP_RT_F32);
  msamp_rt_gpu_stream_synchronize(stream);
  expectNoError("the warm-up calls");
  std::memset(dQ.data(), 0, dQ.bytes());
  std::memset(dBack.data(), 0, dBack.bytes());

  Gate gate;
  ASSERT_EQ(
      cudaLaunchHostFunc(static_cast<cudaStream_t>(stream), Gate::hold, &gate),
      cudaSuccess);
  // A call that synchronized would wait here until the gate timed out.
  _mlir_ciface_msamp_rt_quantize(inRef, scaleRef, qRef, MSAMP_RT_F32,
                                 MSAMP_RT_F8E4M3FN);
  // The next call's kernel reads the first one's output: stream order.
  _mlir_ciface_msamp_rt_dequantize(qRef, scaleInvRef, backRef,
                                   MSAMP_RT_F8E4M3FN, MSAMP_RT_F32);
  expectNoError("the calls, enqueued");
  EXPECT_FALSE(gate.timedOut) << "a call waited for the stream";
  EXPECT_EQ(cudaStreamQuery(static_cast<cudaStream_t>(stream)),
            cudaErrorNotReady);
  gate.open();

  // The host reads after one synchronization (a compiled step: the wait
  // msamp-gpu-async-launches places before host code, or its last).
  msamp_rt_gpu_stream_synchronize(stream);
  expectNoError("the synchronization");
  EXPECT_FALSE(gate.timedOut);
  Raw gpuQ(MSAMP_RT_F8E4M3FN, {n}), gpuBack(MSAMP_RT_F32, {n});
  std::memcpy(gpuQ.bytes.data(), dQ.data(), dQ.bytes());
  std::memcpy(gpuBack.bytes.data(), dBack.data(), dBack.bytes());
  expectSameValues(cpuQ, gpuQ, "quantize, read after the synchronization");
  expectSameValues(cpuBack, gpuBack,
                   "dequantize of the quantize's output, in stream order");
}

TEST_F(CudaAsyncCalls, HostPointersStillWait) {
  // Staged host memory is read back by the call itself: the call must
  // return with it written, whatever is queued before it.
  const std::vector<float> values = interestingFloats(4096, 92);
  const int64_t n = static_cast<int64_t>(values.size());
  Raw in = highPrecisionBuffer(MSAMP_RT_F32, values);
  auto scale = msamp_rt_test::scalar(2.0f);
  Raw cpu(MSAMP_RT_F8E4M3FN, {n}), gpu(MSAMP_RT_F8E4M3FN, {n});
  use("cpu");
  _mlir_ciface_msamp_rt_quantize(in, scale, cpu, MSAMP_RT_F32,
                                 MSAMP_RT_F8E4M3FN);
  use("cuda");
  void *stream = msamp_rt_gpu_stream_create();
  ASSERT_NE(stream, nullptr);
  Gate gate;
  ASSERT_EQ(
      cudaLaunchHostFunc(static_cast<cudaStream_t>(stream), Gate::hold, &gate),
      cudaSuccess);
  // Open the gate from another thread a little later: the call, which
  // waits for the stream, can then finish.
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    gate.open();
  });
  _mlir_ciface_msamp_rt_quantize(in, scale, gpu, MSAMP_RT_F32,
                                 MSAMP_RT_F8E4M3FN);
  const bool openedBeforeReturn = gate.opened.load();
  opener.join();
  expectNoError("quantize on host memory");
  EXPECT_TRUE(openedBeforeReturn) << "returned before its copy back";
  EXPECT_EQ(cudaStreamQuery(static_cast<cudaStream_t>(stream)), cudaSuccess);
  expectSameValues(cpu, gpu, "host-memory quantize");
}

/// In a child process (the fault poisons the CUDA context): an amax whose
/// kernel reads far past its buffer. The call cannot see the fault (it does
/// not wait); the next synchronization reports it as a recorded error, as
/// the wait at the end of a compiled step does, which makes the session
/// refuse the step and restore its state.
void faultThenSynchronize() {
  if (msamp_rt_set_backend("cuda") != MSAMP_RT_OK)
    std::exit(2);
  void *small = nullptr;
  float *amax = nullptr;
  if (cudaMalloc(&small, 4096) != cudaSuccess ||
      cudaMalloc(reinterpret_cast<void **>(&amax), sizeof(float)) !=
          cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    std::exit(2);
  }
  // 2 GiB of f32 from a 4 KiB buffer.
  MemRef in(small, {int64_t{1} << 29}), out(amax, {});
  _mlir_ciface_msamp_rt_amax(in, out, MSAMP_RT_F32);
  std::fprintf(stderr, "after the call: status %d\n",
               static_cast<int>(msamp_rt_get_last_error()));
  msamp_rt_gpu_stream_synchronize(msamp_rt_gpu_stream_create());
  const msamp_rt_status status = msamp_rt_get_last_error();
  std::fprintf(stderr, "after the synchronization: status %d: %s\n",
               static_cast<int>(status), msamp_rt_get_last_error_message());
  std::exit(status != MSAMP_RT_OK ? 0 : 1);
}

TEST_F(CudaAsyncCalls, KernelFaultIsReportedByTheNextSynchronization) {
  // A fresh process (re-executed, not forked from one with a CUDA context).
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(faultThenSynchronize(), ::testing::ExitedWithCode(0),
              "after the synchronization: status [1-9][0-9]*: ");
}

} // namespace
