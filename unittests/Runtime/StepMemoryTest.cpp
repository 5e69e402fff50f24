//===- StepMemoryTest.cpp - the compiled step's counted heap --------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// _mlir_memref_to_llvm_alloc/_free (docs/RuntimeABI.md 14): the live bytes
// and the high-water mark follow every alloc and free exactly, on the
// calling thread only, and the memory is usable with malloc's alignment.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Runtime/msamp_runtime.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <thread>

namespace {

TEST(StepMemoryTest, CountsLiveBytesAndTheHighWaterMark) {
  const int64_t base = msamp_rt_step_live_bytes();
  msamp_rt_reset_step_peak_bytes();
  EXPECT_EQ(msamp_rt_step_peak_bytes(), base);

  void *a = _mlir_memref_to_llvm_alloc(1000);
  void *b = _mlir_memref_to_llvm_alloc(24);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // malloc's alignment survives the size header.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 16, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 16, 0u);
  std::memset(a, 0xab, 1000);
  std::memset(b, 0xcd, 24);
  EXPECT_EQ(msamp_rt_step_live_bytes(), base + 1024);
  _mlir_memref_to_llvm_free(a);
  EXPECT_EQ(msamp_rt_step_live_bytes(), base + 24);
  void *c = _mlir_memref_to_llvm_alloc(500);
  EXPECT_EQ(msamp_rt_step_live_bytes(), base + 524);
  // The peak was 1024 above the base, before the first free.
  EXPECT_EQ(msamp_rt_step_peak_bytes(), base + 1024);
  _mlir_memref_to_llvm_free(b);
  _mlir_memref_to_llvm_free(c);
  _mlir_memref_to_llvm_free(nullptr); // like free(NULL): nothing
  EXPECT_EQ(msamp_rt_step_live_bytes(), base);

  // A reset restarts the mark at what is live now.
  msamp_rt_reset_step_peak_bytes();
  EXPECT_EQ(msamp_rt_step_peak_bytes(), base);
}

TEST(StepMemoryTest, CountersArePerThread) {
  const int64_t base = msamp_rt_step_live_bytes();
  msamp_rt_reset_step_peak_bytes();
  int64_t otherLive = -1, otherPeak = -1;
  std::thread other([&] {
    void *p = _mlir_memref_to_llvm_alloc(4096);
    otherPeak = msamp_rt_step_peak_bytes();
    _mlir_memref_to_llvm_free(p);
    otherLive = msamp_rt_step_live_bytes();
  });
  other.join();
  EXPECT_EQ(otherPeak, 4096);
  EXPECT_EQ(otherLive, 0);
  // Nothing of the other thread's step shows on this one.
  EXPECT_EQ(msamp_rt_step_live_bytes(), base);
  EXPECT_EQ(msamp_rt_step_peak_bytes(), base);
}

} // namespace
