//===- StepMemory.cpp - the compiled step's counted heap --------*- C++ -*-===//
//
// The allocator compiled steps call for every memref.alloc (RuntimeABI.md
// 14). Each block carries its size in a 16-byte header (keeping malloc's
// 16-byte alignment; the lowering aligns further itself), so the free knows
// how many bytes stop being live. The counters are per thread: a step runs
// on the thread that calls it, and data-parallel ranks that run as threads
// of one process (LocalCollective) each see their own step. Two adds and a
// compare per allocation: nothing next to the malloc.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstdlib>

namespace {
struct alignas(16) BlockHeader {
  uint64_t bytes;
};
static_assert(sizeof(BlockHeader) == 16, "the header keeps 16-byte alignment");

thread_local int64_t liveBytes = 0;
thread_local int64_t peakBytes = 0;
} // namespace

extern "C" {

MSAMP_RT_EXPORT void *_mlir_memref_to_llvm_alloc(uint64_t size) {
  auto *header =
      static_cast<BlockHeader *>(std::malloc(sizeof(BlockHeader) + size));
  if (!header)
    return nullptr;
  header->bytes = size;
  liveBytes += static_cast<int64_t>(size);
  if (liveBytes > peakBytes)
    peakBytes = liveBytes;
  return header + 1;
}

MSAMP_RT_EXPORT void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  BlockHeader *header = static_cast<BlockHeader *>(ptr) - 1;
  liveBytes -= static_cast<int64_t>(header->bytes);
  std::free(header);
}

MSAMP_RT_EXPORT int64_t msamp_rt_step_live_bytes(void) { return liveBytes; }

MSAMP_RT_EXPORT int64_t msamp_rt_step_peak_bytes(void) { return peakBytes; }

MSAMP_RT_EXPORT void msamp_rt_reset_step_peak_bytes(void) {
  peakBytes = liveBytes;
}

} // extern "C"
