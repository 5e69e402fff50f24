//===- PrepareBuffers.cpp - buffers a GPU kernel can read ---------*- C++
//-*-===//
//
// msamp-gpu-stage-globals: memref.get_global -> alloc + copy, so constants
// live in the (device-accessible) buffers of the step, not in the host image.
// msamp-gpu-copies-to-linalg: ranked memref.copy -> linalg.copy, so copies
// become kernels.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/GPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUSTAGEGLOBALS
#define GEN_PASS_DEF_MSAMPGPUCOPIESTOLINALG
#include "MSAMP/Conversion/GPU/Passes.h.inc"
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

} // namespace
