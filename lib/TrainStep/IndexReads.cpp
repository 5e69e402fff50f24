//===- IndexReads.cpp - how a linalg.generic body reads an index ----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/TrainStep/IndexReads.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

Value mlir::msamp::stripIndexCasts(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
             arith::ExtUIOp, arith::TruncIOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

std::optional<unsigned> mlir::msamp::loopIndexOf(Value v,
                                                 linalg::GenericOp gen) {
  auto index = stripIndexCasts(v).getDefiningOp<linalg::IndexOp>();
  if (!index || index->getParentOp() != gen.getOperation())
    return std::nullopt;
  return index.getDim();
}

std::optional<int64_t> mlir::msamp::iotaExtentOf(Value v,
                                                 linalg::GenericOp gen) {
  auto arg = dyn_cast<BlockArgument>(stripIndexCasts(v));
  if (!arg || arg.getOwner() != gen.getBody())
    return std::nullopt;
  OpOperand *operand = gen.getMatchingOpOperand(arg);
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  if (!producer || producer.getNumResults() != 1)
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(producer.getBody()->getTerminator());
  std::optional<unsigned> dim = loopIndexOf(yield.getOperand(0), producer);
  if (!dim)
    return std::nullopt;
  SmallVector<int64_t> ranges = producer.getStaticLoopRanges();
  return ranges[*dim];
}

std::optional<int64_t> mlir::msamp::constantOf(Value v, linalg::GenericOp gen) {
  v = stripIndexCasts(v);
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != gen.getBody())
    return std::nullopt;
  DenseIntElementsAttr splat;
  if (matchPattern(gen.getMatchingOpOperand(arg)->get(), m_Constant(&splat)) &&
      splat.isSplat())
    return splat.getSplatValue<APInt>().getSExtValue();
  return std::nullopt;
}

std::optional<int64_t> mlir::msamp::oneHotExtentOf(Value other,
                                                   linalg::GenericOp gen) {
  if (std::optional<unsigned> dim = loopIndexOf(other, gen)) {
    int64_t extent = gen.getStaticLoopRanges()[*dim];
    if (extent == ShapedType::kDynamic)
      return std::nullopt;
    return extent;
  }
  return iotaExtentOf(other, gen);
}
