//===- SplitSharedInits.cpp - --msamp-split-shared-inits -------*- C++ -*-===//
//-*-===//
//
// Every use of a tensor.empty, and every destination use of a linalg.fill of
// one, gets its own copy of that op right before the user, so that no value
// is the destination of many writes, and no chain of in-place writes grows
// without bound (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPSPLITSHAREDINITS
#include "MSAMP/Conversion/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// Whether `use` is a destination (init) operand of a destination-style op.
bool isInitUse(OpOperand &use) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
  return dps && dps.isDpsInit(&use);
}

/// A linalg.fill of a tensor.empty: cloned, it defines the same value.
bool isFillOfEmpty(Operation *op) {
  auto fill = dyn_cast<linalg::FillOp>(op);
  return fill && fill.hasPureTensorSemantics() &&
         fill.getOutputs().front().getDefiningOp<tensor::EmptyOp>();
}

/// Splits the uses that `select` accepts of each value that `isShared`
/// accepts and that has more than `maxUses` uses into groups of at most
/// `maxUses` consecutive uses in IR order (not use-list order), each with
/// its own clone of the value's defining op, inserted before the first
/// user's ancestor in that op's block (a use inside a loop does not
/// allocate per iteration, and no buffer is allocated long before its first
/// write). The original is erased once unused. One walk: linear.
void splitUses(func::FuncOp func,
               llvm::function_ref<bool(Operation *)> isShared,
               llvm::function_ref<bool(OpOperand &)> select, unsigned maxUses) {
  SmallVector<OpOperand *> uses;
  func.walk([&](Operation *user) {
    for (OpOperand &use : user->getOpOperands()) {
      Operation *def = use.get().getDefiningOp();
      if (def && isShared(def) && select(use) &&
          def->getResult(0).hasNUsesOrMore(maxUses + 1))
        uses.push_back(&use);
    }
  });
  OpBuilder builder(func.getContext());
  // The clone each original's current group uses, and its uses so far.
  llvm::MapVector<Operation *, std::pair<Value, unsigned>> groups;
  for (OpOperand *use : uses) {
    Operation *def = use->get().getDefiningOp();
    Operation *anchor =
        def->getBlock()->findAncestorOpInBlock(*use->getOwner());
    if (!anchor)
      continue;
    auto &[clone, count] = groups[def];
    if (!clone || count == maxUses) {
      builder.setInsertionPoint(anchor);
      clone = builder.clone(*def)->getResult(0);
      count = 0;
    }
    use->set(clone);
    ++count;
  }
  for (auto &entry : groups)
    if (entry.first->use_empty())
      entry.first->erase();
}

/// Cuts every chain of in-place writes longer than `maxChain`: an op whose
/// destination is the only use of an earlier destination-style op's result
/// (the gradient norm's sums of squares, one per parameter into one f64
/// accumulator: 536 at 24 layers) extends that result's chain; at
/// `maxChain` ops the destination becomes a copy into a fresh empty, the
/// first op of a new chain. Bufferization puts a whole chain in one alias
/// set and checks each write against every read and write of the set:
/// cubic in the chain. A copy is a new buffer with the same contents: the
/// ops compute the same values in the same order. Static shapes only (the
/// empty needs no sizes). One walk: linear.
void cutLongChains(func::FuncOp func, unsigned maxChain) {
  // Per destination-style result: how many ops its chain has so far.
  llvm::DenseMap<Value, unsigned> lengths;
  OpBuilder builder(func.getContext());
  func.walk([&](DestinationStyleOpInterface op) {
    if (!op.hasPureTensorSemantics())
      return;
    for (OpOperand &init : op.getDpsInitsMutable()) {
      Value dest = init.get();
      unsigned length = 0;
      auto it = lengths.find(dest);
      if (it != lengths.end() && dest.hasOneUse())
        length = it->second;
      auto type = dyn_cast<RankedTensorType>(dest.getType());
      if (length >= maxChain && type && type.hasStaticShape()) {
        builder.setInsertionPoint(op);
        Value empty = tensor::EmptyOp::create(
            builder, op.getLoc(), type.getShape(), type.getElementType());
        init.set(linalg::CopyOp::create(builder, op.getLoc(), dest, empty)
                     .getResult(0));
        length = 0;
      }
      lengths[op.getTiedOpResult(&init)] = length + 1;
    }
  });
}

struct MSAMPSplitSharedInitsPass
    : ::mlir::msamp::impl::MSAMPSplitSharedInitsBase<
          MSAMPSplitSharedInitsPass> {
  using Base::Base;
  void runOnOperation() override {
    // Fills first: their clones are more uses of the empties, which the
    // second walk then splits too. Each init use gets its own fill: a
    // reduction reads its init, so a second one into the same buffer was
    // a copy of the fill anyway.
    splitUses(getOperation(), isFillOfEmpty, isInitUse, /*maxUses=*/1);
    // Writes into one empty share a buffer where bufferization proves them
    // disjoint in time; groups keep most of that reuse, and bound the
    // conflict analysis of each alias set.
    splitUses(
        getOperation(), [](Operation *op) { return isa<tensor::EmptyOp>(op); },
        [](OpOperand &) { return true; }, maxUses);
    // After the empties: the copies' empties have one use each.
    if (maxChain > 0)
      cutLongChains(getOperation(), maxChain);
  }
};
} // namespace
