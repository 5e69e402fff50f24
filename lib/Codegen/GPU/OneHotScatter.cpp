//===- OneHotScatter.cpp - the embedding gradient as a GPU scatter --------===//
//
// Part of the msamp project.
//
// The embedding gradient, a one-hot reduction (MSAMP/TrainStep/
// OneHotReduction.h), would become one GPU thread per output element, each
// testing all ids: 50,257 x 768 threads x 8,192 ids for GPT-2 small. The
// CPU's scatter (one loop over the ids) is one thread. Here, on buffers:
//
//   linalg.fill ins(0.0) outs(%out)                     (kept: its own kernel)
//   scf.parallel (%c, %j) = (0, 0) to (C, J) {          (was: the reduction)
//     %lo = %c * R;  %hi = min(%lo + R, V)
//     scf.for %n = 0 to N {
//       %r = f(%ids[%n])
//       scf.if (%lo <= %r < %hi) {
//         %out[%r, %j] = %g[%n, %j] + %out[%r, %j] } } }
//
// Thread (c, j) owns rows [c R, min((c + 1) R, V)) of column j, so no two
// threads write one element and no atomics are needed; it adds its terms
// in n order, the reduction's (and the CPU scatter's) order, so the result
// is bit-identical to both (the header says why the skipped +0.0 terms
// change nothing, given the +0.0 start, which the fill before proves). Ids
// out of range fall in no chunk: skipped, as on the CPU, and every store
// is inside the output. j is innermost and the collapsed loop is tiled
// with it innermost (msamp-gpu-tile-parallel-loops), so a warp reads one id
// (broadcast) and 32 neighbouring elements of g and out.
//
// C trades parallelism for work: every thread scans all N ids, so the
// kernel does C x J x N range tests; C is the fewest chunks that give
// `threads` threads (65,536 by default: about a quarter of an H100's
// resident threads; 86 chunks of 585 rows for GPT-2 small), the time then
// being about N dependent iterations per thread, whatever C is.
//
// Float atomics (one thread per (n, j), atomicAdd into out[r, j]) would
// skip the scan but add in a different order on each run: this kernel is
// deterministic and equal to the CPU, which the host emulation checks.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/BufferPlan.h"
#include "MSAMP/Codegen/GPU/CostModel.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/TrainStep/OneHotReduction.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUONEHOTSCATTER
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

/// The allocation `v` views (through view-like ops and casts), or null.
Operation *rootAllocation(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<memref::AllocOp, memref::AllocaOp>(def))
      return def;
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      v = view.getViewSource();
    else if (isa<CastOpInterface>(def) && def->getNumOperands() == 1)
      v = def->getOperand(0);
    else
      return nullptr;
  }
  return nullptr; // a block argument: may alias any other
}

/// Whether `op`'s output buffer holds +0.0 when `op` runs: it is (a view
/// of) a fresh allocation, a linalg.fill of +0.0 into that very value
/// precedes `op` in its block, and no op in between (or nested in one in
/// between) may write or free any part of the allocation, through any view
/// or cast of it (an op that uses it and does not say which buffers it
/// writes, a call, counts as writing it). Bufferization keeps a zero fill where
/// the tensor-level fill was, which after CSE can be far from the reduction (at
/// O0).
bool initIsPositiveZero(linalg::GenericOp op) {
  Value init = op.getDpsInits()[0];
  Operation *root = rootAllocation(init);
  if (!root)
    return false;
  // Every op that touches the allocation, not counting views and casts.
  llvm::SetVector<Value> aliases;
  aliases.insert(root->getResult(0));
  SmallVector<Operation *> users;
  for (size_t i = 0; i < aliases.size(); ++i)
    for (Operation *user : aliases[i].getUsers()) {
      if (isa<ViewLikeOpInterface, CastOpInterface>(user))
        aliases.insert_range(user->getResults());
      else
        users.push_back(user);
    }
  Block *block = op->getBlock();
  linalg::FillOp fill;
  for (Operation *user : users) {
    auto candidate = dyn_cast<linalg::FillOp>(user);
    if (candidate && candidate->getBlock() == block &&
        candidate.getOutputs()[0] == init && candidate->isBeforeInBlock(op) &&
        (!fill || fill->isBeforeInBlock(candidate)))
      fill = candidate;
  }
  if (!fill || !isPositiveZeroScalar(fill.getInputs()[0]))
    return false;
  for (Operation *user : users) {
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (!inBlock || inBlock == op || inBlock == fill ||
        !fill->isBeforeInBlock(inBlock) || !inBlock->isBeforeInBlock(op))
      continue; // not executed between the fill and op
    // It may read the allocation (or write other buffers), not write it.
    auto effects = dyn_cast<MemoryEffectOpInterface>(user);
    if (!effects)
      return false;
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &e : instances)
      if (isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()) &&
          (!e.getValue() || aliases.contains(e.getValue())))
        return false;
  }
  return true;
}

/// How the scatter is split, and what it costs.
struct Plan {
  int64_t rows = 0;      ///< output rows (V)
  int64_t chunks = 0;    ///< C
  int64_t chunkRows = 0; ///< R
  int64_t sliceSize = 1; ///< J: elements of one output row
  int64_t ids = 1;       ///< N
  gpucost::OpCost cost;
};

/// The plan of `op`, or nullopt when an operand has a dynamic size.
std::optional<Plan> planFor(linalg::GenericOp op, const OneHotReduction &m,
                            int64_t threads) {
  Plan p;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return std::nullopt;
  p.rows = sizes[m.rowDim];
  for (unsigned d : m.rowSliceDims)
    p.sliceSize *= sizes[d];
  p.ids = oneHotIdCount(op, m);
  if (p.rows == 0 || p.sliceSize == 0 || p.ids == 0)
    return p; // no thread: nothing to add
  p.chunks =
      std::clamp<int64_t>(llvm::divideCeil(threads, p.sliceSize), 1, p.rows);
  p.chunkRows = llvm::divideCeil(p.rows, p.chunks);
  p.chunks = llvm::divideCeil(p.rows, p.chunkRows);
  std::optional<int64_t> idBytes = getStaticMemRefBytes(
      cast<MemRefType>(op.getDpsInputs()[1 - m.gradIndex].getType()));
  std::optional<int64_t> gradBytes = getStaticMemRefBytes(
      cast<MemRefType>(op.getDpsInputs()[m.gradIndex].getType()));
  if (!idBytes || !gradBytes)
    return std::nullopt;
  // An f32 row: the output's static shape is checked by the matcher.
  p.cost = gpucost::oneHotScatterKernelCost(
      p.chunks * p.sliceSize, p.ids, *idBytes, p.ids * p.sliceSize, *gradBytes,
      p.rows, p.sliceSize * 4);
  return p;
}

void rewrite(linalg::GenericOp op, const OneHotReduction &m, const Plan &p) {
  OpBuilder b(op);
  // Every op of the kernel carries its cost, as msamp-gpu-kernel-costs
  // does for a linalg op's: msamp-gpu-cost-report reads it at the launch.
  Location loc = FusedLoc::get(
      op.getContext(), {op.getLoc()},
      gpucost::kernelCostAttr(op.getContext(), "one_hot_scatter", p.cost));
  Value ids = op.getDpsInputs()[1 - m.gradIndex];
  Value grad = op.getDpsInputs()[m.gradIndex];
  Value out = op.getDpsInits()[0];
  unsigned rank = cast<MemRefType>(out.getType()).getRank();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };

  // (chunk, the output's other dims in order): the innermost output dim
  // stays innermost.
  Value zero = index(0), one = index(1);
  SmallVector<Value> lbs{zero}, ubs{index(p.chunks)}, steps{one};
  for (unsigned d : m.rowSliceDims) {
    lbs.push_back(zero);
    ubs.push_back(index(sizes[d]));
    steps.push_back(one);
  }
  auto parallel = scf::ParallelOp::create(b, loc, lbs, ubs, steps);
  b.setInsertionPointToStart(parallel.getBody());
  SmallVector<Value> threadIvs(parallel.getInductionVars());
  Value chunkRows = index(p.chunkRows);
  Value lo = arith::MulIOp::create(b, loc, threadIvs[0], chunkRows);
  Value hi = arith::MinUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, lo, chunkRows), index(p.rows));
  // The chunk's bounds in the row's type, once per thread.
  Type rowType = m.rowValue.getType();
  if (!rowType.isIndex()) {
    lo = arith::IndexCastOp::create(b, loc, rowType, lo);
    hi = arith::IndexCastOp::create(b, loc, rowType, hi);
  }

  // The ids in the reduction's order: nested loops over its dims.
  SmallVector<Value> idIvs;
  for (unsigned d : m.reductionDims) {
    auto loop = scf::ForOp::create(b, loc, zero, index(sizes[d]), one);
    b.setInsertionPointToStart(loop.getBody());
    idIvs.push_back(loop.getInductionVar());
  }
  Value id = memref::LoadOp::create(b, loc, ids, idIvs);
  Value row = cloneOneHotRow(b, op, m, id);
  Value mine = oneHotRowInRange(b, loc, row, lo, hi);
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, mine,
                                /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value rowIndex =
      row.getType().isIndex()
          ? row
          : arith::IndexCastOp::create(b, loc, b.getIndexType(), row)
                .getResult();
  SmallVector<Value> gradIndices(idIvs), outIndices;
  for (unsigned d = 0, slice = 1; d < rank; ++d) {
    if (d == m.rowDim) {
      outIndices.push_back(rowIndex);
      continue;
    }
    outIndices.push_back(threadIvs[slice]);
    gradIndices.push_back(threadIvs[slice++]);
  }
  Value g = memref::LoadOp::create(b, loc, grad, gradIndices);
  Value acc = memref::LoadOp::create(b, loc, out, outIndices);
  // The reduction's addf, operands in its order.
  Value sum = m.gradFirst ? arith::AddFOp::create(b, loc, g, acc)
                          : arith::AddFOp::create(b, loc, acc, g);
  memref::StoreOp::create(b, loc, sum, out, outIndices);
  op.erase();
}

struct OneHotScatterPass
    : msamp::impl::MSAMPGPUOneHotScatterBase<OneHotScatterPass> {
  using Base::Base;

  void runOnOperation() override {
    if (threads < 1) {
      getOperation().emitError("msamp-gpu-one-hot-scatter: threads must be "
                               "positive, got ")
          << static_cast<int64_t>(threads);
      return signalPassFailure();
    }
    SmallVector<std::tuple<linalg::GenericOp, OneHotReduction, Plan>, 1> found;
    getOperation().walk([&](linalg::GenericOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      std::optional<OneHotReduction> m = matchOneHotReduction(op);
      if (!m)
        return;
      std::optional<Plan> p = planFor(op, *m, threads);
      // The scatter reads and writes the output while it reads the inputs:
      // neither may be part of the output's allocation.
      Operation *root = rootAllocation(op.getDpsInits()[0]);
      bool aliased = llvm::any_of(op.getDpsInputs(), [&](Value in) {
        return rootAllocation(in) == root;
      });
      if (!p || aliased || !initIsPositiveZero(op)) {
        remark::missed(op.getLoc(), msamp::remarkOptions("gpu-one-hot-scatter",
                                                         "one-hot-scatter"))
            << remark::reason("the output is not an allocation that a fill "
                              "of +0.0 wrote last and no input is part of, "
                              "or a size is dynamic: the one-hot reduction "
                              "stays one thread per output element");
        return;
      }
      found.emplace_back(op, std::move(*m), *p);
    });
    for (auto &[op, m, p] : found) {
      if (p.chunks == 0) {
        op.erase(); // nothing to add: the output keeps its zeros
        continue;
      }
      remark::passed(op.getLoc(), msamp::remarkOptions("gpu-one-hot-scatter",
                                                       "one-hot-scatter"))
          << remark::add("one-hot reduction over {0} ids into a {1}-row "
                         "output runs as {2} chunks of {3} rows x {4} "
                         "threads, each scanning the ids in order",
                         p.ids, p.rows, p.chunks, p.chunkRows, p.sliceSize);
      rewrite(op, m, p);
    }
    numRewritten += found.size();
  }
};

} // namespace
