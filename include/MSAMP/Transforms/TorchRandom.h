//===- TorchRandom.h - torch-mlir's spelling of randomness ------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The one recognizer of how a training graph spells randomness
// (docs/Interfaces.md 1, docs/Randomness.md): torch-mlir lowers every
// aten.uniform (dropout, bernoulli, rand_like after decomposition) to
//
//   ml_program.global private mutable @global_seed(dense<0>) : tensor<i64>
//   %t  = ml_program.global_load @global_seed : tensor<i64>
//   %s  = tensor.extract %t[] : tensor<i64>
//   %s1 = arith.addi (arith.muli %s, 6364136223846793005), 1442695040888963407
//   ml_program.global_store @global_seed = (tensor.insert %s1 into %t[])
//   %u  = linalg.generic outs(tensor<...xf64 or f32>) {
//           integer mixing of (linalg.index ..., %s1)  -> %bits : i64
//           %f = arith.addf (arith.mulf (arith.uitofp %bits), SCALE), LOW
//           [arith.truncf %f to f32]  }
//
// with SCALE = (HIGH - LOW) * 5.4210108e-20 (torch-mlir's 2^-64). Both
// --msamp-verify-contract (accepts exactly this) and
// --msamp-philox-random (replaces it) use this matcher.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRANSFORMS_TORCHRANDOM_H
#define MSAMP_TRANSFORMS_TORCHRANDOM_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::msamp {

/// The name torch-mlir gives its seed global.
constexpr llvm::StringLiteral kTorchSeedGlobal = "global_seed";

/// torch-mlir's seed advance (a 64-bit LCG, Knuth's MMIX constants) and its
/// stand-in for 2^-64 in the uniform scale (TorchToLinalg/Random.cpp); the
/// ONNX importer writes the same (lib/Target/ONNX/RandomOps.cpp).
constexpr uint64_t kTorchLcgMultiplier = 6364136223846793005ull;
constexpr uint64_t kTorchLcgIncrement = 1442695040888963407ull;
constexpr double kTorchTwoPowMinus64 = 5.4210108e-20;

/// One random-number computation of the graph.
struct TorchUniform {
  /// The linalg.generic that draws the numbers (its result is replaced).
  linalg::GenericOp generic;
  /// The interval [low, high) of the numbers.
  double low = 0.0, high = 1.0;
  /// The seed's load / extract / advance / insert / store chain feeding it.
  SmallVector<Operation *> seedOps;
};

/// Checks the ml_program globals of `module`: only torch-mlir's seed
/// (@global_seed, mutable tensor<i64>) is accepted. Emits a located error
/// for every other global and returns failure if there was one.
LogicalResult verifyTorchSeedGlobals(ModuleOp module);

/// Every random-number computation of `func`, in program order. Every use
/// of ml_program in `func` must be part of one of them; anything else gets
/// a located error saying what was found, and the result is failure.
FailureOr<SmallVector<TorchUniform>> matchTorchRandomness(func::FuncOp func);

} // namespace mlir::msamp

#endif // MSAMP_TRANSFORMS_TORCHRANDOM_H
