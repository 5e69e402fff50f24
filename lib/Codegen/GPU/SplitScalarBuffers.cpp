//===- SplitScalarBuffers.cpp - one 0-d buffer per value ------------------===//
//
// Part of the msamp project.
//
// One-shot bufferization writes the 0-d results of one tensor.empty into
// the same buffer whenever the previous result is dead: GPT-2's inverse
// scales (1 / scale for each weight's dequantize, each GEMM's
// scale_inv) all land in one 4-byte buffer. Each store into it is then
// ordered after every reader of the previous value (a write after read),
// which pins the single-thread kernel that stores it
// (msamp-gpu-merge-scalar-kernels cannot move it up): 12 kernels per
// layer of the LM.
//
// Here each store into a 0-d allocation at the top level of its block
// after the first starts a new buffer: the store and every use up to the
// next such store take a fresh allocation (the views and casts they reach
// it through rebuilt on it), deallocated where the original buffer is. The
// first value keeps the original buffer and its deallocation. Every reader
// reads the same value as before (a store of a 0-d buffer overwrites all of
// it), so the bits are unchanged; the static arena gives each value its own
// slot (a few hundred bytes per step).
//
// A buffer whose address may outlive the uses is left alone: any user
// other than loads, stores, atomic updates, copies, deallocations and
// calls, or an address taken (for a table of addresses) before the last
// store.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/SingleThreadKernels.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUSPLITSCALARBUFFERS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

/// Whether `op` only passes a buffer on (a view or a cast), as rootBuffer
/// follows it.
bool isChainOp(Operation *op) {
  if (isa<ViewLikeOpInterface, memref::CastOp>(op))
    return true;
  auto cast = dyn_cast<UnrealizedConversionCastOp>(op);
  return cast && cast->getNumOperands() == 1;
}

/// The operand a chain op passes on.
Value chainSource(Operation *op) {
  if (auto view = dyn_cast<ViewLikeOpInterface>(op))
    return view.getViewSource();
  return op->getOperand(0);
}

struct SplitScalarBuffersPass
    : msamp::impl::MSAMPGPUSplitScalarBuffersBase<SplitScalarBuffersPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation().walk([&](memref::AllocOp alloc) {
      if (alloc.getType().getRank() == 0)
        allocs.push_back(alloc);
    });
    for (memref::AllocOp alloc : allocs)
      split(alloc);
  }

  /// The uses of `buffer` through chain ops (not the chain ops' own uses),
  /// or failure when one may keep its address (see the file comment).
  static FailureOr<SmallVector<OpOperand *>> usesOf(Value buffer) {
    SmallVector<OpOperand *> uses;
    SmallVector<Value> worklist{buffer};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        if (isChainOp(user) && chainSource(user) == value) {
          llvm::append_range(worklist, user->getResults());
          continue;
        }
        if (!isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp,
                 memref::CopyOp, memref::DeallocOp, func::CallOp,
                 memref::ExtractAlignedPointerAsIndexOp>(user))
          return failure();
        if (auto store = dyn_cast<memref::StoreOp>(user);
            store && store.getMemRef() != value)
          return failure(); // the buffer's address stored as a value
        uses.push_back(&use);
      }
    }
    return uses;
  }

  void split(memref::AllocOp alloc) {
    Block *block = alloc->getBlock();
    FailureOr<SmallVector<OpOperand *>> uses = usesOf(alloc.getResult());
    if (failed(uses))
      return;
    // The stores that start a value: directly into the buffer, at the top
    // level of its block.
    SmallVector<Operation *> starts;
    for (OpOperand *use : *uses)
      if (auto store = dyn_cast<memref::StoreOp>(use->getOwner());
          store && store->getBlock() == block &&
          store.getMemRef() == alloc.getResult())
        starts.push_back(store);
    if (starts.size() < 2)
      return;
    llvm::sort(starts, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });

    // Each use, by the value it sees: the last start before (or at) the
    // op of the block it is in. The first value keeps the buffer.
    SmallVector<SmallVector<OpOperand *>> byValue(starts.size());
    for (OpOperand *use : *uses) {
      if (isa<memref::DeallocOp>(use->getOwner()))
        continue;
      Operation *ancestor = block->findAncestorOpInBlock(*use->getOwner());
      if (!ancestor)
        return; // a use outside the block: left alone
      auto after = llvm::upper_bound(starts, ancestor,
                                     [](Operation *op, Operation *start) {
                                       return op->isBeforeInBlock(start);
                                     });
      // An address taken (into msamp_rt_adam_update_multi's table) is
      // used later: only for the last value, which nothing overwrites.
      if (isa<memref::ExtractAlignedPointerAsIndexOp>(use->getOwner()) &&
          after != starts.end())
        return;
      if (after == starts.begin())
        continue; // before the first store
      byValue[after - starts.begin() - 1].push_back(use);
    }

    SmallVector<memref::DeallocOp> deallocs;
    for (OpOperand *use : *uses)
      if (auto dealloc = dyn_cast<memref::DeallocOp>(use->getOwner()))
        deallocs.push_back(dealloc);
    for (size_t k = 1; k < starts.size(); ++k) {
      OpBuilder b(starts[k]);
      auto fresh = memref::AllocOp::create(b, alloc.getLoc(), alloc.getType(),
                                           alloc.getAlignmentAttr());
      for (OpOperand *use : byValue[k]) {
        Operation *ancestor = block->findAncestorOpInBlock(*use->getOwner());
        // The chain from the buffer to the used value, rebuilt on the
        // fresh buffer right before the user's op in the block.
        SmallVector<Operation *> chain;
        for (Value v = use->get(); v != alloc.getResult();
             v = chainSource(v.getDefiningOp()))
          chain.push_back(v.getDefiningOp());
        IRMapping mapping;
        mapping.map(alloc.getResult(), fresh.getResult());
        b.setInsertionPoint(ancestor);
        for (Operation *op : llvm::reverse(chain))
          b.clone(*op, mapping);
        use->set(mapping.lookup(use->get()));
      }
      // Deallocated with the original buffer: a deallocation in between
      // would end msamp-gpu-scalar-kernels' run there.
      for (memref::DeallocOp dealloc : deallocs) {
        b.setInsertionPoint(dealloc);
        memref::DeallocOp::create(b, alloc.getLoc(), fresh);
      }
      ++numSplit;
    }
  }
};

} // namespace
