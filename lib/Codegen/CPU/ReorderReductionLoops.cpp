//===- ReorderReductionLoops.cpp - vectorizable buffer reductions -*- C++
//-*-===//
//
// convert-linalg-to-loops nests a reduction's loops in iteration-domain
// order, which for a contraction written as a generic (the attention
// einsums) puts the reduction loop innermost: the output element is loaded
// and stored on every iteration and the loop is a serial scalar chain. This
// pass interchanges the loops so that a parallel dimension along which the
// output is contiguous is innermost, with the reduction loops, in their
// original order, just outside it. For every output element the reduction
// terms are still combined one by one in the same order (only independent
// parallel iterations move), so the results are bit-identical, and the
// innermost loop becomes an elementwise update of a contiguous row that
// LLVM's loop vectorizer handles. An input read with a stride along the new
// innermost dimension is first copied into a transposed buffer, when the
// reduction reads each of its elements often enough to pay for the copy.
// When the innermost extent is a multiple of 16 lanes, the reordered op is
// then lowered directly to scf loops over vector<16xf32> accumulators that
// live in registers across the reduction loops (see `vectorize`).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPREORDERREDUCTIONLOOPS
#include "MSAMP/Codegen/CPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// A transposed copy pays for itself only when the reduction reads each
/// input element at least this many times.
constexpr int64_t kMinReuseForTranspose = 8;

/// Whether `type` is a static memref whose last dimension has unit stride.
static bool hasUnitInnerStride(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape())
    return false;
  if (memref.getRank() == 0)
    return true;
  return memref.isLastDimUnitStride();
}

struct MSAMPReorderReductionLoopsPass
    : ::mlir::msamp::impl::MSAMPReorderReductionLoopsBase<
          MSAMPReorderReductionLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa<linalg::GenericOp, linalg::ReduceOp>(op.getOperation()) &&
          op.hasPureBufferSemantics())
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : candidates)
      reorder(rewriter, op);
  }

  void reorder(IRRewriter &rewriter, linalg::LinalgOp op) {
    unsigned numLoops = op.getNumLoops();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
        op.getNumParallelLoops() == 0)
      return;
    for (AffineMap map : op.getIndexingMapsArray())
      if (!map.isProjectedPermutation())
        return;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t work = 1;
    for (int64_t range : ranges) {
      if (ShapedType::isDynamic(range))
        return;
      work *= range;
    }

    // The candidate innermost loop: the output's contiguous dimension.
    OpOperand *init = op.getDpsInitOperand(0);
    AffineMap initMap = op.getMatchingIndexingMap(init);
    if (initMap.getNumResults() == 0 ||
        !hasUnitInnerStride(init->get().getType()))
      return;
    unsigned inner =
        cast<AffineDimExpr>(initMap.getResults().back()).getPosition();
    if (iterators[inner] != utils::IteratorType::parallel ||
        inner == numLoops - 1)
      return;

    // Inputs read with a stride along `inner` need a transposed copy.
    SmallVector<std::pair<OpOperand *, unsigned>> toTranspose;
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      std::optional<unsigned> pos =
          map.getResultPosition(rewriter.getAffineDimExpr(inner));
      if (!pos)
        continue;
      auto type = dyn_cast<MemRefType>(input->get().getType());
      if (!type || !type.hasStaticShape())
        return;
      if (*pos == map.getNumResults() - 1 && type.isLastDimUnitStride())
        continue;
      if (type.getNumElements() * kMinReuseForTranspose > work)
        return;
      toTranspose.push_back({input, *pos});
    }

    rewriter.setInsertionPoint(op);
    linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return;
      generic = *generalized;
    }

    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    for (auto [operand, pos] : toTranspose) {
      unsigned index = operand->getOperandNumber();
      OpOperand &newOperand = generic->getOpOperand(index);
      Value source = newOperand.get();
      auto type = cast<MemRefType>(source.getType());
      SmallVector<int64_t> perm;
      for (int64_t i = 0, e = type.getRank(); i < e; ++i)
        if (i != pos)
          perm.push_back(i);
      perm.push_back(pos);
      SmallVector<int64_t> shape;
      SmallVector<AffineExpr> results;
      for (int64_t i : perm) {
        shape.push_back(type.getDimSize(i));
        results.push_back(maps[index].getResult(i));
      }
      rewriter.setInsertionPoint(generic);
      auto alloc =
          memref::AllocOp::create(rewriter, generic.getLoc(),
                                  MemRefType::get(shape, type.getElementType()),
                                  ValueRange{}, rewriter.getI64IntegerAttr(64));
      linalg::TransposeOp::create(rewriter, generic.getLoc(), source, alloc,
                                  perm);
      newOperand.set(alloc);
      maps[index] =
          AffineMap::get(maps[index].getNumDims(), 0, results, &getContext());
      ++numTransposed;
    }
    generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));

    SmallVector<unsigned> interchange;
    for (unsigned i = 0; i < numLoops; ++i)
      if (iterators[i] == utils::IteratorType::parallel && i != inner)
        interchange.push_back(i);
    for (unsigned i = 0; i < numLoops; ++i)
      if (iterators[i] == utils::IteratorType::reduction)
        interchange.push_back(i);
    interchange.push_back(inner);
    FailureOr<linalg::GenericOp> reordered =
        linalg::interchangeGenericOp(rewriter, generic, interchange);
    if (failed(reordered))
      return;
    ++numReordered;
    if (succeeded(vectorize(rewriter, *reordered)))
      ++numVectorized;
  }

  /// Lowers a reordered reduction (loops: parallel..., reduction...,
  /// innermost parallel `j` of static extent a multiple of kLanes) to loops
  /// over vectors: for each point of the outer parallel loops and each chunk
  /// of at most kMaxAccumulators vectors along `j`, the output chunk is
  /// loaded into vector accumulators, the reduction loops carry them as
  /// iter_args, and they are stored once at the end. The body is applied
  /// lane-wise to the same operands in the same order as the scalar loops,
  /// so every output element is computed bit-identically; it is only kept in
  /// a register instead of being loaded and stored on every reduction
  /// iteration.
  LogicalResult vectorize(IRRewriter &rewriter, linalg::GenericOp op) {
    constexpr int64_t kLanes = 16;
    constexpr int64_t kMaxAccumulators = 8;
    unsigned numLoops = op.getNumLoops();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    unsigned inner = numLoops - 1;
    int64_t extent = ranges[inner];
    if (extent % kLanes != 0)
      return failure();
    Block *body = op.getBody();
    for (Value arg : body->getArguments())
      if (!arg.getType().isF32())
        return failure();
    for (Operation &nested : body->without_terminator())
      if (!nested.hasTrait<OpTrait::Elementwise>() || !isPure(&nested) ||
          nested.getNumRegions() != 0 || nested.getNumResults() != 1 ||
          !nested.getResult(0).getType().isF32() ||
          nested.getName().getDialectNamespace() != "arith")
        return failure();
    for (Operation &nested : body->without_terminator())
      for (Value operand : nested.getOperands())
        if (operand.getParentBlock() != body)
          return failure();
    unsigned firstReduction = 0;
    while (iterators[firstReduction] == utils::IteratorType::parallel)
      ++firstReduction;
    for (unsigned i = firstReduction; i < inner; ++i)
      if (iterators[i] != utils::IteratorType::reduction)
        return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    AffineExpr innerExpr = rewriter.getAffineDimExpr(inner);
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = maps[operand.getOperandNumber()];
      auto type = cast<MemRefType>(operand.get().getType());
      std::optional<unsigned> pos = map.getResultPosition(innerExpr);
      if (pos &&
          (*pos != map.getNumResults() - 1 || !type.isLastDimUnitStride()))
        return failure();
    }

    // An input that may be the output itself would see the stored partial
    // results in the scalar loops, but not here.
    auto root = [](Value value) {
      while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
        value = view.getViewSource();
      return value;
    };
    Value initRoot = root(op.getDpsInitOperand(0)->get());
    for (OpOperand *input : op.getDpsInputOperands())
      if (root(input->get()) == initRoot)
        return failure();

    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, value);
    };
    auto vectorType = VectorType::get({kLanes}, rewriter.getF32Type());
    Value zero = index(0), one = index(1);
    // ivs[d]: the value of loop dimension d (the inner one: the chunk start
    // plus the vector's offset, set per vector).
    SmallVector<Value> ivs(numLoops);
    auto indices = [&](AffineMap map) {
      SmallVector<Value> result;
      for (AffineExpr expr : map.getResults())
        result.push_back(ivs[cast<AffineDimExpr>(expr).getPosition()]);
      return result;
    };

    OpOperand *init = op.getDpsInitOperand(0);
    AffineMap initMap = maps[init->getOperandNumber()];
    for (unsigned d = 0; d < firstReduction; ++d) {
      auto loop =
          scf::ForOp::create(rewriter, loc, zero, index(ranges[d]), one);
      rewriter.setInsertionPointToStart(loop.getBody());
      ivs[d] = loop.getInductionVar();
    }
    int64_t numVectors = extent / kLanes;
    for (int64_t chunk = 0; chunk < numVectors; chunk += kMaxAccumulators) {
      int64_t count = std::min(kMaxAccumulators, numVectors - chunk);
      SmallVector<Value> accumulators;
      for (int64_t v = 0; v < count; ++v) {
        ivs[inner] = index((chunk + v) * kLanes);
        accumulators.push_back(vector::LoadOp::create(
            rewriter, loc, vectorType, init->get(), indices(initMap)));
      }
      OpBuilder::InsertPoint after = rewriter.saveInsertionPoint();
      SmallVector<scf::ForOp> loops;
      for (unsigned d = firstReduction; d < inner; ++d) {
        auto loop = scf::ForOp::create(rewriter, loc, zero, index(ranges[d]),
                                       one, accumulators);
        rewriter.setInsertionPointToStart(loop.getBody());
        ivs[d] = loop.getInductionVar();
        accumulators.assign(loop.getRegionIterArgs().begin(),
                            loop.getRegionIterArgs().end());
        loops.push_back(loop);
      }
      // Operands that do not depend on the innermost dimension: one scalar
      // load and broadcast per reduction iteration.
      SmallVector<Value> invariant(op.getNumDpsInputs());
      for (OpOperand *input : op.getDpsInputOperands()) {
        AffineMap map = maps[input->getOperandNumber()];
        if (map.getResultPosition(innerExpr))
          continue;
        Value scalar =
            memref::LoadOp::create(rewriter, loc, input->get(), indices(map));
        invariant[input->getOperandNumber()] =
            vector::BroadcastOp::create(rewriter, loc, vectorType, scalar);
      }
      SmallVector<Value> results;
      for (int64_t v = 0; v < count; ++v) {
        ivs[inner] = index((chunk + v) * kLanes);
        IRMapping mapping;
        for (OpOperand *input : op.getDpsInputOperands()) {
          unsigned number = input->getOperandNumber();
          Value value = invariant[number];
          if (!value)
            value = vector::LoadOp::create(rewriter, loc, vectorType,
                                           input->get(), indices(maps[number]));
          mapping.map(body->getArgument(number), value);
        }
        mapping.map(body->getArgument(op.getNumDpsInputs()), accumulators[v]);
        for (Operation &nested : body->without_terminator()) {
          Operation *clone = rewriter.clone(nested, mapping);
          clone->getResult(0).setType(vectorType);
        }
        results.push_back(mapping.lookup(
            cast<linalg::YieldOp>(body->getTerminator()).getOperand(0)));
      }
      for (scf::ForOp loop : llvm::reverse(loops)) {
        rewriter.setInsertionPointToEnd(loop.getBody());
        scf::YieldOp::create(rewriter, loc, results);
        results.assign(loop.getResults().begin(), loop.getResults().end());
      }
      rewriter.restoreInsertionPoint(after);
      if (!loops.empty())
        rewriter.setInsertionPointAfter(loops.front());
      for (int64_t v = 0; v < count; ++v) {
        ivs[inner] = index((chunk + v) * kLanes);
        vector::StoreOp::create(rewriter, loc, results[v], init->get(),
                                indices(initMap));
      }
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace
