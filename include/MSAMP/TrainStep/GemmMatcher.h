//===- GemmMatcher.h - recognize GEMMs in linalg ----------------*- C++ -*-===//
//
// One matcher for every pass that looks at GEMMs: linalg.matmul with any
// indexing maps, linalg.batch_matmul and contraction linalg.generics, with
// linalg.transpose producers of the operands looked through. The match is
// canonicalized to result[b?, m, n] = op(lhs) x op(rhs), so that it maps 1:1
// onto msamp.gemm.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRAINSTEP_GEMMMATCHER_H
#define MSAMP_TRAINSTEP_GEMMMATCHER_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

#include <optional>
#include <string>

namespace mlir::msamp {

struct GemmMatch {
  /// The op that computes the GEMM (linalg.matmul, batch_matmul or generic).
  Operation *op = nullptr;
  /// Operands after looking through linalg.transpose producers; `lhs` is
  /// [M, K] (or [K, M] when transposeLhs), `rhs` is [K, N] (or [N, K]).
  Value lhs, rhs;
  bool transposeLhs = false, transposeRhs = false;
  /// Rank-3 operands with a leading batch dimension.
  bool batched = false;
  /// The op's input operand index that `lhs` / `rhs` came from.
  unsigned lhsOperandIndex = 0, rhsOperandIndex = 1;
  /// The init (outs) value, and whether it is provably all zeros (a
  /// linalg.fill of 0 or a zero constant), i.e. the op computes A x B alone.
  Value init;
  bool zeroInit = false;
};

/// Matches `op` as a GEMM with f32 (or bf16/f16) operands and result, or
/// returns std::nullopt (with `reason` set when it is a contraction we do not
/// handle, e.g. two reduction dimensions).
std::optional<GemmMatch> matchGemm(Operation *op,
                                   std::string *reason = nullptr);

/// Whether `body` (of a linalg op with two inputs) is `out + in0 * in1`,
/// either operand order, with optional float casts; else sets `why`.
bool isMulAddBody(Block &body, std::string &why);

/// Whether `value` is provably all zeros (a linalg.fill of zero or a zero
/// constant): a contraction into it computes A x B alone.
bool isZeroTensor(Value value);

/// Why a matched GEMM's operands cannot be rewritten by the precision passes
/// (FP8, AMP), which read static-shaped f32 tensors; "" when they can.
std::string whyOperandsNotStaticF32(const GemmMatch &match);

} // namespace mlir::msamp

#endif // MSAMP_TRAINSTEP_GEMMMATCHER_H
