//===- quantize_jit.cu - Amax, scale and cast of one tensor on the device -===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_quantize_jit on the device, with no host round trip: the scale of
// a just-in-time cast depends on the amax of the very tensor it casts, so
// the amax must be complete before the first element is quantized. Two
// launches on the backend's stream:
//
//   1. recipe/amax.cu's block-reduced amax: one integer atomicMax per block
//      into a zeroed accumulator (order-independent, NaN wins);
//   2. quantizeJitKernel: every thread derives the scale from the
//      accumulator and prev_scale with the numerics core's computeScale (the
//      rule of msamp_rt_compute_scale most_recent on the history [amax]),
//      quantizes its elements, and thread 0 writes scale and 1 / scale.
//
// The scale is a pure function of (amax, prev_scale), so every thread gets
// the same value; thread 0 writing out_scale while others read prev_scale
// is safe even when they are one buffer: with a usable amax the scale does
// not depend on prev_scale, and without one it is prev_scale itself.
//
// With the transposed layout, the scale is written by a one-thread kernel
// and transpose/cast_transpose.cu's kernel quantizes once into both layouts
// (three launches).
//
//===----------------------------------------------------------------------===//

#include "../common/DeviceUtils.cuh"
#include "../common/ElementAccess.h"

#include "MSAMP/Numerics/Scaling.h"

namespace msamp::runtime::cuda {
namespace {

/// The scale of the fused cast (msamp_rt_compute_scale's rule, most_recent
/// of the one-entry history [amax]).
__device__ inline float jitScale(const unsigned *amaxBits,
                                 const float *prevScale,
                                 numerics::ScaleKind kind, float fpMax,
                                 int32_t margin) {
  return numerics::computeScale(kind, amaxFromBits(*amaxBits), *prevScale,
                                fpMax, margin);
}

__device__ inline void writeScale(float scale, float *outScale,
                                  float *outScaleInv) {
  *outScale = scale;
  *outScaleInv = numerics::detail::divRn(1.0f, scale);
}

template <int32_t InT, int32_t OutT>
__global__ void __launch_bounds__(kThreads)
    quantizeJitKernel(const void *__restrict__ in, const unsigned *amaxBits,
                      const float *prevScale, void *__restrict__ out,
                      float *outScale, float *outScaleInv,
                      numerics::ScaleKind kind, float fpMax, int32_t margin,
                      int64_t n) {
  const float s = jitScale(amaxBits, prevScale, kind, fpMax, margin);
  for (int64_t i = globalThread(); i < n; i += gridStride())
    storeScaledElement(out, OutT, i, loadElement(in, InT, i, 1.0f), s);
  if (globalThread() == 0)
    writeScale(s, outScale, outScaleInv);
}

__global__ void jitScaleKernel(const unsigned *amaxBits, const float *prevScale,
                               float *outScale, float *outScaleInv,
                               numerics::ScaleKind kind, float fpMax,
                               int32_t margin) {
  writeScale(jitScale(amaxBits, prevScale, kind, fpMax, margin), outScale,
             outScaleInv);
}

template <int32_t InT, int32_t OutT>
void launchTyped(const QuantizeJitLaunchArgs &a, cudaStream_t stream) {
  // gridFor(0) is one block: the scale is written for an empty tensor too.
  quantizeJitKernel<InT, OutT><<<gridFor(a.n), kThreads, 0, stream>>>(
      a.in, a.amaxBits, a.prevScale, a.out, a.outScale, a.outScaleInv, a.kind,
      a.fpMax, a.margin, a.n);
}

template <int32_t InT>
cudaError_t dispatchOut(const QuantizeJitLaunchArgs &a, cudaStream_t stream) {
  switch (a.outType) {
  case MSAMP_RT_F8E4M3FN:
    launchTyped<InT, MSAMP_RT_F8E4M3FN>(a, stream);
    break;
  case MSAMP_RT_F8E5M2:
    launchTyped<InT, MSAMP_RT_F8E5M2>(a, stream);
    break;
  case MSAMP_RT_F16:
    launchTyped<InT, MSAMP_RT_F16>(a, stream);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

} // namespace

cudaError_t launchQuantizeJit(const QuantizeJitLaunchArgs &a,
                              cudaStream_t stream) {
  if (cudaError_t e = launchAmax(a.in, a.inType, a.n, a.amaxBits, stream))
    return e;
  if (a.outT) {
    jitScaleKernel<<<1, 1, 0, stream>>>(a.amaxBits, a.prevScale, a.outScale,
                                        a.outScaleInv, a.kind, a.fpMax,
                                        a.margin);
    if (cudaError_t e = cudaGetLastError())
      return e;
    return launchCastTranspose(a.in, a.inType, a.rows, a.cols, a.outScale,
                               a.out, a.outT, a.outType, nullptr, stream);
  }
  switch (a.inType) {
  case MSAMP_RT_F32:
    return dispatchOut<MSAMP_RT_F32>(a, stream);
  case MSAMP_RT_BF16:
    return dispatchOut<MSAMP_RT_BF16>(a, stream);
  case MSAMP_RT_F16:
    return dispatchOut<MSAMP_RT_F16>(a, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

} // namespace msamp::runtime::cuda
