//===- StateOnDeviceTest.cpp - The session's state operations on the GPU --===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_gpu_copy_buffers and msamp_rt_gpu_find_all_ones: the session's
// snapshot and non-finite check of a GPU step's state, which run on the
// device so that the state's managed pages never migrate to the host (on
// an H200 the host versions made most of a GPT-2-small step's time). The
// rule is the session's (ElementType.cpp nonFiniteBits): all exponent bits
// set, or the magnitude bits 0x7F of f8E4M3FN.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "MSAMP/Runtime/msamp_gpu_host.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

using msamp_cuda_test::DeviceBuffer;
using msamp_cuda_test::MemRef;

class StateOnDevice : public msamp_cuda_test::CudaManagedTest {
protected:
  StateOnDevice() { slack_ = 1; } // empty buffers get a distinct pointer
};

TEST_F(StateOnDevice, FindsTheFirstNonFiniteElementOfEachBuffer) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> finite32(0, 0x7F7FFFFF);
  // f32: a finite random buffer of several grid waves with a NaN and, after
  // it, an Inf; the NaN's index is the answer.
  std::vector<uint32_t> f32(3'000'017);
  for (uint32_t &v : f32)
    v = finite32(rng) | (rng() & 1u) << 31;
  f32[2'500'001] = 0xFF800000u; // -inf
  f32[1'234'567] = 0x7FC00001u; // nan
  // f16 with +inf at 5; bf16 all finite; f8E4M3FN with 0xFF (nan) at 2 and
  // 0x7F at 3; f8E5M2 with 0x7C (inf) at the last element.
  std::vector<uint16_t> f16(100, 0x3C00), bf16(4096, 0x7F7F);
  f16[5] = 0x7C00;
  std::vector<uint8_t> e4m3(10, 0x7E), e5m2(33, 0x7B);
  e4m3[2] = 0xFF;
  e4m3[3] = 0x7F;
  e5m2[32] = 0x7C;
  std::vector<uint64_t> f64(7, 0x3FF0000000000000ull);
  f64[6] = 0x7FF0000000000001ull;

  const void *data[] = {managed(f32),  managed(f16),  managed(bf16),
                        managed(e4m3), managed(e5m2), managed(f64),
                        managed(f32)};
  const int64_t counts[] = {
      static_cast<int64_t>(f32.size()), 100, 4096, 10, 33, 7, 0};
  const int32_t widths[] = {4, 2, 2, 1, 1, 8, 4};
  const uint64_t masks[] = {0x7F800000u, 0x7C00u, 0x7F80u,
                            0x7Fu,       0x7Cu,   0x7FF0000000000000ull,
                            0x7F800000u};
  int64_t first[7];
  std::memset(first, 0x55, sizeof(first));
  ASSERT_EQ(msamp_rt_gpu_find_all_ones(data, counts, widths, masks, 7, first),
            MSAMP_RT_OK)
      << msamp_rt_get_last_error_message();
  EXPECT_EQ(first[0], 1'234'567);
  EXPECT_EQ(first[1], 5);
  EXPECT_EQ(first[2], -1);
  EXPECT_EQ(first[3], 2);
  EXPECT_EQ(first[4], 32);
  EXPECT_EQ(first[5], 6);
  EXPECT_EQ(first[6], -1); // no elements
  expectNoError("find_all_ones");
}

// A computed index's check on the stream (gpu/index_check.cu through
// msamp_rt_index_checks_*, RuntimeABI.md 3.11.1): indices in device memory,
// several grid waves long with bad elements in many blocks; nothing is
// recorded until _end, which gives the CPU's message for the first failing
// call (the lowest bad element and its value); i32 with an ignore_index.
TEST_F(StateOnDevice, ComputedIndexChecksRunOnTheStream) {
  const int64_t rows = 3, cols = 1'000'003;
  std::vector<int64_t> ids(static_cast<size_t>(rows * cols), 4);
  ids[2'900'000] = -1;
  ids[1'234'567] = 10; // the lowest bad one: [1, 234564]
  ids[2'000'000] = 99;
  std::vector<int32_t> ids32(5000, 1);
  ids32[17] = -100; // the ignore_index: fine
  ids32[4000] = 8;  // the first value past the range
  DeviceBuffer d64(ids.size() * 8), d32(ids32.size() * 4);
  d64.upload(ids.data());
  d32.upload(ids32.data());
  MemRef m64(d64.get(), {rows, cols}), m32(d32.get(), {5000});
  std::string where = "m.mlir:4:2", where32 = "m.mlir:9:1";
  MemRef s64(where.data(), {static_cast<int64_t>(where.size())});
  MemRef s32(where32.data(), {static_cast<int64_t>(where32.size())});

  msamp_rt_index_checks *checks = msamp_rt_index_checks_create();
  ASSERT_NE(checks, nullptr) << msamp_rt_get_last_error_message();
  msamp_rt_index_checks_begin(checks);
  _mlir_ciface_msamp_rt_check_computed_index(m32, s32, MSAMP_RT_I32, 8, -100,
                                             1);
  _mlir_ciface_msamp_rt_check_computed_index(m64, s64, MSAMP_RT_I64, 10, 0, 0);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_OK);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(msamp_rt_index_checks_end(checks), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(msamp_rt_get_last_error_message()),
            "msamp_train_step: index computed at m.mlir:9:1: value 8 at "
            "[4000] is outside the valid range [0, 8) (or -100, the loss's "
            "ignore_index)");
  msamp_rt_clear_error();

  // The i32 indices fixed: the i64 call is the first to fail now.
  ids32[4000] = 0;
  d32.upload(ids32.data());
  msamp_rt_index_checks_begin(checks);
  _mlir_ciface_msamp_rt_check_computed_index(m32, s32, MSAMP_RT_I32, 8, -100,
                                             1);
  _mlir_ciface_msamp_rt_check_computed_index(m64, s64, MSAMP_RT_I64, 10, 0, 0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(msamp_rt_index_checks_end(checks), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(msamp_rt_get_last_error_message()),
            "msamp_train_step: index computed at m.mlir:4:2: value 10 at "
            "[1, 234564] is outside the valid range [0, 10)");
  msamp_rt_clear_error();
  msamp_rt_index_checks_destroy(checks);
}

TEST_F(StateOnDevice, CopiesEveryBufferAndRestoresThem) {
  std::vector<uint8_t> a(1'000'003), b(17);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<uint8_t>(i * 7 + 3);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<uint8_t>(200 - i);
  uint8_t *state[] = {managed(a), managed(b)};
  uint8_t *snapshot = managed(std::vector<uint8_t>(a.size() + b.size(), 0));
  void *dst[] = {snapshot, snapshot + a.size()};
  const void *src[] = {state[0], state[1]};
  const size_t bytes[] = {a.size(), b.size()};
  ASSERT_EQ(msamp_rt_gpu_copy_buffers(dst, src, bytes, 2), MSAMP_RT_OK)
      << msamp_rt_get_last_error_message();
  // The "update" overwrites the state; the restore brings it back.
  std::memset(state[0], 0xEE, a.size());
  std::memset(state[1], 0xEE, b.size());
  void *back[] = {state[0], state[1]};
  const void *from[] = {snapshot, snapshot + a.size()};
  ASSERT_EQ(msamp_rt_gpu_copy_buffers(back, from, bytes, 2), MSAMP_RT_OK)
      << msamp_rt_get_last_error_message();
  EXPECT_EQ(std::memcmp(state[0], a.data(), a.size()), 0);
  EXPECT_EQ(std::memcmp(state[1], b.data(), b.size()), 0);
  expectNoError("copy_buffers");
}

// The session's buffers of a GPU step: cudaMalloc'd, zero-filled when the
// call returns, reached by copies from and to host memory; a request
// beyond the device is OUT_OF_MEMORY with a null pointer.
TEST_F(StateOnDevice, DeviceAllocationsAreZeroedDeviceMemory) {
  const size_t bytes = 1'000'003;
  void *device = nullptr;
  ASSERT_EQ(msamp_rt_gpu_device_alloc(bytes, &device), MSAMP_RT_OK)
      << msamp_rt_get_last_error_message();
  ASSERT_NE(device, nullptr);
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, device), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
  std::vector<uint8_t> host(bytes, 0xAA);
  void *dst[] = {host.data()};
  const void *src[] = {device};
  ASSERT_EQ(msamp_rt_gpu_copy_buffers(dst, src, &bytes, 1), MSAMP_RT_OK);
  EXPECT_EQ(std::count(host.begin(), host.end(), 0), static_cast<long>(bytes));
  // Host -> device -> host.
  for (size_t i = 0; i < bytes; ++i)
    host[i] = static_cast<uint8_t>(i * 13 + 5);
  std::vector<uint8_t> back(bytes, 0);
  void *up[] = {device};
  const void *from[] = {host.data()};
  ASSERT_EQ(msamp_rt_gpu_copy_buffers(up, from, &bytes, 1), MSAMP_RT_OK);
  void *down[] = {back.data()};
  ASSERT_EQ(msamp_rt_gpu_copy_buffers(down, src, &bytes, 1), MSAMP_RT_OK);
  EXPECT_TRUE(back == host);
  msamp_rt_gpu_device_free(device);
  expectNoError("device_alloc");

  size_t freeBytes = 0, totalBytes = 0;
  ASSERT_EQ(msamp_rt_gpu_memory_info(&freeBytes, &totalBytes), MSAMP_RT_OK);
  void *huge = &host;
  EXPECT_EQ(msamp_rt_gpu_device_alloc(totalBytes * 4, &huge),
            MSAMP_RT_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(huge, nullptr);
  msamp_rt_clear_error();
}

TEST_F(StateOnDevice, MemoryInfoIsTheDevicesFreeAndTotal) {
  // The session refuses a GPU step whose state and its copy exceed the free
  // memory (asking managed memory beyond it can stall the GPU).
  size_t freeBytes = 0, totalBytes = 0;
  ASSERT_EQ(msamp_rt_gpu_memory_info(&freeBytes, &totalBytes), MSAMP_RT_OK)
      << msamp_rt_get_last_error_message();
  size_t cudaFree = 0, cudaTotal = 0;
  ASSERT_EQ(cudaMemGetInfo(&cudaFree, &cudaTotal), cudaSuccess);
  EXPECT_EQ(totalBytes, cudaTotal);
  EXPECT_GT(totalBytes, size_t(1) << 30);
  EXPECT_LE(freeBytes, totalBytes);
  EXPECT_GT(freeBytes, 0u);
}

} // namespace
