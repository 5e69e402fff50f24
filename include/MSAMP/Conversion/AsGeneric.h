//===- AsGeneric.h - A linalg op as the generic it stands for ----*- C++
//-*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Passes that match on a linalg.generic's indexing maps and body also take
// the named ops that stand for one (linalg.reduce, linalg.fill, ...).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CONVERSION_ASGENERIC_H
#define MSAMP_CONVERSION_ASGENERIC_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::msamp {

/// `op` itself if it is a linalg.generic; otherwise the generic that
/// replaces it, built at its place (failure: linalg cannot generalize it,
/// and `op` is left as it is).
inline FailureOr<linalg::GenericOp> asGeneric(RewriterBase &rewriter,
                                              linalg::LinalgOp op) {
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
    return generic;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  return linalg::generalizeNamedOp(rewriter, op);
}

} // namespace mlir::msamp

#endif // MSAMP_CONVERSION_ASGENERIC_H
