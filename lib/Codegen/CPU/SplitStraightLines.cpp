//===- SplitStraightLines.cpp - --msamp-split-straight-lines ----*- C++ -*-===//
//
// The step and its wrappers are compiled at -O0 (msamp-optnone-entry-points)
// and are each one basic block of thousands of calls, allocations and
// descriptor fields, linear in depth. At -O0 LLVM selects instructions with
// FastISel, which hands a block to SelectionDAG from its start up to any
// instruction it cannot select (aggregate loads, insertvalue of
// descriptors), and SelectionDAG's scheduling and combining of one block
// grew faster than the block: at 24 layers it was more than half of code
// generation (issue 19). Cut into blocks of a bounded number of operations,
// the same instructions cost the same per block at any depth.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/CPU/BoundedBlocks.h"
#include "MSAMP/Codegen/CPU/Passes.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPSPLITSTRAIGHTLINES
#include "MSAMP/Codegen/CPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// Moves every alloca of a constant size to the start of the entry block,
/// in order, with its own copy of the size constant: only allocas in the
/// entry block are static stack slots; one left in a later block would
/// become a dynamic stack adjustment. The functions this pass splits have
/// no cycle, so every alloca ran at most once before as well. Returns how
/// many operations now lead the entry block (the constants and allocas).
unsigned hoistStaticAllocas(LLVM::LLVMFuncOp fn) {
  Block &entry = fn.getBody().front();
  SmallVector<LLVM::AllocaOp> allocas;
  fn.walk([&](LLVM::AllocaOp alloca) {
    if (alloca.getArraySize().getDefiningOp<LLVM::ConstantOp>())
      allocas.push_back(alloca);
  });
  OpBuilder builder = OpBuilder::atBlockBegin(&entry);
  llvm::DenseMap<std::pair<Attribute, Type>, Value> sizes;
  unsigned numHoisted = 0;
  // Erased at the end: the builder's position is before the block's first
  // operation, which may be one of them.
  SmallVector<LLVM::ConstantOp> deadSizes;
  for (LLVM::AllocaOp alloca : allocas) {
    auto size = alloca.getArraySize().getDefiningOp<LLVM::ConstantOp>();
    Value &hoisted = sizes[{size.getValue(), size.getType()}];
    if (!hoisted) {
      hoisted = builder.clone(*size)->getResult(0);
      ++numHoisted;
    }
    alloca.getArraySizeMutable().assign(hoisted);
    if (size.use_empty())
      deadSizes.push_back(size);
    if (Block::iterator(alloca) == builder.getInsertionPoint())
      builder.setInsertionPointAfter(alloca);
    else
      alloca->moveBefore(builder.getInsertionBlock(),
                         builder.getInsertionPoint());
    ++numHoisted;
  }
  for (LLVM::ConstantOp size : deadSizes)
    size.erase();
  return numHoisted;
}

struct MSAMPSplitStraightLinesPass
    : ::mlir::msamp::impl::MSAMPSplitStraightLinesBase<
          MSAMPSplitStraightLinesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxOps < 1) {
      getOperation().emitError("msamp-split-straight-lines: max-ops must be "
                               "at least 1");
      return signalPassFailure();
    }
    bool changed = false;
    for (auto fn : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      // Only what is compiled at -O0: LLVM's optimizer would merge the
      // blocks again, and the -O3 functions have loops of their own.
      if (fn.isExternal() || !fn.getOptimizeNone())
        continue;
      int64_t numOps = 0;
      for (Block &block : fn.getBody())
        numOps += block.getOperations().size();
      if (numOps <= maxOps)
        continue;
      unsigned numLeading = hoistStaticAllocas(fn);
      SmallVector<Block *> blocks;
      for (Block &block : fn.getBody())
        blocks.push_back(&block);
      for (Block *block : blocks) {
        msamp::splitIntoBoundedBlocks(
            block, maxOps, numLeading,
            [](OpBuilder &builder, Location loc, Block *next) {
              LLVM::BrOp::create(builder, loc, ValueRange(), next);
            });
        numLeading = 0;
      }
      ++numSplit;
      changed = true;
    }
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace
