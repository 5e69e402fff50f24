//===- BlockOrder.h - op order of one block across a rewrite ---*- C++ -*-===//
//
// convert-msamp-to-runtime asks "is this use before that op?" once per state
// update (MSAMPToRuntimeState::getInPlaceTarget), while its patterns insert
// ops into the step's one long block. Operation::isBeforeInBlock renumbers
// the whole block whenever an inserted op finds no gap between its
// neighbours' indices, which happens after a few insertions at one point:
// every query then cost the whole step, quadratic in depth (issue 19). A
// BlockOrder is the rewriter's listener and keeps its own keys valid
// instead, in constant time per insertion, move or erasure.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CONVERSION_MSAMPTORUNTIME_BLOCKORDER_H
#define MSAMP_CONVERSION_MSAMPTORUNTIME_BLOCKORDER_H

#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::msamp {

/// The order of the ops of `block`. Each op the block held at construction
/// (an "original") keys its index; an op inserted or moved into the block
/// through a rewriter that notifies this listener keys the key of the op
/// right after it, and is no original any more. So the keys never decrease
/// along the block, the ops before an original key at most its index and
/// those after it more: comparing against an original is exact. Queries
/// that involve no original, or an op the listener never saw (created with
/// a plain builder), fall back to isBeforeInBlock. The listener must see
/// every erasure in the block (an erased op's memory can be reused by the
/// next one created): use it only with rewrites that erase through the
/// rewriter.
class BlockOrder : public RewriterBase::Listener {
public:
  explicit BlockOrder(Block &block);

  /// Whether `a` comes before `b`; both are ops of the block.
  bool isBefore(Operation *a, Operation *b) const;

  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint previous) override;
  void notifyOperationErased(Operation *op) override;

private:
  struct Position {
    uint64_t key;
    bool original;
  };
  Block &block;
  llvm::DenseMap<Operation *, Position> positions;
};

} // namespace mlir::msamp

#endif // MSAMP_CONVERSION_MSAMPTORUNTIME_BLOCKORDER_H
