//===- Rounding.cpp - elementwise float conversions of tensors ------------===//

#include "MSAMP/Transforms/Rounding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

linalg::GenericOp mlir::msamp::buildElementwiseConvert(OpBuilder &b,
                                                       Location loc, Value x,
                                                       Type elementType,
                                                       Value scale) {
  auto type = cast<RankedTensorType>(x.getType());
  auto resultType = RankedTensorType::get(type.getShape(), elementType);
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), elementType);
  auto map = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<Value> inputs = {x};
  SmallVector<AffineMap> maps = {map};
  if (scale) {
    inputs.push_back(scale);
    maps.push_back(AffineMap::get(type.getRank(), 0, b.getContext()));
  }
  maps.push_back(map);
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  bool narrows = elementType.getIntOrFloatBitWidth() <
                 type.getElementType().getIntOrFloatBitWidth();
  return linalg::GenericOp::create(
      b, loc, resultType, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value v = args[0];
        if (scale)
          v = arith::MulFOp::create(nb, nloc, v, args[1]);
        Value r =
            narrows
                ? arith::TruncFOp::create(nb, nloc, elementType, v).getResult()
                : arith::ExtFOp::create(nb, nloc, elementType, v).getResult();
        linalg::YieldOp::create(nb, nloc, r);
      });
}

LogicalResult mlir::msamp::expandBF16Conversions(ArrayRef<Operation *> ops) {
  if (ops.empty())
    return success();
  RewritePatternSet patterns(ops.front()->getContext());
  arith::populateExpandBFloat16Patterns(patterns);
  FrozenRewritePatternSet frozen(std::move(patterns));
  for (Operation *op : ops)
    if (failed(applyPatternsGreedily(op, frozen)))
      return failure();
  return success();
}
