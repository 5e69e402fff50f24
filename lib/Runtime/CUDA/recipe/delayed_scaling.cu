//===- delayed_scaling.cu - Amax history and scale on the device ----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The delayed-scaling bookkeeping (docs/Numerics.md 2, Transformer Engine's
// recipe/delayed_scaling.cu) kept on the device, so a step never copies an
// amax or a scale to the host:
//   * computeScale: reduce the history (max or most recent) and derive the
//     pow2 (MS-AMP) or exact (TE) scale;
//   * rollAmaxHistory: out[0] = amax, out[i] = history[i - 1];
//   * delayedScalingUpdate: both, fused, in place, plus scale_inv.
//
// The scale arithmetic is a handful of operations on one history of at most
// a few hundred entries, so it runs in a single thread calling the numerics
// core's own functions (reduceAmaxHistory, computeScale, updateAmaxHistory):
// the NaN, tie and clamping rules are then the core's by construction, which
// a hand-written parallel reduction would have to re-derive. The roll of the
// ABI entry point is parallel (it is a copy).
//
//===----------------------------------------------------------------------===//

#include "../common/DeviceUtils.cuh"

#include "MSAMP/Numerics/Scaling.h"

namespace msamp::runtime::cuda {
namespace {

__global__ void computeScaleKernel(const float *history, int length,
                                   const float *prevScale, float *out,
                                   numerics::ScaleKind kind,
                                   numerics::AmaxAlgo algo, float fpMax,
                                   int32_t margin) {
  const float reduced = numerics::reduceAmaxHistory(history, length, algo);
  // prevScale is read before out (which may alias it) is written.
  const float prev = *prevScale;
  *out = numerics::computeScale(kind, reduced, prev, fpMax, margin);
}

__global__ void __launch_bounds__(kThreads)
    rollKernel(const float *__restrict__ history, int64_t length,
               const float *amax, float *__restrict__ out) {
  for (int64_t i = globalThread(); i < length; i += gridStride())
    out[i] = i == 0 ? *amax : history[i - 1];
}

__global__ void delayedScalingUpdateKernel(float *history, int length,
                                           const float *amax, float *scale,
                                           float *scaleInv,
                                           numerics::ScaleKind kind,
                                           numerics::AmaxAlgo algo, float fpMax,
                                           int32_t margin) {
  numerics::updateAmaxHistory(history, history, length, *amax);
  const float reduced = numerics::reduceAmaxHistory(history, length, algo);
  const float next =
      numerics::computeScale(kind, reduced, *scale, fpMax, margin);
  *scale = next;
  *scaleInv = numerics::detail::divRn(1.0f, next);
}

} // namespace

cudaError_t launchComputeScale(const float *history, int64_t length,
                               const float *prevScale, float *out,
                               numerics::ScaleKind kind,
                               numerics::AmaxAlgo algo, float fpMax,
                               int32_t margin, cudaStream_t stream) {
  // The backend rejects histories longer than INT_MAX (as the CPU does).
  computeScaleKernel<<<1, 1, 0, stream>>>(history, static_cast<int>(length),
                                          prevScale, out, kind, algo, fpMax,
                                          margin);
  return cudaGetLastError();
}

cudaError_t launchRollAmaxHistory(const float *history, int64_t length,
                                  const float *amax, float *out,
                                  cudaStream_t stream) {
  if (length <= 0)
    return cudaSuccess;
  rollKernel<<<gridFor(length), kThreads, 0, stream>>>(history, length, amax,
                                                       out);
  return cudaGetLastError();
}

cudaError_t launchDelayedScalingUpdate(float *history, int64_t length,
                                       const float *amax, float *scale,
                                       float *scaleInv,
                                       numerics::ScaleKind kind,
                                       numerics::AmaxAlgo algo, float fpMax,
                                       int32_t margin, cudaStream_t stream) {
  delayedScalingUpdateKernel<<<1, 1, 0, stream>>>(
      history, static_cast<int>(length), amax, scale, scaleInv, kind, algo,
      fpMax, margin);
  return cudaGetLastError();
}

} // namespace msamp::runtime::cuda
