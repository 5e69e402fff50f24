//===- MergeSiblingKernels.cpp - --msamp-gpu-merge-sibling-kernels --------===//
//
// Part of the msamp project.
//
// Every linalg op of the bufferized step is a kernel launch of its own
// (4 us each in the cost model, and a launch on the device). Many of them
// are independent kernels over the same iteration space: the gradient
// clipping multiplies each parameter's gradient by one coefficient (ten
// kernels of 768 or 3,072 threads per layer), attention's three bias adds
// run over the same [batch, seq, heads, head_dim] space between their
// GEMMs, LayerNorm's weight and bias gradients and the biases' gradients
// are column sums of the same [tokens, features] shape, each split into
// the same two stages (msamp-split-column-reductions). Two such kernels
// become one linalg.generic with the outputs of both (MergeGenerics.h):
// one launch in which each thread computes every output at its index,
// each with its own body (a reduction accumulates each output's terms in
// its own order).
//
// Which ops: linalg.generic on buffers with at least one parallel loop
// and static loop ranges; two of them in one block with the same loop
// ranges and iterator types, and of reductions either both or neither in
// the form msamp-gpu-row-reductions runs with a warp per row (a merged op
// it cannot take would lose the warp for both). Full reductions (no
// parallel loop) stay msamp-gpu-atomic-full-reductions' single-output
// kernels. The later one, B, moves up to the earlier one, A, when no op in
// between conflicts with it (below) and every value it uses is defined
// before A or by an allocation or a pure op that moves up with it (as do
// the fills of its outputs that msamp-gpu-reduction-inits left before
// it, so that the reduction kernels still fold them into their start);
// otherwise A moves down to B when no op in between conflicts with A. A
// and B must not conflict with each other. Ops conflict when one writes a
// buffer the other reads or writes: the conservative model of
// msamp-gpu-merge-scalar-kernels (BufferAccesses.h: views traced to their
// buffer, arguments and globals may alias each other, runtime calls read
// only their inputs, scales and histories, a table of addresses may reach
// anything). A merge that would pass the kernel parameter budget of the
// single-thread kernels (kMaxSingleThreadParamBytes of buffer pointers)
// is not made, nor one of kernels in two copies of a repeated block of the
// step (RepeatGroups.h: the same merges in every layer at every depth).
//
// Numbers: every output element is computed by its own op's body from the
// same operands, and every op keeps its order relative to every op it
// depends on, so the bits are those of the separate kernels (and of the
// CPU: host emulation runs this pass).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/BufferAccesses.h"
#include "MSAMP/Codegen/GPU/MergeGenerics.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/RepeatGroups.h"
#include "MSAMP/Codegen/GPU/RowForm.h"
#include "MSAMP/Codegen/GPU/SingleThreadKernels.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <string>

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUMERGESIBLINGKERNELS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

/// How many earlier kernels over the same loops a kernel tries to join:
/// bounds the pass's work on deep steps (each try walks the ops between).
constexpr unsigned kMaxPartners = 16;

/// A kernel this pass merges (see the file comment).
bool isCandidate(linalg::GenericOp op) {
  return op.hasPureBufferSemantics() && op.getNumParallelLoops() > 0 &&
         llvm::none_of(op.getStaticLoopRanges(), ShapedType::isDynamic);
}

/// Whether msamp-gpu-row-reductions gives `op` a warp or a block per row
/// (its form, RowForm.h; f32 accumulators).
bool isRowReduction(linalg::GenericOp op) {
  unsigned numParallel = op.getNumParallelLoops();
  if (numParallel == op.getNumLoops() ||
      !hasParallelThenReductionLoops(op, numParallel))
    return false;
  for (Value init : op.getDpsInits())
    if (!cast<ShapedType>(init.getType()).getElementType().isF32())
      return false;
  return llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *in) {
    return succeeded(
        innermostReductionDims(op.getMatchingIndexingMap(in), numParallel));
  });
}

/// What two kernels must share to be one: the same loops, and of
/// reductions the same kernel form (a row reduction merged with another
/// reduction would lose its warp per row). Equal keys: the same loops.
std::string loopsKey(linalg::GenericOp op) {
  std::string key;
  llvm::raw_string_ostream os(key);
  for (int64_t range : op.getStaticLoopRanges())
    os << range << ',';
  os << ';';
  for (utils::IteratorType type : op.getIteratorTypesArray())
    os << (type == utils::IteratorType::parallel ? 'p' : 'r');
  os << ';'
     << (op.getNumReductionLoops() == 0 ? 'n'
         : isRowReduction(op)           ? 'w'
                                        : 'o');
  return key;
}

/// Whether `op` is a fill of one of `kernel`'s outputs (its start value,
/// which msamp-gpu-reduction-inits left right before it): it moves with
/// the kernel.
bool isInitFill(Operation *op, linalg::GenericOp kernel) {
  auto fill = dyn_cast<linalg::FillOp>(op);
  return fill && fill.hasPureBufferSemantics() &&
         llvm::is_contained(kernel.getDpsInits(), fill.getDpsInits()[0]);
}

/// The values `op` uses that are defined outside it.
llvm::SetVector<Value> usedValues(Operation *op) {
  llvm::SetVector<Value> used(op->getOperands().begin(),
                              op->getOperands().end());
  for (Region &region : op->getRegions())
    getUsedValuesDefinedAbove(region, used);
  return used;
}

/// An op that may move anywhere its operands are defined: no memory
/// effects other than a fresh allocation, no regions.
bool isMovable(Operation *op) {
  return (isa<memref::AllocOp>(op) || isMemoryEffectFree(op)) &&
         op->getNumRegions() == 0;
}

/// The merged kernel's buffers (bare pointers) fit the parameter budget.
bool fitsParameters(linalg::GenericOp a, linalg::GenericOp b) {
  llvm::SetVector<Value> memrefs;
  for (linalg::GenericOp op : {a, b})
    for (Value v : usedValues(op))
      if (isa<MemRefType>(v.getType()))
        memrefs.insert(v);
  return buffersFitKernelParameters(memrefs.size());
}

struct MergeSiblingKernelsPass
    : msamp::impl::MSAMPGPUMergeSiblingKernelsBase<MergeSiblingKernelsPass> {
  /// Each op's accesses; a std::map, whose references stay valid while
  /// later lookups insert.
  std::map<Operation *, BufferAccesses> accessCache;

  const BufferAccesses &accessesOf(Operation *op) {
    auto it = accessCache.find(op);
    if (it == accessCache.end())
      it = accessCache.emplace(op, collectBufferAccesses(op)).first;
    return it->second;
  }

  void runOnOperation() override {
    // One function's ops: the pass object runs on every function in turn,
    // and the later passes on an earlier function free ops whose
    // addresses a new op may take (a stale entry let a kernel move past
    // another that reads what it writes, once layers were functions).
    accessCache.clear();
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      mergeInBlock(*block);
    accessCache.clear();
  }

  void mergeInBlock(Block &block) {
    // In block order; a merged op takes the place of the one it was put
    // at, the other's entry is cleared.
    SmallVector<linalg::GenericOp> kernels;
    for (Operation &op : block)
      if (auto generic = dyn_cast<linalg::GenericOp>(op))
        if (isCandidate(generic))
          kernels.push_back(generic);
    // The earlier kernels over each loop nest, by index in increasing
    // order: a kernel looks only at its own (a scan of every earlier kernel
    // that compared loop ranges grew with the square of the step, issue 19).
    std::map<std::string, SmallVector<size_t>> earlierOver;
    BlockSegments groups = repeatGroups(block);
    IRRewriter rewriter(&getContext());
    for (size_t j = 0; j < kernels.size(); ++j) {
      // Partners come from the kernel's own copy of a repeated block (each
      // kernel is looked up once, before any merge replaces it).
      std::string loops = loopsKey(kernels[j]);
      std::string key = std::to_string(groups.of(kernels[j])) + ':' + loops;
      SmallVector<size_t> &partners = earlierOver[key];
      unsigned tries = 0;
      bool mergedUp = false;
      for (size_t p = partners.size(); p-- > 0 && tries < kMaxPartners;) {
        size_t i = partners[p];
        linalg::GenericOp a = kernels[i], b = kernels[j];
        if (!a)
          continue;
        ++tries;
        if (!fitsParameters(a, b) || dependsOn(accessesOf(b), accessesOf(a)))
          continue;
        Operation *at;
        if (FailureOr<SmallVector<Operation *>> hoist = canMoveUp(b, a);
            succeeded(hoist)) {
          for (Operation *op : *hoist)
            op->moveBefore(a);
          at = a;
        } else if (canMoveDown(a, b)) {
          at = b;
        } else {
          continue;
        }
        accessCache.erase(a);
        accessCache.erase(b);
        rewriter.setInsertionPoint(at);
        linalg::GenericOp merged = mergeGenerics(rewriter, a, b);
        mergedUp = at == a.getOperation();
        kernels[i] = mergedUp ? merged : nullptr;
        kernels[j] = mergedUp ? nullptr : merged;
        ++numMerged;
        // (The merged kernel runs the same loops: its key is theirs.)
        assert(loopsKey(merged) == loops && "a merge changed the loops");
        break;
      }
      if (!mergedUp)
        partners.push_back(j);
    }
  }

  /// The ops between `a` and `b` that `b` moving up before `a` takes
  /// along (allocations and pure ops defining values it uses, fills of its
  /// outputs), in block order; failure when an op in between conflicts with `b`
  /// or a value `b` uses cannot be defined before `a`.
  FailureOr<SmallVector<Operation *>> canMoveUp(linalg::GenericOp b,
                                                linalg::GenericOp a) {
    const BufferAccesses &own = accessesOf(b);
    llvm::SetVector<Operation *> hoist;
    SmallVector<Value> worklist(usedValues(b).takeVector());
    // The ops between `a` and `b`, numbered in reverse block order. Asking
    // Operation::isBeforeInBlock instead renumbered the whole block after
    // every merge had moved ops: quadratic in its length, which grows with
    // depth (issue 19).
    llvm::DenseMap<Operation *, unsigned> between;
    for (Operation *op = b->getPrevNode(); op != a; op = op->getPrevNode()) {
      between.try_emplace(op, between.size());
      if (isInitFill(op, b)) {
        hoist.insert(op);
        llvm::append_range(worklist, op->getOperands());
        continue;
      }
      if (!isMovable(op) && dependsOn(own, accessesOf(op)))
        return failure();
    }
    while (!worklist.empty()) {
      Operation *def = worklist.pop_back_val().getDefiningOp();
      // Defined in b's block before b: between the two, or `a` itself
      // (which is not movable), or before `a`.
      if (!def || def->getBlock() != b->getBlock() ||
          (def != a.getOperation() && !between.contains(def)) ||
          hoist.contains(def))
        continue;
      if (!isMovable(def))
        return failure();
      hoist.insert(def);
      llvm::append_range(worklist, def->getOperands());
    }
    SmallVector<Operation *> ordered = hoist.takeVector();
    llvm::sort(ordered, [&](Operation *x, Operation *y) {
      return between.lookup(x) > between.lookup(y);
    });
    return ordered;
  }

  /// Whether `a` may move down to `b`: no op in between conflicts with it
  /// (its operands are defined before it, and it has no results).
  bool canMoveDown(linalg::GenericOp a, linalg::GenericOp b) {
    const BufferAccesses &own = accessesOf(a);
    for (Operation *op = a->getNextNode(); op != b; op = op->getNextNode())
      if (!isMovable(op) && dependsOn(accessesOf(op), own))
        return false;
    return true;
  }
};

} // namespace
