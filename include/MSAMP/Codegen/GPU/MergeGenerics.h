//===- MergeGenerics.h - two linalg.generics as one -------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The multi-output generic that msamp-gpu-fuse-sibling-reductions (on
// tensors) and msamp-gpu-merge-sibling-kernels (on buffers) make of two
// independent generics over the same loops: one kernel, each iteration
// computing both ops' outputs at its index, each with its own body in its
// own order, so each output gets the bits it had.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_MERGEGENERICS_H
#define MSAMP_CODEGEN_GPU_MERGEGENERICS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::msamp {

/// `a` and `b` as one linalg.generic created at the rewriter's insertion
/// point: `a`'s inputs, then those of `b` that `a` does not read through
/// the same map; `a`'s inits, then `b`'s; `a`'s body, then `b`'s. `a` and
/// `b` must have the same iterator types and loop ranges, both tensor or
/// both buffer semantics, and must not depend on each other (neither reads
/// or writes what the other writes); the caller checks. On tensors the
/// merged op's results replace `a`'s and `b`'s; `a` and `b` are erased.
linalg::GenericOp mergeGenerics(RewriterBase &rewriter, linalg::GenericOp a,
                                linalg::GenericOp b);

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_MERGEGENERICS_H
