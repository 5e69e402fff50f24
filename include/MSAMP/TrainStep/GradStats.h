//===- GradStats.h - gradient statistics of a train step --------*- C++ -*-===//
//
// Names of the argument and results that --msamp-grad-stats adds to
// @train_step (docs/TrainStep.md 2), shared by the passes that read them
// (the verifier, the manifest, the runtime lowering). The runtime session
// matches the same strings in manifest.json.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRAINSTEP_GRADSTATS_H
#define MSAMP_TRAINSTEP_GRADSTATS_H

#include "llvm/ADT/StringRef.h"

namespace mlir::msamp {

/// The hyperparameter argument: clip the global gradient norm to this value;
/// <= 0 (or NaN) disables clipping.
constexpr llvm::StringLiteral kMaxGradNormName = "max_grad_norm";

/// Metric: the L2 norm of all dequantized, all-reduced gradients, before
/// clipping (what torch.nn.utils.clip_grad_norm_ returns).
constexpr llvm::StringLiteral kGradNormName = "grad_norm";

/// Metric: 1.0 when grad_norm is not finite (a NaN or Inf gradient, or an
/// FP8 gradient whose recorded amax is not finite), else 0.0.
constexpr llvm::StringLiteral kNonFiniteName = "nonfinite";

} // namespace mlir::msamp

#endif // MSAMP_TRAINSTEP_GRADSTATS_H
