//===- MergeAtomicSums.cpp - --msamp-gpu-merge-atomic-sums ----------------===//
//
// Part of the msamp project.
//
// The gradient norm is a chain of full reductions, one per parameter, each
// adding the sum of squares of one gradient to one f64 accumulator (the
// CPU's order of parameters). msamp-gpu-atomic-full-reductions makes each
// a kernel of min(N, threads) threads, thread t summing the elements t,
// t + T, ... and adding its partial sum to the accumulator with an atomic
// add: 16 kernels per layer of the LM, most of them over a 768-
// element vector. Their order is already only that of atomic adds, which
// commute: here consecutive ones become one kernel of max(T) threads in
// which thread t runs each former kernel's body (guarded by t < T_k where
// T_k is smaller), with its own loop, stride T_k and atomic add:
//
//   scf.parallel (%t) = (0) to (T1)          scf.parallel (%t) = (0) to (T2)
//     p = sum_{i = t; i < N1; i += T1} g(x1[i])   (T2 >= T1)
//     atomic_add acc, p                   ->    if t < T1: p = ..x1..; add
//   scf.parallel (%t) = (0) to (T2)               p' = ..x2..; atomic_add
//     p' = ... x2 ...; atomic_add acc, p'
//
// Each thread's partial sums are those of the separate kernels, and so is
// the number of atomic adds; only the order in which the adds reach the
// accumulator changes, which the atomics never fixed (on the host
// emulation's sequential threads: thread by thread instead of kernel by
// kernel, a reassociation of the f64 sum like the partial sums
// themselves).
//
// Which kernels: the form msamp-gpu-atomic-full-reductions writes (a 1-d
// scf.parallel from 0 to a constant T, step 1, whose body writes nothing
// but one memref.atomic_rmw addf of a value it computes (its loops and
// loads: the partial sum) into a 0-d buffer that nothing else in the
// kernel names). The earlier kernel moves down to the later one past ops that
// do not conflict with it (BufferAccesses.h; the dequantize calls that write
// the next gradient do not), the two kernels themselves conflict only
// through their accumulators, which must be one buffer or two that do not
// alias. The merged kernel must fit the parameter budget of the
// single-thread kernels; its cost is the sum of the two (one launch).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/BufferAccesses.h"
#include "MSAMP/Codegen/GPU/CostModel.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/SingleThreadKernels.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUMERGEATOMICSUMS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

/// An atomic-sum kernel, or one this pass merged: its thread count and
/// accumulators (root buffers).
struct AtomicSum {
  scf::ParallelOp op;
  int64_t threads = 0;
  SmallVector<Value, 1> accumulators;
};

/// `op` as an atomic-sum kernel (see the file comment), or failure.
FailureOr<AtomicSum> asAtomicSum(Operation *op) {
  auto parallel = dyn_cast<scf::ParallelOp>(op);
  if (!parallel || parallel.getNumLoops() != 1 ||
      parallel.getNumReductions() != 0 ||
      !matchPattern(parallel.getLowerBound()[0], m_Zero()) ||
      !matchPattern(parallel.getStep()[0], m_One()))
    return failure();
  APInt threads;
  Value count = parallel.getUpperBound()[0];
  if (!matchPattern(count, m_ConstantInt(&threads)))
    return failure();
  // One atomic add of a value the body computes; everything else reads
  // memory at most (the partial sum's loops and loads).
  memref::AtomicRMWOp atomic;
  for (Operation &inner : parallel.getBody()->without_terminator()) {
    if (auto a = dyn_cast<memref::AtomicRMWOp>(inner); a && !atomic) {
      atomic = a;
      continue;
    }
    WalkResult writes = inner.walk([](Operation *nested) {
      if (nested->getNumRegions() != 0
              ? isa<scf::ForOp, scf::IfOp>(nested)
              : isa<memref::LoadOp>(nested) || isMemoryEffectFree(nested))
        return WalkResult::advance();
      return WalkResult::interrupt();
    });
    if (writes.wasInterrupted())
      return failure();
  }
  if (!atomic || atomic.getKind() != arith::AtomicRMWKind::addf ||
      atomic.getMemRefType().getRank() != 0 ||
      atomic.getValue().getParentRegion() != &parallel.getRegion())
    return failure();
  Value accumulator = rootBuffer(atomic.getMemref());
  // Nothing else in the kernel names the accumulator.
  bool named = false;
  parallel.getBody()->walk([&](Operation *nested) {
    if (nested == atomic)
      return;
    for (Value operand : nested->getOperands())
      if (isa<BaseMemRefType>(operand.getType()) &&
          mayAlias(rootBuffer(operand), accumulator))
        named = true;
  });
  if (named)
    return failure();
  return AtomicSum{parallel, threads.getSExtValue(), {accumulator}};
}

/// The kernel's accesses without its atomic updates of its accumulator.
BufferAccesses accessesBesidesAccumulator(AtomicSum sum) {
  BufferAccesses accesses = collectBufferAccesses(sum.op);
  for (Value accumulator : sum.accumulators) {
    accesses.reads.erase(accumulator);
    accesses.writes.erase(accumulator);
  }
  return accesses;
}

/// The memref values the kernel captures.
llvm::SetVector<Value> capturedMemRefs(Operation *op) {
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(op->getRegion(0), used);
  llvm::SetVector<Value> memrefs;
  for (Value v : used)
    if (isa<MemRefType>(v.getType()))
      memrefs.insert(v);
  return memrefs;
}

struct MergeAtomicSumsPass
    : msamp::impl::MSAMPGPUMergeAtomicSumsBase<MergeAtomicSumsPass> {
  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      if (failed(mergeInBlock(*block)))
        return signalPassFailure();
  }

  LogicalResult mergeInBlock(Block &block) {
    // The block's atomic-sum kernels in order; a merged kernel replaces the
    // later of its two (its body is no longer the recognized form).
    SmallVector<AtomicSum> kernels;
    for (Operation &op : block)
      if (FailureOr<AtomicSum> sum = asAtomicSum(&op); succeeded(sum))
        kernels.push_back(*sum);
    // Each kernel moves down into the next one when it can.
    for (size_t i = 0; i + 1 < kernels.size(); ++i) {
      if (!canMerge(kernels[i], kernels[i + 1]))
        continue;
      FailureOr<AtomicSum> merged = merge(kernels[i], kernels[i + 1]);
      if (failed(merged))
        return failure();
      kernels[i + 1] = *merged;
      ++numMerged;
    }
    return success();
  }

  bool canMerge(AtomicSum earlier, AtomicSum later) {
    for (Value a : earlier.accumulators)
      for (Value b : later.accumulators)
        if (a != b && mayAlias(a, b))
          return false;
    auto readsAccumulator = [](const BufferAccesses &accesses,
                               const AtomicSum &sum) {
      return llvm::any_of(accesses.reads, [&](Value v) {
        return llvm::any_of(sum.accumulators,
                            [&](Value acc) { return mayAlias(v, acc); });
      });
    };
    BufferAccesses own = collectBufferAccesses(earlier.op);
    BufferAccesses ownRest = accessesBesidesAccumulator(earlier);
    BufferAccesses laterRest = accessesBesidesAccumulator(later);
    if (dependsOn(laterRest, ownRest) || readsAccumulator(laterRest, earlier) ||
        readsAccumulator(ownRest, later))
      return false;
    for (Operation *op = earlier.op->getNextNode(); op != later.op;
         op = op->getNextNode()) {
      if (isMemoryEffectFree(op) && op->getNumRegions() == 0)
        continue;
      if (dependsOn(collectBufferAccesses(op), own))
        return false;
    }
    llvm::SetVector<Value> memrefs = capturedMemRefs(earlier.op);
    memrefs.insert_range(capturedMemRefs(later.op));
    int64_t bytes = 0;
    for (Value v : memrefs)
      bytes += kernelParamBytes(cast<MemRefType>(v.getType()));
    return bytes <= kMaxSingleThreadParamBytes;
  }

  /// One kernel at the later one's place: the earlier one's body, then the
  /// later one's, each guarded by its thread count where that is smaller.
  FailureOr<AtomicSum> merge(AtomicSum earlier, AtomicSum later) {
    DictionaryAttr costA = gpucost::kernelCostOf(earlier.op.getLoc());
    DictionaryAttr costB = gpucost::kernelCostOf(later.op.getLoc());
    // (Host emulation costs no kernel: then neither has a cost.)
    if (!costA != !costB)
      return earlier.op.emitError(
          "msamp-gpu-merge-atomic-sums: a kernel without its cost");
    auto intOf = [](DictionaryAttr cost, StringRef name) {
      return cast<IntegerAttr>(cost.get(name)).getInt();
    };
    gpucost::OpCost cost;
    if (costA) {
      cost.flops = intOf(costA, "flops") + intOf(costB, "flops");
      cost.bytes = intOf(costA, "bytes") + intOf(costB, "bytes");
    }

    OpBuilder b(later.op);
    Location loc = later.op.getLoc();
    int64_t threads = std::max(earlier.threads, later.threads);
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto parallel = scf::ParallelOp::create(b, loc, ValueRange{index(0)},
                                            ValueRange{index(threads)},
                                            ValueRange{index(1)});
    Value thread = parallel.getInductionVars()[0];
    Block *body = parallel.getBody();
    for (AtomicSum *part : {&earlier, &later}) {
      b.setInsertionPoint(body->getTerminator());
      Block *into = body;
      if (part->threads < threads) {
        Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              thread, index(part->threads));
        auto guard = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
        into = guard.thenBlock();
      }
      IRMapping mapping;
      mapping.map(part->op.getInductionVars()[0], thread);
      Block *from = part->op.getBody();
      OpBuilder inner = OpBuilder::atBlockTerminator(into);
      for (Operation &op : from->without_terminator())
        inner.clone(op, mapping);
    }
    // The two kernels' own locations, under the merged cost only.
    SmallVector<Location> locs;
    for (Location partLoc : {earlier.op.getLoc(), later.op.getLoc()}) {
      auto fused = dyn_cast<FusedLoc>(partLoc);
      if (fused && fused.getMetadata() &&
          isa<DictionaryAttr>(fused.getMetadata()))
        llvm::append_range(locs, fused.getLocations());
      else
        locs.push_back(partLoc);
    }
    parallel->setLoc(
        costA ? FusedLoc::get(b.getContext(), locs,
                              gpucost::kernelCostAttr(b.getContext(),
                                                      "linalg.generic", cost))
              : FusedLoc::get(b.getContext(), locs));
    earlier.op->erase();
    later.op->erase();
    AtomicSum merged{parallel, threads, earlier.accumulators};
    for (Value acc : later.accumulators)
      if (!llvm::is_contained(merged.accumulators, acc))
        merged.accumulators.push_back(acc);
    return merged;
  }
};

} // namespace
