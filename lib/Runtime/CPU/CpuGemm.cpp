//===- CpuGemm.cpp - Scaled FP8 and f32 GEMM on the CPU -------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// docs/Numerics.md 3: out = (a_scale_inv * b_scale_inv) * op(A) x op(B), with
// products of the decoded FP8 values accumulated in f32. Every FP8 value is
// exactly an f32, and an f32 product of two FP8 values is exact too (at most
// 2 x 4 significand bits), so decoding the operands into f32 panels and
// running an f32 GEMM computes exactly those products; only the order of the
// f32 accumulation is the BLAS's, as it is cuBLASLt's on the GPU. The scale
// product is the GEMM's alpha, applied once to each accumulated sum, as
// cuBLASLt applies its A/B scale pointers.
//
// bf16 and f16 operands (high-precision GEMMs of a model exported in those
// types) are widened exactly the same way; their products are exact in f32
// too.
//
// fast_accum asks Hopper tensor cores for reduced-precision accumulation;
// the CPU always accumulates in f32, so the reference ignores it.
//
//===----------------------------------------------------------------------===//

#include "../Status.h"
#include "CpuConvert.h"
#include "CpuKernels.h"

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Numerics/Scaling.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <new>

namespace msamp::runtime::cpu {
namespace {

/// A scratch buffer of f32 that reports allocation failure instead of
/// aborting (the library has no exceptions).
std::unique_ptr<float[]> allocateFloats(int64_t count) {
  return std::unique_ptr<float[]>(
      new (std::nothrow) float[std::max<int64_t>(count, 1)]);
}

} // namespace

msamp_rt_status gemm(const GemmParams &p) {
  // cblas takes int sizes and leading dimensions.
  if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "msamp_rt_gemm: M=%lld N=%lld K=%lld exceed the BLAS "
                       "int range",
                       static_cast<long long>(p.m), static_cast<long long>(p.n),
                       static_cast<long long>(p.k));
  const int64_t aCount = p.m * p.k, bCount = p.k * p.n, outCount = p.m * p.n;
  const bool decodeA = p.aType != MSAMP_RT_F32;
  const bool decodeB = p.bType != MSAMP_RT_F32;
  const bool roundOut = p.outType != MSAMP_RT_F32;
  if (outCount == 0 || p.batch == 0) {
    if (p.outAmax)
      *p.outAmax = 0.0f;
    return MSAMP_RT_OK;
  }

  // One panel per operand, reused by every matrix of the batch.
  std::unique_ptr<float[]> aPanel, bPanel, outPanel;
  if (decodeA && !(aPanel = allocateFloats(aCount)))
    return recordError(MSAMP_RT_ERROR_OUT_OF_MEMORY,
                       "msamp_rt_gemm: cannot allocate the A panel");
  if (decodeB && !(bPanel = allocateFloats(bCount)))
    return recordError(MSAMP_RT_ERROR_OUT_OF_MEMORY,
                       "msamp_rt_gemm: cannot allocate the B panel");
  if (roundOut && !(outPanel = allocateFloats(outCount)))
    return recordError(MSAMP_RT_ERROR_OUT_OF_MEMORY,
                       "msamp_rt_gemm: cannot allocate the output panel");

  const float alpha = numerics::detail::mulRn(*p.aScaleInv, *p.bScaleInv);
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n),
            k = static_cast<int>(p.k);
  // Row-major leading dimensions of the stored (not the transposed) shapes;
  // BLAS wants them >= 1 even for empty matrices.
  const int lda = std::max(p.transA ? m : k, 1);
  const int ldb = std::max(p.transB ? k : n, 1);
  const int ldc = std::max(n, 1);
  const size_t aBytes = static_cast<size_t>(aCount) * dtypeSize(p.aType);
  const size_t bBytes = static_cast<size_t>(bCount) * dtypeSize(p.bType);
  const size_t outBytes = static_cast<size_t>(outCount) * dtypeSize(p.outType);

  float amax = 0.0f;
  for (int64_t batch = 0; batch < p.batch; ++batch) {
    const char *a = static_cast<const char *>(p.a) + batch * aBytes;
    const char *b = static_cast<const char *>(p.b) + batch * bBytes;
    char *out = static_cast<char *>(p.out) + batch * outBytes;

    const float *aF32 = reinterpret_cast<const float *>(a);
    if (decodeA) {
      loadF32(a, p.aType, 0, aCount, 1.0f, aPanel.get());
      aF32 = aPanel.get();
    }
    const float *bF32 = reinterpret_cast<const float *>(b);
    if (decodeB) {
      loadF32(b, p.bType, 0, bCount, 1.0f, bPanel.get());
      bF32 = bPanel.get();
    }
    float *c = roundOut ? outPanel.get() : reinterpret_cast<float *>(out);

    if (k == 0) {
      // An empty sum; BLAS implementations disagree on K == 0 with beta 0.
      std::fill(c, c + outCount, 0.0f);
    } else {
      cblas_sgemm(CblasRowMajor, p.transA ? CblasTrans : CblasNoTrans,
                  p.transB ? CblasTrans : CblasNoTrans, m, n, k, alpha, aF32,
                  lda, bF32, ldb, 0.0f, c, ldc);
    }

    // The amax is of the f32 result, before any rounding to out's type.
    if (p.outAmax) {
      const float pair[2] = {amax, numerics::amax(c, outCount)};
      amax = numerics::amax(pair, 2);
    }
    if (roundOut)
      storeHigh(c, outCount, p.outType, out, 0);
  }
  if (p.outAmax)
    *p.outAmax = amax;
  return MSAMP_RT_OK;
}

} // namespace msamp::runtime::cpu
