//===- SplitColumnReductions.cpp - column sums in two stages -------------===//
//
// A column reduction sums a [rows, columns] buffer over its rows (a bias
// gradient over all b*s tokens):
//
//   linalg.reduce ins(%x : memref<8192x768xf32>) outs(%acc : memref<768xf32>)
//       dimensions = [0]   (addf)
//
// On the GPU each output element is one thread that walks all 8,192 rows:
// 768 threads for the whole chip. This pass splits the rows into C chunks
// of S = R / C rows and reduces in two stages, both plain linalg ops that
// the existing lowering runs as coalesced kernels (neighbouring threads read
// neighbouring columns):
//
//   %v = memref.expand_shape %x [[0, 1], [2]] : 8192x768 into 128x64x768
//   %p = memref.alloc() : memref<128x768xf32>     (not filled)
//   linalg.generic (c, s, j)  ins(%v[c, s, j]) outs(%p[c, j])     stage 1
//   linalg.generic (c, j)     ins(%p[c, j])    outs(%acc[j])      stage 2
//
// Stage 1 keeps the original body (only the rows are re-indexed; at a
// chunk's first row it yields the row's term, so %p needs no fill), stage 2
// applies the original combiner to the partials in chunk order, starting
// from the accumulator's initial value. Each output is thus
// init + (x_0 + .. + x_{S-1}) + (x_S + .. + x_{2S-1}) + ..., a
// reassociation of the sequential sum; max and min are exact either way.
// Both targets run this pass with the same options, so the CPU and the GPU
// (and its host emulation) keep one summation order.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/AsGeneric.h"
#include "MSAMP/Conversion/Passes.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Remarks.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <limits>

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPSPLITCOLUMNREDUCTIONS
#include "MSAMP/Conversion/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// The options of the pass, as the chunk choice reads them.
struct Limits {
  int64_t threads, minRows, maxPartials;
};

/// What the rewrite needs to know about an op it splits.
struct Plan {
  unsigned rowDim;                    // the one reduction loop dimension
  int64_t rows;                       // its extent R
  int64_t outputs;                    // P, the product of the other extents
  int64_t chunks;                     // C, dividing R
  SmallVector<Operation *> combiners; // per init: its combine(acc, term)
};

/// The combiners whose fold may be split into chunks: associative (max and
/// min exactly, addf up to rounding) and commutative.
bool isSplittable(Operation *combiner) {
  return isa<arith::AddFOp, arith::MaximumFOp, arith::MaxNumFOp,
             arith::MinimumFOp, arith::MinNumFOp>(combiner);
}

/// C: the smallest divisor of `rows` that gives the kernels enough threads
/// (C x outputs >= threads) and balances the two stages' serial lengths
/// (C >= sqrt R: stage 1 walks S rows, stage 2 C partials), with at least
/// `minRows` rows per chunk; failing that, the largest divisor with at
/// least `minRows` rows per chunk. 1 when none divides.
int64_t chooseChunks(int64_t rows, int64_t outputs, const Limits &limits) {
  const int64_t forThreads = (limits.threads + outputs - 1) / outputs;
  const auto forBalance = static_cast<int64_t>(std::ceil(std::sqrt(rows)));
  const int64_t wanted = std::max(forThreads, forBalance);
  int64_t best = 1;
  for (int64_t c = 2; c <= rows / limits.minRows; ++c) {
    if (rows % c != 0)
      continue;
    best = c;
    if (c >= wanted)
      break;
  }
  return best;
}

/// `type` with its dimension `pos` (the rows) split into [chunks, rows per
/// chunk], and the reassociation that views it so; failure when the layout
/// cannot express the split.
FailureOr<MemRefType> splitRowsType(MemRefType type, unsigned pos,
                                    int64_t chunks, int64_t chunkRows,
                                    SmallVector<ReassociationIndices> &groups) {
  SmallVector<int64_t> shape;
  groups.clear();
  for (int64_t d = 0; d < type.getRank(); ++d) {
    auto next = static_cast<int64_t>(shape.size());
    if (d == static_cast<int64_t>(pos)) {
      shape.append({chunks, chunkRows});
      groups.push_back({next, next + 1});
    } else {
      shape.push_back(type.getDimSize(d));
      groups.push_back({next});
    }
  }
  return memref::ExpandShapeOp::computeExpandedType(type, shape, groups);
}

/// The buffer a view is taken from (aliasing check).
Value rootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// The split of `op`, or nothing when it is not a column reduction this pass
/// handles (see Passes.td).
std::optional<Plan> analyze(linalg::LinalgOp op, const Limits &limits) {
  if (!op.hasPureBufferSemantics() || op.getNumReductionLoops() != 1 ||
      op.getNumParallelLoops() == 0 ||
      op.getNumLoops() != op.getNumReductionLoops() + op.getNumParallelLoops())
    return std::nullopt;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation())
      return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  Plan plan;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  plan.rowDim =
      llvm::find(iterators, utils::IteratorType::reduction) - iterators.begin();
  plan.rows = ranges[plan.rowDim];
  plan.outputs = 1;
  for (auto [dim, range] : llvm::enumerate(ranges))
    if (dim != plan.rowDim)
      plan.outputs *= range;
  // Enough threads already, or too few rows to split.
  if (plan.outputs >= limits.threads || plan.rows < 2 * limits.minRows)
    return std::nullopt;
  plan.chunks = chooseChunks(plan.rows, plan.outputs, limits);
  if (plan.chunks < 2 || plan.chunks > limits.maxPartials / plan.outputs)
    return std::nullopt;

  // A one-hot (embedding) gradient compares ids with its loop index; its
  // output is vocabulary x dim, rewritten elsewhere.
  Block *body = op.getBlock();
  if (!body->getOps<linalg::IndexOp>().empty() ||
      !body->getOps<arith::CmpIOp>().empty())
    return std::nullopt;

  // Rows must not be the innermost dimension in memory of any input (that
  // is a row reduction, a warp's work), and every input indexed by them is
  // viewed with the rows split (which its layout must express).
  AffineExpr rowExpr = getAffineDimExpr(plan.rowDim, op.getContext());
  bool readsRows = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    std::optional<unsigned> pos =
        op.getMatchingIndexingMap(input).getResultPosition(rowExpr);
    if (!pos)
      continue;
    auto type = dyn_cast<MemRefType>(input->get().getType());
    SmallVector<ReassociationIndices> groups;
    if (!type || *pos + 1 == static_cast<unsigned>(type.getRank()) ||
        !type.isLastDimUnitStride() ||
        failed(splitRowsType(type, *pos, plan.chunks, plan.rows / plan.chunks,
                             groups)))
      return std::nullopt;
    readsRows = true;
  }
  if (!readsRows)
    return std::nullopt;

  // Each init: a float buffer updated as combine(acc, g) with g independent
  // of every accumulator (each one used once, by its combiner, whose result
  // is only yielded), and not a view of an input's buffer.
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  for (OpOperand &init : op.getDpsInitsMutable()) {
    auto type = dyn_cast<MemRefType>(init.get().getType());
    if (!type || !isa<FloatType>(type.getElementType()))
      return std::nullopt;
    for (OpOperand *input : op.getDpsInputOperands())
      if (rootBuffer(input->get()) == rootBuffer(init.get()))
        return std::nullopt;
    BlockArgument acc = op.getMatchingBlockArgument(&init);
    unsigned result = init.getOperandNumber() - op.getNumDpsInputs();
    Operation *combiner = yield.getOperand(result).getDefiningOp();
    if (!combiner || combiner->getBlock() != body || !isSplittable(combiner) ||
        !acc.hasOneUse() || !combiner->getResult(0).hasOneUse() ||
        combiner->getOperand(0) == combiner->getOperand(1) ||
        (combiner->getOperand(0) != acc && combiner->getOperand(1) != acc))
      return std::nullopt;
    plan.combiners.push_back(combiner);
  }

  return plan;
}

/// Stage 1's dimensions are (c, the original ones with the rows replaced by
/// s): original dimension d is d + 1, and the rows' result (c, s).
AffineMap stageOneMap(AffineMap map, unsigned rowDim, MLIRContext *ctx) {
  SmallVector<AffineExpr> results;
  for (AffineExpr expr : map.getResults()) {
    unsigned dim = cast<AffineDimExpr>(expr).getPosition();
    if (dim == rowDim)
      results.push_back(getAffineDimExpr(0, ctx));
    results.push_back(getAffineDimExpr(dim + 1, ctx));
  }
  return AffineMap::get(map.getNumDims() + 1, 0, results, ctx);
}

void split(IRRewriter &rewriter, linalg::GenericOp op, const Plan &plan) {
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  const int64_t chunkRows = plan.rows / plan.chunks;
  AffineExpr rowExpr = getAffineDimExpr(plan.rowDim, ctx);

  // Stage 1's inputs: each one the rows index viewed [.., C, S, ..].
  SmallVector<Value> inputs;
  SmallVector<AffineMap> stageOneMaps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    Value value = input->get();
    if (std::optional<unsigned> pos = map.getResultPosition(rowExpr)) {
      SmallVector<ReassociationIndices> groups;
      FailureOr<MemRefType> viewType =
          splitRowsType(cast<MemRefType>(value.getType()), *pos, plan.chunks,
                        chunkRows, groups);
      assert(succeeded(viewType) && "analyze() checked the split view");
      value = memref::ExpandShapeOp::create(rewriter, loc, *viewType, value,
                                            groups);
    }
    inputs.push_back(value);
    stageOneMaps.push_back(stageOneMap(map, plan.rowDim, ctx));
  }

  // The partials, [C, init shape...], not initialized: stage 1 starts each
  // chunk from its first row's term (below), so no fill kernel is needed.
  SmallVector<Value> partials;
  SmallVector<AffineMap> partialMaps; // in stage 1's dimensions
  for (OpOperand &init : op.getDpsInitsMutable()) {
    auto type = cast<MemRefType>(init.get().getType());
    SmallVector<int64_t> shape{plan.chunks};
    llvm::append_range(shape, type.getShape());
    partials.push_back(memref::AllocOp::create(
        rewriter, loc, MemRefType::get(shape, type.getElementType()),
        ValueRange{}, rewriter.getI64IntegerAttr(64)));
    AffineMap map = op.getMatchingIndexingMap(&init);
    SmallVector<AffineExpr> results{getAffineDimExpr(0, ctx)};
    for (AffineExpr expr : map.getResults())
      results.push_back(
          getAffineDimExpr(cast<AffineDimExpr>(expr).getPosition() + 1, ctx));
    partialMaps.push_back(
        AffineMap::get(map.getNumDims() + 1, 0, results, ctx));
  }

  // Stage 1: c outermost (parallel), so that after msamp-gpu-parallel-dims-
  // outer a thread's neighbours differ in the innermost column, not in c.
  SmallVector<utils::IteratorType> stageOneIterators{
      utils::IteratorType::parallel};
  llvm::append_range(stageOneIterators, op.getIteratorTypesArray());
  llvm::append_range(stageOneMaps, partialMaps);
  auto stageOne =
      linalg::GenericOp::create(rewriter, loc, TypeRange{}, inputs, partials,
                                stageOneMaps, stageOneIterators);
  rewriter.cloneRegionBefore(op.getRegion(), stageOne.getRegion(),
                             stageOne.getRegion().end());
  // At a chunk's first row (s = 0) the partial is that row's term: the
  // chunk's sequential fold from its first term, which is exactly what a
  // fold from the neutral element gives (-0.0 + x = x, max(-inf, x) = x),
  // without the kernel that would fill the partials with it.
  Block *stageOneBody = stageOne.getBody();
  auto stageOneYield = cast<linalg::YieldOp>(stageOneBody->getTerminator());
  rewriter.setInsertionPoint(stageOneYield);
  Value row = linalg::IndexOp::create(rewriter, loc, plan.rowDim + 1);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value first =
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, row, zero);
  const unsigned numInputs = op.getNumDpsInputs();
  for (OpOperand &yielded : stageOneYield->getOpOperands()) {
    Operation *combiner = yielded.get().getDefiningOp();
    Value acc =
        stageOneBody->getArgument(numInputs + yielded.getOperandNumber());
    Value term = combiner->getOperand(0) == acc ? combiner->getOperand(1)
                                                : combiner->getOperand(0);
    yielded.set(
        arith::SelectOp::create(rewriter, loc, first, term, yielded.get()));
  }
  rewriter.setInsertionPoint(op);

  // Stage 2: the original dimensions, the rows now the C chunks; each
  // partial is combined into its accumulator by the original combiner
  // (operands in their original order).
  SmallVector<AffineMap> stageTwoMaps;
  SmallVector<Value> inits;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    SmallVector<AffineExpr> results{rowExpr};
    llvm::append_range(results, map.getResults());
    stageTwoMaps.push_back(AffineMap::get(map.getNumDims(), 0, results, ctx));
    inits.push_back(init.get());
  }
  for (OpOperand &init : op.getDpsInitsMutable())
    stageTwoMaps.push_back(op.getMatchingIndexingMap(&init));
  const unsigned numInits = inits.size();
  SmallVector<BlockArgument> accs;
  for (OpOperand &init : op.getDpsInitsMutable())
    accs.push_back(op.getMatchingBlockArgument(&init));
  linalg::GenericOp::create(
      rewriter, loc, TypeRange{}, partials, inits, stageTwoMaps,
      op.getIteratorTypesArray(),
      [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
        SmallVector<Value> results;
        for (unsigned i = 0; i < numInits; ++i) {
          Operation *combiner = plan.combiners[i];
          Value term = combiner->getOperand(0) == accs[i]
                           ? combiner->getOperand(1)
                           : combiner->getOperand(0);
          IRMapping mapping;
          mapping.map(term, args[i]);
          mapping.map(accs[i], args[numInits + i]);
          results.push_back(b.clone(*combiner, mapping)->getResult(0));
        }
        linalg::YieldOp::create(b, bodyLoc, results);
      });
  rewriter.eraseOp(op);
}

struct SplitColumnReductionsPass
    : msamp::impl::MSAMPSplitColumnReductionsBase<SplitColumnReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (threads < 1 || minRows < 1 || maxPartials < 1) {
      getOperation().emitError("msamp-split-column-reductions: threads, "
                               "min-rows and max-partials must be positive");
      return signalPassFailure();
    }
    const Limits limits{threads, minRows, maxPartials};
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.getNumReductionLoops() == 1 && op.getNumParallelLoops() > 0)
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    // "R rows x P outputs -> C x S", with how many of them, in IR order.
    SmallVector<std::pair<std::string, int>> splits;
    for (linalg::LinalgOp candidate : candidates) {
      if (!analyze(candidate, limits))
        continue;
      FailureOr<linalg::GenericOp> asGenericOp =
          msamp::asGeneric(rewriter, candidate);
      if (failed(asGenericOp))
        continue;
      linalg::GenericOp generic = *asGenericOp;
      // The plan again, its combiners now in the generic's body.
      std::optional<Plan> plan = analyze(generic, limits);
      if (!plan)
        continue;
      std::string kind =
          llvm::formatv("{0} rows x {1} outputs -> {2} x {3}", plan->rows,
                        plan->outputs, plan->chunks, plan->rows / plan->chunks);
      auto *same = llvm::find_if(
          splits, [&](const auto &entry) { return entry.first == kind; });
      if (same == splits.end())
        splits.push_back({kind, 1});
      else
        ++same->second;
      split(rewriter, generic, *plan);
      ++numSplit;
    }
    // Statistics are no-ops in a release LLVM (docs/Passes.md): the splits
    // are a remark, with their chunk counts.
    if (splits.empty())
      return;
    int total = 0;
    SmallVector<std::string> kinds;
    for (const auto &[kind, count] : splits) {
      total += count;
      kinds.push_back(
          count == 1 ? kind : llvm::formatv("{0} ({1} times)", kind, count));
    }
    func::FuncOp func = getOperation();
    remark::passed(func.getLoc(),
                   msamp::remarkOptions("split-column-reductions",
                                        "column-reductions-split"))
        << remark::add("{0} column reductions in @{1} split in two stages "
                       "(rows x outputs -> chunks x rows per chunk): {2}",
                       total, func.getSymName(), llvm::join(kinds, ", "));
  }
};

} // namespace
