//===- SplitFreshDeallocs.cpp - --msamp-split-fresh-deallocs ----*- C++ -*-===//
//
// One bufferization.dealloc of distinct fresh allocations (true conditions,
// nothing retained) becomes one dealloc per buffer, without the pairwise
// alias proofs of buffer-deallocation-simplification (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPSPLITFRESHDEALLOCS
#include "MSAMP/Conversion/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// Whether `dealloc` frees results of distinct memref.alloc ops under the
/// constant true and retains nothing.
bool freesDistinctFreshAllocations(bufferization::DeallocOp dealloc) {
  if (!dealloc.getRetained().empty() || dealloc.getMemrefs().size() < 2)
    return false;
  llvm::SmallDenseSet<Operation *, 16> allocs;
  for (auto [memref, condition] :
       llvm::zip_equal(dealloc.getMemrefs(), dealloc.getConditions())) {
    auto alloc = memref.getDefiningOp<memref::AllocOp>();
    if (!alloc || !allocs.insert(alloc).second ||
        !matchPattern(condition, m_One()))
      return false;
  }
  return true;
}

struct MSAMPSplitFreshDeallocsPass
    : ::mlir::msamp::impl::MSAMPSplitFreshDeallocsBase<
          MSAMPSplitFreshDeallocsPass> {
  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> toSplit;
    getOperation().walk([&](bufferization::DeallocOp dealloc) {
      if (freesDistinctFreshAllocations(dealloc))
        toSplit.push_back(dealloc);
    });
    if (toSplit.empty())
      return markAllAnalysesPreserved();
    for (bufferization::DeallocOp dealloc : toSplit) {
      OpBuilder b(dealloc);
      for (auto [memref, condition] :
           llvm::zip_equal(dealloc.getMemrefs(), dealloc.getConditions()))
        bufferization::DeallocOp::create(b, dealloc.getLoc(), memref, condition,
                                         ValueRange());
      dealloc.erase();
    }
  }
};
} // namespace
