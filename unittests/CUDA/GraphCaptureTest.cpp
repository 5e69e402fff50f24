//===- GraphCaptureTest.cpp - The runtime's CUDA graph of a step ----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_gpu_graph_* (msamp_gpu_host.h), which the session uses to replay
// a GPU step as one CUDA graph (docs/GPU.md "The step as a CUDA graph"): a
// captured runtime call (its stream-ordered scratch included) replays on
// the buffers at their fixed addresses, reading what they hold at each
// launch; a synchronization inside the capture fails it with the reason,
// and the stream then runs eagerly again with no error left behind. The
// session's policy around these calls is tested without a GPU
// (unittests/Session/StepGraphTest.cpp), whole compiled steps in
// CompiledStepTest.cpp (CudaGraphStep.*).
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "MSAMP/Runtime/msamp_gpu_host.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace msamp_cuda_test;

namespace {

class CudaGraphCapture : public CudaTest {};

/// `n` floats of device memory (cudaMalloc), as a session's buffers.
struct DeviceFloats {
  explicit DeviceFloats(int64_t n) : n(n) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void **>(&ptr),
                         static_cast<size_t>(n) * sizeof(float)),
              cudaSuccess);
  }
  ~DeviceFloats() { cudaFree(ptr); }
  DeviceFloats(const DeviceFloats &) = delete;
  DeviceFloats &operator=(const DeviceFloats &) = delete;
  void set(const std::vector<float> &values) {
    ASSERT_EQ(cudaMemcpy(ptr, values.data(), values.size() * sizeof(float),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  float first() const {
    float v = -1;
    EXPECT_EQ(cudaMemcpy(&v, ptr, sizeof(v), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return v;
  }
  float *ptr = nullptr;
  int64_t n;
};

/// Values below `peak` in magnitude, with -peak at one element.
std::vector<float> withPeak(int64_t n, float peak) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = peak * 0.5f * static_cast<float>(i % 7) / 7.0f;
  v[static_cast<size_t>(n / 3)] = -peak;
  return v;
}

TEST_F(CudaGraphCapture, AReplayedCallReadsItsBuffersAtEachLaunch) {
  use("cuda");
  void *stream = msamp_rt_gpu_stream_create();
  ASSERT_NE(stream, nullptr) << msamp_rt_get_last_error_message();
  const int64_t n = 1 << 16;
  DeviceFloats in(n), out(1);
  MemRef inRef(in.ptr, {n}), outRef(out.ptr, {});
  // The warm-up: the amax kernel's module loads outside the capture.
  in.set(withPeak(n, 1.0f));
  _mlir_ciface_msamp_rt_amax(inRef, outRef, MSAMP_RT_F32);
  msamp_rt_gpu_stream_synchronize(stream);
  expectNoError("the warm-up call");
  ASSERT_EQ(out.first(), 1.0f);

  ASSERT_EQ(msamp_rt_gpu_graph_begin_capture(), MSAMP_RT_OK)
      << msamp_rt_get_last_error_message();
  // Recorded (its zeroed scratch accumulator too), not run.
  _mlir_ciface_msamp_rt_amax(inRef, outRef, MSAMP_RT_F32);
  void *graph = nullptr;
  ASSERT_EQ(msamp_rt_gpu_graph_end_capture(&graph), MSAMP_RT_OK)
      << msamp_rt_get_last_error_message();
  ASSERT_NE(graph, nullptr);
  expectNoError("the captured call");
  EXPECT_EQ(out.first(), 1.0f) << "the captured call ran";

  // Each launch reads what the input holds then: new data at the same
  // address, as the session copies each batch into its input buffers.
  for (float peak : {3.0f, 7.5f, 0.25f}) {
    in.set(withPeak(n, peak));
    ASSERT_EQ(msamp_rt_gpu_graph_launch(graph), MSAMP_RT_OK)
        << msamp_rt_get_last_error_message();
    msamp_rt_gpu_stream_synchronize(stream);
    expectNoError("a replay");
    EXPECT_EQ(out.first(), peak);
  }
  msamp_rt_gpu_graph_destroy(graph);
}

TEST_F(CudaGraphCapture, ASynchronizationInsideTheCaptureFailsItWithTheReason) {
  use("cuda");
  void *stream = msamp_rt_gpu_stream_create();
  ASSERT_NE(stream, nullptr) << msamp_rt_get_last_error_message();
  const int64_t n = 4096;
  DeviceFloats in(n), out(1);
  MemRef inRef(in.ptr, {n}), outRef(out.ptr, {});
  in.set(withPeak(n, 2.0f));
  _mlir_ciface_msamp_rt_amax(inRef, outRef, MSAMP_RT_F32);
  msamp_rt_gpu_stream_synchronize(stream);
  expectNoError("the warm-up call");

  ASSERT_EQ(msamp_rt_gpu_graph_begin_capture(), MSAMP_RT_OK)
      << msamp_rt_get_last_error_message();
  _mlir_ciface_msamp_rt_amax(inRef, outRef, MSAMP_RT_F32);
  // What a step whose host code reads a kernel's result would do.
  msamp_rt_gpu_stream_synchronize(stream);
  EXPECT_NE(msamp_rt_get_last_error(), MSAMP_RT_OK)
      << "a synchronization of a capturing stream succeeded";
  msamp_rt_clear_error();
  void *graph = &graph;
  EXPECT_NE(msamp_rt_gpu_graph_end_capture(&graph), MSAMP_RT_OK);
  EXPECT_EQ(graph, nullptr);
  const std::string message = msamp_rt_get_last_error_message();
  EXPECT_NE(message.find("could not be captured"), std::string::npos)
      << message;
  msamp_rt_clear_error();

  // The stream runs eagerly again, and no CUDA error is left for the next
  // call to find.
  in.set(withPeak(n, 5.0f));
  _mlir_ciface_msamp_rt_amax(inRef, outRef, MSAMP_RT_F32);
  msamp_rt_gpu_stream_synchronize(stream);
  expectNoError("an eager call after the failed capture");
  EXPECT_EQ(out.first(), 5.0f);
}

} // namespace
