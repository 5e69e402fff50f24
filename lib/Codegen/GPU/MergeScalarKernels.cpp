//===- MergeScalarKernels.cpp - fewer single-thread kernels ---------------===//
//
// Part of the msamp project.
//
// msamp-gpu-scalar-kernels makes each run of the host's 0-d arithmetic
// between two kernels or runtime calls one single-thread kernel. Most runs
// are a few ops (the delayed-scaling bookkeeping of one FP8 cast: the
// constants a collective or a GEMM reads, the selection of the scale, its
// inverse), and most do not depend on the call or kernel right before
// them: the LM had 88 of them per layer. This pass moves each
// single-thread kernel up, past every op it does not depend on, into the
// previous single-thread kernel of the same block: the ops execute in the
// same order relative to every op they depend on, and in their own order
// inside the merged kernel, so the bits are those of the CPU.
//
// A kernel R moves past an op X when
//  * X writes no buffer that R reads or writes and reads none that R
//    writes (buffers traced to their root through views and casts; two
//    distinct allocations never alias, function arguments and globals may
//    alias each other; an op whose effects are unknown reads and writes
//    every buffer it names; a call that takes a table of addresses, the
//    multi-tensor Adam call's, may touch any buffer), and
//  * every value R uses from outside itself is defined before the target
//    kernel, or by an allocation or a pure op that can move there too.
// The merged kernel must still fit the kernel parameter space
// (kMaxSingleThreadParamBytes, as msamp-gpu-scalar-kernels; a 0-d buffer
// that only the merged kernel uses does not count, since
// msamp-gpu-kernel-local-scalars makes it a value), and R and the
// target must be in one copy of a repeated block of the step
// (RepeatGroups.h: merged across layers up to the budget, a kernel spanned
// a different set of layers at every depth); if not, R stays a kernel of
// its own.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/BufferAccesses.h"
#include "MSAMP/Codegen/GPU/CostModel.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/RepeatGroups.h"
#include "MSAMP/Codegen/GPU/SingleThreadKernels.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUMERGESCALARKERNELS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

/// The values the ops of a single-thread kernel's body use and that are
/// defined outside it (the kernel's parameters once outlined).
llvm::SetVector<Value> capturedValues(Operation *kernel) {
  scf::ParallelOp body = singleThreadBody(kernel);
  llvm::SetVector<Value> captured;
  body.getBody()->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands()) {
      Operation *owner = operand.getDefiningOp();
      if (!owner)
        owner = cast<BlockArgument>(operand).getOwner()->getParentOp();
      if (!body->isAncestor(owner))
        captured.insert(operand);
    }
  });
  return captured;
}

struct MergeScalarKernelsPass
    : msamp::impl::MSAMPGPUMergeScalarKernelsBase<MergeScalarKernelsPass> {
  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      if (failed(mergeInBlock(*block)))
        return signalPassFailure();
  }

  /// The single-thread kernel the next ones may join, and what lies between
  /// it and the scan: one forward walk of the block replaces a walk back
  /// from every kernel to its target, which grew with the targets' reach
  /// (issue 19). A kernel R may join the target when it does not depend on
  /// `between` (the union of the accesses of every op since the target
  /// that is not pure, an allocation or a kernel merged into it: exactly
  /// the ops R would move past) and its operands can move before the
  /// target.
  struct Target {
    Operation *op = nullptr;
    /// The block's position of `op` when the scan began.
    unsigned position = 0;
    BufferAccesses between;
    llvm::SetVector<Value> captured;
    /// Ops since the target that moved before it (hoisted operands).
    llvm::DenseSet<Operation *> hoisted;
    bool merged = false;
  };

  LogicalResult mergeInBlock(Block &block) {
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      ops.push_back(&op);
    llvm::DenseMap<Operation *, unsigned> positions;
    for (auto [i, op] : llvm::enumerate(ops))
      positions[op] = i;
    // A merged kernel stays in one copy of a repeated block
    // (RepeatGroups.h).
    BlockSegments repeats = repeatGroups(block);
    Target target;
    auto relabel = [&]() -> LogicalResult {
      if (!target.op || !target.merged)
        return success();
      // The merged kernel's cost, counted once from all its ops.
      scf::ParallelOp into = singleThreadBody(target.op);
      SmallVector<Operation *> body;
      for (Operation &op : into.getBody()->without_terminator())
        body.push_back(&op);
      FailureOr<Location> loc = singleThreadKernelLoc(body);
      if (failed(loc))
        return failure();
      target.op->setLoc(*loc);
      into->setLoc(*loc);
      return success();
    };
    for (Operation *op : ops) {
      if (!singleThreadBody(op)) {
        if (!target.op ||
            (isMemoryEffectFree(op) && op->getNumRegions() == 0) ||
            isa<memref::AllocOp>(op))
          continue; // moved along with a kernel if it uses it
        target.between.add(collectBufferAccesses(op));
        continue;
      }
      llvm::SetVector<Value> captured = capturedValues(op);
      if (target.op && repeats.of(op) == repeats.of(target.op) &&
          !dependsOn(collectBufferAccesses(op), target.between)) {
        FailureOr<SmallVector<Operation *>> hoist =
            opsToHoist(op, captured, target, positions);
        if (succeeded(hoist) && fitsParameters(op, captured, target)) {
          merge(op, captured, target, *hoist);
          ++numMerged;
          continue;
        }
      }
      if (failed(relabel()))
        return failure();
      target = Target();
      target.op = op;
      target.position = positions.lookup(op);
      target.captured = std::move(captured);
    }
    return relabel();
  }

  /// The ops between the target and `kernel` that define values `kernel`
  /// uses (transitively), in block order, or failure when one cannot move
  /// before the target (it is not an allocation or a pure op). `positions`
  /// numbers the block as the scan found it: only operands (and theirs) are
  /// looked at, not the ops in between.
  FailureOr<SmallVector<Operation *>>
  opsToHoist(Operation *kernel, const llvm::SetVector<Value> &captured,
             const Target &target,
             const llvm::DenseMap<Operation *, unsigned> &positions) {
    llvm::SetVector<Operation *> hoist;
    SmallVector<Value> worklist(captured.begin(), captured.end());
    while (!worklist.empty()) {
      Operation *def = worklist.pop_back_val().getDefiningOp();
      // Defined in the kernel's block before it: after the target (and not
      // moved before it by an earlier merge), or before the target.
      if (!def || def->getBlock() != kernel->getBlock() ||
          positions.lookup(def) <= target.position ||
          target.hoisted.contains(def) || hoist.contains(def))
        continue;
      bool movable = (isa<memref::AllocOp>(def) || isMemoryEffectFree(def)) &&
                     def->getNumRegions() == 0;
      if (!movable)
        return failure();
      hoist.insert(def);
      llvm::append_range(worklist, def->getOperands());
    }
    SmallVector<Operation *> ordered = hoist.takeVector();
    llvm::sort(ordered, [&](Operation *a, Operation *b) {
      return positions.lookup(a) < positions.lookup(b);
    });
    return ordered;
  }

  /// Whether the buffers (bare pointers) of `kernel` merged into the
  /// target fit the parameters: the target's and those of the kernel's
  /// (`captured`) it does not take, less those only the two use, which
  /// msamp-gpu-kernel-local-scalars makes values of the merged kernel (the
  /// gradient norm's running sum, stored and read back per parameter).
  static bool fitsParameters(Operation *kernel,
                             const llvm::SetVector<Value> &captured,
                             const Target &target) {
    Block *bodies[] = {singleThreadBody(target.op).getBody(),
                       singleThreadBody(kernel).getBody()};
    auto takesParameter = [&](Value value) {
      return isa<MemRefType>(value.getType()) &&
             !isKernelLocalScalar(value, bodies);
    };
    int64_t buffers = 0;
    for (Value value : target.captured)
      buffers += takesParameter(value);
    for (Value value : captured)
      buffers += takesParameter(value) && !target.captured.contains(value);
    return buffersFitKernelParameters(buffers);
  }

  void merge(Operation *kernel, const llvm::SetVector<Value> &captured,
             Target &target, ArrayRef<Operation *> hoist) {
    for (Operation *op : hoist) {
      op->moveBefore(target.op);
      target.hoisted.insert(op);
    }
    target.captured.insert_range(captured);
    scf::ParallelOp into = singleThreadBody(target.op);
    scf::ParallelOp from = singleThreadBody(kernel);
    Operation *terminator = into.getBody()->getTerminator();
    for (Operation &op :
         llvm::make_early_inc_range(from.getBody()->without_terminator()))
      op.moveBefore(terminator);
    kernel->erase();
    target.merged = true;
  }
};

} // namespace
