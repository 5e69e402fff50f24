//===- GemmPlan.h - Row-major GEMM onto cuBLASLt ----------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Pure index logic (no CUDA header, no device): how an ABI GEMM,
//   out[b] (M x N, row-major) = op(a[b]) (M x K) * op(b[b]) (K x N),
// becomes one cuBLASLt call. It is a separate translation unit so that the
// host unit tests can replay the plan on the CPU (emulating the packing
// kernel and cuBLASLt's column-major semantics) and check it against the CPU
// backend for every transpose, padding and batch case without a GPU. This is
// Transformer Engine's CanonicalizeGemmInput, made testable.
//
// The mapping. A row-major [R, C] matrix is a column-major [C, R] one with
// ld = C, so out^T (N x M, column-major) = op(b)^T * op(a)^T:
//   cuBLASLt A := the b side, cuBLASLt B := the a side, D := out^T.
//
// FP8 (E4M3/E5M2 operands) on sm_89/sm_90 runs only "TN": cuBLASLt A
// transposed and B not, i.e. both operands stored with K innermost
// (row-major a as [M, K] and b as [N, K]; MS-AMP's fprop y = x w^T is
// exactly that, transpose_b). Other layouts are canonicalized by the
// packMatrix kernel (a byte transpose: the operands are already quantized),
// and M, N and K are zero-padded to multiples of 16, as MS-AMP's
// Gemm.fp8_gemm does: cuBLASLt's FP8 kernels want 16-byte aligned leading
// dimensions, and zero bytes (+0) add nothing to a dot product. Padding
// never rejects a shape. The padded [Mp, Np] result goes to f32 scratch and
// the epilogue kernel copies the real window out.
//
// High-precision GEMMs (f32, bf16, f16) take any layout, so only the
// transpose flags change; operands of two different types are first widened
// to f32 (exact) because cuBLASLt wants A and B of one type.
//
// D is f32 scratch followed by the epilogue (round + amax) whenever the
// output window differs from D (padding), or an amax of the f32 result is
// requested for a non-f32 output (RuntimeABI.md 3.6: the amax is taken
// before rounding, and cuBLASLt's AMAX_D is FP8-output-only), or cuBLASLt
// cannot write the output type directly. Otherwise D is `out` itself.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_GEMM_GEMMPLAN_H
#define MSAMP_LIB_RUNTIME_CUDA_GEMM_GEMMPLAN_H

#include <cstdint>

namespace msamp::runtime::cuda {

/// FP8 dimensions are padded to a multiple of this.
constexpr int64_t kFP8DimAlignment = 16;
/// And FP8 operand/output pointers used in place must be this aligned.
constexpr uint64_t kFP8PointerAlignment = 16;

/// One ABI GEMM with its pointer alignments (the largest power of two, at
/// most 256, dividing the address; 256 for scratch).
struct GemmProblem {
  int32_t aType = 0, bType = 0, outType = 0; ///< msamp_rt_dtype codes
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  bool wantAmax = false;
  uint64_t alignA = 256, alignB = 256, alignOut = 256;
};

/// Copy of one operand into a [batch, dstRows, dstCols] buffer (see
/// launchPackMatrix): dst[i][j] = transpose ? src[j][i] : src[i][j],
/// zero outside src.
struct PackStep {
  bool needed = false;
  int64_t srcRows = 0, srcCols = 0;
  bool transpose = false;
  int64_t dstRows = 0, dstCols = 0;
};

/// A column-major cuBLASLt matrix: rows x cols with leading dimension ld,
/// batch stride in elements.
struct LtMatrix {
  int32_t dtype = 0;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int64_t batchStride = 0;
  bool transposed = false; ///< the op of A/B; unused for D
};

struct GemmPlan {
  bool fp8 = false;
  /// High precision, a and b of different types: widen both to f32 first
  /// (then the plan below treats them as f32, unpacked, 256-aligned).
  bool widenOperands = false;
  int64_t mPad = 0, nPad = 0, kPad = 0; ///< the dimensions cuBLASLt sees
  PackStep packA;                       ///< a -> [mPad, kPad] (FP8 only)
  PackStep packB;                       ///< b -> [nPad, kPad] (FP8 only)
  /// cuBLASLt's problem: D (m' x n') = op(A) (m' x k) * op(B) (k x n'),
  /// m' = nPad, n' = mPad. A is the b side, B the a side.
  LtMatrix a, b, d;
  /// D is `out` itself (in out's type); otherwise f32 scratch
  /// [batch, mPad, nPad] row-major and the epilogue copies [M, N] out.
  bool dDirect = false;
  /// dDirect with an f32 output and an amax requested: amax kernel over out.
  bool amaxOverOutput = false;
};

/// Plans `p`. Returns false (and leaves `reason` pointing at a static
/// message) for shapes no cuBLASLt call can take: a batch above INT32_MAX
/// (cuBLASLt's batch count is an int32).
bool planGemm(const GemmProblem &p, GemmPlan &plan, const char *&reason);

/// Bytes per element of a GEMM dtype (1 FP8, 2 bf16/f16, 4 f32).
int64_t gemmDTypeSize(int32_t dtype);

/// Largest power of two, at most 256, dividing `address` (256 for 0).
uint64_t pointerAlignment(const void *address);

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_GEMM_GEMMPLAN_H
