//===- amax.cu - Order-independent amax -----------------------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_amax on the device. Magnitudes are compared as integers
// (ElementAccess.h magnitudeBits): for non-negative IEEE values the integer
// order is the value order and every NaN sorts above +Inf, so one integer
// atomicMax per block computes numerics::amax exactly (NaN anywhere wins,
// Inf gives +Inf, empty gives 0) in any order, which a float atomic with
// fmaxf would not (fmaxf drops NaN). The finalize kernel maps any NaN
// pattern to the core's canonical quiet NaN.
//
//===----------------------------------------------------------------------===//

#include "../common/DeviceUtils.cuh"
#include "../common/ElementAccess.h"

namespace msamp::runtime::cuda {
namespace {

template <int32_t InT>
__global__ void __launch_bounds__(kThreads)
    amaxKernel(const void *__restrict__ in, int64_t n, unsigned *amaxBits) {
  unsigned largest = 0;
  for (int64_t i = globalThread(); i < n; i += gridStride()) {
    const unsigned mag = magnitudeBits(loadElement(in, InT, i, 1.0f));
    largest = mag > largest ? mag : largest;
  }
  blockMaxAtomic(largest, amaxBits);
}

__global__ void finalizeAmaxKernel(const unsigned *amaxBits, float *out) {
  *out = amaxFromBits(*amaxBits);
}

} // namespace

cudaError_t launchAmax(const void *in, int32_t inType, int64_t n,
                       unsigned *amaxBits, cudaStream_t stream) {
  if (n <= 0)
    return cudaSuccess;
  const unsigned grid = gridFor(n);
  switch (inType) {
  case MSAMP_RT_F32:
    amaxKernel<MSAMP_RT_F32><<<grid, kThreads, 0, stream>>>(in, n, amaxBits);
    break;
  case MSAMP_RT_BF16:
    amaxKernel<MSAMP_RT_BF16><<<grid, kThreads, 0, stream>>>(in, n, amaxBits);
    break;
  case MSAMP_RT_F16:
    amaxKernel<MSAMP_RT_F16><<<grid, kThreads, 0, stream>>>(in, n, amaxBits);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launchFinalizeAmax(const unsigned *amaxBits, float *out,
                               cudaStream_t stream) {
  finalizeAmaxKernel<<<1, 1, 0, stream>>>(amaxBits, out);
  return cudaGetLastError();
}

} // namespace msamp::runtime::cuda
