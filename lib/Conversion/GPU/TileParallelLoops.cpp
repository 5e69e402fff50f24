//===- TileParallelLoops.cpp - scf.parallel -> blocks x threads ---*- C++
//-*-===//
//
// Tiles every outermost scf.parallel by `block-size` along its innermost
// dimension and by 1 along the others (upstream's scf-parallel-loop-tiling
// takes one list of sizes for every loop, whatever its rank). Without
// min/max bounds: the inner loop keeps a constant trip count and the tail is
// an scf.if, which gpu-map-parallel-loops and convert-parallel-loops-to-gpu
// turn into a block of `block-size` threads with a bounds check.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/GPU/Passes.h"

#include "mlir/Dialect/SCF/Transforms/Transforms.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUTILEPARALLELLOOPS
#include "MSAMP/Conversion/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {
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
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk([&](scf::ParallelOp op) {
      if (!op->getParentOfType<scf::ParallelOp>())
        outermost.push_back(op);
    });
    for (scf::ParallelOp op : outermost) {
      SmallVector<int64_t> sizes(op.getNumLoops(), 1);
      sizes.back() = blockSize;
      scf::tileParallelLoop(op, sizes, /*noMinMaxBounds=*/true);
    }
  }
};
} // namespace
