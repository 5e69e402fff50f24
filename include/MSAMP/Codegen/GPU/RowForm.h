//===- RowForm.h - the row reductions of the GPU lowering -------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The form of a row reduction that msamp-gpu-row-reductions runs with a
// warp or a block per row, which the passes that build such reductions
// (msamp-gpu-fuse-producers, msamp-gpu-fuse-sibling-reductions) keep.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_ROWFORM_H
#define MSAMP_CODEGEN_GPU_ROWFORM_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"

namespace mlir::msamp {

/// Whether the loops of `op` are its `numParallel` parallel ones followed by
/// reductions only.
inline bool hasParallelThenReductionLoops(linalg::LinalgOp op,
                                          unsigned numParallel) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < iterators.size(); ++d)
    if (linalg::isReductionIterator(iterators[d]) != (d >= numParallel))
      return false;
  return true;
}

/// The reduction loop dimensions (those from `numParallel` on) that `map`
/// reads, when `map` is a projected permutation whose results that are
/// reduction dimensions form a suffix in increasing order (the row is the
/// operand's innermost data); failure otherwise.
inline FailureOr<SmallVector<unsigned>>
innermostReductionDims(AffineMap map, unsigned numParallel) {
  if (!map.isProjectedPermutation())
    return failure();
  SmallVector<unsigned> reductionDims;
  for (unsigned r = 0; r < map.getNumResults(); ++r) {
    unsigned dim = map.getDimPosition(r);
    if (dim >= numParallel) {
      if (!reductionDims.empty() && dim <= reductionDims.back())
        return failure();
      reductionDims.push_back(dim);
    } else if (!reductionDims.empty()) {
      return failure();
    }
  }
  return reductionDims;
}

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_ROWFORM_H
