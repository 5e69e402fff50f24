//===- FuseIntoConsumer.h - One elementwise fusion, uses redirected -*- C++
//-*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The step that msamp-gpu-fuse-producers and msamp-gpu-fuse-permutes both
// take once they have decided to fuse an operand's producer into its
// consumer: upstream linalg::fuseElementwiseOps builds the fused op at the
// consumer's place, and every other use of the consumer's results reads
// the fused op's instead.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_FUSEINTOCONSUMER_H
#define MSAMP_CODEGEN_GPU_FUSEINTOCONSUMER_H

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::msamp {

/// Fuses the producer of `use` into its owner (the consumer) and returns
/// the fused op, the consumer's results replaced by its everywhere else.
/// The consumer is left for the caller to erase (after noting its
/// replacement); the producer stays while it has other uses. Failure when
/// upstream fusion refuses, nothing changed.
inline FailureOr<Operation *> fuseIntoConsumer(RewriterBase &rewriter,
                                               OpOperand &use) {
  rewriter.setInsertionPoint(use.getOwner());
  FailureOr<linalg::ElementwiseOpFusionResult> fusion =
      linalg::fuseElementwiseOps(rewriter, &use);
  if (failed(fusion))
    return failure();
  for (auto [original, replacement] : fusion->replacements)
    rewriter.replaceUsesWithIf(original, replacement, [&](OpOperand &u) {
      return u.getOwner() != fusion->fusedOp;
    });
  return fusion->fusedOp;
}

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_FUSEINTOCONSUMER_H
