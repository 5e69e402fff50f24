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

#include "MSAMP/Codegen/GPU/MergeGenerics.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/RowForm.h"
#include "MSAMP/Conversion/AsGeneric.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseMap.h"

#include <set>

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

struct FuseSiblingReductionsPass
    : msamp::impl::MSAMPGPUFuseSiblingReductionsBase<
          FuseSiblingReductionsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::LinalgOp> reductions;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isRowReduction(op))
        reductions.push_back(op);
    });
    DominanceInfo dominance(getOperation());
    // Only reductions that read a common value can merge (shareAnInput):
    // each value's readers are indexed, so each op is tried against the
    // later ones reading one of its inputs, not against every later one
    // (all pairs grew with the square of depth: issue 19).
    llvm::DenseMap<Value, SmallVector<unsigned>> readers;
    auto addReader = [&](linalg::LinalgOp op, unsigned index) {
      for (Value in : op.getDpsInputs()) {
        SmallVector<unsigned> &list = readers[in];
        if (list.empty() || list.back() != index)
          list.push_back(index);
      }
    };
    for (auto [index, op] : llvm::enumerate(reductions))
      addReader(op, index);
    SmallVector<bool> mergedAway(reductions.size(), false);
    // Pairs in program order, the first that merges first. The merged op
    // takes a's place and a's turn, and tries the later ones again from
    // the start: a pair with an earlier op cannot merge now either (it
    // failed with both a and b), so this is the order of rescanning the
    // whole function after every merge, without the rescans (they made
    // the pass cubic in depth: issue 19).
    for (unsigned i = 0; i < reductions.size(); ++i) {
      if (mergedAway[i])
        continue;
      for (bool merged = true; merged;) {
        merged = false;
        linalg::LinalgOp a = reductions[i];
        std::set<unsigned> later;
        for (Value in : a.getDpsInputs())
          for (unsigned j : readers[in])
            if (j > i && !mergedAway[j])
              later.insert(j);
        for (unsigned j : later) {
          linalg::LinalgOp b = reductions[j];
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
            return; // (linalg.reduce always generalizes)
          rewriter.setInsertionPoint(*ga);
          reductions[i] = msamp::mergeGenerics(rewriter, *ga, *gb);
          mergedAway[j] = true;
          addReader(reductions[i], i);
          ++numMerged;
          merged = true; // the merged op against every later one again
          break;
        }
      }
    }
  }
};

} // namespace
