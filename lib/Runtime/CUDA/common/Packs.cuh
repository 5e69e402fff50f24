//===- Packs.cuh - Eight consecutive elements in registers -----*- CUDA -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The vector access of the bandwidth-bound runtime kernels (docs/GPU.md,
// "Runtime kernels at bandwidth"): a Pack holds the bytes of kPackElements
// consecutive elements of a 1-, 2- or 4-byte type (8, 16 or 32 bytes),
// moved with one or two 8/16-byte loads or stores. The per-element code
// does not change: ElementAccess.h's loadElement/storeState index a Pack as
// they would index the tensor (`&pack` with the element's place in it), so
// the arithmetic stays the one the CPU backend shares. With constant places
// (unrolled loops) the Pack stays in registers.
//
// A tensor takes the vector path only when every pointer it reads or writes
// is aligned to packAlignment() of its element size; the kernels fall back
// to coalesced scalar accesses otherwise and for the tail of a tensor.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_COMMON_PACKS_CUH
#define MSAMP_LIB_RUNTIME_CUDA_COMMON_PACKS_CUH

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace msamp::runtime::cuda {

/// Elements per pack: 8 f32 (two 16-byte accesses), 8 f16/bf16 (one), 8
/// FP8 (one 8-byte access). Eight independent elements per thread keep
/// enough bytes in flight without raising register use much.
constexpr int kPackElements = 8;

struct alignas(16) Pack {
  uint4 word[2];
};

/// Bytes per element of a storage dtype the runtime kernels read (f32,
/// bf16, f16, FP8).
__host__ __device__ constexpr int elementBytes(int32_t dtype) {
  return dtype == MSAMP_RT_F32                             ? 4
         : dtype == MSAMP_RT_F16 || dtype == MSAMP_RT_BF16 ? 2
                                                           : 1;
}

/// The alignment a pack of `elementBytes`-byte elements needs.
__host__ __device__ constexpr uintptr_t packAlignment(int elementBytes) {
  return elementBytes >= 2 ? 16 : 8;
}

/// Whether `p` (a tensor's base, element 0) allows packs of its elements.
inline bool packAligned(const void *p, int elementBytes) {
  return reinterpret_cast<uintptr_t>(p) % packAlignment(elementBytes) == 0;
}

/// The pack of elements [i, i + kPackElements) of `base` (i a multiple of
/// kPackElements, base packAligned).
__device__ inline Pack loadPack(const void *base, int elementBytes, int64_t i) {
  Pack p;
  const char *src = static_cast<const char *>(base) + i * elementBytes;
  if (elementBytes == 4) {
    p.word[0] = reinterpret_cast<const uint4 *>(src)[0];
    p.word[1] = reinterpret_cast<const uint4 *>(src)[1];
  } else if (elementBytes == 2) {
    p.word[0] = *reinterpret_cast<const uint4 *>(src);
  } else {
    const uint2 half = *reinterpret_cast<const uint2 *>(src);
    p.word[0].x = half.x;
    p.word[0].y = half.y;
  }
  return p;
}

__device__ inline void storePack(void *base, int elementBytes, int64_t i,
                                 const Pack &p) {
  char *dst = static_cast<char *>(base) + i * elementBytes;
  if (elementBytes == 4) {
    reinterpret_cast<uint4 *>(dst)[0] = p.word[0];
    reinterpret_cast<uint4 *>(dst)[1] = p.word[1];
  } else if (elementBytes == 2) {
    *reinterpret_cast<uint4 *>(dst) = p.word[0];
  } else {
    *reinterpret_cast<uint2 *>(dst) = make_uint2(p.word[0].x, p.word[0].y);
  }
}

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_COMMON_PACKS_CUH
