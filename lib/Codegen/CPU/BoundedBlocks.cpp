//===- BoundedBlocks.cpp - Cut a straight line into bounded blocks --------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/CPU/BoundedBlocks.h"

using namespace mlir;

void mlir::msamp::splitIntoBoundedBlocks(
    Block *block, int64_t maxOps, unsigned numLeading,
    llvm::function_ref<void(OpBuilder &, Location, Block *)> branch) {
  SmallVector<Operation *> splitBefore;
  int64_t count = 0;
  for (Operation &op :
       llvm::drop_begin(block->without_terminator(), numLeading))
    if (++count > maxOps) {
      splitBefore.push_back(&op);
      count = 1;
    }
  for (Operation *op : llvm::reverse(splitBefore)) {
    Block *next = block->splitBlock(op);
    OpBuilder builder = OpBuilder::atBlockEnd(block);
    branch(builder, op->getLoc(), next);
  }
}
