//===- SplitHostStep.cpp - The host step in bounded blocks ----------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp-gpu-split-host-step: on --target cuda nothing repeated is outlined
// on the host, so @train_step reaches gpu-to-llvm as one block of
// every launch, runtime call and buffer view of the step, linear in depth.
// The dialect conversion driver asks, for each value it replaces, whether
// a use comes before an operation of the same block
// (Operation::isBeforeInBlock), and each conversion has just inserted
// operations into that block, so every such question renumbers the whole
// block: quadratic in the block (issue 19: 6.0 s of gpu-to-llvm's 6.0 at 24
// layers of the benchmark LM were Block::recomputeOpOrder). Cut into blocks
// of a bounded number of operations, each renumbering is bounded too.
//
// Only control flow changes: the same operations run in the same order,
// each block ending in a cf.br to the next (no block arguments: every value
// is defined in a block that dominates its uses). After the host lowering,
// msamp-split-straight-lines bounds the LLVM blocks again (each func-level
// operation becomes several LLVM ones); LLVM never merges them back, the
// step being optnone.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/SplitHostStep.h"

#include "MSAMP/Codegen/CPU/BoundedBlocks.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace {

struct SplitHostStepPass
    : PassWrapper<SplitHostStepPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SplitHostStepPass)

  SplitHostStepPass() = default;
  SplitHostStepPass(const SplitHostStepPass &other) : PassWrapper(other) {}

  StringRef getArgument() const override { return "msamp-gpu-split-host-step"; }
  StringRef getDescription() const override {
    return "cut the host functions' blocks into blocks of a bounded number "
           "of operations before the host conversions";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<cf::ControlFlowDialect>();
  }

  Option<int64_t> maxOps{
      *this, "max-ops",
      llvm::cl::desc("most operations per block (the branch not counted)"),
      llvm::cl::init(64)};

  void runOnOperation() override {
    if (maxOps < 1) {
      getOperation().emitError(
          "msamp-gpu-split-host-step: max-ops must be at least 1");
      return signalPassFailure();
    }
    bool changed = false;
    // Host functions only: the kernels are gpu.funcs inside gpu.modules.
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      SmallVector<Block *> blocks;
      for (Block &block : fn.getBody())
        if (static_cast<int64_t>(block.getOperations().size()) > maxOps + 1)
          blocks.push_back(&block);
      for (Block *block : blocks)
        msamp::splitIntoBoundedBlocks(
            block, maxOps, /*numLeading=*/0,
            [](OpBuilder &builder, Location loc, Block *next) {
              cf::BranchOp::create(builder, loc, next);
            });
      changed |= !blocks.empty();
    }
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace

std::unique_ptr<Pass> mlir::msamp::createMSAMPGPUSplitHostStep() {
  return std::make_unique<SplitHostStepPass>();
}

void mlir::msamp::registerMSAMPGPUSplitHostStep() {
  PassRegistration<SplitHostStepPass>();
}
