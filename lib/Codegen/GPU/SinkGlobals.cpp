//===- SinkGlobals.cpp - Constant tables read in kernels ------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp-gpu-sink-globals: a gpu.launch that reads a memref.get_global from
// the host code around it reads that global itself. After outlining, the
// kernel's module holds its own copy of the memref.global (outlining clones
// the symbols a kernel refers to), which the NVPTX backend places in device
// memory. Without it the kernel got the global's host address as an
// argument: the host image of train_step.so, an illegal address on a GPU
// (the staged table's copy kernel of msamp-gpu-stage-globals).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/SinkGlobals.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace {

struct SinkGlobalsPass
    : PassWrapper<SinkGlobalsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SinkGlobalsPass)

  StringRef getArgument() const override { return "msamp-gpu-sink-globals"; }
  StringRef getDescription() const override {
    return "a kernel reads the constant globals it uses from its own module";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<gpu::GPUDialect, memref::MemRefDialect>();
  }

  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp op) { launches.push_back(op); });
    SetVector<Operation *> sunk;
    for (gpu::LaunchOp launch : launches) {
      Region &body = launch.getBody();
      SetVector<Value> captured;
      getUsedValuesDefinedAbove(body, captured);
      OpBuilder b(&body.front(), body.front().begin());
      for (Value value : captured) {
        auto read = value.getDefiningOp<memref::GetGlobalOp>();
        if (!read)
          continue;
        Operation *copy = b.clone(*read);
        replaceAllUsesInRegionWith(value, copy->getResult(0), body);
        sunk.insert(read);
      }
    }
    // A read left with no host user is dead host code.
    for (Operation *read : sunk)
      if (read->use_empty())
        read->erase();
  }
};

} // namespace

std::unique_ptr<Pass> mlir::msamp::createMSAMPGPUSinkGlobals() {
  return std::make_unique<SinkGlobalsPass>();
}

void mlir::msamp::registerMSAMPGPUSinkGlobals() {
  PassRegistration<SinkGlobalsPass>();
}
