//===- FuseSiblingReductions.cpp - --msamp-gpu-fuse-sibling-reductions ----===//
//
// Part of the msamp project.
//
// Two row reductions over the same rows of the same tensor are two kernels
// that each read it whole. Cross-entropy over the vocabulary reads the
// [tokens, vocabulary] logits (1.65 GB f32 for the LM) for the row
// max and again for the target's logit (a one-hot sum):
//
//   %max = generic [par, red] ins(%logits)           max over the row
//   %sum = generic [par, red] ins(%logits, %max)     sum of exp(x - max)
//   %tgt = generic [par, red] ins(%logits, %ids)     x[target]
//
// %max and %tgt do not depend on each other: here they become one generic
// with two outputs, which reads the logits once (msamp-gpu-row-reductions
// then gives it one warp or block per row accumulating both; on the loop
// path one thread accumulates both):
//
//   %max, %tgt = generic [par, red] ins(%logits, %ids) outs(%m0, %t0)
//
// Which reductions: row reductions on tensors ([parallel..., reduction...],
// at least one of each, every input read through a projected permutation
// whose reduction dimensions are its innermost, in loop order: the form of
// msamp-gpu-row-reductions; column and full reductions are split by other
// passes on both targets and are left alone) with the same loop ranges and
// at least one input in common (the same value through the same map). The
// later one moves up to the earlier one when all its operands are defined
// before it (then it cannot depend on the earlier one's result).
//
// Numbers: each output keeps its body and accumulates the same terms in the
// same order; the merged body only places the two side by side. Bit for
// bit the results of the separate reductions, on the loop path (host
// emulation) and in the warp or block per row (each output's own shuffle
// tree, as before).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/RowForm.h"
#include "MSAMP/Conversion/AsGeneric.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUFUSESIBLINGREDUCTIONS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// Whether `op` is a row reduction this pass merges (see the file comment).
bool isRowReduction(linalg::LinalgOp op) {
  if (!isa<linalg::GenericOp, linalg::ReduceOp>(op) ||
      !op.hasPureTensorSemantics())
    return false;
  unsigned numLoops = op.getNumLoops(), numParallel = op.getNumParallelLoops();
  if (numParallel == 0 || numParallel == numLoops)
    return false;
  if (!msamp::hasParallelThenReductionLoops(op, numParallel))
    return false;
  if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return false;
  // f32 accumulators, as msamp-gpu-row-reductions takes them: a merged op
  // with one it cannot take would lose the warp per row for both.
  for (Value init : op.getDpsInits())
    if (!cast<ShapedType>(init.getType()).getElementType().isF32())
      return false;
  return llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *in) {
    return succeeded(msamp::innermostReductionDims(
        op.getMatchingIndexingMap(in), numParallel));
  });
}

/// Whether `a` and `b` read a common input through the same map.
bool shareAnInput(linalg::LinalgOp a, linalg::LinalgOp b) {
  for (OpOperand *x : a.getDpsInputOperands())
    for (OpOperand *y : b.getDpsInputOperands())
      if (x->get() == y->get() &&
          a.getMatchingIndexingMap(x) == b.getMatchingIndexingMap(y))
        return true;
  return false;
}

/// `a` and the later `b` as one generic at `a`'s place.
void merge(IRRewriter &rewriter, linalg::GenericOp a, linalg::GenericOp b) {
  SmallVector<Value> inputs, inits;
  SmallVector<AffineMap> inputMaps, initMaps;
  // b's inputs that a reads already (same value, same map) are a's.
  SmallVector<int> bInputToA;
  for (OpOperand *in : a.getDpsInputOperands()) {
    inputs.push_back(in->get());
    inputMaps.push_back(a.getMatchingIndexingMap(in));
  }
  for (OpOperand *in : b.getDpsInputOperands()) {
    AffineMap map = b.getMatchingIndexingMap(in);
    int same = -1;
    for (unsigned i = 0; i < a.getNumDpsInputs(); ++i)
      if (inputs[i] == in->get() && inputMaps[i] == map)
        same = static_cast<int>(i);
    bInputToA.push_back(same);
    if (same < 0) {
      inputs.push_back(in->get());
      inputMaps.push_back(map);
    }
  }
  for (linalg::GenericOp op : {a, b})
    for (OpOperand &init : op.getDpsInitsMutable()) {
      inits.push_back(init.get());
      initMaps.push_back(op.getMatchingIndexingMap(&init));
    }
  SmallVector<AffineMap> maps(inputMaps);
  maps.append(initMaps);

  rewriter.setInsertionPoint(a);
  auto merged = linalg::GenericOp::create(
      rewriter, a.getLoc(), ValueRange(inits).getTypes(), inputs, inits, maps,
      a.getIteratorTypesArray());
  Block *body = rewriter.createBlock(&merged.getRegion());
  for (Value v : inputs)
    body->addArgument(cast<ShapedType>(v.getType()).getElementType(),
                      a.getLoc());
  for (Value v : inits)
    body->addArgument(cast<ShapedType>(v.getType()).getElementType(),
                      a.getLoc());
  const unsigned numInputs = inputs.size();
  IRMapping mapA, mapB;
  for (unsigned i = 0; i < a.getNumDpsInputs(); ++i)
    mapA.map(a.getBody()->getArgument(i), body->getArgument(i));
  unsigned next = a.getNumDpsInputs();
  for (unsigned i = 0; i < b.getNumDpsInputs(); ++i)
    mapB.map(b.getBody()->getArgument(i),
             body->getArgument(bInputToA[i] >= 0 ? bInputToA[i] : next++));
  for (unsigned i = 0; i < a.getNumDpsInits(); ++i)
    mapA.map(a.getBody()->getArgument(a.getNumDpsInputs() + i),
             body->getArgument(numInputs + i));
  for (unsigned i = 0; i < b.getNumDpsInits(); ++i)
    mapB.map(b.getBody()->getArgument(b.getNumDpsInputs() + i),
             body->getArgument(numInputs + a.getNumDpsInits() + i));
  SmallVector<Value> yields;
  rewriter.setInsertionPointToEnd(body);
  for (auto [op, mapping] : {std::pair{a, &mapA}, std::pair{b, &mapB}}) {
    for (Operation &inner : op.getBody()->without_terminator())
      rewriter.clone(inner, *mapping);
    for (Value v : op.getBody()->getTerminator()->getOperands())
      yields.push_back(mapping->lookupOrDefault(v));
  }
  linalg::YieldOp::create(rewriter, a.getLoc(), yields);
  rewriter.replaceOp(a, merged->getResults().take_front(a.getNumResults()));
  rewriter.replaceOp(b, merged->getResults().drop_front(a.getNumResults()));
}

struct FuseSiblingReductionsPass
    : msamp::impl::MSAMPGPUFuseSiblingReductionsBase<
          FuseSiblingReductionsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Each merge removes one op; the list is collected again after it.
    while (mergeOne(rewriter)) {
    }
  }

  bool mergeOne(IRRewriter &rewriter) {
    SmallVector<linalg::LinalgOp> reductions;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isRowReduction(op))
        reductions.push_back(op);
    });
    DominanceInfo dominance(getOperation());
    for (size_t i = 0; i < reductions.size(); ++i) {
      for (size_t j = i + 1; j < reductions.size(); ++j) {
        linalg::LinalgOp a = reductions[i], b = reductions[j];
        if (a->getBlock() != b->getBlock() ||
            a.getStaticLoopRanges() != b.getStaticLoopRanges() ||
            !shareAnInput(a, b))
          continue;
        // b's operands, and the values its body captures, defined before
        // a: b moves up without depending on a.
        llvm::SetVector<Value> used(b->getOperands().begin(),
                                    b->getOperands().end());
        getUsedValuesDefinedAbove(b->getRegion(0), used);
        if (!llvm::all_of(used, [&](Value v) {
              return dominance.properlyDominates(v, a);
            }))
          continue;
        FailureOr<linalg::GenericOp> ga = msamp::asGeneric(rewriter, a);
        FailureOr<linalg::GenericOp> gb = msamp::asGeneric(rewriter, b);
        if (failed(ga) || failed(gb))
          return false; // (linalg.reduce always generalizes)
        merge(rewriter, *ga, *gb);
        ++numMerged;
        return true;
      }
    }
    return false;
  }
};

} // namespace
