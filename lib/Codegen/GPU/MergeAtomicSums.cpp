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
// single-thread kernels, and its members be in one copy of a repeated
// block of the step (RepeatGroups.h: the same merges in every layer at
// every depth); its cost is the sum of the two (one launch).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/BufferAccesses.h"
#include "MSAMP/Codegen/GPU/CostModel.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/RepeatGroups.h"
#include "MSAMP/Codegen/GPU/SingleThreadKernels.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <vector>

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

/// `accesses` (a kernel's) without the atomic updates of `accumulators`.
BufferAccesses besidesAccumulators(BufferAccesses accesses,
                                   ArrayRef<Value> accumulators) {
  for (Value accumulator : accumulators) {
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

/// Kernels that become one, in program order, and what the merge checks of
/// them together: the union of their accesses (all of them, and those
/// besides the accumulators), their accumulators and captured memrefs, kept
/// as members join so that a group's checks do not walk its kernels again.
struct Group {
  SmallVector<AtomicSum> members;
  BufferAccesses accesses, rest;
  SmallVector<Value, 1> accumulators;
  llvm::SetVector<Value> memrefs;
  int64_t threads = 0;

  /// A group of `first`, whose accesses are `own`.
  Group(AtomicSum first, BufferAccesses own)
      : members{first}, accesses(std::move(own)),
        rest(besidesAccumulators(accesses, first.accumulators)),
        accumulators(first.accumulators), memrefs(capturedMemRefs(first.op)),
        threads(first.threads) {}

  /// The kernel the next one would merge into: the last member's place.
  scf::ParallelOp last() { return members.back().op; }

  /// Adds `sum`, whose accesses (`own`) canMerge collected.
  void add(AtomicSum sum, const BufferAccesses &own) {
    accesses.add(own);
    rest.add(besidesAccumulators(own, sum.accumulators));
    for (Value acc : sum.accumulators)
      if (!llvm::is_contained(accumulators, acc))
        accumulators.push_back(acc);
    rest = besidesAccumulators(std::move(rest), accumulators);
    memrefs.insert_range(capturedMemRefs(sum.op));
    threads = std::max(threads, sum.threads);
    members.push_back(sum);
  }
};

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
    // The block's atomic-sum kernels in order.
    SmallVector<AtomicSum> kernels;
    for (Operation &op : block)
      if (FailureOr<AtomicSum> sum = asAtomicSum(&op); succeeded(sum))
        kernels.push_back(*sum);
    // Each kernel (or the group it ended) moves down into the next one when
    // it can; each group then becomes one kernel at its last member's place.
    // A group stays in one copy of a repeated block (RepeatGroups.h).
    std::vector<Group> groups;
    BlockSegments repeats = repeatGroups(block);
    for (AtomicSum next : kernels) {
      BufferAccesses own = collectBufferAccesses(next.op);
      if (!groups.empty() &&
          repeats.of(groups.back().last()) == repeats.of(next.op) &&
          canMerge(groups.back(), next, own)) {
        groups.back().add(next, own);
        ++numMerged;
      } else {
        groups.emplace_back(next, std::move(own));
      }
    }
    for (Group &group : groups)
      if (group.members.size() > 1 && failed(merge(group)))
        return failure();
    return success();
  }

  /// Whether `later`, whose accesses are `laterAccesses`, may join
  /// `earlier`.
  bool canMerge(Group &earlier, AtomicSum later,
                const BufferAccesses &laterAccesses) {
    for (Value a : earlier.accumulators)
      for (Value b : later.accumulators)
        if (a != b && mayAlias(a, b))
          return false;
    auto readsAccumulator = [](const BufferAccesses &accesses,
                               ArrayRef<Value> accumulators) {
      return llvm::any_of(accesses.reads, [&](Value v) {
        return llvm::any_of(accumulators,
                            [&](Value acc) { return mayAlias(v, acc); });
      });
    };
    BufferAccesses laterRest =
        besidesAccumulators(laterAccesses, later.accumulators);
    if (dependsOn(laterRest, earlier.rest) ||
        readsAccumulator(laterRest, earlier.accumulators) ||
        readsAccumulator(earlier.rest, later.accumulators))
      return false;
    for (Operation *op = earlier.last()->getNextNode(); op != later.op;
         op = op->getNextNode()) {
      if (isMemoryEffectFree(op) && op->getNumRegions() == 0)
        continue;
      if (dependsOn(collectBufferAccesses(op), earlier.accesses))
        return false;
    }
    int64_t buffers = earlier.memrefs.size();
    for (Value v : capturedMemRefs(later.op))
      buffers += !earlier.memrefs.contains(v);
    return buffersFitKernelParameters(buffers);
  }

  /// One kernel at the last member's place: each member's body in order,
  /// guarded by its thread count where that is smaller than the group's.
  LogicalResult merge(Group &group) {
    // (Host emulation costs no kernel: then none has a cost.)
    bool costed = static_cast<bool>(
        gpucost::kernelCostOf(group.members.front().op.getLoc()));
    gpucost::OpCost cost;
    SmallVector<Location> locs;
    for (AtomicSum member : group.members) {
      DictionaryAttr memberCost = gpucost::kernelCostOf(member.op.getLoc());
      if (!memberCost != !costed)
        return member.op.emitError(
            "msamp-gpu-merge-atomic-sums: a kernel without its cost");
      if (memberCost) {
        cost.flops += cast<IntegerAttr>(memberCost.get("flops")).getInt();
        cost.bytes += cast<IntegerAttr>(memberCost.get("bytes")).getInt();
      }
      // Each member's own locations, under the merged cost only.
      auto fused = dyn_cast<FusedLoc>(member.op.getLoc());
      if (fused && fused.getMetadata() &&
          isa<DictionaryAttr>(fused.getMetadata()))
        llvm::append_range(locs, fused.getLocations());
      else
        locs.push_back(member.op.getLoc());
    }

    scf::ParallelOp last = group.last();
    OpBuilder b(last);
    Location loc = last.getLoc();
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto parallel = scf::ParallelOp::create(b, loc, ValueRange{index(0)},
                                            ValueRange{index(group.threads)},
                                            ValueRange{index(1)});
    Value thread = parallel.getInductionVars()[0];
    Block *body = parallel.getBody();
    for (AtomicSum member : group.members) {
      b.setInsertionPoint(body->getTerminator());
      Block *into = body;
      if (member.threads < group.threads) {
        Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              thread, index(member.threads));
        auto guard = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
        into = guard.thenBlock();
      }
      // Moved, not cloned: each body once, whatever the group's size.
      Block *from = member.op.getBody();
      from->getArgument(0).replaceAllUsesWith(thread);
      Operation *terminator = into->getTerminator();
      for (Operation &op :
           llvm::make_early_inc_range(from->without_terminator()))
        op.moveBefore(terminator);
    }
    MLIRContext *context = b.getContext();
    parallel->setLoc(costed
                         ? FusedLoc::get(context, locs,
                                         gpucost::kernelCostAttr(
                                             context, "linalg.generic", cost))
                         : FusedLoc::get(context, locs));
    for (AtomicSum member : group.members)
      member.op->erase();
    return success();
  }
};

} // namespace
