//===- GpuHostTest.cpp - msamp_rt_gpu_* without the CUDA backend ----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The host wrappers of GPU-compiled steps (msamp_gpu_host.h,
// docs/RuntimeABI.md 13) as a step sees them before (or without) backend
// "cuda": module loads are only recorded, every call that needs the device
// records BACKEND_UNAVAILABLE and returns, and an allocation, which the step
// cannot survive failing, aborts with the reason. This binary never selects
// "cuda", so the plugin's table is never installed here.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Runtime/msamp_gpu_host.h"
#include "MSAMP/Runtime/msamp_runtime.h"

#include "gtest/gtest.h"

#include <string>

namespace {

TEST(GpuHost, NotAvailableWithoutTheCudaBackend) {
  EXPECT_EQ(msamp_rt_gpu_available(), 0);
}

TEST(GpuHost, ModuleLoadsAreRecordedLazily) {
  // A global constructor of a step runs at dlopen: it must not need a device.
  msamp_rt_clear_error();
  static const char ptx[] = ".version 8.0\n.target sm_90\n";
  void *module = msamp_rt_gpu_module_load_jit(ptx, 3);
  ASSERT_NE(module, nullptr);
  void *image = msamp_rt_gpu_module_load(ptx, sizeof(ptx));
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_OK);
  msamp_rt_gpu_module_unload(module);
  msamp_rt_gpu_module_unload(image);
}

TEST(GpuHost, LaunchWithoutTheBackendRecordsWhy) {
  static const char ptx[] = ".version 8.0\n.target sm_90\n";
  void *module = msamp_rt_gpu_module_load_jit(ptx, 3);
  msamp_rt_clear_error();
  EXPECT_EQ(msamp_rt_gpu_module_get_function(module, "k"), nullptr);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(std::string(msamp_rt_get_last_error_message())
                .find("this step was compiled for CUDA (msamp-compile "
                      "--target cuda); select the cuda backend first"),
            std::string::npos)
      << msamp_rt_get_last_error_message();
  // The step goes on: a launch of the failed lookup and the stream calls
  // are harmless.
  msamp_rt_clear_error();
  EXPECT_EQ(msamp_rt_gpu_stream_create(), nullptr);
  msamp_rt_gpu_launch_kernel(nullptr, 1, 1, 1, 256, 1, 1, 0, nullptr, nullptr,
                             nullptr, 0);
  msamp_rt_gpu_stream_synchronize(nullptr);
  msamp_rt_gpu_stream_destroy(nullptr);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_BACKEND_UNAVAILABLE);
  msamp_rt_gpu_free(nullptr);
  msamp_rt_gpu_module_unload(module);
  msamp_rt_clear_error();
}

TEST(GpuHostDeathTest, AllocationWithoutTheBackendAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(msamp_rt_gpu_alloc(16),
               "msamp: cannot allocate 16 bytes for a CUDA step: .*select the "
               "cuda backend first");
}

// The step's arenas (msamp-gpu-static-arena): the session's reservation
// reports the missing backend; the step's own request cannot fail softly.
TEST(GpuHost, ReservingArenasWithoutTheBackendRecordsWhy) {
  msamp_rt_clear_error();
  EXPECT_EQ(msamp_rt_gpu_reserve_arenas(1024, 256),
            MSAMP_RT_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(std::string(msamp_rt_get_last_error_message())
                .find("msamp_rt_gpu_reserve_arenas"),
            std::string::npos);
  msamp_rt_clear_error();
}

// The session's device memory (its buffers of a GPU step) needs the
// backend: an error naming the call and a null pointer, not an abort (the
// session reports it); freeing null is harmless.
TEST(GpuHost, DeviceAllocationWithoutTheBackendRecordsWhy) {
  msamp_rt_clear_error();
  int token = 0;
  void *ptr = &token;
  EXPECT_EQ(msamp_rt_gpu_device_alloc(64, &ptr),
            MSAMP_RT_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_NE(std::string(msamp_rt_get_last_error_message())
                .find("msamp_rt_gpu_device_alloc"),
            std::string::npos);
  msamp_rt_clear_error();
  msamp_rt_gpu_device_free(nullptr);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_OK);
}

// The session's CUDA graph calls say which call needed the backend; an
// end of capture leaves no graph behind, and destroying none is harmless.
TEST(GpuHost, GraphCallsWithoutTheBackendRecordWhy) {
  msamp_rt_clear_error();
  EXPECT_EQ(msamp_rt_gpu_graph_begin_capture(),
            MSAMP_RT_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(std::string(msamp_rt_get_last_error_message())
                .find("msamp_rt_gpu_graph_begin_capture"),
            std::string::npos);
  msamp_rt_clear_error();
  int token = 0;
  void *graph = &token;
  EXPECT_EQ(msamp_rt_gpu_graph_end_capture(&graph),
            MSAMP_RT_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(graph, nullptr);
  msamp_rt_clear_error();
  EXPECT_EQ(msamp_rt_gpu_graph_launch(&token),
            MSAMP_RT_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(std::string(msamp_rt_get_last_error_message())
                .find("msamp_rt_gpu_graph_launch"),
            std::string::npos);
  msamp_rt_clear_error();
  msamp_rt_gpu_graph_destroy(nullptr);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_OK);
}

TEST(GpuHostDeathTest, ArenaWithoutTheBackendAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(msamp_rt_gpu_arena(4096),
               "msamp: cannot allocate the 4096-byte device arena of a CUDA "
               "step: .*select the cuda backend first");
  EXPECT_DEATH(msamp_rt_gpu_host_arena(256),
               "msamp: cannot allocate the 256-byte host arena of a CUDA "
               "step: .*select the cuda backend first");
}

} // namespace
