//===- GemmPlan.cpp - Row-major GEMM onto cuBLASLt's column-major view ----===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// See GemmPlan.h. Compiled into the CUDA plugin and into the host tests; it
// includes no CUDA header.
//
//===----------------------------------------------------------------------===//

#include "GemmPlan.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstdint>

namespace msamp::runtime::cuda {
namespace {

int64_t roundUp(int64_t x, int64_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}

bool isFP8Type(int32_t dtype) {
  return dtype == MSAMP_RT_F8E4M3FN || dtype == MSAMP_RT_F8E5M2;
}

/// Largest power of two (at most 256) dividing `bytes` (256 for 0).
uint64_t lowestBit(uint64_t bytes) {
  if (bytes == 0)
    return 256;
  const uint64_t bit = bytes & (~bytes + 1);
  return bit < 256 ? bit : 256;
}

/// The alignment every matrix of a batch has: the base's and the stride's.
uint64_t batchAlignment(uint64_t base, int64_t batch, int64_t strideBytes) {
  if (batch <= 1)
    return base;
  const uint64_t stride = lowestBit(static_cast<uint64_t>(strideBytes));
  return base < stride ? base : stride;
}

} // namespace

int64_t gemmDTypeSize(int32_t dtype) {
  switch (dtype) {
  case MSAMP_RT_F8E4M3FN:
  case MSAMP_RT_F8E5M2:
    return 1;
  case MSAMP_RT_F16:
  case MSAMP_RT_BF16:
    return 2;
  default:
    return 4;
  }
}

uint64_t pointerAlignment(const void *address) {
  return lowestBit(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(address)));
}

bool planGemm(const GemmProblem &p, GemmPlan &plan, const char *&reason) {
  plan = GemmPlan();
  reason = nullptr;
  if (p.batch > INT32_MAX) {
    reason = "the batch count exceeds cuBLASLt's int32 batch count";
    return false;
  }
  const int64_t M = p.m, N = p.n, K = p.k;
  const int64_t outSize = gemmDTypeSize(p.outType);
  plan.fp8 = isFP8Type(p.aType) && isFP8Type(p.bType);

  if (plan.fp8) {
    const int64_t Mp = roundUp(M, kFP8DimAlignment);
    const int64_t Np = roundUp(N, kFP8DimAlignment);
    const int64_t Kp = roundUp(K, kFP8DimAlignment);
    plan.mPad = Mp;
    plan.nPad = Np;
    plan.kPad = Kp;
    // a must be [Mp, Kp] with K innermost: as stored when not transposed,
    // unpadded and aligned; otherwise packed (transposed and/or padded).
    const bool aInPlace =
        !p.transA && Mp == M && Kp == K &&
        batchAlignment(p.alignA, p.batch, M * K) >= kFP8PointerAlignment;
    if (!aInPlace)
      plan.packA =
          PackStep{true, p.transA ? K : M, p.transA ? M : K, p.transA, Mp, Kp};
    // b must be [Np, Kp] with K innermost: stored that way with transpose_b.
    const bool bInPlace =
        p.transB && Np == N && Kp == K &&
        batchAlignment(p.alignB, p.batch, N * K) >= kFP8PointerAlignment;
    if (!bInPlace)
      plan.packB =
          PackStep{true, p.transB ? N : K, p.transB ? K : N, !p.transB, Np, Kp};
    // cuBLASLt A := b side [Np, Kp] row-major = column-major Kp x Np, op T.
    plan.a = LtMatrix{p.bType,
                      static_cast<uint64_t>(Kp),
                      static_cast<uint64_t>(Np),
                      Kp,
                      Np * Kp,
                      true};
    // cuBLASLt B := a side [Mp, Kp] row-major = column-major Kp x Mp, op N.
    plan.b = LtMatrix{p.aType,
                      static_cast<uint64_t>(Kp),
                      static_cast<uint64_t>(Mp),
                      Kp,
                      Mp * Kp,
                      false};
    plan.dDirect = Mp == M && Np == N &&
                   !(p.wantAmax && p.outType != MSAMP_RT_F32) &&
                   batchAlignment(p.alignOut, p.batch, M * N * outSize) >=
                       kFP8PointerAlignment;
  } else {
    plan.widenOperands = p.aType != p.bType;
    const int32_t aType = plan.widenOperands ? MSAMP_RT_F32 : p.aType;
    const int32_t bType = plan.widenOperands ? MSAMP_RT_F32 : p.bType;
    plan.mPad = M;
    plan.nPad = N;
    plan.kPad = K;
    // cuBLASLt A := b memory: stored [N, K] (transpose_b) is column-major
    // K x N taken transposed; stored [K, N] is column-major N x K as is.
    if (p.transB)
      plan.a = LtMatrix{
          bType, static_cast<uint64_t>(K), static_cast<uint64_t>(N), K, N * K,
          true};
    else
      plan.a = LtMatrix{
          bType, static_cast<uint64_t>(N), static_cast<uint64_t>(K), N, N * K,
          false};
    // cuBLASLt B := a memory: stored [M, K] is column-major K x M as is;
    // stored [K, M] (transpose_a) is column-major M x K taken transposed.
    if (p.transA)
      plan.b = LtMatrix{
          aType, static_cast<uint64_t>(M), static_cast<uint64_t>(K), M, M * K,
          true};
    else
      plan.b = LtMatrix{
          aType, static_cast<uint64_t>(K), static_cast<uint64_t>(M), K, M * K,
          false};
    // cuBLASLt writes f32, or the operands' own 16-bit type, directly.
    plan.dDirect = p.outType == MSAMP_RT_F32 ||
                   (p.outType == aType && aType == bType && !p.wantAmax);
  }

  const int64_t dRows = plan.nPad, dCols = plan.mPad;
  if (plan.dDirect)
    plan.d = LtMatrix{p.outType,
                      static_cast<uint64_t>(dRows),
                      static_cast<uint64_t>(dCols),
                      dRows,
                      dRows * dCols,
                      false};
  else
    plan.d = LtMatrix{MSAMP_RT_F32,
                      static_cast<uint64_t>(dRows),
                      static_cast<uint64_t>(dCols),
                      dRows,
                      dRows * dCols,
                      false};
  plan.amaxOverOutput = plan.dDirect && p.wantAmax;
  return true;
}

} // namespace msamp::runtime::cuda
