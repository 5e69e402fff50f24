//===- BackendSelectionTest.cpp - Selecting "cuda", with or without a GPU -===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// These run on every machine: without a device they check that selecting
// "cuda" loads the plugin lazily and fails with a clear error, leaving the
// previous backend selected; with one, that it is selected.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <string>

using namespace msamp_cuda_test;

namespace {

TEST(CudaBackendSelection, WithoutADeviceSelectingCudaFailsClearly) {
  if (noDeviceReason().empty())
    GTEST_SKIP() << "a CUDA device is present";
  msamp_rt_clear_error();
  ASSERT_EQ(msamp_rt_set_backend("cpu"), MSAMP_RT_OK);
  EXPECT_EQ(msamp_rt_set_backend("cuda"), MSAMP_RT_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_BACKEND_UNAVAILABLE);
  const std::string message = msamp_rt_get_last_error_message();
  // The plugin was found and loaded (cudart with it), and said why it
  // cannot run: the driver is missing (35) or there is no device (100).
  EXPECT_EQ(message.rfind("no CUDA device: cudaGetDeviceCount returned ", 0),
            0u)
      << message;
  msamp_rt_clear_error();
  EXPECT_STREQ(msamp_rt_get_backend(), "cpu");
  // Asking again gives the same answer (nothing is cached on failure).
  EXPECT_EQ(msamp_rt_set_backend("cuda"), MSAMP_RT_ERROR_BACKEND_UNAVAILABLE);
  msamp_rt_clear_error();
}

TEST(CudaBackendSelection, AMissingPluginIsReportedWithItsPath) {
  if (noDeviceReason().empty())
    GTEST_SKIP() << "a CUDA device is present (a started backend is kept, so "
                    "the loader never runs again)";
  msamp_rt_clear_error();
  ASSERT_EQ(msamp_rt_set_backend("cpu"), MSAMP_RT_OK);
  ASSERT_EQ(setenv("MSAMP_CUDA_BACKEND_LIBRARY",
                   "/nonexistent/libmsamp_runtime_cuda.so", 1),
            0);
  EXPECT_EQ(msamp_rt_set_backend("cuda"), MSAMP_RT_ERROR_BACKEND_UNAVAILABLE);
  const std::string message = msamp_rt_get_last_error_message();
  EXPECT_NE(message.find("cannot load the CUDA backend "
                         "'/nonexistent/libmsamp_runtime_cuda.so'"),
            std::string::npos)
      << message;
  unsetenv("MSAMP_CUDA_BACKEND_LIBRARY");
  msamp_rt_clear_error();
  EXPECT_STREQ(msamp_rt_get_backend(), "cpu");
}

TEST(CudaBackendSelection, WithADeviceCudaIsSelected) {
  MSAMP_REQUIRE_CUDA_DEVICE();
  msamp_rt_clear_error();
  ASSERT_EQ(msamp_rt_set_backend("cuda"), MSAMP_RT_OK)
      << msamp_rt_get_last_error_message();
  EXPECT_STREQ(msamp_rt_get_backend(), "cuda");
  EXPECT_EQ(msamp_rt_world_size(), 1); // no MSAMP_WORLD_SIZE: local
  ASSERT_EQ(msamp_rt_set_backend("cpu"), MSAMP_RT_OK);
}

} // namespace
