//===- PrepareBuffers.cpp - buffers a GPU kernel can read ---------*- C++
//-*-===//
//
// msamp-gpu-stage-globals: memref.get_global -> alloc + copy, so constants
// live in the (device-accessible) buffers of the step, not in the host image.
// msamp-gpu-copies-to-linalg: ranked memref.copy -> linalg.copy, so copies
// become kernels.
// msamp-gpu-parallel-dims-outer: parallel iterators before reductions, so a
// reduction over an outer dimension is one kernel, not a host loop of
// launches.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Builders.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUSTAGEGLOBALS
#define GEN_PASS_DEF_MSAMPGPUCOPIESTOLINALG
#define GEN_PASS_DEF_MSAMPGPUPARALLELDIMSOUTER
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

struct StageGlobalsPass
    : msamp::impl::MSAMPGPUStageGlobalsBase<StageGlobalsPass> {
  void runOnOperation() override {
    SmallVector<memref::GetGlobalOp> reads;
    getOperation().walk([&](memref::GetGlobalOp op) { reads.push_back(op); });
    for (memref::GetGlobalOp read : reads) {
      auto type = read.getType();
      if (!type.getLayout().isIdentity() || !type.hasStaticShape()) {
        read.emitError("msamp-gpu-stage-globals: only static identity-layout "
                       "globals can be staged");
        return signalPassFailure();
      }
      OpBuilder b(read);
      auto alloc = memref::AllocOp::create(b, read.getLoc(), type,
                                           b.getI64IntegerAttr(64));
      // Every user reads the copy; the copy alone reads the global.
      read.getResult().replaceAllUsesWith(alloc.getResult());
      b.setInsertionPointAfter(read);
      memref::CopyOp::create(b, read.getLoc(), read.getResult(),
                             alloc.getResult());
    }
  }
};

struct CopiesToLinalgPass
    : msamp::impl::MSAMPGPUCopiesToLinalgBase<CopiesToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) { copies.push_back(op); });
    for (memref::CopyOp copy : copies) {
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (!source || !target || source.getRank() == 0 ||
          source.getShape() != target.getShape() ||
          source.getElementType() != target.getElementType())
        continue;
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};

struct ParallelDimsOuterPass
    : msamp::impl::MSAMPGPUParallelDimsOuterBase<ParallelDimsOuterPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
      SmallVector<unsigned> order;
      for (unsigned i = 0; i < iterators.size(); ++i)
        if (iterators[i] == utils::IteratorType::parallel)
          order.push_back(i);
      const size_t numParallel = order.size();
      for (unsigned i = 0; i < iterators.size(); ++i)
        if (iterators[i] != utils::IteratorType::parallel)
          order.push_back(i);
      // Already parallel-first (or nothing to run in parallel).
      if (numParallel == 0 ||
          llvm::all_of(llvm::enumerate(order),
                       [](auto pair) { return pair.index() == pair.value(); }))
        continue;
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized))
          continue; // stays as it is: correct, only slower
        generic = *generalized;
      }
      if (failed(linalg::interchangeGenericOp(rewriter, generic, order))) {
        generic.emitError("msamp-gpu-parallel-dims-outer: cannot interchange");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
