//===- FusePermutes.cpp - --msamp-gpu-fuse-permutes -----------------------===//
//
// Part of the msamp project.
//
// linalg-fuse-elementwise-ops fuses generics only: a named linalg.transpose
// next to an elementwise generic stays a kernel of its own, which reads its
// whole input and writes its whole result. In attention these are the
// heads' permutes, [batch, seq, heads, dh] <-> [batch, heads, seq, dh]
// (issue 23): the bias-adds of Q, K and V each write their result, which a
// transpose reads back and writes again for the batched GEMM, 25 MB three
// times over per layer for the LM.
//
// Here a transpose with an elementwise neighbour is generalized and fused
// into it (linalg::fuseElementwiseOps), so that the neighbour reads or
// writes through the permuted indexing map and the transpose's result (or
// input) is never a tensor of its own:
//
//   %q = %x + %b              [8, 1024, 12, 64]
//   %t = transpose(%q) [0, 2, 1, 3]            -> %t = %x + %b, read as
//                                                  (d0, d2, d1, d3)
//
//   - its producer: an all-parallel linalg.generic whose only use the
//     transpose is (its result in the other layout only);
//   - otherwise its consumers: when every use of the transpose's result is
//     an input of an elementwise linalg.generic, each reads the
//     transpose's input instead (a permute is a pure read: a copy per
//     consumer costs no work). Never a contraction: at this point the
//     GEMMs are generics still, and msamp-normalize-contractions would
//     materialize the permute again for the library call, once per copy.
//
// A transpose between two library calls (a GEMM's result permuted for the
// next batched GEMM) has no such neighbour and stays: cuBLASLt's strided
// batch has one batch stride, which a permuted [batch, heads] pair is not.
//
// Numbers: a permute moves values and computes nothing; the fused op
// computes the producer's or consumer's own ops in their order, so the
// results are bit for bit those of the unfused step (host-emulation.test).
// GPU only: on the CPU a transpose may feed a BLAS' transpose flag.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/FuseIntoConsumer.h"
#include "MSAMP/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUFUSEPERMUTES
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// An elementwise generic on tensors: all loops parallel.
bool isElementwise(linalg::GenericOp op) {
  return op.hasPureTensorSemantics() &&
         op.getNumParallelLoops() == op.getNumLoops();
}

/// Whether `transpose`'s producer may write its result permuted: an
/// elementwise generic with one result, read by the transpose only.
bool hasFusableProducer(linalg::TransposeOp transpose) {
  auto producer = transpose.getInput().getDefiningOp<linalg::GenericOp>();
  return producer && isElementwise(producer) &&
         producer->getNumResults() == 1 && producer->getResult(0).hasOneUse();
}

/// Whether `transpose`'s consumers may each read its input permuted: every
/// use an input of an elementwise generic, each consumer reading it once
/// (one fusion per consumer replaces that consumer). Not a contraction:
/// here the GEMMs are still generics, which msamp-normalize-contractions
/// makes library calls again by materializing their operands' permutes,
/// one per copy fused here.
bool hasFusableConsumers(linalg::TransposeOp transpose) {
  Value result = transpose->getResult(0);
  llvm::SmallPtrSet<Operation *, 4> consumers;
  return !result.use_empty() &&
         llvm::all_of(result.getUses(), [&](OpOperand &use) {
           auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
           return consumer && isElementwise(consumer) &&
                  consumer.isDpsInput(&use) &&
                  consumers.insert(consumer).second;
         });
}

/// Fuses the producer of `use` into its consumer and replaces the
/// consumer by the fused op; failure when upstream fusion refuses.
LogicalResult fuse(RewriterBase &rewriter, OpOperand &use) {
  Operation *consumer = use.getOwner();
  if (!linalg::areElementwiseOpsFusable(&use) ||
      failed(msamp::fuseIntoConsumer(rewriter, use)))
    return failure();
  rewriter.eraseOp(consumer);
  return success();
}

struct FusePermutesPass
    : msamp::impl::MSAMPGPUFusePermutesBase<FusePermutesPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::TransposeOp> transposes;
    getOperation().walk([&](linalg::TransposeOp op) {
      if (op.hasPureTensorSemantics())
        transposes.push_back(op);
    });
    // A fusion erases the transpose and its producer or consumers only,
    // never another transpose: the list stays valid.
    for (linalg::TransposeOp transpose : transposes) {
      FailureOr<bool> fused = false;
      if (hasFusableProducer(transpose)) {
        fused = fuseIntoProducer(rewriter, transpose);
        numIntoProducers += succeeded(fused) && *fused;
      } else if (hasFusableConsumers(transpose)) {
        fused = fuseIntoConsumers(rewriter, transpose);
        numIntoConsumers += succeeded(fused) && *fused;
      }
      if (failed(fused))
        return signalPassFailure();
    }
  }

  /// The transpose as a generic, at its place; its uses untouched.
  static linalg::GenericOp generalize(RewriterBase &rewriter,
                                      linalg::TransposeOp transpose) {
    rewriter.setInsertionPoint(transpose);
    auto copy = cast<linalg::TransposeOp>(rewriter.clone(*transpose));
    FailureOr<linalg::GenericOp> generic =
        linalg::generalizeNamedOp(rewriter, copy);
    assert(succeeded(generic) && "a transpose always generalizes");
    return *generic;
  }

  /// The producer writes the transpose's result through the permuted map;
  /// false when upstream fusion would refuse (the transpose stays).
  FailureOr<bool> fuseIntoProducer(RewriterBase &rewriter,
                                   linalg::TransposeOp transpose) {
    linalg::GenericOp generic = generalize(rewriter, transpose);
    OpOperand &input = *generic.getDpsInputOperand(0);
    if (!linalg::areElementwiseOpsFusable(&input)) {
      // The transpose stays named: the other passes know it as such.
      rewriter.eraseOp(generic);
      return false;
    }
    Operation *producer = input.get().getDefiningOp();
    rewriter.replaceOp(transpose, generic);
    if (failed(fuse(rewriter, input)))
      return producer->emitError("msamp-gpu-fuse-permutes: elementwise "
                                 "fusion failed after "
                                 "areElementwiseOpsFusable held");
    if (producer->use_empty())
      rewriter.eraseOp(producer);
    return true;
  }

  /// Each consumer reads the transpose's input through the permuted map;
  /// false when upstream fusion would refuse one (the transpose stays).
  FailureOr<bool> fuseIntoConsumers(RewriterBase &rewriter,
                                    linalg::TransposeOp transpose) {
    // Checked on a throwaway copy first, so that a refused use leaves the
    // transpose named and whole.
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : transpose->getResult(0).getUses())
      uses.push_back(&use);
    linalg::GenericOp probe = generalize(rewriter, transpose);
    bool fusable = llvm::all_of(uses, [&](OpOperand *use) {
      Operation *owner = use->getOwner();
      unsigned number = use->getOperandNumber();
      // areElementwiseOpsFusable looks at the operand's producer: point it
      // at the probe for the check, then back.
      rewriter.modifyOpInPlace(owner, [&] { use->set(probe->getResult(0)); });
      bool ok = linalg::areElementwiseOpsFusable(&owner->getOpOperand(number));
      rewriter.modifyOpInPlace(owner,
                               [&] { use->set(transpose->getResult(0)); });
      return ok;
    });
    rewriter.eraseOp(probe);
    if (!fusable)
      return false;
    for (OpOperand *use : uses) {
      linalg::GenericOp copy = generalize(rewriter, transpose);
      rewriter.modifyOpInPlace(use->getOwner(),
                               [&] { use->set(copy->getResult(0)); });
      if (failed(fuse(rewriter, *use)))
        return transpose.emitError("msamp-gpu-fuse-permutes: elementwise "
                                   "fusion failed after "
                                   "areElementwiseOpsFusable held");
      if (copy->use_empty())
        rewriter.eraseOp(copy);
    }
    rewriter.eraseOp(transpose);
    return true;
  }
};

} // namespace
