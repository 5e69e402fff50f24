//===- dequantize.cu - Scaled widening and conversions --------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_dequantize on the device: out[i] = round_out(decode(in[i]) *
// scale_inv), Transformer Engine's cast_from_fp8, with the inverse scale read
// from device memory. Also the plain conversions between high-precision
// types that the GEMM (mixed bf16/f16/f32 operands are widened to f32) and
// the all-reduce (bf16/f16 payloads reduce in f32, then round once) need.
//
// Decoding is exact and the product is one f32 rounding (numerics core);
// the output rounding is round-to-nearest-even with IEEE overflow, the same
// integer code the CPU backend runs (ElementAccess.h).
//
//===----------------------------------------------------------------------===//

#include "../common/DeviceUtils.cuh"
#include "../common/ElementAccess.h"

namespace msamp::runtime::cuda {
namespace {

template <int32_t InT, int32_t OutT>
__global__ void __launch_bounds__(kThreads)
    dequantizeKernel(const void *__restrict__ in,
                     const float *__restrict__ scaleInv, void *__restrict__ out,
                     int64_t n) {
  const float s = *scaleInv;
  for (int64_t i = globalThread(); i < n; i += gridStride())
    storeHighElement(out, OutT, i, loadElement(in, InT, i, s));
}

template <int32_t InT, int32_t OutT, bool WithAmax>
__global__ void __launch_bounds__(kThreads)
    convertKernel(const void *__restrict__ in, void *__restrict__ out,
                  unsigned *amaxBits, int64_t n) {
  unsigned largest = 0;
  for (int64_t i = globalThread(); i < n; i += gridStride()) {
    const float x = loadElement(in, InT, i, 1.0f);
    if constexpr (WithAmax) {
      const unsigned mag = magnitudeBits(x);
      largest = mag > largest ? mag : largest;
    }
    storeHighElement(out, OutT, i, x);
  }
  if constexpr (WithAmax)
    blockMaxAtomic(largest, amaxBits);
}

template <int32_t InT>
cudaError_t dequantizeOut(const void *in, const float *scaleInv, void *out,
                          int32_t outType, int64_t n, cudaStream_t stream) {
  const unsigned grid = gridFor(n);
  switch (outType) {
  case MSAMP_RT_F32:
    dequantizeKernel<InT, MSAMP_RT_F32>
        <<<grid, kThreads, 0, stream>>>(in, scaleInv, out, n);
    break;
  case MSAMP_RT_BF16:
    dequantizeKernel<InT, MSAMP_RT_BF16>
        <<<grid, kThreads, 0, stream>>>(in, scaleInv, out, n);
    break;
  case MSAMP_RT_F16:
    dequantizeKernel<InT, MSAMP_RT_F16>
        <<<grid, kThreads, 0, stream>>>(in, scaleInv, out, n);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <int32_t InT, int32_t OutT>
void convertTyped(const void *in, void *out, unsigned *amaxBits, int64_t n,
                  cudaStream_t stream) {
  if (amaxBits)
    convertKernel<InT, OutT, true>
        <<<gridFor(n), kThreads, 0, stream>>>(in, out, amaxBits, n);
  else
    convertKernel<InT, OutT, false>
        <<<gridFor(n), kThreads, 0, stream>>>(in, out, nullptr, n);
}

template <int32_t InT>
cudaError_t convertOut(const void *in, void *out, int32_t outType,
                       unsigned *amaxBits, int64_t n, cudaStream_t stream) {
  switch (outType) {
  case MSAMP_RT_F32:
    convertTyped<InT, MSAMP_RT_F32>(in, out, amaxBits, n, stream);
    break;
  case MSAMP_RT_BF16:
    convertTyped<InT, MSAMP_RT_BF16>(in, out, amaxBits, n, stream);
    break;
  case MSAMP_RT_F16:
    convertTyped<InT, MSAMP_RT_F16>(in, out, amaxBits, n, stream);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

} // namespace

cudaError_t launchDequantize(const void *in, int32_t inType,
                             const float *scaleInv, void *out, int32_t outType,
                             int64_t n, cudaStream_t stream) {
  if (n <= 0)
    return cudaSuccess;
  switch (inType) {
  case MSAMP_RT_F8E4M3FN:
    return dequantizeOut<MSAMP_RT_F8E4M3FN>(in, scaleInv, out, outType, n,
                                            stream);
  case MSAMP_RT_F8E5M2:
    return dequantizeOut<MSAMP_RT_F8E5M2>(in, scaleInv, out, outType, n,
                                          stream);
  case MSAMP_RT_F16:
    return dequantizeOut<MSAMP_RT_F16>(in, scaleInv, out, outType, n, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

cudaError_t launchConvert(const void *in, int32_t inType, void *out,
                          int32_t outType, unsigned *amaxBits, int64_t n,
                          cudaStream_t stream) {
  if (n <= 0)
    return cudaSuccess;
  switch (inType) {
  case MSAMP_RT_F32:
    return convertOut<MSAMP_RT_F32>(in, out, outType, amaxBits, n, stream);
  case MSAMP_RT_BF16:
    return convertOut<MSAMP_RT_BF16>(in, out, outType, amaxBits, n, stream);
  case MSAMP_RT_F16:
    return convertOut<MSAMP_RT_F16>(in, out, outType, amaxBits, n, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

} // namespace msamp::runtime::cuda
