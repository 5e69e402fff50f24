//===- CpuKernels.h - Kernels of the CPU reference backend ------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Free functions behind CpuBackend, one per Backend method, plus the thread
// splitting they share. Inputs are validated by the ABI adapter; these
// functions only check what needs the data (e.g. step >= 1) or the CPU's own
// limits (BLAS int sizes).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CPU_CPUKERNELS_H
#define MSAMP_LIB_RUNTIME_CPU_CPUKERNELS_H

#include "../Backend.h"

#include <cstdint>

namespace msamp::runtime::cpu {

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

/// Hard cap on the chunks of one kernel call; per-chunk partial results
/// (amaxes) live in stack arrays of this size.
constexpr int kMaxChunks = 64;

/// Upper bound on worker threads per kernel (msamp_rt_set_num_threads).
int maxThreads();
void setMaxThreads(int n);

/// Number of chunks [0, n) is split into: at most maxThreads() (<=
/// kMaxChunks), each at least `grain` elements, at least 1.
int chunkCount(int64_t n, int64_t grain);

/// Calls fn(ctx, chunk, begin, end) for each of `chunks` contiguous chunks
/// of [0, n), concurrently, and returns when all are done. Chunk c always
/// covers the same range for the same (n, chunks). If a thread cannot be
/// started its chunk runs on the calling thread.
void runChunks(int64_t n, int chunks,
               void (*fn)(void *ctx, int chunk, int64_t begin, int64_t end),
               void *ctx);

template <typename F>
void parallelChunks(int64_t n, int chunks, F &fn) {
  runChunks(
      n, chunks,
      [](void *ctx, int chunk, int64_t begin, int64_t end) {
        (*static_cast<F *>(ctx))(chunk, begin, end);
      },
      &fn);
}

/// Elements per thread below which splitting does not pay for a thread
/// start (tens of microseconds against about a nanosecond per element).
constexpr int64_t kGrain = int64_t(1) << 17;

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

msamp_rt_status quantize(const TensorRef &in, const float *scale,
                         const TensorRef &out);
msamp_rt_status dequantize(const TensorRef &in, const float *scaleInv,
                           const TensorRef &out);
msamp_rt_status amax(const TensorRef &in, float *out);
msamp_rt_status computeScale(const ComputeScaleParams &p);
msamp_rt_status updateAmaxHistory(const float *history, int64_t length,
                                  const float *amax, float *out);
/// In CpuQuantizeJit.cpp.
msamp_rt_status quantizeJit(const QuantizeJitParams &p);
/// In CpuScaleUpdate.cpp.
msamp_rt_status scaleUpdate(const ScaleUpdateParams &p, Collective &collective);
/// quantize() into p.out, then its codes transposed into p.outT (the
/// reference of msamp_rt_quantize_transpose; CpuQuantizeJit.cpp).
msamp_rt_status quantizeTranspose(const QuantizeTransposeParams &p);
msamp_rt_status gemm(const GemmParams &p);
msamp_rt_status adamUpdate(const AdamParams &p);
msamp_rt_status sgdUpdate(const SgdParams &p);

} // namespace msamp::runtime::cpu

#endif // MSAMP_LIB_RUNTIME_CPU_CPUKERNELS_H
