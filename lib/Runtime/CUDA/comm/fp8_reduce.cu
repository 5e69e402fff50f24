//===- fp8_reduce.cu - Rank-order FP8 reduction, mean divisions -----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Device halves of the all-reduce:
//   * the rank-order FP8 reduction the NCCL collective falls back to when a
//     group cannot use NCCL's native FP8 reductions (a device below sm_90,
//     or NCCL < 2.24): all ranks all-gather the codes and each reduces
//     contribution 0, 1, 2, ... with the per-hop rounding of
//     docs/Numerics.md 4.4 (FP8Combine.h). Every rank computes the same bytes,
//     and they are the CPU reference's bytes (Collective.h
//     reduceFP8InRankOrder).
//   * the divisions of a mean: f32 data / N, or an FP8 payload's inverse
//     scale / N (MS-AMP's post-division; the FP8 bytes are never divided,
//     and ncclAvg is never used).
//
//===----------------------------------------------------------------------===//

#include "../common/DeviceUtils.cuh"
#include "FP8Combine.h"

namespace msamp::runtime::cuda {
namespace {

__global__ void __launch_bounds__(kThreads)
    reduceRankOrderKernel(const uint8_t *__restrict__ contrib, int world,
                          int64_t n, numerics::Format format, bool isMax,
                          uint8_t *__restrict__ out) {
  for (int64_t i = globalThread(); i < n; i += gridStride()) {
    uint8_t acc = contrib[i];
    for (int r = 1; r < world; ++r)
      acc = combineFP8Codes(format, isMax, acc, contrib[r * n + i]);
    out[i] = acc;
  }
}

__global__ void __launch_bounds__(kThreads)
    divideKernel(float *data, int64_t n, float divisor) {
  for (int64_t i = globalThread(); i < n; i += gridStride())
    data[i] = numerics::detail::divRn(data[i], divisor);
}

__global__ void divideScalarKernel(const float *in, float divisor, float *out) {
  *out = numerics::detail::divRn(*in, divisor);
}

} // namespace

cudaError_t launchReduceFP8RankOrder(const uint8_t *contrib, int world,
                                     int64_t n, numerics::Format format,
                                     bool isMax, uint8_t *out,
                                     cudaStream_t stream) {
  if (n <= 0)
    return cudaSuccess;
  reduceRankOrderKernel<<<gridFor(n), kThreads, 0, stream>>>(
      contrib, world, n, format, isMax, out);
  return cudaGetLastError();
}

cudaError_t launchDivide(float *data, int64_t n, float divisor,
                         cudaStream_t stream) {
  if (n <= 0)
    return cudaSuccess;
  divideKernel<<<gridFor(n), kThreads, 0, stream>>>(data, n, divisor);
  return cudaGetLastError();
}

cudaError_t launchDivideScalar(const float *scaleInv, float divisor, float *out,
                               cudaStream_t stream) {
  divideScalarKernel<<<1, 1, 0, stream>>>(scaleInv, divisor, out);
  return cudaGetLastError();
}

} // namespace msamp::runtime::cuda
