//===- StaticArenaTest.cpp - A GPU step's static arenas on the device -----===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_gpu_arena and msamp_rt_gpu_host_arena (RuntimeABI.md 13.2): the
// blocks a step compiled with --target cuda views all its buffers in
// (msamp-gpu-static-arena). The device arena must be device memory
// (cudaMalloc, not managed), the host arena pinned host memory, both
// 256-byte aligned, reserved once (msamp_rt_gpu_reserve_arenas, as the
// session does at open) and handed out again to every later request that
// fits; kernels and copies must reach both.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "MSAMP/Runtime/msamp_gpu_host.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <numeric>
#include <vector>

namespace {

class StaticArena : public msamp_cuda_test::CudaManagedTest {};

cudaMemoryType memoryType(const void *ptr) {
  cudaPointerAttributes attributes{};
  EXPECT_EQ(cudaPointerGetAttributes(&attributes, ptr), cudaSuccess);
  return attributes.type;
}

TEST_F(StaticArena, DeviceArenaIsDeviceMemoryAndHostArenaIsPinned) {
  const size_t deviceBytes = 3 << 20, hostBytes = 4096;
  ASSERT_EQ(msamp_rt_gpu_reserve_arenas(deviceBytes, hostBytes), MSAMP_RT_OK)
      << msamp_rt_get_last_error_message();
  void *device = msamp_rt_gpu_arena(deviceBytes);
  void *host = msamp_rt_gpu_host_arena(hostBytes);
  ASSERT_NE(device, nullptr);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(memoryType(device), cudaMemoryTypeDevice);
  EXPECT_EQ(memoryType(host), cudaMemoryTypeHost);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(device) % 256, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(host) % 256, 0u);
  // Every step asks again: the same blocks, no allocation.
  EXPECT_EQ(msamp_rt_gpu_arena(deviceBytes), device);
  EXPECT_EQ(msamp_rt_gpu_arena(1000), device);
  EXPECT_EQ(msamp_rt_gpu_host_arena(hostBytes), host);

  // Reachable by the device: host -> device arena -> pinned arena -> host.
  std::vector<uint32_t> in(hostBytes / 4), out(hostBytes / 4, 0);
  std::iota(in.begin(), in.end(), 7u);
  void *dst[] = {device, host};
  const void *src[] = {in.data(), device};
  size_t bytes[] = {hostBytes, hostBytes};
  for (int k = 0; k < 2; ++k)
    ASSERT_EQ(msamp_rt_gpu_copy_buffers(&dst[k], &src[k], &bytes[k], 1),
              MSAMP_RT_OK)
        << msamp_rt_get_last_error_message();
  const auto *pinned = static_cast<const uint32_t *>(host);
  out.assign(pinned, pinned + in.size()); // the host reads pinned memory
  EXPECT_EQ(out, in);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_OK);
}

TEST_F(StaticArena, ALargerStepGrowsTheArenaInDeviceMemory) {
  ASSERT_EQ(msamp_rt_gpu_reserve_arenas(1 << 20, 256), MSAMP_RT_OK);
  void *larger = msamp_rt_gpu_arena(64 << 20);
  ASSERT_NE(larger, nullptr);
  EXPECT_EQ(memoryType(larger), cudaMemoryTypeDevice);
  EXPECT_EQ(msamp_rt_gpu_arena(1 << 20), larger);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_OK);
}

TEST_F(StaticArena, ReservingMoreThanTheDeviceHasIsAnError) {
  size_t freeBytes = 0, totalBytes = 0;
  ASSERT_EQ(msamp_rt_gpu_memory_info(&freeBytes, &totalBytes), MSAMP_RT_OK);
  EXPECT_EQ(msamp_rt_gpu_reserve_arenas(totalBytes * 4, 256),
            MSAMP_RT_ERROR_OUT_OF_MEMORY);
  msamp_rt_clear_error();
  // The next request that fits allocates again (the old block was freed
  // before the failed allocation, so that growing never needs both).
  void *arena = msamp_rt_gpu_arena(256);
  EXPECT_EQ(memoryType(arena), cudaMemoryTypeDevice);
}

} // namespace
