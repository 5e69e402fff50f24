//===- ReductionInits.cpp - reductions start from their fill's constant ---===//
//
// Part of the msamp project.
//
// Bufferization gives each reduction's accumulator its own buffer, copied
// from one shared buffer that a `linalg.fill` set to the start value (0.0
// for sums, -inf for maxima):
//
//   linalg.fill ins(%zero) outs(%c)        // once
//   linalg.copy ins(%c) outs(%acc)         // per reduction: a kernel
//   linalg.generic ... outs(%acc)          // reads %acc on its first step
//
// This pass turns each copy out of a buffer that holds one constant when
// the copy reads it (its last write before the copy is a fill of that
// constant; before the copy, everything else only copies it out) into a
// fill of that constant, and erases the shared buffer when nothing reads
// it any more (else its fill stays, and may be folded in turn when the
// buffer is itself a reduction's accumulator). A fill right
// before a reduction into the same buffer is then not a kernel at all: the
// reduction kernels start their accumulator from the constant and erase the
// fill (ReductionInits.h; msamp-gpu-register-accumulators,
// msamp-gpu-row-reductions). Where they cannot, the fill stays a kernel, as
// the copy was, with the same values.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/ReductionInits.h"
#include "MSAMP/Codegen/GPU/FreshArguments.h"
#include "MSAMP/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUREDUCTIONINITS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

Value msamp::viewedBuffer(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

TypedAttr msamp::constantOf(linalg::FillOp fill) {
  TypedAttr value;
  if (fill.getInputs().size() != 1 ||
      !matchPattern(fill.getInputs()[0], m_Constant(&value)))
    return {};
  return value;
}

bool msamp::namesBuffer(Operation *op, Value buffer) {
  WalkResult result = op->walk([&](Operation *inner) {
    for (Value operand : inner->getOperands())
      if (isa<BaseMemRefType>(operand.getType()) &&
          msamp::viewedBuffer(operand) == buffer)
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

linalg::FillOp msamp::constantInitFill(linalg::LinalgOp op, OpOperand *init) {
  auto type = dyn_cast<MemRefType>(init->get().getType());
  if (!type || !type.hasStaticShape() || !op.hasPureBufferSemantics())
    return {};
  // Every element written once, by the parallel iteration it is indexed
  // by: the map is a permutation of all parallel dimensions.
  AffineMap map = op.getMatchingIndexingMap(init);
  if (!map.isProjectedPermutation() ||
      map.getNumResults() != op.getNumParallelLoops())
    return {};
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned r = 0; r < map.getNumResults(); ++r)
    if (!linalg::isParallelIterator(iterators[map.getDimPosition(r)]))
      return {};
  // The buffer is the function's own (an allocation, or an argument every
  // call gives a buffer of its own: FreshArguments.h), and no other operand
  // of the op views it.
  Value buffer = viewedBuffer(init->get());
  if (buffer.getDefiningOp<memref::AllocaOp>() || !isOwnBuffer(buffer))
    return {};
  for (OpOperand &other : op->getOpOperands())
    if (&other != init && isa<BaseMemRefType>(other.get().getType()) &&
        viewedBuffer(other.get()) == buffer)
      return {};
  // Back to the allocation at most: nothing before it names the buffer (a
  // walk to the block's start for every op was quadratic in the step). An
  // argument's walk goes to the start of the function, a layer's.
  for (Operation *prev = op->getPrevNode();
       prev && prev != buffer.getDefiningOp(); prev = prev->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (fill && fill.hasPureBufferSemantics() &&
        fill.getOutputs()[0] == init->get())
      return constantOf(fill) ? fill : linalg::FillOp();
    if (namesBuffer(prev, buffer))
      return {};
  }
  return {};
}

namespace {

/// The fill of a constant that `copy` reads the result of; null when
/// there is none. The source is an allocation whose uses before the copy
/// are only fills, copies out of it and deallocations (no other way to
/// reach it there); walking back from the copy, the first op naming it is
/// a fill of a constant into it, with only copies out of it in between.
/// Later uses (bufferization reuses the shared buffer as the last
/// reduction's accumulator) cannot change what the copy reads.
linalg::FillOp fillReadBy(linalg::CopyOp copy) {
  Value source = copy.getInputs()[0];
  if (!source.getDefiningOp<memref::AllocOp>() ||
      msamp::viewedBuffer(copy.getOutputs()[0]) == source)
    return {};
  Block *block = copy->getBlock();
  for (Operation *user : source.getUsers()) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (ancestor && copy->isBeforeInBlock(ancestor))
      continue;
    if (!isa<linalg::FillOp, linalg::CopyOp, memref::DeallocOp>(user))
      return {};
  }
  auto readsSource = [&](Operation *op) {
    auto other = dyn_cast<linalg::CopyOp>(op);
    return other && other.hasPureBufferSemantics() &&
           other.getInputs()[0] == source &&
           msamp::viewedBuffer(other.getOutputs()[0]) != source;
  };
  for (Operation *prev = copy->getPrevNode(); prev;
       prev = prev->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (fill && fill.hasPureBufferSemantics() && fill.getOutputs()[0] == source)
      return msamp::constantOf(fill) ? fill : linalg::FillOp();
    if (!readsSource(prev) && msamp::namesBuffer(prev, source))
      return {};
  }
  return {};
}

struct ReductionInitsPass
    : msamp::impl::MSAMPGPUReductionInitsBase<ReductionInitsPass> {
  void runOnOperation() override {
    SmallVector<linalg::CopyOp> copies;
    getOperation().walk([&](linalg::CopyOp copy) {
      if (copy.hasPureBufferSemantics())
        copies.push_back(copy);
    });
    IRRewriter rewriter(&getContext());
    llvm::SetVector<Operation *> sources;
    for (linalg::CopyOp copy : copies) {
      Value source = copy.getInputs()[0];
      linalg::FillOp fill = fillReadBy(copy);
      if (!fill)
        continue;
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::FillOp>(
          copy, fill.getInputs(), ValueRange{copy.getOutputs()[0]});
      sources.insert(source.getDefiningOp());
    }
    // A shared buffer nothing copies out of any more: no fill, no buffer.
    for (Operation *alloc : sources) {
      if (!llvm::all_of(alloc->getUsers(), [](Operation *user) {
            return isa<linalg::FillOp, memref::DeallocOp>(user);
          }))
        continue;
      for (Operation *user : llvm::to_vector(alloc->getUsers()))
        rewriter.eraseOp(user);
      rewriter.eraseOp(alloc);
    }
  }
};

} // namespace
