//===- OneHotReductionToScatter.cpp - embedding gradients as scatters -----===//
//
// The gradient of an embedding lookup (the graph generators' embedding
// backward, ONNX GatherGrad) is written as a one-hot reduction:
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
// Bit-identical to the reduction: every output element receives the same
// non-zero terms in the same order (n ascending); the terms the reduction
// adds for non-matching n are +0.0, and x + 0.0 == x for every x except
// -0.0, which a sum that starts from +0.0 never produces (round to nearest
// gives +0.0 for an exact zero sum). Hence the +0.0 initial value is
// required. An id whose f() is out of range matches no row in the
// reduction and is skipped here.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/CPU/Passes.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPONEHOTREDUCTIONTOSCATTER
#include "MSAMP/Codegen/CPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// Whether `v` is a +0.0 splat: a linalg.fill of +0.0 or a dense constant.
static bool isPositiveZeroTensor(Value v) {
  auto isPosZero = [](Attribute a) {
    auto f = dyn_cast_or_null<FloatAttr>(a);
    return f && f.getValue().isPosZero();
  };
  if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    Attribute a;
    return matchPattern(fill.getInputs()[0], m_Constant(&a)) && isPosZero(a);
  }
  DenseElementsAttr dense;
  if (matchPattern(v, m_Constant(&dense)) && dense.isSplat())
    return isPosZero(dense.getSplatValue<Attribute>());
  return false;
}

/// Whether `v` is a scalar +0.0 constant.
static bool isPositiveZeroScalar(Value v) {
  FloatAttr f;
  return matchPattern(v, m_Constant(&f)) && f.getValue().isPosZero();
}

/// The matched parts of a one-hot reduction.
struct OneHotReduction {
  unsigned rowDim = 0;    ///< the output dim compared with f(id)
  bool gradFirst = false; ///< addf(select, out) rather than addf(out, select)
  unsigned gradIndex = 0; ///< which input is the gradient (the other: ids)
  Value rowValue;         ///< f(id) in the body (integer or index)
  SmallVector<Operation *> rowOps; ///< body ops computing rowValue, in order
  SmallVector<unsigned> reductionDims;
  SmallVector<unsigned> rowSliceDims; ///< the output's parallel dims but rowDim
};

/// Collects, in program order, the body ops `v` depends on, which must be
/// pure and reach only `idArg` among the block arguments.
static bool collectIdComputation(Value v, BlockArgument idArg, Block *body,
                                 llvm::SetVector<Operation *> &ops) {
  if (v == idArg)
    return true;
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() != body; // a value from outside the generic
  Operation *def = v.getDefiningOp();
  if (def->getBlock() != body)
    return true; // defined outside the body
  if (!isPure(def) || def->getNumRegions() != 0 || isa<linalg::IndexOp>(def))
    return false;
  for (Value operand : def->getOperands())
    if (!collectIdComputation(operand, idArg, body, ops))
      return false;
  ops.insert(def);
  return true;
}

/// `v` is linalg.index(d), possibly through one arith.index_cast; returns d.
static std::optional<unsigned> indexDim(Value v) {
  if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    v = cast.getIn();
  if (auto index = v.getDefiningOp<linalg::IndexOp>())
    return index.getDim();
  return std::nullopt;
}

static std::optional<OneHotReduction> match(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics())
    return std::nullopt;
  auto outType = dyn_cast<RankedTensorType>(op.getResult(0).getType());
  if (!outType || !outType.hasStaticShape() ||
      !outType.getElementType().isF32())
    return std::nullopt;
  if (!isPositiveZeroTensor(op.getDpsInits()[0]))
    return std::nullopt;

  // Maps: output = identity over the leading parallel dims, then reductions.
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  unsigned rank = outType.getRank();
  unsigned numLoops = iters.size();
  for (unsigned d = 0; d < numLoops; ++d)
    if ((d < rank) != (iters[d] == utils::IteratorType::parallel))
      return std::nullopt;
  if (numLoops == rank)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[2] != AffineMap::getMultiDimIdentityMap(numLoops, op.getContext())
                     .getMajorSubMap(rank) ||
      !maps[0].isProjectedPermutation() || !maps[1].isProjectedPermutation())
    return std::nullopt;

  Block *body = op.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || add->getBlock() != body)
    return std::nullopt;
  BlockArgument outArg = body->getArgument(2);
  OneHotReduction m;
  Value selected;
  if (add.getRhs() == outArg) {
    m.gradFirst = true;
    selected = add.getLhs();
  } else if (add.getLhs() == outArg) {
    selected = add.getRhs();
  } else {
    return std::nullopt;
  }
  auto select = selected.getDefiningOp<arith::SelectOp>();
  if (!select || !isPositiveZeroScalar(select.getFalseValue()))
    return std::nullopt;
  // The true value is one input element (the gradient); the other input
  // holds the ids.
  auto gradArg = dyn_cast<BlockArgument>(select.getTrueValue());
  if (!gradArg || gradArg.getOwner() != body || gradArg.getArgNumber() > 1)
    return std::nullopt;
  unsigned gradIndex = gradArg.getArgNumber(), idIndex = 1 - gradIndex;
  m.gradIndex = gradIndex;
  BlockArgument idArg = body->getArgument(idIndex);
  if (!isa<IntegerType>(idArg.getType()))
    return std::nullopt;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
    return std::nullopt;

  // One side of the compare is linalg.index(rowDim), the other f(id).
  Value lhs = cmp.getLhs(), rhs = cmp.getRhs();
  std::optional<unsigned> dim = indexDim(lhs);
  Value other = rhs;
  if (!dim) {
    dim = indexDim(rhs);
    other = lhs;
  }
  if (!dim || *dim >= rank)
    return std::nullopt;
  m.rowDim = *dim;
  llvm::SetVector<Operation *> rowOps;
  if (!collectIdComputation(other, idArg, body, rowOps))
    return std::nullopt;
  m.rowValue = other;
  m.rowOps.assign(rowOps.begin(), rowOps.end());
  // The compare's type must hold every row index exactly.
  Type cmpType = other.getType();
  if (auto intType = dyn_cast<IntegerType>(cmpType))
    if (intType.getWidth() < 64 && outType.getDimSize(m.rowDim) >=
                                       (int64_t{1} << (intType.getWidth() - 1)))
      return std::nullopt;

  // The ids are read over the reduction dims only, in loop order; the
  // gradient over the reduction dims, then the other output dims, in order:
  // so that each n selects one contiguous gradient slice of the output
  // row's shape.
  for (unsigned d = rank; d < numLoops; ++d)
    m.reductionDims.push_back(d);
  for (unsigned d = 0; d < rank; ++d)
    if (d != m.rowDim)
      m.rowSliceDims.push_back(d);
  auto dimsOf = [&](AffineMap map) {
    SmallVector<unsigned> dims;
    for (AffineExpr e : map.getResults())
      dims.push_back(cast<AffineDimExpr>(e).getPosition());
    return dims;
  };
  if (dimsOf(maps[idIndex]) != m.reductionDims)
    return std::nullopt;
  SmallVector<unsigned> gradDims(m.reductionDims);
  gradDims.append(m.rowSliceDims);
  if (dimsOf(maps[gradIndex]) != gradDims)
    return std::nullopt;
  // Everything else in the body feeds the compare or is dead.
  for (Operation &inner : body->without_terminator())
    if (&inner != add && &inner != select && &inner != cmp &&
        !rowOps.contains(&inner) && !isa<linalg::IndexOp>(inner) &&
        !isa<arith::IndexCastOp>(inner) && !isa<arith::ConstantOp>(inner))
      return std::nullopt;
  return m;
}

/// The number of ids: the product of the reduction loop sizes.
static int64_t computeIdCount(linalg::GenericOp op, const OneHotReduction &m) {
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  int64_t count = 1;
  for (unsigned d : m.reductionDims)
    count *= sizes[d];
  return count;
}

struct MSAMPOneHotReductionToScatterPass
    : ::mlir::msamp::impl::MSAMPOneHotReductionToScatterBase<
          MSAMPOneHotReductionToScatterPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, OneHotReduction>> found;
    getOperation().walk([&](linalg::GenericOp op) {
      if (auto m = match(op))
        found.emplace_back(op, std::move(*m));
    });
    for (auto &[op, m] : found) {
      // Statistics are no-ops in a release LLVM; the remark says it too.
      remark::passed(op.getLoc(), msamp::remarkOptions("one-hot-to-scatter",
                                                       "one-hot-scatter"))
          << remark::add("one-hot reduction over {0} ids into a {1}-row "
                         "output runs as a loop of row adds",
                         computeIdCount(op, m),
                         cast<RankedTensorType>(op.getResult(0).getType())
                             .getDimSize(m.rowDim));
      rewrite(op, m);
    }
    numRewritten += found.size();
  }

  void rewrite(linalg::GenericOp op, const OneHotReduction &m) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Block *body = op.getBody();
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
    IRMapping mapping;
    Value id = tensor::ExtractOp::create(b, loc, ids, ivs);
    mapping.map(body->getArgument(1 - gradIndex), id);
    for (Operation *inner : m.rowOps)
      b.clone(*inner, mapping);
    Value row = mapping.lookupOrDefault(m.rowValue);
    // 0 <= r < rows, compared in r's own type (an integer or index).
    Type rowType = row.getType();
    auto constant = [&](int64_t v) {
      return arith::ConstantOp::create(b, loc, b.getIntegerAttr(rowType, v));
    };
    Value lo = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, row,
                                     constant(0));
    Value hi = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row,
                                     constant(outType.getDimSize(m.rowDim)));
    Value inRange = arith::AndIOp::create(b, loc, lo, hi);
    Value rowIndex =
        rowType.isIndex()
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
