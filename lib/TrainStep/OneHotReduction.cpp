//===- OneHotReduction.cpp - embedding gradients as one-hot sums ----------===//
//
// Part of the msamp project. What is matched and why a scatter of it is
// exact: MSAMP/TrainStep/OneHotReduction.h.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/TrainStep/OneHotReduction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::msamp;

bool mlir::msamp::isPositiveZeroTensor(Value v) {
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

bool mlir::msamp::isPositiveZeroScalar(Value v) {
  FloatAttr f;
  return matchPattern(v, m_Constant(&f)) && f.getValue().isPosZero();
}

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

std::optional<OneHotReduction>
mlir::msamp::matchOneHotReduction(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !(op.hasPureTensorSemantics() || op.hasPureBufferSemantics()))
    return std::nullopt;
  auto outType = dyn_cast<ShapedType>(op.getDpsInits()[0].getType());
  if (!outType || !outType.hasStaticShape() ||
      !outType.getElementType().isF32())
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

int64_t mlir::msamp::oneHotIdCount(linalg::GenericOp op,
                                   const OneHotReduction &m) {
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  int64_t count = 1;
  for (unsigned d : m.reductionDims)
    count *= sizes[d];
  return count;
}

Value mlir::msamp::cloneOneHotRow(OpBuilder &b, linalg::GenericOp op,
                                  const OneHotReduction &m, Value id) {
  IRMapping mapping;
  mapping.map(op.getBody()->getArgument(1 - m.gradIndex), id);
  for (Operation *inner : m.rowOps)
    b.clone(*inner, mapping);
  return mapping.lookupOrDefault(m.rowValue);
}

Value mlir::msamp::oneHotRowInRange(OpBuilder &b, Location loc, Value row,
                                    OpFoldResult lo, OpFoldResult hi) {
  Type rowType = row.getType();
  auto inRowType = [&](OpFoldResult bound) -> Value {
    if (auto attr = dyn_cast<Attribute>(bound))
      return arith::ConstantOp::create(
          b, loc, b.getIntegerAttr(rowType, cast<IntegerAttr>(attr).getInt()));
    Value v = cast<Value>(bound);
    return v.getType() == rowType
               ? v
               : arith::IndexCastOp::create(b, loc, rowType, v).getResult();
  };
  Value lower = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, row,
                                      inRowType(lo));
  Value upper = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row,
                                      inRowType(hi));
  return arith::AndIOp::create(b, loc, lower, upper);
}
