//===- BoundedBlocks.h - Cut a straight line into bounded blocks -*- C++
//-*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The host step grows with depth as one block, and several upstream
// algorithms grow faster than the block they work on (SelectionDAG at -O0,
// the dialect conversion driver's operation order). Cut into blocks of a
// bounded number of operations, the same operations in the same order cost
// the same per block at any depth. Used by msamp-split-straight-lines (LLVM
// dialect, after the host lowering) and msamp-gpu-split-host-step (func
// dialect, before it).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_CPU_BOUNDEDBLOCKS_H
#define MSAMP_CODEGEN_CPU_BOUNDEDBLOCKS_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::msamp {

/// Splits `block` into blocks of at most `maxOps` operations each (its
/// terminator and each new block's branch not counted), in order; its first
/// `numLeading` operations stay in it and are not counted. `branch` ends a
/// block with an unconditional branch to `next`, built at the end of the
/// block the builder points into. Split from the back: each split moves one
/// chunk, so the whole is linear in the block.
void splitIntoBoundedBlocks(
    Block *block, int64_t maxOps, unsigned numLeading,
    llvm::function_ref<void(OpBuilder &, Location, Block *next)> branch);

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_CPU_BOUNDEDBLOCKS_H
