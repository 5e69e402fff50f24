//===- KernelCosts.cpp - each future kernel's cost, on its location -------===//
//
// Part of the msamp project.
//
// A generated kernel's FLOPs and bytes are plain at the linalg level (the
// iteration space, the body, the operand buffers) and lost once the op is
// a tiled loop nest whose shapes are kernel arguments. Every pass from here
// to gpu.launch_func builds its loops and the launch at the location of
// the op it replaces, so the cost travels on the location: a FusedLoc whose
// metadata is the cost (CostModel.h, kKernelCostAttr), which
// --msamp-gpu-cost-report reads from each launch and then removes. An op
// that later passes erase (a fill of a buffer nobody reads) simply has no
// launch; a launch without a cost is an error there.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/CostModel.h"
#include "MSAMP/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUKERNELCOSTS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

struct KernelCostsPass : msamp::impl::MSAMPGPUKernelCostsBase<KernelCostsPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](linalg::LinalgOp op) {
      if (op.getNumLoops() == 0)
        return WalkResult::advance(); // 0-d: host code, never a kernel
      FailureOr<gpucost::OpCost> cost = gpucost::linalgKernelCost(op);
      if (failed(cost))
        return WalkResult::interrupt();
      op->setLoc(FusedLoc::get(
          &getContext(), {op->getLoc()},
          gpucost::kernelCostAttr(&getContext(), op->getName().getStringRef(),
                                  *cost)));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
