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
// (kMaxSingleThreadParamBytes, as msamp-gpu-scalar-kernels); if not, R
// stays a kernel of its own.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/BufferAccesses.h"
#include "MSAMP/Codegen/GPU/CostModel.h"
#include "MSAMP/Codegen/GPU/Passes.h"
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

  llvm::DenseMap<Operation *, BufferAccesses> accessCache;

  const BufferAccesses &accessesOf(Operation *op) {
    auto it = accessCache.find(op);
    if (it == accessCache.end())
      it = accessCache.try_emplace(op, collectBufferAccesses(op)).first;
    return it->second;
  }

  LogicalResult mergeInBlock(Block &block) {
    SmallVector<Operation *> kernels;
    for (Operation &op : block)
      if (singleThreadBody(&op))
        kernels.push_back(&op);
    for (Operation *kernel : kernels) {
      Operation *target = findTarget(kernel);
      if (!target)
        continue;
      if (failed(merge(kernel, target)))
        return failure();
      ++numMerged;
    }
    return success();
  }

  /// The previous single-thread kernel that `kernel` can join, or null.
  Operation *findTarget(Operation *kernel) {
    BufferAccesses own = collectBufferAccesses(kernel);
    for (Operation *op = kernel->getPrevNode(); op; op = op->getPrevNode()) {
      if (singleThreadBody(op))
        return canHoistOperands(kernel, op) && fitsParameters(kernel, op)
                   ? op
                   : nullptr;
      if (isMemoryEffectFree(op) && op->getNumRegions() == 0)
        continue; // moved along with the kernel if it uses it
      if (isa<memref::AllocOp>(op))
        continue;
      if (dependsOn(own, accessesOf(op)))
        return nullptr;
    }
    return nullptr;
  }

  /// The ops between `target` and `kernel` that define values `kernel`
  /// uses (transitively), in block order, or failure when one cannot move
  /// before `target` (it is not an allocation or a pure op).
  FailureOr<SmallVector<Operation *>> opsToHoist(Operation *kernel,
                                                 Operation *target) {
    // The ops between `target` and `kernel`, numbered in reverse block
    // order (findTarget walked the same stretch). Asking
    // Operation::isBeforeInBlock instead renumbered the whole block after
    // every merge had moved ops: quadratic in its length, which grows with
    // depth (issue 19).
    llvm::DenseMap<Operation *, unsigned> between;
    for (Operation *op = kernel->getPrevNode(); op != target;
         op = op->getPrevNode())
      between.try_emplace(op, between.size());
    llvm::SetVector<Operation *> hoist;
    SmallVector<Value> worklist(capturedValues(kernel).takeVector());
    while (!worklist.empty()) {
      Operation *def = worklist.pop_back_val().getDefiningOp();
      // Defined in the kernel's block before it: between the two, or
      // `target` itself (which is not movable), or before `target`.
      if (!def || def->getBlock() != kernel->getBlock() ||
          (def != target && !between.contains(def)) || hoist.contains(def))
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
      return between.lookup(a) > between.lookup(b);
    });
    return ordered;
  }

  bool canHoistOperands(Operation *kernel, Operation *target) {
    return succeeded(opsToHoist(kernel, target));
  }

  /// Whether the merged kernel's buffers (bare pointers) fit the parameters.
  static bool fitsParameters(Operation *kernel, Operation *target) {
    llvm::SetVector<Value> captured = capturedValues(target);
    captured.insert_range(capturedValues(kernel));
    int64_t bytes = 0;
    for (Value value : captured)
      if (auto type = dyn_cast<MemRefType>(value.getType()))
        bytes += kernelParamBytes(type);
    return bytes <= kMaxSingleThreadParamBytes;
  }

  LogicalResult merge(Operation *kernel, Operation *target) {
    FailureOr<SmallVector<Operation *>> hoist = opsToHoist(kernel, target);
    if (failed(hoist))
      return failure();
    for (Operation *op : *hoist)
      op->moveBefore(target);
    scf::ParallelOp into = singleThreadBody(target);
    scf::ParallelOp from = singleThreadBody(kernel);
    Operation *terminator = into.getBody()->getTerminator();
    for (Operation &op :
         llvm::make_early_inc_range(from.getBody()->without_terminator()))
      op.moveBefore(terminator);
    kernel->erase();
    accessCache.erase(target);

    // The merged kernel's cost, recounted from its ops.
    SmallVector<Operation *> ops;
    for (Operation &op : into.getBody()->without_terminator())
      ops.push_back(&op);
    FailureOr<Location> loc = singleThreadKernelLoc(ops);
    if (failed(loc))
      return failure();
    target->setLoc(*loc);
    into->setLoc(*loc);
    return success();
  }
};

} // namespace
