//===- gemm_epilogue.cu - Unpad, round and amax of a GEMM result ----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The ABI's GEMM output is f32, bf16 or f16, and its optional out_amax is the
// amax of the f32 result *before* rounding to the output type (RuntimeABI.md
// 3.6). cuBLASLt cannot give that: its AMAX_D_POINTER is supported only for
// an FP8 D (cuBLAS restricts amax to FP8 outputs when the inputs are FP8;
// see PyTorch #122821), and an amax taken after the epilogue's rounding
// would be of bf16 values. So when an amax is asked for, or the problem was
// padded to multiples of 16, cuBLASLt writes an f32 D into scratch and this
// epilogue copies the real [rows, cols] window out, rounding each value
// with the runtime's own round-to-nearest-even (the CPU backend's exact
// code) and taking the amax of the f32 values with the integer atomics of
// recipe/amax.cu. The alpha/beta kernel serves high-precision GEMMs, whose
// scale product must be a device scalar (cuBLASLt's A/B scale pointers are
// FP8-only).
//
//===----------------------------------------------------------------------===//

#include "../common/DeviceUtils.cuh"
#include "../common/ElementAccess.h"

namespace msamp::runtime::cuda {
namespace {

template <int32_t OutT, bool WithAmax>
__global__ void __launch_bounds__(kThreads)
    epilogueKernel(const float *__restrict__ src, int64_t srcRows,
                   int64_t srcCols, void *__restrict__ dst, int64_t rows,
                   int64_t cols, int64_t total, unsigned *amaxBits) {
  unsigned largest = 0;
  for (int64_t idx = globalThread(); idx < total; idx += gridStride()) {
    const int64_t j = idx % cols;
    const int64_t rest = idx / cols;
    const int64_t i = rest % rows;
    const int64_t b = rest / rows;
    const float x = src[(b * srcRows + i) * srcCols + j];
    if constexpr (WithAmax) {
      const unsigned mag = magnitudeBits(x);
      largest = mag > largest ? mag : largest;
    }
    storeHighElement(dst, OutT, idx, x);
  }
  if constexpr (WithAmax)
    blockMaxAtomic(largest, amaxBits);
}

template <int32_t OutT>
void epilogueTyped(const float *src, int64_t srcRows, int64_t srcCols,
                   void *dst, int64_t rows, int64_t cols, int64_t total,
                   unsigned *amaxBits, cudaStream_t stream) {
  if (amaxBits)
    epilogueKernel<OutT, true><<<gridFor(total), kThreads, 0, stream>>>(
        src, srcRows, srcCols, dst, rows, cols, total, amaxBits);
  else
    epilogueKernel<OutT, false><<<gridFor(total), kThreads, 0, stream>>>(
        src, srcRows, srcCols, dst, rows, cols, total, nullptr);
}

__global__ void alphaBetaKernel(const float *a, const float *b, float *out) {
  out[0] = numerics::detail::mulRn(*a, *b);
  out[1] = 0.0f;
}

} // namespace

cudaError_t launchGemmEpilogue(const float *src, int64_t batch, int64_t srcRows,
                               int64_t srcCols, void *dst, int32_t dstType,
                               int64_t rows, int64_t cols, unsigned *amaxBits,
                               cudaStream_t stream) {
  const int64_t total = batch * rows * cols;
  if (total <= 0)
    return cudaSuccess;
  switch (dstType) {
  case MSAMP_RT_F32:
    epilogueTyped<MSAMP_RT_F32>(src, srcRows, srcCols, dst, rows, cols, total,
                                amaxBits, stream);
    break;
  case MSAMP_RT_BF16:
    epilogueTyped<MSAMP_RT_BF16>(src, srcRows, srcCols, dst, rows, cols, total,
                                 amaxBits, stream);
    break;
  case MSAMP_RT_F16:
    epilogueTyped<MSAMP_RT_F16>(src, srcRows, srcCols, dst, rows, cols, total,
                                amaxBits, stream);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launchAlphaBeta(const float *a, const float *b, float *out,
                            cudaStream_t stream) {
  alphaBetaKernel<<<1, 1, 0, stream>>>(a, b, out);
  return cudaGetLastError();
}

} // namespace msamp::runtime::cuda
