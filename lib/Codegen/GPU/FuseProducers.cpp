//===- FuseProducers.cpp - --msamp-gpu-fuse-producers ---------------------===//
//
// Part of the msamp project.
//
// linalg-fuse-elementwise-ops fuses an elementwise producer into its
// consumer only when the consumer is its one use and a linalg.generic. A
// producer with several uses, or read by a linalg.reduce, stays a kernel of its
// own that writes its whole result, which each consumer reads back. On the GPU
// that is the largest traffic of the step: softmax's exp(s - max) over the
// [batch x heads, seq, seq] scores is read by the row sum and by the division,
// its backward's dP * P is written for one row sum, each 403 MB per layer for
// the LM.
//
// Here such a producer is recomputed in every consumer instead: each use
// gets its own copy of the producer, which upstream elementwise fusion
// (linalg::fuseElementwiseOps) then folds into that consumer, reductions
// included (linalg.reduce is taken as its generic). The producer's result
// is then never written:
//
//   %e = exp(%s - %m)           (parallel)          %d = sum(exp(%s - %m))
//   %d = sum(%e)                (row reduction)  -> %p = exp(%s - %m) / %d
//   %p = %e / %d                (parallel)
//
// A producer is fused only when every use can take it and when that moves
// fewer bytes, counted as the cost report counts a kernel (each tensor
// read once, the result written once):
//
//   before: the producer reads its inputs I and writes O; each of the n
//           consumers reads O;
//   after:  each consumer reads the inputs of I it did not read already;
//
// and only into a consumer that indexes the producer's result with a
// permutation of all its loops, so each consumer computes each producer
// element once (never a broadcast into a larger loop nest, such as a
// one-hot reduction or a contraction, whose work it would multiply) --
// except for a producer of at most four arith ops or square roots
// (kMaxBroadcastOps): the finishing arithmetic of a row statistic, which
// the elementwise ops and row reductions that broadcast it over the row
// recompute per element (issue 23: LayerNorm's mean and rstd, two
// launches per LayerNorm, which its normalization and its backward's four
// kernels read):
//
//   %mean = %sum * 1/n          [rows]
//   %y = (%x - %mean) * ...     [rows, n]   -> %y = (%x - %sum * 1/n) * ...
//
// Numbers: the recomputed ops are the producer's own, in the same order on
// the same operands, so each consumer sees the values the producer wrote
// (host emulation and the CPU agree bit for bit). Only on the GPU may
// NVPTX now contract a multiply in the producer with an add of its
// consumer into one fma (its default fp contraction), as it already does
// within a kernel.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/FuseIntoConsumer.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/RowForm.h"
#include "MSAMP/Conversion/AsGeneric.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <set>

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUFUSEPRODUCERS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// Bytes of a statically shaped tensor; 0 for anything else (a scalar
/// operand is not traffic the model counts).
int64_t tensorBytes(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return 0;
  return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
}

/// A producer this pass may recompute: an all-parallel generic on tensors
/// with one result, written through a permutation, whose body does not
/// read that result's init.
bool isRecomputable(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumResults() != 1 || op.getNumParallelLoops() != op.getNumLoops() ||
      op.getNumLoops() == 0)
    return false;
  OpOperand *init = op.getDpsInitOperand(0);
  return op.getMatchingIndexingMap(init).isPermutation() &&
         !op.payloadUsesValueFromOperand(init);
}

/// The most ops (besides the yield) of a producer that a consumer may
/// recompute through a broadcast, once per element of its larger loop nest:
/// the finishing arithmetic of a row statistic (LayerNorm's mean = sum *
/// 1/n; its rstd = 1 / sqrt(var * 1/n + eps), four ops), a few FLOPs per
/// element of a memory-bound kernel, against a launch of its own and its
/// result written and read back.
constexpr unsigned kMaxBroadcastOps = 4;

/// Whether consumers may recompute `producer` through a broadcast: at
/// most kMaxBroadcastOps ops, each arith or a square root (no exp, log or
/// tanh, whose cost per element a broadcast would multiply).
bool isCheapToBroadcast(linalg::GenericOp producer) {
  unsigned numOps = 0;
  for (Operation &op : producer.getBody()->without_terminator()) {
    if (!isa<arith::ArithDialect>(op.getDialect()) &&
        !isa<math::SqrtOp, math::RsqrtOp>(op))
      return false;
    ++numOps;
  }
  return numOps <= kMaxBroadcastOps;
}

/// Whether `use` may take the producer: an input of a linalg.generic or
/// linalg.reduce on tensors, indexed by a permutation of all its loops or,
/// for a producer that is cheap to recompute (isCheapToBroadcast), by a
/// broadcast (a projected permutation); of a reduction, only a row
/// reduction ([parallel..., reduction...], at least one of each) reading
/// the producer in loop order, or through a broadcast of its parallel
/// loops when another input is read in loop order (one value per row, as
/// LayerNorm's variance reads its mean; never a contraction, whose
/// operands each miss a loop: the GEMM would be lost and its work
/// multiplied). A column or full reduction is split by later passes on
/// both targets alike (msamp-split-column-reductions,
/// msamp-gpu-atomic-full-reductions) only while its form is theirs, and
/// that split fixes its summation order: fusing there would leave the GPU
/// summing in another order than the CPU.
bool isFusableUse(OpOperand &use, bool broadcastOk) {
  auto consumer = dyn_cast<linalg::LinalgOp>(use.getOwner());
  if (!consumer || !isa<linalg::GenericOp, linalg::ReduceOp>(consumer) ||
      !consumer.hasPureTensorSemantics() || !consumer.isDpsInput(&use))
    return false;
  AffineMap map = consumer.getMatchingIndexingMap(&use);
  bool broadcast = !map.isPermutation();
  if (broadcast && !(broadcastOk && map.isProjectedPermutation()))
    return false;
  unsigned numParallel = consumer.getNumParallelLoops();
  if (numParallel == consumer.getNumLoops())
    return true;
  if (numParallel == 0 ||
      !msamp::hasParallelThenReductionLoops(consumer, numParallel))
    return false;
  if (!broadcast)
    return map.isIdentity();
  for (unsigned r = 0; r < map.getNumResults(); ++r)
    if (map.getDimPosition(r) >= numParallel)
      return false;
  return llvm::any_of(consumer.getDpsInputOperands(), [&](OpOperand *in) {
    return consumer.getMatchingIndexingMap(in).isIdentity();
  });
}

/// Bytes saved by recomputing `producer` in each of its uses (negative:
/// more traffic).
int64_t bytesSaved(linalg::GenericOp producer) {
  Value result = producer->getResult(0);
  int64_t saved = tensorBytes(result); // no longer written
  llvm::SmallPtrSet<Value, 4> inputs;
  for (Value in : producer.getDpsInputs())
    if (inputs.insert(in).second)
      saved += tensorBytes(in); // the producer's own reads
  llvm::SmallPtrSet<Operation *, 4> consumers;
  for (OpOperand &use : result.getUses()) {
    if (!consumers.insert(use.getOwner()).second)
      continue; // one consumer reads a tensor once
    saved += tensorBytes(result);
    auto consumer = cast<linalg::LinalgOp>(use.getOwner());
    llvm::SmallPtrSet<Value, 4> read;
    for (Value in : consumer.getDpsInputs())
      read.insert(in);
    for (Value in : inputs)
      if (!read.contains(in))
        saved -= tensorBytes(in);
  }
  return saved;
}

/// The pass's order of work, kept exactly as "fuse the first fusable
/// producer in program order, then look again from the start", without
/// looking at every op again after each fusion (that walk made the pass
/// quadratic in depth: issue 19, 0.30 s at 24 layers against 0.04 at 12).
///
/// An examination that fuses nothing changes nothing a later examination of
/// the same producer depends on (its uses, their consumers and their
/// inputs), so a producer found unfusable stays so until one of those
/// changes, and only two things change them:
///  - a fusion replaces the consumers of the producer by fused ops: the
///    fused ops are new candidates, and the producers of their inputs have
///    new consumers;
///  - an examination that generalizes a linalg.reduce consumer and then
///    declines: the producers of that generic's inputs have a new consumer.
/// Each op has a key in program order (a replacement takes the key of the
/// op it replaces, at its place). `pending` holds what the current scan
/// still has to examine, `dirty` what changed behind the scan and waits for
/// the next restart, which is the next fusion.
class FusionWorklist {
public:
  explicit FusionWorklist(Operation *root) {
    // The walk of the original pass, which looked again after each fusion.
    root->walk([&](linalg::LinalgOp op) {
      keys[op] = nextKey++;
      if (isCandidate(op))
        pending.insert({keys[op], op});
    });
  }

  /// The first op to examine, removed from the list; null when done.
  Operation *pop() {
    if (pending.empty())
      return nullptr;
    auto first = pending.begin();
    Operation *op = first->second;
    current = first->first;
    pending.erase(first);
    return op;
  }

  /// `replacement` stands where `original` stood (before it is erased).
  /// Every linalg op has a key (the walk, or an earlier replacement); one
  /// without (none today) leaves its replacement unordered, never examined.
  void replace(Operation *original, Operation *replacement) {
    auto it = keys.find(original);
    assert(it != keys.end() && "replacing an op without a key");
    if (it == keys.end())
      return;
    uint64_t key = it->second;
    forget(original);
    keys[replacement] = key;
  }

  /// `op` is about to be erased.
  void forget(Operation *op) {
    auto it = keys.find(op);
    if (it == keys.end())
      return;
    pending.erase({it->second, op});
    dirty.erase({it->second, op});
    keys.erase(it);
  }

  /// `op` may have become fusable: examined again in this scan when it
  /// lies ahead of it, else at the next restart.
  void touch(Operation *op) {
    auto it = keys.find(op);
    if (it == keys.end() || !isCandidate(op))
      return;
    (it->second > current ? pending : dirty).insert({it->second, op});
  }

  /// A fusion: the next scan starts from the beginning, with what changed.
  void restart() {
    pending.insert(dirty.begin(), dirty.end());
    dirty.clear();
    current = 0;
  }

  /// The producers of `op`'s inputs, touched.
  void touchProducers(Operation *op) {
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        touch(producer);
  }

private:
  static bool isCandidate(Operation *op) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    // One use too: upstream fusion takes no linalg.reduce consumer.
    return generic && isRecomputable(generic) &&
           !generic->getResult(0).use_empty();
  }

  using Entry = std::pair<uint64_t, Operation *>;
  llvm::DenseMap<Operation *, uint64_t> keys;
  std::set<Entry> pending, dirty;
  uint64_t nextKey = 1;
  /// The key of the op being examined (0: before the first).
  uint64_t current = 0;
};

struct FuseProducersPass
    : msamp::impl::MSAMPGPUFuseProducersBase<FuseProducersPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    FusionWorklist worklist(getOperation());
    while (Operation *producer = worklist.pop()) {
      FailureOr<bool> fused =
          fuseIntoUses(rewriter, cast<linalg::GenericOp>(producer), worklist);
      if (failed(fused))
        return signalPassFailure();
      if (*fused)
        worklist.restart();
    }
  }

  /// Recompute `producer` in each of its uses; false when it is left as it
  /// is.
  FailureOr<bool> fuseIntoUses(IRRewriter &rewriter, linalg::GenericOp producer,
                               FusionWorklist &worklist) {
    Value result = producer->getResult(0);
    bool broadcastOk = isCheapToBroadcast(producer);
    if (!llvm::all_of(
            result.getUses(),
            [&](OpOperand &use) { return isFusableUse(use, broadcastOk); }) ||
        bytesSaved(producer) <= 0)
      return false;
    // linalg.reduce consumers as generics (fusion takes generics only).
    SmallVector<linalg::LinalgOp> reduces;
    for (Operation *user : result.getUsers())
      if (isa<linalg::ReduceOp>(user) &&
          !llvm::is_contained(reduces, cast<linalg::LinalgOp>(user)))
        reduces.push_back(cast<linalg::LinalgOp>(user));
    // (asGeneric replaces each; one it cannot take stays a reduce, which
    // areElementwiseOpsFusable then refuses.)
    SmallVector<Operation *> generalized;
    for (linalg::LinalgOp reduce : reduces) {
      Operation *original = reduce.getOperation();
      FailureOr<linalg::GenericOp> generic = msamp::asGeneric(rewriter, reduce);
      if (failed(generic))
        continue;
      worklist.replace(original, *generic);
      generalized.push_back(*generic);
    }
    // Every use upstream fusion would refuse stops the whole producer (a
    // generalized reduce left unfused is the same computation: the
    // producers of its inputs have a new consumer).
    for (OpOperand &use : result.getUses())
      if (!linalg::areElementwiseOpsFusable(&use)) {
        for (Operation *generic : generalized)
          worklist.touchProducers(generic);
        return false;
      }
    // One copy of the producer per use, each with that one use.
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : result.getUses())
      uses.push_back(&use);
    SmallVector<linalg::GenericOp> copies;
    for (OpOperand *use : uses) {
      rewriter.setInsertionPoint(producer);
      auto copy = cast<linalg::GenericOp>(rewriter.clone(*producer));
      rewriter.modifyOpInPlace(use->getOwner(),
                               [&] { use->set(copy->getResult(0)); });
      copies.push_back(copy);
    }
    worklist.forget(producer);
    rewriter.eraseOp(producer);
    SmallVector<Operation *> fusedOps;
    for (linalg::GenericOp copy : copies) {
      OpOperand &use = *copy->getResult(0).getUses().begin();
      Operation *consumer = use.getOwner();
      FailureOr<Operation *> fused = msamp::fuseIntoConsumer(rewriter, use);
      if (failed(fused))
        return copy.emitError("msamp-gpu-fuse-producers: elementwise fusion "
                              "failed after areElementwiseOpsFusable held");
      worklist.replace(consumer, *fused);
      fusedOps.push_back(*fused);
      rewriter.eraseOp(consumer);
      if (copy->use_empty())
        rewriter.eraseOp(copy);
      ++numFused;
    }
    // What the fusion changed: the fused ops, and the producers of their
    // inputs (new consumers). Examined after the restart.
    for (Operation *fusedOp : fusedOps) {
      worklist.touch(fusedOp);
      worklist.touchProducers(fusedOp);
    }
    ++numProducers;
    return true;
  }
};

} // namespace
