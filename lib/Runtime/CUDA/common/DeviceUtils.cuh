//===- DeviceUtils.cuh - Grid sizing and block reductions ------*- CUDA -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Small pieces every kernel file shares: the grid of a grid-stride loop and
// the block-wide integer max that feeds an amax atomic. Only included by .cu
// files.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_COMMON_DEVICEUTILS_CUH
#define MSAMP_LIB_RUNTIME_CUDA_COMMON_DEVICEUTILS_CUH

#include "../Kernels.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace msamp::runtime::cuda {

/// Threads per block of the elementwise kernels: 8 warps, enough to hide
/// memory latency, few enough that a block-wide reduction is one
/// shared-memory round.
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

/// Blocks for a grid-stride loop over n elements: enough to cover n, at
/// most maxGridBlocks() (a few waves; more blocks only add atomics).
inline unsigned gridFor(int64_t n) {
  const int64_t needed = (n + kThreads - 1) / kThreads;
  const int64_t cap = maxGridBlocks();
  return static_cast<unsigned>(needed < 1 ? 1 : (needed < cap ? needed : cap));
}

/// Blocks for a kernel that loops over `work` units itself (a persistent
/// grid): as many kThreads-thread blocks of `Kernel` as the device holds at
/// once (its SMs times the kernel's occupancy), at most `work`, at least 1.
/// The occupancy is asked once per kernel (a template argument, not a
/// pointer type several kernels share), on the first (eager, warm-up)
/// call, so a graph capture sees only the SM-count query.
template <auto Kernel>
unsigned residentGrid(int64_t work) {
  static const int perSm = [&] {
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, Kernel, kThreads,
                                                      0) != cudaSuccess) {
      (void)cudaGetLastError(); // the launch reports a broken device
      return 1;
    }
    return blocks < 1 ? 1 : blocks;
  }();
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) !=
          cudaSuccess ||
      sms < 1) {
    (void)cudaGetLastError();
    sms = 1;
  }
  const int64_t resident = static_cast<int64_t>(sms) * perSm;
  return static_cast<unsigned>(work < 1          ? 1
                               : work < resident ? work
                                                 : resident);
}

__device__ inline int64_t globalThread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ inline int64_t gridStride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

/// Block-wide max of N magnitude-bit values, then one atomicMax per value
/// into targets[t]. Every thread of a kThreads-thread block must call it
/// (it synchronizes). A zero result skips its atomic: zero is the identity
/// the caller initialized the target with.
template <int N>
__device__ inline void blockMaxAtomic(unsigned (&value)[N],
                                      unsigned *const (&targets)[N]) {
  __shared__ unsigned partial[N][kWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int t = 0; t < N; ++t) {
    const unsigned v = __reduce_max_sync(0xFFFFFFFFu, value[t]);
    if (lane == 0)
      partial[t][warp] = v;
  }
  __syncthreads();
  if (warp == 0) {
#pragma unroll
    for (int t = 0; t < N; ++t) {
      unsigned v = lane < kWarps ? partial[t][lane] : 0u;
      v = __reduce_max_sync(0xFFFFFFFFu, v);
      if (lane == 0 && v != 0u && targets[t])
        atomicMax(targets[t], v);
    }
  }
}

/// The one-value form.
__device__ inline void blockMaxAtomic(unsigned value, unsigned *target) {
  unsigned values[1] = {value};
  unsigned *const targets[1] = {target};
  blockMaxAtomic<1>(values, targets);
}

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_COMMON_DEVICEUTILS_CUH
