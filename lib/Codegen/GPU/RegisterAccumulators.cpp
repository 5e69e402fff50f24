//===- RegisterAccumulators.cpp - reduction accumulators in registers -----===//
//
// Part of the msamp project.
//
// convert-linalg-to-parallel-loops lowers a reduction to
//
//   scf.parallel (%p) { scf.for %r {
//     %a = memref.load %out[%p]   ...   memref.store %s, %out[%p] } }
//
// which on the GPU is a global load and store per element reduced (a bias
// gradient's thread walks every token that way). Each linalg op with
// reduction iterators is lowered here by the same function
// (linalg::linalgOpToParallelLoops), and then, from the innermost scf.for
// outwards, every buffer element that a loop loads and later stores at the
// same loop-invariant indices, and that nothing else in the loop touches,
// becomes an iter_arg:
//
//   %init = memref.load %out[%p]
//   %s = scf.for %r iter_args(%a = %init) { ... scf.yield %s' }
//   memref.store %s, %out[%p]
//
// The arithmetic and its order are unchanged (bit-identical results); only
// the memory traffic goes. The loops come from one linalg op, whose
// operands are the only memory they touch; an output that is a view of the
// same buffer as another operand could be read through it and is left as
// it is.
//
// An accumulator that a fill of a constant set just before the op
// (ReductionInits.h) starts from that constant: its one load, at the top of
// each parallel iteration, becomes the constant and the fill goes.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/ReductionInits.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUREGISTERACCUMULATORS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// A load and a later store of the same element, both unconditional in
/// the loop body, at loop-invariant indices.
struct Accumulator {
  memref::LoadOp load;
  memref::StoreOp store;
};

/// Whether `op` touches memory only through loads and stores (or not at
/// all), so that the loads and stores are every access in the loop.
bool onlyLoadsAndStores(Operation *op) {
  if (isa<memref::LoadOp, memref::StoreOp>(op) || isMemoryEffectFree(op))
    return true;
  return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
         !isa<MemoryEffectOpInterface>(op);
}

SmallVector<Accumulator> findAccumulators(scf::ForOp loop) {
  SmallVector<Accumulator> found;
  bool simple = true;
  loop.getBody()->walk([&](Operation *op) {
    if (!onlyLoadsAndStores(op))
      simple = false;
  });
  if (!simple)
    return found;
  Block *body = loop.getBody();
  for (Operation &op : *body) {
    auto store = dyn_cast<memref::StoreOp>(op);
    if (!store || !llvm::all_of(store.getIndices(), [&](Value v) {
          return loop.isDefinedOutsideOfLoop(v);
        }))
      continue;
    Value memref = store.getMemRef();
    memref::LoadOp load;
    for (Operation &before : llvm::make_range(body->begin(), op.getIterator()))
      if (auto candidate = dyn_cast<memref::LoadOp>(before))
        if (candidate.getMemRef() == memref &&
            candidate.getIndices() == store.getIndices())
          load = candidate;
    if (!load)
      continue;
    // Nothing else in the loop reads or writes that buffer.
    Value root = msamp::viewedBuffer(memref);
    bool alone = true;
    loop.getBody()->walk([&](Operation *inner) {
      if (inner == load.getOperation() || inner == store.getOperation())
        return;
      for (Value operand : inner->getOperands())
        if (isa<BaseMemRefType>(operand.getType()) &&
            msamp::viewedBuffer(operand) == root)
          alone = false;
    });
    if (alone)
      found.push_back({load, store});
  }
  return found;
}

/// Carries the accumulators of `loop` as iter_args.
void promote(RewriterBase &rewriter, scf::ForOp loop) {
  moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
  SmallVector<Accumulator> accumulators = findAccumulators(loop);
  if (accumulators.empty())
    return;
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> inits;
  for (Accumulator &acc : accumulators)
    inits.push_back(rewriter.clone(*acc.load)->getResult(0));
  const unsigned firstNew = loop.getNumResults();
  FailureOr<LoopLikeOpInterface> replaced = loop.replaceWithAdditionalYields(
      rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
        SmallVector<Value> yields;
        for (Accumulator &acc : accumulators)
          yields.push_back(acc.store.getValueToStore());
        return yields;
      });
  auto newLoop = cast<scf::ForOp>(replaced->getOperation());
  rewriter.setInsertionPointAfter(newLoop);
  for (auto [k, acc] : llvm::enumerate(accumulators)) {
    rewriter.replaceOp(acc.load, newLoop.getRegionIterArgs()[firstNew + k]);
    memref::StoreOp::create(rewriter, acc.store.getLoc(),
                            newLoop.getResult(firstNew + k),
                            acc.store.getMemRef(), acc.store.getIndices());
    rewriter.eraseOp(acc.store);
  }
}

/// Replaces the one load of `buffer` in the loop nest `outermost`, when it
/// is at the top of each parallel iteration (before anything else there
/// names the buffer), by the constant `fill` writes, and erases the fill.
void startFromConstant(RewriterBase &rewriter, Operation *outermost,
                       Value buffer, linalg::FillOp fill) {
  auto parallel = dyn_cast<scf::ParallelOp>(outermost);
  if (!parallel)
    return;
  Value root = msamp::viewedBuffer(buffer);
  SmallVector<memref::LoadOp> loads;
  parallel->walk([&](memref::LoadOp load) {
    if (msamp::viewedBuffer(load.getMemRef()) == root)
      loads.push_back(load);
  });
  if (loads.size() != 1 || loads[0]->getParentOp() != parallel)
    return;
  for (Operation *prev = loads[0]->getPrevNode(); prev;
       prev = prev->getPrevNode())
    if (msamp::namesBuffer(prev, root))
      return;
  rewriter.setInsertionPoint(loads[0]);
  Value start = arith::ConstantOp::create(rewriter, loads[0].getLoc(),
                                          msamp::constantOf(fill));
  rewriter.replaceOp(loads[0], start);
  rewriter.eraseOp(fill);
}

struct RegisterAccumulatorsPass
    : msamp::impl::MSAMPGPURegisterAccumulatorsBase<RegisterAccumulatorsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> reductions;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumReductionLoops() > 0)
        reductions.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : reductions) {
      // Found before the loops go between the fill and the op.
      SmallVector<std::pair<Value, linalg::FillOp>> starts;
      for (OpOperand &init : op.getDpsInitsMutable())
        if (linalg::FillOp fill = msamp::constantInitFill(op, &init))
          starts.push_back({init.get(), fill});
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToParallelLoops(rewriter, op);
      if (failed(loops))
        continue; // left to convert-linalg-to-parallel-loops
      rewriter.eraseOp(op);
      if (loops->empty())
        continue;
      // Innermost first (a post-order walk): a promoted inner loop leaves
      // its load and store in the loop around it, which is promoted next.
      Operation *outermost = loops->front();
      for (Operation *loop : *loops)
        if (loop->isProperAncestor(outermost))
          outermost = loop;
      // One value per index (the lowering computes an output's index once
      // for its load and again for its store).
      DominanceInfo dominance;
      eliminateCommonSubExpressions(rewriter, dominance, outermost);
      SmallVector<scf::ForOp> forLoops;
      outermost->walk([&](scf::ForOp loop) { forLoops.push_back(loop); });
      for (scf::ForOp loop : forLoops)
        promote(rewriter, loop);
      for (auto [buffer, fill] : starts)
        startFromConstant(rewriter, outermost, buffer, fill);
    }
  }
};

} // namespace
