//===- quantize.cu - Fused scaled cast + amax -----------------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_quantize on the device: out[i] = Q_out(in[i] * scale), the scale
// read from device memory (it is an output of the previous step's scale
// update, never copied to the host). Optionally fused with the amax of the
// input, as Transformer Engine's cast kernels record the amax of what they
// cast for the next delayed-scaling update.
//
// Each element goes through the numerics core (ElementAccess.h): the same
// integer RNE-with-saturation encode the CPU backend runs, not the
// hardware cvt.rn.satfinite instructions, so both backends produce the
// same bytes by construction (FP8.h explains why the core avoids them).
// The kernel is templated on the dtypes so that the per-element dtype
// switch folds away. With `onlyIf` the whole grid returns at once unless
// that byte's low bit is set: msamp_rt_quantize_scale_update's warm-up
// recast, decided on the device so the step stays one CUDA graph with no
// host read.
//
//===----------------------------------------------------------------------===//

#include "../common/DeviceUtils.cuh"
#include "../common/ElementAccess.h"

namespace msamp::runtime::cuda {
namespace {

template <int32_t InT, int32_t OutT, bool WithAmax>
__global__ void __launch_bounds__(kThreads)
    quantizeKernel(const void *__restrict__ in, const float *__restrict__ scale,
                   void *__restrict__ out, unsigned *amaxBits, int64_t n,
                   const uint8_t *onlyIf) {
  if (onlyIf && !(*onlyIf & 1))
    return;
  const float s = *scale;
  unsigned largest = 0;
  for (int64_t i = globalThread(); i < n; i += gridStride()) {
    const float x = loadElement(in, InT, i, 1.0f);
    if constexpr (WithAmax) {
      const unsigned mag = magnitudeBits(x);
      largest = mag > largest ? mag : largest;
    }
    storeScaledElement(out, OutT, i, x, s);
  }
  if constexpr (WithAmax)
    blockMaxAtomic(largest, amaxBits);
}

template <int32_t InT, int32_t OutT>
void launchTyped(const void *in, const float *scale, void *out,
                 unsigned *amaxBits, int64_t n, cudaStream_t stream,
                 const uint8_t *onlyIf) {
  if (amaxBits)
    quantizeKernel<InT, OutT, true><<<gridFor(n), kThreads, 0, stream>>>(
        in, scale, out, amaxBits, n, onlyIf);
  else
    quantizeKernel<InT, OutT, false><<<gridFor(n), kThreads, 0, stream>>>(
        in, scale, out, nullptr, n, onlyIf);
}

template <int32_t InT>
cudaError_t dispatchOut(const void *in, const float *scale, void *out,
                        int32_t outType, unsigned *amaxBits, int64_t n,
                        cudaStream_t stream, const uint8_t *onlyIf) {
  switch (outType) {
  case MSAMP_RT_F8E4M3FN:
    launchTyped<InT, MSAMP_RT_F8E4M3FN>(in, scale, out, amaxBits, n, stream,
                                        onlyIf);
    break;
  case MSAMP_RT_F8E5M2:
    launchTyped<InT, MSAMP_RT_F8E5M2>(in, scale, out, amaxBits, n, stream,
                                      onlyIf);
    break;
  case MSAMP_RT_F16:
    launchTyped<InT, MSAMP_RT_F16>(in, scale, out, amaxBits, n, stream, onlyIf);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

} // namespace

cudaError_t launchQuantize(const void *in, int32_t inType, const float *scale,
                           void *out, int32_t outType, unsigned *amaxBits,
                           int64_t n, cudaStream_t stream,
                           const uint8_t *onlyIf) {
  if (n <= 0)
    return cudaSuccess;
  switch (inType) {
  case MSAMP_RT_F32:
    return dispatchOut<MSAMP_RT_F32>(in, scale, out, outType, amaxBits, n,
                                     stream, onlyIf);
  case MSAMP_RT_BF16:
    return dispatchOut<MSAMP_RT_BF16>(in, scale, out, outType, amaxBits, n,
                                      stream, onlyIf);
  case MSAMP_RT_F16:
    return dispatchOut<MSAMP_RT_F16>(in, scale, out, outType, amaxBits, n,
                                     stream, onlyIf);
  default:
    return cudaErrorInvalidValue;
  }
}

} // namespace msamp::runtime::cuda
