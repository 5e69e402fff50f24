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
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPREORDERREDUCTIONLOOPS
#include "MSAMP/Conversion/Passes.h.inc"
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
    if (failed(linalg::interchangeGenericOp(rewriter, generic, interchange)))
      return;
    ++numReordered;
  }
};

} // namespace
