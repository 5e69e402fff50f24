//===- OneHotReductionToScatter.cpp - embedding gradients as scatters -----===//
//
// The gradient of an embedding lookup is a one-hot reduction (matched by
// MSAMP/TrainStep/OneHotReduction.h, which also says why the rewrite is
// bit-identical):
//
//   out[.., v, ..] = sum_n (f(ids[n]) == v ? g[n, ..] : 0)     (out = 0 first)
//
// which costs |out| * |ids| compare-select-adds: 50M for a 256-token
// vocabulary, 10G for a 50k one, where the useful work is |g| adds. This
// pass rewrites it, on tensors and before bufferization, into a loop over
// the ids that adds each g row into the output row it names:
//
//   acc = out; for n: r = f(ids[n]); if 0 <= r < V: acc[r, ..] = g[n, ..] +
//   acc[r, ..]
//
// Every output element receives the same non-zero terms in the same order
// (n ascending); the +0.0 initial value is required. An id whose f() is out
// of range matches no row in the reduction and is skipped here.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/CPU/Passes.h"
#include "MSAMP/TrainStep/OneHotReduction.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPONEHOTREDUCTIONTOSCATTER
#include "MSAMP/Codegen/CPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

struct MSAMPOneHotReductionToScatterPass
    : ::mlir::msamp::impl::MSAMPOneHotReductionToScatterBase<
          MSAMPOneHotReductionToScatterPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, OneHotReduction>> found;
    getOperation().walk([&](linalg::GenericOp op) {
      if (!op.hasPureTensorSemantics() ||
          !isPositiveZeroTensor(op.getDpsInits()[0]))
        return;
      if (auto m = matchOneHotReduction(op))
        found.emplace_back(op, std::move(*m));
    });
    for (auto &[op, m] : found) {
      // Statistics are no-ops in a release LLVM; the remark says it too.
      remark::passed(op.getLoc(), msamp::remarkOptions("one-hot-to-scatter",
                                                       "one-hot-scatter"))
          << remark::add("one-hot reduction over {0} ids into a {1}-row "
                         "output runs as a loop of row adds",
                         oneHotIdCount(op, m),
                         cast<RankedTensorType>(op.getResult(0).getType())
                             .getDimSize(m.rowDim));
      rewrite(op, m);
    }
    numRewritten += found.size();
  }

  void rewrite(linalg::GenericOp op, const OneHotReduction &m) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    unsigned gradIndex = m.gradIndex;
    Value ids = op.getDpsInputs()[1 - gradIndex];
    Value grad = op.getDpsInputs()[gradIndex];
    Value init = op.getDpsInits()[0];
    auto outType = cast<RankedTensorType>(init.getType());
    SmallVector<int64_t> loopSizes = op.getStaticLoopRanges();

    // Loops over the reduction dims, in order, carrying the output.
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    SmallVector<Value> ivs;
    SmallVector<scf::ForOp> loops;
    Value carried = init;
    for (unsigned d : m.reductionDims) {
      Value ub = arith::ConstantIndexOp::create(b, loc, loopSizes[d]);
      auto loop = scf::ForOp::create(b, loc, zero, ub, one, carried);
      if (!loops.empty())
        scf::YieldOp::create(b, loc, loop.getResults());
      loops.push_back(loop);
      ivs.push_back(loop.getInductionVar());
      b.setInsertionPointToStart(loop.getBody());
      carried = loop.getRegionIterArgs()[0];
    }

    // r = f(ids[n]), by cloning the body's computation of it.
    Value id = tensor::ExtractOp::create(b, loc, ids, ivs);
    Value row = cloneOneHotRow(b, op, m, id);
    Value inRange =
        oneHotRowInRange(b, loc, row, b.getIndexAttr(0),
                         b.getIndexAttr(outType.getDimSize(m.rowDim)));
    Value rowIndex =
        row.getType().isIndex()
            ? row
            : arith::IndexCastOp::create(b, loc, b.getIndexType(), row)
                  .getResult();

    auto ifOp = scf::IfOp::create(b, loc, TypeRange{carried.getType()}, inRange,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(b, loc, carried);
      b.setInsertionPointToStart(ifOp.thenBlock());
      // g[n..., :] and acc[.., r, ..] as tensors of the row-slice shape.
      SmallVector<int64_t> sliceShape;
      for (unsigned d : m.rowSliceDims)
        sliceShape.push_back(loopSizes[d]);
      auto sliceType = RankedTensorType::get(sliceShape, b.getF32Type());
      auto gradType = cast<RankedTensorType>(grad.getType());
      SmallVector<OpFoldResult> gOffsets, gSizes, gStrides;
      for (unsigned i = 0; i < gradType.getRank(); ++i) {
        bool reduction = i < m.reductionDims.size();
        gOffsets.push_back(reduction ? OpFoldResult(ivs[i])
                                     : OpFoldResult(b.getIndexAttr(0)));
        gSizes.push_back(
            b.getIndexAttr(reduction ? 1 : gradType.getDimSize(i)));
        gStrides.push_back(b.getIndexAttr(1));
      }
      Value gSlice = tensor::ExtractSliceOp::create(b, loc, sliceType, grad,
                                                    gOffsets, gSizes, gStrides);
      SmallVector<OpFoldResult> aOffsets, aSizes, aStrides;
      for (unsigned d = 0; d < outType.getRank(); ++d) {
        bool isRow = d == m.rowDim;
        aOffsets.push_back(isRow ? OpFoldResult(rowIndex)
                                 : OpFoldResult(b.getIndexAttr(0)));
        aSizes.push_back(b.getIndexAttr(isRow ? 1 : outType.getDimSize(d)));
        aStrides.push_back(b.getIndexAttr(1));
      }
      Value aSlice = tensor::ExtractSliceOp::create(b, loc, sliceType, carried,
                                                    aOffsets, aSizes, aStrides);
      // The same addf, operands in the reduction's order.
      unsigned sliceRank = sliceShape.size();
      AffineMap id =
          AffineMap::getMultiDimIdentityMap(sliceRank, b.getContext());
      SmallVector<utils::IteratorType> iters(sliceRank,
                                             utils::IteratorType::parallel);
      bool gradFirst = m.gradFirst;
      auto sum = linalg::GenericOp::create(
          b, loc, TypeRange{sliceType}, ValueRange{gSlice}, ValueRange{aSlice},
          SmallVector<AffineMap>{id, id}, iters,
          [gradFirst](OpBuilder &nb, Location l, ValueRange args) {
            Value s = gradFirst
                          ? arith::AddFOp::create(nb, l, args[0], args[1])
                          : arith::AddFOp::create(nb, l, args[1], args[0]);
            linalg::YieldOp::create(nb, l, s);
          });
      Value updated = tensor::InsertSliceOp::create(
          b, loc, sum.getResult(0), carried, aOffsets, aSizes, aStrides);
      scf::YieldOp::create(b, loc, updated);
    }
    scf::YieldOp::create(b, loc, ifOp.getResults());
    op.getResult(0).replaceAllUsesWith(loops.front().getResult(0));
    op.erase();
  }
};

} // namespace
