//===- SplitSharedInits.cpp - --msamp-split-shared-inits -------*- C++ -*-===//
//-*-===//
//
// Every use of a tensor.empty, and every destination use of a linalg.fill of
// one, gets its own copy of that op right before the user, so that no value
// is the destination of many writes, and no chain of in-place writes grows
// without bound (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/TandemRepeats.h"
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
/// write). With `segments`, a group also ends where the uses enter another
/// segment: counted across layers, the groups (and bufferization's buffer
/// reuse with them) fell differently in every layer and at every depth
/// (issue 19). The original is erased once unused. One walk: linear.
void splitUses(func::FuncOp func,
               llvm::function_ref<bool(Operation *)> isShared,
               llvm::function_ref<bool(OpOperand &)> select, unsigned maxUses,
               const msamp::BlockSegments *segments = nullptr) {
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
  // The clone each original's current group uses, its uses so far, and
  // their segment.
  struct Group {
    Value clone;
    unsigned count = 0;
    int64_t segment = -1;
  };
  llvm::MapVector<Operation *, Group> groups;
  for (OpOperand *use : uses) {
    Operation *def = use->get().getDefiningOp();
    Operation *anchor =
        def->getBlock()->findAncestorOpInBlock(*use->getOwner());
    if (!anchor)
      continue;
    auto &[clone, count, segment] = groups[def];
    int64_t useSegment = segments ? segments->of(use->getOwner()) : -1;
    if (!clone || count == maxUses || useSegment != segment) {
      builder.setInsertionPoint(anchor);
      clone = builder.clone(*def)->getResult(0);
      count = 0;
      segment = useSegment;
    }
    use->set(clone);
    ++count;
  }
  for (auto &entry : groups)
    if (entry.first->use_empty())
      entry.first->erase();
}

/// The most elements a chain's value has where the chain is cut at every
/// segment boundary: its copy costs a launch, not bandwidth.
constexpr int64_t kMaxSegmentCutElements = 4096;

/// Cuts chains of in-place writes: an op whose destination is the only use
/// of an earlier destination-style op's result (the gradient norm's sums of
/// squares, one per parameter into one f64 accumulator: 536 at 24 layers)
/// extends that result's chain. Bufferization puts a whole chain in one
/// alias set and checks each write against every read and write of the
/// set: cubic in the chain. A chain is cut at the first op in another
/// segment of the function (a copy of a repeated layer, or a stretch
/// between repeats: BlockSegments) when its value is small or the chain has
/// `maxChain` ops, and at `2 x maxChain` ops: the destination becomes a
/// copy into a fresh empty, the first op of a new chain. Cut at a count
/// alone, the copies fell inside a different layer at every depth; cut at
/// a boundary after `maxChain` ops, every k-th layer had one, and the GPU
/// kernels merged per layer block differed between those layers and the
/// others (issue 19). A copy is a new buffer with the same contents: the
/// ops compute the same values in the same order. Static shapes only (the
/// empty needs no sizes). Linear apart from the repeats' logarithmic
/// searches.
void cutLongChains(func::FuncOp func, unsigned maxChain,
                   const msamp::BlockSegments &segments) {
  // Per destination-style result: how many ops its chain has so far, and
  // the segment of the last.
  llvm::DenseMap<Value, std::pair<unsigned, int64_t>> chains;
  OpBuilder builder(func.getContext());
  func.walk([&](DestinationStyleOpInterface op) {
    if (!op.hasPureTensorSemantics())
      return;
    int64_t segment = segments.of(op);
    for (OpOperand &init : op.getDpsInitsMutable()) {
      Value dest = init.get();
      unsigned length = 0;
      auto it = chains.find(dest);
      if (it != chains.end() && dest.hasOneUse())
        length = it->second.first;
      auto type = dyn_cast<RankedTensorType>(dest.getType());
      bool enters = length > 0 && it->second.second != segment;
      bool small = type && type.hasStaticShape() &&
                   type.getNumElements() <= kMaxSegmentCutElements;
      bool cut =
          length >= 2 * maxChain || (enters && (small || length >= maxChain));
      if (cut && type && type.hasStaticShape()) {
        builder.setInsertionPoint(op);
        Value empty = tensor::EmptyOp::create(
            builder, op.getLoc(), type.getShape(), type.getElementType());
        init.set(linalg::CopyOp::create(builder, op.getLoc(), dest, empty)
                     .getResult(0));
        length = 0;
      }
      chains[op.getTiedOpResult(&init)] = {length + 1, segment};
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
    // The layers, once each init use has its own fill: segments of the
    // body's top-level ops when it is one block. A private function is a
    // block msamp-outline-repeated-blocks outlined, one copy of a layer
    // whatever the depth: its repeats are a layer's parameters, and a cut
    // at each would copy the gradient norm's accumulator once per
    // parameter (a copy kernel each, and the sums no longer merge into
    // one kernel on the GPU).
    func::FuncOp func = getOperation();
    Region &body = func.getBody();
    msamp::BlockSegments segments(
        body.hasOneBlock() && !func.isPrivate() ? &body.front() : nullptr,
        [](Operation &) { return true; });
    // Writes into one empty share a buffer where bufferization proves them
    // disjoint in time; groups keep most of that reuse, and bound the
    // conflict analysis of each alias set.
    splitUses(
        getOperation(), [](Operation *op) { return isa<tensor::EmptyOp>(op); },
        [](OpOperand &) { return true; }, maxUses, &segments);
    // After the empties: the copies' empties have one use each.
    if (maxChain > 0)
      cutLongChains(getOperation(), maxChain, segments);
  }
};
} // namespace
