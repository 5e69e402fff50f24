//===- TileParallelLoops.cpp - scf.parallel -> blocks x threads ---*- C++
//-*-===//
//
// Every outermost scf.parallel is first collapsed into one dimension (the
// row-major linearization of its dimensions, delinearized in the body), then
// tiled by `block-size` without min/max bounds: the inner loop keeps a
// constant trip count and the tail is an scf.if. gpu-map-parallel-loops then
// maps the tile loop to blockIdx.x and the inner loop to threadIdx.x.
//
// Why one dimension: gridDim.y/z are limited to 65535 and blockDim.z to 64,
// and gpu-map-parallel-loops maps the first three dimensions in order and
// leaves the rest sequential. A 1-D grid of up to 2^31 - 1 blocks covers any
// tensor, and neighbouring threads touch neighbouring elements of the
// innermost (contiguous) dimension.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/Passes.h"

#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUTILEPARALLELLOOPS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

SmallVector<scf::ParallelOp> outermostParallelLoops(Operation *root) {
  SmallVector<scf::ParallelOp> loops;
  root->walk([&](scf::ParallelOp op) {
    if (!op->getParentOfType<scf::ParallelOp>())
      loops.push_back(op);
  });
  return loops;
}

struct TileParallelLoopsPass
    : msamp::impl::MSAMPGPUTileParallelLoopsBase<TileParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockSize < 1 || blockSize > 1024) {
      getOperation().emitError("msamp-gpu-tile-parallel-loops: block-size "
                               "must be in 1..1024, got ")
          << blockSize;
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp op : outermostParallelLoops(getOperation())) {
      if (op.getNumLoops() < 2)
        continue;
      std::vector<unsigned> all(op.getNumLoops());
      std::iota(all.begin(), all.end(), 0u);
      rewriter.setInsertionPoint(op);
      collapseParallelLoops(rewriter, op, {all});
    }
    for (scf::ParallelOp op : outermostParallelLoops(getOperation()))
      scf::tileParallelLoop(op, {blockSize}, /*noMinMaxBounds=*/true);
  }
};

} // namespace
